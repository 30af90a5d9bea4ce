/*
 * bert.c -- the built-in embedding runtime: a BERT-family encoder (BertModel,
 * XLM-RoBERTa) read from a GGUF file in llama.cpp's `bert` layout.
 *
 * Layer: model files, above gguf.h, quant.h and vocab.h; OpenBLAS for the
 * matrix products. Used by embed_gguf.c.
 *
 * Holds: the small-batch AVX2 kernels, the OpenBLAS loader, the thread
 * team and the forward pass; loading and validating the model, the f32
 * copies of the matrices and the file's SHA-256 are in bert_load.c
 * (bert_int.h is the model struct they share). The forward pass:
 *
 *   x = LayerNorm(tok_embd[id] + pos_embd[position] + token_types[0])
 *   per layer (post-LN):
 *     a = softmax(Q K^T / sqrt(head_dim)) V      per sequence and head
 *     x = LayerNorm(x + a W_o^T + b_o)            attn_output_norm
 *     x = LayerNorm(x + GELU(x W_up^T + b_up) W_down^T + b_down)
 *                                                  layer_output_norm
 *   pool (mean / first token / last token), L2-normalise; or, for RANK,
 *   the classifier head on the first token: out(tanh(cls(x))).
 *
 * Positions are 0..n-1 for both families (llama.cpp's converter drops
 * RoBERTa's padding offset from the position table), token type 0. GELU
 * is the exact erf form that BERT was trained with.
 *
 * Speed: a hook embeds one short query in a new process, so loading must
 * copy nothing: a batch of at most BERT_SMALL_ROWS rows runs on AVX2/FMA
 * kernels (chosen at run time; F16C widens f16) that read the matrices in
 * their file type (F32, F16, BF16, Q8_0) straight from the mapping, one
 * pass over the weights per layer, split by output columns over the team,
 * and attention by plain loops: such a call never loads OpenBLAS.
 * Larger batches run through OpenBLAS on f32 copies, made the first time
 * one is needed (at load when the kernels cannot run: another CPU, another
 * type, CAIRN_BERT_KERNELS=0). Measured in bench/README.md.
 * Several sequences are packed into one batch of at most
 * BERT_BATCH_TOKENS rows (no padding); the dense products run on the whole
 * batch, attention runs per (sequence, head) with its own block of the
 * packed Q/K/V, which is a block-diagonal mask without computing the
 * masked blocks. One call runs a team of `threads` threads that split
 * every GEMM by output columns (each thread calls single-threaded
 * OpenBLAS on its slice), the attention tasks and the row-wise steps, and
 * meet at a barrier between steps (spin briefly, then sleep). GELU and the
 * softmax exponentials use glibc's 4-lane libmvec erff/expf where glibc
 * has them (x86-64, >= 2.35), the scalar functions elsewhere; no
 * fast-math anywhere.
 *
 * Must never: crash or read outside the mapping (every shape was checked
 * at load, every token id is checked at embed), allocate in the middle of
 * the forward pass (each call allocates its scratch up front), or write
 * to the weights (concurrent calls share them).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cblas.h>

#include "bert.h"
#include "bert_int.h"
#include "gguf.h"
#include "internal.h"
#include "quant.h"
#include "vocab.h"

/*
 * OpenBLAS is loaded with dlopen(), not linked, and only when a call
 * needs it (the f32 copies of a large batch, or no kernels on this CPU):
 * loading it starts its thread pool and costs a one-shot process like the
 * hook (which embeds one short query on the kernels) 10 ms of CPU and
 * several times that in wall time on a busy machine (measured in
 * bench/README.md, hook_bench --model); linked, it would start in every
 * cairn process whether or not a model is ever used.
 */
#define BERT_LIBBLAS "libopenblas.so.0" /* Debian's libopenblas0 */

static struct {
	void (*sgemm)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE,
		      enum CBLAS_TRANSPOSE, blasint, blasint, blasint, float,
		      const float *, blasint, const float *, blasint, float,
		      float *, blasint);
	void (*set_threads)(int);
	char why[256]; /* "" when loaded */
} blas;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_load(void)
{
	static const char *const names[] = { "cblas_sgemm",
					     "openblas_set_num_threads" };
	void **const slots[] = { (void **)&blas.sgemm,
				 (void **)&blas.set_threads };

	if (util_dl_syms(BERT_LIBBLAS, "Debian's libopenblas0", names, slots,
			 ARRAY_SIZE(names), blas.why, sizeof(blas.why)))
		return;
	/* every call splits its work over its own team; OpenBLAS threads
	 * on top of that would oversubscribe the cores */
	blas.set_threads(1);
}

int bert_blas_need(char *err, size_t errsize)
{
	pthread_once(&blas_once, blas_load);
	if (blas.why[0]) {
		if (err && errsize)
			snprintf(err, errsize, "%s", blas.why);
		return CAIRN_IO;
	}
	return CAIRN_OK;
}

#define cblas_sgemm blas.sgemm

/* ========================================================= forward pass */

