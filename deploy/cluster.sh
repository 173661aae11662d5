#!/usr/bin/env bash
# A local cluster on loopback: one worker and two query processes, each with its own data
# directory under $CLUSTER_DIR (default: a new temporary directory).
#
#   deploy/cluster.sh           start them, print the endpoints, stop all on Ctrl-C
#   deploy/cluster.sh --check   start them, send a command, check that BOTH query
#                               processes answer with it (read-your-writes), stop, exit 0/1
#
# Uses the logbook binary in $LOGBOOK (default: .build/debug/logbook, then PATH) and the
# ports $BASE_PORT+0…+4 (default 7555: commands 7555, feed 7556, queries 7557 and 7567, log 7558).
set -euo pipefail
cd "$(dirname "$0")/.."

LOGBOOK=${LOGBOOK:-.build/debug/logbook}
[[ -x $LOGBOOK ]] || LOGBOOK=$(command -v logbook)
BASE_PORT=${BASE_PORT:-7555}
CLUSTER_DIR=${CLUSTER_DIR:-$(mktemp -d -t logbook-cluster.XXXXXX)}

export LOGBOOK_COMMANDS=tcp://127.0.0.1:$BASE_PORT
export LOGBOOK_FEED=tcp://127.0.0.1:$((BASE_PORT + 1))
export LOGBOOK_LOG=tcp://127.0.0.1:$((BASE_PORT + 3))
QUERIES_A=tcp://127.0.0.1:$((BASE_PORT + 2))
QUERIES_B=tcp://127.0.0.1:$((BASE_PORT + 12))

pids=()
stop() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT

"$LOGBOOK" run worker --data-dir "$CLUSTER_DIR/worker" 2>>"$CLUSTER_DIR/worker.log" &
pids+=($!)
"$LOGBOOK" run query --data-dir "$CLUSTER_DIR/query-a" --queries "$QUERIES_A" 2>>"$CLUSTER_DIR/query-a.log" &
pids+=($!)
"$LOGBOOK" run query --data-dir "$CLUSTER_DIR/query-b" --queries "$QUERIES_B" 2>>"$CLUSTER_DIR/query-b.log" &
pids+=($!)

echo "worker:  commands $LOGBOOK_COMMANDS, feed $LOGBOOK_FEED, log $LOGBOOK_LOG"
echo "queries: $QUERIES_A and $QUERIES_B"
echo "files and logs: $CLUSTER_DIR"

if [[ ${1:-} != --check ]]; then
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
