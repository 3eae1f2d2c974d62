/*
** kv/sf/sf_filter.h: the partitioned bloom filter of a store file (format version 4,
** docs/FORMAT.md Part 2 "Partitioned bloom filter"): the writer's builder, which cuts the
** filter into partitions of about KV_SF_FILTER_PART_BYTES at block boundaries as rows come,
** and the reader's side, which keeps only the partition index in memory and probes one
** partition per row key, read in place from the mapped file, or through the block cache,
** or with a pread. RocksDB's partitioned filters are the model.
**
** Not here: the single filter of small files and older versions (kv/util/bloom.h, which
** both use for the bits), where a file's sections go (kv/sf/sf_write.c, sf_read.c).
*/
#ifndef ROWAN_KV_SF_FILTER_H
#define ROWAN_KV_SF_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include "kv/sf/sf_int.h"

/* Target bytes of bits per partition: a partition is closed once it holds this many bytes
** worth of keys, at the next block that starts with a new row. */
#define KV_SF_FILTER_PART_BYTES 4096u

/* ---- Writer side ---- */
typedef struct kv_sf_fbuild {
  uint32_t bits;          /* bloom bits per key */
  uint32_t part_keys;     /* keys after which the next block boundary closes a partition */
  uint64_t *h;            /* the open partition's key hashes */
  size_t n, cap;          /* used / allocated */
  kv_sfbuf first;         /* the open partition's first row key */
  bool started;           /* a boundary was seen (first holds a key) */
  kv_sfbuf parts;         /* the closed partitions, each followed by its xxh3 */
  kv_sfbuf pindex;        /* their index entries: varint size, varint key length, key */
  uint64_t nparts;        /* closed partitions */
} kv_sf_fbuild;

/* An empty builder with `bits_per_key` bits per key (1..64). */
void kv_sf_fbuild_init(kv_sf_fbuild *f, uint32_t bits_per_key);
/* Release what f holds (f is empty again). */
void kv_sf_fbuild_free(kv_sf_fbuild *f);
/* A block starts whose first cell begins the row [row, row+len) (a row continued from the
** block before is no boundary: its hash is in the partition of the block it starts in):
** the open partition is closed here if it holds part_keys keys or more, and the next one
** starts with this row. Call before the row's hash is added. KV_OK or KV_ERR_NOMEM. */
int kv_sf_fbuild_boundary(kv_sf_fbuild *f, const uint8_t *row, uint32_t len);
/* Add n row key hashes (kv_bloom_hash) to the open partition. KV_OK or KV_ERR_NOMEM. */
int kv_sf_fbuild_add(kv_sf_fbuild *f, const uint64_t *h, size_t n);
/* Finish: when no partition was closed, *single gets the plain filter over the open
** partition's keys (kv_bloom_build's bytes, malloc'ed, *single_len bytes: the section of
** a version 2 or 3 file) and *tail is NULL; else the open partition is closed, f->parts
** holds the partitions and *tail (malloc'ed, *tail_len bytes) the partition index and its
** length: the section is f->parts then *tail (version 4). KV_OK or KV_ERR_NOMEM. */
int kv_sf_fbuild_finish(kv_sf_fbuild *f, uint8_t **single, size_t *single_len, uint8_t **tail,
                        size_t *tail_len);

/* ---- Reader side ---- */
/* Read and check the partitioned filter section [off, off+size) of r (format version 4):
** its checksum `sum` over every byte (read in chunks with pread, not kept), then the
** partition index kept in r (kv_sf_reader.fparts). KV_OK; KV_ERR_CORRUPT naming the
** section and offset; the env's error; KV_ERR_NOMEM. */
int kv_sf_filter_open(kv_sf_reader *r, uint64_t off, uint64_t size, uint64_t sum);
/* The partitioned filter's answer for a row key: false when certainly absent. A partition
** that cannot be read or fails its checks answers true (the block read that follows
** reports the damage). REQUIRES r->nfparts > 0. */
bool kv_sf_filter_may_contain(const kv_sf_reader *r, const uint8_t *row, uint32_t len);

#endif /* ROWAN_KV_SF_FILTER_H */