/*
 * A barrier whose size is fixed after the threads are started. Arrivals
 * are counted with atomics; a waiter spins a little (a step of the forward
 * pass on a short batch takes tens of microseconds, about what a futex
 * wake-up costs), then sleeps on the condition variable.
 */
#define TEAM_SPIN 1000 /* polls of the generation (~20-50 us) before sleeping */

struct team {
	pthread_mutex_t mu;  /* guards sleeping on cv; the start gate */
	pthread_cond_t cv;   /* signalled when a generation completes */
	int n;               /* threads that must arrive */
	int waiting;         /* arrived in this generation (atomic) */
	unsigned gen;        /* generation counter (atomic) */
};

static void team_wait(struct team *tm)
{
	unsigned g;
	int i;

	if (tm->n <= 1)
		return;
	g = __atomic_load_n(&tm->gen, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&tm->waiting, 1, __ATOMIC_ACQ_REL) == tm->n) {
		/* the last one: reset the count before anyone can see the
		 * new generation and arrive at the next barrier */
		__atomic_store_n(&tm->waiting, 0, __ATOMIC_RELAXED);
		pthread_mutex_lock(&tm->mu);
		__atomic_store_n(&tm->gen, g + 1, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&tm->cv);
		pthread_mutex_unlock(&tm->mu);
		return;
	}
	for (i = 0; i < TEAM_SPIN; i++) {
		if (__atomic_load_n(&tm->gen, __ATOMIC_ACQUIRE) != g)
			return;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	pthread_mutex_lock(&tm->mu);
	while (__atomic_load_n(&tm->gen, __ATOMIC_ACQUIRE) == g)
		pthread_cond_wait(&tm->cv, &tm->mu);
	pthread_mutex_unlock(&tm->mu);
}

/* One batch: sequences [s0, s1) packed into rows [0, T). */
struct batch {
	size_t s0, s1; /* sequence range */
	size_t T;      /* packed rows */
};

/* Everything one call shares between its threads. */
struct run {
	const struct bert_model *m;
	const int32_t *const *seqs; /* token ids */
	const size_t *lens;         /* truncated lengths */
	size_t *offs;               /* row of each sequence in its batch */
	struct batch *batches;
	size_t n_batches;
	int rank;                   /* 1: classifier scores, else embeddings */
	float *out;                 /* n * E floats, or n scores */
	struct team team;
	int nth;                    /* threads in the team */
	/* scratch, sized for the largest batch (Tm rows) */
	float *x;      /* [Tm][E] hidden state */
	float *qkv;    /* [Tm][3E] */
	float *ctx;    /* [Tm][E] attention output */
	float *h;      /* [Tm][E] projection output */
	float *ff;     /* [Tm][F] */
	float *scores; /* nth * QCHUNK * Lmax */
	size_t lmax;   /* longest sequence */
	int small;     /* the small-batch kernels do the dense products */
	int f32;       /* the f32 copies exist (seen at the start)     */
	float *wbuf;   /* nth * 2 * kmax floats: widened weight rows */
	size_t kmax;   /* max(E, F) */
};

struct worker {
	struct run *r;  /* the shared call */
	int tid;        /* 0..nth-1 */
	pthread_t th;   /* the thread (tid > 0) */
};

/* This thread's part [*a, *b) of n items, split in multiples of align. */
static void share(size_t n, int nth, int tid, size_t align, size_t *a,
		  size_t *b)
{
	size_t units = (n + align - 1) / align;
	size_t per = units / (size_t)nth, extra = units % (size_t)nth;
	size_t t = (size_t)tid;
	size_t u0 = t * per + (t < extra ? t : extra);
	size_t u1 = u0 + per + (t < extra ? 1 : 0);

	*a = u0 * align < n ? u0 * align : n;
	*b = u1 * align < n ? u1 * align : n;
}

/*
 * Four-lane erff and expf from glibc's libmvec (x86-64, glibc >= 2.35;
 * `-lm` links it as needed). Its vector erff and expf are within 1-2 ulp,
 * as close to exact as the scalar ones for f32 work; elsewhere the scalar
 * functions do every element.
 */
#if defined(__x86_64__) && defined(__GLIBC__) &&                          \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <immintrin.h>
#define BERT_VEC4 1
__m128 _ZGVbN4v_erff(__m128 x);
__m128 _ZGVbN4v_expf(__m128 x);
#endif

/* GELU, the exact erf form, over n floats in place. */
static void gelu_row(float *c, size_t n)
{
	size_t j = 0;

#ifdef BERT_VEC4
	const __m128 half = _mm_set1_ps(0.5f), one = _mm_set1_ps(1.0f);
	const __m128 r2 = _mm_set1_ps((float)M_SQRT1_2);

	for (; j + 4 <= n; j += 4) {
		__m128 x = _mm_loadu_ps(c + j);
		__m128 e = _ZGVbN4v_erff(_mm_mul_ps(x, r2));

		_mm_storeu_ps(c + j, _mm_mul_ps(_mm_mul_ps(half, x),
						_mm_add_ps(one, e)));
	}
#endif
	for (; j < n; j++)
		c[j] = 0.5f * c[j] * (1.0f + erff(c[j] * (float)M_SQRT1_2));
}

