#!/usr/bin/env bash
# busy.sh N CMD...: runs CMD with N CPU-bound processes beside it, at the
# normal priority (as other work on a shared CI machine would be), and stops
# them when CMD ends, however it ends. Exits with CMD's status. The suite
# must pass so: `scripts/busy.sh 2 make test`, or BUSY=2 scripts/fresh-check.sh.
set -uo pipefail
n=${1:?busy.sh N CMD...}; shift
[ "$#" -gt 0 ] || { echo "busy.sh N CMD..." >&2; exit 2; }
spinners=()
stop() { [ ${#spinners[@]} = 0 ] || kill "${spinners[@]}" 2>/dev/null; wait "${spinners[@]}" 2>/dev/null; }
trap stop EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$n"); do
  bash -c 'while :; do :; done' &
  spinners+=($!)
done
echo "busy.sh: $n CPU-bound processes beside: $*" >&2
"$@"
