#!/bin/sh
# In the QEMU guest, run by bench/run.sh: what a wrong NUMA placement costs.
# the PaddleOCR classifier on CPU 0 (node 0) with its tensors on node 0, and on
# node 1, as the kernel reports their pages; rounds alternate the two, each
# the median of 5 warm runs.  Under TCG both nodes are one host memory, so
# this shows the placement taking effect more than its cost.
D=/data/numa_bench
HO=/bin/heteroopt
rm -f /tmp/numa-local /tmp/numa-remote
for r in 1 2 3 4 5; do
	for where in local remote; do
		$HO run "$D/cls.onnx" --input "x=$D/x.npy" --schedule "$D/cls@$where.json" \
			--box "$D/box-$where.json" --warmup 1 --repeat 5 -o /tmp/numa-out >/tmp/numa-run.txt ||
			{ cat /tmp/numa-run.txt; echo "numa_bench: a run failed"; exit 1; }
		want=0
		[ $where = remote ] && want=1
		grep -q "its region's pages on node $want" /tmp/numa-run.txt ||
			{ cat /tmp/numa-run.txt; echo "numa_bench: $where tensors not on node $want"; exit 1; }
		sed -n 's/^run: .*median \([0-9.]*\) ms.*/\1/p' /tmp/numa-run.txt >>"/tmp/numa-$where"
	done
done
l=$(sort -n /tmp/numa-local | sed -n 3p)
m=$(sort -n /tmp/numa-remote | sed -n 3p)
echo "numa classifier on CPU 0 (node 0): tensors on node 0 $l ms, on node 1 $m ms (medians of 5 rounds); remote / local $(awk "BEGIN { printf \"%.3f\", $m / $l }")"
