/*
** kv/util/cache.c: the sharded LRU block cache of kv/util/cache.h.
**
** Each shard has a mutex, an open-addressing hash table (linear probing; each slot holds
** the key's 32-bit hash beside the entry pointer, so a probe compares hashes in the table's
** own cache lines and touches an entry only when its hash matches: a miss, the common case
** of a point read over more data than the cache holds, reads no entry at all; doubled when
** half full, backward-shift deletion) and one LRU list of the entries in the cache, most
** recently used at the head.
** Reference counts live under the shard mutex: the cache itself holds one reference on each
** entry it contains, each lookup or insert hands out one more. Eviction walks the list from
** the tail and skips entries in use (they are few: one per open iterator). Values are freed
** outside the mutex. A hit does not move the entry: it only marks it referenced (second
** chance, CLOCK-style), so a point read in a large cache touches the entry alone, not its two
** neighbours (cold lines) and the list head. Eviction walks from the tail: a referenced entry
** loses its mark and goes to the head instead of out; the first unmarked, unused one goes.
** The order evicted is LRU by the time of the last insert or second chance, not the last hit.
** Two caches can share one budget (kv_cache_share): the larger gives way to what the smaller
** holds (its shards' shares shrink by the smaller's usage, read from an atomic total), and an
** insert into the smaller that puts the two over the budget trims the larger.
** Not here: what is cached (kv/sf/sf_iter.c), per-scan metrics (kv_sf_io).
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "kv/util/cache.h"

#define MAX_SHARDS 16u
#define MIN_SHARD_BYTES ((size_t)4 << 20) /* fewer shards for a small cache */
#define GHOSTS 32u /* per shard: keys a full shard refused, admitted when asked again */

struct kv_cache_entry {
  uint64_t file;              /* key: file number */
  uint64_t off;               /* key: block offset */
  uint32_t hash;              /* hash of the key */
  uint32_t refs;              /* references, the cache's own included (shard mutex) */
  bool in_cache;              /* the hash table and LRU list hold it */
  void *value;                /* the cached value */
  size_t charge;              /* bytes it counts for */
  void (*deleter)(void *);    /* frees value */
  kv_cache_entry *hnext;      /* a chain of dead entries to free (free_chain) */
  kv_cache_entry *prev, *next; /* LRU list (head = most recent) */
  bool referenced;            /* hit since it last went to the head (its second chance) */
};

/* One slot of a shard's table: empty when e is NULL. */
typedef struct tslot {
  uint32_t hash;              /* key_hash of e's key */
  kv_cache_entry *e;          /* the entry, or NULL */
} tslot;

typedef struct shard {
  struct kv_cache *c;         /* the cache it belongs to (its usage total) */
  pthread_mutex_t mu;         /* guards everything below and the entries' refs */
  tslot *slots;               /* hash table: n_slots slots, at most half in use */
  uint32_t n_slots;           /* a power of two */
  uint32_t n_entries;         /* entries in the cache */
  kv_cache_entry *head, *tail; /* LRU list */
  size_t usage;               /* sum of charges in the cache */
  uint64_t hits, misses, inserts, evictions, erased; /* counters */
  uint64_t ghost[GHOSTS];     /* keys refused by kv_cache_admit lately (0 = empty) */
  bool evicted;               /* evicted since kv_cache_admit last saw it below 7/8 of its
                                 share: its free room may be an eviction's slack */
  uint64_t meta_hits, meta_misses, meta_inserts;     /* counters of KV_CACHE_META keys */
} shard;

struct kv_cache {
  shard shards[MAX_SHARDS];   /* the shards in use come first */
  uint32_t n_shards;          /* shards in use (a power of two) */
  size_t capacity;            /* total capacity (the budget, when shared) */
  _Atomic size_t total;       /* the shards' usage summed (changed under their mutexes) */
  kv_cache *yield_to;         /* kv_cache_share: its usage comes out of this capacity */
  kv_cache *trims;            /* kv_cache_share: the cache this one's inserts trim */
  _Atomic int64_t data;       /* kv_cache_note_data: bytes of the data read through it */
  _Atomic size_t data_limit;  /* kv_cache_data_over's bound */
};

