#!/usr/bin/env bash
# Start a throw-away PostgreSQL on 127.0.0.1:55432 (Debian's package), for the checkpoint tests.
# Prints the connection URL; `.ci/postgres.sh stop` stops it. PG_DIR / PG_PORT start another one
# (the Ray tests start theirs inside their own network namespace).
set -euo pipefail
PGDATA=${PG_DIR:-/tmp/deskresearch-ci-pg}
PORT=${PG_PORT:-55432}
bin_dir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
if [ "${1:-}" = stop ]; then
  su postgres -c "$(bin_dir)/pg_ctl -D $PGDATA stop -m fast" >/dev/null 2>&1 || true
  exit 0
fi
if [ -z "$(bin_dir)" ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null
fi
BIN=$(bin_dir)
rm -rf "$PGDATA" && mkdir -p "$PGDATA" && chown postgres "$PGDATA"
su postgres -c "$BIN/initdb -D $PGDATA -A trust -U postgres" >/dev/null
su postgres -c "$BIN/pg_ctl -D $PGDATA -l $PGDATA/log -w start \
  -o '-p $PORT -k /tmp -c listen_addresses=127.0.0.1'" >/dev/null
echo "postgresql://postgres@127.0.0.1:$PORT/postgres"
