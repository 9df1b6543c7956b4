# spkit: one Makefile for the library, the kernels, the programs and the tests.
#
#   make                 build/libspkit{,_gpu,_cli}.a, bin/*
#   make test            CPU unit tests and Bats tests; ends with "N passed, N failed"
#   make SANITIZE=1 test the same under AddressSanitizer and UBSan (CPU-only build in build/san)
#   make test-gpu        GPU tests against the CPU reference (needs nvcc and a GPU)
#   make gpu-tests       build the GPU tests only (here, to carry to a GPU machine)
#   make demo            generate a graph into data/generated and run the programs on it
#   make fuzz            libFuzzer targets, FUZZ_SECONDS each (needs clang)
#   make dev             the measurement probes dev/cuda/*.cu, into build/dev/ (needs nvcc)
#   make install PREFIX=/usr/local   (DESTDIR= for staging); make uninstall
#
# Sources are found by wildcard, so a new lib/DOMAIN/*.c, kernels/DOMAIN/*.{cu,c},
# cmd/*.c or tests/unit/DOMAIN/test_*.c is built without editing this file.
# Three archives, each calling only those after it on the link line:
#   libspkit_cli.a  cmd/common: the CLI layer (errors, options, progress bars)
#   libspkit_gpu.a  kernels/: CUDA kernels, their launchers, and the C code that
#                   picks CPU or GPU (without nvcc: the C files alone, whose
#                   stubs say "built without CUDA")
#   libspkit.a      lib/: formats, CPU references, everything else; never
#                   prints, exits, or calls the two above

VERSION := $(shell cat VERSION)
PREFIX  ?= /usr/local
CC      ?= cc
CLANG   ?= clang
CUDA_HOME ?= /usr/local/cuda
FUZZ_SECONDS ?= 300

# nvcc is optional: without it the programs run their CPU paths.
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
# Architectures as compute capabilities; machine code for each, PTX for the last.
CUDA_ARCH ?= 80 90

ifeq ($(SANITIZE),1)
  # The sanitizer build is CPU-only: ASan and the CUDA runtime disagree about
  # the low address space, and no GPU path runs under `make test` anyway.
  BUILD ?= build/san
  NVCC :=
  SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
  BUILD ?= build
endif
BIN ?= $(if $(filter build,$(BUILD)),bin,$(BUILD)/bin)

CPPFLAGS += -Ilib -Ikernels -Icmd -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64 -DSPKIT_VERSION='"$(VERSION)"'
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Wshadow -Wno-unused-parameter -pthread $(SAN_FLAGS)
LDFLAGS  += -pthread $(SAN_FLAGS)
# Link the format libraries statically so a binary built here runs on a GPU
# node that has only the driver and the CUDA libraries.
STATIC_LIBS := -Wl,-Bstatic -lyaml -lcsv -lz -lprotobuf-c -Wl,-Bdynamic
LDLIBS   += $(STATIC_LIBS) -lm

