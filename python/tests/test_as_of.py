"""python/tests/test_as_of.py: reading the past from Python (docs/SQL.md "Reading the
past"): connect(..., scn=) and Connection.scn, Phoenix's CurrentSCN property, read the
database as it was at a time in ms since 1970 UTC, refuse writes meanwhile, and read the
present again at 0; an SQL AS OF clause gives the same rows."""
import time

import pytest

import rowandb


def now_ms():
    return int(time.time() * 1000)


def test_scn_reads_the_past_and_refuses_writes(store):
    con = rowandb.connect(store, autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V VARCHAR)")
    cur.execute("UPSERT INTO T VALUES (1, 'one'), (2, 'two')")
    time.sleep(0.02)
    then = now_ms()
    time.sleep(0.02)
    cur.execute("UPSERT INTO T VALUES (1, 'uno')")
    cur.execute("DELETE FROM T WHERE K = 2")
    assert con.scn == 0
    con.scn = then
    assert con.scn == then
    cur.execute("SELECT K, V FROM T ORDER BY K")
    assert cur.fetchall() == [(1, "one"), (2, "two")]
    with pytest.raises(rowandb.DatabaseError) as e:
        cur.execute("UPSERT INTO T VALUES (3, 'three')")
    assert "writes and DDL are refused" in str(e.value)
    con.scn = 0
    cur.execute("SELECT K, V FROM T ORDER BY K")
    assert cur.fetchall() == [(1, "uno")]
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(then // 1000)) + ".%03d" % (then % 1000)
    cur.execute("SELECT K, V FROM T AS OF TIMESTAMP '%s' ORDER BY K" % stamp)
    assert cur.fetchall() == [(1, "one"), (2, "two")]
    with pytest.raises(rowandb.ProgrammingError):
        con.scn = -1
    con.close()
    again = rowandb.connect(store, autocommit=True, scn=then)
    assert again.scn == then
    cur = again.cursor()
    cur.execute("SELECT COUNT(*) FROM T")
    assert cur.fetchone() == (2,)
    again.close()


def test_scn_older_than_the_window_is_an_error(store):
    con = rowandb.connect(store, autocommit=True)
    con.execute("CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY)")
    con.scn = now_ms() - 3 * 86400 * 1000  # the default window is one day
    with pytest.raises(rowandb.DatabaseError) as e:
        con.execute("SELECT * FROM T")
    assert "older than the look-back window" in str(e.value)
    con.close()
