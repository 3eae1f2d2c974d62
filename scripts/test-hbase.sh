#!/bin/sh
# scripts/test-hbase.sh: the tests that need a real HBase (CTest label `hbase`). Installs what
# is missing (ROWAN_HBASE=1 scripts/deps.sh: thrift-compiler, the c_glib library, protobuf-c,
# Java and Maven when absent), starts HBase and its Thrift2 gateway (scripts/hbase-up.sh, which
# fetches the pinned jars the first time), builds Rowan with ROWAN_HBASE=ON in build/hbase
# (the Thrift2 client generated from the jar's IDL), runs the tests, and stops HBase
# whatever happened (scripts/hbase-down.sh --wipe); then the write, pool and chunked-count
# tests again under ThreadSanitizer (build/hbase-tsan). Exits non-zero if anything fails. About 15 minutes on a
# warm Maven repository. Not run by scripts/test.sh (the embedded build
# needs none of this); .ci/run runs it.
set -eu
cd "$(dirname "$0")/.."
ROWAN_HBASE=1 scripts/deps.sh
BUILD=${ROWAN_HBASE_BUILD_DIR:-build/hbase}
trap 'scripts/hbase-down.sh --wipe' EXIT
scripts/hbase-up.sh
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROWAN_WERROR=ON -DROWAN_HBASE=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target hbase_test_client hbase_test_backend hbase_test_stats \
  hbase_test_api hbase_test_fault_gateway hbase_test_fault_region hbase_test_fault_writer \
  hbase_test_fault_batch hbase_test_multirange hbase_test_write hbase_test_count slt_runner rowan \
  exec_test_differential exec_test_differential_join \
  hbase_phoenix_rowan_runner hbase_test_results
ROWAN_SEED=${ROWAN_SEED:-20261130}
export ROWAN_SEED
# the hand reader of the gateway's replies on built byte strings (no HBase, no label)
(cd "$BUILD" && ctest -R '^hbase_test_results$' --output-on-failure)
(cd "$BUILD" && ROWAN_HBASE_THRIFT=127.0.0.1:${ROWAN_HBASE_THRIFT_PORT:-9090} \
  ROWAN_ZK=127.0.0.1:${ROWAN_HBASE_ZK_PORT:-2181} ctest -L hbase --output-on-failure --timeout 600)
# The tests whose threads share the backend (several writer connections, parallel scans on
# the connection pool, the filtered count in parallel chunks on pooled connections) again
# under ThreadSanitizer, in build/hbase-tsan; ROWAN_HBASE_TSAN=0 skips them (by hand).
if [ "${ROWAN_HBASE_TSAN:-1}" = 1 ]; then
  TBUILD=${ROWAN_HBASE_TSAN_BUILD_DIR:-build/hbase-tsan}
  SUPP=$(pwd)/tests/hbase/tsan-glib.supp
  cmake -S . -B "$TBUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROWAN_TSAN=ON -DROWAN_WERROR=ON \
    -DROWAN_HBASE=ON >/dev/null
  cmake --build "$TBUILD" -j"$(nproc)" --target hbase_test_write hbase_test_stats hbase_test_count
  (cd "$TBUILD" && G_SLICE=always-malloc \
    TSAN_OPTIONS="halt_on_error=1 suppressions=$SUPP" \
    ROWAN_HBASE_THRIFT=127.0.0.1:${ROWAN_HBASE_THRIFT_PORT:-9090} \
    ROWAN_ZK=127.0.0.1:${ROWAN_HBASE_ZK_PORT:-2181} \
    ctest -R '^hbase_test_(write|stats|count)$' --output-on-failure --timeout 600)
fi
