"""rowandb: a PEP 249 (DB-API 2.0) module for Rowan, the embedded SQL engine in the style of
Apache Phoenix (https://peps.python.org/pep-0249/).

What it does: connections to a Rowan store directory (or ":memory:"), cursors with qmark
parameters, execute / executemany / executescript, fetchone / fetchmany / fetchall and
iteration, description and rowcount, commit and rollback mapped to BEGIN / COMMIT /
ROLLBACK, context managers, the standard exception classes carrying Rowan's code, and
optional fetches into numpy arrays or a pandas DataFrame. The C part (_rowan.c) binds
values, steps statements and builds result tuples; this file holds the DB-API rules.

What it does not do: it is not thread-safe per connection (threadsafety = 1: threads may
share the module, not connections; Connection.interrupt is the one call another thread may
make), and it has no HBase URIs yet (a path or ":memory:" only).

Transactions follow PEP 249 and Python's sqlite3 module: with autocommit False (the
default) the first UPSERT or DELETE opens a transaction (BEGIN) that commit() or rollback()
ends; DDL and queries outside one run on their own. With autocommit True every statement
commits by itself; there executemany of a plain `UPSERT INTO t (cols) VALUES (?, ...)` over
many rows takes Rowan's bulk-load path (rowan_bulk_add_values: every row or none becomes
visible, at the end), and other statements run in transactions of Cursor.CHUNK_ROWS rows.
"""

import datetime as _dt
import itertools as _itertools
import decimal as _decimal
import re as _re
import threading as _threading
import time as _time
import weakref as _weakref

from . import _rowan

apilevel = "2.0"
threadsafety = 1
paramstyle = "qmark"
__version__ = "0.1.0"
rowan_version = _rowan.libversion()

# Rowan's result codes (include/rowan.h)
OK, ERROR, SYNTAX, CONSTRAINT, RANGE, MISUSE, LOCKED, CORRUPT = 0, 1, 2, 3, 4, 5, 6, 7
IOERR, FULL, NOMEM, READONLY, TOOBIG, NOTFOUND, ABORT, INTERRUPT = 8, 9, 10, 11, 12, 13, 14, 15


class Warning(Exception):  # noqa: A001 (PEP 249 name)
    """Important warnings (PEP 249). Rowan raises none today."""


class Error(Exception):
    """Base of every rowandb error. `code` is Rowan's result code (an int, e.g. 2),
    `errname` its name ("ROWAN_SYNTAX"), `offset` the byte offset in the SQL or -1."""

    code = None
    errname = None
    offset = -1


class InterfaceError(Error):
    """Misuse of the module: a closed connection or cursor, a statement used wrongly."""


class DatabaseError(Error):
    """An error of the database."""


class DataError(DatabaseError):
    """A value that does not fit its column: out of range, too long, a bad date."""


class OperationalError(DatabaseError):
    """The store could not do it: locked, I/O error, disk full, interrupted, read-only."""


class IntegrityError(DatabaseError):
    """A constraint: NULL in a NOT NULL column, a key repeated where it must not be."""


class InternalError(DatabaseError):
    """Rowan's own state is not as it should be: damaged files (ROWAN_CORRUPT)."""


class ProgrammingError(DatabaseError):
    """Bad SQL: a syntax error, an unknown table or column, wrong parameters."""


class NotSupportedError(DatabaseError):
    """Something Rowan does not do (a feature the SQL names that is not implemented)."""


_CLASSES = {
    ERROR: ProgrammingError, SYNTAX: ProgrammingError, CONSTRAINT: DataError,
    RANGE: ProgrammingError, MISUSE: InterfaceError, LOCKED: OperationalError,
    CORRUPT: InternalError, IOERR: OperationalError, FULL: OperationalError,
    NOMEM: OperationalError, READONLY: OperationalError, TOOBIG: DataError,
    NOTFOUND: OperationalError, ABORT: OperationalError, INTERRUPT: OperationalError,
}
_rowan.set_error_classes(_CLASSES, DatabaseError, _decimal.Decimal, IntegrityError)


# ---- types (PEP 249 "Type Objects and Constructors") ----------------------------------

Date = _dt.date
Time = _dt.time
Timestamp = _dt.datetime
Binary = bytes


