"""The JSON Schemas of schemas/, loaded into one registry, and the validators of the test.

Every schema file is checked with Draft202012Validator.check_schema and registered under
its $id, so the relative $refs between files resolve without any network access. Formats
are checked (`date`, `date-time`) with checkers written here, so the result does not
depend on optional packages that jsonschema would otherwise need for `date-time`.
"""

import datetime
import json
import pathlib
import re

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, best_match
from referencing import Registry, Resource

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _format_checker() -> FormatChecker:
    checker = FormatChecker(formats=())

    @checker.checks("date", raises=ValueError)
    def is_date(value):
        if not isinstance(value, str):
            return True
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return False
        datetime.date.fromisoformat(value)  # raises for a day that does not exist
        return True

    @checker.checks("date-time", raises=ValueError)
    def is_date_time(value):
        if not isinstance(value, str):
            return True
        if not _RFC3339.fullmatch(value):
            return False
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        return True

    return checker


class ContractSchemas:
    """All schemas of one schemas/ folder, by path relative to it (`command-reply.schema.json`)."""

    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        self.documents: dict[str, dict] = {}
        for path in sorted(folder.rglob("*.schema.json")):
            name = path.relative_to(folder).as_posix()
            document = json.loads(path.read_text(encoding="utf-8"))
            try:
                Draft202012Validator.check_schema(document)
            except SchemaError as error:
                raise ValueError(f"{name} is not a valid draft 2020-12 schema: at {error.json_path}: {error.message}")
            if "$id" not in document:
                raise ValueError(f"{name}: no $id")
            if not document["$id"].endswith("/" + name):
                raise ValueError(f"{name}: $id {document['$id']} does not end with its own path")
            self.documents[name] = document
        if not self.documents:
            raise ValueError(f"no *.schema.json files under {folder}")
        self.registry = Registry().with_resources(
            (document["$id"], Resource.from_contents(document)) for document in self.documents.values()
        )
        self.format_checker = _format_checker()
        self._validators: dict[str, Draft202012Validator] = {}

    def has(self, name: str) -> bool:
        return name in self.documents

    def validator(self, name: str) -> Draft202012Validator:
        if name not in self._validators:
            self._validators[name] = Draft202012Validator(
                self.documents[name], registry=self.registry, format_checker=self.format_checker
            )
        return self._validators[name]

    def errors(self, name: str, instance) -> list[str]:
        """Every reason `instance` fails schema `name`, as `at <json path>: <message>`."""
        found = sorted(self.validator(name).iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
        reasons = []
        for error in found:
            reason = f"at {error.json_path}: {error.message}"
            if error.context:  # anyOf/oneOf: say what the closest branch objected to
                closest = best_match(error.context)
                reason += f" (closest: at {closest.json_path}: {closest.message})"
            reasons.append(reason)
        return reasons

    def accepts(self, name: str, instance) -> bool:
        return self.validator(name).is_valid(instance)

    def enum_of(self, name: str, *pointer: str) -> list:
        """The `enum` found at a JSON pointer inside schema `name` (to compare kinds seen with kinds declared)."""
        node = self.documents[name]
        for part in pointer:
            node = node[part]
        return list(node["enum"])

