// SPDX-License-Identifier: MIT
/* Graph IR: construction helpers, validation, topological order, queries. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

static const struct {
	const char *name;
	int size;
} ho_dtypes[HO_DT_COUNT] = {
    [HO_DT_UNDEFINED] = {"undefined", 0},
    [HO_DT_FLOAT] = {"float32", 4},
    [HO_DT_UINT8] = {"uint8", 1},
    [HO_DT_INT8] = {"int8", 1},
    [HO_DT_UINT16] = {"uint16", 2},
    [HO_DT_INT16] = {"int16", 2},
    [HO_DT_INT32] = {"int32", 4},
    [HO_DT_INT64] = {"int64", 8},
    [HO_DT_STRING] = {"string", sizeof(char *)},
    [HO_DT_BOOL] = {"bool", 1},
    [HO_DT_FLOAT16] = {"float16", 2},
    [HO_DT_DOUBLE] = {"float64", 8},
    [HO_DT_UINT32] = {"uint32", 4},
    [HO_DT_UINT64] = {"uint64", 8},
    [HO_DT_COMPLEX64] = {"complex64", 8},
    [HO_DT_COMPLEX128] = {"complex128", 16},
    [HO_DT_BFLOAT16] = {"bfloat16", 2},
};

const char *ho_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < HO_DT_COUNT ? ho_dtypes[dtype].name : "invalid";
}

int ho_dtype_size(int dtype)
{
	return dtype >= 0 && dtype < HO_DT_COUNT ? ho_dtypes[dtype].size : 0;
}

const char **ho_strings_copy(const char *const *s, size_t n, size_t *bytes)
{
	size_t total = n * sizeof(char *);
	const char **out;
	char *p;

	for (size_t i = 0; i < n; i++)
		total += strlen(s[i]) + 1;
	out = malloc(total ? total : 1);
	if (!out)
		return NULL;
	p = (char *)(out + n);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(s[i]) + 1;

		memcpy(p, s[i], l);
		out[i] = p;
		p += l;
	}
	if (bytes)
		*bytes = total;
	return out;
}

bool ho_shape_same(const struct ho_shape *a, const struct ho_shape *b)
{
	if (a->rank != b->rank || a->rank < 0)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] != b->dim[i] || a->dim[i] < 0)
			return false;
	return true;
}

bool ho_shape_layout_free(const struct ho_shape *s)
{
	return s->rank == 4 && s->dim[2] == 1 && s->dim[3] == 1;
}

int64_t ho_shape_numel(const struct ho_shape *s)
{
	int64_t n = 1;

	if (s->rank < 0)
		return -1;
	for (int i = 0; i < s->rank; i++) {
		if (s->dim[i] < 0)
			return -1;
		if (s->dim[i] && n > INT64_MAX / s->dim[i])
			return -1;
		n *= s->dim[i];
	}
	return n;
}

const struct ho_attr *ho_node_attr(const struct ho_node *n, const char *name)
{
	for (uint32_t i = 0; i < n->n_attrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int64_t ho_node_attr_i(const struct ho_node *n, const char *name, int64_t def)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	return a && a->type == HO_ATTR_INT ? a->i : def;
}

float ho_node_attr_f(const struct ho_node *n, const char *name, float def)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	return a && a->type == HO_ATTR_FLOAT ? (float)a->f : def;
}

bool ho_node_attr_ints(const struct ho_node *n, const char *name, int64_t *v, size_t want,
		       int64_t def)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	for (size_t i = 0; i < want; i++)
		v[i] = def;
	if (!a)
		return true;
	if (a->type != HO_ATTR_INTS || a->n != want)
		return false;
	memcpy(v, a->ints, want * sizeof(int64_t));
	return true;
}

int ho_tensor_ints(const struct ho_tensor *t, const void *data, int64_t *v, int max)
{
	int64_t cnt = ho_shape_numel(&t->shape);

	if (!data || cnt < 0 || cnt > max || (t->dtype != HO_DT_INT64 && t->dtype != HO_DT_INT32))
		return -1;
	for (int64_t k = 0; k < cnt; k++)
		v[k] = t->dtype == HO_DT_INT64 ? ((const int64_t *)data)[k]
					       : ((const int32_t *)data)[k];
	return (int)cnt;
}

const struct ho_tensor *ho_node_input(const struct ho_graph *g, const struct ho_node *n, uint32_t i)
{
	return i < n->n_inputs && n->inputs[i] >= 0 ? &g->tensors[n->inputs[i]] : NULL;
}

struct ho_graph *ho_graph_new(struct ho_arena *a, uint32_t cap_nodes, uint32_t cap_tensors,
			      struct ho_error *err)
{
	struct ho_arena *own = NULL;
	struct ho_graph *g;

	if (!a) {
		own = calloc(1, sizeof(*own));
		if (!own)
			goto nomem;
		a = own;
	}
	g = ho_arena_calloc(a, 1, sizeof(*g));
	if (!g)
		goto nomem_arena;
	g->priv = ho_arena_calloc(a, 1, sizeof(*g->priv));
	if (!g->priv)
		goto nomem_arena;
	g->priv->arena = a;
	g->priv->root = own != NULL;
	g->priv->cap_nodes = cap_nodes;
	g->priv->cap_tensors = cap_tensors;
	g->nodes = ho_arena_calloc(a, cap_nodes ? cap_nodes : 1, sizeof(*g->nodes));
	g->tensors = ho_arena_calloc(a, cap_tensors ? cap_tensors : 1, sizeof(*g->tensors));
	if (!g->nodes || !g->tensors || ho_index_init(&g->priv->tensors, a, cap_tensors))
		goto nomem_arena;
	g->name = "";
	g->producer = "";
	return g;

nomem_arena:
	if (own) {
		ho_arena_release(own);
		free(own);
	}
nomem:
	ho_err(err, -ENOMEM, "out of memory creating a graph");
	return NULL;
}

int32_t ho_graph_add_tensor(struct ho_graph *g, const char *name, struct ho_error *err)
{
	struct ho_tensor *t;
	int32_t id;

	if (g->n_tensors >= g->priv->cap_tensors)
		return ho_err(err, -EOVERFLOW, "too many tensors in graph '%s'", g->name);
	id = (int32_t)g->n_tensors;
	t = &g->tensors[id];
	memset(t, 0, sizeof(*t));
	t->name = ho_arena_strdup(g->priv->arena, name);
	if (!t->name)
		return ho_err(err, -ENOMEM, "out of memory");
	if (ho_index_put(&g->priv->tensors, t->name, id) >= 0)
		return ho_err(err, -EEXIST, "tensor '%s' is defined twice", name);
	t->producer = -1;
	t->outer = -1;
	t->shape.rank = -1;
	t->decl.rank = -1;
	g->n_tensors++;
	return id;
}

void ho_graph_share_header(struct ho_graph *dst, const struct ho_graph *src)
{
	dst->name = src->name;
	dst->producer = src->producer;
	dst->ir_version = src->ir_version;
	dst->opsets = src->opsets;
	dst->n_opsets = src->n_opsets;
}

bool ho_node_is_task(const struct ho_node *n)
{
	return !(n->flags & HO_N_FOLDED) && strcmp(n->op_type, "Constant");
}

int32_t ho_other_input(const struct ho_graph *g, int32_t n, int32_t t)
{
	const struct ho_node *nd = &g->nodes[n];

	if (nd->n_inputs != 2 || t < 0)
		return -1;
	return nd->inputs[0] == t ? nd->inputs[1] : nd->inputs[1] == t ? nd->inputs[0] : -1;
}

int32_t ho_graph_find_tensor(const struct ho_graph *g, const char *name)
{
	return ho_index_get(&g->priv->tensors, name);
}

void ho_graph_free(struct ho_graph *g)
{
	struct ho_graph_priv *p;

	if (!g)
		return;
	p = g->priv;
	if (!p->root)
		return; /* subgraphs live in their root's arena */
	for (uint32_t i = 0; i < p->n_external; i++)
		free(p->external[i]);
	free(p->external);
	if (p->model && p->release_model)
		p->release_model(p->model);
	struct ho_arena *a = p->arena;

	ho_arena_release(a);
	free(a);
}

