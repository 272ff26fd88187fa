// SPDX-License-Identifier: MIT
/*
 * The cpu backend: ONNX operators on oneDNN's C API (Debian's libdnnl, 2.x).
 *
 * Activations stay in plain row-major layout (NCHW), so every kernel reads
 * what the previous one wrote with no reorder between them; convolution
 * weights are reordered once, at plan time, into the layout oneDNN's kernel
 * asks for.  Gemm and MatMul go through dnnl_sgemm.  Operators that only
 * relabel a buffer (Reshape, Flatten, ...) cost nothing: the executor gives
 * their output the input's buffer.
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "heteroopt/sched.h"

/* How the CPU backend treats layouts is the operator table's layout class. */
enum ho_be_layout ho_cpu_layout(const char *op, bool *binary)
{
	const struct ho_op_info *oi = ho_op_info(op);

	*binary = oi && (oi->flags & HO_OP_BINARY);
	if (!oi || oi->layout == HO_LAYOUT_PLAIN)
		return HO_BE_PLAIN;
	return oi->layout == HO_LAYOUT_SAME ? HO_BE_SAME_LAYOUT : HO_BE_ANY_LAYOUT;
}

bool ho_cpu_runs(const char *op)
{
	return !strcmp(op, "Constant") || ho_op_is_view(op) || ho_cpu_kernel_reg(op);
}

/* A worker's OpenMP team is its device's size: two devices' workers never each
 * start one for all cores. */
void ho_cpu_thread_init(struct ho_backend *c)
{
	if (c->threads > 0)
		omp_set_num_threads(c->threads);
}

/*
 * bfloat16 where the CPU computes it natively (AVX512-BF16, AMX), as oneDNN finds it
 * (ONEDNN_MAX_CPU_ISA may hold it back): elsewhere oneDNN emulates it, slower than float32.
 */
static int ho_cpu_bf16_native(dnnl_cpu_isa_t isa)
{
	return isa == dnnl_cpu_isa_avx512_core_bf16 || isa == dnnl_cpu_isa_avx512_core_amx
		   ? 0
		   : -EOPNOTSUPP;
}

static int ho_cpu_precision_open(struct ho_backend *c, const struct ho_rt_device *dev,
				 struct ho_error *err)
{
	const char *p = dev ? dev->precision : "";
	dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();

	if (!*p || !strcmp(p, ho_rt_precisions[0]))
		return 0;
	if (!strcmp(p, "int8")) {
		if (!ho_cpu_int8_native(isa))
			return ho_err(err, -EOPNOTSUPP,
				      "device %s: int8 needs a CPU with AVX512-VNNI, AVX-VNNI or "
				      "AMX, and oneDNN finds none here%s",
				      dev->name,
				      getenv("ONEDNN_MAX_CPU_ISA") ? " (ONEDNN_MAX_CPU_ISA is set)"
								   : "");
		return 0;
	}
	if (strcmp(p, "bf16"))
		return ho_err(err, -EINVAL,
			      "device %s: the cpu backend computes in fp32, bf16 or int8, not %s",
			      dev->name, p);
	if (ho_cpu_bf16_native(isa))
		return ho_err(err, -EOPNOTSUPP,
			      "device %s: bf16 needs a CPU with AVX512-BF16 or AMX, and oneDNN "
			      "finds neither here%s",
			      dev->name,
			      getenv("ONEDNN_MAX_CPU_ISA") ? " (ONEDNN_MAX_CPU_ISA is set)" : "");
	c->bf16 = true;
	return 0;
}

int ho_cpu_open(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
		struct ho_error *err)
{
	struct ho_backend *c = calloc(1, sizeof(*c));
	int ret;

	*out = NULL;
	if (!c)
		return ho_err(err, -ENOMEM, "out of memory");
	if ((ret = ho_cpu_precision_open(c, dev, err))) {
		free(c);
		return ret;
	}
	c->threads = threads;
	if (threads > 0)
		omp_set_num_threads(threads);
	if (dnnl_engine_create(&c->eng, dnnl_cpu, 0) != dnnl_success ||
	    dnnl_stream_create(&c->stream, c->eng, dnnl_stream_default_flags) != dnnl_success ||
	    dnnl_primitive_attr_create(&c->attr) != dnnl_success ||
	    dnnl_primitive_attr_set_scratchpad_mode(c->attr, dnnl_scratchpad_mode_user) !=
		dnnl_success) {
		ho_cpu_close(c);
		return ho_err(err, -ENODEV, "oneDNN: cannot create a CPU engine");
	}
	*out = c;
	return 0;
}

void ho_cpu_close(struct ho_backend *c)
{
	if (!c)
		return;
	if (c->attr)
		dnnl_primitive_attr_destroy(c->attr);
	if (c->stream)
		dnnl_stream_destroy(c->stream);
	if (c->eng)
		dnnl_engine_destroy(c->eng);
	free(c->ws);
	free(c);
}

