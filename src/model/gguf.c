/*
 * gguf.c -- the GGUF v3 reader (see gguf.h; format facts in docs/GGUF.md).
 *
 * Layer: model files, beside quant.c; includes only internal.h and gguf.h.
 *
 * Holds: one parse of the whole header at open time. Every count, length,
 * type, rank, dimension, alignment and offset is checked against the named
 * limits in gguf.h and against the bytes actually left in the file before
 * anything is allocated or read, so that a short hostile file cannot make us
 * allocate much (each element we keep a record of occupies at least 8 bytes
 * of the file). Keys and tensor names are sorted once (duplicates are
 * refused), so lookups are binary searches and string-array elements are
 * O(1) through a table of their positions.
 *
 * Must never: read outside the buffer, abort or crash on any input, or
 * allocate more than a small multiple of the file size. Values stay in the
 * mapping; nothing is copied except tensor names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "gguf.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gguf.c reads little-endian GGUF files on little-endian hosts only"
#endif

#define GGUF_MAGIC 0x46554747u /* "GGUF" read as a little-endian u32 */

struct gguf_kv {
	struct gguf_str key;   /* in the mapping */
	uint32_t type;         /* enum gguf_vtype */
	uint32_t elem_type;    /* arrays: element type */
	uint64_t n;            /* arrays: element count; strings: byte length */
	const uint8_t *val;    /* scalar bytes, string bytes or first element */
	const uint8_t **strs;  /* string arrays: each element's length field */
	uint64_t at;           /* byte offset of the key, for messages */
};

struct gguf {
	const uint8_t *base;        /* the file's bytes */
	size_t size;                /* their number */
	void *map;                  /* mmap()ed region to unmap, or NULL */
	uint32_t version;           /* 2 or 3 */
	uint32_t alignment;         /* general.alignment or 32 */
	uint64_t data_offset;       /* start of the tensor data section */
	uint64_t n_kv;              /* metadata pairs */
	struct gguf_kv *kv;         /* in file order */
	struct gguf_kv **kv_sorted; /* by key (length, then bytes) */
	uint64_t n_tensors;         /* tensor infos */
	struct gguf_tensor *t;      /* in file order */
	struct gguf_tensor **t_sorted; /* by name */
	int have_sha;               /* sha[] computed */
	char sha[65];               /* SHA-256 of the file, hex */
};

/* ------------------------------------------------------------ type sizes */

/*
 * Block size and bytes per block of every type ggml defines (ggml.c's
 * type_traits), whether or not quant.c can decode it, so that a file with
 * a tensor of a type we do not use still opens (e.g. for its vocabulary).
 * Zero marks numbers ggml has retired or never used.
 */
static const struct {
	uint16_t blck;
	uint16_t bytes;
} type_size[GGML_TYPE_COUNT] = {
	[0] = { 1, 4 },      /* f32 */
	[1] = { 1, 2 },      /* f16 */
	[2] = { 32, 18 },    /* q4_0: f16 d, 16 nibble bytes */
	[3] = { 32, 20 },    /* q4_1: f16 d, f16 m, 16 */
	[6] = { 32, 22 },    /* q5_0: f16 d, u32 qh, 16 */
	[7] = { 32, 24 },    /* q5_1: f16 d, f16 m, u32 qh, 16 */
	[8] = { 32, 34 },    /* q8_0: f16 d, 32 int8 */
	[9] = { 32, 36 },    /* q8_1: f16 d, f16 s, 32 int8 */
	[10] = { 256, 84 },  /* q2_K */
	[11] = { 256, 110 }, /* q3_K */
	[12] = { 256, 144 }, /* q4_K */
	[13] = { 256, 176 }, /* q5_K */
	[14] = { 256, 210 }, /* q6_K */
	[15] = { 256, 292 }, /* q8_K */
	[16] = { 256, 66 },  /* iq2_xxs */
	[17] = { 256, 74 },  /* iq2_xs */
	[18] = { 256, 98 },  /* iq3_xxs */
	[19] = { 256, 50 },  /* iq1_s */
	[20] = { 32, 18 },   /* iq4_nl */
	[21] = { 256, 110 }, /* iq3_s */
	[22] = { 256, 82 },  /* iq2_s */
	[23] = { 256, 136 }, /* iq4_xs */
	[24] = { 1, 1 },     /* i8 */
	[25] = { 1, 2 },     /* i16 */
	[26] = { 1, 4 },     /* i32 */
	[27] = { 1, 8 },     /* i64 */
	[28] = { 1, 8 },     /* f64 */
	[29] = { 256, 56 },  /* iq1_m */
	[30] = { 1, 2 },     /* bf16 */
	[34] = { 256, 54 },  /* tq1_0 */
	[35] = { 256, 66 },  /* tq2_0 */
	[39] = { 32, 17 },   /* mxfp4 */
};

