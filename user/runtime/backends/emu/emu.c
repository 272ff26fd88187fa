// SPDX-License-Identifier: MIT
/*
 * The emu backend: an accelerator stand-in for tests.  The cpu backend's
 * oneDNN kernels in a memory region of its own, nothing read in place from
 * other devices, optionally paced by the executor to the schedule's times.
 * A real accelerator's backend (CUDA, XRT) fills the same ops table.
 *
 * emu-discrete: the same kernels over memory of their own, as a discrete
 * GPU's is: each region it is given is a private copy (filled once, as a
 * GPU's upload of the plan's constants), and tensors cross only by its read
 * and write, so an executor path that touches the host pages of such a
 * device gives a wrong answer here, not only on a lent GPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu.h"

static int emu_open_dev(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
			struct ho_error *err)
{
	int ret = ho_cpu_open(dev, threads, out, err);

	if (!ret)
		(*out)->emulated = true;
	return ret;
}

const struct ho_backend_ops ho_backend_emu = HO_ONEDNN_OPS("emu", emu_open_dev);

struct ho_dev_block {
	char *own; /* the device's memory standing for the host range */
};

static void disc_query(const struct ho_backend *b, struct ho_backend_info *info)
{
	ho_cpu_query(b, info);
	info->name = "emu-discrete (emulated, oneDNN, memory of its own)";
	info->host_memory = false;
	info->own_memory = true;
}

static int disc_wrap(struct ho_backend *b, void *host, size_t len, struct ho_dev_block **out,
		     struct ho_error *err)
{
	struct ho_dev_block *blk = calloc(1, sizeof(*blk));

	(void)b;
	*out = NULL;
	if (!blk || !(blk->own = aligned_alloc(64, (len + 63) / 64 * 64))) {
		free(blk);
		return ho_err(err, -ENOMEM, "emu-discrete: no %zu bytes of device memory", len);
	}
	memcpy(blk->own, host, len);
	*out = blk;
	return 0;
}

static void disc_unwrap(struct ho_backend *b, struct ho_dev_block *blk)
{
	(void)b;
	if (blk)
		free(blk->own);
	free(blk);
}

static int disc_read(struct ho_backend *b, struct ho_dev_block *blk, uint64_t off, void *dst,
		     size_t len, struct ho_error *err)
{
	(void)b, (void)err;
	memcpy(dst, blk->own + off, len);
	return 0;
}

static int disc_write(struct ho_backend *b, struct ho_dev_block *blk, uint64_t off, const void *src,
		      size_t len, struct ho_error *err)
{
	(void)b, (void)err;
	memcpy(blk->own + off, src, len);
	return 0;
}

/* Tensor t of the node being prepared, in this device's own memory. */
static void disc_see(struct ho_mem *own, const struct ho_mem *mem, int32_t t)
{
	if (t < 0)
		return;
	own[t] = mem[t];
	if (mem[t].block)
		own[t].host = mem[t].block->own + mem[t].off;
}

/* A node's tensors and those of the nodes folded into it: what a cpu prepare reads. */
static void disc_see_node(struct ho_mem *own, const struct ho_mem *mem, const struct ho_node *n)
{
	for (uint32_t k = 0; k < n->n_inputs; k++)
		disc_see(own, mem, n->inputs[k]);
	for (uint32_t k = 0; k < n->n_outputs; k++)
		disc_see(own, mem, n->outputs[k]);
	for (uint32_t k = 0; k < n->n_implicit; k++)
		disc_see(own, mem, n->implicit[k]);
}

/*
 * The cpu kernels, over the tensors' bytes in this device's own memory: only
 * the entries the node reads are filled, so planning stays linear in the graph.
 */
static int disc_prepare(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
			const struct ho_fusion *fuse, const struct ho_mem *mem,
			const uint8_t *channels_last, struct ho_kernel **out, struct ho_error *err)
{
	struct ho_mem *own = malloc((g->n_tensors + 1) * sizeof(*own));
	int ret;

	if (!own)
		return ho_err(err, -ENOMEM, "out of memory");
	disc_see_node(own, mem, &g->nodes[node]);
	if (fuse && fuse->bn >= 0)
		disc_see_node(own, mem, &g->nodes[fuse->bn]);
	if (fuse && fuse->sum >= 0)
		disc_see_node(own, mem, &g->nodes[fuse->sum]);
	if (fuse && fuse->post >= 0)
		disc_see_node(own, mem, &g->nodes[fuse->post]);
	ret = ho_cpu_prepare(b, g, node, fuse, own, channels_last, out, err);
	free(own);
	return ret;
}

const struct ho_backend_ops ho_backend_emu_discrete = {
    .name = "emu-discrete",
    .open = emu_open_dev,
    .close = ho_cpu_close,
    .query = disc_query,
    .runs = ho_cpu_runs,
    .layout = ho_cpu_layout,
    .wrap = disc_wrap,
    .unwrap = disc_unwrap,
    .read = disc_read,
    .write = disc_write,
    .prepare = disc_prepare,
    .thread_init = ho_cpu_thread_init,
    .launch = ho_cpu_launch,
    .kernel_memory = ho_cpu_kernel_memory,
    .precision = ho_cpu_precision,
    .takes_over = ho_cpu_takes_over,
    .kernel_free = ho_cpu_kernel_free,
    .sync = ho_cpu_sync,
};
