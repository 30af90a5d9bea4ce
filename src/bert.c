/*
 * bert.c -- the built-in embedding runtime: a BERT-family encoder (BertModel,
 * XLM-RoBERTa) read from a GGUF file in llama.cpp's `bert` layout.
 *
 * Layer: model files, above gguf.h, quant.h and vocab.h; OpenBLAS for the
 * matrix products. Used by embed_gguf.c.
 *
 * Holds: loading and validating the model (hyper-parameters from the
 * `bert.*` keys, every tensor's name, type and shape checked against them
 * before anything is allocated), the file's SHA-256 with its cache, the
 * small-batch AVX2 kernels, f32 copies of the matrices for OpenBLAS (made
 * only when a large batch needs them), and the forward pass:
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
 * Tensor layout: a ggml matrix with ne = {in, out} is `out` rows of `in`
 * floats, i.e. PyTorch's Linear weight; y = x W^T. Split attn_q/k/v
 * matrices are concatenated at load into one [3E x E] matrix so one GEMM
 * makes Q, K and V, as for a fused attn_qkv.
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
 * Must never: crash or read outside the mapping on a malformed file (every
 * shape is checked at load, every token id at embed), allocate in the
 * middle of the forward pass (each call allocates its scratch up front),
 * or write to the weights after load (concurrent calls share them; the f32
 * copies are made once, under a mutex, and published with a release
 * store before any call reads them), or hash the whole file on every open
 * (bert_sha256 keeps the digest in the cache directory).
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

/* Load OpenBLAS once, when first needed; CAIRN_IO when it cannot be. */
static int blas_need(char *err, size_t errsize)
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

/* Limits on the hyper-parameters (published BERT-family encoders are far
 * below them; they keep every size computation inside size_t). */
#define BERT_MAX_EMBD 16384
#define BERT_MAX_LAYERS 256
#define BERT_MAX_HEADS 256
#define BERT_MAX_FF 131072
#define BERT_MAX_CTX 65536
#define BERT_MAX_CLS_OUT 4096
#define BERT_MAX_THREADS 64
#define BERT_MAX_KEY 96

/* Tokens packed into one forward pass (a longer single sequence gets a
 * batch of its own). 1024 rows keep the GEMMs efficient while the scratch
 * of a bge-small batch stays near 20 MB. */
#define BERT_BATCH_TOKENS 1024
/* Query rows per block of attention scores (scratch: QCHUNK x seq len). */
#define BERT_QCHUNK 64
/* Batches of at most this many rows run on the small-batch kernels (one
 * pass over the weights in their file type); larger ones through OpenBLAS
 * on f32 copies. Chosen by bench/embed_bench (see bench/README.md). */
#ifndef BERT_SMALL_ROWS
#define BERT_SMALL_ROWS 96
#endif
/* Texts tokenised per forward group in bert_embed(). */
#define BERT_TEXT_GROUP 64

/*
 * One weight matrix (or one part of the QKV matrix) in its file type inside
 * the mapping: rows of row_bytes bytes, each `in` elements long.
 */
struct wmat {
	uint32_t type;              /* F32, F16, BF16 or Q8_0 for the kernels */
	const unsigned char *data;  /* first row */
	size_t row_bytes;           /* bytes of one row */
	size_t rows;                /* output columns of this part */
};

struct bert_layer {
	/* the matrices in the file (the small-batch kernels read these);
	 * QKV as three parts of E rows (split, or the fused tensor cut) */
	struct wmat wqkv[3], wo, wup, wdown;
	/* f32 copies for the OpenBLAS path: made at load when the kernels
	 * cannot run, else on the first large batch (NULL until then) */
	const float *qkv_w;  /* [3E][E]: Q rows, then K, then V */
	const float *qkv_b;  /* [3E] */
	const float *o_w;    /* [E][E] attn_output */
	const float *o_b;    /* [E] */
	const float *ln1_w;  /* [E] attn_output_norm */
	const float *ln1_b;  /* [E] */
	const float *up_w;   /* [F][E] ffn_up */
	const float *up_b;   /* [F] */
	const float *down_w; /* [E][F] ffn_down */
	const float *down_b; /* [E] */
	const float *ln2_w;  /* [E] layer_output_norm */
	const float *ln2_b;  /* [E] */
};

