#!/usr/bin/env python3
"""Logbook from Python, in three steps: commands, the products feed, a view rebuilt from the log.

Start the service first (`logbook up`), then run `python3 demo.py`; README.md beside this
file says what it prints. Every id it creates ends in a random run id, so it can run again
and again against the same service.
"""

import argparse
import json
import os
import secrets
import sys
import time

import zmq

import logbook

FEED_WAIT_SECONDS = 15  # how long the feed may take to deliver our own commands' events


def main() -> int:
    args = parse_arguments()
    context = zmq.Context()
    try:
        run(args, context)
    except (logbook.Refused, logbook.NoReply) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        context.destroy(linger=0)
    return 0


def run(args: argparse.Namespace, context: zmq.Context) -> None:
    say(f"Logbook from Python (commands {args.commands}, feed {args.feed}, log {args.log}, queries {args.queries})")
    # With CURVE on, every socket uses this client's key (an admin's: the demo does everything).
    curve = logbook.CurveKeys(args.curve_key, args.server_key) if args.curve_key else None
    if curve:
        say("  CURVE on")
    commands = logbook.RequestClient(context, args.commands, args.timeout_ms, note=indented("retry"), curve=curve)
    log = logbook.RequestClient(context, args.log, args.timeout_ms, note=indented("retry"), curve=curve)
    queries = logbook.RequestClient(context, args.queries, args.timeout_ms, note=indented("retry"), curve=curve)

    # Subscribe before sending anything, so our own events can arrive over the live feed.
    # The first poll reads the log from position 1: the feed never repeats the past.
    say("\nFollowing the products feed from position 1:")
    follower = logbook.FeedFollower(context, args.feed, log, ["products"], note=indented("log read"), curve=curve)
    print_events(follower.poll(0))

    # 1. Commands. Each has an id of ours: sent again after a timeout (by RequestClient) or
    # on purpose (below), the server answers with the first outcome and appends nothing.
    say("\nCommands:")
    suffix = args.run_id or secrets.token_hex(3)
    user, product, order = f"u-{suffix}", f"p-{suffix}", f"o-{suffix}"
    reply = logbook.send_command(
        commands, "RegisterUser", {"userId": user, "name": "Ann", "email": f"ann-{suffix}@example.com"}
    )
    say(f"  RegisterUser {user}: position {reply['position']}")
    product_data = {"productId": product, "name": "Green tea", "price": "2.50", "category": "food", "stock": 5}
    reply = logbook.send_command(commands, "AddProduct", product_data)
    say(f"  AddProduct {product} (Green tea, 2.50, food, stock 5): position {reply['position']}")

    purchase_id = logbook.new_id()
    purchase = {"orderId": order, "userId": user, "productId": product, "quantity": 2}
    reply = logbook.send_command(commands, "PurchaseProduct", purchase, command_id=purchase_id)
    purchased = next(event for event in reply["events"] if event["type"] == "ProductPurchased")
    say(f"  PurchaseProduct {order} (2 x {product}): position {reply['position']}")
    again = logbook.send_command(commands, "PurchaseProduct", purchase, command_id=purchase_id)
    say(f"  the same PurchaseProduct id sent again: position {again['position']}, the first outcome, nothing appended")
    say(f"purchase: order {order} position {reply['position']} stock {purchased['data']['stock']}")

    last_position = reply["position"]
    if args.restocks:
        for _ in range(args.restocks):
            reply = logbook.send_command(commands, "RestockProduct", {"productId": product, "quantity": 1})
        last_position = reply["position"]
        say(f"  RestockProduct {product} (+1) x {args.restocks}: position {last_position}")

    # 2. The feed, until it has brought everything up to our last command (and then for
    # --follow-seconds more, to watch what other clients do).
    say(f"\nFeed, until position {last_position}:")
    handled = follow(follower, last_position, args.follow_seconds)
    say(f"  handled up to position {follower.cursor}: {handled} event(s), {follower.holes} hole(s) filled from the log")
    follower.close()

    # 3. A view of our own, rebuilt from the whole log.
    view, through = rebuild_products_view(log)
    say(f"\nProducts view rebuilt from the log (positions 1-{through}):")
    for product_id, fields in view.items():
        available = "yes" if fields["stock"] > 0 else "no"
        say(
            f"  view {product_id} name={json.dumps(fields['name'])} price={fields['price']}"
            f" category={fields['category']} stock={fields['stock']} available={available}"
        )
    answer = logbook.query(queries, "GetProduct", {"productId": product}, min_position=through)
    say(f"query process: GetProduct {product} stock={answer['result']['stock']} at position {answer['position']}")


