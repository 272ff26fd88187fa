/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ump: the HeteroOpt unified memory pool, user-space ABI of /dev/ump.
 *
 * Rules (Documentation/process/botching-up-ioctls.rst): every struct is made
 * of __u32/__u64/__s32/__s64 with explicit padding and the same layout on
 * 32- and 64-bit; pointers travel as __u64; flags, pad and reserved fields
 * must be zero or the call fails with -EINVAL. Unknown commands get -ENOTTY.
 *
 * Growth: a struct only ever grows at its end, by fields whose zero means
 * what the shorter struct meant, and ABI_MINOR goes up. The size in each
 * command's number is the caller's struct size, so old and new callers are
 * both served: a struct larger than the module knows is accepted when the
 * bytes past its own are zero (-E2BIG otherwise), a smaller one down to the
 * size the command first shipped with reads as zero-extended (-ENOTTY
 * below that), and each side sees only the common prefix written back.
 * Every struct is still its first size in ABI 1.1.
 *
 * User space includes this file as <ump/uapi.h>, the copy libump installs
 * (as liburing installs its io_uring.h), so that a program builds against
 * the ABI it was written for whatever kernel headers the machine has.
 *
 * Objects (buffers and chains) belong to the open file that created them: a
 * handle means nothing to any other file, and everything a file still holds
 * is released when it closes. Buffers outlive their file only through a
 * dma-buf fd exported from them.
 */
#ifndef _UAPI_LINUX_UMP_H
#define _UAPI_LINUX_UMP_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define UMP_ABI_MAJOR 1
#define UMP_ABI_MINOR 2

/* Feature bits of struct ump_version.features. */
#define UMP_FEAT_HOST_NODES (1ULL << 0) /* allocation on a NUMA node */
#define UMP_FEAT_P2PMEM (1ULL << 1) /* kernel has CONFIG_PCI_P2PDMA */
#define UMP_FEAT_DMABUF_EXPORT (1ULL << 2)
#define UMP_FEAT_DMABUF_IMPORT (1ULL << 3)
#define UMP_FEAT_URING_CMD (1ULL << 4)
#define UMP_FEAT_DMA_ENGINE \
	(1ULL << 5) /* a dmaengine memcpy channel is in use */
#define UMP_FEAT_CANCEL \
	(1ULL << 6) /* UMP_IOC_CANCEL and the per-file bounds (1.1) */
#define UMP_FEAT_STATS (1ULL << 7) /* UMP_IOC_STATS (1.1) */
/* UMP_IOC_STATS: the pool's figures to CAP_SYS_ADMIN only (1.2) */
#define UMP_FEAT_STATS_SCOPED (1ULL << 8)

struct ump_version {
	__u32 abi_major; /* out */
	__u32 abi_minor; /* out */
	__u64 features; /* out: UMP_FEAT_* */
	__u32 nr_nodes; /* out: host NUMA nodes with memory */
	__u32 nr_devices; /* out: federated PCI devices */
	__u64 reserved[4]; /* must be zero */
};

/*
 * Regions a buffer can live in. Host nodes are numbered as the kernel numbers
 * NUMA nodes; P2P regions by the index of the federated device providing the
 * memory. Imported dma-bufs report UMP_REGION_IMPORTED.
 */
#define UMP_REGION_HOST(node) ((__u32)(node))
#define UMP_REGION_P2P(dev) (0x10000u | (__u32)(dev))
#define UMP_REGION_IMPORTED 0x20000u
#define UMP_REGION_IS_P2P(r) (((r)&0xffff0000u) == 0x10000u)

/* Buffers are zeroed and rounded up to whole pages. */
struct ump_alloc {
	__u64 size; /* in: bytes, > 0 */
	__u32 region; /* in: UMP_REGION_HOST(n) or UMP_REGION_P2P(i) */
	__u32 flags; /* in: must be zero */
	__u32 handle; /* out */
	__u32 pad; /* must be zero */
	__u64 reserved[2]; /* must be zero */
};

struct ump_handle_arg {
	__u32 handle; /* in */
	__u32 flags; /* in: must be zero */
	__u64 reserved; /* must be zero */
};

struct ump_buf_info {
	__u32 handle; /* in */
	__u32 region; /* out */
	__u64 size; /* out: bytes addressable by copies */
	__s32 numa_node; /* out: -1 when unknown (imported, P2P) */
	__u32 flags; /* in: must be zero */
	__u64 reserved[2]; /* must be zero */
};

/* Export a buffer as a dma-buf fd: mmap-able, importable by other drivers. */
#define UMP_EXPORT_CLOEXEC (1u << 0)
struct ump_export {
	__u32 handle; /* in */
	__u32 flags; /* in: UMP_EXPORT_* */
	__s32 fd; /* out */
	__u32 pad; /* must be zero */
	__u64 reserved[2]; /* must be zero */
};

