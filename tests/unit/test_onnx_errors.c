// SPDX-License-Identifier: MIT
/*
 * Bad input to the ONNX front end: every malformed model gets an error that
 * names the problem (node, tensor or field) and the loader never crashes.
 * Run under ASan/LSan by the test runner, which also catches leaks.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "heteroopt/graph.h"
#include "test_util.h"

/* Load and infer; return the error code (0 = accepted). */
static int load_infer(const char *path, const char *bind, struct ho_error *err)
{
	struct ho_graph *g = NULL;
	int ret;

	memset(err, 0, sizeof(*err));
	ret = ho_onnx_load(path, NULL, &g, err);
	if (!ret && bind) {
		char name[64];
		int64_t dims[HO_MAX_RANK];
		int rank;

		ret = ho_parse_shape_arg(bind, name, sizeof(name), dims, &rank, err);
		if (!ret)
			ret = ho_graph_bind_input(g, name, dims, rank, err);
	}
	if (!ret)
		ret = ho_shape_infer(g, err);
	ho_graph_free(g);
	return ret;
}

static void expect_error(const char *model, const char *bind, const char *needle)
{
	char path[4096];
	struct ho_error err;
	int ret;

	if (t_model_path(path, sizeof(path), model)) {
		t_model_skipped(model);
		return;
	}
	ret = load_infer(path, bind, &err);
	T_CHECK(ret < 0, "%s: accepted, expected an error containing '%s'", model, needle);
	T_CHECK(strstr(err.msg, needle) != NULL, "%s: error '%s' does not mention '%s'", model,
		err.msg, needle);
	T_CHECK(strchr(err.msg, '\n') == NULL, "%s: error is not one line", model);
	T_CHECK(err.code == ret, "%s: err.code %d != return %d", model, err.code, ret);
	printf("  %-32s -> %s\n", model, err.msg);
}

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Every prefix of a real model is either refused cleanly or (rarely) a valid model. */
static void truncations(void)
{
	char path[4096];
	size_t len, refused = 0, tried = 0;
	unsigned char *buf;

	if (t_model_path(path, sizeof(path), "squeezenet1_1.onnx"))
		return;
	buf = read_file(path, &len);
	T_CHECK(buf != NULL, "cannot read %s", path);
	if (!buf)
		return;
	for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
		struct ho_graph *g = NULL;
		struct ho_error err = {0};
		int ret = ho_onnx_load_buffer(buf, cut, NULL, &g, &err);

		tried++;
		if (ret) {
			refused++;
			T_CHECK(err.msg[0] != '\0', "truncation at %zu: empty error", cut);
		} else {
			ret = ho_shape_infer(g, &err);
			ho_graph_free(g);
		}
	}
	/* A cut inside a message can never decode. */
	T_CHECK(refused >= tried - 2, "only %zu of %zu truncations refused", refused, tried);
	printf("  truncations: %zu of %zu prefixes refused with an error\n", refused, tried);
	free(buf);
}

static void random_bytes(void)
{
	unsigned int seed = 12345;
	unsigned char buf[4096];
	int refused = 0;

	for (int iter = 0; iter < 2000; iter++) {
		size_t len = (size_t)(rand_r(&seed) % (int)sizeof(buf));
		struct ho_graph *g = NULL;
		struct ho_error err = {0};

		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)rand_r(&seed);
		if (ho_onnx_load_buffer(buf, len, NULL, &g, &err)) {
			refused++;
			T_CHECK(err.msg[0] != '\0', "random input %d: empty error", iter);
		} else {
			ho_shape_infer(g, &err);
			ho_graph_free(g);
		}
	}
	printf("  random bytes: %d of 2000 refused\n", refused);
	T_CHECK(refused > 1900, "random bytes accepted too often (%d refused)", refused);
}

