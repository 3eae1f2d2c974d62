/*
** bench/bench_data.c: the benchmark's input. Prepares plain CSV files from the gzip'ed
** archive (data/beijing/PRSA_Data_*.csv.gz), optionally repeated with renamed stations for
** the scaled run; parses rows with the one CSV reader every engine's load uses; folds
** query results into digests; and small file-system helpers (directory size, removal).
**
** What it does not: talk to any engine. The CSV reader handles what the archive holds
** (quoted or bare fields, "" escapes, NA for NULL, LF or CRLF) and rejects anything else
** with a line number; it is not a general RFC 4180 reader (cli/import.c is Rowan's).
*/
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

const char *const bench_col_names[BENCH_NDOUBLE] = {
    "PM25", "PM10", "SO2", "NO2", "CO", "O3", "TEMP", "PRES", "DEWP", "RAIN", "WSPM"};

int64_t bench_ms_of(int year, int month, int day, int hour) {
  /* days from civil (Howard Hinnant's algorithm, public domain description) */
  int y = year - (month <= 2);
  int era = (y >= 0 ? y : y - 399) / 400;
  int yoe = y - era * 400;
  int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = (int64_t)era * 146097 + doe - 719468;
  return (days * 24 + hour) * 3600000LL;
}

/* ---- CSV ------------------------------------------------------------------------- */

static int read_whole(const char *path, char **text, size_t *len);

int bench_csv_open(bench_csv *c, const bench_file *f) {
  size_t len = 0;
  memset(c, 0, sizeof *c);
  if (read_whole(f->path, &c->text, &len) != 0) {
    fprintf(stderr, "bench: cannot read %s\n", f->path);
    return -1;
  }
  c->p = c->text;
  c->end = c->text + len;
  c->line = 1;
  const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p)); /* header line */
  c->p = nl ? nl + 1 : c->end;
  return 0;
}

void bench_csv_close(bench_csv *c) {
  free(c->text);
  c->text = NULL;
  c->p = c->end = NULL;
}

/* One field: [*s, *e) its text without quotes; quoted fields with "" are unescaped into
** buf. Advances past the separator. Returns the separator (',' or '\n') or -1. */
static int next_field(bench_csv *c, const char **s, size_t *n, char *buf, size_t cap) {
  const char *p = c->p, *end = c->end;
  if (p < end && *p == '"') {
    size_t k = 0;
    int escaped = 0;
    const char *start = ++p;
    for (;;) {
      if (p >= end) return -1;
      if (*p == '"') {
        if (p + 1 < end && p[1] == '"') {
          escaped = 1;
          if (k < cap) buf[k++] = '"';
          p += 2;
          continue;
        }
        break;
      }
      if (k < cap) buf[k++] = *p;
      p++;
    }
    if (escaped) { *s = buf; *n = k < cap ? k : cap; }
    else { *s = start; *n = (size_t)(p - start); }
    p++; /* closing quote */
  } else {
    const char *start = p;
    while (p < end && *p != ',' && *p != '\n' && *p != '\r') p++;
    *s = start;
    *n = (size_t)(p - start);
  }
  if (p < end && *p == '\r') p++;
  if (p >= end) { c->p = p; return '\n'; }
  if (*p != ',' && *p != '\n') return -1;
  c->p = p + 1;
  return *p;
}

static const double pow10_tab[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
                                   1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/* Parse a decimal number. Up to 15 significant digits without exponent: m / 10^k, which is
** correctly rounded (both exact doubles, one IEEE division), so strtod gives the same
** value; anything else goes to strtod. Returns 0, or -1 if not a number. */
static int parse_double(const char *s, size_t n, double *out) {
  size_t i = 0;
  int neg = 0;
  if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  uint64_t m = 0;
  int digits = 0, frac = 0, seen = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') { m = m * 10 + (uint64_t)(s[i++] - '0'); digits++; seen = 1; }
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      m = m * 10 + (uint64_t)(s[i++] - '0');
      digits++; frac++; seen = 1;
    }
  }
  if (i == n && seen && digits <= 15) {
    double v = (double)m / pow10_tab[frac];
    *out = neg ? -v : v;
    return 0;
  }
  char tmp[64];
  if (n == 0 || n >= sizeof tmp) return -1;
  memcpy(tmp, s, n);
  tmp[n] = 0;
  char *e;
  errno = 0;
  *out = strtod(tmp, &e);
  return (*e || errno) ? -1 : 0;
}