/* row[j] = exp(row[j] - mx) over n floats; returns their sum. */
static float exp_row(float *row, size_t n, float mx)
{
	float sum = 0.0f;
	size_t j = 0;

#ifdef BERT_VEC4
	const __m128 m = _mm_set1_ps(mx);
	__m128 acc = _mm_setzero_ps();
	float part[4];

	for (; j + 4 <= n; j += 4) {
		__m128 e = _ZGVbN4v_expf(_mm_sub_ps(_mm_loadu_ps(row + j), m));

		_mm_storeu_ps(row + j, e);
		acc = _mm_add_ps(acc, e);
	}
	_mm_storeu_ps(part, acc);
	sum = (part[0] + part[1]) + (part[2] + part[3]);
#endif
	for (; j < n; j++) {
		row[j] = expf(row[j] - mx);
		sum += row[j];
	}
	return sum;
}

/*
 * Small-batch kernels (x86-64 with AVX2, FMA and F16C, chosen at run time):
 * C = X W^T + bias with W read straight from the file, one pass over the
 * weights. A query of a few dozen tokens makes OpenBLAS pack (copy) every
 * weight matrix for a handful of rows; here each weight row is widened to
 * f32 once (exactly the value quant_dequant gives: f16/bf16 widen
 * exactly, q8_0 is q * d with both exact in f32) and used against all
 * rows of X, four rows by two columns at a time, f32 accumulation in FMA.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define BERT_AVX2 1
#define BERT_TARGET __attribute__((target("avx2,fma,f16c")))

int bert_cpu_kernels(void)
{
	unsigned a, b, c, d;

	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
		return 0;
	/* F16C: CPUID leaf 1, ECX bit 29 (avx2 implies the OS saves ymm) */
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	return (c >> 29) & 1u;
}

/* Row n of w as K floats: a pointer into the file for aligned f32, else
 * widened into buf. */
BERT_TARGET static const float *row_f32(const struct wmat *w, size_t n,
					size_t K, float *buf)
{
	const unsigned char *src = w->data + n * w->row_bytes;
	size_t k = 0, j;

	switch (w->type) {
	case GGML_TYPE_F32:
		if (((uintptr_t)src & 3) == 0)
			return (const float *)(const void *)src;
		memcpy(buf, src, K * sizeof(float));
		return buf;
	case GGML_TYPE_F16:
		for (; k + 8 <= K; k += 8)
			_mm256_storeu_ps(buf + k, _mm256_cvtph_ps(_mm_loadu_si128(
					(const __m128i *)(const void *)(src + 2 * k))));
		break;
	case GGML_TYPE_BF16:
		for (; k + 8 <= K; k += 8) {
			__m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(
				(const __m128i *)(const void *)(src + 2 * k)));

			_mm256_storeu_ps(buf + k, _mm256_castsi256_ps(
						    _mm256_slli_epi32(v, 16)));
		}
		break;
	case GGML_TYPE_Q8_0:
		/* rows are whole blocks of 32 (checked at load) */
		for (; k + 32 <= K; k += 32) {
			const unsigned char *blk = src + (k / 32) * 34;
			uint16_t h;
			__m256 d;

			memcpy(&h, blk, 2);
			d = _mm256_set1_ps(_mm_cvtss_f32(
				_mm_cvtph_ps(_mm_cvtsi32_si128((int)h))));
			for (j = 0; j < 32; j += 8) {
				__m128i q = _mm_loadl_epi64(
					(const __m128i *)(const void *)(blk + 2 + j));
				__m256 f = _mm256_cvtepi32_ps(
					_mm256_cvtepi8_epi32(q));

				_mm256_storeu_ps(buf + k + j, _mm256_mul_ps(f, d));
			}
		}
		break;
	default:
		break;
	}
	if (k < K)
		(void)quant_dequant(w->type,
				    src + quant_row_bytes(w->type, k), buf + k,
				    K - k);
	return buf;
}

BERT_TARGET static inline float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/*
 * C[t][n] = bias[n] + X[t] . W[n] for t < T, n in [n0, n1); C has ldc
 * floats a row; buf holds 2K floats.
 */
