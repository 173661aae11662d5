#!/usr/bin/env bash
# Checks the systemd units of deploy/ with systemd's own parser (`systemd-analyze verify`):
# unknown keys, bad values, a missing executable. The units run /usr/local/bin/logbook; here
# they are checked against the built binary ($LOGBOOK, default .build/debug/logbook), and the
# query template as one instance. Each must be Type=notify with a WatchdogSec (logbook run
# speaks sd_notify). Skipped, saying so, where systemd-analyze is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
LOGBOOK=$(realpath "${LOGBOOK:-.build/debug/logbook}")
if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "check-units: systemd-analyze not installed; skipped"
    exit 0
fi
dir=$(mktemp -d -t logbook-units.XXXXXX)
trap 'rm -rf "$dir"' EXIT
for unit in deploy/*.service; do
    name=$(basename "$unit")
    grep -qx 'Type=notify' "$unit" || { echo "check-units: $name is not Type=notify" >&2; exit 1; }
    grep -q '^WatchdogSec=' "$unit" || { echo "check-units: $name has no WatchdogSec" >&2; exit 1; }
    [[ $name == *@.service ]] && name=${name/@.service/@5557.service}
    sed "s#/usr/local/bin/logbook#$LOGBOOK#g" "$unit" >"$dir/$name"
done
# --man=no: the units name no man pages; the environment files are optional or absent here.
systemd-analyze verify --man=no "$dir"/*.service
echo "check-units: $(ls "$dir" | wc -l) units verified"
