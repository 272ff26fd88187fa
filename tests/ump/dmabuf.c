// SPDX-License-Identifier: MIT
/*
 * dma-buf round trips: a pool buffer exported, mmapped and imported back
 * (by this file and by another) sees the same bytes; foreign exporters
 * (udmabuf, the system dma-heap) import and copy; exports keep memory alive
 * after FREE and after the owning file closes; accounting returns to zero.
 */
#include "regions.h"

static long long live_buffers(void)
{
	return t_pool("buffers");
}

int main(void)
{
	struct ump u, v;
	uint32_t h, hi, hv;
	unsigned char *p;
	uint64_t size;
	int fd, foreign = 0;
	long long base = live_buffers();

	t_open(&u);
	T_OK(ump_open(&v));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 3 * 4096, &h));
	fd = ump_export(&u, h);
	T_EXPECT(fd >= 0, 1);
	p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		T_FAIL("mmap export: %s", strerror(errno));
	t_fill(p, 3 * 4096, 0, 3 * 4096, 1, 3);

	/* Import into this file and into another: both copy the same bytes. */
	T_OK(ump_import(&u, fd, &hi, &size));
	T_EXPECT(size, 3 * 4096);
	T_OK(ump_import(&v, fd, &hv, &size));
	{
		struct ump_copy_desc d = {hi, h, 0, 4096, 4096};
		struct ump_buf_info info;

		T_OK(ump_buf_info(&u, hi, &info));
		T_EXPECT(info.region, UMP_REGION_IMPORTED);
		/* Copy page 0 onto page 1 through the imported handle. */
		T_OK(ump_copy_sync(&u, &d, 1));
		if (memcmp(p, p + 4096, 4096))
			T_FAIL("copy through the import not visible in mmap");
	}
	/* Mapping beyond the buffer is refused by the exporter. */
	if (mmap(NULL, 4 * 4096, PROT_READ, MAP_SHARED, fd, 0) != MAP_FAILED)
		T_FAIL("oversized mmap accepted");

	/* FREE and close the owner: the export and the other import live on. */
	T_OK(ump_free(&u, h));
	T_OK(ump_free(&u, hi));
	ump_close(&u);
	close(fd);
	{
		unsigned char *q;
		struct ump_copy_desc d = {hv, hv, 0, 8192, 4096};

		T_OK(ump_copy_sync(&v, &d, 1));
		if (memcmp(p, p + 8192, 4096))
			T_FAIL("copy in the second file after the owner closed");
		/* Re-exporting an import hands out the same dma-buf. */
		fd = ump_export(&v, hv);
		T_EXPECT(fd >= 0, 1);
		q = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (q == MAP_FAILED || memcmp(q, p, 4096))
			T_FAIL("re-export does not show the same memory");
		munmap(q, 4096);
		close(fd);
	}
	T_OK(ump_free(&v, hv));
	munmap(p, 3 * 4096);
	if (live_buffers() != base)
		T_FAIL("buffers %lld after everything closed, want %lld", live_buffers(), base);

	/* Foreign exporters. */
	{
		struct t_region r[24];
		int n = t_regions(&v, r, 24), i;

		for (i = 0; i < n; i++) {
			struct t_buf b, host;
			struct ump_copy_desc d;

			if (r[i].kind != T_UDMABUF && r[i].kind != T_HEAP)
				continue;
			t_buf_new(&v, &r[i], 1 << 16, &b);
			t_buf_new(&v, &r[0], 1 << 16, &host);
			t_fill(b.map, 1 << 16, 0, 1 << 16, 1, 9);
			d = (struct ump_copy_desc){b.handle, host.handle, 0, 0, 1 << 16};
			T_OK(ump_copy_sync(&v, &d, 1));
			if (memcmp(b.map, host.map, 1 << 16))
				T_FAIL("%s -> host copy wrong", r[i].name);
			t_buf_free(&v, &b);
			t_buf_free(&v, &host);
			printf("dmabuf: imported from %s\n", r[i].name);
			foreign++;
		}
	}
	ump_close(&v);
	if (!foreign)
		T_SKIPPED("export/import round trips passed; no udmabuf or dma-heap in this kernel "
			  "to import from");
	printf("dmabuf: round trips and %d foreign exporter(s) ok\n", foreign);
	return 0;
}
