/*
** cli/import_pipe.c: the reader thread of `.import` (cli/import_pipe.h). The thread
** runs the same cli_src + cli_rec code as the single-threaded import; its record callback
** copies each record (line, raw text, error text, fields) into the current batch: one byte
** buffer and two arrays (items, fields) holding offsets, so a batch is three allocations
** however many records it holds. A batch goes to the queue when it passes BATCH_BYTES or
** BATCH_ITEMS, at the end of the files, or before an error; the queue holds at most QCAP
** batches (the reader waits for room), so memory stays bounded. The consumer frees each
** batch when it moves past it.
** Not here: what records mean (cli/import.c).
*/
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/thread.h"
#include "cli/import_pipe.h"

#define READ_BYTES (256 * 1024) /* decompressed bytes read at a time */
#define BATCH_BYTES (256 * 1024) /* record bytes per batch before it is handed over */
#define BATCH_ITEMS 4096        /* items per batch before it is handed over */
#define QCAP 4                  /* full batches waiting at most */
#define NO_ERR ((size_t)-1)     /* pitem.err_off: no parse error */

typedef struct pitem {
  int kind;               /* enum cli_pipe_kind */
  int file;               /* file index */
  int nfields;            /* RECORD: fields */
  int code;               /* ERROR: -1 or -2 */
  int64_t line;           /* RECORD: first line */
  int64_t size;           /* FILE_END: file size */
  size_t raw_off, raw_n;  /* RECORD: raw text in bytes */
  size_t err_off;         /* RECORD: error text (NUL-terminated) in bytes, or NO_ERR */
  size_t f_first;         /* RECORD: its first entry in fields */
} pitem;

typedef struct pfield {
  size_t off;             /* bytes offset */
  size_t n;               /* length */
  int is_null;            /* SQL NULL */
} pfield;

typedef struct batch {
  char *bytes;            /* raw text, field bytes and error texts */
  size_t nb, cap_b;       /* used / allocated */
  pitem *items;           /* items in order */
  size_t ni, cap_i;       /* used / allocated */
  pfield *fields;         /* fields of the records */
  size_t nf, cap_f;       /* used / allocated */
  struct batch *next;     /* queue link */
} batch;

struct cli_pipe {
  const char *const *files; /* the files */
  int n_files;            /* their number */
  int tsv;                /* TSV instead of CSV */
  unsigned char delim;    /* field separator */
  const char *null_text;  /* NULL text or NULL */
  pthread_t th;           /* the reader */
  pthread_mutex_t mu;     /* guards the fields below */
  pthread_cond_t cv;      /* queue changed, or cancel */
  batch *head, *tail;     /* full batches in order */
  int count;              /* batches queued */
  bool done;              /* the reader has queued its last batch */
  bool cancel;            /* the consumer stopped: the reader gives up */
  batch *fill;            /* the reader's current batch (reader only) */
  batch *errb;            /* a batch holding one ERROR item, made at start (reader only) */
  int cur_file;           /* the file being read (reader only) */
  int64_t files_done_bytes; /* sizes of the files read to the end (reader only) */
  _Atomic int64_t read_bytes; /* input bytes the reader has consumed (any thread) */
  bool nomem;             /* an allocation in the reader failed (reader only) */
  char errmsg[600];       /* the message of the ERROR item */
  batch *cur;             /* consumer: batch being read */
  size_t ci;              /* consumer: next item in cur */
  cli_field *fv;          /* consumer: fields handed out */
  size_t fv_cap;          /* consumer: allocated */
};

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t nc = *cap ? *cap * 2 : 256;
  while (nc < need) nc *= 2;
  void *q = realloc(*p, nc * elem);
  if (!q) return false;
  *p = q;
  *cap = nc;
  return true;
}

static void batch_free(batch *b) {
  if (!b) return;
  free(b->bytes);
  free(b->items);
  free(b->fields);
  free(b);
}

/* Hand the reader's batch to the queue (waiting for room) and start a new one.
** false when cancelled or out of memory. */
static bool push(cli_pipe *p) {
  batch *b = p->fill;
  p->fill = NULL;
  pthread_mutex_lock(&p->mu);
  while (p->count >= QCAP && !p->cancel) pthread_cond_wait(&p->cv, &p->mu);
  bool ok = !p->cancel;
  if (ok) {
    if (p->tail) p->tail->next = b;
    else p->head = b;
    p->tail = b;
    p->count++;
    pthread_cond_broadcast(&p->cv);
  }
  pthread_mutex_unlock(&p->mu);
  if (!ok) batch_free(b);
  if (!ok) return false;
  p->fill = calloc(1, sizeof *p->fill);
  if (!p->fill) p->nomem = true;
  return p->fill != NULL;
}

