/*
 * unit_quant.c -- ggml tensor types (src/model/quant.c): sizes; for every type a
 * block built by hand with known values (a wrong nibble, bit or scale order
 * fails); random data quantised by the Python writer and decoded here
 * compared bit for bit with the writer's independent NumPy decoder; half
 * and bfloat16 conversion edge cases and NumPy's float16 rounding.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "gguf.h"
#include "quant.h"
#include "test.h"

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

static uint32_t fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float bitsf(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Decode one block of type into y (n elements) and compare with want. */
static void expect_block(uint32_t type, const uint8_t *blk, const float *want,
			 int n, int line)
{
	float y[256];
	int i, bad = 0;

	CHECK_INT(quant_dequant(type, blk, y, (uint64_t)n), CAIRN_OK);
	for (i = 0; i < n; i++) {
		if (fbits(y[i]) == fbits(want[i]))
			continue;
		if (bad++ < 4)
			fprintf(stderr, "line %d: %s element %d: %.9g, want "
				"%.9g\n", line, quant_type_name(type), i,
				(double)y[i], (double)want[i]);
	}
	CHECK_MSG(bad == 0, "line %d: %d of %d elements differ", line, bad, n);
}

/* ------------------------------------------------------------- sizes */

static void test_sizes(void)
{
	static const struct {
		uint32_t type;
		const char *name;
		uint64_t blck, bytes;
	} want[] = {
		{ GGML_TYPE_F32, "f32", 1, 4 },
		{ GGML_TYPE_F16, "f16", 1, 2 },
		{ GGML_TYPE_BF16, "bf16", 1, 2 },
		{ GGML_TYPE_Q4_0, "q4_0", 32, 18 },
		{ GGML_TYPE_Q4_1, "q4_1", 32, 20 },
		{ GGML_TYPE_Q5_0, "q5_0", 32, 22 },
		{ GGML_TYPE_Q5_1, "q5_1", 32, 24 },
		{ GGML_TYPE_Q8_0, "q8_0", 32, 34 },
		{ GGML_TYPE_Q4_K, "q4_K", 256, 144 },
		{ GGML_TYPE_Q5_K, "q5_K", 256, 176 },
		{ GGML_TYPE_Q6_K, "q6_K", 256, 210 },
	};
	uint64_t blck, bytes, nb;
	uint32_t t;
	float y[32];
	size_t i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		CHECK(quant_supported(want[i].type));
		CHECK_STR(quant_type_name(want[i].type), want[i].name);
		CHECK_INT(quant_block_elems(want[i].type), want[i].blck);
		CHECK_INT(quant_block_bytes(want[i].type), want[i].bytes);
		/* the reader's table agrees */
		CHECK(gguf_type_size(want[i].type, &blck, &bytes));
		CHECK_INT(blck, want[i].blck);
		CHECK_INT(bytes, want[i].bytes);
		CHECK_INT(quant_row_bytes(want[i].type, want[i].blck * 3),
			  want[i].bytes * 3);
		CHECK_INT(quant_row_bytes(want[i].type, 0), 0);
		if (want[i].blck > 1)
			CHECK_INT(quant_row_bytes(want[i].type,
						  want[i].blck + 1), 0);
		/* a block count whose bytes overflow uint64 */
		nb = UINT64_MAX / want[i].bytes + 1;
		if (nb <= UINT64_MAX / want[i].blck)
			CHECK_INT(quant_row_bytes(want[i].type,
						  nb * want[i].blck), 0);
		CHECK_INT(quant_row_bytes(want[i].type,
					  want[i].blck * 1000000000000ull),
			  want[i].bytes * 1000000000000ull);
	}
	/* exactly these are supported */
	for (t = 0; t < 64; t++)
		n += quant_supported(t);
	CHECK_INT(n, ARRAY_SIZE(want));
	CHECK(!quant_supported(GGML_TYPE_Q2_K));
	CHECK_STR(quant_type_name(GGML_TYPE_Q2_K), "q2_K");
	CHECK_STR(quant_type_name(4), "unknown");
	CHECK_STR(quant_type_name(1000), "unknown");
	CHECK_INT(quant_block_elems(GGML_TYPE_Q8_K), 0);
	CHECK_INT(quant_block_bytes(GGML_TYPE_Q8_K), 0);
	CHECK_INT(quant_row_bytes(GGML_TYPE_Q8_K, 256), 0);
	CHECK_INT(quant_dequant(GGML_TYPE_Q2_K, y, y, 256), CAIRN_INVALID);
	CHECK_INT(quant_dequant(GGML_TYPE_Q8_0, y, y, 16), CAIRN_INVALID);
}

