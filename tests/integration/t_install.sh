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
# (and its kill points: TEST_HOOKS counts only on make's command line, never inherited)
kill_points "$KJOIN" && BUILD_VARS+=(TEST_HOOKS=1)

t_install_everything_and_uninstall_exactly() {
  local root=$T/root
  clean_make -s -C "$REPO" install BUILD="$BUILD_DIR" "${BUILD_VARS[@]}" DESTDIR="$root" PREFIX=/usr STRIP=0 >"$T/install.log" 2>&1 ||
    { fail "make install: $(tail -5 "$T/install.log")"; return 1; }
  local f
  for f in usr/bin/kjoin usr/lib/libkjoin.so.0 usr/lib/pkgconfig/kjoin.pc usr/include/kjoin/join.h \
    usr/share/man/man1/kjoin.1 usr/share/man/man1/kjoin-join.1 usr/share/man/man1/kjoin-token.1 usr/share/man/man1/kjoin-reports.1 \
    usr/share/man/man1/kjoin-certs.1 usr/share/bash-completion/completions/kjoin usr/lib/systemd/system/kjoin-join.service \
    usr/lib/systemd/system/kjoin-certs-rotate.timer usr/lib/systemd/system/kjoin-tls-rotate.timer \
    usr/lib/systemd/system/kjoin-sync-check.timer usr/lib/systemd/system/kjoin-sync-check.service usr/share/man/man1/kjoin-sync.1 \
    usr/lib/systemd/system/kjoin-approver.service usr/share/man/man1/kjoin-approver.1 usr/include/kjoin/approver.h \
    usr/lib/systemd/system/kubelet.service.d/10-kjoin.conf usr/include/kjoin/node.h usr/include/kjoin/phases.h \
    usr/share/doc/kjoin/README.md usr/share/doc/kjoin/join.md; do
    [ -e "$root/$f" ] || { fail "$f not installed"; return 1; }
  done
  # kjoin.pc follows PREFIX, whatever an earlier make built it with.
  grep -qx 'prefix=/usr' "$root/usr/lib/pkgconfig/kjoin.pc" || fail "kjoin.pc: $(grep ^prefix "$root/usr/lib/pkgconfig/kjoin.pc")" || return 1
  readelf -d "$root/usr/lib/libkjoin.so.0" | grep -q "Library soname: \[libkjoin.so.0\]" ||
    fail "soname: $(readelf -d "$root/usr/lib/libkjoin.so.0" | grep SONAME)" || return 1
  # Only the public API is exported.
  nm -D --defined-only "$root/usr/lib/libkjoin.so.0" | awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' | sort >"$T/exported"
  grep -q '^kjoin_join$' "$T/exported" || fail "kjoin_join is not exported" || return 1
  # exactly the committed list: an export is a decision
  grep -vE '^[[:space:]]*(#|$)' "$REPO/pkg/libkjoin.symbols" | sort -u >"$T/listed"
  cmp -s "$T/exported" "$T/listed" ||
    fail "the library's exports differ from pkg/libkjoin.symbols: $(diff "$T/listed" "$T/exported" | grep '^[<>]' | head -3 | tr '\n' ' ')" || return 1
  ! grep -v '^kjoin_' "$T/exported" | grep -q . || fail "non-kjoin symbols exported: $(grep -v '^kjoin_' "$T/exported" | head -3)" || return 1
  ! grep -q '__' "$T/exported" || fail "internal symbols exported: $(grep '__' "$T/exported" | head -3)" || return 1
  # Man pages render without a warning, and man finds them.
  for f in "$root"/usr/share/man/man1/*.1; do
    [ -z "$(groff -ww -z -man "$f" 2>&1)" ] || { fail "groff warns on ${f##*/}: $(groff -ww -z -man "$f" 2>&1 | head -2)"; return 1; }
  done
  MANPATH=$root/usr/share/man man -w kjoin-join >/dev/null || fail "man -w kjoin-join" || return 1
  grep -qF 'discovery\-token\-ca\-cert\-hash' "$root/usr/share/man/man1/kjoin-join.1" || fail "a flag missing from the man page" || return 1
  # ENVIRONMENT (every variable it reads, the proxy's too) and EXAMPLES.
  local sec
  for sec in '.SH ENVIRONMENT' 'KJOIN_TOKEN' 'KJOIN_CERTIFICATE_KEY' 'https_proxy' 'NO_PROXY' '.SH EXAMPLES'; do
    grep -qF -- "$sec" "$root/usr/share/man/man1/kjoin-join.1" || fail "kjoin-join(1) lacks $sec" || return 1
  done
  grep -qF '.SH EXAMPLES' "$root/usr/share/man/man1/kjoin-reset.1" || fail "kjoin-reset(1) has no EXAMPLES" || return 1
  # Completion: verbs, flags, fixed values.
  bash -c "source '$root/usr/share/bash-completion/completions/kjoin'
    COMP_WORDS=(kjoin certs issue ''); COMP_CWORD=3; _kjoin; [ \"\${COMPREPLY[*]}\" = 'client node' ] || exit 1
    COMP_WORDS=(kjoin join --flavor ''); COMP_CWORD=3; _kjoin; [ \"\${COMPREPLY[*]}\" = 'kubeadm k3s' ] || exit 2
    COMP_WORDS=(kjoin join --skip-phases ''); COMP_CWORD=3; _kjoin; [[ \" \${COMPREPLY[*]} \" == *' kubelet-start '* ]] || exit 3
    COMP_WORDS=(kjoin join --node-name ''); COMP_CWORD=3; _kjoin; [ \"\${#COMPREPLY[@]}\" = 0 ] || exit 4
    COMP_WORDS=(kjoin join --token ''); COMP_CWORD=3; _kjoin; [ \"\${#COMPREPLY[@]}\" = 0 ] || exit 5
    COMP_WORDS=(kjoin join ''); COMP_CWORD=2; _kjoin; [[ \" \${COMPREPLY[*]} \" == *' --node-name '* ]] || exit 6" ||
    fail "bash completion" || return 1
  # The units pass systemd's own check.
  local units=$T/units; mkdir -p "$units"
  for f in "$root"/usr/lib/systemd/system/*.service "$root"/usr/lib/systemd/system/*.timer; do
    sed "s|/usr/bin/kjoin|$root/usr/bin/kjoin|" "$f" >"$units/${f##*/}"
  done
  (cd "$units" && systemd-analyze verify --man=no ./*.service ./*.timer) >"$T/verify" 2>&1 ||
    { fail "systemd-analyze verify: $(head -5 "$T/verify")"; return 1; }
  # The kubelet drop-in, on a kubelet.service of its own (a stand-in binary that exists).
  mkdir -p "$units/kubelet.service.d"
  printf '[Unit]\nDescription=kubelet\n[Service]\nExecStart=/bin/true\n' >"$units/kubelet.service"
  sed 's|/usr/bin/kubelet|/bin/true|' "$root/usr/lib/systemd/system/kubelet.service.d/10-kjoin.conf" >"$units/kubelet.service.d/10-kjoin.conf"
  (cd "$units" && SYSTEMD_UNIT_PATH="$units:" systemd-analyze verify --man=no ./kubelet.service) >"$T/verify" 2>&1 ||
    { fail "systemd-analyze verify of the kubelet drop-in: $(head -5 "$T/verify")"; return 1; }
  # A program joins through the installed library, built with pkg-config.
  local san=""
  ldd "$KJOIN" | grep -q libasan && san="-fsanitize=address,undefined"
  PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
    cc -std=c11 -Wall -Werror $san "$REPO/testdata/library/join.c" $(PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs kjoin) \
    -o "$T/join-with-lib" 2>"$T/cc.err" || { fail "build against the library: $(head -3 "$T/cc.err")"; return 1; }
  LD_LIBRARY_PATH=$root/usr/lib "$T/join-with-lib" "127.0.0.1:$PORT" "$C/token" "$PIN" "$T/lib.conf" >"$T/lib.out" 2>&1 ||
    { fail "the library join: $(cat "$T/lib.out")"; return 1; }
  kubectl --kubeconfig "$T/lib.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl with the library's kubeconfig" || return 1
  # The worker join through the one specification: discovery alone here
  # (nginx is no API server), and the same node-name rule as the command.
  PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
    cc -std=c11 -Wall -Werror $san "$REPO/testdata/library/phases.c" $(PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs kjoin) \
    -o "$T/worker-with-lib" 2>"$T/cc.err" || { fail "build the worker against the library: $(head -3 "$T/cc.err")"; return 1; }
  LD_LIBRARY_PATH=$root/usr/lib "$T/worker-with-lib" "127.0.0.1:$PORT" "$C/token" "$PIN" Worker-7 "$T/worker.conf" \
    preflight,kubelet-start >"$T/worker.out" 2>&1 || { fail "the library's worker join: $(cat "$T/worker.out")"; return 1; }
  grep -q "as node worker-7$" "$T/worker.out" || fail "node name: $(cat "$T/worker.out")" || return 1
  [ "$(stat -c %a "$T/worker.conf")" = 600 ] || fail "the bootstrap kubeconfig's mode" || return 1
  kubectl --kubeconfig "$T/worker.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl with the worker's kubeconfig" || return 1
  LD_LIBRARY_PATH=$root/usr/lib "$T/worker-with-lib" "127.0.0.1:$PORT" "$C/token" "$PIN" a..b "$T/bad.conf" \
    preflight,kubelet-start >"$T/worker.out" 2>&1; [ $? = 2 ] && [ ! -e "$T/bad.conf" ] ||
    fail "a bad node name through the library: $(cat "$T/worker.out")" || return 1
  # make uninstall removes exactly what install wrote.
  clean_make -s -C "$REPO" uninstall BUILD="$BUILD_DIR" DESTDIR="$root" PREFIX=/usr >/dev/null || return 1
  [ -z "$(find "$root" -mindepth 1)" ] || fail "left behind: $(find "$root" -mindepth 1 | head -3)" || return 1
  # Directories that were there before install stay.
  mkdir -p "$root/usr/share/man/man1"
  clean_make -s -C "$REPO" install BUILD="$BUILD_DIR" "${BUILD_VARS[@]}" DESTDIR="$root" PREFIX=/usr STRIP=0 >/dev/null 2>&1 &&
    clean_make -s -C "$REPO" uninstall BUILD="$BUILD_DIR" DESTDIR="$root" PREFIX=/usr >/dev/null || return 1
  [ "$(find "$root" -mindepth 1)" = "$(printf '%s\n' "$root/usr" "$root/usr/share" "$root/usr/share/man" "$root/usr/share/man/man1")" ] ||
    fail "uninstall removed or left other directories: $(find "$root" -mindepth 1 | head -5)"
}

# Every #cloud-config example in the README and docs passes cloud-init's own
# schema check: Debian's cloud-init, installed in a throwaway root (never on
# the machine, where its boot units would run cloud-init at the next boot).
t_docs_cloud_init_examples_are_valid() {
  python3 - "$T" "$REPO"/README.md "$REPO"/docs/*.md <<'PY'
import re, sys
out, n = sys.argv[1], 0
for path in sys.argv[2:]:
    # a jinja template's header line is cloud-init's, before the document it renders
    for block in re.findall(r"```yaml\n(?:## template: jinja\n)?(#cloud-config\n.*?)```", open(path).read(), re.S):
        n += 1
        open("%s/cloud-%02d.yaml" % (out, n), "w").write(block)

PY
  local count; count=$(ls "$T"/cloud-*.yaml | wc -l)
  [ "$count" -ge 4 ] || { fail "only $count cloud-config examples found"; return 1; }
  throwaway_root "$T/root" bash -c '
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends cloud-init >/tmp/cloud-init-apt.log 2>&1 ||
      { echo "apt-get install cloud-init failed:"; tail -3 /tmp/cloud-init-apt.log; exit 1; }
    for f in "$@"; do
      cloud-init schema --config-file "$f" >"$f.out" 2>&1 || { echo "${f##*/}: $(tail -3 "$f.out")"; exit 1; }
    done' cloud "$T"/cloud-*.yaml >"$T/schema.out" 2>&1 || { fail "$(tail -4 "$T/schema.out")"; return 1; }
}

# docs/join.md's Ignition example: the Ignition config passes Debian's
# ignition-validate (in a throwaway root, as cloud-init above), and it is its
# Butane's: each file's path, mode and decoded contents, each unit.
t_docs_ignition_example_is_valid() {
  python3 - "$T" "$REPO"/docs/join.md <<'PY' || { fail "the Ignition example and its Butane differ"; return 1; }
import base64, json, re, sys, urllib.parse, yaml
out, text = sys.argv[1], open(sys.argv[2]).read()
butane = re.findall(r"```yaml\n# butane\n(.*?)```", text, re.S)
ign = [b for b in re.findall(r"```json\n(.*?)```", text, re.S) if '"ignition"' in b]
assert len(butane) == 1 and len(ign) == 1, "one Butane and one Ignition example"
b, i = yaml.safe_load(butane[0]), json.loads(ign[0])
open(out + "/ignition.json", "w").write(ign[0])
def data(url):  # a data URL: percent-encoded, or base64
    head, body = url.split(",", 1)
    assert head.startswith("data:"), url
    return base64.b64decode(body) if head.endswith(";base64") else urllib.parse.unquote_to_bytes(body)
bf = {f["path"]: (f["mode"], f["contents"]["inline"].encode()) for f in b["storage"]["files"]}
jf = {f["path"]: (f["mode"], data(f["contents"]["source"])) for f in i["storage"]["files"]}
assert bf == jf, (bf, jf)
assert b["systemd"]["units"] == i["systemd"]["units"]
assert bf["/etc/kjoin/join.yaml"][0] == 0o600, "the token's file is 0600"
jc = yaml.safe_load(bf["/etc/kjoin/join.yaml"][1])
assert jc["kind"] == "JoinConfiguration" and jc["discovery"]["bootstrapToken"]["caCertHashes"]
PY
  throwaway_root "$T/root" bash -c '
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends ignition >/tmp/ignition-apt.log 2>&1 ||
      { echo "apt-get install ignition failed:"; tail -3 /tmp/ignition-apt.log; exit 1; }
    ignition-validate "$1" && echo valid' ign "$T/ignition.json" >"$T/validate.out" 2>&1 &&
    [ "$(tail -n 1 "$T/validate.out")" = valid ] || { fail "ignition-validate: $(tail -4 "$T/validate.out")"; return 1; }
  # The validator is no rubber stamp: a mode that is no number is refused.
  sed 's/"mode": 384/"mode": "0600"/' "$T/ignition.json" >"$T/bad.json"
  throwaway_root "$T/root" bash -c 'ignition-validate "$1"' ign "$T/bad.json" >"$T/bad.out" 2>&1 &&
    { fail "ignition-validate accepted a string mode"; return 1; }
  return 0
}

# The Debian packages: built with debhelper, lintian-clean, installed with apt
# in a throwaway root (a kjoin the machine has is never touched), used (the
# binary, its man page, the library through pkg-config), their units enabled
# yet idle until configured, removed.
t_debian_packages_install_work_and_remove() {
  clean_make -s -C "$REPO" deb >"$T/deb.log" 2>&1 || { fail "make deb: $(tail -5 "$T/deb.log")"; return 1; }
  local p=$REPO/build/packages
  # The package is the one a user gets: no test kill point, though this suite's own binary has them
  # (make test builds with TEST_HOOKS=1, which GNU make exports to every recipe below it).
  kill_points "$KJOIN" || fail "the suite's binary has no kill point: the check below proves nothing" || return 1
  local deb; for deb in "$p"/kjoin_*_*.deb "$p"/libkjoin0_*_*.deb; do
    rm -rf "$T/x"; dpkg-deb -x "$deb" "$T/x" || return 1
    ! kill_points /dev/null $(find "$T/x" -type f \( -name kjoin -o -name 'libkjoin.so*' \)) ||
      fail "${deb##*/} carries the suite's kill points" || return 1
  done
  TMPDIR=$T lintian --fail-on error,warning "$p"/kjoin_*.changes >"$T/lintian" 2>&1 ||
    { fail "lintian: $(grep -v root "$T/lintian" | head -5)"; return 1; }
  # The package starts nothing by itself: its scripts enable the units, never start or restart one
  # (a join inside apt, or a node's certificate rotated at once by an install or an upgrade).
  dpkg-deb -e "$(ls "$p"/kjoin_*_*.deb | head -1)" "$T/control" || return 1
  grep -q "deb-systemd-helper enable" "$T/control/postinst" || fail "the units are not enabled" || return 1
  # ...and systemd re-reads its units, so a join's restart of the kubelet runs under 10-kjoin.conf.
  grep -q "systemctl --system daemon-reload" "$T/control/postinst" || fail "the install does not reload systemd" || return 1
  # (Read through cat: the package may have no prerm, and grep's exit 2 for it would hide a match.)
  ! cat "$T/control/postinst" "$T/control/prerm" 2>/dev/null | grep -vE '^\s*#' |
    grep -E "deb-systemd-invoke (start|restart|try-restart)|systemctl .*(start|restart)" ||
    fail "the package starts or restarts a unit: $(grep -E 'invoke|systemctl' "$T/control/postinst" | head -3)" || return 1
  local had=""; [ -e /usr/bin/kjoin ] && had=1
  mkdir -p "$T/tmp"; cp "$p"/kjoin_*_*.deb "$p"/libkjoin0_*_*.deb "$p"/libkjoin-dev_*_*.deb "$REPO/testdata/library/join.c" "$T/tmp/"
  throwaway_root "$T/root" bash -c '
    set -e; cd "$1"; export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q ./kjoin_*_*.deb ./libkjoin0_*_*.deb ./libkjoin-dev_*_*.deb >apt.log 2>&1 ||
      { echo "apt-get install: $(tail -3 apt.log)"; exit 1; }
    /usr/bin/kjoin version | grep -q "^kjoin " || { echo "kjoin version"; exit 1; }
    man -w kjoin-join >/dev/null || { echo "man -w kjoin-join"; exit 1; }
    # The man pages send the reader to /usr/share/doc/kjoin: it is there.
    ls /usr/share/doc/kjoin/README.md* /usr/share/doc/kjoin/join.md* >/dev/null || { echo "no /usr/share/doc/kjoin"; exit 1; } # gzipped as Debian does
    [ -f /lib/systemd/system/kubelet.service.d/10-kjoin.conf ] || { echo "no kubelet drop-in"; exit 1; }
    cc -std=c11 -Wall -Werror join.c $(pkg-config --cflags --libs kjoin) -o join-pkg 2>cc.err ||
      { echo "build against the package: $(head -3 cc.err)"; exit 1; }
    ./join-pkg "127.0.0.1:$2" "$3" "$4" pkg.conf >pkg.out 2>&1 || { echo "the packaged library join: $(cat pkg.out)"; exit 1; }
    # Enabled on install, but idle until configured: their conditions fail, which is success.
    for u in kjoin-join.service kjoin-certs-rotate.service kjoin-tls-rotate.service; do
      grep -q "^ConditionPathExists=" "/lib/systemd/system/$u" || { echo "$u has no condition"; exit 1; }
    done
    # The approver'"'"'s unit is installed and not enabled (the others are).
    [ -f /lib/systemd/system/kjoin-approver.service ] || { echo "no kjoin-approver.service"; exit 1; }
    [ -L /etc/systemd/system/multi-user.target.wants/kjoin-join.service ] || { echo "kjoin-join.service not enabled"; exit 1; }
    [ ! -e /etc/systemd/system/multi-user.target.wants/kjoin-approver.service ] || { echo "kjoin-approver.service enabled"; exit 1; }
    # The drift check is installed and not enabled: a fleet turns it on.
    [ -f /lib/systemd/system/kjoin-sync-check.timer ] && [ -f /lib/systemd/system/kjoin-sync-check.service ] &&
      grep -q "^ExecStart=/usr/bin/kjoin sync --check" /lib/systemd/system/kjoin-sync-check.service || { echo "no kjoin-sync-check units"; exit 1; }
    [ ! -e /etc/systemd/system/timers.target.wants/kjoin-sync-check.timer ] || { echo "kjoin-sync-check.timer enabled"; exit 1; }
    [ ! -e /var/lib/kjoin/certs ] && [ ! -e /etc/default/kjoin-certs ] && [ ! -e /etc/kjoin/join.yaml ] ||
      { echo "a unit condition holds on a fresh install"; exit 1; }
    apt-get remove -y -q --purge kjoin libkjoin0 libkjoin-dev >remove.log 2>&1 || { echo "apt-get remove: $(tail -3 remove.log)"; exit 1; }
    [ ! -e /usr/bin/kjoin ] && ! ls /usr/lib/*/libkjoin.so* >/dev/null 2>&1 || { echo "the packages left files"; exit 1; }
  ' debs "$T/tmp" "$PORT" "$C/token" "$PIN" >"$T/pkg.log" 2>&1 || { fail "$(tail -3 "$T/pkg.log")"; return 1; }
  [ -n "$had" ] || [ ! -e /usr/bin/kjoin ] || fail "the machine got /usr/bin/kjoin" || return 1
}

# The deb-src source the v1.20 build needs is derived from the machine's own
# apt sources, in either format, never named in the repository; a machine
# without a deb entry for its release gets a clear error.
t_apt_src_derives_from_the_machines_sources() {
  local etc=$T/apt; mkdir -p "$etc/sources.list.d"
  printf '# a comment\ndeb [signed-by=/k.gpg] http://mirror.invalid/debian bookworm main contrib\ndeb http://mirror.invalid/debian bookworm-updates main\n' \
    >"$etc/sources.list"
  [ "$(APT_ETC=$etc bash "$REPO/scripts/apt-src.sh" bookworm)" = "deb-src [signed-by=/k.gpg] http://mirror.invalid/debian bookworm main contrib" ] ||
    fail "one-line: $(APT_ETC=$etc bash "$REPO/scripts/apt-src.sh" bookworm 2>&1)" || return 1
  rm "$etc/sources.list"
  printf 'Types: deb\nURIs: http://other.invalid/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /k.gpg\n' \
    >"$etc/sources.list.d/debian.sources"
  APT_ETC=$etc bash "$REPO/scripts/apt-src.sh" bookworm >"$T/deb822" || { fail "deb822 refused"; return 1; }
  printf 'Types: deb-src\nSuites: bookworm\nURIs: http://other.invalid/debian\nComponents: main\nSigned-By: /k.gpg\n' | cmp -s - "$T/deb822" ||
    fail "deb822: $(cat "$T/deb822")" || return 1
  ! APT_ETC=$etc bash "$REPO/scripts/apt-src.sh" trixie 2>"$T/none.err" && grep -q "no deb entry for trixie" "$T/none.err" ||
    fail "no entry: $(cat "$T/none.err")"
}

# Every man page (generated from --help) names and describes its command:
# a NAME line that says more than the name, a DESCRIPTION that is not empty,
# and the version `kjoin version` says.
t_man_pages_name_and_describe_each_command() {
  python3 "$REPO/scripts/mkdoc.py" "$KJOIN" man "$T/man" >"$T/mkdoc.out" 2>&1 || { fail "mkdoc: $(tail -2 "$T/mkdoc.out")"; return 1; }
  local f page version; version=$("$KJOIN" version | awk '{print $2}')
  [ "$(ls "$T/man"/*.1 | wc -l)" -ge 9 ] || fail "only $(ls "$T/man" | tr '\n' ' ')" || return 1
  for f in "$T/man"/*.1; do
    page=${f##*/}; page=${page%.1}
    head -1 "$f" | grep -qF "\"kjoin $version\"" || fail "$page: .TH $(head -1 "$f")" || return 1
    awk '/^\.SH NAME/ {getline; print; exit}' "$f" | grep -qE "^${page//-/\\\\-} \\\\- [A-Za-z][^ ]* [^ ]+ .{8,}" ||
      fail "$page: NAME $(awk '/^\.SH NAME/ {getline; print; exit}' "$f")" || return 1
    awk '/^\.SH DESCRIPTION/ {getline; print; exit}' "$f" | grep -q '[A-Za-z]' || fail "$page: an empty DESCRIPTION" || return 1
  done
}

# scripts/kube-build-release.sh after a failed `go mod tidy` (no module proxy
# reachable): nothing of that run is taken for done by the next, which tidies
# again and builds. A stand-in go (KJOIN_GO_BIN) fails its first tidy.
t_kube_build_release_failed_tidy_leaves_nothing_done() {
  local bin=$T/go-bin cache=$T/cache
  mkdir -p "$bin"
  printf 'module k8s.io/kubernetes\n\ngo 1.22\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n)\n' >"$T/k.mod"
  cat >"$bin/go" <<GO
#!/bin/sh
echo "\$*" >>"$T/go.log"
case "\$1 \$2" in
  "mod download") printf '{\n\t"GoMod": "%s",\n}\n' "$T/k.mod" ;; # one field a line, as go prints it
  "mod tidy") [ -e "$T/tidy-failed" ] || { : >"$T/tidy-failed"; echo "dial tcp: no route to host" >&2; exit 1; }
              echo "sum" >go.sum ;;
  "build "*) out=\$(echo "\$*" | sed 's/.* -o \([^ ]*\) .*/\1/'); printf '#!/bin/sh\n' >"\$out"; chmod +x "\$out" ;;
esac
GO
  chmod +x "$bin/go"
  echo "stale" >"$T/go.sum.stale"
  ! KJOIN_GO_BIN=$bin KJOIN_RELEASE_CACHE=$cache bash "$REPO/scripts/kube-build-release.sh" v1.36.3 kubeadm >"$T/first.out" 2>&1 ||
    fail "the first build did not fail: $(tail -2 "$T/first.out")" || return 1
  # A go.sum left by an earlier recipe's tidy is there, as on a machine that built kubeadm alone before.
  cp "$T/go.sum.stale" "$cache/mod/go.sum"
  KJOIN_GO_BIN=$bin KJOIN_RELEASE_CACHE=$cache bash "$REPO/scripts/kube-build-release.sh" v1.36.3 kubeadm >"$T/second.out" 2>&1 ||
    fail "the second build: $(tail -3 "$T/second.out")" || return 1
  [ "$(grep -c '^mod tidy' "$T/go.log")" = 2 ] || fail "tidied $(grep -c '^mod tidy' "$T/go.log") times: $(tr '\n' ';' <"$T/go.log")" || return 1
  [ -x "$cache/kubeadm" ] && [ "$(tail -1 "$T/second.out")" = "$cache" ] || fail "no kubeadm: $(tail -2 "$T/second.out")"
}