/* A shard's share of the capacity now: an even share of the capacity less what the cache
** it yields to holds. */
static size_t share_of(const kv_cache *c) {
  size_t cap = c->capacity;
  if (c->yield_to) {
    size_t o = atomic_load_explicit(&c->yield_to->total, memory_order_relaxed);
    cap = o < cap ? cap - o : 0;
  }
  return cap / c->n_shards;
}

static void add_usage(shard *s, size_t charge) {
  s->usage += charge;
  atomic_fetch_add_explicit(&s->c->total, charge, memory_order_relaxed);
}

static void sub_usage(shard *s, size_t charge) {
  s->usage -= charge;
  atomic_fetch_sub_explicit(&s->c->total, charge, memory_order_relaxed);
}

static uint64_t key_mix(uint64_t file, uint64_t off) {
  uint64_t h = file * 0x9E3779B97F4A7C15ull ^ (off + 0x632BE59BD9B4E019ull);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return h;
}

static uint32_t key_hash(uint64_t file, uint64_t off) { return (uint32_t)key_mix(file, off); }

kv_cache *kv_cache_new(size_t capacity) {
  kv_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  uint32_t n = 1;
  while (n < MAX_SHARDS && capacity / (n * 2) >= MIN_SHARD_BYTES) n *= 2;
  c->n_shards = n;
  c->capacity = capacity;
  atomic_init(&c->data, 0);
  atomic_init(&c->data_limit, capacity / 5 * 3);
  for (uint32_t i = 0; i < n; i++) {
    shard *s = &c->shards[i];
    s->c = c;
    pthread_mutex_init(&s->mu, NULL);
    s->n_slots = 64;
    s->slots = calloc(s->n_slots, sizeof *s->slots);
    if (!s->slots) {
      c->n_shards = i + 1;
      kv_cache_free(c);
      return NULL;
    }
  }
  return c;
}

/* The shard of key (file, off): a file's keys that are consecutive numbers (the store
** file iterator's block indexes) go round the shards in turn, so a file's blocks, of about
** one size, fill every shard alike and none overflows its share while others have room (a
** hash would leave some shards with a few blocks more than their share: those blocks then
** evicted one another in a cache large enough for all). Other keys, such as byte offsets,
** spread as their low bits do; the higher bits are added in too, so keys whose low bits are
** one constant (the column cache's block offset << 16 | column hash, kv/colscan/colscan_eval.c)
** still spread instead of all landing in one shard. */
static shard *shard_of(kv_cache *c, uint64_t file, uint64_t off) {
  uint64_t f = file * 0x9E3779B97F4A7C15ull;
  uint32_t k = (uint32_t)off + (uint32_t)(off >> 16) + (uint32_t)(off >> 32) +
               (uint32_t)(off >> 48);
  return &c->shards[((uint32_t)(f >> 40) + k) & (c->n_shards - 1)];
}

static void lru_unlink(shard *s, kv_cache_entry *e) {
  if (e->prev) e->prev->next = e->next;
  else s->head = e->next;
  if (e->next) e->next->prev = e->prev;
  else s->tail = e->prev;
  e->prev = e->next = NULL;
}

static void lru_push_head(shard *s, kv_cache_entry *e) {
  e->referenced = false;
  e->prev = NULL;
  e->next = s->head;
  if (s->head) s->head->prev = e;
  else s->tail = e;
  s->head = e;
}

/* The slot holding key (file, off), or the empty slot where the probe for it ended. */
static uint32_t find_slot(const shard *s, uint64_t file, uint64_t off, uint32_t hash) {
  uint32_t mask = s->n_slots - 1, i = hash & mask;
  for (;;) {
    const tslot *sl = &s->slots[i];
    if (!sl->e || (sl->hash == hash && sl->e->file == file && sl->e->off == off)) return i;
    i = (i + 1) & mask;
  }
}

