/*
 * embed.h -- embedding providers behind one interface, and the identity
 * that is stored with every vector.
 *
 * Layer: above bert.h. embed.c holds the dispatcher and the identity;
 * embed_gguf.c wraps bert.h, embed_static.c the averaged word vectors,
 * embed_http.c an OpenAI-compatible /v1/embeddings endpoint (libcurl).
 *
 * Queries get the identity's query instruction prepended, passages the
 * passage instruction (both may be empty). Output vectors are L2-normalised.
 */
#ifndef CAIRN_EMBED_H
#define CAIRN_EMBED_H

#include <stddef.h>

struct embedder;

/* What the user configured (CLI flags, store meta, CAIRN_EMBED_* env). */
struct embed_config {
	const char *provider;     /* "gguf", "static", "http"; NULL/"none": no vectors */
	const char *model;        /* gguf/static: file path; http: model id */
	const char *url;          /* http: base URL (…/v1) */
	const char *api_key_env;  /* http: name of the env var holding the key */
	const char *query_instruction;   /* NULL: the family default */
	const char *passage_instruction; /* NULL: the family default */
	int pooling;              /* -1: from the model */
	int threads;              /* 0: all cores */
	int timeout_ms;           /* http: per request; 0: 30000 */
	int dim;                  /* http: the width when known (the stored vectors'
				     identity); 0: learned by a probe request at open */
};

/* Everything that must match for two vectors to be comparable. */
struct embed_identity {
	char provider[16];
	char model[256];          /* file base name or HTTP model id */
	char revision[72];        /* file SHA-256, or the HTTP model id again */
	int dim;
	char pooling[8];          /* "mean", "cls", "last", "rank", "n/a" */
	char query_instruction[256];
	char passage_instruction[256];
};

int embed_open(const struct embed_config *cfg, struct embedder **out,
	       char *err, size_t errsize);
void embed_close(struct embedder *e);
const struct embed_identity *embed_identity(const struct embedder *e);
/*
 * Bound the embed_texts() calls from now on to ms milliseconds in all,
 * retries and waits included (0: no bound again). Past it they fail with
 * CAIRN_IO. A no-op for providers that do not wait on a network.
 */
void embed_set_budget(struct embedder *e, long ms);
/* One canonical string of the identity (stable; stored and compared). */
int embed_identity_string(const struct embed_identity *id, char *buf,
			  size_t size);

/*
 * Embed n texts (n <= EMBED_MAX_BATCH) into out (n * dim floats), as
 * queries or as passages. Each vector is unit length, except the zero
 * vector for a text the model has nothing for (the static provider with no
 * known word); non-finite output is CAIRN_CORRUPT.
 */
int embed_texts(struct embedder *e, int is_query, const char *const *texts,
		size_t n, float *out, char *err, size_t errsize);

/* ------------------------------------------------------------ providers */

#define EMBED_MAX_DIM 4096    /* widest embedding any provider may return */
#define EMBED_MAX_BATCH 1024  /* most texts in one embed_texts() call */

/* The instructions a model family was trained with (the table in embed.c). */
struct embed_family {
	const char *name;     /* "bge-en", "e5", "none" */
	const char *query;    /* prepended to queries */
	const char *passage;  /* prepended to passages */
};
/* The family of a model from its name (GGUF general.name, file or model id). */
const struct embed_family *embed_family_of(const char *name);

/*
 * What a provider fills in when embed.c opens it: its state, width,
 * revision and pooling, a name for the family lookup, and its functions.
 * embed() returns n * dim floats (embed.c normalises them again and rejects
 * non-finite values); err gets a one-line message.
 */
struct embed_provider {
	void *impl;
	int dim;
	char revision[72];
	char pooling[8];
	char name[256];      /* e.g. GGUF general.name; "" if unknown */
	int (*embed)(void *impl, const char *const *texts, size_t n, float *out,
		     char *err, size_t errsize);
	void (*close)(void *impl);
	/* optional: bound the next embed() calls to ms milliseconds in all
	   (0: no bound); a provider that could wait on a network has it */
	void (*budget)(void *impl, long ms);
};

int embed_gguf_open(const struct embed_config *cfg, struct embed_provider *p,
		    char *err, size_t errsize);
int embed_static_open(const struct embed_config *cfg,
		      struct embed_provider *p, char *err, size_t errsize);
int embed_http_open(const struct embed_config *cfg, struct embed_provider *p,
		    char *err, size_t errsize);

/*
 * The static word-vector file (docs/EMBEDDINGS.md, "static file format"):
 * write n words (UTF-8, lower-case, most frequent first) with their dim-wide
 * vectors and optional counts (NULL: frequencies from the rank order).
 */
int embed_static_write(const char *path, const char *const *words,
		       const float *vecs, const unsigned long long *counts,
		       size_t n, int dim, char *err, size_t errsize);

#endif /* CAIRN_EMBED_H */
