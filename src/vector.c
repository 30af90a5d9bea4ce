/*
 * vector.c -- the vector index: per-record f16 embeddings in SQLite (schema
 * v4), the store's embedding settings, an in-memory matrix cached per db
 * handle, exact top-k by dot product, and `cairn reindex`'s engine.
 *
 * Layer: on embed.h and store.h (vector.h says what is stored where).
 *
 * Holds: the f16 conversion, the dot-product kernels and top-k, the
 * per-handle cache (struct vec_cache behind db->vec) and its on-disk
 * sidecar (STORE.db-vectors, mapped by the next process while it matches
 * the store), the embed.* settings keys, the identity check, reindex
 * batches.
 *
 * Why f16 is what is stored, and not int8 + scale: f16 keeps cosines to
 * ~1e-3 of the f32 ones with no per-vector scale, halves the bytes of f32
 * (100k x 384 = 77 MB), and AVX2 machines convert it in one instruction
 * (F16C). Stored int8 would put quantisation error into the cosine floor
 * and the RRF order. In memory an int8 copy (one scale per row) is kept
 * as well, only to make the scan cheaper: brute force over 77 MB is bound
 * by memory bandwidth (~13 ms measured here), so a first pass reads the
 * 38 MB int8 copy against the query quantised to int8 (integer dot
 * products, AVX2 maddubs) and the few rows that could still be in the top
 * k are rescored from f16 (vector_matrix_topk: a proven bound covering
 * both quantisations, so the result is the exact f16 one).
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
 * Must never: compare vectors of two identities, return a record whose
 * kind or status the filter excludes, or keep a vector of a changed text
 * (the schema's triggers delete it; the cache reloads when rows change),
 * or map a sidecar whose header does not match the store as it is now.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <errno.h>
#include <signal.h>
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "store.h"
#include "vector.h"

#define VEC_IDENTITY_MAX 1200       /* bytes of an identity string */
#define VEC_TEXT_MAX (16 * 1024)    /* bytes of a record's text embedded */
#define VEC_DEFAULT_BATCH 32        /* records per reindex transaction */
#define VEC_MAX_BATCH 1024

static const char *const kinds[] = { "decision", "adr", "fact", "rule",
				     "procedure", "capability", "finding",
				     "history", "event", "note" };
static const char *const statuses[] = { "candidate", "accepted",
					"unverified", "stale", "superseded",
					"historical", "false", "retired",
					"rejected" };

/* ----------------------------------------------------------------- f16 */

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

unsigned short vector_f16(float x)
{
	uint32_t u = f2u(x), sign = (u >> 16) & 0x8000, h, rem;

	u &= 0x7fffffff;
	if (u >= 0x7f800000) /* inf, nan */
		return (unsigned short)(sign | 0x7c00 |
					(u > 0x7f800000 ? 0x200 : 0));
	if (u >= 0x477ff000) /* rounds past 65504 */
		return (unsigned short)(sign | 0x7c00);
	if (u < 0x38800000) /* below 2^-14: a half subnormal or zero */
		return (unsigned short)(sign |
					(uint32_t)lrintf(u2f(u) * 16777216.0f));
	h = ((((u >> 23) - 127 + 15) << 10) | ((u & 0x7fffff) >> 13));
	rem = u & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (unsigned short)(sign | h);
}

float vector_f32(unsigned short h)
{
	uint32_t o = (uint32_t)(h & 0x7fff) << 13;

	if ((h & 0x7c00) == 0x7c00)
		o |= 0x7f800000;
	return u2f(((uint32_t)(h & 0x8000) << 16) | f2u(u2f(o) * 0x1p112f));
}

/* ------------------------------------------------------------- kernels */

void vector_dots_portable(const unsigned short *rows, size_t n, int dim,
			  const float *q, float *out)
{
	size_t i, j, d = (size_t)dim;

	for (i = 0; i < n; i++) {
		const unsigned short *r = rows + i * d;
		float a0 = 0, a1 = 0, a2 = 0, a3 = 0;

		for (j = 0; j + 4 <= d; j += 4) {
			a0 += vector_f32(r[j]) * q[j];
			a1 += vector_f32(r[j + 1]) * q[j + 1];
			a2 += vector_f32(r[j + 2]) * q[j + 2];
			a3 += vector_f32(r[j + 3]) * q[j + 3];
		}
		for (; j < d; j++)
			a0 += vector_f32(r[j]) * q[j];
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
			s += vector_f32(r[j]) * q[j];
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
		x[j] = vector_f32(r[j]);
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
			x[j] = vector_f32(r[j]);
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

/* ---------------------------------------------------------------- cache */

struct vec_schema {
	int loaded;
	long long generation;     /* meta 'vector.generation' at load */
	long long labels;         /* meta 'vector.labels' at load/refresh */
	char identity[VEC_IDENTITY_MAX];
	size_t n;
	int dim;
	unsigned short *mat;      /* n * dim f16 */
	struct vector_matrix vm;  /* mat with its int8 copy */
	long long *rid;
	uint32_t *idoff;          /* n: offsets of the ids in ids */
	char *ids;                /* the ids, each NUL-terminated */
	size_t idbytes;
	unsigned char *kind, *status; /* indexes into kinds[] / statuses[] */
	unsigned char *keep;      /* n: the current search's filter */
	int searches;             /* since the load (int8 copy from the 2nd) */
	void *map;                /* the mapped sidecar holding mat, rid, idoff,
				     ids, kind and status; NULL: all owned */
	size_t map_len;
};

struct vec_cache {
	struct embedder *emb;
	int emb_tried;
	int emb_rc;
	char emb_err[512];
	struct vec_schema s[2];
};

static void schema_clear(struct vec_schema *s)
{
	vector_matrix_release(&s->vm);
	if (s->map) {
		munmap(s->map, s->map_len);
	} else {
		cairn_free(s->mat);
		cairn_free(s->rid);
		cairn_free(s->idoff);
		cairn_free(s->ids);
		cairn_free(s->kind);
		cairn_free(s->status);
	}
	cairn_free(s->keep);
	memset(s, 0, sizeof(*s));
}

static void cache_free(void *p)
{
	struct vec_cache *c = p;
	int i;

	if (!c)
		return;
	embed_close(c->emb);
	for (i = 0; i < 2; i++)
		schema_clear(&c->s[i]);
	cairn_free(c);
}

static struct vec_cache *cache_of(struct cairn_db *db)
{
	if (!db->vec) {
		db->vec = util_calloc(1, sizeof(struct vec_cache));
		if (db->vec)
			db->vec_free = cache_free;
	}
	return db->vec;
}

static int index_of(const char *const *tab, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		if (strcmp(tab[i], s) == 0)
			return (int)i;
	return -1;
}

/* ----------------------------------------------------------------- meta */

static int meta_get(struct cairn_db *db, const char *schema, const char *k,
		    char *buf, size_t size)
{
	int found;

	return store_meta_get(db, schema, k, buf, size, &found);
}

static int meta_set(struct cairn_db *db, const char *schema, const char *k,
		    const char *v)
{
	return store_meta_set(db, schema, k, v, "writing the vector settings");
}

static int exec_sql(struct cairn_db *db, const char *sql, const char *what)
{
	int src = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);

	return src == SQLITE_OK ? CAIRN_OK : store_sql_error(db, src, what);
}

static int bump_generation(struct cairn_db *db, const char *schema)
{
	char sql[200];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO %s.meta (k, v) VALUES ('vector.generation', "
		 "'1') ON CONFLICT (k) DO UPDATE SET v = CAST(v AS INTEGER) "
		 "+ 1; INSERT OR IGNORE INTO %s.meta (k, v) VALUES "
		 "('vector.labels', '0')",
		 schema, schema);
	return exec_sql(db, sql, "writing vectors");
}

static int count_sql(struct cairn_db *db, const char *sql, long long *out)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

	if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		src = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return src == SQLITE_DONE ? CAIRN_OK
				  : store_sql_error(db, src, "counting vectors");
}

