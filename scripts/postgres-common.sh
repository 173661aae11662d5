# Shared by the scripts that start throwaway PostgreSQL servers for the tests
# (test-postgres.sh, test-postgres-pair.sh); sourced, not run.

# The newest PostgreSQL server binaries' directory (15 first, Debian 12's).
bin_dir() {
    local dir
    for dir in /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
        if [[ -x $dir/initdb && -x $dir/pg_ctl && -x $dir/pg_basebackup ]]; then
            echo "$dir"
            return
        fi
    done
    echo "$(basename "$0"): no PostgreSQL server binaries under /usr/lib/postgresql (run scripts/install-deps.sh)" >&2
    exit 1
}

# Runs a command as the postgres user when we are root (PostgreSQL refuses root), else as ourselves.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# A loopback port free right now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
