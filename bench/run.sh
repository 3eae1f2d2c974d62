#!/bin/sh
# bench/run.sh: build a Release tree with the benchmark and run it (bench/README.md).
# Installs librocksdb-dev and python3-venv if missing (ROWAN_BENCH=1 scripts/deps.sh),
# configures build/bench (CMAKE_BUILD_TYPE=Release, no tests), builds rowan_bench, makes a
# venv in build/bench-venv (VENV= changes it) with the two PyPI packages the bench uses
# (duckdb: the DuckDB peer, run through bench/duck_peer.py; matplotlib: bench/plot.py's
# SVG), and runs rowan_bench from the repository root on data/beijing/ with DuckDB.
# Arguments are passed to rowan_bench (--runs N, --scaled N,N, --synth ROWS, --csv FILE,
# ...). The report goes to stdout, progress to stderr. It removes the databases it made;
# the prepared CSV input stays in the work directory (default /tmp/rowan-bench).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
ROWAN_BENCH=1 scripts/deps.sh
BUILD=${BUILD:-build/bench}
VENV=${VENV:-build/bench-venv}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DROWAN_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target rowan_bench >/dev/null
if ! "$VENV/bin/python" -c 'import duckdb, matplotlib' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q duckdb==2.0.1 matplotlib==3.11.2
fi
exec "$BUILD/bench/rowan_bench" --data data/beijing --duck "$VENV/bin/python" "$@"
