#!/usr/bin/env bash
# Prints a deb-src source for the machine's own Debian suite, derived from the
# machine's apt sources (the same archive, options and keyring as its `deb`
# entry for that suite), in the format of the file it came from. Exit 1 when
# no `deb` entry names the suite. Never names an archive itself.
set -euo pipefail
suite=${1:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
etc=${APT_ETC:-/etc/apt} # (tests point it elsewhere)

# deb822 (*.sources): the first stanza whose Types has deb and Suites has the suite.
for f in "$etc"/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  out=$(awk -v suite="$suite" 'BEGIN { RS = ""; FS = "\n" }
    {
      types = 0; has = 0; body = ""
      for (i = 1; i <= NF; i++) {
        line = $i
        if (line ~ /^#/) continue
        if (line ~ /^Types:/) { if (line ~ /[: ]deb( |$)/) types = 1; continue }
        if (line ~ /^Suites:/) { n = split(substr(line, 8), s, " "); for (j = 1; j <= n; j++) if (s[j] == suite) has = 1; continue }
        body = body line "\n"
      }
      if (types && has) { printf "Types: deb-src\nSuites: %s\n%s", suite, body; exit }
    }' "$f")
  [ -n "$out" ] && { echo "$out"; exit 0; }
done
# One-line format: "deb [options] URI SUITE COMPONENTS".
line=$({ cat "$etc"/sources.list "$etc"/sources.list.d/*.list 2>/dev/null || true; } |
  awk -v suite="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i + 1) == suite) { sub(/^deb/, "deb-src"); print; exit } }')
[ -n "$line" ] && { echo "$line"; exit 0; }
echo "apt-src: no deb entry for $suite in the machine's apt sources" >&2
exit 1
