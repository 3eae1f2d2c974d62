/*
** tests/slt/slt_runner.c: Rowan's sqllogictest runner. `slt_runner [--engine rowan|sqlite]
** [-v] FILE.test...` runs each file on a fresh in-memory database and exits non-zero if any
** record failed, printing file, line, SQL, expected and actual values for each failure.
**
** The format is SQLite's sqllogictest. A file is a series of records separated by blank
** lines; lines starting with '#' are comments.
**   statement ok                 SQL that must succeed (the SQL runs up to the blank line;
**                                several statements separated by ';' are run in turn)
**   statement error [REGEX]      SQL that must fail; REGEX (POSIX extended) must match
**                                "ROWAN_CODE: message" (e.g. ROWAN_SYNTAX or a message part)
**   statement count N            (extension) SQL that must succeed and report N rows
**                                changed (rowan_changes) by its last statement
**   query TYPES [SORT] [LABEL]   one query; TYPES has one letter per result column: I
**                                (integer, "%lld"), R (real, "%.3f"), T (text: "(empty)" for
**                                '', bytes outside 0x20..0x7e shown as '@'); NULL is "NULL".
**                                SORT: nosort (default), rowsort (rows sorted as strings,
**                                column by column), valuesort (every value sorted). The SQL
**                                is followed by a line "----" and the expected values, one
**                                per line; or (extension) one row per line with its values
**                                separated by single spaces; or "N values hashing to MD5",
**                                the MD5 of every value followed by "\n". Queries with the
**                                same LABEL must give the same values.
**   hash-threshold N             results of more than N values may be given as a hash
**   halt                         stop reading the file
**   skipif ENGINE / onlyif ENGINE  before a record: skip it on (only run it on) "rowan" or
**                                "sqlite"; or on the rowan engine run through the storage
**                                backend the environment's ROWAN_BACKEND names (other than
**                                "local": "rowatomic", docs/BACKEND.md)
**   control flush|compact|reopen (extension, Rowan only) flush every memstore to store
**                                files / major-compact every table / close and reopen the
**                                database, through api/api_test.h; golden EXPLAIN output
**                                is taken after a flush so it does not depend on memstores
**   control threads=N            (Rowan only) scan with N threads, every scan cut into
**                                chunks however small (rowan_set_scan_threads(db, N, 0))
** EXPLAIN output (a query whose SQL starts with EXPLAIN) is masked before comparison: every
** "time=<number><unit>" becomes "time=*" and every byte count "<number> B" becomes "* B",
** so EXPLAIN ANALYZE goldens are stable and do not change with the store file layout (row
** counts, bounds, kinds, families and filters are compared as they are).
**
** Not here: the back ends (slt_rowan.c, slt_sqlite.c) and MD5 (slt_md5.c).
*/
#include "slt.h"

#include <ctype.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_CAP 1024
#define MAX_LABELS 256

/* ---- Results and formatting ------------------------------------------------------------ */
int slt_result_add(slt_result *r, const char *s, size_t n) {
  if (r->n == r->cap) {
    size_t nc = r->cap ? r->cap * 2 : 64;
    char **nv = realloc(r->vals, nc * sizeof *nv);
    if (!nv) return -1;
    r->vals = nv;
    r->cap = nc;
  }
  char *c = malloc(n + 1);
  if (!c) return -1;
  memcpy(c, s, n);
  c[n] = 0;
  r->vals[r->n++] = c;
  return 0;
}

void slt_result_clear(slt_result *r) {
  for (size_t i = 0; i < r->n; i++) free(r->vals[i]);
  free(r->vals);
  memset(r, 0, sizeof *r);
}

void slt_format(char type, int is_null, int64_t i64, double d, const char *text, size_t tlen,
                char *buf, size_t cap) {
  if (is_null) {
    snprintf(buf, cap, "NULL");
  } else if (type == 'I') {
    snprintf(buf, cap, "%lld", (long long)i64);
  } else if (type == 'R') {
    snprintf(buf, cap, "%.3f", d);
  } else if (!text || tlen == 0) {
    snprintf(buf, cap, "(empty)");
  } else {
    size_t n = tlen < cap - 1 ? tlen : cap - 1;
    for (size_t i = 0; i < n; i++) {
      unsigned char c = (unsigned char)text[i];
      buf[i] = (c < 0x20 || c > 0x7e) ? '@' : (char)c;
    }
    buf[n] = 0;
  }
}

