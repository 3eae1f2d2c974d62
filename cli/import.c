/*
** cli/import.c: bulk import of CSV/TSV files into a table through the public API
** (cli/import.h). For each file: open it (import_src.c: plain, gzip or lz4), split it into
** records (import_rec.c; on the reader thread of import_pipe.c), map each record's fields
** to columns, and upsert it with one prepared `UPSERT INTO t (cols) VALUES (?, ...)`. A
** field of a DOUBLE or integer column that the catalog's fast parser takes is bound as that
** number; every other value is bound as text so the catalog's typed parsers convert it (and
** name column and value when they cannot): the same values either way. Rows are committed
** in transactions of opts->batch_rows, and an import that loaded rows ends with a flush
** (rowan_flush) unless opts->no_flush. The bulk path (rowan_bulk_*: sorted store files, one
** atomic commit) loads the records instead with --bulk, and by default when the table holds
** nothing at all (no cell in any of its families or its indexes'): there it gives the rows
** the UPSERTs would, and where it could not (a file mapping other columns, a key repeated
** in a table with an index) it commits what it has and goes on row by row (bulk_row).
**
** Every record read is counted once, as loaded or rejected. A rejected record goes to the
** reject file, a CSV file with the header `file,line,reason,record` and one record per
** reject (the raw text as read, line ends inside it kept), so it can itself be imported
** or fixed and fed back. A row the engine refuses inside a transaction is reset and the
** transaction goes on (the engine keeps a failed statement's writes out of the batch).
**
** It does not create tables, expand globs or print anything but progress (the caller prints
** cli_import_summary), nor parse the shell's `.import` arguments (cli/import_args.c).
*/
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog/text_fast.h"
#include "cli/import.h"
#include "cli/import_int.h"
#include "cli/import_pipe.h"

#define READ_CHUNK (256 * 1024) /* decompressed bytes read at a time */

/* How a parameter's field is bound (loader.ptype): as text, or, when the catalog's fast
** parser takes it, as the number it gives; exactly the value (and, for an integer out of
** the column's range, the message) the text would give, since the engine's text parser
** takes the same fast path first (catalog/text_fast.h); anything else goes as text. */
enum { PT_TEXT = 0, PT_DOUBLE, PT_INT };

typedef struct loader {
  rowan_db *db;                   /* target database */
  const cli_import_options *o;    /* options */
  cli_import_result *res;         /* counts */
  const char *table;              /* table name as written */
  rowan_stmt *ins;                /* the prepared UPSERT, or NULL before the mapping */
  int nfields;                    /* fields each data record must have */
  int *param_of;                  /* per field: 1-based parameter, or 0 to skip the field */
  char *sig;                      /* upper-cased column list ins was built from */
  char **pnames;                  /* per parameter (0-based): its column name, for messages */
  int n_pnames;                   /* entries in pnames */
  unsigned char *ptype;           /* per parameter (0-based): PT_* of its column, or NULL */
  const char *file;               /* file being read */
  int want_header;                /* the next record of this file is its header */
  FILE *rej;                      /* reject file, or NULL */
  int in_txn;                     /* a BEGIN is open */
  int64_t pending;                /* rows upserted in the open transaction */
  int rc;                         /* first fatal error (ROWAN_*), ROWAN_OK while fine */
  char *err;                      /* caller's message buffer */
  size_t cap;                     /* its capacity */
  cli_src *src;                   /* source being read, for progress */
  cli_pipe *pipe;                 /* the reader thread's pipe, when it reads (progress) */
  int64_t total_bytes;            /* sum of the file sizes */
  int64_t done_bytes;             /* bytes of the files already finished */
  double t0;                      /* start time (monotonic seconds) */
  double last_print;              /* when progress was last printed */
  int printed;                    /* progress was printed (end it with a newline) */
  int last_len;                   /* characters of the last progress line (to blank) */
  char reasons[3][160];           /* the first three reject reasons, for a stop message */
  rowan_bulk *bulk;               /* --bulk: the open load, or NULL */
  char *bulk_sig;                 /* --bulk: the column list the load was begun with */
  const char **bf;                /* --bulk: per parameter, the field text (NULL = NULL) */
  int *bl;                        /* --bulk: per parameter, its length */
  int mode;                       /* M_AUTO, M_BULK or M_ROW: how the next record loads */
  int row_used;                   /* some rows went through the UPSERT (flush at the end) */
} loader;

/* How records load (loader.mode). M_AUTO: not decided yet: the first data record begins a
** bulk load, kept when the table held nothing at all (rowan_bulk_status), else M_ROW. */
enum { M_AUTO = 0, M_BULK, M_ROW };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void setmsg(loader *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(L->err, L->cap, fmt, ap);
  va_end(ap);
}

void cli_import_options_init(cli_import_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->format = CLI_IMPORT_CSV;
}

/* ---- column lists ------------------------------------------------------------------ */