int gguf_type_size(uint32_t type, uint64_t *blck, uint64_t *bytes)
{
	if (type >= GGML_TYPE_COUNT || type_size[type].blck == 0)
		return 0;
	if (blck)
		*blck = type_size[type].blck;
	if (bytes)
		*bytes = type_size[type].bytes;
	return 1;
}

/* Bytes of one scalar metadata value; 0 for string, array or unknown. */
static uint64_t vtype_size(uint32_t t)
{
	switch (t) {
	case GGUF_U8: case GGUF_I8: case GGUF_BOOL:
		return 1;
	case GGUF_U16: case GGUF_I16:
		return 2;
	case GGUF_U32: case GGUF_I32: case GGUF_F32:
		return 4;
	case GGUF_U64: case GGUF_I64: case GGUF_F64:
		return 8;
	default:
		return 0;
	}
}

const char *gguf_vtype_name(int t)
{
	static const char *const names[] = {
		"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool",
		"string", "array", "u64", "i64", "f64",
	};
	if (t < 0 || (size_t)t >= ARRAY_SIZE(names))
		return "unknown";
	return names[t];
}

/* ------------------------------------------------------------- the parse */

struct cur {
	const uint8_t *p;   /* the buffer */
	uint64_t size;      /* its length */
	uint64_t pos;       /* next byte to read */
	char *err;          /* message buffer (may be NULL) */
	size_t errsize;     /* its size */
	char what[320];     /* what is being read, for messages */
};

static int fail(struct cur *c, uint64_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Set "WHAT: MESSAGE at byte AT" and return CAIRN_INVALID. */
static int fail(struct cur *c, uint64_t at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err && c->errsize)
		snprintf(c->err, c->errsize, "%s%s%s at byte %llu", c->what,
			 c->what[0] ? ": " : "", msg, (unsigned long long)at);
	return CAIRN_INVALID;
}

static uint64_t left(const struct cur *c)
{
	return c->size - c->pos;
}

/* Read n (<= 8) little-endian bytes of field name into *v. */
static int rd(struct cur *c, const char *name, void *v, size_t n)
{
	if (left(c) < n)
		return fail(c, c->pos, "file truncated reading %s (%zu bytes "
			    "needed, %llu left)", name, n,
			    (unsigned long long)left(c));
	memcpy(v, c->p + c->pos, n);
	c->pos += n;
	return CAIRN_OK;
}

/* A GGUF string: u64 length then bytes (not NUL-terminated). */
static int rd_str(struct cur *c, const char *name, uint64_t max,
		  struct gguf_str *out)
{
	uint64_t at = c->pos, len = 0;
	int rc = rd(c, name, &len, 8);

	if (rc)
		return rc;
	if (len > max)
		return fail(c, at, "%s length %llu exceeds the limit %llu",
			    name, (unsigned long long)len,
			    (unsigned long long)max);
	if (len > left(c))
		return fail(c, at, "%s length %llu runs past the end of the "
			    "file (%llu bytes left)", name,
			    (unsigned long long)len,
			    (unsigned long long)left(c));
	out->s = (const char *)c->p + c->pos;
	out->len = len;
	c->pos += len;
	return CAIRN_OK;
}

/* Describe the kv being read as "kv I 'KEY'" (key shown safely). */
static void set_kv_what(struct cur *c, uint64_t i, const struct gguf_str *key)
{
	int n = snprintf(c->what, sizeof(c->what), "kv %llu",
			 (unsigned long long)i);
	size_t j, o;

	if (!key || n < 0)
		return;
	o = (size_t)n;
	o += (size_t)snprintf(c->what + o, sizeof(c->what) - o, " '");
	for (j = 0; j < key->len && j < 64 && o + 8 < sizeof(c->what); j++) {
		unsigned char ch = (unsigned char)key->s[j];

		if (ch >= 0x20 && ch < 0x7f && ch != '\'')
			c->what[o++] = (char)ch;
		else
			o += (size_t)snprintf(c->what + o,
					      sizeof(c->what) - o, "\\x%02x",
					      ch);
	}
	if (j < key->len && o + 8 < sizeof(c->what))
		o += (size_t)snprintf(c->what + o, sizeof(c->what) - o, "...");
	snprintf(c->what + o, sizeof(c->what) - o, "'");
}