/* ---- Reading a file --------------------------------------------------------------------- */
typedef struct lines {
  char **v;   /* line texts (pointers into the file buffer, NUL-terminated) */
  int n;      /* number of lines */
  char *buf;  /* the file's bytes, owned */
} lines;

static int read_lines(const char *path, lines *L) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  L->buf = malloc((size_t)sz + 1);
  if (!L->buf || fread(L->buf, 1, (size_t)sz, f) != (size_t)sz) {
    fclose(f);
    return -1;
  }
  fclose(f);
  L->buf[sz] = 0;
  int cap = 256;
  L->v = malloc((size_t)cap * sizeof *L->v);
  L->n = 0;
  char *p = L->buf;
  while (*p) {
    if (L->n == cap) {
      cap *= 2;
      L->v = realloc(L->v, (size_t)cap * sizeof *L->v);
    }
    L->v[L->n++] = p;
    char *e = strchr(p, '\n');
    if (!e) break;
    *e = 0;
    if (e > p && e[-1] == '\r') e[-1] = 0;
    p = e + 1;
  }
  return 0;
}

static bool blank(const char *s) {
  while (*s && isspace((unsigned char)*s)) s++;
  return *s == 0;
}

/* ---- Runner state ----------------------------------------------------------------------- */
typedef struct runner {
  const slt_backend *be;       /* the engine */
  const char *backend;         /* ROWAN_BACKEND's storage backend other than "local" (the
                                  rowan engine runs through it), or NULL */
  slt_db *db;                  /* open database of the current file */
  const char *file;            /* current file name */
  int hash_threshold;          /* 0 = never hash */
  int verbose;                 /* print each record */
  int n_run, n_skipped, n_failed; /* records of the current file */
  char *label_name[MAX_LABELS];   /* query labels seen */
  char label_hash[MAX_LABELS][33]; /* their result hashes */
  int n_labels;                /* labels used */
} runner;

static void fail_head(runner *r, int line, const char *what) {
  r->n_failed++;
  fprintf(stderr, "%s:%d: FAILED: %s\n", r->file, line, what);
}

/* SQL of lines [a, b) joined with newlines, malloc'd. */
static char *join(lines *L, int a, int b) {
  size_t n = 1;
  for (int i = a; i < b; i++) n += strlen(L->v[i]) + 1;
  char *s = malloc(n), *o = s;
  for (int i = a; i < b; i++) {
    size_t k = strlen(L->v[i]);
    memcpy(o, L->v[i], k);
    o += k;
    *o++ = '\n';
  }
  *o = 0;
  return s;
}

static bool starts_explain(const char *sql) {
  while (*sql && isspace((unsigned char)*sql)) sql++;
  return strncasecmp(sql, "EXPLAIN", 7) == 0;
}

/* Mask what varies between runs or with the store's byte layout, in place: every
** "time=<number><letters>" becomes "time=*" and every "<number> B" (a byte count: "141 B",
** "bytes=77 B", also "1.2 KB", "3.4 MB", "1.0 GB") becomes "* B". Row counts are kept. */
static void mask_explain(char *s) {
  char *p = s;
  while ((p = strstr(p, "time=")) != NULL) {
    char *q = p + 5;
    if (!isdigit((unsigned char)*q)) {
      p = q;
      continue;
    }
    while (isdigit((unsigned char)*q) || *q == '.') q++;
    while (isalpha((unsigned char)*q)) q++;
    p[5] = '*';
    memmove(p + 6, q, strlen(q) + 1);
    p += 6;
  }
  for (p = s; *p; p++) {
    if (!isdigit((unsigned char)*p) || (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '.')))
      continue;
    char *q = p;
    while (isdigit((unsigned char)*q) || *q == '.') q++;
    int u = q[0] != ' ' ? 0 : q[1] == 'B' ? 1
            : (q[1] == 'K' || q[1] == 'M' || q[1] == 'G') && q[2] == 'B' ? 2 : 0;
    if (u && !isalnum((unsigned char)q[1 + u])) { /* "1.2 KB" is a byte count too */
      p[0] = '*';
      memmove(p + 3, q + 1 + u, strlen(q + 1 + u) + 1);
      p[1] = ' ';
      p[2] = 'B';
    }
  }
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int g_ncol; /* column count for cmp_row (qsort has no context argument) */
static int cmp_row(const void *a, const void *b) {
  char *const *x = a, *const *y = b;
  for (int i = 0; i < g_ncol; i++) {
    int c = strcmp(x[i], y[i]);
    if (c) return c;
  }
  return 0;
}

