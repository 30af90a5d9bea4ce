/*
 * unit_gguf.c -- the GGUF reader (src/model/gguf.c): a file written by our
 * independent Python writer (tests/tools/gguf_writer.py demo) reads back
 * exactly, every kv type and getter conversion, tensor dims, offsets and
 * bytes; then every class of malformed header built byte by byte here is
 * refused with CAIRN_INVALID and a message naming the problem and its byte
 * offset; truncation at every byte; out-of-memory at every allocation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "gguf.h"
#include "test.h"

/* ------------------------------------------------------------- helpers */

/* 1 when /usr/bin/python3 with NumPy can run the writer; says why not. */
static int have_python(void)
{
	static int known = -1;

	if (known < 0)
		known = system("/usr/bin/python3 -c 'import numpy' "
			       ">/dev/null 2>&1") == 0;
	if (!known)
		test_skip("/usr/bin/python3 with numpy is not available "
			  "(Debian: python3-numpy)");
	return known;
}

/* Run the writer with args; the path of OUT goes to path. 0 on success. */
static int run_writer(const char *mode, const char *name, char *path,
		      size_t size)
{
	char cmd[1024];

	snprintf(path, size, "%s/%s", test_tmpdir, name);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/tools/gguf_writer.py"
		 " %s '%s'", mode, path);
	return system(cmd);
}

static int str_is(struct gguf_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.s, want, s.len) == 0;
}

/* ----------------------------------------------------- a byte builder */

struct bb {
	struct sbuf sb;
};

static void put(struct bb *b, const void *p, size_t n)
{
	sbuf_add(&b->sb, p, n);
}

static void u32(struct bb *b, uint32_t v)
{
	put(b, &v, 4);
}

static void u64(struct bb *b, uint64_t v)
{
	put(b, &v, 8);
}

static void str(struct bb *b, const char *s)
{
	u64(b, strlen(s));
	put(b, s, strlen(s));
}

static void header(struct bb *b, uint32_t version, uint64_t nt, uint64_t nkv)
{
	sbuf_init(&b->sb, 0);
	put(b, "GGUF", 4);
	u32(b, version);
	u64(b, nt);
	u64(b, nkv);
}

static void kv_u32(struct bb *b, const char *key, uint32_t v)
{
	str(b, key);
	u32(b, GGUF_U32);
	u32(b, v);
}

/* A tensor info of rank n with dims d[], type and offset. */
static void tinfo(struct bb *b, const char *name, uint32_t n,
		  const uint64_t *d, uint32_t type, uint64_t off)
{
	uint32_t i;

	str(b, name);
	u32(b, n);
	for (i = 0; i < n; i++)
		u64(b, d[i]);
	u32(b, type);
	u64(b, off);
}

/* Zero padding to the next multiple of a, then n data bytes of 0x11. */
static void data(struct bb *b, uint32_t a, size_t n)
{
	while (b->sb.len % a)
		sbuf_addc(&b->sb, 0);
	while (n--)
		sbuf_addc(&b->sb, 0x11);
}

/*
 * Expect the built bytes to be refused as CAIRN_INVALID with a message
 * containing want and ending in " at byte N" (N within the input).
 */
static void expect_bad(struct bb *b, const char *want, int line)
{
	struct gguf *g = (struct gguf *)1;
	char err[512];
	const char *at;
	int rc;

	CHECK_MSG(b->sb.err == 0, "line %d: builder failed", line);
	memset(err, 'x', sizeof(err));
	rc = gguf_open_mem(b->sb.buf, b->sb.len, &g, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_INVALID, "line %d: rc %d (%s)", line, rc,
		  rc ? err : "accepted");
	CHECK_MSG(g == NULL, "line %d: *out not NULL", line);
	if (rc == CAIRN_OK)
		gguf_close(g);
	if (rc != CAIRN_INVALID)
		goto out;
	CHECK_MSG(strstr(err, want) != NULL, "line %d: \"%s\" lacks \"%s\"",
		  line, err, want);
	at = strstr(err, " at byte ");
	CHECK_MSG(at && strtoull(at + 9, NULL, 10) <= b->sb.len,
		  "line %d: \"%s\" names no byte offset in the input", line,
		  err);
out:
	sbuf_release(&b->sb);
}
#define BAD(b, want) expect_bad(b, want, __LINE__)

/* Expect the built bytes to open; returns the handle (caller closes). */
static struct gguf *expect_ok(struct bb *b, int line)
{
	struct gguf *g = NULL;
	char err[512];
	int rc = gguf_open_mem(b->sb.buf, b->sb.len, &g, err, sizeof(err));

