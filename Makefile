# fsvol: software RAID emulator with instrumentation.
#   make            build (optimised)         make check     deps + build + every test
#   make SAN=1 check  ASan+UBSan build of all   make bench     ratio benchmarks
#   make demo       the guided demo           make install   PREFIX=/usr/local DESTDIR=
#   make check-long make check + the long kill/grow/power-cut cycles and stress runs
CC      ?= cc
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SAN     ?= 0

ifeq ($(SAN),1)
BUILD   := build-san
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
else
BUILD   := build
OPT     := -O2 -g
endif

# pkg-config is evaluated lazily (=) so `make check` can install the packages first.
PC_CFLAGS = $(shell pkg-config --cflags fuse3 liburing libmicrohttpd libnbd)
PC_LIBS   = $(shell pkg-config --libs fuse3 liburing libmicrohttpd libnbd)
CHECK_LIBS = $(shell pkg-config --libs check)
CFLAGS  += -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Wall -Wextra -Werror \
	   -Wno-missing-field-initializers -pthread -I. $(OPT) $(PC_CFLAGS) -MMD -MP
LDFLAGS += $(OPT) -pthread
LDLIBS  += $(PC_LIBS) -lm

# Module sources: one concern per file, fsvol/ in folders by concern
# (core members model meta front util); fsvol/cli/ makes the `fsvol` command.
LIB_SRCS := $(sort $(wildcard layout/*.c) $(wildcard stats/*.c) \
	$(filter-out fsvol/cli/%,$(wildcard fsvol/*/*.c)))