static int parse_int(const char *s, size_t n, int *out) {
  if (n == 0 || n > 9) return -1;
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 0;
}

static int is_na(const char *s, size_t n) { return n == 0 || (n == 2 && s[0] == 'N' && s[1] == 'A'); }

int bench_csv_next(bench_csv *c, bench_row *row) {
  while (c->p < c->end && (*c->p == '\n' || *c->p == '\r')) { c->p++; c->line++; }
  if (c->p >= c->end) return 0;
  c->line++;
  char buf[64];
  const char *s;
  size_t n;
  int ymdh[4] = {0, 0, 0, 0};
  row->null_mask = 0;
  /* No, year, month, day, hour, 6 pollutants, TEMP, PRES, DEWP, RAIN, wd, WSPM, station */
  static const signed char dcol[18] = {-1, -1, -1, -1, -1, BENCH_PM25, BENCH_PM10, BENCH_SO2,
                                       BENCH_NO2, BENCH_CO, BENCH_O3, BENCH_TEMP, BENCH_PRES,
                                       BENCH_DEWP, BENCH_RAIN, -1, BENCH_WSPM, -1};
  for (int f = 0; f < 18; f++) {
    int sep = next_field(c, &s, &n, buf, sizeof buf);
    if (sep < 0 || (f < 17 && sep != ',') || (f == 17 && sep != '\n')) goto bad;
    if (f >= 1 && f <= 4) {
      if (parse_int(s, n, &ymdh[f - 1]) != 0) goto bad;
    } else if (dcol[f] >= 0) {
      if (is_na(s, n)) row->null_mask |= 1u << dcol[f];
      else if (parse_double(s, n, &row->v[(int)dcol[f]]) != 0) goto bad;
    } else if (f == 15) {
      if (is_na(s, n)) { row->null_mask |= BENCH_WD_NULL_BIT; row->wd_len = 0; row->wd[0] = 0; }
      else {
        if (n > 3) goto bad;
        memcpy(row->wd, s, n);
        row->wd[n] = 0;
        row->wd_len = (uint32_t)n;
      }
    } else if (f == 17) {
      if (n == 0 || n >= BENCH_MAX_STATION) goto bad;
      memcpy(row->station, s, n);
      row->station[n] = 0;
      row->station_len = (uint32_t)n;
    }
  }
  row->ts_ms = bench_ms_of(ymdh[0], ymdh[1], ymdh[2], ymdh[3]);
  return 1;
bad:
  fprintf(stderr, "bench: malformed CSV row at line %lld\n", (long long)c->line);
  return -1;
}

/* Bytes that end a bare field: ',', CR, LF and the NUL after the text. */
static const unsigned char field_end[256] = {[0] = 1, [','] = 1, ['\n'] = 1, ['\r'] = 1};

int bench_csv_fields(bench_csv *c, const char **s, size_t *n, char (*buf)[64]) {
  while (c->p < c->end && (*c->p == '\n' || *c->p == '\r')) { c->p++; c->line++; }
  if (c->p >= c->end) return 0;
  c->line++;
  for (int f = 0; f < BENCH_CSV_FIELDS; f++) {
    const char *p = c->p;
    int sep;
    if (*p != '"') { /* bare field: the common case, inline (the text ends with a NUL) */
      const char *start = p;
      while (!field_end[(unsigned char)*p]) p++;
      if (p > c->end) p = c->end;
      s[f] = start;
      n[f] = (size_t)(p - start);
      if (p < c->end && *p == '\r') p++;
      if (p >= c->end) { c->p = p; sep = '\n'; }
      else if (*p == ',' || *p == '\n') { c->p = p + 1; sep = *p; }
      else sep = -1;
    } else {
      sep = next_field(c, &s[f], &n[f], buf[f], sizeof buf[f]);
    }
    if (sep < 0 || (f < BENCH_CSV_FIELDS - 1 && sep != ',') ||
        (f == BENCH_CSV_FIELDS - 1 && sep != '\n')) {
      fprintf(stderr, "bench: malformed CSV row at line %lld\n", (long long)c->line);
      return -1;
    }
  }
  return 1;
}

