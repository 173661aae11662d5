"""Proof that the schemas are strict, not merely that real messages pass them.

1. Every schema file rejects `{}`, `[]` and `"x"` (except the `data` of the three list
   queries, whose fields are all optional: they must accept `{}` and reject the rest).
2. For one real message of every kind captured (the smallest that has an element in each
   of its arrays), mutated copies must be rejected:
   - an unknown field added to each object (every object of the contract is closed);
   - each value replaced by one of another JSON type;
   - each choice replaced by a value outside its list (type, gender, code, state, ...);
   - each id replaced by one with a space in it;
   - each required field dropped, and the only field of an update dropped.
   The required fields below restate schemas/README.md and docs/architecture.md
   independently of the schema files, so a schema that forgot one is caught.
"""

import copy
import dataclasses
import json

LIST_QUERY_DATA = {"queries/ListUsers.data.schema.json", "queries/ListPosts.data.schema.json",
                   "queries/ListProducts.data.schema.json"}

COMMAND_REQUIRED = {
    "RegisterUser": ["userId", "name", "email"],
    "UpdateUserProfile": ["userId"],
    "ChangeSubscription": ["userId", "subscription"],
    "DeleteUser": ["userId"],
    "CreatePost": ["postId", "authorId", "title", "content"],
    "EditPost": ["postId"],
    "DeletePost": ["postId"],
    "AddProduct": ["productId", "name", "price", "category", "stock"],
    "UpdateProduct": ["productId"],
    "RestockProduct": ["productId", "quantity"],
    "RemoveProduct": ["productId"],
    "PurchaseProduct": ["orderId", "userId", "productId", "quantity"],
}
# An update must name at least one of these (commands and the events they append).
UPDATE_FIELDS = {
    "UpdateUserProfile": ["name", "email", "gender", "birthday"],
    "UserProfileUpdated": ["name", "email", "gender", "birthday"],
    "EditPost": ["title", "content"],
    "PostEdited": ["title", "content"],
    "UpdateProduct": ["name", "price", "category"],
    "ProductUpdated": ["name", "price", "category"],
}
EVENT_REQUIRED = {
    "UserRegistered": ["userId", "name", "email", "gender", "subscription"],
    "UserProfileUpdated": ["userId"],
    "SubscriptionChanged": ["userId", "from", "to"],
    "UserDeleted": ["userId"],
    "EmailClaimed": ["email", "userId"],
    "EmailReleased": ["email", "userId"],
    "PostCreated": ["postId", "authorId", "title", "content"],
    "PostEdited": ["postId"],
    "PostDeleted": ["postId"],
    "ProductAdded": ["productId", "name", "price", "category", "stock"],
    "ProductUpdated": ["productId"],
    "ProductRestocked": ["productId", "quantity", "stock"],
    "ProductRemoved": ["productId"],
    "ProductPurchased": ["productId", "orderId", "userId", "quantity", "stock"],
    "OrderPlaced": ["orderId", "userId", "productId", "quantity", "unitPrice", "totalPrice", "status"],
}
QUERY_REQUIRED = {"GetUser": ["userId"], "GetPost": ["postId"], "GetProduct": ["productId"], "ListOrders": ["userId"],
                  "ListUsers": [], "ListPosts": [], "ListProducts": []}
VIEW_REQUIRED = {
    "user": ["userId", "name", "email", "gender", "subscription", "canAccessPremiumFeatures", "registeredAt",
             "updatedAt"],
    "post": ["postId", "authorId", "title", "content", "createdAt", "updatedAt"],
    "product": ["productId", "name", "price", "category", "stock", "isAvailable", "updatedAt"],
    "order": ["orderId", "userId", "productId", "quantity", "unitPrice", "totalPrice", "status", "placedAt"],
}
QUERY_VIEW = {"GetUser": "user", "ListUsers": "user", "GetPost": "post", "ListPosts": "post",
              "GetProduct": "product", "ListProducts": "product", "ListOrders": "order"}
ENVELOPE_REQUIRED = ["eventId", "position", "stream", "version", "type", "data", "metadata", "recordedAt",
                     "metadata.commandId", "metadata.correlationId", "metadata.causationId"]
