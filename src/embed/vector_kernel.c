/*
 * vector_kernel.c -- the arithmetic of the vector index: dot products of a
 * query with f16 rows (AVX2/FMA/F16C or portable C), the int8 copy of a
 * matrix and its two-pass exact top-k, and top-k over a score array.
 *
 * Layer: below vector.c; on vector.h (struct vector_matrix), quant.h (the
 * one f16 codec) and internal.h. No SQLite, no store, no embedder: pure
 * functions of the arrays they are given, which is what lets the unit
 * tests and bench/vector_bench.c drive them directly.
 *
 * Holds: the kernels and their run-time dispatch, vector_topk,
 * vector_matrix_build / _release / _topk.
 *
 * Why an int8 copy as well as the f16 rows: brute force over 77 MB
 * (100k x 384 f16) is bound by memory bandwidth (~13 ms measured here), so
 * a first pass reads the 38 MB int8 copy against the query quantised to
 * int8 (integer dot products, AVX2 maddubs) and the few rows that could
 * still be in the top k are rescored from f16 (vector_matrix_topk: a
 * proven bound covering both quantisations, so the result is the exact f16
 * one).
 *
 * Kernel choice happens at run time (__builtin_cpu_supports): AVX2 + FMA +
 * F16C functions compiled with a target attribute, the portable C loop
 * otherwise; nothing is built for the build host's CPU. Scans run on the
 * calling thread: split over two threads they were no faster on a quiet
 * machine (fastest of 100 queries, 100k x 384: 2.18 ms against 2.15 ms;
 * 400k: 9.08 against 8.75; one thread already streams at memory speed)
 * and twice as slow at p50 on a busy one (6.9 against 3.1 ms), besides
 * a thread start per query.
 *
 * Invariants: every kernel gives the same scores on every CPU up to float
 * rounding (the portable loop and the AVX2 one are tested against a
 * double-precision reference), and vector_matrix_topk returns exactly the
 * ids and order of a full f16 scan.
 *
 * Must never: return a row the keep mask excludes, return an order other
 * than an exact f16 scan's (ties by lower index), or allocate inside a
 * dot-product kernel (the matrix calls allocate their scratch first).
 */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "quant.h"
#include "vector.h"

/* ------------------------------------------------------------- kernels */

void vector_dots_portable(const unsigned short *rows, size_t n, int dim,
			  const float *q, float *out)
{
	size_t i, j, d = (size_t)dim;

	for (i = 0; i < n; i++) {
		const unsigned short *r = rows + i * d;
		float a0 = 0, a1 = 0, a2 = 0, a3 = 0;

		for (j = 0; j + 4 <= d; j += 4) {
			a0 += quant_f16_to_f32(r[j]) * q[j];
			a1 += quant_f16_to_f32(r[j + 1]) * q[j + 1];
			a2 += quant_f16_to_f32(r[j + 2]) * q[j + 2];
			a3 += quant_f16_to_f32(r[j + 3]) * q[j + 3];
		}
		for (; j < d; j++)
			a0 += quant_f16_to_f32(r[j]) * q[j];
		out[i] = (a0 + a1) + (a2 + a3);
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define VEC_HAVE_AVX2 1

__attribute__((target("avx2,fma,f16c"))) static float
hsum256(__m256 v)
{
	__m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);

	lo = _mm_add_ps(lo, hi);
	lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
	lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 0x55));
	return _mm_cvtss_f32(lo);
}

