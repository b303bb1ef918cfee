#!/usr/bin/env python3
"""certflip.py PORT_FILE BODY FIRST_CERT FIRST_KEY LATER_CERT LATER_KEY

An HTTPS server on 127.0.0.1 for the kept-connection tests: the first TLS
connection presents FIRST_CERT and is closed after one response; every later
connection presents LATER_CERT. Each answer is BODY (any path). Writes the
port it listens on to PORT_FILE, then serves until killed."""
import os
import socket
import ssl
import sys

port_file, body_path, first_cert, first_key, later_cert, later_key = sys.argv[1:7]


def context(cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


contexts = [context(first_cert, first_key), context(later_cert, later_key)]
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % listener.getsockname()[1])
os.rename(port_file + ".tmp", port_file)

served = 0
while True:
    raw, _ = listener.accept()
    ctx = contexts[0 if served == 0 else 1]
    served += 1
    try:
        conn = ctx.wrap_socket(raw, server_side=True)
        conn.settimeout(5)
        while True:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    raise EOFError
                request += chunk
            with open(body_path, "rb") as f:
                body = f.read()
            close = served == 1
            head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n" % (
                len(body), "Connection: close\r\n" if close else "")
            conn.sendall(head.encode() + body)
            if close:
                break
        conn.close()
    except (OSError, EOFError, ssl.SSLError):
        raw.close()