/* Append `name` as an SQL identifier: an unquoted name folds to upper case and is quoted;
** a name written in double quotes is kept as written. qualified: a '.' separates family
** and column (for --columns); otherwise the whole name is one identifier (header names
** such as "PM2.5"). A NULL name appends the separator ", " instead. */
static int put_ident(char **buf, size_t *n, size_t *cap, const char *name, size_t len,
                     int qualified) {
  int sep = name == NULL; /* NULL name: append the separator ", " */
  while (len > 0 && isspace((unsigned char)*name)) name++, len--;
  while (len > 0 && isspace((unsigned char)name[len - 1])) len--;
  size_t need = *n + 2 * len + 8;
  if (need > *cap) {
    size_t c = *cap ? *cap * 2 : 256;
    while (c < need) c *= 2;
    char *q = realloc(*buf, c);
    if (!q) return -1;
    *buf = q;
    *cap = c;
  }
  char *o = *buf + *n;
  if (sep) {
    *o++ = ',';
    *o++ = ' ';
    *o = 0;
    *n += 2;
    return 0;
  }
  int quoted = len >= 2 && name[0] == '"' && name[len - 1] == '"';
  if (quoted) {
    memcpy(o, name, len);
    o += len;
  } else {
    *o++ = '"';
    for (size_t i = 0; i < len; i++) {
      char c = name[i];
      if (qualified && c == '.') {
        *o++ = '"';
        *o++ = '.';
        *o++ = '"';
        continue;
      }
      if (c == '"') *o++ = '"';
      *o++ = (char)toupper((unsigned char)c);
    }
    *o++ = '"';
  }
  *o = 0;
  *n = (size_t)(o - *buf);
  return 0;
}

static void free_pnames(char **pn, int n) {
  for (int i = 0; i < n; i++) free(pn[i]);
  free(pn);
}

/* Append a parameter's column name, dropping the identifier quotes. */
static int add_pname(char ***pn, int *n, const char *s, size_t len) {
  char **q = realloc(*pn, ((size_t)*n + 1) * sizeof *q);
  if (!q) return -1;
  *pn = q;
  char *c = malloc(len + 1);
  if (!c) return -1;
  size_t k = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '"' && !(i + 1 < len && s[i + 1] == '"')) continue;
    c[k++] = s[i];
    if (s[i] == '"') i++;
  }
  c[k] = 0;
  q[(*n)++] = c;
  return 0;
}

/* L->ptype for the parameters, from the declared types of `SELECT cols FROM table` (cols:
** the UPSERT's column list, or "*" for all columns in order). Any failure leaves every
** parameter bound as text (L->ptype NULL), which is always right, only slower. */
static void set_ptypes(loader *L, const char *cols) {
  free(L->ptype);
  L->ptype = NULL;
  size_t ql = strlen(cols) + strlen(L->table) + 32;
  char *q = malloc(ql);
  rowan_stmt *st = NULL;
  if (!q) return;
  snprintf(q, ql, "SELECT %s FROM %s", cols, L->table);
  if (rowan_prepare(L->db, q, -1, &st, NULL) == ROWAN_OK && st &&
      rowan_column_count(st) == L->n_pnames &&
      (L->ptype = calloc((size_t)L->n_pnames + 1, 1)) != NULL) {
    for (int i = 0; i < L->n_pnames; i++) {
      const char *t = rowan_column_decltype(st, i);
      if (!t) continue;
      if (!strcmp(t, "DOUBLE")) L->ptype[i] = PT_DOUBLE;
      else if (!strcmp(t, "BIGINT") || !strcmp(t, "INTEGER") || !strcmp(t, "SMALLINT") ||
               !strcmp(t, "TINYINT"))
        L->ptype[i] = PT_INT;
    }
  }
  rowan_finalize(st);
  free(q);
}

