/*
** include/rowan.h: the public C API of librowan, Rowan's embedded SQL engine.
**
** Rowan runs SQL in Apache Phoenix's dialect over its own append-only, column-family
** store (docs/DESIGN.md). The API follows SQLite's shape: open a database, prepare a
** statement, bind parameters, step through result rows, read columns, finalize, close.
**
** Conventions:
**  - Every function returning int returns a ROWAN_* code. ROWAN_OK (0) is success;
**    rowan_step also returns ROWAN_ROW and ROWAN_DONE.
**  - After an error, rowan_errcode(db), rowan_errmsg(db) and rowan_error_offset(db) describe
**    it until the next call on that connection: the message names what was wrong and where
**    (token and position, column and value, file and line).
**  - Handles are opaque. A NULL handle gives ROWAN_MISUSE, never a crash. A finalized
**    statement handle is freed: using it again is undefined (as in SQLite); finalizing NULL
**    is a harmless no-op.
**  - Strings are UTF-8, NUL-terminated unless a length is given. Pointers returned by
**    rowan_column_* stay valid until the next rowan_step, rowan_reset or rowan_finalize of
**    that statement.
**  - Thread safety: a rowan_db and its statements may be used by one thread at a time
**    (serialize with your own mutex, as with SQLite's multi-thread mode; rowan_interrupt and
**    rowan_backup are the exceptions); different rowan_db handles are independent, but one
**    database directory may be open for writing in only one handle at a time (the store's
**    LOCK file: a second open gets ROWAN_LOCKED). Read-only handles (rowan_options.read_only)
**    take no lock: any number of them, in any process, open a database beside its writer.
*/
#ifndef ROWAN_H
#define ROWAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library version (the string rowan_libversion() returns). */
#define ROWAN_VERSION "0.1.0"

/* Result codes; rowan_errstr() (api/rowan.c) names each, in this order. */
#define ROWAN_OK 0         /* success */
#define ROWAN_ERROR 1      /* SQL error: unknown table or column, type mismatch, bad option */
#define ROWAN_SYNTAX 2     /* syntax error; rowan_error_offset() gives the byte offset */
#define ROWAN_CONSTRAINT 3 /* a value violates its column: NULL in NOT NULL, out of range,
                              too long, bad date */
#define ROWAN_RANGE 4      /* a bind or column index out of range */
#define ROWAN_MISUSE 5     /* API misuse: NULL handle, step after an error, wrong state */
#define ROWAN_LOCKED 6     /* the database directory is open elsewhere */
#define ROWAN_CORRUPT 7    /* damaged files; the message names the file and offset */
#define ROWAN_IOERR 8      /* a file operation failed */
#define ROWAN_FULL 9       /* no space left on the device */
#define ROWAN_NOMEM 10     /* out of memory */
#define ROWAN_READONLY 11  /* a write on a read-only connection */
#define ROWAN_TOOBIG 12    /* a key, value or result over a documented limit */
#define ROWAN_NOTFOUND 13  /* rowan_open without create on a missing directory */
#define ROWAN_ABORT 14     /* rowan_step: the transaction this SELECT read (it was opened inside
                              it, so it saw the transaction's own writes) was rolled back
                              while the SELECT was still running; reset it to run it again.
                              SQLite's SQLITE_ABORT_ROLLBACK. A COMMIT does not abort it */
#define ROWAN_INTERRUPT 15 /* rowan_step: stopped by rowan_interrupt */
#define ROWAN_ROW 100      /* rowan_step: a result row is ready */
#define ROWAN_DONE 101     /* rowan_step: the statement has finished */

/* Column value classes returned by rowan_column_type(). */
#define ROWAN_INTEGER 1    /* BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT */
#define ROWAN_FLOAT 2      /* FLOAT, DOUBLE */
#define ROWAN_TEXT 3       /* CHAR, VARCHAR, DECIMAL (exact, as text), DATE, TIME, ARRAY
                              (its text ['a', 'b'], docs/TYPES.md "ARRAY") */
#define ROWAN_BLOB 4       /* VARBINARY */
#define ROWAN_NULL 5       /* SQL NULL */
#define ROWAN_TIMESTAMP 6  /* TIMESTAMP (also readable as text or as ms since the epoch) */

/* WAL durability (kv/kv.h, enum kv_sync_mode). */
#define ROWAN_SYNC_FULL 0   /* a commit that returned is on disk (default) */
#define ROWAN_SYNC_NORMAL 1 /* survives a process crash, not a power cut */
#define ROWAN_SYNC_OFF 2    /* a process crash may lose the latest commits */

typedef struct rowan_db rowan_db;
typedef struct rowan_stmt rowan_stmt;

/* Open options. Zero-initialize, or call rowan_options_init(). */
typedef struct rowan_options {
  int sync_mode;            /* ROWAN_SYNC_*; default ROWAN_SYNC_FULL */
  int create_if_missing;    /* non-zero: create the directory and an empty database */
  int read_only;            /* non-zero: a reader (writes fail with ROWAN_READONLY) that
                               works beside another handle or process writing the same
                               database and needs no write permission; it sees the
                               database as of its open until rowan_refresh (see rowan_open) */
  size_t block_cache_size;  /* bytes; 0 = default 64 MiB; one budget: up to a quarter of it
                               caches the columns aggregate scans read, the rest and what
                               they leave unused decoded blocks (docs/KV.md) */
  size_t memstore_size;     /* bytes per family memstore before a flush; 0 = 64 MiB */
  void *kv_env;             /* a struct kv_env * (kv/env/env.h) to run on another file system,
                               e.g. the in-memory one in tests; NULL = the real disk */
  size_t wal_limit;         /* bytes of write-ahead log kept on disk (what the next open
                               replays): past it, the families holding the oldest log
                               segment are flushed so it can be deleted; a commit waits
                               past wal_limit * 5 / 4 (docs/KV.md, "WAL size bound");
                               0 = twice memstore_size, at least 128 MiB; at least 64 KiB */
  size_t bulk_memory;       /* bytes one bulk load (rowan_bulk_*), or one large write
                               statement outside BEGIN ... COMMIT, may hold in memory; 0 =
                               default 256 MiB; at least 1 MiB (smaller: rowan_open gives
                               ROWAN_MISUSE). Past it the load writes what it has sorted and
                               encoded to temporary files in the database directory (see
                               "Bulk load" below, rowan_step's "Atomic statements" and
                               docs/KV.md) */
  size_t join_memory;       /* bytes of rows one join of a statement may hold in memory (a
                               hash join's build input, a nested loop's inner table); 0 =
                               default 256 MiB. Past it a hash join writes both inputs to
                               temporary files in the database directory, cut into 64
                               partitions by key hash, and joins them a partition at a time
                               (as DuckDB's and PostgreSQL's hash joins spill); a nested loop
                               (a join without an equality) fails with ROWAN_TOOBIG naming the
                               limit. EXPLAIN ANALYZE's join line says what was spilled */
  int64_t max_lookback_seconds; /* the look-back window (Phoenix's
                               phoenix.max.lookback.age.seconds): a major compaction keeps
                               every cell version and delete marker younger than this, so a
                               read AS OF a time inside it (SELECT ... AS OF, rowan_set_as_of)
                               is exact; a read before it is refused. 0 = default 86400 (one
                               day: yesterday's table stays readable, at the cost of keeping
                               a day of old versions and deleted rows on disk until the next
                               major compaction after they age out); negative = none (major
                               compaction drops old versions and tombstones at once, as
                               before, and every AS OF read of the past is refused). Keep it
                               constant for a database: what a smaller window compacted away
                               is gone (docs/SQL.md "Reading the past") */
  uint64_t region_split_size; /* bytes of one column family's store files in one region of a
                               table past which the region is split in two at a middle key
                               (HBase's hbase.hregion.max.filesize; docs/KV_REGIONS.md);
                               later flushes and compactions write each half's files apart,
                               and parallel scans cut chunks at the new boundary. 0 =
                               default: never (a table keeps the regions SPLIT ON or
                               SALT_BUCKETS gave it) */
  size_t index_memory;      /* bytes the open store files may keep of whole block indexes
                               (about 100 bytes a block: 2 bytes a row of an 8 KiB-block
                               sensor table); the files opened past it keep a page table
                               only (about 0.7 bytes a block) and read their index 64
                               entries at a time through the block cache, so an open
                               database's memory stops growing with its data (RocksDB's
                               partitioned index with cache_index_and_filter_blocks, HBase's
                               multi-level block index). 0 = default 64 MiB; SIZE_MAX:
                               never paged (docs/KV.md "Store file readers") */
} rowan_options;