/* ------------------------------------------------------- hand blocks */

static void test_hand_f16_bf16(void)
{
	const uint8_t h[] = { 0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00,
			      0x00, 0x7c, 0x00, 0x80, 0x00, 0x04, 0x55, 0x35 };
	const float wh[] = { 1.0f, -2.0f, 65504.0f, 0x1p-24f, INFINITY,
			     -0.0f, 0x1p-14f, 0x1.554p-2f };
	const uint8_t b[] = { 0x80, 0x3f, 0x00, 0xc0, 0x49, 0x40, 0x80, 0xff };
	const float wb[] = { 1.0f, -2.0f, 3.140625f, -INFINITY };
	const float wf[] = { 1.5f, -0.0f, 0x1p-149f };
	float y[8];

	expect_block(GGML_TYPE_F16, h, wh, 8, __LINE__);
	expect_block(GGML_TYPE_BF16, b, wb, 4, __LINE__);
	expect_block(GGML_TYPE_F32, (const uint8_t *)wf, wf, 3, __LINE__);
	/* odd source addresses are fine */
	{
		uint8_t buf[17];

		memcpy(buf + 1, h, 16);
		CHECK_INT(quant_dequant(GGML_TYPE_F16, buf + 1, y, 8),
			  CAIRN_OK);
		CHECK(memcmp(y, wh, sizeof(wh)) == 0);
	}
}

static void test_hand_q4_q5_q8(void)
{
	uint8_t blk[34];
	float want[32];
	int j;

	/* Q4_0, d = 1: element j < 16 is the low nibble of qs[j] */
	blk[0] = 0x00;
	blk[1] = 0x3c;
	for (j = 0; j < 16; j++)
		blk[2 + j] = (uint8_t)(j | (15 - j) << 4);
	for (j = 0; j < 16; j++) {
		want[j] = (float)(j - 8);
		want[j + 16] = (float)(7 - j);
	}
	expect_block(GGML_TYPE_Q4_0, blk, want, 32, __LINE__);
	CHECK(want[0] == -8.0f && want[16] == 7.0f); /* literal anchors */

	/* Q4_1, d = 0.5, m = -1 */
	blk[0] = 0x00;
	blk[1] = 0x38;
	blk[2] = 0x00;
	blk[3] = 0xbc;
	for (j = 0; j < 16; j++)
		blk[4 + j] = (uint8_t)(j | (15 - j) << 4);
	for (j = 0; j < 16; j++) {
		want[j] = (float)j * 0.5f - 1.0f;
		want[j + 16] = (float)(15 - j) * 0.5f - 1.0f;
	}
	expect_block(GGML_TYPE_Q4_1, blk, want, 32, __LINE__);

	/* Q5_0, d = 2: the fifth bit of element k is bit k of the
	 * little-endian u32 0x12345678 */
	blk[0] = 0x00;
	blk[1] = 0x40;
	blk[2] = 0x78;
	blk[3] = 0x56;
	blk[4] = 0x34;
	blk[5] = 0x12;
	for (j = 0; j < 16; j++)
		blk[6 + j] = (uint8_t)(j | (15 - j) << 4);
	for (j = 0; j < 16; j++) {
		int b0 = 0x12345678 >> j & 1, b1 = 0x12345678 >> (j + 16) & 1;

		want[j] = (float)((j | b0 << 4) - 16) * 2.0f;
		want[j + 16] = (float)(((15 - j) | b1 << 4) - 16) * 2.0f;
	}
	expect_block(GGML_TYPE_Q5_0, blk, want, 32, __LINE__);
	/* element 3: bit 3 of 0x78 is 1: (3|16) - 16 = 3, times 2;
	 * element 20: j = 4, bit 20 (0x34 bit 4) is 1: (11|16) - 16 = 11 */
	CHECK(want[3] == 6.0f && want[20] == 22.0f && want[0] == -32.0f);

	/* Q5_1, d = 1, m = 0.25: fifth bits 0x0000ffff (first 16) */
	blk[0] = 0x00;
	blk[1] = 0x3c;
	blk[2] = 0x00;
	blk[3] = 0x34;
	blk[4] = blk[5] = 0xff;
	blk[6] = blk[7] = 0x00;
	for (j = 0; j < 16; j++)
		blk[8 + j] = (uint8_t)(j | (15 - j) << 4);
	for (j = 0; j < 16; j++) {
		want[j] = (float)(j | 16) + 0.25f;
		want[j + 16] = (float)(15 - j) + 0.25f;
	}
	expect_block(GGML_TYPE_Q5_1, blk, want, 32, __LINE__);

	/* Q8_0, d = 0.25, signed bytes, -128 included */
	blk[0] = 0x00;
	blk[1] = 0x34;
	for (j = 0; j < 32; j++) {
		blk[2 + j] = (uint8_t)(int8_t)(4 * j - 64);
		want[j] = (float)(j - 16);
	}
	blk[33] = 0x80;
	want[31] = -32.0f;
	expect_block(GGML_TYPE_Q8_0, blk, want, 32, __LINE__);
}

