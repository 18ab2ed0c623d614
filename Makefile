# kt: Kineto trace filters.  One flat Makefile: lib/ becomes three static
# libraries (core, model, cli), each filters/NAME.c becomes bin/kt-NAME, plus the kt front
# command.  O= puts every build output under another folder (the
# sanitizer build uses O=build-asan so it never mixes with this one).

PREFIX	?= /usr/local
DESTDIR	?=
BINDIR	 = $(PREFIX)/bin
MANDIR	 = $(PREFIX)/share/man

CC	?= cc
CFLAGS	?= -O2 -g
LDFLAGS	?=
O	?= .

WARN	 = -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	   -Wmissing-prototypes -Wformat=2 -Wwrite-strings -Wvla
ifeq ($(CI),true)
WARN	+= -Werror
endif

PKGS	 = jansson libarchive zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libarchive is loaded by the inputs that need it (lib/core/arch.c,
# dlopen), not linked: the filters start without its dependencies.  The
# fuzz harnesses that write archives link it themselves (ARCHIVE_LIBS).
PKG_LIBS   := $(shell pkg-config --libs jansson zlib 2>/dev/null || echo -ljansson -lz) -ldl -pthread
ARCHIVE_LIBS := $(shell pkg-config --libs libarchive 2>/dev/null || echo -larchive)
# ISA-L's igzip for gzip input, where it is installed (make deps does);
# ISAL=no builds without it (gzip then goes through libarchive's zlib).
ISAL	?= $(shell pkg-config --exists libisal 2>/dev/null && echo yes)
ifeq ($(ISAL),yes)
PKG_CFLAGS += -DKT_HAVE_ISAL $(shell pkg-config --cflags libisal)
PKG_LIBS   += $(shell pkg-config --libs libisal)
endif

ALL_CFLAGS = $(WARN) $(CFLAGS) $(PKG_CFLAGS) -pthread -Ilib

# The library in three layers (lib/README): the core (libkt.a: read,
# scan, event, patch, write, time, sort, hash) never prints, exits or
# keeps state; the analysis model and its views (libktmodel.a) sit over
# it; the command-line manners (libktcli.a) are for filters only.
CORE_OBJ  = $(patsubst lib/%.c,$(O)/build/lib/%.o,$(wildcard lib/core/*.c))
MODEL_OBJ = $(patsubst lib/%.c,$(O)/build/lib/%.o,$(wildcard lib/model/*.c))
CLI_OBJ	  = $(patsubst lib/%.c,$(O)/build/lib/%.o,$(wildcard lib/cli/*.c))
LIBCORE	  = $(O)/build/libkt.a
LIBMODEL  = $(O)/build/libktmodel.a
LIBCLI	  = $(O)/build/libktcli.a
LIB	  = $(LIBCLI) $(LIBMODEL) $(LIBCORE)
HDRS	  = lib/kt.h lib/core/ktint.h lib/core/scan_body.h lib/core/scan_fast.h
FILTERS	 = $(notdir $(basename $(wildcard filters/*.c)))
BINS	 = $(FILTERS:%=$(O)/bin/kt-%) $(O)/bin/kt
FUZZERS	 = $(basename $(notdir $(wildcard tests/fuzz/*.c)))
REPLAYS	 = $(FUZZERS:%=$(O)/build/replay-%)
TOOLS	 = $(O)/build/ktgen $(O)/build/unit $(REPLAYS) $(O)/build/afl-launch
MAN1	 = $(wildcard man/*.1)
MAN7	 = $(wildcard man/*.7)

.PHONY: all check check-asan bench demo deps fuzz fuzz-build fuzz-long fuzz-seeds \
	fuzz-afl afl-build install uninstall clean lint scans

all: $(BINS) $(TOOLS)

$(O)/build/lib/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIBCORE): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $(CORE_OBJ)

$(LIBMODEL): $(MODEL_OBJ)
	@rm -f $@
	ar rcs $@ $(MODEL_OBJ)

$(LIBCLI): $(CLI_OBJ)
	@rm -f $@
	ar rcs $@ $(CLI_OBJ)

$(O)/bin/kt-%: filters/%.c $(LIB) lib/kt.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS)

$(O)/bin/kt: filters/front/kt.c $(LIB) lib/kt.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS)

$(O)/build/ktgen: tests/ktgen.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(LDFLAGS) -o $@ $<

# The unit tests link the core and the model, never the front end.
$(O)/build/unit: tests/unit.c $(LIBMODEL) $(LIBCORE) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBMODEL) $(LIBCORE) $(PKG_LIBS)

# Each fuzz harness without libFuzzer, for make check to replay the kept
# corpora (tests/fuzz/corpus/NAME/) with the suite's compiler and flags.
$(O)/build/replay-%: tests/fuzz/%.c tests/fuzz/replay/main.c $(LIBMODEL) $(LIBCORE) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay/main.c $(LIBMODEL) $(LIBCORE) $(PKG_LIBS) $(ARCHIVE_LIBS)

# The launcher of tests/fuzz/afl/ that executes a filter (the replay of
# the kept AFL++ inputs, tests/t/aflreplay.sh).
$(O)/build/afl-launch: tests/fuzz/afl/launch.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(LDFLAGS) -o $@ tests/fuzz/afl/launch.c

# The filters that hold or write events built again with -DKT_DEBUG_SCANS
# (in $(O)/build-scans), counting the events they scan: tests/t/scans.sh
# checks that each input event is scanned once.
SCAN_FILTERS = normalize slice-window compact-lanes layer-track rank-tag select inspect
scans:
	@$(MAKE) --no-print-directory O=$(O)/build-scans \
	    CFLAGS="$(CFLAGS) -DKT_DEBUG_SCANS" LDFLAGS="$(LDFLAGS)" \
	    $(SCAN_FILTERS:%=$(O)/build-scans/bin/kt-%)

# The whole suite: unit tests, golden cases, conformance on ../shared.
check: all scans
	@KT_BIN=$(abspath $(O)/bin) KT_BUILD=$(abspath $(O)/build) \
	    KT_SCANS_BIN=$(abspath $(O)/build-scans/bin) sh tests/run.sh

# The same suite built with clang's address and undefined-behaviour
# sanitizers, in its own output folder.
check-asan:
	$(MAKE) O=build-asan CC=clang \
	    CFLAGS="-O1 -g -gdwarf-4 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" check

bench: all
	@KT_BIN=$(abspath $(O)/bin) KT_BUILD=$(abspath $(O)/build) sh tests/bench.sh

# Install what is missing, build, and run the main job on the example.
demo: deps all
	@KT_BIN=$(abspath $(O)/bin) sh examples/demo.sh

DEB_PKGS = libjansson-dev libarchive-dev zlib1g-dev libisal-dev pkg-config jq gcc make \
	   gawk gzip xz-utils bzip2 zstd zip tar time librsvg2-bin \
	   libxml2-utils python3 mandoc binutils parallel rsync
deps:
	@missing=; for p in $(DEB_PKGS); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	    sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	    echo "installing:$$missing"; \
	    $$sudo apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

# libFuzzer harnesses (clang), one per parser: tests/fuzz/NAME.c becomes
# build-fuzz/fuzz-NAME, linked with the core and the model only (never
# the front end, which exits), UBSan fatal as in the suite.  Each runs
# for FUZZ_SECONDS, seeded from the golden inputs and from its corpus in
# tests/fuzz/corpus/NAME/ when there is one.
FUZZ_SECONDS ?= 60
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all
fuzz-build:
	$(MAKE) O=build-fuzz CC=clang \
	    CFLAGS="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" \
	    build-fuzz/build/libkt.a build-fuzz/build/libktmodel.a
	@for h in $(FUZZERS); do \
	    echo "clang ... -o build-fuzz/fuzz-$$h tests/fuzz/$$h.c"; \
	    clang -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -Ilib \
	        -o build-fuzz/fuzz-$$h tests/fuzz/$$h.c \
	        build-fuzz/build/libktmodel.a build-fuzz/build/libkt.a \
	        $(PKG_LIBS) $(ARCHIVE_LIBS) || exit 1; done

fuzz-seeds:
	@mkdir -p build-fuzz/corpus
	@for f in tests/cases/*/in tests/cases/*/*.json; do \
	    [ -f "$$f" ] && cp "$$f" build-fuzz/corpus/$$(echo $$f | tr / _); done; true

fuzz: fuzz-build fuzz-seeds
	@for h in $(FUZZERS); do \
	    mkdir -p build-fuzz/corpus-$$h; \
	    seeds=build-fuzz/corpus; \
	    [ -d tests/fuzz/corpus/$$h ] && seeds="$$seeds tests/fuzz/corpus/$$h"; \
	    echo "== fuzz-$$h for $(FUZZ_SECONDS) s"; \
	    build-fuzz/fuzz-$$h -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	        -print_final_stats=1 build-fuzz/corpus-$$h $$seeds || exit 1; \
	done

# A campaign: every harness in turn for FUZZ_SECONDS (default 600) on
# its kept corpus and the golden inputs; the kept corpus grows by what
# it finds new (merged, minimised); the executions and findings per
# harness are printed and appended to tests/fuzz/LOG.  A finding
# (crash-*, leak-*, timeout-*) stops it.  Then, where AFL++ is
# installed, fuzz-afl for the same time per filter (AFL_SECONDS).
# FUZZERS="spec spool" (or AFL_FILTERS=...) runs only those.
fuzz-long: fuzz-build fuzz-seeds
	@secs=$${FUZZ_SECONDS:-600}; \
	for h in $(FUZZERS); do \
	    mkdir -p tests/fuzz/corpus/$$h build-fuzz/long-$$h build-fuzz/found-$$h; \
	    build-fuzz/fuzz-$$h -max_total_time=$$secs -max_len=65536 \
	        -print_final_stats=1 -artifact_prefix=build-fuzz/found-$$h/ \
	        build-fuzz/long-$$h tests/fuzz/corpus/$$h build-fuzz/corpus \
	        >build-fuzz/long-$$h.log 2>&1; rc=$$?; \
	    execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' build-fuzz/long-$$h.log); \
	    found=$$(ls build-fuzz/found-$$h | wc -l); \
	    build-fuzz/fuzz-$$h -merge=1 -max_len=65536 tests/fuzz/corpus/$$h \
	        build-fuzz/long-$$h >/dev/null 2>&1; \
	    line="$$(date -u +%Y-%m-%dT%H:%MZ) $$h seconds=$$secs execs=$${execs:-0} findings=$$found corpus=$$(ls tests/fuzz/corpus/$$h | wc -l)"; \
	    echo "$$line"; echo "$$line" >>tests/fuzz/LOG; \
	    if [ "$$found" -gt 0 ] || [ "$$rc" -ne 0 ]; then \
	        echo "fuzz-$$h: findings in build-fuzz/found-$$h/"; exit 1; fi; \
	done; \
	if [ -n "$(AFL_FILTERS)" ]; then \
	    $(MAKE) --no-print-directory fuzz-afl AFL_SECONDS=$${AFL_SECONDS:-$$secs}; fi

# AFL++ on the filters themselves (afl-clang-fast, ASan and UBSan fatal,
# in build-afl/): each filters/NAME.c compiled with -Dmain=kt_filter_main
# and linked into tests/fuzz/afl/launch.c becomes build-afl/afl-NAME,
# whose input is a command line and a trace (the launcher's comment
# says how), so that every option, every usage error and the whole run
# on a small trace are reached.  fuzz-afl runs afl-fuzz on each for
# AFL_SECONDS, seeded from the golden cases and the kept corpus
# tests/fuzz/corpus/afl-NAME/ (minimised back into it), with a
# dictionary made from the golden cases and the man pages, and appends
# executions and findings per filter to tests/fuzz/LOG.  Without
# afl-fuzz and afl-clang-fast it says so and does nothing.
AFL_SECONDS ?= 60
AFL_CC	?= afl-clang-fast
# kt-serve is left out: it listens until it is stopped, which a
# fuzzer's run of a command line cannot wait for.
AFL_FILTERS ?= $(filter-out serve,$(FILTERS))
AFL_CFLAGS = -O1 -g $(FUZZ_SAN)
afl-build:
	@if ! command -v afl-fuzz >/dev/null 2>&1 || \
	    ! command -v $(AFL_CC) >/dev/null 2>&1; then \
	    echo "afl-build: no afl-fuzz or $(AFL_CC) (AFL++): skipped"; \
	    exit 0; fi; \
	$(MAKE) O=build-afl CC=$(AFL_CC) CFLAGS="$(AFL_CFLAGS)" \
	    build-afl/build/libktcli.a build-afl/build/libktmodel.a \
	    build-afl/build/libkt.a || exit 1; \
	for f in $(AFL_FILTERS); do \
	    echo "$(AFL_CC) ... -o build-afl/afl-$$f filters/$$f.c"; \
	    $(AFL_CC) $(WARN) $(AFL_CFLAGS) $(PKG_CFLAGS) -pthread -Ilib \
	        -Dmain=kt_filter_main -Wno-missing-prototypes \
	        -c -o build-afl/build/$$f.o \
	        filters/$$f.c || exit 1; \
	    $(AFL_CC) $(AFL_CFLAGS) -DKT_LAUNCH_LINKED -o build-afl/afl-$$f \
	        tests/fuzz/afl/launch.c build-afl/build/$$f.o \
	        build-afl/build/libktcli.a build-afl/build/libktmodel.a \
	        build-afl/build/libkt.a $(PKG_LIBS) || exit 1; \
	done; \
	sh tests/fuzz/afl/dict.sh >build-afl/kt.dict; \
	rm -rf build-afl/seeds; sh tests/fuzz/afl/seeds.sh build-afl/seeds

fuzz-afl: afl-build
	@if command -v afl-fuzz >/dev/null 2>&1 && \
	    command -v $(AFL_CC) >/dev/null 2>&1; then \
	    AFL_SECONDS=$(AFL_SECONDS) sh tests/fuzz/afl/run.sh $(AFL_FILTERS); \
	else echo "fuzz-afl: no AFL++: skipped"; fi

lint:
	mandoc -Tlint -Wwarning $(MAN1) $(MAN7)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(MAN7)))

clean:
	rm -rf $(O)/bin $(O)/build $(O)/build-scans build-asan build-fuzz build-afl