/* Empty slot i, moving later entries of its probe run back so every entry stays reachable
** from its home slot (backward-shift deletion). */
static void slot_delete(shard *s, uint32_t i) {
  uint32_t mask = s->n_slots - 1, j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!s->slots[j].e) break;
    uint32_t k = s->slots[j].hash & mask; /* its home */
    /* it stays when its home lies cyclically in (i, j] */
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
    s->slots[i] = s->slots[j];
    i = j;
  }
  s->slots[i].e = NULL;
  s->slots[i].hash = 0;
}

/* Take e out of the table and list; returns true when its last reference went with it
** (the caller frees it after unlocking). REQUIRES: s->mu held, e in the cache. */
static bool remove_entry(shard *s, kv_cache_entry *e) {
  uint32_t i = find_slot(s, e->file, e->off, e->hash);
  if (s->slots[i].e == e) slot_delete(s, i);
  e->hnext = NULL;
  lru_unlink(s, e);
  e->in_cache = false;
  sub_usage(s, e->charge);
  s->n_entries--;
  return --e->refs == 0;
}

static void free_entry(kv_cache_entry *e) {
  if (e->deleter) e->deleter(e->value);
  free(e);
}

/* Free a chain of dead entries linked through hnext. */
static void free_chain(kv_cache_entry *dead) {
  while (dead) {
    kv_cache_entry *n = dead->hnext;
    free_entry(dead);
    dead = n;
  }
}

/* Double the table. False when out of memory (the table is unchanged). */
static bool grow_table(shard *s) {
  if (s->n_slots > UINT32_MAX / 4) return false;
  uint32_t nb = s->n_slots * 2, mask = nb - 1;
  tslot *t = calloc(nb, sizeof *t);
  if (!t) return false;
  for (uint32_t i = 0; i < s->n_slots; i++) {
    if (!s->slots[i].e) continue;
    uint32_t j = s->slots[i].hash & mask;
    while (t[j].e) j = (j + 1) & mask;
    t[j] = s->slots[i];
  }
  free(s->slots);
  s->slots = t;
  s->n_slots = nb;
  return true;
}

/* Evict entries of shard s, from the tail, until `charge` more bytes fit in `cap`: an entry
** hit since it went to the head is moved there again, unmarked (the walk reaches it again
** after the entries ahead of it, so it goes only if they are all needed); one in use stays.
** The evicted entries are chained onto `dead` (freed by the caller after unlocking), which
** is returned. REQUIRES: s->mu held. */
static kv_cache_entry *evict(shard *s, size_t cap, size_t charge, kv_cache_entry *dead) {
  kv_cache_entry *v = s->tail;
  while (v && s->usage + charge > cap) {
    kv_cache_entry *p = v->prev;
    if (v->referenced) {
      lru_unlink(s, v);
      lru_push_head(s, v);
      if (!p) p = v; /* it was the head: look at it once more, unmarked now */
    } else if (v->refs == 1) {
      remove_entry(s, v); /* refs was 1: it is dead now */
      v->hnext = dead;
      dead = v;
      s->evictions++;
      s->evicted = true;
    }
    v = p;
  }
  return dead;
}

/* Evict from every shard of c until each is within its share (after the cache it yields to
** grew). */
static void trim(kv_cache *c) {
  size_t cap = share_of(c);
  for (uint32_t i = 0; i < c->n_shards; i++) {
    shard *s = &c->shards[i];
    pthread_mutex_lock(&s->mu);
    kv_cache_entry *dead = s->usage > cap ? evict(s, cap, 0, NULL) : NULL;
    pthread_mutex_unlock(&s->mu);
    free_chain(dead);
  }
}