def DateFromTicks(ticks):
    return Date(*_time.gmtime(ticks)[:3])


def TimeFromTicks(ticks):
    return Time(*_time.gmtime(ticks)[3:6])


def TimestampFromTicks(ticks):
    return Timestamp(*_time.gmtime(ticks)[:6])


class _TypeObject:
    def __init__(self, *names):
        self.names = frozenset(names)

    def __eq__(self, other):
        if isinstance(other, str):
            return other.split("(")[0].strip().upper() in self.names
        return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        return hash(self.names)


STRING = _TypeObject("CHAR", "VARCHAR")
BINARY = _TypeObject("VARBINARY")
NUMBER = _TypeObject("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "FLOAT",
                     "REAL", "DOUBLE", "DECIMAL")
DATETIME = _TypeObject("DATE", "TIME", "TIMESTAMP")
ROWID = _TypeObject()

_SYNC = {"full": _rowan.SYNC_FULL, "normal": _rowan.SYNC_NORMAL, "off": _rowan.SYNC_OFF}
_WORD = _re.compile(r"\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*([A-Za-z]+)", _re.S)
_BLANK = _re.compile(r"\s*(?:(?:--[^\n]*(?:\n|$)|/\*.*?\*/|;)\s*)*$", _re.S)
_UPSERT_VALUES = _re.compile(
    r"\s*UPSERT\s+INTO\s+(\"[^\"]+\"|[A-Za-z_][\w.]*)\s*\(([^()]*)\)\s*VALUES\s*"
    r"\(\s*\?(?:\s*,\s*\?)*\s*\)\s*;?\s*$", _re.I | _re.S)


def _first_word(sql):
    m = _WORD.match(sql)
    return m.group(1).upper() if m else ""


def _column_info(name, decl):
    """(name, type_code, display_size, internal_size, precision, scale, null_ok)"""
    size = prec = scale = None
    if decl:
        m = _re.match(r"\s*(\w+)\s*\(\s*(\d+)\s*(?:,\s*(\d+))?\s*\)", decl)
        if m and m.group(1).upper() == "DECIMAL":
            prec, scale = int(m.group(2)), int(m.group(3) or 0)
        elif m:
            size = int(m.group(2))
    return (name, decl, None, size, prec, scale, None)


def connect(database, *, read_only=False, create=True, sync="full", cache_size=0,
            join_memory=0, autocommit=False, check_same_thread=True, scn=0, index_memory=0):
    """Open the Rowan store in directory `database` (created when missing unless
    create=False; ":memory:" for a store held in memory) and return a Connection.
    sync: "full" (a commit that returned is on disk), "normal" or "off" (ROWAN_SYNC_*);
    cache_size: block cache bytes (0: Rowan's default, 64 MiB); join_memory: bytes of
    rows one join may hold before a hash join spills to temporary files in the store's
    directory (0: Rowan's default, 256 MiB; rowan_options.join_memory); scn: read the
    database as it was at this time, in milliseconds since 1970 UTC (Phoenix's CurrentSCN
    connection property; rowan_set_as_of): SELECTs see the past, writes are refused; 0
    (default) reads the present. Connection.scn changes it later. index_memory: bytes of
    whole block indexes the open store files may keep (rowan_options.index_memory; 0:
    Rowan's default, 64 MiB; None: no bound); files opened past it read their index a page
    at a time through the block cache."""
    return Connection(database, read_only=read_only, create=create, sync=sync,
                      cache_size=cache_size, join_memory=join_memory, autocommit=autocommit,
                      check_same_thread=check_same_thread, scn=scn, index_memory=index_memory)