/* Import a dma-buf fd exported by any driver (udmabuf, dma-heap, GPU, ...). */
struct ump_import {
	__s32 fd; /* in */
	__u32 flags; /* in: must be zero */
	__u32 handle; /* out */
	__u32 pad; /* must be zero */
	__u64 size; /* out */
	__u64 reserved[2]; /* must be zero */
};

/* One step of a chain. Ranges are checked when the step runs. */
struct ump_copy_desc {
	__u32 src; /* buffer handle */
	__u32 dst; /* buffer handle */
	__u64 src_offset;
	__u64 dst_offset;
	__u64 length; /* > 0 */
};

#define UMP_MAX_CHAIN_DESCS 4096

/*
 * What one open file may hold at once, so that no file pins unbounded kernel
 * memory or queues unbounded copying: chains submitted and not yet reaped by
 * WAIT (or completed, for io_uring), their descriptors, the bytes those
 * descriptors name, and buffer handles. Past a bound SUBMIT is -EAGAIN (reap
 * and retry), a chain alone over the byte bound -E2BIG, ALLOC and IMPORT
 * -EMFILE.
 */
#define UMP_MAX_CHAINS_PER_FILE 1024
#define UMP_MAX_QUEUED_DESCS 65536
#define UMP_MAX_QUEUED_BYTES (4ULL << 30)
#define UMP_MAX_HANDLES_PER_FILE 65536

/*
 * Submit a chain: descriptors run in order and the chain completes as a
 * whole. A failing descriptor stops its chain (status < 0, failed_index set);
 * other chains are unaffected. Descriptors not yet run when the file is
 * closed, the submitting process exits, or UMP_IOC_CANCEL names the chain
 * are cancelled (-ECANCELED); a thread of the process exiting does not.
 */
struct ump_submit {
	__u64 descs; /* in: pointer to struct ump_copy_desc[count] */
	__u32 count; /* in: 1..UMP_MAX_CHAIN_DESCS */
	__u32 flags; /* in: must be zero */
	__u64 user_data; /* in: returned by WAIT */
	__u64 chain; /* out: id for UMP_IOC_WAIT */
	__u64 reserved[2]; /* must be zero */
};

/* Engines a chain can run on (ump_wait.engine, /proc/ump/status). */
#define UMP_ENGINE_CPU 1u
#define UMP_ENGINE_DMA 2u

#define UMP_TIMEOUT_INFINITE (~0ULL)

/*
 * Wait for a chain and reap it. timeout_ns is an absolute CLOCK_MONOTONIC
 * time, so a wait interrupted by a signal restarts without drifting; a time
 * already past polls. -ETIME when it passes, with the chain left to wait on.
 */
struct ump_wait {
	__u64 chain; /* in */
	__u64 timeout_ns; /* in: absolute, or UMP_TIMEOUT_INFINITE */
	__s32 status; /* out: 0 or -errno of the failing descriptor */
	__u32 engine; /* out: UMP_ENGINE_* */
	__u64 user_data; /* out */
	__u64 bytes; /* out: bytes copied before completion or failure */
	__u32 failed_index; /* out: descriptor that failed, or count */
	__u32 flags; /* in: must be zero */
	__u64 reserved[2]; /* must be zero */
};

/*
 * Cancel a chain submitted through the ioctl: it stops before its next
 * descriptor (or 1 MiB slice of one) with -ECANCELED, and is reaped by WAIT
 * as usual. A chain already finished keeps its result. -ENOENT: no such
 * chain in this file.
 */
struct ump_cancel {
	__u64 chain; /* in */
	__u32 flags; /* in: must be zero */
	__u32 pad; /* must be zero */
	__u64 reserved[2]; /* must be zero */
};

/*
 * The pool's figures, for programs: UMP_IOC_STATS. /proc/ump/status shows
 * the same figures to people and is not an interface. regions points to
 * nr_regions entries to fill (0 and NULL to count them); nr_regions comes
 * back as the number there are: every host node, then the imported
 * region, then each federated device's P2P memory.
 */
struct ump_stats_region {
	__u32 region; /* UMP_REGION_* */
	__u32 buffers;
	__u64 capacity; /* bytes the pool may use there; 0: no cap */
	__u64 used; /* bytes */
};

struct ump_stats_engine {
	__u64 chains; /* finished */
	__u64 bytes;
	__u64 errors; /* chains that failed */
	__u64 staged; /* bytes bounced through host memory */
};

/*
 * Whose figures UMP_IOC_STATS gives (1.2): the whole pool's to a caller
 * with CAP_SYS_ADMIN, as /proc/ump/status, which shows every user's use of
 * the pool, is root's alone; to anyone else the calling file's (contexts 1,
 * its buffers, chains and bytes used per region, its engines' figures; the
 * regions' capacities, which are not anyone's secret, stay the pool's).
 * ump_stats.flags comes back with UMP_STATS_POOL set for the pool's.
 */
