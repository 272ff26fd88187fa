// SPDX-License-Identifier: MIT
/*
 * Small ONNX models built in memory, the probes' kernels: each is packed
 * with protobuf-c and read back through the ONNX importer, so a probe runs
 * exactly what a model's node runs (import, shape inference, the runtime's
 * plan and kernels), never a kernel called by hand.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "probe_priv.h"

#define PB_NODES 80
#define PB_ATTRS 6
#define PB_VALUES 16 /* inputs, outputs, weights each */
#define PB_NAME 32

struct pb_value {
	char name[PB_NAME];
	int64_t dims[HO_MAX_RANK];
	int rank;
	Onnx__ValueInfoProto vi;
	Onnx__TypeProto type;
	Onnx__TypeProto__Tensor tensor;
	Onnx__TensorShapeProto shape;
	Onnx__TensorShapeProto__Dimension dim[HO_MAX_RANK], *dim_p[HO_MAX_RANK];
	Onnx__TensorProto init;
	void *data;
};

struct pb_node {
	char op[PB_NAME], name[PB_NAME];
	char in[5][PB_NAME], out[PB_NAME];
	char *in_p[5], *out_p[1];
	Onnx__NodeProto proto;
	Onnx__AttributeProto attr[PB_ATTRS], *attr_p[PB_ATTRS];
	char attr_name[PB_ATTRS][PB_NAME];
	int64_t ints[PB_ATTRS][HO_MAX_RANK * 2];
};

struct ho_pb {
	struct pb_value in[PB_VALUES], out[PB_VALUES], w[PB_VALUES];
	uint32_t n_in, n_out, n_w, n_nodes;
	struct pb_node node[PB_NODES];
	uint64_t rng;
};

struct ho_pb *ho_pb_new(uint64_t seed)
{
	struct ho_pb *pb = calloc(1, sizeof(*pb));

	if (pb)
		pb->rng = seed | 1;
	return pb;
}

void ho_pb_free(struct ho_pb *pb)
{
	if (!pb)
		return;
	for (uint32_t i = 0; i < pb->n_w; i++)
		free(pb->w[i].data);
	free(pb);
}