static int cmp_kv(const void *a, const void *b)
{
	const struct gguf_kv *x = *(const struct gguf_kv *const *)a;
	const struct gguf_kv *y = *(const struct gguf_kv *const *)b;
	uint64_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
	int r = n ? memcmp(x->key.s, y->key.s, n) : 0;

	if (r)
		return r;
	return x->key.len < y->key.len ? -1 : x->key.len > y->key.len;
}

static int cmp_tensor_name(const void *a, const void *b)
{
	const struct gguf_tensor *x = *(const struct gguf_tensor *const *)a;
	const struct gguf_tensor *y = *(const struct gguf_tensor *const *)b;

	return strcmp(x->name, y->name);
}

static int cmp_tensor_off(const void *a, const void *b)
{
	const struct gguf_tensor *x = *(const struct gguf_tensor *const *)a;
	const struct gguf_tensor *y = *(const struct gguf_tensor *const *)b;
	const uint8_t *px = x->data, *py = y->data;

	return px < py ? -1 : px > py;
}

/* The value of kv, whose type field has been read (at byte at_type). */
static int rd_value(struct cur *c, struct gguf_kv *kv, uint64_t at_type)
{
	uint64_t at, sz, i;
	uint32_t et = 0;
	int rc;

	if (kv->type == GGUF_STRING) {
		struct gguf_str s;

		rc = rd_str(c, "string", GGUF_MAX_STRING, &s);
		if (rc)
			return rc;
		kv->val = (const uint8_t *)s.s;
		kv->n = s.len;
		return CAIRN_OK;
	}
	if (kv->type != GGUF_ARRAY) {
		sz = vtype_size(kv->type);
		if (sz == 0)
			return fail(c, at_type, "unknown value type %u",
				    kv->type);
		kv->val = c->p + c->pos;
		if (left(c) < sz)
			return fail(c, c->pos, "file truncated reading a %s "
				    "value (%llu bytes needed, %llu left)",
				    gguf_vtype_name((int)kv->type),
				    (unsigned long long)sz,
				    (unsigned long long)left(c));
		if (kv->type == GGUF_BOOL && kv->val[0] > 1)
			return fail(c, c->pos, "bool value %u is not 0 or 1",
				    kv->val[0]);
		c->pos += sz;
		return CAIRN_OK;
	}

	at = c->pos;
	rc = rd(c, "array element type", &et, 4);
	if (rc)
		return rc;
	if (et == GGUF_ARRAY)
		return fail(c, at, "nested arrays are not supported");
	if (et != GGUF_STRING && vtype_size(et) == 0)
		return fail(c, at, "unknown array element type %u", et);
	kv->elem_type = et;
	at = c->pos;
	rc = rd(c, "array count", &kv->n, 8);
	if (rc)
		return rc;
	if (kv->n > GGUF_MAX_ARRAY)
		return fail(c, at, "array count %llu exceeds the limit %u",
			    (unsigned long long)kv->n, GGUF_MAX_ARRAY);
	kv->val = c->p + c->pos;
	if (et != GGUF_STRING) {
		sz = vtype_size(et);
		if (kv->n > left(c) / sz)
			return fail(c, at, "array of %llu %s values runs past "
				    "the end of the file (%llu bytes left)",
				    (unsigned long long)kv->n,
				    gguf_vtype_name((int)et),
				    (unsigned long long)left(c));
		if (et == GGUF_BOOL) {
			for (i = 0; i < kv->n; i++)
				if (kv->val[i] > 1)
					return fail(c, c->pos + i,
						    "bool element %llu is "
						    "%u, not 0 or 1",
						    (unsigned long long)i,
						    kv->val[i]);
		}
		c->pos += kv->n * sz;
		return CAIRN_OK;
	}
	/* each string takes at least its 8-byte length field */
	if (kv->n > left(c) / 8)
		return fail(c, at, "array of %llu strings runs past the end of "
			    "the file (%llu bytes left)",
			    (unsigned long long)kv->n,
			    (unsigned long long)left(c));
	if (kv->n) {
		kv->strs = util_calloc((size_t)kv->n, sizeof(*kv->strs));
		if (!kv->strs)
			return CAIRN_NOMEM;
	}
	for (i = 0; i < kv->n; i++) {
		struct gguf_str s;

		kv->strs[i] = c->p + c->pos;
		rc = rd_str(c, "array string", GGUF_MAX_STRING, &s);
		if (rc)
			return rc;
	}
	return CAIRN_OK;
}

