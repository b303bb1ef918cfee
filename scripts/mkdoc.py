#!/usr/bin/env python3
"""mkdoc.py KJOIN man|bash|zsh OUT: man pages and shell completion, generated
from the binary's own --help, which the option tables that drive parsing
print: the docs cannot drift from the flags."""
import os
import re
import subprocess
import sys

KJOIN, WHAT, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
VERSION = subprocess.run([KJOIN, "version"], capture_output=True, text=True).stdout.split()[1]  # "kjoin 0.1.0 (...)"

# Values of flags that take one of a fixed set, for completion.
FIXED = {
    "--output": ["text", "json"],
    "-o": ["text", "json"],
    "--key-type": ["ecdsa-p256", "rsa2048", "rsa3072", "rsa4096", "ed25519"],
    "--flavor": ["kubeadm", "k3s"],
    "--layout": ["k3s", "kubeadm"],
    "--usages": ["signing,authentication", "signing", "authentication"],
}


def join_phases():
    """kubeadm's join phases as `kjoin join phase --help` lists them (the
    library's one phase table): [(name, help)]."""
    text = subprocess.run([KJOIN, "join", "phase", "--help"], capture_output=True, text=True).stdout
    return [m.groups() for m in (re.match(r"  (\S+)\s{2,}(.*)", line) for line in text.splitlines()) if m]


FIXED["--skip-phases"] = [name for name, _ in join_phases()]
EXIT = [
    ("0", "success, or nothing to do"),
    ("1", "any other failure"),
    ("2", "usage or bad input (flags, tokens, pins, files, configuration), a failed preflight check"),
    ("3", "a deadline passed (discovery, a CSR without a certificate, a kubelet that did not bootstrap)"),
    ("4", "trust verification failed (signature, pin, TLS, malformed data, a denied CSR)"),
    ("5", "an output cannot be written, or would replace a different file"),
    ("6", "the Kubernetes API refused a request"),
    ("7", "a control-plane join failed after its first write and took back what it wrote"),
    ("8", "the API server rejects the bootstrap token (expired, deleted or never created)"),
    ("10", "certs rotate, tls-bootstrap --rotate, refresh: something was renewed; sync: files written (not an error)"),
    ("11", "sync --check: the node's kubelet configuration differs from the cluster's (not an error)"),
]
# The environment each verb reads (besides the flags), for the man pages' ENVIRONMENT.
PROXY = [("https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY", "the proxy requests to the cluster go through (never "
          "this machine's own addresses); named in errors"),
         ("NO_PROXY, no_proxy", "the hosts that skip it: *, a host, a domain, an IP address")]
