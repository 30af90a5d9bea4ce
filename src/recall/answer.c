/*
 * answer.c -- the answerability (docs/RANKING.md, "Answerability"; the
 * interface and the order recall.c runs it in: answer.h). Per hit, one
 * score in [0, 1]: the share of the question's informative IDF mass the
 * hit matches, each word weighed by what can match it (its glosses, a
 * background idf, a name twice); then the rules that set it to 0.
 *
 * Layer: internal to recall; on query (the question's terms), store (the
 * chance test's counts in the store's FTS5 index) and util. Above it:
 * recall.c.
 * Must never: change a hit's order or its BM25 figures (ordering is
 * rank.c's), or write to the store.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "store.h"

/*
 * Background pseudo-records for the answerability's idf (score_answer()):
 * a term's weight there is log((N + B - df + 0.5) / (df + 0.5)), as if the
 * store held B more records that never say it. In a large store this is
 * BM25's idf; in a store of two records, whose own idf is ~0 for every
 * word (a word in one of two records is in "half the store"), it is the
 * weight of a word that B + 2 ordinary records would rarely say, so the
 * share of the question a record covers still means something.
 */
#define RECALL_BG_DOCS 10.0
/*
 * A name the store never says (names_in(): Kafka, GraphQL, RuboCop) weighs
 * this many times an unseen word in the answerability: a question about
 * a thing the store has never heard of is about that thing, and a name,
 * unlike a common word, has no synonym a record could use instead.
 */
#define RECALL_UNSEEN_NAME 2.0
/* Relative tolerance when a lone matched word is compared with the
 * question's heaviest (answer_lone): equal masses are equal. */
#define RECALL_LONE_EPS 1e-9
/*
 * Records a store must hold before a lone word is judged (answer_lone).
 * In a handful of records nearly every word is said once, so a word's
 * weight cannot tell the topic a question shares with the store from an
 * incidental word, and every word the store never says outweighs it: "how
 * do we deploy to production?" shares only "deploy" with a five-record
 * store whose deploy procedure is the answer.
 */
#define RECALL_LONE_MIN_DOCS 50

/* A term's weight in the answerability (RECALL_BG_DOCS): never below 0. */
static double answer_idf(long long df, long long ndocs)
{
#ifndef CAIRN_MUTATE_NO_BG_DOCS
	double n = (double)ndocs + RECALL_BG_DOCS, d = (double)df, v;
#else
	double n = (double)ndocs, d = (double)df, v; /* negative control */
#endif

	if (d > n)
		n = d;
	v = log((n - d + 0.5) / (d + 0.5));
	return v > RECALL_IDF_MIN ? v : RECALL_IDF_MIN;
}


/*
 * The chance test's power (answer_chance()): the tested words' pairs
 * must be ones chance would put in one record at least this many times,
 * or finding none of them together says nothing. Measured
 * (bench/results/EVAL.md): 0.2 to 0.4 empty 28 to 34 of recall_bench's
 * 60 random-word queries at --n 20000.
 */
#define RECALL_CHANCE_POWER CAIRN_CHANCE_POWER

/*
 * The plan of the answerability: each question word weighed by
 * what can match it.
 *   - a word the store says: its idf (answer_idf); matched or not;
 *   - a Chinese word the store never says whose glosses it does say
 *     (query_glosses): the idf of its best gloss the store says, matched by
 *     the best gloss the hit holds -- not the Chinese word's own idf, which
 *     no English record could ever match (that normaliser left Chinese
 *     questions about English records at 0.00 to 0.06);
 *   - a word the store never says, in no form: the idf of a word in no
 *     record (a Chinese one no more than its background idf, a name
 *     twice), never matched (unseen: a question that names what the store
 *     has never heard of -- Kafka, sourdough, 吉他 -- is mostly unseen).
 * Call after search_schema() for the schema whose df t holds.
 */
