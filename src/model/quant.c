/*
 * quant.c -- ggml tensor types: sizes, IEEE half / bfloat16 conversions and
 * dequantisation of F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K,
 * Q5_K and Q6_K to float (see quant.h; the layouts in words are in
 * docs/GGUF.md).
 *
 * Layer: model files, beside gguf.c. Pure functions, no state, no
 * allocation.
 *
 * Every block is read byte by byte or through memcpy, so the source may have
 * any alignment (gguf_open_mem() buffers need not be aligned). Each value is
 * computed with the float operations in the order of ggml's reference
 * decoder (dequantize_row_* in ggml-quants.c), one rounding per operation
 * (C11 mode keeps the compiler from fusing them), so the results equal
 * ggml's bit for bit; tests/unit_quant.c checks that against the NumPy
 * decoder in tests/tools/gguf_writer.py.
 *
 * Must never: read past n elements' worth of blocks, or write past n floats.
 */
#include <string.h>

#include "internal.h"
#include "gguf.h"
#include "quant.h"

#define QK 32    /* elements per block of the classic quants */
#define QK_K 256 /* elements per super-block of the K-quants */

static const struct {
	uint32_t type;     /* enum ggml_type */
	const char *name;  /* ggml's name */
	uint16_t blck;     /* elements per block */
	uint16_t bytes;    /* bytes per block */
} types[] = {
	{ GGML_TYPE_F32, "f32", 1, 4 },
	{ GGML_TYPE_F16, "f16", 1, 2 },
	{ GGML_TYPE_BF16, "bf16", 1, 2 },
	{ GGML_TYPE_Q4_0, "q4_0", QK, 2 + QK / 2 },
	{ GGML_TYPE_Q4_1, "q4_1", QK, 4 + QK / 2 },
	{ GGML_TYPE_Q5_0, "q5_0", QK, 2 + 4 + QK / 2 },
	{ GGML_TYPE_Q5_1, "q5_1", QK, 4 + 4 + QK / 2 },
	{ GGML_TYPE_Q8_0, "q8_0", QK, 2 + QK },
	{ GGML_TYPE_Q4_K, "q4_K", QK_K, 4 + 12 + QK_K / 2 },
	{ GGML_TYPE_Q5_K, "q5_K", QK_K, 4 + 12 + QK_K / 8 + QK_K / 2 },
	{ GGML_TYPE_Q6_K, "q6_K", QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + 2 },
};

/* Names of the types we know but do not decode (ggml's spelling). */
static const char *other_name(uint32_t type)
{
	switch (type) {
	case GGML_TYPE_Q8_1: return "q8_1";
	case GGML_TYPE_Q2_K: return "q2_K";
	case GGML_TYPE_Q3_K: return "q3_K";
	case GGML_TYPE_Q8_K: return "q8_K";
	case 16: return "iq2_xxs";
	case 17: return "iq2_xs";
	case 18: return "iq3_xxs";
	case 19: return "iq1_s";
	case 20: return "iq4_nl";
	case 21: return "iq3_s";
	case 22: return "iq2_s";
	case 23: return "iq4_xs";
	case 24: return "i8";
	case 25: return "i16";
	case 26: return "i32";
	case 27: return "i64";
	case 28: return "f64";
	case 29: return "iq1_m";
	case 34: return "tq1_0";
	case 35: return "tq2_0";
	case 39: return "mxfp4";
	default: return "unknown";
	}
}

static int find(uint32_t type)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(types); i++)
		if (types[i].type == type)
			return (int)i;
	return -1;
}

const char *quant_type_name(uint32_t type)
{
	int i = find(type);

	return i < 0 ? other_name(type) : types[i].name;
}

int quant_supported(uint32_t type)
{
	return find(type) >= 0;
}

uint64_t quant_block_elems(uint32_t type)
{
	int i = find(type);

	return i < 0 ? 0 : types[i].blck;
}

uint64_t quant_block_bytes(uint32_t type)
{
	int i = find(type);

	return i < 0 ? 0 : types[i].bytes;
}

