/*
 * recall_int.h -- what recall.c shares with calibrate.c: the dense side of
 * a recall (the question's vector and its pool) and the identity a floor
 * is stored with.
 */
#ifndef CAIRN_RECALL_INT_H
#define CAIRN_RECALL_INT_H

#include "cairn.h"
#include "store.h"

#define RECALL_IDENTITY_MAX 1200 /* bytes of an identity string */

struct embedder;
struct vector_hit;

/* The dense side of one recall: the question's vector and its pool. */
struct dense {
	struct embedder *e;                /* the db's (borrowed) */
	float *q;                          /* question vector, dim floats */
	int dim;
	char identity[RECALL_IDENTITY_MAX]; /* embed_identity_string() */
	char label[400];                   /* provider/model@revision, for receipts */
	struct vector_hit *hits;           /* RANK_POOL best, best first */
	size_t n;
	int down;                          /* 1: the provider failed (CAIRN_IO):
					      recall may go on lexical only */
};

/*
 * Embed the question and fetch the dense pool. d->n == 0 (and CAIRN_OK)
 * when no provider is configured or no record has a vector.
 */
int recall_dense_pool(struct cairn_db *db, const char *query,
		      const cairn_recall_opts *o, struct dense *d);
void recall_dense_release(struct dense *d);
/* The identity a floor is stored with: the tokenizer's + the scale's. */
void recall_floor_identity(const char *tok_id, char *out, size_t size);

#endif /* CAIRN_RECALL_INT_H */