void answer_plan(struct answer_plan *p, const struct terms *t,
			long long ndocs)
{
	int bit[RECALL_MAX_TERMS];
	size_t i, j;

	memset(p, 0, sizeof(*p));
	/* a hit's mask is kept by question term (pool_fetch): bit i is term
	 * i, whichever schema's phrase matched it */
	for (i = 0; i < t->n && i < RECALL_MAX_TERMS; i++) {
		bit[i] = -1;
		if (t->v[i].df > 0 && i < 64) {
			bit[i] = (int)i;
			p->idf_bit[i] = answer_idf(t->v[i].df, ndocs);
		}
	}
	for (i = 0; i < t->n && i < RECALL_MAX_TERMS; i++) {
		const struct qterm *q = &t->v[i];
		double m, gm = 0;
		uint64_t gmask = 0;

		if (q->gloss)
			continue; /* counted with the word it translates */
		if (q->df > 0) {
			m = answer_idf(q->df, ndocs);
			p->u[p->n].mass = m;
			p->u[p->n].bit = bit[i];
			p->u[p->n].df = q->df;
			p->mass += m;
			p->n++;
			continue;
		}
		for (j = 0; j < t->n && j < RECALL_MAX_TERMS; j++) {
			const struct qterm *e = &t->v[j];
			size_t a;
			int alias = 0;

			for (a = 0; a < q->nsame; a++)
				alias |= q->same[a] == j;
			if ((!(e->gloss && e->from == i) && !alias) || bit[j] < 0)
				continue;
			gmask |= (uint64_t)1 << bit[j];
			if (p->idf_bit[bit[j]] > gm)
				gm = p->idf_bit[bit[j]];
			if (e->df > p->u[p->n].df)
				p->u[p->n].df = e->df;
		}
		p->u[p->n].bit = -1;
#ifndef CAIRN_MUTATE_NO_GLOSS_MASS
		if (gm > 0) {
			p->u[p->n].mass = gm;
			p->u[p->n].gmask = gmask;
			p->mass += gm;
			p->n++;
			continue;
		}
#else
		(void)gmask;
#endif
		m = answer_idf(0, ndocs);
#ifndef CAIRN_MUTATE_NO_BACKGROUND
		if (q->bg_idf < m)
			m = q->bg_idf > RECALL_IDF_MIN ? q->bg_idf : RECALL_IDF_MIN;
#endif
#ifndef CAIRN_MUTATE_NO_NAMES
		if (q->name)
			m *= RECALL_UNSEEN_NAME;
#endif
		p->u[p->n].mass = m;
		p->u[p->n].df = 0; /* unseen */
		p->mass += m;
		p->unseen += m;
		p->n++;
	}
}

/*
 * The answerability of one hit: the share of the plan's mass its matched
 * terms cover. Unlike the signal (bm25 over the most the question could
 * score), term frequency and record length do not count: they order
 * hits, they do not say whether the question is answered.
 */
/* The answerability of the matched terms in mask; their mass into *covered. */
static double answer_of(uint64_t mask, const struct answer_plan *p,
			double *covered, int *words)
{
	double got = 0, a;
	size_t i;
	int w = 0;

	for (i = 0; i < p->n; i++) {
		uint64_t g;
		double best = 0;
		int b;

		if (p->u[i].bit >= 0) {
			if (mask & ((uint64_t)1 << p->u[i].bit)) {
				got += p->u[i].mass;
				w++;
			}
			continue;
		}
		g = mask & p->u[i].gmask;
		for (b = 0; g && b < 64; b++, g >>= 1)
			if ((g & 1) && p->idf_bit[b] > best)
				best = p->idf_bit[b];
		got += best;
		w += best > 0;
	}
	*covered = got;
	*words = w;
	a = p->mass > 0 ? got / p->mass : 0;
	return a > 1 ? 1 : a;
}

void score_answer(struct cand *c, const struct answer_plan *p)
{
	c->mass = p->mass;
	c->unseen = p->unseen;
	c->answer = answer_of((uint64_t)c->mask, p, &c->covered, &c->words);
}

/* Candidates by source file (qsort over pointers; no file: last). */
static int src_cmp(const void *a, const void *b)
{
	const struct cand *x = *(const struct cand *const *)a;
	const struct cand *y = *(const struct cand *const *)b;

	if (!x->rec->src_path || !y->rec->src_path)
		return !x->rec->src_path - !y->rec->src_path;
	return strcmp(x->rec->src_path, y->rec->src_path);
}

/*
 * A file's chunks are parts of one document (cairn seed cuts a file at its
 * headings): a question that its title chunk and a body chunk answer
 * together is answered by the file. Each chunk's answerability is that of
 * the words its file's chunks in the pool match together (never less than
 * its own); a record with no source file stands alone. Candidates
 * [first, n) are one schema's (their masks share its bits).
 */
