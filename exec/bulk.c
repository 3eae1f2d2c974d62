/*
** exec/bulk.c: bulk load of text rows (exec/bulk.h). The hot path goes straight from field
** text to kv/bulk's buffers, with no kv_batch round trip and no allocation per row:
**   parse: each field once, by its column's type: the fast parsers of catalog/text_fast.h
**     with the column's limits checked inline (integer range, FLOAT range and rounding,
**     TIMESTAMP range, UTF-8 and length of strings, CHAR trimmed); anything the fast path
**     does not take goes to cat_text_parse, which gives the canonical value or the error
**     message, so both paths accept and produce exactly the same values;
**   key: the checked PK values through cat_key_encode;
**   cells: per family, one kv_bulk_add_row with the family's cells in qualifier order (the
**     order is fixed at begin), values encoded with cat_vc_encode into per-field slots of
**     one row buffer; the marker cell in the key family. Cells equal those exec_row_put
**     writes for an UPSERT (KV_DELETE_COLUMN for a NULL field), at the load's timestamp.
** NULLs: a NULL field is a KV_DELETE_COLUMN cell, except where its family held no cell at
** begin (kv_bulk_fresh; the commit fails if one is written before it) and the row's key
** has not been in the load before (key_check, as for indexes): a tombstone there would
** mask nothing, and would send the columnar aggregate's blocks the row way. A row whose key
** repeats an earlier one keeps its tombstones (they mask the earlier row's values).
** Indexes: with an index the table must be empty at begin and at commit (checked with a
** one-row scan of its key family); each row's index rows go into the same kv load: the
** key from exec_index_row_key, the marker, and INCLUDE cells copied from the row's own
** encoded cells (exec_index_put into a per-row batch when an INCLUDE column is a key
** column; an index whose keys are plain columns of simple types gets its key encoded here,
** its values as parsed, then the data row key); only ACTIVE indexes are written; a data key
** seen twice in one
** such load is refused (its first index row could not be taken back): keys that come in
** runs with disjoint ranges are known new without a lookup, others go through a set of
** key hashes (key_check). BUILDING indexes
** are refused; DISABLED ones are skipped.
** Not here: the sort, the store files and the MANIFEST (kv/bulk/bulk.c).
*/
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "catalog/salt.h"
#include "catalog/text_fast.h"
#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "exec/bulk.h"
#include "exec/bulk_field.h"
#include "exec/engine_int.h"
#include "exec/index.h"
#include "exec/row_ts.h"
#include "exec/rowcodec.h"
#include "kv/bulk/bulk.h"
#include "kv/util/cell.h"

#include <xxhash.h>

#define SLOT CAT_FIXED_ENC_MAX /* bytes of one encoded fixed-size value */
#define KEY_MEM_MIN ((size_t)256 << 10) /* exec_bulk.key_mem at least */

/* One mapped field, in the load's cell order (family, then qualifier). */
typedef struct bfield {
  int field;              /* position in the caller's fields[] */
  int col;                /* column index in the table */
  uint32_t fam;           /* kv family id of its cell (non-key columns) */
  uint8_t q[2];           /* its qualifier */
  uint8_t qlen;           /* qualifier length */
  uint8_t enc;            /* how its cell value is encoded: ENC_* */
  uint8_t width;          /* ENC_INT: bytes of the value */
  bool fresh;             /* its family held no cell at begin: a NULL of a row the load
                             adds once needs no tombstone (kv_bulk_fresh) */
} bfield;

/* Cell value encodings done inline (the same bytes cat_vc_encode gives). */
enum { ENC_GENERAL, ENC_DOUBLE, ENC_FLOAT, ENC_INT, ENC_BYTES };

/* One INCLUDE cell of an index row: which cell of the data row it copies. */
typedef struct binc {
  uint8_t q[2];           /* qualifier (the data column's) */
  uint8_t qlen;           /* its length */
  int cell;               /* index into exec_bulk.cells of the row, -1 = not loaded (NULL) */
} binc;

/* How one maintained index's rows are added. */
typedef struct bix {
  bool direct;            /* INCLUDE columns are all non-key: cells copied from the data
                             row's (else exec_index_put through exec_bulk.ixb) */
  bool fast;              /* direct, and every key a plain column of a type whose parsed
                             values need no fitting: the key is encoded here (fast_key) */
  binc *inc;              /* n_include INCLUDE cells in qualifier order (direct only) */
  int n_inc;              /* their number */
} bix;

