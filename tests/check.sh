#!/usr/bin/env bash
# Runs every suite of `make test` and totals them on the last line, as
# "tests: N passed, N failed": each cmocka case, each fuzz corpus replayed,
# each public header compiled alone, each integration test. The failures are
# named just above it, so the tail of a CI log says which.
set -uo pipefail
: "${BUILD:?}" "${CC:?}"
passed=0 failed=0 skipped=0 failures=()
count() { passed=$((passed + $1)); failed=$((failed + $2)); }
# took NAME: what the part just ended cost, in wall-clock seconds (waiting
# for a build it needs included).
mark=$SECONDS
took() { echo "== $1 took $((SECONDS - mark)) s"; mark=$SECONDS; }
failed_as() { failures+=("$@"); }
# expect NAME RAN SKIPPED: each suite runs, and skips on this control plane,
# exactly what tests/expected-counts.txt says: a test that stops running (a
# renamed function, a pin bumped past a "newest only" check) or starts
# skipping fails the run instead of leaving it green. A run narrowed with
# ONLY= is not the whole suite, and is not counted.
expect() {
  local name=$1 ran=$2 sk=$3 want
  [ -z "${ONLY:-}" ] || return 0
  want=$(awk -v n="$name" '$1 == n {print $2, $3}' tests/expected-counts.txt)
  [ "$want" = "$ran $sk" ] && return 0
  echo "$name: ran $ran tests and skipped $sk; tests/expected-counts.txt says ${want:-nothing of it}"
  count 0 1; failed_as "$name (test count)"
}
# Whatever a test leaves in a temporary folder, or kubectl in its cache,
# goes with this run: the machine is left as it was found.
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/kjoin-check.XXXXXX")
export TMPDIR=$SCRATCH KUBECACHEDIR=$SCRATCH/kube-cache

# Everything the suites run that is not kjoin (the control planes, the
# releases' kubeadm, the lab's images) is built once per machine by
# scripts/builds.sh: here in the background from the start, in the order the
# suites need them, at the idle CPU priority so that no test waits on the
# CPU for it. A suite that needs a part not yet built waits for it. On a
# machine that has them all, it has nothing to do.
builds_log=$SCRATCH/builds.log
setsid chrt -i 0 nice -n 19 ionice -c 3 bash scripts/builds.sh >"$builds_log" 2>&1 &
builds_pid=$!
trap 'kill -- -"$builds_pid" 2>/dev/null; wait "$builds_pid" 2>/dev/null; rm -rf "$SCRATCH"' EXIT

# The unit tests in a network namespace of their own (loopback only): a
# kubelet or an API server on the machine's fixed ports (10248, 6443) is
# not theirs to see.
for t in "$BUILD"/tests/test_*; do
  echo "== $t"
  out=$(unshare -n -- sh -c 'ip link set lo up && exec "$0"' "$t" 2>&1); rc=$?
  echo "$out" | grep -vE '^\[ RUN|^\[       OK'
  # (a failed case is named twice: where it fails and in the closing list)
  ok=$(grep -c '^\[       OK \]' <<<"$out")
  bad=$(sed -nE 's/^\[  (FAILED|ERROR)  \] (test_[A-Za-z0-9_]+)$/\2/p' <<<"$out" | sort -u | grep -c .)
  [ $rc -ne 0 ] && [ "$bad" -eq 0 ] && bad=1 && failed_as "$(basename "$t") (crashed)"   # or a sanitizer report
  failed_as $(sed -nE 's/^\[  (FAILED|ERROR)  \] (test_[A-Za-z0-9_]+)$/\2/p' <<<"$out" | sort -u)
  count "$ok" "$bad"; unit_ran=$((${unit_ran:-0} + ok + bad))
done
took unit
expect unit "${unit_ran:-0}" 0

