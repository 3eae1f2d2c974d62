"""python/tests/conftest.py: fixtures of rowandb's tests: a fresh store directory per test,
and the repository root and the `rowan` shell (ROWAN_SHELL, else build/test/cli/rowan) for
the tests that compare with the shell. No test data is made here."""
import os
import pathlib

import pytest

import rowandb

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "store")


@pytest.fixture
def con(store):
    c = rowandb.connect(store)
    yield c
    c.close()


@pytest.fixture(scope="session")
def shell():
    path = os.environ.get("ROWAN_SHELL", str(ROOT / "build" / "test" / "cli" / "rowan"))
    if not os.access(path, os.X_OK):
        raise RuntimeError("the rowan shell is needed (set ROWAN_SHELL): %s" % path)
    return path
