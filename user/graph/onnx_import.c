// SPDX-License-Identifier: MIT
/*
 * ONNX front end: decode a ModelProto with protobuf-c (code generated at build
 * time from Debian's onnx.proto) and translate it into the graph IR.
 *
 * Weights are not copied a second time: tensors point into the decoded
 * protobuf, which the graph keeps alive until ho_graph_free().
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_priv.h"
#include "onnx.pb-c.h"

#define HO_MAX_SUBGRAPH_DEPTH 32

struct ho_import {
	struct ho_arena *arena;
	struct ho_graph *root;
	struct ho_error *err;
	const char *base_dir;
	const Onnx__ModelProto *model;
};

static void ho_onnx_release_model(void *model)
{
	onnx__model_proto__free_unpacked(model, NULL);
}

static int ho_keep_external(struct ho_import *im, void *buf)
{
	struct ho_graph_priv *p = im->root->priv;

	if (p->n_external == p->cap_external) {
		uint32_t cap = p->cap_external ? p->cap_external * 2 : 8;
		void **n = realloc(p->external, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->external = n;
		p->cap_external = cap;
	}
	p->external[p->n_external++] = buf;
	return 0;
}

/* Reject locations that could leave the model's folder. */
static bool ho_safe_location(const char *loc)
{
	const char *p = loc;

	if (!*loc || loc[0] == '/')
		return false;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		if (!slash)
			break;
		p = slash + 1;
	}
	return true;
}

static int ho_load_external(struct ho_import *im, const Onnx__TensorProto *tp, const void **data,
			    uint64_t *len)
{
	const char *loc = NULL;
	uint64_t off = 0, n = UINT64_MAX;
	char path[PATH_MAX];
	struct stat st;
	void *buf;
	int fd, ret;

	for (size_t i = 0; i < tp->n_external_data; i++) {
		const char *k = tp->external_data[i]->key, *v = tp->external_data[i]->value;
		char *end;

		if (!k || !v)
			continue;
		if (!strcmp(k, "location")) {
			loc = v;
		} else if (!strcmp(k, "offset") || !strcmp(k, "length")) {
			errno = 0;
			unsigned long long x = strtoull(v, &end, 10);

			if (errno || *end || *v == '-')
				return ho_err(im->err, -EINVAL, "tensor '%s': bad external %s '%s'",
					      tp->name, k, v);
			if (!strcmp(k, "offset"))
				off = x;
			else
				n = x;
		}
	}
	if (!loc)
		return ho_err(im->err, -EINVAL, "tensor '%s': external data without a location",
			      tp->name);
	if (!im->base_dir)
		return ho_err(im->err, -EINVAL,
			      "tensor '%s': external data '%s' needs the model's folder", tp->name,
			      loc);
	if (!ho_safe_location(loc))
		return ho_err(im->err, -EPERM,
			      "tensor '%s': external data location '%s' leaves the model's folder",
			      tp->name, loc);
	if (snprintf(path, sizeof(path), "%s/%s", im->base_dir, loc) >= (int)sizeof(path))
		return ho_err(im->err, -ENAMETOOLONG, "tensor '%s': external path too long",
			      tp->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ho_err(im->err, -errno, "tensor '%s': cannot open external data '%s': %s",
			      tp->name, path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return ho_err(im->err, -EINVAL, "tensor '%s': external data '%s' is not a file",
			      tp->name, path);
	}
	if (n == UINT64_MAX)
		n = off <= (uint64_t)st.st_size ? (uint64_t)st.st_size - off : 0;
	if (off > (uint64_t)st.st_size || n > (uint64_t)st.st_size - off) {
		close(fd);
		return ho_err(im->err, -EINVAL,
			      "tensor '%s': external data [%" PRIu64 ", +%" PRIu64
			      ") lies beyond the end of '%s' (%lld bytes)",
			      tp->name, off, n, path, (long long)st.st_size);
	}
	buf = malloc(n ? n : 1);
	if (!buf) {
		close(fd);
		return ho_err(im->err, -ENOMEM, "tensor '%s': out of memory for external data",
			      tp->name);
	}
	for (uint64_t done = 0; done < n;) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (r <= 0) {
			free(buf);
			close(fd);
			return ho_err(im->err, -EIO, "tensor '%s': short read from '%s'", tp->name,
				      path);
		}
		done += (uint64_t)r;
	}
	close(fd);
	ret = ho_keep_external(im, buf);
	if (ret) {
		free(buf);
		return ho_err(im->err, ret, "out of memory");
	}
	*data = buf;
	*len = n;
	return 0;
}

static int ho_shape_from_dims(struct ho_import *im, const char *what, const int64_t *dims, size_t n,
			      struct ho_shape *s)
{
	if (n > HO_MAX_RANK)
		return ho_err(im->err, -EINVAL, "%s: rank %zu exceeds the supported %d", what, n,
			      HO_MAX_RANK);
	s->rank = (int)n;
	for (size_t i = 0; i < n; i++) {
		if (dims[i] < 0 || dims[i] > (INT64_C(1) << 40))
			return ho_err(im->err, -EINVAL, "%s: dimension %" PRId64 " out of range",
				      what, dims[i]);
		s->dim[i] = dims[i];
		s->sym[i] = NULL;
	}
	return 0;
}

