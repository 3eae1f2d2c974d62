#!/bin/sh
# scripts/main.sh: the README's main job. Installs what is missing, builds Rowan in
# build/main, loads the bundled Beijing air-quality archive into a fresh store and runs the
# example reads, printing what each one read. STORE (default /tmp/rowan-sensor) is removed
# first. Until the SQL layer lands, this is the kv/ demo (examples/kv_demo.c).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/main -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/main -j"$(nproc)" --target kv_demo
STORE=${STORE:-/tmp/rowan-sensor}
rm -rf "$STORE"
build/main/examples/kv_demo data/beijing "$STORE"