static int n_schemas(const struct cairn_db *db)
{
	return db->has_global ? 2 : 1;
}

static const char *schema_name(int i)
{
	return i == 0 ? "main" : "global";
}

/* ------------------------------------------------------------- settings */

static const struct {
	const char *key;
	const char *env;
} setting_names[] = {
	{ "embed.provider", "CAIRN_EMBED_PROVIDER" },
	{ "embed.model", "CAIRN_EMBED_MODEL" },
	{ "embed.url", "CAIRN_EMBED_URL" },
	{ "embed.api_key_env", "CAIRN_EMBED_API_KEY_ENV" },
	{ "embed.query_instruction", "CAIRN_EMBED_QUERY_INSTRUCTION" },
	{ "embed.passage_instruction", "CAIRN_EMBED_PASSAGE_INSTRUCTION" },
	{ "embed.pooling", "CAIRN_EMBED_POOLING" },
	{ "embed.threads", "CAIRN_EMBED_THREADS" },
};
#define SET_TIMEOUT_KEY "embed.timeout_ms"
#define SET_TIMEOUT_ENV "CAIRN_EMBED_TIMEOUT_MS"

static int pooling_code(const char *s)
{
	static const char *const names[] = { "none", "mean", "cls", "last",
					     "rank" };
	int i = index_of(names, ARRAY_SIZE(names), s);

	return i;
}

int vector_settings_load(struct cairn_db *db, struct vector_settings *s)
{
	char buf[1024];
	const char *vals[ARRAY_SIZE(setting_names)];
	size_t i;
	int rc;

	memset(s, 0, sizeof(*s));
	s->cfg.pooling = -1;
	for (i = 0; i < ARRAY_SIZE(setting_names); i++) {
		const char *env = getenv(setting_names[i].env);
		int found = 0;

		vals[i] = NULL;
		if (env) {
			found = 1;
			snprintf(buf, sizeof(buf), "%s", env);
		} else if (db) {
			rc = store_meta_get(db, "main", setting_names[i].key, buf,
				       sizeof(buf), &found);
			if (rc)
				goto fail;
		}
		if (!found)
			continue;
		s->owned[i] = util_strdup(buf);
		if (!s->owned[i]) {
			rc = CAIRN_NOMEM;
			goto fail;
		}
		vals[i] = s->owned[i];
	}
	s->cfg.provider = vals[0];
	s->cfg.model = vals[1];
	s->cfg.url = vals[2];
	s->cfg.api_key_env = vals[3];
	s->cfg.query_instruction = vals[4];
	s->cfg.passage_instruction = vals[5];
	if (vals[6] && *vals[6]) {
		s->cfg.pooling = pooling_code(vals[6]);
		if (s->cfg.pooling < 0) {
			rc = store_error(db, CAIRN_INVALID,
					 "unknown pooling '%s' (mean, cls, "
					 "last, none)",
					 vals[6]);
			goto fail;
		}
	}
	if (vals[7] && *vals[7])
		s->cfg.threads = atoi(vals[7]);
	{
		const char *env = getenv(SET_TIMEOUT_ENV);

		buf[0] = '\0';
		if (!env && db) {
			rc = meta_get(db, "main", SET_TIMEOUT_KEY, buf,
				      sizeof(buf));
			if (rc)
				goto fail;
		}
		s->cfg.timeout_ms = atoi(env ? env : buf);
		if (s->cfg.timeout_ms < 0)
			s->cfg.timeout_ms = 0;
	}
	return CAIRN_OK;
fail:
	vector_settings_release(s);
	if (rc == CAIRN_NOMEM)
		store_error(db, rc, "out of memory");
	return rc;
}

void vector_settings_release(struct vector_settings *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s->owned); i++)
		cairn_free(s->owned[i]);
	memset(s, 0, sizeof(*s));
}

int vector_settings_enabled(const struct vector_settings *s)
{
	const char *p = s->cfg.provider;

	return p && *p && strcmp(p, "none") != 0;
}