uint64_t quant_row_bytes(uint32_t type, uint64_t n)
{
	int i = find(type);
	uint64_t nb;

	if (i < 0 || n % types[i].blck)
		return 0;
	nb = n / types[i].blck;
	if (nb > UINT64_MAX / types[i].bytes)
		return 0;
	return nb * types[i].bytes;
}

/* ------------------------------------------------------- half, bfloat16 */

static float bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

float quant_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	int32_t e = (h >> 10) & 0x1f;
	uint32_t m = h & 0x3ff;

	if (e == 0x1f) /* infinity or NaN (payload kept) */
		return bits_f32(sign | 0x7f800000u | (m << 13));
	if (e == 0) {
		if (m == 0)
			return bits_f32(sign);
		/* subnormal m * 2^-24: normalise the mantissa */
		e = 1;
		while (!(m & 0x400)) {
			m <<= 1;
			e--;
		}
		m &= 0x3ff;
	}
	return bits_f32(sign | (uint32_t)(e + 127 - 15) << 23 | m << 13);
}

/* x >> s rounded to nearest, ties to even (1 <= s <= 31). */
static uint32_t shift_rne(uint32_t x, unsigned s)
{
	uint32_t q = x >> s, rem = x & ((1u << s) - 1), half = 1u << (s - 1);

	if (rem > half || (rem == half && (q & 1)))
		q++;
	return q;
}

uint16_t quant_f32_to_f16(float f)
{
	uint32_t x, ax, sign;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	ax = x & 0x7fffffffu;
	if (ax > 0x7f800000u) /* NaN: quiet, top payload bits kept */
		return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
	if (ax >= 0x477ff000u) /* >= 65520 (65504 + half an ulp): inf */
		return (uint16_t)(sign | 0x7c00);
	if (ax >= 0x38800000u) /* normal: rebias, round 13 bits away */
		return (uint16_t)(sign | shift_rne(ax - 0x38000000u, 13));
	if (ax < 0x33000000u) /* below 2^-25 (or a tie at it): zero */
		return (uint16_t)sign;
	/* subnormal: the value in units of 2^-24, rounded; 0x400 is the
	 * smallest normal, which is the right encoding when it rounds up */
	return (uint16_t)(sign | shift_rne((ax & 0x7fffffu) | 0x800000u,
					   126 - (ax >> 23)));
}

float quant_bf16_to_f32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}

uint16_t quant_f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet */
		return (uint16_t)((x >> 16) | 64);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* ------------------------------------------------------------- decoders */

static float rd_f16(const uint8_t *p)
{
	return quant_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
}

/*
 * Q4_0: { f16 d; u8 qs[16] }: element j (< 16) is the low nibble of qs[j],
 * element j + 16 its high nibble; value (q - 8) * d.
 */
static void deq_q4_0(const uint8_t *b, float *y)
{
	const float d = rd_f16(b);
	int j;

	for (j = 0; j < QK / 2; j++) {
		const int x0 = (b[2 + j] & 0x0f) - 8;
		const int x1 = (b[2 + j] >> 4) - 8;

		y[j] = (float)x0 * d;
		y[j + QK / 2] = (float)x1 * d;
	}
}

/* Q4_1: { f16 d; f16 m; u8 qs[16] }: q * d + m. */
static void deq_q4_1(const uint8_t *b, float *y)
{
	const float d = rd_f16(b), m = rd_f16(b + 2);
	int j;

	for (j = 0; j < QK / 2; j++) {
		y[j] = (float)(b[4 + j] & 0x0f) * d + m;
		y[j + QK / 2] = (float)(b[4 + j] >> 4) * d + m;
	}
}

/* The little-endian u32 at p. */
static uint32_t rd_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * Q5_0: { f16 d; u8 qh[4]; u8 qs[16] }: the fifth bit of element k is bit
 * k of qh read as a little-endian u32; value (q - 16) * d.
 */
