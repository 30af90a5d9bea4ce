/*
 * gguf.h -- a read-only GGUF v3 file over mmap (ggml's docs/gguf.md).
 *
 * Layer: model files. Used by the tokenisers (vocab.h) and the BERT runtime
 * (bert.h); includes only internal.h.
 *
 * gguf_open() validates the whole header before returning: magic, version 3
 * (2 accepted), every count, string length, array length, tensor rank,
 * dimension, type, offset and alignment against the named limits below and
 * against the file size. After a successful open every accessor is a plain
 * lookup and every tensor's data lies inside the mapping. A malformed file
 * is an error with a message that names the field and byte offset, never a
 * crash.
 */
#ifndef CAIRN_GGUF_H
#define CAIRN_GGUF_H

#include <stddef.h>
#include <stdint.h>

#define GGUF_MAX_KV        65536      /* metadata pairs */
#define GGUF_MAX_TENSORS   65536
#define GGUF_MAX_STRING    (1u << 24) /* bytes in one string */
#define GGUF_MAX_ARRAY     (1u << 24) /* elements in one array (vocabularies ~250k) */
#define GGUF_MAX_DIMS      4
#define GGUF_MAX_NAME      256        /* bytes in a tensor name (ggml: 64) */
#define GGUF_MAX_KEY       65535      /* bytes in a metadata key (gguf.md) */
#define GGUF_MAX_ALIGNMENT (1u << 16) /* general.alignment: power of two up to this */

/* Metadata value types (gguf.md). */
enum gguf_vtype {
	GGUF_U8 = 0, GGUF_I8 = 1, GGUF_U16 = 2, GGUF_I16 = 3, GGUF_U32 = 4,
	GGUF_I32 = 5, GGUF_F32 = 6, GGUF_BOOL = 7, GGUF_STRING = 8,
	GGUF_ARRAY = 9, GGUF_U64 = 10, GGUF_I64 = 11, GGUF_F64 = 12,
};

/* Tensor types (ggml.h numbering). Those quant.c can dequantise are marked. */
enum ggml_type {
	GGML_TYPE_F32 = 0,   /* yes */
	GGML_TYPE_F16 = 1,   /* yes */
	GGML_TYPE_Q4_0 = 2,  /* yes */
	GGML_TYPE_Q4_1 = 3,  /* yes */
	GGML_TYPE_Q5_0 = 6,  /* yes */
	GGML_TYPE_Q5_1 = 7,  /* yes */
	GGML_TYPE_Q8_0 = 8,  /* yes */
	GGML_TYPE_Q8_1 = 9,
	GGML_TYPE_Q2_K = 10,
	GGML_TYPE_Q3_K = 11,
	GGML_TYPE_Q4_K = 12, /* yes */
	GGML_TYPE_Q5_K = 13, /* yes */
	GGML_TYPE_Q6_K = 14, /* yes */
	GGML_TYPE_Q8_K = 15,
	GGML_TYPE_BF16 = 30, /* yes */
	GGML_TYPE_COUNT = 40 /* types above this are rejected */
};

struct gguf_str {
	const char *s; /* points into the mapping; NOT NUL-terminated */
	uint64_t len;
};

/*
 * One tensor. data is at a multiple of general.alignment from the start of
 * the file: aligned in memory after gguf_open() (the mapping is page
 * aligned), not necessarily after gguf_open_mem().
 */
struct gguf_tensor {
	char name[GGUF_MAX_NAME]; /* NUL-terminated copy */
	uint32_t type;            /* enum ggml_type */
	uint32_t n_dims;
	uint64_t ne[GGUF_MAX_DIMS]; /* ne[0] is the row length (fastest); unused = 1 */
	uint64_t nelem;
	uint64_t nbytes;          /* exact size of the data */
	const void *data;         /* inside the mapping */
};

struct gguf;

/*
 * Open and validate path. On failure returns CAIRN_IO (cannot read),
 * CAIRN_INVALID (malformed; err says what and where) or CAIRN_NOMEM, and
 * *out is NULL. err may be NULL.
 */
int gguf_open(const char *path, struct gguf **out, char *err, size_t errsize);
/* The same over a caller's buffer (fuzzing, tests); buf must outlive g. */
int gguf_open_mem(const void *buf, size_t len, struct gguf **out, char *err,
		  size_t errsize);
void gguf_close(struct gguf *g);

/* SHA-256 of the whole file as 64 hex characters (computed once, lazily). */
const char *gguf_sha256(struct gguf *g);
uint64_t gguf_file_size(const struct gguf *g);
/* The header's version (2 or 3), general.alignment (default 32), and the
 * file offset where the tensor data section starts (0 without tensors). */
uint32_t gguf_version(const struct gguf *g);
uint32_t gguf_alignment(const struct gguf *g);
uint64_t gguf_data_offset(const struct gguf *g);

/*
 * Block size (elements) and bytes per block of any type ggml defines, also
 * those quant.c cannot decode: 1 and sets what is not NULL, or 0 for an
 * unknown or retired type number.
 */
int gguf_type_size(uint32_t type, uint64_t *blck, uint64_t *bytes);
/* "u8", ..., "string", "array", ... or "unknown". Static string. */
const char *gguf_vtype_name(int vtype);

/* ------------------------------------------------------------ metadata */

/* Index of key, or -1. */
long gguf_find(const struct gguf *g, const char *key);
/* Type of the value at index i (enum gguf_vtype), or -1 out of range. */
int gguf_kv_type(const struct gguf *g, long i);
/* Number of pairs; index i in file order runs 0..gguf_n_kv()-1. */
long gguf_n_kv(const struct gguf *g);
/* Key of pair i (may contain any bytes): 0, or -1 out of range. */
int gguf_kv_key(const struct gguf *g, long i, struct gguf_str *out);

/*
 * Typed getters by key. Return 0 and set *out, or -1 when the key is
 * absent or its type does not fit (any integer type converts to an integer
 * getter if the value is in range; F32/F64 convert to gguf_get_f32).
 */
int gguf_get_u32(const struct gguf *g, const char *key, uint32_t *out);
int gguf_get_i64(const struct gguf *g, const char *key, int64_t *out);
int gguf_get_f32(const struct gguf *g, const char *key, float *out);
int gguf_get_f64(const struct gguf *g, const char *key, double *out);
int gguf_get_bool(const struct gguf *g, const char *key, int *out);
int gguf_get_str(const struct gguf *g, const char *key, struct gguf_str *out);

/*
 * Arrays. gguf_get_arr: element type and count; *data points at the packed
 * elements for numeric types (unaligned: read with memcpy), NULL for string
 * arrays (use gguf_arr_str, O(1) after open). Nested arrays are rejected at
 * open.
 */
int gguf_get_arr(const struct gguf *g, const char *key, int *elem_type,
		 uint64_t *n, const void **data);
int gguf_arr_str(const struct gguf *g, const char *key, uint64_t i,
		 struct gguf_str *out);

/* -------------------------------------------------------------- tensors */

size_t gguf_n_tensors(const struct gguf *g);
const struct gguf_tensor *gguf_tensor_at(const struct gguf *g, size_t i);
/* By exact name, or NULL. */
const struct gguf_tensor *gguf_tensor(const struct gguf *g, const char *name);

#endif /* CAIRN_GGUF_H */
