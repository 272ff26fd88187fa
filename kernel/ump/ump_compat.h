/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two kernels ump.ko is tested on (Debian 12's 6.1 and 6.12) differ in a
 * few interfaces; keep every version test here so the code stays plain.
 */
#ifndef _UMP_COMPAT_H
#define _UMP_COMPAT_H

#include <linux/dma-buf.h>
#include <linux/version.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#include <linux/io_uring/cmd.h>
#define ump_uring_payload(ioucmd) io_uring_sqe_cmd((ioucmd)->sqe)
#else
#include <linux/io_uring.h>
#define ump_uring_payload(ioucmd) ((ioucmd)->cmd)
#endif

/* 6.2 moved dma_buf_vmap() under the reservation lock; we hold none. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define ump_dma_buf_vmap dma_buf_vmap_unlocked
#define ump_dma_buf_vunmap dma_buf_vunmap_unlocked
#else
#define ump_dma_buf_vmap dma_buf_vmap
#define ump_dma_buf_vunmap dma_buf_vunmap
#endif

#endif /* _UMP_COMPAT_H */
