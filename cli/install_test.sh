#!/bin/sh
# cli/install_test.sh BUILD_DIR SOURCE_DIR CC [EXTRA_CFLAGS]: install Rowan from BUILD_DIR
# to a temporary prefix, check the installed files (library static and shared, rowan.h,
# the rowan binary, the man page, rowan.pc, rowan-static.pc, the CMake package files), then
# compile examples/embed.c against the installed library with pkg-config (shared with
# rowan.pc, static with rowan-static.pc, as README.md says) and with CMake's
# find_package(rowan) (rowan::rowan and rowan::rowan_static), and run each. Used by CTest.
set -u
build="$1"; src="$2"; cc="$3"; extra="${4:-}"
tmp=$(mktemp -d /tmp/rowan-install-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
die() { echo "install test: $*"; exit 1; }
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; die "cmake --install failed"; }
pc=$(find "$prefix" -name rowan.pc | head -n 1)
[ -n "$pc" ] || die "rowan.pc not installed"
export PKG_CONFIG_PATH="$(dirname "$pc")"
[ -x "$prefix/bin/rowan" ] || die "bin/rowan not installed"
[ -f "$prefix/include/rowan.h" ] || die "include/rowan.h not installed"
[ -f "$prefix/share/man/man1/rowan.1" ] || die "man page not installed"
[ -f "$prefix/share/man/man3/rowan.3" ] || die "the API's man page (man3/rowan.3) not installed"
# every function declared in rowan.h has its man3 page, and the page names it
for f in $(grep -o 'rowan_[a-z_0-9]*(' "$prefix/include/rowan.h" | tr -d '(' | sort -u); do
  [ -f "$prefix/share/man/man3/$f.3" ] || die "no man3 page for $f"
  grep -q "$f" "$prefix/share/man/man3/rowan.3" || die "man3/rowan.3 does not describe $f"
done
libdir=$(pkg-config --variable=libdir rowan) || die "pkg-config cannot read rowan.pc"
[ -f "$libdir/librowan.a" ] || die "librowan.a not in $libdir"
ls "$libdir"/librowan.so* > /dev/null 2>&1 || die "librowan.so not in $libdir"
[ "$(pkg-config --modversion rowan)" = "$("$prefix/bin/rowan" -version | sed 's/^rowan //')" ] \
  || die "pkg-config version differs from rowan -version"
# The man page must be well-formed man(7) (when groff is available, check its warnings).
if command -v groff > /dev/null 2>&1; then
  w=$(groff -man -ww -z "$prefix/share/man/man1/rowan.1" "$prefix/share/man/man3/rowan.3" 2>&1)
  [ -z "$w" ] || die "man page warnings: $w"
fi
# Shared library build, run with the installed library.
$cc $extra -o "$tmp/embed" "$src/examples/embed.c" $(pkg-config --cflags --libs rowan) \
  || die "compiling embed.c against the installed shared library failed"
LD_LIBRARY_PATH="$libdir" "$tmp/embed" "$tmp/db1" > "$tmp/out1" || { cat "$tmp/out1"; die "embed (shared) failed"; }
grep -q "^RANGE SCAN OVER SENSOR" "$tmp/out1" || { cat "$tmp/out1"; die "embed (shared): no range scan"; }
# Static build, README.md's recipe: rowan-static.pc names the archive itself.
$cc $extra -o "$tmp/embed_static" "$src/examples/embed.c" \
  $(pkg-config --cflags --static --libs rowan-static) \
  || die "compiling embed.c against the installed static library failed"
if command -v readelf > /dev/null 2>&1 && readelf -d "$tmp/embed_static" | grep -q librowan; then
  die "the static build needs librowan.so"
fi
"$tmp/embed_static" "$tmp/db2" > "$tmp/out2" || { cat "$tmp/out2"; die "embed (static) failed"; }
# (ESTIMATE lines depend on memstore sizes, which vary from run to run.)
grep -v ESTIMATE "$tmp/out1" > "$tmp/cmp1"; grep -v ESTIMATE "$tmp/out2" > "$tmp/cmp2"
cmp -s "$tmp/cmp1" "$tmp/cmp2" || die "shared and static builds print different output"
# The installed shell opens the database the example made.
"$prefix/bin/rowan" -csv "$tmp/db1" "SELECT COUNT(*) FROM SENSOR" > "$tmp/count" || die "installed rowan failed"
[ "$(tr -d '\r' < "$tmp/count")" = "144" ] || die "installed rowan counted $(cat "$tmp/count") rows, not 144"
# CMake: find_package(rowan) with a version, both imported targets.
mkdir -p "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<CMEOF
cmake_minimum_required(VERSION 3.16)
project(embed_cmake C)
find_package(rowan 0.1 REQUIRED)
add_executable(embed_shared "$src/examples/embed.c")
target_link_libraries(embed_shared PRIVATE rowan::rowan)
add_executable(embed_static "$src/examples/embed.c")
target_link_libraries(embed_static PRIVATE rowan::rowan_static)
CMEOF
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$extra" > "$tmp/cm.log" 2>&1 && cmake --build "$tmp/cm/b" >> "$tmp/cm.log" 2>&1 \
  || { cat "$tmp/cm.log"; die "find_package(rowan) build failed"; }
for t in shared static; do
  "$tmp/cm/b/embed_$t" "$tmp/db_cm_$t" > "$tmp/out_cm" || { cat "$tmp/out_cm"; die "CMake embed_$t failed"; }
  grep -v ESTIMATE "$tmp/out_cm" > "$tmp/cmp_cm"
  cmp -s "$tmp/cmp1" "$tmp/cmp_cm" || die "CMake embed_$t prints different output"
done
# a version of another major is refused
sed -i 's/find_package(rowan 0.1 REQUIRED)/find_package(rowan 1.0 REQUIRED)/' "$tmp/cm/CMakeLists.txt"
if cmake -S "$tmp/cm" -B "$tmp/cm/b2" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/cm2.log" 2>&1; then
  die "find_package(rowan 1.0) accepted version $(pkg-config --modversion rowan)"
fi
echo "install test: ok ($prefix)"
