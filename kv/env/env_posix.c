/*
** kv/env/env_posix.c: the kv_env seam over the real file system (POSIX system calls).
**
** Files are opened with open(2); reads are pread(2), or a read-only mmap(2) of the whole
** file for store file readers (map, unmap); appends are write(2) on an O_APPEND
** descriptor, retried on short writes and EINTR; sync is fdatasync(2) and sync_dir an
** fsync(2) of the directory. The store LOCK is flock(2) LOCK_EX|LOCK_NB: flock locks belong
** to the open file description, so a second open of the same store in this very process is
** refused too (fcntl locks would not be). Every failure sets kv_errmsg() to a message naming
** the operation, the path and strerror(errno); ENOSPC and EDQUOT map to KV_ERR_NOSPC and
** ENOENT to KV_ERR_NOTFOUND.
**
** It does not buffer (the WAL buffers for itself), and knows no file format.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kv/env/env.h"
#include "kv/util/status.h"

struct kv_file {
  int fd;        /* the open descriptor, -1 once closed */
  int is_lock;   /* 1 for a handle made by lock() */
  char *path;    /* copy of the path, for messages */
};

/* Map errno to a kv status and set the message; returns the status. */
static int sys_error(int err, const char *op, const char *path) {
  int code = KV_ERR_IO;
  if (err == ENOSPC || err == EDQUOT) code = KV_ERR_NOSPC;
  else if (err == ENOENT) code = KV_ERR_NOTFOUND;
  return kv_error(code, "%s %s: %s", op, path, strerror(err));
}

static kv_file *file_new(int fd, const char *path, int is_lock) {
  kv_file *f = malloc(sizeof *f);
  if (!f) return NULL;
  f->path = strdup(path);
  if (!f->path) { free(f); return NULL; }
  f->fd = fd;
  f->is_lock = is_lock;
  return f;
}

static int px_open(kv_env *env, const char *path, int flags, kv_file **out) {
  *out = NULL;
  int oflags = O_CLOEXEC;
  if (flags & KV_OPEN_WRITE) {
    oflags |= O_RDWR | O_CREAT | O_APPEND;
    if (flags & KV_OPEN_TRUNCATE) oflags |= O_TRUNC;
  } else {
    oflags |= O_RDONLY;
  }
  int fd;
  do fd = open(path, oflags, 0644); while (fd < 0 && errno == EINTR);
  if (fd < 0) return sys_error(errno, "open", path);
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    return kv_error(KV_ERR_IO, "open %s: %s", path, strerror(EISDIR));
  }
  kv_file *f = file_new(fd, path, 0);
  if (!f) { close(fd); return kv_error(KV_ERR_NOMEM, "open %s: out of memory", path); }
  *out = f;
  return KV_OK;
}

static int px_read(kv_file *f, uint64_t off, void *buf, size_t n, size_t *got) {
  size_t done = 0;
  *got = 0;
  while (done < n) {
    ssize_t r = pread(f->fd, (char *)buf + done, n - done, (off_t)(off + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return sys_error(errno, "read", f->path);
    }
    if (r == 0) break;
    done += (size_t)r;
  }
  *got = done;
  return KV_OK;
}

static int px_append(kv_file *f, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(f->fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return sys_error(errno, "write", f->path);
    }
    p += w;
    n -= (size_t)w;
  }
  return KV_OK;
}

static int px_sync(kv_file *f) {
  int r;
  do r = fdatasync(f->fd); while (r < 0 && errno == EINTR);
  return r < 0 ? sys_error(errno, "fdatasync", f->path) : KV_OK;
}

static int px_size(kv_file *f, uint64_t *size_out) {
  struct stat st;
  *size_out = 0;
  if (fstat(f->fd, &st) < 0) return sys_error(errno, "stat", f->path);
  *size_out = (uint64_t)st.st_size;
  return KV_OK;
}

static int px_truncate(kv_file *f, uint64_t size) {
  int r;
  do r = ftruncate(f->fd, (off_t)size); while (r < 0 && errno == EINTR);
  return r < 0 ? sys_error(errno, "truncate", f->path) : KV_OK;
}

static int px_close(kv_file *f) {
  if (!f) return KV_OK;
  int rc = KV_OK;
  if (f->fd >= 0 && close(f->fd) < 0 && errno != EINTR) rc = sys_error(errno, "close", f->path);
  free(f->path);
  free(f);
  return rc;
}

static int px_rename(kv_env *env, const char *from, const char *to) {
  if (rename(from, to) < 0) {
    int err = errno;
    return kv_error(err == ENOENT ? KV_ERR_NOTFOUND : (err == ENOSPC ? KV_ERR_NOSPC : KV_ERR_IO),
                    "rename %s to %s: %s", from, to, strerror(err));
  }
  return KV_OK;
}

