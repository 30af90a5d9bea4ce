/*
 * bert_int.h -- what the two halves of the BERT runtime share: the model
 * struct that bert_load.c fills and bert.c runs, the limits, and the few
 * calls that cross between them.
 *
 * Layer: private to bert.c and bert_load.c; nothing else includes it
 * (bert.h is the runtime's interface).
 *
 * Must never: be included outside src/bert*.c, or hold code.
 */
#ifndef CAIRN_BERT_INT_H
#define CAIRN_BERT_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>

#include "bert.h"
#include "gguf.h"

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

/* snprintf into err when err and errsize allow it. */
void bert_set_err(char *err, size_t errsize, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 1 when this CPU has AVX2, FMA and F16C (the small-batch kernels). */
int bert_cpu_kernels(void);
/* Load OpenBLAS once, when first needed; CAIRN_IO (err says why) when it
 * cannot be. */
int bert_blas_need(char *err, size_t errsize);
/* Make the f32 copies of every matrix (once, under m->f32_mu), for the
 * OpenBLAS path; CAIRN_NOMEM, CAIRN_IO (no OpenBLAS) or CAIRN_CORRUPT. */
int bert_ensure_f32(struct bert_model *m, char *err, size_t errsize);

#endif /* CAIRN_BERT_INT_H */
