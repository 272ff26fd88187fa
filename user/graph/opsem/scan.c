// SPDX-License-Identifier: MIT
/*
 * How a Scan walks its inputs and stacks its outputs, once, for the shape
 * rule and the kernel alike.  Opset 9 on: the first inputs are the loop's
 * state, the last num_scan_inputs are sliced along their scan axis (each
 * forward or in reverse), and the body's outputs after the state are
 * stacked along their output axis.  Opset 8: input 0 is sequence_lens (to
 * be omitted here), and axis 0 of every input and output is a batch whose
 * entries run one after the other, scanning along axis 1.
 */
#include <errno.h>
#include <string.h>

#include "common.h"
#include "heteroopt/opsem.h"

/* attribute name's ints, each in [-range, range), wrapped; n of them or none given */
static int scan_axes(const struct ho_node *n, const char *name, uint32_t count, const int *rank,
		     int extra, int64_t *out, struct ho_error *err)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	if (a && a->n != count)
		return ho_err(err, -EINVAL, "node '%s' (Scan): %s has %zu entries for %u", n->name,
			      name, a->n, count);
	for (uint32_t k = 0; k < count; k++) {
		int64_t v = a ? a->ints[k] : 0;
		int r = rank[k] + extra;

		if (rank[k] < 0) {
			out[k] = v;
			continue;
		}
		if (v < -r || v >= r)
			return ho_err(err, -EINVAL,
				      "node '%s' (Scan): %s[%u] = %lld is outside rank %d", n->name,
				      name, k, (long long)v, r);
		out[k] = v < 0 ? v + r : v;
	}
	return 0;
}

static int scan_dirs(const struct ho_node *n, const char *name, uint32_t count, bool *out,
		     struct ho_error *err)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	if (a && a->n != count)
		return ho_err(err, -EINVAL, "node '%s' (Scan): %s has %zu entries for %u", n->name,
			      name, a->n, count);
	for (uint32_t k = 0; k < count; k++) {
		if (a && a->ints[k] != 0 && a->ints[k] != 1)
			return ho_err(err, -EINVAL, "node '%s' (Scan): %s[%u] must be 0 or 1",
				      n->name, name, k);
		out[k] = a && a->ints[k];
	}
	return 0;
}

int ho_scan_parse(const struct ho_node *n, const struct ho_graph *body, const int *in_rank,
		  const int *out_rank, struct ho_scan *s, struct ho_error *err)
{
	const struct ho_attr *m = ho_node_attr(n, "num_scan_inputs");

	memset(s, 0, sizeof(*s));
	s->batched = n->opset < 9;
	s->first = s->batched ? 1 : 0;
	if (!m || m->i < 1 || n->n_inputs < s->first + (uint64_t)m->i)
		return ho_err(err, -EINVAL,
			      "node '%s' (Scan): needs num_scan_inputs between 1 and its %u inputs",
			      n->name, n->n_inputs);
	if (s->batched && n->n_inputs && n->inputs[0] >= 0)
		return ho_err(err, -EOPNOTSUPP,
			      "node '%s' (Scan): sequence_lens is not supported: every batch "
			      "entry scans the whole sequence",
			      n->name);
	s->n_in = (uint32_t)m->i;
	s->n_state = n->n_inputs - s->first - s->n_in;
	if (body->n_inputs != s->n_state + s->n_in || body->n_outputs < s->n_state ||
	    n->n_outputs != body->n_outputs)
		return ho_err(err, -EINVAL,
			      "node '%s' (Scan): its body has %u inputs and %u outputs for %u "
			      "state and %u scan inputs and %u outputs",
			      n->name, body->n_inputs, body->n_outputs, s->n_state, s->n_in,
			      n->n_outputs);
	s->n_out = body->n_outputs - s->n_state;
	if (s->n_state > HO_SCAN_MAX || s->n_in > HO_SCAN_MAX || s->n_out > HO_SCAN_MAX)
		return ho_err(err, -EOPNOTSUPP,
			      "node '%s' (Scan): more than %d scan inputs or outputs", n->name,
			      HO_SCAN_MAX);
	if (s->batched) {
		for (uint32_t k = 0; k < s->n_in; k++)
			s->in_axis[k] = 1;
		for (uint32_t k = 0; k < s->n_out; k++)
			s->out_axis[k] = 1;
		return scan_dirs(n, "directions", s->n_in, s->in_reverse, err);
	}
	return scan_axes(n, "scan_input_axes", s->n_in, in_rank + s->n_state, 0, s->in_axis, err) ||
		       scan_axes(n, "scan_output_axes", s->n_out, out_rank + s->n_state, 1,
				 s->out_axis, err) ||
		       scan_dirs(n, "scan_input_directions", s->n_in, s->in_reverse, err) ||
		       scan_dirs(n, "scan_output_directions", s->n_out, s->out_reverse, err)
		   ? err->code
		   : 0;
}
