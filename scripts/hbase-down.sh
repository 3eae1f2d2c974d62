#!/bin/sh
# scripts/hbase-down.sh: stop what scripts/hbase-up.sh started under $ROWAN_HBASE_DIR
# (default /tmp/rowan-hbase): the Thrift2 gateway, then HBase (a clean cluster shutdown,
# then the JVM killed if it has not gone within 90 s). With --wipe it also deletes the data
# folder (tables, ZooKeeper state); the jars stay. Exits 0 when nothing is left running.
set -u
DIR=${ROWAN_HBASE_DIR:-/tmp/rowan-hbase}
stop_pid() { # stop_pid FILE SECONDS: TERM, wait, then KILL
  f=$1; secs=$2
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    i=0
    while kill -0 "$pid" 2>/dev/null && [ "$i" -lt "$secs" ]; do sleep 1; i=$((i + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
      echo "hbase-down: pid $pid did not stop in $secs s; killing it" >&2
      kill -9 "$pid" 2>/dev/null
    fi
  fi
  rm -f "$f"
}
stop_pid "$DIR/thrift2.pid" 30
# the master's TERM handler shuts the local cluster down (region servers flush, ZooKeeper stops)
stop_pid "$DIR/master.pid" 90
if [ "${1:-}" = "--wipe" ]; then rm -rf "$DIR/data"; fi
echo "hbase-down: stopped"
