/*
** exec/tz.c: time zones read from the system's tz database (contract in exec/tz.h).
**
** A TZif file (RFC 8536) is a header ("TZif", a version byte, six counts), a data block, and
** for version 2 and later a second header and data block with 64-bit times followed by a
** footer: a newline, a POSIX TZ string ("CET-1CEST,M3.5.0,M10.5.0/3"), a newline. The offset
** at an instant is the local time type of the last transition at or before it (type 0
** before the first); past the last transition the footer's rule decides. Leap-second
** records are skipped (the "right/" zones are not meant for civil time). Everything read is
** checked against the file's length: a damaged or foreign file is an error, never a read
** past its end.
**
** A POSIX TZ string: std offset [dst [offset] [,start[/time],end[/time]]], the offsets
** positive west of UTC (so "CET-1" is one hour east), a name either letters or <+0330>;
** rules Jn (day 1..365, February 29 never counted), n (day 0..365) or Mm.w.d (day d of week w
** of month m, w 5 the last), times -167..167 hours (RFC 8536's extension), 02:00 by default.
**
** Not here: the SQL functions (exec/func_tz.c, exec/func_fmt.c).
*/
#include "exec/tz.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/value.h"

#define MAX_FILE (1u << 20)   /* a TZif file over this is not one */
#define DEFAULT_DIR "/usr/share/zoneinfo"

typedef struct rule {
  char kind;        /* 'J', 'n' (zero-based day) or 'M' */
  int a, b, c;      /* J: day; n: day; M: month, week, weekday */
  int32_t time;     /* seconds after local midnight */
} rule;

struct exec_tz {
  char *name;               /* as looked up */
  bool fixed;               /* a fixed offset: only std_off counts */
  int64_t *trans;           /* transition instants, ascending */
  uint8_t *trans_type;      /* the local time type from each */
  uint32_t n_trans;         /* count */
  int32_t *type_off;        /* each local time type's offset (east positive) */
  uint32_t n_types;         /* count (>= 1 unless fixed) */
  bool has_rule;            /* the footer's rule applies past the last transition */
  bool has_dst;             /* the rule has daylight time */
  int32_t std_off, dst_off; /* the rule's offsets (east positive) */
  rule start, end;          /* the rule's changes (start: in standard time, end: in DST) */
  struct exec_tz *next;     /* the cache's list */
};

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static exec_tz *cache; /* every zone found; never freed */

/* ---- POSIX TZ strings ----------------------------------------------------------------- */

/* [+-]hh[:mm[:ss]] into seconds; hours up to max_h. NULL when malformed. */
static const char *hms(const char *s, int max_h, int32_t *out) {
  int sign = 1;
  if (*s == '+' || *s == '-') sign = *s++ == '-' ? -1 : 1;
  if (*s < '0' || *s > '9') return NULL;
  int h = 0, m = 0, sec = 0;
  while (*s >= '0' && *s <= '9' && h <= max_h) h = h * 10 + (*s++ - '0');
  if (h > max_h) return NULL;
  if (*s == ':') {
    s++;
    if (s[0] < '0' || s[0] > '5' || s[1] < '0' || s[1] > '9') return NULL;
    m = (s[0] - '0') * 10 + (s[1] - '0');
    s += 2;
    if (*s == ':') {
      s++;
      if (s[0] < '0' || s[0] > '5' || s[1] < '0' || s[1] > '9') return NULL;
      sec = (s[0] - '0') * 10 + (s[1] - '0');
      s += 2;
    }
  }
  *out = sign * (h * 3600 + m * 60 + sec);
  return s;
}

static const char *zone_name(const char *s) {
  if (*s == '<') {
    const char *e = strchr(s, '>');
    return e && e - s >= 4 ? e + 1 : NULL;
  }
  const char *p = s;
  while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) p++;
  return p - s >= 3 ? p : NULL;
}

static const char *num(const char *s, int lo, int hi, int *out) {
  if (*s < '0' || *s > '9') return NULL;
  int v = 0;
  while (*s >= '0' && *s <= '9' && v <= hi) v = v * 10 + (*s++ - '0');
  if (v < lo || v > hi) return NULL;
  *out = v;
  return s;
}