/* A string tensor's elements: pointers to NUL-terminated copies in the arena. */
static int ho_tensor_strings(struct ho_import *im, const char *name, const ProtobufCBinaryData *s,
			     size_t n, int64_t numel, struct ho_const *c)
{
	const char **p;

	if (numel < 0 || (uint64_t)numel != n)
		return ho_err(im->err, -EINVAL, "tensor '%s': %zu strings for %lld elements", name,
			      n, (long long)numel);
	p = ho_arena_alloc(im->arena, (n ? n : 1) * sizeof(*p));
	if (!p)
		return ho_err(im->err, -ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		char *b = ho_arena_alloc(im->arena, s[k].len + 1);

		if (!b)
			return ho_err(im->err, -ENOMEM, "out of memory");
		if (s[k].len && memchr(s[k].data, 0, s[k].len))
			return ho_err(im->err, -EINVAL, "tensor '%s': string %zu holds a NUL byte",
				      name, k);
		if (s[k].len) /* an empty one may have no data at all */
			memcpy(b, s[k].data, s[k].len);
		b[s[k].len] = '\0';
		p[k] = b;
	}
	c->data = p;
	c->len = n * sizeof(*p);
	return 0;
}

/* Packed little-endian bytes of a TensorProto, wherever the model keeps them. */
static int ho_tensor_bytes(struct ho_import *im, const Onnx__TensorProto *tp, struct ho_const *c)
{
	const char *name = tp->name ? tp->name : "(unnamed)";
	int64_t numel;
	int es;

	memset(c, 0, sizeof(*c));
	c->dtype = tp->has_data_type ? tp->data_type : HO_DT_UNDEFINED;
	if (c->dtype <= HO_DT_UNDEFINED || c->dtype >= HO_DT_COUNT)
		return ho_err(im->err, -EINVAL, "tensor '%s': unknown data type %d", name,
			      c->dtype);
	if (ho_shape_from_dims(im, name, tp->dims, tp->n_dims, &c->shape))
		return im->err->code;
	if (tp->segment)
		return ho_err(im->err, -ENOTSUP, "tensor '%s': segmented tensors are not supported",
			      name);
	numel = ho_shape_numel(&c->shape);
	es = ho_dtype_size(c->dtype);
	if (c->dtype == HO_DT_STRING)
		return ho_tensor_strings(im, name, tp->string_data, tp->n_string_data, numel, c);
	if (numel < 0 || (uint64_t)numel > UINT64_MAX / (uint64_t)es)
		return ho_err(im->err, -EOVERFLOW, "tensor '%s': element count overflows", name);

	if (tp->has_data_location &&
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		int ret = ho_load_external(im, tp, &c->data, &c->len);

		if (ret)
			return ret;
	} else if (tp->has_raw_data) {
		c->data = tp->raw_data.data;
		c->len = tp->raw_data.len;
	} else if (tp->n_float_data) {
		if (c->dtype != HO_DT_FLOAT && c->dtype != HO_DT_COMPLEX64)
			return ho_err(im->err, -EINVAL, "tensor '%s': float_data for a %s tensor",
				      name, ho_dtype_name(c->dtype));
		c->data = tp->float_data;
		c->len = tp->n_float_data * 4;
	} else if (tp->n_int64_data) {
		if (c->dtype != HO_DT_INT64)
			return ho_err(im->err, -EINVAL, "tensor '%s': int64_data for a %s tensor",
				      name, ho_dtype_name(c->dtype));
		c->data = tp->int64_data;
		c->len = tp->n_int64_data * 8;
	} else if (tp->n_double_data) {
		if (c->dtype != HO_DT_DOUBLE && c->dtype != HO_DT_COMPLEX128)
			return ho_err(im->err, -EINVAL, "tensor '%s': double_data for a %s tensor",
				      name, ho_dtype_name(c->dtype));
		c->data = tp->double_data;
		c->len = tp->n_double_data * 8;
	} else if (tp->n_int32_data || tp->n_uint64_data) {
		/* Narrow types travel widened in int32_data/uint64_data: repack them. */
		size_t n = tp->n_int32_data ? tp->n_int32_data : tp->n_uint64_data;
		unsigned char *out;

		if (es > (tp->n_int32_data ? 4 : 8) || c->dtype == HO_DT_FLOAT ||
		    (tp->n_uint64_data && c->dtype != HO_DT_UINT64 && c->dtype != HO_DT_UINT32))
			return ho_err(im->err, -EINVAL, "tensor '%s': integer data for a %s tensor",
				      name, ho_dtype_name(c->dtype));
		if (n > SIZE_MAX / 8)
			return ho_err(im->err, -EOVERFLOW, "tensor '%s': too much data", name);
		out = ho_arena_alloc(im->arena, n * es);
		if (!out)
			return ho_err(im->err, -ENOMEM, "out of memory");
		for (size_t k = 0; k < n; k++) {
			uint64_t v = tp->n_int32_data ? (uint64_t)(uint32_t)tp->int32_data[k]
						      : tp->uint64_data[k];

			memcpy(out + k * es, &v, (size_t)es); /* little-endian host */
		}
		c->data = out;
		c->len = n * es;
	}
	if (c->len != (uint64_t)numel * es) {
		char dims[128];
		int p = 0;

		dims[0] = '\0';
		for (int i = 0; i < c->shape.rank && p < (int)sizeof(dims) - 24; i++)
			p += snprintf(dims + p, sizeof(dims) - p, "%s%" PRId64, i ? "," : "",
				      c->shape.dim[i]);
		return ho_err(im->err, -EINVAL,
			      "tensor '%s': %" PRIu64
			      " bytes of data, but shape [%s] of %s needs %" PRIu64,
			      name, c->len, dims, ho_dtype_name(c->dtype), (uint64_t)numel * es);
	}
	return 0;
}

