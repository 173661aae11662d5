#!/usr/bin/env python3
"""A first load measurement for a running Logbook worker (until `logbook bench` exists).

Drives CLIENTS concurrent DEALER sockets, each keeping WINDOW commands in flight, with a
mix of RegisterUser, AddProduct, PurchaseProduct and CreatePost, and prints commands/s and
reply latency percentiles as one JSON line. Needs pyzmq (`pip install pyzmq`).

    scripts/load.py --clients 8 --commands 20000 [--commands-endpoint tcp://127.0.0.1:5555]
"""
import argparse
import json
import multiprocessing
import time
import uuid

import zmq


def commands_for(client, count, run):
    """The client's commands: per user, one registration, one product, purchases, a post."""
    prefix = f"{run}-c{client}"
    items = []
    index = 0
    while len(items) < count:
        user, product = f"{prefix}-u{index}", f"{prefix}-p{index}"
        items.append(("RegisterUser", {"userId": user, "name": "Load", "email": f"{user}@example.com"}))
        items.append(("AddProduct", {"productId": product, "name": "Load tea", "price": "1.25",
                                     "category": "food", "stock": 1000}))
        for purchase in range(2):
            items.append(("PurchaseProduct", {"orderId": f"{product}-o{purchase}", "userId": user,
                                              "productId": product, "quantity": 1}))
        items.append(("CreatePost", {"postId": f"{prefix}-post{index}", "authorId": user,
                                     "title": "Load", "content": "A post written by the load script."}))
        index += 1
    return items[:count]


def run_client(endpoint, items, window, results, start):
    """One client process (so clients do not share a Python interpreter lock)."""
    latencies, failures = [], []
    context = zmq.Context()
    socket = context.socket(zmq.DEALER)
    socket.connect(endpoint)
    start.wait()
    sent_at = {}
    next_item = 0
    while next_item < len(items) or sent_at:
        while next_item < len(items) and len(sent_at) < window:
            kind, data = items[next_item]
            request_id = f"{uuid.uuid4()}"
            sent_at[request_id] = time.perf_counter()
            socket.send_multipart([b"", json.dumps({"id": request_id, "type": kind, "data": data}).encode()])
            next_item += 1
        _, body = socket.recv_multipart()
        reply = json.loads(body)
        latencies.append(time.perf_counter() - sent_at.pop(reply["id"]))
        if not reply["ok"]:
            failures.append(reply["error"]["code"])
    socket.close()
    results.put((latencies, failures))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--commands", type=int, default=20000, help="in all, shared among the clients")
    parser.add_argument("--window", type=int, default=16, help="commands in flight per client")
    parser.add_argument("--commands-endpoint", default="tcp://127.0.0.1:5555")
    options = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    per_client = options.commands // options.clients
    results, start = multiprocessing.Queue(), multiprocessing.Event()
    clients = [multiprocessing.Process(target=run_client, args=(options.commands_endpoint,
                                                                commands_for(client, per_client, run),
                                                                options.window, results, start))
               for client in range(options.clients)]
    for client in clients:
        client.start()
    time.sleep(0.5)  # let every client connect before the clock starts
    started = time.perf_counter()
    start.set()
    latencies, failures = [], []
    for _ in clients:
        client_latencies, client_failures = results.get()
        latencies += client_latencies
        failures += client_failures
    elapsed = time.perf_counter() - started
    for client in clients:
        client.join()
    latencies.sort()

    def percentile(p):
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000, 2)

    print(json.dumps({
        "clients": options.clients, "window": options.window, "commands": len(latencies),
        "seconds": round(elapsed, 2), "commandsPerSecond": round(len(latencies) / elapsed),
        "latencyMs": {"p50": percentile(0.50), "p99": percentile(0.99), "max": percentile(1.0)},
        "refused": len(failures), "refusalCodes": sorted(set(failures)),
    }))


if __name__ == "__main__":
    main()
