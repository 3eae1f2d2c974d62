/*
** cli/import_src.c: an import input source (cli/import_int.h). It opens a file, looks at
** its first four bytes and reads it as lz4 frames (magic 04 22 4D 18, liblz4's frame API,
** concatenated frames allowed) or else through zlib's gzread, which inflates gzip (magic
** 1F 8B, concatenated members allowed) and passes any other file through unchanged. It
** reports how many bytes of the file it has consumed, for progress. A UTF-8 byte-order mark
** (EF BB BF, as spreadsheet programs write) at the start of the decoded text is dropped, so
** a header's first name does not carry an invisible character.
**
** It does not parse records (import_rec.c does). It reads regular files only (it opens a
** file a second time after looking at its magic bytes, so a pipe would lose them). A
** truncated or damaged compressed file is a read error naming the file, never a quiet
** early end of input.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lz4frame.h>
#include <zlib.h>

#include "cli/import_int.h"

#define LZ4_IN_CAP (64 * 1024) /* compressed bytes read at a time */

struct cli_src {
  const char *kind;          /* "plain", "gzip" or "lz4" */
  char *path;                /* file name, for messages */
  int64_t size;              /* file size, 0 if unknown */
  gzFile gz;                 /* plain or gzip input, or NULL */
  FILE *fp;                  /* lz4 input, or NULL */
  LZ4F_dctx *dctx;           /* lz4 frame decoder */
  unsigned char *in;         /* lz4: compressed bytes read and not yet decoded */
  size_t in_pos, in_len;     /* lz4: next byte to decode and bytes held */
  size_t hint;               /* lz4: last LZ4F_decompress return (0 = frame complete) */
  int64_t consumed;          /* lz4: compressed bytes read from the file */
  unsigned char head[3];     /* the first decoded bytes, held while looking for a BOM */
  size_t head_pos, head_len; /* next byte of head to hand out / bytes held */
  int head_done;             /* the start of the text was checked for a BOM */
};

static void fail(char *err, size_t cap, const char *path, const char *why) {
  snprintf(err, cap, "%s: %s", path, why);
}

int cli_src_open(const char *path, cli_src **out, char *err, size_t cap) {
  *out = NULL;
  cli_src *s = calloc(1, sizeof *s);
  if (!s || !(s->path = strdup(path))) {
    free(s);
    fail(err, cap, path, "out of memory");
    return -1;
  }
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fail(err, cap, path, strerror(errno));
    cli_src_close(s);
    return -1;
  }
  struct stat st;
  if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) s->size = (int64_t)st.st_size;
  else {
    fclose(fp);
    fail(err, cap, path, "not a regular file");
    cli_src_close(s);
    return -1;
  }
  unsigned char magic[4] = {0, 0, 0, 0};
  size_t got = fread(magic, 1, sizeof magic, fp);
  if (got == 4 && magic[0] == 0x04 && magic[1] == 0x22 && magic[2] == 0x4D &&
      magic[3] == 0x18) {
    s->kind = "lz4";
    s->fp = fp;
    s->in = malloc(LZ4_IN_CAP);
    if (!s->in || LZ4F_isError(LZ4F_createDecompressionContext(&s->dctx, LZ4F_VERSION))) {
      fail(err, cap, path, "out of memory");
      cli_src_close(s);
      return -1;
    }
    memcpy(s->in, magic, 4);
    s->in_len = 4;
    s->consumed = 4;
    s->hint = 1;
    *out = s;
    return 0;
  }
  s->kind = (got >= 2 && magic[0] == 0x1F && magic[1] == 0x8B) ? "gzip" : "plain";
  fclose(fp);
  if (!(s->gz = gzopen(path, "rb"))) {
    fail(err, cap, path, errno ? strerror(errno) : "out of memory");
    cli_src_close(s);
    return -1;
  }
  gzbuffer(s->gz, 128 * 1024);
  *out = s;
  return 0;
}

static long read_lz4(cli_src *s, void *buf, size_t cap, char *err, size_t ecap) {
  for (;;) {
    if (s->in_pos < s->in_len) {
      size_t dst = cap, src = s->in_len - s->in_pos;
      size_t r = LZ4F_decompress(s->dctx, buf, &dst, s->in + s->in_pos, &src, NULL);
      if (LZ4F_isError(r)) {
        char why[160];
        snprintf(why, sizeof why, "damaged lz4 frame (%s)", LZ4F_getErrorName(r));
        fail(err, ecap, s->path, why);
        return -1;
      }
      s->in_pos += src;
      s->hint = r;
      if (dst > 0) return (long)dst;
      if (src == 0 && s->in_pos < s->in_len) continue;
    }
    /* Need more input. */
    size_t n = fread(s->in, 1, LZ4_IN_CAP, s->fp);
    if (n == 0) {
      if (ferror(s->fp)) {
        fail(err, ecap, s->path, strerror(errno));
        return -1;
      }
      if (s->hint != 0) {
        fail(err, ecap, s->path, "truncated lz4 frame (unexpected end of file)");
        return -1;
      }
      return 0;
    }
    s->in_pos = 0;
    s->in_len = n;
    s->consumed += (int64_t)n;
  }
}

static long read_decoded(cli_src *s, void *buf, size_t cap, char *err, size_t ecap) {
  if (s->fp) return read_lz4(s, buf, cap, err, ecap);
  if (cap > (1u << 30)) cap = 1u << 30;
  int n = gzread(s->gz, buf, (unsigned)cap);
  int zerr = Z_OK;
  const char *m = n <= 0 ? gzerror(s->gz, &zerr) : NULL;
  /* A truncated gzip file reads as an end of input with Z_BUF_ERROR set. */
  if (n < 0 || (n == 0 && zerr != Z_OK)) {
    char why[200];
    snprintf(why, sizeof why, "%s: %s", strcmp(s->kind, "gzip") == 0 ? "damaged gzip data"
                                                                       : "read error",
             zerr == Z_ERRNO ? strerror(errno) : m);
    fail(err, ecap, s->path, why);
    return -1;
  }
  return n;
}

long cli_src_read(cli_src *s, void *buf, size_t cap, char *err, size_t ecap) {
  if (!s->head_done) { /* gather the first three bytes (or the whole text, if shorter) */
    while (s->head_len < sizeof s->head) {
      long n = read_decoded(s, s->head + s->head_len, sizeof s->head - s->head_len, err, ecap);
      if (n < 0) return -1;
      if (n == 0) break;
      s->head_len += (size_t)n;
    }
    s->head_done = 1;
    if (s->head_len == 3 && s->head[0] == 0xEF && s->head[1] == 0xBB && s->head[2] == 0xBF)
      s->head_pos = 3;
  }
  if (s->head_pos < s->head_len && cap > 0) {
    size_t k = s->head_len - s->head_pos;
    if (k > cap) k = cap;
    memcpy(buf, s->head + s->head_pos, k);
    s->head_pos += k;
    return (long)k;
  }
  return read_decoded(s, buf, cap, err, ecap);
}

int64_t cli_src_offset(const cli_src *s) {
  if (s->fp) return s->consumed;
  z_off_t off = gzoffset(s->gz);
  return off < 0 ? 0 : (int64_t)off;
}

int64_t cli_src_size(const cli_src *s) { return s->size; }

const char *cli_src_kind(const cli_src *s) { return s->kind; }

void cli_src_close(cli_src *s) {
  if (!s) return;
  if (s->gz) gzclose_r(s->gz);
  if (s->fp) fclose(s->fp);
  if (s->dctx) LZ4F_freeDecompressionContext(s->dctx);
  free(s->in);
  free(s->path);
  free(s);
}
