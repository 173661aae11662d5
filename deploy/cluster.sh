#!/usr/bin/env bash
# A local cluster on loopback, each process with its own data directory under $CLUSTER_DIR
# (default: a new temporary directory).
#
#   deploy/cluster.sh                     one worker (SQLite) and two query processes
#   deploy/cluster.sh --postgres          PostgreSQL, two workers sharing it, a feed process
#                                         and two query processes following the feed
#   deploy/cluster.sh [--postgres] --check
#                                         start them, send commands (with --postgres: to both
#                                         workers), check that BOTH query processes answer
#                                         with them (read-your-writes) and that `logbook
#                                         status --check` passes, stop, exit 0/1
#   deploy/cluster.sh [--postgres] --secure [--check]
#                                         the same with CURVE: keys made with `logbook keygen`
#                                         in $CLUSTER_DIR/keys (the servers' pair, a reader key
#                                         per query process, a writer key per PostgreSQL worker
#                                         for its hints, an admin key for the command line, the
#                                         allow-list keys/clients); --check also checks that a
#                                         client without keys gets no answer
#
# Uses the logbook binary in $LOGBOOK (default: .build/debug/logbook, then PATH) and ports
# from $BASE_PORT (default 7555): commands 7555 (and 7565 for the second worker), feed 7556,
# queries 7557 and 7567, log 7558 (with --postgres the feed's; the workers' 7578 and 7568),
# hints 7559, PostgreSQL 7560. With --postgres,
# PostgreSQL's server binaries must be installed (scripts/install-deps.sh installs them);
# as root, PostgreSQL runs as the postgres user, since it refuses to run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

check=no
postgres=no
secure=no
for argument in "$@"; do
    case $argument in
    --check) check=yes ;;
    --postgres) postgres=yes ;;
    --secure) secure=yes ;;
    *)
        echo "cluster.sh: unknown argument $argument (expected --postgres, --secure, --check)" >&2
        exit 2
        ;;
    esac
done

LOGBOOK=${LOGBOOK:-.build/debug/logbook}
[[ -x $LOGBOOK ]] || LOGBOOK=$(command -v logbook)
BASE_PORT=${BASE_PORT:-7555}
CLUSTER_DIR=${CLUSTER_DIR:-$(mktemp -d -t logbook-cluster.XXXXXX)}

endpoint() { echo "tcp://127.0.0.1:$((BASE_PORT + $1))"; }
export LOGBOOK_COMMANDS=$(endpoint 0)
export LOGBOOK_FEED=$(endpoint 1)
export LOGBOOK_LOG=$(endpoint 3)
QUERIES_A=$(endpoint 2)
QUERIES_B=$(endpoint 12)

pids=()
postgres_bin=""
stop() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ -n $postgres_bin && -f $CLUSTER_DIR/pg/data/postmaster.pid ]]; then
        as_postgres "$postgres_bin/pg_ctl" -D "$CLUSTER_DIR/pg/data" -m fast -w stop >/dev/null || true
    fi
}
trap stop EXIT

# Runs a command as the postgres user when we are root (PostgreSQL refuses root).
as_postgres() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
    postgres_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV | head -n 1)
    if [[ -z $postgres_bin || ! -x $postgres_bin/initdb ]]; then
        echo "cluster.sh: no PostgreSQL server binaries under /usr/lib/postgresql (run scripts/install-deps.sh)" >&2
        exit 1
    fi
    mkdir -p "$CLUSTER_DIR/pg"
    if [[ $(id -u) -eq 0 ]]; then
        chmod o+x "$CLUSTER_DIR" # the postgres user must reach its own directory inside
        chown postgres:postgres "$CLUSTER_DIR/pg"
    fi
    as_postgres "$postgres_bin/initdb" -D "$CLUSTER_DIR/pg/data" -U postgres --auth=trust -E UTF8 --locale=C \
        >"$CLUSTER_DIR/pg/initdb.log"
    local port=$((BASE_PORT + 5))
    as_postgres "$postgres_bin/pg_ctl" -D "$CLUSTER_DIR/pg/data" -l "$CLUSTER_DIR/pg/server.log" -w start \
        -o "-p $port -k $CLUSTER_DIR/pg -c listen_addresses=127.0.0.1" >/dev/null
    as_postgres "$postgres_bin/psql" -h "$CLUSTER_DIR/pg" -p "$port" -U postgres -q -c "CREATE DATABASE logbook"
    export LOGBOOK_STORE="postgresql://postgres@127.0.0.1:$port/logbook"
}