ENVIRONMENT = {
    "join": [("KJOIN_TOKEN", "the bootstrap token, when no token flag is given (wiped from the environment once read)"),
             ("KJOIN_CERTIFICATE_KEY", "the certificate key of a control-plane join, when no flag names one (wiped once read)"),
             ("K3S_TOKEN, K3S_TOKEN_FILE, K3S_URL", "a K3s join, as the K3s agent reads them")] + PROXY,
    "token": [("KUBECONFIG", "the admin kubeconfig when --kubeconfig is not given")] + PROXY,
    "reports": [("KUBECONFIG", "the admin kubeconfig when --kubeconfig is not given")] + PROXY,
    "tls-bootstrap": PROXY,
    "refresh": PROXY,
    "sync": PROXY,
    "certs": [("KUBECONFIG", "the kubeconfig of --store secrets when --kubeconfig is not given"),
              ("KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT", "in a Pod: the in-cluster API server")],
}
EXAMPLES = {
    "join": ["kjoin join 10.0.0.10:6443 --token-file /run/secrets/token --discovery-token-ca-cert-hash sha256:<hex>",
             "kjoin join --config /etc/kjoin/join.yaml",
             "kjoin join cp.example:6443 --token-file t --discovery-token-ca-cert-hash sha256:<hex> --control-plane "
             "--certificate-key-file key --apiserver-advertise-address 10.0.0.12",
             "kjoin join phase preflight 10.0.0.10:6443 --token-file t --discovery-token-ca-cert-hash sha256:<hex>"],
    "reset": ["kjoin reset --dry-run", "kjoin reset", "kjoin reset phase remove-etcd-member"],
    "token": ["kjoin token create --print-join-command", "kjoin token list", "kjoin token delete abcdef"],
    "reports": ["kjoin reports", "kjoin reports --node worker-7 -o json", "kjoin reports --watch"],
    "sync": ["kjoin sync --check", "kjoin sync --restart", "systemctl enable --now kjoin-sync-check.timer",
             "kubectl get nodes -L kjoin.io/kubelet-config -L kjoin.io/kubelet-config-hash"],
}
FILES = {
    "join": ["/etc/kubernetes/bootstrap-kubelet.conf", "the TLS-bootstrap kubeconfig (mode 0600; removed once the kubelet has its identity)",
             "/etc/kubernetes/pki/ca.crt", "the cluster CA (mode 0644)",
             "/var/lib/kubelet/config.yaml", "the cluster's kubelet configuration (mode 0644)",
             "/var/lib/kubelet/kubeadm-flags.env", "the node's kubelet flags, KUBELET_KUBEADM_ARGS (mode 0644)",
             "/etc/kubernetes/kjoin-join.json", "what the join wrote, for kjoin reset (mode 0600)"],
    "reset": ["/etc/kubernetes/kjoin-join.json", "the join record it undoes"],
    "tls-bootstrap": ["/etc/kubernetes/kubelet.conf", "the node's kubeconfig (mode 0600)",
                      "/var/lib/kubelet/pki/kubelet-client-current.pem", "the current client certificate and key",
                      "/etc/kubernetes/pki/ca.crt", "the cluster CA (mode 0644)"],
    "refresh": ["/etc/kubernetes/kubelet.conf", "the kubeconfig whose CA data is refreshed"],
    "sync": ["/etc/kubernetes/kjoin-join.json", "the join record: the node, the join's patches and kubelet flags; what sync wrote",
             "/var/lib/kubelet/config.yaml", "the kubelet configuration it keeps (with instance-config.yaml and kubeadm-flags.env)",
             "/etc/kubernetes/kubelet.conf", "the node's credentials: it reads the cluster's configuration and labels its Node",
             "/lib/systemd/system/kjoin-sync-check.timer", "an hourly kjoin sync --check, installed and not enabled"],
    "token": ["/etc/kubernetes/admin.conf", "admin credentials, unless --kubeconfig or KUBECONFIG"],
    "reports": ["/etc/kubernetes/admin.conf", "admin credentials, unless --kubeconfig or KUBECONFIG"],
    "certs": ["DIR/kjoin-certs.json", "the state file", "DIR/..data", "the current generation (symlink)"],
}


def run_help(words):
    r = subprocess.run([KJOIN] + words + ["--help"], capture_output=True, text=True)
    return r.stdout


def parse(text):
    """usage, summary paragraphs, flags [(short, long, metavar, help)], commands [(name, help)]."""
    usage, summary, flags, commands, part = "", [], [], [], "top"
    pending = None  # a flag too wide for the column: its help is on the next line
    for line in text.splitlines():
        if line.startswith("Usage: "):
            usage = line[len("Usage: "):]
            part = "summary"
        elif line == "Flags:":
            part = "flags"
        elif line == "Commands:":
            part = "commands"
        elif line.startswith("Run '"):
            part = "end"
        elif part == "summary" and line:
            summary.append(line)
        elif part == "flags" and line.strip():
            m = re.match(r"\s+(?:-(\w), )?--([\w-]+)(?: (\S+))?\s{2,}(.*)", line)
            alone = re.match(r"\s+(?:-(\w), )?--([\w-]+)(?: (\S+))?$", line)
            if pending and not m and not alone:
                flags.append(pending + (line.strip(),))
                pending = None
            elif alone:
                pending = alone.groups()
            elif m:
                flags.append(m.groups())
        elif part == "commands" and line.strip():
            m = re.match(r"\s+(\S+(?: (?:node|client))?)\s{2,}(.*)", line)
            if m:
                commands.append(m.groups())
    return usage, " ".join(summary), flags, commands