LIB_SRC  := $(sort $(wildcard lib/*/*.c))
CLI_SRC  := $(sort $(wildcard cmd/common/*.c))
CMD_SRC  := $(sort $(wildcard cmd/*.c))
CU_SRC   := $(sort $(wildcard kernels/*/*.cu))
GPU_C_SRC := $(sort $(wildcard kernels/*/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/*/test_*.c))
GPU_TEST_SRC := $(sort $(wildcard tests/gpu/test_*.c))
# The programs' GPU modes, tested from the shell (TAP, like the cmocka suites)
GPU_TEST_SH  := $(sort $(wildcard tests/gpu/*.sh))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
DEV_SRC  := $(sort $(wildcard dev/cuda/*.cu))
DEV_C_SRC := $(sort $(wildcard dev/cuda/*.c))
# macko_trace.cu includes the MACKO kernel's source
DEV_HDR  := $(wildcard dev/cuda/*.h dev/cuda/*.cuh) $(wildcard kernels/*/*.cuh) $(wildcard kernels/*/*.h) kernels/macko/macko_spmv.cu

# ONNX's protobuf schema, compiled to C by protoc-c at build time and put into
# libspkit.a; lib/ includes it as "onnx/onnx.pb-c.h".
ONNX_PROTO := /usr/include/onnx/onnx.proto
GEN      := $(BUILD)/gen
ONNX_GEN_C := $(GEN)/onnx/onnx.pb-c.c
ONNX_GEN_H := $(GEN)/onnx/onnx.pb-c.h
CPPFLAGS += -I$(GEN)
# ksmm-tune's default tuning space, built into libspkit.a from its YAML file.
KSMM_SPACE_C := $(GEN)/ksmm/ksmm_space_default.c
GEN_C    := $(ONNX_GEN_C) $(KSMM_SPACE_C)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_C:.c=.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
GPU_C_OBJ := $(GPU_C_SRC:%.c=$(BUILD)/%.o)
CU_OBJ   := $(CU_SRC:%.cu=$(BUILD)/%.o)
PROGRAMS := $(CMD_SRC:cmd/%.c=$(BIN)/%)
UNIT_BIN := $(foreach t,$(UNIT_SRC),$(BUILD)/tests/$(basename $(notdir $(t))))
GPU_TEST_BIN := $(GPU_TEST_SRC:tests/gpu/%.c=$(BUILD)/tests/gpu_%) \
                $(GPU_TEST_SH:tests/gpu/%.sh=$(BUILD)/tests/gpu_%)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
DEV_BIN  := $(DEV_SRC:dev/cuda/%.cu=$(BUILD)/dev/%) $(DEV_C_SRC:dev/cuda/%.c=$(BUILD)/dev/%)

LIBSPKIT := $(BUILD)/libspkit.a
LIBCLI   := $(BUILD)/libspkit_cli.a
LIBGPU   := $(BUILD)/libspkit_gpu.a
ifneq ($(NVCC),)
  CPPFLAGS   += -DSPKIT_CUDA=1 -I$(CUDA_HOME)/include
  # --as-needed: programs that never call cuBLAS/cuSPARSE (maxk-genmeta) do not
  # depend on them, so they also run on login nodes without the CUDA libraries.
  # -lnvrtc: ksmm-tune compiles its kernel's configurations at run time.
  # -lcublasLt: kernel-sample's GEMM operators.
  CUDA_LIBS  := -Wl,--as-needed -L$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcusparse -lnvrtc -lcudart_static -ldl -lrt -lstdc++
  # The KSMM kernel's source travels inside the binary as a C string.
  CU_OBJ     += $(GEN)/ksmm/ksmm_kernel_src.o
  NVCC_GENCODE := $(foreach a,$(CUDA_ARCH),-gencode=arch=compute_$(a),code=sm_$(a)) \
                  -gencode=arch=compute_$(lastword $(CUDA_ARCH)),code=compute_$(lastword $(CUDA_ARCH))
  NVCCFLAGS  ?= -O3 -g -lineinfo
  NVCCFLAGS  += -std=c++17 $(NVCC_GENCODE) -Ilib -Ikernels -Xcompiler -Wall,-fPIC
else
  DEV_BIN    :=
  CU_OBJ     :=
  CUDA_LIBS  :=
  GPU_TEST_BIN :=
endif
ALL_LIBS := $(LIBCLI) $(LIBGPU) $(LIBSPKIT)
LINK_LIBS := $(ALL_LIBS)

.PHONY: all test test-gpu gpu-tests demo bench dev fuzz install uninstall clean deps
.DELETE_ON_ERROR:
# Keep objects of chained rules (tests), so nothing is rebuilt needlessly and
# `make test` ends with the test tally, not with make removing intermediates.
.SECONDARY:

all: $(PROGRAMS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(ONNX_GEN_C) $(ONNX_GEN_H) &: $(ONNX_PROTO)
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) --proto_path=/usr/include onnx/onnx.proto

# A file as `const char NAME[]`, byte for byte and NUL-terminated: hex
# bytes, so no character of the file needs escaping (awk's gsub of a
# backslash depends on which awk).
embed_c = { echo '/* Generated from $< by the Makefile. */'; \
	  echo 'const char $(1)[] = {'; \
	  od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0};'; } > $@

$(KSMM_SPACE_C): configs/ksmm/space.yaml
	@mkdir -p $(@D)
	$(call embed_c,ksmm_space_default_yaml)

$(GEN)/%.o: $(GEN)/%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# kernels/ksmm/ksmm_kernel.cuh as `const char ksmm_kernel_src[]`, for NVRTC.
$(GEN)/ksmm/ksmm_kernel_src.c: kernels/ksmm/ksmm_kernel.cuh
	@mkdir -p $(@D)
	$(call embed_c,ksmm_kernel_src)

# The generated header must exist before any object that may include it compiles.
$(LIB_OBJ) $(CLI_OBJ) $(GPU_C_OBJ) $(CMD_SRC:%.c=$(BUILD)/%.o) $(UNIT_SRC:%.c=$(BUILD)/%.o): | $(ONNX_GEN_H)

$(BUILD)/kernels/%.o: kernels/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -DSPKIT_CUDA=1 -MMD -MP -c $< -o $@

$(LIBSPKIT): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBGPU): $(CU_OBJ) $(GPU_C_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBCLI): $(CLI_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BIN)/%: $(BUILD)/cmd/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $< $(LINK_LIBS) $(LDLIBS) $(CUDA_LIBS) -o $@

# Unit tests live in tests/unit/DOMAIN/ and share helpers in tests/unit/.
$(BUILD)/tests/unit/%.o: CPPFLAGS += -Itests/unit
define unit_test_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(BUILD)/$(1:.c=.o) $$(ALL_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) $$< $$(LINK_LIBS) -lcmocka $$(LDLIBS) $$(CUDA_LIBS) -o $$@
endef
$(foreach t,$(UNIT_SRC),$(eval $(call unit_test_rule,$(t))))

# The GPU machine's image has no cmocka: its shared library travels beside the
# GPU tests in build/tests/, which find it through their run path.
$(BUILD)/tests/gpu_%: $(BUILD)/tests/gpu/%.o $(ALL_LIBS) $(BUILD)/tests/libcmocka.so.0
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -Wl,-rpath,'$$ORIGIN' $< $(LINK_LIBS) -lcmocka $(LDLIBS) $(CUDA_LIBS) -o $@

# Copied beside the binaries, so that scripts/gpu-check.sh --prebuilt finds it
# in build/tests/ with them.
$(BUILD)/tests/gpu_%: tests/gpu/%.sh
	@mkdir -p $(@D)
	install -m 755 $< $@

$(BUILD)/tests/libcmocka.so.0:
	@mkdir -p $(@D)
	cp -L "$$($(CC) -print-file-name=libcmocka.so.0)" $@

deps:
	@scripts/deps.sh

# The fault injection library of tests/bats/faults.bats, preloaded into the
# programs; not in the sanitizer build, whose allocator is ASan's own.
FAULT_LIB := $(if $(SAN_FLAGS),,$(BUILD)/tests/libfault_inject.so)
$(BUILD)/tests/libfault_inject.so: tests/fault/fault_inject.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -fPIC -shared $< -ldl -o $@

test: deps $(PROGRAMS) $(UNIT_BIN) $(FAULT_LIB)
	@SPKIT_BIN=$(abspath $(BIN)) SPKIT_BUILD=$(abspath $(BUILD)) \
	 SPKIT_FAULT_LIB=$(abspath $(FAULT_LIB)) tests/run.sh $(UNIT_BIN)

gpu-tests: $(GPU_TEST_BIN)
ifeq ($(NVCC),)
	$(error GPU tests need nvcc: none at $(CUDA_HOME)/bin/nvcc or on PATH, or NVCC= was given)
endif

test-gpu: $(PROGRAMS) gpu-tests
	@SPKIT_SKIP_BATS=1 SPKIT_BIN=$(abspath $(BIN)) tests/run.sh $(GPU_TEST_BIN)

demo: deps $(PROGRAMS)
	@SPKIT_BIN=$(abspath $(BIN)) scripts/demo.sh

bench: $(PROGRAMS)
	@SPKIT_BIN=$(abspath $(BIN)) scripts/bench.sh

# The measurement probes: one program each, linked against the kernels' and
# the library's archives (gpu_time and the checks are the benchmarks' own).
# They use Hopper's bulk copies and reductions, so they are built for sm_90
# alone; nothing in the product includes dev/.
dev: $(DEV_BIN)
ifeq ($(NVCC),)
	$(error the probes need nvcc: none at $(CUDA_HOME)/bin/nvcc or on PATH, or NVCC= was given)
endif

$(BUILD)/dev/%: dev/cuda/%.cu $(DEV_HDR) $(LIBGPU) $(LIBSPKIT)
	@mkdir -p $(@D)
	$(NVCC) -O3 -lineinfo -std=c++17 -gencode=arch=compute_90,code=sm_90 -Ilib -Ikernels -Xcompiler -Wall \
	    -DSPKIT_CUDA=1 $< $(LIBGPU) $(LIBSPKIT) -lcublas -lcusparse -o $@

# Probes in C that drive the library's launchers (ksmm_probe, sample_ops_time).
$(BUILD)/dev/%: dev/cuda/%.c $(DEV_HDR) $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LINK_LIBS) $(LDLIBS) $(CUDA_LIBS) -o $@

