"""Validates everything captured against its schema, names the kind of every message,
and checks that each kind has a schema and that every kind that should have been seen was.

Kinds: `request command:<type>`, `request query:<type>`, `request ReadLog`, `request
Status`, `request Rebuild`, `request group:<type>`; `reply command:ok`, `reply query:<type>`,
`reply log:ok`, `reply worker-status`, `reply query-status`, `reply rebuild`, `reply
group:<type>` (and `result group:<type>`, its result alone), `reply groups-status`, `reply
<socket>:error:<code>`; `event:<type>` (every envelope in a command or ReadLog reply);
`feed:<type>`; `group:Deliver` (what a member of a consumer group receives).
"""

import collections
import json

from strictness import Sample, required_paths

COMMAND_TYPES = ["RegisterUser", "UpdateUserProfile", "ChangeSubscription", "DeleteUser", "ForgetUser", "CreatePost",
                 "EditPost", "DeletePost", "AddProduct", "UpdateProduct", "RestockProduct", "RemoveProduct",
                 "PurchaseProduct"]
QUERY_TYPES = ["GetUser", "ListUsers", "GetPost", "ListPosts", "GetProduct", "ListProducts", "ListOrders"]
EVENT_TYPES = ["UserRegistered", "UserProfileUpdated", "SubscriptionChanged", "UserDeleted", "UserForgotten",
               "PostCreated", "PostEdited", "PostDeleted", "ProductAdded", "ProductUpdated", "ProductRestocked",
               "ProductRemoved", "ProductPurchased", "OrderPlaced", "EmailClaimed", "EmailReleased"]
FEED_EVENT_TYPES = EVENT_TYPES[:14]
# The fields a forgotten user's events carry as null.
PERSONAL_FIELDS = ["name", "email", "gender", "birthday"]
GROUP_MEMBER_TYPES = ["Join", "Heartbeat", "Ack", "Nack", "Leave"]
GROUP_ADMIN_TYPES = ["CreateGroup", "ListGroups", "ShowGroup", "DeleteGroup", "ListParked", "RetryParked",
                     "SkipParked"]
GROUP_TYPES = GROUP_MEMBER_TYPES + GROUP_ADMIN_TYPES  # and Status, which every request socket serves
TOPIC_OF_CATEGORY = {"user": "users", "post": "posts", "product": "products", "order": "orders"}

# Error codes each socket must have been made to answer. `unauthorized` is on no list: it
# is reserved for CURVE authentication, which is not built (see scenario.py).
EXPECTED_ERRORS = {
    "command": ["invalid_input", "not_found", "already_exists", "email_taken", "product_not_available",
                "insufficient_stock", "wrong_expected_version", "unknown_type", "malformed_request"],
    "query": ["invalid_input", "not_found", "unknown_type", "malformed_request", "timeout", "unavailable"],
    "log": ["invalid_input", "unknown_type", "malformed_request", "internal"],
    "group": ["invalid_input", "not_found", "already_exists", "unknown_type", "malformed_request", "unknown_group",
              "stale_delivery", "not_a_member"],
}
UNREACHABLE_CODES = {"unauthorized": "only with CURVE (run with --curve)"}
SOCKET_KIND = {"commands": "command", "queries": "query", "log": "log", "groups": "group"}


def expected_kinds() -> list[str]:
    kinds = [f"request command:{t}" for t in COMMAND_TYPES] + [f"request query:{t}" for t in QUERY_TYPES]
    kinds += ["request ReadLog", "request Status", "request Rebuild"]
    kinds += ["reply command:ok", "reply log:ok", "reply worker-status", "reply query-status", "reply rebuild"]
    kinds += [f"reply query:{t}" for t in QUERY_TYPES]
    kinds += [f"{part} group:{t}" for part in ("request", "reply", "result") for t in GROUP_TYPES]
    kinds += ["reply groups-status", "group:Deliver"]
    kinds += [f"reply {socket}:error:{code}" for socket, codes in EXPECTED_ERRORS.items() for code in codes]
    kinds += [f"event:{t}" for t in EVENT_TYPES] + [f"feed:{t}" for t in FEED_EVENT_TYPES]
    kinds += [f"via {socket} {via}" for socket in ("commands", "queries", "log", "groups")
              for via in ("REQ", "DEALER")]
    return kinds


