/*
** kv/db/memstore.c: the memstore, a skip list of cells in kv_cell_cmp order (LevelDB's
** SkipList scheme, in C11 atomics). One writer inserts at a time (the caller serializes
** writers: in kv/ only the commit leader or the flush holding the writer role inserts);
** any number of readers walk the list concurrently without locks. A node is published by a
** release store of the predecessor's next pointer after the node is fully built, so a reader
** that sees it (acquire load) sees its contents. Nodes and cell bytes live in an arena of
** large blocks: no per-cell malloc, and everything is freed at once when the last reference
** is dropped. Nothing is ever removed from a memstore; it is frozen and flushed whole.
**
** Not here: sequence-number visibility (readers skip cells above their snapshot), tombstone
** semantics (kv/db/db_vis.c) and flush policy (kv/db/db_flush.c).
*/
#include "kv/db/memstore.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/coding.h"
#include "kv/util/status.h"

#define MAX_HEIGHT 12     /* levels; with branching 4 good up to ~16M cells */
#define BRANCHING 4       /* one node in BRANCHING climbs one more level */
_Static_assert(BRANCHING == 4, "random_height takes two random bits a level");
#define ARENA_BLOCK 65536 /* bytes in a regular arena block */
#define FINGER_MAX 8      /* finger_score saturates here */
#define FINGER_RETRY 32   /* with no recent hit, try the finger once in this many inserts */

typedef struct node {
  kv_cell cell;                 /* the cell; its byte pointers point into this allocation */
  int height;                   /* levels this node is linked in, 1..MAX_HEIGHT */
  _Atomic(struct node *) next[]; /* successor per level; NULL at the end */
} node;

typedef struct arena_block {
  struct arena_block *next;     /* older blocks */
  max_align_t data[];           /* the usable bytes */
} arena_block;

struct kv_memstore {
  atomic_int refs;              /* owners: the family, scans, flushes */
  node *head;                   /* sentinel with MAX_HEIGHT levels and no cell */
  atomic_int max_height;        /* highest level in use (readers may read a stale value) */
  arena_block *blocks;          /* all arena blocks, newest first */
  char *alloc_ptr;              /* next free byte of the current block */
  size_t alloc_left;            /* free bytes left in the current block */
  atomic_size_t bytes;          /* arena bytes handed out (nodes and cell bytes) */
  atomic_uint_least64_t cells;  /* cells inserted */
  atomic_uint_least64_t max_seq;/* highest sequence number inserted */
  uint64_t rnd;                 /* writer-only PRNG state for node heights */
  node *finger[MAX_HEIGHT];     /* writer-only: per level, the last node before the place
                                   just after the last inserted cell (see kv_memstore_add) */
  int finger_score;             /* writer-only: recent finger hits (0..FINGER_MAX) */
  unsigned finger_skips;        /* writer-only: inserts since the finger was last tried */
  const uint8_t *last_row;      /* writer-only: the row key bytes of the last inserted cell
                                   (in the arena), NULL before the first */
  uint32_t last_row_len;        /* their length */
};

/* ---- arena ---------------------------------------------------------------------------- */

static void *arena_new_block(kv_memstore *m, size_t size) {
  arena_block *b = malloc(sizeof(arena_block) + size);
  if (!b) return NULL;
  b->next = m->blocks;
  m->blocks = b;
  return b->data;
}

/* Add n to a counter only the single writer changes: a relaxed load and store, not a locked
** read-modify-write (readers load it relaxed; they never write it). */
static inline void writer_add(atomic_size_t *c, size_t n) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                        memory_order_relaxed);
}