# With --secure: the keys, made once with `logbook keygen`, and each process's CURVE flags.
keys=$CLUSTER_DIR/keys
make_keys() {
    mkdir -p "$keys/clients"
    chmod 700 "$keys"
    local key name role
    for key in server:none query-a:reader query-b:reader worker-a:writer worker-b:writer cli:admin; do
        name=${key%%:*} role=${key#*:}
        [[ -e $keys/$name ]] && continue
        if [[ $role == none ]]; then
            "$LOGBOOK" keygen "$name" --dir "$keys" >/dev/null
        else
            "$LOGBOOK" keygen "$name" --role "$role" --dir "$keys" >/dev/null
            cp "$keys/$name" "$keys/clients/$name"
        fi
    done
    # The command line (and the hint printed) uses the admin key; the processes get flags.
    export LOGBOOK_CURVE_KEY=$keys/cli_secret LOGBOOK_SERVER_KEY=$keys/server
}

# The CURVE flags of process NAME (none without --secure): every server the same keys and
# allow-list; a query process or PostgreSQL worker its own client key towards the others.
curve_flags() {
    [[ $secure == yes ]] || return 0
    local flags=(--curve-secret "$keys/server_secret" --clients "$keys/clients")
    case $1 in
    query-* | worker-*) flags+=(--curve-key "$keys/$1_secret" --server-key "$keys/server") ;;
    esac
    echo "${flags[@]}"
}

run() {
    local name=$1
    shift
    # shellcheck disable=SC2046 # the flags are paths without blanks, split on purpose
    "$LOGBOOK" "$@" --data-dir "$CLUSTER_DIR/$name" $(curve_flags "$name") 2>>"$CLUSTER_DIR/$name.log" &
    pids+=($!)
}

[[ $secure == yes ]] && make_keys

if [[ $postgres == yes ]]; then
    start_postgres
    export LOGBOOK_HINTS=$(endpoint 4)
    # One key store in the database, so one master key for every worker and feed process.
    "$LOGBOOK" keygen --master "$CLUSTER_DIR/master.key" >/dev/null
    export LOGBOOK_MASTER_KEY=$CLUSTER_DIR/master.key
    WORKER_B=$(endpoint 10)
    # Each worker also serves ReadLog, on a port of its own; the feed's is the one clients use.
    run worker-a run worker --log "$(endpoint 23)"
    run worker-b run worker --commands "$WORKER_B" --log "$(endpoint 13)"
    run feed run feed
    WORKERS="$LOGBOOK_COMMANDS,$WORKER_B"
    echo "PostgreSQL: $LOGBOOK_STORE"
    echo "workers: commands $LOGBOOK_COMMANDS and $WORKER_B (hints to $LOGBOOK_HINTS)"
    echo "feed:    feed $LOGBOOK_FEED, log $LOGBOOK_LOG"
else
    run worker run worker
    WORKERS="$LOGBOOK_COMMANDS"
    echo "worker:  commands $LOGBOOK_COMMANDS, feed $LOGBOOK_FEED, log $LOGBOOK_LOG"
fi
run query-a run query --queries "$QUERIES_A"
run query-b run query --queries "$QUERIES_B"
echo "queries: $QUERIES_A and $QUERIES_B"
echo "files and logs: $CLUSTER_DIR"
if [[ $secure == yes ]]; then
    echo "CURVE on; use the command line with:"
    echo "  export LOGBOOK_CURVE_KEY=$LOGBOOK_CURVE_KEY LOGBOOK_SERVER_KEY=$LOGBOOK_SERVER_KEY"
fi

if [[ $check != yes ]]; then
    echo "Ctrl-C stops them all."
    wait
    exit 0
fi

# Commands (on PostgreSQL: one to each worker), then the same question to both query
# processes, each waiting for the command's position.
for commands in ${WORKERS//,/ }; do
    product="cluster-check-$$-${commands##*:}"
    reply=$("$LOGBOOK" send AddProduct --commands "$commands" \
        "{\"productId\":\"$product\",\"name\":\"Cluster check\",\"price\":\"1.00\",\"category\":\"food\",\"stock\":5}")
    position=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["ok"], r; print(r["position"])' "$reply")
    echo "ok: worker $commands appended $product at position $position"
    for queries in "$QUERIES_A" "$QUERIES_B"; do
        answer=$("$LOGBOOK" query GetProduct "{\"productId\":\"$product\"}" --queries "$queries" --min-position "$position")
        python3 -c '
import json, sys
answer, product, position = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
assert answer["ok"] and answer["result"]["productId"] == product and answer["position"] >= position, answer
' "$answer" "$product" "$position"
        echo "ok: $queries answered GetProduct at position $position"
    done
done
# The health check every monitor would run: each worker and each query process up, none lagging.
for queries in "$QUERIES_A" "$QUERIES_B"; do
    "$LOGBOOK" status --check --max-lag 0 --commands "$WORKERS" --queries "$queries" >/dev/null
    echo "ok: status --check passes for $WORKERS and $queries"
done
if [[ $secure == yes ]]; then
    # A client without keys gets no answer from a CURVE server (exit 3: no reply).
    if env -u LOGBOOK_CURVE_KEY -u LOGBOOK_SERVER_KEY "$LOGBOOK" send AddProduct \
        "{\"productId\":\"cluster-plain-$$\",\"name\":\"Plain\",\"price\":\"1.00\",\"category\":\"food\",\"stock\":1}" \
        --timeout-ms 300 --attempts 1 >/dev/null 2>&1; then
        echo "FAIL: a client without keys was answered" >&2
        exit 1
    fi
    echo "ok: a client without keys got no answer"
fi