/*
 * Pack 8 six-bit scales and mins the K-quant way, written from the layout
 * description (not from the decoder): scales/mins 0-3 in the low 6 bits
 * of bytes 0-3 / 4-7; of 4-7 the low 4 bits go to bytes 8-11 (scale low
 * nibble, min high nibble) and the top 2 bits to bits 6-7 of bytes 0-3
 * (scales) and 4-7 (mins).
 */
static void pack_k_scales(const int *sc, const int *m, uint8_t *out)
{
	int j;

	for (j = 0; j < 4; j++) {
		out[j] = (uint8_t)(sc[j] | (sc[j + 4] >> 4) << 6);
		out[j + 4] = (uint8_t)(m[j] | (m[j + 4] >> 4) << 6);
		out[j + 8] = (uint8_t)((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
	}
}

static void test_hand_k(void)
{
	static const int sc[8] = { 1, 2, 3, 4, 45, 50, 61, 33 };
	static const int mn[8] = { 5, 7, 9, 11, 52, 17, 63, 40 };
	uint8_t blk[210];
	float want[256];
	int e;

	/* Q4_K: d = 1, dmin = 0.5 */
	memset(blk, 0, sizeof(blk));
	blk[1] = 0x3c;
	blk[3] = 0x38;
	pack_k_scales(sc, mn, blk + 4);
	for (e = 0; e < 128; e++) /* byte e: low (e*5)%16, high (e*3)%16 */
		blk[16 + e] = (uint8_t)((e * 5) % 16 | ((e * 3) % 16) << 4);
	for (e = 0; e < 256; e++) {
		int j = e / 32, l = e % 32, c = j / 2, hi = j % 2;
		int byte = 32 * c + l;
		int q = hi ? (byte * 3) % 16 : (byte * 5) % 16;

		want[e] = 1.0f * (float)sc[j] * (float)q -
			  0.5f * (float)mn[j];
	}
	expect_block(GGML_TYPE_Q4_K, blk, want, 256, __LINE__);
	/* literal anchors: element 32 is byte 0's high nibble, sub-block 1 */
	CHECK(want[0] == -2.5f && want[32] == -3.5f);
	/* element 160 = 64*2 + 32: byte 64's high nibble (192 % 16 = 0) in
	 * sub-block 5: 0 * 50 - 0.5 * 17 */
	CHECK(want[160] == -8.5f);

	/* Q5_K: same header, qh[l] = 37 l mod 256 gives the fifth bits */
	memmove(blk + 48, blk + 16, 128);
	for (e = 0; e < 32; e++)
		blk[16 + e] = (uint8_t)(e * 37);
	for (e = 0; e < 256; e++) {
		int j = e / 32, l = e % 32, c = j / 2, hi = j % 2;
		int byte = 32 * c + l;
		int q = hi ? (byte * 3) % 16 : (byte * 5) % 16;

		q |= (((l * 37) & 255) >> j & 1) << 4;
		want[e] = 1.0f * (float)sc[j] * (float)q -
			  0.5f * (float)mn[j];
	}
	expect_block(GGML_TYPE_Q5_K, blk, want, 256, __LINE__);
	/* element 33: l = 1, qh[1] = 37 = 0b100101, sub-block 1 -> bit 1 = 0;
	 * element 64 + 2: l = 2, qh[2] = 74 = 0b1001010, sub-block 2 -> 0;
	 * element 32*3 + 1: sub-block 3, bit 3 of 37 = 0; 32*5 + 1: bit 5 = 1 */
	CHECK(want[161] == 50.0f * (float)(((32 * 2 + 1) * 3 % 16) | 16) -
				   8.5f);

	/* Q6_K: d = 0.5 at bytes 208-209, signed scales */
	memset(blk, 0, sizeof(blk));
	for (e = 0; e < 128; e++)
		blk[e] = (uint8_t)(e * 7 + 3);
	for (e = 0; e < 64; e++)
		blk[128 + e] = (uint8_t)(e * 29 + 1);
	for (e = 0; e < 16; e++)
		blk[192 + e] = (uint8_t)(int8_t)(e % 2 ? e + 1 : -(e + 1));
	blk[208] = 0x00;
	blk[209] = 0x38;
	for (e = 0; e < 256; e++) {
		int h = e / 128, r = e % 128, k = r / 32, l = r % 32;
		int lb = 64 * h + l + (k % 2 ? 32 : 0);
		int low = k < 2 ? blk[lb] & 15 : blk[lb] >> 4;
		int top = blk[128 + 32 * h + l] >> (2 * k) & 3;
		int s = (int8_t)blk[192 + e / 16];

		want[e] = 0.5f * (float)s * (float)((low | top << 4) - 32);
	}
	expect_block(GGML_TYPE_Q6_K, blk, want, 256, __LINE__);
	/* element 0: ql[0] = 3 -> low 3, qh[0] = 1 -> top 1: q = 19 - 32;
	 * scale -1: 0.5 * -1 * -13 */
	CHECK(want[0] == 6.5f);
}

/* --------------------------------------------------- against NumPy */

static void test_vs_numpy(void)
{
	static const char *const order[] = {
		"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0",
		"q4_K", "q5_K", "q6_K",
	};
	char gpath[512], rpath[512], cmd[1200], err[512];
	struct gguf *g = NULL;
	char *ref = NULL;
	size_t rlen = 0, pos = 0, i;
	int rc;

	if (!have_python())
		return;
	snprintf(gpath, sizeof(gpath), "%s/quant.gguf", test_tmpdir);
	snprintf(rpath, sizeof(rpath), "%s/quant.f32", test_tmpdir);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/tools/gguf_writer.py"
		 " quant '%s' '%s'", gpath, rpath);
	CHECK_INT(system(cmd), 0);
	rc = gguf_open(gpath, &g, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "%s", err);
	CHECK_INT(util_read_file(rpath, 1 << 24, &ref, &rlen, err,
				 sizeof(err)), CAIRN_OK);
	if (rc || !ref)
		goto out;
	CHECK_INT(gguf_n_tensors(g), ARRAY_SIZE(order));
	for (i = 0; i < gguf_n_tensors(g) && i < ARRAY_SIZE(order); i++) {
		const struct gguf_tensor *t = gguf_tensor_at(g, i);
		float *y = cairn_malloc(t->nelem * sizeof(float));
		uint8_t *odd = cairn_malloc(t->nbytes + 1);
		double maxd = 0;
		uint64_t k, diff = 0;

		CHECK_STR(quant_type_name(t->type), order[i]);
		CHECK_INT(quant_row_bytes(t->type, t->nelem), t->nbytes);
		CHECK((pos + t->nelem) * 4 <= rlen);
		if (!y || !odd || (pos + t->nelem) * 4 > rlen) {
			cairn_free(y);
			cairn_free(odd);
			break;
		}
		/* decode from an odd address: the decoder must not care */
		memcpy(odd + 1, t->data, t->nbytes);
		CHECK_INT(quant_dequant(t->type, odd + 1, y, t->nelem),
			  CAIRN_OK);
		for (k = 0; k < t->nelem; k++) {
			float r;

			memcpy(&r, ref + (pos + k) * 4, 4);
			if (fbits(r) != fbits(y[k])) {
				double dd = fabs((double)r - (double)y[k]);

				diff++;
				if (dd > maxd || isnan(dd))
					maxd = dd;
			}
		}
		CHECK_MSG(diff == 0, "%s: %llu of %llu values differ from "
			  "NumPy, max |d| %g", order[i],
			  (unsigned long long)diff,
			  (unsigned long long)t->nelem, maxd);
		pos += t->nelem;
		cairn_free(y);
		cairn_free(odd);
	}
	CHECK_INT(pos * 4, rlen);
out:
	cairn_free(ref);
	gguf_close(g);
}

/* ------------------------------------------------ half and bfloat16 */

static void test_f16_edges(void)
{
	static const struct {
		uint32_t f;
		uint16_t h;
	} c[] = {
		{ 0x00000000, 0x0000 }, /* +0 */
		{ 0x80000000, 0x8000 }, /* -0 */
		{ 0x3f800000, 0x3c00 }, /* 1 */
		{ 0xc0000000, 0xc000 }, /* -2 */
		{ 0x477fe000, 0x7bff }, /* 65504, the largest half */
		{ 0x477fefff, 0x7bff }, /* just under 65520 */
		{ 0x477ff000, 0x7c00 }, /* 65520: a tie, to even = inf */
		{ 0x501502f9, 0x7c00 }, /* 1e10 */
		{ 0xff800000, 0xfc00 }, /* -inf */
		{ 0x7f800000, 0x7c00 }, /* inf */
		{ 0x33800000, 0x0001 }, /* 2^-24, smallest subnormal */
		{ 0x33000000, 0x0000 }, /* 2^-25: tie, to even = 0 */
		{ 0xb3000000, 0x8000 }, /* -2^-25 */
		{ 0x33000001, 0x0001 }, /* just over 2^-25 */
		{ 0x33c00000, 0x0002 }, /* 3 * 2^-25: tie 1.5 -> 2 */
		{ 0x34200000, 0x0002 }, /* 5 * 2^-25: tie 2.5 -> 2 */
		{ 0x387fc000, 0x03ff }, /* largest subnormal */
		{ 0x387fe000, 0x0400 }, /* tie between it and 2^-14: even */
		{ 0x38800000, 0x0400 }, /* 2^-14, smallest normal */
		{ 0x3f801000, 0x3c00 }, /* 1 + 2^-11: tie, to even */
		{ 0x3f803000, 0x3c02 }, /* 1 + 3*2^-11: tie, to even */
		{ 0x3f801001, 0x3c01 }, /* just over the tie */
		{ 0x3f7fffff, 0x3c00 }, /* just under 1 */
		{ 0x00000001, 0x0000 }, /* float subnormal */
		{ 0x0d800000, 0x0000 },
	};
	size_t i;
	uint32_t h;
	int bad = 0, nan_bad = 0;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		uint16_t got = quant_f32_to_f16(bitsf(c[i].f));

		CHECK_MSG(got == c[i].h, "f32 %08x -> f16 %04x, want %04x",
			  c[i].f, got, c[i].h);
	}
	/* NaN stays NaN, quiet, sign kept */
	CHECK_INT(quant_f32_to_f16(bitsf(0x7fc00000)), 0x7e00);
	CHECK_INT(quant_f32_to_f16(bitsf(0xff800001)), 0xfe00);
	CHECK_INT(quant_f32_to_f16(bitsf(0x7f802000)), 0x7e01);
	/* every half: to float and back is the identity (NaN: still NaN) */
	for (h = 0; h < 65536; h++) {
		float f = quant_f16_to_f32((uint16_t)h);
		uint16_t back = quant_f32_to_f16(f);
		int is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);

		if (is_nan) {
			if (!isnan(f) || (back & 0x7e00) != 0x7e00 ||
			    (back & 0x8000) != (h & 0x8000))
				nan_bad++;
		} else if (back != h) {
			bad++;
		}
	}
	CHECK_INT(bad, 0);
	CHECK_INT(nan_bad, 0);
	/* subnormal and normal values exactly */
	CHECK(quant_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
	CHECK(quant_f16_to_f32(0x03ff) == ldexpf(1023.0f, -24));
	CHECK(quant_f16_to_f32(0x8200) == -ldexpf(1.0f, -15));
	CHECK(quant_f16_to_f32(0x3555) == 0x1.554p-2f);

	/* bfloat16 */
	CHECK_INT(quant_f32_to_bf16(1.0f), 0x3f80);
	CHECK_INT(quant_f32_to_bf16(bitsf(0x3f808000)), 0x3f80); /* tie even */
	CHECK_INT(quant_f32_to_bf16(bitsf(0x3f818000)), 0x3f82); /* tie even */
	CHECK_INT(quant_f32_to_bf16(bitsf(0x3f808001)), 0x3f81);
	CHECK_INT(quant_f32_to_bf16(bitsf(0x7f7fffff)), 0x7f80); /* to inf */
	CHECK_INT(quant_f32_to_bf16(bitsf(0x7f800001)), 0x7fc0); /* quiet */
	CHECK_INT(quant_f32_to_bf16(bitsf(0x00000001)), 0x0000);
	CHECK(quant_bf16_to_f32(0x3f80) == 1.0f);
	CHECK(quant_bf16_to_f32(0xff80) == -INFINITY);
	CHECK(isnan(quant_bf16_to_f32(0x7fc1)));
	CHECK(quant_bf16_to_f32(0x0001) == bitsf(0x00010000));
}

