/*
** tests/tu_merge_hold.h: hold the store's next compaction in its merging phase
** (kv_compact_set_merge_hook, kv/db/compact.c) so a test can commit a bulk load beside it,
** then let it go on. One hold per program (a static H); hold_start before the compaction
** begins, wait_merging until it is held, hold_release when the test's work beside it is
** done (false if the hook had given up after 30 s: the work beside the merge waited for it,
** and the test fails instead of hanging), hold_end after the compaction finished. Include
** after <cmocka.h>. Not for engine code.
*/
#ifndef ROWAN_TESTS_TU_MERGE_HOLD_H
#define ROWAN_TESTS_TU_MERGE_HOLD_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "kv/kv.h"

typedef struct hold {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int calls;      /* merges begun */
  bool merging;   /* the first merge is held in the hook */
  bool release;   /* the test lets it go on */
  bool timed_out; /* the hook gave up after 30 s (then the test fails, not hangs) */
} hold;

static hold H;

static inline void hook(void *arg) {
  hold *h = arg;
  pthread_mutex_lock(&h->mu);
  if (++h->calls == 1) {
    h->merging = true;
    pthread_cond_broadcast(&h->cv);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    while (!h->release)
      if (pthread_cond_timedwait(&h->cv, &h->mu, &ts) == ETIMEDOUT) {
        h->timed_out = true;
        break;
      }
  }
  pthread_mutex_unlock(&h->mu);
}

static inline void hold_start(void) {
  pthread_mutex_init(&H.mu, NULL);
  pthread_cond_init(&H.cv, NULL);
  H.calls = 0;
  H.merging = H.release = H.timed_out = false;
  kv_compact_set_merge_hook(hook, &H);
}

/* Wait (up to 30 s) until a merge is held in the hook. */
static inline void wait_merging(void) {
  pthread_mutex_lock(&H.mu);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 30;
  while (!H.merging && pthread_cond_timedwait(&H.cv, &H.mu, &ts) != ETIMEDOUT) {}
  bool merging = H.merging;
  pthread_mutex_unlock(&H.mu);
  assert_true(merging);
}

/* Let the held merge go on; false when the hook had already given up (a commit beside the
** merge did not return while it was held). */
static inline bool hold_release(void) {
  pthread_mutex_lock(&H.mu);
  bool ok = !H.timed_out;
  H.release = true;
  pthread_cond_broadcast(&H.cv);
  pthread_mutex_unlock(&H.mu);
  return ok;
}

static inline void hold_end(void) {
  kv_compact_set_merge_hook(NULL, NULL);
  pthread_mutex_destroy(&H.mu);
  pthread_cond_destroy(&H.cv);
}

#endif