struct bert_model {
	struct gguf *g;            /* the open file; token rows are read from it */
	struct vocab *vocab;       /* NULL when the file has no tokenizer */
	char arch[32];             /* general.architecture */
	char name[128];            /* general.name, "" when absent */
	int n_embd;                /* E */
	int n_layer;
	int n_head;
	int n_ff;                  /* F */
	int n_ctx;                 /* rows of the position table */
	uint64_t n_vocab;          /* rows of token_embd */
	float eps;                 /* LayerNorm epsilon */
	int pooling;               /* effective enum bert_pooling */
	int threads;               /* team size of one call */
	size_t max_tokens;         /* truncation length, <= n_ctx */
	const struct gguf_tensor *tok_embd; /* in its file type, in the mapping */
	uint64_t tok_row_bytes;    /* bytes of one token_embd row */
	const float *pos_embd;     /* [n_ctx][E] when f32 in the file, else NULL */
	const struct gguf_tensor *pos_t; /* position_embd in its file type */
	const float *type0;        /* [E]: token type 0, zeros when absent */
	const float *embd_ln_w;    /* [E] token_embd_norm */
	const float *embd_ln_b;    /* [E] */
	struct bert_layer *layers; /* n_layer */
	const float *cls_w;        /* [E][E] or NULL (rank head, dense + tanh) */
	const float *cls_b;        /* [E] or NULL */
	const float *cls_out_w;    /* [n_cls_out][E] or NULL (rank head, output) */
	const float *cls_out_b;    /* [n_cls_out] or NULL */
	int n_cls_out;             /* rows of cls.output; the score is row 0 */
	const unsigned char *data_lo; /* first byte of tensor data in the map */
	const unsigned char *data_hi; /* end of the tensor data in the map */
	float **owned;             /* f32 buffers this model allocated */
	size_t n_owned;            /* used entries of owned */
	size_t cap_owned;          /* capacity of owned */
	int simd;                  /* the AVX2 kernels run on every matrix */
	int f32_ready;             /* (atomic) the f32 copies exist */
	pthread_mutex_t f32_mu;    /* guards making the f32 copies */
	int mu_init;               /* f32_mu is initialised */
	char *path;                /* the file, for the SHA-256 cache */
	struct stat st;            /* its identity when opened */
	int st_ok;                 /* st is valid (unchanged across open) */
	char sha[65];              /* the file's SHA-256, "" until known */
	pthread_mutex_t sha_mu;    /* guards sha */
};

/* ========================================================== load helpers */

static void set_err(char *err, size_t errsize, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errsize)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
}

/* Copy a gguf string into a NUL-terminated buffer (truncating). */
static void copy_str(char *dst, size_t size, const struct gguf_str *s)
{
	size_t n = s->len < size - 1 ? (size_t)s->len : size - 1;

	memcpy(dst, s->s, n);
	dst[n] = '\0';
}

/* Read a required integer hyper-parameter "<arch>.<key>" into 1..max. */
static int get_hparam(const struct bert_model *m, const char *key, int max,
		      int *out, char *err, size_t errsize)
{
	char full[BERT_MAX_KEY];
	int64_t v;

	snprintf(full, sizeof(full), "%s.%s", m->arch, key);
	if (gguf_find(m->g, full) < 0) {
		set_err(err, errsize, "missing key '%s'", full);
		return CAIRN_INVALID;
	}
	if (gguf_get_i64(m->g, full, &v) != 0) {
		set_err(err, errsize, "key '%s' is not an integer", full);
		return CAIRN_INVALID;
	}
	if (v < 1 || v > max) {
		set_err(err, errsize, "key '%s' is %lld, outside 1..%d", full,
			(long long)v, max);
		return CAIRN_INVALID;
	}
	*out = (int)v;
	return CAIRN_OK;
}

/*
 * Find tensor `name` and check it: absent (-> NULL, or an error when
 * required), a supported type, rows of whole blocks, and exactly the shape
 * [ne0, ne1] (ne1 = 1 for vectors; higher dimensions 1).
 */
static int find_tensor(const struct bert_model *m, const char *name,
		       uint64_t ne0, uint64_t ne1, int required,
		       const struct gguf_tensor **out, char *err,
		       size_t errsize)
{
	const struct gguf_tensor *t = gguf_tensor(m->g, name);

	*out = NULL;
	if (!t) {
		if (!required)
			return CAIRN_OK;
		set_err(err, errsize, "tensor '%s' is missing", name);
		return CAIRN_INVALID;
	}
	if (!quant_supported(t->type)) {
		set_err(err, errsize,
			"tensor '%s' has unsupported type %s (%u)", name,
			quant_type_name(t->type), (unsigned)t->type);
		return CAIRN_INVALID;
	}
	if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 ||
	    t->ne[3] != 1) {
		set_err(err, errsize,
			"tensor '%s' has shape [%llu, %llu, %llu, %llu], "
			"expected [%llu, %llu]",
			name, (unsigned long long)t->ne[0],
			(unsigned long long)t->ne[1],
			(unsigned long long)t->ne[2],
			(unsigned long long)t->ne[3],
			(unsigned long long)ne0, (unsigned long long)ne1);
		return CAIRN_INVALID;
	}
	if (quant_row_bytes(t->type, ne0) == 0 ||
	    quant_row_bytes(t->type, ne0) * ne1 != t->nbytes) {
		set_err(err, errsize,
			"tensor '%s': rows of %llu %s elements are not whole "
			"blocks", name, (unsigned long long)ne0,
			quant_type_name(t->type));
		return CAIRN_INVALID;
	}
	*out = t;
	return CAIRN_OK;
}

/* A new zeroed f32 buffer of n floats, owned by m; NULL when out of memory. */
static float *owned_buf(struct bert_model *m, size_t n)
{
	float *p;

	if (m->n_owned == m->cap_owned) {
		size_t cap = m->cap_owned ? m->cap_owned * 2 : 64;
		float **o = util_realloc(m->owned, cap * sizeof(*o));

		if (!o)
			return NULL;
		m->owned = o;
		m->cap_owned = cap;
	}
	p = util_calloc(n, sizeof(float));
	if (p)
		m->owned[m->n_owned++] = p;
	return p;
}

/* Dequantise all of t into dst (t was checked by find_tensor). */
static int dequant_into(const struct gguf_tensor *t, float *dst, char *err,
			size_t errsize)
{
	if (quant_dequant(t->type, t->data, dst, t->nelem) != 0) {
		set_err(err, errsize, "cannot dequantise tensor '%s'", t->name);
		return CAIRN_INVALID;
	}
	return CAIRN_OK;
}

