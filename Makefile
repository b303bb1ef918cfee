# kjoin — see README.md. `make` builds build/kjoin; `make test` and `make demo`
# install what is missing from Debian first.
VERSION := 0.1.0
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes
# TEST_HOOKS=1 on make's command line: the suite's build, which kills itself
# where KJOIN_JOIN_CRASH_AT and KJOIN_CERTS_CRASH_AT say (the kill tests);
# never a release build. Only the exact value 1, and only from the command
# line: GNU make exports a command-line variable to every recipe, so a package
# build started from a test would otherwise inherit it from the environment.
TEST_HOOKS_ON := $(and $(filter command line,$(origin TEST_HOOKS)),$(filter 1,$(TEST_HOOKS)))
unexport TEST_HOOKS
DEFS := -D_GNU_SOURCE -DOPENSSL_API_COMPAT=30000 -DOPENSSL_NO_DEPRECATED -DKJOIN_VERSION='"$(VERSION)"' \
  -DKJOIN_DOC_DIR='"$(PREFIX)/share/doc/kjoin"' \
  $(if $(TEST_HOOKS_ON),-DKJOIN_TEST_HOOKS)
OPT ?= -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
KJOIN_CFLAGS := $(WARN) $(DEFS) $(OPT) -fPIC -Iinclude $(if $(SANITIZE),$(SAN_FLAGS)) $(CFLAGS)
# The library's own headers (pkg/include/kjoin/private/: the modules' steps,
# never installed or exported) are on the include path of pkg/ and of the
# tests, fuzzers and tools that reach inside it, never of cmd/: the command is
# a caller of the public API like any other.
PRIVATE_INC := -Ipkg/include
# pkg/ and cmd/ compile with the banned calls as errors (pkg/banned.h).
BANNED := -include pkg/banned.h
KJOIN_LDFLAGS := $(if $(SANITIZE),$(SAN_FLAGS)) $(LDFLAGS)
LIBS := -pthread -lssl -lcrypto -lcurl -lyaml -ljson-c -luuid