int vector_settings_save(struct cairn_db *db, const struct embed_config *cfg)
{
	static const char *const pool_names[] = { "none", "mean", "cls",
						  "last", "rank" };
	const char *vals[ARRAY_SIZE(setting_names)];
	char threads[32], timeout[32];
	size_t i;
	int rc;

	vals[0] = cfg->provider;
	vals[1] = cfg->model;
	vals[2] = cfg->url;
	vals[3] = cfg->api_key_env;
	vals[4] = cfg->query_instruction;
	vals[5] = cfg->passage_instruction;
	vals[6] = cfg->pooling >= 0 && cfg->pooling < 5
			  ? pool_names[cfg->pooling]
			  : NULL;
	snprintf(threads, sizeof(threads), "%d", cfg->threads);
	vals[7] = cfg->threads > 0 ? threads : NULL;
	snprintf(timeout, sizeof(timeout), "%d", cfg->timeout_ms);
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	for (i = 0; rc == CAIRN_OK && i < ARRAY_SIZE(setting_names); i++)
		rc = meta_set(db, "main", setting_names[i].key, vals[i]);
	if (rc == CAIRN_OK)
		rc = meta_set(db, "main", SET_TIMEOUT_KEY,
			      cfg->timeout_ms > 0 ? timeout : NULL);
	rc = store_tx_end(db, rc);
	if (rc == CAIRN_OK && db->vec) {
		/* the cached embedder was made from the old settings */
		struct vec_cache *c = db->vec;

		embed_close(c->emb);
		c->emb = NULL;
		c->emb_tried = 0;
	}
	return rc;
}

/*
 * The width of the main store's vectors when they were made by the http
 * provider with this model id (0 otherwise): the http provider then needs
 * no dimension probe at open (issue 20: a probe doubled each hook's cost).
 */
static int stored_http_dim(struct cairn_db *db, const char *model)
{
	char buf[VEC_IDENTITY_MAX];
	struct json *j = NULL;
	const char *p, *m;
	double dim = 0;

	if (!model || vector_get_identity(db, "main", buf, sizeof(buf)) ||
	    !buf[0] || json_parse(buf, strlen(buf), &j, NULL, 0) != CAIRN_OK)
		return 0;
	p = json_get_str(j, "provider");
	m = json_get_str(j, "model");
	if (!p || !m || strcmp(p, "http") != 0 || strcmp(m, model) != 0 ||
	    !json_get_num(j, "dim", &dim) || dim < 1 || dim > EMBED_MAX_DIM)
		dim = 0;
	json_free(j);
	return (int)dim;
}

int vector_embedder(struct cairn_db *db, struct embedder **out)
{
	struct vec_cache *c = cache_of(db);
	struct vector_settings s;
	int rc;

	*out = NULL;
	if (!c)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	if (c->emb_tried) {
		*out = c->emb;
		if (c->emb_rc)
			store_error(db, c->emb_rc, "%s", c->emb_err);
		return c->emb_rc;
	}
	rc = vector_settings_load(db, &s);
	if (rc)
		return rc;
	c->emb_tried = 1;
	if (vector_settings_enabled(&s) && strcmp(s.cfg.provider, "http") == 0)
		s.cfg.dim = stored_http_dim(db, s.cfg.model);
	if (vector_settings_enabled(&s)) {
		c->emb_rc = embed_open(&s.cfg, &c->emb, c->emb_err,
				       sizeof(c->emb_err));
		if (c->emb_rc)
			store_error(db, c->emb_rc, "%s", c->emb_err);
	}
	vector_settings_release(&s);
	*out = c->emb;
	return c->emb_rc;
}

/* ------------------------------------------------------------- identity */

int vector_get_identity(struct cairn_db *db, const char *schema, char *buf,
			size_t size)
{
	return meta_get(db, schema, "vector.identity", buf, size);
}

int vector_set_identity(struct cairn_db *db, const char *schema,
			const struct embed_identity *id, long long *dropped)
{
	char want[VEC_IDENTITY_MAX], have[VEC_IDENTITY_MAX], sql[96];
	long long n = 0;
	int rc;

	if (dropped)
		*dropped = 0;
	if (strcmp(schema, "main") != 0 && strcmp(schema, "global") != 0)
		return store_error(db, CAIRN_INVALID, "unknown schema '%s'",
				   schema);
	if (embed_identity_string(id, want, sizeof(want)))
		return store_error(db, CAIRN_TOOBIG, "identity is too long");
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = vector_get_identity(db, schema, have, sizeof(have));
	if (rc == CAIRN_OK && strcmp(have, want) != 0) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.vectors",
			 schema);
		rc = count_sql(db, sql, &n);
		if (rc == CAIRN_OK) {
			snprintf(sql, sizeof(sql), "DELETE FROM %s.vectors",
				 schema);
			rc = exec_sql(db, sql, "dropping old vectors");
		}
		if (rc == CAIRN_OK)
			rc = meta_set(db, schema, "vector.identity", want);
		if (rc == CAIRN_OK)
			rc = bump_generation(db, schema);
	}
	rc = store_tx_end(db, rc);
	if (rc == CAIRN_OK && dropped)
		*dropped = n;
	return rc;
}

/* ---------------------------------------------------------------- write */

static int put_blob(struct cairn_db *db, const char *schema, long long rid,
		    const float *v, int dim, const char *title,
		    const char *body, int *written)
{
	unsigned short *h = util_calloc((size_t)dim, sizeof(*h));
	unsigned char *blob = util_calloc((size_t)dim, 2);
	char sql[256];
	sqlite3_stmt *st = NULL;
	double ss = 0;
	int i, src, rc = CAIRN_OK;

	*written = 0;
	if (!h || !blob) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < dim; i++)
		ss += (double)v[i] * v[i];
	ss = ss > 0 ? 1.0 / sqrt(ss) : 0;
	for (i = 0; i < dim; i++) {
		h[i] = vector_f16((float)(v[i] * ss));
		blob[2 * i] = (unsigned char)h[i];
		blob[2 * i + 1] = (unsigned char)(h[i] >> 8);
	}
	/* only if the text is still the one embedded */
	if (title)
		snprintf(sql, sizeof(sql),
			 "INSERT OR REPLACE INTO %s.vectors (rid, v) SELECT "
			 "?1, ?2 FROM %s.records WHERE rid = ?1 AND title = "
			 "?3 AND body = ?4",
			 schema, schema);
	else
		snprintf(sql, sizeof(sql),
			 "INSERT OR REPLACE INTO %s.vectors (rid, v) "
			 "VALUES (?1, ?2)",
			 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, rid);
		sqlite3_bind_blob(st, 2, blob, dim * 2, SQLITE_STATIC);
		if (title) {
			sqlite3_bind_text(st, 3, title, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 4, body, -1, SQLITE_STATIC);
		}
		src = sqlite3_step(st);
	}
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "writing a vector");
	else
		*written = sqlite3_changes(db->sql) > 0;
