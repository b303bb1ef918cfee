#!/usr/bin/env bash
# mkmap.sh HEADER...: the linker version script of libkjoin: exactly the
# functions the public headers declare (static inline helpers excluded), so
# pkg/'s internal kjoin_<module>__* functions stay local.
set -euo pipefail
echo "KJOIN_0 {"
echo "  global:"
grep -hE '\bkjoin_[a-z0-9_]+\(' "$@" | grep -v 'static inline' | grep -oE '\bkjoin_[a-z0-9_]+\(' | tr -d '(' |
  grep -v '__' | sort -u | sed 's/.*/    &;/'
echo "  local: *;"
echo "};"