int doc_answer(struct pool *pool, size_t first,
		      const struct answer_plan *p)
{
	size_t n = pool->n - first, i, j, k;
	struct cand **v;

#ifdef CAIRN_MUTATE_NO_DOC_UNION
	return 0; /* negative control: each chunk alone */
#endif
	for (i = first, k = 0; i < pool->n && k < 2; i++)
		k += pool->v[i].rec->src_path != NULL;
	if (k < 2)
		return 0; /* no file with two chunks in the pool */
	v = util_calloc(n, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < n; i++)
		v[i] = &pool->v[first + i];
	qsort(v, n, sizeof(*v), src_cmp);
	for (i = 0; i < n && v[i]->rec->src_path; i = j) {
		sqlite3_int64 mask = v[i]->mask;

		for (j = i + 1; j < n && src_cmp(&v[i], &v[j]) == 0; j++)
			mask |= v[j]->mask;
		for (k = i; j - i > 1 && k < j; k++)
			if (v[k]->mask != mask)
				v[k]->answer = answer_of((uint64_t)mask, p,
							 &v[k]->covered,
							 &v[k]->words);
	}
	cairn_free(v);
	return 0;
}

/*
 * The chance test: are the question's words related in this store, or a
 * bag of words that only chance puts together? A random bag's best hit
 * holds one or two of its words, a third of its mass or more, far above
 * the floor; yet nothing in the store links them.
 *
 * Tested words: those the store says in fewer than max(1 / sqrt(N),
 * RECALL_CHANCE_SHARE) of its records (N with the background records of
 * RECALL_BG_DOCS), at most RECALL_CHANCE_WORDS of them, rarest first.
 * Under 1 / sqrt(N) chance puts a pair of them in one record less than
 * once; that was the whole cut while the test counted pairs inside the
 * BM25 pool, which holds every record of such words and truncates the
 * rest. The pairs are now counted in the store, so the cut need not shrink
 * with the store: in 100k records 1 / sqrt(N) is 0.3 % and left most
 * topic words untested. Above RECALL_CHANCE_SHARE a word is the store's
 * general vocabulary, which answers seldom repeat (see the constant).
 *
 * With p_i = (df_i + 1/2) / N, chance puts s of the k tested words in one
 * record lambda_s = N e_s(p) times (e_s: the elementary symmetric
 * polynomial, the sum over every s of them of their product). The words
 * are related when the store links them beyond chance:
 *   - pairs chance puts together less than once (N p_i p_j < 1): the
 *     store's records hold more meetings of them than chance would (the
 *     sum of N p_i p_j over those pairs). A pair chance puts together
 *     more often is no evidence: one answering record hides in chance's
 *     spread, and records that differ in length or language make words
 *     meet more often than N p_i p_j anyway (recall_bench's random
 *     English words, 100k records: 1.24 times as often);
 *   - or one record of the pool holds s >= 3 of them where lambda_s < 1.
 * Otherwise every hit's answerability is 0: nothing answers. The test has
 * power only when chance would put the words' pairs together at least
 * RECALL_CHANCE_POWER times (else finding none means nothing), and when
 * a record holding all k would be beyond chance (lambda_k < 1; else such
 * a record -- an answer -- could not be told from chance). One tested
 * word is no test.
 *
 * Records with a source file (seeded chunks) neither count nor are
 * zeroed: a file's words are split over its chunks, which do not meet as
 * independent records would (counting them emptied three answered
 * adr-workspace seeded questions).
 *
 * NEEDSWORK: a Chinese word's search-mode pieces (负责, 责人, 负责人)
 * always meet and so can link a question of otherwise random words (1 of
 * recall_bench's 60). Dropping a term that lies inside another term of
 * the question fixes that but empties an answered CMRC2018 question whose
 * answer holds none of its other tested words; decide whether a question
 * made of one written word and unrelated ones should stand.
 */
#define RECALL_CHANCE_WORDS 16
/*
 * A word in more than this share of the records is general vocabulary for
 * the chance test. In the dev stores of ../shared/eval (59 to 6,916
 * records) 1 / sqrt(N) is 1.2 to 13 %, and no decision of the test on
 * their questions changes with a share of 1 to 3 % (of the 35 off-topic
 * ones, make eval's --offtopic, 2 % quiets one more on RGB-zh: 坐长途飞机
 * 怎么缓解时差？, in 6,916 news passages); from 4 % it empties questions that
 * were answered (2 LoCoMo and 2 CMRC2018 answers in the top 5: they do
 * not repeat the question's 'time', 'kind' or 又), with no share at all
 * 27 LoCoMo, 6 CMRC2018, 2 ClapNQ and 1 adr-workspace. This is half of
 * the 4 %. recall_bench, 100k records, random-word queries empty: 32 of
 * 60 (1 % and 3 %, simulated on the same run: 30 and 34).
 */
#define RECALL_CHANCE_SHARE CAIRN_CHANCE_SHARE

