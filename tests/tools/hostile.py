#!/usr/bin/env python3
"""hostile.py PORT_FILE DIR

An HTTPS API server on 127.0.0.1 that answers as the test tells it to, to
play a hostile or intercepted control plane. DIR/config.json is read again
for every request:

  certs       [[crt, key], ...]: connection N presents certs[min(N, last)],
              N counted from 0 again whenever config.json is rewritten
              (an interceptor that shows the real certificate first)
  close       true: every connection is closed after one answer; "first":
              only connection 0 (the verified request needs a new handshake)
  routes      {"METHOD /path": {"status": 200, "file": PATH}} (exact path,
              query ignored; a route "METHOD /path?query" for that query
              exactly is tried first); anything else is 404
  csr         CertificateSigningRequests: a POST is kept (DIR/csr.pem) and
              answered 201; a GET of it answers it issued by ca/ca_key with
              "subject" (openssl -subj form; default the CSR's), then
              "append" (text after the PEM: a key, escape bytes)

Each request is logged to DIR/requests.log as "N METHOD PATH" (N the
connection), and each POST's body to DIR/bodies.log (a line each). Writes the port it listens on to PORT_FILE, then serves until
killed."""
import base64
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile

port_file, top = sys.argv[1:3]
CSR_PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def config():
    with open(os.path.join(top, "config.json")) as f:
        return json.load(f)


def issue(cfg):
    """The certificate for DIR/csr.pem, as the test's CA would sign it."""
    with tempfile.TemporaryDirectory() as tmp:
        ext = os.path.join(tmp, "ext")
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                    "extendedKeyUsage=clientAuth\n")
        cmd = ["openssl", "x509", "-req", "-in", os.path.join(top, "csr.pem"), "-CA", cfg["ca"],
               "-CAkey", cfg["ca_key"], "-CAcreateserial", "-CAserial", os.path.join(tmp, "srl"),
               "-days", "2", "-extfile", ext]
        if cfg.get("subject"):
            cmd += ["-subj", cfg["subject"]]
        pem = subprocess.run(cmd, check=True, capture_output=True).stdout
    return pem + cfg.get("append", "").encode("latin-1")


def answer(cfg, method, path, body, query=""):
    routes = cfg.get("routes", {})
    route = routes.get("%s %s?%s" % (method, path, query)) or routes.get("%s %s" % (method, path))
    if route:
        data = b""
        if route.get("file"):
            with open(route["file"], "rb") as f:
                data = f.read()
        return route.get("status", 200), data
    csr = cfg.get("csr")
    if csr and method == "POST" and path == CSR_PATH:
        obj = json.loads(body)
        with open(os.path.join(top, "csr.pem"), "wb") as f:
            f.write(base64.b64decode(obj["spec"]["request"]))
        obj["status"] = {}
        return 201, json.dumps(obj).encode()
    if csr and method == "GET" and path.startswith(CSR_PATH + "/"):
        name = path[len(CSR_PATH) + 1:]
        with open(os.path.join(top, "csr.pem"), "rb") as f:
            request = base64.b64encode(f.read()).decode()
        obj = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
               "metadata": {"name": name}, "spec": {"request": request},
               "status": {"conditions": [{"type": "Approved", "status": "True", "reason": "Test"}],
                          "certificate": base64.b64encode(issue(csr)).decode()}}
        return 200, json.dumps(obj).encode()
    return 404, b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}'


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise EOFError
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target = lines[0].split(" ")[:2]
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            raise EOFError
        rest += chunk
    return method, target.partition("?")[0], target.partition("?")[2], rest[:length]


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % listener.getsockname()[1])
os.rename(port_file + ".tmp", port_file)

served, seen = 0, None
while True:
    raw, _ = listener.accept()
    try:
        stamp = os.stat(os.path.join(top, "config.json")).st_mtime_ns
        if stamp != seen:
            served, seen = 0, stamp
    except OSError:
        pass
    n = served
    served += 1
    try:
        cfg = config()
        crt, key = cfg["certs"][min(n, len(cfg["certs"]) - 1)]
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        conn = ctx.wrap_socket(raw, server_side=True)
        conn.settimeout(10)
        while True:
            method, path, query, body = read_request(conn)
            cfg = config()
            with open(os.path.join(top, "requests.log"), "a") as log:
                log.write("%d %s %s\n" % (n, method, path))
            if method == "POST":
                with open(os.path.join(top, "bodies.log"), "ab") as log:
                    log.write(body.replace(b"\n", b" ") + b"\n")
            status, data = answer(cfg, method, path, body, query)
            close = cfg.get("close", False)
            close = close is True or (close == "first" and n == 0)
            head = "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n" % (
                status, len(data), "Connection: close\r\n" if close else "")
            conn.sendall(head.encode() + data)
            if close:
                break
        conn.close()
    except (OSError, EOFError, ssl.SSLError, ValueError, KeyError, subprocess.CalledProcessError) as e:
        sys.stderr.write("hostile: connection %d: %r\n" % (n, e))
        raw.close()