/* Fill *opts with the defaults (create_if_missing = 1, sync full). */
void rowan_options_init(rowan_options *opts);

/* Open a database.
** Opens (and with opts->create_if_missing creates) the database in directory
** `path`; the path ":memory:" (as in SQLite) opens a new, empty database held in memory
** only, gone when the handle closes (not with read_only, which gives ROWAN_MISUSE).
** opts may be NULL (defaults). On success *db is a new handle and ROWAN_OK is
** returned. On failure, *db is still set when a handle could be made (so rowan_errmsg(*db)
** tells why; close it with rowan_close) and NULL otherwise; returns ROWAN_LOCKED (open
** for writing elsewhere: "database is locked"), ROWAN_NOTFOUND, ROWAN_CORRUPT, ROWAN_IOERR,
** ROWAN_NOMEM, ROWAN_MISUSE (NULL path or db).
** One handle at a time opens a database for writing (it holds the directory's LOCK file,
** as RocksDB and LevelDB do). A read_only handle takes no lock and writes nothing, so any
** number of them open it beside that writer, in this process or others, and without write
** permission on the directory (RocksDB's secondary instances and SQLite's WAL readers are
** the models): it shows the database as the writer's files hold it at its open (every
** commit the writer had written to its log: with ROWAN_SYNC_OFF the writer's latest commits
** may still be in its memory) and keeps showing that until rowan_refresh. Files the writer
** deletes meanwhile (after compactions and flushes) stay readable to it.
** ROWAN_CORRUPT also when the log ends before what the MANIFEST and the store files show (a
** copy of the directory made file by file while it was written, the log copied first): the
** message names the files; opening it would show part of some transactions (RocksDB's "SST
** file is ahead of WAL"). Copy a live database with rowan_backup instead.
** A database on HBase: path "hbase://HOST:PORT[/NAMESPACE]" (HOST a name or IPv4 address,
** PORT HBase's Thrift2 gateway, e.g. 9090; NAMESPACE letters, digits and '_', at most 100
** bytes, default "rowan") opens the database kept in that HBase namespace, creating the
** namespace on first use; every table, index, sequence and the catalog live there, so other
** processes opening the same URI share them (docs/HBASE.md). Only in a library built with
** -DROWAN_HBASE=ON; otherwise ROWAN_MISUSE, "built without HBase support". What HBase gives
** is Phoenix's model: each row of a statement or transaction is written atomically on its
** own (a failed multi-row statement may leave some of its rows), reads see each row as
** committed when it is read. opts->read_only and opts->kv_env are refused (ROWAN_MISUSE);
** sync_mode, caches and memstore sizes do not apply (HBase's WAL makes each acknowledged
** write durable); the connection keeps a private in-memory scratch store for sorts and
** joins that spill. Errors, with the URI in the message: ROWAN_MISUSE for a malformed URI
** (naming the wrong part), ROWAN_IOERR when the gateway cannot be reached ("hbase: cannot
** connect to HOST:PORT: ...", a wrong port, an unknown host) or fails a call.
** Test hook: with the environment variable ROWAN_BACKEND set to "rowatomic" the connection
** reads and writes through a storage backend that gives only HBase's guarantees (each row of
** a statement its own commit; docs/BACKEND.md); any other value but "local" or empty fails
** the open with ROWAN_MISUSE naming it. Applications leave it unset. */
int rowan_open(const char *path, const rowan_options *opts, rowan_db **db);

/* Close a database.
** Finalizes nothing: every statement must be finalized and every bulk load committed or
** aborted first, else ROWAN_MISUSE and the handle stays open (SQLite's close refuses the
** same way while a statement or a backup is open). Past that check the handle is always
** freed, and an open transaction rolled back; the code then reports an error the store met
** (ROWAN_IOERR after a failed WAL write, for one) but the handle is gone all the same.
** Before it lets go, a writable handle flushes every memstore to store files (as HBase
** flushes a region's memstores when it closes the region), so the next open replays next
** to nothing from the write-ahead log; a failed flush is reported (ROWAN_IOERR) and loses
** nothing: the rows are in the log and the next open replays them.
** NULL is a no-op returning ROWAN_OK. */
int rowan_close(rowan_db *db);

/* Compile one SQL statement.
** Compiles the first statement of sql[0..n) (n < 0: up to the NUL). On
** success *stmt is the statement, or NULL if the text held only whitespace and comments.
** If tail is not NULL, *tail points just past the compiled statement (where the next
** begins). On failure *stmt is NULL and the code is ROWAN_SYNTAX (rowan_error_offset gives
** the byte offset; the message gives line, column and near "TOKEN") or ROWAN_ERROR (unknown
** table or column, type error: the message names it and its position). */
int rowan_prepare(rowan_db *db, const char *sql, int n, rowan_stmt **stmt, const char **tail);

/* Bind parameters.
** Set parameter `i` (1-based: ? are numbered left to right, ?NNN is NNN) before the
** first rowan_step or after rowan_reset. Text and blob bytes are copied. Values are
** converted to the type the parameter is compared with or stored into at step time
** (errors then: ROWAN_CONSTRAINT). Returns ROWAN_RANGE if i is out of range, ROWAN_MISUSE
** once the statement has been stepped (until rowan_reset) or for a NULL stmt. A NULL text
** or blob pointer binds SQL NULL (a NULL blob pointer with n > 0 is ROWAN_MISUSE);
** rowan_bind_timestamp outside years 0001..9999 gives ROWAN_CONSTRAINT. ts_ms is
** milliseconds since 1970-01-01 00:00:00 (no time zone, as TIMESTAMP values are).
** There is no array binding: a value for an ARRAY column (UPSERT ... VALUES (?)) is bound as
** text in its text form, rowan_bind_text(st, i, "['a', null, 'b']", -1), and read into the
** column's element type at step time, as CAST('[...]' AS t ARRAY) would (an element out of
** range or too long: ROWAN_CONSTRAINT; text or an element that does not read: ROWAN_ERROR;
** the message names the element, docs/TYPES.md "ARRAY"). */
int rowan_bind_int64(rowan_stmt *stmt, int i, int64_t v);
int rowan_bind_double(rowan_stmt *stmt, int i, double v);
int rowan_bind_text(rowan_stmt *stmt, int i, const char *s, int n); /* n < 0: strlen */
int rowan_bind_blob(rowan_stmt *stmt, int i, const void *p, int n);
int rowan_bind_null(rowan_stmt *stmt, int i);
int rowan_bind_timestamp(rowan_stmt *stmt, int i, int64_t ts_ms);
/* Number of parameters (the largest parameter number used). */
int rowan_bind_parameter_count(rowan_stmt *stmt);