__attribute__((target("avx2,fma,f16c"))) static void
dots_avx2(const unsigned short *rows, size_t n, int dim, const float *q,
	  float *out)
{
	size_t i, j, d = (size_t)dim, d32 = d & ~(size_t)31,
		     d8 = d & ~(size_t)7;

	for (i = 0; i < n; i++) {
		const unsigned short *r = rows + i * d;
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(),
		       a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
		float s;

		for (j = 0; j < d32; j += 32) {
			__m256 x0 = _mm256_cvtph_ps(
				_mm_loadu_si128((const __m128i *)(r + j)));
			__m256 x1 = _mm256_cvtph_ps(
				_mm_loadu_si128((const __m128i *)(r + j + 8)));
			__m256 x2 = _mm256_cvtph_ps(
				_mm_loadu_si128((const __m128i *)(r + j + 16)));
			__m256 x3 = _mm256_cvtph_ps(
				_mm_loadu_si128((const __m128i *)(r + j + 24)));

			a0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(q + j), a0);
			a1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(q + j + 8), a1);
			a2 = _mm256_fmadd_ps(x2, _mm256_loadu_ps(q + j + 16), a2);
			a3 = _mm256_fmadd_ps(x3, _mm256_loadu_ps(q + j + 24), a3);
		}
		for (; j < d8; j += 8) {
			__m256 x = _mm256_cvtph_ps(
				_mm_loadu_si128((const __m128i *)(r + j)));

			a0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(q + j), a0);
		}
		s = hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1),
					  _mm256_add_ps(a2, a3)));
		for (; j < d; j++)
			s += quant_f16_to_f32(r[j]) * q[j];
		out[i] = s;
	}
}

__attribute__((target("avx2,fma,f16c"))) static void
dots_i8_avx2(const signed char *rows, const float *scale, size_t n, int dim,
	     const float *q, float *out)
{
	size_t i, j, d = (size_t)dim, d16 = d & ~(size_t)15;

	for (i = 0; i < n; i++) {
		const signed char *r = rows + i * d;
		__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
		float s;

		for (j = 0; j < d16; j += 16) {
			__m128i b = _mm_loadu_si128((const __m128i *)(r + j));
			__m256 x0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
			__m256 x1 = _mm256_cvtepi32_ps(
				_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)));

			a0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(q + j), a0);
			a1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(q + j + 8), a1);
		}
		s = hsum256(_mm256_add_ps(a0, a1));
		for (; j < d; j++)
			s += (float)r[j] * q[j];
		out[i] = s * scale[i];
	}
}

/*
 * out[i] = (int8 row i . int8 query) as an exact integer, over 32 bytes a
 * step: maddubs multiplies |q| (unsigned) by row * sign(q) (signed) and
 * adds pairs into 16 bits (at most 2 * 127 * 127 = 32258: no saturation,
 * as both sides lie in [-127, 127]); madd widens the pairs to 32 bits.
 */
__attribute__((target("avx2,fma,f16c"))) static void
dots_i8i8_avx2(const signed char *rows, size_t n, int dim,
	       const signed char *q, int32_t *out)
{
	size_t i, j, d = (size_t)dim, d32 = d & ~(size_t)31;
	const __m256i ones = _mm256_set1_epi16(1);

	for (i = 0; i < n; i++) {
		const signed char *r = rows + i * d;
		__m256i acc0 = _mm256_setzero_si256(), acc1 = acc0;
		__m128i s4;
		int32_t s;

		for (j = 0; j + 64 <= d32; j += 64) {
			__m256i q0 = _mm256_loadu_si256((const __m256i *)(q + j));
			__m256i q1 = _mm256_loadu_si256(
				(const __m256i *)(q + j + 32));
			__m256i r0 = _mm256_loadu_si256((const __m256i *)(r + j));
			__m256i r1 = _mm256_loadu_si256(
				(const __m256i *)(r + j + 32));

			acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(
				_mm256_maddubs_epi16(_mm256_abs_epi8(q0),
						     _mm256_sign_epi8(r0, q0)),
				ones));
			acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(
				_mm256_maddubs_epi16(_mm256_abs_epi8(q1),
						     _mm256_sign_epi8(r1, q1)),
				ones));
		}
		for (; j < d32; j += 32) {
			__m256i q0 = _mm256_loadu_si256((const __m256i *)(q + j));
			__m256i r0 = _mm256_loadu_si256((const __m256i *)(r + j));

			acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(
				_mm256_maddubs_epi16(_mm256_abs_epi8(q0),
						     _mm256_sign_epi8(r0, q0)),
				ones));
		}
		acc0 = _mm256_add_epi32(acc0, acc1);
		s4 = _mm_add_epi32(_mm256_castsi256_si128(acc0),
				   _mm256_extracti128_si256(acc0, 1));
		s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
		s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
		s = _mm_cvtsi128_si32(s4);
		for (; j < d; j++)
			s += (int32_t)r[j] * q[j];
		out[i] = s;
	}
}