/* Build and prepare the UPSERT for the given names (names[i] with lens[i]; a name of
** length 0 skips its field). n_names < 0: no list, all columns of the table in order. */
static int prepare_ins(loader *L, const char *const *names, const size_t *lens, int n_names,
                       int qualified, const char *where) {
  char *sql = NULL, *sig = NULL;
  size_t n = 0;
  int nparams = 0;
  rowan_stmt *st = NULL;
  int rc = ROWAN_NOMEM;
  free(L->param_of);
  L->param_of = NULL;
  char **pn = NULL;
  int npn = 0;
  if (n_names < 0) {
    char *q = malloc(strlen(L->table) + 32);
    if (!q) goto done;
    sprintf(q, "SELECT * FROM %s", L->table);
    rc = rowan_prepare(L->db, q, -1, &st, NULL);
    free(q);
    if (rc != ROWAN_OK || !st) {
      setmsg(L, "table %s: %s", L->table, rowan_errmsg(L->db));
      rc = rc ? rc : ROWAN_ERROR;
      goto done;
    }
    nparams = rowan_column_count(st);
    for (int i = 0; i < nparams; i++) {
      const char *cn = rowan_column_name(st, i);
      if (add_pname(&pn, &npn, cn ? cn : "?", cn ? strlen(cn) : 1) != 0) {
        rowan_finalize(st);
        goto done;
      }
    }
    rowan_finalize(st);
    st = NULL;
    L->nfields = nparams;
    L->param_of = calloc((size_t)nparams + 1, sizeof *L->param_of);
    if (!L->param_of) goto done;
    for (int i = 0; i < nparams; i++) L->param_of[i] = i + 1;
    size_t tl = strlen(L->table);
    if (!(sql = malloc(tl + 64 + 3 * (size_t)nparams))) goto done;
    n = (size_t)sprintf(sql, "UPSERT INTO %s VALUES (", L->table);
    if (!(sig = strdup(""))) goto done;
  } else {
    L->nfields = n_names;
    L->param_of = calloc((size_t)n_names + 1, sizeof *L->param_of);
    if (!L->param_of) goto done;
    char *list = NULL;
    size_t ln = 0, lcap = 0;
    for (int i = 0; i < n_names; i++) {
      size_t l = lens[i];
      const char *p = names[i];
      while (l > 0 && isspace((unsigned char)*p)) p++, l--;
      if (l == 0) continue;
      if (nparams > 0 && put_ident(&list, &ln, &lcap, NULL, 0, 0) != 0) {
        free(list);
        goto done;
      }
      size_t before = ln;
      if (put_ident(&list, &ln, &lcap, p, l, qualified) != 0 ||
          add_pname(&pn, &npn, list + before, ln - before) != 0) {
        free(list);
        goto done;
      }
      L->param_of[i] = ++nparams;
    }
    if (nparams == 0) {
      free(list);
      setmsg(L, "%s: no column to load (every field is skipped)", where);
      rc = ROWAN_ERROR;
      goto done;
    }
    sig = list;
    if (!(sql = malloc(strlen(L->table) + ln + 64 + 3 * (size_t)nparams))) goto done;
    n = (size_t)sprintf(sql, "UPSERT INTO %s (%s) VALUES (", L->table, list);
  }
  for (int i = 0; i < nparams; i++) {
    memcpy(sql + n, i ? ", ?" : "?", i ? 3 : 1);
    n += i ? 3 : 1;
  }
  sql[n++] = ')';
  sql[n] = 0;
  if (L->sig && sig && strcmp(L->sig, sig) == 0 && L->ins) {
    rc = ROWAN_OK; /* same columns as the statement we have */
    goto done;
  }
  free_pnames(L->pnames, L->n_pnames);
  L->pnames = pn;
  L->n_pnames = npn;
  pn = NULL;
  npn = 0;
  rc = rowan_prepare(L->db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK || !st) {
    setmsg(L, "%s: %s (in %s)", where, rowan_errmsg(L->db), sql);
    rc = rc ? rc : ROWAN_ERROR;
    goto done;
  }
  rowan_finalize(L->ins);
  L->ins = st;
  free(L->sig);
  L->sig = sig;
  sig = NULL;
  set_ptypes(L, L->sig[0] ? L->sig : "*");
  rc = ROWAN_OK;
done:
  if (rc == ROWAN_NOMEM) setmsg(L, "out of memory");
  free(sql);
  free(sig);
  free_pnames(pn, npn);
  return rc;
}

/* Prepare from the --columns list "a,b,,c". */
static int prepare_from_list(loader *L, const char *list) {
  int n = 1;
  for (const char *p = list; *p; p++) n += *p == ',';
  const char **names = malloc((size_t)n * sizeof *names);
  size_t *lens = malloc((size_t)n * sizeof *lens);
  if (!names || !lens) {
    free(names);
    free(lens);
    setmsg(L, "out of memory");
    return ROWAN_NOMEM;
  }
  const char *p = list;
  for (int i = 0; i < n; i++) {
    const char *e = strchr(p, ',');
    names[i] = p;
    lens[i] = e ? (size_t)(e - p) : strlen(p);
    p = e ? e + 1 : p + lens[i];
  }
  int rc = prepare_ins(L, names, lens, n, 1, "--columns");
  free(names);
  free(lens);
  return rc;
}

static int prepare_from_header(loader *L, const cli_record *rec) {
  const char **names = malloc(((size_t)rec->nfields + 1) * sizeof *names);
  size_t *lens = malloc(((size_t)rec->nfields + 1) * sizeof *lens);
  if (!names || !lens) {
    free(names);
    free(lens);
    setmsg(L, "out of memory");
    return ROWAN_NOMEM;
  }
  for (int i = 0; i < rec->nfields; i++) {
    names[i] = rec->fields[i].p ? rec->fields[i].p : "";
    lens[i] = rec->fields[i].n;
  }
  char where[600];
  snprintf(where, sizeof where, "%s:%" PRId64 ": header", L->file, rec->line);
  int rc = prepare_ins(L, names, lens, rec->nfields, 0, where);
  free(names);
  free(lens);
  return rc;
}

/* ---- transactions, rejects, progress ------------------------------------------------ */