BERT_TARGET static void small_gemm(const float *X, size_t T, size_t K,
				   const struct wmat *w, size_t n0, size_t n1,
				   const float *bias, float *C, size_t ldc,
				   float *buf)
{
	size_t n, t, k, K8 = K & ~(size_t)7;
	int i;

	for (n = n0; n < n1; n += 2) {
		size_t n2 = n + 1 < n1 ? n + 1 : n;
		const float *w0 = row_f32(w, n, K, buf);
		const float *w1 = row_f32(w, n2, K, buf + K);

		for (t = 0; t < T; t += 4) {
			/* rows past T repeat the last one; not stored */
			const float *x0 = X + t * K;
			const float *x1 = X + (t + 1 < T ? t + 1 : T - 1) * K;
			const float *x2 = X + (t + 2 < T ? t + 2 : T - 1) * K;
			const float *x3 = X + (t + 3 < T ? t + 3 : T - 1) * K;
			const float *x[4];
			__m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00,
			       a03 = a00, a10 = a00, a11 = a00, a12 = a00,
			       a13 = a00;
			float s0[4], s1[4];

			for (k = 0; k < K8; k += 8) {
				__m256 v0 = _mm256_loadu_ps(w0 + k);
				__m256 v1 = _mm256_loadu_ps(w1 + k);
				__m256 y;

				y = _mm256_loadu_ps(x0 + k);
				a00 = _mm256_fmadd_ps(v0, y, a00);
				a10 = _mm256_fmadd_ps(v1, y, a10);
				y = _mm256_loadu_ps(x1 + k);
				a01 = _mm256_fmadd_ps(v0, y, a01);
				a11 = _mm256_fmadd_ps(v1, y, a11);
				y = _mm256_loadu_ps(x2 + k);
				a02 = _mm256_fmadd_ps(v0, y, a02);
				a12 = _mm256_fmadd_ps(v1, y, a12);
				y = _mm256_loadu_ps(x3 + k);
				a03 = _mm256_fmadd_ps(v0, y, a03);
				a13 = _mm256_fmadd_ps(v1, y, a13);
			}
			s0[0] = hsum8(a00);
			s0[1] = hsum8(a01);
			s0[2] = hsum8(a02);
			s0[3] = hsum8(a03);
			s1[0] = hsum8(a10);
			s1[1] = hsum8(a11);
			s1[2] = hsum8(a12);
			s1[3] = hsum8(a13);
			x[0] = x0;
			x[1] = x1;
			x[2] = x2;
			x[3] = x3;
			for (i = 0; i < 4 && t + (size_t)i < T; i++) {
				for (k = K8; k < K; k++) {
					s0[i] += w0[k] * x[i][k];
					s1[i] += w1[k] * x[i][k];
				}
				C[(t + (size_t)i) * ldc + n] = bias[n] + s0[i];
				if (n2 != n)
					C[(t + (size_t)i) * ldc + n2] =
						bias[n2] + s1[i];
			}
		}
	}
}
#else
int bert_cpu_kernels(void)
{
	return 0;
}
#endif

/*
 * C[T x N] = X[T x K] W^T + bias for this thread's columns, W [N x K]
 * row-major (ggml's {K, N}): the file's np parts through the small-batch
 * kernel (r->small), else the f32 copy W through OpenBLAS; then GELU on
 * those columns when gelu.
 */
static void linear(const struct run *r, int tid, const float *X, size_t T,
		   size_t K, const struct wmat *parts, int np, const float *W,
		   const float *bias, size_t N, float *C, int gelu)
{
	size_t a, b, t;

	share(N, r->nth, tid, 16, &a, &b);
	if (a >= b || T == 0)
		return;
#ifdef BERT_AVX2
	if (r->small) {
		float *buf = r->wbuf + (size_t)tid * 2 * r->kmax;
		struct wmat w32;
		size_t base = 0;
		int p;

		if (W) {
			/* the f32 copies exist (the file's pages were given
			 * back): read those */
			w32.type = GGML_TYPE_F32;
			w32.data = (const unsigned char *)W;
			w32.row_bytes = K * sizeof(float);
			w32.rows = N;
			parts = &w32;
			np = 1;
		}
		for (p = 0; p < np; p++) {
			size_t lo = a > base ? a : base;
			size_t hi = b < base + parts[p].rows ? b
							     : base + parts[p].rows;

			if (lo < hi)
				small_gemm(X, T, K, &parts[p], lo - base,
					   hi - base, bias + base, C + base, N,
					   buf);
			base += parts[p].rows;
		}
		goto act;
	}
#else
	(void)parts;
	(void)np;
#endif
	/* C starts as the bias and the product is added (beta = 1): no
	 * separate bias pass, and OpenBLAS skips zeroing C */
	for (t = 0; t < T; t++)
		memcpy(C + t * N + a, bias + a, (b - a) * sizeof(float));
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T,
		    (int)(b - a), (int)K, 1.0f, X, (int)K, W + a * K, (int)K,
		    1.0f, C + a, (int)N);
#ifdef BERT_AVX2
act:
#endif
	if (!gelu)
		return;
	for (t = 0; t < T; t++)
		gelu_row(C + t * N + a, b - a);
}

/* y = LayerNorm(x (+ add)) * w + b over n floats, in place on x. */
static void layer_norm(float *x, const float *add, size_t n, const float *w,
		       const float *b, float eps)
{
	double sum = 0.0, var = 0.0, mean;
	float mf, inv;
	size_t i;

	if (add)
		for (i = 0; i < n; i++)
			x[i] += add[i];
	for (i = 0; i < n; i++)
		sum += x[i];
	mean = sum / (double)n;
	for (i = 0; i < n; i++) {
		double d = x[i] - mean;

		var += d * d;
	}
	mf = (float)mean;
	inv = (float)(1.0 / sqrt(var / (double)n + (double)eps));
	for (i = 0; i < n; i++)
		x[i] = (x[i] - mf) * inv * w[i] + b[i];
}

