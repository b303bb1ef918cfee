#!/usr/bin/env bash
# run.sh NAME...: runs each libFuzzer target for FUZZ_SECONDS on a copy of its
# seed corpus (testdata/fuzz/<name>, plus inputs as large as the real caps),
# with -max_len at the 1 MiB kjoin reads and a per-input time limit. Prints
# "fuzz NAME: ok" or "fuzz NAME: FAILED" per target; exits 1 when any failed.
#
# The limit is set for this build (ASan and UBSan, -O1) on a loaded 2-core
# machine, never for a quiet one: the slowest real input, 1 MiB of 80,000
# mapping keys, parses in 0.16 s in the release build and took 2.3 s here
# with both cores busy, so 2 s failed a correct parser. 30 s is ten times
# that; what it is for, a parser that is quadratic or worse in its input, takes
# hours on 1 MiB (10^12 steps), not seconds, so it still fails at once.
set -uo pipefail
: "${FUZZ_SECONDS:?}" "${FUZZ_DIR:?}"
failed=0
seeds() { # DIR: the large inputs a hostile peer would send
  python3 - "$1" <<'PY'
import sys, os
d = sys.argv[1]
big = {
    "deep-flow": "a: " + "[" * 200000 + "]" * 200000,
    "deep-block": "".join(" " * i + "a:\n" for i in range(1400)),
    "wide": "a:\n" + "".join(f"  k{i}: v\n" for i in range(100000)),
    "long-scalar": "a: " + "x" * (1024 * 1024 - 8),
    "json-deep": "{\"a\":" * 100000 + "1" + "}" * 100000,
    "aliases": "a: &a [x]\n" + "".join(f"b{i}: &b{i} [*a, *a]\n" for i in range(2000)),
    "json-long-string": '{"kind":"ConfigMap","data":{"kubeconfig":"' + "a\\n\\u00e9\\ud83d\\ude00\\\"" * 38000 + '"}}',
}
for name, text in big.items():
    with open(os.path.join(d, name), "w") as f:
        f.write(text[: 1024 * 1024])
PY
}
for n in "$@"; do
  short=${n#fuzz_}
  work=$FUZZ_DIR/corpus-$short
  rm -rf "$work"; mkdir -p "$work"
  cp testdata/fuzz/"$short"/* "$work"/
  seeds "$work"
  log=$FUZZ_DIR/$n.log
  if "$FUZZ_DIR/$n" -max_total_time="$FUZZ_SECONDS" -max_len=1048576 -timeout="${FUZZ_INPUT_TIMEOUT:-30}" -rss_limit_mb=2048 \
       -print_final_stats=0 -artifact_prefix="$FUZZ_DIR/$n-" "$work" >"$log" 2>&1; then
    echo "fuzz $n: ok ($(grep -c . "$log") log lines, $(ls "$work" | wc -l) inputs)"
  else
    echo "fuzz $n: FAILED"; tail -30 "$log"; failed=1
  fi
  rm -rf "$work"
done
exit $failed
