# prefault: a preloadable prefaulting shim and its command-line tool.
#
#   make                 build/libprefault.so and build/prefault
#   make test            the bats suite (tests/*.bats)
#   make test-kselftest  Linux's mm selftests without and under the shim
#   make unit            the unit tests of the decision rules (also run by make test)
#   make install         PREFIX=/usr/local DESTDIR= honoured
#   make V=1             show the full commands
#   make DEVELOPER=1     strict warnings, as errors
#   make SANITIZE=address,undefined | SANITIZE=thread   (builds into build-<name>/)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib/prefault
DATADIR ?= $(PREFIX)/share/prefault
MANDIR ?= $(PREFIX)/share/man

CC ?= cc
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(DEVELOPER),1)
WARN += -Werror -Wpointer-arith -Wcast-align -Wwrite-strings -Wundef -Wformat=2 -Wvla -Wconversion
endif

ifneq ($(SANITIZE),)
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -DPF_LOCK_CHECK
BUILD ?= build-$(subst $(comma),-,$(SANITIZE))
else
BUILD ?= build
endif
comma := ,

ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2);
endif

# The layout shows the layers (shim/README draws them): the shim's own
# modules in shim/, its floor in shim/floor/ (the one place that meets libc
# and the kernel), and in lib/ what the shim and the tool share (the policy
# language, the report's description and text, formatting: pure).
# The shim, top to bottom:
SHIM_SRC := shim/interpose.c shim/init.c shim/report.c shim/prefault.c shim/auto.c shim/stack.c \
            shim/worker.c shim/pool.c shim/carve.c shim/recycle.c shim/profile.c shim/profile_sample.c \
            shim/profile_tables.c shim/match.c shim/regions.c shim/stats.c shim/ranges.c \
            lib/policy_file.c lib/report_text.c lib/policy.c lib/glob.c lib/sbuf.c \
            shim/floor/settings.c shim/floor/os.c shim/floor/glue.c
# What the command-line tool shares with the shim: the parser and its file
# reader, and the formatting helpers.
PURE_SRC := lib/policy_file.c lib/report_text.c lib/policy.c lib/glob.c lib/sbuf.c
# The command-line tool, top to bottom: the commands, then what they share.
CLI_SRC := tools/prefault.c tools/cli_run.c tools/cli_check.c tools/cli_profile.c tools/cli_tune.c tools/cli_trial.c \
           tools/cli_bench.c tools/suggest.c tools/learned.c tools/candidates.c tools/profile_run.c tools/profile_out.c tools/profile_data.c tools/symbols.c tools/compare.c \
           tools/decide.c tools/reports.c tools/json.c tools/child.c tools/proctree.c tools/cause.c tools/env.c tools/paths.c tools/progress.c \
           tools/options.c tools/seccomp.c tools/fmt.c tools/spread.c tools/libc_io.c tools/elfread.c tools/demangle.c tools/xz.c
PROBES := $(BUILD)/probes/pfprobe $(BUILD)/probes/ioprobe $(BUILD)/probes/libstack.so \
          $(BUILD)/probes/mmprobe $(BUILD)/probes/libcallA.so $(BUILD)/probes/libcallB.so \
          $(BUILD)/probes/libcount.so $(BUILD)/probes/costprobe $(BUILD)/probes/libfwd.so \
          $(BUILD)/probes/liblockalloc.so $(BUILD)/probes/libsysfwd.so $(BUILD)/probes/libsigmmap.so \
          $(BUILD)/probes/carveprobe $(BUILD)/probes/autoprobe

SHIM_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(SHIM_SRC))
# run, profile and trial: the program as our child, and its reports read back
CLI_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRC)) $(patsubst %.c,$(BUILD)/obj/cli/%.o,$(PURE_SRC))

# -fdata-sections with --sort-section=alignment (below): the small variables
# every process writes at start-up end up packed on a few pages instead of
# strewn between the big tables, and each page a process touches costs a fault.
SHIM_CFLAGS := -fPIC -fvisibility=hidden -fno-strict-aliasing -fdata-sections -D_GNU_SOURCE -Ishim -Ishim/floor -Ilib
DEPFLAGS = -MMD -MP
DEFS := -DPREFAULT_LIBDIR='"$(LIBDIR)"' -DPREFAULT_DATADIR='"$(DATADIR)"'

