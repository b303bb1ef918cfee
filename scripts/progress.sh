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