static int px_link(kv_env *env, const char *from, const char *to) {
  (void)env;
  if (link(from, to) == 0) return KV_OK;
  int err = errno;
  return kv_error(err == ENOENT ? KV_ERR_NOTFOUND : err == ENOSPC || err == EDQUOT ? KV_ERR_NOSPC
                                                                                 : KV_ERR_IO,
                  "link %s to %s: %s", from, to, strerror(err));
}

static int px_remove(kv_env *env, const char *path) {
  return unlink(path) < 0 ? sys_error(errno, "remove", path) : KV_OK;
}

static int px_mkdir(kv_env *env, const char *path) {
  size_t n = strlen(path);
  char *buf = malloc(n + 1);
  if (!buf) return kv_error(KV_ERR_NOMEM, "mkdir %s: out of memory", path);
  memcpy(buf, path, n + 1);
  int rc = KV_OK;
  /* Create each prefix ending before a '/', then the whole path. */
  for (size_t i = 1; i <= n; i++) {
    if (i < n && buf[i] != '/') continue;
    char saved = buf[i];
    buf[i] = 0;
    if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
      rc = sys_error(errno, "mkdir", buf);
      break;
    }
    buf[i] = saved;
  }
  if (rc == KV_OK) {
    struct stat st;
    if (stat(path, &st) < 0) rc = sys_error(errno, "mkdir", path);
    else if (!S_ISDIR(st.st_mode)) rc = kv_error(KV_ERR_IO, "mkdir %s: %s", path, strerror(ENOTDIR));
  }
  free(buf);
  return rc;
}

static int px_rmdir(kv_env *env, const char *path) {
  return rmdir(path) < 0 ? sys_error(errno, "rmdir", path) : KV_OK;
}

static int px_sync_dir(kv_env *env, const char *path) {
  int fd;
  do fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
  if (fd < 0) return sys_error(errno, "open directory", path);
  int r;
  do r = fsync(fd); while (r < 0 && errno == EINTR);
  int err = errno;
  close(fd);
  return r < 0 ? sys_error(err, "fsync directory", path) : KV_OK;
}

static int px_exists(kv_env *env, const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static int px_list(kv_env *env, const char *path, kv_env_list_fn fn, void *ctx) {
  DIR *d = opendir(path);
  if (!d) return sys_error(errno, "list directory", path);
  struct dirent *e;
  int err = 0;
  for (;;) {
    errno = 0;
    if (!(e = readdir(d))) { err = errno; break; }
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (fn(ctx, e->d_name)) break; /* stopped early: not an error */
  }
  closedir(d);
  return err ? sys_error(err, "list directory", path) : KV_OK;
}

static int px_lock(kv_env *env, const char *path, kv_file **lock_out) {
  *lock_out = NULL;
  int fd;
  do fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644); while (fd < 0 && errno == EINTR);
  if (fd < 0) return sys_error(errno, "open lock file", path);
  int r;
  do r = flock(fd, LOCK_EX | LOCK_NB); while (r < 0 && errno == EINTR);
  if (r < 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) return kv_error(KV_ERR_LOCKED, "database is locked: %s", path);
    return sys_error(err, "lock", path);
  }
  kv_file *f = file_new(fd, path, 1);
  if (!f) { close(fd); return kv_error(KV_ERR_NOMEM, "lock %s: out of memory", path); }
  *lock_out = f;
  return KV_OK;
}

static int px_unlock(kv_env *env, kv_file *lock) {
  if (!lock) return KV_OK;
  int rc = KV_OK;
  if (flock(lock->fd, LOCK_UN) < 0) rc = sys_error(errno, "unlock", lock->path);
  int rc2 = px_close(lock);
  return rc != KV_OK ? rc : rc2;
}

static int64_t px_now_ms(kv_env *env) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int px_map(kv_file *f, uint64_t len, const uint8_t **p) {
  *p = NULL;
  if (len == 0 || len > SIZE_MAX) return kv_error(KV_ERR_IO, "mmap %s: bad length", f->path);
  void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, f->fd, 0);
  if (m == MAP_FAILED) return sys_error(errno, "mmap", f->path);
  *p = m;
  return KV_OK;
}

static void px_unmap(const uint8_t *p, uint64_t len) {
  if (p) munmap((void *)(uintptr_t)p, (size_t)len);
}

static void px_unneed(const uint8_t *p, uint64_t len) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), z = ((uintptr_t)p + len) & ~(page - 1);
  if (z > a) madvise((void *)a, z - a, MADV_DONTNEED); /* a hint: a failure changes nothing */
}

static kv_env posix_env = {
  px_open, px_read, px_append, px_sync, px_size, px_truncate, px_close,
  px_rename, px_remove, px_mkdir, px_rmdir, px_sync_dir, px_exists, px_list,
  px_lock, px_unlock, px_now_ms, NULL, px_map, px_unmap, px_link, px_unneed,
};

kv_env *kv_env_posix(void) { return &posix_env; }