static struct pb_value *pb_value(struct pb_value *v, uint32_t *n, const char *name, int rank,
				 const int64_t *dims)
{
	struct pb_value *x;

	if (*n == PB_VALUES || rank > HO_MAX_RANK)
		return NULL;
	x = &v[(*n)++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->rank = rank;
	if (rank) /* an output has no dims: memcpy must not see its NULL */
		memcpy(x->dims, dims, (size_t)rank * sizeof(*dims));
	return x;
}

int ho_pb_input(struct ho_pb *pb, const char *name, int rank, const int64_t *dims)
{
	return pb_value(pb->in, &pb->n_in, name, rank, dims) ? 0 : -ENOSPC;
}

int ho_pb_output(struct ho_pb *pb, const char *name)
{
	return pb_value(pb->out, &pb->n_out, name, 0, NULL) ? 0 : -ENOSPC;
}

/* Weights of small random values, as trained ones are: no denormals, no overflow. */
int ho_pb_weight(struct ho_pb *pb, const char *name, int rank, const int64_t *dims)
{
	struct pb_value *x = pb_value(pb->w, &pb->n_w, name, rank, dims);
	size_t n = 1;
	float *f;

	if (!x)
		return -ENOSPC;
	for (int i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	f = malloc(n * sizeof(float) + 1);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		pb->rng = pb->rng * 6364136223846793005ull + 1442695040888963407ull;
		f[i] = (float)((double)(pb->rng >> 40) / (double)(1ull << 24) - 0.5) * 0.2f;
	}
	x->data = f;
	x->init.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	x->init.raw_data.len = n * sizeof(float);
	return 0;
}

int ho_pb_weight_i64(struct ho_pb *pb, const char *name, int count, const int64_t *values)
{
	int64_t dims[1] = {count};
	struct pb_value *x = pb_value(pb->w, &pb->n_w, name, 1, dims);

	if (!x)
		return -ENOSPC;
	x->data = malloc((size_t)count * sizeof(int64_t) + 1);
	if (!x->data)
		return -ENOMEM;
	memcpy(x->data, values, (size_t)count * sizeof(int64_t));
	x->init.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	x->init.raw_data.len = (size_t)count * sizeof(int64_t);
	return 0;
}

int ho_pb_node(struct ho_pb *pb, const char *op, const char *inputs, const char *output)
{
	struct pb_node *n;
	const char *at = inputs;
	uint32_t k = 0;

	if (pb->n_nodes == PB_NODES)
		return -ENOSPC;
	n = &pb->node[pb->n_nodes];
	snprintf(n->op, sizeof(n->op), "%s", op);
	snprintf(n->name, sizeof(n->name), "%s_%u", op, pb->n_nodes);
	snprintf(n->out, sizeof(n->out), "%s", output);
	/* "x,,scales": an empty name is an omitted optional input, as in ONNX */
	while (k < 5) {
		size_t len = strcspn(at, ",");

		snprintf(n->in[k++], PB_NAME, "%.*s", (int)len, at);
		if (!at[len])
			break;
		at += len + 1;
	}
	onnx__node_proto__init(&n->proto);
	n->proto.n_input = k;
	return (int)pb->n_nodes++;
}

int ho_pb_main(struct ho_pb *pb, int node)
{
	snprintf(pb->node[node].name, PB_NAME, "main");
	return 0;
}

static Onnx__AttributeProto *pb_attr(struct ho_pb *pb, int node, const char *name)
{
	struct pb_node *n = &pb->node[node];
	Onnx__AttributeProto *a;

	if (n->proto.n_attribute == PB_ATTRS)
		return NULL;
	a = &n->attr[n->proto.n_attribute];
	onnx__attribute_proto__init(a);
	snprintf(n->attr_name[n->proto.n_attribute], PB_NAME, "%s", name);
	a->name = n->attr_name[n->proto.n_attribute];
	n->attr_p[n->proto.n_attribute++] = a;
	return a;
}

int ho_pb_attr_int(struct ho_pb *pb, int node, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = pb_attr(pb, node, name);

	if (!a)
		return -ENOSPC;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = v;
	return 0;
}

int ho_pb_attr_float(struct ho_pb *pb, int node, const char *name, float v)
{
	Onnx__AttributeProto *a = pb_attr(pb, node, name);

	if (!a)
		return -ENOSPC;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	a->has_f = 1;
	a->f = v;
	return 0;
}

int ho_pb_attr_ints(struct ho_pb *pb, int node, const char *name, int n, const int64_t *v)
{
	struct pb_node *nd = &pb->node[node];
	Onnx__AttributeProto *a;

	if (n > HO_MAX_RANK * 2 || !(a = pb_attr(pb, node, name)))
		return -ENOSPC;
	memcpy(nd->ints[nd->proto.n_attribute - 1], v, (size_t)n * sizeof(*v));
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = (size_t)n;
	a->ints = nd->ints[nd->proto.n_attribute - 1];
	return 0;
}

/* Wire a value's protobuf structs to its own storage. */
static void pb_value_info(struct pb_value *x, bool shaped)
{
	onnx__value_info_proto__init(&x->vi);
	onnx__type_proto__init(&x->type);
	onnx__type_proto__tensor__init(&x->tensor);
	x->vi.name = x->name;
	x->vi.type = &x->type;
	x->type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	x->type.tensor_type = &x->tensor;
	x->tensor.has_elem_type = 1;
	x->tensor.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	if (!shaped)
		return;
	onnx__tensor_shape_proto__init(&x->shape);
	for (int i = 0; i < x->rank; i++) {
		onnx__tensor_shape_proto__dimension__init(&x->dim[i]);
		x->dim[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		x->dim[i].dim_value = x->dims[i];
		x->dim_p[i] = &x->dim[i];
	}
	x->shape.n_dim = (size_t)x->rank;
	x->shape.dim = x->dim_p;
	x->tensor.shape = &x->shape;
}

int ho_pb_load(struct ho_pb *pb, struct ho_graph **out, struct ho_error *err)
{
	Onnx__ModelProto model;
	Onnx__GraphProto graph;
	Onnx__OperatorSetIdProto opset, *opset_p[1] = {&opset};
	Onnx__NodeProto *node_p[PB_NODES];
	Onnx__ValueInfoProto *in_p[PB_VALUES], *out_p[PB_VALUES];
	Onnx__TensorProto *w_p[PB_VALUES];
	uint8_t *buf;
	size_t len;
	int ret;

	onnx__model_proto__init(&model);
	onnx__graph_proto__init(&graph);
	onnx__operator_set_id_proto__init(&opset);
	opset.has_version = 1;
	opset.version = 17;
	model.has_ir_version = 1;
	model.ir_version = 8;
	model.n_opset_import = 1;
	model.opset_import = opset_p;
	model.graph = &graph;
	graph.name = "probe";
	for (uint32_t i = 0; i < pb->n_nodes; i++) {
		struct pb_node *n = &pb->node[i];

		for (uint32_t k = 0; k < n->proto.n_input; k++)
			n->in_p[k] = n->in[k];
		n->out_p[0] = n->out;
		n->proto.input = n->in_p;
		n->proto.n_output = 1;
		n->proto.output = n->out_p;
		n->proto.op_type = n->op;
		n->proto.name = n->name;
		n->proto.attribute = n->attr_p;
		node_p[i] = &n->proto;
	}
	for (uint32_t i = 0; i < pb->n_in; i++) {
		pb_value_info(&pb->in[i], true);
		in_p[i] = &pb->in[i].vi;
	}
	for (uint32_t i = 0; i < pb->n_out; i++) {
		pb_value_info(&pb->out[i], false);
		out_p[i] = &pb->out[i].vi;
	}
	for (uint32_t i = 0; i < pb->n_w; i++) {
		struct pb_value *x = &pb->w[i];
		int32_t type = x->init.data_type;
		size_t raw = x->init.raw_data.len;

		onnx__tensor_proto__init(&x->init);
		x->init.name = x->name;
		x->init.has_data_type = 1;
		x->init.data_type = type;
		x->init.n_dims = (size_t)x->rank;
		x->init.dims = x->dims;
		x->init.has_raw_data = 1;
		x->init.raw_data.len = raw;
		x->init.raw_data.data = x->data;
		w_p[i] = &x->init;
	}
	graph.n_node = pb->n_nodes;
	graph.node = node_p;
	graph.n_input = pb->n_in;
	graph.input = in_p;
	graph.n_output = pb->n_out;
	graph.output = out_p;
	graph.n_initializer = pb->n_w;
	graph.initializer = w_p;
	len = onnx__model_proto__get_packed_size(&model);
	buf = malloc(len + 1);
	if (!buf)
		return ho_err(err, -ENOMEM, "probe: out of memory");
	onnx__model_proto__pack(&model, buf);
	ret = ho_onnx_load_buffer(buf, len, NULL, out, err);
	free(buf);
	return ret;
}
