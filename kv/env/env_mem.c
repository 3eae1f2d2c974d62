/*
** kv/env/env_mem.c: an in-memory kv_env for tests (kv/env/env_mem.h), with fault injection and a
** simulated power cut.
**
** Model. A file's bytes live in an inode. Each inode remembers its durable content: the
** first `synced_len` bytes, or, after a truncate cut into synced bytes, a full copy
** (`shadow`) of what was durable. The namespace is two maps from normalized path to inode:
** `cur` (what the running process sees) and `durable` (what survives a power cut). sync_dir
** copies a directory's `cur` entries into `durable`; a power cut reverts every inode to its
** durable content and `cur` to `durable`. Handles point at inodes (reference counted), so a
** renamed or removed file stays readable through an open handle, as in POSIX. Directories
** themselves are a plain set and are durable as soon as mkdir returns (a simplification: the
** store never depends on a directory's own durability beyond its entries).
**
** Faults (one per operation kind) fire once on the Nth matching operation; crashed mode
** fails everything but close/unlock. One mutex guards the whole env; list() collects names
** under it and calls the callback after releasing it, so callbacks may use the env.
** Hard links (link) share an inode, as in POSIX. It does not model file permissions or
** sparse files.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kv/env/env_mem.h"
#include "kv/util/status.h"

#define MEM_PATH_MAX 4096
#define N_FAULT_OPS 6

typedef struct inode {
  uint8_t *data;             /* current bytes */
  size_t len, cap;           /* bytes used and allocated in data */
  size_t synced_len;         /* durable prefix length (when shadow is NULL) */
  uint8_t *shadow;           /* durable content after a truncate cut synced bytes, or NULL */
  size_t shadow_len;         /* bytes in shadow */
  int refs;                  /* map entries plus open handles */
  struct inode *prev, *next; /* list of all live inodes of the env */
} inode;

typedef struct entry {
  char *path;                /* normalized path (owned) */
  inode *ino;                /* the file (one reference) */
} entry;

typedef struct entry_set {
  entry *v;                  /* entries, unordered */
  size_t n, cap;             /* used and allocated */
} entry_set;

typedef struct str_set {
  char **v;                  /* owned strings, unordered */
  size_t n, cap;             /* used and allocated */
} str_set;

typedef struct fault {
  int armed;                 /* 1 while waiting to fire */
  uint64_t nth;              /* matching operations left until it fires (1 = next) */
  char *substr;              /* path filter (owned) or NULL for any path */
  int kind;                  /* enum kv_fault_kind */
  size_t torn_bytes;         /* KV_FAULT_TORN: bytes that land */
} fault;

typedef struct mem_env {
  kv_env base;               /* the vtable; must be first */
  pthread_mutex_t mu;        /* guards everything below */
  entry_set cur;             /* the namespace the process sees */
  entry_set durable;         /* the namespace a power cut falls back to */
  str_set dirs;              /* existing directories (normalized) */
  str_set locks;             /* paths currently locked */
  inode *inodes;             /* all live inodes */
  fault faults[N_FAULT_OPS]; /* armed faults by enum kv_fault_op */
  bool crashed;              /* every operation fails until power cut / recover */
  int64_t now;               /* fixed clock in ms, or 0 for the real clock */
  kv_env_mem_stats stats;    /* counters since creation */
} mem_env;

struct kv_file {
  mem_env *env;              /* owning env */
  inode *ino;                /* the file (one reference) */
  char *path;                /* normalized path it was opened under */
  int writable;              /* opened with KV_OPEN_WRITE */
  int is_lock;               /* made by lock() */
};

/* ---- paths ---- */

/* Normalize `in` into out (MEM_PATH_MAX): collapse "//", drop "./" parts and a trailing '/';
** "" becomes ".". Returns 0, or -1 if too long. */
static int norm(const char *in, char *out) {
  size_t o = 0;
  size_t n = strlen(in);
  if (n >= MEM_PATH_MAX) return -1;
  size_t i = 0;
  if (in[0] == '/') { out[o++] = '/'; i = 1; }
  while (i < n) {
    size_t j = i;
    while (j < n && in[j] != '/') j++;
    size_t seg = j - i;
    if (seg > 0 && !(seg == 1 && in[i] == '.')) {
      if (o > 0 && out[o - 1] != '/') out[o++] = '/';
      memcpy(out + o, in + i, seg);
      o += seg;
    }
    i = j + 1;
  }
  if (o == 0) out[o++] = '.';
  out[o] = 0;
  return 0;
}

