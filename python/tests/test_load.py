"""python/tests/test_load.py: executemany's three paths (bulk load, chunked transactions in
autocommit mode, rows joining an open transaction) give UPSERT's answers, with their
failure rules; a one-million-row executemany; the numpy and pandas fetches."""
import datetime as dt

import numpy as np
import pandas as pd
import pytest

import rowandb

UPSERT = "UPSERT INTO L (K, S, N) VALUES (?, ?, ?)"


def open_l(store, **kw):
    con = rowandb.connect(store, **kw)
    con.execute("CREATE TABLE L (K BIGINT NOT NULL PRIMARY KEY, S VARCHAR, N INTEGER)")
    return con


def test_million_rows_bulk_path(store):
    con = open_l(store, autocommit=True)
    n = 1000000
    cur = con.executemany(UPSERT, ((i, "s%d" % (i % 97), i % 1000) for i in range(n)))
    assert cur.rowcount == n
    con.close()
    con = rowandb.connect(store)
    assert con.execute("SELECT COUNT(*), SUM(N), MIN(K), MAX(K) FROM L").fetchone() == (
        n, sum(i % 1000 for i in range(n)), 0, n - 1)
    assert con.execute("SELECT S, N FROM L WHERE K = 777777").fetchone() == ("s%d" % (777777 % 97), 777)
    con.close()


def test_bulk_path_is_all_or_nothing(store):
    con = open_l(store, autocommit=True)
    rows = [(i, "x", i) for i in range(5000)]
    rows[3000] = (3000, "x", "not a number")
    with pytest.raises(rowandb.DataError) as e:
        con.executemany(UPSERT, rows)
    assert "not a number" in str(e.value)
    assert con.execute("SELECT COUNT(*) FROM L").fetchone() == (0,)
    con.close()


def test_bulk_repeated_key_same_as_upsert(store):
    con = open_l(store, autocommit=True)
    rows = [(i % 1500, "v%d" % i, i) for i in range(3000)]  # every key twice: the last wins
    con.executemany(UPSERT, rows)
    got = dict((k, (s, n)) for k, s, n in con.execute("SELECT K, S, N FROM L").fetchall())
    assert len(got) == 1500 and got[7] == ("v1507", 1507)
    con.close()


def test_chunked_path_keeps_rows_before_a_failure(store):
    con = rowandb.connect(store, autocommit=True)
    con.execute("CREATE TABLE F (K BIGINT NOT NULL PRIMARY KEY, V DOUBLE, T TINYINT)")
    rows = [(i, i * 0.25, i % 100) for i in range(25000)]
    rows[21000] = (21000, 1.0, 1000)  # TINYINT out of range
    with pytest.raises(rowandb.DataError):
        con.executemany("UPSERT INTO F VALUES (?, ?, ?)", rows)
    # as when each row commits on its own (sqlite3's autocommit): the rows before it stay
    assert con.execute("SELECT COUNT(*), MAX(K) FROM F").fetchone() == (21000, 20999)
    assert not con.in_transaction
    con.close()


def test_rows_join_an_open_transaction(store):
    con = open_l(store)
    con.executemany(UPSERT, [(i, "t", i) for i in range(3000)])
    assert con.in_transaction
    con.rollback()
    assert con.execute("SELECT COUNT(*) FROM L").fetchone() == (0,)
    con.executemany(UPSERT, [(i, "t", i) for i in range(3000)])
    con.commit()
    assert con.execute("SELECT COUNT(*) FROM L").fetchone() == (3000,)
    con.close()


def test_numpy_and_pandas_fetches(store):
    con = rowandb.connect(store, autocommit=True)
    con.execute("CREATE TABLE P (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE, TS TIMESTAMP, "
                "S VARCHAR)")
    t0 = dt.datetime(2016, 1, 1)
    con.executemany("UPSERT INTO P VALUES (?, ?, ?, ?)",
                    [(i, None if i == 3 else i / 2, t0 + dt.timedelta(hours=i), "s%d" % i)
                     for i in range(10)])
    arrays = con.execute("SELECT K, V, S FROM P ORDER BY K").fetchnumpy()
    assert arrays["K"].dtype == np.int64 and list(arrays["K"]) == list(range(10))
    assert arrays["V"].dtype == np.float64 and np.isnan(arrays["V"][3])
    assert arrays["V"][4] == 2.0 and arrays["S"][9] == "s9"
    df = con.execute("SELECT K, TS, V FROM P ORDER BY K").fetchdf()
    assert list(df.columns) == ["K", "TS", "V"] and len(df) == 10
    assert pd.Timestamp(df["TS"][5]) == pd.Timestamp("2016-01-01 05:00:00")
    con.close()


def test_bulk_path_types_same_as_upsert(store):
    """Every type through the bulk path (rowan_bulk_add_values) lands as the same rows
    UPSERTed one by one do."""
    from decimal import Decimal
    con = rowandb.connect(store, autocommit=True)
    ddl = ("CREATE TABLE %s (K BIGINT NOT NULL PRIMARY KEY, B BOOLEAN, F FLOAT, D DOUBLE, "
           "N DECIMAL(12,3), S VARCHAR, Y VARBINARY, DT DATE, TM TIME, TS TIMESTAMP, "
           "I SMALLINT)")
    con.execute(ddl % "BULK")
    con.execute(ddl % "ONE")
    t0 = dt.datetime(2016, 1, 1)
    rows = [(i, i % 3 == 0, i / 8, i * 1.1, Decimal(i) / 7 if i % 5 else None, "s%d" % i,
             bytes([i % 256, 0]), dt.date(2000, 1, 1) + dt.timedelta(days=i),
             dt.time(i % 24, i % 60, 0, (i * 1000) % 1000000),
             t0 + dt.timedelta(seconds=i, microseconds=7 * (i % 2)), i % 30000)
            for i in range(2500)]
    cols = "K, B, F, D, N, S, Y, DT, TM, TS, I"
    marks = ", ".join("?" * 11)
    assert con.executemany("UPSERT INTO BULK (%s) VALUES (%s)" % (cols, marks), rows).rowcount == 2500
    cur = con.cursor()
    for r in rows:
        cur.execute("UPSERT INTO ONE (%s) VALUES (%s)" % (cols, marks), r)
    a = con.execute("SELECT * FROM BULK ORDER BY K").fetchall()
    b = con.execute("SELECT * FROM ONE ORDER BY K").fetchall()
    assert a == b and len(a) == 2500
    assert a[1][9] == t0 + dt.timedelta(seconds=1, microseconds=7)
    con.close()