struct exec_bulk {
  exec_session *s;        /* the session */
  const cat_table *t;     /* the table */
  exec_rowcodec rc;       /* its row codec (key family id) */
  kv_bulk *kb;            /* the kv load */
  int n_cols;             /* fields per row */
  bfield *order;          /* n_cols fields: key columns first, then non-key columns sorted
                             by (family id, qualifier) */
  int n_key_fields;       /* leading entries of order that are PK columns */
  cat_value *vals;        /* one slot per table column (NULL when not given) */
  cat_value *pk_vals;     /* n_pk checked key values in PK order */
  uint8_t *key;           /* the row key (CAT_KEY_MAX bytes) */
  uint8_t *enc;           /* n_cols * SLOT bytes: encoded values of the current row */
  uint8_t *castbuf;       /* n_cols * 64 bytes: text a typed value's cast made (add_values) */
  kv_bulk_cell *cells;    /* n_cols cells of the current row */
  kv_bulk_cell *kept;     /* n_cols: a family's cells of the row less its NULLs' tombstones */
  bool any_fresh;         /* some field's family is fresh: keys are checked (key_check) */
  uint64_t put_all;       /* families a row with no NULL puts a cell in (the row cover) */
  bool put_all_known;     /* put_all computed */
  exec_index_codec *ic;   /* n_ix codecs of the maintained (ACTIVE) indexes */
  bix *ix;                /* n_ix: how each index's rows are added */
  int n_ix;               /* their number */
  kv_batch *ixb;          /* the current row's index cells */
  uint64_t *seen;         /* with indexes: open-addressing set of data key hashes (0 = empty);
                             it holds every key only in set_mode */
  size_t seen_cap, seen_n;/* its slots (power of two) / used */
  bool set_mode;          /* keys are checked in the seen set (else by runs, below) */
  uint64_t *hist;         /* !set_mode: hash of every key so far, in order (with approx:
                             of the keys since it was last folded into approx) */
  size_t n_hist, cap_hist;/* used / allocated */
  size_t key_mem;         /* bytes of hashes hist or seen may hold with no index before they
                             go into approx (run_bytes / 32, at least 256 KiB) */
  uint8_t *approx;        /* no index, past key_mem: a bit per hash (h & approx_mask) of the
                             keys so far: a key whose bit is set is taken as seen (a repeat
                             always is; a new key sometimes, which only keeps its NULLs'
                             tombstones), so the memory stays bounded */
  uint64_t approx_mask;   /* its bits less 1 (a power of two: 16 bits per key_mem byte) */
  uint8_t *run_lo, *run_hi; /* !set_mode: the current run's lowest and highest key */
  size_t lo_len, hi_len;  /* their lengths */
  int run_dir;            /* the current run: 0 one key, 1 ascending, -1 descending */
  bool run_any;           /* a run is current */
  long safe_up, safe_down;/* closed run whose lowest key is the nearest above the current
                             run (whose highest key the nearest below): until a key of
                             the run reaches it, no closed range can hold the key; -1 none */
  uint8_t *rbytes;        /* the closed runs' lowest and highest keys, one after another */
  size_t rb_len, rb_cap;  /* used / allocated */
  uint32_t (*ranges)[4];  /* per closed run: lo offset, lo length, hi offset, hi length */
  size_t n_ranges, cap_ranges; /* used / allocated */
  int64_t rows;           /* rows added */
  uint64_t schema_gen;    /* the session's schema_gen at begin: a DDL since may have freed t */
  bool broken;            /* a fatal error happened: only free is allowed */
  bool committed;         /* committed */
  bool was_empty;         /* at begin, every family of the table and of its ACTIVE indexes
                             held no cell (exec_bulk_was_empty) */
  bool last_repeat;       /* the last add was refused only for repeating a key (indexes) */
};

static int kv_fail(exec_error *err, int rc, const char *what) {
  return exec_error_set(err, exec_status_of_kv(rc), "bulk load: %s: %s", what, kv_errmsg());
}

/* Column by exact name, then by its upper-case form. */
static int find_col(const cat_table *t, const char *name) {
  size_t len = strlen(name);
  if (len >= 2 && name[0] == '"' && name[len - 1] == '"') { /* "Quoted": exact, "" = " */
    char ex[256];
    size_t k = 0;
    for (size_t j = 1; j + 1 < len && k + 1 < sizeof ex; j++) {
      ex[k++] = name[j];
      if (name[j] == '"' && name[j + 1] == '"') j++;
    }
    ex[k] = 0;
    return cat_find_column(t, ex);
  }
  int i = cat_find_column(t, name);
  if (i >= 0) return i;
  char up[256];
  size_t n = strlen(name);
  if (n >= sizeof up) return -1;
  for (size_t k = 0; k <= n; k++) up[k] = (char)toupper((unsigned char)name[k]);
  return cat_find_column(t, up);
}

/* Cell order of two mapped fields: key columns first (in field order), then family id,
** then qualifier bytes. */
static int field_cmp(const bfield *a, const bfield *b, const cat_table *t) {
  bool ka = t->columns[a->col].pk_pos >= 0, kb = t->columns[b->col].pk_pos >= 0;
  if (ka != kb) return ka ? -1 : 1;
  if (ka) return a->field - b->field;
  if (a->fam != b->fam) return a->fam < b->fam ? -1 : 1;
  size_t m = a->qlen < b->qlen ? a->qlen : b->qlen;
  int c = memcmp(a->q, b->q, m);
  return c ? c : (int)a->qlen - (int)b->qlen;
}

/* Does the table have any row? *any gets the answer. */
static int table_has_rows(exec_bulk *b, bool *any, exec_error *err) {
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &b->rc.key_family_id;
  so.n_families = 1;
  so.limit = 1;
  kv_backend_scan *sc = NULL;
  int k = kv_be_scan_open(&b->s->be, &so, NULL, &sc);
  if (k != KV_OK) return kv_fail(err, k, "checking that the table is empty");
  kv_row row;
  k = kv_be_scan_next(&b->s->be, sc, &row);
  kv_be_scan_close(&b->s->be, sc);
  if (k != KV_OK && k != KV_ERR_NOTFOUND)
    return kv_fail(err, k, "checking that the table is empty");
  *any = k == KV_OK;
  return EXEC_OK;
}

/* Qualifier order of two INCLUDE cells (a prefix sorts first). */
static int inc_cmp(const binc *a, const binc *b) {
  int c = memcmp(a->q, b->q, a->qlen < b->qlen ? a->qlen : b->qlen);
  return c ? c : (int)a->qlen - (int)b->qlen;
}

/* Types whose values, as parse_field gives them, exec_index_fit leaves unchanged (it only
** checks what parse_field checked already; FLOAT and DOUBLE: NaN made the one NaN). */
static bool fast_key_type(int id) {
  switch (id) {
    case CAT_T_BOOLEAN: case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER:
    case CAT_T_BIGINT: case CAT_T_FLOAT: case CAT_T_DOUBLE: case CAT_T_DATE: case CAT_T_TIME:
    case CAT_T_TIMESTAMP: case CAT_T_VARCHAR: case CAT_T_CHAR:
      return true;
    default:
      return false;
  }
}