/* Run a statement.
** Returns ROWAN_ROW when a result row is ready, ROWAN_DONE when finished (a write has then
** been committed, unless inside BEGIN ... COMMIT), or an error code (the connection's
** rowan_errmsg / rowan_error_offset describe it). After an error, step returns
** ROWAN_MISUSE until rowan_reset (which returns the error's code). A step after ROWAN_DONE
** runs the statement again from the start, as if rowan_reset had been called (SQLite's
** behaviour). NULL gives ROWAN_MISUSE.
** ROWAN_ABORT: the SELECT was opened inside a transaction whose writes ROLLBACK (or a
** failed COMMIT) dropped while it was between rows (SQLite's SQLITE_ABORT_ROLLBACK); reset
** it to run again on the committed data. After a COMMIT it goes on.
** Atomic statements: an UPSERT (VALUES or SELECT) or DELETE outside BEGIN ... COMMIT is
** atomic whatever its size: when it fails (any error code), is interrupted
** (rowan_interrupt) or the process is killed, none of its writes stays, and no reader (a
** SELECT between rows on another statement, another handle after a reopen) ever sees part
** of it. Its writes, index rows and deletions included, gather in memory and are committed
** at its end as one write-ahead log record; past a 16th of rowan_options.bulk_memory (16 MiB
** by default) they move into a bulk load instead (as rowan_bulk_*: sorted, then past
** bulk_memory written to temporary files next to the table's store files), whose store
** files are named in one MANIFEST record at the statement's end (docs/KV_BULK.md).
** So memory stays bounded: about 1.3 x bulk_memory at most, plus what a bulk load keeps per
** row (its files' bloom filters and block indexes, a few bytes: "Bulk load" below) and, for
** an UPSERT of several rows into a table with an index, 21-43 bytes per distinct row key
** written (where the index rows it wrote are, kept per key in a temporary file so that a
** row written twice leaves one index row). Such a large statement's writes carry one timestamp, taken when they move into the
** load, never older than the last commit's; commits after it are newer. Inside BEGIN ...
** COMMIT a statement's writes join the transaction's batch (all in memory, at most 256 MiB
** encoded, else ROWAN_TOOBIG); a failing statement is rolled back alone. On HBase
** (rowan_open's hbase://) a statement or COMMIT is atomic per row only, as in Phoenix:
** docs/HBASE.md, "A statement cut by a failure", says what a failed one leaves. */
int rowan_step(rowan_stmt *stmt);

/* Reset a statement to run again (bindings are kept), whatever its state.
** Returns what SQLite's sqlite3_reset returns (v2 interface): the error code of the
** statement's last rowan_step when that step failed (ROWAN_CONSTRAINT, ROWAN_ABORT,
** ROWAN_INTERRUPT, ...; a step refused with ROWAN_MISUSE after it does not count, a failed
** bind is not a step), and then rowan_errcode, rowan_errmsg and rowan_error_offset describe
** that failure again, even when other calls on the connection came in between. ROWAN_OK when
** the last step returned ROWAN_ROW or ROWAN_DONE, when the statement was never stepped, and
** for a reset after a reset: a failure is returned once. Either way the statement is reset
** and can run again; a code other than ROWAN_OK reports the earlier step, not a failure of
** the reset. A reset that returns ROWAN_OK leaves the connection's error as it was (SQLite
** clears it when the statement had run). ROWAN_MISUSE for NULL.
** A statement in the middle of its rows stops there. A SELECT keeps its plan across resets
** and new bindings while no DDL has run on the connection: the next run with the same
** values runs it as it is; with new values, the key ranges, filters and LIMIT are derived
** again from them, and a plan that reads the table itself keeps it (no new index choice,
** docs/EXPLAIN.md "Plan reuse"). A DDL makes the next run plan again (an index created
** after prepare is then considered). The answers are always those of a fresh prepare with
** the same values. */
int rowan_reset(rowan_stmt *stmt);
/* Clear all bindings to NULL. ROWAN_MISUSE while a row is pending (reset first)
** or for NULL. */
int rowan_clear_bindings(rowan_stmt *stmt);

/* Free a statement. Returns ROWAN_OK, also after a failed step (sqlite3_finalize returns
** that step's code; call rowan_reset first to get it). NULL is a no-op returning ROWAN_OK. */
int rowan_finalize(rowan_stmt *stmt);

/* Result columns.
** The number of columns of the result (0 for statements without results), each
** column's name (the alias, or the expression as written) and declared type
** ("DECIMAL(5,2)", "TIMESTAMP"; NULL for an expression without one), and after ROWAN_ROW its
** value. Index i is 0-based; out of range gives 0 / NULL. Text values of every type are
** available through rowan_column_text (numbers, dates and timestamps formatted as in
** docs/TYPES.md; NULL gives a NULL pointer). Conversions follow SQLite's
** sqlite3_column_* (text of a number, number of a text's leading digits): int64 of a
** FLOAT/DOUBLE/DECIMAL truncates toward zero (clamped to the int64 range), of a BOOLEAN is
** 1/0, of a DATE or TIMESTAMP is milliseconds since the epoch, of a TIME milliseconds since
** midnight; rowan_column_timestamp gives ms since the epoch of a TIMESTAMP or DATE (floor)
** or of a text holding a TIMESTAMP literal (0 otherwise). Without a current row (before
** the first ROWAN_ROW, after DONE or an error) every value reads as NULL (0 / NULL pointer,
** type ROWAN_NULL). rowan_column_blob gives the bytes of a VARBINARY value, or the text of
** any other; rowan_column_bytes the byte length of that text or blob.
** An ARRAY value (Phoenix's VARCHAR ARRAY, INTEGER ARRAY, ...) has the class ROWAN_TEXT and
** reads as text the way Phoenix's sqlline prints it: `[1, 2, 3]`, `['a', null, 'it''s']`
** (strings, dates and times quoted with '' for a quote, NULL elements `null`; docs/TYPES.md);
** its declared type is the element type followed by " ARRAY" ("VARCHAR ARRAY",
** "DECIMAL(5,2) ARRAY"); int64 / double of an array are 0. Elements are reached in SQL
** (a[i], ARRAY_LENGTH), not through this API. */
int rowan_column_count(rowan_stmt *stmt);
const char *rowan_column_name(rowan_stmt *stmt, int i);
const char *rowan_column_decltype(rowan_stmt *stmt, int i);
int rowan_column_type(rowan_stmt *stmt, int i);
int64_t rowan_column_int64(rowan_stmt *stmt, int i);
double rowan_column_double(rowan_stmt *stmt, int i);
const char *rowan_column_text(rowan_stmt *stmt, int i);
const void *rowan_column_blob(rowan_stmt *stmt, int i);
int rowan_column_bytes(rowan_stmt *stmt, int i);
int64_t rowan_column_timestamp(rowan_stmt *stmt, int i); /* ms since the epoch */

