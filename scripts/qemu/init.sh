#!/bin/sh
# /init of the test guest: load ump.ko, run every test program, check that
# the pool's accounting returned to zero, unload, and print the results and
# the kernel log between markers the host side parses.
export PATH=/bin:/sbin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmp /tmp
. /etc/ump-test.env
echo 7 > /proc/sys/kernel/printk

# Each result says how long it took since the one before: where a slow
# guest spends its minutes.
uptime_s() { cut -d. -f1 /proc/uptime; }
LAST=$(uptime_s)
result() {
	now=$(uptime_s)
	echo "UMPRESULT $1 $2 $((now - LAST))s"
	LAST=$now
}

# NVMe controllers become the federated devices (their CMB is P2P memory).
PCI=""
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/class")" = "0x010802" ] && PCI="$PCI${PCI:+,}$(basename "$d")"
done
export UMP_TEST_PCI="$PCI"
echo "guest: $(uname -r), nodes: $(ls -d /sys/devices/system/node/node* | wc -l), nvme: $PCI"

# Leaks reported before our tests are the boot's, not ours.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	echo clear > /sys/kernel/debug/kmemleak
fi

for m in $FOREIGN_MODULES; do
	insmod "$m" || echo "guest: could not load $m"
done
if insmod /ump.ko devices="$PCI"; then result insmod 0; else result insmod 1; fi
[ -c /dev/ump ] && result devnode 0 || result devnode 1

for t in $UMP_TESTS; do
	echo "== test $t"
	/bin/ump-tests/$t
	result "$t" $?
done

# The command line sees the module the runtime will use.
if [ -x /bin/heteroopt ]; then
	echo "== test cli_status"
	out=$(/bin/heteroopt status)
	echo "$out"
	echo "$out" | grep -q '^pool: ump (/dev/ump' && echo "$out" | grep -q '^ump_status: active' &&
		echo "$out" | grep -q '^machine: .*2 CPUs on 2 NUMA nodes.*; ump.ko abi 1\.' &&
		echo "$out" | grep -q '^numa nodes: 2' &&
		[ "$(echo "$out" | grep -cE '^  node [01] +[0-9.]+ MiB ')" = 2 ] &&
		echo "$out" | grep -q '^  imported ' && echo "$out" | grep -qE '^  cpu +[0-9]+ ' &&
		echo "$out" | grep -q '^ump.ko: [0-9]* open files'
	result cli_status $?
	# A box of this two-node guest from the guest itself: a device per node.
	echo "== test cli_write_box"
	/bin/heteroopt probe --write-box --split 2 -o /tmp/box.json && cat /tmp/box.json && echo &&
		[ "$(grep -c '"numa_node": 0' /tmp/box.json)" = 1 ] &&
		[ "$(grep -c '"numa_node": 1' /tmp/box.json)" = 1 ]
	result cli_write_box $?
fi

# While a file is open the module cannot go; once it closes it can.
exec 3<>/dev/ump
if rmmod ump 2>/dev/null; then result rmmod_busy 1; else result rmmod_busy 0; fi
exec 3>&-

echo "== /proc/ump/status after the tests"
cat /proc/ump/status
/bin/ump-tests/accounting
result accounting_zero $?

if rmmod ump; then result rmmod 0; else result rmmod 1; fi
[ ! -e /proc/ump ] && result proc_gone 0 || result proc_gone 1
# Load and unload again, with a file opened and closed in each life:
# nothing left behind by an earlier one.
i=0
while [ $i -lt 10 ]; do
	insmod /ump.ko devices="$PCI" && cat /proc/ump/status >/dev/null &&
		exec 3<>/dev/ump && exec 3>&- && rmmod ump || break
	i=$((i + 1))
done
[ $i = 10 ] && result reload 0 || result reload 1

# rmmod with a chain over a foreign import still running (the test unloads).
for t in $UMP_UNLOAD_TEST; do
	insmod /ump.ko devices="$PCI"
	echo "== test $t"
	/bin/ump-tests/$t
	result "$t" $?
	rmmod ump 2>/dev/null
done

# The same module over a DMA_MEMCPY channel (a software provider here).
if [ -n "$UMP_DMA_TESTS" ]; then
	insmod /ump_swdma.ko && insmod /ump.ko devices="$PCI"
	result dma_load $?
	for t in $UMP_DMA_TESTS; do
		echo "== test $t@dma"
		/bin/ump-tests/$t
		result "$t@dma" $?
	done
	grep '^engine' /proc/ump/status
	rmmod ump && rmmod ump_swdma
	result dma_unload $?
fi

if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 1
	echo scan > /sys/kernel/debug/kmemleak
	echo "== kmemleak"
	cat /sys/kernel/debug/kmemleak
fi
echo "==DMESG=="
dmesg
echo "==END=="
poweroff -f