/* Sort rows of res: rows are runs of ncol pointers, sorted through a temporary array. */
static void sort_rows(slt_result *res) {
  if (res->ncol <= 0 || res->n == 0) return;
  size_t nrow = res->n / (size_t)res->ncol;
  g_ncol = res->ncol;
  qsort(res->vals, nrow, (size_t)res->ncol * sizeof(char *), cmp_row);
}

static void hash_values(const slt_result *res, char out[33]) {
  slt_md5 m;
  slt_md5_init(&m);
  for (size_t i = 0; i < res->n; i++) {
    slt_md5_update(&m, res->vals[i], strlen(res->vals[i]));
    slt_md5_update(&m, "\n", 1);
  }
  slt_md5_hex(&m, out);
}

static void print_values(const slt_result *res) {
  size_t show = res->n < 200 ? res->n : 200;
  int nc = res->ncol > 0 ? res->ncol : 1;
  for (size_t i = 0; i < show; i += (size_t)nc) {
    fprintf(stderr, "    ");
    for (size_t j = i; j < i + (size_t)nc && j < res->n; j++)
      fprintf(stderr, "%s%s", j > i ? " " : "", res->vals[j]);
    fprintf(stderr, "\n");
  }
  if (show < res->n) fprintf(stderr, "    ... (%zu values in all)\n", res->n);
}

/* Compare res with expected lines [a, b). Returns true on a match; *why says what differed. */
static bool compare(runner *r, const slt_result *res, lines *L, int a, int b, const char **why) {
  int ne = b - a;
  unsigned long long hn;
  char hh[64];
  if (ne == 1 && sscanf(L->v[a], "%llu values hashing to %40s", &hn, hh) == 2) {
    char h[33];
    hash_values(res, h);
    *why = "hash differs";
    return hn == res->n && strcmp(h, hh) == 0;
  }
  if (r->hash_threshold > 0 && res->n > (size_t)r->hash_threshold && ne == 0) {
    *why = "a result over hash-threshold needs a hash line";
    return false;
  }
  *why = "values differ";
  if ((size_t)ne == res->n) {
    bool ok = true;
    for (int i = 0; i < ne && ok; i++) ok = strcmp(L->v[a + i], res->vals[i]) == 0;
    if (ok) return true;
  }
  /* One row per line, values separated by single spaces. */
  if (res->ncol > 1 && (size_t)ne * (size_t)res->ncol == res->n) {
    char line[8192];
    for (int i = 0; i < ne; i++) {
      size_t o = 0;
      for (int j = 0; j < res->ncol; j++) {
        const char *v = res->vals[(size_t)i * (size_t)res->ncol + (size_t)j];
        o += (size_t)snprintf(line + o, sizeof line - o, "%s%s", j ? " " : "", v);
        if (o >= sizeof line) return false;
      }
      if (strcmp(line, L->v[a + i]) != 0) return false;
    }
    return true;
  }
  return false;
}

/* ---- Records ---------------------------------------------------------------------------- */
static void do_statement(runner *r, lines *L, int line, const char *args, int a, int b) {
  char *sql = join(L, a, b);
  char err[ERR_CAP] = "";
  int64_t changes = 0;
  int rc = r->be->exec(r->db, sql, &changes, err, sizeof err);
  while (*args == ' ') args++;
  if (strncmp(args, "ok", 2) == 0) {
    if (rc != 0) {
      fail_head(r, line, "statement should succeed");
      fprintf(stderr, "  SQL: %s  error: %s\n", sql, err);
    }
  } else if (strncmp(args, "count", 5) == 0) {
    long long want = atoll(args + 5);
    if (rc != 0) {
      fail_head(r, line, "statement should succeed");
      fprintf(stderr, "  SQL: %s  error: %s\n", sql, err);
    } else if (changes != want) {
      fail_head(r, line, "wrong change count");
      fprintf(stderr, "  SQL: %s  expected %lld rows changed, got %lld\n", sql, want,
              (long long)changes);
    }
  } else if (strncmp(args, "error", 5) == 0) {
    const char *pat = args + 5;
    while (*pat == ' ') pat++;
    if (rc == 0) {
      fail_head(r, line, "statement should fail");
      fprintf(stderr, "  SQL: %s", sql);
    } else if (*pat && strcmp(r->be->name, "rowan") == 0) {
      regex_t re;
      if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB) != 0) {
        fail_head(r, line, "bad error pattern");
      } else {
        if (regexec(&re, err, 0, NULL, 0) != 0) {
          fail_head(r, line, "error message does not match");
          fprintf(stderr, "  SQL: %s  pattern: %s\n  error: %s\n", sql, pat, err);
        }
        regfree(&re);
      }
    }
  } else {
    fail_head(r, line, "unknown statement kind");
  }
  free(sql);
}