# Fuzzers are built with clang's libFuzzer against the C library sources
# directly (no CUDA), with ASan and UBSan. UBSan stops at its first report:
# otherwise it prints and carries on, and undefined behaviour passes the run.
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	      -std=c11 -pthread
$(BUILD)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(LIB_SRC) $(GEN_C)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -Ilib -Ikernels -Icmd -I$(GEN) -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64 -DSPKIT_VERSION='"$(VERSION)"' \
	    $< $(LIB_SRC) $(GEN_C) $(STATIC_LIBS) -lm -o $@

fuzz: $(FUZZ_BIN)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_BIN)

# Installed: the programs; their man pages; under share/spkit the configs
# (hardware/ for graph-partition --hardware NAME, models/, kernel_sampling/,
# ksmm/) and the scripts (slurm/, plot/, long_run.sh and short_run.sh, their
# bin/ and configs/ pointed at the installed ones); under share/doc/spkit the
# README, the LICENSE and the measured results. `make uninstall` removes
# exactly that (with the same PREFIX and DESTDIR).
DATADIR := $(PREFIX)/share/spkit
DOCDIR  := $(PREFIX)/share/doc/spkit
MAN1DIR := $(PREFIX)/share/man/man1
INSTALL_SCRIPTS := $(wildcard scripts/slurm/*.sbatch scripts/plot/*) scripts/long_run.sh \
		   scripts/short_run.sh
INSTALL_DOCS := README.md LICENSE NOTICE bench/RESULTS.md
# graph-partition looks for --hardware NAME in the installed tree and, from a
# build, in this source tree (lib/partition/hardware.h).
$(BUILD)/lib/partition/hardware.o: CPPFLAGS += -DSPKIT_DATADIR='"$(DATADIR)"' \
	-DSPKIT_SOURCE_DIR='"$(CURDIR)"'

install: $(PROGRAMS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(DOCDIR)
	install -m 755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(wildcard man/man1/*.1) $(DESTDIR)$(MAN1DIR)/
	for d in hardware models ksmm kernel_sampling/collect kernel_sampling/test; do \
		install -d $(DESTDIR)$(DATADIR)/$$d && \
		install -m 644 $$(ls configs/$$d/*.yaml configs/$$d/*.yml configs/$$d/*.in \
			2>/dev/null) $(DESTDIR)$(DATADIR)/$$d/ || exit 1; \
	done
	for f in $(INSTALL_SCRIPTS); do \
		install -d $(DESTDIR)$(DATADIR)/$$(dirname $$f) && \
		sed -e 's|$${SPKIT_BIN:-bin}|$${SPKIT_BIN:-$(PREFIX)/bin}|' \
		    -e 's|$${SPKIT_BIN:-$$here/bin}|$${SPKIT_BIN:-$(PREFIX)/bin}|' \
		    -e 's|$$here/configs/|$(DATADIR)/|g' -e 's|\([ (]\)configs/|\1$(DATADIR)/|g' \
		    $$f > $(DESTDIR)$(DATADIR)/$$f && \
		chmod $$(test -x $$f && echo 755 || echo 644) $(DESTDIR)$(DATADIR)/$$f || exit 1; \
	done
	install -m 644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(notdir $(PROGRAMS))) \
	      $(addprefix $(DESTDIR)$(MAN1DIR)/,$(notdir $(wildcard man/man1/*.1)))
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)

clean:
	rm -rf build bin

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(GPU_C_OBJ:.o=.d) $(CU_OBJ:.o=.d) $(CMD_SRC:%.c=$(BUILD)/%.d) \
         $(UNIT_SRC:%.c=$(BUILD)/%.d) $(GPU_TEST_SRC:%.c=$(BUILD)/%.d)
