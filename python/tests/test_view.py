"""python/tests/test_view.py: views through rowandb (issue 19): a view's rows and
description as a table's, a view over a view, UPSERT and DELETE through an updatable view
with parameters for the other columns, the errors as DatabaseErrors naming the view, and
views kept across a reconnect."""
import pytest

import rowandb


def test_views(con, store):
    cur = con.cursor()
    cur.execute("CREATE TABLE T (TENANT VARCHAR NOT NULL, ID INTEGER NOT NULL, V VARCHAR "
                "CONSTRAINT PK PRIMARY KEY (TENANT, ID))")
    cur.execute("UPSERT INTO T VALUES ('a', 1, 'x'), ('a', 2, 'y'), ('b', 1, 'z')")
    con.commit()
    cur.execute("CREATE VIEW VA AS SELECT * FROM T WHERE TENANT = 'a'")
    cur.execute("CREATE VIEW VB AS SELECT ID, V AS W FROM VA WHERE ID > 1")
    cur.execute("SELECT * FROM VA ORDER BY ID")
    assert [d[0] for d in cur.description] == ["TENANT", "ID", "V"]
    assert cur.fetchall() == [("a", 1, "x"), ("a", 2, "y")]
    cur.execute("SELECT * FROM VB")
    assert [d[0] for d in cur.description] == ["ID", "W"]
    assert cur.fetchall() == [(2, "y")]
    cur.execute("UPSERT INTO VA (ID, V) VALUES (?, ?)", (3, "n"))
    cur.execute("DELETE FROM VA WHERE ID = ?", (1,))
    con.commit()
    cur.execute("SELECT TENANT, ID FROM T ORDER BY TENANT, ID")
    assert cur.fetchall() == [("a", 2), ("a", 3), ("b", 1)]
    with pytest.raises(rowandb.DatabaseError, match="view VA must be the view's constant"):
        cur.execute("UPSERT INTO VA VALUES ('b', 9, 'q')")
    with pytest.raises(rowandb.DatabaseError, match="cannot UPSERT INTO view VB: it is read-only"):
        cur.execute("UPSERT INTO VB VALUES (9, 'q')")
    con.rollback()
    with pytest.raises(rowandb.DatabaseError, match="cannot drop table T: views VB, VA read it"):
        cur.execute("DROP TABLE T")
    con.close()
    con2 = rowandb.connect(store)
    cur2 = con2.cursor()
    cur2.execute("SELECT W FROM VB ORDER BY ID")
    assert cur2.fetchall() == [("y",), ("n",)]
    con2.close()
