/* SPDX-License-Identifier: MIT */
/*
 * libump: a thin client of /dev/ump (kernel/ump), in the spirit of liburing.
 *
 * Every call returns 0 (or a non-negative value where documented) on success
 * and -errno on failure; nothing sets errno or prints. The library owns no
 * global state: a struct ump is one open file of /dev/ump, and every buffer
 * handle and chain id belongs to the struct ump that made it.
 *
 * io_uring submission: include <ump/libump-uring.h> as well (needs liburing).
 */
#ifndef LIBUMP_H
#define LIBUMP_H

#include <stddef.h>
#include <stdint.h>

#include <ump/uapi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMP_DEV_PATH "/dev/ump"
#define UMP_STATUS_PATH "/proc/ump/status"

struct ump {
	int fd;
	struct ump_version version;
};

/* Open /dev/ump and check the ABI major version (-EPROTO on mismatch). */
int ump_open(struct ump *u);
void ump_close(struct ump *u);

/* Buffers. region: UMP_REGION_HOST(node) or UMP_REGION_P2P(device index). */
int ump_alloc(struct ump *u, uint32_t region, uint64_t size, uint32_t *handle);
int ump_free(struct ump *u, uint32_t handle);
int ump_buf_info(struct ump *u, uint32_t handle, struct ump_buf_info *info);

/* dma-buf: export returns a new fd (O_CLOEXEC); import a foreign one. */
int ump_export(struct ump *u, uint32_t handle);
int ump_import(struct ump *u, int dmabuf_fd, uint32_t *handle, uint64_t *size);
/* mmap a buffer through a temporary export; the mapping keeps it alive. */
int ump_mmap(struct ump *u, uint32_t handle, size_t len, void **addr);

/* Copy chains through ioctls. */
int ump_submit(struct ump *u, const struct ump_copy_desc *descs, unsigned int count,
	       uint64_t user_data, uint64_t *chain);
/* timeout_ns: absolute CLOCK_MONOTONIC, or UMP_TIMEOUT_INFINITE. */
int ump_wait(struct ump *u, uint64_t chain, uint64_t timeout_ns, struct ump_wait *result);
/* Stop a chain before its next descriptor (WAIT then reports -ECANCELED). */
int ump_cancel(struct ump *u, uint64_t chain);
/* Submit and wait; returns the chain's status. */
int ump_copy_sync(struct ump *u, const struct ump_copy_desc *descs, unsigned int count);

/* Topology. pci: "0000:00:04.0". */
int ump_dev_add(struct ump *u, const char *pci, uint32_t *index);
int ump_dev_info(struct ump *u, uint32_t index, struct ump_dev_info *info);

/*
 * The pool's figures (UMP_IOC_STATS): counts and engines into *stats, up to
 * max regions into regions (NULL when max is 0). Returns how many regions
 * there are, or -errno.
 */
int ump_stats(struct ump *u, struct ump_stats *stats, struct ump_stats_region *regions,
	      unsigned int max);
/* Read /proc/ump/status, the view for people (root only), into buf
 * (NUL-terminated); returns its length. Programs use ump_stats(). */
int ump_read_status(char *buf, size_t len);

uint64_t ump_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