#define UMP_STATS_POOL (1u << 0)

struct ump_stats {
	__u32 flags; /* in: must be zero; out: UMP_STATS_POOL or 0 */
	__u32 nr_regions; /* in: entries at regions; out: entries there are */
	__u64 regions; /* in: pointer to struct ump_stats_region[], or 0 */
	__u32 contexts; /* out: open files */
	__u32 buffers; /* out: live buffers of every kind */
	__u32 chains; /* out: chains not yet freed */
	__u32 pad; /* must be zero */
	struct ump_stats_engine engine[2]; /* out: [UMP_ENGINE_* - 1] */
	__u64 reserved[4]; /* must be zero */
};

/* Federate a PCI device into the pool (CAP_SYS_ADMIN). */
struct ump_dev_add {
	__u32 pci_domain; /* in */
	__u32 pci_bdf; /* in: bus << 8 | devfn */
	__u32 flags; /* in: must be zero */
	__u32 index; /* out */
	__u64 reserved[2]; /* must be zero */
};

#define UMP_MAX_DEVICES 16

/* P2P classification of a device pair (ump_dev_info.p2p_class[]). */
#define UMP_P2P_SELF 0u /* the same device */
#define UMP_P2P_SWITCH 1u /* below a common PCIe switch */
#define UMP_P2P_HOST_BRIDGE 2u /* through a host bridge that allows it */
#define UMP_P2P_NOT_SUPPORTED 3u /* copies stage through host memory */
#define UMP_P2P_NO_KERNEL 4u /* kernel built without CONFIG_PCI_P2PDMA */

struct ump_dev_info {
	__u32 index; /* in */
	__u32 flags; /* in: must be zero */
	__u32 pci_domain; /* out */
	__u32 pci_bdf; /* out */
	__s32 numa_node; /* out */
	__u32 ats; /* out: 1 when ATS is enabled */
	__u32 p2pmem; /* out: 1 when it publishes P2P memory */
	__u32 nr_devices; /* out */
	__u64 p2pmem_used; /* out: bytes of it the pool has allocated */
	__s32 p2p_distance[UMP_MAX_DEVICES]; /* out: -1 when not supported */
	__u32 p2p_class[UMP_MAX_DEVICES]; /* out: UMP_P2P_* */
	__u64 reserved[4]; /* must be zero */
};

#define UMP_IOC_MAGIC 0xB9

#define UMP_IOC_VERSION _IOWR(UMP_IOC_MAGIC, 0x00, struct ump_version)
#define UMP_IOC_ALLOC _IOWR(UMP_IOC_MAGIC, 0x01, struct ump_alloc)
#define UMP_IOC_FREE _IOW(UMP_IOC_MAGIC, 0x02, struct ump_handle_arg)
#define UMP_IOC_BUF_INFO _IOWR(UMP_IOC_MAGIC, 0x03, struct ump_buf_info)
#define UMP_IOC_EXPORT _IOWR(UMP_IOC_MAGIC, 0x04, struct ump_export)
#define UMP_IOC_IMPORT _IOWR(UMP_IOC_MAGIC, 0x05, struct ump_import)
#define UMP_IOC_SUBMIT _IOWR(UMP_IOC_MAGIC, 0x06, struct ump_submit)
#define UMP_IOC_WAIT _IOWR(UMP_IOC_MAGIC, 0x07, struct ump_wait)
#define UMP_IOC_DEV_ADD _IOWR(UMP_IOC_MAGIC, 0x08, struct ump_dev_add)
#define UMP_IOC_DEV_INFO _IOWR(UMP_IOC_MAGIC, 0x09, struct ump_dev_info)
#define UMP_IOC_CANCEL _IOW(UMP_IOC_MAGIC, 0x0a, struct ump_cancel)
#define UMP_IOC_STATS _IOWR(UMP_IOC_MAGIC, 0x0b, struct ump_stats)

/*
 * io_uring: IORING_OP_URING_CMD on /dev/ump with cmd_op UMP_URING_SUBMIT and
 * this payload in the SQE's 16-byte command area (a normal 64-byte SQE is
 * enough). The CQE arrives when the chain completes: res is 0 or the failing
 * descriptor's -errno, user_data is the SQE's.
 */
#define UMP_URING_SUBMIT 0x01u
struct ump_uring_submit {
	__u64 descs; /* pointer to struct ump_copy_desc[count] */
	__u32 count; /* 1..UMP_MAX_CHAIN_DESCS */
	__u32 flags; /* must be zero */
};

#endif /* _UAPI_LINUX_UMP_H */