void ho_cpu_kernel_memory(const struct ho_kernel *k, struct ho_kernel_memory *m)
{
	m->held = k->held_bytes;
	m->scratch = k->temp_bytes;
	m->packed = m->packed_sig = 0;
	if (k->weights)
		ho_cpu_packed_size(k->weights, &m->packed, &m->packed_sig);
}

void ho_cpu_kernel_free(struct ho_kernel *k)
{
	if (!k)
		return;
	if (k->prim)
		dnnl_primitive_destroy(k->prim);
	ho_cpu_packed_put(k->weights);
	free(k->fold);
	ho_cpu_int8_free(k->int8);
	free(k->move);
	free(k->rnn);
	free(k->quant);
	free(k->attn);
	free(k->rotary);
	free(k->einsum);
	ho_cpu_text_free(k->text);
	if (k->pre)
		dnnl_primitive_destroy(k->pre);
	if (k->fill)
		dnnl_primitive_destroy(k->fill);
	if (k->post)
		dnnl_primitive_destroy(k->post);
	if (k->then)
		dnnl_primitive_destroy(k->then);
	for (int i = 0; i < k->n_owned; i++)
		dnnl_memory_destroy(k->owned[i]);
	for (int i = 0; i < HO_MAX_RANK; i++) {
		free(k->map[i]);
		free(k->resample_w[i]);
	}
	free(k);
}

static int cpu_prepare(struct ho_backend *c, const struct ho_graph *g, uint32_t node,
		       const struct ho_fusion *fuse, void *const *buf, struct ho_kernel **out,
		       struct ho_error *err)
{
	const struct ho_node *n = &g->nodes[node];
	const char *op = n->op_type;
	struct ho_kernel *k;
	int ret;

	*out = NULL;
	if (*n->domain && !ho_op_info_in(n->domain, op))
		return ho_cpu_unsupported(err, n,
					  "runs the default ONNX domain and the training "
					  "optimisers only");
	if (!strcmp(op, "Constant"))
		return 0;
	/* an output beyond those its kernel writes (a view: its first), when read, is refused */
	const struct ho_cpu_kernel_reg *reg = ho_cpu_kernel_for(g, n);
	uint32_t written = reg && reg->outputs ? reg->outputs : 1;
	int32_t first = -1; /* the first output asked for: a recurrent node may skip Y */

	for (uint32_t o = 0; o < n->n_outputs && o < written && first < 0; o++)
		first = n->outputs[o];
	if (first < 0 || (n->outputs[0] < 0 && written < 2))
		return ho_cpu_unsupported(err, n, "needs the first output");

	for (uint32_t o = written; o < n->n_outputs; o++) {
		const struct ho_tensor *t = n->outputs[o] >= 0 ? &g->tensors[n->outputs[o]] : NULL;

		if (t && (t->n_consumers || (t->flags & HO_T_OUTPUT))) {
			char why[200];

			snprintf(why, sizeof(why),
				 "computes its first %u output(s) only, and output %u ('%s') is "
				 "used",
				 written, o, t->name);
			return ho_cpu_unsupported(err, n, why);
		}
	}
	/* Dropout: the identity in inference, or in training at a ratio of 0, which the data
	 * must say it is (ho_node_is_view) */
	if (!strcmp(op, "Dropout") && !ho_node_is_view(g, n))
		return ho_cpu_unsupported(err, n,
					  "runs in inference mode only (training_mode "
					  "must be a constant false, or the ratio a constant 0)");
	/* a view writes nothing, but for outputs beyond its first (Dropout's mask) */
	bool more = false;

	for (uint32_t o = 1; o < n->n_outputs; o++)
		more |= n->outputs[o] >= 0;
	if (ho_node_is_view(g, n) && !more)
		return 0;
	/* kernels check their own types too; this one makes a missed check a refusal */
	if (reg && !reg->any_type && g->tensors[first].dtype != HO_DT_FLOAT)
		return ho_cpu_unsupported(err, n, "computes float32 outputs only");
	/* a string is a pointer: only kernels that know it may touch one */
	for (uint32_t i = 0; i < n->n_inputs + n->n_outputs && reg && !reg->strings; i++) {
		int32_t t = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];

		if (t >= 0 && g->tensors[t].dtype == HO_DT_STRING)
			return ho_cpu_unsupported(err, n, "does not take string tensors");
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return ho_err(err, -ENOMEM, "out of memory");
	k->name = n->name;
	k->op = op;
	k->want_bf16 = fuse && fuse->precision && !strcmp(fuse->precision, "bf16");
	if (k->want_bf16 && !c->bf16 && (ret = ho_cpu_bf16_native(dnnl_get_effective_cpu_isa()))) {
		ho_cpu_kernel_free(k);
		return ho_err(err, ret,
			      "node '%s': bf16 needs a CPU with AVX512-BF16 or AMX, and "
			      "oneDNN finds neither here",
			      n->name);
	}