static int open_indexes(exec_bulk *b, exec_error *err) {
  const cat_table *t = b->t;
  int n = 0;
  for (int i = 0; i < t->n_indexes; i++) {
    if (t->indexes[i].state == CAT_INDEX_BUILDING)
      return exec_error_set(err, EXEC_ERROR, "bulk load: index %s of %s is being built; load after "
                            "CREATE INDEX has finished", t->indexes[i].name, t->name);
    if (t->indexes[i].state == CAT_INDEX_ACTIVE) n++;
  }
  if (n == 0) return EXEC_OK;
  bool any = false;
  int rc = table_has_rows(b, &any, err);
  if (rc) return rc;
  if (any)
    return exec_error_set(err, EXEC_ERROR,
                          "bulk load: table %s has index %s and is not empty; a bulk load "
                          "maintains indexes only into an empty table: load without --bulk, or "
                          "drop the index, load, then CREATE INDEX",
                          t->name, t->indexes[0].name);
  b->ic = calloc((size_t)n, sizeof *b->ic);
  b->ixb = kv_batch_new();
  b->seen_cap = 1u << 16;
  b->seen = calloc(b->seen_cap, sizeof *b->seen);
  b->run_lo = malloc(CAT_KEY_MAX);
  b->run_hi = malloc(CAT_KEY_MAX);
  if (!b->ic || !b->ixb || !b->seen || !b->run_lo || !b->run_hi)
    return exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
  b->ix = calloc((size_t)n, sizeof *b->ix);
  if (!b->ix) return exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
  for (int i = 0; i < t->n_indexes; i++) {
    if (t->indexes[i].state != CAT_INDEX_ACTIVE) continue;
    exec_index_codec *ic = &b->ic[b->n_ix];
    bix *x = &b->ix[b->n_ix];
    rc = exec_index_codec_init(ic, b->s->cat, t, &t->indexes[i], err);
    b->n_ix++; /* freed with the load, also after a failure */
    if (rc) return rc;
    x->direct = true;
    for (int k = 0; k < ic->n_include; k++)
      if (t->columns[ic->include_col[k]].pk_pos >= 0) x->direct = false;
    x->fast = x->direct;
    for (int k = 0; k < ic->n_keys; k++)
      x->fast = x->fast && ic->key_col[k] >= 0 &&
                t->columns[ic->key_col[k]].type.id == ic->key_cols[k].type.id &&
                fast_key_type(ic->key_cols[k].type.id);
    if (!x->direct || ic->n_include == 0) continue;
    x->inc = calloc((size_t)ic->n_include, sizeof *x->inc);
    if (!x->inc) return exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
    for (int k = 0; k < ic->n_include; k++) {
      int col = ic->include_col[k];
      binc e;
      e.qlen = (uint8_t)cat_column_qualifier(t->columns[col].id, e.q);
      e.cell = -1;
      for (int j = b->n_key_fields; j < b->n_cols; j++)
        if (b->order[j].col == col) e.cell = j - b->n_key_fields;
      int j = x->n_inc; /* insertion by qualifier */
      while (j > 0 && inc_cmp(&x->inc[j - 1], &e) > 0) {
        x->inc[j] = x->inc[j - 1];
        j--;
      }
      x->inc[j] = e;
      x->n_inc++;
    }
  }
  return EXEC_OK;
}

/* Note which nullable fields' families hold no cell (kv_bulk_fresh): their NULLs need no
** tombstone in a row whose key the load has not had before, so keys are checked then. */
static int open_fresh(exec_bulk *b, exec_error *err) {
  for (int i = b->n_key_fields; i < b->n_cols; i++) {
    bfield *f = &b->order[i];
    if (!b->t->columns[f->col].nullable) continue;
    bool fresh = false;
    int j = b->n_key_fields; /* a family asked once */
    while (j < i && b->order[j].fam != f->fam) j++;
    if (j < i) {
      fresh = b->order[j].fresh;
    } else {
      int krc = kv_bulk_fresh(b->kb, f->fam, &fresh);
      if (krc) return kv_fail(err, krc, "begin");
    }
    f->fresh = fresh;
    b->any_fresh = b->any_fresh || fresh;
  }
  if (b->any_fresh && !b->seen) { /* key_check's state, as open_indexes makes it */
    b->seen_cap = 1u << 16;
    b->seen = calloc(b->seen_cap, sizeof *b->seen);
    b->run_lo = malloc(CAT_KEY_MAX);
    b->run_hi = malloc(CAT_KEY_MAX);
    if (!b->seen || !b->run_lo || !b->run_hi)
      return exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
  }
  return EXEC_OK;
}

/* b->was_empty: does every family of the table (the key family too) and of each maintained
** index hold no cell? Asked without kv_bulk_fresh's promise: nothing is checked at commit. */
static int open_empty(exec_bulk *b, exec_error *err) {
  const cat_table *t = b->t;
  bool e = true;
  int krc = kv_bulk_empty(b->kb, b->rc.key_family_id, &e);
  for (int i = 0; krc == KV_OK && e && i < t->n_families; i++)
    krc = kv_bulk_empty(b->kb, t->families[i].kv_id, &e);
  for (int i = 0; krc == KV_OK && e && i < b->n_ix; i++) {
    krc = kv_bulk_empty(b->kb, b->ic[i].key_family_id, &e);
    if (krc == KV_OK && e) krc = kv_bulk_empty(b->kb, b->ic[i].data_family_id, &e);
  }
  if (krc) return kv_fail(err, krc, "begin");
  b->was_empty = e;
  return EXEC_OK;
}

