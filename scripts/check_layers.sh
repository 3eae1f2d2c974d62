#!/bin/sh
# scripts/check_layers.sh: fails when a source file includes a header of a layer above its
# own. Rowan's layers point one way (docs/DESIGN.md): cli -> api -> exec -> planner ->
# catalog -> kv, with sql/ (the parser) beside them, used by planner and exec and using
# nothing of theirs. A file of layer L may include headers of L and of the layers this
# script lists for it; anything else is reported with the file, the line and the header.
# Run by ctest as `layers` (tests/CMakeLists.txt); takes the source root as its argument
# (default: the folder above this script). Not here: include cycles inside one layer.
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
bad=0
for layer in kv catalog sql planner exec api cli; do
  ok=$(allowed "$layer")
  for f in "$layer"/*.c "$layer"/*.h "$layer"/*.y; do
    [ -f "$f" ] || continue
    grep -n '^#include "[a-z_]*/' "$f" | while IFS= read -r line; do
      dir=$(printf '%s\n' "$line" | sed 's/^[0-9]*:#include "\([a-z_]*\)\/.*/\1/')
      case " $ok " in
        *" $dir "*) ;;
        *) echo "$f:${line%%:*}: layer $layer includes $dir/ (allowed: $ok)"; echo x >&3 ;;
      esac
    done 3>>"${TMPDIR:-/tmp}/rowan-layers.$$"
  done
done
if [ -s "${TMPDIR:-/tmp}/rowan-layers.$$" ]; then bad=1; fi
rm -f "${TMPDIR:-/tmp}/rowan-layers.$$"
[ "$bad" -eq 0 ] && echo "layers: every include points down (cli -> api -> exec -> planner -> catalog -> kv; sql beside)"
exit "$bad"
