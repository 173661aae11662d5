#!/usr/bin/env bash
# Installs the Debian packages Logbook builds and tests against, if any are missing.
# Needs root (or sudo) only when something must be installed. The Swift toolchain itself
# is expected to be on PATH already.
set -euo pipefail

packages=(libsqlite3-dev libzmq3-dev libpq-dev pkg-config sqlite3)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
    echo "install-deps: all system packages present"
    exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

if ! command -v swift >/dev/null 2>&1; then
    echo "install-deps: the Swift toolchain (6.0 or later) must be on PATH" >&2
    exit 1
fi