/* Several columns of the current row in one call.
** rowan_column_values(stmt, first, n, out) fills out[0..n) with columns
** [first, first + n) of the current row, what the single getters above would give, in one
** call instead of one call per value and per conversion. The idea is ODBC's bound columns
** (the application hands the driver its own array once and each fetch fills it) applied to
** SQLite-style getters: the values still come out of the statement, only the calls are
** fewer. Each rowan_value holds:
**  - type: as rowan_column_type (ROWAN_NULL for SQL NULL: then every other field is 0 or
**    NULL);
**  - i: as rowan_column_int64, which for every type but CHAR, VARCHAR and VARBINARY is also
**    rowan_column_timestamp (ms since the epoch of a TIMESTAMP or DATE, ms since midnight
**    of a TIME, integers as they are, BOOLEAN 1/0, FLOAT/DOUBLE/DECIMAL truncated toward
**    zero and clamped);
**  - d: as rowan_column_double;
**  - p and bytes: for the classes ROWAN_TEXT and ROWAN_BLOB, as rowan_column_blob and
**    rowan_column_bytes: the bytes of a CHAR, VARCHAR or VARBINARY value (never NULL, even
**    when empty) or the text of a DECIMAL, DATE or TIME value. The bytes are NOT
**    necessarily NUL-terminated: use bytes (rowan_column_text gives a terminated copy).
**    For the other classes (ROWAN_INTEGER, ROWAN_FLOAT, ROWAN_TIMESTAMP) p is NULL and
**    bytes 0: their text is rowan_column_text's.
** What needs parsing text is left to the single getters: for a CHAR, VARCHAR or VARBINARY
** value i and d are 0 (rowan_column_int64 / _double / _timestamp give the number or
** timestamp the text spells). Pointers stay valid as the getters' do: until the next
** rowan_step, rowan_reset or rowan_finalize of the statement.
** Returns ROWAN_OK; ROWAN_MISUSE for a NULL stmt, a NULL out with n > 0, or no current row
** (before the first ROWAN_ROW, after ROWAN_DONE or an error: out[0..n) is then filled with
** NULLs, as the getters read); ROWAN_RANGE when first < 0, n < 0 or first + n is past
** rowan_column_count (nothing written); ROWAN_NOMEM when the text of a DECIMAL, DATE or
** TIME value could not be made (that value's p is NULL, the others are filled). Errors other
** than a NULL stmt are described by rowan_errmsg of the connection; success leaves the
** connection's error state as it was (as the getters do). */
typedef struct rowan_value {
  int type;            /* ROWAN_INTEGER, _FLOAT, _TEXT, _BLOB, _NULL or _TIMESTAMP */
  int bytes;           /* ROWAN_TEXT / ROWAN_BLOB: byte count of p; else 0 */
  int64_t i;           /* as rowan_column_int64 (0 for NULL and for CHAR/VARCHAR/VARBINARY) */
  double d;            /* as rowan_column_double (0 for NULL and for CHAR/VARCHAR/VARBINARY) */
  const void *p;       /* ROWAN_TEXT / ROWAN_BLOB: the bytes, not NUL-terminated; else NULL */
} rowan_value;
int rowan_column_values(rowan_stmt *stmt, int first, int n, rowan_value *out);

/* Run SQL text (one or many statements) for its effect.
** For each result row of each statement, callback (if not NULL) gets the column count, the
** values as text (NULL for SQL NULL) and the names; a non-zero return stops with
** ROWAN_ERROR. Stops at the first error, whose rowan_error_offset is relative to the start
** of the whole sql text. Returns ROWAN_OK when every statement ran; ROWAN_MISUSE for a NULL
** db or sql. */
typedef int (*rowan_callback)(void *ctx, int ncol, char **values, char **names);
int rowan_exec(rowan_db *db, const char *sql, rowan_callback cb, void *ctx);

/* Errors of the last call on the connection. rowan_errcode(NULL) is
** ROWAN_MISUSE; rowan_errmsg is "not an error" after a successful call;
** rowan_errstr gives "ROWAN_UNKNOWN" for a code not listed above. */
int rowan_errcode(rowan_db *db);
const char *rowan_errmsg(rowan_db *db);     /* never NULL */
int rowan_error_offset(rowan_db *db);       /* byte offset in the SQL, or -1 */
const char *rowan_errstr(int code);         /* "ROWAN_SYNTAX" etc. */

/* Rows changed by the last finished write statement. */
int64_t rowan_changes(rowan_db *db);

/* Scan metrics of a statement (summed over its scans since the last reset). */
typedef struct rowan_family_metrics {
  char family[64];            /* table.family, e.g. "SENSOR.READINGS" */
  uint64_t cells_examined;    /* cells decoded from memstore and store files */
  uint64_t blocks_read;       /* store-file blocks read (cache hits included) */
  uint64_t blocks_cache_hit;  /* of which served from the block cache */
  uint64_t bytes_read;        /* bytes read from store files (compressed, on disk) */
} rowan_family_metrics;
typedef struct rowan_metrics {
  uint64_t rows_examined;     /* rows the store assembled */
  uint64_t rows_filtered;     /* of which the pushed-down filter rejected */
  uint64_t rows_returned;     /* rows the statement produced */
  uint64_t ranges_sought;     /* key ranges visited (a skip scan seeks each) */
  int n_families;             /* entries used in families */
  rowan_family_metrics families[16]; /* per family read, in the order the scans listed */
} rowan_metrics;
/* Fills *out; ROWAN_OK, or ROWAN_MISUSE for a NULL argument. Families beyond 16 are left
** out. */
int rowan_stmt_metrics(rowan_stmt *stmt, rowan_metrics *out);

/* The key space of a table: its store files and their blocks, per column family.
** rowan_table_layout(db, table, &layout) describes table `table` (as in SQL: the exact name,
** else the name upper-cased) as the store holds it at the call, from the block indexes of
** its store files (no data block is read): per column family (the hidden key family "_k"
** first, then the table's families in declaration order) the bytes and cells still in
** memstores (in no block yet; rowan_flush writes them out), and per block of every store
** file its place and size and its first row key, in bytes and as column values. A family's
** files are listed in the order the store keeps them (oldest first) and their key ranges
** may overlap until a compaction merges them; within a file blocks are in key order.
** Regions (HBase's: docs/KV_REGIONS.md): the table's key ranges in key order, each with
** its start key in bytes and as column values (as HBase's RegionLocator.getStartKeys, whose
** first region starts at the empty key); one region, from the first row, for a table
** that is not split; a table is split at its SPLIT ON points, at its salt buckets
** (SALT_BUCKETS = n: n regions, one a bucket) and by size (rowan_options.region_split_size).
** Every store file lies within one region (a file written before a split by size crosses
** the new boundary until the compaction the split asks for). A read-only open beside a
** writer reports one region. The shell's .keymap draws this.
** Returns ROWAN_OK with *layout set (free it with rowan_layout_free); ROWAN_ERROR for an
** unknown table; ROWAN_NOMEM; ROWAN_MISUSE for a NULL argument. On failure *layout is NULL
** and rowan_errmsg(db) says why. Every pointer in the layout stays valid until
** rowan_layout_free, whatever happens to the database meanwhile. */
typedef struct rowan_layout_family {
  const char *name;           /* "_k" (the row-existence marker family), "0" (the default
                                 family) or a declared name such as "READINGS" */
  uint64_t memstore_bytes;    /* bytes in the family's memstores: rows written and not yet
                                 flushed to a store file */
  uint64_t memstore_cells;    /* cells there */
  uint64_t store_files;       /* store files of the family */
  uint64_t blocks;            /* blocks in them */
  uint64_t bytes;             /* the files' bytes on disk */
  uint64_t index_bytes;       /* memory the open files hold while open: block indexes (of a
                                 paged file its page table only), first-key fences, bloom
                                 filters; not the block cache (RocksDB's
                                 rocksdb.estimate-table-readers-mem) */
  uint64_t paged_files;       /* of store_files, those opened past rowan_options.index_memory,
                                 whose block index is read a page at a time through the block
                                 cache */
} rowan_layout_family;
typedef struct rowan_layout_block {
  int family;                 /* index into rowan_layout.families */
  uint64_t file;              /* the store file's number, unique in the database (the file
                                 is data/<table>/<family>/<number>.sf under the store) */
  uint64_t file_bytes;        /* the file's size on disk */
  uint32_t file_blocks;       /* blocks in the file */
  uint32_t block;             /* this block's index in the file, 0-based */
  uint64_t offset;            /* its byte offset in the file */
  uint32_t bytes;             /* its size on disk (compressed, with header and checksum) */
  uint32_t raw_bytes;         /* its size uncompressed */
  uint32_t cells;             /* cells in it (column values, all versions, deletions) */
  uint32_t rows;              /* rows with a cell in it */
  const void *first_key;      /* the row key of its first cell (the encoded primary key) */
  int first_key_len;          /* its length in bytes */
  const char *first_key_text; /* the same as column values, as EXPLAIN prints key bounds:
                                 "['Dongsi', '2017-02-28 23:00:00']"; a salted table's key
                                 starts with its salt bucket: "[2, 'Dongsi', ...]" */
  const void *last_key;       /* the file's last row key (the same for every block of the
                                 file: a block ends where the next block's first key starts) */
  int last_key_len;           /* its length */
  const char *last_key_text;  /* as column values */
} rowan_layout_block;
typedef struct rowan_layout_region {
  const void *start_key;      /* the first row key the region holds (inclusive: the region
                                 runs to the next one's start key, exclusive), or NULL for
                                 the first region (from the first row). Often a prefix, not a
                                 whole row key: a SPLIT ON point's encoded columns, the salt
                                 byte of a salted table's bucket */
  int start_key_len;          /* its length in bytes (0 for the first region) */
  const char *start_key_text; /* as column values, as EXPLAIN prints a range's start: "[*]"
                                 (the first region), "['m', *]" (SPLIT ON ('m') over a key of
                                 two columns), "[1, *, *]" (bucket 1 of a salted table) */
} rowan_layout_region;
typedef struct rowan_layout {
  const char *table;          /* the table's name */
  const char *key;            /* its primary key, the row key: "STATION, TS DESC" */
  int n_families;             /* entries in families */
  const rowan_layout_family *families;
  int n_blocks;               /* entries in blocks: family by family, as above */
  const rowan_layout_block *blocks;
  void *internal;             /* the library's; do not touch */
  int n_regions;              /* entries in regions: 1 or more */
  const rowan_layout_region *regions; /* the table's regions, in key order (a look of their
                                 own: a split by size between it and the blocks' is seen by
                                 the next call) */
} rowan_layout;
int rowan_table_layout(rowan_db *db, const char *table, rowan_layout **layout);
/* rowan_table_families(db, table, &layout): the families and regions of rowan_table_layout
** alone (n_blocks 0), each family's figures taken from the store's statistics in one look (its
** memstore, files, blocks, bytes and reader memory agree with each other even while a flush
** or compaction runs), without walking any block index: microseconds where the whole
** layout of a large table takes a walk of every block (289,000 blocks: 0.41 s). Same
** returns, errors and ownership as rowan_table_layout; free with rowan_layout_free. */
int rowan_table_families(rowan_db *db, const char *table, rowan_layout **layout);
void rowan_layout_free(rowan_layout *layout); /* NULL: no-op */

