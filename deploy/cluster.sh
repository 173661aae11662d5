#!/usr/bin/env bash
# A local cluster on loopback, each process with its own data directory under $CLUSTER_DIR
# (default: a new temporary directory).
#
#   deploy/cluster.sh                     one worker (SQLite) and two query processes
#   deploy/cluster.sh --postgres          PostgreSQL, two workers sharing it, a feed process
#                                         and two query processes following the feed
#   deploy/cluster.sh --ha                the same on three PostgreSQL nodes managed by Patroni
#                                         (deploy/patroni/patroni.yml.template) on one etcd,
#                                         synchronous mode, the processes given every node
#                                         (target_session_attrs=read-write); with --check it
#                                         also fails the primary over (kill -9 of its Patroni
#                                         and PostgreSQL) and checks that nothing acknowledged
#                                         was lost and both query processes follow the new primary
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
# hints 7559, PostgreSQL 7560; with --ha etcd 7585 (peers 7586), Patroni's REST APIs
# 7587-7589 and PostgreSQL 7590-7592. With --postgres or --ha,
# PostgreSQL's server binaries must be installed, and with --ha Patroni and etcd
# (scripts/install-deps.sh installs them); as root, PostgreSQL (and Patroni, which starts
# it) runs as the postgres user, since it refuses to run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