int exec_bulk_begin(exec_session *s, const char *table, int n_cols, const char *const *cols,
                    size_t run_bytes, exec_bulk **out, exec_error *err) {
  if (out) *out = NULL;
  if (!s || !table || !out || n_cols < 1 || !cols)
    return exec_error_set(err, EXEC_MISUSE, "bulk load: NULL argument or no column");
  if (s->txn) return exec_error_set(err, EXEC_MISUSE, "bulk load: not inside a transaction");
  const cat_table *t = cat_find_table_folded(s->cat, table);
  if (!t) return exec_error_set(err, EXEC_ERROR, "bulk load: no table %s", table);
  exec_bulk *b = calloc(1, sizeof *b);
  if (!b) return exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
  b->s = s;
  b->t = t;
  b->schema_gen = s->schema_gen;
  b->n_cols = n_cols;
  b->order = calloc((size_t)n_cols, sizeof *b->order);
  b->vals = calloc((size_t)t->n_columns, sizeof *b->vals);
  b->pk_vals = calloc((size_t)t->n_pk, sizeof *b->pk_vals);
  b->key = malloc(CAT_KEY_MAX);
  b->enc = malloc((size_t)n_cols * SLOT);
  b->castbuf = malloc((size_t)n_cols * 64);
  b->cells = calloc((size_t)n_cols + 1, sizeof *b->cells);
  b->kept = calloc((size_t)n_cols + 1, sizeof *b->kept);
  bool *set = calloc((size_t)t->n_columns, sizeof *set);
  int rc = EXEC_OK;
  if (!b->order || !b->vals || !b->pk_vals || !b->key || !b->enc || !b->castbuf || !b->cells ||
      !set)
    rc = exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
  for (int i = 0; rc == EXEC_OK && i < n_cols; i++) {
    int c = cols[i] ? find_col(t, cols[i]) : -1;
    if (c < 0) {
      rc = exec_error_set(err, EXEC_ERROR, "bulk load: table %s has no column %s", t->name,
                          cols[i] ? cols[i] : "(NULL)");
    } else if (set[c]) {
      rc = exec_error_set(err, EXEC_ERROR, "bulk load: column %s given twice", t->columns[c].name);
    } else {
      const cat_column *col = &t->columns[c];
      set[c] = true;
      bfield *f = &b->order[i];
      f->field = i;
      f->col = c;
      if (col->pk_pos < 0) {
        f->fam = t->families[col->family].kv_id;
        f->qlen = (uint8_t)cat_column_qualifier(col->id, f->q);
        int id = col->type.id;
        f->enc = id == CAT_T_DOUBLE ? ENC_DOUBLE : id == CAT_T_FLOAT ? ENC_FLOAT
                 : cat_type_is_string(id) || id == CAT_T_VARBINARY ? ENC_BYTES
                                                                    : ENC_GENERAL;
        if (id == CAT_T_TINYINT || id == CAT_T_SMALLINT || id == CAT_T_INTEGER ||
            id == CAT_T_BIGINT || id == CAT_T_DATE || id == CAT_T_TIME ||
            id == CAT_T_TIMESTAMP) {
          f->enc = ENC_INT;
          f->width = (uint8_t)cat_type_fixed_width(id);
        }
      }
    }
  }
  for (int k = 0; rc == EXEC_OK && k < t->n_pk; k++)
    if (!set[t->pk[k]])
      rc = exec_error_set(err, EXEC_ERROR,
                          "bulk load: primary key column %s is not among the columns",
                          t->columns[t->pk[k]].name);
  free(set);
  if (rc == EXEC_OK) {
    /* insertion sort: a handful of columns */
    for (int i = 1; i < n_cols; i++) {
      bfield x = b->order[i];
      int j = i;
      while (j > 0 && field_cmp(&x, &b->order[j - 1], t) < 0) {
        b->order[j] = b->order[j - 1];
        j--;
      }
      b->order[j] = x;
    }
    while (b->n_key_fields < n_cols && t->columns[b->order[b->n_key_fields].col].pk_pos >= 0)
      b->n_key_fields++;
    rc = exec_rowcodec_init(&b->rc, t, err);
  }
  if (rc == EXEC_OK) {
    for (int i = 0; i < t->n_columns; i++) b->vals[i] = cat_v_null(t->columns[i].type);
    rc = open_indexes(b, err);
  }
  if (rc == EXEC_OK) {
    kv_bulk_options bo = {.run_bytes = run_bytes};
    size_t rb = run_bytes ? run_bytes : KV_BULK_DEFAULT_RUN_BYTES;
    b->key_mem = rb / 32 > KEY_MEM_MIN ? rb / 32 : KEY_MEM_MIN;
    int krc = kv_bulk_begin(s->db, &bo, &b->kb);
    if (krc) rc = kv_fail(err, krc, "begin");
  }
  if (rc == EXEC_OK && !b->kept) rc = exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
  if (rc == EXEC_OK) rc = open_fresh(b, err);
  if (rc == EXEC_OK) rc = open_empty(b, err);
  if (rc) {
    exec_bulk_free(b);
    return rc;
  }
  *out = b;
  return EXEC_OK;
}

/* A DDL statement ran since begin (on this connection: the only one): the table, its
** columns and indexes may be gone or changed, so the load is refused (it can only be freed). */
static int schema_changed(exec_bulk *b, exec_error *err) {
  if (b->s->schema_gen == b->schema_gen) return EXEC_OK;
  b->broken = true;
  return exec_error_set(err, EXEC_ERROR, "bulk load: the schema changed during the load (a "
                        "CREATE, DROP or ALTER ran): nothing of it is loaded");
}

/* XXH3 of the data key, never 0. */
static uint64_t key_hash(const uint8_t *p, size_t n) {
  uint64_t h = XXH3_64bits(p, n);
  return h ? h : 1;
}

/* Record the key's hash; false if it was there (a repeated key, or a 2^-64 collision). */
static int seen_add(exec_bulk *b, uint64_t h, bool *dup) {
  if ((b->seen_n + 1) * 2 > b->seen_cap) {
    size_t nc = b->seen_cap * 2;
    uint64_t *ns = calloc(nc, sizeof *ns);
    if (!ns) return EXEC_NOMEM;
    for (size_t i = 0; i < b->seen_cap; i++) {
      if (!b->seen[i]) continue;
      size_t j = (size_t)b->seen[i] & (nc - 1);
      while (ns[j]) j = (j + 1) & (nc - 1);
      ns[j] = b->seen[i];
    }
    free(b->seen);
    b->seen = ns;
    b->seen_cap = nc;
  }
  size_t j = (size_t)h & (b->seen_cap - 1);
  while (b->seen[j]) {
    if (b->seen[j] == h) {
      *dup = true;
      return EXEC_OK;
    }
    j = (j + 1) & (b->seen_cap - 1);
  }
  b->seen[j] = h;
  b->seen_n++;
  *dup = false;
  return EXEC_OK;
}

