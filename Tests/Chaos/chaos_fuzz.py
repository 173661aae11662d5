"""The fuzz pass of the chaos suite: random and mutated frames on every socket a process binds
(the commands, queries and log ROUTERs from DEALERs, with and without the empty delimiter;
random subscriptions on the feed PUB; raw bytes on every port, which are not even ZMTP).
"""

import json
import random
import socket as tcp

import zmq

TYPES = ["AddProduct", "RegisterUser", "ReadLog", "Status", "Rebuild", "GetProduct", "ListProducts", "", "x" * 300,
         None, 7, [], {}]
FIELDS = ["id", "type", "data", "from", "limit", "topics", "minPosition", "timeoutMs", "expectedVersion", "metadata",
          "productId", "userId", "quantity", "price", "stock", "category", "", "\u0000", "é" * 40]


def random_value(rng: random.Random, depth: int = 0):
    choice = rng.randrange(9 if depth < 3 else 6)
    if choice == 0:
        return rng.choice([0, -1, 1, 2**31, 2**63 - 1, -(2**63), 10_001, 1.5, 1e308])
    if choice == 1:
        return "".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(0, 40)))
    if choice == 2:
        return rng.choice([True, False, None])
    if choice == 3:
        return rng.choice(["users", "posts", "products", "orders", "electronics", "1.50", "p1", ""])
    if choice == 4:
        return "x" * rng.choice([0, 1, 64, 65, 5000])
    if choice == 5:
        return rng.choice(TYPES)
    if choice == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {rng.choice(FIELDS): random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}


def random_request(rng: random.Random) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:
        return rng.randbytes(rng.randrange(0, 600))
    document = {"id": f"fuzz-{rng.randrange(10**9)}", "type": rng.choice(TYPES)}
    for _ in range(rng.randrange(0, 5)):
        document[rng.choice(FIELDS)] = random_value(rng)
    text = json.dumps(document)
    if kind == 1 and text:  # a cut or a flipped byte in otherwise good JSON
        cut = rng.randrange(len(text))
        text = text[:cut] + rng.choice(["", "\"", "}", "\\", "\udfff"[:0], "{"]) + text[cut + 1:]
    return text.encode("utf-8", "surrogatepass")


def fuzz_router(context: zmq.Context, endpoint: str, rng: random.Random, messages: int) -> int:
    """Sends `messages` random messages to a ROUTER; returns how many frames went."""
    frames_sent = 0
    socket = context.socket(zmq.DEALER)
    socket.linger = 0
    socket.sndhwm = 0
    socket.connect(endpoint)
    try:
        for _ in range(messages):
            shape = rng.randrange(6)
            body = random_request(rng)
            if shape == 0:
                frames = [body]  # no delimiter
            elif shape == 1:
                frames = [b"", body, random_request(rng)]  # two bodies
            elif shape == 2:
                frames = [b"", b"", body]
            elif shape == 3:
                frames = [b""]
            else:
                frames = [b"", body]
            socket.send_multipart(frames)
            frames_sent += len(frames)
            while socket.poll(0):
                socket.recv_multipart()
        # Whatever the server answers, it must answer without falling over: read for a moment.
        while socket.poll(200):
            socket.recv_multipart()
    finally:
        socket.close()
    return frames_sent


def fuzz_feed(context: zmq.Context, endpoint: str, rng: random.Random, messages: int) -> int:
    """Random subscriptions and cancellations on the feed: the frames a SUB sends a PUB."""
    socket = context.socket(zmq.XSUB)
    socket.linger = 0
    socket.connect(endpoint)
    try:
        for _ in range(messages):
            prefix = rng.randbytes(rng.randrange(0, 40))
            socket.send(bytes([rng.choice([0, 1, 2, 255])]) + prefix)
        while socket.poll(100):
            socket.recv_multipart()
    finally:
        socket.close()
    return messages


def fuzz_raw(endpoint: str, rng: random.Random, connections: int) -> int:
    """Raw bytes on a port: a bad greeting, a truncated one, garbage; returns how many chunks went."""
    host, port = endpoint.removeprefix("tcp://").split(":")
    chunks = 0
    greeting = b"\xff" + b"\x00" * 8 + b"\x7f\x03\x00NULL" + b"\x00" * 16 + b"\x00" + b"\x00" * 31
    for _ in range(connections):
        with tcp.create_connection((host, int(port)), timeout=2) as connection:
            try:
                payload = rng.choice([rng.randbytes(rng.randrange(1, 4000)), greeting[: rng.randrange(1, 64)],
                                      greeting + rng.randbytes(rng.randrange(1, 400))])
                connection.sendall(payload)
                chunks += 1
            except OSError:
                pass  # the server may close on the first bad byte
    return chunks
