# make install / uninstall, the man pages, completion, systemd units and the
# library used through pkg-config (sourced by run.sh).

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=$(dirname "$KJOIN")
# make as a user runs it: not with the variables of the `make test` around us
# (its MAKEFLAGS and exported SANITIZE=1 and OPT would reach a package build).
clean_make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u OPT -u BUILD make "$@"; }
# The build under test's variables, as it was built (ASan and UBSan under
# make test), so that install rebuilds nothing.
BUILD_VARS=()
ldd "$KJOIN" | grep -q libasan && BUILD_VARS=(SANITIZE=1 "OPT=-O1 -g")

t_install_everything_and_uninstall_exactly() {
  local root=$T/root
  clean_make -s -C "$REPO" install BUILD="$BUILD_DIR" "${BUILD_VARS[@]}" DESTDIR="$root" PREFIX=/usr STRIP=0 >"$T/install.log" 2>&1 ||
    { fail "make install: $(tail -5 "$T/install.log")"; return 1; }
  local f
  for f in usr/bin/kjoin usr/lib/libkjoin.so.0 usr/lib/pkgconfig/kjoin.pc usr/include/kjoin/join.h \
    usr/share/man/man1/kjoin.1 usr/share/man/man1/kjoin-join.1 usr/share/man/man1/kjoin-token.1 \
    usr/share/man/man1/kjoin-certs.1 usr/share/bash-completion/completions/kjoin usr/lib/systemd/system/kjoin-join.service \
    usr/lib/systemd/system/kjoin-certs-rotate.timer usr/lib/systemd/system/kjoin-tls-rotate.timer; do
    [ -e "$root/$f" ] || { fail "$f not installed"; return 1; }
  done
  readelf -d "$root/usr/lib/libkjoin.so.0" | grep -q "Library soname: \[libkjoin.so.0\]" ||
    fail "soname: $(readelf -d "$root/usr/lib/libkjoin.so.0" | grep SONAME)" || return 1
  # Only the public API is exported.
  nm -D --defined-only "$root/usr/lib/libkjoin.so.0" | awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' | sort >"$T/exported"
  grep -q '^kjoin_join$' "$T/exported" || fail "kjoin_join is not exported" || return 1
  ! grep -v '^kjoin_' "$T/exported" | grep -q . || fail "non-kjoin symbols exported: $(grep -v '^kjoin_' "$T/exported" | head -3)" || return 1
  ! grep -q '__' "$T/exported" || fail "internal symbols exported: $(grep '__' "$T/exported" | head -3)" || return 1
  # Man pages render without a warning, and man finds them.
  for f in "$root"/usr/share/man/man1/*.1; do
    [ -z "$(groff -ww -z -man "$f" 2>&1)" ] || { fail "groff warns on ${f##*/}: $(groff -ww -z -man "$f" 2>&1 | head -2)"; return 1; }
  done
  MANPATH=$root/usr/share/man man -w kjoin-join >/dev/null || fail "man -w kjoin-join" || return 1
  grep -qF 'discovery\-token\-ca\-cert\-hash' "$root/usr/share/man/man1/kjoin-join.1" || fail "a flag missing from the man page" || return 1
  # Completion: verbs, flags, fixed values.
  bash -c "source '$root/usr/share/bash-completion/completions/kjoin'
    COMP_WORDS=(kjoin certs issue ''); COMP_CWORD=3; _kjoin; [ \"\${COMPREPLY[*]}\" = 'client node' ] || exit 1
    COMP_WORDS=(kjoin join --flavor ''); COMP_CWORD=3; _kjoin; [ \"\${COMPREPLY[*]}\" = 'kubeadm k3s' ] || exit 2" ||
    fail "bash completion" || return 1
  # The units pass systemd's own check.
  local units=$T/units; mkdir -p "$units"
  for f in "$root"/usr/lib/systemd/system/*; do sed "s|/usr/bin/kjoin|$root/usr/bin/kjoin|" "$f" >"$units/${f##*/}"; done
  (cd "$units" && systemd-analyze verify --man=no ./*.service ./*.timer) >"$T/verify" 2>&1 ||
    { fail "systemd-analyze verify: $(head -5 "$T/verify")"; return 1; }
  # A program joins through the installed library, built with pkg-config.
  local san=""
  [ ${#BUILD_VARS[@]} -gt 0 ] && san="-fsanitize=address,undefined"
  PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
    cc -std=c11 -Wall -Werror $san "$REPO/testdata/library/join.c" $(PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs kjoin) \
    -o "$T/join-with-lib" 2>"$T/cc.err" || { fail "build against the library: $(head -3 "$T/cc.err")"; return 1; }
  LD_LIBRARY_PATH=$root/usr/lib "$T/join-with-lib" "127.0.0.1:$PORT" "$C/token" "$PIN" "$T/lib.conf" >"$T/lib.out" 2>&1 ||
    { fail "the library join: $(cat "$T/lib.out")"; return 1; }
  kubectl --kubeconfig "$T/lib.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl with the library's kubeconfig" || return 1
  # make uninstall removes exactly what install wrote.
  clean_make -s -C "$REPO" uninstall BUILD="$BUILD_DIR" DESTDIR="$root" PREFIX=/usr >/dev/null || return 1
  [ -z "$(find "$root" -type f -o -type l)" ] || fail "left behind: $(find "$root" -type f -o -type l | head -3)"
}

# Every #cloud-config example in the README and docs passes cloud-init's own schema check.
t_docs_cloud_init_examples_are_valid() {
  command -v cloud-init >/dev/null || { fail "cloud-init missing (run 'make deps')"; return 1; }
  python3 - "$T" "$REPO"/README.md "$REPO"/docs/*.md <<'PY'
import re, sys
out, n = sys.argv[1], 0
for path in sys.argv[2:]:
    for block in re.findall(r"```yaml\n(#cloud-config\n.*?)```", open(path).read(), re.S):
        n += 1
        open("%s/cloud-%02d.yaml" % (out, n), "w").write(block)

PY
  local f count=0
  for f in "$T"/cloud-*.yaml; do
    cloud-init schema --config-file "$f" >"$T/schema.out" 2>&1 || { fail "${f##*/}: $(tail -3 "$T/schema.out")"; return 1; }
    count=$((count + 1))
  done
  [ "$count" -ge 4 ] || fail "only $count cloud-config examples found"
}