/* Rows [a, b) of the batch get x = LayerNorm(x + add). */
static void norm_rows(const struct run *r, int tid, size_t T, const float *add,
		      const float *w, const float *bb)
{
	size_t E = (size_t)r->m->n_embd, a, b, t;

	share(T, r->nth, tid, 1, &a, &b);
	for (t = a; t < b; t++)
		layer_norm(r->x + t * E, add ? add + t * E : NULL, E, w, bb,
			   r->m->eps);
}

/* Token, position and type embeddings, then token_embd_norm. */
static void embed_rows(const struct run *r, int tid, const struct batch *bt,
		       float *tmp)
{
	const struct bert_model *m = r->m;
	size_t E = (size_t)m->n_embd, s, i;
	const unsigned char *base = m->tok_embd->data;
	const unsigned char *pbase = m->pos_t->data;
	size_t prow = (size_t)quant_row_bytes(m->pos_t->type, E);

	for (s = bt->s0; s < bt->s1; s++) {
		size_t a, b;

		/* split each sequence's rows so short batches share too */
		share(r->lens[s], r->nth, tid, 1, &a, &b);
		for (i = a; i < b; i++) {
			float *x = r->x + (r->offs[s] + i) * E;
			const float *p = tmp;
			size_t j;

			if (m->pos_embd)
				p = m->pos_embd + i * E;
			else
				quant_dequant(m->pos_t->type, pbase + i * prow,
					      tmp, E);

			quant_dequant(m->tok_embd->type,
				      base + (size_t)r->seqs[s][i] *
						     m->tok_row_bytes,
				      x, E);
			for (j = 0; j < E; j++)
				x[j] += p[j] + m->type0[j];
			layer_norm(x, NULL, E, m->embd_ln_w, m->embd_ln_b,
				   m->eps);
		}
	}
}

/* Attention of one (sequence, head): ctx rows of the sequence, head cols. */
static void attend(const struct run *r, size_t s, int head, float *S)
{
	const struct bert_model *m = r->m;
	size_t E = (size_t)m->n_embd, E3 = 3 * E;
	size_t d = E / (size_t)m->n_head, L = r->lens[s], off = r->offs[s];
	const float *q = r->qkv + off * E3 + (size_t)head * d;
	const float *k = q + E, *v = q + 2 * E;
	float *o = r->ctx + off * E + (size_t)head * d;
	float scale = 1.0f / sqrtf((float)d);
	size_t r0, i, j, t;

	if (r->small) {
		/* a short call runs without OpenBLAS (it is never loaded for
		 * one): L <= BERT_SMALL_ROWS, so the products are tiny; four
		 * partial sums per dot, as a vectorised BLAS would keep */
		for (i = 0; i < L; i++) {
			const float *qi = q + i * E3;
			float mx, sum;

			for (j = 0; j < L; j++) {
				const float *kj = k + j * E3;
				float a0 = 0, a1 = 0, a2 = 0, a3 = 0;

				for (t = 0; t + 4 <= d; t += 4) {
					a0 += qi[t] * kj[t];
					a1 += qi[t + 1] * kj[t + 1];
					a2 += qi[t + 2] * kj[t + 2];
					a3 += qi[t + 3] * kj[t + 3];
				}
				for (; t < d; t++)
					a0 += qi[t] * kj[t];
				S[j] = ((a0 + a1) + (a2 + a3)) * scale;
			}
			mx = S[0];
			for (j = 1; j < L; j++)
				if (S[j] > mx)
					mx = S[j];
			sum = 1.0f / exp_row(S, L, mx);
			for (t = 0; t < d; t++)
				o[i * E + t] = 0.0f;
			for (j = 0; j < L; j++) {
				const float *vj = v + j * E3;
				float p = S[j] * sum;

				for (t = 0; t < d; t++)
					o[i * E + t] += p * vj[t];
			}
		}
		return;
	}
	for (r0 = 0; r0 < L; r0 += BERT_QCHUNK) {
		size_t nq = L - r0 < BERT_QCHUNK ? L - r0 : BERT_QCHUNK;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq,
			    (int)L, (int)d, scale, q + r0 * E3, (int)E3, k,
			    (int)E3, 0.0f, S, (int)L);
		for (i = 0; i < nq; i++) {
			float *row = S + i * L, mx = row[0], sum;

			for (j = 1; j < L; j++)
				if (row[j] > mx)
					mx = row[j];
			sum = 1.0f / exp_row(row, L, mx);
			for (j = 0; j < L; j++)
				row[j] *= sum;
		}
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq,
			    (int)d, (int)L, 1.0f, S, (int)L, v, (int)E3, 0.0f,
			    o + r0 * E, (int)E);
	}
}

