# Sourced by .ci/run: start a throwaway PostgreSQL cluster for the tests that
# need one (their names contain "Postgres"), export its URL as
# PROMPTLOOM_TEST_POSTGRES, and stop it and delete it when the shell exits.
#
# The cluster is Debian's postgresql package, installed here if missing. It
# lives in a temporary directory owned by the postgres user, listens on a free
# port on 127.0.0.1 only, and trusts local connections: it exists for one CI
# run and holds nothing else.

pg_bindir() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

if [ -z "$(pg_bindir)" ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo=sudo; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
PG_BIN=$(pg_bindir)

# Run a PostgreSQL tool as the postgres user (initdb refuses root).
pg_as() {
  if [ "$(id -un)" = postgres ]; then
    "$@"
  elif [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    sudo -u postgres -- "$@"
  fi
}

PG_DIR=$(mktemp -d /tmp/promptloom-pg.XXXXXX)
chmod 755 "$PG_DIR"
if [ "$(id -u)" -eq 0 ]; then chown postgres: "$PG_DIR"; else sudo chown postgres: "$PG_DIR"; fi

pg_stop() {
  pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  pg_as rm -rf "$PG_DIR"
}
trap pg_stop EXIT

pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
# A free port: try random ones until the server starts (pg_ctl fails fast on
# a port in use).
for attempt in 1 2 3 4 5 6 7 8 9 10; do
  PG_PORT=$((20000 + RANDOM % 40000))
  if pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c max_connections=200" start >/dev/null; then
    break
  fi
  if [ "$attempt" = 10 ]; then
    cat "$PG_DIR/log" >&2
    echo "could not start PostgreSQL" >&2
    exit 1
  fi
done
export PROMPTLOOM_TEST_POSTGRES="postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on port $PG_PORT ($PG_DIR); PROMPTLOOM_TEST_POSTGRES=$PROMPTLOOM_TEST_POSTGRES"
