#!/bin/sh
# bench/run.sh: build a Release tree with the benchmark and run it (bench/README.md).
# Installs librocksdb-dev if missing (ROWAN_BENCH=1 scripts/deps.sh), configures
# build/bench (CMAKE_BUILD_TYPE=Release, no tests), builds rowan_bench and runs it from the
# repository root on data/beijing/. Arguments are passed to rowan_bench (--runs N,
# --scaled N, --batch N, --lookups N, --ranges N, --seed N, --work DIR). The report goes
# to stdout, progress to stderr. It removes the databases it made; the prepared CSV input
# stays in the work directory (default /tmp/rowan-bench) for the next run.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
ROWAN_BENCH=1 scripts/deps.sh
BUILD=${BUILD:-build/bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DROWAN_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target rowan_bench >/dev/null
exec "$BUILD/bench/rowan_bench" --data data/beijing "$@"