class Connection:
    """A connection (PEP 249). Use it from the thread that made it (check_same_thread)."""

    Warning, Error, InterfaceError, DatabaseError = Warning, Error, InterfaceError, DatabaseError
    DataError, OperationalError, IntegrityError = DataError, OperationalError, IntegrityError
    InternalError, ProgrammingError, NotSupportedError = (InternalError, ProgrammingError,
                                                          NotSupportedError)

    def __init__(self, database, *, read_only=False, create=True, sync="full", cache_size=0,
                 join_memory=0, autocommit=False, check_same_thread=True, scn=0,
                 index_memory=0):
        if sync not in _SYNC:
            raise ProgrammingError("sync must be one of %s" % ", ".join(sorted(_SYNC)))
        if int(join_memory) < 0:
            raise ProgrammingError("join_memory must be a byte count, 0 for the default")
        if index_memory is not None and int(index_memory) < 0:
            raise ProgrammingError("index_memory must be a byte count, 0 for the default or "
                                   "None for no bound")
        self._db = _rowan.open(str(database), bool(read_only), bool(create), _SYNC[sync],
                               int(cache_size), int(join_memory),
                               -1 if index_memory is None else int(index_memory))
        self._autocommit = bool(autocommit)
        self._read_only = bool(read_only)
        self._in_txn = False
        self._thread = _threading.get_ident() if check_same_thread else None
        self._cursors = _weakref.WeakSet()
        self._scn = 0
        if scn:
            self.scn = scn

    # -- state

    def _check(self):
        if self._db is None:
            raise InterfaceError("the connection is closed")
        if self._thread is not None and self._thread != _threading.get_ident():
            raise ProgrammingError("a connection made in one thread was used in another "
                                   "(connect(..., check_same_thread=False) allows it when "
                                   "the application serializes the calls)")

    @property
    def autocommit(self):
        return self._autocommit

    @autocommit.setter
    def autocommit(self, value):
        self._check()
        value = bool(value)
        if value and self._in_txn:
            self.commit()
        self._autocommit = value

    @property
    def in_transaction(self):
        return self._in_txn

    @property
    def closed(self):
        return self._db is None

    # -- PEP 249

    def cursor(self):
        self._check()
        c = Cursor(self)
        self._cursors.add(c)
        return c

    def commit(self):
        self._check()
        if self._in_txn:
            self._exec("COMMIT")
            self._in_txn = False

    def rollback(self):
        self._check()
        if self._in_txn:
            self._exec("ROLLBACK")
            self._in_txn = False

    def close(self):
        """Close (an open transaction is rolled back, as PEP 249 asks). Idempotent."""
        if self._db is None:
            return
        for c in list(self._cursors):
            c._drop()
        if self._in_txn:
            try:
                self._exec("ROLLBACK")
            finally:
                self._in_txn = False
        db, self._db = self._db, None
        db.close()

    # -- extensions (as Python's sqlite3 module has them)

    def execute(self, sql, parameters=None):
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql, seq_of_parameters):
        return self.cursor().executemany(sql, seq_of_parameters)

    def executescript(self, sql):
        return self.cursor().executescript(sql)

    @property
    def scn(self):
        """The time the connection reads as of (ms since 1970 UTC), 0 for the present."""
        return self._scn

    @scn.setter
    def scn(self, ms):
        self._check()
        ms = int(ms)
        if ms < 0:
            raise ProgrammingError("scn must be milliseconds since 1970 (UTC), 0 for the present")
        self._db.set_as_of(ms)
        self._scn = ms

    def families(self, table):
        """The column families of `table` as its store holds them now (rowan_table_families:
        the store's statistics, one look per family, no block index walked), one dict each:
        name, memstore_bytes, memstore_cells (not yet flushed), store_files, blocks, bytes (on
        disk), index_bytes (memory the open files hold: block indexes,
        fences, bloom filters) and paged_files (files opened past index_memory, whose block
        index is read a page at a time through the block cache)."""
        self._check()
        return self._db.families(str(table))

    def regions(self, table):
        """The regions of `table` in key order (rowan_layout.regions, from rowan_table_families:
        no block index walked), one dict each: start_key (the row key bytes the region starts
        at; None for the first, which starts at the first row) and start_key_text (the same
        as column values, as EXPLAIN prints a range's start: "['m', *]"; "[*]" for the
        first). A table not split is one region; SPLIT ON, SALT_BUCKETS and splits by size
        (region_split_size) cut it (docs/KV_REGIONS.md)."""
        self._check()
        return self._db.regions(str(table))

    def interrupt(self):
        """Stop the statement running on this connection (rowan_interrupt): it raises
        OperationalError with code INTERRUPT. Any thread may call it."""
        db = self._db
        if db is not None:
            db.interrupt()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        """Commit when the block ends normally, roll back when it raises (sqlite3's rule);
        the connection stays open."""
        if self._db is None:
            return False
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # -- internals

    def _exec(self, sql):
        self._db.exec(sql)

    def _before(self, word):
        """Open the implicit transaction before a write; follow explicit BEGIN/COMMIT."""
        if (word in ("UPSERT", "DELETE") and not self._autocommit and not self._in_txn
                and not self._read_only):  # a read-only store refuses the write itself
            self._exec("BEGIN")
            self._in_txn = True

    def _after(self, word):
        if word == "BEGIN":
            self._in_txn = True
        elif word in ("COMMIT", "ROLLBACK", "END"):
            self._in_txn = False


