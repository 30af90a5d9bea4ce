/*
 * embed_static.c -- the "static" provider: a SIF-weighted average of word
 * vectors (GloVe-style) read from a compact f16 file, L2-normalised.
 *
 * Layer: a provider behind embed.c; reads files only.
 * Holds: the file parser and writer, the word hash table, SIF weights.
 *
 * File format (little-endian; docs/EMBEDDINGS.md "Static file format"):
 *   0  8 bytes  magic "CAIRNVEC"
 *   8  u32      version (1)
 *   12 u32      dim (1..EMBED_MAX_DIM)
 *   16 u64      n, the number of words (1..STATIC_MAX_WORDS)
 *   24 u32      flags: bit 0 = a u64 count per word follows the words
 *   28 u32      0
 *   32          n words, each a u8 length (1..255) then that many bytes
 *               of lower-case UTF-8, most frequent first, no duplicates
 *   ..          [n u64 counts, when flags bit 0]
 *   ..          n * dim IEEE half floats, word-major
 *
 * SIF weight of a word: a / (a + p(w)) with a = 1e-3 and p(w) its count
 * over the total, or, without counts, Zipf's law over the rank order:
 * p(rank r) = 1 / (r * H_n). (Arora et al.'s common-component removal is
 * not done: it needs a corpus, and this provider is a smoke test.)
 *
 * Must never: trust a length, count or size in the file before checking it
 * against the file's size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "internal.h"
#include "quant.h"

#define STATIC_MAGIC "CAIRNVEC"
#define STATIC_VERSION 1
#define STATIC_HEADER 32
#define STATIC_MAX_WORDS 10000000ULL      /* ten million words */
#define STATIC_MAX_FILE ((size_t)4 << 30)  /* 4 GiB */
#define STATIC_SIF_A 1e-3
#define STATIC_FLAG_COUNTS 1u

struct static_model {
	char *data;             /* the whole file */
	size_t size;
	size_t n;               /* words */
	int dim;
	const unsigned short *vecs; /* n * dim f16 (= vcopy) */
	unsigned short *vcopy;  /* the vectors, in host order and aligned */
	const char **word;      /* n pointers into data (not NUL-terminated) */
	unsigned char *wlen;    /* n lengths */
	float *weight;          /* n SIF weights */
	size_t *slot;           /* hash table: word index + 1, 0 = empty */
	size_t nslot;           /* power of two */
};