/*
 * One row of vector_matrix_build: the same values as the portable loop
 * there (F16C widening is exact, the scaling the same IEEE products, the
 * rounding the same add-then-truncate), eight at a time.
 */
__attribute__((target("avx2,fma,f16c"))) static void
build_row_avx2(const unsigned short *r, size_t d, float *x, signed char *q,
	       float *scale, float *l1)
{
	const __m256 sign = _mm256_set1_ps(-0.0f), half = _mm256_set1_ps(0.5f);
	__m256 mv = _mm256_setzero_ps(), inv8;
	size_t j, d8 = d & ~(size_t)7;
	float mx = 0, inv, lane[8];
	int32_t c8[8], sum = 0, k;

	for (j = 0; j < d8; j += 8) {
		__m256 v = _mm256_cvtph_ps(
			_mm_loadu_si128((const __m128i *)(r + j)));

		_mm256_storeu_ps(x + j, v);
		mv = _mm256_max_ps(mv, _mm256_andnot_ps(sign, v));
	}
	_mm256_storeu_ps(lane, mv);
	for (k = 0; k < 8; k++)
		if (lane[k] > mx)
			mx = lane[k];
	for (; j < d; j++) {
		x[j] = quant_f16_to_f32(r[j]);
		if (fabsf(x[j]) > mx)
			mx = fabsf(x[j]);
	}
	*scale = mx / 127.0f;
	inv = mx > 0 ? 127.0f / mx : 0;
	inv8 = _mm256_set1_ps(inv);
	for (j = 0; j < d8; j += 8) {
		__m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + j), inv8);
		__m256 h = _mm256_or_ps(_mm256_and_ps(y, sign), half);

		_mm256_storeu_si256((__m256i *)(void *)c8,
				    _mm256_cvttps_epi32(_mm256_add_ps(y, h)));
		for (k = 0; k < 8; k++) {
			q[j + (size_t)k] = (signed char)c8[k];
			sum += c8[k] < 0 ? -c8[k] : c8[k];
		}
	}
	for (; j < d; j++) {
		float y = x[j] * inv;
		signed char c = (signed char)(y >= 0 ? y + 0.5f : y - 0.5f);

		q[j] = c;
		sum += c < 0 ? -c : c;
	}
	*l1 = (float)sum;
}

/* libgcc fills the CPU model in a constructor before main(), so no
 * __builtin_cpu_init() here (it would run on every call) */
static int cpu_probe(void)
{
	unsigned a, b, c, d;

	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
		return 0;
	/* F16C: CPUID leaf 1, ECX bit 29 (clang has no "f16c" feature name) */
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	return (c >> 29) & 1u;
}

/* The probe's answer, kept: CPUID traps to the hypervisor in a VM (tens
 * of microseconds measured here), and the rescoring pass asks once per
 * candidate row. Racing first calls store the same value. */
static int cpu_has_avx2(void)
{
	static int known = -1;
	int v = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (v < 0) {
		v = cpu_probe();
		__atomic_store_n(&known, v, __ATOMIC_RELAXED);
	}
	return v;
}
#else
#define VEC_HAVE_AVX2 0
static int cpu_has_avx2(void)
{
	return 0;
}
#endif

int vector_simd_active(void)
{
	return cpu_has_avx2();
}

static void dots_one(const unsigned short *rows, size_t n, int dim,
		     const float *q, float *out)
{
#if VEC_HAVE_AVX2
	if (cpu_has_avx2()) {
		dots_avx2(rows, n, dim, q, out);
		return;
	}
#endif
	vector_dots_portable(rows, n, dim, q, out);
}

static void dots_i8_portable(const signed char *rows, const float *scale,
			     size_t n, int dim, const float *q, float *out)
{
	size_t i, j, d = (size_t)dim;

	for (i = 0; i < n; i++) {
		const signed char *r = rows + i * d;
		float a0 = 0, a1 = 0, a2 = 0, a3 = 0;

		for (j = 0; j + 4 <= d; j += 4) {
			a0 += (float)r[j] * q[j];
			a1 += (float)r[j + 1] * q[j + 1];
			a2 += (float)r[j + 2] * q[j + 2];
			a3 += (float)r[j + 3] * q[j + 3];
		}
		for (; j < d; j++)
			a0 += (float)r[j] * q[j];
		out[i] = ((a0 + a1) + (a2 + a3)) * scale[i];
	}
}

