/*
 * fuzz_gguf.c -- libFuzzer target for the GGUF reader and the tensor-type
 * decoders.
 *
 * Any input: gguf_open_mem() must return, never crash or leak. On failure
 * the code is CAIRN_INVALID (or CAIRN_NOMEM), *out is NULL and the message
 * ends in " at byte N" with N <= size. On success every kv is read through
 * its typed getter (each array element too, string arrays element by
 * element), every key and tensor name must be found again by lookup, every
 * byte of every tensor is read (ASan checks they lie in the input), and
 * the first block of every tensor of a supported type is dequantised.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *     -DCAIRN_BUILD -Iinclude -Isrc tests/fuzz/fuzz_gguf.c src/model/gguf.c \
 *     src/model/quant.c src/util.c -lcrypto -o /tmp/fuzz_gguf
 *   /tmp/fuzz_gguf -dict=tests/fuzz/gguf.dict tests/fuzz/corpus/gguf
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "gguf.h"
#include "quant.h"

static volatile uint64_t sink; /* keeps the reads */

static void check_message(const char *err, size_t size)
{
	const char *at = strstr(err, " at byte ");
	const char *last = NULL;
	unsigned long long n;
	char *end = NULL;

	while (at) {
		last = at;
		at = strstr(at + 1, " at byte ");
	}
	if (!last)
		abort();
	n = strtoull(last + 9, &end, 10);
	if (end == last + 9 || *end != '\0' || n > size)
		abort();
}

static void touch(const void *p, uint64_t n)
{
	const uint8_t *b = p;
	uint64_t i, s = 0;

	for (i = 0; i < n; i++)
		s += b[i];
	sink += s;
}

static void read_kv(const struct gguf *g, long i)
{
	struct gguf_str key, s;
	const void *data;
	char *k;
	uint64_t n, j;
	int64_t v;
	uint32_t u;
	double d;
	float f;
	int b, et, t = gguf_kv_type(g, i);

	if (gguf_kv_key(g, i, &key) != 0 || t < 0)
		abort();
	touch(key.s, key.len);
	if (memchr(key.s, '\0', (size_t)key.len))
		return; /* not reachable by a C-string lookup */
	k = util_strndup(key.s, (size_t)key.len);
	if (!k)
		return;
	if (gguf_find(g, k) != i)
		abort();
	(void)gguf_get_u32(g, k, &u);
	(void)gguf_get_i64(g, k, &v);
	(void)gguf_get_f32(g, k, &f);
	(void)gguf_get_f64(g, k, &d);
	(void)gguf_get_bool(g, k, &b);
	if ((gguf_get_str(g, k, &s) == 0) != (t == GGUF_STRING))
		abort();
	if (t == GGUF_STRING)
		touch(s.s, s.len);
	if ((gguf_get_arr(g, k, &et, &n, &data) == 0) != (t == GGUF_ARRAY))
		abort();
	if (t == GGUF_ARRAY) {
		if (et == GGUF_STRING) {
			if (data)
				abort();
			for (j = 0; j < n; j++) {
				if (gguf_arr_str(g, k, j, &s) != 0)
					abort();
				touch(s.s, s.len);
			}
			if (gguf_arr_str(g, k, n, &s) == 0)
				abort();
		} else {
			/* every element lies inside the input */
			if (et == GGUF_U64 || et == GGUF_I64 || et == GGUF_F64)
				touch(data, 8 * n);
			else if (et == GGUF_U32 || et == GGUF_I32 ||
				 et == GGUF_F32)
				touch(data, 4 * n);
			else if (et == GGUF_U16 || et == GGUF_I16)
				touch(data, 2 * n);
			else
				touch(data, n);
		}
	}
	cairn_free(k);
}

static void read_tensor(const struct gguf *g, size_t i)
{
	const struct gguf_tensor *t = gguf_tensor_at(g, i);
	uint64_t blck;
	float y[256];

	if (!t || gguf_tensor(g, t->name) != t)
		abort();
	if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS || t->nelem == 0)
		abort();
	touch(t->data, t->nbytes);
	if (!quant_supported(t->type))
		return;
	blck = quant_block_elems(t->type);
	if (quant_row_bytes(t->type, t->nelem) != t->nbytes)
		abort();
	if (quant_dequant(t->type, t->data, y, blck) != CAIRN_OK)
		abort();
	sink += (uint64_t)(y[0] == y[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gguf *g = (struct gguf *)1;
	char err[512];
	long i, n;
	size_t k;
	int rc;

	rc = gguf_open_mem(data, size, &g, err, sizeof(err));
	if (rc != CAIRN_OK) {
		if (g || (rc != CAIRN_INVALID && rc != CAIRN_NOMEM))
			abort();
		if (rc == CAIRN_INVALID)
			check_message(err, size);
		return 0;
	}
	if (!g || gguf_file_size(g) != size)
		abort();
	n = gguf_n_kv(g);
	for (i = 0; i < n; i++)
		read_kv(g, i);
	if (gguf_kv_type(g, n) != -1)
		abort();
	for (k = 0; k < gguf_n_tensors(g); k++)
		read_tensor(g, k);
	if (gguf_tensor_at(g, gguf_n_tensors(g)) != NULL)
		abort();
	if (strlen(gguf_sha256(g)) != 64)
		abort();
	gguf_close(g);
	return 0;
}