/*
 * The f32 values of t: the mapping itself for an aligned f32 tensor,
 * else a new owned buffer. t may be NULL (optional and absent): then a
 * zero vector of n floats when zero_if_absent, else NULL.
 */
static int weights(struct bert_model *m, const struct gguf_tensor *t,
		   size_t n, int zero_if_absent, const float **out, char *err,
		   size_t errsize)
{
	float *p;

	*out = NULL;
	if (!t) {
		if (!zero_if_absent)
			return CAIRN_OK;
		if (!(p = owned_buf(m, n)))
			goto nomem;
		*out = p;
		return CAIRN_OK;
	}
	if (t->type == GGML_TYPE_F32 && ((uintptr_t)t->data & 3) == 0) {
		*out = t->data;
		return CAIRN_OK;
	}
	if (!(p = owned_buf(m, t->nelem)))
		goto nomem;
	*out = p;
	return dequant_into(t, p, err, errsize);
nomem:
	set_err(err, errsize, "out of memory loading the model");
	return CAIRN_NOMEM;
}

/*
 * Give back the resident pages of the file's tensor data (a read-only
 * private file mapping: pages come back from the file if touched again).
 * After load every matrix lives in its f32 copy; only token_embd rows
 * (looked up per token) and f32 tensors used in place are read from the
 * mapping again, and they fault back in as they are used. Keeps the
 * resident set to the f32 weights plus the rows in use.
 */
