# The test vocabulary both runners share (integration: nginx; e2e: the real
# control plane): kj runs kjoin and checks its exit code and that no secret
# leaked; run_suite runs every t_<prefix>* function and prints one line per
# test and the closing total "<name>: N passed, N failed".

: "${KJOIN:?set KJOIN to the kjoin binary}"
passed=0 failed=0 current=""
SECRETS=()   # every token secret the tests use; none may appear in logs

fail() { echo "    FAIL [$current]: $*" >&2; return 1; }

# kj EXPECTED_RC ARGS...: runs kjoin, keeps stdout/stderr in $OUT/$ERR and
# checks the exit code and that no secret reached stderr (or stdout, unless
# the run prints a kubeconfig or a created token on purpose: KJ_STDOUT_SECRET=1).
kj() {
  local want=$1; shift
  OUT=$T/out.$RANDOM ERR=$T/err.$RANDOM
  "$KJOIN" "$@" >"$OUT" 2>"$ERR"
  local rc=$?
  local s files=("$ERR")
  [[ " $* " == *" --dry-run "* || -n "${KJ_STDOUT_SECRET:-}" ]] || files+=("$OUT")
  for s in "${SECRETS[@]}"; do
    if grep -qF -- "$s" "${files[@]}"; then fail "a token secret was printed"; return 1; fi
  done
  if [ "$rc" -ne "$want" ]; then
    fail "exit $rc, want $want: kjoin $*"; sed 's/^/      /' "$ERR" >&2; return 1
  fi
}
err_has() { grep -qF -- "$1" "$ERR" || fail "stderr lacks \"$1\""; }
out_has() { grep -qF -- "$1" "$OUT" || fail "stdout lacks \"$1\""; }

# run_suite NAME PREFIX SETUP_FN: T is a fresh folder under $ROOT per test;
# SETUP_FN runs before each test (restores shared variables).
run_suite() {
  local name=$1 prefix=$2 setup=$3 t tests
  tests=$(declare -F | awk '{print $3}' | grep "^$prefix" | grep -E -- "${ONLY:-.}")
  for t in $tests; do
    current=$t
    "$setup"
    T=$ROOT/t.$t; mkdir -p "$T"
    if "$t"; then passed=$((passed + 1)); echo "ok   $t"; else failed=$((failed + 1)); echo "FAIL $t"; fi
  done
  echo "$name: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
