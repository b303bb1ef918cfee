# Sourced. progress LABEL LOG CMD...: runs CMD with its output in LOG and
# prints "LABEL: still running (Ns)" every 30 s on stderr, then the outcome
# with the elapsed time; on failure the last 30 lines of LOG and its path.
progress() {
  local label=$1 log=$2 start pid rc
  shift 2
  start=$(date +%s)
  "$@" >"$log" 2>&1 &
  pid=$!
  while ! wait_for "$pid" 30; do
    echo "$label: still running ($(($(date +%s) - start)) s)" >&2
  done
  wait "$pid"; rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "$label: done in $(($(date +%s) - start)) s" >&2
  else
    echo "$label: FAILED (exit $rc) after $(($(date +%s) - start)) s; last lines of $log:" >&2
    tail -30 "$log" >&2
  fi
  return "$rc"
}

# wait_for PID SECONDS: 0 once PID has ended, 1 if it still runs after SECONDS.
wait_for() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.2
  done
  return 1
}

# build_lock LABEL CACHE: holds CACHE.lock until the calling script ends, so
# that two runs (the suite's background build and a test that needs it now)
# never build the same thing at once; the one that waits says so every 30 s.
# The caller checks its cache again once it holds the lock.
build_lock() {
  local label=$1 lock=$2.lock start
  mkdir -p "$(dirname "$lock")"
  exec {build_lock_fd}>"$lock"
  flock -n "$build_lock_fd" && return 0
  start=$(date +%s)
  echo "$label: another run is building it; waiting for it" >&2
  until flock -w 30 "$build_lock_fd"; do
    echo "$label: still waiting for the other run ($(($(date +%s) - start)) s)" >&2
  done
}
