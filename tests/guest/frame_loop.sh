#!/bin/sh
# In the QEMU guest, ump.ko loaded: a frame pipeline through the runtime
# with its memory in ump.ko's pool.  `heteroopt serve` runs the classifier
# on 100 frames that `heteroopt feed` sends as descriptors from the pool's
# own dma-bufs, then on 30 from memfds (on the debug kernel 30 and 10, and 10
# each from udmabufs and the system dma-heap): every answer equal to the
# host's, nothing copied in the hand-off, every descriptor the server took
# given back, the pool empty once it is gone.  Then a server killed
# mid-loop leaves the pool empty too.  Files from frame_loop.prep.sh.
D=/data/frame_loop
HO=/bin/heteroopt
OUT=softmax_0.tmp_0
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

# serve_bg LOG OPTION...: a server for one client; returns once it listens
serve_bg() {
	log=$1
	shift
	$HO serve "$D/cls.onnx" --socket /tmp/fl.sock --shape x=1x3x48x192 "$@" >"$log" 2>&1 &
	server=$!
	i=0
	while [ $i -lt 600 ] && ! grep -q listening "$log"; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q listening "$log" || { cat "$log"; bad "the server did not listen"; }
}

sources="pool:100 memfd:30"
# The debug kernel (KASAN, lockdep, kmemleak) runs a frame three times slower:
# fewer frames there, and its udmabufs and dma-heaps as well.
if [ "${UMP_TEST_EXPECT_P2PMEM:-0}" = 1 ]; then
	sources="pool:30 memfd:10 udmabuf:10 heap:10"
fi
for spec in $sources; do
	from=${spec%%:*} n=${spec#*:}
	echo "== frames from $from"
	serve_bg /tmp/fl-serve-$from.txt
	if ! $HO feed --socket /tmp/fl.sock --input "x=$D/a.npy" --input "x=$D/b.npy" \
		--expect "$OUT=$D/ref-a/$OUT.npy" --expect "$OUT=$D/ref-b/$OUT.npy" \
		--frames $n --from $from >/tmp/fl-feed.txt 2>&1; then
		cat /tmp/fl-feed.txt
		bad "$from: the frame loop failed"
	fi
	wait $server || bad "$from: the server failed"
	cat /tmp/fl-feed.txt /tmp/fl-serve-$from.txt
	grep -q "$n answers checked" /tmp/fl-feed.txt || bad "$from: not $n answers checked"
	grep -q 'the hand-off copied 0 bytes in all' /tmp/fl-feed.txt || bad "$from: the hand-off copied"
	grep -q 'memory pool: ump (/dev/ump' /tmp/fl-serve-$from.txt || bad "$from: the server not on ump.ko's pool"
	line=$(grep -o 'open fds [0-9]* before the first frame, [0-9]* once' /tmp/fl-serve-$from.txt)
	set -- $line
	[ -n "$line" ] && [ "$3" = "$8" ] || bad "$from: descriptors not given back ($line)"
	/bin/ump-tests/accounting >/dev/null || bad "$from: the pool is not empty after the server"
done

# The baseline: each frame copied in (the bench compares the two)
serve_bg /tmp/fl-serve-copy.txt --copy
$HO feed --socket /tmp/fl.sock --input "x=$D/a.npy" --expect "$OUT=$D/ref-a/$OUT.npy" \
	--frames 20 --from pool >/tmp/fl-feed.txt 2>&1 || bad "--copy: the frame loop failed"
wait $server
grep -q 'the hand-off copied 2211840 bytes in all' /tmp/fl-feed.txt ||
	{ cat /tmp/fl-feed.txt; bad "--copy: not 20 frames copied in"; }

# SIGKILL mid-loop: the feed sees the server go, and the pool empties.
echo "== server killed mid-loop"
serve_bg /tmp/fl-serve-kill.txt
$HO feed --socket /tmp/fl.sock --input "x=$D/a.npy" --frames 1000000 --from pool >/tmp/fl-feed.txt 2>&1 &
feeder=$!
sleep 3
kill -9 $server
wait $server
wait $feeder && bad "the feed did not notice the server was killed"
cat /tmp/fl-feed.txt
grep -q 'the server did not answer' /tmp/fl-feed.txt || bad "the feed's error does not say the server went"
/bin/ump-tests/accounting || bad "the pool did not empty after the server was killed"
exit $fail