static void drop_pages(const struct bert_model *m)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;

	if (!m->data_lo || pg <= 0)
		return;
	lo = ((uintptr_t)m->data_lo + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	hi = (uintptr_t)m->data_hi & ~((uintptr_t)pg - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* The span of all tensor data inside the mapping. */
static void data_span(struct bert_model *m)
{
	size_t i, n = gguf_n_tensors(m->g);

	for (i = 0; i < n; i++) {
		const struct gguf_tensor *t = gguf_tensor_at(m->g, i);
		const unsigned char *a = t->data, *b = a + t->nbytes;

		if (!m->data_lo || a < m->data_lo)
			m->data_lo = a;
		if (!m->data_hi || b > m->data_hi)
			m->data_hi = b;
	}
}

/* The tensors of one layer, found and checked before any allocation. */
struct layer_tensors {
	const struct gguf_tensor *qkv_w, *qkv_b;
	const struct gguf_tensor *q_w, *q_b, *k_w, *k_b, *v_w, *v_b;
	const struct gguf_tensor *o_w, *o_b, *ln1_w, *ln1_b;
	const struct gguf_tensor *up_w, *up_b, *down_w, *down_b;
	const struct gguf_tensor *ln2_w, *ln2_b;
};

static int find_layer(const struct bert_model *m, int il,
		      struct layer_tensors *lt, char *err, size_t errsize)
{
	uint64_t E = (uint64_t)m->n_embd, F = (uint64_t)m->n_ff;
	char nm[GGUF_MAX_NAME];
	int rc = CAIRN_OK;

	memset(lt, 0, sizeof(*lt));
#define T(field, suffix, a, b, req)                                          \
	do {                                                                 \
		snprintf(nm, sizeof(nm), "blk.%d.%s", il, suffix);           \
		rc = find_tensor(m, nm, a, b, req, &lt->field, err, errsize); \
		if (rc)                                                      \
			return rc;                                           \
	} while (0)
	/* fused QKV when present (llama.cpp prefers it), else split Q/K/V */
	T(qkv_w, "attn_qkv.weight", E, 3 * E, 0);
	if (lt->qkv_w) {
		T(qkv_b, "attn_qkv.bias", 3 * E, 1, 0);
	} else {
		T(q_w, "attn_q.weight", E, E, 1);
		T(q_b, "attn_q.bias", E, 1, 1);
		T(k_w, "attn_k.weight", E, E, 1);
		T(k_b, "attn_k.bias", E, 1, 1);
		T(v_w, "attn_v.weight", E, E, 1);
		T(v_b, "attn_v.bias", E, 1, 1);
	}
	T(o_w, "attn_output.weight", E, E, 1);
	T(o_b, "attn_output.bias", E, 1, 1);
	T(ln1_w, "attn_output_norm.weight", E, 1, 1);
	T(ln1_b, "attn_output_norm.bias", E, 1, 1);
	T(up_w, "ffn_up.weight", E, F, 1);
	T(up_b, "ffn_up.bias", F, 1, 1);
	T(down_w, "ffn_down.weight", F, E, 1);
	T(down_b, "ffn_down.bias", E, 1, 1);
	T(ln2_w, "layer_output_norm.weight", E, 1, 1);
	T(ln2_b, "layer_output_norm.bias", E, 1, 1);
#undef T
	return rc;
}

static struct wmat wmat_of(const struct gguf_tensor *t, size_t row0,
			   size_t rows)
{
	struct wmat w;
	size_t rb = (size_t)quant_row_bytes(t->type, t->ne[0]);

	w.type = t->type;
	w.row_bytes = rb;
	w.data = (const unsigned char *)t->data + row0 * rb;
	w.rows = rows;
	return w;
}

static int cpu_kernels(void);

/* The types the small-batch kernels read straight from the file. */
static int kernel_type(uint32_t type)
{
	return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 ||
	       type == GGML_TYPE_BF16 || type == GGML_TYPE_Q8_0;
}

/* Record the layer's matrices as they lie in the file, and its small
 * vectors (biases, norms) as f32. */
static int load_layer(struct bert_model *m, const struct layer_tensors *lt,
		      struct bert_layer *L, char *err, size_t errsize)
{
	size_t E = (size_t)m->n_embd, F = (size_t)m->n_ff;
	int rc;

#define W(dst, t, n, zero)                                                   \
	do {                                                                 \
		rc = weights(m, t, n, zero, &L->dst, err, errsize);          \
		if (rc)                                                      \
			return rc;                                           \
	} while (0)
	if (lt->qkv_w) {
		L->wqkv[0] = wmat_of(lt->qkv_w, 0, E);
		L->wqkv[1] = wmat_of(lt->qkv_w, E, E);
		L->wqkv[2] = wmat_of(lt->qkv_w, 2 * E, E);
		W(qkv_b, lt->qkv_b, 3 * E, 1);
	} else {
		float *b = owned_buf(m, 3 * E);

		if (!b) {
			set_err(err, errsize, "out of memory loading the model");
			return CAIRN_NOMEM;
		}
		L->wqkv[0] = wmat_of(lt->q_w, 0, E);
		L->wqkv[1] = wmat_of(lt->k_w, 0, E);
		L->wqkv[2] = wmat_of(lt->v_w, 0, E);
		if ((rc = dequant_into(lt->q_b, b, err, errsize)) ||
		    (rc = dequant_into(lt->k_b, b + E, err, errsize)) ||
		    (rc = dequant_into(lt->v_b, b + 2 * E, err, errsize)))
			return rc;
		L->qkv_b = b;
	}
	L->wo = wmat_of(lt->o_w, 0, E);
	L->wup = wmat_of(lt->up_w, 0, F);
	L->wdown = wmat_of(lt->down_w, 0, E);
	W(o_b, lt->o_b, E, 0);
	W(ln1_w, lt->ln1_w, E, 0);
	W(ln1_b, lt->ln1_b, E, 0);
	W(up_b, lt->up_b, F, 0);
	W(down_b, lt->down_b, E, 0);
	W(ln2_w, lt->ln2_w, E, 0);
	W(ln2_b, lt->ln2_b, E, 0);
#undef W
	return CAIRN_OK;
}

/* The f32 values of the np parts of one matrix (K inputs per row): the
 * mapping itself for one aligned f32 part, else a new owned buffer. */
static int mat_f32(struct bert_model *m, const struct wmat *parts, int np,
		   size_t K, const float **out)
{
	size_t rows = 0, off = 0;
	float *p;
	int i;

	if (np == 1 && parts[0].type == GGML_TYPE_F32 &&
	    ((uintptr_t)parts[0].data & 3) == 0) {
		*out = (const float *)(const void *)parts[0].data;
		return CAIRN_OK;
	}
	for (i = 0; i < np; i++)
		rows += parts[i].rows;
	if (!(p = owned_buf(m, rows * K)))
		return CAIRN_NOMEM;
	for (i = 0; i < np; i++) {
		if (quant_dequant(parts[i].type, parts[i].data, p + off * K,
				  parts[i].rows * K) != 0)
			return CAIRN_INVALID;
		off += parts[i].rows;
	}
	*out = p;
	return CAIRN_OK;
}

/*
 * Make the f32 copies of every layer matrix (OpenBLAS path), once; later
 * calls return at once. Thread-safe: concurrent calls wait on f32_mu, and
 * a call that sees f32_ready also sees the copies.
 */
static int ensure_f32(struct bert_model *m, char *err, size_t errsize)
{
	size_t E = (size_t)m->n_embd, F = (size_t)m->n_ff;
	int il, rc = CAIRN_OK;

	if (__atomic_load_n(&m->f32_ready, __ATOMIC_ACQUIRE))
		return CAIRN_OK;
	/* the f32 copies are for OpenBLAS: without it they are no use */
	if ((rc = blas_need(err, errsize)))
		return rc;
	if (m->mu_init)
		pthread_mutex_lock(&m->f32_mu);
	for (il = 0; il < m->n_layer && !m->f32_ready; il++) {
		struct bert_layer *L = &m->layers[il];

		if (!L->qkv_w && (rc = mat_f32(m, L->wqkv, 3, E, &L->qkv_w)))
			break;
		if (!L->o_w && (rc = mat_f32(m, &L->wo, 1, E, &L->o_w)))
			break;
		if (!L->up_w && (rc = mat_f32(m, &L->wup, 1, E, &L->up_w)))
			break;
		if (!L->down_w &&
		    (rc = mat_f32(m, &L->wdown, 1, F, &L->down_w)))
			break;
	}
	if (rc == CAIRN_OK && !m->f32_ready) {
		/* every matrix now lives in its copy: give the file's pages
		 * back (token rows fault in again as they are looked up) */
		drop_pages(m);
		__atomic_store_n(&m->f32_ready, 1, __ATOMIC_RELEASE);
	}
	if (m->mu_init)
		pthread_mutex_unlock(&m->f32_mu);
	if (rc == CAIRN_NOMEM)
		set_err(err, errsize, "out of memory loading the model");
	else if (rc)
		set_err(err, errsize, "cannot dequantise the model's matrices");
	return rc;
}

static int default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	return n > BERT_MAX_THREADS ? BERT_MAX_THREADS : (int)n;
}

/* Hyper-parameters, pooling and the global tensors. */
static int load_hparams(struct bert_model *m, const struct bert_opts *opts,
			char *err, size_t errsize)
{
	struct gguf_str s;
	char key[BERT_MAX_KEY];
	int rc, pool = BERT_POOL_MEAN;
	uint32_t u;
	float eps;

	if (gguf_get_str(m->g, "general.architecture", &s) != 0) {
		set_err(err, errsize, "missing key 'general.architecture'");
		return CAIRN_INVALID;
	}
	copy_str(m->arch, sizeof(m->arch), &s);
	if (strcmp(m->arch, "bert") != 0 || s.len != 4) {
		set_err(err, errsize,
			"unsupported architecture '%s' (the runtime reads "
			"'bert': BERT and XLM-RoBERTa encoders)", m->arch);
		return CAIRN_INVALID;
	}
	if (gguf_get_str(m->g, "general.name", &s) == 0)
		copy_str(m->name, sizeof(m->name), &s);
	if ((rc = get_hparam(m, "embedding_length", BERT_MAX_EMBD, &m->n_embd,
			     err, errsize)) ||
	    (rc = get_hparam(m, "block_count", BERT_MAX_LAYERS, &m->n_layer,
			     err, errsize)) ||
	    (rc = get_hparam(m, "attention.head_count", BERT_MAX_HEADS,
			     &m->n_head, err, errsize)) ||
	    (rc = get_hparam(m, "feed_forward_length", BERT_MAX_FF, &m->n_ff,
			     err, errsize)) ||
	    (rc = get_hparam(m, "context_length", BERT_MAX_CTX, &m->n_ctx, err,
			     errsize)))
		return rc;
	if (m->n_embd % m->n_head != 0) {
		set_err(err, errsize,
			"embedding length %d is not a multiple of the head "
			"count %d", m->n_embd, m->n_head);
		return CAIRN_INVALID;
	}
	snprintf(key, sizeof(key), "%s.attention.head_count_kv", m->arch);
	if (gguf_find(m->g, key) >= 0 &&
	    (gguf_get_u32(m->g, key, &u) != 0 || u != (uint32_t)m->n_head)) {
		set_err(err, errsize,
			"key '%s' differs from the head count (grouped "
			"attention is not BERT)", key);
		return CAIRN_INVALID;
	}
	snprintf(key, sizeof(key), "%s.attention.layer_norm_epsilon", m->arch);
	if (gguf_get_f32(m->g, key, &eps) != 0) {
		set_err(err, errsize, "missing or non-numeric key '%s'", key);
		return CAIRN_INVALID;
	}
	if (!(eps > 0.0f && eps < 1.0f)) {
		set_err(err, errsize, "key '%s' is %g, outside (0, 1)", key,
			(double)eps);
		return CAIRN_INVALID;
	}
	m->eps = eps;

	/* pooling: the file's, NONE and absent mean MEAN (one vector per
	 * text is what this runtime is for); opts override */
	snprintf(key, sizeof(key), "%s.pooling_type", m->arch);
	if (gguf_find(m->g, key) >= 0) {
		if (gguf_get_u32(m->g, key, &u) != 0 || u > BERT_POOL_RANK) {
			set_err(err, errsize, "key '%s' is not a known "
				"pooling type (0..4)", key);
			return CAIRN_INVALID;
		}
		if (u != BERT_POOL_NONE)
			pool = (int)u;
	}
	if (opts && opts->pooling >= 0) {
		if (opts->pooling < BERT_POOL_MEAN ||
		    opts->pooling > BERT_POOL_RANK) {
			set_err(err, errsize, "pooling %d is not one of mean "
				"(1), cls (2), last (3), rank (4)",
				opts->pooling);
			return CAIRN_INVALID;
		}
		pool = opts->pooling;
	}
	m->pooling = pool;
	m->threads = opts && opts->threads > 0 ? opts->threads
					       : default_threads();
	if (m->threads > BERT_MAX_THREADS)
		m->threads = BERT_MAX_THREADS;
	m->max_tokens = (size_t)m->n_ctx;
	if (opts && opts->max_tokens > 0 && opts->max_tokens < m->max_tokens)
		m->max_tokens = opts->max_tokens;
	return CAIRN_OK;
}

static int load_globals(struct bert_model *m, char *err, size_t errsize)
{
	const struct gguf_tensor *tt, *pos, *nw, *nb, *cw, *cb, *ow, *ob;
	uint64_t E = (uint64_t)m->n_embd;
	int rc;

	m->tok_embd = gguf_tensor(m->g, "token_embd.weight");
	if (!m->tok_embd) {
		set_err(err, errsize, "tensor 'token_embd.weight' is missing");
		return CAIRN_INVALID;
	}
	m->n_vocab = m->tok_embd->ne[1];
	if ((rc = find_tensor(m, "token_embd.weight", E, m->n_vocab, 1,
			      &m->tok_embd, err, errsize)))
		return rc;
	m->tok_row_bytes = quant_row_bytes(m->tok_embd->type, E);
	/* token_types: rows >= 1; only row 0 (token type 0) is used */
	tt = gguf_tensor(m->g, "token_types.weight");
	if (tt && (rc = find_tensor(m, "token_types.weight", E,
				    tt->ne[1] ? tt->ne[1] : 1, 1, &tt, err,
				    errsize)))
		return rc;
	if ((rc = find_tensor(m, "position_embd.weight", E,
			      (uint64_t)m->n_ctx, 1, &pos, err, errsize)) ||
	    (rc = find_tensor(m, "token_embd_norm.weight", E, 1, 1, &nw, err,
			      errsize)) ||
	    (rc = find_tensor(m, "token_embd_norm.bias", E, 1, 1, &nb, err,
			      errsize)) ||
	    (rc = find_tensor(m, "cls.weight", E, E, 0, &cw, err, errsize)) ||
	    (rc = find_tensor(m, "cls.bias", E, 1, 0, &cb, err, errsize)))
		return rc;
	ow = gguf_tensor(m->g, "cls.output.weight");
	if (ow) {
		uint64_t nout = ow->ne[1];

		if (nout < 1 || nout > BERT_MAX_CLS_OUT) {
			set_err(err, errsize, "tensor 'cls.output.weight' has "
				"%llu outputs, outside 1..%d",
				(unsigned long long)nout, BERT_MAX_CLS_OUT);
			return CAIRN_INVALID;
		}
		if ((rc = find_tensor(m, "cls.output.weight", E, nout, 1, &ow,
				      err, errsize)) ||
		    (rc = find_tensor(m, "cls.output.bias", nout, 1, 0, &ob,
				      err, errsize)))
			return rc;
		m->n_cls_out = (int)nout;
	} else {
		ob = NULL;
		if (gguf_tensor(m->g, "cls.output.bias")) {
			set_err(err, errsize, "tensor 'cls.output.weight' is "
				"missing (cls.output.bias is present)");
			return CAIRN_INVALID;
		}
	}
	if (cb && !cw) {
		set_err(err, errsize,
			"tensor 'cls.weight' is missing (cls.bias is present)");
		return CAIRN_INVALID;
	}
	if (m->pooling == BERT_POOL_RANK && !cw && !ow) {
		set_err(err, errsize, "rank pooling needs a classifier head "
			"(tensors 'cls.weight' or 'cls.output.weight')");
		return CAIRN_INVALID;
	}

	/* the position table stays in the file (XLM-R's is 8k rows): the
	 * rows in use are widened per call, as token rows are */
	m->pos_t = pos;
	if (pos->type == GGML_TYPE_F32 && ((uintptr_t)pos->data & 3) == 0)
		m->pos_embd = pos->data;
	if ((rc = weights(m, nw, E, 0, &m->embd_ln_w, err, errsize)) ||
	    (rc = weights(m, nb, E, 0, &m->embd_ln_b, err, errsize)) ||
	    (rc = weights(m, cw, E * E, 0, &m->cls_w, err, errsize)) ||
	    (rc = weights(m, cw ? cb : NULL, E, cw != NULL, &m->cls_b, err,
			  errsize)) ||
	    (rc = weights(m, ow, (size_t)m->n_cls_out * E, 0, &m->cls_out_w,
			  err, errsize)) ||
	    (rc = weights(m, ow ? ob : NULL, (size_t)m->n_cls_out, ow != NULL,
			  &m->cls_out_b, err, errsize)))
		return rc;
	/* row 0 of token_types (whole blocks: row 0 is its own first
	 * ne[0] elements) */
	{
		float *t0 = owned_buf(m, E);

		if (!t0) {
			set_err(err, errsize, "out of memory loading the model");
			return CAIRN_NOMEM;
		}
		if (tt && quant_dequant(tt->type, tt->data, t0, E) != 0) {
			set_err(err, errsize,
				"cannot dequantise tensor 'token_types.weight'");
			return CAIRN_INVALID;
		}
		m->type0 = t0;
	}
	return CAIRN_OK;
}

int bert_load(const char *path, const struct bert_opts *opts,
	      struct bert_model **out, char *err, size_t errsize)
{
	struct bert_model *m = NULL;
	struct layer_tensors *lts = NULL;
	int rc, il;

	*out = NULL;
	if (!(m = util_calloc(1, sizeof(*m)))) {
		set_err(err, errsize, "out of memory loading the model");
		return CAIRN_NOMEM;
	}
	{
		struct stat before;

		m->st_ok = stat(path, &before) == 0;
		if ((rc = gguf_open(path, &m->g, err, errsize)))
			goto out;
		/* the identity of the file that was opened: unchanged
		 * across the open, and of the mapped size */
		m->st_ok = m->st_ok && stat(path, &m->st) == 0 &&
			   before.st_dev == m->st.st_dev &&
			   before.st_ino == m->st.st_ino &&
			   before.st_size == m->st.st_size &&
			   before.st_mtim.tv_sec == m->st.st_mtim.tv_sec &&
			   before.st_mtim.tv_nsec == m->st.st_mtim.tv_nsec &&
			   (uint64_t)m->st.st_size == gguf_file_size(m->g);
	}
	if (!(m->path = util_strdup(path))) {
		set_err(err, errsize, "out of memory loading the model");
		rc = CAIRN_NOMEM;
		goto out;
	}
	if (pthread_mutex_init(&m->f32_mu, NULL) != 0) {
		set_err(err, errsize, "cannot create a mutex");
		rc = CAIRN_NOMEM;
		goto out;
	}
	if (pthread_mutex_init(&m->sha_mu, NULL) != 0) {
		pthread_mutex_destroy(&m->f32_mu);
		set_err(err, errsize, "cannot create a mutex");
		rc = CAIRN_NOMEM;
		goto out;
	}
	m->mu_init = 1;
	if ((rc = load_hparams(m, opts, err, errsize)))
		goto out;
	/* check every layer before allocating anything big */
	lts = util_calloc((size_t)m->n_layer, sizeof(*lts));
	m->layers = util_calloc((size_t)m->n_layer, sizeof(*m->layers));
	if (!lts || !m->layers) {
		set_err(err, errsize, "out of memory loading the model");
		rc = CAIRN_NOMEM;
		goto out;
	}
	for (il = 0; il < m->n_layer; il++)
		if ((rc = find_layer(m, il, &lts[il], err, errsize)))
			goto out;
	if ((rc = load_globals(m, err, errsize)))
		goto out;
	for (il = 0; il < m->n_layer; il++)
		if ((rc = load_layer(m, &lts[il], &m->layers[il], err,
				     errsize)))
			goto out;
	data_span(m);
	/* the kernels read every matrix in place; without them (another
	 * CPU, a type they do not read, or CAIRN_BERT_KERNELS=0) the
	 * matrices become f32 now, as OpenBLAS needs */
	{
		const char *env = getenv("CAIRN_BERT_KERNELS");

		m->simd = cpu_kernels() && !(env && strcmp(env, "0") == 0);
		for (il = 0; il < m->n_layer && m->simd; il++) {
			const struct bert_layer *L = &m->layers[il];

			m->simd = kernel_type(L->wqkv[0].type) &&
				  kernel_type(L->wqkv[1].type) &&
				  kernel_type(L->wqkv[2].type) &&
				  kernel_type(L->wo.type) &&
				  kernel_type(L->wup.type) &&
				  kernel_type(L->wdown.type);
		}
		if (!m->simd && (rc = ensure_f32(m, err, errsize)))
			goto out;
	}
	/* the tokeniser, when the file carries one */
	if (gguf_find(m->g, "tokenizer.ggml.model") >= 0) {
		if ((rc = vocab_load(m->g, &m->vocab, err, errsize)))
			goto out;
		if ((uint64_t)vocab_size(m->vocab) != m->n_vocab) {
			set_err(err, errsize,
				"the tokenizer has %zu tokens but "
				"'token_embd.weight' has %llu rows",
				vocab_size(m->vocab),
				(unsigned long long)m->n_vocab);
			rc = CAIRN_INVALID;
			goto out;
		}
	}
	*out = m;
	m = NULL;
	rc = CAIRN_OK;
out:
	cairn_free(lts);
	bert_free(m);
	return rc;
}

void bert_free(struct bert_model *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n_owned; i++)
		cairn_free(m->owned[i]);
	cairn_free(m->owned);
	cairn_free(m->layers);
	cairn_free(m->path);
	if (m->mu_init) {
		pthread_mutex_destroy(&m->f32_mu);
		pthread_mutex_destroy(&m->sha_mu);
	}
	vocab_free(m->vocab);
	gguf_close(m->g);
	cairn_free(m);
}

