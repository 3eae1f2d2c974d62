#!/bin/sh
# scripts/check_layers.sh: fails when a source file includes a header of a layer above its
# own, or a kv/ module includes a header of a kv module above its own. Rowan's layers point
# one way (docs/DESIGN.md): cli -> api -> exec -> planner -> catalog -> kv, with sql/ (the
# parser) beside them, used by planner and exec and using nothing of theirs. A file of layer
# L may include headers of L and of the layers this script lists for it.
#
# Inside kv/ the modules are folders, ordered as kv/README.md says (level, low to high):
#   0 kv/kv.h, kv/backend.h   the public contract (kv/'s top folder: headers only)
#   1 kv/util                  coding, status, cells and iterators, lz4, bloom, cache, trace
#   2 kv/env                   the file-system seam
#   3 kv/sf                    store files
#   4 kv/db                    the store: WAL, MANIFEST, memstores, flush, compaction
#   5 kv/scan, kv/colscan, kv/bulk, kv/salvage   readers and writers over the store
#   6 kv/backend               the storage backends of kv/backend.h
# A kv file may include the headers of its own module, of kv/'s top folder, and of modules
# of a lower level; not of a module of its own level (siblings stay independent) or above.
# The top folder's headers include only each other. A folder of kv/ with no level here is
# reported too, so a new module gets its place in the order before it gets code.
#
# Every violation is reported with the file, the line and the header. Run by ctest as
# `layers` (tests/CMakeLists.txt); takes the source root as its argument (default: the
# folder above this script). Not here: include cycles inside one layer or one kv module,
# and calls that a header declared elsewhere makes possible (only #include lines are read).
set -u
root=${1:-$(dirname "$0")/..}
cd "$root"
allowed() {
  case $1 in
    kv) echo "kv" ;;
    catalog) echo "catalog kv" ;;
    sql) echo "sql" ;;
    planner) echo "planner catalog kv sql" ;;
    exec) echo "exec planner catalog kv sql" ;;
    api) echo "api exec planner catalog kv sql" ;;
    cli) echo "cli api exec planner catalog kv sql" ;;
  esac
}
# kv_level MODULE: the module's level in kv/'s order, empty for a folder that is no module.
kv_level() {
  case $1 in
    top) echo 0 ;;
    util) echo 1 ;;
    env) echo 2 ;;
    sf) echo 3 ;;
    db) echo 4 ;;
    scan | colscan | bulk | salvage) echo 5 ;;
    backend) echo 6 ;;
  esac
}
# kv_module PATH: the kv module of kv/PATH (a file or header path below kv/): its first
# folder, or "top" for a file of kv/ itself.
kv_module() {
  case $1 in
    */*) echo "${1%%/*}" ;;
    *) echo top ;;
  esac
}
log="${TMPDIR:-/tmp}/rowan-layers.$$"
: >"$log"
for layer in kv catalog sql planner exec api cli; do
  [ -d "$layer" ] || continue
  ok=$(allowed "$layer")
  find "$layer" -type f \( -name '*.c' -o -name '*.h' -o -name '*.y' \) | sort |
    while IFS= read -r f; do
      grep -n '^#include "[a-z_]*/' "$f" | while IFS= read -r line; do
        dir=$(printf '%s\n' "$line" | sed 's/^[0-9]*:#include "\([a-z_]*\)\/.*/\1/')
        case " $ok " in
          *" $dir "*) ;;
          *) echo "$f:${line%%:*}: layer $layer includes $dir/ (allowed: $ok)"; echo x >>"$log" ;;
        esac
      done
    done
done
# kv/'s modules among themselves.
find kv -type f \( -name '*.c' -o -name '*.h' \) | sort | while IFS= read -r f; do
  own=$(kv_module "${f#kv/}")
  lvl=$(kv_level "$own")
  if [ -z "$lvl" ]; then
    echo "$f: kv/$own/ is not a kv module: give it a level in scripts/check_layers.sh and kv/README.md"
    echo x >>"$log"
    continue
  fi
  grep -n '^#include "kv/' "$f" | while IFS= read -r line; do
    hdr=$(printf '%s\n' "$line" | sed 's/^[0-9]*:#include "kv\/\([^"]*\)".*/\1/')
    to=$(kv_module "$hdr")
    tl=$(kv_level "$to")
    if [ "$to" = "$own" ] || [ "$to" = top ]; then continue; fi
    if [ -n "$tl" ] && [ "$tl" -lt "$lvl" ]; then continue; fi
    echo "$f:${line%%:*}: kv module $own (level $lvl) includes kv/$hdr of module $to" \
      "(level ${tl:-none}): a module uses only its own headers, kv/'s top and lower levels"
    echo x >>"$log"
  done
done
bad=0
if [ -s "$log" ]; then bad=1; fi
rm -f "$log"
[ "$bad" -eq 0 ] && echo "layers: every include points down (cli -> api -> exec -> planner -> catalog -> kv;" \
  "sql beside; in kv: backend -> scan, colscan, bulk, salvage -> db -> sf -> env -> util)"
exit "$bad"
