# HeteroOpt top-level build.  `make` builds libheteroopt and the heteroopt
# command; see README.md for the rest.
.DEFAULT_GOAL := all

CC ?= gcc
O ?= build
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
PREFIX ?= /usr/local
# udev reads /etc/udev and /lib/udev, not /usr/local: a system install puts the
# rule in /etc, any other PREFIX keeps it under PREFIX for a packager to place.
UDEV_RULES_DIR ?= $(if $(filter /usr/local /usr,$(PREFIX)),/etc/udev/rules.d,$(PREFIX)/lib/udev/rules.d)
VERSION := $(shell sed -n 's/^\#define HO_VERSION_STRING "\(.*\)"/\1/p' include/heteroopt/version.h)
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) $(wildcard /usr/src/linux-headers-*-amd64))

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# -MMD -MP: the compiler lists each object's headers (build/**/*.d), so a
# changed header rebuilds exactly what includes it.
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O2 -fPIC -MMD -MP -Iinclude
CFLAGS_ALL := $(BASE_CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(shell pkg-config --cflags libprotobuf-c jansson)
# Generated protobuf code is not ours to lint; -Werror would break on a new protoc-c.
CFLAGS_GEN := $(BASE_CFLAGS) -w $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)

# The libraries, each on the ones before it; each links only what it needs
# (the scheduler builds and tests without oneDNN, the ONNX fuzzer links the
# graph library alone).  libheteroopt.a, the installed one, holds them all.
#   common   errors, arena, RNG, fingerprint, clock      user/common
#   graph    IR, ONNX import, shapes, features, fusion   user/graph
#   box      the box and its profile, read and checked   user/box
#   sched    costs, simulator, planners, search          user/scheduler
#   runtime  executor, backends, pool, .npy              user/runtime, user/libump
#   probe    measures this machine, writes the profile   probes
COMMON_SRC := $(wildcard user/common/*.c)
GRAPH_SRC := $(wildcard user/graph/*.c user/graph/*/*.c)
BOX_SRC := $(wildcard user/box/*.c)
SCHED_SRC := $(wildcard user/scheduler/*.c)
RUNTIME_SRC := $(wildcard user/runtime/*.c user/runtime/backends/*.c user/runtime/backends/*/*.c) \
	user/libump/libump.c
PROBE_SRC := $(wildcard probes/*.c)
CLI_SRC := $(wildcard user/cli/*.c)
GRAPH_OBJ := $(COMMON_SRC:%.c=$(O)/%.o) $(O)/gen/onnx.pb-c.o $(GRAPH_SRC:%.c=$(O)/%.o)
BOX_OBJ := $(BOX_SRC:%.c=$(O)/%.o)
SCHED_OBJ := $(SCHED_SRC:%.c=$(O)/%.o)
# A backend's CUDA C kernels (backends/NAME/kernels.cu), PTX in its library (kernels.ptx.o).
CU_SRC := $(wildcard user/runtime/backends/*/kernels.cu)
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(O)/%.o) $(CU_SRC:%.cu=$(O)/%.ptx.o)
PROBE_OBJ := $(PROBE_SRC:%.c=$(O)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/%.o)
GRAPH_LIBS := $(shell pkg-config --libs libprotobuf-c) -lm
SCHED_LIBS := $(GRAPH_LIBS) $(shell pkg-config --libs jansson) -lpthread
RUNTIME_LIBS := $(SCHED_LIBS) -ldnnl -lgomp -lnuma -luring -lclblast -lOpenCL -ldl
LDLIBS := $(RUNTIME_LIBS)

# Each library sees its own private header and the common one, no other's.
$(O)/user/common/%.o: PRIV := -Iuser/common
$(O)/user/graph/%.o: PRIV := -Iuser/common -Iuser/graph -I$(O)/gen
$(O)/user/box/%.o: PRIV := -Iuser/common -Iuser/box
$(O)/user/scheduler/%.o: PRIV := -Iuser/common -Iuser/scheduler
$(O)/user/runtime/%.o: PRIV := -Iuser/common -Iuser/runtime
$(O)/probes/%.o: PRIV := -Iuser/common -Iprobes -I$(O)/gen
$(O)/user/cli/%.o: PRIV := -Iuser/cli

# Unit tests link the lowest library that holds what they test.
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)
UNIT_GRAPH := test_onnx_errors test_onnx_load test_nms
UNIT_RUNTIME := test_layouts test_kernel_memory test_npy test_pool test_runtime test_unary_vectors test_opencl test_opencl_device_memory test_cuda test_emu_discrete test_memplan test_probe_fit test_bind_value test_deferred_shapes test_external
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(O)/bench/%)

.PHONY: all tests test deps models module check bench install clean demo fuzz format-check
# The product: the command, the libraries, the pkg-config file.
all: $(O)/heteroopt $(O)/libheteroopt.a $(O)/libump.a $(O)/heteroopt.pc $(O)/cpu-without-openmp.ok
tests: $(UNIT_BIN) $(O)/tests/onnx_backend

