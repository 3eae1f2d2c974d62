"""python/tests/test_dbapi.py: rowandb's PEP 249 behaviour: module globals, cursors,
fetches, description and rowcount, transactions (implicit BEGIN, commit, rollback, context
managers, close), exceptions with Rowan's code, one statement per execute, closed handles,
threads and interrupt. Types are in test_types.py, loads in test_load.py."""
import threading
import time

import pytest

import rowandb


def make_t(con, n=0):
    cur = con.cursor()
    cur.execute("CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V VARCHAR)")
    for i in range(n):
        cur.execute("UPSERT INTO T VALUES (?, ?)", (i, "v%d" % i))
    con.commit()
    return cur


def test_module_globals():
    assert rowandb.apilevel == "2.0"
    assert rowandb.threadsafety == 1
    assert rowandb.paramstyle == "qmark"
    assert rowandb.rowan_version.count(".") == 2
    for name in ("Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
                 "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
                 "NotSupportedError"):
        assert issubclass(getattr(rowandb, name), Exception)
    assert issubclass(rowandb.IntegrityError, rowandb.DatabaseError)
    assert issubclass(rowandb.DatabaseError, rowandb.Error)


def test_fetch_forms_and_iteration(con):
    cur = make_t(con, 10)
    cur.execute("SELECT K, V FROM T ORDER BY K")
    assert cur.fetchone() == (0, "v0")
    assert cur.fetchmany(3) == [(1, "v1"), (2, "v2"), (3, "v3")]
    cur.arraysize = 2
    assert cur.fetchmany() == [(4, "v4"), (5, "v5")]
    assert cur.fetchall() == [(i, "v%d" % i) for i in range(6, 10)]
    assert cur.fetchone() is None
    assert cur.fetchall() == []
    assert [r[0] for r in cur.execute("SELECT K FROM T WHERE K >= ?", (7,))] == [7, 8, 9]


