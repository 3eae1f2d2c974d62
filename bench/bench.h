/*
** bench/bench.h: shared declarations of the side-by-side benchmark (bench/bench_main.c) of
** Rowan, SQLite and RocksDB on the sensor archive (data/beijing/).
**
** What it holds: the parsed form of one archive row (bench_row), the CSV input of a run
** (bench_input: plain CSV files prepared from the gzip'ed archive, optionally repeated with
** renamed stations), the one CSV parser every engine's load uses (so parsing costs the same
** for all three), result digests used to check that the engines agree, and the engine
** vtable each of bench_rowan.c, bench_sqlite.c and bench_rocks.c fills in.
**
** What it does not: time anything (bench_main.c does), or assert timings (this is run by
** hand, never by CTest).
*/
#ifndef ROWAN_BENCH_H
#define ROWAN_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Readings of one row, in the archive's column order. ORDER BENCH_COL: bench_col_names in
** bench_data.c has one SQL name per entry, in this order. */
enum {
  BENCH_PM25, BENCH_PM10, BENCH_SO2, BENCH_NO2, BENCH_CO, BENCH_O3, BENCH_TEMP, BENCH_PRES,
  BENCH_DEWP, BENCH_RAIN, BENCH_WSPM, BENCH_NDOUBLE
};
#define BENCH_WD_NULL_BIT (1u << BENCH_NDOUBLE) /* null_mask bit of WD */
#define BENCH_READINGS 12                        /* readings per row: 11 doubles + WD */
#define BENCH_MAX_STATION 48                     /* bytes of a station name, NUL included */

/* Names of the 11 double columns (upper case, as in SQL), in BENCH_COL order. */
extern const char *const bench_col_names[BENCH_NDOUBLE];

typedef struct bench_row {
  char station[BENCH_MAX_STATION]; /* station name, NUL-terminated */
  uint32_t station_len;            /* strlen(station) */
  int64_t ts_ms;                   /* hour of the reading, ms since 1970-01-01 (no zone) */
  double v[BENCH_NDOUBLE];         /* readings; meaningless where null_mask says NULL */
  uint32_t null_mask;              /* bit i: v[i] is NULL; BENCH_WD_NULL_BIT: WD is NULL */
  char wd[4];                      /* wind direction, NUL-terminated, e.g. "NNW" */
  uint32_t wd_len;                 /* strlen(wd) */
} bench_row;

/* One CSV file of the input (one station of one copy, about 3 MB). It is read into memory
** only while a reader is open on it (bench_csv_open), so a load holds one file at a time
** and the 30x set's 1 GB of CSV text is never in memory at once. */
typedef struct bench_file {
  char *path;                      /* the prepared plain CSV file */
} bench_file;

typedef struct bench_input {
  bench_file *files;               /* the CSV files, header line first in each */
  int n_files;                     /* entries in files */
  int64_t rows;                    /* data rows over all files */
  int n_stations;                  /* distinct stations */
  char (*stations)[BENCH_MAX_STATION]; /* their names, in file order */
  int64_t ts_min, ts_max;          /* first and last hour of every station (ms) */
  int copies;                      /* how many times the archive is repeated (1 = as is) */
  char *dir;                       /* directory of the prepared files (input_*.csv), owned */
  /* Synthetic set (bench_input_synth): files holds the archive once, and a load generates
  ** synth_groups x synth_shifts copies on the fly (copy (g, s): station NAME_Gg, years + 4s);
  ** 0 for a set made of files. */
  int synth_groups;                /* station groups (each renames all 12 stations) */
  int synth_shifts;                /* 4-year shifts per group */
} bench_input;

/* Build the input in work_dir: decompress data_dir/PRSA_Data_*.csv.gz into plain CSV files,
** `copies` times (copy k > 0 renames each station to NAME_k, in the file and in every
** row). Reads them back into memory and checks every row parses (counting rows, stations
** and the time range). Returns 0, or -1 with a message on stderr. Free with
** bench_input_free. */
int bench_input_prepare(const char *data_dir, const char *work_dir, int copies,
                        bench_input *in);
