#!/usr/bin/env python3
"""Checks Benchmarks/tools/wal-frames.py on a WAL whose commits are known: a small table and its
index, one row a commit, so each of those commits writes exactly one leaf of each; a file
that is not a WAL, and a missing one, are refused with a message. Run by scripts/test.sh."""
import os
import sqlite3
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "Benchmarks", "tools", "wal-frames.py")


def run(*arguments):
    return subprocess.run([sys.executable, SCRIPT, *arguments], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "log.sqlite3")
        connection = sqlite3.connect(db, isolation_level=None)
        assert connection.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
        connection.execute("PRAGMA wal_autocheckpoint = 0")
        connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        connection.execute("CREATE INDEX t_by_v ON t (v)")
        for row in range(30):
            connection.execute("INSERT INTO t (id, v) VALUES (?, ?)", (row, f"value {row:04d}"))
        # The connection stays open, so the WAL is neither checkpointed nor removed.
        result = run(db, "--commits", "30")
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        summary = next(line for line in lines if "frames a commit" in line)
        assert summary.startswith("30 commits, "), summary
        # Every insert wrote the table's leaf and the index's leaf, and nothing else.
        commits = lines[:lines.index(summary)]
        assert commits == ["2 t:leaf, t_by_v:leaf"] * 30 or commits == ["2 t_by_v:leaf, t:leaf"] * 30, commits
        means = {line.split()[1]: float(line.split()[0]) for line in lines if line.startswith("  ")}
        assert means.get("t:leaf") == 1.0, means
        assert means.get("t_by_v:leaf") == 1.0, means
        assert float(summary.split(", ")[1].split()[0]) == 2.0, summary

        quiet = run(db, "--commits", "5", "--quiet")
        assert quiet.returncode == 0 and quiet.stdout.startswith("5 commits, 2.00 frames a commit"), quiet.stdout
        connection.close()

        not_wal = os.path.join(scratch, "other")
        with open(not_wal + "-wal", "wb") as file:
            file.write(b"\0" * 64)
        refused = run(not_wal)
        assert refused.returncode != 0 and "not a WAL file" in refused.stderr, (refused.returncode, refused.stderr)
        missing = run(os.path.join(scratch, "absent"))
        assert missing.returncode != 0 and "cannot read the WAL" in missing.stderr, missing.stderr
    print("wal-frames: ok")


if __name__ == "__main__":
    main()
