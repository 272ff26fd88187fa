#!/bin/sh
# QEMU harness for ump.ko: build the module and the tests for one kernel,
# pack an initramfs (busybox-static, tests, module), boot it under TCG with
# two NUMA nodes, an Intel IOMMU and NVMe controllers with a controller
# memory buffer behind a PCIe switch, and judge the run from the serial log.
#
#   scripts/qemu/run-tests.sh debian|debug [TEST...]
#
# Fails on a failing test, on any WARNING/BUG/KASAN/UBSAN/lockdep/kmemleak
# report in the guest's log, and on pool accounting left non-zero. The
# serial log is kept in build/qemu-<kernel>/serial.log.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KIND=${1:?usage: run-tests.sh debian|debug [TEST...]}
shift
WORK=$ROOT/build/qemu-$KIND${UMP_WORK_SUFFIX:+-$UMP_WORK_SUFFIX}
TESTS=${*:-version alloc chain copy dmabuf uring topo badinput waiters wait_signal copyout free_reserved stats_scope thread_exit limits cancel cancel_staged cancel_queued uring_cancel uring_sqe uring_nonblock p2p_cap p2p_unbind p2p_reimport foreign cgroup cgroup_cpu cgroup_pids cgroup_fd free_busy fault_copy test_pool runtime_models probe_copies frame_loop}
# Run again with a DMA channel present (tests/kmod/ump_swdma.ko).
DMA_TESTS=${UMP_DMA_TESTS-dma dma_faults dmabuf_sync fault_copy free_busy chain copy uring}
# Last, in a full run or when asked: rmmod under a running chain (it unloads).
UNLOAD_TEST=${UMP_UNLOAD_TEST-unload_busy unload_import unload_uring}
[ $# = 0 ] || UNLOAD_TEST=${UMP_UNLOAD_TEST-}
# Extra kernel command line, e.g. swiotlb=force (UMP_QEMU_APPEND).

case $KIND in
debian)
	# The packaged kernel whose headers the module is built against.
	KDIR=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -1)
	KVER=${KDIR#/usr/src/linux-headers-}
	IMAGE=/boot/vmlinuz-$KVER
	APPEND="intel_iommu=on ${UMP_QEMU_APPEND:-}"
	EXPECT_P2P=0
	# Its runs take about 3 min here alone and reach /init in under 10 s;
	# under make check's load one ran past 10 min (CI of 68c2f11, in
	# cgroup_cpu). A guest still going at 15 min, or not at /init at 2,
	# is hung.
	TIMEOUT=${UMP_QEMU_TIMEOUT:-900}
	BOOT_DEADLINE=${UMP_QEMU_BOOT_DEADLINE:-120}
	;;
debug)
	KDIR=$(sh "$ROOT/scripts/debug-kernel.sh")
	IMAGE=$KDIR/arch/x86/boot/bzImage
	APPEND="intel_iommu=on kmemleak=on ${UMP_QEMU_APPEND:-}"
	EXPECT_P2P=1
	# KASAN, kmemleak and lockdep make its runs 10-15 min long, and it
	# reaches /init after about 75 s.
	TIMEOUT=${UMP_QEMU_TIMEOUT:-1800}
	BOOT_DEADLINE=${UMP_QEMU_BOOT_DEADLINE:-600}
	;;