static void dots_i8i8_portable(const signed char *rows, size_t n, int dim,
			       const signed char *q, int32_t *out)
{
	size_t i, j, d = (size_t)dim;

	for (i = 0; i < n; i++) {
		const signed char *r = rows + i * d;
		int32_t s = 0;

		for (j = 0; j < d; j++)
			s += (int32_t)r[j] * q[j];
		out[i] = s;
	}
}

static void dots_i8i8_one(const signed char *rows, size_t n, int dim,
			  const signed char *q, int32_t *out)
{
#if VEC_HAVE_AVX2
	if (cpu_has_avx2()) {
		dots_i8i8_avx2(rows, n, dim, q, out);
		return;
	}
#endif
	dots_i8i8_portable(rows, n, dim, q, out);
}

static void dots_i8_one(const signed char *rows, const float *scale,
			size_t n, int dim, const float *q, float *out)
{
#if VEC_HAVE_AVX2
	if (cpu_has_avx2()) {
		dots_i8_avx2(rows, scale, n, dim, q, out);
		return;
	}
#endif
	dots_i8_portable(rows, scale, n, dim, q, out);
}

/* rows [from, from + n) of either matrix */
struct dots_job {
	const unsigned short *h;   /* f16 rows, or NULL */
	const signed char *q8;     /* int8 rows (with scale), or NULL */
	const float *scale;
	size_t from, n;
	int dim;
	const float *q;
	float *out;
	const signed char *qi;     /* int8 query: q8 rows . qi into iout */
	int32_t *iout;
};

static void dots_run(const struct dots_job *j)
{
	size_t off = j->from * (size_t)j->dim;

	if (j->qi)
		dots_i8i8_one(j->q8 + off, j->n, j->dim, j->qi,
			      j->iout + j->from);
	else if (j->h)
		dots_one(j->h + off, j->n, j->dim, j->q, j->out + j->from);
	else
		dots_i8_one(j->q8 + off, j->scale + j->from, j->n, j->dim,
			    j->q, j->out + j->from);
}

/* One scan, on the calling thread (the header says why not two). */
static void dots_split(struct dots_job *all)
{
	dots_run(all);
}

void vector_dots(const unsigned short *rows, size_t n, int dim,
		 const float *q, float *out)
{
	struct dots_job j;

	memset(&j, 0, sizeof(j));
	j.h = rows;
	j.n = n;
	j.dim = dim;
	j.q = q;
	j.out = out;
	dots_split(&j);
}

void vector_dots_i8(const struct vector_matrix *m, const float *q,
		    float *out)
{
	struct dots_job j;

	memset(&j, 0, sizeof(j));
	j.q8 = m->q8;
	j.scale = m->scale;
	j.n = m->n;
	j.dim = m->dim;
	j.q = q;
	j.out = out;
	dots_split(&j);
}

/* ---------------------------------------------------------------- top-k */

/* min-heap of (score, index): the root is the worst kept */
static int worse(const float *s, size_t a, size_t b)
{
	return s[a] < s[b] || (s[a] == s[b] && a > b);
}