out:
	sqlite3_finalize(st);
	cairn_free(h);
	cairn_free(blob);
	return rc;
}

static int identity_dim(const char *identity)
{
	const char *p = strstr(identity, "\"dim\":");

	return p ? atoi(p + 6) : 0;
}

int vector_put(struct cairn_db *db, const char *id, const float *v, int dim)
{
	char have[VEC_IDENTITY_MAX], sql[96];
	sqlite3_stmt *st = NULL;
	long long rid = -1;
	int i, src, rc = CAIRN_OK, written = 0;
	const char *schema = NULL;

	for (i = 0; i < n_schemas(db) && rid < 0; i++) {
		snprintf(sql, sizeof(sql),
			 "SELECT rid FROM %s.records WHERE id = ?1",
			 schema_name(i));
		src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
			src = sqlite3_step(st);
			if (src == SQLITE_ROW) {
				rid = sqlite3_column_int64(st, 0);
				schema = schema_name(i);
				src = SQLITE_DONE;
			}
		}
		sqlite3_finalize(st);
		st = NULL;
		if (src != SQLITE_DONE)
			return store_sql_error(db, src, "finding the record");
	}
	if (rid < 0)
		return store_error(db, CAIRN_NOTFOUND, "no record '%s'", id);
	rc = vector_get_identity(db, schema, have, sizeof(have));
	if (rc)
		return rc;
	if (!have[0] || identity_dim(have) != dim)
		return store_error(db, CAIRN_MISMATCH,
				   "the %s store's vector identity is %s, not "
				   "%d-wide: set it first",
				   schema, have[0] ? "another" : "unset", dim);
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = put_blob(db, schema, rid, v, dim, NULL, NULL, &written);
	if (rc == CAIRN_OK)
		rc = bump_generation(db, schema);
	return store_tx_end(db, rc);
}

/* ----------------------------------------------------------------- load */

/*
 * The sidecar: what load_schema reads out of SQLite, written next to the
 * store (cairn.db-vectors, global.db-vectors: the store's .gitignore
 * already covers cairn.db-*) after each load and memory-mapped by the next
 * process instead of reading every vector and record row again (a hook
 * is a new process per prompt; at 10k records the SQLite read is most of
 * a dense search). It is used only when its header matches the schema
 * as it is now: the identity string, 'vector.generation' and
 * 'vector.labels' (bumped in the transactions that change any vector,
 * kind or status), the largest vector rid and the database file's device
 * and inode; anything else, a short or malformed file included, means
 * reading SQLite and writing a fresh sidecar (temporary file, rename).
 * The header is read before the rows, so a sidecar's rows are never
 * older than its header says. Host byte order (little-endian only: no
 * sidecar elsewhere); every kind, status and id offset is checked on map.
 */
#define VEC_SIDE_MAGIC "cairnVS1"

struct side_header {
	char magic[8];
	uint32_t dim, identlen;
	uint64_t n, idbytes;
	int64_t generation, labels, max_rid;
	uint64_t dev, ino;
};

/* Byte offsets of each section (64-byte aligned) and the file's size. */
struct side_layout {
	size_t ident, mat, rid, idoff, kind, status, ids, total;
};

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

static int side_layout(size_t n, size_t dim, size_t identlen,
		       size_t idbytes, struct side_layout *l)
{
	if (n > ((size_t)1 << 32) || dim > VECTOR_MAX_DIM ||
	    identlen >= VEC_IDENTITY_MAX || idbytes > ((size_t)1 << 32))
		return -1;
	l->ident = sizeof(struct side_header);
	l->mat = align64(l->ident + identlen);
	l->rid = align64(l->mat + n * dim * 2);
	l->idoff = align64(l->rid + n * sizeof(long long));
	l->kind = align64(l->idoff + n * sizeof(uint32_t));
	l->status = align64(l->kind + n);
	l->ids = align64(l->status + n);
	l->total = l->ids + idbytes;
	return 0;
}

/* Paths of schema si's database file and its sidecar; 0 when unknown. */
static int side_paths(struct cairn_db *db, int si, char *dbf, char *side,
		      size_t size)
{
	return store_db_file(db, si, dbf, size) &&
	       snprintf(side, size, "%s-vectors", dbf) < (int)size;
}

static int max_rid(struct cairn_db *db, const char *schema, long long *out)
{
	char sql[96];

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(rid), -1) FROM %s.vectors",
		 schema);
	return count_sql(db, sql, out);
}

/* Fill the header for schema s as loaded now; 0 when it cannot be. */
static int side_expect(struct cairn_db *db, int si, const struct vec_schema *s,
		       long long maxr, struct side_header *h)
{
	char dbf[4200], side[4200];
	struct stat st;

	if (!side_paths(db, si, dbf, side, sizeof(dbf)) || stat(dbf, &st) != 0)
		return 0;
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, VEC_SIDE_MAGIC, 8);
	h->dim = (uint32_t)s->dim;
	h->identlen = (uint32_t)strlen(s->identity);
	h->generation = s->generation;
	h->labels = s->labels;
	h->max_rid = maxr;
	h->dev = (uint64_t)st.st_dev;
	h->ino = (uint64_t)st.st_ino;
	return 1;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VEC_SIDECAR 1
#else
#define VEC_SIDECAR 0
#endif

