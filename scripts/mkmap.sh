#!/usr/bin/env bash
# mkmap.sh SYMBOLS HEADER...: the linker version script of libkjoin, from the
# committed list SYMBOLS (pkg/libkjoin.symbols) of the functions it exports.
# An export is a decision: the list must name exactly the functions the
# public headers declare (static inline helpers excluded); a function added
# to or removed from a header without the list, or the other way round,
# stops the build with the difference. pkg/'s internal functions stay local.
set -euo pipefail
list=$1; shift
# (comments dropped first: a function a comment names is not declared)
declared=$(perl -0777 -pe 's{/\*.*?\*/}{}gs' "$@" | grep -E '\bkjoin_[a-z0-9_]+\(' | grep -v 'static inline' | grep -oE '\bkjoin_[a-z0-9_]+\(' | tr -d '(' |
  grep -v '__' | sort -u)
listed=$(grep -vE '^[[:space:]]*(#|$)' "$list" | sort -u)
if [ "$declared" != "$listed" ]; then
  {
    echo "mkmap: the public headers and $list disagree (an export is a decision: change both):"
    comm -23 <(echo "$declared") <(echo "$listed") | sed 's/^/  declared in a header, not listed: /'
    comm -13 <(echo "$declared") <(echo "$listed") | sed 's/^/  listed, declared in no header: /'
  } >&2
  exit 1
fi
echo "KJOIN_0 {"
echo "  global:"
echo "$listed" | sed 's/.*/    &;/'
echo "  local: *;"
echo "};"
