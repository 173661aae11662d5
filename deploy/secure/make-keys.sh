#!/usr/bin/env bash
# Makes the keys of a secured Logbook (CURVE) for the systemd units of deploy/, under a
# directory only the service user can read (default /etc/logbook/curve, user logbook):
#
#   DIR/server, DIR/server_secret       the servers' certificate pair (worker and query processes)
#   DIR/query, DIR/query_secret         the query processes' own key towards the worker (role reader)
#   DIR/clients/                        the allow-list: public certificates, each with its role
#
# Clients make their own pairs (`logbook keygen NAME --role writer|reader|admin`, or pyzmq's
# zmq.auth.create_certificates) and send you the public file NAME; you grant it by copying
# it into DIR/clients (pyzmq's, which carry no role, into DIR/clients/ROLE/), and revoke it
# by removing it; then `systemctl reload logbook-worker 'logbook-query@*'` (SIGHUP).
#
#   sudo deploy/secure/make-keys.sh [--dir DIR] [--user USER]
set -euo pipefail

dir=/etc/logbook/curve
user=logbook
while (($#)); do
    case $1 in
    --dir) dir=$2; shift 2 ;;
    --user) user=$2; shift 2 ;;
    *) echo "usage: make-keys.sh [--dir DIR] [--user USER]" >&2; exit 2 ;;
    esac
done
LOGBOOK=${LOGBOOK:-$(command -v logbook || echo /usr/local/bin/logbook)}

id -u "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
mkdir -p "$dir/clients"
[[ -e $dir/server ]] || "$LOGBOOK" keygen server --dir "$dir" >/dev/null
if [[ ! -e $dir/query ]]; then
    "$LOGBOOK" keygen query --role reader --dir "$dir" >/dev/null
    cp "$dir/query" "$dir/clients/query"
fi
# Only root writes; only the service's group reads; nobody else even lists the folder.
chown -R "root:$user" "$dir"
chmod 0750 "$dir" "$dir/clients"
chmod 0640 "$dir"/*_secret
echo "keys in $dir (group $user). Clients need $dir/server, the servers' public certificate."
