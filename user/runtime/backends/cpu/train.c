// SPDX-License-Identifier: MIT
/*
 * ONNX's training optimisers (ai.onnx.preview.training), as loops: one
 * step of Adagrad, Momentum (standard or Nesterov) or Adam over n float32
 * tensors, each element in double and rounded once, as the operators'
 * reference formulas read. Inputs R, T, then n each of X, G and the state;
 * outputs the new X and state (graph/shape/training.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

enum { OPT_ADAGRAD, OPT_MOMENTUM, OPT_NESTEROV, OPT_ADAM };

struct ho_optimizer_plan {
	int op;
	uint32_t n;
	double norm, norm_post, alpha, beta, epsilon, decay;
	const void *r, *t;
	int r_dt, t_dt;
	int64_t *numel;	  /* [n] */
	const float **in; /* [groups * n]: X, G, state */
	float **out;	  /* [(groups - 1) * n]: X, state */
};

static int ho_run_optimizer(const struct ho_kernel *k)
{
	const struct ho_optimizer_plan *p = (const struct ho_optimizer_plan *)k->fold;
	double r = ho_cpu_real(p->r, p->r_dt, 0);
	int64_t t = ho_cpu_int(p->t, p->t_dt, 0);
	uint32_t n = p->n;

	if (p->op == OPT_ADAGRAD)
		r /= 1 + (double)t * p->decay;
	else if (p->op == OPT_ADAM && t > 0) /* bias correction of the two momenta */
		r *= sqrt(1 - pow(p->beta, (double)t)) / (1 - pow(p->alpha, (double)t));
	for (uint32_t i = 0; i < n; i++) {
		const float *x = p->in[i], *g = p->in[n + i], *s = p->in[2 * n + i];
		float *xo = p->out[i], *so = p->out[n + i];

		for (int64_t e = 0; e < p->numel[i]; e++) {
			double gr = p->norm * x[e] + g[e], v, h;

			switch (p->op) {
			case OPT_ADAGRAD:
				h = s[e] + gr * gr;
				xo[e] = (float)(x[e] - r * gr / (sqrt(h) + p->epsilon));
				so[e] = (float)h;
				break;
			case OPT_MOMENTUM:
			case OPT_NESTEROV:
				/* the gradient's weight is 1 at the first step */
				v = p->alpha * s[e] + (t > 0 ? p->beta : 1) * gr;
				xo[e] =
				    (float)(x[e] -
					    r * (p->op == OPT_NESTEROV ? gr + p->alpha * v : v));
				so[e] = (float)v;
				break;
			default: /* Adam: state V then H */
				v = p->alpha * s[e] + (1 - p->alpha) * gr;
				h = p->beta * p->in[3 * n + i][e] + (1 - p->beta) * gr * gr;
				xo[e] = (float)((1 - p->norm_post) *
						(x[e] - r * v / (sqrt(h) + p->epsilon)));
				so[e] = (float)v;
				p->out[2 * n + i][e] = (float)h;
			}
		}
	}
	return 0;
}

static bool ho_attr_real(const struct ho_node *n, const char *name, double def, double *v)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	if (!a) {
		*v = def;
		return !isnan(def);
	}
	*v = a->type == HO_ATTR_FLOAT ? a->f : a->type == HO_ATTR_INT ? (double)a->i : NAN;
	return !isnan(*v);
}

int ho_cpu_prep_optimizer(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_attr *mode = ho_node_attr(n, "mode");
	const struct ho_tensor *r = ho_node_input(g, n, 0), *t = ho_node_input(g, n, 1);
	bool adam = !strcmp(n->op_type, "Adam"), momentum = !strcmp(n->op_type, "Momentum");
	uint32_t groups = (uint32_t)ho_op_optimizer_groups(n->op_type),
		 nt = (n->n_inputs - 2) / groups;
	struct ho_optimizer_plan *p;
	bool ok;

	if (!r || !t || (r->dtype != HO_DT_FLOAT && r->dtype != HO_DT_DOUBLE) ||
	    (t->dtype != HO_DT_INT64 && t->dtype != HO_DT_INT32))
		return ho_cpu_unsupported(err, n, "needs a real R and an integer T");
	for (uint32_t i = 2; i < n->n_inputs; i++)
		if (!ho_node_input(g, n, i) || ho_node_input(g, n, i)->dtype != HO_DT_FLOAT)
			return ho_cpu_unsupported(err, n, "needs float32 X, G and state");
	for (uint32_t o = 0; o < n->n_outputs; o++)
		if (n->outputs[o] < 0)
			return ho_cpu_unsupported(err, n, "needs every output named");
	if (!(p = calloc(1, sizeof(*p) + nt * sizeof(int64_t) +
				(size_t)(2 * groups - 1) * nt * sizeof(void *))))
		return ho_err(err, -ENOMEM, "out of memory");
	k->fold = (float *)p; /* freed with the kernel */
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_optimizer;
	p->numel = (int64_t *)(p + 1);
	p->in = (const float **)(p->numel + nt);
	p->out = (float **)(p->in + groups * nt);
	p->n = nt;
	p->r = buf[n->inputs[0]];
	p->t = buf[n->inputs[1]];
	p->r_dt = r->dtype;
	p->t_dt = t->dtype;
	for (uint32_t i = 0; i < nt; i++)
		p->numel[i] = ho_shape_numel(&ho_node_input(g, n, 2 + i)->shape);
	for (uint32_t i = 0; i < groups * nt; i++)
		p->in[i] = buf[n->inputs[2 + i]];
	for (uint32_t o = 0; o < n->n_outputs; o++)
		p->out[o] = buf[n->outputs[o]];
	ok = ho_attr_real(n, "norm_coefficient", momentum ? NAN : 0, &p->norm);
	if (momentum) {
		/* alpha, beta, mode and norm_coefficient have no defaults */
		const char *m = mode && mode->type == HO_ATTR_STRING ? mode->s : "";

		ok = ok && ho_attr_real(n, "alpha", NAN, &p->alpha) &&
		     ho_attr_real(n, "beta", NAN, &p->beta);
		p->op = !strcmp(m, "nesterov") ? OPT_NESTEROV : OPT_MOMENTUM;
		if (ok && strcmp(m, "standard") && strcmp(m, "nesterov"))
			return ho_cpu_unsupported(err, n, "needs mode standard or nesterov");
	} else if (adam) {
		p->op = OPT_ADAM;
		ok = ok && ho_attr_real(n, "alpha", 0.9, &p->alpha) &&
		     ho_attr_real(n, "beta", 0.999, &p->beta) &&
		     ho_attr_real(n, "epsilon", 1e-6, &p->epsilon) &&
		     ho_attr_real(n, "norm_coefficient_post", 0, &p->norm_post);
	} else {
		p->op = OPT_ADAGRAD;
		ok = ok && ho_attr_real(n, "decay_factor", 0, &p->decay) &&
		     ho_attr_real(n, "epsilon", 1e-6, &p->epsilon);
	}
	if (!ok)
		return ho_cpu_unsupported(err, n,
					  "needs its real attributes (Momentum: alpha, "
					  "beta, mode and norm_coefficient)");
	return 0;
}