static void do_query(runner *r, lines *L, int line, char *args, int a, int b, int ea, int eb) {
  char *types = strtok(args, " \t");
  char *sortm = types ? strtok(NULL, " \t") : NULL;
  char *label = sortm ? strtok(NULL, " \t") : NULL;
  if (!types) {
    fail_head(r, line, "query without types");
    return;
  }
  char *sql = join(L, a, b);
  char err[ERR_CAP] = "";
  slt_result res = {0};
  if (r->be->query(r->db, sql, types, &res, err, sizeof err) != 0) {
    fail_head(r, line, "query failed");
    fprintf(stderr, "  SQL: %s  error: %s\n", sql, err);
    goto out;
  }
  if ((int)strlen(types) != res.ncol) {
    fail_head(r, line, "wrong number of columns");
    fprintf(stderr, "  SQL: %s  types \"%s\" but %d columns\n", sql, types, res.ncol);
    goto out;
  }
  if (starts_explain(sql))
    for (size_t i = 0; i < res.n; i++) mask_explain(res.vals[i]);
  if (sortm && strcmp(sortm, "rowsort") == 0) {
    sort_rows(&res);
  } else if (sortm && strcmp(sortm, "valuesort") == 0) {
    if (res.n > 0) qsort(res.vals, res.n, sizeof(char *), cmp_str);
  } else if (sortm && strcmp(sortm, "nosort") != 0) {
    fail_head(r, line, "unknown sort mode");
    goto out;
  }
  const char *why = "";
  if (ea >= 0 && !compare(r, &res, L, ea, eb, &why)) {
    fail_head(r, line, why);
    fprintf(stderr, "  SQL: %s  expected:\n", sql);
    for (int i = ea; i < eb; i++) fprintf(stderr, "    %s\n", L->v[i]);
    fprintf(stderr, "  actual (%zu values):\n", res.n);
    print_values(&res);
  }
  if (label) {
    char h[33];
    hash_values(&res, h);
    int k;
    for (k = 0; k < r->n_labels; k++)
      if (strcmp(r->label_name[k], label) == 0) break;
    if (k < r->n_labels) {
      if (strcmp(r->label_hash[k], h) != 0) {
        fail_head(r, line, "result differs from an earlier query with the same label");
        fprintf(stderr, "  SQL: %s  label: %s\n", sql, label);
      }
    } else if (r->n_labels < MAX_LABELS) {
      r->label_name[r->n_labels] = strdup(label);
      memcpy(r->label_hash[r->n_labels++], h, 33);
    }
  }
out:
  slt_result_clear(&res);
  free(sql);
}