int main(void)
{
	char path[4096];
	struct ho_error err;

	if (!t_models_dir() || t_model_path(path, sizeof(path), "bad_cycle.onnx")) {
		fprintf(stderr, "skipped: HETEROOPT_MODELS not set or models not generated\n");
		return T_SKIP;
	}
	expect_error("bad_cycle.onnx", NULL, "cycle through node");
	expect_error("bad_unknown_op.onnx", NULL, "unknown operator 'FrobnicateTensor'");
	expect_error("bad_initializer_shape.onnx", NULL, "initializer 'w' is float32 [4,3]");
	expect_error("bad_matmul_dims.onnx", NULL, "node 'mm' (MatMul): inner dimensions differ");
	expect_error("bad_dangling.onnx", NULL, "input 'ghost' is not produced");
	expect_error("bad_missing_output.onnx", NULL, "graph output 'nowhere'");
	expect_error("bad_duplicate.onnx", NULL, "tensor 'y' is defined twice");
	expect_error("bad_short_data.onnx", NULL, "tensor 'w': 20 bytes of data");
	expect_error("bad_not_a_model.onnx", NULL, "not an ONNX model");
	expect_error("bad_training_only.onnx", NULL,
		     "node 'relu' (Relu): the model imports no opset of the default ONNX domain");
	expect_error("bad_adam_default_domain.onnx", NULL, "unknown operator 'Adam'");
	expect_error("external/escape.onnx", NULL, "leaves the model's folder");
	expect_error("bad_deep_nesting.onnx", NULL, "nested deeper than");
	expect_error("resnet18.onnx", NULL, "unbound dimension 0 ('N')");
	expect_error("resnet18.onnx", "input=1x3x224", "rank 3, but the model declares rank 4");
	expect_error("resnet18.onnx", "input=1x4x224x224",
		     "dim 1 is 4, but the model fixes it to 3");
	expect_error("resnet18.onnx", "image=1x3x224x224", "no input named 'image'");
	expect_error("ch_ppocr_mobile_v2.0_cls_infer.onnx", "x=1x3x1x1",
		     "node 'p2o.MaxPool.0' (MaxPool): kernel (2) larger than padded input (1)");

	/* A caller wraps the message it had (a path of the length the ONNX
	   test data has): no byte of it lost or repeated. */
	{
		char dir[200], want[1024];

		memset(dir, 'd', sizeof(dir) - 1);
		dir[sizeof(dir) - 1] = '\0';
		ho_err(&err, -EINVAL,
		       "tensor 'x': shape [%d] of int8 needs %d bytes, the file has %d", 7, 7, 3);
		snprintf(want, sizeof(want), "%s: %s", dir, err.msg);
		ho_err(&err, -EIO, "%s: %s", dir, err.msg);
		want[sizeof(err.msg) - 1] = '\0'; /* what fits */
		T_CHECK(!strcmp(err.msg, want) && err.code == -EIO, "a wrapped message reads: %s",
			err.msg);
	}

	T_CHECK(load_infer("/nonexistent/model.onnx", NULL, &err) == -ENOENT, "missing file");
	T_CHECK(strstr(err.msg, "No such file") != NULL, "missing file message: %s", err.msg);
	T_CHECK(load_infer("/dev/null", NULL, &err) < 0, "/dev/null accepted");
	T_CHECK(strstr(err.msg, "not a regular file") != NULL, "/dev/null message: %s", err.msg);
	{
		char empty[] = "/tmp/ho-empty-XXXXXX";
		int fd = mkstemp(empty);

		T_CHECK(fd >= 0, "mkstemp");
		if (fd >= 0) {
			close(fd);
			T_CHECK(load_infer(empty, NULL, &err) < 0 && strstr(err.msg, "empty"),
				"empty file: %s", err.msg);
			unlink(empty);
		}
	}
	truncations();
	random_bytes();
	if (t_failures)
		fprintf(stderr, "%d checks failed\n", t_failures);
	return t_failures ? 1 : 0;
}
