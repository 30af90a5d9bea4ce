/*
 * bert_load.c -- opening a BERT-family GGUF file for bert.c: the
 * hyper-parameters (the `bert.*` keys), every tensor's name, type and
 * shape checked against them before anything is allocated, the matrices
 * as the small-batch kernels read them (in the mapping, in their file
 * type) and their f32 copies for OpenBLAS (made when first needed), the
 * accessors of bert.h, and the file's SHA-256 with its cache.
 *
 * Layer: model files, above gguf.h, quant.h and vocab.h; below bert.c,
 * which runs the model this file builds (bert_int.h is what they share).
 * The one variable it reads, CAIRN_BERT_KERNELS, is read at each load:
 * models load without a store (docs/ARCHITECTURE.md, "Environment").
 *
 * Tensor layout: a ggml matrix with ne = {in, out} is `out` rows of `in`
 * floats, i.e. PyTorch's Linear weight; y = x W^T. Split attn_q/k/v
 * matrices are concatenated at load into one [3E x E] matrix so one GEMM
 * makes Q, K and V, as for a fused attn_qkv.
 *
 * Invariants: after bert_load returns, every field of struct bert_model
 * is fixed except the f32 copies (made once, f32_ready) and the SHA-256
 * (computed once, sha_mu); every tensor it reads was checked by gguf.c to
 * lie inside the mapping (data_lo .. data_hi is their span) and here to
 * have the shape the hyper-parameters say.
 *
 * Must never: read outside the mapping on a malformed file (every shape
 * is checked here, before any allocation), copy a matrix that the kernels
 * can read in place (a hook's one-query process must load nothing), write
 * to the weights after load (the f32 copies are made once, under a mutex,
 * and published with a release store before any call reads them), or hash
 * the whole file on every open (bert_sha256 keeps the digest in the cache
 * directory).
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bert.h"
#include "bert_int.h"
#include "gguf.h"
#include "internal.h"
#include "quant.h"
#include "vocab.h"

/* ========================================================== load helpers */

