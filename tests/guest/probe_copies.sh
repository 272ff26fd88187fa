#!/bin/sh
# In the QEMU guest, ump.ko loaded: `heteroopt probe --links-only` measures
# pool copies between the guest's two NUMA nodes through every path the
# runtime has (ump.ko's io_uring uring_cmd, its ioctls, the user-space
# fallback's copy thread); the chains it sent through ump.ko are exactly
# what the module counted; the link's rate is the io_uring path's, the one
# the runtime takes; and the profile plans a model.
D=/data/probe_copies
HO=/bin/heteroopt
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

# chains the module's engines finished, CPU and DMA
chains() {
	sed -n 's/^engine [a-z]* chains \([0-9]*\) .*/\1/p' /proc/ump/status | awk '{ s += $1 } END { print s + 0 }'
}

$HO probe --write-box --split 2 -o /tmp/pc-box.json >/dev/null || bad "no box of the guest"
c0=$(chains)
if ! $HO probe --box /tmp/pc-box.json --links-only --quick -q -o /tmp/pc.json >/tmp/pc.txt 2>&1; then
	cat /tmp/pc.txt
	bad "the probe failed"
	exit 1
fi
c1=$(chains)
cat /tmp/pc.txt
for p in io_uring:ump ioctl:ump "copy thread:user-space fallback"; do
	line=$(grep "^  ${p%%:*} " /tmp/pc.txt)
	[ -n "$line" ] || { bad "no ${p%%:*} path measured"; continue; }
	echo "$line" | grep -q "(${p#*:} (" || bad "${p%%:*}: not through ${p#*:}: $line"
	echo "$line" | grep -qE 'in [0-9.]*[1-9][0-9.]* us,.* [0-9.]*[1-9][0-9.]* GB/s' ||
		bad "${p%%:*}: no latency or rate: $line"
done
sent=$(grep -E '^  (io_uring|ioctl) ' /tmp/pc.txt | sed -n 's/.*; \([0-9]*\) chains (.*/\1/p' |
	awk '{ s += $1 } END { print s + 0 }')
echo "chains through ump.ko: the probe sent $sent, the module counted $((c1 - c0))"
[ "$sent" -gt 0 ] && [ "$sent" = $((c1 - c0)) ] || bad "sent $sent chains, ump.ko counted $((c1 - c0))"
# the runtime's path first, and the link's rate is its own
grep -o '"path": "[a-z_ ]*"' /tmp/pc.json | head -1 | grep -q io_uring || bad "io_uring is not the first path"
gbps=$(sed -n 's/^  io_uring .* \([0-9.]*\) GB\/s .*/\1/p' /tmp/pc.txt)
$HO schedule "$D/cls.onnx" --shape x=1x3x48x192 --box /tmp/pc-box.json --profile /tmp/pc.json \
	--quiet --population 8 --generations 3 -o /tmp/pc-s.json >/tmp/pc-s.txt 2>&1 ||
	{ cat /tmp/pc-s.txt; bad "the profile does not plan"; }
grep -q warning /tmp/pc-s.txt && { cat /tmp/pc-s.txt; bad "planning warned on the machine that measured"; }
echo "io_uring rate ${gbps:-?} GB/s"
exit $fail
