"""The one accept loop of the suite's small TCP servers (tcp_forward.py,
connect_proxy.py): listen on HOST:PORT, say "ready" on stdout, and serve
each connection on a thread of its own, until killed."""
import socket
import threading


def serve_forever(host, port, handle, *args):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    lsock = socket.socket(family, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((host, port))
    lsock.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=handle, args=(conn,) + args, daemon=True).start()