/* Map schema si's sidecar into s when it matches want; 1 when it did. */
static int side_map(struct cairn_db *db, int si, struct vec_schema *s,
		    const struct side_header *want)
{
	char dbf[4200], side[4200];
	struct side_header h;
	struct side_layout l;
	struct stat st;
	unsigned char *p;
	size_t i;
	int fd;

	if (!VEC_SIDECAR || !side_paths(db, si, dbf, side, sizeof(dbf)))
		return 0;
	fd = open(side, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, want->magic, 8) != 0 || h.dim != want->dim ||
	    h.identlen != want->identlen ||
	    h.generation != want->generation || h.labels != want->labels ||
	    h.max_rid != want->max_rid || h.dev != want->dev ||
	    h.ino != want->ino || h.n == 0 || h.idbytes == 0 ||
	    side_layout((size_t)h.n, h.dim, h.identlen, (size_t)h.idbytes,
			&l) != 0 ||
	    (size_t)st.st_size != l.total) {
		close(fd);
		return 0;
	}
	/* private and writable: a label refresh rewrites kind and status
	 * in this process only */
	p = mmap(NULL, l.total, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	s->map = p;
	s->map_len = l.total;
	s->n = (size_t)h.n;
	s->mat = (unsigned short *)(void *)(p + l.mat);
	s->rid = (long long *)(void *)(p + l.rid);
	s->idoff = (uint32_t *)(void *)(p + l.idoff);
	s->kind = p + l.kind;
	s->status = p + l.status;
	s->ids = (char *)p + l.ids;
	s->idbytes = (size_t)h.idbytes;
	if (memcmp(p + l.ident, s->identity, h.identlen) != 0 ||
	    s->ids[s->idbytes - 1] != '\0')
		goto bad;
	for (i = 0; i < s->n; i++)
		if (s->kind[i] >= ARRAY_SIZE(kinds) ||
		    s->status[i] >= ARRAY_SIZE(statuses) ||
		    s->idoff[i] >= s->idbytes)
			goto bad;
	return 1;
bad:
	munmap(p, l.total);
	s->map = NULL;
	s->map_len = 0;
	s->n = 0;
	s->mat = NULL;
	s->rid = NULL;
	s->idoff = NULL;
	s->kind = s->status = NULL;
	s->ids = NULL;
	s->idbytes = 0;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *b = buf;

	while (len > 0) {
		ssize_t w = pwrite(fd, b, len, off);

		if (w <= 0)
			return -1;
		b += w;
		len -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Write s (just read from SQLite) as schema si's sidecar; failures only
 * mean that the next process reads SQLite again. */
static void side_write(struct cairn_db *db, int si, const struct vec_schema *s,
		       const struct side_header *want)
{
	char dbf[4200], side[4200], tmp[4300];
	struct side_header h = *want;
	struct side_layout l;
	int fd, ok;

	if (!VEC_SIDECAR || s->n == 0 || !side_paths(db, si, dbf, side,
						      sizeof(dbf)))
		return;
	h.n = s->n;
	h.idbytes = s->idbytes;
	if (side_layout(s->n, (size_t)s->dim, h.identlen, s->idbytes, &l))
		return;
	util_sweep_tmp(si == 0 ? db->dir : db->global_dir, side);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", side, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return;
	ok = ftruncate(fd, (off_t)l.total) == 0 &&
	     write_all(fd, &h, sizeof(h), 0) == 0 &&
	     write_all(fd, s->identity, h.identlen, (off_t)l.ident) == 0 &&
	     write_all(fd, s->mat, s->n * (size_t)s->dim * 2,
		       (off_t)l.mat) == 0 &&
	     write_all(fd, s->rid, s->n * sizeof(long long),
		       (off_t)l.rid) == 0 &&
	     write_all(fd, s->idoff, s->n * sizeof(uint32_t),
		       (off_t)l.idoff) == 0 &&
	     write_all(fd, s->kind, s->n, (off_t)l.kind) == 0 &&
	     write_all(fd, s->status, s->n, (off_t)l.status) == 0 &&
	     write_all(fd, s->ids, s->idbytes, (off_t)l.ids) == 0;
	if (close(fd) != 0)
		ok = 0;
	if (!ok || rename(tmp, side) != 0)
		unlink(tmp);
}

/* Grow the per-row arrays of s to hold cap rows. */
static int schema_grow(struct vec_schema *s, size_t cap)
{
	unsigned short *mat = util_realloc(s->mat, cap * (size_t)s->dim * 2);
	long long *rid;
	uint32_t *idoff;
	unsigned char *kind, *status;

	if (!mat)
		return -1;
	s->mat = mat;
	if (!(rid = util_realloc(s->rid, cap * sizeof(*rid))))
		return -1;
	s->rid = rid;
	if (!(idoff = util_realloc(s->idoff, cap * sizeof(*idoff))))
		return -1;
	s->idoff = idoff;
	if (!(kind = util_realloc(s->kind, cap)))
		return -1;
	s->kind = kind;
	if (!(status = util_realloc(s->status, cap)))
		return -1;
	s->status = status;
	return 0;
}

static int load_schema(struct cairn_db *db, int si, struct vec_schema *s)
{
	const char *schema = schema_name(si);
	char sql[256], gen[32];
	sqlite3_stmt *st = NULL;
	struct sbuf ids = SBUF_INIT;
	struct side_header want;
	long long maxr = -1;
	size_t cap = 0, i = 0;
	int src, rc, side_ok;

	schema_clear(s);
	rc = vector_get_identity(db, schema, s->identity, sizeof(s->identity));
	if (rc == CAIRN_OK)
		rc = meta_get(db, schema, "vector.generation", gen, sizeof(gen));
	if (rc)
		return rc;
	s->generation = atoll(gen);
	rc = meta_get(db, schema, "vector.labels", gen, sizeof(gen));
	if (rc == CAIRN_OK)
		rc = max_rid(db, schema, &maxr);
	if (rc)
		return rc;
	s->labels = atoll(gen);
	s->dim = identity_dim(s->identity);
	if (maxr < 0 || s->dim <= 0) {
		s->loaded = 1;
		return CAIRN_OK;
	}
	if (s->dim > VECTOR_MAX_DIM)
		return store_error(db, CAIRN_CORRUPT,
				   "the %s store's vectors are %d-wide "
				   "(limit %d)",
				   schema, s->dim, VECTOR_MAX_DIM);
	side_ok = side_expect(db, si, s, maxr, &want);
	if (side_ok && side_map(db, si, s, &want))
		goto done;
	snprintf(sql, sizeof(sql),
		 "SELECT v.rid, r.id, r.kind, r.status, v.v FROM %s.vectors "
		 "v JOIN %s.records r ON r.rid = v.rid ORDER BY v.rid",
		 schema, schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	while ((src == SQLITE_OK || src == SQLITE_ROW) &&
	       (src = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 1);
		int idlen = sqlite3_column_bytes(st, 1);
		const unsigned char *b = sqlite3_column_blob(st, 4);
		int bytes = sqlite3_column_bytes(st, 4), k, t, j;
		unsigned short *row;

		k = index_of(kinds, ARRAY_SIZE(kinds),
			     (const char *)sqlite3_column_text(st, 2));
		t = index_of(statuses, ARRAY_SIZE(statuses),
			     (const char *)sqlite3_column_text(st, 3));
		if (id && (idlen >= VECTOR_ID_MAX || strlen(id) != (size_t)idlen))
			continue; /* an id this long stays lexical-only */
		if (bytes != s->dim * 2 || !b || !id || k < 0 || t < 0) {
			long long bad = sqlite3_column_int64(st, 0);
			int dim = s->dim;

			sqlite3_finalize(st); /* after the last column read */
			sbuf_release(&ids);
			schema_clear(s);
			return store_error(db, CAIRN_CORRUPT,
					   "the %s store's vector of record "
					   "%lld is damaged (%d bytes for %d "
					   "dimensions): run 'cairn reindex'",
					   schema, bad, bytes, dim);
		}
		if (i == cap) {
			cap = cap ? 2 * cap : 1024;
			if (schema_grow(s, cap) != 0) {
				src = SQLITE_NOMEM;
				break;
			}
		}
		row = s->mat + i * (size_t)s->dim;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(row, b, (size_t)bytes); /* stored little-endian */
		(void)j;
#else
		for (j = 0; j < s->dim; j++)
			row[j] = (unsigned short)(b[2 * j] | b[2 * j + 1] << 8);
#endif
		s->rid[i] = sqlite3_column_int64(st, 0);
		s->idoff[i] = (uint32_t)ids.len;
		sbuf_add(&ids, id, (size_t)idlen + 1);
		if (ids.err || ids.len > ((size_t)1 << 32)) {
			src = SQLITE_NOMEM;
			break;
		}
		s->kind[i] = (unsigned char)k;
		s->status[i] = (unsigned char)t;
		i++;
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE) {
		sbuf_release(&ids);
		schema_clear(s);
		if (src == SQLITE_NOMEM)
			return store_error(db, CAIRN_NOMEM,
					   "out of memory loading vectors");
		return store_sql_error(db, src, "loading vectors");
	}
	s->n = i;
	s->idbytes = ids.len;
	s->ids = sbuf_detach(&ids, NULL);
	if (s->n > 0 && !s->ids) {
		schema_clear(s);
		return store_error(db, CAIRN_NOMEM,
				   "out of memory loading vectors");
	}
	if (side_ok)
		side_write(db, si, s, &want);
done:
	s->keep = util_calloc(s->n ? s->n : 1, 1);
	if (!s->keep) {
		schema_clear(s);
		return store_error(db, CAIRN_NOMEM,
				   "out of memory loading vectors");
	}
	s->vm.n = s->n;
	s->vm.dim = s->dim;
	s->vm.h = s->mat;
	/* the int8 copy is built on the second search: a one-shot process
	 * (the CLI, the hook) pays one f16 scan instead of the build */
	s->loaded = 1;
	return CAIRN_OK;
}

/*
 * Keep schema si's cache in step with the store: the schema's triggers
 * bump meta 'vector.generation' whenever vectors are written or deleted
 * (text changed, record deleted, reindex) and 'vector.labels' when a
 * record with a vector changes status or kind. Two small reads per search;
 * last_seen and receipts (written by every recall) move neither.
 */
static int sync_schema(struct cairn_db *db, int si, struct vec_schema *s)
{
	const char *schema = schema_name(si);
	char sql[200], gen[32], lab[32];
	sqlite3_stmt *st = NULL;
	size_t i = 0;
	int src, rc;

	if (!s->loaded)
		return load_schema(db, si, s);
	rc = meta_get(db, schema, "vector.generation", gen, sizeof(gen));
	if (rc == CAIRN_OK)
		rc = meta_get(db, schema, "vector.labels", lab, sizeof(lab));
	if (rc)
		return rc;
	if (atoll(gen) != s->generation)
		return load_schema(db, si, s);
	if (atoll(lab) == s->labels)
		return CAIRN_OK;
	snprintf(sql, sizeof(sql),
		 "SELECT v.rid, r.kind, r.status FROM %s.vectors v JOIN "
		 "%s.records r ON r.rid = v.rid ORDER BY v.rid",
		 schema, schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	while ((src == SQLITE_OK || src == SQLITE_ROW) &&
	       (src = sqlite3_step(st)) == SQLITE_ROW) {
		int k, t;

		if (i >= s->n || sqlite3_column_int64(st, 0) != s->rid[i])
			break;
		k = index_of(kinds, ARRAY_SIZE(kinds),
			     (const char *)sqlite3_column_text(st, 1));
		t = index_of(statuses, ARRAY_SIZE(statuses),
			     (const char *)sqlite3_column_text(st, 2));
		s->kind[i] = (unsigned char)(k < 0 ? 0 : k);
		s->status[i] = (unsigned char)(t < 0 ? 0 : t);
		i++;
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE || i != s->n)
		return load_schema(db, si, s); /* rows moved: reload all */
	s->labels = atoll(lab);
	return CAIRN_OK;
}

/* --------------------------------------------------------------- search */

static int parse_filter(struct cairn_db *db, const char *list,
			const char *const *tab, size_t n, unsigned *mask,
			const char *what)
{
	const char *p = list;

	*mask = 0;
	if (p && strcmp(p, "all") == 0) {
		*mask = (1u << n) - 1;
		return CAIRN_OK;
	}
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p), i;
		int found = 0;

		while (len && *p == ' ') {
			p++;
			len--;
		}
		while (len && p[len - 1] == ' ')
			len--;
		for (i = 0; len && i < n; i++)
			if (strlen(tab[i]) == len &&
			    memcmp(tab[i], p, len) == 0) {
				*mask |= 1u << i;
				found = 1;
			}
		if (len && !found)
			return store_error(db, CAIRN_INVALID,
					   "unknown %s '%.*s'", what,
					   (int)len, p);
		p = e ? e + 1 : NULL;
	}
	return CAIRN_OK;
}

int vector_search(struct cairn_db *db, const struct embed_identity *id,
		  const float *q, const struct vector_filter *f, size_t k,
		  struct vector_hit *hits, size_t *n)
{
	struct vec_cache *c = cache_of(db);
	char want[VEC_IDENTITY_MAX];
	unsigned kmask = 0, smask = 0;
	float *scores = NULL;
	unsigned char *keep = NULL;
	size_t *idx = NULL, got = 0, i;
	int si, rc;

	*n = 0;
	if (!c)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	if (k > VECTOR_MAX_K)
		k = VECTOR_MAX_K;
	if (k == 0)
		return CAIRN_OK;
	if (embed_identity_string(id, want, sizeof(want)))
		return store_error(db, CAIRN_TOOBIG, "identity is too long");
	rc = parse_filter(db, f ? f->kinds : NULL, kinds, ARRAY_SIZE(kinds),
			  &kmask, "kind");
	if (rc == CAIRN_OK)
		rc = parse_filter(db,
				  f && f->statuses ? f->statuses
						   : "accepted,unverified",
				  statuses, ARRAY_SIZE(statuses), &smask,
				  "status");
	if (rc)
		return rc;
	if (kmask == 0)
		kmask = (1u << ARRAY_SIZE(kinds)) - 1;
	idx = util_calloc(k, sizeof(*idx));
	if (!idx)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	for (si = 0; si < n_schemas(db); si++) {
		struct vec_schema *s = &c->s[si];
		size_t m;

		rc = sync_schema(db, si, s);
		if (rc)
			goto out;
		if (s->n == 0)
			continue;
		if (strcmp(s->identity, want) != 0) {
			rc = store_error(db, CAIRN_MISMATCH,
					 "the %s store's vectors were made by "
					 "another model or settings (%s); this "
					 "one is %s: run 'cairn reindex' to "
					 "rebuild them",
					 si == 0 ? "workspace" : "global",
					 s->identity, want);
			goto out;
		}
		keep = s->keep;
		if (!scores)
			scores = cairn_malloc(k * sizeof(*scores));
		if (!scores) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < s->n; i++)
			keep[i] = (kmask >> s->kind[i] & 1) &&
				  (smask >> s->status[i] & 1);
		if (!s->vm.q8 && s->searches++ >= 1 &&
		    vector_matrix_build(&s->vm) != CAIRN_OK) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		m = vector_matrix_topk(&s->vm, q, keep, k, idx, scores);
		if (m == (size_t)-1) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		/* merge into hits (sorted, best first) */
		for (i = 0; i < m; i++) {
			float cs = scores[i];
			size_t pos = got;

			while (pos > 0 && hits[pos - 1].cos < cs)
				pos--;
			if (pos >= k)
				break;
			if (got < k)
				got++;
			memmove(hits + pos + 1, hits + pos,
				(got - 1 - pos) * sizeof(*hits));
			snprintf(hits[pos].id, sizeof(hits[pos].id), "%s",
				 s->ids + s->idoff[idx[i]]);
			hits[pos].schema = schema_name(si);
			hits[pos].rid = s->rid[idx[i]];
			hits[pos].cos = cs;
		}
	}
	*n = got;
out:
	cairn_free(scores);
	cairn_free(idx);
	return rc;
}

int vector_query(struct cairn_db *db, const char *query,
		 const struct vector_filter *f, size_t k,
		 struct vector_hit *hits, size_t *n)
{
	struct embedder *e = NULL;
	const struct embed_identity *id;
	float *q = NULL;
	char err[512];
	int rc;

	*n = 0;
	rc = vector_embedder(db, &e);
	if (rc || !e)
		return rc;
	id = embed_identity(e);
	q = util_calloc((size_t)id->dim, sizeof(*q));
	if (!q)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	rc = embed_texts(e, 1, &query, 1, q, err, sizeof(err));
	if (rc)
		store_error(db, rc, "embedding the query: %s", err);
	else
		rc = vector_search(db, id, q, f, k, hits, n);
	cairn_free(q);
	return rc;
}

/* ---------------------------------------------------------------- stats */

int vector_drop_all(struct cairn_db *db, long long *dropped)
{
	struct vector_stats st;
	int si, rc;

	*dropped = 0;
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = vector_stats(db, &st);
	if (rc == CAIRN_OK)
		*dropped = st.with_vector;
	for (si = 0; rc == CAIRN_OK && si < (db->has_global ? 2 : 1); si++) {
		char sql[256];
		const char *schema = schema_name(si);
		int src;

		snprintf(sql, sizeof(sql),
			 "DELETE FROM %s.vectors; DELETE FROM %s.meta WHERE k "
			 "= 'vector.identity'; UPDATE %s.meta SET v = CAST(v "
			 "AS INTEGER) + 1 WHERE k = 'vector.generation'",
			 schema, schema, schema);
		src = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);
		if (src != SQLITE_OK)
			rc = store_sql_error(db, src, "dropping vectors");
	}
	return store_tx_end(db, rc);
}