PKG_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard pkg/*/*.c))
CMD_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard cmd/kjoin/*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
REPLAY_BIN := $(patsubst %,$(BUILD)/fuzz/%-replay,$(FUZZ_NAMES))
TOOL_BIN := $(BUILD)/tools/freeport $(BUILD)/tools/measure
HEADERS := $(wildcard include/kjoin/*.h)

.PHONY: test-release check-bins FORCE all deps deps-demo deps-bench deb test check unit fuzz-replay fuzz-build headers integration e2e demo bench fuzz docs install uninstall clean

all: $(BUILD)/kjoin

# Objects are rebuilt when the flags change (the stamp changes only then).
$(BUILD)/cflags: FORCE
	@mkdir -p $(@D); echo '$(KJOIN_CFLAGS)' | cmp -s - $@ || echo '$(KJOIN_CFLAGS)' >$@
FORCE:

# Short lines: what is compiled, not the flags (V=1 shows whole commands;
# the flags are in $(BUILD)/cflags).
Q := $(if $(V),,@)
say = $(if $(V),,@echo "  $(1) $(2)";)

$(BUILD)/obj/%.o: %.c $(BUILD)/cflags pkg/banned.h
	@mkdir -p $(@D)
	$(call say,CC,$<)$(CC) $(KJOIN_CFLAGS) $(if $(filter pkg/%,$<),$(PRIVATE_INC)) $(BANNED) -MMD -MP -c $< -o $@

# libkjoin: the static archive (tests and fuzzers reach pkg/'s internals)
# and the shared library the binary links, which exports only the public
# API of include/kjoin/, as the committed pkg/libkjoin.symbols lists it
# (scripts/mkmap.sh writes the version script and refuses a difference).
SOVERSION := 0
LIB_SO := $(BUILD)/libkjoin.so.$(VERSION)

$(BUILD)/libkjoin.a: $(PKG_OBJ)
	@mkdir -p $(@D)
	$(call say,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/libkjoin.map: pkg/libkjoin.symbols $(HEADERS) scripts/mkmap.sh
	@mkdir -p $(@D)
	scripts/mkmap.sh pkg/libkjoin.symbols $(HEADERS) >$@.tmp && mv $@.tmp $@

$(LIB_SO): $(PKG_OBJ) $(BUILD)/libkjoin.map
	$(call say,LD,$@)$(CC) $(KJOIN_LDFLAGS) -shared -Wl,-soname,libkjoin.so.$(SOVERSION) -Wl,--version-script=$(BUILD)/libkjoin.map \
	  -Wl,--no-undefined $(PKG_OBJ) $(LIBS) -o $@
	$(Q)ln -sf libkjoin.so.$(VERSION) $(BUILD)/libkjoin.so.$(SOVERSION)
	$(Q)ln -sf libkjoin.so.$(SOVERSION) $(BUILD)/libkjoin.so

# The command links libkjoin's archive: a join starts measurably sooner
# without one more shared object to map and relocate (make bench: about
# 0.2 ms and 40 KiB of a 10 ms join). The shared library is built beside it
# for programs that use the API.
$(BUILD)/kjoin: $(CMD_OBJ) $(BUILD)/libkjoin.a $(LIB_SO)
	$(call say,LD,$@)$(CC) $(KJOIN_LDFLAGS) $(CMD_OBJ) $(BUILD)/libkjoin.a $(LIBS) -o $@

$(BUILD)/tests/test_%: tests/unit/test_%.c tests/unit/testutil.c tests/unit/testutil.h $(BUILD)/libkjoin.a
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(KJOIN_CFLAGS) $(PRIVATE_INC) -Itests/unit $(KJOIN_LDFLAGS) $(filter %.c,$^) $(BUILD)/libkjoin.a $(LIBS) -lcmocka -o $@

$(BUILD)/fuzz/%-replay: tests/fuzz/%.c tests/fuzz/replay.c $(BUILD)/libkjoin.a
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(KJOIN_CFLAGS) $(PRIVATE_INC) $(KJOIN_LDFLAGS) $(filter %.c,$^) $(BUILD)/libkjoin.a $(LIBS) -o $@

$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(KJOIN_CFLAGS) $(KJOIN_LDFLAGS) $< -o $@

# The release suite's renderer of kjoin's static Pods: the library's own code.
$(BUILD)/tools/manifests: tests/tools/manifests.c $(BUILD)/libkjoin.a
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(KJOIN_CFLAGS) $(PRIVATE_INC) $(KJOIN_LDFLAGS) $< $(BUILD)/libkjoin.a $(LIBS) -o $@

# What each command needs, from Debian (scripts/deps.sh): the demo only its
# own few packages; the suite also both control planes, built once per machine.
deps:
	@scripts/deps.sh test
deps-demo:
	@scripts/deps.sh demo
deps-bench:
	@scripts/deps.sh bench

# Everything, under ASan and UBSan, plus the plain build the README promises.
# (Compiled on every core; the suites run without make's jobs.)
JOBS := $(shell nproc)
test: deps
	@$(MAKE) -s -j$(JOBS) all fuzz-build
	@$(MAKE) -s -j$(JOBS) BUILD=build/asan SANITIZE=1 TEST_HOOKS=1 OPT="-O1 -g" check-bins
	@$(MAKE) -s BUILD=build/asan SANITIZE=1 TEST_HOOKS=1 OPT="-O1 -g" check

# Every suite, totalled on the last line ("tests: N passed, N failed").
check-bins: $(UNIT_BIN) $(REPLAY_BIN) $(BUILD)/kjoin $(BUILD)/tools/freeport $(BUILD)/tools/manifests
check: check-bins
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

# A middle release's whole control plane (KUBE=1.36.3: built once per
# machine by scripts/kube-build-release.sh, about 8 minutes), then the e2e
# and lab suites on it.
test-release: deps
	@[ -n "$(KUBE)" ] || { echo "make test-release KUBE=1.36.3" >&2; exit 2; }
	@$(MAKE) -s BUILD=build/asan SANITIZE=1 TEST_HOOKS=1 OPT="-O1 -g" build/asan/kjoin build/asan/tools/freeport \
	  build/asan/tools/manifests
	@E2E_RELEASE=v$(KUBE) E2E_NAME=e2e-$(KUBE) KJOIN=build/asan/kjoin TOOLS=build/asan/tools bash tests/e2e/run.sh
	@E2E_RELEASE=v$(KUBE) E2E_NAME=lab-$(KUBE) KJOIN=build/asan/kjoin TOOLS=build/asan/tools bash tests/lab/run.sh

# The real control plane (built once per machine by scripts/kube-build.sh).
e2e: $(BUILD)/kjoin $(BUILD)/tools/freeport $(BUILD)/tools/manifests
	KJOIN=$(BUILD)/kjoin TOOLS=$(BUILD)/tools bash tests/e2e/run.sh

demo: deps-demo
	@$(MAKE) -s all $(BUILD)/tools/freeport
	KJOIN=$(BUILD)/kjoin TOOLS=$(BUILD)/tools bash scripts/demo.sh

bench: deps-bench all $(TOOL_BIN)
	KJOIN=$(BUILD)/kjoin TOOLS=$(BUILD)/tools bash tests/bench/bench.sh

# Coverage-guided fuzzing with libFuzzer (clang): every target runs
# FUZZ_SECONDS with inputs up to the real caps (1 MiB, as kjoin reads) and a
# per-input time limit, so a slow input fails the run like a crash does.
# `make test` runs each briefly; `make fuzz` longer.
FUZZ_SECONDS ?= 60
FUZZ_DIR := build/libfuzzer
FUZZ_CC := clang $(WARN) $(DEFS) -Iinclude $(PRIVATE_INC) -g -O1
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(wildcard pkg/*/*.c))
FUZZ_BIN := $(patsubst %,$(FUZZ_DIR)/%,$(FUZZ_NAMES))

