"""A container runtime's CRI socket as kjoin's preflight sees it: gRPC over
HTTP/2 with prior knowledge on a unix socket, answering every request at once
in the way MODE says (frames written by hand: no HTTP/2 library needed).

usage: fake_cri.py SOCKET MODE LOG
MODE: unimplemented (grpc-status 12, as a runtime without the method),
implemented (2 "EOF": a runtime with it refuses the missing message),
hostile (12, with a long message holding a token),
no-status (200 and no grpc-status), bad-status (grpc-status "99999"),
http1 (an HTTP/1.1 answer), silent (accepts, never answers).
Each connection is one line in LOG."""
import os
import socket
import sys
import threading

path, mode, log = sys.argv[1], sys.argv[2], sys.argv[3]


def hpack_int(value, prefix_bits, first):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def literal(name, value):
    """A literal header field without indexing, a new name (RFC 7541 6.2.2)."""
    name, value = name.encode(), value.encode()
    return b"\x00" + hpack_int(len(name), 7, 0) + name + hpack_int(len(value), 7, 0) + value


def frame(kind, flags, stream, payload):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def answer(stream):
    block = b"\x88" + literal("content-type", "application/grpc")  # :status 200
    if mode == "unimplemented":
        block += literal("grpc-status", "12") + literal("grpc-message", "unknown method RuntimeConfig for service runtime.v1.RuntimeService")
    elif mode == "implemented":
        block += literal("grpc-status", "2") + literal("grpc-message", "EOF")
    elif mode == "hostile":
        block += literal("grpc-status", "12") + literal("grpc-message", "abcdef.0123456789abcdef " + "x" * 3000)
    elif mode == "bad-status":
        block += literal("grpc-status", "99999")
    return frame(1, 0x5, stream, block)  # HEADERS, END_STREAM | END_HEADERS


def serve(conn):
    with open(log, "a") as f:
        f.write("connection\n")
    try:
        if mode == "silent":
            conn.recv(65536)
            threading.Event().wait(30)
            return
        if mode == "http1":
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            return
        data = b""
        conn.sendall(frame(4, 0, 0, b""))  # our SETTINGS
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
            if data.startswith(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"):
                data = data[24:]
            while len(data) >= 9:
                length = int.from_bytes(data[0:3], "big")
                if len(data) < 9 + length:
                    break
                kind, flags = data[3], data[4]
                stream = int.from_bytes(data[5:9], "big") & 0x7FFFFFFF
                data = data[9 + length:]
                if kind == 4 and not flags & 1:
                    conn.sendall(frame(4, 1, 0, b""))  # SETTINGS ACK
                elif kind == 1:
                    conn.sendall(answer(stream))
    except OSError:
        pass
    finally:
        conn.close()


if os.path.exists(path):
    os.unlink(path)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(8)
while True:
    c, _ = server.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
