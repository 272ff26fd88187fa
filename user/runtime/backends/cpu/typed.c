// SPDX-License-Identifier: MIT
/*
 * Element-wise kernels over every numeric element type, as plain loops: the
 * operators oneDNN has no primitive for at all (comparisons, logic, Mod,
 * BitShift, Where, Cast) and the arithmetic ones on types its binary primitive
 * does not take (int64 and the rest).  axis.c has those along an axis.
 *
 * Each element is read as a number of its type's domain (number.h), computed
 * on there, and written back in the output's type.  Integer division by zero
 * gives 0 rather than a trap.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "number.h"

/* ---- element-wise over broadcast inputs ---- */

static const struct {
	const char *op;
	enum ho_tw_op tw;
} ho_typed_ops[] = {
    {"Add", TW_ADD},	       {"Sub", TW_SUB},		{"Mul", TW_MUL},
    {"Div", TW_DIV},	       {"Min", TW_MIN},		{"Max", TW_MAX},
    {"Mod", TW_MOD},	       {"Pow", TW_POW},		{"Equal", TW_EQ},
    {"Less", TW_LT},	       {"LessOrEqual", TW_LE},	{"Greater", TW_GT},
    {"GreaterOrEqual", TW_GE}, {"And", TW_AND},		{"Or", TW_OR},
    {"Xor", TW_XOR},	       {"BitShift", TW_SHL},	{"Where", TW_WHERE},
    {"Cast", TW_CAST},	       {"CastLike", TW_CAST},	{"Sum", TW_ADD},
    {"Mean", TW_MEAN},	       {"PRelu", TW_PRELU},	{"Not", TW_NOT},
    {"IsNaN", TW_ISNAN},       {"IsInf", TW_ISINF},	{"BitwiseAnd", TW_BAND},
    {"BitwiseOr", TW_BOR},     {"BitwiseXor", TW_BXOR}, {"BitwiseNot", TW_BNOT},
};

static int ho_typed_find(const char *op)
{
	for (size_t i = 0; i < sizeof(ho_typed_ops) / sizeof(ho_typed_ops[0]); i++)
		if (!strcmp(ho_typed_ops[i].op, op))
			return (int)ho_typed_ops[i].tw;
	return -1;
}

/* The strides of s (lifted to rank r) over an output of that rank: 0 along broadcast axes. */
static void ho_tw_strides(const struct ho_shape *s, const struct ho_shape *y, int64_t *st)
{
	int64_t acc = 1;

	for (int a = y->rank - 1; a >= 0; a--) {
		int sa = a - (y->rank - s->rank);
		int64_t d = sa >= 0 ? s->dim[sa] : 1;

		st[a] = d == 1 ? 0 : acc;
		acc *= d;
	}
}

/*
 * A float32 comparison whose first operand is read in order and whose second is
 * read in order or is one scalar: a loop of its own.  retinanet's class scores
 * against their threshold (8.2 M of them) took 412 ms an element at a time.
 */
static bool ho_run_compare_f32(const struct ho_typed *t, int64_t n)
{
	int r = t->out_shape.rank;
	bool in_order[2] = {true, true}, scalar = true;
	int64_t want = 1;

	if (t->n_in != 2 || t->in_dt[0] != HO_DT_FLOAT || t->in_dt[1] != HO_DT_FLOAT ||
	    t->out_dt != HO_DT_BOOL || t->op < TW_EQ || t->op > TW_GE)
		return false;
	for (int ax = r - 1; ax >= 0; ax--) {
		for (int j = 0; j < 2; j++)
			in_order[j] &= t->out_shape.dim[ax] == 1 || t->stride[j][ax] == want;
		scalar &= t->out_shape.dim[ax] == 1 || t->stride[1][ax] == 0;
		want *= t->out_shape.dim[ax];
	}
	if (!in_order[0] || !(in_order[1] || scalar))
		return false;
	const float *a = t->in[0], *b = t->in[1];
	uint8_t *y = t->out;
	int64_t step = scalar ? 0 : 1;

	for (int64_t i = 0; i < n; i++) {
		float x = a[i], z = b[i * step];

		y[i] = t->op == TW_EQ	? x == z
		       : t->op == TW_LT ? x < z
		       : t->op == TW_LE ? x <= z
		       : t->op == TW_GT ? x > z
					: x >= z;
	}
	return true;
}