/* NumPy's float32 -> float16 over random patterns and every boundary. */
static void test_f16_vs_numpy(void)
{
	char path[512], cmd[700], err[256];
	char *buf = NULL;
	size_t len = 0, i, n, bad = 0, nans = 0;

	if (!have_python())
		return;
	snprintf(path, sizeof(path), "%s/f16.bin", test_tmpdir);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/tools/gguf_writer.py"
		 " f16 '%s'", path);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(util_read_file(path, 1 << 26, &buf, &len, err, sizeof(err)),
		  CAIRN_OK);
	if (!buf)
		return;
	CHECK(len % 6 == 0 && len / 6 > 500000);
	n = len / 6;
	for (i = 0; i < n; i++) {
		uint32_t f;
		uint16_t want, got;

		memcpy(&f, buf + 6 * i, 4);
		memcpy(&want, buf + 6 * i + 4, 2);
		got = quant_f32_to_f16(bitsf(f));
		if ((f & 0x7fffffff) > 0x7f800000) {
			/* NumPy keeps the payload unquieted; we quiet it */
			nans++;
			if ((got & 0x7c00) != 0x7c00 || !(got & 0x3ff) ||
			    (got ^ want) & 0x8000)
				bad++;
		} else if (got != want) {
			if (bad < 4)
				fprintf(stderr, "f32 %08x: got %04x, numpy "
					"%04x\n", f, got, want);
			bad++;
		}
	}
	CHECK_MSG(bad == 0, "%zu of %zu differ", bad, n);
	CHECK(nans > 100);
	cairn_free(buf);
}