void bench_input_free(bench_input *in);

/* The synthetic set of at least min_rows rows: the archive's files are prepared once in
** work_dir and a load cycles them (bench_synth_next) as synth_groups x synth_shifts
** copies: group g renames each station NAME to NAME_Gg, shift s adds 4*s years (1,461
** days: the archive spans exactly four years, so a station's shifted copies follow one
** another without gap or overlap). Nothing but the 12 archive files is ever written or
** held. Returns 0, or -1 with a message on stderr. */
int bench_input_synth(const char *data_dir, const char *work_dir, int64_t min_rows,
                      bench_input *in);

/* Row-by-row reader over one file's text: skips the header line on the first call. */
typedef struct bench_csv {
  char *text;                      /* the file's bytes (NUL-terminated), owned */
  const char *p;                   /* next byte */
  const char *end;                 /* one past the last byte */
  int64_t line;                    /* line number of the row last returned (1-based) */
} bench_csv;

/* Read f into memory (from the page cache, normally) and start before its first data row.
** 0, or -1 with a message on stderr. bench_csv_close frees the text. */
int bench_csv_open(bench_csv *c, const bench_file *f);
void bench_csv_close(bench_csv *c);
/* Parse the next data row into *row. Returns 1 with a row, 0 at the end, -1 on a malformed
** row (message on stderr with the line number). NA fields are NULL. */
int bench_csv_next(bench_csv *c, bench_row *row);

/* Split the next data row into its 18 fields (the archive's columns, in file order):
** s[i], n[i] are each field's text without quotes (quoted fields with "" are unescaped into
** buf[i]). Returns 1 with a row, 0 at the end, -1 on a malformed row (message on stderr). */
#define BENCH_CSV_FIELDS 18
int bench_csv_fields(bench_csv *c, const char **s, size_t *n, char (*buf)[64]);

/* Milliseconds since 1970-01-01 00:00 of a civil date and hour (proleptic Gregorian). */
int64_t bench_ms_of(int year, int month, int day, int hour);

/* What a query returned, folded so that engines can be compared: rows and a sum of every
** value (ts in hours, each non-NULL double, the first byte of WD). */
typedef struct bench_digest {
  int64_t rows;                    /* rows returned */
  double sum;                      /* sum over the rows' values */
} bench_digest;

void bench_digest_row(bench_digest *d, const bench_row *r);
/* Non-zero when a and b agree (equal rows, sums within a relative 1e-9). */
int bench_digest_equal(const bench_digest *a, const bench_digest *b);

/* An engine under test. Every int function returns 0 on success, -1 on failure after
** printing the engine's message to stderr. */
typedef struct bench_engine {
  const char *name;                /* "Rowan", "SQLite", "RocksDB" */
  /* Create an empty database in dir (which does not exist yet); with_index: create the
  ** secondary index on TEMP before loading (-1 from create when the engine refuses it, and
  ** *unsupported set). */
  int (*create)(void **h, const char *dir, int with_index, int *unsupported);
  /* Parse and insert every row of in, committing every batch_rows rows. */
  int (*load)(void *h, const bench_input *in, int batch_rows);
  /* Make the database durable and compact (flush + major compaction, checkpoint), close it,
  ** and return the bytes of every file in dir. */
  int (*finish)(void *h, const char *dir, uint64_t *bytes);
  /* Open an existing database in dir for reads (SQLite: exclusive locking). */
  int (*open)(void **h, const char *dir);
  int (*count_all)(void *h, int64_t *n);
  int (*count_temp_gt)(void *h, double t, int64_t *n);
  int (*count_temp_null)(void *h, int64_t *n);
  /* COUNT(*) WHERE TEMP > t read through the index on TEMP (forced by a hint), or NULL for
  ** an engine without indexes: shows the index a load maintained is complete. */
  int (*count_temp_gt_index)(void *h, double t, int64_t *n);
  /* Point lookup by full key through a prepared statement (or the engine's get). */
  int (*lookup)(void *h, const char *station, int64_t ts_ms, bench_digest *d);
  /* The latest n rows of a station, newest first. */
  int (*latest)(void *h, const char *station, int n, bench_digest *d);
  /* The rows of [from_ms, to_ms) of a station, newest first. */
  int (*range)(void *h, const char *station, int64_t from_ms, int64_t to_ms,
               bench_digest *d);
  /* Average TEMP per station and day over [from_ms, to_ms): d->rows = groups, d->sum = sum
  ** of the averages (NULL averages left out). */
  int (*daily_avg)(void *h, int64_t from_ms, int64_t to_ms, bench_digest *d);
  void (*close)(void *h);
} bench_engine;