/*
 * A Cast between float16 and float32, or from an integer to float32, a loop of its
 * own: through the converters an element costs 21 ns, and a half-precision model
 * computed in single (user/graph/widen.c) casts its input in (150 K elements, 3.2 ms of
 * mobilenet_v3_large's 8), a quantised one its int32 sums out (200 K, 4.4 ms).
 */
static bool ho_run_cast_fast(const struct ho_typed *t, int64_t n)
{
	float *f = t->out;

/* each element of x's type to float32 through conv (as ho_convert: through double) */
#define HO_TO_FLOAT(type, conv)                                                                    \
	do {                                                                                       \
		for (int64_t i = 0; i < n; i++)                                                    \
			f[i] = conv(((const type *)t->in[0])[i]);                                  \
		return true;                                                                       \
	} while (0)
#define HO_VIA_DOUBLE(v) (float)(double)(v)
	if (t->op != TW_CAST)
		return false;
	if (t->out_dt == HO_DT_FLOAT) {
		switch (t->in_dt[0]) {
		case HO_DT_INT32:
			HO_TO_FLOAT(int32_t, HO_VIA_DOUBLE);
		case HO_DT_INT64:
			HO_TO_FLOAT(int64_t, HO_VIA_DOUBLE);
		case HO_DT_UINT8:
			HO_TO_FLOAT(uint8_t, HO_VIA_DOUBLE);
		case HO_DT_INT8:
			HO_TO_FLOAT(int8_t, HO_VIA_DOUBLE);
		case HO_DT_FLOAT16:
			HO_TO_FLOAT(uint16_t, ho_half_to_float);
		default:
			return false;
		}
	}
#undef HO_VIA_DOUBLE
#undef HO_TO_FLOAT
	if (t->in_dt[0] == HO_DT_FLOAT && t->out_dt == HO_DT_FLOAT16) {
		const float *x = t->in[0];
		uint16_t *y = t->out;

		for (int64_t i = 0; i < n; i++)
			y[i] = ho_float_to_half(x[i]);
		return true;
	}
	return false;
}

/*
 * Float32 Add, Sub, Mul and Div whatever either input broadcasts: both do in
 * raft_small's correlation window ([256,1,1,2] + [1,7,7,2], 48 a frame), which
 * oneDNN 2.6 refuses (it broadcasts its second source only).  Element by
 * element through the converters each took 0.47 ms, 13 of its 70 ms at one
 * thread.  Here the axes that both inputs read alike are merged, the innermost
 * one is a loop of its own strides, and the rows are split over the threads.
 */
static int ho_arith_axes(const struct ho_typed *t, int64_t *dim, int64_t (*st)[HO_MAX_RANK])
{
	int r = 0;

	for (int ax = 0; ax < t->out_shape.rank; ax++) {
		int64_t d = t->out_shape.dim[ax], s0 = t->stride[0][ax], s1 = t->stride[1][ax];

		if (d == 1)
			continue;
		if (r > 0 && st[0][r - 1] == s0 * d && st[1][r - 1] == s1 * d) {
			dim[r - 1] *= d; /* the outer axis steps over whole inner ones: one axis */
		} else {
			dim[r] = d;
			r++;
		}
		st[0][r - 1] = s0;
		st[1][r - 1] = s1;
	}
	if (!r) {
		dim[0] = 1;
		st[0][0] = st[1][0] = 0;
		r = 1;
	}
	return r;
}

/* y[j] = a[j * sa] op b[j * sb] for j < n; a stride of 1 or 0 a loop the compiler widens */
#define HO_ARITH_ROW(OP)                                                                           \
	do {                                                                                       \
		if (sa == 1 && sb == 1)                                                            \
			for (int64_t j = 0; j < n; j++)                                            \
				y[j] = a[j] OP b[j];                                               \
		else if (sa == 1 && sb == 0)                                                       \
			for (int64_t j = 0; j < n; j++)                                            \
				y[j] = a[j] OP b[0];                                               \
		else if (sa == 0 && sb == 1)                                                       \
			for (int64_t j = 0; j < n; j++)                                            \
				y[j] = a[0] OP b[j];                                               \
		else                                                                               \
			for (int64_t j = 0; j < n; j++)                                            \
				y[j] = a[j * sa] OP b[j * sb];                                     \
	} while (0)