# libump, the client of /dev/ump: no dependency beyond libc (its io_uring
# helper is header-only and needs liburing only in the program using it).
$(O)/libump.a: $(O)/user/libump/libump.o
	rm -f $@ && ar rcs $@ $^

# One rule makes both files; the header depends on the source so that a
# parallel make never runs protoc-c twice at once.
$(O)/gen/onnx.pb-c.c: $(ONNX_PROTO)
	@mkdir -p $(O)/gen
	cp -f $(ONNX_PROTO) $(O)/gen/onnx.proto
	cd $(O)/gen && protoc-c --c_out=. onnx.proto
$(O)/gen/onnx.pb-c.h: $(O)/gen/onnx.pb-c.c
	@test -f $@ && touch $@

$(O)/gen/onnx.pb-c.o: $(O)/gen/onnx.pb-c.c
	$(CC) $(CFLAGS_GEN) $(shell pkg-config --cflags libprotobuf-c) -c $< -o $@

# The cpu backend splits its own loops over its device's OpenMP team, as oneDNN does.
$(O)/user/runtime/backends/cpu/%.o: OMP := -fopenmp

# The fuzzers build it without OpenMP: a variable only a pragma reads must not fail them
# (it stopped CI once), so every build checks the cpu backend that way too, by clang (3 s).
CPU_SRC := $(wildcard user/runtime/backends/cpu/*.c)
$(O)/cpu-without-openmp.ok: $(CPU_SRC) | $(O)/gen/onnx.pb-c.h
	clang $(filter-out -MMD -MP,$(CFLAGS_ALL)) -Wno-unknown-pragmas -Iuser/common -Iuser/runtime -fsyntax-only $(CPU_SRC)
	@touch $@

$(O)/%.o: %.c | $(O)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(PRIV) $(OMP) -c $< -o $@

# CUDA C to PTX for sm_70 and later by clang, which needs no CUDA toolkit (libdevice
# neither: the kernels bring their own math); the driver compiles the PTX for its GPU
# when the backend opens it.  Embedded as the C string ho_ptx_NAME.
$(O)/%.ptx: %.cu
	@mkdir -p $(dir $@)
	clang -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib \
		-Wno-unknown-cuda-version -O3 -S -o $@ $<
$(O)/%.ptx.c: $(O)/%.ptx
	{ echo 'const char ho_ptx_$(notdir $(patsubst %/,%,$(dir $*)))[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } >$@
$(O)/%.ptx.o: $(O)/%.ptx.c
	$(CC) $(CFLAGS_GEN) -c $< -o $@
.SECONDARY: $(CU_SRC:%.cu=$(O)/%.ptx) $(CU_SRC:%.cu=$(O)/%.ptx.c)

$(O)/libho_graph.a: $(GRAPH_OBJ)
$(O)/libho_box.a: $(BOX_OBJ)
$(O)/libho_sched.a: $(SCHED_OBJ)
$(O)/libho_runtime.a: $(RUNTIME_OBJ)
$(O)/libho_probe.a: $(PROBE_OBJ)
$(O)/libheteroopt.a: $(GRAPH_OBJ) $(BOX_OBJ) $(SCHED_OBJ) $(RUNTIME_OBJ) $(PROBE_OBJ)
$(O)/libho_graph.a $(O)/libho_box.a $(O)/libho_sched.a $(O)/libho_runtime.a $(O)/libho_probe.a $(O)/libheteroopt.a:
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The report's page, a C string the command fills in (user/cli/cmd_report.c).
$(O)/gen/report_page.c: user/cli/report.html
	@mkdir -p $(O)/gen
	{ echo 'const char cli_report_page[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } >$@
$(O)/gen/report_page.o: $(O)/gen/report_page.c
	$(CC) $(CFLAGS_GEN) -c $< -o $@

$(O)/heteroopt: $(CLI_OBJ) $(O)/gen/report_page.o $(O)/libheteroopt.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(UNIT_GRAPH:%=$(O)/tests/%): $(O)/tests/%: tests/unit/%.c $(O)/libho_graph.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(O)/libho_graph.a $(GRAPH_LIBS)
$(UNIT_RUNTIME:%=$(O)/tests/%): $(O)/tests/%: tests/unit/%.c $(O)/libho_probe.a $(O)/libho_runtime.a $(O)/libho_sched.a $(O)/libho_box.a $(O)/libho_graph.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Iuser/common -Iuser/runtime -Iuser/scheduler $(LDFLAGS) -o $@ $< \
		$(O)/libho_probe.a $(O)/libho_runtime.a $(O)/libho_sched.a $(O)/libho_box.a \
		$(O)/libho_graph.a $(RUNTIME_LIBS)
# The ONNX backend conformance runner: loader, shape inference and runtime together.
$(O)/tests/onnx_backend: tests/conformance/onnx_backend.c $(O)/libheteroopt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Iuser/common -Iuser/runtime $(LDFLAGS) -o $@ $< $(O)/libheteroopt.a \
		$(LDLIBS)
$(O)/tests/%: tests/unit/%.c $(O)/libho_sched.a $(O)/libho_box.a $(O)/libho_graph.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(O)/libho_sched.a $(O)/libho_box.a \
		$(O)/libho_graph.a $(SCHED_LIBS)

# StarPU, only as the dispatch benchmark's point of comparison; its headers are not ours to lint.
STARPU_CFLAGS = $(patsubst -I%,-isystem %,$(shell pkg-config --cflags starpu-1.3))
$(O)/bench/bench_runtime: bench/bench_runtime.c $(O)/libheteroopt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Iuser/common $(STARPU_CFLAGS) $(LDFLAGS) -o $@ $< $(O)/libheteroopt.a $(LDLIBS) $(shell pkg-config --libs starpu-1.3)

# The OpenCL bench drives the backend's own queue and kernels as its baseline.
$(O)/bench/bench_opencl: bench/bench_opencl.c $(O)/libheteroopt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Iuser/common -Iuser/runtime $(LDFLAGS) -o $@ $< $(O)/libheteroopt.a $(LDLIBS)

$(O)/bench/%: bench/%.c $(O)/libheteroopt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(O)/libheteroopt.a $(LDLIBS)

$(O)/heteroopt.pc: scripts/heteroopt.pc.in include/heteroopt/version.h
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# libFuzzer targets (clang only), each on the libraries its reader lives in.
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O2 -Iinclude -Iuser/common -I$(O)/gen $(WARN) $(FUZZ_FLAGS) \
	$(shell pkg-config --cflags libprotobuf-c jansson)
FUZZ_GRAPH := $(COMMON_SRC) $(GRAPH_SRC) $(O)/gen/onnx.pb-c.c
$(O)/fuzz/fuzz_onnx: tests/fuzz/fuzz_onnx.c $(FUZZ_GRAPH)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Iuser/graph -o $@ $^ $(GRAPH_LIBS)
$(O)/fuzz/fuzz_box: tests/fuzz/fuzz_box.c $(FUZZ_GRAPH) $(BOX_SRC) $(SCHED_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Iuser/graph -Iuser/box -Iuser/scheduler -o $@ $^ $(SCHED_LIBS)
$(O)/fuzz/fuzz_inputs: tests/fuzz/fuzz_inputs.c $(FUZZ_GRAPH) $(BOX_SRC) $(SCHED_SRC) $(RUNTIME_SRC) \
		$(CU_SRC:%.cu=$(O)/%.ptx.c)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Iuser/graph -Iuser/box -Iuser/scheduler -Iuser/runtime -o $@ $^ $(RUNTIME_LIBS)
fuzz: $(O)/fuzz/fuzz_onnx $(O)/fuzz/fuzz_box $(O)/fuzz/fuzz_inputs

-include $(shell find $(O) -name '*.d' 2>/dev/null)

deps:
	sh scripts/deps.sh

models:
	sh scripts/models.sh

module:
	@test -n "$(KDIR)" || { echo "make module: no kernel headers found (set KDIR)"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# Same as the README's two commands.
demo:
	sh scripts/demo.sh

check:
	sh scripts/check.sh

# The fast loop: unit, CLI and model tests, two at a time, no apt, no QEMU.
test: all tests
	sh tests/run.sh --quick -j2

bench: deps
	$(MAKE) all $(BENCH_BIN)
	sh scripts/models.sh
	sh bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/heteroopt
	install -m 755 $(O)/heteroopt $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(O)/libheteroopt.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/heteroopt/*.h $(DESTDIR)$(PREFIX)/include/heteroopt/
	install -m 644 $(O)/libump.a $(DESTDIR)$(PREFIX)/lib/
	install -D -m 644 include/ump/libump.h $(DESTDIR)$(PREFIX)/include/ump/libump.h
	install -D -m 644 include/ump/libump-uring.h $(DESTDIR)$(PREFIX)/include/ump/libump-uring.h
	install -D -m 644 include/ump/uapi.h $(DESTDIR)$(PREFIX)/include/ump/uapi.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' scripts/heteroopt.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/heteroopt.pc
	install -d $(DESTDIR)$(PREFIX)/share/heteroopt/boxes
	install -m 644 boxes/*.json $(DESTDIR)$(PREFIX)/share/heteroopt/boxes/
	install -D -m 644 udev/60-ump.rules $(DESTDIR)$(UDEV_RULES_DIR)/60-ump.rules
	@if command -v dkms >/dev/null 2>&1 && [ -z "$(DESTDIR)" ] && [ "$(PREFIX)" = /usr/local ]; then \
		rm -rf /usr/src/ump-0.1.0 && mkdir -p /usr/src/ump-0.1.0 && \
		cp -r Kbuild dkms.conf kernel include /usr/src/ump-0.1.0/ && \
		dkms add -m ump -v 0.1.0 >/dev/null 2>&1 || true; \
		echo "ump: registered with DKMS (dkms install -m ump -v 0.1.0 builds it)"; \
	else echo "ump: not registered with DKMS (no dkms, or DESTDIR or a PREFIX of its own)"; fi

clean:
	rm -rf $(O) build-asan
	@if [ -n "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean >/dev/null 2>&1 || true; fi