/* Row-key advice: which order of a table's primary-key columns serves a set of queries best.
** rowan_advise(db, table, sql, n, source, &report) reads the SELECT statements of sql (n
** bytes, or up to the NUL when n < 0), each a query of table `table` (as in SQL: the exact
** name, else upper-cased) with literal values, no parameters, and judges every candidate
** row key: every order of the primary-key columns, each DATE, TIME or TIMESTAMP column ASC
** and DESC (the current key among them; past 4 key columns, only each column moved to the
** front). Per candidate and query it gives the plan kind (POINT LOOKUP, RANGE SCAN, SKIP
** SCAN, SKIP SCAN ON EACH PREFIX, FULL SCAN), the estimated rows and bytes read and the seeks;
** per candidate the totals and a cost (rows read plus 16 per seek, the planner's unit for a
** skip scan), ranked lowest cost first; under the current key it adds the first line and
** the ESTIMATE line EXPLAIN prints for the same query. The queries are planned by the
** planner's own code against the candidate key; their rows are counted in the table's row
** keys (all of them, or every k-th past 2^20 rows), read once and re-encoded in each order
** (docs/SHELL.md ".advise" has the model). Nothing is written: no store is rewritten and
** no DDL runs. Then, over the first choice's key, one single-column secondary index per
** non-key column some query's WHERE bounds: the total cost with it and the queries the
** planner's index-choice rule would serve from it (covered, or with lookups). `source`
** names the text in messages (a file name; NULL: "the queries").
** Returns ROWAN_OK with *report set to the advice as text (free it with rowan_advise_free);
** on failure *report is NULL and rowan_errmsg(db) says why: ROWAN_ERROR for an unknown
** table, a statement that is not a SELECT, reads another table, joins tables or has
** parameters ("SOURCE: the statement at line L, column C is not a SELECT ..."), or text
** without any statement;
** ROWAN_SYNTAX for a syntax error ("SOURCE: syntax error near ... at line L, column C",
** counted in the whole text; rowan_error_offset gives the byte offset in it); ROWAN_NOMEM;
** the store's errors (ROWAN_IOERR, ROWAN_CORRUPT) while the row keys are read;
** ROWAN_INTERRUPT when rowan_interrupt is called during the call (the shell's Ctrl-C);
** ROWAN_MISUSE for a NULL db, table, sql or report. The shell's .advise TABLE FILE prints
** the report. (No SQLite or Phoenix counterpart: Phoenix leaves the row key to its user.) */
int rowan_advise(rowan_db *db, const char *table, const char *sql, int n, const char *source,
                 char **report);
void rowan_advise_free(char *report); /* NULL: no-op */

/* The blocks a statement read: a block trace.
** rowan_stmt_trace(stmt, 1) turns tracing on for the statement's runs from then on: each run
** (from its first rowan_step) records every store-file block its reads load (from the file
** or from a cache), with how many times and how many of them from a cache, and every key
** range they seek, in the order sought. It covers the statement's scans, the lookups of an
** uncovered index into its table, and the columnar aggregate's blocks; a statement that
** writes (UPSERT SELECT, DELETE) records the reads of its query. For the blocks of the
** table (or index) the statement scanned, the loads summed per family equal that family's
** rowan_stmt_metrics blocks_read and the cache hits its blocks_cache_hit, and the ranges
** (ranges_total) its ranges_sought, plus one per lookup of an uncovered index into its table
** (whose blocks are recorded too); EXPLAIN ANALYZE of the same statement prints the same
** figures (the lookups' on its LOOKUP BACK INTO line). rowan_stmt_trace(stmt, 0) stops recording; the last trace can still be
** read. Tracing costs a hash-table update per block loaded and memory per distinct block
** (24 bytes) and per range kept; a statement not traced pays nothing.
** rowan_stmt_trace_get(stmt, &trace) returns the last (or current) run's trace: the blocks
** (sorted by file, then block; matched to rowan_table_layout's blocks by file and block) and
** the first 4,096 key ranges with their bounds as column values. Empty when the statement
** was never traced. Free it with rowan_trace_free; its pointers stay valid until then.
** Both return ROWAN_OK; ROWAN_NOMEM; ROWAN_MISUSE for a NULL argument. */
typedef struct rowan_block_read {
  const char *table;          /* the table read, or "TABLE.INDEX" for an index's blocks */
  const char *family;         /* its column family ("_k", "0", "READINGS", ...) */
  uint64_t file;              /* the store file's number (rowan_layout_block.file) */
  uint32_t block;             /* the block's index in it (rowan_layout_block.block) */
  uint32_t loads;             /* times the statement's reads loaded it */
  uint32_t cache_hits;        /* of which served from the block cache (no file read) */
} rowan_block_read;
typedef struct rowan_range_read {
  const char *table;          /* as rowan_block_read.table */
  const void *start;          /* the inclusive start key, or NULL: from the first row */
  int start_len;              /* its length */
  const void *end;            /* the exclusive end key, or NULL: to the last row */
  int end_len;                /* its length */
  const char *text;           /* the range as column values, EXPLAIN's way: one bracket per
                                 bound, ']' inclusive, ')' exclusive, '*' open:
                                 "['Dongsi', *] .. ['Dongsi', *]" (every key whose first column is
                                 'Dongsi'), "[*] .. [*]" (the whole table) */
} rowan_range_read;
typedef struct rowan_trace {
  int n_blocks;               /* distinct blocks read */
  const rowan_block_read *blocks;
  int n_ranges;               /* ranges kept (the first 4,096 sought) */
  const rowan_range_read *ranges;
  uint64_t ranges_total;      /* ranges sought in all */
  int incomplete;             /* nonzero: memory ran out while recording; some reads are
                                 missing */
  void *internal;             /* the library's; do not touch */
} rowan_trace;
int rowan_stmt_trace(rowan_stmt *stmt, int on);
int rowan_stmt_trace_get(rowan_stmt *stmt, rowan_trace **trace);
void rowan_trace_free(rowan_trace *trace); /* NULL: no-op */