static void sift_down(const float *s, size_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < n && worse(s, h[l], h[m]))
			m = l;
		if (r < n && worse(s, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

size_t vector_topk(const float *scores, size_t n, size_t k,
		   const unsigned char *keep, size_t *idx)
{
	size_t i, m = 0, j;

	if (k > VECTOR_MAX_K)
		k = VECTOR_MAX_K;
	if (k == 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (keep && !keep[i])
			continue;
		if (m < k) {
			/* sift up */
			j = m++;
			idx[j] = i;
			while (j > 0 && worse(scores, idx[j], idx[(j - 1) / 2])) {
				size_t p = (j - 1) / 2, t = idx[p];

				idx[p] = idx[j];
				idx[j] = t;
				j = p;
			}
		} else if (worse(scores, idx[0], i)) {
			idx[0] = i;
			sift_down(scores, idx, m, 0);
		}
	}
	/* heap sort: repeatedly move the worst to the end -> best first */
	for (j = m; j > 1; j--) {
		size_t t = idx[0];

		idx[0] = idx[j - 1];
		idx[j - 1] = t;
		sift_down(scores, idx, j - 1, 0);
	}
	return m;
}

/* --------------------------------------------------------------- matrix */

/*
 * Ask for transparent huge pages under a large fresh buffer (advice only):
 * writing 38 MB of new int8 rows otherwise takes one page fault per 4 KiB,
 * and in a VM each fault costs microseconds (most of the build measured
 * here).
 */
static void huge_hint(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	uintptr_t lo = ((uintptr_t)p + ((uintptr_t)1 << 21) - 1) &
		       ~(((uintptr_t)1 << 21) - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(((uintptr_t)1 << 21) - 1);

	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

int vector_matrix_build(struct vector_matrix *m)
{
	size_t i, j, d = (size_t)m->dim;

	m->q8 = cairn_malloc(m->n * d > 0 ? m->n * d : 1);
	m->scale = util_calloc(m->n ? m->n : 1, sizeof(*m->scale));
	m->l1 = util_calloc(m->n ? m->n : 1, sizeof(*m->l1));
	m->iscratch = util_calloc(m->n ? m->n : 1, sizeof(*m->iscratch));
	m->scratch = util_calloc(2 * m->n > d ? 2 * m->n : d + 1,
				 sizeof(*m->scratch));
	if (!m->q8 || !m->scale || !m->l1 || !m->iscratch || !m->scratch) {
		vector_matrix_release(m);
		return CAIRN_NOMEM;
	}
	huge_hint(m->q8, m->n * d);
	/* the first n floats of scratch hold one row as f32 */
	for (i = 0; i < m->n; i++) {
		const unsigned short *r = m->h + i * d;
		float *x = m->scratch, mx = 0, inv;

#if VEC_HAVE_AVX2
		if (cpu_has_avx2()) {
			build_row_avx2(r, d, x, m->q8 + i * d, &m->scale[i],
				       &m->l1[i]);
			continue;
		}
#endif
		for (j = 0; j < d; j++) {
			x[j] = quant_f16_to_f32(r[j]);
			if (fabsf(x[j]) > mx)
				mx = fabsf(x[j]);
		}
		m->scale[i] = mx / 127.0f;
		inv = mx > 0 ? 127.0f / mx : 0;
		/* round half away from zero: still within scale / 2 */
		for (j = 0; j < d; j++) {
			float y = x[j] * inv;
			signed char c = (signed char)(y >= 0 ? y + 0.5f
							      : y - 0.5f);

			m->q8[i * d + j] = c;
			m->l1[i] += (float)(c < 0 ? -c : c);
		}
	}
	return CAIRN_OK;
}

void vector_matrix_release(struct vector_matrix *m)
{
	cairn_free(m->q8);
	cairn_free(m->scale);
	cairn_free(m->l1);
	cairn_free(m->scratch);
	cairn_free(m->iscratch);
	m->q8 = NULL;
	m->scale = NULL;
	m->l1 = NULL;
	m->scratch = NULL;
	m->iscratch = NULL;
}

/*
 * Pass 1 reads the int8 rows against the query quantised the same way
 * (q = sq * qi + eq, |eq_j| <= e, e measured): a[i] = s_i sq (q8_i . qi),
 * an exact integer dot scaled once. With h_i = s_i q8_i + er_i,
 * |er_ij| <= s_i / 2:
 *   h_i . q - a[i] = s_i (q8_i . eq) + er_i . q,
 * so |h_i . q - a[i]| <= s_i (l1_i e + |q|_1 / 2), l1_i = sum |q8_ij|,
 * plus float rounding: pass 2's f32 sum and pass 1's scaling (<= 8 dim
 * 2^-24 127 s_i |q|_1 together, generously) and 1e-6 for the bound's own
 * arithmetic. The k-th best lower bound T is a floor under the k-th best
 * exact score, so every row of the true top k has an upper bound >= T:
 * only those rows are scored exactly (pass 2, f16, the same per-row kernel
 * as a full scan) and ranked. Ties keep the lower index.
 */
size_t vector_matrix_topk(const struct vector_matrix *m, const float *q,
			  const unsigned char *keep, size_t k, size_t *idx,
			  float *cos)
{
	float *hi = NULL, *lo = NULL, *cs = NULL, t, sq, inv, qmax = 0;
	size_t *cand = NULL, *tmp = NULL, i, got = 0, nc = 0, kk;
	signed char qi[VECTOR_MAX_DIM];
	double l1 = 0, e = 0, rel;
	struct dots_job job;
	int j;

	if (k > VECTOR_MAX_K)
		k = VECTOR_MAX_K;
	if (k == 0 || m->n == 0)
		return 0;
	if (!m->q8 || m->dim > VECTOR_MAX_DIM) {
		/* no int8 copy (yet): one full f16 scan */
		float *a = cairn_malloc(m->n * sizeof(*a));

		tmp = util_calloc(k, sizeof(*tmp));
		if (!a || !tmp) {
			got = (size_t)-1;
		} else {
			vector_dots(m->h, m->n, m->dim, q, a);
			got = vector_topk(a, m->n, k, keep, tmp);
			for (i = 0; i < got; i++) {
				idx[i] = tmp[i];
				cos[i] = a[tmp[i]];
			}
		}
		cairn_free(a);
		cairn_free(tmp);
		return got;
	}
	if (!m->scratch || !m->iscratch || !m->l1)
		return (size_t)-1;
	hi = m->scratch;
	lo = m->scratch + m->n;
	tmp = util_calloc(k, sizeof(*tmp));
	if (!tmp)
		goto oom;
	/* the query in int8, rounded as the rows were; e its largest error */
	for (j = 0; j < m->dim; j++) {
		l1 += fabs((double)q[j]);
		if (fabsf(q[j]) > qmax)
			qmax = fabsf(q[j]);
	}
	sq = qmax / 127.0f;
	inv = qmax > 0 ? 127.0f / qmax : 0;
	for (j = 0; j < m->dim; j++) {
		float y = q[j] * inv;
		double err;

		qi[j] = (signed char)(y >= 0 ? y + 0.5f : y - 0.5f);
		err = fabs((double)q[j] - (double)sq * qi[j]);
		if (err > e)
			e = err;
	}
	memset(&job, 0, sizeof(job));
	job.q8 = m->q8;
	job.n = m->n;
	job.dim = m->dim;
	job.qi = qi;
	job.iout = m->iscratch;
	dots_split(&job);
	rel = l1 * (0.5 + 8.0 * m->dim * 127.0 / 16777216.0);
	for (i = 0; i < m->n; i++) {
		float a = (float)m->iscratch[i] * (m->scale[i] * sq);
		float c = (float)(m->scale[i] * ((double)m->l1[i] * e + rel)) +
			  1e-6f;

		hi[i] = a + c;
		lo[i] = a - c;
	}
	kk = vector_topk(lo, m->n, k, keep, tmp);
	if (kk == 0)
		goto out;
	t = kk < k ? -INFINITY : lo[tmp[kk - 1]];
	for (i = 0; i < m->n; i++)
		if ((!keep || keep[i]) && hi[i] >= t)
			nc++;
	cand = cairn_malloc(nc * sizeof(*cand));
	cs = cairn_malloc(nc * sizeof(*cs));
	if (!cand || !cs)
		goto oom;
	nc = 0;
	for (i = 0; i < m->n; i++)
		if ((!keep || keep[i]) && hi[i] >= t) {
			cand[nc] = i;
			dots_one(m->h + i * (size_t)m->dim, 1, m->dim, q, cs + nc);
			nc++;
		}
	got = vector_topk(cs, nc, k, NULL, tmp);
	for (i = 0; i < got; i++) {
		idx[i] = cand[tmp[i]];
		cos[i] = cs[tmp[i]];
	}
out:
	cairn_free(cs);
	cairn_free(cand);
	cairn_free(tmp);
	return got;
oom:
	got = (size_t)-1;
	goto out;
}