int bert_dim(const struct bert_model *m)
{
	return m->n_embd;
}

int bert_pooling(const struct bert_model *m)
{
	return m->pooling;
}

size_t bert_ctx(const struct bert_model *m)
{
	return (size_t)m->n_ctx;
}

const char *bert_arch(const struct bert_model *m)
{
	return m->arch;
}

const char *bert_name(const struct bert_model *m)
{
	return m->name;
}

/*
 * The SHA-256 cache: hashing a 130 MB model for every process that opens
 * it (a hook runs once per prompt) costs far more than the rest of a
 * query, so the digest is kept in the cache directory ($CAIRN_CACHE_DIR,
 * else $XDG_CACHE_HOME/cairn, else $HOME/.cache/cairn; empty: no cache),
 * one small text file per file identity. Its one line names the file's
 * device, inode, size and mtime in nanoseconds and a probe (SHA-256 of
 * the first and last 64 KiB of the tensor data and the layout numbers);
 * a line that differs in any byte from what this file gives now is
 * ignored, the whole file hashed again and the line rewritten (temporary
 * file, mode 0600, renamed into place).
 */
#define SHA_PROBE_BYTES (64u * 1024u)
#define SHA_LINE_MAX 512

static int sha_cache_dir(char *buf, size_t size)
{
	return util_cache_dir(NULL, buf, size);
}

