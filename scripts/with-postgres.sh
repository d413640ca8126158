#!/usr/bin/env bash
# Runs CMD... against a throwaway PostgreSQL cluster on a free loopback port, then stops and removes it.
#
# Usage: scripts/with-postgres.sh npm run test:pg
#
# Installs Debian's `postgresql` when no server binaries are found (needs root and the Debian
# archive). initdb refuses to run as root, so the cluster runs as the `postgres` user with its data
# directory under a fresh temp dir owned by that user (never under /root). CMD sees
# CONTEXT_LEDGER_PG_URL (postgresql://postgres@127.0.0.1:PORT/postgres) and PG* variables. The
# cluster is stopped and its directory removed on any exit (trap), and CMD's exit code is returned.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 2
fi

log() { echo "with-postgres: $*" >&2; }

find_bindir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

BINDIR="$(find_bindir || true)"
if [ -z "$BINDIR" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "no PostgreSQL server under /usr/lib/postgresql and not root: install Debian's postgresql first"
    exit 1
  fi
  log "installing Debian's postgresql (apt-get update, then install)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >&2
  BINDIR="$(find_bindir || true)"
  if [ -z "$BINDIR" ]; then
    log "postgresql installed but no initdb/pg_ctl found under /usr/lib/postgresql/*/bin"
    exit 1
  fi
fi

# Run a command as the cluster owner: `postgres` when we are root, ourselves otherwise.
if [ "$(id -u)" -eq 0 ]; then
  if ! id postgres >/dev/null 2>&1; then
    log "user postgres is missing (the postgresql package creates it)"
    exit 1
  fi
  as_owner() { runuser -u postgres -- "$@"; }
  OWNER=postgres
else
  as_owner() { "$@"; }
  OWNER="$(id -un)"
fi

# A free loopback port: ask the kernel for one (node is on every machine that runs this project).
PORT="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"

BASE="$(mktemp -d /tmp/context-ledger-pg.XXXXXX)"
chmod 755 "$BASE"
DATA="$BASE/data"
SOCK="$BASE/socket"
mkdir -p "$DATA" "$SOCK"
if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$BASE"; fi

cleanup() {
  local code=$?
  if [ -f "$DATA/postmaster.pid" ]; then
    as_owner "$BINDIR/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$BASE"
  log "cluster stopped and removed"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "initdb ($BINDIR) as $OWNER in $DATA"
as_owner "$BINDIR/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$BASE/initdb.log" 2>&1 || {
  cat "$BASE/initdb.log" >&2
  exit 1
}
# A throwaway cluster: no fsync (the data does not outlive the run); enough connections for the
# multi-process tests (eight writers with their pools, subscribers, the test itself).
as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$BASE/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$SOCK -c fsync=off -c full_page_writes=off -c max_connections=200" \
  start >/dev/null || {
  cat "$BASE/server.log" >&2
  exit 1
}

export CONTEXT_LEDGER_PG_URL="postgresql://postgres@127.0.0.1:$PORT/postgres"
export PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=postgres PGDATABASE=postgres
log "$("$BINDIR/postgres" --version) up: CONTEXT_LEDGER_PG_URL=$CONTEXT_LEDGER_PG_URL"

set +e
"$@"
code=$?
set -e
exit "$code"