/* Mean / first / last row of each sequence, L2-normalised; or the
 * classifier score from its first row. Thread tid takes its sequences. */
static void pool(const struct run *r, int tid, const struct batch *bt,
		 float *tmp)
{
	const struct bert_model *m = r->m;
	size_t E = (size_t)m->n_embd, s, i, j;

	for (s = bt->s0 + (size_t)tid; s < bt->s1; s += (size_t)r->nth) {
		const float *x = r->x + r->offs[s] * E;
		size_t L = r->lens[s];

		if (r->rank) {
			const float *in = x;
			double acc;

			if (m->cls_w) {
				for (j = 0; j < E; j++) {
					const float *w = m->cls_w + j * E;

					acc = m->cls_b[j];
					for (i = 0; i < E; i++)
						acc += (double)w[i] * in[i];
					tmp[j] = tanhf((float)acc);
				}
				in = tmp;
			}
			if (m->cls_out_w) {
				acc = m->cls_out_b[0];
				for (i = 0; i < E; i++)
					acc += (double)m->cls_out_w[i] * in[i];
				r->out[s] = (float)acc;
			} else {
				/* cls without an output layer: its first
				 * unit (llama.cpp returns that row too) */
				r->out[s] = in[0];
			}
			continue;
		}
		{
			float *o = r->out + s * E;
			double norm = 0.0;

			if (m->pooling == BERT_POOL_CLS) {
				memcpy(o, x, E * sizeof(float));
			} else if (m->pooling == BERT_POOL_LAST) {
				memcpy(o, x + (L - 1) * E, E * sizeof(float));
			} else {
				for (j = 0; j < E; j++) {
					double acc = 0.0;

					for (i = 0; i < L; i++)
						acc += x[i * E + j];
					o[j] = (float)(acc / (double)L);
				}
			}
			for (j = 0; j < E; j++)
				norm += (double)o[j] * o[j];
			if (norm > 0.0) {
				float inv = (float)(1.0 / sqrt(norm));

				for (j = 0; j < E; j++)
					o[j] *= inv;
			}
		}
	}
}

/* The whole forward pass of every batch, as thread tid of the team. */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	const struct bert_model *m = r->m;
	size_t E = (size_t)m->n_embd, F = (size_t)m->n_ff;
	float *S = r->scores + (size_t)w->tid * BERT_QCHUNK * r->lmax;
	size_t ib;
	int il;

	/* the start gate: run() holds the lock until the team is complete */
	if (w->tid > 0) {
		pthread_mutex_lock(&r->team.mu);
		pthread_mutex_unlock(&r->team.mu);
	}
	for (ib = 0; ib < r->n_batches; ib++) {
		const struct batch *bt = &r->batches[ib];
		size_t T = bt->T, ntask = (bt->s1 - bt->s0) * (size_t)m->n_head;

		embed_rows(r, w->tid, bt, S);
		team_wait(&r->team);
		for (il = 0; il < m->n_layer; il++) {
			const struct bert_layer *L = &m->layers[il];
			size_t k;

			linear(r, w->tid, r->x, T, E, L->wqkv, 3, r->f32 ?
			       L->qkv_w : NULL, L->qkv_b, 3 * E, r->qkv, 0);
			team_wait(&r->team);
			for (k = (size_t)w->tid; k < ntask; k += (size_t)r->nth)
				attend(r, bt->s0 + k / (size_t)m->n_head,
				       (int)(k % (size_t)m->n_head), S);
			team_wait(&r->team);
			linear(r, w->tid, r->ctx, T, E, &L->wo, 1, r->f32 ?
			       L->o_w : NULL, L->o_b, E, r->h, 0);
			team_wait(&r->team);
			norm_rows(r, w->tid, T, r->h, L->ln1_w, L->ln1_b);
			team_wait(&r->team);
			linear(r, w->tid, r->x, T, E, &L->wup, 1, r->f32 ?
			       L->up_w : NULL, L->up_b, F, r->ff, 1);
			team_wait(&r->team);
			linear(r, w->tid, r->ff, T, F, &L->wdown, 1, r->f32 ?
			       L->down_w : NULL, L->down_b, E, r->h, 0);
			team_wait(&r->team);
			norm_rows(r, w->tid, T, r->h, L->ln2_w, L->ln2_b);
			team_wait(&r->team);
		}
		/* the scores scratch is free now: the head's tanh layer */
		pool(r, w->tid, bt, S);
		team_wait(&r->team);
	}
	return NULL;
}

/*
 * Check and truncate the sequences, pack them into batches, run the team.
 * rank: write one classifier score per sequence instead of embeddings.
 */
