#!/bin/sh
# heteroopt status on this machine: ump.ko is not loaded here (the host
# kernel cannot load modules), so the fallback must be named with its reason
# and the node count must match sysfs. The QEMU guests run the same command
# with the module loaded (scripts/qemu/init.sh).
. "$(dirname "$0")/lib.sh"
BIN=$1
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
[ "$nodes" -ge 1 ] || nodes=1
if [ -e /dev/ump ]; then
	check "status names ump" 0 "pool: ump (/dev/ump" -- "$BIN" status
	check "status shows /proc/ump/status" 0 "ump_status: active" -- "$BIN" status
else
	check "status names the fallback and why" 0 "user-space fallback (memfd + libnuma" -- "$BIN" status
	check "status says the module is absent" 0 "/dev/ump not present" -- "$BIN" status
fi
check "status counts the NUMA nodes" 0 "numa nodes: $nodes" -- "$BIN" status
check "status shows each node's memory, total and free" 0 "" -- sh -c "
	out=\$('$BIN' status) || exit 1
	[ \$(echo \"\$out\" | grep -cE '^  node [0-9]+ +[0-9.]+ (KiB|MiB|GiB|TiB) ') = $nodes ]"
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
check "status names this machine as a profile records it" 0 "machine: $cpu; " -- "$BIN" status
[ -e /dev/ump ] || check "status: the machine has no ump.ko" 0 "ump.ko not loaded" -- "$BIN" status
ONE_LINE_ERRORS=1 check "status refuses arguments" 2 "unexpected argument" -- "$BIN" status extra
check "status --help" 0 "usage: heteroopt status" -- "$BIN" status --help
[ "$fails" = 0 ]