void kv_cache_share(kv_cache *big, kv_cache *small) {
  big->yield_to = small;
  small->trims = big;
}

void kv_cache_free(kv_cache *c) {
  if (!c) return;
  for (uint32_t i = 0; i < c->n_shards; i++) {
    shard *s = &c->shards[i];
    kv_cache_entry *dead = NULL;
    while (s->head) {
      kv_cache_entry *e = s->head;
      if (remove_entry(s, e)) {
        e->hnext = dead;
        dead = e;
      }
    }
    free_chain(dead);
    free(s->slots);
    pthread_mutex_destroy(&s->mu);
  }
  free(c);
}

bool kv_cache_admit(kv_cache *c, uint64_t file, uint64_t off, size_t charge, unsigned asks) {
  uint64_t mix = key_mix(file, off);
  uint32_t h = (uint32_t)mix; /* key_hash */
  shard *s = shard_of(c, file, off);
  /* the whole key's mix (neighbouring keys differ) less its low two bits, which count the
     times the key was refused since it took the slot; never 0 (the empty slot) */
  uint64_t g = mix & ~(uint64_t)3;
  if (g == 0) g = 4;
  if (asks < 2) asks = 2;
  if (asks > 4) asks = 4;
  uint64_t *slot = &s->ghost[(h >> 8) % GHOSTS];
  pthread_mutex_lock(&s->mu);
  unsigned seen = (*slot & ~(uint64_t)3) == g ? (unsigned)(*slot & 3) + 1 : 0;
  /* a strict reader (asks >= 3) takes free room only while the shard is filling: the room
     an eviction of a larger entry leaves in a full shard is not for it. A shard that has
     not evicted since it was last below seven eighths is filling: its room is free (a
     working set that fits is then cached whole, not seven eighths of it) */
  size_t share = share_of(c), strict = share - share / 8;
  if (s->usage + charge <= strict) s->evicted = false;
  size_t room = asks >= 3 && s->evicted ? strict : share;
  bool ok = s->usage + charge <= room || seen + 1 >= asks;
  *slot = ok ? 0 : g | (seen < 3 ? seen : 3);
  pthread_mutex_unlock(&s->mu);
  return ok;
}

/* The lookup; a miss is counted when count_miss. */
static kv_cache_entry *lookup(kv_cache *c, uint64_t file, uint64_t off, bool count_miss) {
  uint32_t h = key_hash(file, off);
  shard *s = shard_of(c, file, off);
  pthread_mutex_lock(&s->mu);
  kv_cache_entry *e = s->slots[find_slot(s, file, off, h)].e;
  if (e) {
    e->refs++;
    /* mark it only: relinking would touch two other entries and the head, cold in a large
       cache; eviction gives a marked entry a second chance (kv_cache_insert) */
    if (!e->referenced) e->referenced = true;
    if (off & KV_CACHE_META) s->meta_hits++;
    else s->hits++;
  } else if (count_miss) {
    if (off & KV_CACHE_META) s->meta_misses++;
    else s->misses++;
  }
  pthread_mutex_unlock(&s->mu);
  return e;
}

kv_cache_entry *kv_cache_lookup(kv_cache *c, uint64_t file, uint64_t off) {
  return lookup(c, file, off, true);
}

kv_cache_entry *kv_cache_probe(kv_cache *c, uint64_t file, uint64_t off) {
  return lookup(c, file, off, false);
}

void kv_cache_note_miss(kv_cache *c, uint64_t file, uint64_t off) {
  shard *s = shard_of(c, file, off);
  pthread_mutex_lock(&s->mu);
  s->misses++;
  pthread_mutex_unlock(&s->mu);
}