static unsigned long long rd64(const unsigned char *p)
{
	unsigned long long v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static unsigned rd32(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 |
	       (unsigned)p[3] << 24;
}

static size_t hash_word(const char *s, size_t len)
{
	unsigned long long h = 1469598103934665603ULL; /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

static long lookup(const struct static_model *m, const char *s, size_t len)
{
	size_t mask = m->nslot - 1, i = hash_word(s, len) & mask;

	while (m->slot[i]) {
		size_t w = m->slot[i] - 1;

		if (m->wlen[w] == len && memcmp(m->word[w], s, len) == 0)
			return (long)w;
		i = (i + 1) & mask;
	}
	return -1;
}

static void static_free(void *impl)
{
	struct static_model *m = impl;

	if (!m)
		return;
	cairn_free(m->data);
	cairn_free(m->vcopy);
	cairn_free(m->word);
	cairn_free(m->wlen);
	cairn_free(m->weight);
	cairn_free(m->slot);
	cairn_free(m);
}

/* Parse and index the file held in m->data. */
static int static_parse(struct static_model *m, const char *path, char *err,
			size_t errsize)
{
	const unsigned char *d = (const unsigned char *)m->data;
	unsigned long long n;
	unsigned flags, version;
	size_t off = STATIC_HEADER, i, total_bytes;
	double hn = 0, total = 0;
	const unsigned char *counts = NULL;

	if (m->size < STATIC_HEADER || memcmp(d, STATIC_MAGIC, 8) != 0) {
		snprintf(err, errsize, "'%s' is not a cairn static vector file",
			 path);
		return CAIRN_CORRUPT;
	}
	version = rd32(d + 8);
	m->dim = (int)rd32(d + 12);
	n = rd64(d + 16);
	flags = rd32(d + 24);
	if (version != STATIC_VERSION) {
		snprintf(err, errsize, "'%s': static file version %u (this "
				       "cairn reads %d)", path, version,
			 STATIC_VERSION);
		return CAIRN_MISMATCH;
	}
	if (rd32(d + 12) == 0 || rd32(d + 12) > EMBED_MAX_DIM || n == 0 ||
	    n > STATIC_MAX_WORDS || (flags & ~STATIC_FLAG_COUNTS)) {
		snprintf(err, errsize, "'%s': bad header (dim %u, %llu words, "
				       "flags %u)", path, rd32(d + 12), n, flags);
		return CAIRN_CORRUPT;
	}
	m->n = (size_t)n;
	m->word = util_calloc(m->n, sizeof(*m->word));
	m->wlen = util_calloc(m->n, 1);
	m->weight = util_calloc(m->n, sizeof(*m->weight));
	for (m->nslot = 16; m->nslot < m->n * 2; m->nslot <<= 1)
		;
	m->slot = util_calloc(m->nslot, sizeof(*m->slot));
	if (!m->word || !m->wlen || !m->weight || !m->slot) {
		snprintf(err, errsize, "out of memory");
		return CAIRN_NOMEM;
	}
	for (i = 0; i < m->n; i++) {
		size_t len;

		if (off >= m->size || d[off] == 0 || off + 1 + d[off] > m->size)
			goto truncated;
		len = d[off];
		m->word[i] = m->data + off + 1;
		m->wlen[i] = (unsigned char)len;
		off += 1 + len;
		if (lookup(m, m->word[i], len) >= 0) {
			snprintf(err, errsize, "'%s': word %zu is a duplicate",
				 path, i);
			return CAIRN_CORRUPT;
		}
		{
			size_t mask = m->nslot - 1;
			size_t h = hash_word(m->word[i], len) & mask;

			while (m->slot[h])
				h = (h + 1) & mask;
			m->slot[h] = i + 1;
		}
	}
	if (flags & STATIC_FLAG_COUNTS) {
		if (m->size - off < m->n * 8)
			goto truncated;
		counts = d + off;
		off += m->n * 8;
	}
	total_bytes = m->n * (size_t)m->dim * 2;
	if (m->size - off != total_bytes) {
		if (m->size - off < total_bytes)
			goto truncated;
		snprintf(err, errsize, "'%s': %zu bytes after the vectors",
			 path, m->size - off - total_bytes);
		return CAIRN_CORRUPT;
	}
	m->vcopy = cairn_malloc(total_bytes);
	if (!m->vcopy) {
		snprintf(err, errsize, "out of memory");
		return CAIRN_NOMEM;
	}
	for (i = 0; i < total_bytes / 2; i++)
		m->vcopy[i] = (unsigned short)(d[off + 2 * i] |
					       d[off + 2 * i + 1] << 8);
	m->vecs = m->vcopy;
	/* SIF weights */
	if (counts) {
		for (i = 0; i < m->n; i++)
			total += (double)rd64(counts + i * 8);
		if (total <= 0) {
			snprintf(err, errsize, "'%s': all word counts are 0",
				 path);
			return CAIRN_CORRUPT;
		}
		for (i = 0; i < m->n; i++) {
			double p = (double)rd64(counts + i * 8) / total;

			m->weight[i] = (float)(STATIC_SIF_A / (STATIC_SIF_A + p));
		}
	} else {
		for (i = 0; i < m->n; i++)
			hn += 1.0 / (double)(i + 1);
		for (i = 0; i < m->n; i++) {
			double p = 1.0 / ((double)(i + 1) * hn);

			m->weight[i] = (float)(STATIC_SIF_A / (STATIC_SIF_A + p));
		}
	}
	return CAIRN_OK;
truncated:
	snprintf(err, errsize, "'%s' is truncated", path);
	return CAIRN_CORRUPT;
}

static int is_word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c >= 0x80;
}

static int static_embed(void *impl, const char *const *texts, size_t n,
			float *out, char *err, size_t errsize)
{
	const struct static_model *m = impl;
	size_t t, dim = (size_t)m->dim;
	char tok[256];

	for (t = 0; t < n; t++) {
		const unsigned char *s = (const unsigned char *)texts[t];
		float *v = out + t * dim;
		size_t i = 0, j;

		memset(v, 0, dim * sizeof(*v));
		while (s[i]) {
			size_t len = 0;
			long w;

			while (s[i] && !is_word_byte(s[i]))
				i++;
			while (s[i] && is_word_byte(s[i])) {
				if (len < sizeof(tok)) {
					unsigned char c = s[i];

					tok[len++] = (char)(c >= 'A' && c <= 'Z'
								   ? c + 32
								   : c);
				}
				i++;
			}
			if (len == 0 || len >= sizeof(tok))
				continue;
			w = lookup(m, tok, len);
			if (w < 0)
				continue;
			{
				const unsigned short *row =
					m->vecs + (size_t)w * dim;
				float wt = m->weight[w];

				for (j = 0; j < dim; j++)
					v[j] += wt * quant_f16_to_f32(row[j]);
			}
		}
	}
	(void)err;
	(void)errsize;
	return CAIRN_OK;
}

int embed_static_open(const struct embed_config *cfg,
		      struct embed_provider *p, char *err, size_t errsize)
{
	struct static_model *m = util_calloc(1, sizeof(*m));
	int rc;

	if (!m) {
		snprintf(err, errsize, "out of memory");
		return CAIRN_NOMEM;
	}
	rc = util_read_file(cfg->model, STATIC_MAX_FILE, &m->data, &m->size,
			    err, errsize);
	if (rc == CAIRN_OK)
		rc = static_parse(m, cfg->model, err, errsize);
	if (rc) {
		static_free(m);
		return rc;
	}
	memset(p, 0, sizeof(*p));
	p->impl = m;
	p->dim = m->dim;
	util_sha256_hex(m->data, m->size, p->revision);
	snprintf(p->pooling, sizeof(p->pooling), "sif");
	p->embed = static_embed;
	p->close = static_free;
	return CAIRN_OK;
}

static void put32(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static void put64(unsigned char *p, unsigned long long v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

int embed_static_write(const char *path, const char *const *words,
		       const float *vecs, const unsigned long long *counts,
		       size_t n, int dim, char *err, size_t errsize)
{
	unsigned char hdr[STATIC_HEADER], b[8];
	FILE *f = NULL;
	size_t i;
	int rc = CAIRN_OK;

	if (n == 0 || n > STATIC_MAX_WORDS || dim <= 0 || dim > EMBED_MAX_DIM) {
		snprintf(err, errsize, "bad static file shape (%zu words, dim "
				       "%d)", n, dim);
		return CAIRN_INVALID;
	}
	for (i = 0; i < n; i++) {
		size_t len = strlen(words[i]);

		if (len == 0 || len > 255) {
			snprintf(err, errsize, "word %zu has %zu bytes "
					       "(1..255)", i, len);
			return CAIRN_INVALID;
		}
	}
	f = fopen(path, "wb");
	if (!f) {
		snprintf(err, errsize, "cannot create '%s'", path);
		return CAIRN_IO;
	}
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, STATIC_MAGIC, 8);
	put32(hdr + 8, STATIC_VERSION);
	put32(hdr + 12, (unsigned)dim);
	put64(hdr + 16, n);
	put32(hdr + 24, counts ? STATIC_FLAG_COUNTS : 0);
	fwrite(hdr, 1, sizeof(hdr), f);
	for (i = 0; i < n; i++) {
		unsigned char len = (unsigned char)strlen(words[i]);

		fputc(len, f);
		fwrite(words[i], 1, len, f);
	}
	for (i = 0; counts && i < n; i++) {
		put64(b, counts[i]);
		fwrite(b, 1, 8, f);
	}
	for (i = 0; i < n * (size_t)dim; i++) {
		unsigned short h = quant_f32_to_f16(vecs[i]);

		b[0] = (unsigned char)h;
		b[1] = (unsigned char)(h >> 8);
		fwrite(b, 1, 2, f);
	}
	if (ferror(f))
		rc = CAIRN_IO;
	if (fclose(f) != 0)
		rc = CAIRN_IO;
	if (rc)
		snprintf(err, errsize, "writing '%s' failed", path);
	return rc;
}