/* The parent directory of normalized path p into out. */
static void parent_of(const char *p, char *out) {
  const char *slash = strrchr(p, '/');
  if (!slash) { strcpy(out, "."); return; }
  if (slash == p) { strcpy(out, "/"); return; }
  memcpy(out, p, (size_t)(slash - p));
  out[slash - p] = 0;
}

static const char *base_of(const char *p) {
  const char *slash = strrchr(p, '/');
  return slash ? slash + 1 : p;
}

static int is_parent(const char *dir, const char *p) {
  char par[MEM_PATH_MAX];
  parent_of(p, par);
  return strcmp(par, dir) == 0;
}

/* ---- sets ---- */

static long str_find(const str_set *s, const char *v) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->v[i], v) == 0) return (long)i;
  return -1;
}

static int str_add(str_set *s, const char *v) {
  if (s->n == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 16;
    char **nv = realloc(s->v, nc * sizeof *nv);
    if (!nv) return -1;
    s->v = nv;
    s->cap = nc;
  }
  if (!(s->v[s->n] = strdup(v))) return -1;
  s->n++;
  return 0;
}

static void str_del(str_set *s, size_t i) {
  free(s->v[i]);
  s->v[i] = s->v[--s->n];
}

static int dir_exists(mem_env *e, const char *p) {
  if (strcmp(p, ".") == 0 || strcmp(p, "/") == 0) return 1;
  return str_find(&e->dirs, p) >= 0;
}

static long ent_find(const entry_set *s, const char *p) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->v[i].path, p) == 0) return (long)i;
  return -1;
}

static void ino_unref(mem_env *e, inode *ino) {
  if (--ino->refs > 0) return;
  if (ino->prev) ino->prev->next = ino->next; else e->inodes = ino->next;
  if (ino->next) ino->next->prev = ino->prev;
  free(ino->data);
  free(ino->shadow);
  free(ino);
}

/* Point p at ino in set s (replacing what was there). Returns 0 or -1 (out of memory). */
static int ent_set(mem_env *e, entry_set *s, const char *p, inode *ino) {
  long i = ent_find(s, p);
  ino->refs++;
  if (i >= 0) {
    ino_unref(e, s->v[i].ino);
    s->v[i].ino = ino;
    return 0;
  }
  if (s->n == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 16;
    entry *nv = realloc(s->v, nc * sizeof *nv);
    if (!nv) { ino->refs--; return -1; }
    s->v = nv;
    s->cap = nc;
  }
  if (!(s->v[s->n].path = strdup(p))) { ino->refs--; return -1; }
  s->v[s->n].ino = ino;
  s->n++;
  return 0;
}

static void ent_del(mem_env *e, entry_set *s, size_t i) {
  free(s->v[i].path);
  ino_unref(e, s->v[i].ino);
  s->v[i] = s->v[--s->n];
}

static inode *ino_new(mem_env *e) {
  inode *ino = calloc(1, sizeof *ino);
  if (!ino) return NULL;
  ino->next = e->inodes;
  if (e->inodes) e->inodes->prev = ino;
  e->inodes = ino;
  return ino;
}

static int ino_reserve(inode *ino, size_t need) {
  if (need <= ino->cap) return 0;
  size_t nc = ino->cap ? ino->cap : 256;
  while (nc < need) nc *= 2;
  uint8_t *nd = realloc(ino->data, nc);
  if (!nd) return -1;
  ino->data = nd;
  ino->cap = nc;
  return 0;
}

/* Cut or extend (with zeros) the current content, keeping the durable content intact. */
static int ino_resize(inode *ino, size_t size) {
  if (size < ino->len && !ino->shadow && size < ino->synced_len) {
    ino->shadow = malloc(ino->synced_len ? ino->synced_len : 1);
    if (!ino->shadow) return -1;
    memcpy(ino->shadow, ino->data, ino->synced_len);
    ino->shadow_len = ino->synced_len;
  }
  if (size > ino->len) {
    if (ino_reserve(ino, size) < 0) return -1;
    memset(ino->data + ino->len, 0, size - ino->len);
  }
  ino->len = size;
  return 0;
}

static void ino_sync(inode *ino) {
  free(ino->shadow);
  ino->shadow = NULL;
  ino->shadow_len = 0;
  ino->synced_len = ino->len;
}