static int commit(loader *L) {
  if (L->bulk) {
    rowan_bulk *b = L->bulk;
    L->bulk = NULL;
    int rc = rowan_bulk_commit(b);
    if (rc != ROWAN_OK) {
      setmsg(L, "bulk load commit failed: %s; none of its %" PRId64 " rows was loaded",
             rowan_errmsg(L->db), L->pending);
      L->pending = 0;
      return rc;
    }
    L->res->rows_loaded += L->pending;
    L->res->bulk_rows += L->pending;
    L->pending = 0;
    return ROWAN_OK;
  }
  if (!L->in_txn) return ROWAN_OK;
  L->in_txn = 0;
  int rc = rowan_exec(L->db, "COMMIT", NULL, NULL);
  if (rc != ROWAN_OK) {
    setmsg(L, "commit failed: %s; %" PRId64 " rows committed before it, the last %" PRId64
              " not (on a database on HBase, whose rows are atomic one by one, some of them "
              "may be written)", rowan_errmsg(L->db), L->res->rows_loaded, L->pending);
    rowan_exec(L->db, "ROLLBACK", NULL, NULL);
    L->pending = 0;
    return rc;
  }
  L->res->rows_loaded += L->pending;
  L->pending = 0;
  return ROWAN_OK;
}

static void put_csv_field(FILE *f, const char *s, size_t n) {
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') fputc('"', f);
    fputc(s[i], f);
  }
  fputc('"', f);
}

/* Record a reject; returns non-zero when the import must stop. */
static int reject(loader *L, const cli_record *rec, const char *reason) {
  cli_import_result *res = L->res;
  res->rows_rejected++;
  if (res->first_reject[0] == 0)
    snprintf(res->first_reject, sizeof res->first_reject, "%s:%" PRId64 ": %s", L->file,
             rec->line, reason);
  if (res->rows_rejected <= 3)
    snprintf(L->reasons[res->rows_rejected - 1], sizeof L->reasons[0], "%s:%" PRId64 ": %s",
             L->file, rec->line, reason);
  if (L->rej) {
    put_csv_field(L->rej, L->file, strlen(L->file));
    fprintf(L->rej, ",%" PRId64 ",", rec->line);
    put_csv_field(L->rej, reason, strlen(reason));
    fputc(',', L->rej);
    put_csv_field(L->rej, rec->raw, rec->raw_n);
    fputs("\r\n", L->rej);
    if (ferror(L->rej)) {
      setmsg(L, "%s: cannot write the reject file: %s", L->o->reject_path, strerror(errno));
      L->rc = ROWAN_IOERR;
      return 1;
    }
  }
  /* Without --max-errors: when nearly every record is rejected (more than 90% of the first
     1,000 or more), the columns or the format do not match the file; stop and say why
     rather than reject a whole file record by record. */
  bool mostly = L->o->max_errors == 0 && res->rows_read >= CLI_IMPORT_MOSTLY_AFTER &&
                res->rows_rejected * 10 > res->rows_read * 9;
  bool limit = L->o->max_errors > 0 && res->rows_rejected >= L->o->max_errors;
  if (!mostly && !limit) return 0;
  int rc = commit(L); /* the good rows before the stop are kept */
  if (rc != ROWAN_OK) {
    L->rc = rc;
    return 1;
  }
  res->stopped = 1;
  L->rc = ROWAN_CONSTRAINT;
  if (mostly)
    setmsg(L, "stopped: %" PRId64 " of the first %" PRId64 " records were rejected (do the "
              "columns and the format match the file? --max-errors N sets the limit "
              "instead); the first reasons: %s%s%s%s%s; %" PRId64 " row%s committed",
           res->rows_rejected, res->rows_read, L->reasons[0], L->reasons[1][0] ? "; " : "",
           L->reasons[1], L->reasons[2][0] ? "; " : "", L->reasons[2], res->rows_loaded,
           res->rows_loaded == 1 ? "" : "s");
  else
    setmsg(L, "stopped after %" PRId64 " rejected records (--max-errors), at %s:%" PRId64
              "; %" PRId64 " row%s committed (every good row before that point)",
           res->rows_rejected, L->file, rec->line, res->rows_loaded,
           res->rows_loaded == 1 ? "" : "s");
  return 1;
}

static void progress(loader *L, int final) {
  FILE *f = L->o->progress;
  if (!f) return;
  double t = now_s();
  if (!final && t - L->last_print < 0.5) return;
  L->last_print = t;
  int64_t done = L->pipe ? cli_pipe_read_bytes(L->pipe)
                         : L->done_bytes + (L->src ? cli_src_offset(L->src) : 0);
  double pct = L->total_bytes > 0 ? 100.0 * (double)done / (double)L->total_bytes : 0.0;
  if (pct > 100.0) pct = 100.0;
  double el = t - L->t0;
  int64_t rows = L->res->rows_loaded + L->pending;
  char line[160];
  int n = snprintf(line, sizeof line, "%" PRId64 " rows, %.0f rows/s, %.0f%% of %.1f MB, %" PRId64
                   " rejected", rows, el > 0 ? (double)rows / el : 0.0, pct,
                   (double)L->total_bytes / 1e6, L->res->rows_rejected);
  /* one line, rewritten in place: blank what a longer earlier line left */
  fprintf(f, "\r%s%*s", line, L->last_len > n ? L->last_len - n : 0, "");
  L->last_len = n;
  if (final) fputc('\n', f);
  fflush(f);
  L->printed = 1;
}

