#!/bin/sh
# In the QEMU guest, run by bench/run.sh: the PaddleOCR classifier over a CPU
# and the emulated accelerator (19 copies a run through ump.ko), its copies
# through io_uring against through ioctls. Rounds alternate the two paths;
# each prints the median of its rounds (each round the median of 9 warm runs).
D=/data/runtime_bench
HO=/bin/heteroopt
rm -f /tmp/bench-io_uring /tmp/bench-ioctl
for r in 1 2 3 4 5; do
	for p in io_uring ioctl; do
		opt=""
		[ $p = ioctl ] && opt=--copy-ioctl
		# shellcheck disable=SC2086
		$HO run "$D/cls.onnx" --input "x=$D/cls_x.npy" --schedule "$D/cls@cpu-emu.json" \
			--box "$D/box-cpu-emu.json" --warmup 2 --repeat 9 -o /tmp/bench-out $opt |
			sed -n 's/^run: .*median \([0-9.]*\) ms.*/\1/p' >>"/tmp/bench-$p"
	done
done
u=$(sort -n /tmp/bench-io_uring | sed -n 3p)
i=$(sort -n /tmp/bench-ioctl | sed -n 3p)
[ -n "$u" ] && [ -n "$i" ] || { echo "runtime_bench: a run failed"; exit 1; }
echo "classifier cpu+emu: io_uring $u ms, ioctl $i ms (medians of 5 rounds); ioctl / io_uring $(awk "BEGIN { printf \"%.3f\", $i / $u }")"