int vector_stats(struct cairn_db *db, struct vector_stats *st)
{
	char sql[200];
	int si, rc = CAIRN_OK;

	memset(st, 0, sizeof(*st));
	for (si = 0; rc == CAIRN_OK && si < n_schemas(db); si++) {
		long long a = 0, b = 0;

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.records",
			 schema_name(si));
		rc = count_sql(db, sql, &a);
		if (rc == CAIRN_OK) {
			snprintf(sql, sizeof(sql),
				 "SELECT count(*) FROM %s.vectors",
				 schema_name(si));
			rc = count_sql(db, sql, &b);
		}
		st->records += a;
		st->with_vector += b;
	}
	if (rc == CAIRN_OK)
		rc = vector_get_identity(db, "main", st->identity,
					 sizeof(st->identity));
	st->dim = identity_dim(st->identity);
	return rc;
}

/* -------------------------------------------------------------- reindex */

/* title + "\n" + body, cut at VEC_TEXT_MAX bytes on a UTF-8 boundary */
static char *record_text(const char *title, const char *body)
{
	struct sbuf sb = SBUF_INIT;
	size_t len;

	if (title && *title) {
		sbuf_adds(&sb, title);
		sbuf_addc(&sb, '\n');
	}
	sbuf_adds(&sb, body ? body : "");
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	len = sb.len;
	if (len > VEC_TEXT_MAX) {
		len = VEC_TEXT_MAX;
		while (len > 0 && ((unsigned char)sb.buf[len] & 0xC0) == 0x80)
			len--;
		sb.buf[len] = '\0';
		sb.len = len;
	}
	return sbuf_detach(&sb, NULL);
}