/* ---- records --------------------------------------------------------------------- */

static int is_row_error(int rc) {
  return rc == ROWAN_CONSTRAINT || rc == ROWAN_ERROR || rc == ROWAN_TOOBIG ||
         rc == ROWAN_RANGE;
}


/* The automatic bulk path ends: its rows are committed (as the row path would have
** committed them by now) and this record and the rest load row by row. Returns 2 (load this
** record with the UPSERT), or 1 when the commit failed. */
static int to_rows(loader *L, const char *why) {
  int64_t rows = L->pending;
  int rc = commit(L);
  if (rc != ROWAN_OK) {
    L->rc = rc;
    return 1;
  }
  L->mode = M_ROW;
  snprintf(L->res->row_after, sizeof L->res->row_after, "row by row after %" PRId64
           " row%s: %s", rows, rows == 1 ? "" : "s", why);
  return 2;
}

/* One record into the bulk load (begun at the first record, with the columns of the
** mapping). --bulk: every file must map the same columns; a row error rejects the record.
** The automatic path (M_AUTO) keeps the load only when the table held nothing at begin,
** and goes on row by row (to_rows) where UPSERT and the load would differ: a file mapping
** other columns, a key repeated in a table with an index. Returns 0 (done), 1 (stop), or
** 2 (not loaded here: load the record with the UPSERT; L->mode is M_ROW). */
static int bulk_row(loader *L, const cli_record *rec) {
  if (!L->bulk) {
    free(L->bf);
    free(L->bl);
    L->bf = calloc((size_t)L->n_pnames + 1, sizeof *L->bf);
    L->bl = calloc((size_t)L->n_pnames + 1, sizeof *L->bl);
    free(L->bulk_sig);
    L->bulk_sig = strdup(L->sig ? L->sig : "");
    if (!L->bf || !L->bl || !L->bulk_sig) {
      setmsg(L, "out of memory");
      L->rc = ROWAN_NOMEM;
      return 1;
    }
    int rc = rowan_bulk_begin(L->db, L->table, L->n_pnames, (const char *const *)L->pnames,
                              &L->bulk);
    if (L->mode == M_AUTO) {
      /* A load that cannot begin (a transaction is open, an index over rows, ...) or a
         table that holds anything, deleted rows included: row by row. */
      if (rc == ROWAN_OK && rowan_bulk_status(L->bulk, ROWAN_BULK_WAS_EMPTY) != 1) rc = -1;
      if (rc != ROWAN_OK) {
        rowan_bulk_abort(L->bulk);
        L->bulk = NULL;
        L->mode = M_ROW;
        return 2;
      }
      L->mode = M_BULK;
      L->res->bulk_path = 2;
    } else if (rc != ROWAN_OK) {
      setmsg(L, "--bulk: %s", rowan_errmsg(L->db));
      L->rc = rc;
      return 1;
    } else {
      L->res->bulk_path = 1;
    }
  } else if (strcmp(L->bulk_sig, L->sig ? L->sig : "") != 0) {
    if (L->res->bulk_path == 2) return to_rows(L, "a file maps other columns");
    setmsg(L, "%s: --bulk needs the same columns in every file", L->file);
    L->rc = ROWAN_ERROR;
    return 1;
  }
  for (int i = 0; i < rec->nfields; i++) {
    int pi = L->param_of[i];
    if (pi == 0) continue;
    const cli_field *f = &rec->fields[i];
    L->bf[pi - 1] = f->is_null ? NULL : f->p;
    L->bl[pi - 1] = (int)f->n;
  }
  int rc = rowan_bulk_add_text(L->bulk, L->bf, L->bl);
  if (rc == ROWAN_OK) {
    L->pending++;
    return 0;
  }
  if (rc == ROWAN_CONSTRAINT && L->res->bulk_path == 2 &&
      rowan_bulk_status(L->bulk, ROWAN_BULK_REPEAT) == 1)
    return to_rows(L, "a key repeats in a table with an index");
  /* A value that does not convert or fit (ROWAN_ERROR: one whose encoding fails) is the
     row's fault, as in the UPSERT path; the load goes on. */
  if (rc == ROWAN_CONSTRAINT || rc == ROWAN_ERROR) return reject(L, rec, rowan_errmsg(L->db));
  setmsg(L, "%s:%" PRId64 ": %s", L->file, rec->line, rowan_errmsg(L->db));
  L->rc = rc;
  return 1;
}

/* The engine names a bad value by its parameter ("parameter 3: invalid DOUBLE 'abc'"):
** say which column it was for. */
static void row_message(const loader *L, const char *m, char *out, size_t cap) {
  int pi = 0, used = 0;
  if (sscanf(m, "parameter %d: %n", &pi, &used) == 1 && used > 0 && pi >= 1 &&
      pi <= L->n_pnames)
    snprintf(out, cap, "column %s: %s", L->pnames[pi - 1], m + used);
  else
    snprintf(out, cap, "%s", m);
}

