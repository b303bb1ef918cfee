# The harness itself (tests/lib/harness.sh, tests/check.sh's counts): a test
# that did nothing is never counted as passed, a test that changed the
# machine is the one that fails, and the harness removes nothing it did not
# make. A mini-suite runs in a mount namespace of its own, over a
# copy-on-write /etc, so the machine's is never touched.
t_harness_names_the_test_that_changed_the_machine_and_counts_skips() {
  local ns=$T/ns; mkdir -p "$ns/upper" "$ns/work"
  cat >"$T/suite.sh" <<'SUITE'
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$NS/upper,workdir=$NS/work" /etc || exit 97
source "$HARNESS"
ROOT=$NS/root # (under the test's own folder, which the suite removes)
t_1_passes() { return 0; }
t_2_makes_the_machines_dir() { mkdir -p /etc/kubernetes/pki; }
t_3_passes_after() { return 0; }
t_4_skips() { skip "not here"; return 0; }
t_5_skips_without_reason() { skip; return 0; }
t_6_skips_then_fails() { skip "x"; fail "broken"; }
t_7_changes_a_mode() { chmod 0700 /etc/kubernetes/pki; }
nothing() { :; }
run_suite mini t_ nothing machine_unchanged
echo "left: $(ls -d /etc/kubernetes/pki 2>/dev/null)"
SUITE
  NS=$ns HARNESS=$REPO/tests/lib/harness.sh KJOIN=$KJOIN ONLY= unshare --mount --propagation private bash "$T/suite.sh" >"$T/out" 2>"$T/err"
  local want
  want=$(printf '%s\n' 'ok   t_1_passes' 'FAIL t_2_makes_the_machines_dir' 'ok   t_3_passes_after' 'skip t_4_skips (not here)' \
    'skip t_5_skips_without_reason (no reason given)' 'FAIL t_6_skips_then_fails' 'FAIL t_7_changes_a_mode' \
    'mini: 2 skipped' 'mini: 2 passed, 3 failed' 'left: /etc/kubernetes/pki')
  [ "$(sed -E 's/ \([0-9]+ s\)$//' "$T/out")" = "$want" ] ||
    fail "the mini-suite: $(tr '\n' ';' <"$T/out") $(tail -3 "$T/err" | tr '\n' ';')" || return 1
  grep -q "FAIL \[t_2_makes_the_machines_dir\]: changed on the machine: > /etc/kubernetes d" "$T/err" ||
    fail "the failure does not say what changed: $(grep 'machine' "$T/err" | head -2)"
}

# tests/check.sh fails a suite whose count of tests run or skipped is not the
# one tests/expected-counts.txt says, and says which.
t_harness_a_suite_that_ran_fewer_tests_fails_the_run() {
  local fn
  fn=$(sed -n '/^expect() {/,/^}/p' "$REPO/tests/check.sh")
  [ -n "$fn" ] || { fail "tests/check.sh has no expect()"; return 1; }
  (
    cd "$REPO" || exit 1
    passed=0 failed=0 failures=()
    count() { passed=$((passed + $1)); failed=$((failed + $2)); }
    failed_as() { failures+=("$@"); }
    eval "$fn"
    unset ONLY
    want=$(awk '$1 == "integration" {print $2, $3}' tests/expected-counts.txt)
    expect integration ${want% *} ${want#* } >"$T/same"
    [ "$failed" = 0 ] && [ ! -s "$T/same" ] || { echo "the expected count failed"; exit 1; }
    expect integration $((${want% *} - 1)) ${want#* } >"$T/fewer"
    [ "$failed" = 1 ] && grep -q "^integration: ran $((${want% *} - 1)) tests" "$T/fewer" || { echo "one test fewer passed: $(cat "$T/fewer")"; exit 1; }
    want=$(awk '$1 == "e2e-newest" {print $2, $3}' tests/expected-counts.txt)
    expect e2e-newest ${want% *} $((${want#* } + 1)) >"$T/skip"
    [ "$failed" = 2 ] && [ "${failures[*]}" = "integration (test count) e2e-newest (test count)" ] || { echo "a new skip passed: $(cat "$T/skip")"; exit 1; }
  ) >"$T/why" 2>&1 || fail "$(cat "$T/why")"
}

# The herd test's timing check (tests/e2e/t_herd.sh's herd_check) fails on a
# retry sooner than its Retry-After, on a retry it cannot time, and on logs
# in which no retry was timed at all; it passes a retry that waited.
t_harness_herd_check_cannot_pass_untimed() {
  local fn; fn=$(sed -n '/^herd_check() {/,/^}/p' "$REPO/tests/e2e/t_herd.sh")
  [ -n "$fn" ] || { fail "tests/e2e/t_herd.sh has no herd_check()"; return 1; }
  eval "$fn"
  printf '%s\n' '10.000 [api] POST /csr: HTTP 429 (3 ms)' '10.001 [api]   Retry-After: 1' '11.002 [api] POST /csr: HTTP 201 (3 ms)' >"$T/waited"
  printf '%s\n' '10.000 [api] POST /csr: HTTP 429 (3 ms)' '10.001 [api]   Retry-After: 1' '10.500 [api] POST /csr: HTTP 201 (3 ms)' >"$T/soon"
  printf '%s\n' '10.000 [api] POST /csr: HTTP 429 (3 ms)' '12.000 [api] POST /csr: HTTP 201 (3 ms)' >"$T/noheader"
  herd_check "$T/waited" >"$T/out" 2>"$T/err" && grep -q ' 0 too soon, 1 retries timed' "$T/out" ||
    fail "a retry that waited: $(cat "$T/out" "$T/err")" || return 1
  ! herd_check "$T/waited" "$T/soon" >"$T/out" 2>"$T/err" && grep -q "too soon in $T/soon" "$T/err" ||
    fail "a retry too soon passed: $(cat "$T/out" "$T/err")" || return 1
  ! herd_check "$T/waited" "$T/noheader" >"$T/out" 2>"$T/err" && grep -q "untimed in $T/noheader" "$T/err" ||
    fail "an untimed retry passed: $(cat "$T/out" "$T/err")" || return 1
  ! herd_check "$T/noheader" >"$T/out" 2>"$T/err" && grep -q "no retry after a 429 was timed" "$T/err" ||
    fail "logs with no Retry-After passed: $(cat "$T/out" "$T/err")"
}