struct batch {
	long long *rid;
	char **title, **body, **text;
	size_t n;
};

static void batch_clear(struct batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		cairn_free(b->title[i]);
		cairn_free(b->body[i]);
		cairn_free(b->text[i]);
	}
	b->n = 0;
}

static int reindex_schema(struct cairn_db *db, struct embedder *e, int si,
			  size_t batch, long long *done, long long total,
			  void (*progress)(void *, long long, long long),
			  void *ctx)
{
	const char *schema = schema_name(si);
	const struct embed_identity *id = embed_identity(e);
	struct batch b;
	char sql[300], err[512];
	float *out = NULL;
	long long last = -1;
	int rc = CAIRN_OK;

	memset(&b, 0, sizeof(b));
	b.rid = util_calloc(batch, sizeof(*b.rid));
	b.title = util_calloc(batch, sizeof(char *));
	b.body = util_calloc(batch, sizeof(char *));
	b.text = util_calloc(batch, sizeof(char *));
	out = util_calloc(batch * (size_t)id->dim, sizeof(*out));
	if (!b.rid || !b.title || !b.body || !b.text || !out) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	snprintf(sql, sizeof(sql),
		 "SELECT r.rid, r.title, r.body FROM %s.records r WHERE "
		 "r.rid > ?1 AND NOT EXISTS (SELECT 1 FROM %s.vectors v "
		 "WHERE v.rid = r.rid) ORDER BY r.rid LIMIT ?2",
		 schema, schema);
	for (;;) {
		sqlite3_stmt *st = NULL;
		size_t i;
		int src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

		batch_clear(&b);
		if (src == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, last);
			sqlite3_bind_int64(st, 2, (sqlite3_int64)batch);
		}
		while ((src == SQLITE_OK || src == SQLITE_ROW) &&
		       (src = sqlite3_step(st)) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 1);
			const char *bd = (const char *)sqlite3_column_text(st, 2);

			b.rid[b.n] = sqlite3_column_int64(st, 0);
			b.title[b.n] = util_strdup(t ? t : "");
			b.body[b.n] = util_strdup(bd ? bd : "");
			b.text[b.n] = record_text(t, bd);
			b.n++;
			if (!b.title[b.n - 1] || !b.body[b.n - 1] ||
			    !b.text[b.n - 1]) {
				src = SQLITE_NOMEM;
				break;
			}
		}
		sqlite3_finalize(st);
		if (src != SQLITE_DONE) {
			rc = store_sql_error(db, src, "reading records");
			goto out;
		}
		if (b.n == 0)
			break;
		last = b.rid[b.n - 1];
		rc = embed_texts(e, 0, (const char *const *)b.text, b.n, out,
				 err, sizeof(err));
		if (rc) {
			store_error(db, rc, "embedding records: %s", err);
			goto out;
		}
		rc = store_tx_begin(db);
		if (rc)
			goto out;
		for (i = 0; rc == CAIRN_OK && i < b.n; i++) {
			int written = 0;

			rc = put_blob(db, schema, b.rid[i],
				      out + i * (size_t)id->dim, id->dim,
				      b.title[i], b.body[i], &written);
			if (written)
				(*done)++;
		}
		if (rc == CAIRN_OK)
			rc = bump_generation(db, schema);
		rc = store_tx_end(db, rc);
		if (rc)
			goto out;
		if (progress)
			progress(ctx, *done, total);
	}
