# kjoin — see README.md. `make` builds build/kjoin; `make test` and `make demo`
# install what is missing from Debian first.
VERSION := 0.1.0
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes
DEFS := -D_GNU_SOURCE -DOPENSSL_API_COMPAT=30000 -DOPENSSL_NO_DEPRECATED -DKJOIN_VERSION='"$(VERSION)"'
OPT ?= -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
KJOIN_CFLAGS := $(WARN) $(DEFS) $(OPT) -Iinclude $(if $(SANITIZE),$(SAN_FLAGS)) $(CFLAGS)
KJOIN_LDFLAGS := $(if $(SANITIZE),$(SAN_FLAGS)) $(LDFLAGS)
LIBS := -lssl -lcrypto -lcurl -lyaml -ljson-c -luuid

PKG_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard pkg/*/*.c))
CMD_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard cmd/kjoin/*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
REPLAY_BIN := $(patsubst %,$(BUILD)/fuzz/%-replay,$(FUZZ_NAMES))
TOOL_BIN := $(BUILD)/tools/freeport $(BUILD)/tools/measure
HEADERS := $(wildcard include/kjoin/*.h)

.PHONY: all deps test check unit fuzz-replay fuzz-build headers integration e2e demo bench fuzz install clean

all: $(BUILD)/kjoin

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(KJOIN_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libkjoin.a: $(PKG_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/kjoin: $(CMD_OBJ) $(BUILD)/libkjoin.a
	$(CC) $(KJOIN_LDFLAGS) $^ $(LIBS) -o $@

$(BUILD)/tests/test_%: tests/unit/test_%.c tests/unit/testutil.c tests/unit/testutil.h $(BUILD)/libkjoin.a
	@mkdir -p $(@D)
	$(CC) $(KJOIN_CFLAGS) -Itests/unit $(KJOIN_LDFLAGS) $(filter %.c,$^) $(BUILD)/libkjoin.a $(LIBS) -lcmocka -o $@

$(BUILD)/fuzz/%-replay: tests/fuzz/%.c tests/fuzz/replay.c $(BUILD)/libkjoin.a
	@mkdir -p $(@D)
	$(CC) $(KJOIN_CFLAGS) $(KJOIN_LDFLAGS) $(filter %.c,$^) $(BUILD)/libkjoin.a $(LIBS) -o $@

$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(@D)
	$(CC) $(KJOIN_CFLAGS) $(KJOIN_LDFLAGS) $< -o $@

deps:
	@scripts/deps.sh

# Everything, under ASan and UBSan, plus the plain build the README promises.
test: deps
	$(MAKE) all fuzz-build
	$(MAKE) BUILD=build/asan SANITIZE=1 OPT="-O1 -g" check

# Every suite, totalled on the last line ("tests: N passed, N failed").
check: $(UNIT_BIN) $(REPLAY_BIN) $(BUILD)/kjoin $(BUILD)/tools/freeport
	@BUILD=$(BUILD) CC="$(CC)" FUZZ_DIR=$(FUZZ_DIR) bash tests/check.sh

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

fuzz-replay: $(REPLAY_BIN)
	@set -e; for n in $(FUZZ_NAMES); do $(BUILD)/fuzz/$$n-replay testdata/fuzz/$${n#fuzz_}; done

headers:
	@set -e; for h in $(HEADERS); do \
	  printf '#include <kjoin/%s>\n' $${h##*/} | $(CC) -std=c11 -pedantic -Wall -Wextra -Werror -Iinclude -x c -fsyntax-only -; \
	  echo "header $$h compiles alone"; done

integration: $(BUILD)/kjoin $(BUILD)/tools/freeport
	KJOIN=$(BUILD)/kjoin TOOLS=$(BUILD)/tools bash tests/integration/run.sh

# The real control plane (built once per machine by scripts/kube-build.sh).
e2e: $(BUILD)/kjoin $(BUILD)/tools/freeport
	KJOIN=$(BUILD)/kjoin TOOLS=$(BUILD)/tools bash tests/e2e/run.sh

demo: deps all $(BUILD)/tools/freeport
	KJOIN=$(BUILD)/kjoin TOOLS=$(BUILD)/tools bash scripts/demo.sh

bench: deps all $(TOOL_BIN)
	KJOIN=$(BUILD)/kjoin TOOLS=$(BUILD)/tools bash tests/bench/bench.sh

# Coverage-guided fuzzing with libFuzzer (clang): every target runs
# FUZZ_SECONDS with inputs up to the real caps (1 MiB, as kjoin reads) and a
# per-input time limit, so a slow input fails the run like a crash does.
# `make test` runs each briefly; `make fuzz` longer.
FUZZ_SECONDS ?= 60
FUZZ_DIR := build/libfuzzer
FUZZ_CC := clang $(WARN) $(DEFS) -Iinclude -g -O1
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(wildcard pkg/*/*.c))
FUZZ_BIN := $(patsubst %,$(FUZZ_DIR)/%,$(FUZZ_NAMES))

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $^ $(LIBS) -o $@

fuzz-build: $(FUZZ_BIN)

fuzz: deps
	@$(MAKE) -s fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_DIR=$(FUZZ_DIR) bash tests/fuzz/run.sh $(FUZZ_NAMES)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/kjoin $(DESTDIR)$(PREFIX)/bin/kjoin

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