#define MAX_RUNS 65536  /* closed runs kept at most before the seen set takes over */
#define FEW_RUNS 64     /* closed runs kept whatever the rows... */
#define RUN_KEYS 256    /* ...and past that, only while runs average this many keys */

/* Test and set the key's bit in b->approx: *dup gets whether it was set. */
static void approx_tas(exec_bulk *b, uint64_t h, bool *dup) {
  uint64_t i = h & b->approx_mask;
  uint8_t m = (uint8_t)(1u << (i & 7));
  *dup = (b->approx[i >> 3] & m) != 0;
  b->approx[i >> 3] |= m;
}

/* With no index, fold the hashes in hist, and those of the seen set, into b->approx (made on
** first use) and free what held them, so the keys' memory stays key_mem * 3 whatever the
** load's size. EXEC_NOMEM or EXEC_OK. */
static int fold_approx(exec_bulk *b) {
  if (!b->approx) {
    uint64_t bits = 1;
    while (bits * 2 <= (uint64_t)b->key_mem * 16u) bits *= 2;
    b->approx = calloc((size_t)(bits / 8), 1);
    if (!b->approx) return EXEC_NOMEM;
    b->approx_mask = bits - 1;
  }
  bool d;
  for (size_t i = 0; i < b->n_hist; i++) approx_tas(b, b->hist[i], &d);
  b->n_hist = 0;
  for (size_t i = 0; b->seen && i < b->seen_cap; i++)
    if (b->seen[i]) approx_tas(b, b->seen[i], &d);
  free(b->seen);
  b->seen = NULL;
  b->seen_cap = b->seen_n = 0;
  return EXEC_OK;
}

static bool grow_arr(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t nc = *cap ? *cap * 2 : 64;
  while (nc < need) nc *= 2;
  void *q = realloc(*p, nc * elem);
  if (!q) return false;
  *p = q;
  *cap = nc;
  return true;
}