CLI_SRCS := $(sort $(wildcard fsvol/cli/*.c))
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_LIB_SRCS := $(filter-out bench/main.c,$(BENCH_SRCS))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/%.o)
BENCH_LIB_OBJS := $(BENCH_LIB_SRCS:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libfsvol.a

# Unit tests (Check), sorted and explicit.
UNIT_TESTS := \
	test_bbl \
	test_bench \
	test_bitmap \
	test_crc32c \
	test_ctl \
	test_emul \
	test_engine \
	test_events \
	test_filters \
	test_http \
	test_json \
	test_layout \
	test_md1 \
	test_member_map \
	test_members \
	test_parity \
	test_ppl \
	test_reshape \
	test_sb \
	test_size \
	test_spindle \
	test_stats \
	test_tracefile \
	test_validate \
	test_vol_opts
UNIT_BINS := $(UNIT_TESTS:%=$(BUILD)/tests/%)

# Integration tests (real mounts, real tools), sorted and explicit.
INTEGRATION_TESTS := \
	tests/integration/01-cli.sh \
	tests/integration/02-roundtrip.sh \
	tests/integration/03-ext4.sh \
	tests/integration/04-degraded.sh \
	tests/integration/05-concurrency.sh \
	tests/integration/06-bad-input.sh \
	tests/integration/07-counters.sh \
	tests/integration/08-model.sh \
	tests/integration/09-bench.sh \
	tests/integration/10-faults.sh \
	tests/integration/11-resync.sh \
	tests/integration/12-sweep.sh \
	tests/integration/13-demo.sh \
	tests/integration/14-blockdev.sh \
	tests/integration/15-mdadm-words.sh \
	tests/integration/16-ctl-dir.sh \
	tests/integration/17-first-steps.sh \
	tests/integration/18-dashboard-layout.sh \
	tests/integration/19-plots.sh \
	tests/integration/20-inflight.sh \
	tests/integration/21-recovery.sh \
	tests/integration/22-metrics.sh \
	tests/integration/23-stat-tty.sh \
	tests/integration/24-syslog.sh \
	tests/integration/25-exit-codes.sh \
	tests/integration/26-install.sh \
	tests/integration/27-doc-examples.sh \
	tests/integration/28-access.sh \
	tests/integration/29-defects.sh \
	tests/integration/30-assembly.sh \
	tests/integration/31-crash.sh \
	tests/integration/32-nbd-export.sh \
	tests/integration/33-dashboard.sh \
	tests/integration/34-nbd-members.sh \
	tests/integration/35-netns.sh \
	tests/integration/36-bitmap.sh \
	tests/integration/37-status-json.sh \
	tests/integration/38-powercut.sh \
	tests/integration/39-spare-takeover.sh \
	tests/integration/40-rebuild-checkpoint.sh \
	tests/integration/41-member-slots.sh \
	tests/integration/42-dirty-recovery.sh \
	tests/integration/43-nbd-idle.sh \
	tests/integration/44-write-hole.sh \
	tests/integration/45-rmw-rcw.sh \
	tests/integration/46-stress-short.sh \
	tests/integration/47-failpath-short.sh \
	tests/integration/50-trace-record.sh \
	tests/integration/51-replay.sh \
	tests/integration/52-replay-compare.sh \
	tests/integration/53-validate.sh \
	tests/integration/54-virtual.sh \
	tests/integration/56-bench-create.sh \
	tests/integration/57-fuse-transport.sh \
	tests/integration/58-no-wait.sh \
	tests/integration/59-doc-experiments.sh \
	tests/integration/60-cli-manage.sh \
	tests/integration/61-detail-scan.sh \
	tests/integration/62-mount-run.sh \
	tests/integration/63-monitor.sh \
	tests/integration/64-bench-report.sh \
	tests/integration/65-md-state.sh \
	tests/integration/66-prometheus.sh \
	tests/integration/67-dashboard-history.sh \
	tests/integration/68-bench-diskspd.sh \
	tests/integration/69-kernel-sets.sh \
	tests/integration/70-nbd-async.sh \
	tests/integration/72-fuse-uring-edges.sh \
	tests/integration/73-grow-raid5.sh \
	tests/integration/74-grow-raid6-chunk.sh \
	tests/integration/75-grow-raid5-raid6.sh \
	tests/integration/76-ppl.sh \
	tests/integration/77-journal.sh \
	tests/integration/78-write-mostly.sh \
	tests/integration/79-failfast.sh \
	tests/integration/80-bad-blocks.sh \
	tests/integration/81-device-numbers.sh \
	tests/integration/82-reshape-degraded.sh \
	tests/integration/83-grow-write-behind.sh \
	tests/integration/84-tmpfs-members.sh \
	tests/integration/85-umount-busy.sh \
	tests/integration/86-reshape-raid10.sh \
	tests/integration/87-model-clock.sh \
	tests/integration/88-remove-under-readers.sh \
	tests/integration/89-null-fuse.sh \
	tests/integration/90-md-diff.sh \
	tests/integration/91-q-order-upgrade.sh \
	tests/integration/92-journal-forged.sh \
	tests/integration/93-nbd-unread-memory.sh \
	tests/integration/94-http-limits.sh \
	tests/integration/95-member-entries.sh \
	tests/integration/96-replace-resume.sh \
	tests/integration/97-member-paths.sh \
	tests/integration/98-meta-counted.sh \
	tests/integration/99-safe-mode.sh \
	tests/integration/100-md-format.sh \
	tests/integration/101-md-mount.sh \
	tests/integration/102-md-assemble.sh \
	tests/integration/104-md-states.sh \
	tests/integration/105-md-convert.sh

BINS := $(BUILD)/bin/fsvol
ifneq ($(BENCH_SRCS),)
BINS += $(BUILD)/bin/fsvol-bench
endif
# Man pages and bash completions, generated from the option tables by the
# binaries themselves (--man, --bash-completion).
DOCS := $(BUILD)/man/fsvol.8 $(BUILD)/completion/fsvol
ifneq ($(BENCH_SRCS),)
DOCS += $(BUILD)/man/fsvol-bench.1 $(BUILD)/completion/fsvol-bench
endif
# Helpers the integration tests run (independent checkers), and make bench's
# null FUSE server (89 checks what it answers), not installed.
TEST_TOOLS := $(BUILD)/bin/fsvol-verify $(BUILD)/bin/fsvol-ackwrite $(BUILD)/bin/null_fuse

.PHONY: all deps check check-long check-bins callgraph include-cycles sizes unit integration bench demo install uninstall clean
all: $(BINS) $(DOCS)

deps:
	@scripts/deps.sh

# GCC also writes each object's call graph beside it (.ci) for the call-graph
# check (make callgraph); a compiler without -fcallgraph-info skips the check.
CG_FLAGS := $(shell d=$$(mktemp -d) && $(CC) -fcallgraph-info -x c -c /dev/null -o $$d/p.o 2>/dev/null \
	&& echo -fcallgraph-info; rm -rf "$$d")
$(BUILD)/%.o $(BUILD)/%.ci: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CG_FLAGS) -c -o $(BUILD)/$*.o $<

# The dashboard page (fsvol/front/dashboard.html) built into the daemon as
# bytes, so it works offline and cannot drift from the binary.
DASHBOARD_H := $(BUILD)/gen/dashboard_html.h
$(DASHBOARD_H): fsvol/front/dashboard.html
	@mkdir -p $(dir $@)
	{ echo 'static const char http_dashboard[] = {'; xxd -i <$<; echo ', 0 };'; } >$@.tmp && mv $@.tmp $@
$(BUILD)/fsvol/front/http.o $(BUILD)/fsvol/front/http.ci: $(DASHBOARD_H)
$(BUILD)/fsvol/front/http.o $(BUILD)/fsvol/front/http.ci: CFLAGS += -I$(BUILD)/gen

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/bin/fsvol: $(CLI_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bin/fsvol-bench: $(BENCH_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/man/fsvol.8: $(BUILD)/bin/fsvol
	@mkdir -p $(dir $@)
	$< --man >$@.tmp && mv $@.tmp $@

$(BUILD)/man/fsvol-bench.1: $(BUILD)/bin/fsvol-bench
	@mkdir -p $(dir $@)
	$< --man >$@.tmp && mv $@.tmp $@

$(BUILD)/completion/%: $(BUILD)/bin/%
	@mkdir -p $(dir $@)
	$< --bash-completion >$@.tmp && mv $@.tmp $@

$(BUILD)/tests/test_bench: tests/unit/test_bench.c $(BENCH_LIB_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CHECK_LIBS)

$(BUILD)/bin/fsvol-verify: tests/tools/verify.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/bin/fsvol-ackwrite: tests/tools/ackwrite.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/bin/parity_bench $(BUILD)/bin/timer_probe $(BUILD)/bin/null_fuse: $(BUILD)/bin/%: bench/tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# ISA-L (libisal-dev), the field's library: the parity and CRC32C tests and
# parity_bench compare fsvol's kernels with it when it is installed (private:
# the flags stay off the library's objects).
ISAL_CFLAGS = $(shell pkg-config --exists libisal 2>/dev/null && echo -DHAVE_ISAL)
ISAL_LIBS = $(shell pkg-config --libs libisal 2>/dev/null)
ISAL_USERS := $(BUILD)/tests/test_parity $(BUILD)/tests/test_crc32c $(BUILD)/bin/parity_bench
$(ISAL_USERS): private CFLAGS += $(ISAL_CFLAGS)
$(ISAL_USERS): private LDLIBS += $(ISAL_LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) $(CHECK_LIBS)

# `make check` = deps, then sub-makes so pkg-config sees the installed packages:
# the include check; the binaries built with parallel jobs (CHECK_JOBS, default:
# the machine's cores); the call graph and sizes; then the integration tests
# (their own lanes, INTEGRATION_JOBS) with, beside them once the scripts that
# run alone are done, the unit tests (nice 5: they take the CPU the waiting
# scripts leave idle; reported as "beside" at the end, their output whole on
# failure). The fuzz targets' sanitizer build and bounded runs are in
# check-long: the whole library built again under ASan cost make check about
# 2 of its minutes of CPU.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: deps
	@$(MAKE) --no-print-directory include-cycles
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) check-bins
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) callgraph
	@$(MAKE) --no-print-directory sizes
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) $(UNIT_BINS)
	@$(MAKE) --no-print-directory integration \
		INTEGRATION_BESIDE="nice -n 5 $(MAKE) --no-print-directory unit UNIT_TIMEOUT=600"

# every binary the tests run (one goal: no "is up to date" line per binary)
check-bins: $(BINS) $(DOCS) $(TEST_TOOLS) $(UNIT_BINS)
	@:

# No include circle between modules (a .c and its .h), fsvol/core/ included
# (INCLUDE_CYCLES_STRICT=0 only reports circles inside fsvol/core/).
INCLUDE_CYCLES_STRICT ?= 1
include-cycles:
	@INCLUDE_CYCLES_STRICT=$(INCLUDE_CYCLES_STRICT) tests/tools/include_cycles.sh

# The file-level call graph, from the compiler: no call from a lower folder to
# a higher one, no circle of files inside a folder (tests/tools/callgraph.py).
# CALLGRAPH_PENDING: folders whose circles are only reported (none now: any
# circle fails, fsvol/core's too).
CALLGRAPH_PENDING ?=
ALL_OBJS := $(LIB_OBJS) $(CLI_OBJS) $(BENCH_OBJS)
callgraph: $(if $(CG_FLAGS),$(ALL_OBJS:.o=.ci))
ifeq ($(CG_FLAGS),)
	@echo "callgraph: skipped ($(CC) has no -fcallgraph-info)"
else
	@CALLGRAPH_PENDING=$(CALLGRAPH_PENDING) /usr/bin/python3 tests/tools/callgraph.py $(ALL_OBJS:.o=.ci)
endif

# STYLE's sizes: no function over 120 lines in fsvol/, layout/, stats/ and
# bench/ (tests/tools/func_len.py names each one); no file over 1,000 lines in
# fsvol/.
sizes:
	@/usr/bin/python3 tests/tools/func_len.py fsvol layout stats bench
	@big=$$(wc -l fsvol/*/*.[ch] | awk '$$2 != "total" && $$1 > 1000 { print $$2 ": " $$1 " lines" }'); \
	if [ -n "$$big" ]; then echo "files over 1,000 lines (split them by job):"; echo "$$big"; exit 1; fi
	@echo "sizes: no function over 120 lines, no file in fsvol/ over 1,000"

# a test case's timeout (check's CK_DEFAULT_TIMEOUT); make check's niced run
# beside the integration tests gives them 600 s: a loaded machine starves them
UNIT_TIMEOUT ?= 120
unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; CK_DEFAULT_TIMEOUT=$(UNIT_TIMEOUT) $$t; done

# The FUSE tests run under both transports where the kernel offers FUSE over
# io_uring: the main pass runs with the fuse module's enable_uring turned Y
# for its duration (tests/tools/with_fuse_uring.sh; restored after, Ctrl-C
# included), so every mount takes the ring (auto); this list runs again over
# /dev/fuse. Tests that mount no FUSE need no second run.
FUSE_TESTS := \
	tests/integration/02-roundtrip.sh \
	tests/integration/03-ext4.sh \
	tests/integration/04-degraded.sh \
	tests/integration/05-concurrency.sh \
	tests/integration/07-counters.sh \
	tests/integration/10-faults.sh \
	tests/integration/20-inflight.sh \
	tests/integration/29-defects.sh \
	tests/integration/58-no-wait.sh \
	tests/integration/89-null-fuse.sh \
	tests/integration/92-journal-forged.sh \
	tests/integration/93-nbd-unread-memory.sh \
	tests/integration/94-http-limits.sh \
	tests/integration/101-md-mount.sh
URING_PARAM := /sys/module/fuse/parameters/enable_uring

# tests/run.sh runs INTEGRATION_JOBS scripts at once (most of a script's time
# is waiting: fio runs, daemons, remounts); INTEGRATION_JOBS=1 runs them one
# after another. Scripts marked "# fsvol-test: alone" (timing and ratio
# checks, machine-wide state) run first, with nothing beside them. Then the
# longest ones (INTEGRATION_FIRST, longest first) so the lanes end together,
# the others in list order, and the FUSE tests' /dev/fuse runs last (the
# enable_uring toggle above covers the whole run; --fuse-transport dev
# ignores it).
INTEGRATION_JOBS ?= 3
INTEGRATION_FIRST := \
	tests/integration/02-roundtrip.sh \
	tests/integration/77-journal.sh \
	tests/integration/33-dashboard.sh \
	tests/integration/78-write-mostly.sh \
	tests/integration/04-degraded.sh \
	tests/integration/76-ppl.sh \
	tests/integration/05-concurrency.sh \
	tests/integration/36-bitmap.sh \
	tests/integration/34-nbd-members.sh \
	tests/integration/06-bad-input.sh \
	tests/integration/21-recovery.sh \
	tests/integration/39-spare-takeover.sh \
	tests/integration/79-failfast.sh \
	tests/integration/27-doc-examples.sh

# `make check-long` only (LONG_ONLY): the long kill, grow and power-cut cycles
# (reshapes killed three times each, power cuts), the stress scripts' short
# versions, the stripe sweep, the md guest tests (a qemu TCG boot each: md-diff
# of every level and layout, md assembling fsvol's volumes both ways) and
# docs/experiments.md's timed examples; and the FUSE tests whose /dev/fuse pass
# is long (LONG_DEV).
LONG_ONLY := \
	tests/integration/12-sweep.sh \
	tests/integration/31-crash.sh \
	tests/integration/38-powercut.sh \
	tests/integration/40-rebuild-checkpoint.sh \
	tests/integration/41-member-slots.sh \
	tests/integration/46-stress-short.sh \
	tests/integration/47-failpath-short.sh \
	tests/integration/59-doc-experiments.sh \
	tests/integration/73-grow-raid5.sh \
	tests/integration/74-grow-raid6-chunk.sh \
	tests/integration/75-grow-raid5-raid6.sh \
	tests/integration/82-reshape-degraded.sh \
	tests/integration/86-reshape-raid10.sh \
	tests/integration/90-md-diff.sh \
	tests/integration/102-md-assemble.sh \
	tests/integration/103-md-assemble-all.sh
LONG_DEV := \
	tests/integration/02-roundtrip.sh \
	tests/integration/04-degraded.sh \
	tests/integration/05-concurrency.sh

integration: $(BINS) $(TEST_TOOLS)
	@again=; if [ -w $(URING_PARAM) ] || [ "$$(cat $(URING_PARAM) 2>/dev/null)" = Y ]; then \
		echo "the FUSE tests run twice: over io_uring, then (FSVOL_FUSE_TRANSPORT=dev) over /dev/fuse"; \
		again="FSVOL_FUSE_TRANSPORT=dev $(filter-out $(LONG_DEV),$(FUSE_TESTS))"; \
	fi; FSVOL_BUILD=$(BUILD) SAN=$(SAN) tests/tools/with_fuse_uring.sh tests/run.sh \
		-j $(INTEGRATION_JOBS) $(if $(INTEGRATION_BESIDE),--beside '$(INTEGRATION_BESIDE)') \
		$(INTEGRATION_FIRST) $(filter-out $(INTEGRATION_FIRST) $(LONG_ONLY),$(INTEGRATION_TESTS)) $$again

# `make check-long`: make check, then what it leaves out (above), and the full
# stress scenarios (tests/stress/README.md).
check-long: check
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) -Otarget fuzz-check
	@FSVOL_BUILD=$(BUILD) SAN=$(SAN) tests/tools/with_fuse_uring.sh tests/run.sh -j $(INTEGRATION_JOBS) \
		$(LONG_ONLY) FSVOL_FUSE_TRANSPORT=dev $(LONG_DEV)
	@$(MAKE) --no-print-directory $(BUILD)/bin/fsvol-ackwrite
	@FSVOL_BUILD=$(BUILD) tests/tools/with_fuse_uring.sh tests/stress/adversarial.sh