	CHECK_MSG(rc == CAIRN_OK, "line %d: rc %d: %s", line, rc, err);
	return g;
}
#define OK(b) expect_ok(b, __LINE__)

/* --------------------------------------------------- the Python file */

static void test_demo_file(void)
{
	char path[512], sha[65], err[512];
	const struct gguf_tensor *t;
	struct gguf *g = NULL;
	struct gguf_str s;
	const void *p;
	char *bytes = NULL;
	size_t len = 0, i;
	uint64_t n;
	uint32_t u;
	int64_t v;
	double dv;
	float f;
	int b, et, rc;

	if (!have_python())
		return;
	CHECK_INT(run_writer("demo", "demo.gguf", path, sizeof(path)), 0);
	rc = gguf_open(path, &g, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "%s", err);
	if (rc)
		return;
	CHECK_INT(gguf_version(g), 3);
	CHECK_INT(gguf_alignment(g), 64);
	CHECK_INT(gguf_n_kv(g), 24);
	CHECK_INT(gguf_n_tensors(g), 4);

	/* the kvs in file order, with their types */
	CHECK(gguf_kv_key(g, 0, &s) == 0 && str_is(s, "general.alignment"));
	CHECK(gguf_kv_key(g, 1, &s) == 0 &&
	      str_is(s, "general.architecture"));
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.u8")), GGUF_U8);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.i8")), GGUF_I8);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.u16")), GGUF_U16);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.i16")), GGUF_I16);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.u32")), GGUF_U32);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.i32")), GGUF_I32);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.f32")), GGUF_F32);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.bool")), GGUF_BOOL);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.str")), GGUF_STRING);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.u64")), GGUF_U64);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.i64")), GGUF_I64);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.f64")), GGUF_F64);
	CHECK_INT(gguf_kv_type(g, gguf_find(g, "t.arr.str")), GGUF_ARRAY);
	CHECK_INT(gguf_kv_type(g, 24), -1);
	CHECK_INT(gguf_kv_type(g, -1), -1);
	CHECK_INT(gguf_find(g, "t.nope"), -1);
	CHECK_INT(gguf_find(g, "t.u"), -1);
	CHECK_INT(gguf_find(g, "t.u88"), -1);
	CHECK(gguf_kv_key(g, 24, &s) == -1);

	/* integer getters convert when the value fits */
	CHECK(gguf_get_u32(g, "t.u8", &u) == 0 && u == 200);
	CHECK(gguf_get_i64(g, "t.i8", &v) == 0 && v == -100);
	CHECK(gguf_get_u32(g, "t.i8", &u) == -1);
	CHECK(gguf_get_u32(g, "t.u16", &u) == 0 && u == 60000);
	CHECK(gguf_get_i64(g, "t.i16", &v) == 0 && v == -30000);
	CHECK(gguf_get_u32(g, "t.u32", &u) == 0 && u == 4000000000u);
	CHECK(gguf_get_i64(g, "t.i32", &v) == 0 && v == -2000000000);
	CHECK(gguf_get_u32(g, "t.u64", &u) == -1);
	CHECK(gguf_get_i64(g, "t.u64", &v) == -1); /* 2^63+5 > INT64_MAX */
	CHECK(gguf_get_i64(g, "t.i64", &v) == 0 &&
	      v == -((int64_t)1 << 62) - 3);
	CHECK(gguf_get_u32(g, "general.alignment", &u) == 0 && u == 64);
	CHECK(gguf_get_u32(g, "t.str", &u) == -1);
	CHECK(gguf_get_u32(g, "t.f32", &u) == -1);
	CHECK(gguf_get_u32(g, "t.bool", &u) == -1);
	CHECK(gguf_get_u32(g, "t.nope", &u) == -1);
	/* floats */
	CHECK(gguf_get_f32(g, "t.f32", &f) == 0 && f == 1.5f);
	CHECK(gguf_get_f32(g, "t.f64", &f) == 0 && f == 0.1f);
	CHECK(gguf_get_f64(g, "t.f64", &dv) == 0 && dv == 0.1);
	CHECK(gguf_get_f64(g, "t.f32", &dv) == 0 && dv == 1.5);
	CHECK(gguf_get_f32(g, "t.u32", &f) == -1);
	/* bool, string */
	CHECK(gguf_get_bool(g, "t.bool", &b) == 0 && b == 1);
	CHECK(gguf_get_bool(g, "t.false", &b) == 0 && b == 0);
	CHECK(gguf_get_bool(g, "t.u8", &b) == -1);
	CHECK(gguf_get_str(g, "t.str", &s) == 0 &&
	      str_is(s, "h\xc3\xa9llo w\xc3\xb6rld"));
	CHECK(gguf_get_str(g, "t.empty", &s) == 0 && s.len == 0);
	CHECK(gguf_get_str(g, "general.architecture", &s) == 0 &&
	      str_is(s, "demo"));
	CHECK(gguf_get_str(g, "t.u8", &s) == -1);
	CHECK(gguf_get_str(g, "t.arr.str", &s) == -1);

	/* arrays */
	CHECK(gguf_get_arr(g, "t.arr.str", &et, &n, &p) == 0 &&
	      et == GGUF_STRING && n == 5 && p == NULL);
	CHECK(gguf_arr_str(g, "t.arr.str", 0, &s) == 0 && str_is(s, "[PAD]"));
	CHECK(gguf_arr_str(g, "t.arr.str", 1, &s) == 0 && s.len == 0);
	CHECK(gguf_arr_str(g, "t.arr.str", 2, &s) == 0 && str_is(s, "ab"));
	CHECK(gguf_arr_str(g, "t.arr.str", 3, &s) == 0 &&
	      str_is(s, "\xe4\xb8\xad\xe6\x96\x87"));
	CHECK(gguf_arr_str(g, "t.arr.str", 4, &s) == 0 &&
	      str_is(s, "\xe2\x96\x81x"));
	CHECK(gguf_arr_str(g, "t.arr.str", 5, &s) == -1);
	CHECK(gguf_arr_str(g, "t.arr.i32", 0, &s) == -1);
	CHECK(gguf_get_arr(g, "t.str", &et, &n, &p) == -1);
	if (gguf_get_arr(g, "t.arr.i32", &et, &n, &p) == 0 && et == GGUF_I32 &&
	    n == 3) {
		int32_t a[3];

		memcpy(a, p, sizeof(a));
		CHECK(a[0] == 1 && a[1] == -2 && a[2] == 3);
	} else {
		CHECK(!"t.arr.i32");
	}
	if (gguf_get_arr(g, "t.arr.f32", &et, &n, &p) == 0 && et == GGUF_F32 &&
	    n == 2) {
		float a[2];

		memcpy(a, p, sizeof(a));
		CHECK(a[0] == 0.5f && a[1] == -0.25f);
	} else {
		CHECK(!"t.arr.f32");
	}
	CHECK(gguf_get_arr(g, "t.arr.u8", &et, &n, &p) == 0 && et == GGUF_U8 &&
	      n == 3 && memcmp(p, "\x01\x02\xff", 3) == 0);
	CHECK(gguf_get_arr(g, "t.arr.bool", &et, &n, &p) == 0 &&
	      et == GGUF_BOOL && n == 3 && memcmp(p, "\x01\x00\x01", 3) == 0);
	CHECK(gguf_get_arr(g, "t.arr.empty", &et, &n, &p) == 0 &&
	      et == GGUF_I32 && n == 0);
	if (gguf_get_arr(g, "t.arr.u64", &et, &n, &p) == 0 && et == GGUF_U64 &&
	    n == 1) {
		uint64_t a;

		memcpy(&a, p, 8);
		CHECK(a == UINT64_MAX);
	} else {
		CHECK(!"t.arr.u64");
	}
	if (gguf_get_arr(g, "t.arr.f64", &et, &n, &p) == 0 && et == GGUF_F64 &&
	    n == 1) {
		double a;

		memcpy(&a, p, 8);
		CHECK(a == 1e300);
	} else {
		CHECK(!"t.arr.f64");
	}

	/* tensors: file order, dims, types, sizes, aligned offsets, bytes */
	t = gguf_tensor_at(g, 0);
	CHECK(t && strcmp(t->name, "a.f32") == 0 && t->type == GGML_TYPE_F32 &&
	      t->n_dims == 2 && t->ne[0] == 3 && t->ne[1] == 2 &&
	      t->ne[2] == 1 && t->ne[3] == 1 && t->nelem == 6 &&
	      t->nbytes == 24);
	if (t) {
		float a[6];

		memcpy(a, t->data, sizeof(a));
		for (i = 0; i < 6; i++)
			CHECK(a[i] == (float)i);
		CHECK(t->data != NULL);
		CHECK(((uintptr_t)t->data) % 64 == 0);
		CHECK(gguf_data_offset(g) % 64 == 0);
	}
	t = gguf_tensor(g, "b.f16");
	CHECK(t && t == gguf_tensor_at(g, 1) && t->type == GGML_TYPE_F16 &&
	      t->n_dims == 1 && t->ne[0] == 4 && t->nbytes == 8);
	if (t) /* 1.0, -2.0, 0.5, 65504 as IEEE half */
		CHECK(memcmp(t->data, "\x00\x3c\x00\xc0\x00\x38\xff\x7b", 8) ==
		      0);
	t = gguf_tensor(g, "c.q8_0");
	CHECK(t && t->type == GGML_TYPE_Q8_0 && t->n_dims == 3 &&
	      t->ne[0] == 32 && t->ne[1] == 2 && t->ne[2] == 1 &&
	      t->nelem == 64 && t->nbytes == 68);
	t = gguf_tensor(g, "d.f32");
	CHECK(t && t->n_dims == 4 && t->nelem == 1 && t->nbytes == 4);
	if (t) {
		memcpy(&f, t->data, 4);
		CHECK(f == 7.0f);
	}
	CHECK(gguf_tensor(g, "nope") == NULL);
	CHECK(gguf_tensor(g, "a.f3") == NULL);
	CHECK(gguf_tensor_at(g, 4) == NULL);
	/* every tensor lies in the file, at aligned distinct offsets */
	for (i = 0; i < gguf_n_tensors(g); i++) {
		const char *base = gguf_tensor_at(g, 0)->data;
		uint64_t off;

		t = gguf_tensor_at(g, i);
		off = (uint64_t)((const char *)t->data - base) +
		      gguf_data_offset(g);
		CHECK(off % 64 == 0);
		CHECK(off + t->nbytes <= gguf_file_size(g));
	}

	/* the SHA-256 is of the whole file */
	CHECK_INT(util_read_file(path, 1 << 20, &bytes, &len, err,
				 sizeof(err)), CAIRN_OK);
	CHECK_INT(gguf_file_size(g), len);
	util_sha256_hex(bytes, len, sha);
	CHECK_STR(gguf_sha256(g), sha);
	CHECK_STR(gguf_sha256(g), sha);
	gguf_close(g);

	/* the same bytes through gguf_open_mem */
	g = NULL;
	CHECK_INT(gguf_open_mem(bytes, len, &g, err, sizeof(err)), CAIRN_OK);
	CHECK(g && gguf_get_u32(g, "t.u32", &u) == 0 && u == 4000000000u);
	gguf_close(g);
	cairn_free(bytes);
}

