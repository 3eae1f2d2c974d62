#!/bin/sh
# scripts/pytest.sh BUILD: builds and installs the rowandb Python module (python/) into a
# virtual environment (build/py-venv; VENV= changes it) against the librowan.a of the CMake
# build directory BUILD, with pytest, numpy and pandas from PyPI, then runs python/tests
# with the shell of that build (ROWAN_SHELL). scripts/test.sh runs it after CTest. It
# installs no system package (scripts/deps.sh does: python3-venv, python3-dev).
set -eu
cd "$(dirname "$0")/.."
BUILD=$(cd "${1:-build/test}" && pwd)
VENV=${VENV:-build/py-venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check pytest numpy pandas
ROWAN_LIB_DIR="$BUILD" "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
  --force-reinstall --no-deps ./python
cd python
ROWAN_SHELL="$BUILD/cli/rowan" "../$VENV/bin/python" -m pytest -q -p no:cacheprovider tests
