#!/bin/sh
# In the QEMU guest, ump.ko loaded (scripts/qemu/init.sh runs it): the PaddleOCR
# direction classifier and squeezenet run with every tensor in ump.ko's
# buffers, on one CPU device, on two CPU devices on two NUMA nodes, and on a
# CPU plus the emulated accelerator, its copies through io_uring and, once
# more, through ioctls. Each run's outputs must be the host's to 1e-5 of the
# largest magnitude; the copies the schedule's; the chains the runtime
# submitted what ump.ko counted. Last, a run killed by SIGKILL with copies
# in flight leaves the pool empty. Files from runtime_models.prep.sh.
D=/data/runtime_models
HO=/bin/heteroopt
CLOSE=/bin/ump-tests/npy_close
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

# run_case LABEL MODEL INPUT [SCHEDULE BOX [OPTION...]]
run_case() {
	label=$1 m=$2 in=$3
	shift 3
	out=/tmp/rt-$label
	sched=""
	if [ $# -ge 2 ]; then
		sched="--schedule $D/$1 --box $D/$2"
		shift 2
	fi
	echo "== $label"
	# shellcheck disable=SC2086
	if ! $HO run "$D/$m.onnx" --input "$in=$D/${m}_x.npy" $sched --warmup 1 --repeat 2 \
		-o "$out" "$@" >"$out.txt" 2>&1; then
		cat "$out.txt"
		bad "$label: heteroopt run failed"
		return
	fi
	grep -E '^run:|copies:|pool chains:|NUMA node' "$out.txt"
	grep -q 'memory pool: ump (/dev/ump' "$out.txt" || bad "$label: not on ump.ko's pool"
	for ref in "$D/ref-$m"/*.npy; do
		$CLOSE "$ref" "$out/$(basename "$ref")" || bad "$label: $(basename "$ref") differs"
	done
	[ -n "$sched" ] || return
	made=$(sed -n 's/^  copies: \([0-9]*\) made.*/\1/p' "$out.txt")
	want=$(sed -n 's/.*schedule predicts \([0-9]*\) (.*/\1/p' "$out.txt")
	[ -n "$made" ] && [ "$made" = "$want" ] || bad "$label: $made copies made, schedule has $want"
	line=$(grep '^  pool chains:' "$out.txt")
	sub=$(echo "$line" | sed -n 's/.*chains: \([0-9]*\) submitted by \([a-z_]*\) (\([0-9]*\) bytes).*/\1 \3/p')
	counted=$(echo "$line" | sed -n 's/.*ump.ko counted \([0-9]*\) chains (\([0-9]*\) bytes.*/\1 \2/p')
	[ -n "$sub" ] && [ "$sub" = "$counted" ] ||
		bad "$label: submitted $sub (chains bytes), ump.ko counted $counted"
	path=$(echo "$line" | sed -n 's/.*submitted by \([a-z_]*\) .*/\1/p')
	case " $* " in
	*" --copy-ioctl "*) [ "$path" = ioctl ] || bad "$label: copies by $path, not ioctl" ;;
	*) [ "$path" = io_uring ] || bad "$label: copies by $path, not io_uring" ;;
	esac
}

for spec in cls:x squeezenet:input; do
	m=${spec%%:*} in=${spec#*:}
	run_case "$m-1cpu" "$m" "$in"
	run_case "$m-2node" "$m" "$in" "$m@2node.json" box-2node.json
	run_case "$m-cpu-emu" "$m" "$in" "$m@cpu-emu.json" box-cpu-emu.json
	run_case "$m-cpu-emu-ioctl" "$m" "$in" "$m@cpu-emu.json" box-cpu-emu.json --copy-ioctl
done
# Device memory behind P2P, where the kernel has it: copies into the two
# accelerators' memory, staged between them (no P2P route to emu1's).
if [ "${UMP_TEST_EXPECT_P2PMEM:-0}" = 1 ]; then
	run_case squeezenet-cpu-p2p squeezenet input squeezenet@cpu-p2p.json box-cpu-p2p.json
	for dev in emu0:0000:03:00.0 emu1:0000:81:00.0; do
		grep -A1 "^  ${dev%%:*} " /tmp/rt-squeezenet-cpu-p2p.txt |
			grep -q "its region in PCI ${dev#*:}'s P2P memory" ||
			bad "squeezenet-cpu-p2p: ${dev%%:*} not in ${dev#*:}'s P2P memory"
	done
	staged=$(sed -n 's/.*bytes, \([0-9]*\) staged through host memory.*/\1/p' /tmp/rt-squeezenet-cpu-p2p.txt)
	[ "${staged:-0}" -gt 0 ] || bad "squeezenet-cpu-p2p: nothing staged between emu0 and emu1"
else
	echo "== squeezenet-cpu-p2p: skipped, this kernel has no P2P memory"
fi
# The two NUMA nodes: each device's region where the box puts it, as the
# kernel reports its pages.
for c in squeezenet-2node:cpu0:0 squeezenet-2node:cpu1:1 cls-cpu-emu:emu0:1 cls-cpu-emu:cpu0:0; do
	run=${c%%:*} rest=${c#*:}
	dev=${rest%%:*} node=${rest#*:}
	grep -A1 "^  $dev " "/tmp/rt-$run.txt" | grep -q "NUMA node $node .*its region's pages on node $node" ||
		bad "$run: $dev's memory not on node $node"
done

# SIGKILL while copies are in flight: the pool empties, nothing is left.
echo "== kill mid-run"
$HO run "$D/squeezenet.onnx" --input "input=$D/squeezenet_x.npy" \
	--schedule "$D/squeezenet@cpu-emu.json" --box "$D/box-cpu-emu.json" --repeat 100000 \
	-o /tmp/rt-kill >/tmp/rt-kill.txt 2>&1 &
pid=$!
i=0
# until its copies run (the module's chain count moves), at most 60 s
c0=$(sed -n 's/^engine cpu chains \([0-9]*\) .*/\1/p' /proc/ump/status)
while [ $i -lt 120 ]; do
	sleep 0.5
	c=$(sed -n 's/^engine cpu chains \([0-9]*\) .*/\1/p' /proc/ump/status)
	[ "${c:-0}" -gt "${c0:-0}" ] && break
	i=$((i + 1))
done
kill -9 $pid
wait $pid
echo "killed after $i half-seconds; module chains ${c0:-?} -> ${c:-?}"
[ "${c:-0}" -gt "${c0:-0}" ] || bad "kill mid-run: no copy ran before the kill"
/bin/ump-tests/accounting || bad "kill mid-run: the pool did not empty"
exit $fail