static void ino_revert(inode *ino) {
  if (ino->shadow) {
    /* shadow_len <= cap: the shadow was copied from data, which never shrinks its buffer */
    memcpy(ino->data, ino->shadow, ino->shadow_len);
    ino->len = ino->shadow_len;
  } else {
    ino->len = ino->synced_len;
  }
  ino_sync(ino);
}

/* ---- faults and guards (REQUIRES: e->mu held) ---- */

/* Does an armed fault of `op` fire for this path? Returns its kind, or -1. */
static int fault_fire(mem_env *e, int op, const char *p1, const char *p2, size_t *torn) {
  fault *f = &e->faults[op];
  if (!f->armed) return -1;
  if (f->substr && !strstr(p1, f->substr) && !(p2 && strstr(p2, f->substr))) return -1;
  if (--f->nth > 0) return -1;
  f->armed = 0;
  if (torn) *torn = f->torn_bytes;
  return f->kind;
}

static int fault_status(int kind, const char *op, const char *path) {
  if (kind == KV_FAULT_ENOSPC)
    return kv_error(KV_ERR_NOSPC, "%s %s: No space left on device (injected)", op, path);
  return kv_error(KV_ERR_IO, "%s %s: Input/output error (injected)", op, path);
}

static int crashed_status(const char *op, const char *path) {
  return kv_error(KV_ERR_IO, "%s %s: crashed (simulated)", op, path);
}

#define ME(env) ((mem_env *)(env))

/* Normalize or fail with KV_ERR_INVALID. */
#define NORM_OR_FAIL(in, out, op)                                                        \
  do {                                                                                   \
    if (norm((in), (out)) < 0) return kv_error(KV_ERR_INVALID, "%s: path too long", op); \
  } while (0)

/* ---- the vtable ---- */

static int m_open(kv_env *env, const char *path, int flags, kv_file **out) {
  mem_env *e = ME(env);
  char p[MEM_PATH_MAX], par[MEM_PATH_MAX];
  *out = NULL;
  NORM_OR_FAIL(path, p, "open");
  kv_file *f = calloc(1, sizeof *f);
  char *pcopy = strdup(p);
  if (!f || !pcopy) { free(f); free(pcopy); return kv_error(KV_ERR_NOMEM, "open %s: out of memory", path); }
  int rc = KV_OK, kind;
  pthread_mutex_lock(&e->mu);
  long i = ent_find(&e->cur, p);
  parent_of(p, par);
  if (e->crashed) {
    rc = crashed_status("open", path);
  } else if (dir_exists(e, p)) {
    rc = kv_error(KV_ERR_IO, "open %s: Is a directory", path);
  } else if (!(flags & KV_OPEN_WRITE)) {
    if (i < 0) rc = kv_error(KV_ERR_NOTFOUND, "open %s: No such file or directory", path);
  } else if ((kind = fault_fire(e, KV_FAULT_OPEN, p, NULL, NULL)) >= 0) {
    rc = fault_status(kind, "open", path);
  } else if (!dir_exists(e, par)) {
    rc = kv_error(KV_ERR_NOTFOUND, "open %s: No such file or directory", path);
  } else if (i < 0) {
    inode *ino = ino_new(e);
    if (!ino || ent_set(e, &e->cur, p, ino) < 0) {
      if (ino) { ino->refs = 1; ino_unref(e, ino); }
      rc = kv_error(KV_ERR_NOMEM, "open %s: out of memory", path);
    } else {
      i = (long)e->cur.n - 1;
    }
  }
  if (rc == KV_OK && (flags & KV_OPEN_WRITE) && (flags & KV_OPEN_TRUNCATE)) {
    if (ino_resize(e->cur.v[i].ino, 0) < 0) rc = kv_error(KV_ERR_NOMEM, "open %s: out of memory", path);
  }
  if (rc == KV_OK) {
    f->env = e;
    f->ino = e->cur.v[i].ino;
    f->ino->refs++;
    f->path = pcopy;
    f->writable = (flags & KV_OPEN_WRITE) != 0;
    e->stats.opens++;
    *out = f;
  }
  pthread_mutex_unlock(&e->mu);
  if (rc != KV_OK) { free(f); free(pcopy); }
  return rc;
}