/* The cache file's name and the line it must hold, less the digest. 0
 * when there is no cache or the identity is unknown. */
static int sha_cache_key(const struct bert_model *m, char *file, size_t fsize,
			 char *line, size_t lsize)
{
	char dir[4096], probe[65];
	struct sbuf b = SBUF_INIT;
	const unsigned char *lo = m->data_lo, *hi = m->data_hi;
	size_t span, n;
	int k;

	if (!m->st_ok || !lo || hi <= lo || !sha_cache_dir(dir, sizeof(dir)))
		return 0;
	span = (size_t)(hi - lo);
	n = span < SHA_PROBE_BYTES ? span : SHA_PROBE_BYTES;
	sbuf_add(&b, lo, n);
	sbuf_add(&b, hi - n, n);
	sbuf_addf(&b, "|%llu|%llu|%zu|%ld",
		  (unsigned long long)gguf_file_size(m->g),
		  (unsigned long long)gguf_data_offset(m->g),
		  gguf_n_tensors(m->g), gguf_n_kv(m->g));
	if (b.err) {
		sbuf_release(&b);
		return 0;
	}
	util_sha256_hex(b.buf, b.len, probe);
	sbuf_release(&b);
	k = snprintf(file, fsize, "%s/gguf-sha256-%llx-%llx.txt", dir,
		     (unsigned long long)m->st.st_dev,
		     (unsigned long long)m->st.st_ino);
	if (k < 0 || (size_t)k >= fsize)
		return 0;
	k = snprintf(line, lsize,
		     "cairn gguf sha256 v1 dev=%llu ino=%llu size=%llu "
		     "mtime=%lld.%09ld probe=%s sha256=",
		     (unsigned long long)m->st.st_dev,
		     (unsigned long long)m->st.st_ino,
		     (unsigned long long)m->st.st_size,
		     (long long)m->st.st_mtim.tv_sec,
		     (long)m->st.st_mtim.tv_nsec, probe);
	return k > 0 && (size_t)k < lsize;
}

