#!/bin/sh
# The frame loop's cost per frame, read in place against copied in: rounds
# alternate heteroopt serve with and without --copy, each feeding N frames
# of 1x3x640x640 (4.9 MB) from the pool to a model that reads the frame once.
# Each prints the median of its rounds' medians.  Run in the QEMU guest by
# bench/run.sh (D=/data/frame_bench), and on the host with D and HO set.
D=${D:-/data/frame_bench}
HO=${HO:-/bin/heteroopt}
N=${N:-20}
S=/tmp/frame-bench.sock
rm -f /tmp/frame-inplace /tmp/frame-copy
for r in 1 2 3; do
	for mode in inplace copy; do
		opt=""
		[ $mode = copy ] && opt=--copy
		# shellcheck disable=SC2086
		$HO serve "$D/gap.onnx" --socket $S $opt >/dev/null 2>&1 &
		$HO feed --socket $S --input "x=$D/frame.npy" --frames "$N" --from pool >/tmp/frame-feed.txt 2>&1 ||
			{ cat /tmp/frame-feed.txt; echo "frame_bench: the loop failed"; exit 1; }
		wait
		sed -n 's/.*per frame median \([0-9.]*\) ms.*run median \([0-9.]*\) ms.*/\1 \2/p' \
			/tmp/frame-feed.txt >>"/tmp/frame-$mode"
	done
done
i=$(sort -n /tmp/frame-inplace | sed -n 2p)
c=$(sort -n /tmp/frame-copy | sed -n 2p)
[ -n "$i" ] && [ -n "$c" ] || { echo "frame_bench: no figures"; exit 1; }
set -- $i $c
echo "frame loop 1x3x640x640 from the pool: per frame $1 ms read in place, $3 ms copied in (server's bind and run $2 against $4 ms; medians of 3 rounds of $N frames); copied / in place $(awk "BEGIN { printf \"%.3f\", $3 / $1 }")"