static int parse_kvs(struct gguf *g, struct cur *c)
{
	uint64_t i;
	int rc;

	if (g->n_kv) {
		g->kv = util_calloc((size_t)g->n_kv, sizeof(*g->kv));
		g->kv_sorted = util_calloc((size_t)g->n_kv,
					   sizeof(*g->kv_sorted));
		if (!g->kv || !g->kv_sorted)
			return CAIRN_NOMEM;
	}
	for (i = 0; i < g->n_kv; i++) {
		struct gguf_kv *kv = &g->kv[i];
		uint64_t at_type;

		set_kv_what(c, i, NULL);
		kv->at = c->pos;
		rc = rd_str(c, "key", GGUF_MAX_KEY, &kv->key);
		if (rc)
			return rc;
		if (kv->key.len == 0)
			return fail(c, kv->at, "empty key");
		set_kv_what(c, i, &kv->key);
		at_type = c->pos;
		rc = rd(c, "value type", &kv->type, 4);
		if (rc)
			return rc;
		rc = rd_value(c, kv, at_type);
		if (rc)
			return rc;
		g->kv_sorted[i] = kv;
	}
	c->what[0] = '\0';
	if (g->n_kv > 1) {
		qsort(g->kv_sorted, (size_t)g->n_kv, sizeof(*g->kv_sorted),
		      cmp_kv);
		for (i = 1; i < g->n_kv; i++) {
			if (cmp_kv(&g->kv_sorted[i - 1], &g->kv_sorted[i]))
				continue;
			/* name the later of the two occurrences */
			{
				struct gguf_kv *a = g->kv_sorted[i - 1];
				struct gguf_kv *b = g->kv_sorted[i];
				struct gguf_kv *late = a->at > b->at ? a : b;

				set_kv_what(c, (uint64_t)(late - g->kv),
					    &late->key);
				return fail(c, late->at, "duplicate key");
			}
		}
	}
	return CAIRN_OK;
}

static int parse_tensor_info(struct cur *c, uint64_t i, struct gguf_tensor *t)
{
	struct gguf_str name;
	uint64_t at, blck, bsz, d;
	int rc;

	snprintf(c->what, sizeof(c->what), "tensor %llu",
		 (unsigned long long)i);
	at = c->pos;
	rc = rd_str(c, "tensor name", GGUF_MAX_NAME - 1, &name);
	if (rc)
		return rc;
	if (name.len == 0)
		return fail(c, at, "empty tensor name");
	if (memchr(name.s, '\0', (size_t)name.len))
		return fail(c, at, "tensor name contains a NUL byte");
	memcpy(t->name, name.s, (size_t)name.len);
	t->name[name.len] = '\0';
	snprintf(c->what, sizeof(c->what), "tensor %llu '%.*s'",
		 (unsigned long long)i, (int)name.len, name.s);

	at = c->pos;
	rc = rd(c, "rank", &t->n_dims, 4);
	if (rc)
		return rc;
	if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS)
		return fail(c, at, "rank %u is not in 1..%d", t->n_dims,
			    GGUF_MAX_DIMS);
	t->nelem = 1;
	for (d = 0; d < GGUF_MAX_DIMS; d++)
		t->ne[d] = 1;
	for (d = 0; d < t->n_dims; d++) {
		at = c->pos;
		rc = rd(c, "dimension", &t->ne[d], 8);
		if (rc)
			return rc;
		if (t->ne[d] == 0)
			return fail(c, at, "dimension %llu is zero",
				    (unsigned long long)d);
		/* ggml keeps element counts in int64_t */
		if (t->ne[d] > (uint64_t)INT64_MAX / t->nelem)
			return fail(c, at, "element count overflows at "
				    "dimension %llu (%llu)",
				    (unsigned long long)d,
				    (unsigned long long)t->ne[d]);
		t->nelem *= t->ne[d];
	}
	at = c->pos;
	rc = rd(c, "type", &t->type, 4);
	if (rc)
		return rc;
	if (!gguf_type_size(t->type, &blck, &bsz))
		return fail(c, at, "unknown tensor type %u", t->type);
	if (t->ne[0] % blck)
		return fail(c, at, "row length %llu is not a multiple of the "
			    "block size %llu of type %u",
			    (unsigned long long)t->ne[0],
			    (unsigned long long)blck, t->type);
	if (t->nelem / blck > UINT64_MAX / bsz)
		return fail(c, at, "data size overflows");
	t->nbytes = t->nelem / blck * bsz;
	return CAIRN_OK;
}

