#!/usr/bin/env python3
"""Checks that the table of targets in docs/architecture.md matches Package.swift.

Every target that is not a test target must have a row (a row may name several targets,
comma-separated, when they share everything else), and the row's "depends on" column must
list exactly the target's dependencies in Package.swift ("—" for none). Reads the package
through `swift package dump-package`, so what is checked is what SwiftPM itself sees.
Exits 1 with one line per difference, 0 when the two agree.
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


def package_targets():
    dump = subprocess.run(
        ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    targets = {}
    for target in json.loads(dump)["targets"]:
        if target["type"] == "test":
            continue
        dependencies = []
        for dependency in target.get("dependencies", []):
            (kind, value), = dependency.items()
            dependencies.append(value[0])
        targets[target["name"]] = dependencies
    return targets


def names(cell):
    """The backquoted names of a table cell, in order; none for an em dash."""
    return re.findall(r"`([^`]+)`", cell)


def documented_targets():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    if not rows:
        sys.exit(f"{DOC}: no table of targets under '## Layers'")
    documented = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) != 4:
            sys.exit(f"{DOC}: a row of the targets table does not have 4 columns: {row}")
        for target in names(cells[0]):
            documented[target] = names(cells[3])
    return documented


def main():
    actual = package_targets()
    documented = documented_targets()
    problems = []
    for target in sorted(set(actual) - set(documented)):
        problems.append(f"target {target} is in Package.swift but has no row in docs/architecture.md")
    for target in sorted(set(documented) - set(actual)):
        problems.append(f"docs/architecture.md has a row for {target}, which Package.swift does not declare")
    for target in sorted(set(actual) & set(documented)):
        if sorted(actual[target]) != sorted(documented[target]):
            problems.append(
                f"{target}: Package.swift depends on {sorted(actual[target])}, "
                f"docs/architecture.md says {sorted(documented[target])}"
            )
    for problem in problems:
        print(f"check-architecture-doc: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-architecture-doc: {len(actual)} targets match docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