/* Every prefix of the demo file shorter than its last tensor's data is
 * refused, with a message, never a crash; longer ones (cut padding) open. */
static void test_truncated_everywhere(void)
{
	char path[512], err[512];
	struct gguf *g = NULL;
	char *bytes = NULL;
	size_t len = 0, cut, need = 0, i, bad = 0;

	if (!have_python())
		return;
	CHECK_INT(run_writer("demo", "trunc.gguf", path, sizeof(path)), 0);
	CHECK_INT(util_read_file(path, 1 << 20, &bytes, &len, err,
				 sizeof(err)), CAIRN_OK);
	if (!bytes)
		return;
	CHECK_INT(gguf_open_mem(bytes, len, &g, err, sizeof(err)), CAIRN_OK);
	for (i = 0; g && i < gguf_n_tensors(g); i++) {
		const struct gguf_tensor *t = gguf_tensor_at(g, i);
		size_t end = (size_t)((const char *)t->data - bytes) +
			     (size_t)t->nbytes;

		if (end > need)
			need = end;
	}
	gguf_close(g);
	CHECK(need > 100 && need <= len);
	for (cut = 0; cut < len; cut++) {
		/* a private copy so ASan sees reads past the cut */
		char *copy = cairn_malloc(cut ? cut : 1);
		int rc;

		memcpy(copy, bytes, cut);
		g = NULL;
		err[0] = '\0';
		rc = gguf_open_mem(copy, cut, &g, err, sizeof(err));
		if (cut < need) {
			if (rc != CAIRN_INVALID || g || !strstr(err, " at byte "))
				bad++;
		} else if (rc != CAIRN_OK) {
			bad++;
		}
		gguf_close(g);
		cairn_free(copy);
	}
	CHECK_MSG(bad == 0, "%zu of %zu prefixes misjudged", bad, len);
	cairn_free(bytes);
}

