// SPDX-License-Identifier: MIT
/*
 * Fault injection: with failslab failing this process's slab allocations at
 * random, alloc/import/export/submit/wait cycles must fail cleanly (0 or
 * -ENOMEM, never a crash or a report) and leave the pool empty. Needs
 * CONFIG_FAILSLAB and debugfs (the debug kernel); skipped elsewhere.
 */
#include <fcntl.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

#define FS "/sys/kernel/debug/failslab/"

static int ok_or_nomem(int ret)
{
	return ret == 0 || ret == -ENOMEM || ret == -EAGAIN;
}

int main(void)
{
	const char *sc = getenv("UMP_STRESS_SCALE");
	long rounds = (long)(3000 * (sc ? atof(sc) : 1.0)), i, failures = 0;
	long long bufs = -1, chains = -1, ctxs = -1;
	struct ump probe;

	t_open(&probe);
	ump_close(&probe);
	if (access(FS "probability", W_OK))
		T_SKIPPED("no failslab in this kernel (CONFIG_FAILSLAB, debugfs)");
	/* Only tasks that ask for it; quiet, or every failure dumps a stack. */
	if (t_write_file(FS "task-filter", "Y") || t_write_file(FS "verbose", "0") ||
	    t_write_file(FS "probability", "10") || t_write_file(FS "interval", "1") ||
	    t_write_file(FS "times", "-1") || t_write_file(FS "ignore-gfp-wait", "N") ||
	    t_write_file("/proc/self/make-it-fail", "1"))
		T_FAIL("cannot arm failslab");

	for (i = 0; i < rounds; i++) {
		struct ump_copy_desc d[4];
		struct ump_wait w;
		struct ump u;
		uint32_t h[2], hi;
		uint64_t chain;
		int ret, fd;

		ret = ump_open(&u);
		if (ret) {
			if (!ok_or_nomem(ret))
				T_FAIL("open: %d", ret);
			failures++;
			continue;
		}
		ret = ump_alloc(&u, UMP_REGION_HOST(0), 65536, &h[0]);
		if (!ok_or_nomem(ret))
			T_FAIL("alloc: %d", ret);
		if (ret)
			goto close;
		ret = ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), 65536, &h[1]);
		if (!ok_or_nomem(ret))
			T_FAIL("alloc 2: %d", ret);
		if (ret)
			goto close;
		fd = ump_export(&u, h[0]);
		if (fd >= 0) {
			ret = ump_import(&u, fd, &hi, NULL);
			if (!ok_or_nomem(ret))
				T_FAIL("import: %d", ret);
			close(fd);
		} else if (!ok_or_nomem(fd)) {
			T_FAIL("export: %d", fd);
		}
		for (int k = 0; k < 4; k++)
			d[k] = (struct ump_copy_desc){h[k & 1], h[!(k & 1)], 0, 0, 65536};
		ret = ump_submit(&u, d, 4, 0, &chain);
		if (!ok_or_nomem(ret))
			T_FAIL("submit: %d", ret);
		if (!ret) {
			ret = ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w);
			if (ret || w.status)
				T_FAIL("wait: %d status %d", ret, w.status);
		} else {
			failures++;
		}
	close:
		failures += ret != 0;
		ump_close(&u);
	}
	/* Disarm.  The write can itself be failed by the injection it ends (seen
	 * in a fresh-clone check: the status read after it then failed), so retry. */
	for (i = 0; i < 1000 && t_write_file("/proc/self/make-it-fail", "0"); i++)
		;
	if (i == 1000)
		T_FAIL("cannot disarm failslab");
	t_write_file(FS "probability", "0");
	for (i = 0; i < 100; i++) {
		bufs = t_pool("buffers");
		chains = t_pool("chains");
		ctxs = t_pool("contexts");
		if (!bufs && !chains && !ctxs)
			break;
		usleep(100000);
	}
	if (bufs || chains || ctxs)
		T_FAIL("left behind: %lld buffers %lld chains %lld contexts", bufs, chains, ctxs);
	if (!failures)
		T_FAIL("failslab armed but no call ever failed");
	printf("stress_failslab: %ld rounds, %ld calls failed by injection, all cleanly\n", rounds,
	       failures);
	return 0;
}