	if (fuse && fuse->precision && !strcmp(fuse->precision, "int8")) {
		if (!ho_cpu_int8_native(dnnl_get_effective_cpu_isa())) {
			ho_cpu_kernel_free(k);
			return ho_err(err, -EOPNOTSUPP,
				      "node '%s': int8 needs a CPU with AVX512-VNNI, AVX-VNNI or "
				      "AMX, and oneDNN finds none here",
				      n->name);
		}
		if (ho_cpu_int8_new(k, fuse->range)) {
			ho_cpu_kernel_free(k);
			return ho_err(err, -ENOMEM, "out of memory");
		}
	}
	ret = reg ? reg->prepare(c, g, n, fuse, buf, k, err)
		  : ho_cpu_unsupported(err, n, "has no kernel for this operator yet");
	if (ret) {
		ho_cpu_kernel_free(k);
		return ret;
	}
	*out = k;
	return 0;
}

/*
 * The kernels address host memory: each tensor's host address.  oneDNN sizes
 * a kernel's work split by the threads available when it is made, so it is
 * made for this device's threads.
 */
int ho_cpu_prepare(struct ho_backend *c, const struct ho_graph *g, uint32_t node,
		   const struct ho_fusion *fuse, const struct ho_mem *mem,
		   const uint8_t *channels_last, struct ho_kernel **out, struct ho_error *err)
{
	void **buf = malloc((g->n_tensors + 1) * sizeof(void *));
	int was = omp_get_max_threads(), ret;

	if (!buf)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t t = 0; t < g->n_tensors; t++)
		buf[t] = mem[t].host;
	c->channels_last = channels_last;
	if (c->threads > 0)
		omp_set_num_threads(c->threads);
	ret = cpu_prepare(c, g, node, fuse, buf, out, err);
	omp_set_num_threads(was);
	free(buf);
	return ret;
}

int ho_cpu_launch(struct ho_backend *c, struct ho_kernel *k, struct ho_error *err)
{
	switch (k->kind) {
	case HO_K_GEMM:
		if (ho_cpu_run_gemm(k))
			return ho_err(err, -EIO, "node '%s' (%s): dnnl_sgemm failed", k->name,
				      k->op);
		return 0;
	case HO_K_INDEX_MAP:
		ho_cpu_run_index_map(k);
		return 0;
	case HO_K_UNARY:
		ho_cpu_run_unary(k);
		return 0;
	case HO_K_HARDMAX:
		ho_cpu_run_hardmax(k);
		return 0;
	case HO_K_LAYER_NORM:
		ho_cpu_run_layer_norm(k);
		return 0;
	case HO_K_LOOP: {
		int ret = ho_cpu_run_loop(k);

		if (ret == -ERANGE) /* a data-dependent extent, planned for other data */
			return ho_err(err, ret,
				      "node '%s' (%s): the data gives an output of another extent "
				      "than the plan's: plan for these inputs' values",
				      k->name, k->op);
		if (ret == -EDOM)
			return ho_err(err, ret, "node '%s' (%s): a string is not a number", k->name,
				      k->op);
		if (ret == -ENOMEM)
			return ho_err(err, ret, "node '%s' (%s): out of memory", k->name, k->op);
		if (ret)
			return ho_err(err, -EINVAL, "node '%s' (%s): an index is out of range",
				      k->name, k->op);
		return 0;
	}
	case HO_K_GATHER:
		if (ho_cpu_run_gather(k))
			return ho_err(err, -EINVAL, "node '%s' (Gather): an index is out of range",
				      k->name);
		return 0;
	default:
		if (ho_cpu_execute(c, k))
			return ho_err(err, -EIO, "node '%s' (%s): oneDNN execution failed", k->name,
				      k->op);
		return 0;
	}
}

static int cpu_open_dev(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
			struct ho_error *err)
{
	return ho_cpu_open(dev, threads, out, err);
}

const char *ho_cpu_precision(const struct ho_kernel *k)
{
	return k->precision;
}

void ho_cpu_query(const struct ho_backend *c, struct ho_backend_info *info)
{
	info->name = c->emulated ? "emu (emulated, oneDNN)" : "cpu (oneDNN)";
	info->emulated = c->emulated;
	/* An emulated accelerator owns its memory: nothing of it is read in place. */
	info->host_memory = !c->emulated;
	info->own_memory = false;
}

int ho_cpu_sync(struct ho_backend *c)
{
	return dnnl_stream_wait(c->stream) == dnnl_success ? 0 : -EIO;
}

const struct ho_backend_ops ho_backend_cpu = HO_ONEDNN_OPS("cpu", cpu_open_dev);
