#!/bin/sh
# scripts/deps.sh: install the Debian packages Rowan needs to build, test and fuzz, only
# those missing (apt-get update runs first when something must be installed). Needs root
# (or sudo) when a package is missing. It does not build anything.
set -eu
PKGS="cmake make gcc pkg-config lemon liblz4-dev libsqlite3-dev libcmocka-dev libedit-dev
zlib1g-dev libxxhash-dev libcsv-dev clang libclang-rt-14-dev python3-venv python3-dev tzdata
librsvg2-bin"
[ "${ROWAN_BENCH:-0}" = 1 ] && PKGS="$PKGS librocksdb-dev python3-venv"
# ROWAN_HBASE=1: the HBase Thrift2 client's build (scripts/test-hbase.sh) and HBase itself
if [ "${ROWAN_HBASE:-0}" = 1 ]; then
  PKGS="$PKGS thrift-compiler libthrift-c-glib-dev libglib2.0-dev unzip"
  # the server filters sent as protobuf (TScan.filterBytes): protoc-c and its runtime
  PKGS="$PKGS protobuf-c-compiler libprotobuf-c-dev"
  # javac too: the tests compile their Java helpers (RegionAdmin.java, PhoenixRunner.java)
  command -v javac >/dev/null 2>&1 || PKGS="$PKGS openjdk-17-jdk-headless"
  command -v mvn >/dev/null 2>&1 || PKGS="$PKGS maven"
fi
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
