#!/usr/bin/env bash
# A throwaway PostgreSQL primary with one synchronous standby, for the tests of what a
# failover may lose: `initdb` for the primary (`synchronous_standby_names = 'standby'`, so
# a commit waits for the standby's flush), `pg_basebackup` for the standby, both on free
# loopback ports with unix sockets in their directories. As root, both run as the
# `postgres` user (PostgreSQL refuses root). Every `start` makes a new pair in a new
# directory, so a test that kills the primary never harms another.
#
#   scripts/test-postgres-pair.sh start [OWNER_PID]    prints DIR PRIMARY_PORT STANDBY_PORT; the pair
#                                                      is removed once OWNER_PID ends, if still there
#   scripts/test-postgres-pair.sh stop-standby DIR     stops the standby at once (no shutdown checkpoint)
#   scripts/test-postgres-pair.sh start-standby DIR    starts it again; it catches up from the primary
#   scripts/test-postgres-pair.sh kill-primary DIR     kill -9 of the primary's postmaster and its children
#   scripts/test-postgres-pair.sh promote-standby DIR  starts the standby if stopped, and promotes it
#   scripts/test-postgres-pair.sh remove DIR           stops both and removes DIR
set -euo pipefail
cd "$(dirname "$0")/.."

# A test process starts this script while it has other children's pipes open (popen does not
# close them); the servers started here outlive the script and would hold those pipes open,
# so that a reader of another child's output never saw its end. Close every inherited
# descriptor but the standard ones and bash's own (255, the script).
for descriptor in /proc/$$/fd/*; do
    descriptor=${descriptor##*/}
    if ((descriptor > 2 && descriptor < 255)); then eval "exec ${descriptor}>&-" 2>/dev/null || true; fi
done

# shellcheck source=scripts/postgres-common.sh
source scripts/postgres-common.sh

# Starts the server whose data directory is $2 on the port recorded beside it ($1/$3.port).
server_start() {
    local dir=$1 data=$2 name=$3
    as_owner "$(bin_dir)/pg_ctl" -D "$data" -l "$dir/$name.log" -w -t 60 start -o \
        "-p $(cat "$dir/$name.port") -k $dir -c listen_addresses=127.0.0.1" >/dev/null
}

start() {
    local owner=${1:-} bin dir primary_port standby_port
    if [[ -n $owner && ! $owner =~ ^[0-9]+$ ]]; then
        echo "test-postgres-pair: OWNER_PID must be a process id, not $owner" >&2
        exit 2
    fi
    bin=$(bin_dir)
    dir=$(mktemp -d "${TMPDIR:-/tmp}/logbook-test-pair.XXXXXX")
    if [[ $(id -u) -eq 0 ]]; then chown postgres:postgres "$dir"; fi
    if [[ -n $owner ]]; then remove_when_gone "$owner" "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/primary" -U postgres --auth=trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    {
        echo "fsync = on"
        echo "synchronous_commit = on"
        echo "synchronous_standby_names = 'standby'"
        echo "wal_level = replica"
        echo "max_wal_senders = 4"
        echo "max_connections = 100"
    } | as_owner tee -a "$dir/primary/postgresql.conf" >/dev/null
    echo "host replication postgres 127.0.0.1/32 trust" | as_owner tee -a "$dir/primary/pg_hba.conf" >/dev/null
    primary_port=$(free_port)
    echo "$primary_port" | as_owner tee "$dir/primary.port" >/dev/null
    server_start "$dir" "$dir/primary" primary
    as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$dir/standby" -R \
        -d "host=127.0.0.1 port=$primary_port user=postgres application_name=standby" >"$dir/basebackup.log" 2>&1 || {
        cat "$dir/basebackup.log" >&2
        exit 1
    }
    standby_port=$(free_port)
    echo "$standby_port" | as_owner tee "$dir/standby.port" >/dev/null
    server_start "$dir" "$dir/standby" standby
    # The standby is synchronous once the primary lists it so.
    local attempt
    for attempt in $(seq 1 600); do
        if [[ $(as_owner "$bin/psql" -h 127.0.0.1 -p "$primary_port" -U postgres -Atc \
            "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'") == 1 ]]; then
            echo "$dir $primary_port $standby_port"
            return
        fi
        sleep 0.1
    done
    echo "test-postgres-pair: the standby did not become synchronous" >&2
    exit 1
}

# Stops both servers and removes the pair's directory, if it is still there.
remove_pair() {
    local dir=$1 server
    for server in primary standby; do
        if [[ -f $dir/$server/postmaster.pid ]]; then
            as_owner "$(bin_dir)/pg_ctl" -D "$dir/$server" -m immediate -w stop >/dev/null 2>&1 || true
        fi
    done
    rm -rf "$dir"
}

# A process that waits for the process that owns the pair ($1, the test process) to end, then
# removes the pair ($2) unless the owner removed it already: a test process that crashes never
# runs its clean-up, and its servers would otherwise run on, idle, until the machine stops.
remove_when_gone() {
    local owner=$1 dir=$2
    (
        trap '' HUP
        while kill -0 "$owner" 2>/dev/null && [[ -d $dir ]]; do sleep 1; done
        if [[ -d $dir ]]; then remove_pair "$dir"; fi
    ) </dev/null >/dev/null 2>&1 &
    disown
}

require_dir() {
    case ${1:-} in
    "${TMPDIR:-/tmp}"/logbook-test-pair.*) [[ -d $1 ]] || {
        echo "test-postgres-pair: no pair at $1" >&2
        exit 1
    } ;;
    *)
        echo "test-postgres-pair: $1 is not a pair this script made" >&2
        exit 2
        ;;
    esac
}

case "${1:-}" in
start) start "${2:-}" ;;
stop-standby)
    require_dir "${2:-}"
    as_owner "$(bin_dir)/pg_ctl" -D "$2/standby" -m immediate -w stop >/dev/null
    ;;
start-standby)
    require_dir "${2:-}"
    server_start "$2" "$2/standby" standby
    ;;
kill-primary)
    require_dir "${2:-}"
    pid=$(head -n 1 "$2/primary/postmaster.pid")
    # The postmaster first, so it cannot restart its children; then every child.
    kill -9 "$pid" 2>/dev/null || true
    pkill -9 -P "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    ;;
promote-standby)
    require_dir "${2:-}"
    # Alone now: its commits wait for no standby (it was copied with the primary's setting).
    echo "synchronous_standby_names = ''" | as_owner tee -a "$2/standby/postgresql.conf" >/dev/null
    if as_owner "$(bin_dir)/pg_ctl" -D "$2/standby" status >/dev/null 2>&1; then
        as_owner "$(bin_dir)/pg_ctl" -D "$2/standby" reload >/dev/null
    else
        server_start "$2" "$2/standby" standby
    fi
    as_owner "$(bin_dir)/pg_ctl" -D "$2/standby" -w promote >/dev/null
    ;;
remove)
    require_dir "${2:-}"
    remove_pair "$2"
    ;;
*)
    echo "usage: $0 start [OWNER_PID] | stop-standby DIR | start-standby DIR | kill-primary DIR | promote-standby DIR | remove DIR" >&2
    exit 2
    ;;
esac
