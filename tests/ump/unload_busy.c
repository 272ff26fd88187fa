// SPDX-License-Identifier: MIT
/*
 * What keeps the module loaded once /dev/ump is closed: an exported dma-buf
 * fd, and a mapping of one after its fd is closed. rmmod is refused while
 * either lives and succeeds once both are gone. Run in the unload stage: it
 * leaves the module unloaded.
 */
#include <sys/mman.h>
#include <sys/syscall.h>

#include "ump_test.h"

static int unload(void)
{
	return syscall(SYS_delete_module, "ump", O_NONBLOCK) ? -errno : 0;
}

int main(void)
{
	unsigned char *p;
	struct ump u;
	uint32_t h;
	int fd, ret, i;

	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 1 << 16, &h));
	fd = ump_export(&u, h);
	T_REQUIRE(fd >= 0);
	p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_REQUIRE(p != MAP_FAILED);
	ump_close(&u);
	memset(p, 0x3c, 1 << 16);

	ret = unload();
	if (ret != -EWOULDBLOCK && ret != -EBUSY)
		T_FAIL("rmmod with an exported dma-buf fd open: %d, want refused", ret);
	close(fd);
	ret = unload();
	if (ret != -EWOULDBLOCK && ret != -EBUSY)
		T_FAIL("rmmod with a dma-buf still mapped: %d, want refused", ret);
	if (p[0] != 0x3c || p[(1 << 16) - 1] != 0x3c)
		T_FAIL("the mapping changed while the module was asked to go");
	munmap(p, 1 << 16);
	/* The last reference may drop an instant later. */
	for (i = 0; i < 1000 && (ret = unload()); i++)
		usleep(1000);
	if (ret)
		T_FAIL("rmmod after the last mapping went: %s", strerror(-ret));
	printf("unload_busy: refused with an fd, then with a mapping; unloaded after\n");
	return 0;
}