DETAILS_REQUIRED = {
    "invalid_input": ["field"], "not_found": ["entity", "id"], "already_exists": ["entity", "id"],
    "email_taken": ["field"], "product_not_available": ["productId", "available"],
    "insufficient_stock": ["productId", "requested", "available"], "wrong_expected_version": ["cause"],
    "unknown_type": ["type"], "timeout": ["minPosition", "position"],
}
WORKER_STATUS_REQUIRED = ["result.role", "result.head", "result.uptimeSeconds", "result.commands", "result.batches",
                          "result.published", "result.commands.accepted", "result.commands.rejected",
                          "result.commands.retries", "result.batches.count", "result.batches.largest",
                          "result.batches.last", "result.batches.meanSize"]
QUERY_STATUS_REQUIRED = ["result.role", "result.checkpoint", "result.head", "result.lag", "result.generation",
                         "result.uptimeSeconds", "result.eventsApplied", "result.holesDetected",
                         "result.queriesAnswered", "result.queriesWaiting", "result.rebuild", "result.rebuild.state"]
# Consumer groups (schemas/README.md, "Consumer groups"): the fields each request needs, and
# each result's fields.
GROUP_REQUEST_REQUIRED = {
    "Join": ["group"], "Heartbeat": ["group"], "Ack": ["group", "positions"], "Nack": ["group", "position"],
    "Leave": ["group"], "CreateGroup": ["group", "topics"], "ListGroups": [], "ShowGroup": ["group"],
    "DeleteGroup": ["group"], "ListParked": ["group"], "RetryParked": ["group", "position"],
    "SkipParked": ["group", "position"],
}
GROUP_FIELDS = ["group", "topics", "ackWaitMs", "maxDeliver", "maxInFlight", "createdAt", "checkpoint", "head", "lag",
                "members", "inFlight", "pending", "parked", "delivered", "redelivered", "acked", "nacked", "expired"]
GROUP_RESULT_REQUIRED = {
    "Join": ["group", "heartbeatMs", "memberTimeoutMs"], "Heartbeat": ["group"], "Ack": ["group", "acked", "stale"],
    "Nack": ["group", "position"], "Leave": ["group"], "CreateGroup": GROUP_FIELDS, "ListGroups": ["groups"],
    "ShowGroup": GROUP_FIELDS, "DeleteGroup": ["group", "deleted"], "ListParked": ["group", "events"],
    "RetryParked": ["group", "position"], "SkipParked": ["group", "position"],
}
PARKED_EVENT_REQUIRED = ["position", "stream", "attempts", "lastFailure", "event"]
DELIVER_REQUIRED = ["type", "group", "position", "attempt", "event"]
GROUP_DETAILS_REQUIRED = {"already_exists": ["group"], "not_found": ["group", "position"],
                          "unknown_group": ["group"], "stale_delivery": ["group", "position"],
                          "not_a_member": ["group"]}
# Values outside each closed list of choices (and a group name with a space, outside its pattern).
ENUM_BAD = {"type": "NoSuchType", "gender": "robot", "subscription": "gold", "category": "toys",
            "status": "shipped", "code": "no_such_code", "state": "sleeping", "role": "cook", "cause": "because",
            "entity": "thing", "from": "gold", "to": "gold", "topics": "email", "action": "fly",
            "process": "worker", "group": "bad group"}


@dataclasses.dataclass
class Sample:
    kind: str
    schema: str
    instance: object
    required: list  # dotted paths ("events.0.data.userId"), or tuples for array roots


def top_level_failures(schemas) -> list[str]:
    failures = []
    for name in schemas.documents:
        for probe in ({}, [], "x"):
            accepted = schemas.accepts(name, probe)
            should_accept = probe == {} and name in LIST_QUERY_DATA
            if accepted != should_accept:
                failures.append(f"schema {name} {'accepts' if accepted else 'rejects'} {json.dumps(probe)}")
    return failures