*) echo "run-tests.sh: unknown kernel '$KIND'" >&2; exit 2 ;;
esac
[ -r "$IMAGE" ] || { echo "run-tests.sh: no kernel image $IMAGE" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK/mod" "$WORK/root/bin/ump-tests" "$WORK/root/etc"

# Out-of-tree builds write next to the sources: give each kernel a copy.
cp -r "$ROOT/Kbuild" "$ROOT/kernel" "$ROOT/include" "$WORK/mod/"
make -s -C "$KDIR" M="$WORK/mod" W=1 modules >"$WORK/module-build.log" 2>&1 ||
	{ cat "$WORK/module-build.log"; exit 1; }
if grep -q 'warning:' "$WORK/module-build.log"; then
	cat "$WORK/module-build.log"; echo "run-tests.sh: W=1 warnings" >&2; exit 1
fi
cp "$WORK/mod/kernel/ump/ump.ko" "$WORK/root/ump.ko"
# The software DMA_MEMCPY provider that lets the dmaengine path run here.
mkdir -p "$WORK/swdma"
cp "$ROOT/tests/kmod/ump_swdma.c" "$ROOT/tests/kmod/Kbuild" "$WORK/swdma/"
make -s -C "$KDIR" M="$WORK/swdma" W=1 modules >"$WORK/swdma-build.log" 2>&1 ||
	{ cat "$WORK/swdma-build.log"; exit 1; }
cp "$WORK/swdma/ump_swdma.ko" "$WORK/root/ump_swdma.ko"

CC=${CC:-gcc}
for t in $TESTS $DMA_TESTS $UNLOAD_TEST accounting; do
	# A guest script that runs the heteroopt command, with the files its
	# host half (.prep.sh) makes with the same command here.
	script=$ROOT/tests/guest/$t.sh
	[ -f "$script" ] || script=$ROOT/bench/guest/$t.sh
	if [ -f "$script" ]; then
		[ -x "$ROOT/build/heteroopt" ] || { echo "run-tests.sh: $t needs build/heteroopt (make all)" >&2; exit 1; }
		cp "$script" "$WORK/root/bin/ump-tests/$t"
		sh "${script%.sh}.prep.sh" "$ROOT/build/heteroopt" \
			"${HETEROOPT_MODELS:-${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}/models}" \
			"$WORK/root/data/$t" >>"$WORK/tests-build.log" 2>&1 ||
			{ cat "$WORK/tests-build.log"; exit 1; }
		$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static -I"$ROOT/include" \
			-I"$ROOT/user/common" -o "$WORK/root/bin/ump-tests/npy_close" "$ROOT/tests/guest/npy_close.c" \
			"$ROOT/user/runtime/npy.c" "$ROOT/user/common/error.c" "$ROOT/user/common/utf8.c" -lm \
			>>"$WORK/tests-build.log" 2>&1 || { cat "$WORK/tests-build.log"; exit 1; }
		continue
	fi
	src=$ROOT/tests/ump/$t.c
	[ -f "$src" ] || src=$ROOT/tests/stress/$t.c
	[ -f "$src" ] || src=$ROOT/bench/guest/$t.c
	[ -f "$src" ] || src=$ROOT/tests/unit/$t.c
	extra=""
	# The runtime's pool, run against the real module (static libnuma
	# warns about getaddrinfo, which it never calls here).
	[ "$t" = test_pool ] && extra="$ROOT/user/runtime/pool.c $ROOT/user/runtime/pool_queue.c -lnuma -lpthread"
	$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static \
		-I"$ROOT/include" -I"$ROOT/tests/ump" -o "$WORK/root/bin/ump-tests/$t" \
		"$src" "$ROOT/user/libump/libump.c" $extra -luring >>"$WORK/tests-build.log" 2>&1 ||
		{ cat "$WORK/tests-build.log"; exit 1; }
done
cp /bin/busybox "$WORK/root/bin/busybox"
# A foreign dma-buf exporter for the import tests: Debian's vgem and the
# modules it needs, in load order (the debug kernel has udmabuf and dma-heaps
# built in instead).
mkdir -p "$WORK/root/mods"
FOREIGN_MODULES=""
if [ "$KIND" = debian ]; then
	for m in $(modprobe --show-depends -S "$KVER" vgem 2>/dev/null | awk '$1 == "insmod" { print $2 }'); do
		cp "$m" "$WORK/root/mods/"
		FOREIGN_MODULES="$FOREIGN_MODULES /mods/$(basename "$m")"
	done
fi
# The heteroopt command itself, with the shared libraries it links, so the
# guest can check `heteroopt status` against the loaded module.
if [ -x "$ROOT/build/heteroopt" ]; then
	cp "$ROOT/build/heteroopt" "$WORK/root/bin/heteroopt"
	for lib in $(ldd "$ROOT/build/heteroopt" | awk '/=>/ { print $3 } /^\t\// { print $1 }'); do
		mkdir -p "$WORK/root$(dirname "$lib")"
		cp -L "$lib" "$WORK/root$lib"
	done
fi
ln -s busybox "$WORK/root/bin/sh"
mkdir -p "$WORK/root/proc" "$WORK/root/sys" "$WORK/root/dev" "$WORK/root/tmp" "$WORK/root/sbin"
cp "$ROOT/scripts/qemu/init.sh" "$WORK/root/init"
chmod +x "$WORK/root/init"
{
	echo "UMP_TESTS='$TESTS'"
	echo "UMP_DMA_TESTS='$DMA_TESTS'"
	echo "UMP_UNLOAD_TEST='$UNLOAD_TEST'"
	echo "FOREIGN_MODULES='$FOREIGN_MODULES'"
	echo "export UMP_TEST_EXPECT_P2PMEM=$EXPECT_P2P"
	echo "export UMP_TEST_EXPECT_NODE1_DEVICE=1"
	echo "export UMP_STRESS_SCALE=${UMP_STRESS_SCALE:-1}"
	echo "export UMP_STRESS_COPIES_SCALE=${UMP_STRESS_COPIES_SCALE:-}"
} >"$WORK/root/etc/ump-test.env"
(cd "$WORK/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initrd.gz"

truncate -s 16M "$WORK/nvme0.img" "$WORK/nvme1.img" "$WORK/nvme2.img"
# Two NUMA nodes of one CPU each (sockets=2 or the kernel WARNs on the
# topology); two NVMe controllers with a 64 MiB CMB below one PCIe switch,
# so P2P between them is routable without the host bridge; a third behind a
# PCIe expander bridge on node 1 (also with a CMB), so one device is local
# to the other node and P2P to it must be staged through host memory.
boot_guest() {
	exec timeout "$TIMEOUT" qemu-system-x86_64 \
		-machine q35 -accel tcg -cpu max -smp 2,sockets=2 -m 2G \
		-object memory-backend-ram,id=m0,size=1G -numa node,nodeid=0,cpus=0,memdev=m0 \
		-object memory-backend-ram,id=m1,size=1G -numa node,nodeid=1,cpus=1,memdev=m1 \
		-device intel-iommu,intremap=off \
		-device pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1 \
		-device x3130-upstream,id=sw0,bus=rp1 \
		-device xio3130-downstream,id=dp0,bus=sw0,chassis=2,slot=0 \
		-device xio3130-downstream,id=dp1,bus=sw0,chassis=3,slot=1 \
		-drive file="$WORK/nvme0.img",if=none,id=nv0,format=raw \
		-drive file="$WORK/nvme1.img",if=none,id=nv1,format=raw \
		-device nvme,bus=dp0,serial=ump0,drive=nv0,cmb_size_mb=64 \
		-device nvme,bus=dp1,serial=ump1,drive=nv1,cmb_size_mb=64 \
		-device pxb-pcie,id=pxb1,bus_nr=128,numa_node=1,bus=pcie.0 \
		-device pcie-root-port,id=rp2,bus=pxb1,chassis=4,slot=0 \
		-drive file="$WORK/nvme2.img",if=none,id=nv2,format=raw \
		-device nvme,bus=rp2,serial=ump2,drive=nv2,cmb_size_mb=64 \
		-kernel "$IMAGE" -initrd "$WORK/initrd.gz" \
		-append "console=ttyS0 panic=-1 $APPEND" \
		-display none -serial file:"$WORK/serial.log" -monitor none -no-reboot \
		-nodefaults
}

# TCG boots of 2-CPU guests are known to hang now and then, and the debug
# kernel once printed a KASAN report from start_kernel (an interrupt during
# identify_cpu, 0.01 s into the boot). A guest that has not reached /init
# has run nothing of ours, so a boot that hangs or prints a kernel report
# before /init is retried once, its log kept; anything after /init is a
# failure, and so is the same on the second boot.
# Returns 2 for a boot that hung, 3 for a report before /init, else 0; the
# judge reads every log.
REPORTS=$ROOT/scripts/qemu/kernel-reports.txt
early_report() {
	sed '/guest: /q' "$WORK/serial.log" 2>/dev/null | tr -d '\r' | grep -qF -f "$REPORTS"
}
boot_watched() {
	(boot_guest) &
	qemu=$!
	waited=0
	while kill -0 $qemu 2>/dev/null && ! grep -q 'guest: ' "$WORK/serial.log" 2>/dev/null; do
		if [ $waited -ge "$BOOT_DEADLINE" ] || early_report; then
			kill $qemu
			wait $qemu || :
			early_report && return 3
			return 2
		fi
		sleep 2
		waited=$((waited + 2))
	done
	if early_report; then
		kill $qemu 2>/dev/null
		wait $qemu || :
		return 3
	fi
	rc=0
	wait $qemu || rc=$?
	[ $rc = 0 ] || echo "run-tests.sh: qemu exited with $rc" >>"$WORK/serial.log"
	return 0
}
boot_watched || {
	case $? in
	3) mv "$WORK/serial.log" "$WORK/serial.early-report.log" ;;
	*) mv "$WORK/serial.log" "$WORK/serial.hung-boot.log" ;;
	esac
	boot_watched || echo "run-tests.sh: the guest's boot failed twice before /init" >>"$WORK/serial.log"
}

exec sh "$ROOT/scripts/qemu/judge.sh" "$WORK/serial.log" "$TESTS" "$DMA_TESTS" "$UNLOAD_TEST"