def esc(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return ("\\&" + s) if s[:1] in ".'" else s


def first_sentence(s):
    m = re.match(r"(.+?\.)(\s|$)", s)
    return (m.group(1) if m else s).rstrip(".")


def verbs():
    return [c for c, _ in parse(run_help([]))[3] if c != "version"]


def man_flags(out, flags):
    out.append(".SH OPTIONS")
    for short, long, meta, help_ in flags:
        head = ("\\fB\\-%s\\fR, " % short if short else "") + "\\fB\\-\\-%s\\fR" % esc(long)
        if meta:
            head += " \\fI%s\\fR" % esc(meta)
        out += [".TP", head, esc(help_)]


def man_page(name, section_title, usage, summary, flags, subs, files):
    out = ['.TH %s 1 "" "kjoin %s" "kjoin manual"' % (name.upper(), VERSION), ".SH NAME",
           "%s \\- %s" % (esc(name), esc(first_sentence(summary) or section_title)), ".SH SYNOPSIS",
           ".nf", esc(usage), ".fi", ".SH DESCRIPTION", esc(summary)]
    if flags:
        man_flags(out, flags)
    if name == "kjoin-join":
        out.append(".SH PHASES")
        out += [".PP", "kubeadm's join phases, in the order a join runs them: the names "
                "\\fB\\-\\-skip\\-phases\\fR and \\fBkjoin join phase\\fR take."]
        for phase, help_ in join_phases():
            out += [".TP", "\\fB%s\\fR" % esc(phase), esc(help_)]
    for sub, (susage, ssummary, sflags) in subs:
        out += [".SH %s" % esc(sub.upper()), ".nf", esc(susage), ".fi", ".PP", esc(ssummary)]
        for short, long, meta, help_ in sflags:
            head = ("\\fB\\-%s\\fR, " % short if short else "") + "\\fB\\-\\-%s\\fR" % esc(long)
            if meta:
                head += " \\fI%s\\fR" % esc(meta)
            out += [".TP", head, esc(help_)]
    out.append(".SH EXIT STATUS")
    for code, what in EXIT:
        out += [".TP", "\\fB%s\\fR" % code, esc(what)]
    env = ENVIRONMENT.get(name[len("kjoin-"):], [])
    if env:
        out.append(".SH ENVIRONMENT")
        for var, what in env:
            out += [".TP", "\\fB%s\\fR" % esc(var), esc(what)]
    examples = EXAMPLES.get(name[len("kjoin-"):], [])
    if examples:
        out.append(".SH EXAMPLES")
        for ex in examples:
            out += [".PP", ".nf", esc(ex), ".fi"]
    if files:
        out.append(".SH FILES")
        for i in range(0, len(files), 2):
            out += [".TP", "\\fI%s\\fR" % esc(files[i]), esc(files[i + 1])]
    out += [".SH SEE ALSO", "\\fBkjoin\\fR(1), \\fBkubeadm\\fR(1); the documentation in /usr/share/doc/kjoin"]
    return "\n".join(out) + "\n"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def man():
    os.makedirs(OUT, exist_ok=True)
    usage, _, _, commands = parse(run_help([]))
    top = ['.TH KJOIN 1 "" "kjoin %s" "kjoin manual"' % VERSION, ".SH NAME",
           "kjoin \\- join a Kubernetes node: discovery, trust and the node's identity", ".SH SYNOPSIS",
           "\\fBkjoin\\fR \\fICOMMAND\\fR [\\fIflags\\fR]", ".SH DESCRIPTION",
           "kjoin finds a cluster from an API server endpoint, a bootstrap token and a CA pin (or a "
           "discovery file), establishes trust and writes the kubeconfig kubelet and kubectl use; it also "
           "runs the TLS bootstrap, follows CA rotations and manages certificates.", ".SH COMMANDS"]
    for name, help_ in commands:
        ref = "\\fBkjoin\\-%s\\fR(1)" % esc(name) if name != "version" else "print the version"
        top += [".TP", "\\fB%s\\fR" % esc(name), esc(help_).rstrip(".") + (". See %s." % ref if name != "version" else "")]
    top.append(".SH EXIT STATUS")
    for code, what in EXIT:
        top += [".TP", "\\fB%s\\fR" % code, esc(what)]
    top += [".SH SEE ALSO", ", ".join("\\fBkjoin\\-%s\\fR(1)" % esc(v) for v in verbs())]
    write(os.path.join(OUT, "kjoin.1"), "\n".join(top) + "\n")
    for verb in verbs():
        usage, summary, flags, subs = parse(run_help([verb]))
        details = []
        for sub, _ in subs:
            su, ss, sf, _ = parse(run_help([verb] + sub.split()))
            details.append((sub, (su, ss, sf)))
        write(os.path.join(OUT, "kjoin-%s.1" % verb),
              man_page("kjoin-" + verb, verb, usage, summary, flags, details, FILES.get(verb)))


def tree():
    """{command path: (flags with metavars, subcommands)}"""
    t = {"": ([], verbs() + ["version"])}
    for verb in verbs():
        _, _, flags, subs = parse(run_help([verb]))
        t[verb] = (flags, [s for s, _ in subs])
        for sub, _ in subs:
            t[verb + " " + sub] = (parse(run_help([verb] + sub.split()))[2], [])
    return t


def bash():
    t = tree()
    out = ["# bash completion for kjoin, generated from its --help by scripts/mkdoc.py", "_kjoin() {",
           "  local cur prev path w i", "  cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path=",
           "  for ((i = 1; i < COMP_CWORD; i++)); do",
           "    w=${COMP_WORDS[i]}; [[ $w == -* ]] && continue",
           "    case \"${path:+$path }$w\" in"]
    paths = sorted({p for p in t if p} | {" ".join(p.split()[:2]) for p in t if len(p.split()) == 3})
    out.append("      " + "|".join("'%s'" % p for p in paths) + ") path=${path:+$path }$w ;;")
    out += ["    esac", "  done", "  case $prev in"]
    for opt, values in FIXED.items():
        out.append("    %s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;" % (opt, " ".join(values)))
    file_flags, dir_flags = set(), set()
    for flags, _ in t.values():
        for short, long, meta, _ in flags:
            if meta in ("FILE", "SOURCE"):
                file_flags.add("--" + long)
            elif meta == "DIR":
                dir_flags.add("--" + long)
    if file_flags:
        out.append("    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;" % "|".join(sorted(file_flags)))
    if dir_flags:
        out.append("    %s) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;" % "|".join(sorted(dir_flags)))
    # Any other flag that takes a value: the value is the user's to type, never a flag.
    valued = set()
    for flags, _ in t.values():
        for short, long, meta, _ in flags:
            if meta and "--" + long not in FIXED and "--" + long not in file_flags | dir_flags:
                valued.add("--" + long)
                if short and "-" + short not in FIXED:
                    valued.add("-" + short)
    if valued:
        out.append("    %s) COMPREPLY=(); return ;;" % "|".join(sorted(valued)))
    out += ["  esac", "  case $path in"]
    for p, (flags, subs) in sorted(t.items()):
        words = [s.split()[-1] if p else s for s in subs] + ["--%s" % f[1] for f in flags]
        if p and not subs:
            words.append("--help")
        nested = sorted({s.split()[0] for s in subs})
        if p == "certs":
            words = nested + ["--help"]
        out.append("    '%s') COMPREPLY=($(compgen -W '%s' -- \"$cur\")) ;;" % (p, " ".join(words)))
    for two in sorted({" ".join(p.split()[:2]) for p in t if len(p.split()) == 3}):
        thirds = sorted(p.split()[2] for p in t if p.startswith(two + " "))
        out.append("    '%s') COMPREPLY=($(compgen -W '%s' -- \"$cur\")) ;;" % (two, " ".join(thirds)))
    out += ["  esac", "}",
            "complete -F _kjoin kjoin"]
    write(OUT, "\n".join(out) + "\n")


def zsh():
    write(OUT, "#compdef kjoin\n# zsh completion for kjoin: the bash completion through bashcompinit.\n"
               "autoload -U +X bashcompinit && bashcompinit\n"
               "source ${0:h}/../../bash-completion/completions/kjoin 2>/dev/null ||\n"
               "  source /usr/share/bash-completion/completions/kjoin\n")


{"man": man, "bash": bash, "zsh": zsh}[WHAT]()