def required_paths(kind: str, instance) -> list:
    """The fields a message of this kind must have, restated from schemas/README.md."""
    paths = []
    if kind.startswith("request command:"):
        paths = ["id", "type", "data"] + ["data." + f for f in COMMAND_REQUIRED.get(instance.get("type"), [])]
    elif kind.startswith("request query:"):
        fields = QUERY_REQUIRED.get(instance.get("type"), [])
        paths = ["id", "type"] + (["data"] if fields else []) + ["data." + f for f in fields]
    elif kind == "request ReadLog":
        paths = ["id", "type", "from"]
    elif kind in ("request Status", "request Rebuild"):
        paths = ["id", "type"]
    elif kind.startswith("request group:"):
        paths = ["id", "type"] + GROUP_REQUEST_REQUIRED.get(instance.get("type"), [])
    elif ":error:" in kind:
        code = instance["error"]["code"]
        paths = ["id", "ok", "error", "error.code", "error.message"]
        details = GROUP_DETAILS_REQUIRED if kind.startswith("reply group:") else DETAILS_REQUIRED
        if code in details or code in DETAILS_REQUIRED:
            paths += ["error.details"] + ["error.details." + f for f in details.get(code, DETAILS_REQUIRED.get(code))]
    elif kind.startswith("reply group:"):
        paths = ["id", "ok", "result"]
    elif kind.startswith("result group:"):
        paths = _group_result_paths("", kind.split(":", 1)[1], instance)
    elif kind == "reply groups-status":
        paths = ["id", "ok", "result", "result.role", "result.uptimeSeconds", "result.groups"]
        if instance["result"]["groups"]:
            paths += ["result.groups.0." + f for f in GROUP_FIELDS]
    elif kind == "group:Deliver":
        paths = DELIVER_REQUIRED + _envelope_paths("event.", [instance["event"]])
    elif kind == "reply command:ok":
        paths = ["id", "ok", "position", "events"] + _envelope_paths("events.0.", instance["events"])
    elif kind == "reply log:ok":
        paths = ["id", "ok", "events", "next", "head"] + _envelope_paths("events.0.", instance["events"])
    elif kind.startswith("reply query:"):
        query_type = kind.split(":", 1)[1]
        view = VIEW_REQUIRED[QUERY_VIEW[query_type]]
        paths = ["id", "ok", "position", "result"]
        if query_type.startswith("Get"):
            paths += ["result." + f for f in view]
        else:
            paths += ["result.items", "result.page", "result.perPage", "result.total"]
            if instance["result"]["items"]:
                paths += ["result.items.0." + f for f in view]
    elif kind == "reply worker-status":
        paths = ["id", "ok", "result"] + WORKER_STATUS_REQUIRED
    elif kind in ("reply query-status", "reply rebuild"):
        paths = ["id", "ok", "result"] + QUERY_STATUS_REQUIRED
        if "readModels" in instance["result"]:
            paths += ["result.readModels." + t for t in ("users", "posts", "products", "orders")]
    elif kind.startswith("event:"):
        paths = _envelope_paths("", [instance])
    elif kind.startswith("feed:"):
        paths = [(1, "previous")] + [(1, "previous", t) for t in ("users", "posts", "products", "orders")]
        paths += [(1,) + tuple(p.split(".")) for p in _envelope_paths("", [instance[1]])]
    return paths


def _group_result_paths(prefix: str, request_type: str, result) -> list:
    paths = [prefix + f for f in GROUP_RESULT_REQUIRED[request_type]]
    if request_type == "ListGroups" and result["groups"]:
        paths += [prefix + "groups.0." + f for f in GROUP_FIELDS]
    if request_type == "ListParked" and result["events"]:
        paths += [prefix + "events.0." + f for f in PARKED_EVENT_REQUIRED]
        paths += _envelope_paths(prefix + "events.0.event.", [result["events"][0]["event"]])
    return paths


def _envelope_paths(prefix: str, envelopes: list) -> list:
    if not envelopes:
        return []
    envelope = envelopes[0]
    data_fields = EVENT_REQUIRED.get(envelope["type"], [])
    return [prefix + p for p in ENVELOPE_REQUIRED] + [prefix + "data." + f for f in data_fields]


def _path(p):
    if isinstance(p, tuple):
        return p
    return tuple(int(part) if part.isdigit() else part for part in p.split("."))


def _get(instance, path):
    for part in path:
        instance = instance[part]
    return instance


def _with(instance, path, change):
    """A deep copy of instance with `change(parent, last_key)` applied at path."""
    copied = copy.deepcopy(instance)
    parent = _get(copied, path[:-1])
    change(parent, path[-1])
    return copied


