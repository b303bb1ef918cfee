# A herd of nodes on the real API server (sourced by run.sh): HERD_NODES
# `kjoin join`s at once, each discovery and kjoin's own TLS bootstrap (no
# kubelet), against API Priority and Fairness limits low enough that the
# server answers 429. All complete; none asks again sooner than the server's
# Retry-After said. Each run's log is stamped line by line (-v 6: every
# answer and its headers) and read back. The stamper runs at a real-time
# priority: a line is stamped when kjoin writes it, not when a starved reader
# gets to it (a reader late on a 429's line made a correct retry look early).

HERD_NODES=${HERD_NODES:-100}

# API Priority and Fairness: a priority level with one share, rejecting what
# it cannot take, for bootstrap tokens and anonymous requests (discovery);
# named $1 (kjoin-herd). The API server's Retry-After grows with a level's
# rejections and shrinks only as it rejects again: a herd that follows
# another gets a level of its own, not the last one's Retry-After.
herd_flow_control() {
  local name=${1:-kjoin-herd} api=flowcontrol.apiserver.k8s.io/v1 shares=nominalConcurrencyShares
  [ "$E2E_MINOR" -lt 29 ] && api=flowcontrol.apiserver.k8s.io/v1beta1 shares=assuredConcurrencyShares
  cat <<YAML
apiVersion: $api
kind: PriorityLevelConfiguration
metadata: {name: $name}
spec:
  type: Limited
  limited:
    $shares: 1
    limitResponse: {type: Reject}
---
apiVersion: $api
kind: FlowSchema
metadata: {name: $name}
spec:
  priorityLevelConfiguration: {name: $name}
  matchingPrecedence: 450
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects:
    - {kind: Group, group: {name: "system:bootstrappers"}}
    - {kind: Group, group: {name: "system:unauthenticated"}}
    resourceRules:
    - {verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"], clusterScope: true}
    nonResourceRules:
    - {verbs: ["*"], nonResourceURLs: ["*"]}
YAML
}

# herd_check LOG...: from stamped logs, "N answers, N 429s, N too soon"
# per run and in all: a retry after a 429 must come at least Retry-After
# seconds after it (50 ms for the clock's and the log's own delays). A retry
# whose 429 showed no Retry-After in the log cannot be timed, and counts as
# untimed: the check fails when any retry is, or when none was timed at all,
# so a log that stops showing the header cannot make it pass by checking
# nothing. Exits 1 on any of these.
herd_check() {
  awk '
    FNR == 1 { pending = 0; wait = -1 }
    / \[(http|api)\] .*HTTP [0-9]+/ {
      t = $1 + 0; answers++
      if (pending && wait < 0) { untimed++; print "untimed in " FILENAME ": a retry after a 429 without a Retry-After in the log" > "/dev/stderr" }
      if (pending && wait >= 0) {
        timed++
        if (t - pending < wait - 0.05) { soon++; print "too soon in " FILENAME ": " t - pending " s after a 429 with Retry-After " wait > "/dev/stderr" }
        if (timed == 1 || t - pending - wait < least) least = t - pending - wait
      }
      pending = 0; wait = -1
      if ($0 ~ /HTTP 429/) { pending = t; n429++ }
      next
    }
    pending && tolower($0) ~ /\] +retry-after: *[0-9]+/ { w = tolower($0); sub(/.*retry-after: */, "", w); wait = w + 0 }
    END { printf "%d answers, %d 429s, %d too soon, %d retries timed", answers, n429, soon, timed
          if (timed) printf " (the earliest %.3f s past its Retry-After)", least
          printf "\n"
          if (n429 && !timed) print "no retry after a 429 was timed: the logs show no Retry-After" > "/dev/stderr"
          exit (soon || untimed || (n429 && !timed)) ? 1 : 0 }' "$@"
}

t_e2e_herd_of_nodes_against_priority_and_fairness() {
  herd_flow_control | kc apply -f - >/dev/null || { fail "API Priority and Fairness objects"; return 1; }
  local i pids=() t0 rc=0 stamp='use Time::HiRes qw(time); $| = 1; printf("%.3f %s", time, $_) while <STDIN>' rt=(chrt -f 1)
  "${rt[@]}" true 2>/dev/null || { rt=(); echo "    (no real-time priority here: the stamps may be late under load)"; }
  t0=$(date +%s.%N)
  for i in $(seq "$HERD_NODES"); do
    mkdir -p "$T/n$i"
    (
      "$KJOIN" join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
        --skip-phases preflight,kubelet-start --tls-bootstrap --node-name "herd-$i" --kubeconfig-out "$T/n$i/bootstrap.conf" \
        --kubelet-kubeconfig "$T/n$i/kubelet.conf" --kubelet-pki-dir "$T/n$i/pki" --ca-cert-path "$T/n$i/ca.crt" \
        --discovery-timeout 150s -v 6 \
        2>&1 >/dev/null | "${rt[@]}" perl -e "$stamp" >"$T/n$i/log"
      echo "${PIPESTATUS[0]} $(date +%s.%N)" >"$T/n$i/done"
    ) &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i"; done
  kc delete flowschema,prioritylevelconfiguration kjoin-herd >/dev/null 2>&1
  local failed=0 last=0 end
  for i in $(seq "$HERD_NODES"); do
    read -r code end <"$T/n$i/done"
    [ "$code" = 0 ] && [ -s "$T/n$i/kubelet.conf" ] || { failed=$((failed + 1)); [ $failed -le 3 ] && fail "herd-$i: exit $code: $(grep -v '^[0-9.]* \[' "$T/n$i/log" | tail -1)"; }
    last=$(awk -v a="$last" -v b="$end" -v t="$t0" 'BEGIN { d = b - t; print (d > a ? d : a) }')
  done
  [ $failed = 0 ] || { fail "$failed of $HERD_NODES nodes did not get their identity"; rc=1; }
  local summary; summary=$(herd_check "$T"/n*/log 2>"$T/soon") || { fail "$(tail -3 "$T/soon")"; rc=1; }
  echo "    ($HERD_NODES nodes: $summary; $(awk -v n="$HERD_NODES" '{ print $1 / n }' <<<"$summary") answers a node; the last identity after ${last%.*} s)"
  ! grep -qF 0123456789abcdef "$T"/n*/log || { fail "a token secret was logged"; rc=1; }
  [ "$(awk '{ print $3 }' <<<"$summary")" -gt 0 ] || { fail "no 429 at all: the limits did not bite"; rc=1; }
  kc get csr -o name | grep -q . && kc delete csr --all >/dev/null 2>&1
  return $rc
}
