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
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O2 -fPIC -Iinclude -Iuser/scheduler -I$(O)/gen
CFLAGS_ALL := $(BASE_CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(shell pkg-config --cflags libprotobuf-c jansson)
# Generated protobuf code is not ours to lint; -Werror would break on a new protoc-c.
CFLAGS_GEN := $(BASE_CFLAGS) -w $(EXTRA_CFLAGS)
LDLIBS := $(shell pkg-config --libs libprotobuf-c jansson) -ldnnl -lgomp -lnuma -lm -lpthread
LDFLAGS += $(EXTRA_LDFLAGS)

SCHED_SRC := $(wildcard user/scheduler/*.c)
RUNTIME_SRC := $(wildcard user/runtime/*.c) user/libump/libump.c
CLI_SRC := $(wildcard user/cli/*.c)
LIB_OBJ := $(O)/gen/onnx.pb-c.o $(SCHED_SRC:%.c=$(O)/%.o) $(RUNTIME_SRC:%.c=$(O)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/%.o)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(O)/bench/%)

.PHONY: all deps models module check bench install clean demo fuzz
all: $(O)/heteroopt $(O)/libheteroopt.a $(O)/libump.a $(UNIT_BIN) $(BENCH_BIN) $(O)/heteroopt.pc

# libump, the client of /dev/ump: no dependency beyond libc (its io_uring
# helper is header-only and needs liburing only in the program using it).
$(O)/user/libump/libump.o: user/libump/libump.c include/ump/libump.h include/uapi/ump.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(WARN) $(EXTRA_CFLAGS) -c $< -o $@
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

$(O)/%.o: %.c $(O)/gen/onnx.pb-c.h $(wildcard include/heteroopt/*.h include/ump/*.h include/uapi/*.h user/scheduler/*.h user/runtime/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(O)/libheteroopt.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(O)/heteroopt: $(CLI_OBJ) $(O)/libheteroopt.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/%: tests/unit/%.c $(O)/libheteroopt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(O)/libheteroopt.a $(LDLIBS)

# StarPU, only as the dispatch benchmark's point of comparison; its headers are not ours to lint.
STARPU_CFLAGS = $(patsubst -I%,-isystem %,$(shell pkg-config --cflags starpu-1.3))
$(O)/bench/bench_runtime: bench/bench_runtime.c $(O)/libheteroopt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(STARPU_CFLAGS) $(LDFLAGS) -o $@ $< $(O)/libheteroopt.a $(LDLIBS) $(shell pkg-config --libs starpu-1.3)

$(O)/bench/%: bench/%.c $(O)/libheteroopt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(O)/libheteroopt.a $(LDLIBS)

$(O)/heteroopt.pc: scripts/heteroopt.pc.in include/heteroopt/version.h
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# libFuzzer target for the ONNX loader (clang only).
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
$(O)/fuzz/fuzz_onnx: tests/fuzz/fuzz_onnx.c $(SCHED_SRC) $(O)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	clang $(BASE_CFLAGS) $(WARN) $(FUZZ_FLAGS) $(shell pkg-config --cflags libprotobuf-c) -o $@ \
		$< $(SCHED_SRC) $(O)/gen/onnx.pb-c.c $(LDLIBS)
$(O)/fuzz/fuzz_box: tests/fuzz/fuzz_box.c $(SCHED_SRC) $(O)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	clang $(BASE_CFLAGS) $(WARN) $(FUZZ_FLAGS) $(shell pkg-config --cflags libprotobuf-c) -o $@ \
		$< $(SCHED_SRC) $(O)/gen/onnx.pb-c.c $(LDLIBS)
$(O)/fuzz/fuzz_inputs: tests/fuzz/fuzz_inputs.c $(SCHED_SRC) $(RUNTIME_SRC) $(O)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	clang $(BASE_CFLAGS) $(WARN) $(FUZZ_FLAGS) $(shell pkg-config --cflags libprotobuf-c jansson) -o $@ \
		$< $(SCHED_SRC) $(RUNTIME_SRC) $(O)/gen/onnx.pb-c.c $(LDLIBS)
fuzz: $(O)/fuzz/fuzz_onnx $(O)/fuzz/fuzz_box $(O)/fuzz/fuzz_inputs

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

bench: deps
	$(MAKE) all
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
	install -D -m 644 include/uapi/ump.h $(DESTDIR)$(PREFIX)/include/uapi/ump.h
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