def test_description_and_rowcount(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE D (K BIGINT NOT NULL PRIMARY KEY, P DECIMAL(7,2), S VARCHAR(5))")
    assert cur.description is None
    cur.execute("UPSERT INTO D VALUES (1, 2.5, 'a')")
    assert cur.rowcount == 1
    cur.execute("SELECT K, P, S, K + 1 AS NEXT FROM D")
    names = [d[0] for d in cur.description]
    assert names == ["K", "P", "S", "NEXT"]
    k, p, s, _ = cur.description
    assert k[1] == rowandb.NUMBER and p[1] == rowandb.NUMBER and s[1] == rowandb.STRING
    assert (p[4], p[5]) == (7, 2) and s[3] == 5
    assert cur.rowcount == -1
    cur.execute("DELETE FROM D WHERE K = 1")
    assert cur.rowcount == 1
    cur.execute("DELETE FROM D WHERE K = 99")
    assert cur.rowcount == 0


def test_implicit_transaction_commit_and_rollback(store):
    con = rowandb.connect(store)
    cur = make_t(con)
    assert not con.in_transaction
    cur.execute("UPSERT INTO T VALUES (1, 'a')")
    assert con.in_transaction
    con.rollback()
    assert not con.in_transaction
    assert cur.execute("SELECT COUNT(*) FROM T").fetchone() == (0,)
    cur.execute("UPSERT INTO T VALUES (2, 'b')")
    con.commit()
    con.close()
    con = rowandb.connect(store)
    assert con.execute("SELECT K, V FROM T").fetchall() == [(2, "b")]
    # close without commit rolls back (PEP 249)
    con.execute("UPSERT INTO T VALUES (3, 'c')")
    con.close()
    con = rowandb.connect(store)
    assert con.execute("SELECT COUNT(*) FROM T").fetchone() == (1,)
    con.close()


def test_context_manager_commits_or_rolls_back(con):
    make_t(con)
    with con:
        con.execute("UPSERT INTO T VALUES (1, 'kept')")
    with pytest.raises(ZeroDivisionError):
        with con:
            con.execute("UPSERT INTO T VALUES (2, 'dropped')")
            1 / 0
    assert con.execute("SELECT K FROM T").fetchall() == [(1,)]
    with con.cursor() as c:
        assert c.execute("SELECT V FROM T").fetchone() == ("kept",)
    with pytest.raises(rowandb.InterfaceError):
        c.execute("SELECT 1 FROM T")


def test_autocommit_and_explicit_begin(store):
    con = rowandb.connect(store, autocommit=True)
    cur = make_t(con)
    cur.execute("UPSERT INTO T VALUES (1, 'a')")
    assert not con.in_transaction
    cur.execute("BEGIN")
    assert con.in_transaction
    cur.execute("UPSERT INTO T VALUES (2, 'b')")
    con.rollback()
    other = rowandb.connect(store + "2")
    other.close()
    assert cur.execute("SELECT K FROM T").fetchall() == [(1,)]
    con.close()


def test_errors_carry_rowan_codes(con):
    cur = make_t(con)
    with pytest.raises(rowandb.ProgrammingError) as e:
        cur.execute("SELEC K FROM T")
    assert e.value.code == rowandb.SYNTAX and e.value.errname == "ROWAN_SYNTAX"
    assert e.value.offset == 0 and "SELEC" in str(e.value)
    with pytest.raises(rowandb.ProgrammingError) as e:
        cur.execute("SELECT NOPE FROM T")
    assert e.value.code == rowandb.ERROR and "NOPE" in str(e.value)
    with pytest.raises(rowandb.IntegrityError) as e:
        cur.execute("UPSERT INTO T (V) VALUES ('no key')")
    assert e.value.code in (rowandb.CONSTRAINT, rowandb.ERROR)
    with pytest.raises(rowandb.ProgrammingError, match="2 parameters, 1 were given"):
        cur.execute("UPSERT INTO T VALUES (?, ?)", (1,))
    with pytest.raises(rowandb.ProgrammingError, match="one statement"):
        cur.execute("SELECT K FROM T; SELECT V FROM T")
    with pytest.raises(rowandb.InterfaceError, match="not supported"):
        cur.execute("SELECT K FROM T WHERE K = ?", (object(),))
    # the cursor and the connection still work after each error
    con.rollback()
    cur.execute("UPSERT INTO T VALUES (5, 'x')")
    assert cur.execute("SELECT V FROM T WHERE K = 5").fetchone() == ("x",)


def test_data_error_for_value_out_of_range(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE S (K TINYINT NOT NULL PRIMARY KEY)")
    with pytest.raises(rowandb.DataError) as e:
        cur.execute("UPSERT INTO S VALUES (?)", (300,))
    assert e.value.code == rowandb.CONSTRAINT and "300" in str(e.value)


def test_failed_step_raises_once_and_the_statement_runs_again(con):
    """A step that fails raises its own error, once: the module then resets the statement,
    and rowan_reset returning that step's code again (as sqlite3_reset does) is not a new
    error. The cursor's kept statement (same SQL) runs again with other values."""
    cur = con.cursor()
    cur.execute("CREATE TABLE S (K INTEGER NOT NULL PRIMARY KEY, V TINYINT)")
    up = "UPSERT INTO S VALUES (?, ?)"
    with pytest.raises(rowandb.DataError) as e:
        cur.execute(up, (1, 300))
    assert e.value.code == rowandb.CONSTRAINT and "300" in str(e.value)
    cur.execute(up, (1, 3))
    assert cur.rowcount == 1
    cur.execute(up, (2, 4))
    q = "SELECT 10 / (K - ?) FROM S"
    cur.execute(q, (2,))  # K 1 gives a row, K 2 divides by zero
    with pytest.raises(rowandb.DatabaseError) as e:
        cur.fetchall()
    assert e.value.code == rowandb.CONSTRAINT and "division by zero" in str(e.value)
    assert cur.execute(q, (5,)).fetchall() == [(-2,), (-3,)]
    assert cur.execute("SELECT SUM(V) FROM S").fetchone() == (7,)


def test_executescript_and_locked_store(store):
    con = rowandb.connect(store)
    con.executescript("CREATE TABLE A (K INTEGER NOT NULL PRIMARY KEY); "
                      "UPSERT INTO A VALUES (1); UPSERT INTO A VALUES (2);")
    assert con.execute("SELECT COUNT(*) FROM A").fetchone() == (2,)
    with pytest.raises(rowandb.OperationalError) as e:
        rowandb.connect(store)
    assert e.value.code == rowandb.LOCKED
    con.close()
    con.close()  # idempotent
    with pytest.raises(rowandb.InterfaceError):
        con.cursor()


def test_missing_store_without_create(tmp_path):
    with pytest.raises(rowandb.OperationalError) as e:
        rowandb.connect(str(tmp_path / "absent"), create=False)
    assert e.value.code == rowandb.NOTFOUND


def test_join_memory_spills_and_answers_the_same(store):
    """join_memory: a hash join past it spills to disk (EXPLAIN ANALYZE says so) and gives
    the answer it gives in memory."""
    con = rowandb.connect(store)
    con.execute("CREATE TABLE J (K INTEGER PRIMARY KEY, B INTEGER, S VARCHAR)")
    con.executemany("UPSERT INTO J VALUES (?, ?, ?)",
                    [(k, k % 7, "text %d" % k) for k in range(2000)])
    con.commit()
    q = "SELECT COUNT(*), SUM(A.K), MAX(B.S) FROM J A JOIN J B ON A.B = B.B"
    want = con.execute(q).fetchall()
    con.close()
    small = rowandb.connect(store, join_memory=16 * 1024)
    assert small.execute(q).fetchall() == want
    plan = "\n".join(r[0] for r in small.execute("EXPLAIN ANALYZE " + q).fetchall())
    assert " in 64 partitions, " in plan
    small.close()
    with pytest.raises(rowandb.ProgrammingError):
        rowandb.connect(store, join_memory=-1)


def test_index_memory_pages_and_answers_the_same(store):
    """index_memory: past it the store files are opened with paged block indexes
    (Connection.families says how many, holding less memory) and answer the same."""
    con = rowandb.connect(store)
    con.execute("CREATE TABLE P (G INTEGER NOT NULL, K INTEGER NOT NULL, V DOUBLE, S VARCHAR,"
                " CONSTRAINT PK PRIMARY KEY (G, K)) BLOCKSIZE = 512")
    con.executemany("UPSERT INTO P VALUES (?, ?, ?, ?)",
                    [(k % 5, k, k * 0.5, "s%d" % (k % 11)) for k in range(6000)])
    con.commit()
    qs = ["SELECT * FROM P WHERE G = 3 AND K = 4003",
          "SELECT G, COUNT(*), SUM(V), MAX(S) FROM P GROUP BY G",
          "SELECT K, V FROM P WHERE G = 1 AND K BETWEEN 2000 AND 2100 ORDER BY K DESC LIMIT 9"]
    want = [con.execute(q).fetchall() for q in qs]
    con.close()
    whole = rowandb.connect(store, index_memory=None)
    fams = {f["name"]: f for f in whole.families("P")}
    assert fams["0"]["store_files"] >= 1 and fams["0"]["paged_files"] == 0
    assert [whole.execute(q).fetchall() for q in qs] == want
    whole.close()
    paged = rowandb.connect(store, index_memory=1)
    pfams = {f["name"]: f for f in paged.families("P")}
    assert pfams["0"]["paged_files"] == pfams["0"]["store_files"] == fams["0"]["store_files"]
    assert pfams["0"]["index_bytes"] < fams["0"]["index_bytes"]
    assert [paged.execute(q).fetchall() for q in qs] == want
    paged.close()
    with pytest.raises(rowandb.ProgrammingError):
        rowandb.connect(store, index_memory=-1)


def test_regions(store):
    """Connection.regions: one for a table not split; SPLIT ON's points and a salted table's
    buckets as start keys, bytes and column values."""
    con = rowandb.connect(store)
    make_t(con, 3)
    assert con.regions("t") == [{"start_key": None, "start_key_text": "[*]"}]
    con.execute("CREATE TABLE P (K VARCHAR NOT NULL, V INTEGER NOT NULL, "
                "CONSTRAINT PK PRIMARY KEY (K, V)) SPLIT ON ('c', 'f')")
    r = con.regions("P")
    assert [x["start_key_text"] for x in r] == ["[*]", "['c', *]", "['f', *]"]
    assert r[0]["start_key"] is None
    assert r[1]["start_key"].startswith(b"c") and r[2]["start_key"].startswith(b"f")
    con.execute("CREATE TABLE S (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE) SALT_BUCKETS = 3")
    assert con.regions("S") == [{"start_key": None, "start_key_text": "[*]"},
                                {"start_key": b"\x01", "start_key_text": "[1, *]"},
                                {"start_key": b"\x02", "start_key_text": "[2, *]"}]
    with pytest.raises(rowandb.Error):
        con.regions("NOSUCH")
    con.close()


def test_read_only_refuses_writes(store):
    make_t(rowandb.connect(store), 3).connection.close()
    con = rowandb.connect(store, read_only=True)
    assert con.execute("SELECT COUNT(*) FROM T").fetchone() == (3,)
    with pytest.raises(rowandb.OperationalError) as e:
        con.execute("UPSERT INTO T VALUES (9, 'no')")
        con.commit()
    assert e.value.code == rowandb.READONLY
    con.close()


def test_same_thread_rule(con):
    make_t(con, 1)
    errs = []

    def use():
        try:
            con.execute("SELECT K FROM T")
        except rowandb.ProgrammingError as e:
            errs.append(e)

    t = threading.Thread(target=use)
    t.start()
    t.join()
    assert len(errs) == 1 and "thread" in str(errs[0])


def test_interrupt_from_another_thread(store):
    con = rowandb.connect(store, autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE TABLE BIG (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE)")
    cur.executemany("UPSERT INTO BIG VALUES (?, ?)", ((i, i * 0.5) for i in range(200000)))
    slow = "SELECT SUM(V), COUNT(*) FROM BIG WHERE V >= 0"
    done = threading.Event()
    hits = []

    def interrupter():
        while not done.is_set():
            con.interrupt()
            hits.append(1)
            time.sleep(0.0005)

    t = threading.Thread(target=interrupter)
    t.start()
    try:
        with pytest.raises(rowandb.OperationalError) as e:
            for _ in range(2000):  # one of these runs is stopped by an interrupt
                cur.execute(slow).fetchall()
        assert e.value.code == rowandb.INTERRUPT
    finally:
        done.set()
        t.join()
    # the connection works after it
    assert cur.execute("SELECT COUNT(*) FROM BIG").fetchone() == (200000,)
    con.close()


def test_alter_table(con, store):
    """ALTER TABLE through the module: description follows ADD and DROP, a re-added column
    reads NULL (never the dropped one's values), errors are ProgrammingError-like
    DatabaseErrors naming the column, and the schema survives a reconnect."""
    cur = make_t(con, 3)
    cur.execute("ALTER TABLE T ADD W INTEGER, M.X DOUBLE")
    cur.execute("UPSERT INTO T (K, W) VALUES (1, 10)")
    cur.execute("SELECT * FROM T ORDER BY K")
    assert [d[0] for d in cur.description] == ["K", "V", "W", "X"]
    assert cur.fetchall() == [(0, "v0", None, None), (1, "v1", 10, None), (2, "v2", None, None)]
    con.commit()
    cur.execute("ALTER TABLE T DROP COLUMN V")
    cur.execute("ALTER TABLE T ADD V INTEGER")
    cur.execute("SELECT K, V FROM T ORDER BY K")
    assert cur.fetchall() == [(0, None), (1, None), (2, None)]
    with pytest.raises(rowandb.DatabaseError, match="already has a column W"):
        cur.execute("ALTER TABLE T ADD W VARCHAR")
    with pytest.raises(rowandb.DatabaseError, match="key column cannot be dropped"):
        cur.execute("ALTER TABLE T DROP COLUMN K")
    con.commit()
    con.close()
    con2 = rowandb.connect(store)
    cur2 = con2.cursor()
    cur2.execute("SELECT * FROM T WHERE K = 1")
    assert [d[0] for d in cur2.description] == ["K", "W", "X", "V"]
    assert cur2.fetchall() == [(1, 10, None, None)]
    con2.close()