/* ------------------------------------------------ built header cases */

static void test_minimal_and_version(void)
{
	struct bb b;
	struct gguf *g;
	uint64_t d1[1] = { 8 };
	uint32_t u;

	/* empty: no tensors, no kv */
	header(&b, 3, 0, 0);
	g = OK(&b);
	CHECK(g && gguf_n_tensors(g) == 0 && gguf_n_kv(g) == 0 &&
	      gguf_find(g, "x") == -1 && gguf_tensor(g, "x") == NULL);
	gguf_close(g);
	sbuf_release(&b.sb);

	/* version 2 reads the same way */
	header(&b, 2, 1, 1);
	kv_u32(&b, "a.b", 7);
	tinfo(&b, "w", 1, d1, GGML_TYPE_F32, 0);
	data(&b, 32, 32);
	g = OK(&b);
	CHECK(g && gguf_version(g) == 2 && gguf_get_u32(g, "a.b", &u) == 0 &&
	      u == 7 && gguf_tensor(g, "w") != NULL);
	gguf_close(g);
	sbuf_release(&b.sb);

	header(&b, 1, 0, 0);
	BAD(&b, "unsupported GGUF version 1");
	header(&b, 4, 0, 0);
	BAD(&b, "unsupported GGUF version 4");
	header(&b, 0x03000000, 0, 0);
	BAD(&b, "big-endian");
	header(&b, 3, 0, 0);
	b.sb.buf[0] = 'g';
	BAD(&b, "bad magic");
	sbuf_init(&b.sb, 0);
	put(&b, "GGUF\3\0\0\0", 8);
	BAD(&b, "file too short");
	sbuf_init(&b.sb, 0);
	BAD(&b, "file too short");
}