static const char *ho_node_label(const struct ho_node *n)
{
	return n->name && *n->name ? n->name : "(unnamed)";
}

int ho_graph_validate(struct ho_graph *g, struct ho_error *err)
{
	struct ho_arena *a = g->priv->arena;
	uint32_t *indeg = NULL, *fill = NULL;
	int32_t *queue = NULL;
	uint32_t head = 0, tail = 0;
	int ret = 0;

	for (uint32_t i = 0; i < g->n_tensors; i++)
		g->tensors[i].n_consumers = 0;

	/* Every read must have a source. */
	for (uint32_t n = 0; n < g->n_nodes; n++) {
		struct ho_node *nd = &g->nodes[n];

		for (uint32_t k = 0; k < nd->n_inputs + nd->n_implicit; k++) {
			int32_t tid =
			    k < nd->n_inputs ? nd->inputs[k] : nd->implicit[k - nd->n_inputs];
			struct ho_tensor *t;

			if (tid < 0)
				continue;
			if ((uint32_t)tid >= g->n_tensors)
				return ho_err(err, -EINVAL, "node '%s' (%s): input %u out of range",
					      ho_node_label(nd), nd->op_type, k);
			t = &g->tensors[tid];
			if (t->producer < 0 && !(t->flags & (HO_T_INITIALIZER | HO_T_INPUT |
							     HO_T_OUTER | HO_T_CONSTANT)))
				return ho_err(
				    err, -EINVAL,
				    "node '%s' (%s): input '%s' is not produced by any node, "
				    "initializer or graph input",
				    ho_node_label(nd), nd->op_type, t->name);
			t->n_consumers++;
		}
	}
	for (uint32_t i = 0; i < g->n_outputs; i++) {
		struct ho_tensor *t = &g->tensors[g->outputs[i]];

		if (t->producer < 0 && !(t->flags & (HO_T_INITIALIZER | HO_T_INPUT | HO_T_OUTER)))
			return ho_err(
			    err, -EINVAL,
			    "graph output '%s' is not produced by any node, initializer or input",
			    t->name);
	}

	indeg = calloc(g->n_nodes + 1, sizeof(*indeg));
	fill = calloc(g->n_tensors + 1, sizeof(*fill));
	queue = malloc((g->n_nodes + 1) * sizeof(*queue));
	if (!indeg || !fill || !queue) {
		ret = ho_err(err, -ENOMEM, "out of memory validating the graph");
		goto out;
	}
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		struct ho_tensor *t = &g->tensors[i];

		t->consumers =
		    ho_arena_alloc(a, (t->n_consumers ? t->n_consumers : 1) * sizeof(int32_t));
		if (!t->consumers) {
			ret = ho_err(err, -ENOMEM, "out of memory validating the graph");
			goto out;
		}
	}
	for (uint32_t n = 0; n < g->n_nodes; n++) {
		struct ho_node *nd = &g->nodes[n];

		for (uint32_t k = 0; k < nd->n_inputs + nd->n_implicit; k++) {
			int32_t tid =
			    k < nd->n_inputs ? nd->inputs[k] : nd->implicit[k - nd->n_inputs];

			if (tid < 0)
				continue;
			g->tensors[tid].consumers[fill[tid]++] = (int32_t)n;
			if (g->tensors[tid].producer >= 0)
				indeg[n]++;
		}
	}

	/* Kahn's algorithm; the queue keeps file order among ready nodes. */
	for (uint32_t n = 0; n < g->n_nodes; n++)
		if (!indeg[n])
			queue[tail++] = (int32_t)n;
	g->topo = ho_arena_alloc(a, (g->n_nodes ? g->n_nodes : 1) * sizeof(int32_t));
	if (!g->topo) {
		ret = ho_err(err, -ENOMEM, "out of memory validating the graph");
		goto out;
	}
	while (head < tail) {
		int32_t n = queue[head];
		struct ho_node *nd = &g->nodes[n];

		g->topo[head++] = n;
		for (uint32_t o = 0; o < nd->n_outputs; o++) {
			int32_t tid = nd->outputs[o];

			if (tid < 0)
				continue;
			for (uint32_t c = 0; c < g->tensors[tid].n_consumers; c++) {
				int32_t m = g->tensors[tid].consumers[c];

				if (--indeg[m] == 0)
					queue[tail++] = m;
			}
		}
	}
	if (head != g->n_nodes) {
		for (uint32_t n = 0; n < g->n_nodes; n++)
			if (indeg[n]) {
				ret = ho_err(
				    err, -ELOOP, "graph '%s' has a cycle through node '%s' (%s)",
				    g->name, ho_node_label(&g->nodes[n]), g->nodes[n].op_type);
				break;
			}
		goto out;
	}
	/* Consumers listed in execution order help the memory model later. */
	{
		uint32_t *pos = indeg; /* reuse: rank of each node in topo */

		for (uint32_t i = 0; i < g->n_nodes; i++)
			pos[g->topo[i]] = i;
		for (uint32_t i = 0; i < g->n_tensors; i++) {
			struct ho_tensor *t = &g->tensors[i];

			for (uint32_t x = 1; x < t->n_consumers; x++) {
				int32_t v = t->consumers[x];
				uint32_t y = x;

				while (y > 0 && pos[t->consumers[y - 1]] > pos[v]) {
					t->consumers[y] = t->consumers[y - 1];
					y--;
				}
				t->consumers[y] = v;
			}
		}
	}