static int parse_tensors(struct gguf *g, struct cur *c)
{
	uint64_t i, *off = NULL, *off_at = NULL, *name_at = NULL;
	int rc = CAIRN_OK;

	if (g->n_tensors == 0)
		return CAIRN_OK;
	g->t = util_calloc((size_t)g->n_tensors, sizeof(*g->t));
	g->t_sorted = util_calloc((size_t)g->n_tensors, sizeof(*g->t_sorted));
	off = util_calloc((size_t)g->n_tensors, sizeof(*off));
	off_at = util_calloc((size_t)g->n_tensors, sizeof(*off_at));
	name_at = util_calloc((size_t)g->n_tensors, sizeof(*name_at));
	if (!g->t || !g->t_sorted || !off || !off_at || !name_at) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	for (i = 0; i < g->n_tensors; i++) {
		name_at[i] = c->pos;
		rc = parse_tensor_info(c, i, &g->t[i]);
		if (rc)
			goto out;
		off_at[i] = c->pos;
		rc = rd(c, "data offset", &off[i], 8);
		if (rc)
			goto out;
		if (off[i] % g->alignment) {
			rc = fail(c, off_at[i], "data offset %llu is not a "
				  "multiple of the alignment %u",
				  (unsigned long long)off[i], g->alignment);
			goto out;
		}
		g->t_sorted[i] = &g->t[i];
	}
	c->what[0] = '\0';

	/* the data section starts at the next multiple of the alignment */
	g->data_offset = c->pos + (g->alignment - c->pos % g->alignment) %
					  g->alignment;
	for (i = 0; i < g->n_tensors; i++) {
		struct gguf_tensor *t = &g->t[i];

		snprintf(c->what, sizeof(c->what), "tensor %llu '%s'",
			 (unsigned long long)i, t->name);
		if (g->data_offset > c->size ||
		    off[i] > c->size - g->data_offset ||
		    t->nbytes > c->size - g->data_offset - off[i]) {
			rc = fail(c, off_at[i], "data [%llu, +%llu) at data "
				  "offset %llu runs past the end of the file "
				  "(%llu bytes)",
				  (unsigned long long)off[i],
				  (unsigned long long)t->nbytes,
				  (unsigned long long)g->data_offset,
				  (unsigned long long)c->size);
			goto out;
		}
		t->data = c->p + g->data_offset + off[i];
	}
	c->what[0] = '\0';

	/* names are unique */
	qsort(g->t_sorted, (size_t)g->n_tensors, sizeof(*g->t_sorted),
	      cmp_tensor_name);
	for (i = 1; i < g->n_tensors; i++) {
		const struct gguf_tensor *a = g->t_sorted[i - 1];
		const struct gguf_tensor *b = g->t_sorted[i];

		if (strcmp(a->name, b->name))
			continue;
		if (a > b)
			b = a;
		rc = fail(c, name_at[b - g->t], "duplicate tensor name '%s'",
			  b->name);
		goto out;
	}
	/* data ranges do not overlap: sort a copy by position */
	qsort(g->t_sorted, (size_t)g->n_tensors, sizeof(*g->t_sorted),
	      cmp_tensor_off);
	for (i = 1; i < g->n_tensors; i++) {
		const struct gguf_tensor *a = g->t_sorted[i - 1];
		const struct gguf_tensor *b = g->t_sorted[i];
		const uint8_t *pa = a->data, *pb = b->data;

		if ((uint64_t)(pb - pa) >= a->nbytes)
			continue;
		rc = fail(c, (uint64_t)(pb - c->p), "data of tensor '%s' "
			  "overlaps tensor '%s'", b->name, a->name);
		goto out;
	}
	qsort(g->t_sorted, (size_t)g->n_tensors, sizeof(*g->t_sorted),
	      cmp_tensor_name);
out:
	cairn_free(off);
	cairn_free(off_at);
	cairn_free(name_at);
	return rc;
}

