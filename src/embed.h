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
/* One canonical string of the identity (stable; stored and compared). */
int embed_identity_string(const struct embed_identity *id, char *buf,
			  size_t size);

/* Embed n texts into out (n * dim floats), as queries or as passages. */
int embed_texts(struct embedder *e, int is_query, const char *const *texts,
		size_t n, float *out, char *err, size_t errsize);

#endif /* CAIRN_EMBED_H */