all: $(BUILD)/libprefault.so $(BUILD)/prefault

$(BUILD)/obj/shim/%.o: shim/%.c Makefile
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(SANFLAGS) $(SHIM_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/obj/lib/%.o: lib/%.c Makefile
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(SANFLAGS) $(SHIM_CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The exported symbols come from the one list in shim/floor/entries.h.
$(BUILD)/libprefault.map: shim/libprefault.map.S shim/floor/entries.h
	$(call say,GEN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -E -P -x c -Ishim/floor shim/libprefault.map.S -o $@

# -z noseparate-code: two program headers fewer, and the loader puts an
# array of them on the stack while it maps a preload; with them the shim
# costs a program on a 16 KiB stack no more than an empty preload does.
$(BUILD)/libprefault.so: $(SHIM_OBJ) $(BUILD)/libprefault.map
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SANFLAGS) -shared -o $@ $(SHIM_OBJ) -Wl,--version-script=$(BUILD)/libprefault.map \
		-Wl,-z,relro,-z,now,-z,noseparate-code,--sort-section=alignment $(if $(SANITIZE),,-Wl,-z,defs) -ldl -lpthread

$(BUILD)/obj/cli/lib/%.o: lib/%.c Makefile
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(SANFLAGS) -D_GNU_SOURCE -Ilib $(DEPFLAGS) -c -o $@ $<

$(BUILD)/obj/tools/%.o: tools/%.c Makefile
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(SANFLAGS) -D_GNU_SOURCE $(DEFS) -Ilib $(DEPFLAGS) -c -o $@ $<

$(BUILD)/prefault: $(CLI_OBJ)
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(CLI_OBJ) -lm -lpthread

# Probes: -fno-builtin keeps each malloc/mmap a real call the shim can see.
$(BUILD)/probes/%: tests/probes/%.c $(wildcard tests/probes/*.h)
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -Wall -fno-builtin -rdynamic -D_GNU_SOURCE -o $@ $< -lpthread

# mmprobe dlopens libraries (libdl before glibc 2.34).
$(BUILD)/probes/mmprobe: tests/probes/mmprobe.c $(wildcard tests/probes/*.h)
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -Wall -fno-builtin -rdynamic -D_GNU_SOURCE -o $@ $< -lpthread -ldl

$(BUILD)/probes/lib%.so: tests/probes/lib%.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -Wall -fPIC -shared -D_GNU_SOURCE -o $@ $< -ldl

# Hostile round 2's reproducers (tests/invisible.bats): small programs that
# once behaved differently under the shim.
H2 := $(patsubst tests/probes/hostile2/%.c,$(BUILD)/probes/h2/%,$(wildcard tests/probes/hostile2/*.c))
$(BUILD)/probes/h2/%: tests/probes/hostile2/%.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -w -D_GNU_SOURCE -o $@ $< -lpthread

# Unit tests of the tool's pure modules (the decision rules), built with the
# probes so every bats run has them; `make unit` runs them on their own.
UNIT := $(BUILD)/unit/decide_test $(BUILD)/unit/demangle_test
$(BUILD)/unit/decide_test: tests/unit/decide_test.c tools/decide.c tools/spread.c tools/decide.h tools/cli.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(SANFLAGS) -D_GNU_SOURCE -Itools -Ilib -o $@ tests/unit/decide_test.c \
		tools/decide.c tools/spread.c

# Hostile round 3's (issue 22): the shim-side findings, tests/hangs.bats and
# tests/limits.bats.
H3 := $(patsubst tests/probes/hostile3/%.c,$(BUILD)/probes/h3/%,$(wildcard tests/probes/hostile3/*.c))
$(BUILD)/probes/h3/%: tests/probes/hostile3/%.c tests/probes/probe.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -Wall -D_GNU_SOURCE -Wl,--export-dynamic-symbol=pthread_setcancelstate -o $@ $< -lpthread

# Hostile round 4's (carve and recycle, 2026-12-04): tests/invisible.bats.
H4 := $(patsubst tests/probes/hostile4/%.c,$(BUILD)/probes/h4/%,$(wildcard tests/probes/hostile4/*.c))
$(BUILD)/probes/h4/%: tests/probes/hostile4/%.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -Wall -D_GNU_SOURCE -o $@ $< -lpthread

# Hostile round 5's (process-wide rules, 2026-12-07): tests/invisible.bats.
H5 := $(patsubst tests/probes/hostile5/%.c,$(BUILD)/probes/h5/%,$(wildcard tests/probes/hostile5/*.c))
$(BUILD)/probes/h5/%: tests/probes/hostile5/%.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -Wall -D_GNU_SOURCE -o $@ $< -lpthread

# The symbol reader's pure parts: the demangler's cases (a unit test), and
# the xz decoder as a command (tests/symbols.bats compares it with xz -d).
$(BUILD)/unit/demangle_test: tests/unit/demangle_test.c tools/demangle.c tools/demangle.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(SANFLAGS) -D_GNU_SOURCE -Itools -o $@ tests/unit/demangle_test.c tools/demangle.c

$(BUILD)/unit/xz_test: tests/unit/xz_test.c tools/xz.c tools/xz.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(SANFLAGS) -D_GNU_SOURCE -Itools -o $@ tests/unit/xz_test.c tools/xz.c

probes: $(PROBES) $(H2) $(H3) $(H4) $(H5) $(UNIT) $(BUILD)/unit/xz_test

unit: $(UNIT)
	$(Q)for t in $(UNIT); do $$t >/dev/null || { $$t | grep -v '^ok'; exit 1; }; done

$(BUILD)/examples/%: examples/%.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -Wall -D_GNU_SOURCE -fno-builtin-malloc -o $@ $<

$(BUILD)/bench/%: bench/%.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -Wall -D_GNU_SOURCE -fno-builtin -o $@ $< -lpthread

$(BUILD)/bench/%: bench/%.cc
	$(call say,CXX,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CXX) -O2 -g -Wall -o $@ $<

# The floor for any preloaded malloc: bare forwarding wrappers (issue 10);
# tests/cost.bats holds the shim's malloc and free to it.
$(BUILD)/bench/libfwd.so $(BUILD)/probes/libfwd.so: bench/fwd.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -Wall -fPIC -shared -fvisibility=hidden -D_GNU_SOURCE -o $@ $< -ldl

OBSERVE_BENCH := $(BUILD)/bench/bintrees $(BUILD)/bench/newdelete $(BUILD)/bench/libfwd.so \
                 $(BUILD)/bench/overhead $(BUILD)/bench/startup

# Benchmarks: timings live here, never in tests.  Figures in BENCHMARKS.md.
bench: all $(BUILD)/bench/overhead $(BUILD)/bench/large $(BUILD)/bench/arena $(BUILD)/bench/pairs $(BUILD)/bench/clear \
       $(BUILD)/bench/mincore $(BUILD)/bench/hpcold \
       bench-observe
	$(Q)$(BUILD)/prefault bench -r 3 512M
	$(Q)sh bench/churn.sh $(BUILD) 7
	$(Q)sh bench/pairs.sh $(BUILD) 7
	$(Q)$(BUILD)/bench/clear 1024 2000 256
	$(Q)$(BUILD)/bench/clear 1024 2000 1
	$(Q)$(BUILD)/bench/mincore 256
	$(Q)$(BUILD)/bench/hpcold 64 5
	$(Q)sh bench/large.sh $(BUILD) 5 512
	$(Q)sh bench/background.sh $(BUILD) 7 1024
	$(Q)sh bench/overhead.sh $(BUILD) 31 3000 touch
	$(Q)sh bench/overhead.sh $(BUILD) 21 200000 calls
	$(Q)sh bench/overhead.sh $(BUILD) 21 5000000 malloc

# Observe mode and never-matching rules against no preload and against the
# floor, on allocation-heavy work and start-up (issue 10; about 5 minutes).
bench-observe: all $(OBSERVE_BENCH)
	$(Q)sh bench/observe.sh $(BUILD)

# The same on pyperformance benchmarks (needs the venv bench/pyperf.sh describes;
# about 4 minutes).
bench-pyperf: all
	$(Q)sh bench/pyperf.sh $(BUILD)

# prefault tune against the best hand-written policies, on the example, a
# large buffer and two Python scripts (issue 12; about 10 minutes).
bench-tune: all $(BUILD)/examples/stream $(BUILD)/bench/large
	$(Q)sh bench/tune.sh $(BUILD)

# The learner (prefault run --auto) against no shim, the best hand-written or
# tuned policy and the policy it learned, on the example, CPython, probes and
# programs nobody here wrote (issue 21; about 15 minutes; a quiet machine).
bench-auto: all $(BUILD)/examples/stream $(BUILD)/bench/large $(BUILD)/bench/arena
	$(Q)sh bench/auto.sh $(BUILD) 8

# CPython workloads with and without the cpython policy (Debian's python3).
bench-python: all $(BUILD)/bench/arena
	$(Q)sh bench/python.sh $(BUILD) 7

# The main job: the bundled example without and with the streaming policy.
demo: all $(BUILD)/examples/stream
	$(Q)sh examples/demo.sh $(BUILD)

# The suite needs bats and, as a test helper, /usr/bin/python3.  On a fresh
# Debian machine they come from Debian's packages: installed here as root
# or through sudo -n; otherwise the command to run is printed (exit 2).
BATS ?= bats
TEST_PY ?= /usr/bin/python3
TEST_PKGS_CMD = apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
test-deps:
	$(Q)missing=; \
	command -v $(BATS) >/dev/null 2>&1 || missing="$$missing bats"; \
	[ -x $(TEST_PY) ] || missing="$$missing python3"; \
	[ -n "$$missing" ] || exit 0; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "make test needs:$$missing (bats-core, and python3 as $(TEST_PY)); install them, then run make test again" >&2; \
		exit 2; \
	fi; \
	if [ "$$(id -u)" -eq 0 ]; then sudo=; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else \
		echo "make test needs Debian's packages:$$missing.  Install them with:" >&2; \
		echo "    sudo sh -c 'apt-get update && apt-get install -y --no-install-recommends$$missing'" >&2; \
		exit 2; \
	fi; \
	echo "make test: installing Debian's packages:$$missing" >&2; \
	$$sudo sh -c '$(TEST_PKGS_CMD)'"$$missing" >/dev/null || exit 2; \
	command -v $(BATS) >/dev/null 2>&1 && [ -x $(TEST_PY) ] || { echo "make test: still no $(BATS) or $(TEST_PY)" >&2; exit 2; }

.PHONY: test-deps
test: test-deps all probes
	$(Q)PREFAULT_BUILD=$(abspath $(BUILD)) $(BATS) $(if $(BATS_JOBS),--jobs $(BATS_JOBS)) tests

# CPython's regression tests under the shim and the cpython policy (minutes).
test-cpython: all
	$(Q)sh tests/cpython.sh $(BUILD)

# Real programs under an aggressive policy: same output and exit status.
test-real: all
	$(Q)sh tests/real.sh $(BUILD)

# Linux's own memory selftests (tools/testing/selftests/mm of Debian's
# linux-source-6.12, unpacked and built into $(BUILD)/kselftest: nothing of the
# kernel's is kept here) without the shim, then under it with an empty policy,
# every shipped policy, the aggressive one and recycle-everything; any
# difference not listed in tests/kselftest.exceptions fails (root; 5 minutes).
test-kselftest: all
	$(Q)sh tests/kselftest-build.sh $(BUILD)
	$(Q)sh tests/kselftest.sh $(BUILD)

# The suite against sanitized builds of the shim: UBSan alone (every test),
# then ASan+UBSan and TSan with their runtime preloaded first (tests that the
# runtime's own malloc, mlock, vfork or interceptors change skip themselves).
SAN_CFLAGS ?= -O1 -g
test-sanitize:
	$(Q)$(MAKE) --no-print-directory SANITIZE=undefined CFLAGS="$(SAN_CFLAGS)" all probes
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined CFLAGS="$(SAN_CFLAGS)" all probes
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread CFLAGS="$(SAN_CFLAGS)" all probes
	$(Q)sh tests/sanitize.sh build-undefined undefined
	$(Q)sh tests/sanitize.sh build-address-undefined address
	$(Q)sh tests/sanitize.sh build-thread thread

# The parser under libFuzzer with ASan and UBSan, seeded from policies/ and
# the regression inputs in tests/fuzz/corpus (FUZZ_SECONDS, 600 by default).
FUZZ_SECONDS ?= 600
FUZZ_CC ?= clang
$(BUILD)/fuzz_policy: tests/fuzz/fuzz_policy.c $(PURE_SRC) tools/libc_io.c $(wildcard lib/*.h)
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
		-Ilib -o $@ tests/fuzz/fuzz_policy.c $(PURE_SRC) tools/libc_io.c

# The dictionary: tests/fuzz/policy.dict and the action words of actions.h.
$(BUILD)/policy.dict: tests/fuzz/policy.dict tests/fuzz/dict_actions.c $(PURE_SRC) tools/libc_io.c $(wildcard lib/*.h)
	$(call say,GEN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -D_GNU_SOURCE -Ilib -o $(BUILD)/dict_actions tests/fuzz/dict_actions.c $(PURE_SRC) tools/libc_io.c
	$(Q){ grep -v '^#' tests/fuzz/policy.dict; $(BUILD)/dict_actions; } >$@

fuzz: $(BUILD)/fuzz_policy $(BUILD)/policy.dict
	$(Q)mkdir -p $(BUILD)/fuzz-corpus
	$(Q)$(BUILD)/fuzz_policy -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -dict=$(BUILD)/policy.dict \
		-artifact_prefix=$(BUILD)/fuzz- $(BUILD)/fuzz-corpus tests/fuzz/corpus policies

# The readers of files the tool did not write: the xz decoder, the ELF symbol
# reader (with MiniDebugInfo and the demangler behind it) and the demangler,
# seeded from tests/fuzz/corpus-NAME (FUZZ_SECONDS each).
FUZZ_SYMBOLS := xz elf demangle
FUZZ_SRC_xz := tools/xz.c
FUZZ_SRC_elf := tools/elfread.c tools/symbols.c tools/xz.c tools/demangle.c
FUZZ_SRC_demangle := tools/demangle.c
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tools/*.h) tools/xz.c tools/elfread.c tools/symbols.c tools/demangle.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
		-Itools -o $@ $< $(FUZZ_SRC_$*)

fuzz-symbols: $(patsubst %,$(BUILD)/fuzz_%,$(FUZZ_SYMBOLS))
	$(Q)for f in $(FUZZ_SYMBOLS); do mkdir -p $(BUILD)/fuzz-corpus-$$f; \
		$(BUILD)/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -artifact_prefix=$(BUILD)/fuzz-$$f- \
			$(BUILD)/fuzz-corpus-$$f tests/fuzz/corpus-$$f || exit 1; done

# Every kept input (found crashes, once fixed, are kept in tests/fuzz/corpus*) through each reader once.
fuzz-regress: $(BUILD)/fuzz_policy $(patsubst %,$(BUILD)/fuzz_%,$(FUZZ_SYMBOLS))
	$(Q)$(BUILD)/fuzz_policy -runs=0 tests/fuzz/corpus policies
	$(Q)for f in $(FUZZ_SYMBOLS); do $(BUILD)/fuzz_$$f -runs=0 tests/fuzz/corpus-$$f || exit 1; done

install: all
	$(call say,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(DATADIR)/policies
	$(Q)install -m 755 $(BUILD)/prefault $(DESTDIR)$(BINDIR)/prefault
	$(Q)install -m 644 $(BUILD)/libprefault.so $(DESTDIR)$(LIBDIR)/libprefault.so
	$(Q)install -m 644 policies/*.policy $(DESTDIR)$(DATADIR)/policies/
	$(Q)install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	$(Q)install -m 644 man/prefault.1 $(DESTDIR)$(MANDIR)/man1/prefault.1
	$(Q)install -m 644 man/prefault.policy.5 $(DESTDIR)$(MANDIR)/man5/prefault.policy.5

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/prefault $(DESTDIR)$(LIBDIR)/libprefault.so
	rm -f $(DESTDIR)$(MANDIR)/man1/prefault.1 $(DESTDIR)$(MANDIR)/man5/prefault.policy.5
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build build-*

-include $(SHIM_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

.PHONY: all probes unit test test-cpython test-real test-kselftest test-sanitize fuzz fuzz-symbols fuzz-regress install uninstall clean demo bench bench-python \
	bench-observe bench-pyperf bench-tune bench-auto
.DELETE_ON_ERROR:
