# tschunk: GNU Makefile. Honours CC CFLAGS CPPFLAGS LDFLAGS PREFIX DESTDIR.
# Every output goes under build/<flavour>/.

# The version lives in include/tschunk.h only; the soname and libtschunk.pc follow it.
version_part = $(shell sed -n 's/^\#define TSCHUNK_VERSION_$(1) *\([0-9]*\)$$/\1/p' include/tschunk.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION := $(VERSION_MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin

CC ?= cc
CFLAGS ?= -O2 -g
CLANG ?= clang
FUZZ_SECONDS ?= 30

WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wundef \
        -Wcast-qual -Wcast-align -Wvla -Wformat=2 -Wconversion -Wno-sign-conversion -Wfloat-equal
# Criterion's assertion macros trip these two; test code only.
TEST_WARN := $(filter-out -Wconversion -Wfloat-equal -Wmissing-prototypes,$(WARN))
WERROR ?=
# -ffp-contract=off: no a * b + c fused into one rounding (lib/common/common.h says why).
BASE_CFLAGS := -std=c11 $(WARN) $(WERROR) -ffp-contract=off -Iinclude -MMD -MP
# gcc on x86-64 clears or copies a known 100-1,000 bytes (a group's parse state, an iterator, an encoder's
# learned state) with `rep stos` / `rep movs`, whose start-up costs dozens of cycles on AMD cores: about
# 40 ns of each codec-2 group's parse (bench/MEASUREMENTS.md, "Clearing without rep stos, the append's
# entry, and MASKED groups (0.22.0)"). Up to 512 bytes they are inline vector stores instead; above, the
# C library's call, whose wide copies beat a 16-byte loop there. Compilers without the flags (clang, other
# targets) keep their own choice.
STRINGOP := vector_loop:512:noalign,libcall:-1:noalign
STRINGOP_FLAGS := $(shell $(CC) -Werror -mmemset-strategy=$(STRINGOP) -mmemcpy-strategy=$(STRINGOP) \
                    -x c -c /dev/null -o /dev/null 2>/dev/null && echo -mmemset-strategy=$(STRINGOP) -mmemcpy-strategy=$(STRINGOP))
LIB_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden $(STRINGOP_FLAGS)

BUILD ?= build/release
LIB_SRC := $(sort $(wildcard lib/*/*.c))
LIBS := -lm
# libroaring: the reference the tests and fuzzers hold the segment bitmaps against; the library reads and
# writes them itself (README "Dependencies")
ROARING_LIBS := -lroaring
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
STATIC := $(BUILD)/libtschunk.a
SHARED := $(BUILD)/libtschunk.so.$(VERSION)
SONAME := libtschunk.so.$(VERSION_MAJOR)
PCFILE := $(BUILD)/libtschunk.pc
CLI := $(BUILD)/tschunk
CLI_SRC := $(sort $(wildcard tools/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(BUILD)/tests/run_tests
# Preloaded by the CLI's out-of-memory tests; built without CFLAGS, so without sanitizers (tests/oom_shim.c).
OOM_SHIM := $(BUILD)/tests/oom_shim.so
# Preloaded by the CLI's durability test to see its fsyncs (tests/sync_shim.c).
SYNC_SHIM := $(BUILD)/tests/sync_shim.so
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_NAMES := $(FUZZ_SRC:fuzz/%.c=%)
REPLAY_BINS := $(FUZZ_NAMES:%=$(BUILD)/replay/%)
BENCH_BIN := $(BUILD)/bench/bench
SKETCH_BENCH_BIN := $(BUILD)/bench/sketch_bench
SEGMENT_BENCH_BIN := $(BUILD)/bench/segment_bench

.PHONY: all lib cli deps test test-run asan analyze bench bench-ab bench-ab-series bench-glance bench-instr \
        bench-instr-compare tune codec2-probe vectors mapping-memo fuzz fuzz-run fuzz-replay tsan tsan-run install \
        uninstall version check-install check-bigendian check-arm64 check-i386 msan check-symbols demo readme-example \
        coverage clean

all: lib cli

lib: $(STATIC) $(BUILD)/libtschunk.so $(PCFILE)
cli: $(CLI)

deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(VECTOR_CFLAGS) -c $< -o $@

# Codec 2's group loops (prefix sums, frames of reference) vectorize only with gcc's dynamic cost
# model (-O2 uses "very cheap", which refuses loops that need an epilogue); clang vectorizes at -O2.
VECTOR_FLAG := $(shell $(CC) -Werror -fvect-cost-model=dynamic -x c -c /dev/null -o /dev/null 2>/dev/null && echo -fvect-cost-model=dynamic)
$(BUILD)/lib/codec2/%.o: VECTOR_CFLAGS := $(VECTOR_FLAG)
# The sketch's batch add keeps its running statistics (Kahan sum, count, min, max) in scalar registers:
# gcc's straight-line vectorizer packed them into one vector, adding shuffles to the Kahan chain at every
# quad of values (tschunk_sketch_add_many 3.6 -> 3.1 ns a value without it, Zen 5). The decoder's
# tsc_store_add_many likewise: it had the store's lowest and highest index in one vector, moved to and
# from the integer registers at every bin.
NO_SLP_FLAG := $(shell $(CC) -Werror -fno-tree-slp-vectorize -x c -c /dev/null -o /dev/null 2>/dev/null && echo -fno-tree-slp-vectorize)
$(BUILD)/lib/sketch/add_simd.o $(BUILD)/lib/sketch/sketch.o $(BUILD)/lib/sketch/codec.o: VECTOR_CFLAGS := $(NO_SLP_FLAG)

$(STATIC): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/libtschunk.so: $(SHARED)
	ln -sf libtschunk.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf libtschunk.so.$(VERSION) $@

$(PCFILE): Makefile include/tschunk.h # the version is in the header
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	  'Name: libtschunk' 'Description: time-series chunk codec (Gorilla-style), DDSketch summaries and segments' \
	  'Version: $(VERSION)' 'Libs: -L$${libdir} -ltschunk' 'Libs.private: $(LIBS)' \
	  'Cflags: -I$${includedir}' > $@

$(CLI): $(CLI_SRC) $(wildcard tools/*.h) $(STATIC) include/tschunk.h lib/segment/durable.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -Itools -Ilib $(CLI_SRC) $(STATIC) $(LDFLAGS) $(LIBS) -o $@

# ---- tests ---------------------------------------------------------------
$(TEST_BIN): $(TEST_SRC) tools/csv.c tools/csv.h tests/test_util.h tests/cli_util.h tests/spec_util.h tests/spec_decoders.h tests/spec_segment.h $(STATIC) fuzz/harness.h \
  | $(OOM_SHIM) $(SYNC_SHIM)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L $(TEST_WARN) $(WERROR) -Iinclude -Ilib $(CPPFLAGS) $(CFLAGS) $(TEST_SRC) $(STATIC) \
	  $(LDFLAGS) -lcriterion $(ROARING_LIBS) $(LIBS) -o $@

$(OOM_SHIM) $(SYNC_SHIM): $(BUILD)/tests/%.so: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) $(WERROR) -O2 -fPIC -shared $< -ldl -o $@

$(BUILD)/replay/%: fuzz/%.c fuzz/standalone_main.c fuzz/harness.h fuzz/decode_loops.h tests/spec_decoders.h tests/spec_segment.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Ilib $(CPPFLAGS) $(CFLAGS) $< fuzz/standalone_main.c $(STATIC) $(LDFLAGS) $(ROARING_LIBS) \
	  $(LIBS) -o $@

fuzz-replay: $(REPLAY_BINS)
	@for t in $(FUZZ_NAMES); do \
	  $(BUILD)/replay/$$t fuzz/corpus/$$t || exit 1; done

# Both README examples, compiled as they stand (warnings as errors: the front door must build clean) and run (the
# segment one writes day.tseg in its directory).
readme-example: $(STATIC)
	@mkdir -p $(BUILD)/example
	sh scripts/readme-example.sh README.md > $(BUILD)/example/example.c
	sh scripts/readme-example.sh README.md segment > $(BUILD)/example/segment.c
	for x in example segment; do \
	  $(CC) $(BASE_CFLAGS) -Werror $(CPPFLAGS) $(CFLAGS) $(BUILD)/example/$$x.c $(STATIC) $(LDFLAGS) $(LIBS) \
	    -o $(BUILD)/example/$$x || exit 1; done
	$(BUILD)/example/example > /dev/null
	cd $(BUILD)/example && ./segment

test: deps
	@$(MAKE) --no-print-directory test-run

test-run: all $(TEST_BIN) fuzz-replay readme-example
	TSCHUNK_REPO=$(CURDIR) TSCHUNK_CLI=$(CURDIR)/$(CLI) $(TEST_BIN) --jobs 2

# float-cast-overflow: a double out of an integer's range converted to it is undefined, and gcc's "undefined" set
# leaves the check out (clang's, which the fuzzers use, has it).
asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan \
	  CFLAGS="-O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  LDFLAGS="-fsanitize=address,undefined,float-cast-overflow" \
	  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp test-run

# Threads sharing one open segment under ThreadSanitizer (tests/threads.c; Criterion's runner does not start
# under TSan, so a program of its own).
tsan: deps
	@$(MAKE) --no-print-directory BUILD=build/tsan CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" \
	  tsan-run

tsan-run: $(BUILD)/tests/threads
	@mkdir -p $(BUILD)/threads
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" $(BUILD)/tests/threads $(BUILD)/threads

$(BUILD)/tests/threads: tests/threads.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) tests/threads.c $(STATIC) $(LDFLAGS) $(LIBS) -pthread -o $@

# ---- benchmarks ----------------------------------------------------------
$(BENCH_BIN): bench/bench.c bench/workloads.h bench/timing.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -Ibench bench/bench.c $(STATIC) $(LDFLAGS) $(LIBS) -o $@

$(BUILD)/bench/tune: bench/tune.c bench/workloads.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -Ibench $< $(LDFLAGS) $(LIBS) -o $@

# Bits spent by candidate dod bucket tables and window-reset thresholds (README "Format choices").
tune: $(BUILD)/bench/tune
	$(BUILD)/bench/tune $(BENCH_ARGS)

$(BUILD)/bench/codec2_probe: bench/codec2_probe.c bench/workloads.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -D_POSIX_C_SOURCE=200809L $(CPPFLAGS) $(CFLAGS) -Ibench $< $(STATIC) $(LDFLAGS) $(LIBS) -o $@

# What decimal scaling would save over the XOR stream on the shared datasets (README "Roadmap": codec 2).
codec2-probe: $(BUILD)/bench/codec2_probe
	$(BUILD)/bench/codec2_probe ../shared/datasets $(BENCH_ARGS)

$(SKETCH_BENCH_BIN): bench/sketch_bench.c bench/workloads.h bench/timing.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -D_POSIX_C_SOURCE=200809L $(CPPFLAGS) $(CFLAGS) -Ibench bench/sketch_bench.c $(STATIC) \
	  $(LDFLAGS) $(LIBS) -o $@

$(SEGMENT_BENCH_BIN): bench/segment_bench.c bench/workloads.h bench/timing.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -D_POSIX_C_SOURCE=200809L $(CPPFLAGS) $(CFLAGS) -Ibench bench/segment_bench.c $(STATIC) \
	  $(LDFLAGS) $(LIBS) -o $@

bench: $(BENCH_BIN) $(SKETCH_BENCH_BIN) $(SEGMENT_BENCH_BIN) $(BUILD)/bench/codec2_probe
	$(BENCH_BIN) $(BENCH_ARGS)
	$(SKETCH_BENCH_BIN) $(BENCH_ARGS)
	$(SEGMENT_BENCH_BIN) $(BENCH_ARGS)

# Same-process A/B of two builds' shared libraries (bench/MEASUREMENTS.md, "Wall time, ns per sample (0.4.0)"):
#   make bench-ab AB_A=old/libtschunk.so AB_B=$(BUILD)/libtschunk.so [AB_DATA="../shared/datasets/*/*.gz"] [AB_SKETCH=1 | AB_PROM=1]
#   [AB_MANY=1: B appends through tschunk_append_many; AB_A=$(BUILD)/libtschunk.so too compares one by one with bulk]
$(BUILD)/bench/ab_libs: bench/ab_libs.c bench/workloads.h bench/timing.h bench/dl_load.h include/tschunk.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -Ibench $< $(LDFLAGS) -ldl -lm -o $@

bench-ab: $(BUILD)/bench/ab_libs $(BUILD)/libtschunk.so
	taskset -c 1 $(BUILD)/bench/ab_libs $(if $(AB_MANY),--many )$(if $(AB_SKETCH),--sketch)$(if $(AB_PROM),--prom)$(if $(AB_GORILLA),--gorilla) $(AB_A) $(if $(AB_B),$(AB_B),$(BUILD)/libtschunk.so) $(AB_DATA)

# The same over whole series, no chunk seen twice in a row (mispredicted branches on values show):
#   make bench-ab-series AB_A=old/libtschunk.so [AB_B=...] [AB_MODE=--many | --decode | --prom] [AB_DATA="..."]
$(BUILD)/bench/ab_series: bench/ab_series.c bench/workloads.h bench/timing.h bench/dl_load.h include/tschunk.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -Ibench $< $(LDFLAGS) -ldl -lm -o $@

AB_SERIES_DATA ?= $(wildcard ../shared/datasets/nab/*.gz ../shared/datasets/ett/*.gz ../shared/datasets/brew/*.gz)
bench-ab-series: $(BUILD)/bench/ab_series $(BUILD)/libtschunk.so
	taskset -c 1 $(BUILD)/bench/ab_series $(AB_MODE) $(AB_A) $(if $(AB_B),$(AB_B),$(BUILD)/libtschunk.so) \
	  $(if $(AB_DATA),$(AB_DATA),$(AB_SERIES_DATA))

# README's "At a glance" table: GLANCE_RUNS sets of alternating runs between fast-state probes (scripts/glance.sh).
GLANCE_RUNS ?= 15
bench-glance: $(BENCH_BIN)
	sh scripts/glance.sh $(BENCH_BIN) $(GLANCE_RUNS)

# Instructions per push and per decoded sample under callgrind (stable on a noisy machine).
bench-instr: $(BENCH_BIN)
	@for w in const-regular const-jitter counter gauge-2dp random; do for c in 120 1024; do \
	  for codec in tschunk tsc2 prom; do sh scripts/instr-per-op.sh $(BENCH_BIN) $$w $$c $$codec; done; done; done

# The same table for an earlier commit beside this tree's, with the differences (REV=43bf7cec: 0.41.8).
bench-instr-compare: $(BENCH_BIN)
	@[ -n "$(REV)" ] || { echo "usage: make bench-instr-compare REV=<commit>" >&2; exit 2; }
	sh scripts/instr-compare.sh $(REV) $(BENCH_BIN)

# ---- fuzzing (clang, libFuzzer) -----------------------------------------
FUZZ_BUILD := build/fuzz
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
              -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION

fuzz:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(CLANG) CFLAGS="$(FUZZ_FLAGS)" $(FUZZ_BUILD)/libtschunk.a
	@for t in $(FUZZ_NAMES); do \
	  $(CLANG) $(BASE_CFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
	    -Ilib fuzz/$$t.c $(FUZZ_BUILD)/libtschunk.a $(ROARING_LIBS) $(LIBS) -o $(FUZZ_BUILD)/$$t || exit 1; done

fuzz-run: fuzz
	@for t in $(FUZZ_NAMES); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_BUILD)/$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t 2>&1 | tail -n 12 || exit 1; done

# ---- install -------------------------------------------------------------
install: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR)
	install -m 644 include/tschunk.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libtschunk.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf libtschunk.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtschunk.so
	install -m 644 $(PCFILE) $(DESTDIR)$(LIBDIR)/pkgconfig/
	if [ -f $(CLI) ]; then install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/; fi

# Rewrite the golden chunk vectors (only when the format version changes).
vectors: lib
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L $(CFLAGS) -Iinclude scripts/make-vectors.c $(STATIC) -lm \
	  -o $(BUILD)/make-vectors
	$(BUILD)/make-vectors tests/vectors/chunk

# Rewrite the memo of usual DDSketch mappings (only when the mapping formulas change).
mapping-memo: lib
	$(CC) -std=c11 $(CFLAGS) -Iinclude scripts/mapping-memo.c $(STATIC) -lm -o $(BUILD)/mapping-memo
	$(BUILD)/mapping-memo > lib/sketch/mapping_memo.h.tmp && mv lib/sketch/mapping_memo.h.tmp lib/sketch/mapping_memo.h

check-install:
	sh scripts/check-install.sh

version:
	@echo $(VERSION)

# MemorySanitizer: the suite and the corpora's replays, every object instrumented (scripts/msan.sh: what is left
# out).
msan: deps
	sh scripts/msan.sh

# Other CPUs: built for s390x (big-endian), arm64 (both run under qemu-user) or 32-bit x86, their files compared
# with this build's (scripts/check-cross.sh).
check-bigendian check-arm64 check-i386: deps
	@$(MAKE) --no-print-directory all
	sh scripts/check-cross.sh $(if $(filter check-bigendian,$@),s390x,$(@:check-%=%))

check-symbols: lib
	sh scripts/check-symbols.sh $(STATIC)

# Lines of lib/ and tools/ the suite runs (gcc --coverage), least covered first: scripts/coverage.sh. Not a gate.
coverage: deps
	@$(MAKE) --no-print-directory BUILD=build/cov CFLAGS="-O0 -g --coverage" LDFLAGS="--coverage" all \
	  build/cov/tests/run_tests
	find build/cov -name '*.gcda' -delete
	sh scripts/coverage.sh

# Static analysis (clang --analyze, gcc -fanalyzer), not a gate: scripts/analyze.sh lists its known false positives.
analyze: deps
	sh scripts/analyze.sh

demo: deps
	@$(MAKE) --no-print-directory all
	sh scripts/demo.sh $(CLI)

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d)