/* Bulk load.
** The fast path for loading many rows, the way HBase bulk-loads HFiles: rows are parsed
** from text, sorted in bounded memory and written as store files that are added to the
** store in one atomic step, with no WAL and no memstore.
** rowan_bulk_begin(db, table, ncols, columns, &bulk) starts a load of rows of ncols text
** fields into the named columns (names as in SQL: exact, else upper-cased; every primary key
** column must be given). ROWAN_ERROR for an unknown table or column, a missing key column, a
** column named twice, or a table with an index that is not empty (indexes are written by
** the load only into an empty table; there a key repeated in the load is ROWAN_CONSTRAINT
** from rowan_bulk_add_text); ROWAN_MISUSE inside BEGIN ... COMMIT, for a NULL argument, or on
** a database on HBase (an hbase:// URI: there is no local store to add files to).
** rowan_bulk_add_text(bulk, fields, lengths) adds one row: fields[i] is the text of
** columns[i] (lengths[i] bytes, or strlen when lengths is NULL or lengths[i] < 0; NULL =
** SQL NULL), converted by the column's type as a text literal (rowan_bind_text). A row that
** does not convert or fit returns ROWAN_CONSTRAINT with a message naming the column and the
** value (rowan_errmsg(db)); nothing of it is kept and the load goes on. ROWAN_IOERR,
** ROWAN_FULL or ROWAN_NOMEM (writing a sorted run to disk) end the load: only
** rowan_bulk_abort is left.
** Memory: a load holds at most rowan_options.bulk_memory bytes (default 256 MiB) of buffered
** rows, encoded store-file blocks and merge output, plus a slack of at most an eighth of
** it (the parts being sorted and encoded by the load's worker thread).
** Not counted, and growing with the rows (docs/KV.md "Memory bound"): each family's bloom
** filter, 1.25 bytes per row key (10 bits), set as rows are written; about 1-2 bytes per
** row of block index entries and keys (per 16 KiB block); into a table with no row yet, key
** hashes up to bulk_memory / 32 then a bit set of bulk_memory / 16 bytes (bounded); into a
** table with an index, 8-32 bytes per row of key hashes (exact: a repeated key refuses the
** load). So a load of 100M rows of two families holds about 2 x 125 MB plus some 150 MB
** beyond bulk_memory at its commit, not the 1.6 GB of hashes it held before. Past the
** bound, encoded blocks go to temporary files next to the table's store files (removed at
** commit or abort, and by rowan_open after a crash); unordered rows past it are spilled as
** sorted runs, which makes the commit slower.
** rowan_bulk_commit(bulk) makes every row visible at once, durably, or none of them on
** error; it frees the load whatever the result. rowan_bulk_abort(bulk) frees a load
** without committing it (nothing of it becomes visible); NULL is a no-op.
** Semantics: as UPSERT of each row with the timestamp of rowan_bulk_begin: the columns
** given are set (a NULL field deletes the value), the others kept; a later row with the
** same key replaces an earlier one. The load is newer than every commit made before
** rowan_bulk_begin; a write committed while the load is open has a later timestamp, so
** for the same cell it wins over the load's value although the load commits after it (as
** in HBase, where bulk-loaded cells keep their own timestamps: versions are ordered by
** timestamp, not by commit); rowan_changes(db) gives the rows loaded. Commits wait while
** rowan_bulk_commit writes. */
typedef struct rowan_bulk rowan_bulk;
int rowan_bulk_begin(rowan_db *db, const char *table, int ncols, const char *const *columns,
                     rowan_bulk **bulk);
int rowan_bulk_add_text(rowan_bulk *bulk, const char *const *fields, const int *lengths);
/* rowan_bulk_add_values(bulk, values) adds one row of typed values instead of text (for
** callers whose values are numbers already, such as a language binding: no formatting and
** parsing of each number). values[i] is for columns[i], read during the call only, by its
** type as rowan_column_values writes them: ROWAN_NULL (SQL NULL), ROWAN_INTEGER (i),
** ROWAN_FLOAT (d), ROWAN_TEXT and ROWAN_BLOB (bytes bytes at p), ROWAN_TIMESTAMP (i, ms
** since the epoch, as rowan_bind_timestamp; use ROWAN_TEXT for microseconds). Each value is
** converted to its column's type as the same value bound with rowan_bind_* and stored into
** that column would be (an integer into a DOUBLE column, a text literal into a DATE or
** BOOLEAN one; docs/TYPES.md's conversions). Errors and what is kept: as
** rowan_bulk_add_text (ROWAN_CONSTRAINT naming the column and the value: nothing of the row
** is kept, the load goes on); ROWAN_MISUSE for a NULL values, an unknown type or a negative
** byte count. */
int rowan_bulk_add_values(rowan_bulk *bulk, const rowan_value *values);
int rowan_bulk_commit(rowan_bulk *bulk);
void rowan_bulk_abort(rowan_bulk *bulk);

/* rowan_bulk_status(bulk, what) answers a question about an open load (it changes nothing
** and sets no error): 1 for yes, 0 for no, -1 for a NULL bulk or an unknown `what`.
** ROWAN_BULK_WAS_EMPTY: at rowan_bulk_begin, did every column family of the table (its key
** family included) and of each of its ACTIVE indexes hold no cell at all, in memstores or
** store files (not even deleted rows)? Then the load's rows are the table's only rows, as
** a row-by-row UPSERT of the same rows would leave them (the shell's `.import` takes the bulk
** path on that answer). Nothing is promised about writes made after begin.
** ROWAN_BULK_REPEAT: was the last rowan_bulk_add_text refused (ROWAN_CONSTRAINT) only
** because its key repeats an earlier row of a load into a table with an index? A caller
** that wants UPSERT's "the last row wins" can then commit the load and UPSERT that row and
** the rest with SQL. */
#define ROWAN_BULK_WAS_EMPTY 1
#define ROWAN_BULK_REPEAT 2
int rowan_bulk_status(const rowan_bulk *bulk, int what);

/* Store maintenance (HBase's Admin.flush and Admin.compact / majorCompact, for
** every table of the store at once).
** rowan_flush(db) writes every memstore (the rows committed since the last flush, held in
** memory and in the WAL) to store files and returns when they are in the MANIFEST. Reads
** give the same rows before and after; EXPLAIN ANALYZE then counts blocks of store files
** instead of memstore cells. The store also flushes on its own (rowan_options.memstore_size).
** rowan_compact(db, major) rewrites store files: major (nonzero) flushes the memstores,
** then merges each family's files into one, dropping deleted cells, versions beyond the
** family's VERSIONS and cells past the table's TTL (HBase's major compaction); minor (0)
** merges each family's files and keeps the tombstones. Reads are not blocked while either
** runs, and read the same rows after.
** Both return ROWAN_OK; ROWAN_MISUSE (db NULL or not open); ROWAN_READONLY (opened with
** read_only); ROWAN_IOERR, ROWAN_FULL or ROWAN_CORRUPT from the store, with rowan_errmsg
** naming the file. A failure leaves every committed row readable. */
int rowan_flush(rowan_db *db);
int rowan_compact(rowan_db *db, int major);

