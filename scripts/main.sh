#!/bin/sh
# scripts/main.sh: the README's main job. Installs what is missing, builds Rowan in
# build/main, loads the bundled Beijing air-quality archive (data/beijing/, 12 stations,
# 420,768 hourly readings, CC BY 4.0) into a fresh store with the `rowan` shell and runs the
# sensor tour: examples/sensor/schema.sql (the table), load.sql (the import), tour.sql (the
# queries, each with EXPLAIN and EXPLAIN ANALYZE), then tour_index.sql (a query going from a
# full scan to a range scan over a secondary index). STORE (default /tmp/rowan-sensor) is
# removed first. The archive's times are Beijing local time (UTC+8, no daylight saving
# time), loaded as given. examples/sensor/README.md says what each step of the tour shows;
# the tour also writes its pictures (.plot, .keymap) to /tmp/rowan-tour-*.svg.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/main -DCMAKE_BUILD_TYPE=Release -DROWAN_TESTS=OFF >/dev/null
cmake --build build/main -j"$(nproc)"   # the library, the shell, the examples (installable)
STORE=${STORE:-/tmp/rowan-sensor}
rm -rf "$STORE"
ROWAN=build/main/cli/rowan
echo "== load: examples/sensor/schema.sql and load.sql into $STORE, then a major compaction"
"$ROWAN" -bail "$STORE" ".read examples/sensor/schema.sql" ".read examples/sensor/load.sql" ".compact"
echo "== tour: examples/sensor/tour.sql"
"$ROWAN" -bail "$STORE" ".read examples/sensor/tour.sql"
echo "== indexes: examples/sensor/tour_index.sql"
"$ROWAN" -bail "$STORE" ".read examples/sensor/tour_index.sql"
echo "== pictures of the tour (open them in a browser): /tmp/rowan-tour-*.svg"