out:
	batch_clear(&b);
	cairn_free(b.rid);
	cairn_free(b.title);
	cairn_free(b.body);
	cairn_free(b.text);
	cairn_free(out);
	return rc;
}

int vector_reindex(struct cairn_db *db, struct embedder *e, size_t batch,
		   void (*progress)(void *ctx, long long done,
				    long long total),
		   void *ctx, struct vector_reindex_result *res)
{
	char sql[200];
	double t0;
	int si, rc = CAIRN_OK;

	memset(res, 0, sizeof(*res));
	if (batch == 0)
		batch = VEC_DEFAULT_BATCH;
	if (batch > VEC_MAX_BATCH)
		batch = VEC_MAX_BATCH;
	if (embed_identity(e)->dim > VECTOR_MAX_DIM)
		return store_error(db, CAIRN_INVALID, "vectors over %d "
				   "dimensions are not supported",
				   VECTOR_MAX_DIM);
	for (si = 0; rc == CAIRN_OK && si < n_schemas(db); si++) {
		long long dropped = 0, lack = 0;

		rc = vector_set_identity(db, schema_name(si),
					 embed_identity(e), &dropped);
		res->dropped += dropped;
		if (rc == CAIRN_OK) {
			snprintf(sql, sizeof(sql),
				 "SELECT count(*) FROM %s.records r WHERE NOT "
				 "EXISTS (SELECT 1 FROM %s.vectors v WHERE "
				 "v.rid = r.rid)",
				 schema_name(si), schema_name(si));
			rc = count_sql(db, sql, &lack);
		}
		res->total += lack;
	}
	t0 = (util_now_ms() / 1e3);
	for (si = 0; rc == CAIRN_OK && si < n_schemas(db); si++)
		rc = reindex_schema(db, e, si, batch, &res->embedded,
				    res->total, progress, ctx);
	res->seconds = (util_now_ms() / 1e3) - t0;
	for (si = 0; si < n_schemas(db); si++) {
		long long have = 0;

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.vectors",
			 schema_name(si));
		if (count_sql(db, sql, &have) == CAIRN_OK)
			res->have += have;
	}
	return rc;
}