static int parse(struct gguf *g, struct cur *c)
{
	uint32_t magic;
	long ai;
	int rc;

	if (c->size < 24)
		return fail(c, 0, "file too short for a GGUF header (%llu "
			    "bytes, need 24)", (unsigned long long)c->size);
	memcpy(&magic, c->p, 4);
	if (magic != GGUF_MAGIC)
		return fail(c, 0, "bad magic (not a GGUF file)");
	c->pos = 4;
	rd(c, "version", &g->version, 4);
	if (g->version == 0x02000000u || g->version == 0x03000000u)
		return fail(c, 4, "big-endian GGUF files are not supported");
	if (g->version != 2 && g->version != 3)
		return fail(c, 4, "unsupported GGUF version %u (want 3 or 2)",
			    g->version);
	rd(c, "tensor count", &g->n_tensors, 8);
	rd(c, "kv count", &g->n_kv, 8);
	if (g->n_tensors > GGUF_MAX_TENSORS)
		return fail(c, 8, "tensor count %llu exceeds the limit %u",
			    (unsigned long long)g->n_tensors,
			    GGUF_MAX_TENSORS);
	if (g->n_kv > GGUF_MAX_KV)
		return fail(c, 16, "kv count %llu exceeds the limit %u",
			    (unsigned long long)g->n_kv, GGUF_MAX_KV);
	/* a kv takes >= 13 bytes (key length, 1-byte key, type, u8 value)
	 * and a tensor info >= 33 */
	if (g->n_kv > left(c) / 13)
		return fail(c, 16, "kv count %llu cannot fit in the %llu bytes "
			    "left", (unsigned long long)g->n_kv,
			    (unsigned long long)left(c));
	if (g->n_tensors > left(c) / 33)
		return fail(c, 8, "tensor count %llu cannot fit in the %llu "
			    "bytes left", (unsigned long long)g->n_tensors,
			    (unsigned long long)left(c));

	rc = parse_kvs(g, c);
	if (rc)
		return rc;
	g->alignment = 32;
	ai = gguf_find(g, "general.alignment");
	if (ai >= 0) {
		const struct gguf_kv *kv = &g->kv[ai];

		if (kv->type != GGUF_U32) {
			set_kv_what(c, (uint64_t)ai, &kv->key);
			return fail(c, kv->at, "type %s, want u32",
				    gguf_vtype_name((int)kv->type));
		}
		memcpy(&g->alignment, kv->val, 4);
		if (g->alignment == 0 || (g->alignment & (g->alignment - 1)) ||
		    g->alignment > GGUF_MAX_ALIGNMENT) {
			set_kv_what(c, (uint64_t)ai, &kv->key);
			return fail(c, (uint64_t)(kv->val - c->p), "alignment "
				    "%u is not a power of two up to %u",
				    g->alignment, GGUF_MAX_ALIGNMENT);
		}
	}
	return parse_tensors(g, c);
}

void gguf_close(struct gguf *g)
{
	uint64_t i;

	if (!g)
		return;
	for (i = 0; g->kv && i < g->n_kv; i++)
		cairn_free(g->kv[i].strs);
	cairn_free(g->kv);
	cairn_free(g->kv_sorted);
	cairn_free(g->t);
	cairn_free(g->t_sorted);
	if (g->map)
		munmap(g->map, g->size);
	cairn_free(g);
}

/* Parse buf; on success *out owns nothing of buf but points into it. */
static int open_buf(const void *buf, size_t len, void *map, struct gguf **out,
		    char *err, size_t errsize)
{
	struct cur c;
	struct gguf *g;
	int rc;

	*out = NULL;
	if (err && errsize)
		err[0] = '\0';
	g = util_calloc(1, sizeof(*g));
	if (!g) {
		if (err && errsize)
			snprintf(err, errsize, "out of memory");
		if (map)
			munmap(map, len);
		return CAIRN_NOMEM;
	}
	g->base = buf;
	g->size = len;
	g->map = map;
	memset(&c, 0, sizeof(c));
	c.p = buf;
	c.size = len;
	c.err = err;
	c.errsize = errsize;
	rc = parse(g, &c);
	if (rc) {
		if (rc == CAIRN_NOMEM && err && errsize)
			snprintf(err, errsize, "out of memory reading GGUF");
		gguf_close(g);
		return rc;
	}
	*out = g;
	return CAIRN_OK;
}