/* A tested word of the chance test. */
struct chance_word {
	uint64_t mask; /* its bit in a hit's mask, or the bits of its glosses */
	double p;      /* (df + 1/2) / N: its share of the records */
};

static int chance_word_cmp(const void *a, const void *b)
{
	const struct chance_word *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->mask < y->mask ? -1 : x->mask > y->mask;
}

/* The plan's tested words into w (rarest first, at most RECALL_CHANCE_WORDS). */
static size_t chance_words(const struct answer_plan *p, double n,
			   struct chance_word *w)
{
	double lim = 1.0 / sqrt(n);
	size_t k = 0, i;

#ifndef CAIRN_MUTATE_NO_CHANCE_SHARE
	if (lim < RECALL_CHANCE_SHARE)
		lim = RECALL_CHANCE_SHARE;
#endif
	for (i = 0; i < p->n; i++) {
		uint64_t m = p->u[i].bit >= 0 ? (uint64_t)1 << p->u[i].bit
					      : p->u[i].gmask;
		double q = ((double)p->u[i].df + 0.5) / n;

		if (p->u[i].df <= 0 || !m || q >= lim)
			continue; /* unseen, or general vocabulary */
		w[k].mask = m;
		w[k++].p = q;
	}
	qsort(w, k, sizeof(*w), chance_word_cmp);
	return k < RECALL_CHANCE_WORDS ? k : RECALL_CHANCE_WORDS;
}

/*
 * The MATCH of records holding both words a and b (their terms, a word
 * with glosses by any of them).
 */
static void chance_match(struct sbuf *m, const struct terms *t, uint64_t a,
			 uint64_t b)
{
	uint64_t ab[2] = { a, b };
	int w, bit, any;

	sbuf_reset(m);
	for (w = 0; w < 2; w++) {
		sbuf_adds(m, w ? " AND (" : "(");
		for (bit = 0, any = 0; bit < 64 && (size_t)bit < t->n; bit++) {
			if (!(ab[w] & ((uint64_t)1 << bit)))
				continue;
			if (any++)
				sbuf_adds(m, " OR ");
			query_add_raw(m, &t->v[bit]);
		}
		sbuf_addc(m, ')');
	}
}

/*
 * How many records of schema without a source file hold both words a
 * and b: exact, through FTS5 (*st prepared on first use; the caller
 * finalizes it).
 */
static int chance_count(struct cairn_db *db, const char *schema,
			const struct terms *t, uint64_t a, uint64_t b,
			struct sbuf *m, sqlite3_stmt **st, long long *out)
{
	int src;

	*out = 0;
	if (!*st) {
		char sql[256];

		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM %s.records_fts JOIN %s.records "
			 "r ON r.rid = records_fts.rowid WHERE records_fts "
			 "MATCH ?1 AND r.src_path IS NULL",
			 schema, schema);
		src = sqlite3_prepare_v2(db->sql, sql, -1, st, NULL);
		if (src != SQLITE_OK)
			return store_sql_error(db, src, "recall");
	}
	chance_match(m, t, a, b);
	if (m->err)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	sqlite3_reset(*st);
	sqlite3_bind_text(*st, 1, m->buf, (int)m->len, SQLITE_STATIC);
	src = sqlite3_step(*st);
	if (src == SQLITE_ROW)
		*out = sqlite3_column_int64(*st, 0);
	sqlite3_reset(*st);
	if (src != SQLITE_ROW)
		return store_sql_error(db, src, "recall");
	return CAIRN_OK;
}

/*
 * The chance test (above) over candidates [first, n) of schema: when
 * nothing links the question's tested words beyond chance, every hit's
 * answerability is 0. The figures go to res (the workspace schema's)
 * for --explain and --json.
 */
