/*
 * query.h -- the question's terms (SPEC 5.2 step 1; query.c): what
 * recall.c searches for and weighs. The question tokenised exactly as
 * records are (query mode), de-duplicated, stop words dropped unless
 * nothing else is left, the words written as names and a question that
 * asks when noticed; then the English glosses of its Chinese words that
 * the store never says (the built-in glossary, CC-CEDICT).
 *
 * Layer: internal to recall (recall.c, query.c); nothing here is public
 * API. recall.c fills each term's document counts (df, idf) per schema.
 */
#ifndef CAIRN_QUERY_H
#define CAIRN_QUERY_H

#include <stddef.h>

#include "cairn.h"

struct sbuf;

#define RECALL_MAX_TERMS 64        /* query terms kept (the aux mask is 64 bits) */
/*
 * Weight of an English gloss of a Chinese question word (from the
 * bilingual dictionary) relative to the question's own terms: a
 * translation is weaker evidence than the word itself.
 */
#define RECALL_GLOSS_WEIGHT 0.5
#define RECALL_SAME 4 /* glosses of one word that the question says itself, kept */

struct cairn_db;
struct tok;

struct qterm {
	char *text;    /* the token as indexed (normalised, stemmed) */
	size_t len;    /* bytes */
	int stop;      /* 1: a stop word */
	long long df;  /* documents containing it (per schema) */
	double idf;    /* BM25-style idf, >= 0 */
	double weight; /* 1, or RECALL_GLOSS_WEIGHT for a gloss */
	int gloss;     /* 1: an English gloss of a Chinese term */
	size_t from;   /* gloss: index of the Chinese term it translates */
	int df_of;     /* df and idf hold for schema df_of - 1 (0: not yet) */
	double bg_idf; /* background idf (RECALL_BG_WORDS); HUGE_VAL: none */
	int name;      /* written as a name in the question (names_in()) */
	size_t same[RECALL_SAME];  /* glosses that are terms of the question already */
	size_t nsame;
};

struct terms {
	struct qterm *v;   /* unique terms in query order */
	size_t n;          /* count */
	size_t cap;        /* allocated */
	int when;          /* the question asks for a time (asks_when()) */
	struct tok *tk;    /* for background statistics (tok_word_logp) */
	const char *q;     /* the question as written, for names_in() */
	size_t qlen;
};

/*
 * Tokenise the question q into t (zeroed by the caller) with tk, the
 * tokenizer records are indexed with; drop stop words unless only stop
 * words remain. CAIRN_OK, or an error set on db (t then holds what was
 * collected: release it).
 */
int query_terms(struct cairn_db *db, struct tok *tk, const char *q,
		struct terms *t);

/*
 * Append q to m as a quoted FTS5 string whose text the tokenizer takes
 * raw (TOK_RAW: already a term, not tokenised again).
 */
void query_add_raw(struct sbuf *m, const struct qterm *q);

/*
 * Keep at most RECALL_MAX_TERMS of t's terms, in query order: the words
 * the store never says (df 0, as term_stats left them) go first, then the
 * most common; glosses' and aliases' indices stay true. 0, or -1 out of
 * memory (t unchanged).
 */
int query_cap(struct terms *t);

/* Free the terms' texts and array; t is empty afterwards. */
void query_release(struct terms *t);

/*
 * Append the English glosses of t's Chinese words (df 0: the store never
 * says them) at RECALL_GLOSS_WEIGHT: the built-in glossary, then db's
 * bilingual dictionary when one is loaded (query_bilingual). Call after
 * the document counts are known. CAIRN_OK, or an error set on db.
 */
int query_glosses(struct cairn_db *db, struct tok *tk, struct terms *t);

/*
 * Load the bilingual dictionary named by $CAIRN_BILINGUAL (db->bil_path)
 * once per handle; none named: CAIRN_OK with no dictionary.
 */
int query_bilingual(struct cairn_db *db);

/* Does the record state a date the Chinese way (digits then 年, 月, 日, 号)? */
int query_states_date(const cairn_record *r);

#endif /* CAIRN_QUERY_H */