/* Catch a read-only handle up with the database's writer (RocksDB's TryCatchUpWithPrimary;
** an SQLite WAL reader's next read transaction).
** A read_only handle shows the database as of its open (or its last refresh); this makes
** it show every commit the writer has written to its log since, each whole, and the
** tables and indexes created or dropped since (statements bind again at their next run,
** as after DDL). A commit the writer made after creating a table, or after a bulk load, that
** the refresh read too early to show whole waits for the next refresh, as does everything
** after it: a refresh never shows a later commit without an earlier one. The writer may
** keep writing, flushing and compacting meanwhile: a file it deletes in the middle makes
** the refresh read its list of files again (for up to about a second). On a writable handle
** it does nothing (its view is always the latest) and returns ROWAN_OK.
** Returns ROWAN_OK; ROWAN_MISUSE (db NULL or not open, a statement between rows: finish
** or reset it first, or a transaction open); ROWAN_CORRUPT or ROWAN_IOERR from the store,
** with rowan_errmsg naming the file: the handle then shows what it showed before. */
int rowan_refresh(rowan_db *db);

/* Online backup: copy the database, while it stays in use, into directory `dir` (created
** if missing; it must be empty), as a database rowan_open opens with every commit that had
** returned before the call and nothing of a commit begun after it, each whole (RocksDB's
** Checkpoint; SQLite's online backup API). Commits wait only while the state to copy is
** noted, reads never; then store files get a second name in `dir` (hard links: they never
** change once written) where the file system allows and are copied where it does not
** (another device), the part of the write-ahead log still needed is copied, and the copy's
** MANIFEST is written last, so a copy cut short (a crash, a full disk) is not a database;
** a failure removes what it wrote. The copy is a database of its own (writing to it leaves
** the original alone); open it with rowan_open(dir).
** Threads: unlike every other call but rowan_interrupt, rowan_backup may run on one thread
** while other threads go on using the same handle (their calls serialized among themselves
** as usual), so a program's writes continue during the copy; run one backup at a time per
** handle, and never beside rowan_close. For that it leaves the handle's error state
** (rowan_errcode, rowan_errmsg) alone: on failure the message goes to errbuf (errcap bytes
** with the NUL, truncated; errbuf may be NULL), "" on success.
** Returns ROWAN_OK; ROWAN_MISUSE (db NULL or not open, dir NULL or empty); ROWAN_ERROR
** (dir exists and is not an empty directory); ROWAN_READONLY (a read_only handle: the
** writer makes backups); ROWAN_IOERR, ROWAN_FULL, ROWAN_NOMEM, the message naming the file.
** An open transaction's writes, not committed, are not in the copy. */
int rowan_backup(rowan_db *db, const char *dir, char *errbuf, size_t errcap);

/* What rowan_open recovered from the write-ahead log.
** A clean close leaves next to nothing to replay (rowan_close flushes); after a crash the
** open replays the commits the log holds past the last flush. A record cut short at the end
** of the newest log segment (a crash in the middle of a write, or damage there) is dropped,
** the segment truncated to the last whole record, and reported here instead of silently
** (SQLite and RocksDB drop a torn tail without telling the application): with
** ROWAN_SYNC_FULL it is a commit that never returned; with NORMAL or OFF it may be one that
** returned but had not reached the disk. Damage anywhere else in the log is not dropped:
** rowan_open fails with ROWAN_CORRUPT naming the segment and the byte offset. */
typedef struct rowan_recovery {
  uint64_t replayed_records;  /* committed batches replayed from the log */
  uint64_t replayed_bytes;    /* their bytes in the log */
  uint64_t dropped_bytes;     /* bytes of a torn or damaged record the open dropped from
                                 the end of the newest segment; 0 = none */
  char dropped_segment[512];  /* that segment's file (path), "" when none */
} rowan_recovery;
/* Fills *out for the open handle: ROWAN_OK, or ROWAN_MISUSE (NULL argument, not open). */
int rowan_recovery_info(rowan_db *db, rowan_recovery *out);

/* Salvage a damaged database into a new one (SQLite's .recover, RocksDB's RepairDB).
** rowan_recover reads the database in directory `damaged` (never changing it: its LOCK is
** taken, so it must not be open elsewhere) and writes every row that can still be read into
** a new database in directory `dst`, which must not exist or be empty (missing parent
** directories are made). The shell's `rowan --recover DAMAGED NEW` runs it; docs/SHELL.md,
** "Recovering a damaged database", and docs/KV.md, "Salvage", tell the rules. In short:
**  - Store files are read block by block and WAL segments record by record; every block and
**    record whose checksum and decoding check is kept, the rest skipped and reported, and
**    the rest of the file is still read. Without a readable MANIFEST the store files are
**    found by listing the folders (each table folder's TABLEINFO file names its table and
**    families). The newest version of each cell wins across the files, tombstones and
**    VERSIONS applied, exactly as a read of the old database would.
**  - The catalog (SYSTEM.CATALOG) is itself in the store. Each table whose catalog row
**    survives comes back with its schema, its cells copied with their timestamps (every
**    version a read keeps); a row whose row-marker cell was lost gets a new one (when the
**    marker family lost nothing, such a row was deleted and its cells are set aside). Secondary
**    indexes are rebuilt from the table (CREATE INDEX), never copied, and checked (CHECK
**    INDEX): the new database passes `.check`. Cells that cannot go back into a table (a
**    table whose catalog row is lost, a lost catalog, a row key or value that does not
**    decode, a qualifier that is no column) go to the table LOST_AND_FOUND (KV_TABLE
**    VARCHAR, FAMILY VARCHAR, ROW_KEY VARBINARY, QUALIFIER VARBINARY, TS BIGINT (ms since the
**    epoch), VAL VARBINARY; the first five the PRIMARY KEY, TS DESC), named LOST_AND_FOUND_2
**    and so on when the name is taken; it is made only when needed.
**  - Key-value tables that are not SQL tables are copied as they are.
** opts may be NULL (the defaults); *report (report must not be NULL) gets a report, also
** when the call fails (then its errmsg says why), which the caller frees with
** rowan_recover_report_free; it is NULL only when memory ran out before it was made.
** Returns ROWAN_OK when the new database was written (damage found or not: the report
** lists it); ROWAN_NOTFOUND (`damaged` is not a directory); ROWAN_LOCKED (open elsewhere);
** ROWAN_MISUSE (a NULL argument, `dst` not empty or the same directory); ROWAN_IOERR or
** ROWAN_FULL writing `dst`; ROWAN_NOMEM; ROWAN_CORRUPT when the new database fails its own
** index check (a bug: report it). After an error `dst` may hold part of a database: remove
** it before trying again. The work files are kept in dst/salvage while it runs and removed
** at the end. */
typedef struct rowan_recover_options {
  void *kv_env;      /* a struct kv_env * (kv/env/env.h) for both directories, e.g. the in-memory
                        one in tests; NULL = the real disk */
} rowan_recover_options;

/* One thing that could not be read. Strings are owned by the report. */
typedef struct rowan_recover_damage {
  const char *kind;   /* "MANIFEST", "TABLEINFO", "store file trailer", "store file bloom
                         filter", "store file block index", "store file block", "missing
                         store file", "WAL record", "lost name", "catalog row" */
  const char *file;   /* the file (a path under the damaged directory) */
  uint64_t offset;    /* first byte not read (0 for a whole file or no byte range) */
  uint64_t length;    /* bytes not read; 0 when not a byte range (a missing file, a name) */
  int64_t cells;      /* cells lost, -1 when it cannot tell */
  int64_t rows;       /* rows with a cell lost, -1 when it cannot tell */
  const char *detail; /* why, in words */
} rowan_recover_damage;