static int m_read(kv_file *f, uint64_t off, void *buf, size_t n, size_t *got) {
  mem_env *e = f->env;
  int rc = KV_OK;
  *got = 0;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) {
    rc = crashed_status("read", f->path);
  } else {
    size_t len = f->ino->len;
    size_t k = off >= len ? 0 : (len - (size_t)off < n ? len - (size_t)off : n);
    if (k) memcpy(buf, f->ino->data + off, k);
    *got = k;
    e->stats.reads++;
    e->stats.bytes_read += k;
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_append(kv_file *f, const void *buf, size_t n) {
  mem_env *e = f->env;
  int rc = KV_OK, kind;
  size_t torn = 0;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) {
    rc = crashed_status("write", f->path);
  } else if (!f->writable) {
    rc = kv_error(KV_ERR_IO, "write %s: Bad file descriptor (opened read-only)", f->path);
  } else if ((kind = fault_fire(e, KV_FAULT_APPEND, f->path, NULL, &torn)) >= 0) {
    if (kind == KV_FAULT_TORN) {
      size_t k = torn < n ? torn : n;
      if (k && ino_reserve(f->ino, f->ino->len + k) == 0) {
        memcpy(f->ino->data + f->ino->len, buf, k);
        f->ino->len += k;
        e->stats.bytes_appended += k;
      }
      rc = kv_error(KV_ERR_IO, "write %s: torn write after %zu of %zu bytes (injected)",
                    f->path, k, n);
    } else {
      rc = fault_status(kind, "write", f->path);
    }
  } else if (ino_reserve(f->ino, f->ino->len + n) < 0) {
    rc = kv_error(KV_ERR_NOMEM, "write %s: out of memory", f->path);
  } else {
    if (n) memcpy(f->ino->data + f->ino->len, buf, n);
    f->ino->len += n;
    e->stats.appends++;
    e->stats.bytes_appended += n;
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_sync(kv_file *f) {
  mem_env *e = f->env;
  int rc = KV_OK, kind;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) rc = crashed_status("fdatasync", f->path);
  else if ((kind = fault_fire(e, KV_FAULT_SYNC, f->path, NULL, NULL)) >= 0)
    rc = fault_status(kind, "fdatasync", f->path);
  else {
    ino_sync(f->ino);
    e->stats.syncs++;
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_size(kv_file *f, uint64_t *size_out) {
  mem_env *e = f->env;
  int rc = KV_OK;
  *size_out = 0;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) rc = crashed_status("stat", f->path);
  else *size_out = f->ino->len;
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_truncate(kv_file *f, uint64_t size) {
  mem_env *e = f->env;
  int rc = KV_OK;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) rc = crashed_status("truncate", f->path);
  else if (!f->writable) rc = kv_error(KV_ERR_IO, "truncate %s: opened read-only", f->path);
  else if (size > SIZE_MAX / 2 || ino_resize(f->ino, (size_t)size) < 0)
    rc = kv_error(KV_ERR_NOMEM, "truncate %s: out of memory", f->path);
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_close(kv_file *f) {
  if (!f) return KV_OK;
  mem_env *e = f->env;
  pthread_mutex_lock(&e->mu);
  ino_unref(e, f->ino);
  pthread_mutex_unlock(&e->mu);
  free(f->path);
  free(f);
  return KV_OK;
}

static int m_rename(kv_env *env, const char *from, const char *to) {
  mem_env *e = ME(env);
  char a[MEM_PATH_MAX], b[MEM_PATH_MAX], par[MEM_PATH_MAX];
  NORM_OR_FAIL(from, a, "rename");
  NORM_OR_FAIL(to, b, "rename");
  int rc = KV_OK, kind;
  pthread_mutex_lock(&e->mu);
  long i = ent_find(&e->cur, a);
  parent_of(b, par);
  if (e->crashed) rc = crashed_status("rename", from);
  else if ((kind = fault_fire(e, KV_FAULT_RENAME, a, b, NULL)) >= 0)
    rc = fault_status(kind, "rename", from);
  else if (i < 0)
    rc = kv_error(KV_ERR_NOTFOUND, "rename %s to %s: No such file or directory", from, to);
  else if (!dir_exists(e, par))
    rc = kv_error(KV_ERR_NOTFOUND, "rename %s to %s: No such file or directory", from, to);
  else if (dir_exists(e, b))
    rc = kv_error(KV_ERR_IO, "rename %s to %s: Is a directory", from, to);
  else if (strcmp(a, b) != 0) {
    inode *ino = e->cur.v[i].ino;
    if (ent_set(e, &e->cur, b, ino) < 0) {
      rc = kv_error(KV_ERR_NOMEM, "rename %s: out of memory", from);
    } else {
      ent_del(e, &e->cur, (size_t)ent_find(&e->cur, a));
      e->stats.renames++;
    }
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

/* A second name for a file (link(2)): both names share the bytes; either may be removed. */
static int m_link(kv_env *env, const char *from, const char *to) {
  mem_env *e = ME(env);
  char a[MEM_PATH_MAX], b[MEM_PATH_MAX], par[MEM_PATH_MAX];
  NORM_OR_FAIL(from, a, "link");
  NORM_OR_FAIL(to, b, "link");
  int rc = KV_OK;
  pthread_mutex_lock(&e->mu);
  long i = ent_find(&e->cur, a);
  parent_of(b, par);
  if (e->crashed) rc = crashed_status("link", from);
  else if (i < 0 || !dir_exists(e, par))
    rc = kv_error(KV_ERR_NOTFOUND, "link %s to %s: No such file or directory", from, to);
  else if (ent_find(&e->cur, b) >= 0 || dir_exists(e, b))
    rc = kv_error(KV_ERR_IO, "link %s to %s: File exists", from, to);
  else if (ent_set(e, &e->cur, b, e->cur.v[i].ino) < 0)
    rc = kv_error(KV_ERR_NOMEM, "link %s: out of memory", from);
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_remove(kv_env *env, const char *path) {
  mem_env *e = ME(env);
  char p[MEM_PATH_MAX];
  NORM_OR_FAIL(path, p, "remove");
  int rc = KV_OK, kind;
  pthread_mutex_lock(&e->mu);
  long i = ent_find(&e->cur, p);
  if (e->crashed) rc = crashed_status("remove", path);
  else if ((kind = fault_fire(e, KV_FAULT_REMOVE, p, NULL, NULL)) >= 0)
    rc = fault_status(kind, "remove", path);
  else if (i < 0)
    rc = kv_error(dir_exists(e, p) ? KV_ERR_IO : KV_ERR_NOTFOUND, "remove %s: %s", path,
                  dir_exists(e, p) ? "Is a directory" : "No such file or directory");
  else {
    ent_del(e, &e->cur, (size_t)i);
    e->stats.removes++;
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_mkdir(kv_env *env, const char *path) {
  mem_env *e = ME(env);
  char p[MEM_PATH_MAX];
  NORM_OR_FAIL(path, p, "mkdir");
  int rc = KV_OK;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) {
    rc = crashed_status("mkdir", path);
  } else {
    size_t n = strlen(p);
    for (size_t i = 1; i <= n && rc == KV_OK; i++) {
      if (i < n && p[i] != '/') continue;
      char saved = p[i];
      p[i] = 0;
      if (ent_find(&e->cur, p) >= 0)
        rc = kv_error(KV_ERR_IO, "mkdir %s: Not a directory", p);
      else if (!dir_exists(e, p) && str_add(&e->dirs, p) < 0)
        rc = kv_error(KV_ERR_NOMEM, "mkdir %s: out of memory", path);
      p[i] = saved;
    }
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_rmdir(kv_env *env, const char *path) {
  mem_env *e = ME(env);
  char p[MEM_PATH_MAX];
  NORM_OR_FAIL(path, p, "rmdir");
  int rc = KV_OK;
  pthread_mutex_lock(&e->mu);
  long i = str_find(&e->dirs, p);
  if (e->crashed) {
    rc = crashed_status("rmdir", path);
  } else if (i < 0) {
    rc = kv_error(KV_ERR_NOTFOUND, "rmdir %s: No such file or directory", path);
  } else {
    for (size_t k = 0; k < e->cur.n && rc == KV_OK; k++)
      if (is_parent(p, e->cur.v[k].path)) rc = kv_error(KV_ERR_IO, "rmdir %s: Directory not empty", path);
    for (size_t k = 0; k < e->dirs.n && rc == KV_OK; k++)
      if (is_parent(p, e->dirs.v[k])) rc = kv_error(KV_ERR_IO, "rmdir %s: Directory not empty", path);
    if (rc == KV_OK) str_del(&e->dirs, (size_t)i);
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_sync_dir(kv_env *env, const char *path) {
  mem_env *e = ME(env);
  char p[MEM_PATH_MAX];
  NORM_OR_FAIL(path, p, "fsync directory");
  int rc = KV_OK, kind;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) {
    rc = crashed_status("fsync directory", path);
  } else if (!dir_exists(e, p)) {
    rc = kv_error(KV_ERR_NOTFOUND, "open directory %s: No such file or directory", path);
  } else if ((kind = fault_fire(e, KV_FAULT_SYNC_DIR, p, NULL, NULL)) >= 0) {
    rc = fault_status(kind, "fsync directory", path);
  } else {
    /* Durable entries of this directory that are gone or changed: drop them. */
    for (size_t k = 0; k < e->durable.n;) {
      entry *d = &e->durable.v[k];
      long c = is_parent(p, d->path) ? ent_find(&e->cur, d->path) : 0;
      if (c < 0) ent_del(e, &e->durable, k);
      else k++;
    }
    for (size_t k = 0; k < e->cur.n && rc == KV_OK; k++)
      if (is_parent(p, e->cur.v[k].path) &&
          ent_set(e, &e->durable, e->cur.v[k].path, e->cur.v[k].ino) < 0)
        rc = kv_error(KV_ERR_NOMEM, "fsync directory %s: out of memory", path);
    if (rc == KV_OK) e->stats.sync_dirs++;
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

static int m_exists(kv_env *env, const char *path) {
  mem_env *e = ME(env);
  char p[MEM_PATH_MAX];
  if (norm(path, p) < 0) return 0;
  pthread_mutex_lock(&e->mu);
  int r = !e->crashed && (dir_exists(e, p) || ent_find(&e->cur, p) >= 0);
  pthread_mutex_unlock(&e->mu);
  return r;
}

static int m_list(kv_env *env, const char *path, kv_env_list_fn fn, void *ctx) {
  mem_env *e = ME(env);
  char p[MEM_PATH_MAX];
  NORM_OR_FAIL(path, p, "list directory");
  str_set names = {0};
  int rc = KV_OK;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) {
    rc = crashed_status("list directory", path);
  } else if (!dir_exists(e, p)) {
    rc = kv_error(KV_ERR_NOTFOUND, "list directory %s: No such file or directory", path);
  } else {
    for (size_t k = 0; k < e->cur.n && rc == KV_OK; k++)
      if (is_parent(p, e->cur.v[k].path) && str_add(&names, base_of(e->cur.v[k].path)) < 0)
        rc = kv_error(KV_ERR_NOMEM, "list directory %s: out of memory", path);
    for (size_t k = 0; k < e->dirs.n && rc == KV_OK; k++)
      if (strcmp(e->dirs.v[k], p) != 0 && is_parent(p, e->dirs.v[k]) &&
          str_add(&names, base_of(e->dirs.v[k])) < 0)
        rc = kv_error(KV_ERR_NOMEM, "list directory %s: out of memory", path);
  }
  pthread_mutex_unlock(&e->mu);
  for (size_t k = 0; k < names.n && rc == KV_OK; k++)
    if (fn(ctx, names.v[k])) break;
  for (size_t k = 0; k < names.n; k++) free(names.v[k]);
  free(names.v);
  return rc;
}

static int m_lock(kv_env *env, const char *path, kv_file **lock_out) {
  mem_env *e = ME(env);
  char p[MEM_PATH_MAX];
  *lock_out = NULL;
  NORM_OR_FAIL(path, p, "lock");
  pthread_mutex_lock(&e->mu);
  int held = str_find(&e->locks, p) >= 0;
  int crashed = e->crashed;
  pthread_mutex_unlock(&e->mu);
  if (crashed) return crashed_status("lock", path);
  if (held) return kv_error(KV_ERR_LOCKED, "database is locked: %s", path);
  kv_file *f;
  int rc = m_open(env, path, KV_OPEN_WRITE, &f);
  if (rc != KV_OK) return rc;
  pthread_mutex_lock(&e->mu);
  if (str_find(&e->locks, p) >= 0) rc = kv_error(KV_ERR_LOCKED, "database is locked: %s", path);
  else if (str_add(&e->locks, p) < 0) rc = kv_error(KV_ERR_NOMEM, "lock %s: out of memory", path);
  pthread_mutex_unlock(&e->mu);
  if (rc != KV_OK) { m_close(f); return rc; }
  f->is_lock = 1;
  *lock_out = f;
  return KV_OK;
}

static int m_unlock(kv_env *env, kv_file *lock) {
  if (!lock) return KV_OK;
  mem_env *e = ME(env);
  pthread_mutex_lock(&e->mu);
  long i = str_find(&e->locks, lock->path);
  if (i >= 0) str_del(&e->locks, (size_t)i);
  pthread_mutex_unlock(&e->mu);
  return m_close(lock);
}

static int64_t real_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t m_now_ms(kv_env *env) {
  mem_env *e = ME(env);
  pthread_mutex_lock(&e->mu);
  int64_t t = e->now;
  pthread_mutex_unlock(&e->mu);
  return t ? t : real_now_ms();
}

static void m_destroy(kv_env *env) {
  mem_env *e = ME(env);
  while (e->cur.n) ent_del(e, &e->cur, e->cur.n - 1);
  while (e->durable.n) ent_del(e, &e->durable, e->durable.n - 1);
  free(e->cur.v);
  free(e->durable.v);
  /* Inodes still referenced by handles a test forgot to close. */
  while (e->inodes) {
    inode *ino = e->inodes;
    e->inodes = ino->next;
    free(ino->data);
    free(ino->shadow);
    free(ino);
  }
  for (size_t i = 0; i < e->dirs.n; i++) free(e->dirs.v[i]);
  for (size_t i = 0; i < e->locks.n; i++) free(e->locks.v[i]);
  free(e->dirs.v);
  free(e->locks.v);
  for (int i = 0; i < N_FAULT_OPS; i++) free(e->faults[i].substr);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

/* ---- constructor and test controls ---- */

/* See kv/env/env_mem.h. Returns NULL only when out of memory. */
kv_env *kv_env_mem_new(int64_t now_ms) {
  mem_env *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  kv_env base = {
    m_open, m_read, m_append, m_sync, m_size, m_truncate, m_close,
    m_rename, m_remove, m_mkdir, m_rmdir, m_sync_dir, m_exists, m_list,
    m_lock, m_unlock, m_now_ms, m_destroy, NULL, NULL, m_link, NULL,
  };
  e->base = base;
  pthread_mutex_init(&e->mu, NULL);
  e->now = now_ms;
  return &e->base;
}

/* See kv/env/env_mem.h. `op` outside enum kv_fault_op is ignored. */
void kv_env_mem_fail(kv_env *env, int op, uint64_t nth, const char *path_substr, int kind,
                     size_t torn_bytes) {
  mem_env *e = ME(env);
  if (op < 0 || op >= N_FAULT_OPS) return;
  pthread_mutex_lock(&e->mu);
  fault *f = &e->faults[op];
  free(f->substr);
  f->substr = path_substr ? strdup(path_substr) : NULL;
  f->armed = 1;
  f->nth = nth ? nth : 1;
  f->kind = kind;
  f->torn_bytes = torn_bytes;
  pthread_mutex_unlock(&e->mu);
}

/* See kv/env/env_mem.h. */
void kv_env_mem_clear_faults(kv_env *env) {
  mem_env *e = ME(env);
  pthread_mutex_lock(&e->mu);
  for (int i = 0; i < N_FAULT_OPS; i++) {
    free(e->faults[i].substr);
    memset(&e->faults[i], 0, sizeof e->faults[i]);
  }
  pthread_mutex_unlock(&e->mu);
}

/* See kv/env/env_mem.h. Also leaves crashed mode; locks stay held until unlocked. */
void kv_env_mem_power_cut(kv_env *env) {
  mem_env *e = ME(env);
  pthread_mutex_lock(&e->mu);
  for (inode *ino = e->inodes; ino; ino = ino->next) ino_revert(ino);
  while (e->cur.n) ent_del(e, &e->cur, e->cur.n - 1);
  for (size_t k = 0; k < e->durable.n; k++) {
    char par[MEM_PATH_MAX];
    ent_set(e, &e->cur, e->durable.v[k].path, e->durable.v[k].ino);
    /* An entry's directory may have been removed since: it comes back. */
    parent_of(e->durable.v[k].path, par);
    if (!dir_exists(e, par)) str_add(&e->dirs, par);
  }
  e->crashed = false;
  pthread_mutex_unlock(&e->mu);
}

/* See kv/env/env_mem.h. */
void kv_env_mem_set_crashed(kv_env *env, bool crashed) {
  mem_env *e = ME(env);
  pthread_mutex_lock(&e->mu);
  e->crashed = crashed;
  pthread_mutex_unlock(&e->mu);
}

/* See kv/env/env_mem.h. */
void kv_env_mem_recover(kv_env *env) { kv_env_mem_set_crashed(env, false); }

/* See kv/env/env_mem.h. */
void kv_env_mem_get_stats(kv_env *env, kv_env_mem_stats *out) {
  mem_env *e = ME(env);
  pthread_mutex_lock(&e->mu);
  *out = e->stats;
  pthread_mutex_unlock(&e->mu);
}

/* See kv/env/env_mem.h. */
static int m_map(kv_file *f, uint64_t len, const uint8_t **p) {
  mem_env *e = f->env;
  int rc = KV_OK;
  *p = NULL;
  pthread_mutex_lock(&e->mu);
  if (e->crashed) rc = crashed_status("map", f->path);
  else if (len == 0 || len > f->ino->len) rc = kv_error(KV_ERR_IO, "map %s: bad length", f->path);
  uint8_t *copy = rc ? NULL : malloc((size_t)len);
  if (!rc && !copy) rc = kv_error(KV_ERR_NOMEM, "map %s: out of memory", f->path);
  if (!rc) memcpy(copy, f->ino->data, (size_t)len);
  pthread_mutex_unlock(&e->mu);
  *p = copy;
  return rc;
}

static void m_unmap(const uint8_t *p, uint64_t len) {
  (void)len;
  free((void *)(uintptr_t)p);
}

void kv_env_mem_set_map(kv_env *env, bool on) {
  mem_env *e = (mem_env *)env;
  pthread_mutex_lock(&e->mu);
  e->base.map = on ? m_map : NULL;
  e->base.unmap = on ? m_unmap : NULL;
  pthread_mutex_unlock(&e->mu);
}

void kv_env_mem_set_time(kv_env *env, int64_t now_ms) {
  mem_env *e = ME(env);
  pthread_mutex_lock(&e->mu);
  e->now = now_ms;
  pthread_mutex_unlock(&e->mu);
}

/* Find the inode of `path` for the damage helpers, or NULL. REQUIRES: e->mu held. */
static inode *find_ino(mem_env *e, const char *path) {
  char p[MEM_PATH_MAX];
  if (norm(path, p) < 0) return NULL;
  long i = ent_find(&e->cur, p);
  return i < 0 ? NULL : e->cur.v[i].ino;
}

/* See kv/env/env_mem.h. KV_ERR_NOTFOUND for a missing file, KV_ERR_INVALID past its end. */
int kv_env_mem_set_byte(kv_env *env, const char *path, uint64_t off, uint8_t value) {
  mem_env *e = ME(env);
  int rc = KV_OK;
  pthread_mutex_lock(&e->mu);
  inode *ino = find_ino(e, path);
  if (!ino) rc = kv_error(KV_ERR_NOTFOUND, "set_byte %s: no such file", path);
  else if (off >= ino->len) rc = kv_error(KV_ERR_INVALID, "set_byte %s: offset past end", path);
  else {
    ino->data[off] = value;
    if (ino->shadow && off < ino->shadow_len) ino->shadow[off] = value;
    if (!ino->shadow && ino->synced_len <= off) ino->synced_len = (size_t)off + 1;
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

/* See kv/env/env_mem.h. */
int kv_env_mem_get_byte(kv_env *env, const char *path, uint64_t off, uint8_t *value) {
  mem_env *e = ME(env);
  int rc = KV_OK;
  pthread_mutex_lock(&e->mu);
  inode *ino = find_ino(e, path);
  if (!ino) rc = kv_error(KV_ERR_NOTFOUND, "get_byte %s: no such file", path);
  else if (off >= ino->len) rc = kv_error(KV_ERR_INVALID, "get_byte %s: offset past end", path);
  else *value = ino->data[off];
  pthread_mutex_unlock(&e->mu);
  return rc;
}

/* See kv/env/env_mem.h. Growing is not allowed (KV_ERR_INVALID). */
int kv_env_mem_shrink(kv_env *env, const char *path, uint64_t new_size) {
  mem_env *e = ME(env);
  int rc = KV_OK;
  pthread_mutex_lock(&e->mu);
  inode *ino = find_ino(e, path);
  if (!ino) rc = kv_error(KV_ERR_NOTFOUND, "shrink %s: no such file", path);
  else if (new_size > ino->len) rc = kv_error(KV_ERR_INVALID, "shrink %s: larger than file", path);
  else {
    ino->len = (size_t)new_size;
    if (ino->synced_len > ino->len) ino->synced_len = ino->len;
    if (ino->shadow && ino->shadow_len > ino->len) ino->shadow_len = ino->len;
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

/* See kv/env/env_mem.h. */
int64_t kv_env_mem_file_size(kv_env *env, const char *path) {
  mem_env *e = ME(env);
  pthread_mutex_lock(&e->mu);
  inode *ino = find_ino(e, path);
  int64_t r = ino ? (int64_t)ino->len : -1;
  pthread_mutex_unlock(&e->mu);
  return r;
}
