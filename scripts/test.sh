#!/bin/sh
# scripts/test.sh: the README's test command. Installs what is missing, builds Rowan from
# scratch in build/test (warnings as errors) and runs every test with CTest. Exits non-zero
# if anything fails. It does not run the sanitizer build or the fuzzers (.ci/run does).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD=${ROWAN_BUILD_DIR:-build/test}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROWAN_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
cd "$BUILD" && ctest --output-on-failure -j"$(nproc)" --timeout 1200
