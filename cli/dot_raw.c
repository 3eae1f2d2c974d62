/*
** cli/dot_raw.c: `.raw get` and `.raw scan`: the cells of the store under a table, as kv/
** holds them.
**
**   .raw get TABLE KEY                 one row: KEY is hex (0x0102.. or x'0102'), or for a
**                                      SQL table its PK values separated by commas
**   .raw scan TABLE [--family F] [--limit N] [--versions N] [--start KEY]
**                                      rows in key order from KEY (default: the first),
**                                      N rows at most (default 20)
**
** For each row: the row key in hex, and decoded per the table's PRIMARY KEY when TABLE is
** a SQL table; then each cell: family:qualifier (with the column name when known), the
** timestamp (ms since the epoch and as UTC), and the value (hex, and decoded per the
** column's type when known). TABLE is a SQL table name (mapped to its kv table through a
** catalog snapshot; every family is read, "_k" being the row-existence marker family) or
** the name of a kv table itself such as SYSTEM.CATALOG (family "0" unless --family).
**
** What it does not: write anything; show tombstones or versions the store already hides
** (reads go through kv_scan like any reader, so they see what a query sees).
*/
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_test.h"
#include "catalog/catalog.h"
#include "catalog/keycodec.h"
#include "catalog/salt.h"
#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "cli/shell.h"

#define RAW_KEY_MAX 4096 /* bytes of a key typed on the command line */

/* What a .raw command reads. */
typedef struct raw_req {
  const char *kv_table;     /* the kv table name */
  const cat_table *t;       /* the SQL table, or NULL for a bare kv table */
  uint32_t fam_ids[16];     /* kv family ids read */
  const char *fam_names[16];/* their names */
  uint32_t n_fams;          /* families read */
} raw_req;

static void put_hex(FILE *out, const uint8_t *p, size_t n, size_t max) {
  for (size_t i = 0; i < n && i < max; i++) fprintf(out, "%02x", p[i]);
  if (n > max) fputs("..", out);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = tolower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Parse hex (with an optional 0x prefix or in x'..') into buf; returns the length or -1. */
static long parse_hex(const char *s, uint8_t *buf, size_t cap) {
  size_t n = strlen(s);
  if (n >= 3 && (s[0] == 'x' || s[0] == 'X') && s[1] == '\'' && s[n - 1] == '\'') {
    s += 2;
    n -= 3;
  } else if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s += 2;
    n -= 2;
  }
  if (n % 2 || n / 2 > cap) return -1;
  for (size_t i = 0; i < n; i += 2) {
    int a = hexval((unsigned char)s[i]), b = hexval((unsigned char)s[i + 1]);
    if (a < 0 || b < 0) return -1;
    buf[i / 2] = (uint8_t)(a * 16 + b);
  }
  return (long)(n / 2);
}

static bool is_hex_form(const char *s) {
  return (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ||
         ((s[0] == 'x' || s[0] == 'X') && s[1] == '\'');
}

/* Encode "v1,v2,..." as the row key of t (a prefix when fewer values). Returns the length
** or -1 with a message printed. */
static long encode_pk(const cli_shell *sh, const cat_table *t, const char *text, uint8_t *buf,
                      size_t cap) {
  cat_value vals[32];
  char *copy = strdup(text);
  if (!copy) return -1;
  int n = 0;
  cat_error err;
  memset(&err, 0, sizeof err);
  long result = -1;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    size_t len = strlen(tok);
    while (len > 0 && tok[len - 1] == ' ') len--;
    if (n >= t->n_pk || n >= 32) {
      cli_errorf(sh, "%s has %d key columns", t->name, t->n_pk);
      goto out;
    }
    const cat_type *ty = &t->key_cols[n].type;
    if (cat_text_parse(ty, tok, len, &vals[n], &err) != CAT_OK) {
      cli_errorf(sh, "key column %d: %s", n + 1, err.msg);
      goto out;
    }
    n++;
  }
  size_t klen = 0, salt = cat_salt_len(t); /* a salted table's key starts with its bucket */
  if (salt && n < t->n_pk) {
    cli_errorf(sh, "%s is salted (SALT_BUCKETS %d): give every key column (%d), a key prefix "
               "lies in every bucket", t->name, t->salt_buckets, t->n_pk);
    goto out;
  }
  if (cap < salt || cat_key_encode(t->key_cols, n, vals, buf + salt, cap - salt, &klen, &err) !=
                        CAT_OK) {
    cli_errorf(sh, "%s", err.msg);
    goto out;
  }
  if (salt) buf[0] = cat_salt_byte(buf + 1, klen, t->salt_buckets);
  result = (long)(klen + salt);
out:
  free(copy);
  return result;
}