static const char *parse_rule(const char *s, rule *r) {
  if (*s == 'J') {
    r->kind = 'J';
    s = num(s + 1, 1, 365, &r->a);
  } else if (*s == 'M') {
    r->kind = 'M';
    if ((s = num(s + 1, 1, 12, &r->a)) && *s == '.' && (s = num(s + 1, 1, 5, &r->b)) &&
        *s == '.')
      s = num(s + 1, 0, 6, &r->c);
    else s = NULL;
  } else {
    r->kind = 'n';
    s = num(s, 0, 365, &r->a);
  }
  r->time = 7200;
  if (s && *s == '/') s = hms(s + 1, 167, &r->time);
  return s;
}

/* Parse the footer's TZ string into z. false when malformed. */
static bool parse_posix(const char *s, exec_tz *z) {
  int32_t off;
  if (!(s = zone_name(s)) || !(s = hms(s, 24, &off))) return false;
  z->std_off = -off;
  z->has_rule = true;
  if (!*s) return true;
  if (!(s = zone_name(s))) return false;
  z->has_dst = true;
  z->dst_off = z->std_off + 3600;
  if (*s && *s != ',') {
    if (!(s = hms(s, 24, &off))) return false;
    z->dst_off = -off;
  }
  if (!*s) { /* POSIX's default rule (the US rules since 2007, as glibc) */
    z->start = (rule){'M', 3, 2, 0, 7200};
    z->end = (rule){'M', 11, 1, 0, 7200};
    return true;
  }
  if (*s != ',' || !(s = parse_rule(s + 1, &z->start)) || *s != ',' ||
      !(s = parse_rule(s + 1, &z->end)))
    return false;
  return *s == 0;
}

/* Seconds since the epoch of local midnight plus the rule's time, in year y. */
static int64_t rule_local(const rule *r, int64_t y) {
  int64_t jan1 = cat_days_from_civil(y, 1, 1), day;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (r->kind == 'J') {
    day = jan1 + r->a - 1 + (leap && r->a >= 60 ? 1 : 0);
  } else if (r->kind == 'n') {
    day = jan1 + r->a;
  } else {
    int64_t first = cat_days_from_civil(y, r->a, 1);
    int64_t next = r->a == 12 ? cat_days_from_civil(y + 1, 1, 1) : cat_days_from_civil(y, r->a + 1, 1);
    int wd = (int)(((first % 7) + 7 + 4) % 7); /* 1970-01-01 was a Thursday; 0 = Sunday */
    day = first + (r->c - wd + 7) % 7 + 7 * (r->b - 1);
    while (day >= next) day -= 7;
  }
  return day * 86400 + r->time;
}

static int32_t rule_offset(const exec_tz *z, int64_t t) {
  if (!z->has_dst) return z->std_off;
  int64_t days = (t + z->std_off) / 86400 - ((t + z->std_off) % 86400 < 0);
  int64_t y;
  int m, d;
  cat_civil_from_days(days, &y, &m, &d);
  int64_t start = rule_local(&z->start, y) - z->std_off;
  int64_t end = rule_local(&z->end, y) - z->dst_off;
  if (start < end) return t >= start && t < end ? z->dst_off : z->std_off;
  return t >= end && t < start ? z->std_off : z->dst_off;
}