void bert_set_err(char *err, size_t errsize, const char *fmt, ...)
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
		bert_set_err(err, errsize, "missing key '%s'", full);
		return CAIRN_INVALID;
	}
	if (gguf_get_i64(m->g, full, &v) != 0) {
		bert_set_err(err, errsize, "key '%s' is not an integer", full);
		return CAIRN_INVALID;
	}
	if (v < 1 || v > max) {
		bert_set_err(err, errsize, "key '%s' is %lld, outside 1..%d", full,
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
		bert_set_err(err, errsize, "tensor '%s' is missing", name);
		return CAIRN_INVALID;
	}
	if (!quant_supported(t->type)) {
		bert_set_err(err, errsize,
			"tensor '%s' has unsupported type %s (%u)", name,
			quant_type_name(t->type), (unsigned)t->type);
		return CAIRN_INVALID;
	}
	if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 ||
	    t->ne[3] != 1) {
		bert_set_err(err, errsize,
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
		bert_set_err(err, errsize,
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
		bert_set_err(err, errsize, "cannot dequantise tensor '%s'", t->name);
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
	bert_set_err(err, errsize, "out of memory loading the model");
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
			bert_set_err(err, errsize, "out of memory loading the model");
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
int bert_ensure_f32(struct bert_model *m, char *err, size_t errsize)
{
	size_t E = (size_t)m->n_embd, F = (size_t)m->n_ff;
	int il, rc = CAIRN_OK;

	if (__atomic_load_n(&m->f32_ready, __ATOMIC_ACQUIRE))
		return CAIRN_OK;
	/* the f32 copies are for OpenBLAS: without it they are no use */
	if ((rc = bert_blas_need(err, errsize)))
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
		bert_set_err(err, errsize, "out of memory loading the model");
	else if (rc)
		bert_set_err(err, errsize, "cannot dequantise the model's matrices");
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
		bert_set_err(err, errsize, "missing key 'general.architecture'");
		return CAIRN_INVALID;
	}
	copy_str(m->arch, sizeof(m->arch), &s);
	if (strcmp(m->arch, "bert") != 0 || s.len != 4) {
		bert_set_err(err, errsize,
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
		bert_set_err(err, errsize,
			"embedding length %d is not a multiple of the head "
			"count %d", m->n_embd, m->n_head);
		return CAIRN_INVALID;
	}
	snprintf(key, sizeof(key), "%s.attention.head_count_kv", m->arch);
	if (gguf_find(m->g, key) >= 0 &&
	    (gguf_get_u32(m->g, key, &u) != 0 || u != (uint32_t)m->n_head)) {
		bert_set_err(err, errsize,
			"key '%s' differs from the head count (grouped "
			"attention is not BERT)", key);
		return CAIRN_INVALID;
	}
	snprintf(key, sizeof(key), "%s.attention.layer_norm_epsilon", m->arch);
	if (gguf_get_f32(m->g, key, &eps) != 0) {
		bert_set_err(err, errsize, "missing or non-numeric key '%s'", key);
		return CAIRN_INVALID;
	}
	if (!(eps > 0.0f && eps < 1.0f)) {
		bert_set_err(err, errsize, "key '%s' is %g, outside (0, 1)", key,
			(double)eps);
		return CAIRN_INVALID;
	}
	m->eps = eps;

	/* pooling: the file's, NONE and absent mean MEAN (one vector per
	 * text is what this runtime is for); opts override */
	snprintf(key, sizeof(key), "%s.pooling_type", m->arch);
	if (gguf_find(m->g, key) >= 0) {
		if (gguf_get_u32(m->g, key, &u) != 0 || u > BERT_POOL_RANK) {
			bert_set_err(err, errsize, "key '%s' is not a known "
				"pooling type (0..4)", key);
			return CAIRN_INVALID;
		}
		if (u != BERT_POOL_NONE)
			pool = (int)u;
	}
	if (opts && opts->pooling >= 0) {
		if (opts->pooling < BERT_POOL_MEAN ||
		    opts->pooling > BERT_POOL_RANK) {
			bert_set_err(err, errsize, "pooling %d is not one of mean "
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
		bert_set_err(err, errsize, "tensor 'token_embd.weight' is missing");
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
			bert_set_err(err, errsize, "tensor 'cls.output.weight' has "
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
			bert_set_err(err, errsize, "tensor 'cls.output.weight' is "
				"missing (cls.output.bias is present)");
			return CAIRN_INVALID;
		}
	}
	if (cb && !cw) {
		bert_set_err(err, errsize,
			"tensor 'cls.weight' is missing (cls.bias is present)");
		return CAIRN_INVALID;
	}
	if (m->pooling == BERT_POOL_RANK && !cw && !ow) {
		bert_set_err(err, errsize, "rank pooling needs a classifier head "
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
			bert_set_err(err, errsize, "out of memory loading the model");
			return CAIRN_NOMEM;
		}
		if (tt && quant_dequant(tt->type, tt->data, t0, E) != 0) {
			bert_set_err(err, errsize,
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
		bert_set_err(err, errsize, "out of memory loading the model");
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
		bert_set_err(err, errsize, "out of memory loading the model");
		rc = CAIRN_NOMEM;
		goto out;
	}
	if (pthread_mutex_init(&m->f32_mu, NULL) != 0) {
		bert_set_err(err, errsize, "cannot create a mutex");
		rc = CAIRN_NOMEM;
		goto out;
	}
	if (pthread_mutex_init(&m->sha_mu, NULL) != 0) {
		pthread_mutex_destroy(&m->f32_mu);
		bert_set_err(err, errsize, "cannot create a mutex");
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
		bert_set_err(err, errsize, "out of memory loading the model");
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

		m->simd = bert_cpu_kernels() && !(env && strcmp(env, "0") == 0);
		for (il = 0; il < m->n_layer && m->simd; il++) {
			const struct bert_layer *L = &m->layers[il];

			m->simd = kernel_type(L->wqkv[0].type) &&
				  kernel_type(L->wqkv[1].type) &&
				  kernel_type(L->wqkv[2].type) &&
				  kernel_type(L->wo.type) &&
				  kernel_type(L->wup.type) &&
				  kernel_type(L->wdown.type);
		}
		if (!m->simd && (rc = bert_ensure_f32(m, err, errsize)))
			goto out;
	}
	/* the tokeniser, when the file carries one */
	if (gguf_find(m->g, "tokenizer.ggml.model") >= 0) {
		if ((rc = vocab_load(m->g, &m->vocab, err, errsize)))
			goto out;
		if ((uint64_t)vocab_size(m->vocab) != m->n_vocab) {
			bert_set_err(err, errsize,
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