int answer_chance(struct cairn_db *db, const char *schema,
			 const struct terms *t, struct pool *pool,
			 size_t first, const struct answer_plan *p,
			 long long ndocs, cairn_result *res)
{
	double n = (double)ndocs + RECALL_BG_DOCS, e = 0, most_lam = 0;
	double lam[RECALL_CHANCE_WORDS + 1];
	struct chance_word w[RECALL_MAX_TERMS];
	struct sbuf m = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	size_t k, i, j, s, alone = 0, most = 0;
	long long met = 0;
	int chance = 0, linked = 0, rc = CAIRN_OK;

	k = chance_words(p, n, w);
	/* lam[s] = N e_s(p): e_s over the words so far, highest s first */
	memset(lam, 0, sizeof(lam));
	lam[0] = 1;
	for (i = 0; i < k; i++)
		for (s = i + 1; s > 0; s--)
			lam[s] += lam[s - 1] * w[i].p;
	for (s = 0; s <= k; s++)
		lam[s] *= n;
	for (i = 0; i < k; i++)
		for (j = i + 1; j < k; j++)
			if (n * w[i].p * w[j].p < 1)
				e += n * w[i].p * w[j].p;
	/*
	 * The pool's records that stand alone (a seeded file's chunks are
	 * parts of one document, doc_answer): the most tested words one of
	 * them holds, and their meetings in the rare pairs -- a lower bound
	 * of the store's, enough when it is already above chance.
	 */
	for (i = first; i < pool->n; i++) {
		uint64_t mask = (uint64_t)pool->v[i].mask;
		size_t h = 0;

		if (pool->v[i].rec->src_path)
			continue;
		alone++;
		for (j = 0; j < k; j++) {
			if (!(mask & w[j].mask))
				continue;
			h++;
			for (s = j + 1; s < k; s++)
				met += (mask & w[s].mask) &&
				       n * w[j].p * w[s].p < 1;
		}
		if (h > most)
			most = h;
	}
	if (most >= 2)
		most_lam = lam[most];
	if (alone == 0 || k < 2 || lam[2] < RECALL_CHANCE_POWER)
		goto out; /* no test: finding none together says nothing */
#ifndef CAIRN_MUTATE_NO_CHANCE_ALL
	if (lam[k] >= 1)
		goto out; /* no test: an answer could not be told from chance */
#endif
#ifndef CAIRN_MUTATE_NO_CHANCE_TOGETHER
	for (s = 3; s <= most && !linked; s++)
		linked = lam[s] < 1; /* s of them in one record, beyond chance */
#endif
	if (!linked && (double)met <= e) {
		/* the pool's meetings are not enough: the store's, exactly */
		met = 0;
		for (i = 0; i < k && (double)met <= e; i++)
			for (j = i + 1; j < k && (double)met <= e; j++) {
				long long c;

				if (n * w[i].p * w[j].p >= 1)
					continue;
				rc = chance_count(db, schema, t, w[i].mask,
						  w[j].mask, &m, &st, &c);
				if (rc)
					goto out;
				met += c;
			}
	}
	linked = linked || (double)met > e;
	chance = !linked;
#ifdef CAIRN_MUTATE_NO_CHANCE
	chance = 0; /* negative control: chance-level matches answer */
#endif
	for (i = first; chance && i < pool->n; i++)
		if (!pool->v[i].rec->src_path)
			pool->v[i].answer = 0;
out:
	if (res) {
		res->chance_words = k;
		res->chance_expected = k >= 2 ? lam[2] : 0;
		res->chance_all_expected = k >= 2 ? lam[k] : 0;
		res->chance_pair_expected = e;
		res->chance_met = (size_t)met;
		res->chance_together = most;
		res->chance_together_expected = most_lam;
		res->chance_only = chance;
	}
	sqlite3_finalize(st);
	sbuf_release(&m);
	return rc;
}

/*
 * A lone word in common (candidates [first, n) of one schema): a hit that
 * matches one word of the question, while a heavier word of it (rarer in
 * the store, or never said there) goes unmatched, shares an incidental
 * word with the question -- "drop" of "how do I tune a guitar to drop D"
 * in a record about dropping a column -- and does not answer it: its
 * answerability is 0. One matched word that is the question's heaviest is
 * kept: a passage about Walmart answers "where did the idea of walmart
 * come from" through that word alone. A seeded file's chunks count the
 * words they match together (doc_answer ran first).
 */
void answer_lone(struct pool *pool, size_t first,
			const struct answer_plan *p, long long ndocs,
			cairn_result *res)
{
	double heavy = 0;
	size_t i;

#ifdef CAIRN_MUTATE_NO_LONE_WORD
	return; /* negative control: one incidental word answers */
#endif
	if (ndocs < RECALL_LONE_MIN_DOCS)
		return;
	for (i = 0; i < p->n; i++)
		if (p->u[i].mass > heavy)
			heavy = p->u[i].mass;
	for (i = first; i < pool->n; i++) {
		struct cand *c = &pool->v[i];

		/* RECALL_LONE_EPS: the heaviest word's own mass, rounding aside */
		if (c->words == 1 && c->covered < heavy * (1 - RECALL_LONE_EPS)) {
			if (c->answer > res->answer_lone)
				res->answer_lone = c->answer;
			res->lone++;
			c->answer = 0;
			c->lone = 1;
		}
	}
}
