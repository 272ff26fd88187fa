// SPDX-License-Identifier: MIT
/*
 * A ump buffer exported as a dma-buf and mapped by a device: what the
 * device writes is what the CPU reads after DMA_BUF_IOCTL_SYNC(START), and
 * what the CPU writes the device reads after SYNC(END), through bounce
 * buffers too (swiotlb=force, as SEV and TDX guests force). The device is
 * ump_swdma's importer, which writes and reads the buffer at its mapping's
 * DMA addresses. Before, the exporter had no begin/end_cpu_access: SYNC did
 * nothing, and under bouncing each side saw stale bytes.
 */
#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "ump_test.h"

#define SWDMA_IMPORT _IOW('S', 1, int)
#define SWDMA_DEV_FILL _IOW('S', 2, int)
#define SWDMA_DEV_PEEK _IOR('S', 3, int)
#define T_SZ (1u << 16)

static void buf_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync s = {.flags = flags};

	T_REQUIRE(!ioctl(fd, DMA_BUF_IOCTL_SYNC, &s));
}

int main(void)
{
	int fd, imp, seen, bounced, cpu_saw;
	unsigned char *p;
	struct ump u;
	uint32_t h;

	t_open(&u);
	imp = open("/dev/ump_swdma_importer", O_RDWR | O_CLOEXEC);
	if (imp < 0)
		T_SKIPPED("no ump_swdma importer: %s", strerror(errno));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SZ, &h));
	fd = ump_export(&u, h);
	T_REQUIRE(fd >= 0);
	p = mmap(NULL, T_SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_REQUIRE(p != MAP_FAILED);
	memset(p, 0x11, T_SZ);
	if (ioctl(imp, SWDMA_IMPORT, fd))
		T_FAIL("the importer could not attach and map the dma-buf: %s", strerror(errno));

	/* The device writes; the CPU reads after SYNC(START, READ). */
	T_REQUIRE(!ioctl(imp, SWDMA_DEV_FILL, 0xab));
	buf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	cpu_saw = p[0];
	buf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);

	/* The CPU writes between SYNC(START, WRITE) and SYNC(END, WRITE); the device reads. */
	buf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	memset(p, 0xcd, T_SZ);
	buf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	T_REQUIRE(!ioctl(imp, SWDMA_DEV_PEEK, &seen));
	bounced = seen >> 8;
	seen &= 0xff;
	printf("dmabuf_sync: mapping %s; the CPU read 0x%02x of the device's 0xab, the device "
	       "read 0x%02x of the CPU's 0xcd\n",
	       bounced ? "bounced" : "direct", cpu_saw, seen);
	if (cpu_saw != 0xab)
		T_FAIL("after SYNC(START) the CPU does not see what the device wrote");
	if (seen != 0xcd)
		T_FAIL("after SYNC(END) the device does not see what the CPU wrote");
	close(imp);
	munmap(p, T_SZ);
	close(fd);
	ump_close(&u);
	return 0;
}