kv_cache_entry *kv_cache_insert(kv_cache *c, uint64_t file, uint64_t off, void *value,
                                size_t charge, void (*deleter)(void *value)) {
  uint32_t h = key_hash(file, off);
  shard *s = shard_of(c, file, off);
  size_t cap = share_of(c);
  if (charge > cap) return NULL;
  kv_cache_entry *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->file = file;
  e->off = off;
  e->hash = h;
  e->refs = 2; /* the cache's and the caller's */
  e->in_cache = true;
  e->value = value;
  e->charge = charge;
  e->deleter = deleter;
  kv_cache_entry *dead = NULL;
  pthread_mutex_lock(&s->mu);
  if ((s->n_entries + 2) * 2 > s->n_slots && !grow_table(s) && s->n_entries + 2 >= s->n_slots) {
    pthread_mutex_unlock(&s->mu); /* no room for an empty slot: refuse (value not taken) */
    free(e);
    return NULL;
  }
  kv_cache_entry *old = s->slots[find_slot(s, file, off, h)].e;
  if (old && remove_entry(s, old)) {
    old->hnext = dead;
    dead = old;
  }
  dead = evict(s, cap, charge, dead);
  uint32_t at = find_slot(s, file, off, h);
  s->slots[at].hash = h;
  s->slots[at].e = e;
  lru_push_head(s, e);
  add_usage(s, charge);
  if (off & KV_CACHE_META) s->meta_inserts++;
  else s->inserts++;
  s->n_entries++;
  pthread_mutex_unlock(&s->mu);
  free_chain(dead);
  kv_cache *big = c->trims;
  if (big && atomic_load_explicit(&big->total, memory_order_relaxed) +
                     atomic_load_explicit(&c->total, memory_order_relaxed) >
                 big->capacity)
    trim(big);
  return e;
}

void *kv_cache_value(const kv_cache_entry *e) { return e->value; }

void kv_cache_release(kv_cache *c, kv_cache_entry *e) {
  if (!e) return;
  shard *s = shard_of(c, e->file, e->off);
  pthread_mutex_lock(&s->mu);
  bool last = --e->refs == 0;
  pthread_mutex_unlock(&s->mu);
  if (last) free_entry(e);
}

void kv_cache_erase_file(kv_cache *c, uint64_t file) {
  for (uint32_t i = 0; i < c->n_shards; i++) {
    shard *s = &c->shards[i];
    kv_cache_entry *dead = NULL;
    pthread_mutex_lock(&s->mu);
    for (kv_cache_entry *e = s->head; e;) {
      kv_cache_entry *n = e->next;
      if (e->file == file) {
        s->erased++;
        if (remove_entry(s, e)) {
          e->hnext = dead;
          dead = e;
        }
      }
      e = n;
    }
    pthread_mutex_unlock(&s->mu);
    free_chain(dead);
  }
}

void kv_cache_get_counters(kv_cache *c, kv_cache_counters *out) {
  kv_cache_counters t = {0};
  for (uint32_t i = 0; i < c->n_shards; i++) {
    shard *s = &c->shards[i];
    pthread_mutex_lock(&s->mu);
    t.hits += s->hits;
    t.misses += s->misses;
    t.inserts += s->inserts;
    t.meta_hits += s->meta_hits;
    t.meta_misses += s->meta_misses;
    t.meta_inserts += s->meta_inserts;
    t.evictions += s->evictions;
    t.erased += s->erased;
    t.usage += s->usage;
    pthread_mutex_unlock(&s->mu);
  }
  t.capacity = c->capacity;
  *out = t;
}

void kv_cache_note_data(kv_cache *c, int64_t delta) {
  if (c) atomic_fetch_add_explicit(&c->data, delta, memory_order_relaxed);
}

void kv_cache_set_data_limit(kv_cache *c, size_t limit) {
  if (c) atomic_store_explicit(&c->data_limit, limit, memory_order_relaxed);
}

bool kv_cache_data_over(const kv_cache *c) {
  int64_t d = atomic_load_explicit(&c->data, memory_order_relaxed);
  return d > 0 && (uint64_t)d > atomic_load_explicit(&c->data_limit, memory_order_relaxed);
}
