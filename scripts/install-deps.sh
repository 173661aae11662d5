#!/usr/bin/env bash
# Installs the Debian packages Logbook builds and tests against, if any are missing.
# Needs root (or sudo) only when something must be installed. The Swift toolchain itself
# is expected to be on PATH already.
set -euo pipefail

# libmicrohttpd-dev serves the processes' --metrics over HTTP; prometheus brings promtool, with
# which the tests check the scraped metrics and deploy/'s alert rules; curl is the tests' scraper.
# postgresql (15 in Debian 12) brings the server binaries under /usr/lib/postgresql and the
# postgres user, for the tests' throwaway cluster (scripts/test-postgres.sh); the tests use
# no system cluster or service.
packages=(libsqlite3-dev libzmq3-dev libpq-dev pkg-config sqlite3 postgresql iproute2 libmicrohttpd-dev prometheus curl)
# libsystemd's sd_notify: `logbook run` tells systemd it is ready, alive and stopping.
packages+=(libsystemd-dev)
# libsodium: sealing personal data under per-person keys, and the master key that wraps them.
packages+=(libsodium-dev)
# Patroni on etcd: the high-availability shape of deploy/ (deploy/cluster.sh --ha) and its test.
packages+=(patroni etcd-server)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi

if ((${#missing[@]} == 0)); then
    echo "install-deps: all system packages present"
else
    echo "install-deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The wire-contract test and the Python example (tests only) need pyzmq and jsonschema
# (4.18 or later, for its `referencing` registry) in the python3 on PATH.
python_ready() {
    python3 - <<'PY' 2>/dev/null
import importlib.metadata as m, zmq, jsonschema, referencing
major, minor = (int(p) for p in m.version("jsonschema").split(".")[:2])
raise SystemExit(0 if (major, minor) >= (4, 18) else 1)
PY
}
if ! command -v python3 >/dev/null 2>&1; then
    echo "install-deps: installing python3"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3 python3-pip
fi
if python_ready; then
    echo "install-deps: python packages present"
else
    echo "install-deps: installing python packages jsonschema and pyzmq"
    if ! python3 -m pip --version >/dev/null 2>&1; then
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip
    fi
    # Debian's own python3 refuses pip installs outside a virtual environment unless told.
    python3 -m pip install --quiet --disable-pip-version-check 'jsonschema>=4.18' 'pyzmq>=25' \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
            'jsonschema>=4.18' 'pyzmq>=25'
    python_ready || { echo "install-deps: python3 cannot import jsonschema>=4.18 and zmq" >&2; exit 1; }
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "install-deps: the Swift toolchain (6.0 or later) must be on PATH" >&2
    exit 1
fi