/* The digest from the cache file into m->sha when its line is exactly
 * the expected one; 0 otherwise (absent, stale, corrupt, truncated). */
static int sha_cache_read(struct bert_model *m, const char *file,
			  const char *line)
{
	char buf[SHA_LINE_MAX + 2];
	size_t ll = strlen(line), i;
	struct stat st;
	ssize_t got;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != (off_t)(ll + 65)) {
		close(fd);
		return 0;
	}
	got = read(fd, buf, sizeof(buf));
	close(fd);
	if (got != (ssize_t)(ll + 65) || memcmp(buf, line, ll) != 0 ||
	    buf[ll + 64] != '\n')
		return 0;
	for (i = ll; i < ll + 64; i++)
		if (!((buf[i] >= '0' && buf[i] <= '9') ||
		      (buf[i] >= 'a' && buf[i] <= 'f')))
			return 0;
	memcpy(m->sha, buf + ll, 64);
	m->sha[64] = '\0';
	return 1;
}


/* Write line + m->sha to file atomically; failures leave no file. */
static void sha_cache_write(const struct bert_model *m, const char *file,
			    const char *line)
{
	char tmp[4200], dir[4096], *slash;
	struct sbuf b = SBUF_INIT;
	int fd, ok;

	if (snprintf(dir, sizeof(dir), "%s", file) >= (int)sizeof(dir) ||
	    !(slash = strrchr(dir, '/')))
		return;
	*slash = '\0';
	if (util_mkdir_p(dir, 0700) != 0 ||
	    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", file) >= (int)sizeof(tmp))
		return;
	sbuf_addf(&b, "%s%s\n", line, m->sha);
	if (b.err) {
		sbuf_release(&b);
		return;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		sbuf_release(&b);
		return;
	}
	ok = fchmod(fd, 0600) == 0 &&
	     write(fd, b.buf, b.len) == (ssize_t)b.len && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, file) != 0)
		unlink(tmp);
	sbuf_release(&b);
}

