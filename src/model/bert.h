/*
 * bert.h -- the built-in embedding runtime: BERT-family encoders (BertModel,
 * XLM-RoBERTa) from GGUF files in llama.cpp's `bert` layout.
 *
 * Layer: model files, above gguf.h, quant.h and vocab.h. Thread-safe for
 * concurrent bert_embed() calls on one model (weights are read-only; each
 * call has its own scratch).
 *
 * Weights: a batch of a few short sequences (a query) runs on AVX2 kernels
 * that read the matrices in their file type straight from the mapping, so
 * loading copies nothing; a large batch runs through OpenBLAS on f32 copies
 * made the first time one is needed (at load where the kernels cannot
 * run). The token embedding table stays in its file type inside the
 * mapping and only looked-up rows are dequantised. The file's SHA-256 is
 * cached per file identity in the cache directory (see bert_sha256).
 */
#ifndef CAIRN_BERT_H
#define CAIRN_BERT_H

#include <stddef.h>
#include <stdint.h>

struct bert_model;

/* llama.cpp's pooling numbering (bert.pooling_type / <arch>.pooling_type). */
enum bert_pooling {
	BERT_POOL_NONE = 0,
	BERT_POOL_MEAN = 1,
	BERT_POOL_CLS = 2,
	BERT_POOL_LAST = 3,
	BERT_POOL_RANK = 4, /* cross-encoder: classifier head over CLS, one score */
};

struct bert_opts {
	int pooling;     /* -1: from the file (MEAN when absent or NONE); else enum bert_pooling */
	int threads;     /* 0: all cores */
	size_t max_tokens; /* 0: the model's context length */
};

/*
 * Load path; opts may be NULL. CAIRN_IO / CAIRN_INVALID / CAIRN_NOMEM with
 * err (every tensor's type and shape is checked against the
 * hyper-parameters; a file without tokenizer.ggml.* metadata loads, but
 * bert_embed/bert_rank on texts then fail with CAIRN_INVALID). Sets
 * OpenBLAS to one thread for the whole process (openblas_set_num_threads):
 * each call splits its own work over opts->threads threads.
 */
int bert_load(const char *path, const struct bert_opts *opts,
	      struct bert_model **out, char *err, size_t errsize);
void bert_free(struct bert_model *m);

int bert_dim(const struct bert_model *m);      /* embedding width (n_embd) */
int bert_pooling(const struct bert_model *m);  /* effective enum bert_pooling */
size_t bert_ctx(const struct bert_model *m);   /* context length in tokens */
const char *bert_arch(const struct bert_model *m);  /* "bert" or the file's arch */
const char *bert_name(const struct bert_model *m);  /* general.name or "" */
/* The file's SHA-256: hashed once per file identity (device, inode,
 * size, mtime and a probe of the data), then read from the cache
 * directory ($CAIRN_CACHE_DIR, else $XDG_CACHE_HOME/cairn, else
 * ~/.cache/cairn; "" turns the cache off). "" if it cannot be made. */
const char *bert_sha256(struct bert_model *m);
const struct vocab *bert_vocab(const struct bert_model *m);

/*
 * Embed n texts: tokenise (with specials, truncated to the context), run the
 * encoder (several sequences packed per GEMM), pool, L2-normalise. out holds
 * n * bert_dim() floats. Not for RANK pooling (use bert_rank).
 */
int bert_embed(struct bert_model *m, const char *const *texts, size_t n,
	       float *out, char *err, size_t errsize);

/*
 * The same from token ids (tests, benchmarks): seqs[i] has lens[i] ids
 * (specials included), the first max_tokens of them are used. An empty
 * sequence or an id outside the vocabulary is CAIRN_INVALID.
 */
int bert_embed_ids(struct bert_model *m, const int32_t *const *seqs,
		   const size_t *lens, size_t n, float *out, char *err,
		   size_t errsize);

/*
 * Cross-encoder scores from token ids (tests, benchmarks): seqs[i] is a
 * whole pair as vocab_encode_pair() makes it; n raw logits into scores.
 * CAIRN_INVALID unless the model's pooling is RANK.
 */
int bert_rank_ids(struct bert_model *m, const int32_t *const *seqs,
		  const size_t *lens, size_t n, float *scores, char *err,
		  size_t errsize);

/* Threads one call uses, and the truncation length in tokens (<= ctx). */
int bert_threads(const struct bert_model *m);
size_t bert_max_tokens(const struct bert_model *m);

/*
 * How the dense products run (tests, benchmarks): bert_kernels() is 1 when
 * batches of a few short sequences use the built-in AVX2 kernels straight
 * on the file's weights (x86-64 with AVX2/FMA/F16C, every matrix F32, F16,
 * BF16 or Q8_0, and $CAIRN_BERT_KERNELS not "0" at load); bert_f32_copies()
 * is 1 once the f32 copies for OpenBLAS exist (at load without the kernels,
 * else made by the first large batch).
 */
int bert_kernels(const struct bert_model *m);
int bert_f32_copies(const struct bert_model *m);

/* Cross-encoder scores of (query, docs[i]) pairs: n raw logits into scores. */
int bert_rank(struct bert_model *m, const char *query,
	      const char *const *docs, size_t n, float *scores, char *err,
	      size_t errsize);

#endif /* CAIRN_BERT_H */