static void test_counts(void)
{
	struct bb b;

	header(&b, 3, (uint64_t)1 << 40, 0);
	BAD(&b, "tensor count 1099511627776 exceeds the limit");
	header(&b, 3, 0, UINT64_MAX);
	BAD(&b, "kv count 18446744073709551615 exceeds the limit");
	header(&b, 3, 0, GGUF_MAX_KV + 1);
	BAD(&b, "exceeds the limit 65536");
	header(&b, 3, 0, 1000); /* within the limit, but no room */
	BAD(&b, "kv count 1000 cannot fit");
	header(&b, 3, 1000, 0);
	BAD(&b, "tensor count 1000 cannot fit");
	header(&b, 3, 0, 2); /* claims 2, holds 1 */
	kv_u32(&b, "a", 1);
	put(&b, "\0\0\0\0\0\0\0\0\0\0\0\0\0", 13);
	BAD(&b, "empty key");
}

static void test_strings_and_arrays(void)
{
	struct bb b;

	/* key length past the end of the file */
	header(&b, 3, 0, 1);
	u64(&b, 1000);
	put(&b, "abcdefghijklm", 13);
	BAD(&b, "key length 1000 runs past the end of the file");
	/* over the key limit */
	header(&b, 3, 0, 1);
	u64(&b, (uint64_t)GGUF_MAX_KEY + 1);
	put(&b, "abcdefghijklm", 13);
	BAD(&b, "key length 65536 exceeds the limit");
	/* string value too long for the file */
	header(&b, 3, 0, 1);
	str(&b, "s");
	u32(&b, GGUF_STRING);
	u64(&b, UINT64_MAX);
	BAD(&b, "kv 0 's': string length 18446744073709551615 exceeds");
	header(&b, 3, 0, 1);
	str(&b, "s");
	u32(&b, GGUF_STRING);
	u64(&b, 5);
	put(&b, "abcd", 4);
	BAD(&b, "kv 0 's': string length 5 runs past the end");
	/* unknown value types */
	header(&b, 3, 0, 1);
	str(&b, "k");
	u32(&b, 13);
	u32(&b, 0);
	BAD(&b, "kv 0 'k': unknown value type 13");
	header(&b, 3, 0, 1);
	str(&b, "k");
	u32(&b, 0xffffffffu);
	u32(&b, 0);
	BAD(&b, "unknown value type 4294967295");
	/* bool must be 0 or 1 */
	header(&b, 3, 0, 1);
	str(&b, "k");
	u32(&b, GGUF_BOOL);
	put(&b, "\x02", 1);
	BAD(&b, "bool value 2 is not 0 or 1");
	/* truncated scalar */
	header(&b, 3, 0, 1);
	str(&b, "k");
	u32(&b, GGUF_U64);
	u32(&b, 1);
	BAD(&b, "file truncated reading a u64 value");
	/* nested arrays */
	header(&b, 3, 0, 1);
	str(&b, "a");
	u32(&b, GGUF_ARRAY);
	u32(&b, GGUF_ARRAY);
	u64(&b, 1);
	u32(&b, GGUF_U8);
	u64(&b, 0);
	BAD(&b, "kv 0 'a': nested arrays are not supported");
	/* unknown element type */
	header(&b, 3, 0, 1);
	str(&b, "a");
	u32(&b, GGUF_ARRAY);
	u32(&b, 99);
	u64(&b, 0);
	BAD(&b, "unknown array element type 99");
	/* array counts: over the limit, past the end (numbers, strings) */
	header(&b, 3, 0, 1);
	str(&b, "a");
	u32(&b, GGUF_ARRAY);
	u32(&b, GGUF_U8);
	u64(&b, (uint64_t)GGUF_MAX_ARRAY + 1);
	BAD(&b, "array count 16777217 exceeds the limit");
	header(&b, 3, 0, 1);
	str(&b, "a");
	u32(&b, GGUF_ARRAY);
	u32(&b, GGUF_U64);
	u64(&b, 3);
	u64(&b, 1);
	u64(&b, 2);
	BAD(&b, "array of 3 u64 values runs past the end");
	header(&b, 3, 0, 1);
	str(&b, "a");
	u32(&b, GGUF_ARRAY);
	u32(&b, GGUF_STRING);
	u64(&b, 1000000);
	str(&b, "x");
	BAD(&b, "array of 1000000 strings runs past the end");
	header(&b, 3, 0, 1);
	str(&b, "a");
	u32(&b, GGUF_ARRAY);
	u32(&b, GGUF_STRING);
	u64(&b, 2);
	str(&b, "x");
	u64(&b, 100);
	put(&b, "0123456789", 10);
	BAD(&b, "array string length 100 runs past the end");
	header(&b, 3, 0, 1);
	str(&b, "a");
	u32(&b, GGUF_ARRAY);
	u32(&b, GGUF_BOOL);
	u64(&b, 3);
	put(&b, "\x01\x00\x07", 3);
	BAD(&b, "bool element 2 is 7");
	/* duplicate keys, far apart */
	header(&b, 3, 0, 3);
	kv_u32(&b, "x.y", 1);
	kv_u32(&b, "x.z", 1);
	kv_u32(&b, "x.y", 2);
	BAD(&b, "kv 2 'x.y': duplicate key");
	/* a key with odd bytes is quoted safely in the message */
	header(&b, 3, 0, 1);
	str(&b, "\x01'k");
	u32(&b, 77);
	BAD(&b, "kv 0 '\\x01\\x27k': unknown value type 77");
}