static int run_file(runner *r, const char *path) {
  lines L = {0};
  if (read_lines(path, &L) != 0) {
    fprintf(stderr, "%s: cannot read\n", path);
    return 1;
  }
  char err[ERR_CAP] = "";
  r->file = path;
  r->hash_threshold = 0;
  r->n_run = r->n_skipped = r->n_failed = 0;
  if (r->be->open(&r->db, err, sizeof err) != 0) {
    fprintf(stderr, "%s: cannot open a database: %s\n", path, err);
    free(L.v);
    free(L.buf);
    return 1;
  }
  int i = 0;
  while (i < L.n) {
    if (blank(L.v[i]) || L.v[i][0] == '#') {
      i++;
      continue;
    }
    bool skip = false;
    /* Conditions. */
    while (i < L.n && (strncmp(L.v[i], "skipif ", 7) == 0 || strncmp(L.v[i], "onlyif ", 7) == 0)) {
      char eng[32] = "";
      sscanf(L.v[i] + 7, "%31s", eng);
      bool is_me = strcmp(eng, r->be->name) == 0 ||
                   (r->backend && strcmp(r->be->name, "rowan") == 0 && strcmp(eng, r->backend) == 0);
      if (L.v[i][0] == 's' ? is_me : !is_me) skip = true;
      i++;
    }
    if (i >= L.n) break;
    int line = i + 1;
    char *dir = L.v[i];
    /* The record's body: up to the next blank line. */
    int a = i + 1, b = a;
    while (b < L.n && !blank(L.v[b])) b++;
    int next = b;
    if (strncmp(dir, "halt", 4) == 0 && !skip) break;
    if (skip) {
      r->n_skipped++;
      i = next;
      continue;
    }
    if (r->verbose) fprintf(stderr, "%s:%d: %s\n", path, line, dir);
    if (strncmp(dir, "statement", 9) == 0) {
      r->n_run++;
      do_statement(r, &L, line, dir + 9, a, b);
    } else if (strncmp(dir, "query", 5) == 0) {
      r->n_run++;
      int sep = a;
      while (sep < b && strcmp(L.v[sep], "----") != 0) sep++;
      char args[256];
      snprintf(args, sizeof args, "%s", dir + 5);
      if (sep < b)
        do_query(r, &L, line, args, a, sep, sep + 1, b);
      else
        do_query(r, &L, line, args, a, b, -1, -1);
    } else if (strncmp(dir, "hash-threshold", 14) == 0) {
      r->hash_threshold = atoi(dir + 14);
    } else if (strncmp(dir, "control", 7) == 0) {
      char what[32] = "";
      sscanf(dir + 7, "%31s", what);
      int rc = r->be->control(r->db, what, err, sizeof err);
      if (rc < 0) {
        fail_head(r, line, "control failed");
        fprintf(stderr, "  %s\n", err);
      } else if (rc > 0) {
        r->n_skipped++;
      } else {
        r->n_run++;
      }
    } else {
      fail_head(r, line, "unknown directive");
      fprintf(stderr, "  %s\n", dir);
    }
    i = next;
  }
  r->be->close(r->db);
  r->db = NULL;
  for (int k = 0; k < r->n_labels; k++) free(r->label_name[k]);
  r->n_labels = 0;
  printf("%s: %d records run, %d skipped, %d failed (%s)\n", path, r->n_run, r->n_skipped,
         r->n_failed, r->be->name);
  free(L.v);
  free(L.buf);
  return r->n_failed ? 1 : 0;
}

/* MD5 of the RFC 1321 test suite strings; returns the number of mismatches. */
static int md5_selftest(void) {
  static const char *in[] = {"", "a", "abc", "message digest",
                             "12345678901234567890123456789012345678901234567890123456789012345678901234567890"};
  static const char *want[] = {"d41d8cd98f00b204e9800998ecf8427e", "0cc175b9c0f1b6a831c399e269772661",
                               "900150983cd24fb0d6963f7d28e17f72", "f96b697d7cb7938d525a2f31aaf161d0",
                               "57edf4a22be3c955ac49da2e2107b67a"};
  int bad = 0;
  for (int i = 0; i < 5; i++) {
    slt_md5 m;
    char h[33];
    slt_md5_init(&m);
    slt_md5_update(&m, in[i], strlen(in[i]));
    slt_md5_hex(&m, h);
    if (strcmp(h, want[i]) != 0) {
      fprintf(stderr, "md5(\"%s\") = %s, expected %s\n", in[i], h, want[i]);
      bad++;
    }
  }
  return bad;
}

int main(int argc, char **argv) {
  runner r;
  memset(&r, 0, sizeof r);
  r.be = &slt_rowan_backend;
  const char *backend = getenv("ROWAN_BACKEND"); /* read by the engine's session open too */
  if (backend && *backend && strcmp(backend, "local") != 0) r.backend = backend;
  int status = 0, nfiles = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--engine") == 0 && i + 1 < argc) {
      i++;
      if (strcmp(argv[i], "sqlite") == 0) {
        r.be = &slt_sqlite_backend;
      } else if (strcmp(argv[i], "rowan") == 0) {
        r.be = &slt_rowan_backend;
      } else {
        fprintf(stderr, "unknown engine %s\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "-v") == 0) {
      r.verbose = 1;
    } else if (strcmp(argv[i], "--selftest") == 0) {
      nfiles++;
      if (md5_selftest() != 0) status = 1;
      else printf("md5 self-test passed\n");
    } else {
      nfiles++;
      if (run_file(&r, argv[i]) != 0) status = 1;
    }
  }
  if (nfiles == 0) {
    fprintf(stderr, "usage: slt_runner [--engine rowan|sqlite] [-v] [--selftest] FILE.test...\n");
    return 2;
  }
  return status;
}
