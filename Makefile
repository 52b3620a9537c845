# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmond: `make` builds build/kmond, `make test` runs every test, `make run`
# runs the daemon on configs/kmond.yaml. V=1 shows the full commands.

ARCH ?= x86
OUT := build
CLANG ?= clang
CC ?= gcc
BPFTOOL ?= bpftool
CONFIG ?= configs/kmond.yaml

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps run test fuzz fuzzers clean vmtest vm-deps

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))

# Every user-space source except main.c is a library object, so unit tests
# link the same code the daemon runs.
LIB_SRCS := $(filter-out user/main.c,$(wildcard user/*.c)) $(wildcard exporters/*.c)
LIB_OBJS := $(patsubst %.c,$(OUT)/%.o,$(LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c) $(wildcard tests/*.c)
HELPER_BINS := $(patsubst %.c,$(OUT)/tests/%,$(notdir $(HELPER_SRCS)))
# Companion programs (kmon-view, kmon-topo): one directory each, linked
# with the same library objects as the daemon.
TOOL_DIRS := $(wildcard user/kmon-*/ exporters/kmon-*/)
TOOL_BINS := $(foreach d,$(TOOL_DIRS),$(OUT)/$(notdir $(d:/=)))

CFLAGS ?= -O2 -g
# Partial initialisers are idiomatic here (tables of hooks, opts).
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers -MMD -MP -I$(OUT) -Iuser -Ibpf -Iexporters
LDLIBS := -lbpf -lelf -lz -lrdkafka -lyaml -lm
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ivmlinux/$(ARCH) -Ibpf -Iuser -MMD -MP

# Test workloads (tests/helpers, tests/*.c) are built without sanitizers:
# their syscalls are what the tests count, and ASan's runtime makes its own.
HELPER_CFLAGS := $(CFLAGS)
ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(SANITIZE),fuzz)
CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
endif

all: $(OUT)/kmond $(TOOL_BINS)

# Installs the Debian packages the build and the tests need, only when one
# of the tools or headers is missing.
deps:
	$(Q)scripts/install-deps.sh --if-missing

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | deps
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# The full syscall table of the target architecture, from the kernel's uapi
# headers, so names never come from a hand-written list.
$(OUT)/syscall_table.h: scripts/gen-syscall-table.sh | deps
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)scripts/gen-syscall-table.sh $(CC) > $@

# Order-only on the generated headers so the first build makes them before
# any user object; -MMD records the real dependencies after that.
$(OUT)/%.o: %.c | deps $(SKELS) $(OUT)/syscall_table.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/kmond: $(OUT)/user/main.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/tests/test_%: $(OUT)/tests/unit/test_%.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/tests/%: tests/helpers/%.c | deps
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(HELPER_CFLAGS) $< -o $@ $(LDLIBS)

$(OUT)/tests/%: tests/%.c | deps
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(HELPER_CFLAGS) $< -o $@ $(LDLIBS)

define tool_rule
$(OUT)/$(notdir $(1:/=)): $(patsubst %.c,$(OUT)/%.o,$(wildcard $(1)*.c)) $(LIB_OBJS)
	$$(call msg,LINK,$$@)
	$(Q)$$(CC) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@
endef
$(foreach d,$(TOOL_DIRS),$(eval $(call tool_rule,$(d))))

# kmond refuses a config anyone but root can write: run on a root-owned
# copy, so a checkout owned by a user still works with sudo.
run: $(OUT)/kmond
	$(Q)install -m 0644 $(CONFIG) $(OUT)/run.yaml
	$(OUT)/kmond -c $(OUT)/run.yaml

test: all $(UNIT_BINS) $(HELPER_BINS)
	$(Q)tests/run $(OUT)

# The integration suite on this host's kernel and in qemu guests booted on
# Debian's kernel packages (tests/vm/), then one summary table. KERNELS
# picks them (host, 6.1, 6.1-rt, 6.12), VMTEST_FILTER the tests (tests/run's
# NAME_FILTER, "a|b" for several).
KERNELS ?= host 6.1 6.1-rt 6.12
VMTEST_FILTER ?= integration/
vm-deps:
	$(Q)scripts/install-deps.sh --if-missing --vm

vmtest: all $(HELPER_BINS) | vm-deps
	$(Q)tests/vm/matrix.sh $(OUT) "$(VMTEST_FILTER)" $(KERNELS)

# libFuzzer targets (clang), each run FUZZ_SECONDS on its seed corpus;
# crashes land in build-fuzz/crashes.
FUZZ_SECONDS ?= 60
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))

$(OUT)/fuzz/%: $(OUT)/tests/fuzz/%.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -fsanitize=fuzzer,address,undefined $^ $(LDLIBS) -o $@

fuzzers: $(FUZZ_BINS)

fuzz: | deps
	$(Q)$(MAKE) --no-print-directory OUT=build-fuzz CC=clang SANITIZE=fuzz fuzzers
	$(Q)mkdir -p build-fuzz/crashes
	$(Q)set -e; for f in $(FUZZ_SRCS:tests/fuzz/%.c=%); do \
		corpus=tests/fuzz/corpus/$${f#fuzz_}; work=build-fuzz/corpus/$${f#fuzz_}; \
		mkdir -p $$work; echo "  FUZZ     $$f ($(FUZZ_SECONDS)s)"; \
		build-fuzz/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=build-fuzz/crashes/ $$work $$corpus 2>build-fuzz/$$f.log || \
			{ tail -30 build-fuzz/$$f.log; exit 1; }; \
		grep -h 'stat::number_of_executed_units' build-fuzz/$$f.log; \
	done

clean:
	rm -rf $(OUT) build-san build-fuzz

-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