static void test_alignment_key(void)
{
	struct bb b;
	struct gguf *g;
	uint64_t d1[1] = { 4 };
	const struct gguf_tensor *t;

	header(&b, 3, 0, 1);
	str(&b, "general.alignment");
	u32(&b, GGUF_U64);
	u64(&b, 32);
	BAD(&b, "'general.alignment': type u64, want u32");
	header(&b, 3, 0, 1);
	kv_u32(&b, "general.alignment", 48);
	BAD(&b, "alignment 48 is not a power of two");
	header(&b, 3, 0, 1);
	kv_u32(&b, "general.alignment", 0);
	BAD(&b, "alignment 0 is not a power of two");
	header(&b, 3, 0, 1);
	kv_u32(&b, "general.alignment", 1u << 20);
	BAD(&b, "alignment 1048576 is not a power of two up to 65536");

	/* alignment 8: offsets multiple of 8 are fine, 4 is not */
	header(&b, 3, 2, 1);
	kv_u32(&b, "general.alignment", 8);
	tinfo(&b, "a", 1, d1, GGML_TYPE_F16, 0);
	tinfo(&b, "b", 1, d1, GGML_TYPE_F16, 8);
	data(&b, 8, 16);
	g = OK(&b);
	t = g ? gguf_tensor(g, "b") : NULL;
	CHECK(g && gguf_alignment(g) == 8 && gguf_data_offset(g) % 8 == 0);
	CHECK(t && (const char *)t->data - (const char *)gguf_tensor(g, "a")
		->data == 8);
	gguf_close(g);
	sbuf_release(&b.sb);
	header(&b, 3, 2, 1);
	kv_u32(&b, "general.alignment", 8);
	tinfo(&b, "a", 1, d1, GGML_TYPE_F16, 0);
	tinfo(&b, "b", 1, d1, GGML_TYPE_F16, 12);
	data(&b, 8, 24);
	BAD(&b, "tensor 1 'b': data offset 12 is not a multiple of the "
		"alignment 8");
}