/* ---- digests ---------------------------------------------------------------------- */

void bench_digest_row(bench_digest *d, const bench_row *r) {
  d->rows++;
  double s = (double)(r->ts_ms / 3600000LL);
  for (int i = 0; i < BENCH_NDOUBLE; i++)
    if (!(r->null_mask & (1u << i))) s += r->v[i];
  if (!(r->null_mask & BENCH_WD_NULL_BIT) && r->wd_len) s += (unsigned char)r->wd[0];
  d->sum += s;
}

int bench_digest_equal(const bench_digest *a, const bench_digest *b) {
  if (a->rows != b->rows) return 0;
  double diff = fabs(a->sum - b->sum), mag = fmax(fabs(a->sum), fabs(b->sum));
  return diff <= 1e-9 * mag + 1e-9;
}

/* ---- preparing the input ------------------------------------------------------------ */

static int write_copy(const char *gz_path, const char *out_path, int copy) {
  gzFile g = gzopen(gz_path, "rb");
  if (!g) { fprintf(stderr, "bench: cannot open %s\n", gz_path); return -1; }
  FILE *o = fopen(out_path, "wb");
  if (!o) { fprintf(stderr, "bench: cannot create %s: %s\n", out_path, strerror(errno)); gzclose(g); return -1; }
  char line[1024];
  int first = 1, rc = 0;
  while (gzgets(g, line, sizeof line)) {
    size_t n = strlen(line);
    if (copy == 0 || first) { fwrite(line, 1, n, o); first = 0; continue; }
    int crlf = n >= 2 && line[n - 2] == '\r';
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    char *comma = strrchr(line, ',');
    if (!comma || n < 2 || line[n - 1] != '"' || comma[1] != '"') { rc = -1; break; }
    line[n - 1] = 0; /* drop the closing quote of the station */
    /* keep the archive's line ending: a reader that takes it from the header (DuckDB's)
    ** reads a file of mixed endings as one line */
    fprintf(o, "%s_%d\"%s", line, copy, crlf ? "\r\n" : "\n");
  }
  gzclose(g);
  if (fclose(o) != 0 || rc) { fprintf(stderr, "bench: cannot write %s\n", out_path); return -1; }
  return 0;
}

static int read_whole(const char *path, char **text, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return -1;
  struct stat st;
  if (fstat(fileno(fp), &st) != 0) { fclose(fp); return -1; }
  *len = (size_t)st.st_size;
  *text = malloc(*len + 1);
  if (!*text || fread(*text, 1, *len, fp) != *len) {
    fclose(fp);
    free(*text);
    *text = NULL;
    return -1;
  }
  (*text)[*len] = 0;
  fclose(fp);
  return 0;
}

