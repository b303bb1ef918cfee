#!/usr/bin/env python3
"""podcmp.py OURS THEIRS [env-any-order]: two static Pod manifests compared
as the kubelet reads them (parsed; status and creationTimestamp, which only
a serializer adds, left out). With env-any-order the containers' env lists
are compared as sets: kubeadm 1.28 to 1.31 wrote them in Go's map order.
Exit 0 when equal, else 1 with a unified diff of the two (JSON, keys sorted)."""
import difflib
import json
import sys

import yaml


def load(path, any_order):
    with open(path) as f:
        pod = yaml.safe_load(f)
    pod.pop("status", None)
    pod.get("metadata", {}).pop("creationTimestamp", None)
    for c in pod.get("spec", {}).get("containers", []):
        if any_order and "env" in c:
            c["env"] = sorted(c["env"], key=lambda e: e["name"])
    return json.dumps(pod, sort_keys=True, indent=1).splitlines()


def main():
    any_order = len(sys.argv) > 3 and sys.argv[3] == "env-any-order"
    ours, theirs = load(sys.argv[1], any_order), load(sys.argv[2], any_order)
    if ours != theirs:
        print("\n".join(difflib.unified_diff(ours, theirs, "kjoin", "kubeadm", lineterm="", n=2)))
        sys.exit(1)


main()
