// SPDX-License-Identifier: MIT
/*
 * Imports of foreign dma-bufs (vgem or the system dma-heap):
 *  - a read-only dma-buf fd stays read-only: a copy from it works, a copy
 *    into it fails with -EACCES and leaves its bytes alone;
 *  - importing one dma-buf many times makes one buffer, counted once in
 *    /proc/ump/status, and the number of imports a file holds is bounded.
 */
#include <sys/mman.h>

#include "foreign.h"

#define T_SZ (1u << 20)

static long long imported(const char *field)
{
	return t_stat("region imported", field);
}

int main(void)
{
	uint32_t hro, hrw, hhost, h;
	unsigned char *pro, *phost;
	const char *who;
	struct ump_copy_desc d;
	struct ump_wait w;
	uint64_t size, chain;
	long long used0, bufs0;
	struct ump u;
	int ro, rw, i, ret;

	t_open(&u);
	ro = t_foreign_dmabuf(T_SZ, 0, &who);
	if (ro == -ENODEV)
		T_SKIPPED("no foreign dma-buf exporter (vgem, dma-heap) in this guest");
	if (ro < 0)
		T_FAIL("%s: read-only dma-buf: %s", who, strerror(-ro));
	rw = t_foreign_dmabuf(T_SZ, 1, &who);
	if (rw < 0)
		T_FAIL("%s: dma-buf: %s", who, strerror(-rw));
	if (mmap(NULL, T_SZ, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0) != MAP_FAILED)
		T_FAIL("%s: a read-only dma-buf mapped writable: the test's premise fails", who);
	pro = mmap(NULL, T_SZ, PROT_READ, MAP_SHARED, ro, 0);
	if (pro == MAP_FAILED)
		T_FAIL("%s: mmap read-only: %s", who, strerror(errno));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SZ, &hhost));
	T_OK(ump_mmap(&u, hhost, T_SZ, (void **)&phost));
	memset(phost, 0x77, T_SZ);

	used0 = imported("used");
	bufs0 = imported("buffers");
	T_OK(ump_import(&u, ro, &hro, &size));
	T_OK(ump_import(&u, rw, &hrw, &size));

	/* From it: fine. Into it: refused, and nothing written. */
	d = (struct ump_copy_desc){hro, hhost, 0, 0, T_SZ};
	T_OK(ump_copy_sync(&u, &d, 1));
	if (phost[0] != pro[0] || phost[T_SZ - 1] != pro[T_SZ - 1])
		T_FAIL("copy from the read-only import");
	memset(phost, 0x77, T_SZ);
	d = (struct ump_copy_desc){hhost, hro, 0, 0, T_SZ};
	ret = ump_submit(&u, &d, 1, 0, &chain);
	if (!ret) {
		T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
		ret = w.status;
	}
	if (ret != -EACCES || pro[0] == 0x77 || pro[T_SZ - 1] == 0x77)
		T_FAIL("%s: a copy into a read-only dma-buf: %d (byte 0 now %#x), want -EACCES "
		       "and no write",
		       who, ret, pro[0]);

	/* One dma-buf imported many times: one buffer, its bytes counted once. */
	for (i = 0; i < 1000; i++) {
		ret = ump_import(&u, rw, &h, &size);
		if (ret)
			T_FAIL("import %d of the same dma-buf: %s", i, strerror(-ret));
	}
	if (imported("used") - used0 != 2 * T_SZ || imported("buffers") - bufs0 != 2)
		T_FAIL("1002 imports of 2 dma-bufs count %lld bytes in %lld buffers, want %u in 2",
		       imported("used") - used0, imported("buffers") - bufs0, 2 * T_SZ);
	/* Handles a file holds are bounded. */
	for (i = 0; i < UMP_MAX_HANDLES_PER_FILE; i++) {
		ret = ump_import(&u, rw, &h, &size);
		if (ret)
			break;
	}
	if (ret != -EMFILE)
		T_FAIL("%d more imports: %d, want -EMFILE before %u handles", i, ret,
		       UMP_MAX_HANDLES_PER_FILE);
	ump_close(&u);
	close(ro);
	close(rw);
	if (imported("used") != used0 || imported("buffers") != bufs0)
		T_FAIL("imports left behind: %lld bytes %lld buffers", imported("used") - used0,
		       imported("buffers") - bufs0);
	printf("foreign: %s read-only honoured; repeated imports counted once; handles bounded\n",
	       who);
	return 0;
}