out:
	free(indeg);
	free(fill);
	free(queue);
	return ret;
}

/*
 * Dimension i of input t, named by the model, taken as value: another input
 * already bound with that name must agree; with set, one not yet bound
 * takes the value.
 */
static int ho_bind_named_dim(struct ho_graph *g, const struct ho_tensor *t, int i, int64_t value,
			     bool set, struct ho_error *err)
{
	const char *sym = t->shape.sym[i];

	for (uint32_t k = 0; sym && k < g->n_inputs; k++) {
		struct ho_tensor *u = &g->tensors[g->inputs[k]];

		if (u == t)
			continue;
		for (int j = 0; j < u->shape.rank; j++) {
			if (!u->shape.sym[j] || strcmp(u->shape.sym[j], sym))
				continue;
			if (u->shape.dim[j] >= 0 && u->shape.dim[j] != value)
				return ho_err(err, -EINVAL,
					      "input '%s': dim %d ('%s') is %" PRId64
					      ", but input '%s' has %" PRId64 " there",
					      t->name, i, sym, value, u->name, u->shape.dim[j]);
			if (set)
				u->shape.dim[j] = value;
		}
	}
	return 0;
}

/* Whether the dims given for t agree with its shape: rank, fixed dims, named dims. */
static int ho_bind_check(struct ho_graph *g, const struct ho_tensor *t, const int64_t *dims,
			 int rank, struct ho_error *err)
{
	const struct ho_shape *s = &t->shape;
	int ret;

	if (rank < 0 || rank > HO_MAX_RANK)
		return ho_err(err, -EINVAL, "input '%s': rank %d is not supported", t->name, rank);
	if (s->rank >= 0 && s->rank != rank)
		return ho_err(err, -EINVAL, "input '%s': rank %d, but the model declares rank %d",
			      t->name, rank, s->rank);
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return ho_err(err, -EINVAL, "input '%s': dim %d is negative", t->name, i);
		if (s->rank < 0)
			continue;
		/* a named dim another input's binding set says whose it was */
		if (s->sym[i] && (ret = ho_bind_named_dim(g, t, i, dims[i], false, err)))
			return ret;
		for (int j = 0; s->sym[i] && j < i; j++)
			if (s->sym[j] && !strcmp(s->sym[j], s->sym[i]) && dims[j] != dims[i])
				return ho_err(
				    err, -EINVAL,
				    "input '%s': dims %d and %d are both '%s', but %" PRId64
				    " and %" PRId64,
				    t->name, j, i, s->sym[i], dims[j], dims[i]);
		if (!s->sym[i] && s->dim[i] >= 0 && s->dim[i] != dims[i])
			return ho_err(err, -EINVAL,
				      "input '%s': dim %d is %" PRId64
				      ", but the model fixes it to %" PRId64,
				      t->name, i, dims[i], s->dim[i]);
	}
	return 0;
}

