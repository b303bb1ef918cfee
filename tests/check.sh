#!/usr/bin/env bash
# Runs every suite of `make test` and totals them on the last line, as
# "tests: N passed, N failed": each cmocka case, each fuzz corpus replayed,
# each public header compiled alone, each integration test.
set -uo pipefail
: "${BUILD:?}" "${CC:?}"
passed=0 failed=0
count() { passed=$((passed + $1)); failed=$((failed + $2)); }

for t in "$BUILD"/tests/test_*; do
  echo "== $t"
  out=$("$t" 2>&1); rc=$?
  echo "$out" | grep -vE '^\[ RUN|^\[       OK'
  ok=$(grep -c '^\[       OK \]' <<<"$out"); bad=$(grep -cE '^\[  (FAILED|ERROR)  \] test_' <<<"$out")
  [ $rc -ne 0 ] && [ "$bad" -eq 0 ] && bad=1   # a crash or sanitizer report
  count "$ok" "$bad"
done

for r in "$BUILD"/fuzz/*-replay; do
  n=$(basename "$r" -replay)
  if "$r" "testdata/fuzz/${n#fuzz_}"; then count 1 0; else count 0 1; fi
done

for h in include/kjoin/*.h; do
  if printf '#include <kjoin/%s>\n' "${h##*/}" | $CC -std=c11 -pedantic -Wall -Wextra -Werror -Iinclude -x c -fsyntax-only -; then
    count 1 0
  else
    echo "header $h does not compile alone"; count 0 1
  fi
done
echo "headers: $(ls include/kjoin/*.h | wc -l) compile alone"

out=$(KJOIN="$BUILD/kjoin" TOOLS="$BUILD/tools" bash tests/integration/run.sh 2>&1); rc=$?
echo "$out" | grep -v '^ok '
line=$(grep -E '^integration: [0-9]+ passed, [0-9]+ failed$' <<<"$out" | tail -1)
if [ -n "$line" ]; then
  p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line"); f=$(sed -E 's/.* ([0-9]+) failed/\1/' <<<"$line")
  [ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
  count "$p" "$f"
else
  count 0 1
fi

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
