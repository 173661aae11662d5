"""What the contract test sends: every command, query and log read, Status and Rebuild,
every request of the groups socket (admins' and members', with the deliveries members get),
the successes and every error code the service can be made to answer, edge cases of the
rules in schemas/README.md and docs/architecture.md, and requests that are not requests at all.

Each request carries its expectation: the reply (`ok` or an error code) and whether the
request itself must pass its schema. A refusal for a reason JSON Schema cannot express
(a birthday in the future, `5.0` for an integer, a count of grapheme clusters, the state
of the log) passes its schema; such requests carry a note saying why.

Error codes that cannot be provoked from outside, and why:
- `unauthorized` is reserved for CURVE authentication, which is not built, so nothing
  answers it yet.
- `wrong_expected_version` with `details.cause = "contention"` needs other writers to win
  the race for the same streams three rounds in a row; it cannot be provoked on purpose
  (the code itself is provoked through `expectedVersion`, `cause = "expectedVersion"`).
"""

import datetime
import functools
import json

import zmq
import sqlite3
import time
import uuid

from wire_client import Expectation

# Replies that depend on the state of the log or the read models, not on the request's shape.
STATE_CODES = {
    "ok", "not_found", "already_exists", "email_taken", "product_not_available", "insufficient_stock",
    "wrong_expected_version", "timeout", "unavailable", "internal", "unknown_group", "stale_delivery", "not_a_member",
}
OMIT = object()  # a field left out of a groups request that would otherwise carry it
MAXIMUM_PARKED_QUERIES = 10_000  # QueryLoop.maximumParked: more waiting queries answer `unavailable`


class ScenarioFailure(Exception):
    pass