static void test_tensor_infos(void)
{
	struct bb b;
	struct gguf *g;
	uint64_t d1[1] = { 32 }, d2[2] = { 32, 2 }, d5[5] = { 1, 1, 1, 1, 1 };
	uint64_t zero[2] = { 32, 0 }, big[3] = { (uint64_t)1 << 32,
						 (uint64_t)1 << 30, 4 };
	char longname[GGUF_MAX_NAME + 1];

	/* rank */
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 0, d1, GGML_TYPE_F32, 0);
	data(&b, 32, 128);
	BAD(&b, "tensor 0 'w': rank 0 is not in 1..4");
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 5, d5, GGML_TYPE_F32, 0);
	data(&b, 32, 128);
	BAD(&b, "rank 5 is not in 1..4");
	/* zero and overflowing dimensions */
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 2, zero, GGML_TYPE_F32, 0);
	data(&b, 32, 128);
	BAD(&b, "dimension 1 is zero");
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 3, big, GGML_TYPE_F32, 0);
	data(&b, 32, 128);
	BAD(&b, "element count overflows at dimension 2");
	/* 2^62 elements fit int64, their 2^64 bytes do not fit uint64 */
	big[2] = 1;
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 3, big, GGML_TYPE_F32, 0);
	data(&b, 32, 128);
	BAD(&b, "data size overflows");
	/* types */
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 1, d1, 4, 0); /* retired Q4_2 */
	data(&b, 32, 128);
	BAD(&b, "unknown tensor type 4");
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 1, d1, GGML_TYPE_COUNT, 0);
	data(&b, 32, 128);
	BAD(&b, "unknown tensor type 40");
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 1, d1, 0xffffffffu, 0);
	data(&b, 32, 128);
	BAD(&b, "unknown tensor type 4294967295");
	d1[0] = 16;
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 1, d1, GGML_TYPE_Q8_0, 0);
	data(&b, 32, 128);
	BAD(&b, "row length 16 is not a multiple of the block size 32");
	d1[0] = 32;
	/* a type we cannot decode still opens (its size is known) */
	header(&b, 3, 1, 0);
	d1[0] = 256;
	tinfo(&b, "w", 1, d1, GGML_TYPE_Q2_K, 0);
	data(&b, 32, 84);
	g = OK(&b);
	CHECK(g && gguf_tensor(g, "w")->nbytes == 84);
	gguf_close(g);
	sbuf_release(&b.sb);
	d1[0] = 32;
	/* data past the end, by one byte and by an absurd offset */
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 2, d2, GGML_TYPE_F32, 0);
	data(&b, 32, 255);
	BAD(&b, "tensor 0 'w': data [0, +256) at data offset");
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 1, d1, GGML_TYPE_F32, (uint64_t)1 << 63);
	data(&b, 32, 128);
	BAD(&b, "runs past the end of the file");
	header(&b, 3, 1, 0);
	tinfo(&b, "w", 1, d1, GGML_TYPE_F32, 0);
	BAD(&b, "runs past the end of the file");
	/* names: duplicate, empty, NUL inside, too long */
	header(&b, 3, 2, 0);
	tinfo(&b, "w", 1, d1, GGML_TYPE_F32, 0);
	tinfo(&b, "w", 1, d1, GGML_TYPE_F32, 128);
	data(&b, 32, 256);
	BAD(&b, "duplicate tensor name 'w'");
	header(&b, 3, 1, 0);
	tinfo(&b, "", 1, d1, GGML_TYPE_F32, 0);
	data(&b, 32, 128);
	BAD(&b, "empty tensor name");
	header(&b, 3, 1, 0);
	u64(&b, 3);
	put(&b, "a\0b", 3);
	u32(&b, 1);
	u64(&b, 32);
	u32(&b, 0);
	u64(&b, 0);
	data(&b, 32, 128);
	BAD(&b, "tensor name contains a NUL byte");
	memset(longname, 'n', GGUF_MAX_NAME);
	longname[GGUF_MAX_NAME] = '\0';
	header(&b, 3, 1, 0);
	tinfo(&b, longname, 1, d1, GGML_TYPE_F32, 0);
	data(&b, 32, 128);
	BAD(&b, "tensor name length 256 exceeds the limit 255");
	longname[GGUF_MAX_NAME - 1] = '\0'; /* 255 bytes is fine */
	header(&b, 3, 1, 0);
	tinfo(&b, longname, 1, d1, GGML_TYPE_F32, 0);
	data(&b, 32, 128);
	g = OK(&b);
	CHECK(g && gguf_tensor(g, longname) != NULL);
	gguf_close(g);
	sbuf_release(&b.sb);
	/* overlapping data: the same offset, and a partial overlap */
	header(&b, 3, 2, 0);
	tinfo(&b, "a", 1, d1, GGML_TYPE_F32, 0);
	tinfo(&b, "b", 1, d1, GGML_TYPE_F32, 0);
	data(&b, 32, 256);
	BAD(&b, "overlaps tensor");
	header(&b, 3, 2, 0);
	tinfo(&b, "a", 1, d1, GGML_TYPE_F32, 96);
	tinfo(&b, "b", 1, d1, GGML_TYPE_F32, 0); /* [0,128) meets [96,224) */
	data(&b, 32, 256);
	BAD(&b, "data of tensor 'a' overlaps tensor 'b'");
	/* adjacent is fine, in any order */
	header(&b, 3, 2, 0);
	tinfo(&b, "a", 1, d1, GGML_TYPE_F32, 128);
	tinfo(&b, "b", 1, d1, GGML_TYPE_F32, 0);
	data(&b, 32, 256);
	g = OK(&b);
	CHECK(g && gguf_n_tensors(g) == 2 &&
	      strcmp(gguf_tensor_at(g, 0)->name, "a") == 0);
	gguf_close(g);
	sbuf_release(&b.sb);
	/* truncated in the middle of a tensor info */
	header(&b, 3, 1, 0);
	str(&b, "w");
	u32(&b, 2);
	u64(&b, 32);
	u64(&b, 2);
	u32(&b, GGML_TYPE_F32);
	u32(&b, 0); /* half of the data offset */
	BAD(&b, "tensor 0 'w': file truncated reading data offset");
}