for r in "$BUILD"/fuzz/*-replay; do
  n=$(basename "$r" -replay)
  if "$r" "testdata/fuzz/${n#fuzz_}"; then count 1 0; else count 0 1; failed_as "$n-replay"; fi
done

# libFuzzer on every target, briefly, at real input sizes and a per-input
# time limit (built by `make fuzz-build`; `make fuzz` runs them longer).
if [ -n "${FUZZ_DIR:-}" ] && ls "$FUZZ_DIR"/fuzz_* >/dev/null 2>&1; then
  echo "== fuzz (${FUZZ_SECONDS:-4}s a target)"
  names=$(cd "$FUZZ_DIR" && ls fuzz_* | grep -v '\.log$' | grep -v -- '-' )
  out=$(FUZZ_SECONDS=${FUZZ_SECONDS:-4} FUZZ_DIR=$FUZZ_DIR bash tests/fuzz/run.sh $names 2>&1); echo "$out"
  count "$(grep -c '^fuzz .*: ok' <<<"$out")" "$(grep -c '^fuzz .*: FAILED' <<<"$out")"
  failed_as $(sed -nE 's/^fuzz (.*): FAILED$/libFuzzer:\1/p' <<<"$out")
  took fuzz
else
  echo "fuzz: no libFuzzer build in ${FUZZ_DIR:-?}"; count 0 1; failed_as "libFuzzer build"
fi

# Each header compiles alone: a public one with the public headers only (no
# public header leans on the library's private ones), a private one with both.
for h in include/kjoin/*.h pkg/include/kjoin/private/*.h; do
  inc=-Iinclude; [[ $h == pkg/* ]] && inc="-Iinclude -Ipkg/include"
  if printf '#include <%s>\n' "${h#*include/}" | $CC -std=c11 -pedantic -Wall -Wextra -Werror $inc -x c -fsyntax-only -; then
    count 1 0
  else
    echo "header $h does not compile alone"; count 0 1; failed_as "$h"
  fi
done
echo "headers: $(ls include/kjoin/*.h | wc -l) public and $(ls pkg/include/kjoin/private/*.h | wc -l) private compile alone"

# The banned calls (pkg/banned.h) are compile errors in pkg/ and cmd/: each
# one refused, and the header itself leaves the libc's own declarations be.
banned_ok=1
for call in 'sprintf(b, "x")' 'strcpy(b, "x")' 'strcat(b, "x")' 'strncpy(b, "x", 1)' 'atoi(b)' 'atol(b)' 'strtok(b, ",")'; do
  printf 'int f(char *b);\nint f(char *b) { return (int)(long)%s; }\n' "$call" |
    $CC -std=c11 -D_GNU_SOURCE -include pkg/banned.h -x c -fsyntax-only - 2>/dev/null &&
    { echo "banned: $call compiles"; banned_ok=0; }
done
printf '#include <stdio.h>\n#include <string.h>\nint f(char *b);\nint f(char *b) { return snprintf(b, 2, "x") + (int)strlen(b); }\n' |
  $CC -std=c11 -D_GNU_SOURCE -D_FORTIFY_SOURCE=2 -O2 -include pkg/banned.h -x c -fsyntax-only - || { echo "banned: snprintf refused"; banned_ok=0; }
if [ $banned_ok = 1 ]; then count 1 0; echo "banned: every banned call refused"; else count 0 1; failed_as "pkg/banned.h"; fi

# suite NAME SCRIPT [VAR=VALUE...]: runs a shell suite with those variables,
# streaming its lines, and adds its closing "NAME: N passed, N failed" (a
# crash without it counts as a failure).
suite() {
  local name=$1 script=$2 log rc line p f s
  shift 2
  log=$(mktemp)
  echo "== $name"
  env "$@" KJOIN="$BUILD/kjoin" TOOLS="$BUILD/tools" bash "$script" 2>&1 | tee "$log"; rc=${PIPESTATUS[0]}
  line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -1)
  s=$(sed -nE "s/^$name: ([0-9]+) skipped$/\1/p" "$log" | tail -1 | grep . || echo 0)
  skipped=$((skipped + s))
  failed_as $(sed -nE "s/^FAIL (t_[A-Za-z0-9_]+)( .*)?$/$name:\1/p" "$log")
  rm -f "$log"
  took "$name"
  if [ -z "$line" ]; then count 0 1; failed_as "$name (no total)"; return; fi
  p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line"); f=$(sed -E 's/.* ([0-9]+) failed/\1/' <<<"$line")
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  count "$p" "$f"
  expect "$name" $((p + f + s)) "$s"
}
# The kubectl of the newest control plane, not whatever the machine has on
# PATH (Debian's crashes writing kubeconfigs).
[ -n "${KUBECTL:-}" ] || KUBECTL=$(bash scripts/kube-build-mod.sh kubectl)/kubectl || exit 1
export KUBECTL
suite integration tests/integration/run.sh RELEASE_KJOIN=build/kjoin
# The e2e suite on each control plane: the oldest release kjoin supports and the newest.
suite e2e-oldest tests/e2e/run.sh E2E_RELEASE=oldest E2E_NAME=e2e-oldest
suite e2e-newest tests/e2e/run.sh E2E_RELEASE=newest E2E_NAME=e2e-newest
# Nodes booted by a real systemd (systemd-nspawn), joined by cloud-init with kjoin's .deb, on each release.
suite lab-oldest tests/lab/run.sh E2E_RELEASE=oldest E2E_NAME=lab-oldest
suite lab-newest tests/lab/run.sh E2E_RELEASE=newest E2E_NAME=lab-newest

# The builds are done by now (the last suites needed their last parts):
# what each cost, and a failure of their own counted.
wait "$builds_pid"; rc=$?
grep -vE 'still (running|waiting)' "$builds_log" | sed 's/^/builds: /'
[ $rc -eq 0 ] || { count 0 1; failed_as "scripts/builds.sh (exit $rc)"; }

[ ${#failures[@]} -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
# Tests that did not apply to a run (each said why on its line).
[ "$skipped" = 0 ] || echo "tests: $skipped skipped"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