class Scenario:
    def __init__(self, client, feed, service):
        self.client = client
        self.feed = feed
        self.service = service
        self.counter = 0
        self.first_feed_position = None
        self.log_events: list = []  # the whole log, read back at the end

    # ------------------------------------------------------------------ helpers
    def next_id(self, prefix="wc"):
        self.counter += 1
        return f"{prefix}-{self.counter}"

    @staticmethod
    def _expect(reply, valid, note):
        if valid is None:
            valid = reply in STATE_CODES or bool(note)
        return Expectation(reply=reply, request_valid=valid, note=note)

    def command(self, type_, data, expect="ok", valid=None, note="", id=None, via=None, **top):
        document = {"id": id or self.next_id(), "type": type_, "data": data, **top}
        label = f"command {type_} {json.dumps(data, ensure_ascii=False)[:80]}"
        reply = self.client.request("commands", document, label, self._expect(expect, valid, note), via)
        self._check(label, reply, expect)
        return reply

    def query(self, type_, data=None, expect="ok", valid=None, note="", via=None, **top):
        document = {"id": self.next_id("q"), "type": type_, **top}
        if data is not None:
            document["data"] = data
        label = f"query {type_} {json.dumps(data, ensure_ascii=False)[:80]}"
        reply = self.client.request("queries", document, label, self._expect(expect, valid, note), via)
        self._check(label, reply, expect)
        return reply

    def read_log(self, expect="ok", valid=None, note="", via=None, **fields):
        document = {"id": self.next_id("l"), "type": "ReadLog", **fields}
        label = f"ReadLog {json.dumps(fields)[:80]}"
        reply = self.client.request("log", document, label, self._expect(expect, valid, note), via)
        self._check(label, reply, expect)
        return reply

    def group_request(self, type_, expect="ok", valid=None, note="", via=None, as_role="admin", **fields):
        """A request on the groups socket from an admin's (or `as_role`'s) REQ or DEALER."""
        document = {"id": self.next_id("g"), "type": type_, **fields}
        label = f"groups {type_} {json.dumps(fields, ensure_ascii=False)[:80]}"
        reply = self.client.request("groups", document, label, self._expect(expect, valid, note), via, as_role=as_role)
        self._check(label, reply, expect)
        return reply

    def member_request(self, member, type_, expect="ok", valid=None, note="", **fields):
        """A request of a group member on its own DEALER; `group` defaults to the member's group."""
        document = {"id": self.next_id("m"), "type": type_, "group": member.group, **fields}
        if document["group"] is OMIT:
            del document["group"]
        shown = {k: v for k, v in document.items() if k not in ("id", "type")}
        label = f"member {type_} {json.dumps(shown, ensure_ascii=False)[:80]}"
        reply = member.request(document, label, self._expect(expect, valid, note))
        self._check(label, reply, expect)
        return reply

    def raw(self, socket, document, expect, valid=False, note="", via=None, label=None):
        label = label or f"{socket} raw {str(document)[:80]}"
        reply = self.client.request(socket, document, label, Expectation(expect, valid, note), via)
        self._check(label, reply, expect)
        return reply

    def frames(self, socket, frames, expect, label):
        reply = self.client.raw_frames(socket, frames, label, Expectation(expect, False, "not one JSON request frame"))
        self._check(label, reply, expect)
        return reply

    @staticmethod
    def _check(label, reply, expect):
        got = "ok" if reply.get("ok") is True else (reply.get("error") or {}).get("code", "<no error code>")
        if got != expect:
            raise ScenarioFailure(f"{label}: expected {expect}, got {json.dumps(reply, ensure_ascii=False)[:400]}")

    # ------------------------------------------------------------------ the run
    def run(self):
        self.wait_for_feed()
        self.users()
        self.posts()
        self.products()
        self.command_envelopes()
        self.malformed_requests()
        self.queries()
        self.log_reads()
        self.status_and_rebuild()
        self.consumer_groups()
        self.parked_queries_flood()
        self.read_whole_log()
        self.collect_feed()
        if self.client.keys:
            self.unauthorized()
        self.damaged_log()

    def unauthorized(self):
        """With CURVE: each role gets `unauthorized` for what it may not do (and the log is
        untouched), and a plain client gets no answer at all."""
        before = self.raw("log", {"id": self.next_id("l"), "type": "ReadLog", "from": 1, "limit": 1}, "ok",
                          valid=True)["head"]
        forbidden = [
            ("reader", "commands", {"id": self.next_id("u"), "type": "RegisterUser",
                                    "data": {"userId": "intruder", "name": "Intruder",
                                             "email": "intruder@example.com"}}),
            ("reader", "commands", {"id": self.next_id("u"), "type": "Status"}),
            # Forgetting a person is the admin's alone.
            ("writer", "commands", {"id": self.next_id("u"), "type": "ForgetUser", "data": {"userId": "bob"}}),
            ("reader", "commands", {"id": self.next_id("u"), "type": "ForgetUser", "data": {"userId": "bob"}}),
            ("reader", "queries", {"id": self.next_id("u"), "type": "Rebuild"}),
            ("writer", "queries", {"id": self.next_id("u"), "type": "ListUsers", "data": {}}),
            ("writer", "queries", {"id": self.next_id("u"), "type": "Status"}),
            ("writer", "log", {"id": self.next_id("u"), "type": "ReadLog", "from": 1}),
            # Groups: a reader consumes (the members of consumer_groups are readers) but does not
            # manage; a writer does neither.
            ("reader", "groups", {"id": self.next_id("u"), "type": "CreateGroup", "group": "wc-intruder",
                                  "topics": ["users"]}),
            ("reader", "groups", {"id": self.next_id("u"), "type": "ListGroups"}),
            ("reader", "groups", {"id": self.next_id("u"), "type": "DeleteGroup", "group": "wc-intruder"}),
            ("reader", "groups", {"id": self.next_id("u"), "type": "Status"}),
            ("writer", "groups", {"id": self.next_id("u"), "type": "Join", "group": "wc-intruder"}),
            ("writer", "groups", {"id": self.next_id("u"), "type": "CreateGroup", "group": "wc-intruder",
                                  "topics": ["users"]}),
        ]
        for role, socket, document in forbidden:
            for via in ("REQ", "DEALER"):
                document = {**document, "id": self.next_id("u")}
                label = f"{socket} {document['type']} as {role}"
                reply = self.client.request(socket, document, label, Expectation("unauthorized", True), via,
                                            as_role=role)
                self._check(label, reply, "unauthorized")
        after = self.raw("log", {"id": self.next_id("l"), "type": "ReadLog", "from": 1, "limit": 1}, "ok",
                         valid=True)["head"]
        if after != before:
            raise ScenarioFailure(f"refused requests changed the log's head from {before} to {after}")
        groups = self.group_request("ListGroups")["result"]["groups"]
        if groups:
            raise ScenarioFailure(f"refused CreateGroup requests made groups: {groups}")
        for role, group in (("reader", "wc-reader"), ("admin", "wc-admin")):
            # The roles that may consume: Join is refused for the group's absence, not the role's.
            member = self.client.member(group, role)
            try:
                self.member_request(member, "Join", expect="unknown_group")
                # A type the socket does not serve asks for no right: unknown_type for anyone.
                self.member_request(member, "Heartbeet", expect="unknown_type")
            finally:
                member.close()
        plain = self.client.context.socket(zmq.DEALER)
        plain.setsockopt(zmq.LINGER, 0)
        try:
            plain.connect(self.client.endpoints["commands"])
            plain.send_multipart([b"", json.dumps({"id": "plain", "type": "Status"}).encode()])
            if plain.poll(1000):
                raise ScenarioFailure(f"a plain client got an answer from a CURVE server: {plain.recv_multipart()}")
        finally:
            plain.close()

    def wait_for_feed(self):
        """A subscriber misses what is published before its subscription reaches the PUB
        socket: register probe users until one shows up on the feed."""
        for attempt in range(1, 51):
            reply = self.command("RegisterUser", {"userId": f"probe-{attempt}", "name": "Probe",
                                                  "email": f"probe{attempt}@example.com"})
            if self.feed.drain(wait_ms=200):
                self.first_feed_position = reply["events"][0]["position"]
                return
        raise ScenarioFailure("the feed delivered nothing for 50 probe commands")

    def users(self):
        c = self.command
        ann = c("RegisterUser", {"userId": "ann", "name": "Ann Example", "email": "ann@example.com", "gender": "female",
                                 "birthday": "1990-02-28", "subscription": "premium"},
                expectedVersion="noStream", metadata={"correlationId": "corr-1", "causationId": "cause:1"})
        expected_metadata = {"commandId": ann["id"], "correlationId": "corr-1", "causationId": "cause:1"}
        if ann["events"][0]["metadata"] != expected_metadata:
            raise ScenarioFailure(f"RegisterUser ann: metadata not carried into the envelope: {ann['events'][0]}")
        c("RegisterUser", {"userId": "bob", "name": "  Bob  ", "email": " Bob@Example.COM ", "gender": None,
                           "birthday": None}, expectedVersion=None, metadata=None)
        c("RegisterUser", {"userId": "leap", "name": "Leap Day", "email": "leap@example.org", "birthday": "2000-02-29",
                           "gender": "other", "subscription": "enterprise"}, expectedVersion=0)
        # 100 characters, each an 'e' and a combining acute accent: 200 code points.
        c("RegisterUser", {"userId": "U_" + "x" * 62, "name": "e\u0301" * 100,
                           "email": "a.b+c!#$%&'*/=?^_`{|}~-@sub-1.example.co.uk"})
        c("RegisterUser", {"userId": "old", "name": "O", "email": "old@example.com", "birthday": "1900-01-01"})
        # Unicode whitespace is trimmed; a zero-width space or a byte-order mark is not whitespace.
        c("RegisterUser", {"userId": "wide", "name": "\u3000\u00a0\u200bZed \ufeff\u2003\n",
                           "email": "\tWIDE@EXAMPLE.ORG\u00a0"})
        c("RegisterUser", {"userId": "ann", "name": "Again", "email": "again@example.com"}, expect="already_exists")
        c("RegisterUser", {"userId": "ann2", "name": "Ann Two", "email": "ANN@EXAMPLE.COM"}, expect="email_taken")
        c("UpdateUserProfile", {"userId": "bob", "name": "Robert", "email": "robert@example.com", "gender": "male",
                                "birthday": "1985-12-31"})
        c("UpdateUserProfile", {"userId": "bob", "email": "Robert@Example.com"})  # same address, other case
        noop = c("UpdateUserProfile", {"userId": "bob", "name": "Robert", "gender": None})
        if noop["events"]:
            raise ScenarioFailure(f"an update that changes nothing appended events: {noop}")
        c("UpdateUserProfile", {"userId": "nobody", "name": "N"}, expect="not_found")
        c("ChangeSubscription", {"userId": "bob", "subscription": "premium"})
        c("ChangeSubscription", {"userId": "bob", "subscription": "premium"})  # no change, no event
        c("ChangeSubscription", {"userId": "ann", "subscription": "free"})
        c("RegisterUser", {"userId": "gone", "name": "Gone", "email": "gone@example.com"})
        c("DeleteUser", {"userId": "gone"})
        c("DeleteUser", {"userId": "gone"}, expect="not_found")
        c("RegisterUser", {"userId": "gone", "name": "Gone", "email": "gone2@example.com"}, expect="already_exists")
        c("RegisterUser", {"userId": "reuse", "name": "Reuse", "email": "GONE@example.com"})  # released address

        # Forgetting: the user's personal values read as null with "forgotten": true from then
        # on, the address is free, a second forgetting is not_found, a retry answers the first.
        c("RegisterUser", {"userId": "forget-me", "name": "Forget Me", "email": "forget@example.com",
                           "gender": "other", "birthday": "1990-01-01"})
        c("UpdateUserProfile", {"userId": "forget-me", "name": "Forget Me Now"})
        forgot = c("ForgetUser", {"userId": "forget-me"}, id="wc-forget")
        if [e["type"] for e in forgot["events"]] != ["UserForgotten", "EmailReleased"]:
            raise ScenarioFailure(f"ForgetUser appended {forgot['events']}")
        if c("ForgetUser", {"userId": "forget-me"}, id="wc-forget") != forgot:
            raise ScenarioFailure("a retried ForgetUser got another outcome")
        c("ForgetUser", {"userId": "forget-me"}, expect="not_found")
        c("ForgetUser", {"userId": "nobody"}, expect="not_found")
        c("ForgetUser", {"userId": "gone"})  # a deleted user is forgotten too
        c("ForgetUser", {}, expect="invalid_input")
        c("ForgetUser", {"userId": "forget-me", "why": "x"}, expect="invalid_input")
        c("RegisterUser", {"userId": "forget-heir", "name": "Heir", "email": "Forget@Example.com"})
        page = self.read_log(**{"from": 1, "limit": 10000})
        erased = [e for e in page["events"] if e["data"].get("userId") == "forget-me"
                  and e["type"] in ("UserRegistered", "UserProfileUpdated", "EmailClaimed", "EmailReleased")]
        if len(erased) < 3 or any(e["data"].get("forgotten") is not True or e["data"].get("name") is not None
                                  or e["data"].get("email") is not None for e in erased):
            raise ScenarioFailure(f"a forgotten user's events still carry values: {erased}")
        if any("@" in e["stream"] for e in page["events"]):
            raise ScenarioFailure("a stream name carries an address")
        c("ChangeSubscription", {"userId": "nobody", "subscription": "free"}, expect="not_found")

        # Version expectations: a mismatch is decided and remembered for the id.
        c("ChangeSubscription", {"userId": "ann", "subscription": "enterprise"}, expectedVersion=2)
        first = c("DeleteUser", {"userId": "ann"}, expect="wrong_expected_version", expectedVersion=1,
                  id="wc-expected-version")
        again = c("DeleteUser", {"userId": "ann"}, expect="wrong_expected_version", expectedVersion=1,
                  id="wc-expected-version")
        if first != again:
            raise ScenarioFailure(f"a retried id got another outcome: {first} then {again}")
        c("RegisterUser", {"userId": "newbie", "name": "N", "email": "newbie@example.com"},
          expect="wrong_expected_version", expectedVersion=4)
        retried = c("RegisterUser", {"userId": "retry", "name": "R", "email": "retry@example.com"}, id="wc-retry")
        again = c("RegisterUser", {"userId": "retry", "name": "R", "email": "retry@example.com"}, id="wc-retry")
        if again != retried:
            raise ScenarioFailure(f"a retried command got another reply: {retried} then {again}")

        # Invalid values: refused before any state is read, and by the schemas.
        today = datetime.datetime.now(datetime.timezone.utc).date()
        bad = [
            {"userId": "a" * 65, "name": "N", "email": "n1@example.com"},
            {"userId": "has space", "name": "N", "email": "n1@example.com"},
            {"userId": "", "name": "N", "email": "n1@example.com"},
            {"userId": "n1", "name": "   ", "email": "n1@example.com"},
            {"userId": "n1", "name": "", "email": "n1@example.com"},
            {"userId": "n1", "name": "tab\tinside", "email": "n1@example.com"},
            {"userId": "n1", "name": "line\u2028separator", "email": "n1@example.com"},
            {"userId": "n1", "name": "N", "email": "no-at.example.com"},
            {"userId": "n1", "name": "N", "email": "n1@localhost"},
            {"userId": "n1", "name": "N", "email": ".n1@example.com"},
            {"userId": "n1", "name": "N", "email": "n..1@example.com"},
            {"userId": "n1", "name": "N", "email": "n1@example.c"},
            {"userId": "n1", "name": "N", "email": "n1@-example.com"},
            {"userId": "n1", "name": "N", "email": "n1@exa_mple.com"},
            {"userId": "n1", "name": "N", "email": "x" * 65 + "@example.com"},
            {"userId": "n1", "name": "N", "email": "n1@" + "d" * 64 + ".com"},
            {"userId": "n1", "name": "N", "email": "n1@example.com", "birthday": "2023-02-29"},
            {"userId": "n1", "name": "N", "email": "n1@example.com", "birthday": "1899-12-31"},
            {"userId": "n1", "name": "N", "email": "n1@example.com", "birthday": "1990-1-01"},
            {"userId": "n1", "name": "N", "email": "n1@example.com", "gender": "robot"},
            {"userId": "n1", "name": "N", "email": "n1@example.com", "subscription": "gold"},
            {"userId": "n1", "name": "N", "email": "n1@example.com", "nickname": "x"},
            {"userId": "n1", "name": 5, "email": "n1@example.com"},
            {"name": "N", "email": "n1@example.com"},
            {"userId": None, "name": "N", "email": "n1@example.com"},
        ]
        for data in bad:
            c("RegisterUser", data, expect="invalid_input")
        c("RegisterUser", {"userId": "n1", "name": "N", "email": "n1@example.com",
                           "birthday": (today + datetime.timedelta(days=2)).isoformat()},
          expect="invalid_input", note="a birthday after today: JSON Schema has no notion of today")
        c("RegisterUser", {"userId": "n1", "name": "N" * 101, "email": "n1@example.com"}, expect="invalid_input",
          note="101 characters: JSON Schema counts code points up to the 400-byte cap, not grapheme clusters")
        c("RegisterUser", "not an object", expect="invalid_input")
        c("RegisterUser", None, expect="invalid_input")
        c("UpdateUserProfile", {"userId": "bob"}, expect="invalid_input")
        c("UpdateUserProfile", {"userId": "bob", "name": None, "email": None}, expect="invalid_input")
        c("UpdateUserProfile", {"userId": "bob", "email": "bad@"}, expect="invalid_input")
        c("ChangeSubscription", {"userId": "bob"}, expect="invalid_input")
        c("DeleteUser", {"userId": "bob", "reason": "x"}, expect="invalid_input")

        # Command, correlation and causation ids.
        c("DeleteUser", {"userId": "nobody"}, id="x" * 128, expect="not_found")
        c("DeleteUser", {"userId": "nobody"}, id="x" * 129, expect="invalid_input")
        c("DeleteUser", {"userId": "nobody"}, id="with space", expect="invalid_input")
        c("DeleteUser", {"userId": "nobody"}, id="caf\u00e9", expect="invalid_input")
        c("DeleteUser", {"userId": "nobody"}, metadata={"correlationId": "has space"}, expect="invalid_input")
        c("DeleteUser", {"userId": "nobody"}, metadata={"causationId": "y" * 129}, expect="invalid_input")
        c("DeleteUser", {"userId": "nobody"}, expectedVersion=-1, expect="invalid_input")
        c("DeleteUser", {"userId": "nobody"}, expectedVersion="latest", expect="invalid_input")
        c("DeleteUser", {"userId": "nobody"}, expectedVersion=1.5, expect="invalid_input")
        c("Unheard", {"userId": "nobody"}, expect="unknown_type")
        c("ReadLog", {"from": 1}, expect="unknown_type")

    def posts(self):
        c = self.command
        c("CreatePost", {"postId": "hello", "authorId": "bob", "title": "  Hello, world  ",
                         "content": "Line one\nline two\u2028\ttabbed \u0000 and emoji \U0001F600"})
        c("CreatePost", {"postId": "empty", "authorId": "bob", "title": "T" * 200, "content": ""})
        c("CreatePost", {"postId": "hello", "authorId": "bob", "title": "Again", "content": "x"},
          expect="already_exists")
        c("CreatePost", {"postId": "orphan", "authorId": "gone", "title": "T", "content": "x"}, expect="not_found")
        c("EditPost", {"postId": "hello", "title": "Hello again"})
        c("EditPost", {"postId": "hello", "content": "New body", "title": None})
        c("EditPost", {"postId": "hello", "title": "Hello again"})  # no change
        c("EditPost", {"postId": "empty", "title": "\u00a0Caf\u00e9 \u2014 na\u0131ve\u3000", "content": "\r\n"})
        c("CreatePost", {"postId": "doomed", "authorId": "reuse", "title": "Doomed", "content": "x"})
        c("DeletePost", {"postId": "doomed"})
        c("EditPost", {"postId": "doomed", "title": "Too late"}, expect="not_found")
        c("DeletePost", {"postId": "doomed"}, expect="not_found")
        for data in [
            {"postId": "p1", "authorId": "bob", "title": "", "content": "x"},
            {"postId": "p1", "authorId": "bob", "title": "a\nb", "content": "x"},
            {"postId": "p1", "authorId": "bob", "title": "T"},
            {"postId": "p1", "authorId": "bob", "title": "T", "content": 5},
            {"postId": "p1", "authorId": "bad id", "title": "T", "content": "x"},
            {"postId": "p1", "authorId": "bob", "title": "T" * 801, "content": "x"},
        ]:
            c("CreatePost", data, expect="invalid_input")
        c("CreatePost", {"postId": "p1", "authorId": "bob", "title": "T" * 201, "content": "x"},
          expect="invalid_input", note="201 characters: the schema's cap is the 800-byte cap, in code points")
        c("CreatePost", {"postId": "p1", "authorId": "bob", "title": "T", "content": "c" * 50_001},
          expect="invalid_input", note="50,001 characters: the schema's cap is the 200,000-byte cap, in code points")
        c("EditPost", {"postId": "hello"}, expect="invalid_input")
        c("EditPost", {"postId": "hello", "body": "x"}, expect="invalid_input")
        c("DeletePost", {}, expect="invalid_input")

    def products(self):
        c = self.command
        tea = c("AddProduct", {"productId": "tea", "name": " Green Tea ", "price": "2.5", "category": "food",
                               "stock": 3})
        if tea["events"][0]["data"]["price"] != "2.50":
            raise ScenarioFailure(f"price 2.5 was not written as 2.50: {tea}")
        c("AddProduct", {"productId": "max", "name": "Max", "price": "999999999.99", "category": "electronics",
                         "stock": 1_000_000_000})
        c("AddProduct", {"productId": "free", "name": "Free Sample", "price": "0", "category": "clothing", "stock": 0})
        c("AddProduct", {"productId": "padded", "name": "Padded", "price": "000000000000012.30", "category": "food",
                         "stock": 1})
        c("AddProduct", {"productId": "tea", "name": "Tea", "price": "1", "category": "food", "stock": 1},
          expect="already_exists")
        c("UpdateProduct", {"productId": "tea", "price": "00019.9", "category": "clothing", "name": "Tea"})
        c("UpdateProduct", {"productId": "tea", "category": "clothing"})  # no change
        c("RestockProduct", {"productId": "tea", "quantity": 7})
        c("RestockProduct", {"productId": "max", "quantity": 1}, expect="invalid_input", valid=True,
          note="the stock after a restock may not pass 1,000,000,000: it depends on the stock")
        c("RestockProduct", {"productId": "nothing", "quantity": 1}, expect="not_found")
        order = c("PurchaseProduct", {"orderId": "o-1", "userId": "bob", "productId": "tea", "quantity": 4})
        placed = order["events"][1]["data"]
        if (placed["unitPrice"], placed["totalPrice"], placed["status"]) != ("19.90", "79.60", "pending"):
            raise ScenarioFailure(f"order totals: {placed}")
        c("PurchaseProduct", {"orderId": "o-2", "userId": "bob", "productId": "tea", "quantity": 100},
          expect="insufficient_stock")
        c("PurchaseProduct", {"orderId": "o-3", "userId": "bob", "productId": "free", "quantity": 1},
          expect="product_not_available")
        c("PurchaseProduct", {"orderId": "o-1", "userId": "bob", "productId": "tea", "quantity": 1},
          expect="already_exists")
        c("PurchaseProduct", {"orderId": "o-4", "userId": "gone", "productId": "tea", "quantity": 1},
          expect="not_found")
        c("PurchaseProduct", {"orderId": "o-5", "userId": "bob", "productId": "nothing", "quantity": 1},
          expect="not_found")
        c("PurchaseProduct", {"orderId": "o-big", "userId": "leap", "productId": "max", "quantity": 9_223_372})
        c("PurchaseProduct", {"orderId": "o-huge", "userId": "leap", "productId": "max", "quantity": 100_000_000},
          expect="invalid_input", valid=True,
          note="a total beyond 92,233,720,368,547,758.07 depends on the product's price, not on the request")
        c("PurchaseProduct", {"orderId": "o-free", "userId": "bob", "productId": "padded", "quantity": 1})
        c("AddProduct", {"productId": "gone-soon", "name": "Gone soon", "price": "1.00", "category": "food",
                         "stock": 2})
        c("RemoveProduct", {"productId": "gone-soon"})
        c("RemoveProduct", {"productId": "gone-soon"}, expect="not_found")
        c("PurchaseProduct", {"orderId": "o-6", "userId": "bob", "productId": "gone-soon", "quantity": 1},
          expect="not_found")
        c("UpdateProduct", {"productId": "gone-soon", "name": "X"}, expect="not_found")
        for data in [
            {"productId": "p", "name": "P", "price": "1.234", "category": "food", "stock": 1},
            {"productId": "p", "name": "P", "price": "1000000000", "category": "food", "stock": 1},
            {"productId": "p", "name": "P", "price": "1.", "category": "food", "stock": 1},
            {"productId": "p", "name": "P", "price": ".5", "category": "food", "stock": 1},
            {"productId": "p", "name": "P", "price": "-1", "category": "food", "stock": 1},
            {"productId": "p", "name": "P", "price": "1e3", "category": "food", "stock": 1},
            {"productId": "p", "name": "P", "price": 2.5, "category": "food", "stock": 1},
            {"productId": "p", "name": "P", "price": "1", "category": "toys", "stock": 1},
            {"productId": "p", "name": "P", "price": "1", "category": "food", "stock": -1},
            {"productId": "p", "name": "P", "price": "1", "category": "food", "stock": 1_000_000_001},
            {"productId": "p", "name": "P", "price": "1", "category": "food", "stock": "3"},
            {"productId": "p", "name": "P", "price": "1", "category": "food"},
        ]:
            c("AddProduct", data, expect="invalid_input")
        c("AddProduct", {"productId": "p", "name": "P", "price": "1", "category": "food", "stock": 5.0},
          expect="invalid_input", note="5.0: JSON Schema's integer accepts a number with a zero fraction")
        c("UpdateProduct", {"productId": "tea"}, expect="invalid_input")
        c("UpdateProduct", {"productId": "tea", "stock": 5}, expect="invalid_input")
        c("RestockProduct", {"productId": "tea", "quantity": 0}, expect="invalid_input")
        c("RestockProduct", {"productId": "tea", "quantity": 1_000_000_001}, expect="invalid_input")
        c("PurchaseProduct", {"orderId": "o-7", "userId": "bob", "productId": "tea", "quantity": 0},
          expect="invalid_input")
        c("PurchaseProduct", {"orderId": "o 7", "userId": "bob", "productId": "tea", "quantity": 1},
          expect="invalid_input")
        c("RemoveProduct", {"productId": 5}, expect="invalid_input")

    def command_envelopes(self):
        """Top-level shapes of a command request that are refused as malformed."""
        r = self.raw
        r("commands", {"id": "m1", "type": "DeleteUser", "data": {"userId": "x"}, "extra": 1}, "malformed_request")
        r("commands", {"id": "m2", "type": "DeleteUser", "data": {"userId": "x"}, "metadata": "corr"},
          "malformed_request")
        r("commands", {"id": "m3", "type": "DeleteUser", "data": {"userId": "x"}, "metadata": {"traceId": "t"}},
          "malformed_request")
        r("commands", {"id": "m4", "type": "DeleteUser", "data": {"userId": "x"}, "metadata": {"correlationId": None}},
          "malformed_request")
        r("commands", {"id": "m5", "type": "DeleteUser", "data": {"userId": "x"}, "metadata": {"causationId": 7}},
          "malformed_request")

    def malformed_requests(self):
        """What is not a request at all, on each socket: the reply carries `id: null` when no id was readable."""
        for socket in ("commands", "queries", "log", "groups"):
            self.frames(socket, [b'{"id":"f1","type":"Status"}'], "malformed_request",
                        f"{socket}: DEALER frames without the empty delimiter")
            self.frames(socket, [b"", b"{}", b"{}"], "malformed_request", f"{socket}: two frames after the delimiter")
            self.frames(socket, [b"", b"not json"], "malformed_request", f"{socket}: a frame that is not JSON")
            self.frames(socket, [b"", b'{"id":"d","id":"e","type":"Status"}'], "malformed_request",
                        f"{socket}: a duplicate key")
            self.frames(socket, [b"", b"\xff\xfe{}"], "malformed_request", f"{socket}: bytes that are not UTF-8")
            self.raw(socket, [1, 2], "malformed_request")
            self.raw(socket, "Status", "malformed_request")
            self.raw(socket, {"type": "Status"}, "malformed_request")
            self.raw(socket, {"id": "", "type": "Status"}, "malformed_request")
            self.raw(socket, {"id": 7, "type": "Status"}, "malformed_request")
            self.raw(socket, {"id": "no-type"}, "malformed_request")
            self.raw(socket, {"id": "typed", "type": 3}, "malformed_request")
        big = {"id": "too-big", "type": "CreatePost",
               "data": {"postId": "big", "authorId": "bob", "title": "Big", "content": "b" * (1 << 20)}}
        self.raw("commands", big, "malformed_request", label="commands: a request over 1 MiB")

    def queries(self):
        q = self.query
        bob = q("GetUser", {"userId": "bob"}, minPosition=1, timeoutMs=5000)
        if bob["result"]["email"] != "Robert@Example.com":
            raise ScenarioFailure(f"GetUser bob: {bob}")
        q("GetUser", {"userId": "leap"})
        q("GetUser", {"userId": "gone"}, expect="not_found")
        q("GetUser", {"userId": "never"}, expect="not_found")
        q("ListUsers")
        q("ListUsers", {})
        q("ListUsers", {"page": 2, "perPage": 1})
        q("ListUsers", {"page": 1000, "perPage": 100}, minPosition=None, timeoutMs=None)
        q("GetPost", {"postId": "hello"})
        q("GetPost", {"postId": "doomed"}, expect="not_found")
        q("ListPosts")
        q("ListPosts", {"authorId": "bob", "page": 1, "perPage": 1})
        q("ListPosts", {"authorId": "never"})
        q("GetProduct", {"productId": "tea"})
        q("GetProduct", {"productId": "free"})
        q("GetProduct", {"productId": "gone-soon"}, expect="not_found")
        q("ListProducts", {"category": "clothing", "inStockOnly": True, "search": "TEA"})
        q("ListProducts", {"category": None, "inStockOnly": None, "search": None, "page": None, "perPage": None})
        q("ListProducts", {"search": ""})
        q("ListOrders", {"userId": "bob"})
        q("ListOrders", {"userId": "leap", "perPage": 100})
        q("ListOrders", {"userId": "never"})
        for type_, data in [
            ("GetUser", {"userId": "bad id"}),
            ("GetUser", {}),
            ("GetUser", {"userId": "bob", "extra": 1}),
            ("ListUsers", {"perPage": 0}),
            ("ListUsers", {"perPage": 101}),
            ("ListUsers", {"page": 0}),
            ("ListUsers", {"page": "1"}),
            ("ListPosts", {"authorId": ""}),
            ("ListProducts", {"inStockOnly": "yes"}),
            ("ListProducts", {"category": "toys"}),
            ("ListProducts", {"search": "s" * 801}),
            ("ListOrders", {}),
            ("GetProduct", [1]),
        ]:
            q(type_, data, expect="invalid_input")
        q("GetUser", None, expect="invalid_input")  # data left out: userId is required
        q("ListProducts", {"search": "s" * 201}, expect="invalid_input",
          note="201 characters: the schema's cap is the 800-byte cap, in code points")
        q("ListUsers", expect="invalid_input", data=None, minPosition=-1)
        q("ListUsers", expect="invalid_input", timeoutMs=0)
        q("ListUsers", expect="invalid_input", timeoutMs=60_001)
        q("ListUsers", expect="invalid_input", minPosition="1")
        self.raw("queries", {"id": "null-data", "type": "ListUsers", "data": None}, "invalid_input",
                 label="queries: ListUsers with data null (refused, although every field of it is optional)")
        self.raw("queries", {"id": "unknown-field", "type": "ListUsers", "where": {}}, "malformed_request")
        q("Unheard", {}, expect="unknown_type")
        q("ReadLog", {}, expect="unknown_type")
        q("GetUser", {"userId": "bob"}, expect="timeout", minPosition=10**9, timeoutMs=50)

    def log_reads(self):
        r = self.read_log
        r(**{"from": 1, "limit": 3})
        r(**{"from": 1, "limit": 10_000, "topics": ["users", "orders"]})
        r(**{"from": 1, "topics": []})
        r(**{"from": 1, "topics": None, "limit": None})
        r(**{"from": 10**9})
        for fields in [{"from": 0}, {}, {"from": "1"}, {"from": 1, "limit": 0}, {"from": 1, "limit": 10_001},
                       {"from": 1, "topics": ["email"]}, {"from": 1, "topics": "users"}, {"from": 1.5}]:
            r(expect="invalid_input", **fields)
        self.raw("log", {"id": "l-extra", "type": "ReadLog", "from": 1, "after": 2}, "malformed_request")
        self.raw("log", {"id": "l-status", "type": "Status"}, "unknown_type")
        self.raw("log", {"id": "l-query", "type": "GetUser", "data": {"userId": "bob"}}, "unknown_type")

    def status_and_rebuild(self):
        for socket in ("commands", "queries"):
            for via in ("REQ", "DEALER"):
                self.raw(socket, {"id": self.next_id("s"), "type": "Status"}, "ok", valid=True, via=via)
            self.raw(socket, {"id": self.next_id("s"), "type": "Status", "verbose": True}, "malformed_request")
        self.raw("queries", {"id": self.next_id("r"), "type": "Rebuild", "now": True}, "malformed_request")
        self.raw("queries", {"id": self.next_id("r"), "type": "Rebuild"}, "ok", valid=True, via="REQ")
        # A second Rebuild while the first runs (often read in the same turn of the query
        # loop) joins it: the reply shows the rebuild under way, and one generation is built.
        generation = self.raw("queries", {"id": self.next_id("s"), "type": "Status"}, "ok", valid=True)["result"]["generation"]
        ids = [self.next_id("r"), self.next_id("r")]
        self.client.flood("queries", [{"id": i, "type": "Rebuild"} for i in ids], "two Rebuild requests at once",
                          {i: Expectation("ok", True, "") for i in ids}, deadline_seconds=10)
        deadline = time.monotonic() + 20
        while True:
            status = self.raw("queries", {"id": self.next_id("s"), "type": "Status"}, "ok", valid=True)
            result = status["result"]
            if result["rebuild"]["state"] == "idle" and result["generation"] >= generation + 1:
                if result["generation"] != generation + 1:
                    raise ScenarioFailure(f"two Rebuild requests at once built {result['generation'] - generation} "
                                          "generations; a second request must join the rebuild under way")
                break
            if result["rebuild"]["state"] == "failed" or time.monotonic() > deadline:
                raise ScenarioFailure(f"the rebuild did not finish: {status}")
            time.sleep(0.05)
        self.query("ListOrders", {"userId": "bob"})
        self.query("GetUser", {"userId": "leap"})

    def topic_events(self, topics):
        """Every event of these topics in the log, read page by page; and the log's head."""
        position, events = 1, []
        while True:
            page = self.read_log(**{"from": position, "topics": topics})
            events += page["events"]
            if page["next"] > page["head"]:
                return events, page["head"]
            position = page["next"]

    def consumer_groups(self):
        """The groups socket: an admin creates, shows, lists and deletes groups (and is refused
        for bad settings, names and fields); a member joins, is given every products event,
        nacks one and gets it again with attempt 2, acks (some positions stale), and is refused
        for what it does not hold; an event nacked maxDeliver times is parked, retried, parked
        again and skipped. With CURVE the members are readers."""
        g = self.group_request
        role = "reader" if self.client.keys else "admin"
        g("Status")
        g("ListGroups")
        products, head = self.topic_events(["products"])
        orders, _ = self.topic_events(["orders"])
        log_event = {e["position"]: e for e in products + orders}

        shop = g("CreateGroup", group="wc-shop", topics=["products"], ackWaitMs=600_000)["result"]
        late = g("CreateGroup", group="wc-late", topics=["posts", "users", "posts"], ackWaitMs=None, maxDeliver=None,
                 maxInFlight=None, **{"from": "head"})["result"]
        g("CreateGroup", group="wc.park_1", topics=["orders"], ackWaitMs=600_000, maxDeliver=2, maxInFlight=1,
          **{"from": 1})
        if (shop["topics"], shop["checkpoint"], shop["maxDeliver"], shop["maxInFlight"], shop["head"]) != (
                ["products"], 0, 5, 64, head):
            raise ScenarioFailure(f"CreateGroup wc-shop (the log's head is {head}): {shop}")
        # `from: null` is `from` left out: the whole log.
        whole = g("CreateGroup", group="wc-null", topics=["users"], **{"from": None})["result"]
        if (whole["checkpoint"], whole["head"]) != (0, head):
            raise ScenarioFailure(f"CreateGroup with from null: {whole}")
        g("DeleteGroup", group="wc-null")
        if (sorted(late["topics"]), late["checkpoint"], late["lag"], late["ackWaitMs"], late["maxDeliver"],
                late["maxInFlight"]) != (["posts", "users"], head, 0, 30_000, 5, 64):
            raise ScenarioFailure(f"CreateGroup wc-late from the head ({head}) with default settings: {late}")
        g("CreateGroup", group="wc-shop", topics=["users"], expect="already_exists")
        for fields in [
            {"group": "wc-x", "topics": ["users"], "ackWaitMs": 99},
            {"group": "wc-x", "topics": ["users"], "ackWaitMs": 86_400_001},
            {"group": "wc-x", "topics": ["users"], "ackWaitMs": "1000"},
            {"group": "wc-x", "topics": ["users"], "maxDeliver": 0},
            {"group": "wc-x", "topics": ["users"], "maxDeliver": 1001},
            {"group": "wc-x", "topics": ["users"], "maxInFlight": 0},
            {"group": "wc-x", "topics": ["users"], "maxInFlight": 10_001},
            {"group": "wc-x", "topics": []},
            {"group": "wc-x", "topics": ["email"]},
            {"group": "wc-x", "topics": "users"},
            {"group": "wc-x"},
            {"group": "wc-x", "topics": ["users"], "from": 0},
            {"group": "wc-x", "topics": ["users"], "from": 2},
            {"group": "wc-x", "topics": ["users"], "from": "tail"},
            {"group": "bad name", "topics": ["users"]},
            {"group": "", "topics": ["users"]},
            {"group": "x" * 65, "topics": ["users"]},
            {"group": "caf\u00e9", "topics": ["users"]},
            {"group": 5, "topics": ["users"]},
            {"topics": ["users"]},
        ]:
            g("CreateGroup", expect="invalid_input", **fields)
        g("CreateGroup", group="wc-x", topics=["users"], ackWaitMs=1000.0, expect="invalid_input",
          note="1000.0: JSON Schema's integer accepts a number with a zero fraction")
        g("CreateGroup", group="wc-x", topics=["users"], start=1, expect="malformed_request")
        g("ShowGroup", group="wc-shop")
        g("ShowGroup", group="wc-x", expect="unknown_group")
        g("ShowGroup", group="bad name", expect="invalid_input")
        g("ShowGroup", expect="invalid_input")
        g("ShowGroup", group="wc-shop", topics=["users"], expect="malformed_request")
        g("ListGroups", group="wc-shop", expect="malformed_request")
        g("Status", verbose=True, expect="malformed_request")
        g("Subscribe", group="wc-shop", expect="unknown_type")
        names = [group["group"] for group in g("ListGroups")["result"]["groups"]]
        if names != sorted(["wc-shop", "wc-late", "wc.park_1"]):
            raise ScenarioFailure(f"ListGroups lists {names}")
        g("Status")

        self.shop_member(role, products, log_event)
        self.parking(role, orders, log_event)

        shown = g("ShowGroup", group="wc-late")["result"]
        if (shown["checkpoint"], shown["pending"]) != (head, 0):
            raise ScenarioFailure(f"wc-late took events from before its creation: {shown}")
        for name in ("wc-shop", "wc.park_1", "wc-late"):
            g("DeleteGroup", group=name)
        g("DeleteGroup", group="wc-shop", expect="unknown_group")
        g("DeleteGroup", group="bad name", expect="invalid_input")
        if g("ListGroups")["result"]["groups"]:
            raise ScenarioFailure("groups are listed after DeleteGroup")

    def shop_member(self, role, products, log_event):
        """One member of wc-shop takes every products event, nacking the first once."""
        member = self.client.member("wc-shop", role)
        ask = functools.partial(self.member_request, member)
        try:
            joined = ask("Join")["result"]
            if joined["group"] != "wc-shop" or not 0 < joined["heartbeatMs"] < joined["memberTimeoutMs"] or \
                    joined["maxInFlight"] != 64:
                raise ScenarioFailure(f"Join wc-shop: {joined}")
            wanted = {e["position"] for e in products}
            first = member.deliveries_until(lambda taken: len(taken) >= 1, "the first delivery of wc-shop")[0]
            ask("Nack", position=first["position"], reason="wire contract: failed on purpose")
            seen, done, previous = [first], set(), None
            while done != wanted:
                batch = member.deliveries_until(
                    lambda taken: len(taken) >= 1 and not member.waiting,
                    f"wc-shop deliveries ({len(done)} of {len(wanted)} events acknowledged)")
                seen += batch
                positions = [d["position"] for d in batch]
                stale = [previous] if previous else []
                result = ask("Ack", positions=positions + stale)["result"]
                if (result["acked"], result["stale"]) != (positions, stale):
                    raise ScenarioFailure(f"Ack {positions} and the acknowledged {stale}: {result}")
                done.update(positions)
                previous = positions[-1]
            self.check_deliveries("wc-shop", seen, log_event)
            if [d["attempt"] for d in seen if d["position"] == first["position"]][:2] != [1, 2]:
                raise ScenarioFailure(f"the nacked event at {first['position']} did not come again with attempt 2")
            result = ask("Ack", positions=[previous, 10**9])["result"]
            if (result["acked"], result["stale"]) != ([], [previous, 10**9]):
                raise ScenarioFailure(f"an Ack of positions the member does not hold: {result}")
            ask("Nack", position=first["position"], expect="stale_delivery")
            ask("Heartbeat")
            # A member joining again stays one member; asking for more than the group allows
            # gets the group's maxInFlight, for fewer, what it asked for.
            if ask("Join", maxInFlight=10_000)["result"]["maxInFlight"] != 64:
                raise ScenarioFailure("Join with maxInFlight above the group's was not held to the group's")
            if ask("Join", maxInFlight=2)["result"]["maxInFlight"] != 2:
                raise ScenarioFailure("Join with maxInFlight 2 did not hold the member to 2")
            shown = self.group_request("ShowGroup", group="wc-shop")["result"]
            # Redeliveries beyond the nacked one come only if the member went silent for its
            # timeout (a stalled machine): counted, not expected.
            expected = {"checkpoint": max(wanted), "pending": 0, "inFlight": 0, "parked": 0, "members": 1,
                        "delivered": len(wanted) + shown["redelivered"], "acked": len(wanted), "nacked": 1}
            got = {key: shown[key] for key in expected}
            if got["checkpoint"] >= max(wanted):
                got["checkpoint"] = max(wanted)  # the checkpoint may pass the last products event
            if got != expected or shown["redelivered"] < 1:
                raise ScenarioFailure(f"ShowGroup wc-shop after every event was acknowledged: {shown}")

            stranger = self.client.member("wc-shop", role)
            s = functools.partial(self.member_request, stranger)
            try:
                s("Heartbeat", expect="not_a_member")
                result = s("Ack", positions=[first["position"]])["result"]
                if result["stale"] != [first["position"]]:
                    raise ScenarioFailure(f"an Ack from a connection that is no member: {result}")
                s("Nack", position=first["position"], expect="stale_delivery")
                s("Leave")  # not a member: nothing changes
                s("Join", group="wc-x", expect="unknown_group")
                s("Heartbeat", group="wc-x", expect="unknown_group")
                for fields in [{"positions": []}, {"positions": [0]}, {"positions": ["1"]}, {"positions": "1"},
                               {"positions": [1.5]}, {}, {"positions": [1] * 10_001}, {"positions": [1], "group": 7},
                               {"positions": [1], "group": OMIT}]:
                    s("Ack", expect="invalid_input", **fields)
                for fields in [{"position": 0}, {"position": "3"}, {}, {"position": 3, "reason": ""},
                               {"position": 3, "reason": 5}, {"position": 3, "group": "bad name"}]:
                    s("Nack", expect="invalid_input", **fields)
                s("Nack", position=3, reason="r" * 1001, expect="invalid_input",
                  note="1001 characters: the schema leaves the reason's length to the service, which counts "
                       "grapheme clusters")
                s("Join", group=OMIT, expect="invalid_input")
                s("Join", extra=1, expect="malformed_request")
                for held in (0, 10_001, "1", 1.5):
                    s("Join", maxInFlight=held, expect="invalid_input")
                s("Ack", positions=[1], position=1, expect="malformed_request")
            finally:
                stranger.close()
            ask("Leave")
            ask("Heartbeat", expect="not_a_member")
            ask("Join")
            ask("Leave")
        finally:
            member.close()

    def parking(self, role, orders, log_event):
        """wc.park_1 (orders, maxDeliver 2, maxInFlight 1): an event nacked twice is parked and
        its stream waits; retried, it comes back with attempt 1; parked again, it is skipped."""
        if len(orders) < 3:
            raise ScenarioFailure(f"the parking check needs three orders, the log has {len(orders)}")
        g = self.group_request
        member = self.client.member("wc.park_1", role)
        ask = functools.partial(self.member_request, member)

        def one(what):
            return member.deliveries_until(lambda taken: len(taken) >= 1, what)[0]

        seen, acked = [], set()

        def until(position, what):
            """Deliveries until `position` comes again. A stream waits for its Nack to be durable
            and the others need not, so another stream's event may come first: it is acknowledged."""
            while True:
                taken = one(what)
                seen.append(taken)
                if taken["position"] == position:
                    return taken
                ask("Ack", positions=[taken["position"]])
                acked.add(taken["position"])

        try:
            ask("Join")
            first = one("the first delivery of wc.park_1")
            poison = first["position"]
            seen.append(first)
            ask("Nack", position=poison, reason="poison")
            again = until(poison, "the redelivery of a nacked event")
            if again["attempt"] != 2:
                raise ScenarioFailure(f"after a Nack the member got {again}, not {poison} with attempt 2")
            ask("Nack", position=poison, reason="poison again")
            held = one("the delivery after a parked event")
            seen.append(held)
            if held["position"] == poison:
                raise ScenarioFailure(f"the event at {poison} was delivered a third time with maxDeliver 2")
            parked = g("ListParked", group="wc.park_1")["result"]["events"]
            if [(e["position"], e["attempts"], e["lastFailure"]) for e in parked] != [(poison, 2, "poison again")] \
                    or parked[0]["event"] != log_event[poison]:
                raise ScenarioFailure(f"ListParked wc.park_1: {parked}")
            g("ListParked", group="wc.park_1", limit=1)
            g("ListParked", group="wc.park_1", limit=None)
            for limit in (0, 1001, "5"):
                g("ListParked", group="wc.park_1", limit=limit, expect="invalid_input")
            g("ListParked", group="wc-x", expect="unknown_group")
            if g("ShowGroup", group="wc.park_1")["result"]["parked"] != 1:
                raise ScenarioFailure("ShowGroup wc.park_1 does not count its parked event")
            g("SkipParked", group="wc.park_1", position=held["position"], expect="not_found")
            g("RetryParked", group="wc.park_1", position=poison)
            ask("Ack", positions=[held["position"]])
            acked.add(held["position"])
            retried = until(poison, "the retried event")
            if retried["attempt"] != 1:
                raise ScenarioFailure(f"a retried parked event came as {retried}, not {poison} with attempt 1")
            ask("Nack", position=poison)
            until(poison, "the redelivery of a retried event")
            ask("Nack", position=poison)
            # The orders not yet acknowledged go on while the event is parked again.
            for _ in {e["position"] for e in orders} - acked - {poison}:
                later = one("a delivery after the event was parked again")
                seen.append(later)
                if later["position"] == poison:
                    raise ScenarioFailure(f"the event at {poison} was delivered again once parked")
                ask("Ack", positions=[later["position"]])
                acked.add(later["position"])
            parked = g("ListParked", group="wc.park_1")["result"]["events"]
            if [(e["position"], e["lastFailure"]) for e in parked] != [(poison, "nacked")]:
                raise ScenarioFailure(f"ListParked wc.park_1 after a Nack without a reason: {parked}")
            g("SkipParked", group="wc.park_1", position=poison)
            g("SkipParked", group="wc.park_1", position=poison, expect="not_found")
            g("RetryParked", group="wc.park_1", position=poison, expect="not_found")
            g("RetryParked", group="wc-x", position=poison, expect="unknown_group")
            g("RetryParked", group="wc.park_1", position=0, expect="invalid_input")
            g("SkipParked", group="wc.park_1", expect="invalid_input")
            self.check_deliveries("wc.park_1", seen, log_event, retried={poison})
            shown = g("ShowGroup", group="wc.park_1")["result"]
            last = max(e["position"] for e in orders)
            if (shown["pending"], shown["parked"], shown["inFlight"]) != (0, 0, 0) or shown["checkpoint"] < last:
                raise ScenarioFailure(f"ShowGroup wc.park_1 after the skip and the acks: {shown}")
            ask("Leave")
        finally:
            member.close()

    @staticmethod
    def check_deliveries(group, deliveries, log_event, retried=frozenset()):
        """Each delivery is the log's event at its position, of the group; within a stream in
        position order; each event's attempts count 1, 2, 3 ... (from 1 again after RetryParked)."""
        by_stream, attempts = {}, {}
        for delivery in deliveries:
            position = delivery["position"]
            if delivery["group"] != group or delivery["event"] != log_event.get(position):
                raise ScenarioFailure(f"a delivery of {group} is not the log's event at {position}: {delivery}")
            stream = by_stream.setdefault(delivery["event"]["stream"], [])
            if stream and stream[-1] > position:
                raise ScenarioFailure(f"{group} delivered {position} after {stream[-1]} of the same stream")
            stream.append(position)
            attempts.setdefault(position, []).append(delivery["attempt"])
        for position, counted in attempts.items():
            steps = zip([0] + counted, counted)
            if not all(now == before + 1 or (now == 1 and position in retried) for before, now in steps):
                raise ScenarioFailure(f"{group} delivered {position} with attempts {counted}")

    def parked_queries_flood(self):
        """More queries waiting for a position than a query process keeps (10,000): the rest
        answer `unavailable`, the waiting ones `timeout` when their time is up."""
        extra = 5
        documents, expect = [], {}
        for n in range(MAXIMUM_PARKED_QUERIES + extra):
            document = {"id": f"park-{n}", "type": "GetUser", "data": {"userId": "bob"},
                        "minPosition": 10**12, "timeoutMs": 3000}
            documents.append(document)
            expect[document["id"]] = Expectation("timeout|unavailable", True, "")
        replies = self.client.flood("queries", documents, "parked-query flood", expect, deadline_seconds=30)
        codes = {}
        for reply in replies:
            code = (reply.get("error") or {}).get("code")
            codes[code] = codes.get(code, 0) + 1
        if codes.get("unavailable", 0) < extra or set(codes) != {"unavailable", "timeout"}:
            raise ScenarioFailure(
                f"parked-query flood: expected timeouts and at least {extra} unavailable, got {codes}")

    def read_whole_log(self):
        """Reads the log page by page, each page from the last `next`, until next > head."""
        position, events = 1, []
        while True:
            page = self.read_log(**{"from": position, "limit": 7})
            events += page["events"]
            if page["next"] > page["head"]:
                break
            position = page["next"]
        positions = [e["position"] for e in events]
        if positions != list(range(1, len(events) + 1)):
            raise ScenarioFailure(f"ReadLog pages have holes or repeats: {positions}")
        self.log_events = events

    def collect_feed(self):
        """Waits until the feed has delivered every event of a topic that the log holds."""
        wanted = {e["position"] for e in self.log_events
                  if not e["stream"].startswith("email-") and e["position"] >= self.first_feed_position}
        deadline = time.monotonic() + 5
        while True:
            self.feed.drain(wait_ms=100)
            got = set()
            for frames in self.feed.messages:
                try:
                    got.add(json.loads(frames[-1])["position"])
                except (ValueError, KeyError, TypeError, IndexError):
                    pass
            if wanted <= got or time.monotonic() > deadline:
                break
        missing = sorted(wanted - got)
        if missing:
            raise ScenarioFailure(f"the feed never delivered the events at positions {missing}")

    def damaged_log(self):
        """`internal`: an event whose payload is not JSON, written into the log file behind the
        worker's back (a damaged log); reading it back through ReadLog must answer `internal`."""
        head = self.log_events[-1]["position"]
        with sqlite3.connect(self.service.event_log_path, timeout=10) as db:
            columns = [row[1] for row in db.execute("PRAGMA table_info(events)")]
            last = dict(zip(columns, db.execute("SELECT * FROM events WHERE position = ?", (head,)).fetchone()))
            last.update({"position": head + 1, "event_id": str(uuid.uuid4()), "stream": "user-damaged",
                         "category": "user", "version": 1, "type": "UserRegistered", "data": "{not json",
                         "command_id": "damage", "correlation_id": "damage", "causation_id": "damage"})
            names = ", ".join(columns)
            marks = ", ".join("?" for _ in columns)
            db.execute(f"INSERT INTO events ({names}) VALUES ({marks})", [last[c] for c in columns])
        self.read_log(expect="internal", **{"from": head + 1})
