#!/usr/bin/env python3
"""How many pages each commit of a SQLite log wrote, and into which b-trees.

Reads the WAL beside DB (DB-wal): every frame of the current WAL cycle (its salts match the
WAL header), grouped into commits (a commit's last frame records the database size). Pages
are named by SQLite's dbstat table ("events:leaf", "sqlite_autoindex_events_1:leaf", ...),
read from a copy of DB and its WAL, so the file itself is not touched. Prints the last
--commits commits, one line each, then the mean frames a commit and the mean count of each
b-tree's pages a commit. Each frame is a whole page (and SQLite writes it with two pwrites),
so this is what a commit costs the WAL.

    Benchmarks/tools/wal-frames.py /path/to/events.sqlite3 [--commits 40] [--quiet]

Run it on a log no process is writing (a checkpoint may reset the WAL under it otherwise).
Needs the dbstat table (Debian's libsqlite3 has it).
"""
import argparse
import collections
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

WAL_HEADER = 32
FRAME_HEADER = 24


def commits_in_wal(wal):
    """The page numbers of each commit of the current WAL cycle, oldest first."""
    if len(wal) < WAL_HEADER:
        return []
    magic, _, page_size, _, salt1, salt2 = struct.unpack(">6I", wal[:24])
    if magic not in (0x377F0682, 0x377F0683):
        raise SystemExit("not a WAL file (bad magic number)")
    commits, pending, offset = [], [], WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(wal):
        page, size_after_commit, frame_salt1, frame_salt2 = struct.unpack(">4I", wal[offset:offset + 16])
        if (frame_salt1, frame_salt2) != (salt1, salt2):
            break  # a frame of an earlier cycle: the current one ends here
        pending.append(page)
        if size_after_commit:
            commits.append(pending)
            pending = []
        offset += FRAME_HEADER + page_size
    return commits


def page_names(db, wal_bytes):
    """Page number -> "btree:pagetype", from dbstat on a copy of the database and its WAL."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "copy.sqlite3")
        shutil.copyfile(db, copy)
        with open(copy + "-wal", "wb") as wal:
            wal.write(wal_bytes)
        connection = sqlite3.connect(copy)
        try:
            return dict(connection.execute("SELECT pageno, name || ':' || pagetype FROM dbstat"))
        finally:
            connection.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", help="the SQLite file; its WAL is DB-wal")
    parser.add_argument("--commits", type=int, default=40, help="how many of the last commits to show (default 40)")
    parser.add_argument("--quiet", action="store_true", help="only the means")
    arguments = parser.parse_args()
    try:
        with open(arguments.db + "-wal", "rb") as wal_file:
            wal = wal_file.read()
    except OSError as error:
        raise SystemExit(f"cannot read the WAL: {error}")
    commits = commits_in_wal(wal)[-max(1, arguments.commits):]
    if not commits:
        raise SystemExit("the WAL holds no commit")
    names = page_names(arguments.db, wal)
    totals = collections.Counter()
    for pages in commits:
        labels = [names.get(page, f"page {page} (freed)") for page in pages]
        totals.update(labels)
        if not arguments.quiet:
            print(len(pages), ", ".join(labels))
    print(f"{len(commits)} commits, {sum(map(len, commits)) / len(commits):.2f} frames a commit")
    for label, count in totals.most_common():
        print(f"  {count / len(commits):5.2f}  {label}")


if __name__ == "__main__":
    sys.exit(main())