static void deq_q5_0(const uint8_t *b, float *y)
{
	const float d = rd_f16(b);
	const uint32_t qh = rd_u32le(b + 2);
	int j;

	for (j = 0; j < QK / 2; j++) {
		const int x0 = (int)((b[6 + j] & 0x0f) |
				     ((qh >> j) & 1) << 4) - 16;
		const int x1 = (int)((b[6 + j] >> 4) |
				     ((qh >> (j + 16)) & 1) << 4) - 16;

		y[j] = (float)x0 * d;
		y[j + QK / 2] = (float)x1 * d;
	}
}

/* Q5_1: { f16 d; f16 m; u8 qh[4]; u8 qs[16] }: q * d + m. */
static void deq_q5_1(const uint8_t *b, float *y)
{
	const float d = rd_f16(b), m = rd_f16(b + 2);
	const uint32_t qh = rd_u32le(b + 4);
	int j;

	for (j = 0; j < QK / 2; j++) {
		const uint32_t x0 = (b[8 + j] & 0x0fu) | ((qh >> j) & 1) << 4;
		const uint32_t x1 = (uint32_t)(b[8 + j] >> 4) |
				    ((qh >> (j + 16)) & 1) << 4;

		y[j] = (float)x0 * d + m;
		y[j + QK / 2] = (float)x1 * d + m;
	}
}

/* Q8_0: { f16 d; i8 qs[32] }: q * d. */
static void deq_q8_0(const uint8_t *b, float *y)
{
	const float d = rd_f16(b);
	int j;

	for (j = 0; j < QK; j++)
		y[j] = (float)(int8_t)b[2 + j] * d;
}

/*
 * The 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes
 * of Q4_K/Q5_K: bytes 0-3 hold scales 0-3 in their low 6 bits, bytes 4-7
 * mins 0-3; scales and mins 4-7 have their low 4 bits in bytes 8-11 (scale
 * low nibble, min high nibble) and their top 2 bits in the top 2 bits of
 * bytes 0-3 (scales) and 4-7 (mins).
 */
static void k_scale_min(int j, const uint8_t *q, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 0x0f) | (q[j - 4] >> 6) << 4;
		*m = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
	}
}

/*
 * Q4_K: { f16 d; f16 dmin; u8 scales[12]; u8 qs[128] }, 8 sub-blocks of
 * 32: in each 64-element chunk c, byte l of qs[32c..] holds element
 * 64c + l (low nibble) and 64c + 32 + l (high nibble). Value
 * (d * sc) * q - (dmin * m).
 */
static void deq_q4_k(const uint8_t *b, float *y)
{
	const float d = rd_f16(b), dmin = rd_f16(b + 2);
	const uint8_t *scales = b + 4, *q = b + 16;
	int c, l, sc, m;

	for (c = 0; c < 4; c++, q += 32, y += 64) {
		float d1, m1, d2, m2;

		k_scale_min(2 * c, scales, &sc, &m);
		d1 = d * (float)sc;
		m1 = dmin * (float)m;
		k_scale_min(2 * c + 1, scales, &sc, &m);
		d2 = d * (float)sc;
		m2 = dmin * (float)m;
		for (l = 0; l < 32; l++) {
			y[l] = d1 * (float)(q[l] & 0x0f) - m1;
			y[l + 32] = d2 * (float)(q[l] >> 4) - m2;
		}
	}
}

/*
 * Q5_K: { f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128] }: as Q4_K,
 * plus the fifth bit of element 32j + l (sub-block j) in bit j of qh[l].
 */
