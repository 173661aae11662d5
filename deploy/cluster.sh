#!/usr/bin/env bash
# A local cluster on loopback: one worker and two query processes, each with its own data
# directory under $CLUSTER_DIR (default: a new temporary directory).
#
#   deploy/cluster.sh           start them, print the endpoints, stop all on Ctrl-C
#   deploy/cluster.sh --check   start them, send a command, check that BOTH query
#                               processes answer with it (read-your-writes), stop, exit 0/1
#   deploy/cluster.sh --secure [--check]
#                               the same with CURVE: keys made with `logbook keygen` in
#                               $CLUSTER_DIR/keys (the servers' pair, a reader key per query
#                               process, an admin key for the command line, the allow-list
#                               keys/clients); --check also checks that a client without
#                               keys gets no answer
#
# Uses the logbook binary in $LOGBOOK (default: .build/debug/logbook, then PATH) and the
# ports $BASE_PORT+0…+4 (default 7555: commands 7555, feed 7556, queries 7557 and 7567, log 7558).
set -euo pipefail
cd "$(dirname "$0")/.."

check=no
secure=no
for argument in "$@"; do
    case $argument in
    --check) check=yes ;;
    --secure) secure=yes ;;
    *) echo "usage: deploy/cluster.sh [--secure] [--check]" >&2; exit 2 ;;
    esac
done

LOGBOOK=${LOGBOOK:-.build/debug/logbook}
[[ -x $LOGBOOK ]] || LOGBOOK=$(command -v logbook)
BASE_PORT=${BASE_PORT:-7555}
CLUSTER_DIR=${CLUSTER_DIR:-$(mktemp -d -t logbook-cluster.XXXXXX)}

export LOGBOOK_COMMANDS=tcp://127.0.0.1:$BASE_PORT
export LOGBOOK_FEED=tcp://127.0.0.1:$((BASE_PORT + 1))
export LOGBOOK_LOG=tcp://127.0.0.1:$((BASE_PORT + 3))
QUERIES_A=tcp://127.0.0.1:$((BASE_PORT + 2))
QUERIES_B=tcp://127.0.0.1:$((BASE_PORT + 12))

worker_keys=()
query_a_keys=()
query_b_keys=()
if [[ $secure == yes ]]; then
    keys=$CLUSTER_DIR/keys
    mkdir -p "$keys/clients"
    chmod 700 "$keys"
    for key in server:none query-a:reader query-b:reader cli:admin; do
        name=${key%%:*} role=${key#*:}
        [[ -e $keys/$name ]] && continue
        if [[ $role == none ]]; then
            "$LOGBOOK" keygen "$name" --dir "$keys" >/dev/null
        else
            "$LOGBOOK" keygen "$name" --role "$role" --dir "$keys" >/dev/null
            cp "$keys/$name" "$keys/clients/$name"
        fi
    done
    worker_keys=(--curve-secret "$keys/server_secret" --clients "$keys/clients")
    query_a_keys=("${worker_keys[@]}" --curve-key "$keys/query-a_secret" --server-key "$keys/server")
    query_b_keys=("${worker_keys[@]}" --curve-key "$keys/query-b_secret" --server-key "$keys/server")
    # The command line below (and the hint printed) uses the admin key.
    export LOGBOOK_CURVE_KEY=$keys/cli_secret LOGBOOK_SERVER_KEY=$keys/server
fi

pids=()
stop() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT

"$LOGBOOK" run worker --data-dir "$CLUSTER_DIR/worker" ${worker_keys[@]+"${worker_keys[@]}"} \
    2>>"$CLUSTER_DIR/worker.log" &
pids+=($!)
"$LOGBOOK" run query --data-dir "$CLUSTER_DIR/query-a" --queries "$QUERIES_A" ${query_a_keys[@]+"${query_a_keys[@]}"} \
    2>>"$CLUSTER_DIR/query-a.log" &
pids+=($!)
"$LOGBOOK" run query --data-dir "$CLUSTER_DIR/query-b" --queries "$QUERIES_B" ${query_b_keys[@]+"${query_b_keys[@]}"} \
    2>>"$CLUSTER_DIR/query-b.log" &
pids+=($!)

echo "worker:  commands $LOGBOOK_COMMANDS, feed $LOGBOOK_FEED, log $LOGBOOK_LOG"
echo "queries: $QUERIES_A and $QUERIES_B"
echo "files and logs: $CLUSTER_DIR"
if [[ $secure == yes ]]; then
    echo "CURVE on; use the command line with:"
    echo "  export LOGBOOK_CURVE_KEY=$LOGBOOK_CURVE_KEY LOGBOOK_SERVER_KEY=$LOGBOOK_SERVER_KEY"
fi

if [[ $check != yes ]]; then
    echo "Ctrl-C stops all three."
    wait
    exit 0
fi

# A command, then the same question to both query processes, each waiting for its position.
product="cluster-check-$$"
reply=$("$LOGBOOK" send AddProduct "{\"productId\":\"$product\",\"name\":\"Cluster check\",\"price\":\"1.00\",\"category\":\"food\",\"stock\":5}")
position=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["ok"], r; print(r["position"])' "$reply")
for queries in "$QUERIES_A" "$QUERIES_B"; do
    answer=$("$LOGBOOK" query GetProduct "{\"productId\":\"$product\"}" --queries "$queries" --min-position "$position")
    python3 -c '
import json, sys
answer, product, position = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
assert answer["ok"] and answer["result"]["productId"] == product and answer["position"] >= position, answer
' "$answer" "$product" "$position"
    echo "ok: $queries answered GetProduct at position $position"
done
if [[ $secure == yes ]]; then
    # A client without keys gets no answer from a CURVE server (exit 3: no reply).
    if env -u LOGBOOK_CURVE_KEY -u LOGBOOK_SERVER_KEY "$LOGBOOK" send AddProduct \
        "{\"productId\":\"$product-plain\",\"name\":\"Plain\",\"price\":\"1.00\",\"category\":\"food\",\"stock\":1}" \
        --timeout-ms 300 --attempts 1 >/dev/null 2>&1; then
        echo "FAIL: a client without keys was answered" >&2
        exit 1
    fi
    echo "ok: a client without keys got no answer"
fi