def follow(follower: logbook.FeedFollower, target: int, extra_seconds: float) -> int:
    """Prints feed events until the cursor reaches `target`, then for `extra_seconds` more."""
    handled = 0
    deadline = time.monotonic() + FEED_WAIT_SECONDS
    while follower.cursor < target:
        if time.monotonic() > deadline:
            raise logbook.NoReply(f"the feed did not reach position {target} within {FEED_WAIT_SECONDS} s")
        handled += print_events(follower.poll(100))
    until = time.monotonic() + extra_seconds
    while time.monotonic() < until:
        handled += print_events(follower.poll(100))
    return handled


def rebuild_products_view(log: logbook.RequestClient) -> tuple[dict, int]:
    """productId -> {name, price, category, stock}, from every products event in the log.

    Returns the view and the position it includes everything up to.
    """
    view: dict[str, dict] = {}
    for page in logbook.read_log_pages(log, 1, ["products"]):
        for event in page["events"]:
            apply_product_event(view, event)
        through = page["next"] - 1
    return view, through


def apply_product_event(view: dict[str, dict], event: dict) -> None:
    data = event["data"]
    product_id = data["productId"]
    match event["type"]:
        case "ProductAdded":
            view[product_id] = {key: data[key] for key in ("name", "price", "category", "stock")}
        case "ProductUpdated":  # only the fields that changed
            view[product_id].update({key: data[key] for key in ("name", "price", "category") if key in data})
        case "ProductRestocked" | "ProductPurchased":  # both carry the new stock
            view[product_id]["stock"] = data["stock"]
        case "ProductRemoved":  # the query process answers not_found for it, so we drop it too
            del view[product_id]


def print_events(events: list[dict]) -> int:
    for event in events:
        data = event["data"]
        fields = " ".join(f"{key}={value}" for key, value in data.items() if key != "productId")
        say(f"  event #{event['position']} {event['type']} {data['productId']} {fields}")
    return len(events)


def say(text: str) -> None:
    print(text, flush=True)


def indented(label: str):
    return lambda text: say(f"  {label}: {text}")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--commands",
        default=logbook.DEFAULT_COMMANDS,
        help="the worker's commands socket, or several workers' comma-separated (tcp://a:5555,tcp://b:5555)",
    )
    parser.add_argument("--feed", default=logbook.DEFAULT_FEED, help="the worker's feed socket")
    parser.add_argument("--log", default=logbook.DEFAULT_LOG, help="the worker's log socket (ReadLog)")
    parser.add_argument("--queries", default=logbook.DEFAULT_QUERIES, help="the query process's socket")
    parser.add_argument("--restocks", type=int, default=0, help="after the purchase, restock N times (1 unit each)")
    parser.add_argument("--follow-seconds", type=float, default=0, help="keep printing the feed this long at the end")
    parser.add_argument("--timeout-ms", type=int, default=3000, help="per request attempt (3 attempts)")
    parser.add_argument("--run-id", help="the suffix of every id this run creates (default: random)")
    parser.add_argument("--curve-key", default=os.environ.get("LOGBOOK_CURVE_KEY"),
                        help="with CURVE on: this client's secret certificate (default $LOGBOOK_CURVE_KEY)")
    parser.add_argument("--server-key", default=os.environ.get("LOGBOOK_SERVER_KEY"),
                        help="with CURVE on: the server's public certificate (default $LOGBOOK_SERVER_KEY)")
    args = parser.parse_args()
    if bool(args.curve_key) != bool(args.server_key):
        parser.error("--curve-key and --server-key go together")
    return args


if __name__ == "__main__":
    sys.exit(main())
