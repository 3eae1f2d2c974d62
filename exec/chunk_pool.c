/*
** exec/chunk_pool.c: the chunk pool and the k-way merge of exec/chunk_pool.h. The pool's
** threads share one atomic counter of the next chunk; they end when it passes the last.
** The merge keeps a binary heap of stream numbers ordered by their current items, the lower
** stream first among equal items, and pulls a stream again only when its item was handed
** out.
** Not here: what the chunks do and what the streams hold (exec/op_parallel.c).
*/
#include "exec/chunk_pool.h"

#include <stdlib.h>

#include "kv/util/thread.h"

static void *pool_main(void *arg) {
  exec_chunk_pool *p = arg;
  for (;;) {
    uint32_t i = atomic_fetch_add(&p->next, 1);
    if (i >= p->n_chunks) return NULL;
    p->fn(p->ctx, i);
  }
}

int exec_chunk_pool_start(exec_chunk_pool *p, int threads, uint32_t n_chunks,
                          exec_chunk_fn fn, void *ctx) {
  p->n_threads = 0;
  atomic_init(&p->next, 0);
  p->n_chunks = n_chunks;
  p->fn = fn;
  p->ctx = ctx;
  int want = threads < 1 ? 1 : threads > EXEC_CHUNK_POOL_MAX ? EXEC_CHUNK_POOL_MAX : threads;
  if ((uint32_t)want > n_chunks) want = (int)n_chunks;
  int rc = 0;
  for (int i = 0; i < want; i++) {
    rc = kv_thread_create(&p->th[p->n_threads], pool_main, p);
    if (rc) break;
    p->n_threads++;
  }
  if (p->n_threads == 0) pool_main(p); /* no thread: every chunk here */
  return rc;
}

void exec_chunk_pool_join(exec_chunk_pool *p) {
  for (int i = 0; i < p->n_threads; i++) pthread_join(p->th[i], NULL);
  p->n_threads = 0;
}

/* ---- The k-way merge ----------------------------------------------------------------- */
/* True when stream a's head goes before stream b's: the smaller item, else the lower stream. */
static bool before(exec_kmerge *m, uint32_t a, uint32_t b) {
  int c = m->cmp(m->ctx, m->head[a], m->head[b]);
  return c < 0 || (c == 0 && a < b);
}

static void sift_down(exec_kmerge *m, uint32_t i) {
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, s = i;
    if (l < m->n && before(m, m->heap[l], m->heap[s])) s = l;
    if (r < m->n && before(m, m->heap[r], m->heap[s])) s = r;
    if (s == i) return;
    uint32_t t = m->heap[i];
    m->heap[i] = m->heap[s];
    m->heap[s] = t;
    i = s;
  }
}

int exec_kmerge_init(exec_kmerge *m, uint32_t k, exec_kmerge_pull pull, exec_kmerge_cmp cmp,
                     void *ctx) {
  m->k = k;
  m->n = 0;
  m->started = false;
  m->last = UINT32_MAX;
  m->pull = pull;
  m->cmp = cmp;
  m->ctx = ctx;
  m->heap = malloc((k ? k : 1) * sizeof *m->heap);
  m->head = malloc((k ? k : 1) * sizeof *m->head);
  if (!m->heap || !m->head) {
    exec_kmerge_free(m);
    return -1;
  }
  return 0;
}

int exec_kmerge_next(exec_kmerge *m, const void **item, uint32_t *stream) {
  if (!m->started) {
    m->started = true;
    for (uint32_t s = 0; s < m->k; s++) {
      int rc = m->pull(m->ctx, s, &m->head[s]);
      if (rc < 0) return rc;
      if (rc > 0) m->heap[m->n++] = s;
    }
    for (uint32_t i = m->n / 2; i-- > 0;) sift_down(m, i);
  } else if (m->last != UINT32_MAX) { /* the stream whose item went out moves on */
    int rc = m->pull(m->ctx, m->last, &m->head[m->last]);
    if (rc < 0) return rc;
    if (rc == 0) m->heap[0] = m->heap[--m->n];
    if (m->n) sift_down(m, 0);
    m->last = UINT32_MAX;
  }
  if (m->n == 0) return 0;
  uint32_t s = m->heap[0];
  *item = m->head[s];
  if (stream) *stream = s;
  m->last = s;
  return 1;
}

void exec_kmerge_free(exec_kmerge *m) {
  free(m->heap);
  free(m->head);
  m->heap = NULL;
  m->head = NULL;
}