const char *bert_sha256(struct bert_model *m)
{
	char file[4200], line[SHA_LINE_MAX];
	int keyed;

	pthread_mutex_lock(&m->sha_mu);
	if (m->sha[0]) {
		pthread_mutex_unlock(&m->sha_mu);
		return m->sha;
	}
	keyed = sha_cache_key(m, file, sizeof(file), line, sizeof(line));
	if (!keyed || !sha_cache_read(m, file, line)) {
		const char *sha = gguf_sha256(m->g);

		snprintf(m->sha, sizeof(m->sha), "%s", sha ? sha : "");
		/* hashing read the whole file into the resident set; the
		 * kernels fault back in what they read */
		drop_pages(m);
		if (keyed && strlen(m->sha) == 64)
			sha_cache_write(m, file, line);
	}
	pthread_mutex_unlock(&m->sha_mu);
	return m->sha;
}

int bert_kernels(const struct bert_model *m)
{
	return m->simd;
}

int bert_f32_copies(const struct bert_model *m)
{
	return __atomic_load_n(&m->f32_ready, __ATOMIC_ACQUIRE);
}

const struct vocab *bert_vocab(const struct bert_model *m)
{
	return m->vocab;
}

int bert_threads(const struct bert_model *m)
{
	return m->threads;
}

size_t bert_max_tokens(const struct bert_model *m)
{
	return m->max_tokens;
}

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

static int cpu_kernels(void)
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
static int cpu_kernels(void)
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
		set_err(err, errsize, "no sequences or no output buffer");
		return CAIRN_INVALID;
	}
	for (i = 0; i < n; i++) {
		if (lens[i] == 0 || !seqs[i]) {
			set_err(err, errsize, "sequence %zu is empty", i);
			return CAIRN_INVALID;
		}
		for (j = 0; j < lens[i] && j < m->max_tokens; j++)
			if (seqs[i][j] < 0 ||
			    (uint64_t)seqs[i][j] >= m->n_vocab) {
				set_err(err, errsize,
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
	if (!r.small && (rc = ensure_f32(m, err, errsize)))
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
	set_err(err, errsize, "out of memory embedding %zu sequences", n);
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
		set_err(err, errsize, "the model has no rank pooling: it "
			"embeds texts, it does not score pairs");
		return CAIRN_INVALID;
	}
	if (!rank && m->pooling == BERT_POOL_RANK) {
		set_err(err, errsize, "the model is a reranker (rank pooling): "
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
	set_err(err, errsize, "the model file has no tokenizer "
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
		set_err(err, errsize, "out of memory %s %zu texts",
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
				set_err(err, errsize, "cannot tokenise %s%zu (%s)",
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
