#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: `initdb` into a fresh temporary directory,
# `postgres` on a free loopback port and a unix socket in that directory, fsync on.
# As root, both run as the `postgres` user on a directory it owns (PostgreSQL refuses root).
#
#   scripts/test-postgres.sh start   # starts one (if none is running) and prints the export line
#   scripts/test-postgres.sh url     # prints the running cluster's URL
#   scripts/test-postgres.sh stop    # stops it and removes its directory
#
# The state (the cluster's directory) is kept in .build/test-postgres.state, so each
# checkout has its own cluster. Tests read the URL from LOGBOOK_TEST_POSTGRES.
set -euo pipefail
cd "$(dirname "$0")/.."
state=".build/test-postgres.state"

# shellcheck source=scripts/postgres-common.sh
source scripts/postgres-common.sh

url_of() { echo "postgresql://postgres@127.0.0.1:$(cat "$1/port")/postgres"; }

running_dir() {
    [[ -f $state ]] || return 1
    local dir
    dir=$(cat "$state")
    [[ -f $dir/port && -f $dir/data/postmaster.pid ]] || return 1
    as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 || return 1
    echo "$dir"
}

start() {
    local dir
    if dir=$(running_dir); then
        echo "export LOGBOOK_TEST_POSTGRES=$(url_of "$dir")"
        return
    fi
    local bin
    bin=$(bin_dir)
    mkdir -p .build
    dir=$(mktemp -d "${TMPDIR:-/tmp}/logbook-test-postgres.XXXXXX")
    echo "$dir" >"$state"
    if [[ $(id -u) -eq 0 ]]; then chown postgres:postgres "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    local attempt port
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
            "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on -c max_connections=200" \
            >/dev/null; then
            echo "$port" | as_owner tee "$dir/port" >/dev/null
            echo "export LOGBOOK_TEST_POSTGRES=$(url_of "$dir")"
            return
        fi
    done
    tail -n 20 "$dir/server.log" >&2 || true
    echo "test-postgres: postgres did not start" >&2
    exit 1
}

stop() {
    [[ -f $state ]] || return 0
    local dir
    dir=$(cat "$state")
    if [[ -f $dir/data/postmaster.pid ]]; then
        as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    case $dir in
        "${TMPDIR:-/tmp}"/logbook-test-postgres.*) rm -rf "$dir" ;;
    esac
    rm -f "$state"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url)
        dir=$(running_dir) || {
            echo "test-postgres: no cluster is running (scripts/test-postgres.sh start)" >&2
            exit 1
        }
        url_of "$dir"
        ;;
    *)
        echo "usage: $0 start|stop|url" >&2
        exit 2
        ;;
esac