int bench_input_prepare(const char *data_dir, const char *work_dir, int copies,
                        bench_input *in) {
  memset(in, 0, sizeof *in);
  in->copies = copies;
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/PRSA_Data_*.csv.gz", data_dir);
  glob_t gl;
  if (glob(pat, 0, NULL, &gl) != 0 || gl.gl_pathc == 0) {
    fprintf(stderr, "bench: no archive files match %s\n", pat);
    return -1;
  }
  mkdir(work_dir, 0755);
  in->dir = strdup(work_dir);
  in->files = calloc(gl.gl_pathc * (size_t)copies, sizeof *in->files);
  in->stations = calloc(gl.gl_pathc * (size_t)copies, sizeof *in->stations);
  if (!in->files || !in->stations) { globfree(&gl); return -1; }
  in->ts_min = INT64_MAX;
  in->ts_max = INT64_MIN;
  int rc = 0;
  for (int k = 0; k < copies && rc == 0; k++) {
    for (size_t i = 0; i < gl.gl_pathc && rc == 0; i++) {
      bench_file *f = &in->files[in->n_files++];
      char out[4096];
      snprintf(out, sizeof out, "%s/input_%d_%02zu.csv", work_dir, k, i);
      f->path = strdup(out);
      struct stat st;
      if (stat(out, &st) != 0 && write_copy(gl.gl_pathv[i], out, k) != 0) rc = -1;
      if (rc != 0) break;
      bench_csv c;
      bench_row r;
      int got, station_seen = 0;
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      if (bench_csv_open(&c, f) != 0) { rc = -1; break; }
      while ((got = bench_csv_next(&c, &r)) == 1) {
        in->rows++;
        if (r.ts_ms < lo) lo = r.ts_ms;
        if (r.ts_ms > hi) hi = r.ts_ms;
        if (!station_seen) {
          memcpy(in->stations[in->n_stations++], r.station, r.station_len + 1);
          station_seen = 1;
        } else if (strcmp(in->stations[in->n_stations - 1], r.station) != 0) {
          fprintf(stderr, "bench: %s holds more than one station\n", out);
          rc = -1;
          break;
        }
      }
      bench_csv_close(&c);
      if (got < 0) rc = -1;
      /* every station covers the same hours in the archive; lookups rely on it */
      if (rc == 0 && in->ts_min != INT64_MAX && (lo != in->ts_min || hi != in->ts_max)) {
        fprintf(stderr, "bench: %s covers other hours than the first file\n", out);
        rc = -1;
      }
      in->ts_min = lo;
      in->ts_max = hi;
    }
  }
  globfree(&gl);
  return rc;
}

void bench_input_free(bench_input *in) {
  for (int i = 0; i < in->n_files; i++) free(in->files[i].path);
  free(in->files);
  free(in->dir);
  free(in->stations);
  memset(in, 0, sizeof *in);
}

/* ---- the synthetic set ---------------------------------------------------------- */

#define SYNTH_SHIFTS 10                /* 4-year shifts per station group: 40 years */
#define FOUR_YEARS_MS (1461LL * 86400000LL) /* 2013-2057 has a leap day every 4 years */

int bench_input_synth(const char *data_dir, const char *work_dir, int64_t min_rows,
                      bench_input *in) {
  if (bench_input_prepare(data_dir, work_dir, 1, in) != 0) return -1;
  int64_t base = in->rows, copies = (min_rows + base - 1) / base;
  if (copies < 1) copies = 1;
  int shifts = copies < SYNTH_SHIFTS ? (int)copies : SYNTH_SHIFTS;
  int groups = (int)((copies + shifts - 1) / shifts), n = in->n_stations;
  char (*names)[BENCH_MAX_STATION] = calloc((size_t)groups * (size_t)n, sizeof *names);
  if (!names) return -1;
  for (int g = 0; g < groups; g++)
    for (int i = 0; i < n; i++) {
      char name[BENCH_MAX_STATION + 16];
      int len = snprintf(name, sizeof name, "%s_G%d", in->stations[i], g);
      if (len < 0 || len >= BENCH_MAX_STATION) { free(names); return -1; }
      memcpy(names[g * n + i], name, (size_t)len + 1);
    }
  free(in->stations);
  in->stations = names;
  in->n_stations = groups * n;
  in->synth_groups = groups;
  in->synth_shifts = shifts;
  in->copies = groups * shifts;
  in->rows = base * in->copies;
  in->ts_max += (int64_t)(shifts - 1) * FOUR_YEARS_MS;
  return 0;
}

/* ---- files -------------------------------------------------------------------------- */

uint64_t bench_dir_bytes(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  uint64_t total = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) total += bench_dir_bytes(p);
    else if (S_ISREG(st.st_mode)) total += (uint64_t)st.st_size;
  }
  closedir(d);
  return total;
}

int bench_rmtree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT ? 0 : -1;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) rc |= bench_rmtree(p);
    else if (unlink(p) != 0) rc = -1;
  }
  closedir(d);
  if (rmdir(dir) != 0) rc = -1;
  return rc;
}
