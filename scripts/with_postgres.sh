#!/usr/bin/env bash
# Run a command with a throw-away PostgreSQL server for the review-store tests:
#   scripts/with_postgres.sh python3 -m pytest -q
# initdb into a fresh temporary folder, start the server on a free local port (unix socket in that folder),
# export ALICT_TEST_REVIEW_PG_URL for the command, stop the server and delete the folder at the end.
# As root the server runs as the unprivileged `postgres` user (Debian's package creates it; else `nobody`).
# ALICT_TEST_REVIEW_PG_URL already set: the command runs against that database, nothing is started.
# No PostgreSQL binaries: a warning and the command runs without the server (its 8 tests skip), except
# under CI=true, where that is an error (CI must test the store users run in production).
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 COMMAND [ARG...]" >&2
    exit 2
fi
if [ -n "${ALICT_TEST_REVIEW_PG_URL:-}" ]; then
    exec "$@"
fi

missing() {  # missing WHY COMMAND...: fail under CI, else run the command without the server
    local why="$1"
    shift
    if [ -n "${CI:-}" ]; then
        echo "error: $why (CI runs the PostgreSQL review-store tests: apt-get install -y postgresql)" >&2
        exit 1
    fi
    echo "warning: $why; the PostgreSQL review-store tests will be skipped (apt-get install -y postgresql)" >&2
    "$@"
    exit 0
}

bindir=""
if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    bindir="$(dirname "$(readlink -f "$(command -v pg_ctl)")")"
else  # Debian keeps the server binaries out of PATH, one folder per major version
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
        [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ] && bindir="$dir"
    done
fi
if [ -z "$bindir" ]; then
    missing "no PostgreSQL server binaries (pg_ctl, initdb) found" "$@"
fi

as_server_user=()
owner="$(id -un)"
scratch="${TMPDIR:-/tmp}"
if [ "$(id -u)" -eq 0 ]; then  # PostgreSQL refuses to run as root
    owner="postgres"
    id -u "$owner" >/dev/null 2>&1 || owner="nobody"
    as_server_user=(runuser -u "$owner" --)
    scratch=/tmp  # root's TMPDIR may be closed to that user
fi

workdir="$(mktemp -d "$scratch/alict-pg.XXXXXX")"
chmod 755 "$workdir"
mkdir "$workdir/data" "$workdir/socket"
chown "$owner" "$workdir/data" "$workdir/socket"
started=0

stop_server() {
    local code=$?
    if [ "$started" -eq 1 ]; then
        "${as_server_user[@]}" "$bindir/pg_ctl" -D "$workdir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$workdir"
    exit "$code"
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
if ! "${as_server_user[@]}" "$bindir/initdb" -D "$workdir/data" -U alict --auth=trust -E UTF8 --locale=C.UTF-8 \
        >"$workdir/initdb.log" 2>&1; then
    cat "$workdir/initdb.log" >&2
    missing "initdb failed (log above)" "$@"
fi
if ! "${as_server_user[@]}" "$bindir/pg_ctl" -D "$workdir/data" -l "$workdir/socket/server.log" -w -t 60 \
        -o "-p $port -k $workdir/socket -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null; then
    cat "$workdir/socket/server.log" >&2 || true
    missing "the PostgreSQL server did not start (log above)" "$@"
fi
started=1
"$bindir/createdb" -h "$workdir/socket" -p "$port" -U alict alict_test
export ALICT_TEST_REVIEW_PG_URL="postgresql+psycopg://alict@/alict_test?host=$workdir/socket&port=$port"
echo "PostgreSQL $("$bindir/pg_ctl" --version | awk '{print $3}') for the review-store tests: $ALICT_TEST_REVIEW_PG_URL"
"$@"