/* ---- TZif ------------------------------------------------------------------------------ */

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Parse a TZif file into z. NULL, or what is wrong. */
static const char *parse_tzif(const uint8_t *p, size_t n, exec_tz *z) {
  if (n < 44 || memcmp(p, "TZif", 4) != 0) return "not a TZif file";
  int version = p[4];
  const uint8_t *h = p;
  size_t off = 0;
  int tsize = 4;
  for (int pass = 0; pass < 2; pass++) {
    if (n - off < 44 || memcmp(h, "TZif", 4) != 0) return "bad header";
    uint32_t isut = be32(h + 20), isstd = be32(h + 24), leap = be32(h + 28),
             timecnt = be32(h + 32), typecnt = be32(h + 36), charcnt = be32(h + 40);
    if (typecnt == 0 || typecnt > 256 || timecnt > 100000 || leap > 100000 || charcnt > 100000 ||
        isut > typecnt || isstd > typecnt)
      return "bad counts";
    uint64_t size = (uint64_t)timecnt * (uint64_t)(tsize + 1) + typecnt * 6ull + charcnt +
                    leap * (uint64_t)(tsize + 4) + isstd + isut;
    if (size > n - off - 44) return "cut short";
    if (pass == 0 && version >= '2') { /* skip to the 64-bit block */
      off += 44 + size;
      h = p + off;
      tsize = 8;
      continue;
    }
    const uint8_t *d = h + 44;
    z->trans = malloc((timecnt ? timecnt : 1) * sizeof *z->trans);
    z->trans_type = malloc(timecnt ? timecnt : 1);
    z->type_off = malloc(typecnt * sizeof *z->type_off);
    if (!z->trans || !z->trans_type || !z->type_off) return "out of memory";
    for (uint32_t i = 0; i < timecnt; i++) {
      int64_t t = tsize == 8 ? (int64_t)((uint64_t)be32(d + 8 * i) << 32 | be32(d + 8 * i + 4))
                             : (int64_t)(int32_t)be32(d + 4 * i);
      if (i && t <= z->trans[i - 1]) return "transitions out of order";
      z->trans[i] = t;
    }
    d += (size_t)timecnt * (size_t)tsize;
    for (uint32_t i = 0; i < timecnt; i++)
      if ((z->trans_type[i] = d[i]) >= typecnt) return "bad local time type";
    d += timecnt;
    for (uint32_t i = 0; i < typecnt; i++) {
      int32_t o = (int32_t)be32(d + 6 * i);
      if (o < -25 * 3600 || o > 26 * 3600) return "offset out of range";
      z->type_off[i] = o;
    }
    z->n_trans = timecnt;
    z->n_types = typecnt;
    if (tsize == 8) { /* the footer */
      const uint8_t *f = h + 44 + size, *end = p + n;
      if (f < end && *f == '\n') {
        const uint8_t *nl = memchr(f + 1, '\n', (size_t)(end - f - 1));
        if (nl && nl > f + 1) {
          char tzs[128];
          size_t k = (size_t)(nl - f - 1);
          if (k >= sizeof tzs) return "footer too long";
          memcpy(tzs, f + 1, k);
          tzs[k] = 0;
          if (!parse_posix(tzs, z)) return "bad footer";
        }
      }
    }
    return NULL;
  }
  return "bad header";
}

/* ---- lookup ----------------------------------------------------------------------------- */

static void zone_free(exec_tz *z) {
  if (!z) return;
  free(z->name);
  free(z->trans);
  free(z->trans_type);
  free(z->type_off);
  free(z);
}

/* "+hh:mm", "-hh:mm", "+hhmm", "+hh": true with *off (east positive). */
static bool fixed_offset(const char *s, size_t n, int32_t *off) {
  if (n < 3 || (s[0] != '+' && s[0] != '-')) return false;
  int dig[4], k = 0;
  for (size_t i = 1; i < n; i++) {
    if (s[i] == ':' && i == 3 && n == 6) continue;
    if (s[i] < '0' || s[i] > '9' || k == 4) return false;
    dig[k++] = s[i] - '0';
  }
  if (k != 2 && k != 4) return false;
  int h = dig[0] * 10 + dig[1], m = k == 4 ? dig[2] * 10 + dig[3] : 0;
  if (h > 18 || m > 59 || (h == 18 && m)) return false;
  *off = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
  return true;
}

/* A name the database may hold: letters, digits, '_', '-', '+', '/' between parts, no "..". */
static bool safe_name(const char *s, size_t n) {
  if (n == 0 || n > 200 || s[0] == '/' || s[n - 1] == '/') return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '+' || c == '/' || c == '.';
    if (!ok || (c == '.' && i + 1 < n && s[i + 1] == '.') || (c == '/' && s[i + 1] == '/'))
      return false;
  }
  return true;
}

