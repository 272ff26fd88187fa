/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two kernels ump.ko is tested on (Debian 12's 6.1 and 6.12) differ in a
 * few interfaces; keep every version test here so the code stays plain.
 */
#ifndef _UMP_COMPAT_H
#define _UMP_COMPAT_H

#include <linux/dma-buf.h>
#include <linux/version.h>

/*
 * The SQE of a uring_cmd: 6.6 hands the driver the whole SQE (or a copy of
 * it), whose fields we do not use must be zero; 6.1 hands only the command
 * area (copied alone when the request goes async), so there only that area
 * and the command flags can be checked.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#include <linux/io_uring/cmd.h>
#define ump_uring_payload(ioucmd) io_uring_sqe_cmd((ioucmd)->sqe)
static inline bool ump_uring_sqe_unused_zero(const struct io_uring_cmd *ioucmd)
{
	const struct io_uring_sqe *sqe = ioucmd->sqe;

	return !READ_ONCE(sqe->addr) && !READ_ONCE(sqe->len) &&
	       !READ_ONCE(sqe->buf_index) && !READ_ONCE(sqe->file_index);
}
#else
#include <linux/io_uring.h>
#define ump_uring_payload(ioucmd) ((ioucmd)->cmd)
static inline bool ump_uring_sqe_unused_zero(const struct io_uring_cmd *ioucmd)
{
	return true;
}
#endif
#define UMP_SQE128_CMD_BYTES \
	(2 * sizeof(struct io_uring_sqe) - offsetof(struct io_uring_sqe, cmd))

/*
 * 6.7 lets io_uring cancel a uring_cmd when its ring closes or its task
 * exits or execs (IORING_URING_CMD_CANCELABLE). 6.1 has no such call, and
 * waits for the command in each case, so there a chain looks for itself,
 * between slices, at what the call would have said: its ring is dying (the
 * ring's file released: io_ring_ctx_wait_and_kill() kills its refs first),
 * or its submitter is in execve() (whose io_uring_task_cancel() waits for
 * that task's commands). A process that dies stops its chains on both.
 */
/*
 * Where the kernel calls us, a queued chain is taken off its worker's queue
 * by that call; where it does not, the running chain must look for the
 * queued chains of dead rings (ump_worker_reap()).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define UMP_URING_REAP_QUEUED false
#define ump_uring_cancel_call(issue_flags) ((issue_flags)&IO_URING_F_CANCEL)
#define ump_uring_mark_cancelable io_uring_cmd_mark_cancelable
static inline bool ump_uring_orphaned(struct io_uring_cmd *ioucmd,
				      struct task_struct *submitter)
{
	return false;
}
#else
#include <linux/io_uring_types.h>
#define UMP_URING_REAP_QUEUED true
static inline bool ump_uring_cancel_call(unsigned int issue_flags)
{
	return false;
}

static inline void ump_uring_mark_cancelable(struct io_uring_cmd *ioucmd,
					     unsigned int issue_flags)
{
}

static inline bool ump_uring_orphaned(struct io_uring_cmd *ioucmd,
				      struct task_struct *submitter)
{
	/* A bit field: no READ_ONCE; a stale read only delays the stop. */
	return percpu_ref_is_dying(&cmd_to_io_kiocb(ioucmd)->ctx->refs) ||
	       submitter->in_execve;
}
#endif

/*
 * The task that submitted a uring_cmd: with IOSQE_ASYNC (or when the
 * command is punted) the driver runs in an io-wq worker, whose exec or exit
 * is not the submitter's.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define ump_uring_task io_uring_cmd_get_task
#else
#include <linux/io_uring_types.h>
static inline struct task_struct *ump_uring_task(struct io_uring_cmd *ioucmd)
{
	return cmd_to_io_kiocb(ioucmd)->task;
}
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