int ho_graph_bind_input(struct ho_graph *g, const char *name, const int64_t *dims, int rank,
			struct ho_error *err)
{
	int32_t id = ho_graph_find_tensor(g, name);
	struct ho_tensor *t;
	int ret;

	if (id < 0 || !(g->tensors[id].flags & HO_T_INPUT))
		return ho_err(err, -ENOENT, "the model has no input named '%s'", name);
	t = &g->tensors[id];
	if ((ret = ho_bind_check(g, t, dims, rank, err)))
		return ret;
	/* inputs that share a dim's name take its value, whichever is bound first */
	for (int i = 0; t->shape.rank >= 0 && i < rank; i++)
		ho_bind_named_dim(g, t, i, dims[i], true, err);
	t->shape.rank = rank;
	for (int i = 0; i < rank; i++)
		t->shape.dim[i] = dims[i];
	return 0;
}

int ho_graph_bind_value(struct ho_graph *g, const char *name, int dtype, const int64_t *dims,
			int rank, const void *data, size_t len, struct ho_error *err)
{
	int32_t id = ho_graph_find_tensor(g, name);
	struct ho_tensor *t;
	int64_t n = 1;
	void *copy;
	int ret;

	if ((ret = ho_graph_bind_input(g, name, dims, rank, err)))
		return ret;
	t = &g->tensors[id];
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	if (dtype != t->dtype || !ho_dtype_size(dtype) || (uint64_t)n * ho_dtype_size(dtype) != len)
		return ho_err(err, -EINVAL, "input '%s' is %s: %zu bytes of %s do not fill it",
			      name, ho_dtype_name(t->dtype), len, ho_dtype_name(dtype));
	if (!(copy = ho_arena_alloc(g->priv->arena, len ? len : 1)))
		return ho_err(err, -ENOMEM, "out of memory");
	if (len) /* an empty tensor has no data to copy */
		memcpy(copy, data, len);
	for (int64_t i = 0; dtype == HO_DT_STRING && i < n; i++) /* the bytes too: the plan's */
		if (!(((char **)copy)[i] = ho_arena_strdup(g->priv->arena, ((char **)copy)[i])))
			return ho_err(err, -ENOMEM, "out of memory");
	t->data = copy;
	t->data_len = len;
	t->value = NULL;
	t->flags |= HO_T_BOUND;
	return 0;
}