static int ho_type_shape(struct ho_import *im, const char *name, const Onnx__TypeProto *tp,
			 int *dtype, struct ho_shape *s)
{
	const Onnx__TensorShapeProto *sh;

	*dtype = HO_DT_UNDEFINED;
	s->rank = -1;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return 0;
	if (tp->tensor_type->has_elem_type) {
		*dtype = tp->tensor_type->elem_type;
		if (*dtype < 0 || *dtype >= HO_DT_COUNT)
			return ho_err(im->err, -EINVAL, "'%s': unknown element type %d", name,
				      *dtype);
	}
	sh = tp->tensor_type->shape;
	if (!sh)
		return 0;
	if (sh->n_dim > HO_MAX_RANK)
		return ho_err(im->err, -EINVAL, "'%s': rank %zu exceeds the supported %d", name,
			      sh->n_dim, HO_MAX_RANK);
	s->rank = (int)sh->n_dim;
	for (size_t i = 0; i < sh->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];

		s->dim[i] = HO_DIM_UNKNOWN;
		s->sym[i] = NULL;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (d->dim_value < 0 || d->dim_value > (INT64_C(1) << 40))
				return ho_err(im->err, -EINVAL,
					      "'%s': dimension %" PRId64 " out of range", name,
					      d->dim_value);
			s->dim[i] = d->dim_value;
		} else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			   d->dim_param && *d->dim_param) {
			s->sym[i] = ho_arena_strdup(im->arena, d->dim_param);
			if (!s->sym[i])
				return ho_err(im->err, -ENOMEM, "out of memory");
		}
	}
	return 0;
}

/*
 * A model's own inputs and outputs are tensors: sequences, optionals and maps
 * run inside a graph (SequenceConstruct, a Loop's carried values), but have no
 * .npy form nor C API type to cross the boundary with.  Said at load, not as
 * a missing shape later.
 */
static int ho_boundary_tensor(struct ho_import *im, const char *what,
			      const Onnx__ValueInfoProto *vi)
{
	static const struct {
		int value_case;
		const char *name;
	} kinds[] = {
	    {ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE, "a sequence"},
	    {ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE, "an optional"},
	    {ONNX__TYPE_PROTO__VALUE_MAP_TYPE, "a map"},
	    {ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE, "a sparse tensor"},
	};

	if (!vi->type)
		return 0;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if ((int)vi->type->value_case == kinds[k].value_case)
			return ho_err(im->err, -EOPNOTSUPP,
				      "model %s '%s' is %s: the runtime takes and gives only "
				      "tensors at a model's inputs and outputs",
				      what, vi->name, kinds[k].name);
	return 0;
}

static bool ho_shapes_conflict(const struct ho_shape *a, const struct ho_shape *b)
{
	if (a->rank < 0 || b->rank < 0)
		return false;
	if (a->rank != b->rank)
		return true;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] >= 0 && b->dim[i] >= 0 && a->dim[i] != b->dim[i])
			return true;
	return false;
}

static void ho_format_shape(const struct ho_shape *s, char *buf, size_t n)
{
	size_t p = 0;

	if (s->rank < 0) {
		snprintf(buf, n, "?");
		return;
	}
	p += (size_t)snprintf(buf, n, "[");
	for (int i = 0; i < s->rank && p < n; i++) {
		if (s->dim[i] >= 0)
			p +=
			    (size_t)snprintf(buf + p, n - p, "%s%" PRId64, i ? "," : "", s->dim[i]);
		else
			p += (size_t)snprintf(buf + p, n - p, "%s%s", i ? "," : "",
					      s->sym[i] ? s->sym[i] : "?");
	}
	if (p < n)
		snprintf(buf + p, n - p, "]");
}

/* A model of the training domain alone (an optimiser step) needs no default opset. */
static bool ho_imports_known_domain(const struct ho_graph *g)
{
	for (size_t i = 0; i < g->n_opsets; i++)
		if (*g->opsets[i].domain && ho_op_domain_known(g->opsets[i].domain))
			return true;
	return false;
}

static int64_t ho_domain_opset(const struct ho_import *im, const char *domain)
{
	const Onnx__ModelProto *m = im->model;

	if (!strcmp(domain, "ai.onnx"))
		domain = "";
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const char *d = m->opset_import[i]->domain ? m->opset_import[i]->domain : "";

		if (!strcmp(d, "ai.onnx"))
			d = "";
		if (!strcmp(d, domain))
			return m->opset_import[i]->has_version ? m->opset_import[i]->version : 1;
	}
	return -1;
}

/* Upper bound on the tensors a graph can create: its own plus outer references. */
static uint64_t ho_count_refs(const Onnx__GraphProto *gp, int depth)
{
	uint64_t n = 0;

	if (depth > HO_MAX_SUBGRAPH_DEPTH)
		return 0;
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];

		n += np->n_input;
		for (size_t a = 0; a < np->n_attribute; a++) {
			const Onnx__AttributeProto *ap = np->attribute[a];

			if (ap->g)
				n += ho_count_refs(ap->g, depth + 1);
			for (size_t k = 0; k < ap->n_graphs; k++)
				n += ho_count_refs(ap->graphs[k], depth + 1);
		}
	}
	return n;
}

/* Node and tensor capacity of a graph: its own tensors plus outer references. */
static int ho_graph_caps(const Onnx__GraphProto *gp, int depth, uint32_t *nodes, uint32_t *tensors)
{
	uint64_t t = gp->n_input + gp->n_initializer + gp->n_output + ho_count_refs(gp, depth);

	for (size_t i = 0; i < gp->n_node; i++)
		t += gp->node[i]->n_output;
	if (t > UINT32_MAX / 4 || gp->n_node > UINT32_MAX / 4)
		return -EOVERFLOW;
	*nodes = (uint32_t)gp->n_node;
	*tensors = (uint32_t)t;
	return 0;
}

static int ho_import_graph(struct ho_import *im, const Onnx__GraphProto *gp,
			   struct ho_graph *parent, int depth, struct ho_graph **out);

/*
 * protobuf-c decodes nested messages recursively with no depth limit, so a
 * small hostile file (subgraph inside subgraph, 30,000 deep) overflows the
 * stack.  Walk the wire format first, iteratively, using protobuf-c's own
 * descriptors to tell sub-messages from bytes, and refuse deep nesting.  Real
 * models stay far below the limit (each subgraph level costs 3 messages).
 */