static int on_record(void *ctx, const cli_record *rec) {
  loader *L = ctx;
  if (L->want_header) {
    L->want_header = 0;
    if (rec->error) {
      setmsg(L, "%s:%" PRId64 ": cannot read the header line: %s", L->file, rec->line,
             rec->error);
      L->rc = ROWAN_ERROR;
      return 1;
    }
    if (!L->o->columns) {
      /* The bulk path: one load across files (bulk_row checks that the mapping is the same) */
      int rc = L->mode == M_ROW ? commit(L) : ROWAN_OK;
      if (rc == ROWAN_OK) rc = prepare_from_header(L, rec);
      if (rc != ROWAN_OK) {
        L->rc = rc;
        return 1;
      }
    }
    return 0;
  }
  L->res->rows_read++;
  if ((L->res->rows_read & 1023) == 0) progress(L, 0);
  if (rec->error) return reject(L, rec, rec->error);
  if (rec->nfields != L->nfields) {
    char why[96];
    snprintf(why, sizeof why, "wrong field count: expected %d fields, found %d", L->nfields,
             rec->nfields);
    return reject(L, rec, why);
  }
  if (L->mode != M_ROW) {
    int r = bulk_row(L, rec);
    if (r != 2) return r;
  }
  rowan_stmt *st = L->ins;
  for (int i = 0; i < rec->nfields; i++) {
    int pi = L->param_of[i];
    if (pi == 0) continue;
    const cli_field *f = &rec->fields[i];
    int rc, pt = L->ptype ? L->ptype[pi - 1] : PT_TEXT;
    double d;
    int64_t v;
    if (f->is_null) rc = rowan_bind_null(st, pi);
    else if (pt == PT_DOUBLE && cat_text_fast_double(f->p, f->n, &d))
      rc = rowan_bind_double(st, pi, d);
    else if (pt == PT_INT && cat_text_fast_int(f->p, f->n, &v)) rc = rowan_bind_int64(st, pi, v);
    else rc = rowan_bind_text(st, pi, f->p, (int)f->n);
    if (rc != ROWAN_OK) {
      rowan_reset(st);
      if (!is_row_error(rc)) {
        setmsg(L, "%s:%" PRId64 ": %s", L->file, rec->line, rowan_errmsg(L->db));
        L->rc = rc;
        return 1;
      }
      return reject(L, rec, rowan_errmsg(L->db));
    }
  }
  if (!L->in_txn) {
    int rc = rowan_exec(L->db, "BEGIN", NULL, NULL);
    if (rc != ROWAN_OK) {
      setmsg(L, "BEGIN failed: %s", rowan_errmsg(L->db));
      L->rc = rc;
      return 1;
    }
    L->in_txn = 1;
    L->row_used = 1;
  }
  int rc = rowan_step(st);
  if (rc == ROWAN_DONE) {
    rowan_reset(st);
    L->pending++;
    if (L->pending >= (L->o->batch_rows > 0 ? L->o->batch_rows : CLI_IMPORT_BATCH_ROWS)) {
      rc = commit(L);
      if (rc != ROWAN_OK) {
        L->rc = rc;
        return 1;
      }
    }
    return 0;
  }
  char msg[600];
  row_message(L, rowan_errmsg(L->db), msg, sizeof msg);
  rowan_reset(st);
  if (is_row_error(rc)) return reject(L, rec, msg);
  setmsg(L, "%s:%" PRId64 ": %s", L->file, rec->line, msg);
  L->rc = rc == ROWAN_ROW ? ROWAN_MISUSE : rc;
  return 1;
}

/* ---- files ------------------------------------------------------------------------ */

static int load_file(loader *L, const char *path, char *buf) {
  char why[600];
  L->file = path;
  L->want_header = L->o->header != 0;
  if (cli_src_open(path, &L->src, why, sizeof why) != 0) {
    setmsg(L, "%s", why);
    return ROWAN_IOERR;
  }
  cli_rec rec;
  int delim = L->o->delimiter ? L->o->delimiter : (L->o->format == CLI_IMPORT_TSV ? '\t' : ',');
  if (cli_rec_init(&rec, L->o->format == CLI_IMPORT_TSV, (unsigned char)delim,
                   L->o->null_text, on_record, L) != 0) {
    cli_src_close(L->src);
    L->src = NULL;
    setmsg(L, "out of memory");
    return ROWAN_NOMEM;
  }
  int rc = ROWAN_OK;
  for (;;) {
    long n = cli_src_read(L->src, buf, READ_CHUNK, why, sizeof why);
    if (n < 0) {
      setmsg(L, "%s", why);
      rc = ROWAN_IOERR;
      break;
    }
    int r = n == 0 ? cli_rec_finish(&rec) : cli_rec_feed(&rec, buf, (size_t)n);
    if (r != 0) {
      rc = L->rc != ROWAN_OK ? L->rc : ROWAN_NOMEM;
      if (rc == ROWAN_NOMEM) setmsg(L, "out of memory");
      break;
    }
    if (n == 0) break;
  }
  if (rc == ROWAN_OK && L->want_header) {
    /* An empty file: nothing to map, nothing to load. */
    L->want_header = 0;
  }
  L->done_bytes += cli_src_size(L->src);
  cli_rec_free(&rec);
  cli_src_close(L->src);
  L->src = NULL;
  if (rc == ROWAN_OK) L->res->files_done++;
  return rc;
}