$(FUZZ_DIR)/obj/%.o: %.c pkg/banned.h
	@mkdir -p $(@D)
	$(call say,CC,$<)$(FUZZ_CC) $(BANNED) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(call say,LD,$@)$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $^ $(LIBS) -o $@

fuzz-build: $(FUZZ_BIN)

fuzz: deps
	@$(MAKE) -s fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_DIR=$(FUZZ_DIR) bash tests/fuzz/run.sh $(FUZZ_NAMES)

# Man pages and completion, generated from the binary's --help (the option
# tables that drive parsing), so they cannot drift from the flags.
$(BUILD)/man/kjoin.1: $(BUILD)/kjoin scripts/mkdoc.py
	@mkdir -p $(@D)
	LD_LIBRARY_PATH=$(BUILD) python3 scripts/mkdoc.py $(BUILD)/kjoin man $(@D)

$(BUILD)/completion/kjoin.bash: $(BUILD)/kjoin scripts/mkdoc.py
	@mkdir -p $(@D)
	LD_LIBRARY_PATH=$(BUILD) python3 scripts/mkdoc.py $(BUILD)/kjoin bash $@

$(BUILD)/completion/_kjoin: $(BUILD)/kjoin scripts/mkdoc.py
	@mkdir -p $(@D)
	LD_LIBRARY_PATH=$(BUILD) python3 scripts/mkdoc.py $(BUILD)/kjoin zsh $@

# Rebuilt when PREFIX or LIBDIR change (the stamp changes only then).
$(BUILD)/install-vars: FORCE
	@mkdir -p $(@D); echo '$(PREFIX) $(LIBDIR)' | cmp -s - $@ || echo '$(PREFIX) $(LIBDIR)' >$@

$(BUILD)/kjoin.pc: dist/kjoin.pc.in Makefile $(BUILD)/install-vars
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' $< >$@

docs: $(BUILD)/man/kjoin.1 $(BUILD)/completion/kjoin.bash $(BUILD)/completion/_kjoin $(BUILD)/kjoin.pc

