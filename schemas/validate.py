#!/usr/bin/env python3
"""Validates JSON messages against one schema of this folder (Python jsonschema + referencing).

    python3 schemas/validate.py SCHEMA [FILE ...]

SCHEMA is a schema file of this folder, with or without `.schema.json`: `command-request`,
`events/OrderPlaced`, `queries/ListOrders.result`. Each FILE (or standard input when none
is given) holds one JSON document, or JSON lines (one document per line, as `logbook replay`
and `logbook subscribe` print). Prints one line per invalid document and exits 1 if any.

    logbook replay --from 1 | python3 schemas/validate.py event-envelope
    logbook send AddProduct '{"productId":"p1","name":"Tea","price":"2.50","category":"food","stock":3}' \\
        | python3 schemas/validate.py command-reply
"""

import json
import pathlib
import sys

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

FOLDER = pathlib.Path(__file__).resolve().parent


def load_validator(name: str) -> Draft202012Validator:
    documents = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(FOLDER.rglob("*.schema.json"))]
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in documents)
    path = FOLDER / (name if name.endswith(".schema.json") else name + ".schema.json")
    schema = json.loads(path.read_text(encoding="utf-8"))
    return Draft202012Validator(schema, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER)


def documents(text: str):
    try:
        yield "document", json.loads(text)
        return
    except ValueError:
        pass
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield f"line {number}", json.loads(line)


def main(arguments: list[str]) -> int:
    if not arguments or arguments[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 2 if not arguments else 0
    validator = load_validator(arguments[0])
    sources = [(name, pathlib.Path(name).read_text(encoding="utf-8")) for name in arguments[1:]] or [
        ("stdin", sys.stdin.read())
    ]
    checked = invalid = 0
    for source, text in sources:
        for where, document in documents(text):
            checked += 1
            errors = list(validator.iter_errors(document))
            if errors:
                invalid += 1
                for error in errors:
                    print(f"{source} {where}: at {error.json_path}: {error.message}")
    print(f"{checked - invalid} of {checked} valid against {arguments[0]}", file=sys.stderr)
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