bench: deps
	@$(MAKE) --no-print-directory $(BINS) $(BUILD)/bin/parity_bench $(BUILD)/bin/timer_probe $(BUILD)/bin/null_fuse
	@FSVOL_BUILD=$(BUILD) tests/tools/with_fuse_uring.sh bench/run.sh

demo: deps
	@$(MAKE) --no-print-directory $(BINS) $(DOCS)
	@FSVOL_BUILD=$(BUILD) scripts/demo.sh

install: $(BINS) $(DOCS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(BUILD)/man/fsvol.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 $(filter $(BUILD)/completion/%,$(DOCS)) $(DESTDIR)$(BASHCOMPDIR)/
ifneq ($(BENCH_SRCS),)
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(BUILD)/man/fsvol-bench.1 $(DESTDIR)$(MANDIR)/man1/
endif

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS)))
	rm -f $(DESTDIR)$(MANDIR)/man8/fsvol.8 $(DESTDIR)$(MANDIR)/man1/fsvol-bench.1
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPDIR)/,$(notdir $(filter $(BUILD)/completion/%,$(DOCS))))

clean:
	rm -rf build build-san build-fuzz

# ---- fuzzing (libFuzzer; clang-14 from Debian, see scripts/deps.sh) ----
#   make fuzz [FUZZ_SECONDS=600]   each target that long, new inputs kept in build-fuzz/corpus/
#   make fuzz-check [FUZZ_RUNS=50000]   each target for a bounded count (part of make check-long)
# The seeds in tests/fuzz/corpus/TARGET/ (and any crash that became a
# regression input there) are replayed first by every run.
FUZZ_CC      ?= $(shell command -v clang-14 || command -v clang)
FUZZ_BUILD   := build-fuzz
FUZZ_TARGETS := fuzz_bbl fuzz_bench fuzz_ctl fuzz_dsparam fuzz_json fuzz_sb fuzz_size fuzz_spindle fuzz_tracefile
FUZZ_RUNS    ?= 50000
FUZZ_SECONDS ?= 600
FUZZ_OPT     := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS   = -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Wall -Wextra -Wno-missing-field-initializers \
		-pthread -I. $(FUZZ_OPT) $(PC_CFLAGS) -MMD -MP
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o) $(BENCH_LIB_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/obj/fsvol/front/http.o: $(DASHBOARD_H)
$(FUZZ_BUILD)/obj/fsvol/front/http.o: FUZZ_CFLAGS += -I$(BUILD)/gen

$(FUZZ_BUILD)/libfuzzvol.a: $(FUZZ_LIB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_BUILD)/libfuzzvol.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libfuzzvol.a $(PC_LIBS) -lm

.PHONY: fuzz fuzz-check fuzz-bins
# the dashboard header first: a parallel build of the main binaries makes it too
fuzz-bins: $(DASHBOARD_H)
	@if [ -z "$(FUZZ_CC)" ]; then echo "SKIP fuzz: clang not installed (make deps installs clang-14)"; \
	else $(MAKE) --no-print-directory $(FUZZ_BINS); fi

# -close_fd_mask=3: the targets' own output (usage text, refusals) is noise here
fuzz-check: fuzz-bins
	@set -e; [ -n "$(FUZZ_CC)" ] || exit 0; for t in $(FUZZ_TARGETS); do \
		echo "== fuzz $$t ($(FUZZ_RUNS) runs)"; mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
		$(FUZZ_BUILD)/$$t -runs=$(FUZZ_RUNS) -close_fd_mask=3 -artifact_prefix=$(FUZZ_BUILD)/$$t- \
			$(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t 2>$(FUZZ_BUILD)/$$t.log || \
			{ tail -n 40 $(FUZZ_BUILD)/$$t.log; echo "FAIL fuzz $$t: input saved as $(FUZZ_BUILD)/$$t-*"; exit 1; }; \
		grep -E "^(Done|INFO: Seed)" $(FUZZ_BUILD)/$$t.log | sed 's/^/   /'; done

fuzz: fuzz-bins
	@set -e; [ -n "$(FUZZ_CC)" ] || exit 0; for t in $(FUZZ_TARGETS); do \
		echo "== fuzz $$t ($(FUZZ_SECONDS) s)"; mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
		$(FUZZ_BUILD)/$$t -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=1 -artifact_prefix=$(FUZZ_BUILD)/$$t- \
			$(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t; done

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(BENCH_OBJS:.o=.d)
-include $(FUZZ_LIB_OBJS:.o=.d)
