/*
 * answer.h -- the answerability (docs/RANKING.md, "Answerability"): whether
 * a hit answers the question at all, apart from the order. recall.c builds
 * one plan per schema after its BM25 pool, scores each hit with it, then
 * runs the three rules that zero a hit's answerability: a file's chunks
 * answering together (doc_answer), words that meet no more than chance
 * (answer_chance) and one incidental word in common (answer_lone).
 *
 * Layer: internal to recall (answer.c); above query and store, below
 * recall.c.
 */
#ifndef CAIRN_ANSWER_H
#define CAIRN_ANSWER_H

#include <stdint.h>

#include "query.h"
#include "recall_int.h"

/*
 * What score_answer() needs of the question, worked out once per schema
 * (the question's terms and their df) so that each hit costs a pass over
 * its words: per word, its mass and how a hit matches it.
 */
struct answer_plan {
	size_t n;                  /* question words (glosses are not words) */
	struct {
		double mass;       /* what the word weighs */
		int bit;           /* its own bit in a hit's mask, or -1 */
		uint64_t gmask;    /* the bits of its glosses the store says */
		long long df;      /* records saying it (or its commonest gloss); 0: unseen */
	} u[RECALL_MAX_TERMS];
	double idf_bit[64];        /* answer_idf of the term of each bit */
	double mass;               /* sum of the words' masses */
	double unseen;             /* the part of it the store never says */
};
/*
 * The plan of the question's words for a schema of ndocs records, after
 * search_schema() has filled t's document frequencies.
 */
void answer_plan(struct answer_plan *p, const struct terms *t,
		 long long ndocs);

/* c's answerability under p (c->answer, covered, mass, unseen, words). */
void score_answer(struct cand *c, const struct answer_plan *p);

/*
 * A seeded file's chunks in pool[first..] answer together: each chunk
 * scores what its file's chunks match between them. CAIRN_OK or
 * CAIRN_NOMEM (nothing set on a db).
 */
int doc_answer(struct pool *pool, size_t first, const struct answer_plan *p);

/*
 * The chance test over pool[first..] (one schema's): every hit's
 * answerability 0 when the question's tested words meet no more than
 * chance. The figures go to res when it is not NULL. CAIRN_OK, or an
 * error set on db (counting meetings in the store).
 */
int answer_chance(struct cairn_db *db, const char *schema,
		  const struct terms *t, struct pool *pool, size_t first,
		  const struct answer_plan *p, long long ndocs,
		  cairn_result *res);

/*
 * The lone-word rule over pool[first..]: a hit holding one word of the
 * question while a heavier one is missing gets answerability 0 (a store
 * of at least RECALL_LONE_MIN_DOCS records); res->lone and
 * res->answer_lone count them.
 */
void answer_lone(struct pool *pool, size_t first, const struct answer_plan *p,
		 long long ndocs, cairn_result *res);

#endif /* CAIRN_ANSWER_H */