/*
 * The codec as the vector index and the static embedder use it (they had
 * a copy of their own until both called this one): the values they store
 * and the round-trip error their cosine floor assumes.
 */
static void test_f16_vector_values(void)
{
	unsigned long long rng = 0x9E3779B97F4A7C15ULL;
	int i, bad = 0;

	CHECK_INT(quant_f32_to_f16(1.0f), 0x3c00);
	CHECK_INT(quant_f32_to_f16(-2.0f), 0xc000);
	CHECK_INT(quant_f32_to_f16(65504.0f), 0x7bff);
	CHECK_INT(quant_f32_to_f16(1e6f), 0x7c00);
	CHECK_INT(quant_f32_to_f16(0.0f), 0);
	CHECK_INT(quant_f32_to_f16(5.960464477539063e-08f), 1); /* smallest subnormal */
	/* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1) */
	CHECK_INT(quant_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);
	CHECK_INT(quant_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);
	CHECK(quant_f16_to_f32(0x3c00) == 1.0f);
	CHECK(quant_f16_to_f32(0x0001) == 5.960464477539063e-08f);
	CHECK(isinf(quant_f16_to_f32(0x7c00)));
	/* every finite half survives f32 and back */
	for (i = 0; i < 0x10000; i++) {
		uint16_t h = (uint16_t)i;

		if ((h & 0x7c00) == 0x7c00)
			continue;
		if (quant_f32_to_f16(quant_f16_to_f32(h)) != h)
			bad++;
	}
	CHECK_INT(bad, 0);
	/* relative error of a round trip is at most 2^-11 for normals */
	for (i = 0; i < 1000; i++) {
		float x;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		x = (float)((double)(rng >> 11) / (double)(1ULL << 52) - 1.0);
		if (fabsf(x) > 1e-4f)
			CHECK(fabsf(quant_f16_to_f32(quant_f32_to_f16(x)) - x) <=
			      fabsf(x) / 2048 + 1e-12f);
	}
}

void unit_quant(void)
{
	RUN(test_sizes);
	RUN(test_hand_f16_bf16);
	RUN(test_hand_q4_q5_q8);
	RUN(test_hand_k);
	RUN(test_vs_numpy);
	RUN(test_f16_edges);
	RUN(test_f16_vector_values);
	RUN(test_f16_vs_numpy);
}
