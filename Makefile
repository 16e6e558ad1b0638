# fsvol: software RAID emulator with instrumentation.
#   make            build (optimised)         make check     deps + build + every test
#   make SAN=1 check  ASan+UBSan build of all   make bench     ratio benchmarks
#   make demo       the guided demo           make install   PREFIX=/usr/local DESTDIR=
CC      ?= cc
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib/fsvol
SAN     ?= 0

ifeq ($(SAN),1)
BUILD   := build-san
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
else
BUILD   := build
OPT     := -O2 -g
endif

# pkg-config is evaluated lazily (=) so `make check` can install the packages first.
PC_CFLAGS = $(shell pkg-config --cflags fuse3 liburing)
PC_LIBS   = $(shell pkg-config --libs fuse3 liburing)
CHECK_LIBS = $(shell pkg-config --libs check)
CFLAGS  += -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Wall -Wextra -Werror \
	   -Wno-missing-field-initializers -pthread -I. $(OPT) $(PC_CFLAGS) -MMD -MP
LDFLAGS += $(OPT) -pthread
LDLIBS  += $(PC_LIBS) -lm

# Module sources: one concern per file, fsvol/ in folders by concern
# (core members model meta front util); fsvol/cli/ makes the `fsvol` command.
NBD_PLUGIN_SRC := fsvol/front/nbd_plugin.c
LIB_SRCS := $(sort $(wildcard layout/*.c) $(wildcard stats/*.c) \
	$(filter-out fsvol/cli/% $(NBD_PLUGIN_SRC),$(wildcard fsvol/*/*.c)))
CLI_SRCS := $(sort $(wildcard fsvol/cli/*.c))
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_LIB_SRCS := $(filter-out bench/main.c,$(BENCH_SRCS))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/%.o)
BENCH_LIB_OBJS := $(BENCH_LIB_SRCS:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libfsvol.a
# The NBD export: an nbdkit plugin, linked from position-independent objects
# of the library (a separate object dir), run by `fsvol serve`.
LIB_PIC_OBJS := $(LIB_SRCS:%.c=$(BUILD)/pic/%.o)
NBD_PLUGIN := $(BUILD)/lib/fsvol/fsvol-nbdkit.so

# Unit tests (Check), sorted and explicit.
UNIT_TESTS := \
	test_bench \
	test_layout \
	test_parity \
	test_sb \
	test_size \
	test_spindle \
	test_stats \
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
	tests/integration/16-nbd-export.sh

BINS := $(BUILD)/bin/fsvol
ifneq ($(BENCH_SRCS),)
BINS += $(BUILD)/bin/fsvol-bench
endif
# Helpers the integration tests run (independent checkers), not installed.
TEST_TOOLS := $(BUILD)/bin/fsvol-verify

.PHONY: all deps check unit integration bench demo install uninstall clean
all: $(BINS) $(NBD_PLUGIN)

deps:
	@scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<

# Where `fsvol serve` looks for the plugin when it is not beside the binary
# (../lib/fsvol/).
$(BUILD)/fsvol/cli/nbd_launch.o: CFLAGS += -DFSVOL_LIBDIR='"$(LIBDIR)"'
# The sanitizer build's plugin has UBSan only: ASan would have to be preloaded
# into nbdkit, whose exit then deadlocks in libp11-kit's destructor (seen with
# nbdkit 1.32). The same objects run under ASan in fsvol's FUSE daemon.
ifeq ($(SAN),1)
$(LIB_PIC_OBJS) $(BUILD)/pic/$(NBD_PLUGIN_SRC:.c=.o) $(NBD_PLUGIN): \
	OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=undefined -fno-sanitize-recover=undefined
endif

$(NBD_PLUGIN): $(BUILD)/pic/$(NBD_PLUGIN_SRC:.c=.o) $(LIB_PIC_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/bin/fsvol: $(CLI_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bin/fsvol-bench: $(BENCH_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_bench: tests/unit/test_bench.c $(BENCH_LIB_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CHECK_LIBS)

$(BUILD)/bin/fsvol-verify: tests/tools/verify.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/bin/parity_bench $(BUILD)/bin/timer_probe: $(BUILD)/bin/%: bench/tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) $(CHECK_LIBS)

# `make check` = deps, then a sub-make so pkg-config sees the installed packages.
check: deps
	@$(MAKE) --no-print-directory unit integration

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; CK_DEFAULT_TIMEOUT=120 $$t; done

integration: $(BINS) $(NBD_PLUGIN) $(TEST_TOOLS)
	@FSVOL_BUILD=$(BUILD) SAN=$(SAN) tests/run.sh $(INTEGRATION_TESTS)

bench: deps
	@$(MAKE) --no-print-directory $(BINS) $(NBD_PLUGIN) $(BUILD)/bin/parity_bench $(BUILD)/bin/timer_probe
	@FSVOL_BUILD=$(BUILD) bench/run.sh

demo: deps
	@$(MAKE) --no-print-directory $(BINS)
	@FSVOL_BUILD=$(BUILD) scripts/demo.sh

install: $(BINS) $(NBD_PLUGIN)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(LIBDIR)
	install -m 0644 $(NBD_PLUGIN) $(DESTDIR)$(LIBDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS)))
	rm -f $(DESTDIR)$(LIBDIR)/$(notdir $(NBD_PLUGIN))

clean:
	rm -rf build build-san

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(BENCH_OBJS:.o=.d) $(LIB_PIC_OBJS:.o=.d) $(BUILD)/pic/fsvol/front/nbd_plugin.d