/* Print the decoded PK of key per t ("['Dongsi', 2017-01-01 00:00:00]"). */
static void print_key_decoded(FILE *out, const cat_table *t, const uint8_t *key, size_t len) {
  cat_value vals[32];
  uint8_t *scratch = malloc(len + 1);
  cat_error err;
  memset(&err, 0, sizeof err);
  int n = t->n_pk < 32 ? t->n_pk : 32;
  if (!scratch) return;
  if (cat_salt_len(t) && len) { /* the salt byte (catalog/salt.h) */
    fprintf(out, "  (salt bucket %u)", key[0]);
    key++;
    len--;
  }
  if (cat_key_decode(t->key_cols, n, key, key + len, vals, scratch, len + 1, NULL, &err) !=
      CAT_OK) {
    fprintf(out, "  (does not decode: %s)", err.msg);
    free(scratch);
    return;
  }
  fputs("  [", out);
  for (int i = 0; i < n; i++) {
    char buf[256];
    cat_text_format(&vals[i], buf, sizeof buf);
    bool str = cat_type_is_string(vals[i].type.id) && !vals[i].is_null;
    fprintf(out, "%s%s%s%s", i ? ", " : "", str ? "'" : "", buf, str ? "'" : "");
  }
  fputc(']', out);
  free(scratch);
}

/* The column of t stored in kv family fam_id under qualifier q, or NULL. */
static const cat_column *column_of(const cat_table *t, const char *fam_name, const uint8_t *q,
                                   uint32_t qlen) {
  int f = cat_find_family(t, fam_name);
  for (int i = 0; f >= 0 && i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    if (c->pk_pos >= 0 || c->family != f) continue;
    uint8_t cq[4];
    size_t n = cat_column_qualifier(c->id, cq);
    if (n == qlen && memcmp(cq, q, n) == 0) return c;
  }
  return NULL;
}

static void print_cell(FILE *out, const raw_req *r, const kv_cell_view *c) {
  const char *fam = "?";
  for (uint32_t i = 0; i < r->n_fams; i++)
    if (r->fam_ids[i] == c->family_id) fam = r->fam_names[i];
  fprintf(out, "  %s:", fam);
  put_hex(out, c->qual, c->qual_len, 64);
  const cat_column *col = r->t ? column_of(r->t, fam, c->qual, c->qual_len) : NULL;
  if (col) fprintf(out, " (%s)", col->name);
  else if (r->t && !strcmp(fam, CAT_KEY_FAMILY)) fputs(" (row marker)", out);
  else if (r->t && c->qual_len >= 2 && c->qual[0] == CAT_DYN_QUAL_ESCAPE) { /* 00 + name */
    fputs(" (dynamic column ", out);
    for (uint32_t i = 1; i < c->qual_len; i++) /* control bytes as \xHH */
      fprintf(out, c->qual[i] < 0x20 || c->qual[i] == 0x7F ? "\\x%02X" : "%c", c->qual[i]);
    fputs(")", out);
  }
  time_t secs = (time_t)(c->ts / 1000);
  struct tm tm;
  char when[64] = "?";
  if (gmtime_r(&secs, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  fprintf(out, "  ts %lld (%s.%03d UTC)  value ", (long long)c->ts, when,
          (int)((c->ts % 1000 + 1000) % 1000));
  if (c->value_len == 0) fputs("(empty)", out);
  else put_hex(out, c->value, c->value_len, 48);
  if (col) {
    cat_value v;
    cat_error err;
    memset(&err, 0, sizeof err);
    if (cat_vc_decode(&col->type, c->value, c->value_len, &v, &err) == CAT_OK) {
      char buf[256];
      size_t n = cat_text_format(&v, buf, sizeof buf);
      fprintf(out, " = %s%s", buf, n >= sizeof buf ? "..." : "");
    } else {
      fprintf(out, " (does not decode: %s)", err.msg);
    }
  }
  fputc('\n', out);
}

/* Resolve TABLE and the families to read into *r (using cat). Returns 0, or 1 with a
** message printed. */
static int resolve(const cli_shell *sh, kv_db *kv, const cat_catalog *cat, const char *name,
                   const char *family, raw_req *r) {
  memset(r, 0, sizeof *r);
  const cat_table *t = cat_find_table(cat, name);
  if (!t) {
    char up[256];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof up; i++) up[i] = (char)toupper((unsigned char)name[i]);
    up[i] = 0;
    t = cat_find_table(cat, up);
  }
  if (t) {
    r->t = t;
    r->kv_table = t->kv_name;
    for (int f = 0; f < t->n_families && r->n_fams < 16; f++) {
      if (family && strcasecmp(family, t->families[f].name) != 0) continue;
      r->fam_ids[r->n_fams] = t->families[f].kv_id;
      r->fam_names[r->n_fams++] = t->families[f].name;
    }
    if (r->n_fams == 0) {
      cli_errorf(sh, "%s has no family %s", t->name, family);
      return 1;
    }
    return 0;
  }
  r->kv_table = name;
  const char *fam = family ? family : CAT_DEFAULT_FAMILY;
  if (kv_family_id(kv, name, fam, &r->fam_ids[0]) != KV_OK) {
    cli_errorf(sh, "no table or kv table %s with family %s", name, fam);
    return 1;
  }
  r->fam_names[0] = fam;
  r->n_fams = 1;
  return 0;
}

static int run_scan(cli_shell *sh, kv_db *kv, const raw_req *r, const kv_range *range,
                    uint64_t limit, int versions) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = r->fam_ids;
  o.n_families = r->n_fams;
  o.ranges = range;
  o.n_ranges = range ? 1 : 0;
  o.limit = limit;
  o.max_versions = versions;
  kv_scan *s = NULL;
  if (kv_scan_open(kv, &o, &s) != KV_OK) {
    cli_errorf(sh, "%s", kv_errmsg());
    return 1;
  }
  kv_row row;
  int rc;
  uint64_t rows = 0;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {
    fputs("row ", sh->out);
    put_hex(sh->out, row.key, row.key_len, 4096);
    if (r->t) print_key_decoded(sh->out, r->t, row.key, row.key_len);
    fputc('\n', sh->out);
    for (uint32_t i = 0; i < row.n_cells; i++) print_cell(sh->out, r, &row.cells[i]);
    rows++;
  }
  int ret = 0;
  if (rc != KV_ERR_NOTFOUND) {
    cli_errorf(sh, "%s", kv_errmsg());
    ret = 1;
  }
  kv_scan_close(s);
  fprintf(sh->out, "(%llu row%s)\n", (unsigned long long)rows, rows == 1 ? "" : "s");
  return ret;
}