#define HO_MAX_MESSAGE_DEPTH 160

static int ho_read_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*off >= len)
			return -1;
		uint8_t b = p[(*off)++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

static int ho_check_nesting(const void *buf, size_t len, struct ho_error *err)
{
	struct {
		size_t end;
		const ProtobufCMessageDescriptor *desc;
	} stack[HO_MAX_MESSAGE_DEPTH + 1];
	const uint8_t *p = buf;
	size_t off = 0;
	int depth = 0;

	stack[0].end = len;
	stack[0].desc = &onnx__model_proto__descriptor;
	while (depth >= 0) {
		uint64_t tag, n;
		const ProtobufCFieldDescriptor *f;

		if (off >= stack[depth].end) {
			off = stack[depth].end;
			depth--;
			continue;
		}
		if (ho_read_varint(p, stack[depth].end, &off, &tag))
			return 0; /* malformed: protobuf-c reports it */
		switch (tag & 7) {
		case 0:
			if (ho_read_varint(p, stack[depth].end, &off, &n))
				return 0;
			break;
		case 1:
			off += 8;
			break;
		case 5:
			off += 4;
			break;
		case 2:
			if (ho_read_varint(p, stack[depth].end, &off, &n) ||
			    n > stack[depth].end - off)
				return 0;
			f = tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(
							 stack[depth].desc, (unsigned)(tag >> 3))
						   : NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (depth == HO_MAX_MESSAGE_DEPTH)
					return ho_err(err, -ELOOP,
						      "not a usable ONNX model: messages nested "
						      "deeper than %d",
						      HO_MAX_MESSAGE_DEPTH);
				depth++;
				stack[depth].end = off + n;
				stack[depth].desc = f->descriptor;
				continue;
			}
			off += n;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

/* Find name in g or an enclosing graph; make outer references on the way down. */
static int32_t ho_resolve(struct ho_import *im, struct ho_graph *g, const char *name)
{
	int32_t id = ho_graph_find_tensor(g, name), pid;

	if (id >= 0 || !g->parent)
		return id;
	pid = ho_resolve(im, g->parent, name);
	if (pid < 0)
		return pid;
	id = ho_graph_add_tensor(g, name, im->err);
	if (id < 0)
		return id;
	g->tensors[id].flags |= HO_T_OUTER;
	g->tensors[id].outer = pid;
	return id;
}

static int ho_import_attr(struct ho_import *im, struct ho_graph *g, struct ho_node *nd,
			  const Onnx__AttributeProto *ap, struct ho_attr *at, int depth)
{
	struct ho_arena *a = im->arena;
	size_t n;

	at->name = ho_arena_strdup(a, ap->name);
	at->type = ap->has_type ? (int)ap->type : HO_ATTR_UNDEFINED;
	if (!at->name)
		return ho_err(im->err, -ENOMEM, "out of memory");
	if (ap->ref_attr_name && *ap->ref_attr_name)
		return ho_err(im->err, -ENOTSUP,
			      "node '%s': attribute '%s' refers to a function attribute", nd->name,
			      at->name);
	switch (at->type) {
	case HO_ATTR_FLOAT:
		at->f = ap->f;
		break;
	case HO_ATTR_INT:
		at->i = ap->i;
		break;
	case HO_ATTR_STRING:
		at->s = ho_arena_strndup(a, (const char *)ap->s.data, ap->s.len);
		at->s_len = ap->s.len;
		if (!at->s)
			return ho_err(im->err, -ENOMEM, "out of memory");
		break;
	case HO_ATTR_FLOATS:
		at->n = ap->n_floats;
		at->floats = ho_arena_alloc(a, (at->n ? at->n : 1) * sizeof(double));
		if (!at->floats)
			return ho_err(im->err, -ENOMEM, "out of memory");
		for (size_t k = 0; k < at->n; k++)
			at->floats[k] = ap->floats[k];
		break;
	case HO_ATTR_INTS:
		at->n = ap->n_ints;
		at->ints = ap->ints; /* lives as long as the decoded model */
		break;
	case HO_ATTR_STRINGS:
		at->n = ap->n_strings;
		at->strings = ho_arena_calloc(a, at->n ? at->n : 1, sizeof(char *));
		if (!at->strings)
			return ho_err(im->err, -ENOMEM, "out of memory");
		for (size_t k = 0; k < at->n; k++) {
			at->strings[k] = ho_arena_strndup(a, (const char *)ap->strings[k].data,
							  ap->strings[k].len);
			if (!at->strings[k])
				return ho_err(im->err, -ENOMEM, "out of memory");
		}
		break;
	case HO_ATTR_TENSOR:
	case HO_ATTR_TENSORS:
		n = at->type == HO_ATTR_TENSOR ? (ap->t ? 1 : 0) : ap->n_tensors;
		if (!n && at->type == HO_ATTR_TENSOR)
			return ho_err(im->err, -EINVAL,
				      "node '%s': tensor attribute '%s' has no tensor", nd->name,
				      at->name);
		at->n = n;
		at->t = ho_arena_calloc(a, n ? n : 1, sizeof(*at->t));
		if (!at->t)
			return ho_err(im->err, -ENOMEM, "out of memory");
		for (size_t k = 0; k < n; k++) {
			const Onnx__TensorProto *tp =
			    at->type == HO_ATTR_TENSOR ? ap->t : ap->tensors[k];
			int ret = ho_tensor_bytes(im, tp, &at->t[k]);

			if (ret)
				return ret;
		}
		break;
	case HO_ATTR_GRAPH:
	case HO_ATTR_GRAPHS:
		n = at->type == HO_ATTR_GRAPH ? (ap->g ? 1 : 0) : ap->n_graphs;
		if (!n && at->type == HO_ATTR_GRAPH)
			return ho_err(im->err, -EINVAL,
				      "node '%s': graph attribute '%s' has no graph", nd->name,
				      at->name);
		if (depth >= HO_MAX_SUBGRAPH_DEPTH)
			return ho_err(im->err, -ELOOP, "node '%s': subgraphs nested deeper than %d",
				      nd->name, HO_MAX_SUBGRAPH_DEPTH);
		at->n = n;
		at->g = ho_arena_calloc(a, n ? n : 1, sizeof(*at->g));
		if (!at->g)
			return ho_err(im->err, -ENOMEM, "out of memory");
		for (size_t k = 0; k < n; k++) {
			const Onnx__GraphProto *sub =
			    at->type == HO_ATTR_GRAPH ? ap->g : ap->graphs[k];
			int ret = ho_import_graph(im, sub, g, depth + 1, &at->g[k]);

			if (ret)
				return ret;
			nd->n_subgraphs++;
		}
		break;
	default:
		/* Sparse tensors and type protos: kept by name only. */
		break;
	}
	return 0;
}

/* Collect the outer tensors a node's subgraphs read, as implicit inputs. */
static int ho_collect_implicit(struct ho_import *im, struct ho_graph *g, struct ho_node *nd)
{
	uint32_t cap = 0, k = 0;

	for (uint32_t s = 0; s < nd->n_subgraphs; s++)
		cap += nd->subgraphs[s]->n_tensors;
	nd->implicit = ho_arena_alloc(im->arena, (cap ? cap : 1) * sizeof(int32_t));
	if (!nd->implicit)
		return ho_err(im->err, -ENOMEM, "out of memory");
	for (uint32_t s = 0; s < nd->n_subgraphs; s++) {
		const struct ho_graph *sg = nd->subgraphs[s];

		for (uint32_t t = 0; t < sg->n_tensors; t++) {
			int32_t id = sg->tensors[t].outer;
			bool seen = false;

			if (!(sg->tensors[t].flags & HO_T_OUTER))
				continue;
			for (uint32_t j = 0; j < k && !seen; j++)
				seen = nd->implicit[j] == id;
			if (!seen)
				nd->implicit[k++] = id;
		}
	}
	(void)g;
	nd->n_implicit = k;
	return 0;
}

static int ho_import_node(struct ho_import *im, struct ho_graph *g, const Onnx__NodeProto *np,
			  uint32_t idx, int depth)
{
	struct ho_node *nd = &g->nodes[idx];
	struct ho_arena *a = im->arena;
	int ret;

	nd->inputs = ho_arena_alloc(a, (np->n_input ? np->n_input : 1) * sizeof(int32_t));
	nd->attrs = ho_arena_calloc(a, np->n_attribute ? np->n_attribute : 1, sizeof(*nd->attrs));
	nd->subgraphs = NULL;
	if (!nd->inputs || !nd->attrs)
		return ho_err(im->err, -ENOMEM, "out of memory");
	nd->n_inputs = (uint32_t)np->n_input;
	for (size_t k = 0; k < np->n_input; k++) {
		const char *in = np->input[k];
		int32_t id;

		if (!in || !*in) {
			nd->inputs[k] = -1;
			continue;
		}
		id = ho_resolve(im, g, in);
		if (id < -1)
			return id;
		if (id < 0) {
			/* Unknown source: validation names it as dangling. */
			id = ho_graph_add_tensor(g, in, im->err);
			if (id < 0)
				return id;
		}
		nd->inputs[k] = id;
	}
	for (size_t k = 0; k < np->n_attribute; k++) {
		const Onnx__AttributeProto *ap = np->attribute[k];

		if (ap->g || ap->n_graphs) {
			uint32_t more = ap->g ? 1 : (uint32_t)ap->n_graphs;
			struct ho_graph **sg =
			    ho_arena_calloc(a, nd->n_subgraphs + more, sizeof(*sg));

			if (!sg)
				return ho_err(im->err, -ENOMEM, "out of memory");
			if (nd->n_subgraphs)
				memcpy(sg, nd->subgraphs, nd->n_subgraphs * sizeof(*sg));
			nd->subgraphs = sg;
		}
		ret = ho_import_attr(im, g, nd, ap, &nd->attrs[k], depth);
		if (ret)
			return ret;
		nd->n_attrs++;
		if (nd->attrs[k].type == HO_ATTR_GRAPH || nd->attrs[k].type == HO_ATTR_GRAPHS)
			for (size_t s = 0; s < nd->attrs[k].n; s++)
				nd->subgraphs[nd->n_subgraphs - nd->attrs[k].n + s] =
				    nd->attrs[k].g[s];
	}
	if (nd->n_subgraphs) {
		nd->flags |= HO_N_COMPOSITE;
		ret = ho_collect_implicit(im, g, nd);
		if (ret)
			return ret;
	}

	/* Constant: its output carries the data, like an initializer. */
	if (!strcmp(nd->op_type, "Constant") && !*nd->domain && nd->n_outputs == 1 &&
	    nd->outputs[0] >= 0) {
		struct ho_tensor *t = &g->tensors[nd->outputs[0]];
		const struct ho_attr *at = nd->n_attrs == 1 ? &nd->attrs[0] : NULL;

		if (!at)
			return ho_err(im->err, -EINVAL,
				      "node '%s' (Constant): needs exactly one attribute",
				      nd->name);
		t->flags |= HO_T_CONSTANT;
		if (at->type == HO_ATTR_TENSOR) {
			t->dtype = at->t[0].dtype;
			t->shape = at->t[0].shape;
			t->data = at->t[0].data;
			t->data_len = at->t[0].len;
		} else if (!strcmp(at->name, "value_float") || !strcmp(at->name, "value_int")) {
			double *f = ho_arena_alloc(a, 8);

			if (!f)
				return ho_err(im->err, -ENOMEM, "out of memory");
			t->shape.rank = 0;
			if (at->type == HO_ATTR_FLOAT) {
				float v = (float)at->f;

				t->dtype = HO_DT_FLOAT;
				memcpy(f, &v, 4);
				t->data_len = 4;
			} else {
				t->dtype = HO_DT_INT64;
				memcpy(f, &at->i, 8);
				t->data_len = 8;
			}
			t->data = f;
		} else if (!strcmp(at->name, "value_floats") || !strcmp(at->name, "value_ints")) {
			bool fl = at->type == HO_ATTR_FLOATS;
			unsigned char *buf = ho_arena_alloc(a, (at->n ? at->n : 1) * (fl ? 4 : 8));

			if (!buf)
				return ho_err(im->err, -ENOMEM, "out of memory");
			for (size_t k = 0; k < at->n; k++) {
				if (fl) {
					float v = (float)at->floats[k];

					memcpy(buf + 4 * k, &v, 4);
				} else {
					memcpy(buf + 8 * k, &at->ints[k], 8);
				}
			}
			t->dtype = fl ? HO_DT_FLOAT : HO_DT_INT64;
			t->shape.rank = 1;
			t->shape.dim[0] = (int64_t)at->n;
			t->data = buf;
			t->data_len = at->n * (fl ? 4 : 8);
		} else if (!strcmp(at->name, "value_string") ||
			   !strcmp(at->name, "value_strings")) {
			const char **p = ho_arena_alloc(a, (at->n + 1) * sizeof(*p));

			if (!p)
				return ho_err(im->err, -ENOMEM, "out of memory");
			t->dtype = HO_DT_STRING;
			t->shape.rank = at->type == HO_ATTR_STRING ? 0 : 1;
			t->shape.dim[0] = (int64_t)at->n;
			if (at->type == HO_ATTR_STRING)
				p[0] = at->s;
			else
				memcpy(p, at->strings, at->n * sizeof(*p));
			t->data = p;
			t->data_len = (at->type == HO_ATTR_STRING ? 1 : at->n) * sizeof(*p);
		} else {
			return ho_err(im->err, -ENOTSUP,
				      "node '%s' (Constant): attribute '%s' not supported",
				      nd->name, at->name);
		}
	}
	return 0;
}

static int ho_import_graph(struct ho_import *im, const Onnx__GraphProto *gp,
			   struct ho_graph *parent, int depth, struct ho_graph **out)
{
	struct ho_arena *a = im->arena;
	uint32_t cap_n, cap_t;
	struct ho_graph *g;
	int ret;

	if (!parent) {
		g = im->root; /* sized by ho_onnx_load_buffer */
	} else {
		if (ho_graph_caps(gp, depth, &cap_n, &cap_t))
			return ho_err(im->err, -EOVERFLOW, "graph too large");
		g = ho_graph_new(a, cap_n, cap_t, im->err);
		if (!g)
			return im->err->code;
		g->parent = parent;
	}
	g->name = ho_arena_strdup(a, gp->name);
	if (!g->name)
		return ho_err(im->err, -ENOMEM, "out of memory");

	/* Graph inputs. */
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		int32_t id;

		if (!vi->name || !*vi->name)
			return ho_err(im->err, -EINVAL, "graph '%s': input %zu has no name",
				      g->name, i);
		id = ho_graph_add_tensor(g, vi->name, im->err);
		if (id < 0)
			return id;
		g->tensors[id].flags |= HO_T_INPUT | HO_T_DECLARED;
		if (depth == 0 && (ret = ho_boundary_tensor(im, "input", vi)))
			return ret;
		ret = ho_type_shape(im, vi->name, vi->type, &g->tensors[id].dtype,
				    &g->tensors[id].shape);
		if (ret)
			return ret;
		g->tensors[id].decl = g->tensors[id].shape;
	}

	/* Initializers; an old-style model also lists them as inputs. */
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		struct ho_const c;
		struct ho_tensor *t;
		int32_t id;

		if (!tp->name || !*tp->name)
			return ho_err(im->err, -EINVAL, "graph '%s': initializer %zu has no name",
				      g->name, i);
		ret = ho_tensor_bytes(im, tp, &c);
		if (ret)
			return ret;
		id = ho_graph_find_tensor(g, tp->name);
		if (id >= 0) {
			t = &g->tensors[id];
			if ((t->flags & HO_T_INITIALIZER) || !(t->flags & HO_T_INPUT))
				return ho_err(im->err, -EEXIST, "tensor '%s' is defined twice",
					      tp->name);
			if (ho_shapes_conflict(&t->decl, &c.shape) ||
			    (t->dtype && t->dtype != c.dtype)) {
				char s1[96], s2[96];

				ho_format_shape(&c.shape, s1, sizeof(s1));
				ho_format_shape(&t->decl, s2, sizeof(s2));
				return ho_err(
				    im->err, -EINVAL,
				    "initializer '%s' is %s %s, but the graph input of that name "
				    "declares %s %s",
				    tp->name, ho_dtype_name(c.dtype), s1, ho_dtype_name(t->dtype),
				    s2);
			}
			t->flags &= ~HO_T_INPUT;
		} else {
			id = ho_graph_add_tensor(g, tp->name, im->err);
			if (id < 0)
				return id;
			t = &g->tensors[id];
		}
		t->flags |= HO_T_INITIALIZER;
		t->dtype = c.dtype;
		t->shape = c.shape;
		t->data = c.data;
		t->data_len = c.len;
	}

	/* Nodes, first their outputs so that any order of definition resolves. */
	g->n_nodes = (uint32_t)gp->n_node;
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		struct ho_node *nd = &g->nodes[i];
		char gen[64];

		if (!np->op_type || !*np->op_type)
			return ho_err(im->err, -EINVAL, "graph '%s': node %zu has no op_type",
				      g->name, i);
		nd->op_type = ho_arena_strdup(a, np->op_type);
		nd->domain = ho_arena_strdup(
		    a, np->domain && strcmp(np->domain, "ai.onnx") ? np->domain : "");
		if (np->name && *np->name) {
			nd->name = ho_arena_strdup(a, np->name);
		} else {
			snprintf(gen, sizeof(gen), "%.40s_%zu", np->op_type, i);
			nd->name = ho_arena_strdup(a, gen);
		}
		nd->outputs =
		    ho_arena_alloc(a, (np->n_output ? np->n_output : 1) * sizeof(int32_t));
		if (!nd->op_type || !nd->domain || !nd->name || !nd->outputs)
			return ho_err(im->err, -ENOMEM, "out of memory");
		nd->opset = ho_domain_opset(im, nd->domain);
		if (!*nd->domain && nd->opset < 1)
			return ho_err(im->err, -EINVAL,
				      "node '%s' (%s): the model imports no opset of the default "
				      "ONNX domain",
				      nd->name, nd->op_type);
		nd->n_outputs = (uint32_t)np->n_output;
		for (size_t k = 0; k < np->n_output; k++) {
			int32_t id;

			if (!np->output[k] || !*np->output[k]) {
				nd->outputs[k] = -1;
				continue;
			}
			id = ho_graph_find_tensor(g, np->output[k]);
			if (id >= 0)
				return ho_err(im->err, -EEXIST,
					      "tensor '%s' is defined twice (again by node '%s')",
					      np->output[k], nd->name);
			id = ho_graph_add_tensor(g, np->output[k], im->err);
			if (id < 0)
				return id;
			g->tensors[id].producer = (int32_t)i;
			nd->outputs[k] = id;
		}
	}
	for (size_t i = 0; i < gp->n_node; i++) {
		ret = ho_import_node(im, g, gp->node[i], (uint32_t)i, depth);
		if (ret)
			return ret;
	}

	/* Graph outputs and declared intermediate shapes. */
	g->outputs = ho_arena_alloc(a, (gp->n_output ? gp->n_output : 1) * sizeof(int32_t));
	if (!g->outputs)
		return ho_err(im->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < gp->n_output + gp->n_value_info; i++) {
		bool is_out = i < gp->n_output;
		const Onnx__ValueInfoProto *vi =
		    is_out ? gp->output[i] : gp->value_info[i - gp->n_output];
		struct ho_tensor *t;
		int32_t id;
		int dt;

		if (!vi->name || !*vi->name)
			return ho_err(im->err, -EINVAL,
				      "graph '%s': output or value_info without a name", g->name);
		if (is_out && depth == 0 && (ret = ho_boundary_tensor(im, "output", vi)))
			return ret;
		id = ho_resolve(im, g, vi->name);
		if (id < -1)
			return id;
		if (id < 0) {
			if (!is_out)
				continue; /* annotation of a tensor that does not exist: harmless */
			return ho_err(
			    im->err, -EINVAL,
			    "graph output '%s' is not produced by any node, initializer or input",
			    vi->name);
		}
		t = &g->tensors[id];
		if (is_out) {
			t->flags |= HO_T_OUTPUT;
			g->outputs[g->n_outputs++] = id;
		}
		if (t->flags & HO_T_INPUT)
			continue;
		ret = ho_type_shape(im, vi->name, vi->type, &dt, &t->decl);
		if (ret)
			return ret;
		if (t->decl.rank >= 0)
			t->flags |= HO_T_DECLARED;
		/* the type it is declared of, until inference gives it its own (widen.c asks) */
		if (is_out && t->dtype == HO_DT_UNDEFINED && !(t->flags & HO_T_KNOWN))
			t->dtype = dt;
	}

	g->inputs = ho_arena_alloc(a, (gp->n_input ? gp->n_input : 1) * sizeof(int32_t));
	if (!g->inputs)
		return ho_err(im->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < gp->n_input; i++) {
		int32_t id = ho_graph_find_tensor(g, gp->input[i]->name);

		if (id >= 0 && (g->tensors[id].flags & HO_T_INPUT))
			g->inputs[g->n_inputs++] = id;
	}

	ret = ho_graph_validate(g, im->err);
	if (!ret)
		ret = ho_check_quant_scales(g, im->err);
	if (ret)
		return ret;
	*out = g;
	return 0;
}