check=no
postgres=no
ha=no
secure=no
for argument in "$@"; do
    case $argument in
    --check) check=yes ;;
    --postgres) postgres=yes ;;
    --ha) postgres=yes ha=yes ;;
    --secure) secure=yes ;;
    *)
        echo "cluster.sh: unknown argument $argument (expected --postgres, --ha, --secure, --check)" >&2
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
ha_pids=()
postgres_bin=""
stop() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ -n $postgres_bin && -f $CLUSTER_DIR/pg/data/postmaster.pid ]]; then
        as_postgres "$postgres_bin/pg_ctl" -D "$CLUSTER_DIR/pg/data" -m fast -w stop >/dev/null || true
    fi
    # Patroni stops its PostgreSQL when it stops; etcd (the first of them) goes last.
    local index
    for ((index = ${#ha_pids[@]} - 1; index >= 0; index--)); do
        kill -TERM "${ha_pids[index]}" 2>/dev/null || true
        wait "${ha_pids[index]}" 2>/dev/null || true
    done
    for node in 1 2 3; do
        if [[ -n $postgres_bin && -f $CLUSTER_DIR/ha/node$node/data/postmaster.pid ]]; then
            as_postgres "$postgres_bin/pg_ctl" -D "$CLUSTER_DIR/ha/node$node/data" -m immediate -w stop \
                >/dev/null 2>&1 || true
        fi
    done
}
trap stop EXIT

# Runs a command as the postgres user when we are root (PostgreSQL refuses root).
as_postgres() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The same for a process started in the background, in place (no runuser between), so
# that its pid is the one `stop` signals.
exec_as_postgres() {
    if [[ $(id -u) -eq 0 ]]; then
        exec setpriv --reuid=postgres --regid=postgres --init-groups env HOME=/var/lib/postgresql "$@"
    else
        exec "$@"
    fi
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

# With --ha: etcd, then three Patroni nodes; returns once one is the leader and another its
# synchronous standby, with the log's database made.
ha_rest_port() { echo $((BASE_PORT + 31 + $1)); }
ha_pg_port() { echo $((BASE_PORT + 34 + $1)); }
start_patroni() {
    postgres_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV | head -n 1)
    if [[ -z $postgres_bin ]] || ! command -v patroni >/dev/null || ! command -v etcd >/dev/null; then
        echo "cluster.sh: --ha needs PostgreSQL, patroni and etcd (run scripts/install-deps.sh)" >&2
        exit 1
    fi
    mkdir -p "$CLUSTER_DIR/ha"
    if [[ $(id -u) -eq 0 ]]; then
        chmod o+x "$CLUSTER_DIR"
        chown postgres:postgres "$CLUSTER_DIR/ha"
    fi
    local etcd_port=$((BASE_PORT + 30)) etcd_peer=$((BASE_PORT + 31))
    (exec_as_postgres etcd --name logbook-etcd --data-dir "$CLUSTER_DIR/ha/etcd" \
        --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
        --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
        --initial-cluster "logbook-etcd=http://127.0.0.1:$etcd_peer") >"$CLUSTER_DIR/ha/etcd.log" 2>&1 &
    ha_pids+=($!)
    local node hosts=""
    for node in 1 2 3; do
        local dir=$CLUSTER_DIR/ha/node$node
        as_postgres mkdir -p -m 700 "$dir"
        sed -e "s|@NAME@|node$node|" -e "s|@HOST@|127.0.0.1|g" -e "s|@REST_PORT@|$(ha_rest_port $node)|" \
            -e "s|@PG_PORT@|$(ha_pg_port $node)|g" -e "s|@ETCD@|127.0.0.1:$etcd_port|" \
            -e "s|@NETWORK@|127.0.0.1/32|g" -e "s|@DATA_DIR@|$dir/data|" -e "s|@BIN_DIR@|$postgres_bin|" \
            -e "s|@DIR@|$dir|g" deploy/patroni/patroni.yml.template | as_postgres tee "$dir/patroni.yml" >/dev/null
        (exec_as_postgres patroni "$dir/patroni.yml") >"$CLUSTER_DIR/ha/node$node.log" 2>&1 &
        ha_pids+=($!)
        hosts+="${hosts:+,}127.0.0.1:$(ha_pg_port $node)"
    done
    local leader
    for _ in $(seq 1 1200); do
        leader=$(ha_leader || true)
        [[ -n $leader && -n $(ha_sync_standby) ]] && break
        sleep 0.1
    done
    if [[ -z $leader || -z $(ha_sync_standby) ]]; then
        echo "cluster.sh: Patroni elected no leader with a synchronous standby (logs: $CLUSTER_DIR/ha)" >&2
        exit 1
    fi
    as_postgres "$postgres_bin/psql" -h 127.0.0.1 -p "$(ha_pg_port "$leader")" -U postgres -q -c "CREATE DATABASE logbook"
    export LOGBOOK_STORE="postgresql://postgres@$hosts/logbook?target_session_attrs=read-write&connect_timeout=2"
    # A node may not have replayed the new database yet: wait for it rather than exit.
    export LOGBOOK_STORE_WAIT=60
}

# The node (1-3) whose Patroni answers as the leader (primary), and one answering as a
# synchronous standby; empty when none does (Patroni's REST API: 200 on /leader, /sync).
ha_leader() { ha_node_answering leader; }
ha_sync_standby() { ha_node_answering sync; }
ha_node_answering() {
    local node
    for node in 1 2 3; do
        if curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$(ha_rest_port $node)/$1"; then
            echo "$node"
            return
        fi
    done
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
    if [[ $ha == yes ]]; then start_patroni; else start_postgres; fi
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

if [[ $ha == yes ]]; then
    # A failover under the processes' feet: commands acknowledged first, then kill -9 of the
    # primary's Patroni and PostgreSQL. Patroni promotes the synchronous standby once the
    # leader key expires; workers and the feed process find the new primary by themselves.
    send_until_answered() { # ID DATA: sends until the reply is not `unavailable`; prints it
        local reply
        for _ in $(seq 1 600); do
            reply=$("$LOGBOOK" send AddProduct "$2" --id "$1" --timeout-ms 2000 --attempts 1 2>/dev/null || true)
            if [[ -n $reply && $reply != *'"unavailable"'* ]]; then
                echo "$reply"
                return
            fi
            sleep 0.2
        done
        echo "FAIL: $1 was never answered" >&2
        exit 1
    }
    product_data() { echo "{\"productId\":\"$1\",\"name\":\"Failover check\",\"price\":\"1.00\",\"category\":\"food\",\"stock\":5}"; }
    declare -A acknowledged
    for i in $(seq 1 20); do
        id="failover-$$-$i"
        reply=$(send_until_answered "$id" "$(product_data "$id")")
        acknowledged[$id]=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["ok"], r; print(r["position"])' "$reply")
    done
    old_leader=$(ha_leader)
    old_standby=$(ha_sync_standby)
    postgres_pid=$(head -n 1 "$CLUSTER_DIR/ha/node$old_leader/data/postmaster.pid")
    kill -9 "${ha_pids[old_leader]}" "$postgres_pid"
    pkill -9 -P "$postgres_pid" || true
    echo "ok: killed node$old_leader (Patroni and PostgreSQL, the primary); node$old_standby was its synchronous standby"
    started=$(date +%s%N)
    after="failover-$$-after"
    reply=$(send_until_answered "$after" "$(product_data "$after")")
    position=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["ok"], r; print(r["position"])' "$reply")
    echo "ok: a command was answered again after $(((($(date +%s%N) - started) / 1000000))) ms, at position $position"
    new_leader=$(ha_leader)
    if [[ $new_leader != "$old_standby" ]]; then
        echo "FAIL: node$new_leader is the primary, not node$old_standby, the synchronous standby" >&2
        exit 1
    fi
    echo "ok: node$new_leader, the synchronous standby, is the primary now"
    # Every command acknowledged before is on the new primary, once, where it was.
    for id in "${!acknowledged[@]}"; do
        reply=$(send_until_answered "$id" "$(product_data "$id")")
        python3 -c '
import json, sys
reply, position = json.loads(sys.argv[1]), int(sys.argv[2])
assert reply["ok"] and reply["position"] == position, (reply, position)
' "$reply" "${acknowledged[$id]}"
    done
    echo "ok: the ${#acknowledged[@]} commands acknowledged before the failover answer again at their positions"
    for queries in "$QUERIES_A" "$QUERIES_B"; do
        answer=$("$LOGBOOK" query GetProduct "{\"productId\":\"$after\"}" --queries "$queries" --min-position "$position")
        python3 -c '
import json, sys
answer, product = json.loads(sys.argv[1]), sys.argv[2]
assert answer["ok"] and answer["result"]["productId"] == product, answer
' "$answer" "$after"
        echo "ok: $queries, following the feed process, answered with the command made after the failover"
    done
fi