class Cursor:
    """A cursor (PEP 249). Iterating it yields rows as tuples."""

    def __init__(self, connection):
        self.connection = connection
        self.arraysize = 1
        self.description = None
        self.rowcount = -1
        self.lastrowid = None
        self._stmt = None
        self._sql = None
        self._closed = False
        self._buf = []
        self._pos = 0

    # -- helpers

    def _check(self):
        if self._closed:
            raise InterfaceError("the cursor is closed")
        self.connection._check()

    def _drop(self):
        if self._stmt is not None:
            self._stmt.finalize()
        self._stmt = None
        self._sql = None
        self._buf, self._pos = [], 0

    def _prepare(self, sql):
        if self._stmt is not None and self._sql == sql:
            return self._stmt
        self._drop()
        stmt, tail = self.connection._db.prepare(sql)
        if stmt is None:
            raise ProgrammingError("no statement in the SQL text (only blanks or comments)")
        if not _BLANK.match(tail):
            stmt.finalize()
            raise ProgrammingError("execute runs one statement at a time; use executescript "
                                   "for several")
        self._stmt, self._sql = stmt, sql
        return stmt

    # -- PEP 249

    def execute(self, operation, parameters=None):
        self._check()
        if not isinstance(operation, str):
            raise ProgrammingError("the operation must be a str")
        conn = self.connection
        word = _first_word(operation)
        stmt = self._prepare(operation)
        conn._before(word)
        self._buf, self._pos = [], 0
        has_row = stmt.execute(parameters)
        conn._after(word)
        if stmt.column_count:
            self.description = tuple(_column_info(n, d) for n, d in stmt.columns())
            self.rowcount = -1
            self._pending = has_row
        else:
            self.description = None
            self.rowcount = conn._db.changes() if word in ("UPSERT", "DELETE") else -1
            self._pending = False
        return self

    def executemany(self, operation, seq_of_parameters):
        """Run `operation` once per parameter set. Inside a transaction (autocommit False)
        the rows join it. With autocommit True: a plain UPSERT INTO t (cols) VALUES (?, ...)
        of at least 1,000 rows takes the bulk-load path (all rows or none, visible at the
        end); otherwise the rows run in transactions of CHUNK_ROWS each, as
        if each row committed on its own (a failing row raises; the rows before it stay
        committed, as in sqlite3's autocommit mode), which bounds the memory a long run
        holds."""
        self._check()
        conn = self.connection
        self.description = None
        self._pending = False
        m = _UPSERT_VALUES.match(operation)
        if conn._autocommit and not conn._in_txn:
            if m:
                rows = seq_of_parameters
                if not isinstance(rows, (list, tuple)):
                    rows = list(rows)  # re-readable: a refused load falls back to UPSERT
                n = self._bulk(m, rows)
                if n is not None:
                    self.rowcount = n
                    return self
                seq_of_parameters = rows
            return self._chunked(operation, seq_of_parameters)
        word = _first_word(operation)
        stmt = self._prepare(operation)
        if stmt.column_count:
            raise ProgrammingError("executemany runs statements without results only")
        conn._before(word)
        self.rowcount = stmt.run_many(seq_of_parameters)
        return self

    CHUNK_ROWS = 10000

    def _chunked(self, operation, seq):
        conn = self.connection
        stmt = self._prepare(operation)
        if stmt.column_count:
            raise ProgrammingError("executemany runs statements without results only")
        total = 0
        it = iter(seq)
        while True:
            chunk = list(_itertools.islice(it, self.CHUNK_ROWS))
            if not chunk:
                break
            conn._exec("BEGIN")
            conn._in_txn = True
            try:
                total += stmt.run_many(chunk)
            except BaseException:
                # the failing row was rolled back alone: keep the rows before it
                conn._exec("COMMIT")
                conn._in_txn = False
                raise
            conn._exec("COMMIT")
            conn._in_txn = False
        self.rowcount = total
        return self

    def _bulk(self, m, rows):
        """The bulk-load path of executemany; None when it is not taken here."""
        table = m.group(1).strip('"')
        cols = [c.strip().strip('"') for c in m.group(2).split(",")]
        if len(cols) != m.group(0).count("?") or len(rows) < 1000:
            return None
        try:
            return self.connection._db.bulk_load(table, cols, rows)
        except IntegrityError as e:
            # refused for what the load cannot do, not for a bad row: a key repeated in one
            # load into a table with an index (ROWAN_BULK_REPEAT). Nothing was committed;
            # the caller then runs UPSERT's own rules (the last row wins). Any other refusal
            # (a value that does not fit) raises: no row is committed.
            if "repeat" not in str(e):
                raise
            return None

    def executescript(self, sql):
        """Run several statements (rowan_exec); commits an open transaction first."""
        self._check()
        self.connection.commit()
        self._drop()
        words = _re.findall(r"(?:^|;)\s*([A-Za-z]+)", sql)
        self.connection._exec(sql)
        for w in words:
            self.connection._after(w.upper())
        self.description = None
        self.rowcount = -1
        return self

    def _fill(self, n):
        if self._pos >= len(self._buf):
            self._buf, self._pos = [], 0
            if self._stmt is None or not self._pending:
                return
            try:
                self._buf = self._stmt.fetch(n)
            except Error:
                self._pending = False
                raise
            if len(self._buf) < n or n < 0:
                self._pending = False

    def fetchone(self):
        self._check()
        self._fill(1 if self.arraysize <= 1 else self.arraysize)
        if self._pos < len(self._buf):
            r = self._buf[self._pos]
            self._pos += 1
            return r
        return None

    def fetchmany(self, size=None):
        self._check()
        size = self.arraysize if size is None else size
        out = []
        while len(out) < size:
            if self._pos >= len(self._buf):
                self._fill(size - len(out))
                if not self._buf:
                    break
            take = self._buf[self._pos:self._pos + size - len(out)]
            self._pos += len(take)
            out.extend(take)
        return out

    def fetchall(self):
        self._check()
        out = self._buf[self._pos:]
        self._buf, self._pos = [], 0
        if self._stmt is not None and self._pending:
            try:
                out.extend(self._stmt.fetch(-1))
            finally:
                self._pending = False
        return out

    def __iter__(self):
        return self

    def __next__(self):
        self._check()
        if self._pos >= len(self._buf):
            self._fill(256)
        if self._pos < len(self._buf):
            r = self._buf[self._pos]
            self._pos += 1
            return r
        raise StopIteration

    def close(self):
        self._drop()
        self._closed = True

    def setinputsizes(self, sizes):
        pass

    def setoutputsize(self, size, column=None):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- columnar fetches (optional packages)

    def fetchnumpy(self):
        """The remaining rows as a dict of column name -> numpy array (numbers as float64
        or int64 where every value fits, NULL as NaN in float columns; other types as
        object arrays). Needs numpy."""
        import numpy as np
        names = [d[0] for d in self.description or ()]
        rows = self.fetchall()
        out = {}
        for i, name in enumerate(names):
            col = [r[i] for r in rows]
            kinds = {type(v) for v in col}
            if kinds <= {int} and col:
                out[name] = np.array(col, dtype=np.int64)
            elif kinds <= {int, float, type(None)} and col and kinds & {int, float}:
                out[name] = np.array([np.nan if v is None else v for v in col],
                                     dtype=np.float64)
            else:
                out[name] = np.array(col, dtype=object)
        return out

    def fetchdf(self):
        """The remaining rows as a pandas DataFrame (TIMESTAMP columns as datetime64).
        Needs pandas."""
        import pandas as pd
        names = [d[0] for d in self.description or ()]
        return pd.DataFrame.from_records(self.fetchall(), columns=names)
