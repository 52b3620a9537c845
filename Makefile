# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmond: `make` builds build/kmond and the consumers, `make test` runs
# every test, `make run` runs the daemon on configs/kmond.yaml, `make
# install` installs (PREFIX, DESTDIR). V=1 shows the full commands.

ARCH ?= x86
OUT := build
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
CC ?= gcc
AR ?= ar
# make ARCH=arm64 cross-builds with Debian's cross toolchain (CROSS names
# its prefix) into build-arm64/, so its objects never mix with the host's.
# Its packages are install-deps.sh's arm64 set.
ifeq ($(ARCH),arm64)
CROSS ?= aarch64-linux-gnu-
OUT := build-arm64
DEPS_SET := arm64
# The unit tests and helpers too: an arm64 guest runs them.
ARCH_ALL := cross-tests
ifeq ($(origin CC),default)
CC := $(CROSS)gcc
endif
ifeq ($(origin AR),default)
AR := $(CROSS)ar
endif
else
DEPS_SET := build
ARCH_ALL :=
endif
BPFTOOL ?= bpftool
SCDOC ?= scdoc
CONFIG ?= configs/kmond.yaml
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
SYSTEMD_UNITDIR ?= /lib/systemd/system
MANDIR ?= $(PREFIX)/share/man

# One vmlinux.h per architecture kmond's BPF programs are built for.
SUPPORTED_ARCHS := $(notdir $(patsubst %/,%,$(dir $(wildcard vmlinux/*/vmlinux.h))))
ifeq ($(filter $(ARCH),$(SUPPORTED_ARCHS)),)
$(error ARCH=$(ARCH) is not supported: there is no vmlinux/$(ARCH)/vmlinux.h (supported: $(SUPPORTED_ARCHS)); see vmlinux/README.md)
endif

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test-deps vm-deps run test vmtest fuzz fuzzers install clean image demo

# The BPF programs: one object each, bpf/NAME.bpf.c or, for a collector
# with a folder of its own, bpf/DIR/NAME.bpf.c; the skeleton is
# $(OUT)/NAME.skel.h either way. Bench-only programs live in bench/,
# test-only ones in tests/helpers/.
BPF_SRCS := $(wildcard bpf/*.bpf.c bpf/*/*.bpf.c)
BENCH_BPF_SKELETONS := bench/tcp_link_bench.bpf.c
TEST_BPF_SKELETONS := $(wildcard tests/helpers/*.bpf.c)
skel_of = $(OUT)/$(notdir $(1:.bpf.c=.skel.h))
SKELS := $(foreach s,$(BPF_SRCS),$(call skel_of,$(s)))

# The library every binary links: the daemon's layers (user/*/) and the
# exporters, with the consumers' own code; a binary pulls in only the
# objects it uses. The programs are the main.c files.
DAEMON_MAIN := user/daemon/main.c
CONSUMER_DIRS := $(wildcard consumers/kmon-*/)
CONSUMER_MAINS := $(addsuffix main.c,$(CONSUMER_DIRS))
CONSUMER_BINS := $(foreach d,$(CONSUMER_DIRS),$(OUT)/$(notdir $(d:/=)))
LIB_SRCS := $(filter-out $(DAEMON_MAIN) $(CONSUMER_MAINS),\
	$(wildcard user/*/*.c user/*/*/*.c exporters/*.c consumers/*/*.c))
LIB := $(OUT)/libkmon.a
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
HELPER_SRCS := $(filter-out %.bpf.c,$(wildcard tests/helpers/*.c))
HELPER_BINS := $(patsubst %.c,$(OUT)/tests/%,$(notdir $(HELPER_SRCS)))
BENCH_BINS := $(patsubst bench/%.c,$(OUT)/bench/%,$(filter-out %.bpf.c,$(wildcard bench/*.c)))
# man/NAME.SECTION.scd -> $(OUT)/man/NAME.SECTION
MAN_PAGES := $(patsubst man/%.scd,$(OUT)/man/%,$(wildcard man/*.scd))

# CFLAGS and LDFLAGS are the user's (make CFLAGS=-O0, or EXTRA_CFLAGS to
# add to the defaults): what the build cannot do without lives in
# KMON_CFLAGS and the sanitizer variables, which a command line leaves alone.
CFLAGS ?= -O2 -g
EXTRA_CFLAGS ?=
# Partial initialisers are idiomatic here (tables of hooks, opts). Includes
# name their layer: "lib/strbuf.h", "collectors/collector.h",
# "exporters/sink.h", "bpf/tcp.h" (an ABI header).
WARNINGS := -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-Wmissing-prototypes -Wshadow -Wformat=2
KMON_CFLAGS := -std=gnu11 $(WARNINGS) -MMD -MP -I$(OUT) -Iuser -I.
LDLIBS := -lbpf -lelf -lz -lrdkafka -lyaml -lmicrohttpd -lpthread -lm
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ivmlinux/$(ARCH) -Ibpf -MMD -MP
# Debian installs bpftool in /usr/sbin, which a user's PATH may lack.
ifeq ($(origin BPFTOOL),file)
BPFTOOL := $(shell PATH="$$PATH:/usr/sbin:/sbin" command -v $(BPFTOOL) || echo $(BPFTOOL))
endif

# Test workloads (tests/helpers, tests/*.c) are built without sanitizers:
# their syscalls are what the tests count, and ASan's runtime makes its own.
HELPER_CFLAGS = $(KMON_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
SAN_CFLAGS :=
SAN_LDFLAGS :=
ifeq ($(SANITIZE),1)
SAN_CFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
SAN_LDFLAGS := -fsanitize=address,undefined
endif
ifeq ($(SANITIZE),fuzz)
SAN_CFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
endif
ALL_CFLAGS = $(KMON_CFLAGS) $(SAN_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
ALL_LDFLAGS = $(SAN_LDFLAGS) $(LDFLAGS)

all: $(OUT)/kmond $(CONSUMER_BINS) $(MAN_PAGES) $(ARCH_ALL)

# Install the Debian packages the build needs (test-deps: and the tests),
# only when one of the tools or headers is missing.
deps:
	$(Q)scripts/install-deps.sh --if-missing $(DEPS_SET)

test-deps:
	$(Q)scripts/install-deps.sh --if-missing test

# BPF objects are embedded in the binaries through their skeletons:
# without DWARF (BTF and CO-RE relocations stay), they are a third the size.
$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | deps
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUT)/bench/%.bpf.o: bench/%.bpf.c | deps
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUT)/tests/helpers/%.bpf.o: tests/helpers/%.bpf.c | deps
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

define skel_rule
$(call skel_of,$(1)): $(OUT)/$(1:.c=.o)
	$$(call msg,GEN-SKEL,$$@)
	$$(Q)$$(BPFTOOL) gen skeleton $$< name $(notdir $(1:.bpf.c=))_bpf > $$@
endef
$(foreach s,$(BPF_SRCS) $(BENCH_BPF_SKELETONS) $(TEST_BPF_SKELETONS),\
	$(eval $(call skel_rule,$(s))))
$(OUT)/bench/tcp_link_bench.o: $(OUT)/tcp_link_bench.skel.h

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
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(patsubst %.c,$(OUT)/%.o,$(LIB_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# kmond with no -c runs on the installed config.
$(OUT)/user/daemon/main.o: KMON_CFLAGS += \
	-DKMOND_DEFAULT_CONFIG='"$(SYSCONFDIR)/kmond/kmond.yaml"'

$(OUT)/kmond: $(OUT)/user/daemon/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/kmon-%: $(OUT)/consumers/kmon-%/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LDLIBS) -o $@

# kmon-trace's OTLP/HTTP client.
$(OUT)/kmon-trace: LDLIBS += -lcurl

$(OUT)/tests/test_%: $(OUT)/tests/unit/test_%.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/bench/%: $(OUT)/bench/%.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LDLIBS) -o $@

# It plays the bio collector's programs: built with its skeleton.
$(OUT)/tests/kmt_bio_replay: $(OUT)/bio.skel.h
# It runs the outcome classifier in the kernel.
$(OUT)/tests/kmt_outcome_verify: $(OUT)/outcome_verify.skel.h
# Its user stacks are walked by their frame pointers.
$(OUT)/tests/kmt_stacks: HELPER_CFLAGS += -fno-omit-frame-pointer
# OpenSSL linked into it, for TLS read in a program's own SSL functions.
$(OUT)/tests/kmt_tls_static: LDLIBS += -l:libssl.a -l:libcrypto.a -lz
# libssl-dev is the test set's (the arm64 set has its own): under make -j
# it is built only once that set is there.
ifeq ($(DEPS_SET),build)
$(OUT)/tests/kmt_tls_static: | test-deps
endif

$(OUT)/tests/%: tests/helpers/%.c | deps
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(HELPER_CFLAGS) $(LDFLAGS) $< -o $@ $(LDLIBS)

$(OUT)/man/%: man/%.scd | deps
	$(call msg,SCDOC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(SCDOC) <$< >$@

# kmond refuses a config anyone but root can write: run on a root-owned
# copy, so a checkout owned by a user still works with sudo.
run: $(OUT)/kmond
	$(Q)install -m 0644 $(CONFIG) $(OUT)/run.yaml
	$(OUT)/kmond -c $(OUT)/run.yaml

# The unit tests alone, as any user (a test that needs root is skipped)
# and with no package beyond the build's.
.PHONY: check
check: $(UNIT_BINS)
	$(Q)tests/run $(OUT) unit/

# The C that clang-format (.clang-format; Debian's is 14) would change,
# listed; nothing is rewritten. vmlinux/ is generated.
CLANG_FORMAT ?= clang-format
FORMAT_SRCS := $(shell find user exporters consumers tests bench bpf -name '*.[ch]' | sort)

.PHONY: format-check
format-check:
	$(Q)out=$$($(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SRCS) 2>&1) && exit 0; \
	bad=$$(printf '%s\n' "$$out" | sed -n \
		's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p'); \
	[ -n "$$bad" ] || { printf '%s\n' "$$out" >&2; exit 1; }; \
	echo "format-check: clang-format would change:"; \
	printf '%s\n' "$$bad" | uniq | sed 's/^/  /'; exit 1

# Two tests at a time: most leave much of the CPU idle while they wait
# for kmond's intervals (45% busy over a run, alone on 2 cores); those
# marked "# tests/run: alone" run by themselves (tests/README.md).
TESTS_LANES ?= 2
test: test-deps all $(UNIT_BINS) $(HELPER_BINS) $(BENCH_BINS)
	$(Q)TESTS_LANES=$(TESTS_LANES) tests/run $(OUT)

install: all
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(SYSCONFDIR)/kmond $(DESTDIR)$(SYSTEMD_UNITDIR)
	$(Q)install -m 0755 $(OUT)/kmond $(DESTDIR)$(PREFIX)/sbin/kmond
	$(Q)install -m 0755 $(CONSUMER_BINS) $(DESTDIR)$(PREFIX)/bin/
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/kmond/kmond.yaml ] || \
		install -m 0644 configs/kmond.yaml $(DESTDIR)$(SYSCONFDIR)/kmond/kmond.yaml
	$(Q)sed -e 's|@SBINDIR@|$(PREFIX)/sbin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		deploy/systemd/kmond.service > $(DESTDIR)$(SYSTEMD_UNITDIR)/kmond.service
	$(Q)chmod 0644 $(DESTDIR)$(SYSTEMD_UNITDIR)/kmond.service
	$(Q)install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	$(Q)install -m 0644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	$(Q)install -m 0644 $(filter %.5,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man5/
	$(Q)install -m 0644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man8/

# The integration suite on this host's kernel and in qemu guests booted on
# Debian's kernel packages (tests/vm/), then one summary table. KERNELS
# picks them (host, 6.1, 6.1-rt, 6.12, 6.1-arm64), VMTEST_FILTER the tests
# (tests/run's NAME_FILTER, "a|b" for several). An arm64 kernel runs the
# cross-built tree (build-arm64/) and the tests of VMTEST_ARM64_SET, whose
# programs its root has (tests/vm/rootfs.sh): core, the collectors' core
# set (48 minutes), or small, one exact count of each collector (CI's:
# about 4 minutes with the boot); or those of a VMTEST_FILTER given on
# the command line without a VMTEST_ARM64_SET, or of VMTEST_ARM64_TESTS
# or VMTEST_ARM64_FILTER.
KERNELS ?= host 6.1 6.1-rt 6.12
ifeq ($(origin VMTEST_FILTER)/$(origin VMTEST_ARM64_SET),command line/undefined)
VMTEST_ARM64_FILTER ?= $(value VMTEST_FILTER)
VMTEST_ARM64_LEAVE_OUT ?=
endif
VMTEST_FILTER ?= integration/
VMTEST_ARM64_CORE := unit/ integration/syscall_ integration/offcpu_ integration/bio_ \
	integration/drop_ integration/counters_ integration/reload_ integration/tcp_requests$$ \
	integration/tcp_client$$ integration/tcp_client_edges$$ \
	integration/tcp_client_send_entry_sys$$ integration/tcp_load integration/tcp_fallback$$ \
	integration/provider_pid_reuse$$ integration/atomics_ordered$$
# counters_functions rather than counters_exact: the attach arm64's 6.1
# changes (kprobe, fentry refused), in half the time.
VMTEST_ARM64_SMALL := integration/syscall_exact$$ integration/counters_functions$$ \
	integration/offcpu_sleep$$ integration/bio_dd$$ integration/drop_syn$$ \
	integration/tcp_requests$$ integration/atomics_ordered$$
VMTEST_ARM64_SET ?= core
VMTEST_ARM64_TESTS ?= $(if $(filter small,$(VMTEST_ARM64_SET)),$(VMTEST_ARM64_SMALL),$(VMTEST_ARM64_CORE))
empty :=
VMTEST_ARM64_FILTER ?= $(subst $(empty) $(empty),|,$(strip $(VMTEST_ARM64_TESTS)))
# as given on the command line: a$|b$ is not make's $|
vmtest_arm64_filter := $(if $(filter command line,$(origin VMTEST_ARM64_FILTER)),$(value VMTEST_ARM64_FILTER),$(VMTEST_ARM64_FILTER))
# occupancy_fit simulates 81 tandems in doubles: soft floating point
# under TCG, over 12 minutes (native: the same arithmetic, IEEE on both).
VMTEST_ARM64_LEAVE_OUT ?= unit/occupancy_fit
VM_X86_KERNELS := $(filter-out %-arm64,$(KERNELS))
VM_ARM64_KERNELS := $(filter %-arm64,$(KERNELS))
vm-deps:
	$(Q)$(if $(VM_X86_KERNELS),scripts/install-deps.sh --if-missing vm)
	$(Q)$(if $(VM_ARM64_KERNELS),scripts/install-deps.sh --if-missing arm64)

.PHONY: vmtest-arm64-build
vmtest-arm64-build:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 all

# vmtest-build: what the guests of KERNELS run, built and installed (a
# make vmtest started after it builds nothing while its guests run).
.PHONY: vmtest-build
vmtest-build: $(if $(VM_X86_KERNELS),all $(HELPER_BINS)) \
		$(if $(VM_ARM64_KERNELS),vmtest-arm64-build) | vm-deps

vmtest: vmtest-build
	$(Q)VMTEST_ARM64_FILTER='$(vmtest_arm64_filter)' \
		VMTEST_ARM64_LEAVE_OUT='$(VMTEST_ARM64_LEAVE_OUT)' \
		tests/vm/matrix.sh $(OUT) '$(value VMTEST_FILTER)' $(KERNELS)

# libFuzzer targets (clang), each run FUZZ_SECONDS on its seed corpus,
# as many at once as make -j allows; crashes land in build-fuzz/crashes.
FUZZ_SECONDS ?= 60
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))

$(OUT)/fuzz/%: $(OUT)/tests/fuzz/%.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -fsanitize=fuzzer,address,undefined $(LDFLAGS) $^ $(LDLIBS) -o $@

fuzzers: $(FUZZ_BINS)

.PHONY: fuzz-deps
fuzz-deps:
	$(Q)scripts/install-deps.sh --if-missing fuzz

fuzz: | fuzz-deps
	$(Q)$(MAKE) --no-print-directory OUT=build-fuzz CC=clang SANITIZE=fuzz \
		$(FUZZ_SRCS:tests/fuzz/%.c=fuzz-run-%)

# fuzz-run-fuzz_NAME: that fuzzer on tests/fuzz/corpus/NAME, what it
# finds kept in $(OUT)/corpus/NAME (make fuzz: OUT=build-fuzz)
fuzz-run-%: $(OUT)/fuzz/%
	$(Q)mkdir -p $(OUT)/crashes $(OUT)/corpus/$(*:fuzz_%=%)
	$(Q)$< -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		-artifact_prefix=$(OUT)/crashes/ $(OUT)/corpus/$(*:fuzz_%=%) \
		tests/fuzz/corpus/$(*:fuzz_%=%) 2>$(OUT)/$*.log || \
		{ echo "  FUZZ     $* failed:"; tail -30 $(OUT)/$*.log; exit 1; }
	@echo "  FUZZ     $* ($(FUZZ_SECONDS)s): $$(sed -n \
		's/^stat::number_of_executed_units: *//p' $(OUT)/$*.log) inputs run"

# kmond's image from the Containerfile, with podman, on a Debian base made
# from Debian's packages (scripts/image.sh). IMAGE names it. ARCH=arm64:
# from the cross-built kmond, with no arm64 program run
# (scripts/image-arm64.sh).
ifeq ($(ARCH),arm64)
IMAGE ?= localhost/kmond:arm64
image: $(OUT)/kmond
	$(Q)scripts/image-arm64.sh $(OUT)/kmond $(IMAGE)
else
IMAGE ?= localhost/kmond:latest
image:
	$(Q)scripts/image.sh $(IMAGE)
endif

# The demo shop (demo/app) in containers under load, with kmond, its
# consumers and Prometheus; pictures and an index page in $(OUT)/demo.
# As root; DEMO_DURATION (seconds of load, default 180) and the rest:
# demo/run.sh.
demo: all $(OUT)/tests/kafka_broker
	$(Q)BUILD=$(OUT) demo/run.sh $(OUT)/demo

# What an arm64 guest runs besides kmond (make ARCH=arm64 builds them).
.PHONY: cross-tests cross-check
cross-tests: $(UNIT_BINS) $(HELPER_BINS)

# A cross-build for arm64 from an empty build-cross-check/, checked
# (scripts/cross-check.sh); about 30 s with -j2. Not part of make test.
cross-check:
	$(Q)scripts/cross-check.sh build-cross-check

clean:
	rm -rf $(OUT) build-arm64 build-cross-check build-san build-fuzz

# (not in vmtest/: the guests' kernels and roots hold directories named *.d)
-include $(shell find $(OUT) -path $(OUT)/vmtest -prune -o -name '*.d' -type f -print 2>/dev/null)