/* The files through the reader thread (cli/import_pipe.h), so decompressing and splitting
** records overlap with loading them; the same per-record path as load_file (which reads
** the files on the caller's thread when no thread can be started).
** Returns ROWAN_OK, or the error (message set); -1 when the thread could not be started
** (the caller then reads the files itself). */
static int load_piped(loader *L, const char *const *files, int n_files) {
  int delim = L->o->delimiter ? L->o->delimiter : (L->o->format == CLI_IMPORT_TSV ? '\t' : ',');
  cli_pipe *p;
  if (cli_pipe_start(files, n_files, L->o->format == CLI_IMPORT_TSV, (unsigned char)delim,
                     L->o->null_text, &p) != 0)
    return -1;
  L->pipe = p;
  int rc = ROWAN_OK;
  cli_pipe_item it;
  while (rc == ROWAN_OK && cli_pipe_next(p, &it)) {
    switch (it.kind) {
      case CLI_PIPE_FILE_START:
        L->file = files[it.file];
        L->want_header = L->o->header != 0;
        break;
      case CLI_PIPE_RECORD:
        if (on_record(L, &it.rec) != 0) {
          rc = L->rc != ROWAN_OK ? L->rc : ROWAN_NOMEM;
          if (rc == ROWAN_NOMEM && L->rc == ROWAN_OK) setmsg(L, "out of memory");
        }
        break;
      case CLI_PIPE_FILE_END:
        L->want_header = 0;
        L->done_bytes += it.size;
        L->res->files_done++;
        break;
      default: /* CLI_PIPE_ERROR */
        setmsg(L, "%s", it.msg);
        rc = it.code == -2 ? ROWAN_NOMEM : ROWAN_IOERR;
        break;
    }
  }
  L->pipe = NULL;
  cli_pipe_stop(p);
  return rc;
}