# make install [PREFIX=/usr/local] [DESTDIR=] [STRIP=0]; make uninstall removes
# exactly what install wrote (the list is installed with it).
LIBDIR ?= $(PREFIX)/lib
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
STRIP ?= 1
MANIFEST := $(PREFIX)/share/kjoin/installed-files
UNITS := $(wildcard dist/systemd/*.service dist/systemd/*.timer)

install: all docs
	@set -e; d="$(DESTDIR)"; list=$$(mktemp); \
	put() { mode=$$1 src=$$2 dst=$$3; dir=$${dst%/*}; new=""; \
	  while [ -n "$$dir" ] && [ ! -d "$$d$$dir" ]; do new="$$dir/ $$new"; dir=$${dir%/*}; done; \
	  for n in $$new; do echo "$$n" >>$$list; done; \
	  install -D -m $$mode "$$src" "$$d$$dst"; echo "$$dst" >>$$list; }; \
	put 0755 $(BUILD)/kjoin $(PREFIX)/bin/kjoin; \
	[ "$(STRIP)" = 1 ] && strip --strip-unneeded "$$d$(PREFIX)/bin/kjoin"; \
	put 0644 $(LIB_SO) $(LIBDIR)/libkjoin.so.$(VERSION); \
	[ "$(STRIP)" = 1 ] && strip --strip-unneeded "$$d$(LIBDIR)/libkjoin.so.$(VERSION)"; \
	ln -sf libkjoin.so.$(VERSION) "$$d$(LIBDIR)/libkjoin.so.$(SOVERSION)"; echo "$(LIBDIR)/libkjoin.so.$(SOVERSION)" >>$$list; \
	ln -sf libkjoin.so.$(SOVERSION) "$$d$(LIBDIR)/libkjoin.so"; echo "$(LIBDIR)/libkjoin.so" >>$$list; \
	for h in $(HEADERS); do put 0644 $$h $(PREFIX)/include/kjoin/$${h##*/}; done; \
	put 0644 $(BUILD)/kjoin.pc $(LIBDIR)/pkgconfig/kjoin.pc; \
	for m in $(BUILD)/man/*.1; do put 0644 $$m $(PREFIX)/share/man/man1/$${m##*/}; done; \
	put 0644 $(BUILD)/completion/kjoin.bash $(PREFIX)/share/bash-completion/completions/kjoin; \
	put 0644 $(BUILD)/completion/_kjoin $(PREFIX)/share/zsh/vendor-completions/_kjoin; \
	for u in $(UNITS); do sed 's|/usr/bin/kjoin|$(PREFIX)/bin/kjoin|' $$u >$(BUILD)/$${u##*/}; \
	  put 0644 $(BUILD)/$${u##*/} $(SYSTEMDDIR)/$${u##*/}; done; \
	put 0644 dist/systemd/kubelet.service.d/10-kjoin.conf $(SYSTEMDDIR)/kubelet.service.d/10-kjoin.conf; \
	for f in README.md CHANGELOG.md docs/*.md; do put 0644 $$f $(PREFIX)/share/doc/kjoin/$${f##*/}; done; \
	echo "$(MANIFEST)" >>$$list; install -D -m 0644 $$list "$$d$(MANIFEST)"; rm -f $$list; \
	[ -z "$$d" ] && [ "$$(id -u)" = 0 ] && ldconfig || true; \
	echo "installed $$(grep -vc '/$$' "$$d$(MANIFEST)") files under $$d$(PREFIX)"

uninstall:
	@set -e; d="$(DESTDIR)"; [ -f "$$d$(MANIFEST)" ] || { echo "nothing installed under $$d$(PREFIX)"; exit 0; }; \
	list=$$(cat "$$d$(MANIFEST)"); \
	n=0; for f in $$list; do case $$f in */) ;; *) rm -f "$$d$$f"; n=$$((n + 1));; esac; done; \
	rmdir "$$d$(PREFIX)/share/kjoin" 2>/dev/null || true; \
	for f in $$(echo "$$list" | tac); do case $$f in */) rmdir "$$d$$f" 2>/dev/null || true;; esac; done; \
	echo "removed $$n files under $$d$(PREFIX)"

# The Debian packages (kjoin, libkjoin0, libkjoin-dev) into build/packages.
deb:
	@scripts/deps.sh deb
	dpkg-buildpackage -us -uc -b
	mkdir -p build/packages && mv ../kjoin_$(VERSION)_*.deb ../kjoin-dbgsym_$(VERSION)_*.deb ../libkjoin0_$(VERSION)_*.deb \
	  ../libkjoin0-dbgsym_$(VERSION)_*.deb ../libkjoin-dev_$(VERSION)_*.deb ../kjoin_$(VERSION)_*.buildinfo \
	  ../kjoin_$(VERSION)_*.changes build/packages/
	lintian --fail-on error build/packages/*.changes

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