def _nodes(instance, path=()):
    """Every value with its path: only the first element of a nested array (a list of
    events, items or topics), every element of a top-level one (the feed's [topic, envelope])."""
    yield path, instance
    if isinstance(instance, dict):
        for key, value in instance.items():
            yield from _nodes(value, path + (key,))
    elif isinstance(instance, list) and instance:
        for index in range(len(instance) if not path else 1):
            yield from _nodes(instance[index], path + (index,))


def _wrong_type(value):
    if isinstance(value, bool):
        return "true"
    if isinstance(value, int):
        return "12345"
    if isinstance(value, float):
        return "1.5"
    if isinstance(value, str):
        return False
    if value is None:
        return {"unexpectedField": 1}
    if isinstance(value, dict):
        return []
    return {}


def mutations(sample: Sample):
    """(description, mutated instance) pairs that the sample's schema must reject."""
    instance = sample.instance
    for path, value in _nodes(instance):
        shown = _show(path)
        if isinstance(value, dict):
            def add(parent, key):
                parent[key]["unexpectedField"] = True
            if path:
                yield f"unknown field added to {shown}", _with(instance, path, add)
            else:
                mutated = copy.deepcopy(instance)
                mutated["unexpectedField"] = True
                yield "unknown field added at the top", mutated
        if not path:
            continue
        key = path[-1]
        yield f"{shown} of another type", _with(instance, path, lambda p, k: p.__setitem__(k, _wrong_type(value)))
        if isinstance(value, str):
            choice_key = path[-2] if isinstance(key, int) and len(path) > 1 else key
            if path == (0,) and sample.kind.startswith("feed:"):
                yield "topic outside the list", _with(instance, path, lambda p, k: p.__setitem__(k, "email"))
            elif choice_key in ENUM_BAD and path[-2:] != ("details", "type"):
                bad = ENUM_BAD[choice_key]
                yield f"{shown} = {bad!r}", _with(instance, path, lambda p, k: p.__setitem__(k, bad))
            if isinstance(key, str) and key.endswith("Id"):
                yield f"{shown} with a space", _with(instance, path, lambda p, k: p.__setitem__(k, "bad id"))
        if key == "ok" and isinstance(value, bool):
            yield f"{shown} flipped", _with(instance, path, lambda p, k: p.__setitem__(k, not value))
    for p in sample.required:
        path = _path(p)
        try:
            _get(instance, path)
        except (KeyError, IndexError, TypeError):
            yield f"required {_show(path)} missing from the sample itself", None
            continue
        yield f"required {_show(path)} dropped", _with(instance, path, lambda parent, k: parent.__delitem__(k))
    yield from _update_drops(sample)


def _update_drops(sample: Sample):
    """An update naming only one field is refused once that field is gone."""
    targets = []
    if sample.kind.startswith("request command:"):
        targets.append(("data",))
    elif sample.kind.startswith("event:"):
        targets.append(("data",))
    elif sample.kind.startswith("feed:"):
        targets.append((1, "data"))
    elif sample.kind in ("reply command:ok", "reply log:ok") and sample.instance["events"]:
        targets.append(("events", 0, "data"))
    for path in targets:
        try:
            data = _get(sample.instance, path)
            owner = _get(sample.instance, path[:-1])
        except (KeyError, IndexError, TypeError):
            continue
        fields = UPDATE_FIELDS.get(owner.get("type"), [])
        present = [f for f in fields if isinstance(data, dict) and data.get(f) is not None]
        if len(present) == 1:
            yield (f"the only update field {present[0]} dropped",
                   _with(sample.instance, path + (present[0],), lambda parent, k: parent.__delitem__(k)))


def _show(path) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def mutation_failures(schemas, samples: list) -> tuple[list[str], int]:
    failures, count = [], 0
    for sample in samples:
        for description, mutated in mutations(sample):
            count += 1
            if mutated is None:
                failures.append(f"{sample.kind}: {description} (schemas/README.md says it is required)")
            elif schemas.accepts(sample.schema, mutated):
                failures.append(f"schema {sample.schema} is too permissive: it accepts a {sample.kind} with "
                                f"{description}: {json.dumps(mutated, ensure_ascii=False)[:300]}")
    return failures, count