# The Debian packages: built with debhelper, lintian-clean, installed with apt,
# used (the binary, its man page, the library through pkg-config), removed.
t_debian_packages_install_work_and_remove() {
  clean_make -s -C "$REPO" deb >"$T/deb.log" 2>&1 || { fail "make deb: $(tail -5 "$T/deb.log")"; return 1; }
  local p=$REPO/build/packages
  lintian --fail-on error,warning "$p"/kjoin_*.changes >"$T/lintian" 2>&1 || { fail "lintian: $(grep -v root "$T/lintian" | head -5)"; return 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p"/kjoin_*_*.deb "$p"/libkjoin0_*_*.deb "$p"/libkjoin-dev_*_*.deb \
    >"$T/apt.log" 2>&1 || { fail "apt-get install: $(tail -3 "$T/apt.log")"; return 1; }
  local rc=0
  /usr/bin/kjoin version | grep -q "^kjoin " || { fail "kjoin version"; rc=1; }
  [ $rc = 0 ] && { man -w kjoin-join >/dev/null || { fail "man -w kjoin-join"; rc=1; }; }
  [ $rc = 0 ] && { cc -std=c11 -Wall -Werror "$REPO/testdata/library/join.c" $(pkg-config --cflags --libs kjoin) -o "$T/join-pkg" 2>"$T/cc.err" ||
    { fail "build against the package: $(head -3 "$T/cc.err")"; rc=1; }; }
  [ $rc = 0 ] && { "$T/join-pkg" "127.0.0.1:$PORT" "$C/token" "$PIN" "$T/pkg.conf" >"$T/pkg.out" 2>&1 ||
    { fail "the packaged library's join: $(cat "$T/pkg.out")"; rc=1; }; }
  DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq --purge kjoin libkjoin0 libkjoin-dev >"$T/remove.log" 2>&1 ||
    { fail "apt-get remove: $(tail -3 "$T/remove.log")"; return 1; }
  [ ! -e /usr/bin/kjoin ] && ! ls /usr/lib/*/libkjoin.so* >/dev/null 2>&1 || fail "the packages left files" || return 1
  return $rc
}
