// SPDX-License-Identifier: MIT
/*
 * Sequences, held dense as graph/shape/sequence.c plans them: a sequence is
 * its members stacked on a leading axis, so each operator is block copies
 * of whole members (positions read at run time, checked against the count).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

enum { SQ_EMPTY, SQ_CONSTRUCT, SQ_INSERT, SQ_ERASE, SQ_AT, SQ_LENGTH, SQ_CONCAT, SQ_SPLIT };

struct ho_seq_plan {
	int op, pos_dt;
	const char *s, *t; /* the sequence (SplitToSequence: the tensor), the member to insert */
	const void *pos;   /* NULL: the default position */
	char *y;
	int64_t n;	/* members of s (SplitToSequence, ConcatFromSequence: of the sequence) */
	int64_t member; /* bytes per member */
	int64_t outer, chunk, stride; /* concat/split: outer runs of chunk bytes, the whole's row */
	uint32_t n_in;
	const char *in[]; /* SequenceConstruct's members */
};

/* The position input (negative: from the end of the n members) below limit, or -1. */
static int64_t seq_pos(const struct ho_seq_plan *p, int64_t def, int64_t limit)
{
	int64_t v = p->pos ? ho_cpu_int(p->pos, p->pos_dt, 0) : def;

	v += v < 0 ? p->n : 0;
	return v >= 0 && v < limit ? v : -1;
}

static int ho_run_sequence(const struct ho_kernel *k)
{
	const struct ho_seq_plan *p = (const struct ho_seq_plan *)k->fold;
	int64_t m = p->member, at;

	switch (p->op) {
	case SQ_CONSTRUCT:
		for (uint32_t i = 0; i < p->n_in; i++)
			memcpy(p->y + i * m, p->in[i], (size_t)m);
		return 0;
	case SQ_INSERT:
		if ((at = seq_pos(p, p->n, p->n + 1)) < 0)
			return -EINVAL;
		memmove(p->y, p->s, (size_t)(at * m));
		memcpy(p->y + at * m, p->t, (size_t)m);
		memcpy(p->y + (at + 1) * m, p->s + at * m, (size_t)((p->n - at) * m));
		return 0;
	case SQ_ERASE:
		if ((at = seq_pos(p, -1, p->n)) < 0)
			return -EINVAL;
		memmove(p->y, p->s, (size_t)(at * m));
		memcpy(p->y + at * m, p->s + (at + 1) * m, (size_t)((p->n - at - 1) * m));
		return 0;
	case SQ_AT:
		if ((at = seq_pos(p, -1, p->n)) < 0 || !p->pos)
			return -EINVAL;
		memcpy(p->y, p->s + at * m, (size_t)m);
		return 0;
	case SQ_LENGTH:
		*(int64_t *)p->y = p->n;
		return 0;
	case SQ_CONCAT: /* member i's run o to the output's row o, i-th */
		for (int64_t o = 0; o < p->outer; o++)
			for (int64_t i = 0; i < p->n; i++)
				memcpy(p->y + (o * p->n + i) * p->chunk,
				       p->s + i * m + o * p->chunk, (size_t)p->chunk);
		return 0;
	case SQ_SPLIT: /* the input's row o, part i, to member i's run o */
		for (int64_t i = 0; i < p->n; i++)
			for (int64_t o = 0; o < p->outer; o++)
				memcpy(p->y + i * m + o * p->chunk,
				       p->s + o * p->stride + i * p->chunk, (size_t)p->chunk);
		return 0;
	default:
		return 0;
	}
}

int ho_cpu_prep_sequence(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			 struct ho_kernel *k, struct ho_error *err)
{
	static const char *const ops[] = {
	    "SequenceEmpty", "SequenceConstruct", "SequenceInsert",	"SequenceErase",
	    "SequenceAt",    "SequenceLength",	  "ConcatFromSequence", "SplitToSequence"};
	const struct ho_tensor *s = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	struct ho_seq_plan *p;
	int op = 0;

	while (op < 8 && strcmp(n->op_type, ops[op]))
		op++;
	if (!(p = calloc(1, sizeof(*p) + (n->n_inputs + 1) * sizeof(char *))))
		return ho_err(err, -ENOMEM, "out of memory");
	k->fold = (float *)p; /* freed with the kernel */
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_sequence;
	p->op = op;
	p->y = buf[n->outputs[0]];
	if (op == SQ_EMPTY)
		return 0;
	p->s = buf[n->inputs[0]];
	p->n = s->shape.rank > 0 ? s->shape.dim[0] : 0;
	p->member = p->n ? (int64_t)s->bytes / p->n : 0;
	switch (op) {
	case SQ_CONSTRUCT:
		p->n_in = n->n_inputs;
		p->member = (int64_t)s->bytes;
		for (uint32_t i = 0; i < n->n_inputs; i++)
			p->in[i] = buf[n->inputs[i]];
		break;
	case SQ_INSERT:
	case SQ_ERASE:
	case SQ_AT: {
		const struct ho_tensor *pt = ho_node_input(g, n, op == SQ_INSERT ? 2 : 1);

		if (op == SQ_INSERT) {
			p->t = buf[n->inputs[1]];
			p->member = (int64_t)ho_node_input(g, n, 1)->bytes;
		}
		if (pt && (ho_shape_numel(&pt->shape) != 1 ||
			   (pt->dtype != HO_DT_INT64 && pt->dtype != HO_DT_INT32)))
			return ho_cpu_unsupported(err, n, "needs a scalar int32 or int64 position");
		p->pos = pt ? buf[n->inputs[op == SQ_INSERT ? 2 : 1]] : NULL;
		p->pos_dt = pt ? pt->dtype : 0;
		break;
	}
	case SQ_CONCAT: {
		/* members [outer, chunk]: the axis and what follows it (new_axis: from it on) */
		int64_t axis = ho_node_attr_i(n, "axis", 0), na = ho_node_attr_i(n, "new_axis", 0);
		int r = s->shape.rank - 1;

		axis += axis < 0 ? r + na : 0;
		p->outer = 1;
		for (int i = 1; i <= axis && i <= r; i++)
			p->outer *= s->shape.dim[i];
		p->chunk = p->outer ? p->member / p->outer : 0;
		break;
	}
	case SQ_SPLIT: {
		/* the input [outer, D, inner] into parts [outer, D / parts, inner] */
		int64_t axis = ho_node_attr_i(n, "axis", 0), d;

		axis += axis < 0 ? s->shape.rank : 0;
		p->n = y->shape.dim[0];
		p->member = p->n ? (int64_t)y->bytes / p->n : 0;
		p->outer = 1;
		for (int i = 0; i < axis; i++)
			p->outer *= s->shape.dim[i];
		d = s->shape.dim[axis];
		p->stride = p->outer ? (int64_t)s->bytes / p->outer : 0;
		p->chunk = d ? p->stride / d * (d / (p->n ? p->n : 1)) : 0;
		break;
	}
	default:
		break;
	}
	return 0;
}