int cli_import(rowan_db *db, const char *const *files, int n_files, const char *table,
               const cli_import_options *opts, cli_import_result *res, char *err,
               size_t cap) {
  cli_import_options defaults;
  if (!opts) {
    cli_import_options_init(&defaults);
    opts = &defaults;
  }
  char dummy[1];
  if (!err || cap == 0) err = dummy, cap = sizeof dummy;
  err[0] = 0;
  if (!res) return ROWAN_MISUSE;
  memset(res, 0, sizeof *res);
  if (!db || !files || n_files < 1 || !table || !*table) {
    snprintf(err, cap, "import needs a database, at least one file and a table");
    return ROWAN_MISUSE;
  }
  if (opts->format != CLI_IMPORT_CSV && opts->format != CLI_IMPORT_TSV) {
    snprintf(err, cap, "unknown import format %d", opts->format);
    return ROWAN_ERROR;
  }
  int d = opts->delimiter;
  if (d < 0 || d > 255 || d == '\n' || d == '\r' || (d == '"' && opts->format == CLI_IMPORT_CSV)) {
    snprintf(err, cap, "bad delimiter (a single byte other than a line end%s)",
             opts->format == CLI_IMPORT_CSV ? " or a quote" : "");
    return ROWAN_ERROR;
  }
  /* The table first: one that does not exist is named alone, not through the UPSERT the
     import builds for it (nor with a position in that statement). */
  {
    size_t ql = strlen(table) + 32;
    char *probe = malloc(ql);
    rowan_stmt *pst = NULL;
    if (!probe) {
      snprintf(err, cap, "out of memory");
      return ROWAN_NOMEM;
    }
    snprintf(probe, ql, "SELECT * FROM %s", table);
    int prc = rowan_prepare(db, probe, -1, &pst, NULL);
    free(probe);
    rowan_finalize(pst);
    if (prc != ROWAN_OK) {
      const char *m = rowan_errmsg(db);
      const char *at = strstr(m, " at line ");
      snprintf(err, cap, "%.*s", at ? (int)(at - m) : (int)strlen(m), m);
      return prc;
    }
  }
  loader L;
  memset(&L, 0, sizeof L);
  L.db = db;
  L.o = opts;
  L.res = res;
  L.table = table;
  L.err = err;
  L.cap = cap;
  L.t0 = L.last_print = now_s();
  L.mode = opts->bulk ? M_BULK : opts->no_bulk ? M_ROW : M_AUTO;
  for (int i = 0; i < n_files; i++) {
    struct stat st;
    if (stat(files[i], &st) != 0) {
      snprintf(err, cap, "%s: %s", files[i], strerror(errno));
      return ROWAN_IOERR;
    }
    L.total_bytes += (int64_t)st.st_size;
  }
  int rc = ROWAN_OK;
  if (opts->columns) rc = prepare_from_list(&L, opts->columns);
  else if (!opts->header) rc = prepare_ins(&L, NULL, NULL, -1, 0, table);
  char *buf = NULL;
  if (rc == ROWAN_OK && opts->reject_path) {
    L.rej = fopen(opts->reject_path, "w");
    if (!L.rej) {
      snprintf(err, cap, "%s: cannot create the reject file: %s", opts->reject_path,
               strerror(errno));
      rc = ROWAN_IOERR;
    } else {
      fputs("file,line,reason,record\r\n", L.rej);
    }
  }
  if (rc == ROWAN_OK && !(buf = malloc(READ_CHUNK))) {
    snprintf(err, cap, "out of memory");
    rc = ROWAN_NOMEM;
  }
  int piped = rc == ROWAN_OK ? load_piped(&L, files, n_files) : -1;
  if (piped != -1) rc = piped;
  for (int i = 0; piped == -1 && rc == ROWAN_OK && i < n_files; i++)
    rc = load_file(&L, files[i], buf);
  if (rc == ROWAN_OK) rc = commit(&L);
  if (L.row_used && !opts->no_flush && !L.in_txn && res->rows_loaded > 0 &&
      (rc == ROWAN_OK || res->stopped)) {
    /* The committed rows go to store files now, as sqlite3's .import leaves them in the
       database file: the store right after the import is its compressed size, not the WAL.
       A failed flush loses nothing (the rows stay in the WAL), but is reported. */
    int frc = rowan_flush(db);
    if (frc != ROWAN_OK && rc == ROWAN_OK) {
      snprintf(err, cap, "the %" PRId64 " rows loaded are committed, but the flush at the end "
               "failed: %s", res->rows_loaded, rowan_errmsg(db));
      rc = frc;
    }
  }
  if (L.bulk) {
    rowan_bulk_abort(L.bulk);
    L.bulk = NULL;
    size_t used = strlen(err);
    snprintf(err + used, cap - used, "; %" PRId64 " rows committed before it, the %" PRId64
             " of the bulk load not loaded", res->rows_loaded, L.pending);
  }
  free(L.bf);
  free(L.bl);
  free(L.bulk_sig);
  if (L.in_txn) {
    /* A fatal error with rows pending: they were not committed; say so. */
    rowan_exec(db, "ROLLBACK", NULL, NULL);
    size_t used = strlen(err);
    snprintf(err + used, cap - used, "; %" PRId64 " rows committed before it, the last %"
             PRId64 " rolled back", res->rows_loaded, L.pending);
    L.in_txn = 0;
  }
  if (L.rej && fclose(L.rej) != 0 && rc == ROWAN_OK) {
    snprintf(err, cap, "%s: cannot write the reject file: %s", opts->reject_path,
             strerror(errno));
    rc = ROWAN_IOERR;
  }
  if (L.printed || (opts->progress && rc == ROWAN_OK && res->rows_read > 0 &&
                    now_s() - L.t0 >= 0.5))
    progress(&L, 1);
  res->bytes_read = L.done_bytes;
  res->seconds = now_s() - L.t0;
  rowan_finalize(L.ins);
  free(L.param_of);
  free(L.sig);
  free_pnames(L.pnames, L.n_pnames);
  free(L.ptype);
  free(buf);
  if (rc == ROWAN_OK) err[0] = 0;
  return rc;
}

char *cli_import_summary(const cli_import_result *res, const cli_import_options *opts,
                         char *buf, size_t cap) {
  double rate = res->seconds > 0 ? (double)res->rows_loaded / res->seconds : 0.0;
  /* files read: those finished, and the one a --max-errors stop left in the middle */
  int files = res->files_done + (res->stopped ? 1 : 0);
  int n = snprintf(buf, cap, "%" PRId64 " row%s loaded, %" PRId64 " rejected from %d file%s "
                   "in %.2f s (%.0f rows/s)", res->rows_loaded, res->rows_loaded == 1 ? "" : "s",
                   res->rows_rejected, files, files == 1 ? "" : "s",
                   res->seconds, rate);
  if (n < 0 || (size_t)n >= cap) return buf;
  if (res->bulk_path == 2) {
    int k = snprintf(buf + n, cap - (size_t)n, " (bulk path: the table was empty%s%s)",
                     res->row_after[0] ? "; " : "", res->row_after);
    if (k < 0 || (size_t)k >= cap - (size_t)n) return buf;
    n += k;
  }
  if (res->rows_rejected > 0) {
    if (opts && opts->reject_path)
      snprintf(buf + n, cap - (size_t)n, "; rejects in %s (first: %s)", opts->reject_path,
               res->first_reject);
    else
      snprintf(buf + n, cap - (size_t)n, "; first reject: %s", res->first_reject);
  }
  return buf;
}
