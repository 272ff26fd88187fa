// SPDX-License-Identifier: MIT
/*
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, as loops: the
 * losses a model exported for training evaluates.  Scores [N, C, d...],
 * integer targets [N, d...], optional class weights [C]; a target equal
 * to ignore_index adds nothing and weighs nothing; "mean" divides by the
 * weights of the targets counted.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

enum { LOSS_NONE, LOSS_SUM, LOSS_MEAN };

static int ho_run_loss(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *xs = &t->in_shape[0];
	int64_t nb = xs->dim[0], nc = xs->dim[1], nd = 1;
	const float *x = t->in[0], *w = t->in[2];
	float *lp = t->out2 ? t->out2 : k->fold, *y = t->out;
	double sum = 0, wsum = 0;

	for (int a = 2; a < xs->rank; a++)
		nd *= xs->dim[a];
	if (t->softmax) /* log-softmax over the classes of each (n, d) */
		for (int64_t n = 0; n < nb; n++)
			for (int64_t d = 0; d < nd; d++) {
				const float *xr = x + n * nc * nd + d;
				float *lr = lp + n * nc * nd + d;
				double m = -INFINITY, s = 0;

				for (int64_t c = 0; c < nc; c++)
					m = fmax(m, xr[c * nd]);
				for (int64_t c = 0; c < nc; c++)
					s += exp(xr[c * nd] - m);
				for (int64_t c = 0; c < nc; c++)
					lr[c * nd] = (float)(xr[c * nd] - m - log(s));
			}
	else
		lp = (float *)x;
	for (int64_t n = 0; n < nb; n++)
		for (int64_t d = 0; d < nd; d++) {
			int64_t c = ho_cpu_index(t->in[1], t->in_dt[1], n * nd + d);
			double l = 0, wc = 0;

			if (!(t->has_ignore && c == t->ignore)) {
				if (c < 0 || c >= nc)
					return -EINVAL; /* a target from the data: checked at run
							   time */
				wc = w ? w[c] : 1.0;
				l = -lp[(n * nc + c) * nd + d] * wc;
			}
			if (t->reduction == LOSS_NONE)
				y[n * nd + d] = (float)l;
			sum += l;
			wsum += wc;
		}
	if (t->reduction == LOSS_SUM)
		y[0] = (float)sum;
	else if (t->reduction == LOSS_MEAN)
		y[0] = (float)(wsum != 0 ? sum / wsum : 0); /* every target ignored: 0 */
	return 0;
}

int ho_cpu_prep_loss(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		     struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *x = ho_node_input(g, n, 0), *tg = ho_node_input(g, n, 1),
			       *w = ho_node_input(g, n, 2);
	const struct ho_attr *red = ho_node_attr(n, "reduction"),
			     *ii = ho_node_attr(n, "ignore_index");
	const char *r = red && red->type == HO_ATTR_STRING ? red->s : "mean";

	if (!x || !tg || x->dtype != HO_DT_FLOAT || x->shape.rank < 2 ||
	    (tg->dtype != HO_DT_INT64 && tg->dtype != HO_DT_INT32) ||
	    (w && (w->dtype != HO_DT_FLOAT || ho_shape_numel(&w->shape) != x->shape.dim[1])))
		return ho_cpu_unsupported(
		    err, n,
		    "needs float32 scores [N, C, ...], integer targets, float32 weights [C]");
	if (ho_shape_numel(&tg->shape) * x->shape.dim[1] != ho_shape_numel(&x->shape))
		return ho_cpu_unsupported(err, n, "needs a target per score of one class");
	k->kind = HO_K_LOOP;
	t->run = ho_run_loss;
	t->softmax = !strcmp(n->op_type, "SoftmaxCrossEntropyLoss");
	t->reduction = !strcmp(r, "none") ? LOSS_NONE : !strcmp(r, "sum") ? LOSS_SUM : LOSS_MEAN;
	if (strcmp(r, "none") && strcmp(r, "sum") && strcmp(r, "mean"))
		return ho_cpu_unsupported(err, n, "reduces by none, sum or mean only");
	t->has_ignore = ii && ii->type == HO_ATTR_INT;
	t->ignore = t->has_ignore ? ii->i : 0;
	t->in[0] = buf[n->inputs[0]];
	t->in[1] = buf[n->inputs[1]];
	t->in[2] = w ? buf[n->inputs[2]] : NULL;
	t->in_dt[1] = tg->dtype;
	t->in_shape[0] = x->shape;
	t->out = buf[n->outputs[0]];
	t->out2 = n->n_outputs > 1 && n->outputs[1] >= 0 ? buf[n->outputs[1]] : NULL;
	if (t->softmax && !t->out2 &&
	    !(k->fold = malloc((size_t)ho_shape_numel(&x->shape) * sizeof(float))))
		return ho_err(err, -ENOMEM, "out of memory");
	return 0;
}
