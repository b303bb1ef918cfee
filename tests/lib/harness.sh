# The test vocabulary both runners share (integration: nginx; e2e: the real
# control plane): kj runs kjoin and checks its exit code and that no secret
# leaked; run_suite runs every t_<prefix>* function and prints one line per
# test and the closing total "<name>: N passed, N failed" (a test that did
# not apply here is counted apart, on a line "<name>: N skipped" before it).

: "${KJOIN:?set KJOIN to the kjoin binary}"
passed=0 failed=0 skipped=0 current="" SKIPPED=""
SECRETS=()   # every token secret the tests use; none may appear in logs

fail() { echo "    FAIL [$current]: $*" >&2; return 1; }
# skip REASON: the test does not apply to this run (the caller returns 0
# after it); it is reported as skipped with the reason, never as passed.
skip() { SKIPPED=${*:-no reason given}; }

# kj EXPECTED_RC ARGS...: runs kjoin, keeps stdout/stderr in $OUT/$ERR and its
# exit code in $RC ("any": the caller judges it), and
# checks the exit code and that no secret reached stderr (or stdout, unless
# the run prints a kubeconfig or a created token on purpose: KJ_STDOUT_SECRET=1;
# a dry run's files show tokens masked).
kj() {
  local want=$1; shift
  OUT=$T/out.$RANDOM ERR=$T/err.$RANDOM
  "$KJOIN" "$@" >"$OUT" 2>"$ERR"
  local rc=$?
  local s files=("$ERR")
  [ -n "${KJ_STDOUT_SECRET:-}" ] || files+=("$OUT")
  for s in "${SECRETS[@]}"; do
    if grep -qF -- "$s" "${files[@]}"; then fail "a token secret was printed"; return 1; fi
  done
  RC=$rc
  [ "$want" != any ] || return 0 # the caller judges $RC
  if [ "$rc" -ne "$want" ]; then
    fail "exit $rc, want $want: kjoin $*"; sed 's/^/      /' "$ERR" >&2; return 1
  fi
}
err_has() { grep -qF -- "$1" "$ERR" || fail "stderr lacks \"$1\""; }
out_has() { grep -qF -- "$1" "$OUT" || fail "stdout lacks \"$1\""; }

# The machine's own node directories: every test that writes a node's files
# does so in a namespace of its own or in its folder. One that makes or
# changes them on the machine fails, named; the harness removes nothing it
# did not make (the machine may have had them, empty or not, before the run),
# and takes what it sees now as the new baseline, so only the test that
# changed the machine fails, not every test after it. Compared: every path
# below them with its type, mode, owner and (for files and symlinks) content.
# (A run_suite CHECK_FN.)
machine_dirs() { tree_state /etc/kubernetes /var/lib/kubelet; }
# kill_points FILE...: whether the binaries name the suite's kill points
# (KJOIN_JOIN_CRASH_AT, KJOIN_CERTS_CRASH_AT). grep -c reads all of strings'
# output: grep -q would stop at the first match, strings would die of
# SIGPIPE, and under pipefail the pipeline would say "no".
kill_points() { [ "$(strings "$@" 2>/dev/null | grep -c 'KJOIN_[A-Z]*_CRASH_AT')" -gt 0 ]; }

# tree_state PATH...: every path below each PATH that is there, with its
# type, mode, owner and symlink target, and each file's content digest: what
# "nothing written" and "as it was" compare, before and after.
tree_state() {
  local d
  for d in "$@"; do
    [ -e "$d" ] || [ -L "$d" ] || continue
    find "$d" -printf '%p %y %m %U:%G %l\n' 2>/dev/null | LC_ALL=C sort
    find "$d" -type f -exec sha256sum {} + 2>/dev/null | LC_ALL=C sort -k2
  done
}
# tree_changes BEFORE PATH...: what changed under PATH since tree_state's
# BEFORE, one "< was" or "> now" line each; nothing when nothing did.
tree_changes() { local before=$1; shift; diff <(echo "$before") <(tree_state "$@") | grep -E '^[<>] .'; }
MACHINE_BEFORE=$(machine_dirs)
machine_unchanged() {
  local now; now=$(machine_dirs)
  [ "$now" = "$MACHINE_BEFORE" ] && return 0
  fail "changed on the machine: $(diff <(echo "$MACHINE_BEFORE") <(echo "$now") | grep -E '^[<>] .' | head -n 6 | tr '\n' ' ')"
  MACHINE_BEFORE=$now
  return 1
}

# run_suite NAME PREFIX SETUP_FN [CHECK_FN]: T is a fresh folder under $ROOT
# per test; SETUP_FN runs before each test (restores shared variables),
# CHECK_FN after it (what no test may leave; its failure fails the test).
run_suite() {
  local name=$1 prefix=$2 setup=$3 check=${4:-} t tests
  tests=$(declare -F | awk '{print $3}' | grep "^$prefix" | grep -E -- "${ONLY:-.}")
  for t in $tests; do
    current=$t
    "$setup"
    T=$ROOT/t.$t; mkdir -p "$T"
    local ok=0 start=$SECONDS
    SKIPPED=
    "$t" || ok=1
    [ -z "$check" ] || "$check" || ok=1 # after a failed test too
    # Each line says how long its test took: where a slow suite's time goes.
    if [ $ok = 1 ]; then failed=$((failed + 1)); echo "FAIL $t ($((SECONDS - start)) s)"
    elif [ -n "$SKIPPED" ]; then skipped=$((skipped + 1)); echo "skip $t ($SKIPPED)"
    else passed=$((passed + 1)); echo "ok   $t ($((SECONDS - start)) s)"; fi
  done
  [ "$skipped" = 0 ] || echo "$name: $skipped skipped"
  echo "$name: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