class CaptureCheck:
    def __init__(self, schemas, curve: bool = False):
        self.schemas = schemas
        self.curve = curve  # with CURVE, every socket must also have answered unauthorized
        self.failures: list[str] = []
        self.counts = collections.Counter()
        self.samples: dict[str, Sample] = {}
        self.gaps: list[str] = []  # requests refused by the service for reasons no schema can express
        self.leniencies: list[str] = []  # requests the schema refuses but the service accepts
        self._cache: dict = {}
        self._sample_sizes: dict = {}

    # ------------------------------------------------------------------ validation
    def _validate(self, schema: str, instance, what: str, cache_key=None) -> bool:
        if not self.schemas.has(schema):
            self.failures.append(f"{what}: no schema {schema} for it")
            return False
        if cache_key is not None and (schema, cache_key) in self._cache:
            errors = self._cache[(schema, cache_key)]
        else:
            errors = self.schemas.errors(schema, instance)
            if cache_key is not None:
                self._cache[(schema, cache_key)] = errors
        if errors:
            shown = json.dumps(instance, ensure_ascii=False)[:300]
            self.failures.append(f"{what} fails {schema}: {'; '.join(errors[:4])}\n    message: {shown}")
        return not errors

    def _sample(self, kind: str, schema: str, instance):
        """Keeps the smallest message of a kind whose arrays all have an element, for mutations."""
        size = len(json.dumps(instance)) + (0 if _arrays_filled(instance) else 10**9)
        if kind not in self._sample_sizes or size < self._sample_sizes[kind]:
            self._sample_sizes[kind] = size
            self.samples[kind] = Sample(kind, schema, instance, [])

    def finish_samples(self) -> list[Sample]:
        return [Sample(kind, s.schema, s.instance, required_paths(kind, s.instance))
                for kind, s in sorted(self.samples.items())]

    def check_exchange(self, exchange):
        socket, request, reply = exchange.socket, exchange.request, exchange.reply
        what = f"[{exchange.label} via {exchange.via}]"
        self.counts[f"via {socket} {exchange.via.split()[0]}"] += 1
        # Requests flooded in identical but for the id are validated once per shape.
        flooded = exchange.label == "parked-query flood"

        # --- the request
        request_type = request.get("type") if isinstance(request, dict) else None
        request_schema = _request_schema(socket, request_type)
        if exchange.via.endswith("(raw frames)") or request is None:
            self.counts["request (not one JSON request frame)"] += 1
        else:
            key = _shape(request) if flooded else None
            if flooded and not (isinstance(request.get("id"), str) and request["id"]):
                self.failures.append(f"{what}: flooded request without a string id")
            errors = self._cache.get((request_schema, key)) if key is not None else None
            if errors is None:
                errors = self.schemas.errors(request_schema, request)
                if key is not None:
                    self._cache[(request_schema, key)] = errors
            kind = _request_kind(socket, request_type)
            if exchange.expect.request_valid and errors:
                self.failures.append(f"{what} request fails {request_schema}: {'; '.join(errors[:4])}\n"
                                     f"    request: {json.dumps(request, ensure_ascii=False)[:300]}")
            elif not exchange.expect.request_valid and not errors:
                self.failures.append(f"{what} schema {request_schema} accepts a request the service refuses "
                                     f"({reply.get('error', {}).get('code')}): too permissive\n"
                                     f"    request: {json.dumps(request, ensure_ascii=False)[:300]}")
            if reply.get("ok") is True and ":" in kind:
                family, request_type = kind.split(" ", 1)[1].split(":", 1)
                data_schema = {"command": f"commands/{request_type}.schema.json",
                               "group": f"groups/{request_type}.request.schema.json"}.get(
                                   family, f"queries/{request_type}.data.schema.json")
                if not self.schemas.has(data_schema):
                    self.failures.append(f"{what} the service accepted a {kind}, which has no schema {data_schema}")
            if exchange.expect.request_valid:
                self.counts[kind] += 1
                if not flooded:
                    self._sample(kind, request_schema, request)
                if exchange.expect.note and reply.get("ok") is not True:
                    self.gaps.append(f"{exchange.label}: {exchange.expect.note}")
            else:
                self.counts[f"{kind} (refused)"] += 1
                if exchange.expect.note and reply.get("ok") is True:
                    self.leniencies.append(f"{exchange.label}: {exchange.expect.note}")

        # --- the reply
        wanted = exchange.expect.reply.split("|")
        got = "ok" if reply.get("ok") is True else (reply.get("error") or {}).get("code")
        if got not in wanted:
            self.failures.append(f"{what} expected {exchange.expect.reply}, got {json.dumps(reply)[:300]}")
        rid = reply.get("id")
        sent_id = request.get("id") if isinstance(request, dict) else None
        if rid is not None and rid != sent_id:
            self.failures.append(f"{what} reply id {rid!r} is not the request's id {sent_id!r}")
        if rid is None and got != "malformed_request":
            self.failures.append(
                f"{what} reply id is null, but the request was not malformed: {json.dumps(reply)[:300]}")

        reply_schema, reply_kind = _reply_schema_and_kind(socket, request_type, reply)
        if reply_schema is None:
            self.failures.append(f"{what} a reply of no known kind (no schema for it): {json.dumps(reply)[:300]}")
            return
        if reply.get("ok") is False:
            code = (reply.get("error") or {}).get("code")
            if code not in self.schemas.enum_of("error.schema.json", "properties", "code"):
                self.failures.append(f"{what} error code {code!r} has no schema (not in error.schema.json)")
            self._validate("error-reply.schema.json", reply, what, _shape(reply) if flooded else None)
        valid = self._validate(reply_schema, reply, what, _shape(reply) if flooded else None)
        self.counts[reply_kind] += 1
        if valid and not flooded:
            self._sample(reply_kind, reply_schema, reply)
        if reply.get("ok") is True and socket == "queries" and request_type in QUERY_TYPES:
            self._validate(f"queries/{request_type}.result.schema.json", reply["result"], what + " result")
        if reply.get("ok") is True and socket == "groups" and request_type in GROUP_TYPES:
            result_schema = f"groups/{request_type}.result.schema.json"
            result_kind = f"result group:{request_type}"
            self.counts[result_kind] += 1
            if self._validate(result_schema, reply["result"], what + " result"):
                self._sample(result_kind, result_schema, reply["result"])
        if reply.get("ok") is True and "events" in reply:
            self._events(reply, what)
            if socket == "commands" and reply["events"] and reply["events"][-1]["position"] != reply["position"]:
                self.failures.append(f"{what} position {reply['position']} is not its last event's")

    def _events(self, reply, what):
        for envelope in reply["events"]:
            event_type = envelope.get("type") if isinstance(envelope, dict) else None
            kind = f"event:{event_type}"
            if not self.schemas.has(f"events/{event_type}.schema.json"):
                self.failures.append(f"{what} event type {event_type!r} has no schema events/{event_type}.schema.json")
            self.counts[kind] += 1
            self._sample(kind, "event-envelope.schema.json", envelope)

    # ------------------------------------------------------------------ consumer groups
    def check_delivery(self, delivery):
        """A message a member received unasked: one Deliver of its group, the envelope's position."""
        what = f"[Deliver {delivery.frames[-1][:80]!r} to {delivery.label}]"
        message = delivery.message
        self.counts["group:Deliver"] += 1
        if self._validate("group-delivery.schema.json", message, what):
            self._sample("group:Deliver", "group-delivery.schema.json", message)
        else:
            return
        if message["position"] != message["event"]["position"]:
            self.failures.append(f"{what} position {message['position']} is not its event's "
                                 f"{message['event']['position']}")

    # ------------------------------------------------------------------ the feed
    def check_feed(self, messages: list, log_events: list):
        by_position = {e["position"]: e for e in log_events}
        last_of_topic: dict = {}
        previous_position = 0
        for frames in messages:
            what = f"[feed message {frames[-1][:80]!r}]"
            if len(frames) != 2:
                self.failures.append(f"{what} has {len(frames)} frames, expected [topic][envelope]")
                continue
            try:
                topic = frames[0].decode("utf-8")
                envelope = json.loads(frames[1].decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as error:
                self.failures.append(f"{what} is not a UTF-8 topic and a JSON envelope: {error}")
                continue
            event_type = envelope.get("type") if isinstance(envelope, dict) else None
            if topic not in self.schemas.enum_of("common.schema.json", "$defs", "topic"):
                self.failures.append(f"{what} topic {topic!r} has no schema (not in common topic)")
            if not self.schemas.has(f"events/{event_type}.schema.json"):
                self.failures.append(f"{what} event type {event_type!r} has no schema")
            instance = [topic, envelope]
            kind = f"feed:{event_type}"
            self.counts[kind] += 1
            if self._validate("feed-message.schema.json", instance, what):
                self._sample(kind, "feed-message.schema.json", instance)
            else:
                continue
            position = envelope["position"]
            if position <= previous_position:
                self.failures.append(f"{what} position {position} after {previous_position}: not in position order")
            previous_position = position
            logged = dict(by_position.get(position) or {})
            feed_fields = {k: v for k, v in envelope.items() if k != "previous"}
            if logged.get("data", {}).get("forgotten") is True:
                # Published before its user was forgotten: the same event, its personal values since gone.
                data = dict(feed_fields["data"])
                for field in PERSONAL_FIELDS:
                    if field in data:
                        data[field] = None
                data["forgotten"] = True
                feed_fields["data"] = data
            if logged != feed_fields:
                self.failures.append(f"{what} differs from the log's event at {position}: {logged}")
            # `previous` is a bound: no event of a topic between its mark and this message.
            for t, mark in envelope["previous"].items():
                if mark >= position:
                    self.failures.append(f"{what} previous.{t} = {mark} is not below the position {position}")
                newest = max((p for p in by_position if p < position
                              and TOPIC_OF_CATEGORY.get(by_position[p]["stream"].split("-", 1)[0]) == t), default=0)
                if newest > mark:
                    self.failures.append(f"{what} previous.{t} = {mark}, but the log has a {t} event at {newest}")
            last_of_topic[topic] = position

    # ------------------------------------------------------------------ coverage
    def check_coverage(self):
        extra = [f"reply {socket}:error:unauthorized" for socket in ("command", "query", "log", "group")] \
            if self.curve else []
        for kind in expected_kinds() + extra:
            if self.counts[kind] == 0:
                self.failures.append(f"coverage: no {kind} was seen")
        error_codes = self.schemas.enum_of("error.schema.json", "properties", "code")
        seen_codes = {k.rsplit(":", 1)[1] for k in self.counts if ":error:" in k}
        for code in error_codes:
            if code not in seen_codes and (self.curve or code not in UNREACHABLE_CODES):
                self.failures.append(f"coverage: error code {code} was never answered")


def _arrays_filled(instance) -> bool:
    if isinstance(instance, dict):
        return all(_arrays_filled(v) for v in instance.values())
    if isinstance(instance, list):
        return bool(instance) and all(_arrays_filled(v) for v in instance)
    return True


def _shape(document):
    """A document with its id blanked: requests and replies of a flood differ only there."""
    if not isinstance(document, dict):
        return json.dumps(document, sort_keys=True)
    return json.dumps({**document, "id": "<id>"}, sort_keys=True)


def _request_schema(socket: str, request_type):
    if request_type == "Status" and socket in ("commands", "queries", "groups"):
        return "status-request.schema.json"
    if request_type == "Rebuild" and socket == "queries":
        return "rebuild-request.schema.json"
    return {"commands": "command-request.schema.json", "queries": "query-request.schema.json",
            "log": "log-read-request.schema.json", "groups": "group-request.schema.json"}[socket]


def _request_kind(socket: str, request_type) -> str:
    if request_type in ("Status", "Rebuild") and socket in ("commands", "queries"):
        return f"request {request_type}"
    if request_type == "Status" and socket == "groups":
        return "request Status"
    if socket == "log":
        return "request ReadLog"
    return f"request {SOCKET_KIND[socket]}:{request_type}"


def _reply_schema_and_kind(socket: str, request_type, reply):
    ok = reply.get("ok")
    if ok is not True and ok is not False:
        return None, None
    if ok is False:
        code = (reply.get("error") or {}).get("code")
        kind = f"reply {SOCKET_KIND[socket]}:error:{code}"
    if socket == "commands":
        if request_type == "Status" and ok:
            return "worker-status-reply.schema.json", "reply worker-status"
        return "command-reply.schema.json", (kind if ok is False else "reply command:ok")
    if socket == "queries":
        if request_type == "Status" and ok:
            return "query-status-reply.schema.json", "reply query-status"
        if request_type == "Rebuild" and ok:
            return "rebuild-reply.schema.json", "reply rebuild"
        if ok is False:
            return "query-reply.schema.json", kind
        if request_type not in QUERY_TYPES:
            return None, None
        return "query-reply.schema.json", f"reply query:{request_type}"
    if socket == "groups":
        if request_type == "Status" and ok:
            return "groups-status-reply.schema.json", "reply groups-status"
        if ok is False:
            return "group-reply.schema.json", kind
        if request_type not in GROUP_TYPES:
            return None, None
        return "group-reply.schema.json", f"reply group:{request_type}"
    return "log-read-reply.schema.json", (kind if ok is False else "reply log:ok")
