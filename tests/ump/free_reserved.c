// SPDX-License-Identifier: MIT
/*
 * A handle ALLOC has reserved but not yet handed out is nobody's to FREE.
 * An ALLOC is held in its copy-out (its argument sits in a page that
 * userfaultfd write-protects); meanwhile another thread FREEs the handle it
 * will get and ALLOCs again. The FREE is -ENOENT and must leave the
 * reservation alone: before, it erased it, the second ALLOC took the same
 * handle, both committed, and one buffer leaked until unload.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "ump_test.h"

#define T_SIZE_HELD (1u << 20)
#define T_SIZE_SECOND (2u << 20)

struct held {
	int fd;
	struct ump_alloc *arg;
	int ret;
};

static void *held_alloc(void *p)
{
	struct held *h = p;

	h->ret = ioctl(h->fd, UMP_IOC_ALLOC, h->arg) ? -errno : 0;
	return NULL;
}

static int uffd_protect(int uffd, void *page, uint64_t mode)
{
	struct uffdio_writeprotect wp = {
	    .range = {.start = (uintptr_t)page, .len = 4096},
	    .mode = mode,
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

static uint64_t buf_size(struct ump *u, uint32_t handle)
{
	struct ump_buf_info info = {.handle = handle};

	return ioctl(u->fd, UMP_IOC_BUF_INFO, &info) ? 0 : info.size;
}

int main(void)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg = {.mode = UFFDIO_REGISTER_MODE_WP};
	struct pollfd pfd;
	struct uffd_msg msg;
	struct held h;
	struct ump u;
	pthread_t th;
	uint32_t second;
	long long bufs;
	void *page;
	int uffd, ret;

	bufs = t_pool("buffers");
	t_open(&u);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		T_SKIPPED("userfaultfd: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api) || !(api.ioctls & (1ull << _UFFDIO_REGISTER)))
		T_SKIPPED("UFFDIO_API: %s", strerror(errno));
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_REQUIRE(page != MAP_FAILED);
	memset(page, 0, 4096); /* present: the copy-in reads it without a fault */
	reg.range.start = (uintptr_t)page;
	reg.range.len = 4096;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		T_SKIPPED("userfaultfd write-protect: %s", strerror(errno));
	h.fd = u.fd;
	h.arg = page;
	h.arg->region = UMP_REGION_HOST(0);
	h.arg->size = T_SIZE_HELD;
	T_REQUIRE(!uffd_protect(uffd, page, UFFDIO_WRITEPROTECT_MODE_WP));
	T_REQUIRE(!pthread_create(&th, NULL, held_alloc, &h));
	/* The ALLOC has its handle reserved and waits to write it out. */
	pfd = (struct pollfd){.fd = uffd, .events = POLLIN};
	if (poll(&pfd, 1, 10000) != 1)
		T_FAIL("the ALLOC never reached its copy-out");
	T_REQUIRE(read(uffd, &msg, sizeof(msg)) == sizeof(msg));
	T_REQUIRE(msg.event == UFFD_EVENT_PAGEFAULT &&
		  (msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP));

	/* A fresh file's first handle is 1: the reserved one. */
	ret = ump_free(&u, 1);
	if (ret != -ENOENT)
		T_FAIL("FREE of a reserved handle returned %d, not -ENOENT", ret);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SIZE_SECOND, &second));

	T_REQUIRE(!uffd_protect(uffd, page, 0)); /* wakes the ALLOC */
	T_REQUIRE(!pthread_join(th, NULL));
	T_OK(h.ret);
	printf("free_reserved: the held ALLOC got handle %u, the one after the FREE %u\n",
	       h.arg->handle, second);
	if (h.arg->handle == second)
		T_FAIL("two ALLOCs got handle %u: the FREE erased a reservation", second);
	if (buf_size(&u, h.arg->handle) != T_SIZE_HELD || buf_size(&u, second) != T_SIZE_SECOND)
		T_FAIL("a handle names the wrong buffer (sizes %llu and %llu)",
		       (unsigned long long)buf_size(&u, h.arg->handle),
		       (unsigned long long)buf_size(&u, second));
	ump_close(&u);
	if (t_pool("buffers") != bufs)
		T_FAIL("%lld buffer(s) left in the pool after the file closed",
		       t_pool("buffers") - bufs);
	close(uffd);
	return 0;
}