/* Make zone `name` (not cached yet). NULL with msg. */
static exec_tz *load(const char *name, size_t len, char *msg, size_t cap) {
  exec_tz *z = calloc(1, sizeof *z);
  if (!z || !(z->name = strndup(name, len))) {
    zone_free(z);
    snprintf(msg, cap, "out of memory");
    return NULL;
  }
  int32_t off;
  if (fixed_offset(name, len, &off)) {
    z->fixed = true;
    z->std_off = off;
    return z;
  }
  if (!safe_name(name, len)) {
    snprintf(msg, cap, "unknown time zone '%.*s'", (int)(len > 64 ? 64 : len), name);
    zone_free(z);
    return NULL;
  }
  const char *dir = getenv("TZDIR");
  if (!dir || !*dir) dir = DEFAULT_DIR;
  char path[512];
  snprintf(path, sizeof path, "%s/%.*s", dir, (int)len, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    FILE *d = fopen(dir, "r");
    if (d) fclose(d);
    snprintf(msg, cap, d ? "unknown time zone '%.*s' (no such zone in %s)"
                         : "unknown time zone '%.*s': no time zone database in %s (install "
                           "the tzdata package, or set TZDIR)",
             (int)(len > 64 ? 64 : len), name, dir);
    zone_free(z);
    return NULL;
  }
  uint8_t *buf = malloc(MAX_FILE);
  size_t n = buf ? fread(buf, 1, MAX_FILE, f) : 0;
  fclose(f);
  const char *why = !buf ? "out of memory" : n == MAX_FILE ? "file too large" : parse_tzif(buf, n, z);
  free(buf);
  if (why) {
    snprintf(msg, cap, "time zone '%.*s': %s: %s", (int)(len > 64 ? 64 : len), name, path, why);
    zone_free(z);
    return NULL;
  }
  return z;
}

int exec_tz_find(const char *name, size_t len, const exec_tz **out, char *msg, size_t cap) {
  pthread_mutex_lock(&cache_mu);
  for (exec_tz *z = cache; z; z = z->next)
    if (strlen(z->name) == len && memcmp(z->name, name, len) == 0) {
      pthread_mutex_unlock(&cache_mu);
      *out = z;
      return 0;
    }
  pthread_mutex_unlock(&cache_mu);
  exec_tz *z = load(name, len, msg, cap);
  if (!z) return -1;
  pthread_mutex_lock(&cache_mu);
  for (exec_tz *y = cache; y; y = y->next) /* another thread made it meanwhile */
    if (strcmp(y->name, z->name) == 0) {
      pthread_mutex_unlock(&cache_mu);
      zone_free(z);
      *out = y;
      return 0;
    }
  z->next = cache;
  cache = z;
  pthread_mutex_unlock(&cache_mu);
  *out = z;
  return 0;
}

int32_t exec_tz_offset(const exec_tz *z, int64_t t) {
  if (z->fixed) return z->std_off;
  if (z->n_trans == 0) return z->has_rule ? rule_offset(z, t) : z->type_off[0];
  if (t < z->trans[0]) return z->type_off[0];
  if (t > z->trans[z->n_trans - 1] && z->has_rule) return rule_offset(z, t);
  uint32_t lo = 0, hi = z->n_trans - 1; /* the last transition at or before t */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (z->trans[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return z->type_off[z->trans_type[lo]];
}

int64_t exec_tz_local_to_utc(const exec_tz *z, int64_t local) {
  /* The offsets a day before and a day after: one of them holds at `local` unless it falls
  ** in a gap. */
  int32_t before = exec_tz_offset(z, local - 86400), after = exec_tz_offset(z, local + 86400);
  int64_t a = local - before, b = local - after;
  bool a_ok = exec_tz_offset(z, a) == before, b_ok = exec_tz_offset(z, b) == after;
  if (a_ok && b_ok) return a < b ? a : b; /* an overlap: the earlier instant */
  if (b_ok) return b;
  return a; /* a_ok, or a gap: the offset before it, so the time moves on past the gap */
}