static inline void ho_arith_row(int op, const float *a, int64_t sa, const float *b, int64_t sb,
				float *y, int64_t n)
{
	switch (op) {
	case TW_ADD:
		HO_ARITH_ROW(+);
		break;
	case TW_SUB:
		HO_ARITH_ROW(-);
		break;
	case TW_MUL:
		HO_ARITH_ROW(*);
		break;
	default:
		HO_ARITH_ROW(/);
	}
}
#undef HO_ARITH_ROW

struct ho_arith_job {
	const struct ho_typed *t;
	int r;
	int64_t dim[HO_MAX_RANK], st[2][HO_MAX_RANK];
};

/* Rows lo to hi of the merged axes (the innermost is a row). */
HO_VECTOR_CLONES static void ho_arith_rows(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_arith_job *j = arg;
	const struct ho_typed *t = j->t;
	int r = j->r;
	int64_t n = j->dim[r - 1], idx[HO_MAX_RANK] = {0}, off[2] = {0, 0};

	if (lo >= hi) /* no rows: an extent may be 0, which no index divides by */
		return;
	for (int64_t ax = r - 2, rest = lo; ax >= 0; ax--) { /* where row lo starts */
		idx[ax] = rest % j->dim[ax];
		rest /= j->dim[ax];
		off[0] += idx[ax] * j->st[0][ax];
		off[1] += idx[ax] * j->st[1][ax];
	}
	for (int64_t i = lo; i < hi; i++) {
		ho_arith_row(t->op, (const float *)t->in[0] + off[0], j->st[0][r - 1],
			     (const float *)t->in[1] + off[1], j->st[1][r - 1],
			     (float *)t->out + i * n, n);
		for (int ax = r - 2; ax >= 0; ax--) {
			off[0] += j->st[0][ax];
			off[1] += j->st[1][ax];
			if (++idx[ax] < j->dim[ax])
				break;
			off[0] -= j->st[0][ax] * j->dim[ax];
			off[1] -= j->st[1][ax] * j->dim[ax];
			idx[ax] = 0;
		}
	}
}

static int ho_run_arith_f32(const struct ho_kernel *k)
{
	struct ho_arith_job j = {.t = &k->typed};
	int64_t rows = 1;

	j.r = ho_arith_axes(j.t, j.dim, j.st);
	for (int ax = 0; ax < j.r - 1; ax++)
		rows *= j.dim[ax];
	ho_cpu_for_parts(ho_cpu_row_parts(rows, j.dim[j.r - 1] * (int64_t)sizeof(float), 1 << 17),
			 rows, ho_arith_rows, &j);
	return 0;
}