static void deq_q5_k(const uint8_t *b, float *y)
{
	const float d = rd_f16(b), dmin = rd_f16(b + 2);
	const uint8_t *scales = b + 4, *qh = b + 16, *q = b + 48;
	int c, l, sc, m;

	for (c = 0; c < 4; c++, q += 32, y += 64) {
		const unsigned lo = 2 * (unsigned)c, hi = lo + 1;
		float d1, m1, d2, m2;

		k_scale_min(2 * c, scales, &sc, &m);
		d1 = d * (float)sc;
		m1 = dmin * (float)m;
		k_scale_min(2 * c + 1, scales, &sc, &m);
		d2 = d * (float)sc;
		m2 = dmin * (float)m;
		for (l = 0; l < 32; l++) {
			const int q0 = (q[l] & 0x0f) | ((qh[l] >> lo) & 1) << 4;
			const int q1 = (q[l] >> 4) | ((qh[l] >> hi) & 1) << 4;

			y[l] = d1 * (float)q0 - m1;
			y[l + 32] = d2 * (float)q1 - m2;
		}
	}
}

/*
 * Q6_K: { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d }, 16 sub-blocks of
 * 16. In each half h (128 elements), for l < 32: element 32k + l
 * (k = 0..3) takes its low 4 bits from ql[64h + l] (k = 0: low nibble,
 * k = 2: high) or ql[64h + 32 + l] (k = 1: low, k = 3: high) and its top 2
 * bits from bits 2k..2k+1 of qh[32h + l]. Value (d * scale) * (q - 32),
 * scale = scales[8h + 2k + l / 16].
 */
static void deq_q6_k(const uint8_t *b, float *y)
{
	const float d = rd_f16(b + 208);
	const uint8_t *ql = b, *qh = b + 128;
	const int8_t *sc = (const int8_t *)(b + 192);
	int h, l;

	for (h = 0; h < 2; h++, ql += 64, qh += 32, sc += 8, y += 128) {
		for (l = 0; l < 32; l++) {
			const int is = l / 16;
			const int q1 = ((ql[l] & 0x0f) | (qh[l] & 3) << 4) - 32;
			const int q2 = ((ql[l + 32] & 0x0f) |
					((qh[l] >> 2) & 3) << 4) - 32;
			const int q3 = ((ql[l] >> 4) |
					((qh[l] >> 4) & 3) << 4) - 32;
			const int q4 = ((ql[l + 32] >> 4) |
					((qh[l] >> 6) & 3) << 4) - 32;

			y[l] = d * (float)sc[is] * (float)q1;
			y[l + 32] = d * (float)sc[is + 2] * (float)q2;
			y[l + 64] = d * (float)sc[is + 4] * (float)q3;
			y[l + 96] = d * (float)sc[is + 6] * (float)q4;
		}
	}
}

int quant_dequant(uint32_t type, const void *src, float *dst, uint64_t n)
{
	const uint8_t *p = src;
	void (*blk)(const uint8_t *, float *) = NULL;
	int t = find(type);
	uint64_t i, nb, bsz;

	if (t < 0 || n % types[t].blck)
		return CAIRN_INVALID;
	switch (type) {
	case GGML_TYPE_F32:
		memcpy(dst, src, n * 4);
		return CAIRN_OK;
	case GGML_TYPE_F16:
		for (i = 0; i < n; i++)
			dst[i] = rd_f16(p + 2 * i);
		return CAIRN_OK;
	case GGML_TYPE_BF16:
		for (i = 0; i < n; i++)
			dst[i] = quant_bf16_to_f32(
				(uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
		return CAIRN_OK;
	case GGML_TYPE_Q4_0: blk = deq_q4_0; break;
	case GGML_TYPE_Q4_1: blk = deq_q4_1; break;
	case GGML_TYPE_Q5_0: blk = deq_q5_0; break;
	case GGML_TYPE_Q5_1: blk = deq_q5_1; break;
	case GGML_TYPE_Q8_0: blk = deq_q8_0; break;
	case GGML_TYPE_Q4_K: blk = deq_q4_k; break;
	case GGML_TYPE_Q5_K: blk = deq_q5_k; break;
	case GGML_TYPE_Q6_K: blk = deq_q6_k; break;
	default:
		return CAIRN_INVALID;
	}
	nb = n / types[t].blck;
	bsz = types[t].bytes;
	for (i = 0; i < nb; i++)
		blk(p + i * bsz, dst + i * types[t].blck);
	return CAIRN_OK;
}