static int run_ids(struct bert_model *m, const int32_t *const *seqs,
		   const size_t *lens, size_t n, float *out, int rank,
		   char *err, size_t errsize)
{
	struct run r;
	struct worker *ws = NULL;
	size_t *tl = NULL, i, j, Tm = 0, E = (size_t)m->n_embd;
	size_t F = (size_t)m->n_ff;
	int rc = CAIRN_NOMEM, t, started = 0, team_init = 0;

	memset(&r, 0, sizeof(r));
	if (n == 0)
		return CAIRN_OK;
	if (!seqs || !lens || !out) {
		bert_set_err(err, errsize, "no sequences or no output buffer");
		return CAIRN_INVALID;
	}
	for (i = 0; i < n; i++) {
		if (lens[i] == 0 || !seqs[i]) {
			bert_set_err(err, errsize, "sequence %zu is empty", i);
			return CAIRN_INVALID;
		}
		for (j = 0; j < lens[i] && j < m->max_tokens; j++)
			if (seqs[i][j] < 0 ||
			    (uint64_t)seqs[i][j] >= m->n_vocab) {
				bert_set_err(err, errsize,
					"token id %ld out of range (vocabulary "
					"of %llu) in sequence %zu",
					(long)seqs[i][j],
					(unsigned long long)m->n_vocab, i);
				return CAIRN_INVALID;
			}
	}
	tl = util_calloc(n, sizeof(*tl));
	r.offs = util_calloc(n, sizeof(*r.offs));
	r.batches = util_calloc(n, sizeof(*r.batches));
	if (!tl || !r.offs || !r.batches)
		goto nomem;
	/* pack consecutive sequences while they fit BERT_BATCH_TOKENS */
	for (i = 0; i < n; i++) {
		struct batch *bt = r.n_batches ? &r.batches[r.n_batches - 1]
					       : NULL;

		tl[i] = lens[i] < m->max_tokens ? lens[i] : m->max_tokens;
		if (tl[i] > r.lmax)
			r.lmax = tl[i];
		if (!bt || bt->T + tl[i] > BERT_BATCH_TOKENS) {
			bt = &r.batches[r.n_batches++];
			bt->s0 = i;
			bt->T = 0;
		}
		r.offs[i] = bt->T;
		bt->T += tl[i];
		bt->s1 = i + 1;
		if (bt->T > Tm)
			Tm = bt->T;
	}
	/* a few short sequences: the kernels over the file's weights; a
	 * large batch: OpenBLAS over the f32 copies (made now if needed) */
	r.small = m->simd && Tm <= BERT_SMALL_ROWS;
	if (!r.small && (rc = bert_ensure_f32(m, err, errsize)))
		goto out;
	r.f32 = __atomic_load_n(&m->f32_ready, __ATOMIC_ACQUIRE);
	r.kmax = E > F ? E : F;
	r.m = m;
	r.seqs = seqs;
	r.lens = tl;
	r.rank = rank;
	r.out = out;
	r.nth = m->threads;
	/* no more threads than there is work for in a small call */
	if ((size_t)r.nth > Tm)
		r.nth = (int)Tm;
	r.x = util_calloc(Tm * E, sizeof(float));
	r.qkv = util_calloc(Tm * 3 * E, sizeof(float));
	r.ctx = util_calloc(Tm * E, sizeof(float));
	r.h = util_calloc(Tm * E, sizeof(float));
	r.ff = util_calloc(Tm * F, sizeof(float));
	r.scores = util_calloc((size_t)r.nth * BERT_QCHUNK *
				       (r.lmax > E ? r.lmax : E),
			       sizeof(float));
	ws = util_calloc((size_t)r.nth, sizeof(*ws));
	if (r.small)
		r.wbuf = util_calloc((size_t)r.nth * 2 * r.kmax, sizeof(float));
	if (!r.x || !r.qkv || !r.ctx || !r.h || !r.ff || !r.scores || !ws ||
	    (r.small && !r.wbuf))
		goto nomem;
	/* pool() borrows a score block of E floats for the tanh layer */
	if (r.lmax < E)
		r.lmax = E;
	if (pthread_mutex_init(&r.team.mu, NULL) != 0)
		goto nomem;
	if (pthread_cond_init(&r.team.cv, NULL) != 0) {
		pthread_mutex_destroy(&r.team.mu);
		goto nomem;
	}
	team_init = 1;
	/* the team's size is fixed before anyone waits: take the lock so no
	 * started thread reaches the barrier before every start is tried */
	pthread_mutex_lock(&r.team.mu);
	for (t = 0; t < r.nth; t++) {
		ws[t].r = &r;
		ws[t].tid = t;
	}
	for (t = 1; t < r.nth; t++) {
		if (pthread_create(&ws[t].th, NULL, work, &ws[t]) != 0)
			break;
		started++;
	}
	/* threads that could not start: their tids are never run, so the
	 * team shrinks and the work is split over those that did */
	r.nth = started + 1;
	r.team.n = r.nth;
	pthread_mutex_unlock(&r.team.mu);
	work(&ws[0]);
	for (t = 1; t <= started; t++)
		pthread_join(ws[t].th, NULL);
	rc = CAIRN_OK;
	goto out;
nomem:
	bert_set_err(err, errsize, "out of memory embedding %zu sequences", n);
	rc = CAIRN_NOMEM;
out:
	if (team_init) {
		pthread_cond_destroy(&r.team.cv);
		pthread_mutex_destroy(&r.team.mu);
	}
	cairn_free(ws);
	cairn_free(r.wbuf);
	cairn_free(r.scores);
	cairn_free(r.ff);
	cairn_free(r.h);
	cairn_free(r.ctx);
	cairn_free(r.qkv);
	cairn_free(r.x);
	cairn_free(r.batches);
	cairn_free(r.offs);
	cairn_free(tl);
	return rc;
}