static int ho_run_typed(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t idx[HO_MAX_RANK] = {0}, off[HO_TYPED_MAX_IN] = {0},
		n = ho_shape_numel(&t->out_shape);
	int r = t->out_shape.rank;

	/* a Cast to the type it has (fasterrcnn's pooled features, 12.5 M floats: 29 ms an
	 * element at a time) is a copy */
	if (t->op == TW_CAST && t->in_dt[0] == t->out_dt && t->out_dt != HO_DT_BOOL) {
		memcpy(t->out, t->in[0], (size_t)n * (size_t)ho_dtype_size(t->out_dt));
		return 0;
	}
	if (ho_run_compare_f32(t, n) || ho_run_cast_fast(t, n))
		return 0;
	for (int64_t i = 0; i < n; i++) {
		struct ho_num a = ho_get(t->in_dt[0], t->in[0], off[0]), b = {0}, y;

		if (t->n_in > 1 && t->in[1])
			b = ho_get(t->in_dt[1], t->in[1], off[1]);
		if (t->op == TW_CAST && t->out_dt == HO_DT_BOOL) { /* nonzero (NaN too) is true */
			enum ho_domain d = ho_domain_of(t->in_dt[0]);

			y.u = d == HO_DOM_F ? a.f != 0 : d == HO_DOM_S ? a.s != 0 : a.u != 0;
		} else if (t->op == TW_CAST) {
			y = ho_convert(a, ho_domain_of(t->in_dt[0]), ho_domain_of(t->out_dt));
		} else if (t->op >= TW_NOT && t->op <= TW_ISINF) { /* one input, a bool out */
			y.u = t->op == TW_NOT	  ? !a.u
			      : t->op == TW_ISNAN ? isnan(a.f)
						  : isinf(a.f) && ((a.f > 0 && t->iparam[0]) ||
								   (a.f < 0 && t->iparam[1]));
		} else if (t->op == TW_CLIP) {
			y = a;
			if (t->in[1])
				y = ho_tw_apply(TW_MAX, t->dom, y, b);
			if (t->n_in > 2 && t->in[2])
				y = ho_tw_apply(TW_MIN, t->dom, y,
						ho_get(t->in_dt[2], t->in[2], off[2]));
		} else if (t->op == TW_WHERE) {
			struct ho_num c = ho_get(t->in_dt[2], t->in[2], off[2]);

			y = a.u ? b : c;
		} else {
			/* the operands in the domain computed in (Pow's exponent may differ);
			 * Sum, Mean, Max and Min fold over any number of them */
			y = ho_convert(a, ho_domain_of(t->in_dt[0]), t->dom);
			if (t->op == TW_BNOT) /* the one operator of one input here */
				y = ho_tw_apply(TW_BNOT, t->dom, y, y);
			for (int j = 1; j < t->n_in; j++) {
				b = j == 1 ? b : ho_get(t->in_dt[j], t->in[j], off[j]);
				b = ho_convert(b, ho_domain_of(t->in_dt[j]), t->dom);
				y = ho_tw_apply(t->op, t->dom, y, b);
			}
			if (t->op == TW_MEAN)
				y.f /= t->n_in;
			if ((int)ho_domain_of(t->out_dt) != t->dom)
				y = ho_convert(y, t->op >= TW_EQ ? HO_DOM_U : t->dom,
					       ho_domain_of(t->out_dt));
		}
		ho_set(t->out_dt, t->out, i, y);
		for (int ax = r - 1; ax >= 0; ax--) {
			for (int j = 0; j < t->n_in; j++)
				off[j] += t->stride[j][ax];
			if (++idx[ax] < t->out_shape.dim[ax])
				break;
			for (int j = 0; j < t->n_in; j++)
				off[j] -= t->stride[j][ax] * idx[ax];
			idx[ax] = 0;
		}
	}
	return 0;
}

bool ho_cpu_is_typed(const char *op_type)
{
	return ho_typed_find(op_type) >= 0;
}

/*
 * What every typed or axis loop reads: its inputs, their types and shapes, and
 * its output; a refusal unless every type is a fixed-size numeric one.
 */
int ho_cpu_prep_typed_io(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			 struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]], *x = ho_node_input(g, n, 0);

	if (!x || !ho_dtype_size(x->dtype) || !ho_dtype_size(y->dtype) ||
	    ho_domain_of(y->dtype) == HO_DOM_NONE || ho_domain_of(x->dtype) == HO_DOM_NONE)
		return ho_cpu_unsupported(err, n, "runs numeric fixed-size types only");
	if (n->n_inputs > HO_TYPED_MAX_IN)
		return ho_cpu_unsupported(err, n, "takes up to eight inputs");
	k->kind = HO_K_LOOP;
	t->out = buf[n->outputs[0]];
	t->out_dt = y->dtype;
	t->out_shape = y->shape;
	t->n_in = 0;
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct ho_tensor *in = ho_node_input(g, n, i);

		t->in[i] = in ? buf[n->inputs[i]] : NULL;
		t->in_dt[i] = in ? in->dtype : 0;
		if (in)
			t->in_shape[i] = in->shape;
		t->n_in = (int)i + 1;
		if (in && ho_domain_of(in->dtype) == HO_DOM_NONE)
			return ho_cpu_unsupported(err, n, "runs numeric fixed-size types only");
	}
	return 0;
}