/* Many keys and tensors: every one is found by its name. */
static void test_many_lookups(void)
{
	struct bb b;
	struct gguf *g;
	char key[32];
	uint64_t d1[1] = { 1 };
	uint32_t i, u;
	int ok = 1;

	header(&b, 3, 300, 1000);
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k.%u", (i * 7919) % 1000);
		kv_u32(&b, key, (i * 7919) % 1000);
	}
	for (i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "t.%u", 299 - i);
		tinfo(&b, key, 1, d1, GGML_TYPE_F32, 32 * (uint64_t)i);
	}
	data(&b, 32, 300 * 32);
	g = OK(&b);
	for (i = 0; g && i < 1000; i++) {
		snprintf(key, sizeof(key), "k.%u", i);
		if (gguf_get_u32(g, key, &u) != 0 || u != i)
			ok = 0;
	}
	for (i = 0; g && i < 300; i++) {
		const struct gguf_tensor *t;

		snprintf(key, sizeof(key), "t.%u", i);
		t = gguf_tensor(g, key);
		if (!t || t != gguf_tensor_at(g, 299 - i))
			ok = 0;
	}
	CHECK(g && ok);
	gguf_close(g);
	sbuf_release(&b.sb);
}

static void test_open_errors(void)
{
	char path[512], err[512];
	struct gguf *g = (struct gguf *)1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/no-such.gguf", test_tmpdir);
	CHECK_INT(gguf_open(path, &g, err, sizeof(err)), CAIRN_IO);
	CHECK(g == NULL && strstr(err, "cannot open"));
	CHECK_INT(gguf_open(test_tmpdir, &g, err, sizeof(err)), CAIRN_IO);
	CHECK(g == NULL && strstr(err, "not a regular file"));
	snprintf(path, sizeof(path), "%s/empty.gguf", test_tmpdir);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK_INT(gguf_open(path, &g, err, sizeof(err)), CAIRN_INVALID);
	CHECK(g == NULL && strstr(err, "empty.gguf': file too short"));
	/* err may be NULL */
	CHECK_INT(gguf_open(path, &g, NULL, 0), CAIRN_INVALID);
	CHECK_INT(gguf_open_mem(NULL, 0, &g, NULL, 0), CAIRN_INVALID);
}

/* Out of memory at every allocation: CAIRN_NOMEM, nothing leaked. */
static void test_oom(void)
{
	struct bb b;
	struct gguf *g;
	uint64_t d1[1] = { 8 };
	char err[256];
	long n;
	int rc = CAIRN_NOMEM, nomem = 0;

	header(&b, 3, 2, 2);
	kv_u32(&b, "a", 1);
	str(&b, "toks");
	u32(&b, GGUF_ARRAY);
	u32(&b, GGUF_STRING);
	u64(&b, 2);
	str(&b, "x");
	str(&b, "yz");
	tinfo(&b, "a", 1, d1, GGML_TYPE_F32, 0);
	tinfo(&b, "b", 1, d1, GGML_TYPE_F32, 32);
	data(&b, 32, 64);
	for (n = 1; n < 100 && rc == CAIRN_NOMEM; n++) {
		g = NULL;
		util_fail_alloc_after(n);
		rc = gguf_open_mem(b.sb.buf, b.sb.len, &g, err, sizeof(err));
		util_fail_alloc_after(0);
		if (rc == CAIRN_NOMEM) {
			nomem++;
			CHECK(g == NULL && strstr(err, "out of memory"));
		}
		gguf_close(g);
	}
	CHECK_INT(rc, CAIRN_OK);
	CHECK(nomem >= 5); /* handle, kv, sorted kv, strings, tensors... */
	sbuf_release(&b.sb);
}

void unit_gguf(void)
{
	RUN(test_demo_file);
	RUN(test_truncated_everywhere);
	RUN(test_minimal_and_version);
	RUN(test_counts);
	RUN(test_strings_and_arrays);
	RUN(test_alignment_key);
	RUN(test_tensor_infos);
	RUN(test_many_lookups);
	RUN(test_open_errors);
	RUN(test_oom);
}