int ho_parse_shape_arg(const char *arg, char *name, size_t name_len, int64_t *dims, int *rank,
		       struct ho_error *err)
{
	const char *eq = strrchr(arg, '=');
	const char *p;
	int r = 0;

	if (!eq || eq == arg || (size_t)(eq - arg) >= name_len)
		return ho_err(err, -EINVAL, "--shape '%s': expected NAME=D0xD1x...", arg);
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	p = eq + 1;
	if (!*p) {
		*rank = 0; /* a scalar */
		return 0;
	}
	for (;;) {
		char *end;
		long long v;

		if (r == HO_MAX_RANK)
			return ho_err(err, -EINVAL, "--shape '%s': more than %d dims", arg,
				      HO_MAX_RANK);
		errno = 0;
		if (*p < '0' || *p > '9')
			return ho_err(err, -EINVAL, "--shape '%s': '%s' is not a dimension", arg,
				      p);
		v = strtoll(p, &end, 10);
		if (errno || v < 0 || v > (1LL << 40))
			return ho_err(err, -EINVAL, "--shape '%s': dimension out of range", arg);
		dims[r++] = v;
		if (!*end)
			break;
		if (*end != 'x' && *end != ',')
			return ho_err(err, -EINVAL, "--shape '%s': unexpected '%c'", arg, *end);
		p = end + 1;
	}
	*rank = r;
	return 0;
}

static int64_t ho_load_int(int dtype, const unsigned char *p)
{
	switch (dtype) {
	case HO_DT_INT64:
	case HO_DT_UINT64: {
		int64_t v;

		memcpy(&v, p, 8);
		return v;
	}
	case HO_DT_INT32: {
		int32_t v;

		memcpy(&v, p, 4);
		return v;
	}
	case HO_DT_UINT32: {
		uint32_t v;

		memcpy(&v, p, 4);
		return v;
	}
	case HO_DT_INT16: {
		int16_t v;

		memcpy(&v, p, 2);
		return v;
	}
	case HO_DT_UINT16: {
		uint16_t v;

		memcpy(&v, p, 2);
		return v;
	}
	case HO_DT_INT8:
		return (int8_t)*p;
	default: /* uint8, bool */
		return *p;
	}
}

/* up to HO_FOLD_BOUND_MAX_ELEMS: callers keep their own, smaller limits where theirs */
struct ho_value *ho_value_from_data(struct ho_arena *a, int dtype, const void *data, uint64_t len,
				    int64_t count)
{
	int es = ho_dtype_size(dtype);
	const unsigned char *p = data;
	struct ho_value *v;

	if (!data || count < 0 || count > HO_FOLD_BOUND_MAX_ELEMS || !es ||
	    (uint64_t)count * es > len)
		return NULL;
	if (dtype == HO_DT_FLOAT16 || dtype == HO_DT_BFLOAT16 || dtype == HO_DT_COMPLEX64 ||
	    dtype == HO_DT_COMPLEX128 || dtype == HO_DT_STRING)
		return NULL;
	v = ho_arena_calloc(a, 1, sizeof(*v));
	if (!v)
		return NULL;
	v->dtype = dtype;
	v->count = (size_t)count;
	if (dtype == HO_DT_FLOAT || dtype == HO_DT_DOUBLE) {
		v->f = ho_arena_alloc(a, (count ? count : 1) * sizeof(double));
		if (!v->f)
			return NULL;
		for (int64_t k = 0; k < count; k++) {
			if (dtype == HO_DT_FLOAT) {
				float f;

				memcpy(&f, p + k * 4, 4);
				v->f[k] = f;
			} else {
				memcpy(&v->f[k], p + k * 8, 8);
			}
		}
	} else {
		v->i = ho_arena_alloc(a, (count ? count : 1) * sizeof(int64_t));
		if (!v->i)
			return NULL;
		for (int64_t k = 0; k < count; k++)
			v->i[k] = ho_load_int(dtype, p + k * es);
	}
	return v;
}
