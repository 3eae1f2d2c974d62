"""python/tests/test_types.py: every SQL type's edge values go in as parameters and come
back as the Python type PEP 249 users expect (docs/TYPES.md ranges), NULL as None, through
both execute and executemany, after a reopen (so from store files, not the memstore); values
out of a column's range raise DataError naming the value."""
import datetime as dt
import math
import struct
from decimal import Decimal

import pytest

import rowandb

CASES = [
    ("BOOLEAN", [True, False]),
    ("TINYINT", [-128, 0, 127]),
    ("SMALLINT", [-32768, 32767]),
    ("INTEGER", [-2147483648, 2147483647]),
    ("BIGINT", [-9223372036854775808, 9223372036854775807, 0]),
    ("FLOAT", [1.5, -2.0e-3, 3.4028234663852886e38]),
    ("DOUBLE", [0.1, -1.7976931348623157e308, 5e-324, math.inf, -math.inf]),
    ("DECIMAL(38,10)", [Decimal("9999999999999999999999999999.9999999999"),
                        Decimal("-0.0000000001"), Decimal("0E-10")]),
    ("DECIMAL", [Decimal("12345678901234567890123456789012345678"), Decimal("1.5")]),
    ("CHAR(3)", ["abc", "é"]),
    ("VARCHAR", ["", "héllo wörld ✓", "x" * 10000, "tab\there"]),
    ("VARBINARY", [b"", b"\x00\x01\xff", bytes(range(256))]),
    ("DATE", [dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1969, 12, 31)]),
    ("TIME", [dt.time(0, 0), dt.time(23, 59, 59, 999999), dt.time(13, 5, 0, 250000)]),
    ("TIMESTAMP", [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
                   dt.datetime(1969, 12, 31, 23, 59, 59, 1), dt.datetime(2016, 7, 1, 12)]),
]


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("sqltype,values", CASES, ids=[c[0] for c in CASES])
def test_round_trip(store, sqltype, values):
    con = rowandb.connect(store, autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE TABLE R (K INTEGER NOT NULL PRIMARY KEY, V %s)" % sqltype)
    cur.execute("UPSERT INTO R VALUES (?, ?)", (0, None))
    for i, v in enumerate(values[:1], start=1):
        cur.execute("UPSERT INTO R VALUES (?, ?)", (i, v))
    cur.executemany("UPSERT INTO R VALUES (?, ?)",
                    [(i, v) for i, v in enumerate(values, start=1)][1:])
    con.close()
    con = rowandb.connect(store)
    got = con.execute("SELECT K, V FROM R ORDER BY K").fetchall()
    assert got[0] == (0, None)
    want = list(values)
    if sqltype == "FLOAT":  # single precision: the value comes back as its float32
        want = [struct.unpack("f", struct.pack("f", v))[0] for v in values]
    for (k, v), w in zip(got[1:], want):
        assert same(v, w), (sqltype, k, v, w)
    assert len(got) == len(values) + 1
    # the same values as parameters find their rows
    for i, w in enumerate(want, start=1):
        if isinstance(w, float) and math.isinf(w):
            continue
        assert con.execute("SELECT K FROM R WHERE V = ?", (w,)).fetchall() == [(i,)], w
    con.close()


def test_aware_datetime_is_stored_in_utc(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE Z (K INTEGER NOT NULL PRIMARY KEY, TS TIMESTAMP)")
    beijing = dt.timezone(dt.timedelta(hours=8))
    cur.execute("UPSERT INTO Z VALUES (1, ?)", (dt.datetime(2016, 7, 1, 20, 0, tzinfo=beijing),))
    con.commit()
    assert cur.execute("SELECT TS FROM Z").fetchone() == (dt.datetime(2016, 7, 1, 12, 0),)


def test_nan_double(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE N (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE)")
    cur.execute("UPSERT INTO N VALUES (1, ?)", (math.nan,))
    con.commit()
    assert math.isnan(cur.execute("SELECT V FROM N").fetchone()[0])


@pytest.mark.parametrize("sqltype,value", [
    ("TINYINT", 128), ("SMALLINT", -32769), ("INTEGER", 2 ** 31), ("BIGINT", 2 ** 63),
    ("DECIMAL(5,2)", Decimal("1234.5")), ("CHAR(2)", "abc"), ("VARCHAR(3)", "abcd"),
    ("DATE", "2016-02-30"), ("TIME", "25:00"), ("TIMESTAMP", "10000-01-01 00:00:00"),
    ("BOOLEAN", "maybe")])
def test_out_of_range_is_data_error(con, sqltype, value):
    cur = con.cursor()
    cur.execute("CREATE TABLE O (K INTEGER NOT NULL PRIMARY KEY, V %s)" % sqltype)
    with pytest.raises(rowandb.DataError) as e:
        cur.execute("UPSERT INTO O VALUES (1, ?)", (value,))
    assert e.value.code == rowandb.CONSTRAINT
    assert str(value) in str(e.value) or " V" in str(e.value)
    con.rollback()
    assert cur.execute("SELECT COUNT(*) FROM O").fetchone() == (0,)


def test_constructors():
    assert rowandb.Date(2016, 1, 2) == dt.date(2016, 1, 2)
    assert rowandb.TimestampFromTicks(0) == dt.datetime(1970, 1, 1)
    assert rowandb.DateFromTicks(86400) == dt.date(1970, 1, 2)
    assert rowandb.TimeFromTicks(3661) == dt.time(1, 1, 1)
    assert rowandb.Binary(b"ab") == b"ab"
    assert rowandb.DATETIME == "TIMESTAMP" and rowandb.NUMBER == "DECIMAL(5,2)"
    assert rowandb.STRING != "DOUBLE" and rowandb.BINARY == "VARBINARY"