int gguf_open_mem(const void *buf, size_t len, struct gguf **out, char *err,
		  size_t errsize)
{
	static const uint8_t empty[1];

	return open_buf(buf ? buf : empty, buf ? len : 0, NULL, out, err,
			errsize);
}

int gguf_open(const char *path, struct gguf **out, char *err, size_t errsize)
{
	struct stat st;
	const char *why = NULL;
	void *map = NULL;
	char msg[512];
	int fd, rc;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (err && errsize)
			snprintf(err, errsize, "cannot open '%s': %s", path,
				 strerror(errno));
		return CAIRN_IO;
	}
	if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	if (why) {
		if (err && errsize)
			snprintf(err, errsize, "cannot read '%s': %s", path,
				 why);
		close(fd);
		return CAIRN_IO;
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			   fd, 0);
		if (map == MAP_FAILED) {
			if (err && errsize)
				snprintf(err, errsize, "cannot map '%s': %s",
					 path, strerror(errno));
			close(fd);
			return CAIRN_IO;
		}
	}
	close(fd);
	if (!map)
		rc = gguf_open_mem(NULL, 0, out, msg, sizeof(msg));
	else
		rc = open_buf(map, (size_t)st.st_size, map, out, msg,
			      sizeof(msg));
	if (rc && err && errsize)
		snprintf(err, errsize, "'%s': %s", path, msg);
	return rc;
}

const char *gguf_sha256(struct gguf *g)
{
	if (!g->have_sha) {
		util_sha256_hex(g->base, g->size, g->sha);
		g->have_sha = 1;
	}
	return g->sha;
}

uint64_t gguf_file_size(const struct gguf *g)
{
	return g->size;
}

uint32_t gguf_version(const struct gguf *g)
{
	return g->version;
}

uint32_t gguf_alignment(const struct gguf *g)
{
	return g->alignment;
}

uint64_t gguf_data_offset(const struct gguf *g)
{
	return g->data_offset;
}

/* ------------------------------------------------------------- metadata */

long gguf_n_kv(const struct gguf *g)
{
	return (long)g->n_kv;
}

int gguf_kv_key(const struct gguf *g, long i, struct gguf_str *out)
{
	if (i < 0 || (uint64_t)i >= g->n_kv)
		return -1;
	*out = g->kv[i].key;
	return 0;
}

long gguf_find(const struct gguf *g, const char *key)
{
	struct gguf_kv k, *kp = &k, **hit;

	if (!g->n_kv || !key)
		return -1;
	k.key.s = key;
	k.key.len = strlen(key);
	hit = bsearch(&kp, g->kv_sorted, (size_t)g->n_kv,
		      sizeof(*g->kv_sorted), cmp_kv);
	return hit ? (long)(*hit - g->kv) : -1;
}

int gguf_kv_type(const struct gguf *g, long i)
{
	if (i < 0 || (uint64_t)i >= g->n_kv)
		return -1;
	return (int)g->kv[i].type;
}

static const struct gguf_kv *kv_get(const struct gguf *g, const char *key)
{
	long i = gguf_find(g, key);

	return i < 0 ? NULL : &g->kv[i];
}

/*
 * An integer value as sign and magnitude: 0 with *neg and *mag set, or -1 if
 * the value is not an integer type.
 */
static int kv_int(const struct gguf_kv *kv, int *neg, uint64_t *mag)
{
	int64_t s;
	uint64_t u = 0;

	switch (kv->type) {
	case GGUF_U8: { uint8_t v; memcpy(&v, kv->val, 1); u = v; break; }
	case GGUF_U16: { uint16_t v; memcpy(&v, kv->val, 2); u = v; break; }
	case GGUF_U32: { uint32_t v; memcpy(&v, kv->val, 4); u = v; break; }
	case GGUF_U64: memcpy(&u, kv->val, 8); break;
	case GGUF_I8: { int8_t v; memcpy(&v, kv->val, 1); s = v; goto sgn; }
	case GGUF_I16: { int16_t v; memcpy(&v, kv->val, 2); s = v; goto sgn; }
	case GGUF_I32: { int32_t v; memcpy(&v, kv->val, 4); s = v; goto sgn; }
	case GGUF_I64: memcpy(&s, kv->val, 8); goto sgn;
	default:
		return -1;
	}
	*neg = 0;
	*mag = u;
	return 0;
sgn:
	*neg = s < 0;
	*mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
	return 0;
}