/* One table of the new database. */
typedef struct rowan_recover_table {
  const char *name;        /* its name */
  int64_t rows;            /* rows copied */
  int64_t cells;           /* cells copied (row markers included) */
  int64_t markers_added;   /* rows whose row marker was lost and made again */
  int64_t cells_set_aside; /* cells put in LOST_AND_FOUND instead (bad key, value or
                              qualifier) */
  int indexes;             /* secondary indexes rebuilt and checked */
} rowan_recover_table;

typedef struct rowan_recover_report {
  int n_damage;                          /* entries in damage */
  const rowan_recover_damage *damage;    /* what could not be read, in the order found */
  int n_tables;                          /* entries in tables */
  const rowan_recover_table *tables;     /* the SQL tables recreated (LOST_AND_FOUND too) */
  int catalog;                           /* ROWAN_CATALOG_WHOLE, _PARTIAL or _LOST */
  const char *lost_and_found;            /* the fallback table's name, NULL when not made */
  int64_t lost_and_found_cells;          /* cells put there */
  int kv_tables;                         /* key-value tables copied as they are */
  int manifest_whole;                    /* non-zero: the MANIFEST was there and read whole */
  uint64_t files_read, files_damaged;    /* store files read; of which damaged */
  uint64_t blocks_read, blocks_lost;     /* blocks copied; blocks that did not check */
  uint64_t wal_records;                  /* WAL records read */
  uint64_t wal_ops;                      /* their ops copied (not yet in store files) */
  const char *errmsg;                    /* why rowan_recover failed ("" when it did not) */
} rowan_recover_report;
#define ROWAN_CATALOG_WHOLE 0   /* every catalog row decoded */
#define ROWAN_CATALOG_PARTIAL 1 /* some catalog rows were lost: the report says which */
#define ROWAN_CATALOG_LOST 2    /* no catalog: every table's cells went to LOST_AND_FOUND */

int rowan_recover(const char *damaged, const char *dst, const rowan_recover_options *opts,
                  rowan_recover_report **report);
/* Free a report (NULL is a no-op). */
void rowan_recover_report_free(rowan_recover_report *report);

/* Progress of long operations.
** fn (NULL clears it) is called during long operations of the connection, today
** the backfill of CREATE INDEX: every few thousand rows with a description ("building index
** IDX on T"), the rows done and the estimated total (0 when unknown), and once at the end
** with done == total. It runs on the thread that called rowan_step and must not call back
** into the connection (but for rowan_interrupt, which stops the backfill: the CREATE INDEX
** then fails with ROWAN_INTERRUPT and leaves no index). Returns ROWAN_OK, or ROWAN_MISUSE for a NULL db. (SQLite's
** sqlite3_progress_handler plays the same part.) */
typedef void (*rowan_progress_fn)(void *ctx, const char *what, uint64_t done, uint64_t total);
int rowan_progress_handler(rowan_db *db, rowan_progress_fn fn, void *ctx);

/* Interrupt the connection's running statements (SQLite's sqlite3_interrupt).
** Safe to call from any thread and from a signal handler (it only stores to an atomic flag).
** A statement stepping when it is called, or stepped afterwards while another of the
** connection's statements is still between rows (its last step returned ROWAN_ROW), fails
** with ROWAN_INTERRUPT ("interrupted") within a few dozen rows it reads or examines; such
** a statement must be reset (or finalized) before it runs again. When no statement of the
** connection is running, the call has no effect: the flag is cleared when a statement
** starts and none is between rows. A write statement outside BEGIN ... COMMIT that is
** interrupted leaves none of its writes (rowan_step's "Atomic statements"); inside a
** transaction it is rolled back alone and the transaction goes on. CREATE INDEX is
** interrupted in its backfill too: it fails with ROWAN_INTERRUPT and leaves no index (the
** catalog as before, the index's rows and files gone). An interrupt that comes while a
** statement is already committing its writes lets it finish. NULL db: no effect. */
void rowan_interrupt(rowan_db *db);

/* CAPI3REF: Read the past (Phoenix's CurrentSCN)
** From now on every SELECT of the connection reads the database as it was at `ms`
** (milliseconds since 1970-01-01 00:00:00 UTC, the clock of cell timestamps), as if each
** of its tables were written `FROM t AS OF TIMESTAMP '...'`: for each column the newest
** version at or before ms, delete markers at or before ms applied, within VERSIONS and TTL
** (TTL still measured from now); rows written later are invisible. A statement's own AS
** OF clause wins. Secondary indexes are not used by such reads (EXPLAIN says so); CHECK
** INDEX still checks the present. While it is set, UPSERT, DELETE and DDL fail with ROWAN_ERROR ("the connection reads as of ...:
** writes and DDL are refused"): Phoenix allows writes at a past SCN, Rowan does not. A
** SELECT whose time is older than the look-back horizon (now minus
** rowan_options.max_lookback_seconds, or a later major compaction's cutoff) fails with
** ROWAN_ERROR naming the time and the oldest exact one, never with a partial answer.
** ms = 0 reads the present again. It applies to statements' next runs (one running keeps
** its time). Returns ROWAN_OK; ROWAN_MISUSE for a NULL or unopened db or a negative ms. */
int rowan_set_as_of(rowan_db *db, int64_t ms);
/* The time set by rowan_set_as_of (0: the present; also for a NULL db). */
int64_t rowan_as_of(rowan_db *db);

/* CAPI3REF: Parallel scans (Phoenix's parallel scan model)
** Sets how many threads the connection's SELECTs scan a table with. A table scan estimated
** at min_rows rows or more (a range, skip or full scan, forward, through no index) is cut
** into chunks at the storage backend's split points (region boundaries) and at the local
** store's block-index cut points, at most 32 chunks, run on up to `threads` threads, and
** the chunks' results merged as Apache Phoenix merges them: concatenated in key order
** (the rows, and a LIMIT without ORDER BY, come exactly as a serial scan gives them),
** merge-sorted for ORDER BY, top-N per chunk for ORDER BY ... LIMIT, combined from partial
** aggregates for COUNT, MIN, MAX, and SUM and AVG of integers or into a DOUBLE (exactly
** rounded: the serial answer's bits); other aggregates, e.g. DISTINCT ones or a DECIMAL sum,
** aggregate the chunks' rows serially in key order. EXPLAIN
** shows "CLIENT n-CHUNK PARALLEL m-WAY" and the merge, or "CLIENT 1-CHUNK SERIAL" with the
** reason for a scan that qualifies but runs serially (threads 1, no split point, a
** transaction with uncommitted writes); EXPLAIN ANALYZE the rows of each chunk. The columnar
** aggregate ("SERVER COLUMNAR AGGREGATE") of a SELECT evaluates its chunks on `threads` of
** them too (0: the processors), at most 4, once this is called (before, on 2 whatever the
** machine); an UPSERT ... SELECT's or a subquery's keeps 2.
** threads: 0 = the number of online processors (the default), 1 = every scan serial, up to
** 64. min_rows: the estimated rows a scan needs (negative: the default, 100,000). It
** applies to statements' next runs. Returns ROWAN_OK; ROWAN_MISUSE for a NULL or unopened
** db or threads outside 0..64 (the message names the value). */
int rowan_set_scan_threads(rowan_db *db, int threads, int64_t min_rows);
/* The threads a scan runs on now (the setting, 0 resolved to the processors); 0 for a NULL
** db. */
int rowan_scan_threads(rowan_db *db);

/* Library version, e.g. "0.1.0". */
const char *rowan_libversion(void);

#ifdef __cplusplus
}
#endif
#endif /* ROWAN_H */