int cli_dot_raw(cli_shell *sh, int argc, char **argv) {
  static const char usage[] =
      "usage: .raw get TABLE KEY | .raw scan TABLE [--family F] [--limit N] "
      "[--versions N] [--start KEY]";
  if (argc < 3 || (strcmp(argv[1], "get") && strcmp(argv[1], "scan"))) {
    return cli_errorf(sh, "%s", usage);
  }
  bool get = !strcmp(argv[1], "get");
  const char *family = NULL, *start = NULL, *key = NULL;
  uint64_t limit = 20;
  int versions = 1;
  for (int i = 3; i < argc; i++) {
    bool has = i + 1 < argc;
    if (!strcmp(argv[i], "--family") && has) family = argv[++i];
    else if (!strcmp(argv[i], "--limit") && has) limit = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--versions") && has) versions = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--start") && has && !get) start = argv[++i];
    else if (get && !key) key = argv[i];
    else {
      return cli_errorf(sh, "%s", usage);
    }
  }
  if ((get && !key) || versions < 1) {
    return cli_errorf(sh, "%s", usage);
  }
  kv_db *kv = api_test_kv(sh->db);
  cat_catalog *cat = NULL;
  cat_error err;
  memset(&err, 0, sizeof err);
  if (!kv || cat_open(kv, &cat, &err) != CAT_OK) {
    cli_errorf(sh, "cannot read the catalog: %s", err.msg);
    return 1;
  }
  raw_req r;
  int rc = resolve(sh, kv, cat, argv[2], family, &r);
  uint8_t *buf = rc ? NULL : malloc(RAW_KEY_MAX);
  if (!rc && !buf) rc = 1;
  const char *kt = get ? key : start;
  long klen = 0;
  if (!rc && kt) {
    if (is_hex_form(kt) || !r.t) klen = parse_hex(kt, buf, RAW_KEY_MAX);
    else klen = encode_pk(sh, r.t, kt, buf, RAW_KEY_MAX);
    if (klen < 0) {
      if (is_hex_form(kt) || !r.t) cli_errorf(sh, "bad hex key: %s", kt);
      rc = 1;
    }
  }
  if (!rc) {
    kv_range range = {buf, (size_t)klen, true, get ? buf : NULL, get ? (size_t)klen : 0, true};
    rc = run_scan(sh, kv, &r, kt ? &range : NULL, get ? 1 : limit, versions);
  }
  free(buf);
  cat_close(cat);
  return rc;
}
