#!/usr/bin/env python3
"""An HTTP proxy with nothing behind it, for a node whose only way out it is:
every CONNECT (or absolute-URI request) is written to LOG as "HOST:PORT"
and answered 502 (no route beyond). Usage:

    connect_proxy.py LISTEN_HOST LISTEN_PORT LOG

Writes "ready" to stdout once it listens; runs until killed."""
import sys
import threading
import urllib.parse

import accept_loop


def serve(conn, log, lock):
    try:
        conn.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split()
        if len(parts) >= 2:
            method, target = parts[0], parts[1]
            if method != "CONNECT":
                u = urllib.parse.urlsplit(target)
                target = "%s:%s" % (u.hostname, u.port or (443 if u.scheme == "https" else 80))
            with lock, open(log, "a") as f:
                f.write(target + "\n")
        conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    except OSError:
        pass
    finally:
        conn.close()


def main():
    host, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lock = threading.Lock()
    accept_loop.serve_forever(host, port, serve, log, lock)


if __name__ == "__main__":
    main()
