#!/bin/sh
# scripts/fuzz.sh BUILD_DIR SECONDS: run every libFuzzer target built in BUILD_DIR/fuzz for
# SECONDS each, starting from its committed seed corpus in fuzz/corpus/<target>/ (copied,
# so the committed corpus is not changed). Fails on the first crash or leak.
set -eu
BUILD=$1; SECS=$2
cd "$(dirname "$0")/.."
found=0
for bin in "$BUILD"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  found=1
  name=$(basename "$bin")
  work="$BUILD/fuzz-work/$name"; rm -rf "$work"; mkdir -p "$work"
  [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$work/"
  echo "fuzzing $name for ${SECS}s"
  ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$BUILD/fuzz-work/$name-" "$work" >"$BUILD/fuzz-work/$name.log" 2>&1 || {
    tail -50 "$BUILD/fuzz-work/$name.log"; echo "fuzz target $name failed"; exit 1; }
  tail -2 "$BUILD/fuzz-work/$name.log"
done
[ $found = 1 ] || echo "no fuzz targets built"
