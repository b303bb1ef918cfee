#!/usr/bin/env python3
"""A per-node load balancer as kubespray's localhost proxy is one: TCP passed
through to one upstream, TLS untouched. Usage:

    tcp_forward.py LISTEN_HOST LISTEN_PORT UPSTREAM_HOST:PORT COUNT_FILE

Each accepted connection adds a line to COUNT_FILE (so a test sees the
traffic went this way). Listens before it writes "ready" to stdout; runs
until killed."""
import socket
import sys
import threading

import accept_loop


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(conn, upstream, count_file, lock):
    try:
        up = socket.create_connection(upstream, timeout=10)
        up.settimeout(None)
    except OSError:
        conn.close()
        return
    with lock, open(count_file, "a") as f:
        f.write("connection\n")
    threading.Thread(target=pump, args=(conn, up), daemon=True).start()
    pump(up, conn)


def main():
    host, port, upstream, count_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    up_host, up_port = upstream.rsplit(":", 1)
    lock = threading.Lock()
    accept_loop.serve_forever(host, port, serve, (up_host.strip("[]"), int(up_port)), count_file, lock)


if __name__ == "__main__":
    main()