/* Allocate n bytes aligned for a node. REQUIRES: the single writer. */
static void *arena_alloc(kv_memstore *m, size_t n) {
  n = (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
  if (n > m->alloc_left) {
    if (n > ARENA_BLOCK / 4) { /* big cell: its own block */
      writer_add(&m->bytes, n);
      return arena_new_block(m, n);
    }
    char *p = arena_new_block(m, ARENA_BLOCK);
    if (!p) return NULL;
    m->alloc_ptr = p;
    m->alloc_left = ARENA_BLOCK;
  }
  void *r = m->alloc_ptr;
  writer_add(&m->bytes, n);
  m->alloc_ptr += n;
  m->alloc_left -= n;
  return r;
}

/* ---- skip list ------------------------------------------------------------------------ */

static inline node *nx(node *x, int level) {
  return atomic_load_explicit(&x->next[level], memory_order_acquire);
}

/* One level more for each pair of zero bits at the bottom of one random number: a node
** climbs each level with probability 1/BRANCHING (BRANCHING is 4), from one draw. */
static int random_height(kv_memstore *m) {
  m->rnd ^= m->rnd << 13; m->rnd ^= m->rnd >> 7; m->rnd ^= m->rnd << 17;
  int h = 1 + __builtin_ctzll(m->rnd | (1ull << 62)) / 2;
  return h < MAX_HEIGHT ? h : MAX_HEIGHT;
}

/* First node >= target; fills prev[] (if not NULL) with the last node < target per level. */
static node *find_ge(kv_memstore *m, const kv_cell *target, node **prev) {
  node *x = m->head;
  int level = atomic_load_explicit(&m->max_height, memory_order_relaxed) - 1;
  for (;;) {
    node *n = nx(x, level);
    if (n && kv_cell_cmp(&n->cell, target) < 0) {
      x = n;
    } else {
      if (prev) prev[level] = x;
      if (level == 0) return n;
      level--;
    }
  }
}

/* The insert finger (the "splice" of RocksDB's skip list, in a simpler form): loads insert
** runs of cells in order (a row's cells one after the other, rows in key order or in
** reverse), so the place of a new cell is usually right after the last one inserted, or a few
** nodes before it. m->finger[] is the search path of a key just after the last inserted cell:
** per level, the last node before that key. If the finger's node at level i is before the
** target and its successor at level i is not, the finger at every level >= i is the target's
** search path too (the level-i successor bounds the successors of every higher level), so
** the search only has to go down from level i. Levels 0..height-1 are tried from the bottom;
** each try costs at most two cell comparisons. To keep random inserts (an index family) from
** paying for tries that miss, finger_score counts recent hits; with none, the finger is
** tried only once in FINGER_RETRY inserts. Fills prev[0..height) like find_ge and returns
** true, or returns false (prev[] not filled) when the finger does not bracket the target.
** REQUIRES: the single writer. */
static bool finger_find(kv_memstore *m, const kv_cell *target, int height, node **prev) {
  if (m->finger_score == 0 && ++m->finger_skips < FINGER_RETRY) return false;
  m->finger_skips = 0;
  int level = -1;
  for (int i = 0; i < height; i++) {
    node *f = m->finger[i];
    if (f != m->head && kv_cell_cmp(&f->cell, target) >= 0) continue; /* target before f */
    node *n = atomic_load_explicit(&f->next[i], memory_order_relaxed);
    if (n && kv_cell_cmp(&n->cell, target) < 0) continue; /* target after f's successor */
    level = i;
    break;
  }
  if (level < 0) {
    if (m->finger_score > 0) m->finger_score--;
    return false;
  }
  if (m->finger_score < FINGER_MAX) m->finger_score++;
  for (int i = height - 1; i >= level; i--) prev[i] = m->finger[i];
  node *x = m->finger[level];
  for (int i = level - 1; i >= 0; i--) {
    node *n = atomic_load_explicit(&x->next[i], memory_order_relaxed);
    while (n && kv_cell_cmp(&n->cell, target) < 0) {
      x = n;
      n = atomic_load_explicit(&x->next[i], memory_order_relaxed);
    }
    prev[i] = x;
  }
  return true;
}

/* Last node < target (head if none). */
static node *find_lt(kv_memstore *m, const kv_cell *target) {
  node *x = m->head;
  int level = atomic_load_explicit(&m->max_height, memory_order_relaxed) - 1;
  for (;;) {
    node *n = nx(x, level);
    if (n && kv_cell_cmp(&n->cell, target) < 0) {
      x = n;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

/* Last node <= target (head if none). */
static node *find_le(kv_memstore *m, const kv_cell *target) {
  node *x = m->head;
  int level = atomic_load_explicit(&m->max_height, memory_order_relaxed) - 1;
  for (;;) {
    node *n = nx(x, level);
    if (n && kv_cell_cmp(&n->cell, target) <= 0) {
      x = n;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

static node *find_last(kv_memstore *m) {
  node *x = m->head;
  int level = atomic_load_explicit(&m->max_height, memory_order_relaxed) - 1;
  for (;;) {
    node *n = nx(x, level);
    if (n) {
      x = n;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

/* Whether node x's row is still inside the range's end bound (end NULL: no bound). */
static inline bool before_end(const node *x, const uint8_t *end, size_t end_len, bool incl) {
  if (!end) return true;
  int c = kv_bytes_cmp(x->cell.row, x->cell.row_len, end, end_len);
  return c < 0 || (c == 0 && incl);
}

void kv_memstore_estimate(kv_memstore *m, const uint8_t *start, size_t start_len,
                          bool start_incl, const uint8_t *end, size_t end_len, bool end_incl,
                          uint64_t exact, uint64_t *cells, uint64_t *rows, uint64_t *bytes) {
  *cells = *rows = *bytes = 0;
  node *x;
  if (start) {
    kv_cell t = kv_cell_row_first(start, (uint32_t)start_len);
    x = find_ge(m, &t, NULL);
  } else {
    x = nx(m->head, 0);
  }
  if (start && !start_incl) /* the versions of row `start` are left out */
    while (x && kv_bytes_cmp(x->cell.row, x->cell.row_len, start, start_len) == 0) x = nx(x, 0);
  /* the exact part: cell by cell */
  const node *prev = NULL;
  uint64_t n = 0;
  for (; x && n < exact && before_end(x, end, end_len, end_incl); x = nx(x, 0), n++) {
    if (!prev || kv_bytes_cmp(prev->cell.row, prev->cell.row_len, x->cell.row,
                              x->cell.row_len) != 0)
      (*rows)++;
    *bytes += (uint64_t)x->cell.row_len + x->cell.qual_len + x->cell.value_len + 16;
    prev = x;
  }
  *cells = n;
  if (!x || !before_end(x, end, end_len, end_incl) || n == 0) return;
  /* the rest, from x (in the range, not yet counted): a step from x at level L passes x and
     the nodes below level L up to the next node of height > L, a gap of about BRANCHING^L
     cells (geometric: its spread is about its mean). The walk climbs a level after CLIMB
     steps on one (when x is tall enough) and comes down when the next node at its level
     lies past the end. Every level but the top one takes CLIMB steps or more, so the top
     level's few large steps are a minority of the count; with CLIMB 128 the spread of the
     whole count is under a tenth of it. */
  enum { CLIMB = 128 };
  uint64_t rest = 0, unit = 1;
  int level = 0, steps = 0;
  for (;;) {
    if (steps >= CLIMB && level + 1 < x->height) {
      level++;
      unit *= BRANCHING;
      steps = 0;
    }
    node *y = nx(x, level);
    if (y && before_end(y, end, end_len, end_incl)) {
      rest += unit;
      x = y;
      steps++;
    } else if (level > 0) {
      level--;
      unit /= BRANCHING;
      steps = 0;
    } else {
      rest++; /* x itself, the range's last cell */
      break;
    }
  }
  *cells += rest;
  *rows += (uint64_t)((double)rest * (double)*rows / (double)n + 0.5);
  *bytes += (uint64_t)((double)rest * (double)*bytes / (double)n + 0.5);
}

kv_memstore *kv_memstore_new(void) {
  kv_memstore *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  atomic_init(&m->refs, 1);
  atomic_init(&m->max_height, 1);
  atomic_init(&m->bytes, 0);
  atomic_init(&m->cells, 0);
  atomic_init(&m->max_seq, 0);
  m->rnd = 0x2545F4914F6CDD1Dull ^ (uint64_t)(uintptr_t)m;
  if (!m->rnd) m->rnd = 1;
  m->head = arena_alloc(m, sizeof(node) + MAX_HEIGHT * sizeof(_Atomic(node *)));
  if (!m->head) {
    free(m);
    return NULL;
  }
  atomic_store(&m->bytes, 0); /* the sentinel is not counted */
  memset(&m->head->cell, 0, sizeof m->head->cell);
  m->head->height = MAX_HEIGHT;
  for (int i = 0; i < MAX_HEIGHT; i++) {
    atomic_init(&m->head->next[i], NULL);
    m->finger[i] = m->head;
  }
  m->finger_score = FINGER_MAX;
  return m;
}

void kv_memstore_ref(kv_memstore *m) {
  atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

void kv_memstore_unref(kv_memstore *m) {
  if (!m) return;
  if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1) return;
  arena_block *b = m->blocks;
  while (b) {
    arena_block *n = b->next;
    free(b);
    b = n;
  }
  free(m);
}

/* A cell whose row key equals the last inserted cell's (a row's cells come one after the
** other) does not copy the key: its node points at the bytes the earlier node holds (the
** arena keeps both as long as the memstore lives). The search then compares the new cell
** through that pointer, so its comparisons with the nodes of its own row find the row keys
** equal without reading them (kv_bytes_cmp: the same pointer is equal). */
int kv_memstore_add(kv_memstore *m, const kv_cell *c) {
  int h = random_height(m);
  size_t hdr = sizeof(node) + (size_t)h * sizeof(_Atomic(node *));
  size_t qual_len = c->qual_len;
  size_t val_len = c->type == KV_PUT ? c->value_len : 0;
  bool same_row = m->last_row && c->row_len == m->last_row_len &&
                  kv_bytes_cmp(c->row, c->row_len, m->last_row, m->last_row_len) == 0;
  size_t row_copy = same_row ? 0 : c->row_len;
  node *x = arena_alloc(m, hdr + row_copy + qual_len + val_len);
  if (!x) return kv_error(KV_ERR_NOMEM, "memstore: out of memory inserting a cell");
  uint8_t *p = (uint8_t *)x + hdr;
  x->cell = *c;
  x->height = h;
  if (same_row) {
    x->cell.row = m->last_row;
  } else {
    x->cell.row = p;
    kv_copy(p, c->row, c->row_len);
    p += c->row_len;
    m->last_row = x->cell.row;
    m->last_row_len = c->row_len;
  }
  x->cell.qual = p;
  kv_copy(p, c->qual, qual_len);
  p += qual_len;
  x->cell.value = p;
  x->cell.value_len = (uint32_t)val_len;
  kv_copy(p, c->value, val_len);

  node *prev[MAX_HEIGHT];
  int cur = atomic_load_explicit(&m->max_height, memory_order_relaxed);
  if (!finger_find(m, &x->cell, cur, prev)) find_ge(m, &x->cell, prev);
  if (h > cur) {
    for (int i = cur; i < h; i++) prev[i] = m->head;
    /* A reader seeing the new height before the node is linked finds NULL from head at
    ** those levels and drops down: harmless. */
    atomic_store_explicit(&m->max_height, h, memory_order_relaxed);
  }
  for (int i = 0; i < h; i++) {
    atomic_init(&x->next[i], atomic_load_explicit(&prev[i]->next[i], memory_order_relaxed));
    atomic_store_explicit(&prev[i]->next[i], x, memory_order_release);
  }
  /* The finger becomes the search path of a key just after x: x itself on x's levels. */
  int top = h > cur ? h : cur;
  for (int i = 0; i < top; i++) m->finger[i] = i < h ? x : prev[i];
  atomic_store_explicit(&m->cells, atomic_load_explicit(&m->cells, memory_order_relaxed) + 1,
                        memory_order_relaxed); /* single writer: no locked add */
  if (c->seq > atomic_load_explicit(&m->max_seq, memory_order_relaxed))
    atomic_store_explicit(&m->max_seq, c->seq, memory_order_relaxed);
  return KV_OK;
}

size_t kv_memstore_bytes(const kv_memstore *m) {
  return atomic_load_explicit(&((kv_memstore *)m)->bytes, memory_order_relaxed);
}

uint64_t kv_memstore_cells(const kv_memstore *m) {
  return atomic_load_explicit(&((kv_memstore *)m)->cells, memory_order_relaxed);
}

uint64_t kv_memstore_max_seq(const kv_memstore *m) {
  return atomic_load_explicit(&((kv_memstore *)m)->max_seq, memory_order_relaxed);
}

/* ---- iterator ------------------------------------------------------------------------- */

typedef struct mem_iter {
  kv_iter base;        /* vtable */
  kv_memstore *m;      /* referenced memstore */
  node *cur;           /* current node, NULL when not valid */
} mem_iter;

static bool it_valid(kv_iter *it) { return ((mem_iter *)it)->cur != NULL; }

static void it_seek_first(kv_iter *it) {
  mem_iter *mi = (mem_iter *)it;
  mi->cur = nx(mi->m->head, 0);
}

static void it_seek_last(kv_iter *it) {
  mem_iter *mi = (mem_iter *)it;
  node *x = find_last(mi->m);
  mi->cur = x == mi->m->head ? NULL : x;
}

static void it_seek(kv_iter *it, const kv_cell *target) {
  mem_iter *mi = (mem_iter *)it;
  mi->cur = find_ge(mi->m, target, NULL);
}

static void it_seek_for_prev(kv_iter *it, const kv_cell *target) {
  mem_iter *mi = (mem_iter *)it;
  node *x = find_le(mi->m, target);
  mi->cur = x == mi->m->head ? NULL : x;
}

/* A walk to the next node waits for its cache lines (nodes sit in the arena in insertion
** order, not list order: a flush walking a large memstore misses on almost every node), so
** the node after it is prefetched while the caller works on this one. */
static void it_next(kv_iter *it) {
  mem_iter *mi = (mem_iter *)it;
  node *x = nx(mi->cur, 0);
  mi->cur = x;
  if (x) {
    node *y = atomic_load_explicit(&x->next[0], memory_order_relaxed);
    if (y) {
      __builtin_prefetch(y);
      __builtin_prefetch((const char *)y + 64);
    }
  }
}

static void it_prev(kv_iter *it) {
  mem_iter *mi = (mem_iter *)it;
  node *x = find_lt(mi->m, &mi->cur->cell);
  mi->cur = x == mi->m->head ? NULL : x;
}

static const kv_cell *it_cell(kv_iter *it) { return &((mem_iter *)it)->cur->cell; }

static int it_status(kv_iter *it) { return KV_OK; }

static void it_destroy(kv_iter *it) {
  mem_iter *mi = (mem_iter *)it;
  kv_memstore_unref(mi->m);
  free(mi);
}

static const kv_iter_ops mem_iter_ops = {
  it_valid, it_seek_first, it_seek_last, it_seek, it_seek_for_prev,
  it_next, it_prev, it_cell, it_status, it_destroy,
};

kv_iter *kv_memstore_iter_new(kv_memstore *m) {
  mem_iter *mi = malloc(sizeof *mi);
  if (!mi) return NULL;
  mi->base.ops = &mem_iter_ops;
  kv_memstore_ref(m);
  mi->m = m;
  mi->cur = NULL;
  return &mi->base;
}
