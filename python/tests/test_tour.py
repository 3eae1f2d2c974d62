"""python/tests/test_tour.py: the tour's queries (examples/sensor/tour.sql, on the bundled
archive loaded by examples/sensor/schema.sql and load.sql through the shell) give the same
answers through rowandb as through the `rowan` shell: every SELECT of the tour is run by the
shell in csv mode and by the module, and each value compared (numbers as numbers,
timestamps as their text). The store is made once per test session."""
import csv
import io
import math
import re
import subprocess

import pytest

import rowandb
from conftest import ROOT


def tour_selects():
    text = (ROOT / "examples" / "sensor" / "tour.sql").read_text()
    text = re.sub(r"--[^\n]*", "", text)
    stmts = []
    for part in text.split(";"):
        lines = [ln for ln in part.strip().splitlines() if not ln.startswith(".")]
        sql = "\n".join(lines).strip()
        if sql.upper().startswith("SELECT"):
            stmts.append(sql)
    return stmts


@pytest.fixture(scope="session")
def sensor_store(tmp_path_factory, shell):
    store = str(tmp_path_factory.mktemp("tour") / "sensor")
    for f in ("schema.sql", "load.sql"):
        subprocess.run([shell, "-bail", "-f", str(ROOT / "examples" / "sensor" / f), store],
                       cwd=ROOT, check=True, capture_output=True)
    return store


def as_text(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    return str(v)


def test_tour_has_queries():
    assert len(tour_selects()) >= 10


@pytest.mark.parametrize("sql", tour_selects())
def test_tour_query_same_as_shell(sensor_store, shell, sql):
    out = subprocess.run([shell, "-csv", "-noheader", sensor_store, sql], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    want = list(csv.reader(io.StringIO(out)))
    con = rowandb.connect(sensor_store, read_only=True)
    try:
        got = con.execute(sql).fetchall()
    finally:
        con.close()
    assert len(got) == len(want) and len(got) > 0, sql
    for grow, wrow in zip(got, want):
        assert len(grow) == len(wrow)
        for g, w in zip(grow, wrow):
            if isinstance(g, float):
                assert math.isclose(g, float(w), rel_tol=1e-12, abs_tol=1e-12), (sql, g, w)
            else:
                assert as_text(g) == w, (sql, g, w)
