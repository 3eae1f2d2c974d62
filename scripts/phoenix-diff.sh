#!/bin/sh
# scripts/phoenix-diff.sh [--reduced] [phoenix_diff.py options]: Apache Phoenix 5.2.1 as a
# differential peer of Rowan on the HBase that scripts/hbase-up.sh started (issue 18): the
# tour on a slice of the sensor archive, the sqllogictest files of tests/sql, and a seeded
# random set (ROWAN_SEED), each through Phoenix (one JVM) and Rowan, answers compared
# (tests/hbase/phoenix/phoenix_diff.py; docs/HBASE.md "Phoenix as a differential peer").
# Without --reduced, the full run (all of tests/sql, a month of the archive for 12 stations,
# 600 random queries: about 15-20 minutes here); CTest's hbase_test_phoenix_diff runs the
# reduced one. Prints the counts per source and every difference not listed in docs/HBASE.md
# (exit status 1 when there is one); the rows of each are in WORK/differences.txt.
# Environment: ROWAN_HBASE_DIR, ROWAN_HBASE_THRIFT_PORT and ROWAN_HBASE_ZK_PORT as for
# scripts/hbase-up.sh, ROWAN_HBASE_BUILD_DIR (default build/hbase, built here if needed),
# ROWAN_PHOENIX_DIFF_DIR (the work folder, default /tmp/phoenix-diff). Not here: starting
# or stopping HBase.
set -eu
cd "$(dirname "$0")/.."
BUILD=${ROWAN_HBASE_BUILD_DIR:-build/hbase}
[ -f "$BUILD/CMakeCache.txt" ] ||
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROWAN_WERROR=ON -DROWAN_HBASE=ON >/dev/null
cmake --build "$BUILD" -j2 --target hbase_phoenix_rowan_runner >/dev/null
ROWAN_HBASE_DIR=${ROWAN_HBASE_DIR:-/tmp/rowan-hbase}
ROWAN_HBASE_THRIFT=127.0.0.1:${ROWAN_HBASE_THRIFT_PORT:-9090}
ROWAN_ZK=127.0.0.1:${ROWAN_HBASE_ZK_PORT:-2181}
ROWAN_SEED=${ROWAN_SEED:-20261130}
export ROWAN_HBASE_DIR ROWAN_HBASE_THRIFT ROWAN_ZK ROWAN_SEED
exec python3 tests/hbase/phoenix/phoenix_diff.py --source-dir . \
  --rowan-runner "$BUILD/tests/hbase/hbase_phoenix_rowan_runner" \
  --work-dir "${ROWAN_PHOENIX_DIFF_DIR:-/tmp/phoenix-diff}" "$@"