static pitem *add_item(cli_pipe *p, int kind) {
  batch *b = p->fill;
  if (!b || !grow((void **)&b->items, &b->cap_i, b->ni + 1, sizeof *b->items)) {
    p->nomem = true;
    return NULL;
  }
  pitem *it = &b->items[b->ni++];
  memset(it, 0, sizeof *it);
  it->kind = kind;
  it->file = p->cur_file;
  it->err_off = NO_ERR;
  return it;
}

static bool add_bytes(cli_pipe *p, const char *s, size_t n, bool nul, size_t *off) {
  batch *b = p->fill;
  if (!grow((void **)&b->bytes, &b->cap_b, b->nb + n + 1, 1)) {
    p->nomem = true;
    return false;
  }
  *off = b->nb;
  if (n) memcpy(b->bytes + b->nb, s, n);
  b->nb += n;
  if (nul) b->bytes[b->nb++] = 0;
  return true;
}

/* cli_rec's callback: copy the record into the batch. */
static int on_rec(void *ctx, const cli_record *rec) {
  cli_pipe *p = ctx;
  batch *b = p->fill;
  pitem *it = add_item(p, CLI_PIPE_RECORD);
  if (!it) return 1;
  it->line = rec->line;
  it->nfields = rec->nfields;
  it->raw_n = rec->raw_n;
  it->f_first = b->nf;
  if (!add_bytes(p, rec->raw, rec->raw_n, false, &it->raw_off)) return 1;
  if (rec->error && !add_bytes(p, rec->error, strlen(rec->error), true, &it->err_off)) return 1;
  if (!grow((void **)&b->fields, &b->cap_f, b->nf + (size_t)rec->nfields, sizeof *b->fields)) {
    p->nomem = true;
    return 1;
  }
  for (int i = 0; i < rec->nfields; i++) {
    const cli_field *f = &rec->fields[i];
    pfield *o = &b->fields[b->nf++];
    o->n = f->n;
    o->is_null = f->is_null;
    o->off = 0;
    if (f->p && !add_bytes(p, f->p, f->n, false, &o->off)) return 1;
  }
  if (b->nb >= BATCH_BYTES || b->ni >= BATCH_ITEMS) return push(p) ? 0 : 1;
  return 0;
}

/* Read one file into batches. Returns 0, or -1 / -2 after filling p->errmsg, or 1 when
** cancelled. */
static int read_file(cli_pipe *p, const char *path, char *buf) {
  cli_src *src = NULL;
  if (cli_src_open(path, &src, p->errmsg, sizeof p->errmsg) != 0) return -1;
  cli_rec rec;
  if (cli_rec_init(&rec, p->tsv, p->delim, p->null_text, on_rec, p) != 0) {
    cli_src_close(src);
    snprintf(p->errmsg, sizeof p->errmsg, "out of memory");
    return -2;
  }
  int rc = 0;
  for (;;) {
    long n = cli_src_read(src, buf, READ_BYTES, p->errmsg, sizeof p->errmsg);
    if (n < 0) {
      rc = -1;
      break;
    }
    atomic_store_explicit(&p->read_bytes, p->files_done_bytes + cli_src_offset(src),
                          memory_order_relaxed);
    int r = n == 0 ? cli_rec_finish(&rec) : cli_rec_feed(&rec, buf, (size_t)n);
    if (r) {
      rc = p->nomem || rec.nomem ? -2 : 1;
      if (rc == -2) snprintf(p->errmsg, sizeof p->errmsg, "out of memory");
      break;
    }
    if (n == 0) break;
  }
  int64_t size = cli_src_size(src);
  p->files_done_bytes += size;
  atomic_store_explicit(&p->read_bytes, p->files_done_bytes, memory_order_relaxed);
  cli_rec_free(&rec);
  cli_src_close(src);
  if (rc) return rc;
  pitem *it = add_item(p, CLI_PIPE_FILE_END);
  if (!it) {
    snprintf(p->errmsg, sizeof p->errmsg, "out of memory");
    return -2;
  }
  it->size = size;
  return 0;
}