int gguf_get_u32(const struct gguf *g, const char *key, uint32_t *out)
{
	const struct gguf_kv *kv = kv_get(g, key);
	uint64_t mag;
	int neg;

	if (!kv || kv_int(kv, &neg, &mag) || (neg && mag) || mag > UINT32_MAX)
		return -1;
	*out = (uint32_t)mag;
	return 0;
}

int gguf_get_i64(const struct gguf *g, const char *key, int64_t *out)
{
	const struct gguf_kv *kv = kv_get(g, key);
	uint64_t mag;
	int neg;

	if (!kv || kv_int(kv, &neg, &mag))
		return -1;
	if (neg) {
		if (mag > (uint64_t)INT64_MAX + 1)
			return -1;
		*out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN
						     : -(int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX)
			return -1;
		*out = (int64_t)mag;
	}
	return 0;
}

int gguf_get_f32(const struct gguf *g, const char *key, float *out)
{
	const struct gguf_kv *kv = kv_get(g, key);

	if (!kv)
		return -1;
	if (kv->type == GGUF_F32) {
		memcpy(out, kv->val, 4);
		return 0;
	}
	if (kv->type == GGUF_F64) {
		double d;

		memcpy(&d, kv->val, 8);
		*out = (float)d;
		return 0;
	}
	return -1;
}

int gguf_get_f64(const struct gguf *g, const char *key, double *out)
{
	const struct gguf_kv *kv = kv_get(g, key);
	float f;

	if (!kv)
		return -1;
	if (kv->type == GGUF_F64) {
		memcpy(out, kv->val, 8);
		return 0;
	}
	if (kv->type == GGUF_F32) {
		memcpy(&f, kv->val, 4);
		*out = f;
		return 0;
	}
	return -1;
}

int gguf_get_bool(const struct gguf *g, const char *key, int *out)
{
	const struct gguf_kv *kv = kv_get(g, key);

	if (!kv || kv->type != GGUF_BOOL)
		return -1;
	*out = kv->val[0];
	return 0;
}

int gguf_get_str(const struct gguf *g, const char *key, struct gguf_str *out)
{
	const struct gguf_kv *kv = kv_get(g, key);

	if (!kv || kv->type != GGUF_STRING)
		return -1;
	out->s = (const char *)kv->val;
	out->len = kv->n;
	return 0;
}

int gguf_get_arr(const struct gguf *g, const char *key, int *elem_type,
		 uint64_t *n, const void **data)
{
	const struct gguf_kv *kv = kv_get(g, key);

	if (!kv || kv->type != GGUF_ARRAY)
		return -1;
	if (elem_type)
		*elem_type = (int)kv->elem_type;
	if (n)
		*n = kv->n;
	if (data)
		*data = kv->elem_type == GGUF_STRING ? NULL : kv->val;
	return 0;
}

int gguf_arr_str(const struct gguf *g, const char *key, uint64_t i,
		 struct gguf_str *out)
{
	const struct gguf_kv *kv = kv_get(g, key);
	uint64_t len;

	if (!kv || kv->type != GGUF_ARRAY || kv->elem_type != GGUF_STRING ||
	    i >= kv->n)
		return -1;
	memcpy(&len, kv->strs[i], 8);
	out->s = (const char *)kv->strs[i] + 8;
	out->len = len;
	return 0;
}

/* -------------------------------------------------------------- tensors */

size_t gguf_n_tensors(const struct gguf *g)
{
	return (size_t)g->n_tensors;
}

const struct gguf_tensor *gguf_tensor_at(const struct gguf *g, size_t i)
{
	return i < g->n_tensors ? &g->t[i] : NULL;
}

const struct gguf_tensor *gguf_tensor(const struct gguf *g, const char *name)
{
	struct gguf_tensor k, *kp = &k, **hit;
	size_t len;

	if (!g->n_tensors || !name)
		return NULL;
	len = strlen(name);
	if (len >= GGUF_MAX_NAME)
		return NULL;
	memcpy(k.name, name, len + 1);
	hit = bsearch(&kp, g->t_sorted, (size_t)g->n_tensors,
		      sizeof(*g->t_sorted), cmp_tensor_name);
	return hit ? *hit : NULL;
}
