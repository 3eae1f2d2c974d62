/*
** kv/util/cache.h: the block cache, a sharded LRU cache (with a second chance for entries hit)
** of decoded store-file blocks shared by every store file of one store.
**
** Entries are keyed by (file number, a number within the file) and hold an opaque value
** with a byte charge and a deleter. The cache is split into shards, each with its own mutex,
** hash table and LRU list, so the critical section of a lookup is a hash probe and a
** reference count. A file's consecutive numbers go round the shards in turn, so a store
** file's blocks keyed by their index (kv/sf/sf_iter.c) fill the shards alike; other numbers
** (byte offsets, as the column cache uses) spread by their low bits.
** A lookup or insert hands back a reference; an entry is freed only when it has left the
** cache (evicted, erased, or the cache freed) and its last reference is released, so an
** iterator may keep reading a block while the cache evicts it. Entries in use are never
** evicted; they still count against the capacity.
** Not here: what a value is (kv/sf/sf_iter.c caches packed compact blocks, kv/sf/sf_cblock.h),
** I/O of any kind.
*/
#ifndef ROWAN_KV_CACHE_H
#define ROWAN_KV_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kv_cache kv_cache;
typedef struct kv_cache_entry kv_cache_entry;

/* Counters of a cache (approximate while other threads use it). */
typedef struct kv_cache_counters {
  uint64_t hits;       /* lookups that found their entry */
  uint64_t misses;     /* lookups that did not */
  uint64_t inserts;    /* entries inserted */
  uint64_t meta_hits, meta_misses, meta_inserts; /* the same for keys with KV_CACHE_META
                          set (counted here only, not above) */
  uint64_t evictions;  /* entries pushed out by capacity */
  uint64_t erased;     /* entries dropped because their file went away */
  size_t usage;        /* bytes charged by entries in the cache */
  size_t capacity;     /* the configured capacity */
} kv_cache_counters;

/* A key number (off) with this bit set names a file's metadata (a bloom filter partition,
** kv/sf/sf_filter.c), not a block: its entry is cached alike, but its lookups and inserts are
** counted apart (meta_hits, meta_misses, meta_inserts), so a block's counters stay blocks'. */
#define KV_CACHE_META (1ull << 63)

/* A new cache holding at most `capacity` bytes of charges. NULL when out of memory. */
kv_cache *kv_cache_new(size_t capacity);
/* Let `big` and `small` share big's capacity as one budget (the block cache and the
** column cache of kv/colscan): small keeps its own capacity as its upper bound; big's shards
** give way to what small holds (each shard's share is big's capacity less small's usage,
** divided evenly), and an insert into small that puts the two over big's capacity evicts
** from big until they fit again (entries in use excepted). Call once, before either is
** used; both must outlive each other's use. */
void kv_cache_share(kv_cache *big, kv_cache *small);
/* Free the cache and every entry not in use. REQUIRES: no entry is still referenced. NULL
** is a no-op. */
void kv_cache_free(kv_cache *c);
/* The entry for (file, off) with a new reference, or NULL (a miss). Counts a hit or miss. */
kv_cache_entry *kv_cache_lookup(kv_cache *c, uint64_t file, uint64_t off);
/* kv_cache_lookup that counts a hit but not a miss: for a reader that reads the block
** elsewhere only if another test (a bloom filter) says so, and counts the miss then. */
kv_cache_entry *kv_cache_probe(kv_cache *c, uint64_t file, uint64_t off);
/* Count one miss of (file, off): for the reader of kv_cache_probe that went on to read the
** block itself. */
void kv_cache_note_miss(kv_cache *c, uint64_t file, uint64_t off);
/* Admission hint for a reader that may skip caching (a point read): true when an entry of
** `charge` bytes under (file, off) fits in its shard without evicting (with asks >= 3, once
** the shard has evicted: in seven eighths of the shard, so a full shard's slack is not
** taken; the shard is filling again, its whole room free, from when an ask finds it below
** that), or when this is the
** `asks`-th time lately the key was asked for (2 to 4; 2: asked for twice in a short while,
** worth evicting for, as in 2Q's ghost list); false otherwise, and the key and its count
** are remembered in a small per-shard ghost table (one slot per key hash: another key
** refused into the slot forgets it). A reader whose refusal is cheap and whose keys are
** spread over far more blocks than the table holds asks for 3: under uniform point reads
** a third ask in the window is rarer than a second by about the table's share of the
** blocks, while a hot block is still admitted after a few reads. */
bool kv_cache_admit(kv_cache *c, uint64_t file, uint64_t off, size_t charge, unsigned asks);
/* Insert `value` (charged `charge` bytes; `deleter(value)` frees it) under (file, off),
** replacing any entry with that key, and return it with one reference for the caller.
** Entries not in use are evicted to make room, least recently inserted first, but an entry
** hit since its insert gets a second chance (kv/util/cache.c). NULL when out of memory
** or when the charge is over the shard's capacity: then the value is NOT taken and the
** caller keeps owning it. */
kv_cache_entry *kv_cache_insert(kv_cache *c, uint64_t file, uint64_t off, void *value,
                                size_t charge, void (*deleter)(void *value));
/* The value of an entry the caller holds a reference to. */
void *kv_cache_value(const kv_cache_entry *e);
/* Drop a reference (NULL is a no-op); the last one of an entry out of the cache frees it. */
void kv_cache_release(kv_cache *c, kv_cache_entry *e);
/* Drop every entry of file `file` from the cache (entries in use are freed when released). */
void kv_cache_erase_file(kv_cache *c, uint64_t file);
/* Copy the counters (summed over shards) into *out. */
void kv_cache_get_counters(kv_cache *c, kv_cache_counters *out);

/* The data behind the cache, for its users' choice of what form to keep entries in (the
** store file iterator packs a block narrow, kv/sf/sf_cblock.h, when the data is over the
** limit): kv_cache_note_data adds delta bytes (negative to take them away: an open store
** file's raw block bytes, kv/db/db_open.c; NULL c: nothing), kv_cache_set_data_limit sets
** the bound (three fifths of the capacity unless set; 0: over whenever there is data;
** SIZE_MAX: never), kv_cache_data_over says whether the data is over it. Atomic; the cache
** itself does not use them. */
void kv_cache_note_data(kv_cache *c, int64_t delta);
void kv_cache_set_data_limit(kv_cache *c, size_t limit);
bool kv_cache_data_over(const kv_cache *c);

#endif /* ROWAN_KV_CACHE_H */