/* Index of the first closed run whose lowest key is above key k (n bytes): the closed runs
** never overlap, so b->ranges, kept in order of their lowest keys, is in order of their
** highest keys too, and a binary search finds k's neighbours. */
static size_t range_pos(const exec_bulk *b, const uint8_t *k, size_t n) {
  size_t lo = 0, hi = b->n_ranges;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const uint32_t *r = b->ranges[mid];
    if (kv_bytes_cmp(k, n, b->rbytes + r[0], r[1]) < 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* Does key k (n bytes) lie in a closed run's [lowest, highest]? Also sets the current
** run's safe bounds from k: the closed run with the lowest key above k and the one with
** the highest key below it. */
static bool in_closed(exec_bulk *b, const uint8_t *k, size_t n) {
  size_t p = range_pos(b, k, n);
  b->safe_up = p < b->n_ranges ? (long)p : -1;
  b->safe_down = -1;
  if (p == 0) return false;
  const uint32_t *r = b->ranges[p - 1]; /* its lowest key is k or below */
  if (kv_bytes_cmp(k, n, b->rbytes + r[2], r[3]) <= 0) return true;
  b->safe_down = (long)(p - 1);
  return false;
}

/* Is key k (n bytes, hash h) new in this load? *dup gets the answer. While keys come in
** runs, each strictly ascending or strictly descending, a key that extends the current run
** and lies outside every earlier run's [lowest, highest] cannot have been seen: no lookup
** (a lookup in a set of every key misses the cache on every row). The ranges are checked
** when a run starts (a binary search: the ranges never overlap, and are kept in order);
** a run that started outside all of them can only enter one across its
** nearest lowest key above (ascending) or highest key below (descending), so a key short
** of that bound is not checked again, and a key past it starts a new run (so a run's range
** never spans another's: time-series files of stations loaded copy after copy jump down
** from the last station to the first at each copy). The first key that may repeat one (a
** run starts inside a range, or runs are too many: over MAX_RUNS, or over FEW_RUNS and
** shorter than RUN_KEYS keys on average, so the ranges take under a byte or so a key)
** moves every key's hash into the seen set, which checks every key from then on.
** EXEC_NOMEM or EXEC_OK. */
static int key_check(exec_bulk *b, const uint8_t *k, size_t n, uint64_t h, bool *dup) {
  *dup = false;
  if (b->set_mode && b->approx) {
    approx_tas(b, h, dup);
    return EXEC_OK;
  }
  if (b->set_mode) {
    if (seen_add(b, h, dup) != EXEC_OK) return EXEC_NOMEM;
    return !b->n_ix && b->seen_n * sizeof *b->seen * 2 > b->key_mem ? fold_approx(b) : EXEC_OK;
  }
  bool maybe, up = false, down = false;
  if (b->run_any && b->run_dir >= 0 && kv_bytes_cmp(k, n, b->run_hi, b->hi_len) > 0) {
    const uint32_t *u = b->safe_up >= 0 ? b->ranges[b->safe_up] : NULL;
    up = !u || kv_bytes_cmp(k, n, b->rbytes + u[0], u[1]) < 0; /* short of the bound */
  } else if (b->run_any && b->run_dir <= 0 && kv_bytes_cmp(k, n, b->run_lo, b->lo_len) < 0) {
    const uint32_t *d = b->safe_down >= 0 ? b->ranges[b->safe_down] : NULL;
    down = !d || kv_bytes_cmp(k, n, b->rbytes + d[2], d[3]) > 0;
  }
  if (up) {
    memcpy(b->run_hi, k, n);
    b->hi_len = n;
    b->run_dir = 1;
    maybe = false;
  } else if (down) {
    memcpy(b->run_lo, k, n);
    b->lo_len = n;
    b->run_dir = -1;
    maybe = false;
  } else { /* the run ends here (it turns, or reaches another run's range: a run that
           ** jumped over ranges would cover them): keep its range, start the next with k */
    if (b->run_any) {
      if (!grow_arr((void **)&b->rbytes, &b->rb_cap, b->rb_len + b->lo_len + b->hi_len, 1) ||
          !grow_arr((void **)&b->ranges, &b->cap_ranges, b->n_ranges + 1, sizeof *b->ranges))
        return EXEC_NOMEM;
      size_t at = range_pos(b, b->run_lo, b->lo_len); /* in order (no overlap: see above) */
      memmove(b->ranges + at + 1, b->ranges + at, (b->n_ranges - at) * sizeof *b->ranges);
      b->n_ranges++;
      uint32_t *r = b->ranges[at];
      r[0] = (uint32_t)b->rb_len;
      r[1] = (uint32_t)b->lo_len;
      memcpy(b->rbytes + b->rb_len, b->run_lo, b->lo_len);
      b->rb_len += b->lo_len;
      r[2] = (uint32_t)b->rb_len;
      r[3] = (uint32_t)b->hi_len;
      memcpy(b->rbytes + b->rb_len, b->run_hi, b->hi_len);
      b->rb_len += b->hi_len;
    }
    memcpy(b->run_lo, k, n);
    memcpy(b->run_hi, k, n);
    b->lo_len = b->hi_len = n;
    b->run_dir = 0;
    b->run_any = true;
    maybe = b->n_ranges > MAX_RUNS ||
            (b->n_ranges > FEW_RUNS && (uint64_t)b->n_ranges * RUN_KEYS > (uint64_t)b->rows) ||
            in_closed(b, k, n);
  }
  if (maybe && b->approx) { /* from now on, the bit set (the keys since its last fold too) */
    if (fold_approx(b) != EXEC_OK) return EXEC_NOMEM;
    b->set_mode = true;
    approx_tas(b, h, dup);
    return EXEC_OK;
  }
  if (maybe) { /* from now on, the seen set: every key so far goes in */
    for (size_t i = 0; i < b->n_hist; i++) {
      bool d;
      if (seen_add(b, b->hist[i], &d) != EXEC_OK) return EXEC_NOMEM;
    }
    free(b->hist);
    b->hist = NULL;
    b->n_hist = b->cap_hist = 0;
    b->set_mode = true;
    return seen_add(b, h, dup);
  }
  if (!grow_arr((void **)&b->hist, &b->cap_hist, b->n_hist + 1, sizeof *b->hist))
    return EXEC_NOMEM;
  b->hist[b->n_hist++] = h;
  return !b->n_ix && b->n_hist * sizeof *b->hist >= b->key_mem ? fold_approx(b) : EXEC_OK;
}

/* The row key of the current row (b->pk_vals) into b->key, *klen its length: a salted
** table's starts with its salt byte (catalog/salt.h). A cat_key_encode status. */
static int row_key(exec_bulk *b, size_t *klen, cat_error *kce) {
  const cat_table *t = b->rc.table;
  size_t salt = cat_salt_len(t);
  int rc = cat_key_encode(t->key_cols, t->n_pk, b->pk_vals, b->key + salt, CAT_KEY_MAX - salt,
                          klen, kce);
  if (rc == CAT_OK && salt) {
    b->key[0] = cat_salt_byte(b->key + 1, *klen, t->salt_buckets);
    *klen += 1;
  }
  return rc;
}

/* The row key of index ic (a fast one) for the current row: its keys' values encoded as
** exec_index_row_key encodes them, then the data row key b->key (klen bytes), which is what
** an index row key ends with (exec/index.h). Anything unusual (a key too long) goes to
** exec_index_row_key, which words the error. */
static int fast_key(exec_bulk *b, exec_index_codec *ic, size_t klen, exec_error *err) {
  if (ic->index->salt_buckets) return exec_index_row_key(ic, b->vals, err); /* its salt byte */
  for (int k = 0; k < ic->n_keys; k++) {
    cat_value v = b->vals[ic->key_col[k]];
    v.type = ic->key_cols[k].type;
    if (!v.is_null && (v.type.id == CAT_T_DOUBLE || v.type.id == CAT_T_FLOAT) && isnan(v.u.d))
      v.u.d = NAN;
    ic->kvals[k] = v;
  }
  cat_error ce; /* set whole by cat_key_encode when it fails */
  ce.msg[0] = 0;
  size_t len = 0;
  if (cat_key_encode(ic->key_cols, ic->n_keys, ic->kvals, ic->key, CAT_KEY_MAX, &len, &ce) !=
          CAT_OK ||
      len + klen - cat_salt_len(b->rc.table) > CAT_KEY_MAX)
    return exec_index_row_key(ic, b->vals, err);
  size_t salt = cat_salt_len(b->rc.table); /* an index row holds the unsalted data key */
  memcpy(ic->key + len, b->key + salt, klen - salt);
  ic->key_len = len + klen - salt;
  return EXEC_OK;
}

/* Build the index rows of the current row (nothing is added yet): each direct index's
** key in its codec, the others' cells in b->ixb. key_h: key_hash of the row key. */
static int build_index_rows(exec_bulk *b, size_t klen, uint64_t key_h, exec_error *err) {
  bool dup = false;
  if (key_check(b, b->key, klen, key_h, &dup) != EXEC_OK)
    return exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
  if (dup) {
    b->last_repeat = true;
    return exec_error_set(err, EXEC_CONSTRAINT, "primary key repeats an earlier row of this load, "
                          "which a bulk load into a table with an index does not take");
  }
  kv_batch_clear(b->ixb);
  for (int i = 0; i < b->n_ix; i++) {
    int rc = b->ix[i].fast     ? fast_key(b, &b->ic[i], klen, err)
             : b->ix[i].direct ? exec_index_row_key(&b->ic[i], b->vals, err)
                               : exec_index_put(&b->ic[i], b->vals, KV_TS_NOW, b->ixb, err);
    if (rc) return rc == EXEC_TOOBIG ? EXEC_CONSTRAINT : rc;
  }
  return EXEC_OK;
}

/* Add the index rows built by build_index_rows to the load. */
static int add_index_rows(exec_bulk *b) {
  kv_bulk_cell marker = {CAT_MARKER_QUALIFIER, 1, KV_PUT, "", 0};
  kv_bulk_cell inc[64];
  int krc = KV_OK;
  for (int i = 0; krc == KV_OK && i < b->n_ix; i++) {
    const exec_index_codec *ic = &b->ic[i];
    const bix *x = &b->ix[i];
    if (!x->direct) continue;
    krc = kv_bulk_add_row(b->kb, ic->key_family_id, ic->key, ic->key_len, KV_TS_NOW, &marker,
                          1);
    for (int k0 = 0; krc == KV_OK && k0 < x->n_inc; k0 += 64) {
      int n = x->n_inc - k0 < 64 ? x->n_inc - k0 : 64;
      for (int k = 0; k < n; k++) {
        const binc *e = &x->inc[k0 + k];
        if (e->cell >= 0) inc[k] = b->cells[e->cell];
        else inc[k] = (kv_bulk_cell){NULL, 0, KV_DELETE_COLUMN, NULL, 0};
        inc[k].qual = e->q;
        inc[k].qual_len = e->qlen;
      }
      krc = kv_bulk_add_row(b->kb, ic->data_family_id, ic->key, ic->key_len, KV_TS_NOW, inc,
                            (size_t)n);
    }
  }
  if (krc == KV_OK && kv_batch_count(b->ixb) > 0) krc = kv_bulk_add_batch(b->kb, b->ixb);
  return krc;
}

/* One row into the load: text fields (fields, lens) or typed values (vals), one per
** column named at begin (exec_bulk_add_text, exec_bulk_add_values). */
static int add_row(exec_bulk *b, const char *const *fields, const size_t *lens,
                   const cat_value *vals, exec_error *err) {
  if (b->broken || b->committed)
    return exec_error_set(err, EXEC_MISUSE, "bulk load: the load is %s",
                          b->committed ? "committed" : "broken by an earlier error");
  if (schema_changed(b, err)) return EXEC_ERROR;
  b->last_repeat = false;
  const cat_table *t = b->t;
  /* 1. Parse and check every field; the key columns come first. Each other field's cell
  ** is made at once (its value encoded in its slot): nothing is added to the load before
  ** every field is known to fit. */
  size_t nc = 0, n_null = 0;
  cat_error ce; /* set whole by whoever fails (not zeroed per row: it is large) */
  ce.code = CAT_OK;
  ce.kv_code = 0;
  ce.msg[0] = 0;
  size_t klen = 0;
  int key_rc = CAT_OK;
  uint64_t key_h = 0;
  cat_error kce; /* the key's error (set whole by cat_key_encode when it fails) */
  kce.msg[0] = 0;
  for (int i = 0; i < b->n_cols; i++) {
    if (i == b->n_key_fields) { /* 2. The row key, once its columns are parsed. */
      for (int j = 0; j < t->n_pk; j++) b->pk_vals[j] = b->vals[t->pk[j]];
      key_rc = row_key(b, &klen, &kce);
      if (key_rc == CAT_OK && (b->n_ix || b->any_fresh)) { /* the seen set's slot: fetched
                                                                while we parse */
        key_h = key_hash(b->key, klen);
        if (b->set_mode && b->seen)
          __builtin_prefetch(&b->seen[(size_t)key_h & (b->seen_cap - 1)]);
        else if (b->set_mode && b->approx)
          __builtin_prefetch(&b->approx[(key_h & b->approx_mask) >> 3]);
      }
    }
    const bfield *f = &b->order[i];
    const cat_column *col = &t->columns[f->col];
    cat_value *v = &b->vals[f->col];
    const char *s = vals ? NULL : fields[f->field];
    kv_bulk_cell *c = i >= b->n_key_fields ? &b->cells[nc++] : NULL;
    if (vals ? vals[f->field].is_null : !s) {
      *v = cat_v_null(col->type);
      if (!col->nullable)
        return exec_error_set(err, EXEC_CONSTRAINT, col->pk_pos >= 0
                              ? "column %s: primary key value may not be NULL"
                              : "column %s may not be NULL", col->name);
      if (c) {
        *c = (kv_bulk_cell){f->q, f->qlen, KV_DELETE_COLUMN, NULL, 0};
        n_null++;
      }
      continue;
    }
    uint8_t *slot = b->enc + (size_t)i * SLOT;
    if (c && f->enc == ENC_DOUBLE && !vals && cat_text_fast_double(s, lens[f->field], &v->u.d)) {
      v->type = col->type; /* the common case of a reading, in one step */
      v->is_null = false;
      cat_vc_put_double(slot, v->u.d);
      *c = (kv_bulk_cell){f->q, f->qlen, KV_PUT, slot, 8};
      continue;
    }
    int rc = vals ? exec_bulk_cast_field(col, &vals[f->field], v, b->castbuf + (size_t)i * 64,
                                         err)
                  : exec_bulk_parse_field(col, s, lens[f->field], v, err);
    if (rc) return rc;
    if (!c) continue;
    *c = (kv_bulk_cell){f->q, f->qlen, KV_PUT, slot, 0};
    switch (f->enc) {
      case ENC_DOUBLE:
        cat_vc_put_double(slot, v->u.d);
        c->value_len = 8;
        continue;
      case ENC_FLOAT:
        cat_vc_put_float(slot, (float)v->u.d);
        c->value_len = 4;
        continue;
      case ENC_INT:
        cat_vc_put_int(slot, f->width, v->u.i);
        c->value_len = f->width;
        continue;
      case ENC_BYTES:
        c->value = v->u.s.p;
        c->value_len = v->u.s.len;
        if (c->value_len > KV_MAX_VALUE)
          return exec_error_set(err, EXEC_CONSTRAINT, "column %s: value of %zu bytes over the "
                                "cell maximum %u", col->name, c->value_len, KV_MAX_VALUE);
        continue;
      default:
        break;
    }
    size_t vlen = 0;
    if (cat_vc_encode(v, slot, SLOT, &vlen, &ce) != CAT_OK)
      return exec_error_set(err, EXEC_ERROR, "column %s: %s", col->name, ce.msg);
    c->value_len = vlen;
  }
  if (b->n_key_fields == b->n_cols) { /* no other column: the key now */
    for (int j = 0; j < t->n_pk; j++) b->pk_vals[j] = b->vals[t->pk[j]];
    key_rc = row_key(b, &klen, &kce);
    if (key_rc == CAT_OK && (b->n_ix || b->any_fresh)) key_h = key_hash(b->key, klen);
  }
  if (key_rc != CAT_OK)
    return exec_error_set(err, EXEC_CONSTRAINT, "row key of %s: %s", t->name, kce.msg);
  int64_t ts; /* KV_TS_NOW, or a ROW_TIMESTAMP table's key value (exec/row_ts.h) */
  int trc = exec_row_ts_of_key(t, b->key, klen, &ts, err);
  if (trc) return trc;
  bool seen = false; /* the key was in the load before (a repeat, or a hash collision) */
  if (b->n_ix) {
    int rc = build_index_rows(b, klen, key_h, err);
    if (rc) {
      if (rc != EXEC_CONSTRAINT) b->broken = true;
      return rc;
    }
  } else if (b->any_fresh && key_check(b, b->key, klen, key_h, &seen) != EXEC_OK) {
    b->broken = true; /* every key is recorded: a later row of it needs its tombstones */
    return exec_error_set(err, EXEC_NOMEM, "bulk load: out of memory");
  }
  uint64_t cover = cat_row_cover_of(t); /* 3. The row cover (exec/rowcodec.h) */
  if (cover && (n_null || !b->put_all_known)) {
    uint64_t put = 0;
    for (size_t k = 0; k < nc; k++)
      if (b->cells[k].type == KV_PUT)
        put |= 1ull << t->columns[b->order[b->n_key_fields + (int)k].col].family;
    if (!n_null) b->put_all = put, b->put_all_known = true;
    cover &= ~put;
  } else {
    cover &= ~b->put_all;
  }
  if (cover) {
    int lrc = exec_row_cover_lose(b->s, t, cover, err);
    if (lrc) return lrc;
  }
  /* 4. Into the load: the marker, then each family's run of cells. */
  kv_bulk_cell marker = {CAT_MARKER_QUALIFIER, 1, KV_PUT, "", 0};
  int krc = kv_bulk_add_row(b->kb, b->rc.key_family_id, b->key, klen, ts, &marker, 1);
  for (size_t i = 0; krc == KV_OK && i < nc;) {
    size_t j = i + 1;
    const bfield *f0 = &b->order[b->n_key_fields + (int)i];
    while (j < nc && b->order[b->n_key_fields + (int)j].fam == f0->fam) j++;
    const kv_bulk_cell *cells = b->cells + i;
    size_t n = j - i;
    if (n_null && f0->fresh && !seen) { /* NULLs over nothing older: no tombstone */
      n = 0;
      for (size_t k = i; k < j; k++)
        if (b->cells[k].type == KV_PUT) b->kept[n++] = b->cells[k];
      cells = b->kept;
    }
    if (n) krc = kv_bulk_add_row(b->kb, f0->fam, b->key, klen, ts, cells, n);
    i = j;
  }
  if (krc == KV_OK && b->n_ix) krc = add_index_rows(b);
  if (krc) {
    b->broken = true;
    return kv_fail(err, krc, "adding a row");
  }
  b->rows++;
  return EXEC_OK;
}

int exec_bulk_add_text(exec_bulk *b, const char *const *fields, const size_t *lens,
                       exec_error *err) {
  if (!b || !fields || !lens) return exec_error_set(err, EXEC_MISUSE, "bulk load: NULL argument");
  return add_row(b, fields, lens, NULL, err);
}

int exec_bulk_add_values(exec_bulk *b, const cat_value *vals, exec_error *err) {
  if (!b || !vals) return exec_error_set(err, EXEC_MISUSE, "bulk load: NULL argument");
  return add_row(b, NULL, NULL, vals, err);
}

int64_t exec_bulk_rows(const exec_bulk *b) { return b ? b->rows : 0; }

bool exec_bulk_was_empty(const exec_bulk *b) { return b && b->was_empty; }

bool exec_bulk_last_repeat(const exec_bulk *b) { return b && b->last_repeat; }

int exec_bulk_commit(exec_bulk *b, exec_error *err) {
  if (!b) return exec_error_set(err, EXEC_MISUSE, "bulk load: NULL load");
  if (b->committed) return exec_error_set(err, EXEC_MISUSE, "bulk load: committed already");
  if (schema_changed(b, err)) return EXEC_ERROR;
  if (b->broken) return exec_error_set(err, EXEC_MISUSE, "bulk load: broken by an earlier error");
  b->committed = true;
  if (b->n_ix) {
    bool any = false;
    int rc = table_has_rows(b, &any, err);
    if (rc) return rc;
    if (any)
      return exec_error_set(err, EXEC_ERROR, "bulk load: rows were written to %s during the load; "
                            "its index could not be kept in step: nothing was loaded", b->t->name);
  }
  int krc = kv_bulk_commit(b->kb, NULL);
  if (krc) return kv_fail(err, krc, "commit");
  b->s->changes = b->rows;
  return EXEC_OK;
}

void exec_bulk_free(exec_bulk *b) {
  if (!b) return;
  kv_bulk_free(b->kb);
  exec_rowcodec_free(&b->rc);
  for (int i = 0; i < b->n_ix; i++) {
    exec_index_codec_free(&b->ic[i]);
    if (b->ix) free(b->ix[i].inc);
  }
  free(b->ic);
  free(b->ix);
  kv_batch_free(b->ixb);
  free(b->seen);
  free(b->hist);
  free(b->approx);
  free(b->run_lo);
  free(b->run_hi);
  free(b->rbytes);
  free(b->ranges);
  free(b->order);
  free(b->vals);
  free(b->pk_vals);
  free(b->key);
  free(b->enc);
  free(b->castbuf);
  free(b->cells);
  free(b->kept);
  free(b);
}