static void *reader_main(void *arg) {
  cli_pipe *p = arg;
  char *buf = malloc(READ_BYTES);
  int rc = buf ? 0 : -2;
  if (!buf) snprintf(p->errmsg, sizeof p->errmsg, "out of memory");
  for (int i = 0; rc == 0 && i < p->n_files; i++) {
    p->cur_file = i;
    if (!add_item(p, CLI_PIPE_FILE_START)) {
      snprintf(p->errmsg, sizeof p->errmsg, "out of memory");
      rc = -2;
      break;
    }
    rc = read_file(p, p->files[i], buf);
  }
  free(buf);
  if (rc < 0) {
    if (p->fill && p->fill->ni) push(p); /* the records before the error first */
    batch_free(p->fill);
    p->fill = p->errb; /* allocated at start: an error always gets through */
    p->errb = NULL;
    p->fill->items[0].code = rc;
    p->fill->items[0].file = p->cur_file;
    push(p);
  } else if (rc == 0 && p->fill) {
    push(p);
  }
  batch_free(p->fill);
  p->fill = NULL;
  pthread_mutex_lock(&p->mu);
  p->done = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

int cli_pipe_start(const char *const *files, int n, int tsv, unsigned char delim,
                   const char *null_text, cli_pipe **out) {
  *out = NULL;
  cli_pipe *p = calloc(1, sizeof *p);
  if (!p) return -1;
  p->files = files;
  p->n_files = n;
  p->tsv = tsv;
  p->delim = delim;
  p->null_text = null_text;
  p->fill = calloc(1, sizeof *p->fill);
  p->errb = calloc(1, sizeof *p->errb);
  if (p->errb) p->errb->items = calloc(1, sizeof *p->errb->items);
  if (!p->fill || !p->errb || !p->errb->items) {
    batch_free(p->fill);
    batch_free(p->errb);
    free(p);
    return -1;
  }
  p->errb->items[0].kind = CLI_PIPE_ERROR;
  p->errb->ni = p->errb->cap_i = 1;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  if (kv_thread_create(&p->th, reader_main, p) != 0) { /* signals stay with the main thread */
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    batch_free(p->fill);
    batch_free(p->errb);
    free(p);
    return -1;
  }
  *out = p;
  return 0;
}

int64_t cli_pipe_read_bytes(cli_pipe *p) {
  return atomic_load_explicit(&p->read_bytes, memory_order_relaxed);
}

int cli_pipe_next(cli_pipe *p, cli_pipe_item *it) {
  while (!p->cur || p->ci >= p->cur->ni) {
    batch_free(p->cur);
    p->cur = NULL;
    p->ci = 0;
    pthread_mutex_lock(&p->mu);
    while (!p->head && !p->done) pthread_cond_wait(&p->cv, &p->mu);
    batch *b = p->head;
    if (b) {
      p->head = b->next;
      if (!p->head) p->tail = NULL;
      p->count--;
      pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    if (!b) return 0;
    p->cur = b;
  }
  const batch *b = p->cur;
  const pitem *x = &b->items[p->ci++];
  memset(it, 0, sizeof *it);
  it->kind = x->kind;
  it->file = x->file;
  it->size = x->size;
  it->code = x->code;
  if (x->kind == CLI_PIPE_ERROR) {
    it->msg = p->errmsg; /* written before the reader queued this item */
    p->ci = b->ni;         /* nothing comes after an error */
  }
  if (x->kind != CLI_PIPE_RECORD) return 1;
  if (!grow((void **)&p->fv, &p->fv_cap, (size_t)x->nfields + 1, sizeof *p->fv)) {
    it->kind = CLI_PIPE_ERROR;
    it->code = -2;
    it->msg = "out of memory";
    return 1;
  }
  for (int i = 0; i < x->nfields; i++) {
    const pfield *f = &b->fields[x->f_first + (size_t)i];
    p->fv[i].p = f->is_null ? NULL : b->bytes + f->off;
    p->fv[i].n = f->n;
    p->fv[i].is_null = f->is_null;
  }
  it->rec.line = x->line;
  it->rec.nfields = x->nfields;
  it->rec.fields = p->fv;
  it->rec.raw = b->bytes ? b->bytes + x->raw_off : "";
  it->rec.raw_n = x->raw_n;
  it->rec.error = x->err_off == NO_ERR ? NULL : b->bytes + x->err_off;
  return 1;
}

void cli_pipe_stop(cli_pipe *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->cancel = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->th, NULL);
  while (p->head) {
    batch *b = p->head;
    p->head = b->next;
    batch_free(b);
  }
  batch_free(p->cur);
  batch_free(p->errb);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p->fv);
  free(p);
}