int ho_cpu_prep_typed(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]], *x = ho_node_input(g, n, 0);
	int op = ho_typed_find(n->op_type);
	int ret = ho_cpu_prep_typed_io(g, n, buf, k, err);

	if (ret)
		return ret;
	if (!strcmp(n->op_type, "Clip")) {
		/* Max with the lower bound, then Min with the upper; an absent one is skipped */
		if (x->dtype != y->dtype || n->n_inputs > 3)
			return ho_cpu_unsupported(err, n, "needs bounds of its type");
		for (int i = 1; i < t->n_in; i++)
			if (t->in[i] &&
			    (t->in_dt[i] != x->dtype || ho_shape_numel(&t->in_shape[i]) != 1))
				return ho_cpu_unsupported(err, n,
							  "needs scalar bounds of its type");
		t->op = TW_CLIP;
		t->dom = ho_domain_of(x->dtype);
		for (int i = 0; i < t->n_in; i++)
			if (t->in[i])
				ho_tw_strides(&t->in_shape[i], &y->shape, t->stride[i]);
		t->run = ho_run_typed;
		return 0;
	}
	if (op < 0)
		return ho_cpu_unsupported(err, n, "has no kernel for this operator yet");
	t->op = op;
	t->dom = ho_domain_of(x->dtype);
	/* an integer to a floating power: computed as doubles, then truncated */
	if (op == TW_POW && n->n_inputs == 2 && ho_domain_of(t->in_dt[1]) == HO_DOM_F)
		t->dom = HO_DOM_F;
	if (op == TW_MOD && ho_node_attr_i(n, "fmod", 0))
		t->op = TW_FMOD;
	if (op == TW_SHL) {
		const struct ho_attr *dir = ho_node_attr(n, "direction");

		if (!dir || dir->type != HO_ATTR_STRING ||
		    (strcmp(dir->s, "LEFT") && strcmp(dir->s, "RIGHT")) || t->dom != HO_DOM_U)
			return ho_cpu_unsupported(err, n, "shifts unsigned integers LEFT or RIGHT");
		t->op = !strcmp(dir->s, "LEFT") ? TW_SHL : TW_SHR;
	}
	if (op >= TW_BAND && op <= TW_BNOT && t->dom == HO_DOM_F)
		return ho_cpu_unsupported(err, n, "takes integers only");
	if (op == TW_CAST) {
		t->n_in = 1; /* CastLike's second input gives only the type */
	} else if (op == TW_BNOT) {
		if (n->n_inputs != 1 || y->dtype != x->dtype)
			return ho_cpu_unsupported(err, n, "needs one input of its output's type");
	} else if (op >= TW_NOT) {
		if (n->n_inputs != 1 || y->dtype != HO_DT_BOOL ||
		    (op == TW_NOT && x->dtype != HO_DT_BOOL) ||
		    (op != TW_NOT && t->dom != HO_DOM_F))
			return ho_cpu_unsupported(err, n, "needs one input of the right type");
		t->iparam[0] = ho_node_attr_i(n, "detect_positive", 1);
		t->iparam[1] = ho_node_attr_i(n, "detect_negative", 1);
	} else if (op == TW_WHERE) {
		/* Where(cond, x, y): the condition first, then the two to choose from */
		if (n->n_inputs != 3 || t->in_dt[0] != HO_DT_BOOL || t->in_dt[1] != y->dtype ||
		    t->in_dt[2] != y->dtype)
			return ho_cpu_unsupported(err, n,
						  "needs a bool condition and two of its type");
	} else if (!strcmp(n->op_type, "Sum") || !strcmp(n->op_type, "Mean") ||
		   !strcmp(n->op_type, "Max") || !strcmp(n->op_type, "Min")) {
		for (int i = 1; i < t->n_in; i++)
			if (t->in_dt[i] != t->in_dt[0])
				return ho_cpu_unsupported(err, n, "needs inputs of one type");
		if (op == TW_MEAN && t->dom != HO_DOM_F)
			return ho_cpu_unsupported(err, n, "averages floating types only");
	} else if (n->n_inputs != 2 || !t->in[1] || (op != TW_POW && t->in_dt[1] != t->in_dt[0])) {
		return ho_cpu_unsupported(err, n, "needs two inputs of one type");
	}
	for (int i = 0; i < t->n_in; i++) {
		if (!t->in[i] || t->in_shape[i].rank > y->shape.rank)
			return ho_cpu_unsupported(err, n,
						  "needs inputs that broadcast to its output");
		ho_tw_strides(&t->in_shape[i], &y->shape, t->stride[i]);
	}
	t->run = t->n_in == 2 && t->op >= TW_ADD && t->op <= TW_DIV && t->in_dt[0] == HO_DT_FLOAT &&
			 t->in_dt[1] == HO_DT_FLOAT && t->out_dt == HO_DT_FLOAT
		     ? ho_run_arith_f32
		     : ho_run_typed;
	return 0;
}

int ho_cpu_run_loop(const struct ho_kernel *k)
{
	return k->typed.run(k);
}