extern const bench_engine bench_rowan;
extern const bench_engine bench_sqlite;
extern const bench_engine bench_rocks;
extern const bench_engine bench_duck; /* bench_duck.c: a child process (bench/duck_peer.py) */

/* DuckDB's child process (bench_duck.c): the interpreter with the duckdb package (NULL:
** DuckDB is not run), the script, and the settings it gets. */
extern const char *bench_duck_python;
extern const char *bench_duck_script;
extern int bench_duck_threads;
extern const char *bench_duck_memory;
/* Seconds an engine measured itself for its last call (DuckDB: inside its process), or
** negative when the caller's clock is the figure. The caller sets it to -1 before a call. */
extern double bench_self_seconds;
/* End DuckDB's child process (if started). */
void bench_duck_stop(void);

/* Bytes of block cache (Rowan, RocksDB) and page cache (SQLite) every engine gets;
** bench_main.c sets it (--cache MiB, default 64). */
extern size_t bench_cache_bytes;
extern unsigned bench_block_size; /* Rowan: BLOCKSIZE of the readings family (0 = default) */

/* Load in into an open Rowan handle (from bench_rowan.create, without index) through the
** bulk-load API (rowan_bulk_*: sorted store files, no WAL, no memstore), the CSV fields
** handed over as text. 0, or -1 with the message on stderr. */
int bench_rowan_bulk_load(void *h, const bench_input *in);

/* Issue 23's figures (bench_parallel.c): create SENSOR salted into `buckets` buckets in a
** new database in dir (as bench_rowan.create, without index); set the scan threads of an
** open handle (rowan_set_scan_threads, the default minimum of rows); the processors online. */
int bench_rowan_create_salted(void **h, const char *dir, int buckets);
int bench_rowan_set_threads(void *h, int threads);
int bench_rowan_processors(void);

/* Print the block cache counters of an open Rowan handle (from bench_rowan.open) to out. */
void bench_rowan_print_cache(void *h, FILE *out);
/* The block cache's inserts so far (0 when the counters cannot be read). */
uint64_t bench_rowan_cache_inserts(void *h);
/* Bytes every open store file of Rowan's store holds for as long as it is open (block
** indexes, fences, bloom filters or their partition indexes: kv_family_stats.reader_bytes
** summed over every family of every table). */
uint64_t bench_rowan_reader_bytes(void *h);
/* --profile reads: keep each query's read counters (rowan_stmt_metrics) from now on (on),
** and give the last one's store-file blocks read and, of those, block cache hits. */
void bench_rowan_diag(void *h, bool on);
void bench_rowan_last_read(void *h, uint64_t *blocks, uint64_t *hits);

/* Bytes of every regular file under dir (recursively). */
uint64_t bench_dir_bytes(const char *dir);
/* rm -rf dir (only what bench created). Returns 0 or -1. */
int bench_rmtree(const char *dir);

#endif /* ROWAN_BENCH_H */