int ho_onnx_load_buffer(const void *buf, size_t len, const struct ho_load_opts *opts,
			struct ho_graph **out, struct ho_error *err)
{
	struct ho_error local;
	struct ho_import im = {.err = err ? err : &local, .base_dir = opts ? opts->base_dir : NULL};
	Onnx__ModelProto *m;
	struct ho_graph *g, *dummy;
	uint32_t cap_n, cap_t;
	int ret;

	*out = NULL;
	err = im.err;
	if (len == 0)
		return ho_err(err, -EINVAL, "not an ONNX model: the file is empty");
	ret = ho_check_nesting(buf, len, err);
	if (ret)
		return ret;
	m = onnx__model_proto__unpack(NULL, len, buf);
	if (!m)
		return ho_err(
		    err, -EINVAL,
		    "not an ONNX model: protobuf decoding failed (truncated or corrupt file)");
	if (!m->graph) {
		onnx__model_proto__free_unpacked(m, NULL);
		return ho_err(err, -EINVAL, "not an ONNX model: it has no graph");
	}
	if (!m->has_ir_version || m->ir_version < 1) {
		onnx__model_proto__free_unpacked(m, NULL);
		return ho_err(err, -EINVAL, "not an ONNX model: it has no ir_version");
	}
	if (ho_graph_caps(m->graph, 0, &cap_n, &cap_t)) {
		onnx__model_proto__free_unpacked(m, NULL);
		return ho_err(err, -EOVERFLOW, "graph too large");
	}
	g = ho_graph_new(NULL, cap_n, cap_t, err);
	if (!g) {
		onnx__model_proto__free_unpacked(m, NULL);
		return err->code;
	}
	g->priv->model = m;
	g->priv->release_model = ho_onnx_release_model;
	im.arena = g->priv->arena;
	im.model = m;
	im.root = g;
	g->ir_version = m->ir_version;
	g->producer = ho_arena_strdup(im.arena, m->producer_name);
	g->n_opsets = (uint32_t)m->n_opset_import;
	g->opsets = ho_arena_calloc(im.arena, g->n_opsets ? g->n_opsets : 1, sizeof(*g->opsets));
	if (!g->producer || !g->opsets) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < g->n_opsets; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		g->opsets[i].domain = ho_arena_strdup(im.arena, o->domain);
		g->opsets[i].version = o->has_version ? o->version : 1;
		if (!g->opsets[i].domain) {
			ret = ho_err(err, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	if (ho_domain_opset(&im, "") < 1 && !ho_imports_known_domain(g)) {
		/* a model of another domain only is an ONNX model all the same */
		if (g->n_opsets && *g->opsets[0].domain)
			ret = ho_err(err, -EINVAL,
				     "it imports no opset of the default ONNX domain (first '%s', "
				     "version %lld): only default-domain operators are run",
				     g->opsets[0].domain, (long long)g->opsets[0].version);
		else
			ret = ho_err(err, -EINVAL,
				     "not an ONNX model: no opset is imported for the default "
				     "domain");
		goto fail;
	}
	ret = ho_import_graph(&im, m->graph, NULL, 0, &dummy);
	if (!ret)
		ret = ho_graph_widen_half(g, err);
	if (!ret)
		ret = ho_graph_fold_patterns(g, err);
	if (ret)
		goto fail;
	*out = g;
	return 0;
fail:
	ho_graph_free(g);
	return ret;
}

int ho_onnx_load(const char *path, const struct ho_load_opts *opts, struct ho_graph **out,
		 struct ho_error *err)
{
	struct ho_load_opts o = {0};
	char dir[PATH_MAX];
	struct stat st;
	void *map;
	int fd, ret;

	*out = NULL;
	if (opts)
		o = *opts;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ho_err(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		ret = ho_err(err, -errno, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return ho_err(err, -EINVAL, "%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return ho_err(err, -EINVAL, "%s: not an ONNX model: the file is empty", path);
	}
	if ((uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return ho_err(err, -EFBIG, "%s: file too large", path);
	}
	/* Map rather than read: the pages are dropped as soon as decoding is done. */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return ho_err(err, -errno, "%s: mmap: %s", path, strerror(errno));
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	if (!o.base_dir) {
		const char *slash = strrchr(path, '/');

		if (!slash) {
			strcpy(dir, ".");
		} else {
			size_t n = (size_t)(slash - path);

			if (n >= sizeof(dir))
				n = sizeof(dir) - 1;
			memcpy(dir, path, n);
			dir[n ? n : 1] = '\0';
			if (!n)
				dir[0] = '/';
		}
		o.base_dir = dir;
	}
	ret = ho_onnx_load_buffer(map, (size_t)st.st_size, &o, out, err);
	munmap(map, (size_t)st.st_size);
	if (ret && err && strncmp(err->msg, path, strlen(path))) {
		char tmp[sizeof(err->msg) + PATH_MAX + 4];

		snprintf(tmp, sizeof(tmp), "%s: %s", path, err->msg);
		snprintf(err->msg, sizeof(err->msg), "%.*s", (int)sizeof(err->msg) - 1, tmp);
	}
	return ret;
}

int ho_onnx_tensor_read(const char *path, struct ho_const *out, char *name, size_t len,
			struct ho_error *err)
{
	struct ho_arena arena = {0};
	struct ho_import im = {.arena = &arena, .err = err};
	Onnx__TensorProto *tp = NULL;
	uint8_t *buf = NULL;
	struct stat st;
	void *data = NULL;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	if (len)
		name[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ho_err(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (1 << 30)) {
		close(fd);
		return ho_err(err, -EINVAL, "%s: not a tensor file", path);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size) {
		ret = ho_err(err, buf ? -EIO : -ENOMEM, "%s: cannot read it", path);
		goto out;
	}
	if ((ret = ho_check_nesting(buf, (size_t)st.st_size, err)))
		goto out;
	tp = onnx__tensor_proto__unpack(NULL, (size_t)st.st_size, buf);
	if (!tp) {
		ret = ho_err(err, -EINVAL, "%s: not a TensorProto", path);
		goto out;
	}
	if ((ret = ho_tensor_bytes(&im, tp, out))) {
		ho_err(err, ret, "%s: %s", path, err->msg);
		goto out;
	}
	if (out->dtype == HO_DT_STRING) /* the strings' bytes too: the arena goes */
		data = ho_strings_copy(out->data, out->len / sizeof(char *), NULL);
	else if (out->len && (data = malloc(out->len)))
		memcpy(data, out->data, out->len);
	if (out->len && !data) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	out->data = data;
	if (len && tp->name)
		snprintf(name, len, "%s", tp->name);
out:
	if (ret)
		memset(out, 0, sizeof(*out));
	if (tp)
		onnx__tensor_proto__free_unpacked(tp, NULL);
	ho_arena_release(&arena);
	free(buf);
	close(fd);
	return ret;
}