/* CAIRN_INVALID unless the model's pooling fits the call (rank or not). */
static int check_mode(const struct bert_model *m, int rank, char *err,
		      size_t errsize)
{
	if (rank && m->pooling != BERT_POOL_RANK) {
		bert_set_err(err, errsize, "the model has no rank pooling: it "
			"embeds texts, it does not score pairs");
		return CAIRN_INVALID;
	}
	if (!rank && m->pooling == BERT_POOL_RANK) {
		bert_set_err(err, errsize, "the model is a reranker (rank pooling): "
			"it scores pairs, it does not embed texts");
		return CAIRN_INVALID;
	}
	return CAIRN_OK;
}

int bert_embed_ids(struct bert_model *m, const int32_t *const *seqs,
		   const size_t *lens, size_t n, float *out, char *err,
		   size_t errsize)
{
	int rc = check_mode(m, 0, err, errsize);

	return rc ? rc : run_ids(m, seqs, lens, n, out, 0, err, errsize);
}

int bert_rank_ids(struct bert_model *m, const int32_t *const *seqs,
		  const size_t *lens, size_t n, float *scores, char *err,
		  size_t errsize)
{
	int rc = check_mode(m, 1, err, errsize);

	return rc ? rc : run_ids(m, seqs, lens, n, scores, 1, err, errsize);
}

/* ================================================================= texts */

static int need_vocab(const struct bert_model *m, char *err, size_t errsize)
{
	if (m->vocab)
		return CAIRN_OK;
	bert_set_err(err, errsize, "the model file has no tokenizer "
		"(tokenizer.ggml.* metadata): texts cannot be embedded");
	return CAIRN_INVALID;
}

/*
 * Tokenise texts in groups of BERT_TEXT_GROUP and run them: embeddings
 * (query NULL; n_embd floats per text) or cross-encoder scores of
 * (query, texts[i]) pairs (one float per text).
 */
static int run_texts(struct bert_model *m, const char *query,
		     const char *const *texts, size_t n, float *out,
		     char *err, size_t errsize)
{
	size_t g = n < BERT_TEXT_GROUP ? n : BERT_TEXT_GROUP, i0, i;
	size_t cap = m->max_tokens, qlen = query ? strlen(query) : 0;
	size_t stride = query ? 1 : (size_t)m->n_embd;
	int32_t *ids = NULL;
	const int32_t **seqs = NULL;
	size_t *lens = NULL;
	int rc;

	if (n == 0)
		return CAIRN_OK;
	if ((rc = check_mode(m, query != NULL, err, errsize)) ||
	    (rc = need_vocab(m, err, errsize)))
		return rc;
	ids = util_calloc(g * cap, sizeof(*ids));
	seqs = util_calloc(g, sizeof(*seqs));
	lens = util_calloc(g, sizeof(*lens));
	if (!ids || !seqs || !lens) {
		bert_set_err(err, errsize, "out of memory %s %zu texts",
			query ? "ranking" : "embedding", n);
		rc = CAIRN_NOMEM;
		goto out;
	}
	for (i0 = 0; i0 < n; i0 += g) {
		size_t k = n - i0 < g ? n - i0 : g;

		for (i = 0; i < k; i++) {
			const char *t = texts[i0 + i] ? texts[i0 + i] : "";

			seqs[i] = ids + i * cap;
			rc = query ? vocab_encode_pair(m->vocab, query, qlen, t,
						       strlen(t), ids + i * cap,
						       cap, &lens[i])
				   : vocab_encode(m->vocab, t, strlen(t), 1,
						  ids + i * cap, cap, &lens[i]);
			if (rc) {
				bert_set_err(err, errsize, "cannot tokenise %s%zu (%s)",
					query ? "the query or document "
					      : "text ",
					i0 + i,
					rc == CAIRN_INVALID ? "invalid UTF-8"
							    : "out of memory");
				goto out;
			}
		}
		rc = run_ids(m, seqs, lens, k, out + i0 * stride,
			     query != NULL, err, errsize);
		if (rc)
			goto out;
	}
out:
	cairn_free(lens);
	cairn_free(seqs);
	cairn_free(ids);
	return rc;
}

int bert_embed(struct bert_model *m, const char *const *texts, size_t n,
	       float *out, char *err, size_t errsize)
{
	return run_texts(m, NULL, texts, n, out, err, errsize);
}

int bert_rank(struct bert_model *m, const char *query,
	      const char *const *docs, size_t n, float *scores, char *err,
	      size_t errsize)
{
	return run_texts(m, query ? query : "", docs, n, scores, err,
			 errsize);
}
