/*
 * recall.c -- lexical recall (SPEC 5.2): BM25 inside SQLite over our own
 * tokenizer, kind/status weights, the calibrated no-match floor, receipts
 * (SPEC 5.3) and last_seen bookkeeping.
 *
 * Layer: on fts/tokenize, store, vector/embed (the dense pool), rank (the
 * hybrid steps) and lifecycle (ageing before a search, the last_seen clock).
 * Above it: cli, eval, hook, mcp.
 *
 * Two modes. Lexical only (no model configured, or no record has a vector
 * yet): the steps below, exactly as in recall part 1. Hybrid (issue 5;
 * docs/RANKING.md): the same BM25 pool (both schemas ranked together), the
 * dense pool of the embedded question (vector_search), each BM25 hit's own
 * cosine from its stored vector, the exact drawer, then rank_run(): RRF,
 * the overwhelming BM25 pin, the cosine floor calibrated for this vector
 * identity (lexical floor for hits without a vector), weights, decay,
 * per-source de-duplication.
 *
 * The pipeline, each step named in --explain:
 *   1. terms:   the question is tokenised exactly as records are (query
 *               mode), de-duplicated; stop words are dropped unless nothing
 *               else is left; at most RECALL_MAX_TERMS, rarest first.
 *   2. bm25:    FTS5's BM25 over title and body (title weighted
 *               RECALL_W_TITLE), OR of the terms, ranked inside FTS5 by
 *               cairn_rank (exactly bm25()'s scores and order, reading
 *               fewer rows: see aux_rank and struct terms_order), pool of
 *               RECALL_POOL after the status and kind filters.
 *   3. signal:  each hit's lexical signal s = its BM25 over the most the
 *               question could score (see score_signal()), and its
 *               answerability a (score_answer()): the share of the
 *               question's informative IDF mass it matches, each word
 *               weighed by what can match it (glosses, background idf);
 *               0 for every hit when the question's specific words meet
 *               in the pool no more often than chance (answer_chance()).
 *   4. floor:   the question is answered when its best a is above the
 *               floor; then a hit with a <= min(floor, default) is
 *               dropped; relevance = clamp((a - that) / (1 - that), 0, 1).
 *               The floor is measured by cairn_calibrate() from questions
 *               the store cannot answer (their median), for this
 *               tokenizer identity; RECALL_DEFAULT_FLOOR otherwise.
 *   5. score:   weight(kind, status)^RANK_WEIGHT_EXP x (bm25 / best bm25),
 *               x (1 + RECALL_DATE_BOOST) for a record that states a date
 *               when the question asks when (answer type; Chinese only);
 *               ties keep BM25 order.
 *   6. receipt: query hash, ordered ids, provider and revision, per-hit
 *               figures; last_seen of the returned records, in one write.
 *
 * Must never: return a record whose status the caller did not ask for
 * (default: accepted + unverified), or write anything when no_receipt.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bilingual.h"
#include "glossary.h"
#include "drift.h"
#include "fts.h"
#include "json.h"
#include "lifecycle.h"
#include "store.h"
#include "rank.h"
#include "recall_int.h"
#include "receipt.h"
#include "rerank.h"
#include "termstat.h"
#include "tokenize.h"
#include "vector.h"

#define RECALL_POOL 200            /* BM25 pool size (SPEC 5.2: ~200) */
/*
 * FTS5 rows ranked before the status and kind filters: a quarter more than
 * the pool (bench/recall_bench.c, 30k records: p50 ratio to FTS5 0.49 with
 * 4 x the pool, 0.47 with 2.5 x, 0.41 with 1.25 x, the same hits); when the
 * filters leave the pool short, search_schema ranks again with more.
 */
#define RECALL_INNER (RECALL_POOL + RECALL_POOL / 4)
#define RECALL_PRUNE_ROWS (2 * RECALL_INNER) /* rows ranked by pass 1 (struct terms_order) */
#define RECALL_GROW 8              /* the heap's growth when the filters leave the pool short */
#define RECALL_MAX_TERMS 64        /* query terms kept (the aux mask is 64 bits) */
#define RECALL_MAX_QUERY (64 * 1024) /* bytes in a question */
#define RECALL_MAX_K 100           /* most hits one call returns */
#define RECALL_W_TITLE 2.0         /* bm25() weight of the title column */
#define RECALL_W_BODY 1.0          /* bm25() weight of the body column */
#define RECALL_K1 1.2              /* FTS5 bm25()'s k1 (fixed in fts5_bm25.c) */
#define RECALL_IDF_MIN 1e-6        /* FTS5's floor for a term's idf */
/*
 * Weight of an English gloss of a Chinese question word (from the
 * bilingual dictionary) relative to the question's own terms: a
 * translation is weaker evidence than the word itself.
 */
#define RECALL_GLOSS_WEIGHT 0.5
#define RECALL_SAME 4 /* glosses of one word that the question says itself, kept */
/*
 * A question that asks for a time (asks_when()) prefers records that state
 * a date (states_date()): their score is multiplied by 1 + this. Measured
 * (bench/results/EVAL.md): any value from 0.05 to 1.0 gives the same
 * rgb-zh and cmrc2018 results; 5 costs cmrc2018 R@1 0.984 -> 0.979.
 */
#define RECALL_DATE_BOOST 0.1
/*
 * Floor used before `cairn calibrate` has measured one for this tokenizer:
 * a hit must match more than this share of the question's informative
 * mass (its answerability, score_answer()). Measured on ../shared/eval's
 * dev sets (docs/RANKING.md): the lowest answerability of an answer in
 * the top 3 is 0.127 (one LoCoMo question; then 0.206); the two halves
 * of dev, each taken alone, allow 0.12 and 0.22 without loss, and this
 * is the lower. A question that shares no informative word with the
 * store is empty at any floor; calibration raises it from probes.
 */
#define RECALL_DEFAULT_FLOOR CAIRN_DEFAULT_FLOOR
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
 * Words of an ordinary record, for a Chinese word's background idf: a
 * word whose share of jieba's dictionary counts is p turns up in a record
 * of this many words with a chance of about this x p, so its idf there is
 * -log(RECALL_BG_WORDS x p). A word the store never says weighs no more
 * than that in the answerability (score_answer): 需要 or 准备 missing from
 * an English store says little, 吉他 or 红烧肉 missing says a lot.
 */
#define RECALL_BG_WORDS 100.0
/*
 * A name the store never says (names_in(): Kafka, GraphQL, RuboCop) weighs
 * this many times an unseen word in the answerability: a question about
 * a thing the store has never heard of is about that thing, and a name,
 * unlike a common word, has no synonym a record could use instead.
 */
#define RECALL_UNSEEN_NAME 2.0

/* ------------------------------------------------------------- stop words */

/*
 * Function words of questions in English and Chinese. They carry no topic,
 * and dropping them keeps "how do I ..." from matching every record that
 * says "how". Compared after tokenisation (so stemmed forms match).
 */
static const char *const stop_en[] = {
	"a", "about", "am", "an", "and", "any", "are", "as", "at", "be",
	"been", "but", "by", "can", "could", "did", "do", "does", "doing",
	"for", "from", "had", "has", "have", "how", "i", "if", "in", "into",
	"is", "it", "its", "me", "my", "of", "on", "or", "our", "should",
	"so", "than", "that", "the", "their", "them", "then", "there",
	"these", "they", "this", "those", "to", "us", "was", "we", "were",
	"what", "when", "where", "which", "who", "whom", "why", "will",
	"with", "would", "you", "your", "s", "t", "d", "ll", "re", "ve",
	"m", "also", "just", "some", "such", "up", "out", "there",
};
static const char *const stop_zh[] = {
	"的", "了", "是", "在", "我", "我们", "你", "你们", "他", "她",
	"它", "有", "和", "与", "就", "都", "也", "很", "吗", "呢", "吧",
	"啊", "呀", "么", "什么", "怎么", "怎样", "如何", "为什么", "哪",
	"哪些", "哪个", "谁", "多少", "这", "那", "这个", "那个", "一个",
	"要", "会", "能", "可以", "应该", "是否", "还是", "或者", "把",
	"被", "给", "对", "从", "到", "用", "让", "请", "问", "吗？",
	"哪里", "哪儿", "没有", "有没有", "之后", "之前", "以后", "以前",
	"能不能", "可不可以", "是不是", "会不会", "要不要", "时候",
	"什么样", "怎么样", "为何", "何时", "这些", "那些", "一些",
	"他们", "它们", "咱们", "当初", "最后",
};

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

static void terms_release(struct terms *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		cairn_free(t->v[i].text);
	cairn_free(t->v);
	memset(t, 0, sizeof(*t));
}

static int is_stop_word(const char *s, size_t len);

/*
 * A stop word, or a character bigram made only of stop characters: the
 * tokenizer's out-of-dictionary fallback turns runs of single characters
 * such as 用的是 into bigrams (用的, 的是) that carry no topic either.
 */
static int is_stop(const char *s, size_t len)
{
	size_t a;

#ifdef CAIRN_MUTATE_NO_STOPWORDS
	return 0; /* negative control: every word is searched */
#endif
	if (is_stop_word(s, len))
		return 1;
	if (len < 4 || (unsigned char)s[0] < 0xE0)
		return 0;
	a = util_u8len((unsigned char)s[0]);
	return a < len && a + util_u8len((unsigned char)s[a]) == len &&
	       is_stop_word(s, a) && is_stop_word(s + a, len - a);
}

static int is_stop_word(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stop_en); i++)
		if (strlen(stop_en[i]) == len && memcmp(stop_en[i], s, len) == 0)
			return 1;
	for (i = 0; i < ARRAY_SIZE(stop_zh); i++)
		if (strlen(stop_zh[i]) == len && memcmp(stop_zh[i], s, len) == 0)
			return 1;
	return 0;
}

static int add_term(struct terms *t, const char *token, size_t len);
static int has_han(const char *s, size_t len);

/*
 * Chinese words that ask for a time, as the tokenizer emits them
 * (simplified; 什么时候 -> 什么 时候, 哪一年 -> 一年 哪一年): the answer is a
 * date. They are mostly stop words, so this is checked on every token of
 * the question before stop words are dropped.
 */
static const char *const when_zh[] = {
	"时间", "时候", "何时", "几时", "日期", "哪年", "哪一年", "哪一天",
	"几月", "几号",
};

static int asks_when(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(when_zh); i++)
		if (strlen(when_zh[i]) == len && memcmp(when_zh[i], s, len) == 0)
			return 1;
	return 0;
}

/* Does text state a date the Chinese way: digits then 年, 月, 日 or 号? */
static int states_date_in(const char *s)
{
	static const char *const unit[] = {"年", "月", "日", "号"};
	const char *p;
	size_t i;

	for (p = s; p && *p; p++) {
		if (*p < '0' || *p > '9' || (p[1] >= '0' && p[1] <= '9'))
			continue;
		for (i = 0; i < ARRAY_SIZE(unit); i++)
			if (strncmp(p + 1, unit[i], strlen(unit[i])) == 0)
				return 1;
	}
	return 0;
}

static int states_date(const cairn_record *r)
{
	return states_date_in(r->title) || states_date_in(r->body);
}

/*
 * Is the question's text [start, end) written as a name: Latin letters
 * and digits with a capital after the first letter (GraphQL, iOS, ORM),
 * or a capital word not at the start of a sentence (Kafka)?
 */
static int names_in(const struct terms *t, size_t start, size_t end)
{
	const char *s = t->q;
	size_t i, b;
	int upper_after = 0;

	for (i = start; i < end; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 'A' && ch <= 'Z')
			upper_after |= i > start;
		else if (!(ch >= 'a' && ch <= 'z') && !(ch >= '0' && ch <= '9'))
			return 0;
	}
	if (upper_after)
		return 1;
	if (!(s[start] >= 'A' && s[start] <= 'Z'))
		return 0;
	/* a capital first letter: a name unless it starts a sentence */
	for (b = start; b > 0 && (s[b - 1] == ' ' || s[b - 1] == '\t' ||
				  s[b - 1] == '\n' || s[b - 1] == '"' ||
				  s[b - 1] == '(');
	     b--)
		;
	return !(b == 0 || s[b - 1] == '.' || s[b - 1] == '?' ||
		 s[b - 1] == '!' || s[b - 1] == ':');
}

static int collect_term(void *user, const char *token, size_t len,
			size_t start, size_t end, int colocated)
{
	struct terms *t = user;
	size_t i, idx;

	(void)colocated;
	if (len == 0)
		return 0;
	if (asks_when(token, len))
		t->when = 1;
	for (i = 0; i < t->n; i++)
		if (t->v[i].len == len && memcmp(t->v[i].text, token, len) == 0)
			break;
	idx = i;
	if (idx == t->n && t->n >= 4 * RECALL_MAX_TERMS)
		return 0;
	if (idx == t->n) {
		int rc = add_term(t, token, len);

		if (rc)
			return rc;
	}
	if (t->q && start < end && end <= t->qlen && names_in(t, start, end))
		t->v[idx].name = 1;
	return 0;
}

static int add_term(struct terms *t, const char *token, size_t len)
{
	if (t->n == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 16;
		struct qterm *nv = util_realloc(t->v, ncap * sizeof(*nv));

		if (!nv)
			return CAIRN_NOMEM;
		t->v = nv;
		t->cap = ncap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].text = util_strndup(token, len);
	if (!t->v[t->n].text)
		return CAIRN_NOMEM;
	t->v[t->n].len = len;
	t->v[t->n].stop = is_stop(token, len);
	t->v[t->n].weight = 1.0;
	t->v[t->n].bg_idf = HUGE_VAL;
	if (t->tk && has_han(token, len)) {
		double lp = tok_word_logp(t->tk, token, len);
		size_t a = util_u8len((unsigned char)token[0]);

		/*
		 * A pair of characters the dictionary does not know is the
		 * tokenizer's fallback bigram (过用 of 考虑过用): no word, as
		 * telling as the rarer of its two characters.
		 */
		if (lp > 0 && a == 3 && len == 6) {
			double l1 = tok_word_logp(t->tk, token, 3);
			double l2 = tok_word_logp(t->tk, token + 3, 3);

			if (l1 <= 0 && l2 <= 0)
				lp = l1 < l2 ? l1 : l2;
		}
		if (lp <= 0)
			t->v[t->n].bg_idf = -lp - log(RECALL_BG_WORDS);
	}
	t->n++;
	return 0;
}

/* Tokenise the question; drop stop words unless only stop words remain. */
static int query_terms(struct cairn_db *db, struct tok *tk, const char *q,
		       struct terms *t)
{
	char err[256];
	size_t i, j, content = 0;
	int rc;

	t->tk = tk;
	t->q = q;
	t->qlen = strlen(q);
	rc = tok_run(tk, q, strlen(q), TOK_QUERY, collect_term, t, err,
		     sizeof(err));
	if (rc == CAIRN_NOMEM)
		return store_error(db, rc, "out of memory");
	if (rc)
		return store_error(db, rc, "question: %s", err);
	for (i = 0; i < t->n; i++)
		content += !t->v[i].stop;
	if (content == 0)
		return CAIRN_OK; /* only stop words: search them as they are */
	for (i = j = 0; i < t->n; i++) {
		if (t->v[i].stop) {
			cairn_free(t->v[i].text);
			continue;
		}
		t->v[j++] = t->v[i];
	}
	t->n = j;
	return CAIRN_OK;
}

/* ------------------------------------------------------ bilingual glosses */

static int has_han(const char *s, size_t len)
{
	size_t i;

	/* U+3400..U+9FFF: lead bytes E3 (from U+3400) .. E9 */
	for (i = 0; i + 2 < len; i++)
		if ((unsigned char)s[i] >= 0xE3 && (unsigned char)s[i] <= 0xE9)
			return 1;
	return 0;
}

struct gloss_ctx {
	struct terms *t;   /* the question's terms */
	struct tok *tk;    /* to tokenise each gloss word like a record */
	size_t from;       /* the Chinese term being translated */
	int rc;            /* sticky error */
};

static int collect_gloss_token(void *user, const char *token, size_t len,
			       size_t start, size_t end, int colocated)
{
	struct gloss_ctx *g = user;
	struct terms *t = g->t;
	size_t i;

	(void)start;
	(void)end;
	if (colocated || len == 0 || is_stop(token, len))
		return 0;
	for (i = 0; i < t->n; i++) {
		struct qterm *w = &t->v[g->from];

		if (t->v[i].len != len || memcmp(t->v[i].text, token, len) != 0)
			continue;
		/* "forms-api 的表单": form stands for 表单 in the answerability */
		if (i != g->from && !t->v[i].gloss && w->nsame < RECALL_SAME)
			w->same[w->nsame++] = i;
		return 0;
	}
	if (t->n >= 4 * RECALL_MAX_TERMS)
		return 0;
	if (add_term(t, token, len))
		return CAIRN_NOMEM;
	t->v[t->n - 1].gloss = 1;
	t->v[t->n - 1].weight = RECALL_GLOSS_WEIGHT;
	t->v[t->n - 1].from = g->from;
	return 0;
}

static void emit_gloss(void *user, const char *word, size_t n)
{
	struct gloss_ctx *g = user;
	char err[64];

	if (g->rc)
		return;
	g->rc = tok_run(g->tk, word, n, TOK_QUERY, collect_gloss_token, g,
			err, sizeof(err));
}

/* Emit each space-separated word of a glossary value. */
static void emit_words(struct gloss_ctx *g, const char *en)
{
	while (*en && !g->rc) {
		size_t n = strcspn(en, " ");

		if (n)
			emit_gloss(g, en, n);
		en += n;
		en += *en == ' ';
	}
}

/* A Chinese term the store never says: one a gloss may stand in for. */
static int glossable(const struct qterm *q)
{
	return q->len >= 6 && q->df == 0 && has_han(q->text, q->len);
}

/*
 * Add the English glosses of the question's Chinese words (two characters
 * or more; single characters are mostly function words with dozens of
 * senses) that occur in no record of the store, tokenised as records are,
 * at RECALL_GLOSS_WEIGHT: first the engineering sense from the built-in
 * glossary (glossary.h; also for two adjacent words, a compound the
 * segmenter split, such as 正式 环境), then CC-CEDICT's glosses when a
 * dictionary is configured. This lets a Chinese question find an English
 * record (SPEC 5.2; issue 3's paraphrase-zh category) without adding
 * noise where the store already speaks Chinese: glossing every word cost
 * cmrc2018 R@1 0.984 -> 0.972. Call after term_stats() (uses df).
 */
static int add_glosses(struct cairn_db *db, struct tok *tk, struct terms *t)
{
	struct gloss_ctx g;
	size_t i, n = t->n;
	char pair[2 * TOK_MAX_TOKEN_BYTES];
	const char *en;

	memset(&g, 0, sizeof(g));
	g.t = t;
	g.tk = tk;
	for (i = 0; i < n && g.rc == 0; i++) {
		/* translate only what the store does not say in Chinese */
		if (!glossable(&t->v[i]))
			continue;
		g.from = i;
#ifndef CAIRN_MUTATE_NO_GLOSSARY
		en = glossary_lookup(t->v[i].text, t->v[i].len);
		if (en)
			emit_words(&g, en);
		if (i + 1 < n && glossable(&t->v[i + 1]) &&
		    t->v[i].len + t->v[i + 1].len <= sizeof(pair)) {
			memcpy(pair, t->v[i].text, t->v[i].len);
			memcpy(pair + t->v[i].len, t->v[i + 1].text,
			       t->v[i + 1].len);
			en = glossary_lookup(pair,
					     t->v[i].len + t->v[i + 1].len);
			if (en)
				emit_words(&g, en);
		}
#else
		(void)en; /* negative control: no glossary */
		(void)pair;
		(void)emit_words;
#endif
		if (db->bil)
			bil_lookup(db->bil, t->v[i].text, t->v[i].len,
				   emit_gloss, &g);
	}
	if (g.rc)
		return store_error(db, g.rc, "translating the question");
	return CAIRN_OK;
}

/* Load the bilingual dictionary named by $CAIRN_BILINGUAL once per handle. */
static int load_bilingual(struct cairn_db *db)
{
	const char *path = db->bil_path;
	char err[256];
	int rc;

	if (db->bil || db->bil_tried)
		return CAIRN_OK;
	db->bil_tried = 1;
	if (!path || !*path)
		return CAIRN_OK;
	rc = bil_open(path, &db->bil, err, sizeof(err));
	if (rc)
		return store_error(db, rc, "bilingual dictionary: %s", err);
	return CAIRN_OK;
}

/* ------------------------------------------------------- FTS5 aux function */

/*
 * cairn_rank(records_fts, ctx): BM25 of the current row, ranked in C.
 *
 * Called once per matching row by search_schema's statement, which sorts
 * nothing itself: the rows go into ctx's heap of the best ctx->cap, in
 * the order SQLite's "ORDER BY s LIMIT cap" keeps (higher score first,
 * then the earlier row: its sort is stable). The score is FTS5's BM25
 * (k1 = 1.2, b = 0.75, fts5_bm25.c) with the idf of each phrase given by
 * recall (a gloss counts RECALL_GLOSS_WEIGHT of a word of the question):
 * per phrase f = sum of column weight x count, score += idf x (f (k1 +
 * 1)) / (f + k1 (1 - b + b |D| / avgdl)), evaluated in the order bm25()
 * evaluates it, so that with FTS5's own idfs it is bit for bit bm25()'s
 * (negated). Also the mask of the phrases that occur in the row.
 *
 * Reading the row's length |D| (a lookup in FTS5's docsize table) is most
 * of a row's cost. A column holds at least one token more than the
 * highest position a phrase was found at (FTS5 numbers a column's tokens
 * from 0, colocated ones sharing a position, and counts them the same
 * way in docsize), so the same sum with that lower bound of |D|, the
 * same operations in the same order, is an upper bound of the score
 * (each step is monotonic, in floating point too): once the heap is full,
 * a row whose bound is below its worst score cannot enter it and its
 * length is never read. Exact: the kept rows and their order are those
 * of the plain sort.
 */
struct rank_hit {
	double score;        /* BM25, higher is better */
	sqlite3_int64 rowid; /* FTS5 rowid = records.rid */
	sqlite3_int64 mask;  /* matched phrases */
	sqlite3_int64 seq;   /* visiting order, for ties */
};

struct rank_ctx {
	int n;                         /* phrases */
	double idf[RECALL_MAX_TERMS];  /* idf x weight per phrase, MATCH order */
	double wcol[2];                /* title and body weights */
	double avgdl;                  /* average row length (first row) */
	int have_avgdl;
	int first;                     /* phrase of the first term (see search_schema) */
	double floor;                  /* no kept row can score below it */
	size_t cap;                    /* keep the best cap rows; 0: all */
	struct rank_hit *v;            /* kept rows (a heap, worst first, when cap) */
	size_t nv, alloc;
	sqlite3_int64 seen;            /* rows visited */
	sqlite3_int64 last;            /* rowid of the last row visited */
	size_t unread;                 /* rows left out by the bound */
	int nomem;
	const uint32_t *lens;          /* row lengths by rowid (termstat.h), or NULL */
	size_t nlens;
};

/* a ranks below b: lower score, or the same score and visited later */
static int hit_worse(const struct rank_hit *a, const struct rank_hit *b)
{
	return a->score < b->score || (a->score == b->score && a->seq > b->seq);
}

static void heap_down(struct rank_hit *v, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		struct rank_hit tmp;

		if (l < n && hit_worse(&v[l], &v[w]))
			w = l;
		if (r < n && hit_worse(&v[r], &v[w]))
			w = r;
		if (w == i)
			return;
		tmp = v[i];
		v[i] = v[w];
		v[w] = tmp;
		i = w;
	}
}

static void heap_up(struct rank_hit *v, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		struct rank_hit tmp;

		if (!hit_worse(&v[i], &v[p]))
			return;
		tmp = v[i];
		v[i] = v[p];
		v[p] = tmp;
		i = p;
	}
}

/* Keep h if it is among the best c->cap (all when cap is 0). */
static void rank_keep(struct rank_ctx *c, const struct rank_hit *h)
{
	if (c->cap && c->nv == c->cap) {
		if (!hit_worse(&c->v[0], h))
			return;
		c->v[0] = *h;
		heap_down(c->v, c->nv, 0);
		return;
	}
	if (c->nv == c->alloc) {
		size_t na = c->alloc ? 2 * c->alloc : 256;
		struct rank_hit *nv;

		if (c->cap && na > c->cap)
			na = c->cap;
		nv = util_realloc(c->v, na * sizeof(*nv));
		if (!nv) {
			c->nomem = 1;
			return;
		}
		c->v = nv;
		c->alloc = na;
	}
	c->v[c->nv++] = *h;
	if (c->cap)
		heap_up(c->v, c->nv - 1);
}

/* Sum over the phrases with frequencies f[] for a row of length D. */
static double bm25_sum(const struct rank_ctx *c, const double *f, double D)
{
	const double k1 = RECALL_K1, b = 0.75;
	double score = 0;
	int i;

	for (i = 0; i < c->n; i++)
		if (f[i] > 0)
			score += c->idf[i] * ((f[i] * (k1 + 1.0)) /
					      (f[i] + k1 * (1 - b + b * D /
								  c->avgdl)));
	return score;
}

static void aux_rank(const Fts5ExtensionApi *api, Fts5Context *ctx,
		     sqlite3_context *out, int nval, sqlite3_value **vals)
{
	struct rank_ctx *c = nval == 1 ? sqlite3_value_pointer(vals[0],
							       "cairn_rank")
				       : NULL;
	double f[RECALL_MAX_TERMS];
	struct rank_hit h;
	int i, ntok = 0, top[2] = { -1, -1 };

	if (!c || c->first + c->n > api->xPhraseCount(ctx)) {
		sqlite3_result_error(out, "cairn_rank: wrong arguments", -1);
		return;
	}
	h.rowid = api->xRowid(ctx);
	if (c->seen > 0 && h.rowid == c->last)
		return; /* the same row again: counted once */
	c->last = h.rowid;
	h.seq = c->seen++;
	if (!c->have_avgdl) {
		sqlite3_int64 nrow = 0, total = 0;

		api->xRowCount(ctx, &nrow);
		api->xColumnTotalSize(ctx, -1, &total);
		c->avgdl = nrow > 0 && total > 0 ? (double)total / (double)nrow
						 : 1;
		c->have_avgdl = 1;
	}
	h.mask = 0;
	for (i = 0; i < c->n; i++) {
		Fts5PhraseIter it;
		int col = -1, off = -1;

		f[i] = 0;
		if (api->xPhraseFirst(ctx, c->first + i, &it, &col, &off) !=
		    SQLITE_OK)
			continue;
		for (; col >= 0; api->xPhraseNext(ctx, &it, &col, &off)) {
			if (col >= 2)
				continue;
			f[i] += c->wcol[col];
			if (off > top[col])
				top[col] = off;
		}
		if (f[i] > 0 && i < 64)
			h.mask |= (sqlite3_int64)((sqlite3_uint64)1 << i);
	}
	if (c->cap) {
		double worst = c->nv == c->cap && c->v[0].score > c->floor
				       ? c->v[0].score
				       : c->floor;

#ifndef CAIRN_MUTATE_NO_RANK_BOUND
		if (bm25_sum(c, f, (double)(top[0] + 1 + top[1] + 1)) <
		    worst) {
#else
		if (worst > -HUGE_VAL) { /* negative control: no bound */
#endif
			c->unread++;
			return; /* cannot be kept: its length is not read */
		}
	}
	if (h.rowid >= 0 && (sqlite3_uint64)h.rowid < c->nlens &&
	    c->lens[h.rowid] != TERMSTAT_NO_ROW)
		ntok = (int)c->lens[h.rowid]; /* FTS5's docsize, kept */
	else if (api->xColumnSize(ctx, -1, &ntok) != SQLITE_OK)
		ntok = 0;
	h.score = bm25_sum(c, f, (double)ntok);
	rank_keep(c, &h);
	(void)out;
}

/* Best first: the order of SQLite's stable "ORDER BY -score". */
static int hit_cmp(const void *a, const void *b)
{
	const struct rank_hit *x = a, *y = b;

	return hit_worse(y, x) ? -1 : hit_worse(x, y) ? 1 : 0;
}

static int register_aux(struct cairn_db *db)
{
	fts5_api *api = NULL;
	sqlite3_stmt *st = NULL;
	int src;

	if (db->aux_registered)
		return CAIRN_OK;
	src = sqlite3_prepare_v2(db->sql, "SELECT fts5(?1)", -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_pointer(st, 1, &api, "fts5_api_ptr", NULL);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (!api)
		return store_error(db, CAIRN_ERROR, "SQLite has no FTS5");
	src = api->xCreateFunction(api, "cairn_rank", NULL, aux_rank, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "registering cairn_rank");
	db->aux_registered = 1;
	return CAIRN_OK;
}

/* ------------------------------------------------------------------ floor */

static const char *floor_key = "lexical_floor";
/*
 * What a stored floor was measured on, after the tokenizer identity: a
 * floor of the old lexical signal (bm25 over the most possible) means
 * nothing on the answerability's scale, so it is not used.
 */
#define RECALL_FLOOR_SCALE " answer/1"

/* The identity a floor is stored with: tokenizer + RECALL_FLOOR_SCALE. */
void recall_floor_identity(const char *tok_id, char *out, size_t size)
{
	snprintf(out, size, "%s%s", tok_id, RECALL_FLOOR_SCALE);
}

/* The calibrated floor for this tokenizer identity, or the default. */
static double load_floor(struct cairn_db *db, const char *identity,
			 int *calibrated)
{
	sqlite3_stmt *st = NULL;
	double f = RECALL_DEFAULT_FLOOR;

	*calibrated = 0;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT v, (SELECT v FROM main.meta WHERE k = "
			       "?2) FROM main.meta WHERE k = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return f;
	sqlite3_bind_text(st, 1, floor_key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, "lexical_floor_identity", -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 1);

		char want[1100];

		recall_floor_identity(identity, want, sizeof(want));
		/* a floor measured for another tokenizer (or scale) is not used */
		if (id && strcmp(id, want) == 0) {
			f = sqlite3_column_double(st, 0);
			*calibrated = 1;
		}
	}
	sqlite3_finalize(st);
	return f;
}

/* ----------------------------------------------------------------- weights */

/*
 * SPEC 5.2's kind/status weights, one table for lexical and hybrid recall
 * (rank_config: the defaults, then the store's rank.weight.KIND).
 */
static double kind_weight(const struct rank_config *cfg,
			  const cairn_record *r)
{
	struct rank_cand x;

	memset(&x, 0, sizeof(x));
	x.kind = r->kind;
	x.status = r->status;
	x.confidence = r->confidence;
	return rank_weight_of(cfg, &x);
}

/* ------------------------------------------------------------------ recall */

struct cand {
	cairn_record *rec;   /* owned until moved into the result */
	double bm25;         /* raw, positive */
	int rank;            /* 1-based in its schema's pool */
	double best;         /* best bm25 of its schema's pool */
	sqlite3_int64 mask;  /* matched terms */
	double signal;       /* bm25 over the most the question could score */
	double answer;       /* answerability: share of the question covered */
	double covered;      /* answerability parts: IDF mass matched, */
	double mass;         /* ... the question's mass (what can match), */
	double unseen;       /* ... the part of it the store never says */
	double relevance;    /* above the floor */
	double weight;       /* kind/status */
	double score;        /* final */
	int dated;           /* lexical: score raised by RECALL_DATE_BOOST */
	/* hybrid only (0 otherwise) */
	int dense_rank;      /* 1-based in the dense pool; 0: not in it */
	double cosine;       /* with the question, when has_vector */
	int has_vector;      /* 1: a stored vector of this identity */
	int exact_key;       /* 1: the question is its key */
};

struct pool {
	struct cand *v; /* candidates */
	size_t n;       /* count */
	size_t cap;     /* allocated */
};

static void pool_release(struct pool *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		cairn_record_free(p->v[i].rec);
	cairn_free(p->v);
	memset(p, 0, sizeof(*p));
}

/*
 * The key of schema si's term-count and length files (termstat.h), and in
 * path the database file they sit beside; 0 when there is none to use:
 * no revision, no database file.
 */
static int term_key(struct cairn_db *db, const char *schema, int si,
		    long long ndocs, struct termstat_key *k, char *path,
		    size_t size)
{
	struct stat fs;

	if (!store_db_file(db, si, path, size) || stat(path, &fs) != 0 ||
	    store_revision(db, schema, &k->revision) != CAIRN_OK)
		return 0;
	k->ndocs = ndocs;
	k->dev = (uint64_t)fs.st_dev;
	k->ino = (uint64_t)fs.st_ino;
	return 1;
}

/* Rows of schema's records table into *n. */
static int count_records(struct cairn_db *db, const char *schema,
			 long long *n)
{
	char sql[96];
	sqlite3_stmt *st = NULL;
	int src;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.records", schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return src == SQLITE_OK ? CAIRN_OK : store_sql_error(db, src, "recall");
}

/* One SQLite varint (FTS5 writes docsize with sqlite3Fts5PutVarint). */
static const unsigned char *get_varint(const unsigned char *p,
				       const unsigned char *end, uint64_t *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 8 && p < end; i++, p++) {
		*v = (*v << 7) | (*p & 0x7f);
		if (!(*p & 0x80))
			return p + 1;
	}
	if (p >= end)
		return NULL;
	*v = (*v << 8) | *p;
	return p + 1;
}

/*
 * The row lengths of schema (termstat.h) under key: the file beside base
 * when it has them, else read from records_fts_docsize (every column's
 * size summed, as xColumnSize(-1) gives it), written, and mapped. *out
 * stays empty when neither works (recall then asks FTS5 row by row).
 */
static void row_lengths(struct cairn_db *db, const char *schema,
			const struct termstat_key *key, const char *base,
			struct termstat_lengths *out)
{
	char path[4300], sql[128];
	sqlite3_stmt *st = NULL;
	uint32_t *len = NULL;
	sqlite3_int64 max = -1;
	size_t n, i;

	memset(out, 0, sizeof(*out));
#ifdef CAIRN_MUTATE_NO_LENGTHS
	return;
#endif
	if (snprintf(path, sizeof(path), "%s" TERMSTAT_LEN_SUFFIX, base) >=
	    (int)sizeof(path))
		return;
	if (termstat_lengths_open(path, key, out) == 0)
		return;
	snprintf(sql, sizeof(sql),
		 "SELECT max(id) FROM %s.records_fts_docsize", schema);
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (max < 0 || max >= (sqlite3_int64)TERMSTAT_MAX_ROWID)
		return;
	n = (size_t)max + 1;
	len = util_calloc(n, sizeof(*len));
	if (!len)
		return;
	for (i = 0; i < n; i++)
		len[i] = TERMSTAT_NO_ROW;
	snprintf(sql, sizeof(sql), "SELECT id, sz FROM %s.records_fts_docsize",
		 schema);
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
		goto out;
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const unsigned char *p = sqlite3_column_blob(st, 1);
		const unsigned char *end = p + sqlite3_column_bytes(st, 1);
		uint64_t sum = 0, v;

		if (id < 0 || (size_t)id >= n)
			continue;
		while (p && p < end && (p = get_varint(p, end, &v)) != NULL)
			sum += v;
		if (!p || sum >= TERMSTAT_NO_ROW)
			continue; /* malformed: FTS5 is asked for this row */
		len[id] = (uint32_t)sum;
	}
	if (termstat_lengths_write(path, key, len, n) == 0)
		(void)termstat_lengths_open(path, key, out);
out:
	sqlite3_finalize(st);
	cairn_free(len);
}

/*
 * Document counts and idf of every term for schema si (terms counted for
 * it already are kept). Counts come from the term-count file beside base
 * when there is a key (recall's own read transaction: see termstat.h) and
 * it has them, else from fts5vocab, and those are appended to the file.
 * fts5vocab walks every position of a term to count its rows (~40% of a
 * 10k-record hook's instructions for a question of common words), hence
 * the file. Counting MATCH rows only up to half the store (all a floor
 * idf needs) was tried: 33% cheaper there but 30% dearer on
 * bench/recall_bench.c's 100k records, whose terms are rarer.
 */
static int term_stats(struct cairn_db *db, const char *schema, int si,
		      const struct termstat_key *key, const char *base,
		      struct terms *t, long long ndocs)
{
	char sql[160], path[4300];
	sqlite3_stmt *st = NULL;
	long long *df = NULL;
	char **txt = NULL;
	size_t *lens = NULL, i, nput = 0;
	unsigned char *put = NULL;
	int src, rc = CAIRN_OK, cached = key != NULL;

	if (t->n == 0)
		return CAIRN_OK;
	df = util_calloc(t->n, sizeof(*df));
	txt = util_calloc(t->n, sizeof(*txt));
	lens = util_calloc(t->n, sizeof(*lens));
	put = util_calloc(t->n, 1);
	if (!df || !txt || !lens || !put) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < t->n; i++) {
		df[i] = t->v[i].df_of == si + 1 ? t->v[i].df : -1;
		txt[i] = t->v[i].text;
		lens[i] = t->v[i].len;
	}
#ifdef CAIRN_MUTATE_NO_TERMSTAT
	cached = 0;
#endif
	if (cached)
		cached = snprintf(path, sizeof(path), "%s" TERMSTAT_SUFFIX,
				  base) < (int)sizeof(path);
	if (cached)
		termstat_get(path, key, t->n, txt, lens, df);
	snprintf(sql, sizeof(sql),
		 "SELECT doc FROM %s.records_vocab WHERE term = ?1", schema);
	for (i = 0; i < t->n; i++) {
		if (df[i] >= 0)
			continue;
		if (!st) {
			src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
			if (src != SQLITE_OK) {
				rc = store_sql_error(db, src, "recall");
				goto out;
			}
		}
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, t->v[i].text, (int)t->v[i].len,
				  SQLITE_STATIC);
		df[i] = sqlite3_step(st) == SQLITE_ROW
				? sqlite3_column_int64(st, 0)
				: 0;
		put[i] = 1;
		nput++;
	}
	if (cached && nput > 0)
		termstat_put(path, key, t->n, txt, lens, df, put);
	for (i = 0; i < t->n; i++) {
		double n = (double)ndocs, d;

		t->v[i].df = df[i];
		t->v[i].df_of = si + 1;
		d = (double)df[i];
		if (d > n)
			n = d;
		/*
		 * FTS5's own idf (fts5_bm25.c), so that the signal below is
		 * bounded by 1: terms in more than half the records weigh
		 * (almost) nothing, as they do in bm25().
		 */
		t->v[i].idf = log((n - d + 0.5) / (d + 0.5));
		if (t->v[i].idf <= 0)
			t->v[i].idf = RECALL_IDF_MIN;
	}
out:
	sqlite3_finalize(st);
	cairn_free(df);
	cairn_free(txt);
	cairn_free(lens);
	cairn_free(put);
	return rc;
}

/* Keep the RECALL_MAX_TERMS rarest terms (highest idf), in query order. */
static void cap_terms(struct terms *t)
{
	while (t->n > RECALL_MAX_TERMS) {
		size_t i, worst = 0;

		for (i = 1; i < t->n; i++)
			if (t->v[i].idf * t->v[i].weight <
			    t->v[worst].idf * t->v[worst].weight)
				worst = i;
		cairn_free(t->v[worst].text);
		memmove(&t->v[worst], &t->v[worst + 1],
			(t->n - worst - 1) * sizeof(t->v[0]));
		t->n--;
	}
}

/* Append a term as a quoted FTS5 string with the tokenizer's raw escape. */
static void add_raw(struct sbuf *m, const struct qterm *q)
{
	const char *p;

	sbuf_addc(m, '"');
	sbuf_addc(m, TOK_RAW);
	for (p = q->text; p < q->text + q->len; p++) {
		if (*p == '"')
			sbuf_addc(m, '"');
		sbuf_addc(m, *p);
	}
	sbuf_addc(m, '"');
}

/* Append a record of schema read by st (bound to rid) to the pool. */
static int pool_fetch(struct cairn_db *db, sqlite3_stmt *st,
		      const struct rank_hit *h, const int *mv, int nmv,
		      struct pool *pool, int *rank)
{
	struct cand *c;
	int src, j;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, h->rowid);
	src = sqlite3_step(st);
	if (src == SQLITE_DONE)
		return CAIRN_OK; /* filtered out (status, kind) */
	if (src != SQLITE_ROW)
		return store_sql_error(db, src, "recall");
	if (pool->n == pool->cap) {
		size_t ncap = pool->cap ? 2 * pool->cap : 32;
		struct cand *nv = util_realloc(pool->v, ncap * sizeof(*nv));

		if (!nv)
			return store_error(db, CAIRN_NOMEM, "out of memory");
		pool->v = nv;
		pool->cap = ncap;
	}
	c = &pool->v[pool->n];
	memset(c, 0, sizeof(*c));
	c->bm25 = h->score;
	/* phrase j of this schema's search is question term mv[j]: the
	 * mask is kept by term, as the schemas' phrases differ (df 0) */
	for (j = 0; j < nmv && j < 64; j++)
		if ((h->mask & (sqlite3_int64)((sqlite3_uint64)1 << j)) &&
		    mv[j] >= 0 && mv[j] < 64)
			c->mask |= (sqlite3_int64)((sqlite3_uint64)1 << mv[j]);
	c->rank = ++*rank;
	c->rec = store_row_record(st, 0);
	if (!c->rec)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	pool->n++;
	return CAIRN_OK;
}

/*
 * Which rows are ranked at all (MaxScore, exact). A term's share of a
 * row's BM25 is below idf x weight x (k1 + 1) whatever the row (the
 * frequency factor f (k1 + 1) / (f + K) stays below k1 + 1), so a row
 * that matches none of the "essential" terms (a prefix of the terms by
 * descending bound) scores below the sum of the other terms' bounds,
 * rest. The MATCH "(E1 OR E2 ...) AND (T1 OR T2 ...)" ranks only rows
 * with an essential term, every term still counting in their scores (the
 * essential phrases come first and get idf 0: cairn_rank reads the terms
 * from phrase `first` on). A question's common words match most of the
 * store; their rows are never read.
 *
 * Pass 1 takes the terms of highest bound until their document
 * frequencies add up to RECALL_PRUNE_ROWS. If it fills the heap
 * (RECALL_INNER rows) and its worst score is at least rest, no row left
 * out could have been kept: done. Otherwise that worst score is still a
 * lower bound of the true one (more rows only raise it), so pass 2 takes
 * as many terms as make rest smaller than it, and skips every row whose
 * bound is below it. Either way the kept rows, their scores and their
 * order are those of ranking the plain OR of the terms.
 */
struct terms_order {
	int ord[RECALL_MAX_TERMS];      /* index in the match list, best bound first */
	double bound[RECALL_MAX_TERMS]; /* idf x weight x (k1 + 1), same order */
	int n;
};

/* Bound of a row that matches none of ord[0 .. ness), with a margin. */
static double order_rest(const struct terms_order *to, int ness)
{
	double rest = 0;
	int j;

	for (j = ness; j < to->n; j++)
		rest += to->bound[j];
	return rest * (1 + 1e-9);
}

/*
 * The MATCH of terms mv[0 .. n) (raw-escaped), with the essential ones
 * ord[0 .. ness) in front when ness < n.
 */
static void build_match(struct sbuf *m, const struct terms *t,
			const int *mv, const struct terms_order *to, int ness)
{
	int i;

	sbuf_reset(m);
	if (ness < to->n) {
		sbuf_addc(m, '(');
		for (i = 0; i < ness; i++) {
			if (i)
				sbuf_adds(m, " OR ");
			add_raw(m, &t->v[mv[to->ord[i]]]);
		}
		sbuf_adds(m, ") AND (");
	}
	for (i = 0; i < to->n; i++) {
		if (i)
			sbuf_adds(m, " OR ");
		add_raw(m, &t->v[mv[i]]);
	}
	if (ness < to->n)
		sbuf_addc(m, ')');
}

/* One ranking pass: st over match, into c (heap of cap, floor, first). */
static int rank_pass(struct cairn_db *db, sqlite3_stmt *st,
		     const struct sbuf *match, struct rank_ctx *c)
{
	int src;

	if (match->err)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	c->nv = 0;
	c->seen = 0;
	c->unread = 0;
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, match->buf, (int)match->len, SQLITE_STATIC);
	sqlite3_bind_pointer(st, 2, c, "cairn_rank", NULL);
	while ((src = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "recall");
	if (c->nomem)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	return CAIRN_OK;
}

/*
 * Run the BM25 pool over one schema and append its candidates: rank the
 * matching rows inside FTS5 (cairn_rank keeps the best RECALL_INNER), then
 * read those records by rid, best first, through the status and kind
 * filters until the pool holds RECALL_POOL. Joining every matching row to
 * the records table before sorting cost most of recall's time on 100k
 * records, and sorting in SQL most of what remained (bench/README.md).
 * When the filters leave the pool short while more rows matched, rank
 * again keeping every row.
 */
static int search_schema(struct cairn_db *db, const char *schema,
			 const struct terms *t, const cairn_recall_opts *o,
			 const struct termstat_key *key, const char *base,
			 struct pool *pool)
{
	struct sbuf match = SBUF_INIT, sql = SBUF_INIT;
	struct termstat_lengths lens;
	struct rank_ctx rc_;
	struct terms_order to;
	sqlite3_stmt *st = NULL, *get = NULL;
	size_t i, first = pool->n;
	int rc = CAIRN_OK, src, rank = 0, mv[RECALL_MAX_TERMS], ness, j;
	long long rows = 0;
#ifndef CAIRN_MUTATE_NO_RECALL_STATUS
	/* SPEC 3: default recall searches accepted + unverified only */
	const char *statuses = o->statuses && *o->statuses
				       ? o->statuses
				       : "accepted,unverified";
#else
	const char *statuses = "all";
#endif

	memset(&rc_, 0, sizeof(rc_));
	memset(&to, 0, sizeof(to));
	memset(&lens, 0, sizeof(lens));
	rc_.wcol[0] = RECALL_W_TITLE;
	rc_.wcol[1] = RECALL_W_BODY;
	/* terms that occur nowhere cannot match; they still count in the mass */
	for (i = 0; i < t->n && to.n < RECALL_MAX_TERMS; i++) {
		double b = t->v[i].idf * t->v[i].weight * (RECALL_K1 + 1.0);

		if (t->v[i].df == 0)
			continue;
		mv[to.n] = (int)i;
		rc_.idf[to.n] = t->v[i].idf * t->v[i].weight;
		/* insertion by descending bound; ties keep question order */
		for (j = to.n; j > 0 && to.bound[j - 1] < b; j--) {
			to.ord[j] = to.ord[j - 1];
			to.bound[j] = to.bound[j - 1];
		}
		to.ord[j] = to.n;
		to.bound[j] = b;
		to.n++;
	}
	rc_.n = to.n;
	if (to.n == 0)
		goto out;
	/* the records, by rid, through the caller's filters */
	sbuf_addf(&sql, "SELECT " STORE_COLS " FROM %s.records WHERE rid = ?1",
		  schema);
	if (strcmp(statuses, "all") != 0)
		rc = store_add_in(db, &sql, "status", statuses,
				  cairn_status_valid, "status");
	if (rc == CAIRN_OK && o->kinds && *o->kinds)
		rc = store_add_in(db, &sql, "kind", o->kinds, cairn_kind_valid,
				  "kind");
	if (rc)
		goto out;
	src = sql.err ? SQLITE_NOMEM
		      : sqlite3_prepare_v2(db->sql, sql.buf, -1, &get, NULL);
	if (src == SQLITE_OK) {
		sbuf_reset(&sql);
		sbuf_addf(&sql,
			  "SELECT cairn_rank(records_fts, ?2) FROM "
			  "%s.records_fts WHERE records_fts MATCH ?1",
			  schema);
		src = sql.err ? SQLITE_NOMEM
			      : sqlite3_prepare_v2(db->sql, sql.buf, -1, &st,
						   NULL);
	}
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "recall");
		goto out;
	}
	if (key) {
		row_lengths(db, schema, key, base, &lens);
		rc_.lens = lens.len;
		rc_.nlens = lens.n;
	}
	/* pass 1 (struct terms_order) */
	for (ness = 0; ness < to.n && rows < RECALL_PRUNE_ROWS; ness++)
		rows += t->v[mv[to.ord[ness]]].df;
	rc_.cap = RECALL_INNER;
	rc_.floor = -HUGE_VAL;
	rc_.first = ness < to.n ? ness : 0;
	build_match(&match, t, mv, &to, ness);
	rc = rank_pass(db, st, &match, &rc_);
	if (rc)
		goto out;
	if (ness < to.n) {
		int full = rc_.nv == rc_.cap;
		double worst = full ? rc_.v[0].score : -HUGE_VAL;

#ifndef CAIRN_MUTATE_NO_PRUNE_CHECK
		if (!full || worst < order_rest(&to, ness)) {
#else
		if (!full) { /* negative control: pass 1 trusted unchecked */
#endif
			/* pass 2: enough terms for what pass 1 kept */
			while (ness < to.n && order_rest(&to, ness) >= worst)
				ness++;
			rc_.floor = worst;
			rc_.first = ness < to.n ? ness : 0;
			build_match(&match, t, mv, &to, ness);
			rc = rank_pass(db, st, &match, &rc_);
			if (rc)
				goto out;
		}
	}
fetch:
	if (rc_.nv > 1)
		qsort(rc_.v, rc_.nv, sizeof(rc_.v[0]), hit_cmp);
	for (i = 0; i < rc_.nv && pool->n - first < RECALL_POOL; i++) {
		rc = pool_fetch(db, get, &rc_.v[i], mv, (int)to.n, pool, &rank);
		if (rc)
			goto out;
	}
	if (rc_.cap > 0 && pool->n - first < RECALL_POOL &&
	    (rc_.seen > (sqlite3_int64)rc_.cap || rc_.first > 0 ||
	     rc_.floor > -HUGE_VAL)) {
		/*
		 * The filters ate the pool: rank again keeping RECALL_GROW
		 * times as many rows (every matching row once that is most
		 * of them).
		 */
		for (i = first; i < pool->n; i++)
			cairn_record_free(pool->v[i].rec);
		pool->n = first;
		rank = 0;
		rc_.cap = rc_.cap * RECALL_GROW < (size_t)rc_.seen
				  ? rc_.cap * RECALL_GROW
				  : 0;
		rc_.floor = -HUGE_VAL;
		rc_.first = 0;
		build_match(&match, t, mv, &to, to.n);
		rc = rank_pass(db, st, &match, &rc_);
		if (rc)
			goto out;
		goto fetch;
	}
	for (i = first; i < pool->n; i++)
		pool->v[i].best = pool->v[first].bm25;
out:
	sqlite3_finalize(st);
	sqlite3_finalize(get);
	termstat_lengths_close(&lens);
	cairn_free(rc_.v);
	sbuf_release(&sql);
	sbuf_release(&match);
	return rc;
}

/*
 * The lexical signal: BM25 normalised by the most the question could score,
 * s = bm25 / ((k1 + 1) x sum of the terms' idf x the title weight) in 0..1.
 * A term's BM25 contribution approaches idf x (k1 + 1) as its frequency
 * grows, so s is 1 only for a record that matches every term of the
 * question densely; terms found nowhere in the store still count in the
 * sum, so a question about something the store never mentions scores low
 * even when a few common words match. Measured against the share of IDF
 * mass matched (which ignores frequency and length): on adr-workspace it
 * separates paraphrased questions from probes better (the highest probe
 * fell from 0.69 to 0.27).
 */
static void score_signal(struct cand *c, const struct terms *t)
{
	double all = 0;
	size_t i;

	for (i = 0; i < t->n; i++)
		all += t->v[i].idf * t->v[i].weight;
	all *= (RECALL_K1 + 1.0) * RECALL_W_TITLE;
	c->signal = all > 0 ? c->bm25 / all : 0;
	if (c->signal > 1)
		c->signal = 1;
}

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
 * Chance co-occurrence (issue 17, answer_chance()): a word is specific
 * when its share of the store's records (with the background ones of
 * RECALL_BG_DOCS) is below 1 / sqrt(N), so that chance puts a pair of
 * them in one record less than once. When the question's specific words
 * would meet at least this many times by chance over all their pairs,
 * the pool can tell related words from unrelated ones: if its records
 * hold no more of those pairs than chance would, the question's words
 * are unrelated in this store (a bag of random words, not a question
 * about something it holds) and no hit answers it. Below it (one specific
 * word, or words too rare to meet by chance) the test says nothing.
 * Measured (bench/results/EVAL.md): 0.2 to 0.4 empty 28 to 34 of
 * recall_bench's 60 random-word queries at --n 20000.
 */
#define RECALL_CHANCE_POWER CAIRN_CHANCE_POWER

/*
 * The plan of the answerability (issue 17): each question word weighed by
 * what can match it.
 *   - a word the store says: its idf (answer_idf); matched or not;
 *   - a Chinese word the store never says whose glosses it does say
 *     (add_glosses): the idf of its best gloss the store says, matched by
 *     the best gloss the hit holds -- not the Chinese word's own idf, which
 *     no English record could ever match (that normaliser left Chinese
 *     questions about English records at 0.00 to 0.06);
 *   - a word the store never says, in no form: the idf of a word in no
 *     record (a Chinese one no more than its background idf, a name
 *     twice), never matched (unseen: a question that names what the store
 *     has never heard of -- Kafka, sourdough, 吉他 -- is mostly unseen).
 * Call after search_schema() for the schema whose df t holds.
 */
static void answer_plan(struct answer_plan *p, const struct terms *t,
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
			double *covered)
{
	double got = 0, a;
	size_t i;

	for (i = 0; i < p->n; i++) {
		uint64_t g;
		double best = 0;
		int b;

		if (p->u[i].bit >= 0) {
			if (mask & ((uint64_t)1 << p->u[i].bit))
				got += p->u[i].mass;
			continue;
		}
		g = mask & p->u[i].gmask;
		for (b = 0; g && b < 64; b++, g >>= 1)
			if ((g & 1) && p->idf_bit[b] > best)
				best = p->idf_bit[b];
		got += best;
	}
	*covered = got;
	a = p->mass > 0 ? got / p->mass : 0;
	return a > 1 ? 1 : a;
}

static void score_answer(struct cand *c, const struct answer_plan *p)
{
	c->mass = p->mass;
	c->unseen = p->unseen;
	c->answer = answer_of((uint64_t)c->mask, p, &c->covered);
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
static int doc_answer(struct pool *pool, size_t first,
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
							 &v[k]->covered);
	}
	cairn_free(v);
	return 0;
}

/*
 * The chance test (RECALL_CHANCE_POWER) over candidates [first, n) of one
 * schema: expected and observed meetings of the question's specific
 * words; when the store links them no more than chance, every hit's
 * answerability is 0. The figures go to res (the workspace schema's) for
 * --explain and --json.
 */
static void answer_chance(struct pool *pool, size_t first,
			  const struct answer_plan *p, long long ndocs,
			  cairn_result *res)
{
	double n = (double)ndocs + RECALL_BG_DOCS, lim = 1.0 / sqrt(n);
	double pr[RECALL_MAX_TERMS], e = 0;
	uint64_t w[RECALL_MAX_TERMS];
	size_t ns = 0, i, j, met = 0, alone = 0;
	int chance;

	for (i = 0; i < p->n; i++) {
		uint64_t m = p->u[i].bit >= 0 ? (uint64_t)1 << p->u[i].bit
					      : p->u[i].gmask;
		double q = ((double)p->u[i].df + 0.5) / n;

		if (p->u[i].df <= 0 || !m || q >= lim)
			continue; /* unseen, or common enough to meet by chance */
		w[ns] = m;
		pr[ns++] = q;
	}
	for (i = 0; i < ns; i++)
		for (j = i + 1; j < ns; j++)
			e += n * pr[i] * pr[j];
	/*
	 * Records that stand alone only: a seeded file's chunks are parts of
	 * one document (doc_answer) whose words are split over its chunks,
	 * so chunks do not meet as independent records would.
	 */
	for (i = first; i < pool->n; i++) {
		uint64_t mask = (uint64_t)pool->v[i].mask;
		size_t k = 0;

		if (pool->v[i].rec->src_path)
			continue;
		alone++;
		for (j = 0; j < ns; j++)
			k += (mask & w[j]) != 0;
		met += k * (k - 1) / 2;
	}
	chance = alone > 0 && e >= RECALL_CHANCE_POWER && (double)met <= e;
#ifdef CAIRN_MUTATE_NO_CHANCE
	chance = 0; /* negative control: chance-level matches answer */
#endif
	for (i = first; chance && i < pool->n; i++)
		if (!pool->v[i].rec->src_path)
			pool->v[i].answer = 0;
	if (res) {
		res->chance_words = ns;
		res->chance_expected = e;
		res->chance_met = met;
		res->chance_only = chance;
	}
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->bm25 != y->bm25)
		return x->bm25 > y->bm25 ? -1 : 1;
	return strcmp(x->rec->id, y->rec->id);
}

static void matched_terms(struct sbuf *sb, const struct cand *c,
			  const struct terms *t)
{
	size_t i;
	int first = 1;

	for (i = 0; i < t->n && i < 64; i++) {
		if (c->mask & ((sqlite3_int64)((sqlite3_uint64)1 << i))) {
			const struct qterm *q = &t->v[i];

			if (q->gloss && q->from < t->n)
				sbuf_addf(sb, "%s%.*s=%.*s", first ? "" : " ",
					  (int)t->v[q->from].len,
					  t->v[q->from].text, (int)q->len,
					  q->text);
			else
				sbuf_addf(sb, "%s%.*s", first ? "" : " ",
					  (int)q->len, q->text);
			first = 0;
		}
	}
}

/* ------------------------------------------------------------- hybrid */

/*
 * Floor used for cosines before `cairn calibrate` has measured one for the
 * configured vector identity: none (every cosine above 0 counts), with a
 * notice in the result. A floor from another model would be wrong in
 * either direction (bge-base's 0.51 drops nothing for models whose
 * cosines all lie above 0.7, and everything for others).
 */
#define RECALL_DEFAULT_COS_FLOOR 0.0


void recall_dense_release(struct dense *d)
{
	cairn_free(d->q);
	cairn_free(d->hits);
	memset(d, 0, sizeof(*d));
}

/*
 * Embed the question and fetch the dense pool. d->n == 0 (and CAIRN_OK)
 * when no provider is configured or no record has a vector: recall is then
 * lexical only, exactly as without a model.
 */
int recall_dense_pool(struct cairn_db *db, const char *query,
		      const cairn_recall_opts *o, struct dense *d)
{
	const struct embed_identity *id;
	struct vector_filter f;
	char err[256];
	int rc;

	memset(d, 0, sizeof(*d));
	rc = vector_embedder(db, &d->e);
	d->down = rc == CAIRN_IO; /* e.g. an http server down at open */
	if (rc || !d->e)
		return rc;
	id = embed_identity(d->e);
	d->dim = id->dim;
	if (d->dim <= 0 || d->dim > VECTOR_MAX_DIM)
		return store_error(db, CAIRN_CORRUPT,
				   "embedder reports %d dimensions", d->dim);
	d->q = util_calloc((size_t)d->dim, sizeof(*d->q));
	d->hits = util_calloc(RANK_POOL, sizeof(*d->hits));
	if (!d->q || !d->hits)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	rc = embed_identity_string(id, d->identity, sizeof(d->identity));
	if (rc)
		return store_error(db, rc, "vector identity too long");
	snprintf(d->label, sizeof(d->label), "%s/%s@%.12s/%d", id->provider,
		 id->model, id->revision, id->dim);
	embed_set_budget(d->e, o->embed_budget_ms < 0 ? 0
			       : o->embed_budget_ms ? o->embed_budget_ms
						    : CAIRN_EMBED_BUDGET_MS);
	rc = embed_texts(d->e, 1, &query, 1, d->q, err, sizeof(err));
	embed_set_budget(d->e, 0);
	if (rc) {
		d->down = rc == CAIRN_IO;
		return store_error(db, rc, "embedding the question: %s", err);
	}
	f.kinds = o->kinds && *o->kinds ? o->kinds : NULL;
#ifndef CAIRN_MUTATE_NO_RECALL_STATUS
	f.statuses = o->statuses && *o->statuses ? o->statuses : NULL;
#else
	f.statuses = "all";
#endif
	if (f.statuses && strcmp(f.statuses, "all") == 0)
		f.statuses = "candidate,accepted,unverified,stale,superseded,"
			     "historical,false,retired,rejected";
	return vector_search(db, id, d->q, &f, RANK_POOL, d->hits, &d->n);
}

/*
 * Cosine of the question with the stored vector of record id (if any).
 * st[2] caches one prepared statement per schema (main, global); the
 * caller finalizes them.
 */
static int stored_cosine(struct cairn_db *db, sqlite3_stmt *st[2],
			 const char *schema, const char *id,
			 const struct dense *d, double *cos, int *has)
{
	char sql[200];
	sqlite3_stmt **sp = &st[strcmp(schema, "main") == 0 ? 0 : 1];
	int src, i;

	*has = 0;
	*cos = 0;
	if (!*sp) {
		snprintf(sql, sizeof(sql),
			 "SELECT v.v FROM %s.vectors v JOIN %s.records r ON "
			 "r.rid = v.rid WHERE r.id = ?1",
			 schema, schema);
		src = sqlite3_prepare_v2(db->sql, sql, -1, sp, NULL);
		if (src != SQLITE_OK)
			return store_sql_error(db, src, "reading a vector");
	}
	sqlite3_reset(*sp);
	sqlite3_bind_text(*sp, 1, id, -1, SQLITE_STATIC);
	src = sqlite3_step(*sp);
	if (src == SQLITE_ROW &&
	    sqlite3_column_bytes(*sp, 0) == 2 * d->dim) {
		const unsigned char *b = sqlite3_column_blob(*sp, 0);
		double dot = 0;

		for (i = 0; i < d->dim; i++)
			dot += (double)vector_f32((unsigned short)(
				       b[2 * i] | b[2 * i + 1] << 8)) *
			       d->q[i];
		*cos = dot;
		*has = 1;
	}
	sqlite3_reset(*sp);
	if (src != SQLITE_ROW && src != SQLITE_DONE)
		return store_sql_error(db, src, "reading a vector");
	return CAIRN_OK;
}

/* One record of schema by a WHERE clause on ?1 (text or rowid). */
static int fetch_record(struct cairn_db *db, const char *schema,
			const char *where, const char *text, long long rid,
			const cairn_recall_opts *o, cairn_record **out)
{
	struct sbuf sql = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc = CAIRN_OK, src;

	*out = NULL;
	sbuf_addf(&sql, "SELECT " STORE_COLS " FROM %s.records WHERE %s",
		  schema, where);
	if (text) { /* the exact drawer: the caller's status and kind filter */
		const char *statuses = o->statuses && *o->statuses
					       ? o->statuses
					       : "accepted,unverified";

		if (strcmp(statuses, "all") != 0)
			rc = store_add_in(db, &sql, "status", statuses,
					  cairn_status_valid, "status");
		if (rc == CAIRN_OK && o->kinds && *o->kinds)
			rc = store_add_in(db, &sql, "kind", o->kinds,
					  cairn_kind_valid, "kind");
	}
	if (rc == CAIRN_OK && sql.err)
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
	if (rc)
		goto out;
	src = sqlite3_prepare_v2(db->sql, sql.buf, -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "recall");
		goto out;
	}
	if (text)
		sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_int64(st, 1, rid);
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		*out = store_row_record(st, 0);
		if (!*out)
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
	} else if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "recall");
	}
out:
	sqlite3_finalize(st);
	sbuf_release(&sql);
	return rc;
}

/*
 * The record of schema by rid, through a statement prepared once per
 * schema (st[2], finalized by the caller): a dense pool fetches up to 200,
 * and preparing the 25-column SELECT each time was a fifth of a hook
 * call with a model. *out NULL when there is no such record.
 */
static int fetch_rid(struct cairn_db *db, sqlite3_stmt *st[2],
		     const char *schema, long long rid, cairn_record **out)
{
	int si = strcmp(schema, "global") == 0, src;

	*out = NULL;
	if (!st[si]) {
		struct sbuf sql = SBUF_INIT;

		sbuf_addf(&sql, "SELECT " STORE_COLS " FROM %s.records "
				"WHERE rid = ?1",
			  schema);
		src = sql.err ? SQLITE_NOMEM
			      : sqlite3_prepare_v2(db->sql, sql.buf, -1,
						   &st[si], NULL);
		sbuf_release(&sql);
		if (src != SQLITE_OK)
			return store_sql_error(db, src, "recall");
	}
	sqlite3_reset(st[si]);
	sqlite3_bind_int64(st[si], 1, rid);
	src = sqlite3_step(st[si]);
	if (src == SQLITE_ROW) {
		*out = store_row_record(st[si], 0);
		if (!*out)
			return store_error(db, CAIRN_NOMEM, "out of memory");
	} else if (src != SQLITE_DONE) {
		return store_sql_error(db, src, "recall");
	}
	return CAIRN_OK;
}

/* Append a candidate that only the dense pool or the key found. */
static struct cand *pool_add(struct pool *pool, cairn_record *rec)
{
	struct cand *c;

	if (pool->n == pool->cap) {
		size_t ncap = pool->cap ? 2 * pool->cap : 32;
		struct cand *nv = util_realloc(pool->v, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		pool->v = nv;
		pool->cap = ncap;
	}
	c = &pool->v[pool->n++];
	memset(c, 0, sizeof(*c));
	c->rec = rec;
	return c;
}

static long pool_find(const struct pool *pool, const char *schema,
		      const char *id)
{
	size_t i;

	for (i = 0; i < pool->n; i++)
		if (strcmp(pool->v[i].rec->id, id) == 0 &&
		    strcmp(store_schema(pool->v[i].rec->scope), schema) == 0)
			return (long)i;
	return -1;
}

static int bm25_desc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->bm25 != y->bm25)
		return x->bm25 > y->bm25 ? -1 : 1;
	return strcmp(x->rec->id, y->rec->id);
}

/* The ranking configuration: defaults, then meta 'rank.*' of the main store. */
static void load_rank_config(struct cairn_db *db, struct rank_config *cfg)
{
	sqlite3_stmt *st = NULL;

	rank_config_default(cfg);
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT k, v FROM main.meta WHERE k LIKE "
			       "'rank.%'",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		if (k && v)
			(void)rank_config_set(cfg, k + 5, v); /* bad values: ignored */
	}
	sqlite3_finalize(st);
}

/* The cosine floor calibrated for this vector identity; notice otherwise. */
static double load_cos_floor(struct cairn_db *db, const struct dense *d,
			     cairn_result *res)
{
	sqlite3_stmt *st = NULL;
	double f = RECALL_DEFAULT_COS_FLOOR;
	const char *msg = NULL;
	char buf[1024];

	res->cos_floor_calibrated = 0;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT v, (SELECT v FROM main.meta WHERE k = "
			       "'cosine_floor_identity') FROM main.meta WHERE "
			       "k = 'cosine_floor'",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 1);

		if (id && strcmp(id, d->identity) == 0) {
			f = sqlite3_column_double(st, 0);
			res->cos_floor_calibrated = 1;
		} else {
			snprintf(buf, sizeof(buf),
				 "the cosine floor %.2f was calibrated for "
				 "another vector identity and is not used "
				 "with %s; run `cairn calibrate --probes FILE`",
				 sqlite3_column_double(st, 0), d->label);
			msg = buf;
		}
	} else {
		snprintf(buf, sizeof(buf),
			 "no cosine floor calibrated for %s: questions the "
			 "store cannot answer may return records; run `cairn "
			 "calibrate --probes FILE`",
			 d->label);
		msg = buf;
	}
	sqlite3_finalize(st);
	if (msg)
		res->notice = util_strdup(msg); /* NULL on OOM: no notice */
	return f;
}

static const char *basis_name(int basis)
{
	switch (basis) {
	case RANK_BASIS_KEY: return "key";
	case RANK_BASIS_COSINE: return "cosine";
	case RANK_BASIS_LEXICAL: return "lexical";
	default: return "none";
	}
}

static int explain_hybrid(cairn_hit *h, const struct cand *c,
			  const struct rank_cand *r,
			  const struct rank_config *cfg,
			  const cairn_result *res, double best_rrf)
{
	struct sbuf sb = SBUF_INIT;

	if (r->exact_key)
		sbuf_adds(&sb, "key: the question is this record's key -> "
			       "first\n");
	if (r->bm25_rank > 0)
		sbuf_addf(&sb, "bm25: rank %d, raw %.4f (title x%g); "
			       "matched: %s\n",
			  r->bm25_rank, r->bm25, RECALL_W_TITLE, h->matched);
	else
		sbuf_adds(&sb, "bm25: not in the pool\n");
	if (!r->has_vector)
		sbuf_adds(&sb, "dense: no vector (written after the last "
			       "reindex): lexical only\n");
	else if (r->dense_rank > 0)
		sbuf_addf(&sb, "dense: rank %d, cosine %.4f\n", r->dense_rank,
			  r->cosine);
	else
		sbuf_addf(&sb, "dense: not in the pool of %d, cosine %.4f\n",
			  RANK_POOL, r->cosine);
	if (r->zfused)
		sbuf_addf(&sb,
			  "fused: %.6f = %g x z(bm25) = %.4f, + %g x z(cosine) = "
			  "%.4f (z-scores over the candidates, shifted above "
			  "the lowest)\n",
			  r->rrf, cfg->w_bm25, r->rrf_bm25, cfg->w_dense,
			  r->rrf_dense);
	else
		sbuf_addf(&sb,
			  "rrf: %.6f = %g/(%g+bm25 rank) %.6f + %g/(%g+dense "
			  "rank) %.6f\n",
			  r->rrf, cfg->w_bm25, cfg->rrf_k, r->rrf_bm25,
			  cfg->w_dense, cfg->rrf_k, r->rrf_dense);
	if (r->pinned)
		sbuf_addf(&sb, "pin: yes, overwhelming BM25 hit (dense rank "
			       "worse than %d, raw >= %gx the second)\n",
			  cfg->pin_dense_rank, cfg->pin_ratio);
	else
		sbuf_adds(&sb, "pin: no\n");
	if (r->basis == RANK_BASIS_COSINE)
		sbuf_addf(&sb, "floor: cosine %.4f > %.2f (%s) -> kept, "
			       "relevance %.4f\n",
			  r->cosine, cfg->cos_floor,
			  res->cos_floor_calibrated ? "calibrated"
						    : "not calibrated",
			  r->relevance);
	else if (r->basis == RANK_BASIS_LEXICAL)
		sbuf_addf(&sb, "answer: %.4f = matched %.3f / question %.3f "
			       "of IDF mass (never said in the store: %.3f)\n"
			       "floor: answer %.4f > %.2f (%s) -> kept, "
			       "relevance %.4f\n",
			  c->answer, c->covered, c->mass, c->unseen,
			  r->lexical, cfg->lex_floor,
			  res->floor_calibrated ? "calibrated"
						: "default, not calibrated",
			  r->relevance);
	else
		sbuf_adds(&sb, "floor: exact key, relevance 1\n");
	if (cfg->no_floor)
		sbuf_adds(&sb, "floor: off (--no-floor)\n");
	sbuf_addf(&sb, "weight: %.2f (%s, %s)\n", r->weight, c->rec->kind,
		  c->rec->status);
	sbuf_addf(&sb, "decay: %.4f (%s%s)\n", r->decay,
		  c->rec->time ? "dated " : "undated",
		  c->rec->time ? c->rec->time : "");
	if (cfg->order == RANK_ORDER_RELEVANCE)
		sbuf_addf(&sb, "score: %.4f = weight^%g x decay x relevance\n",
			  r->score, RANK_WEIGHT_EXP);
	else
		sbuf_addf(&sb, "score: %.4f = weight^%g x decay x %s/best "
			       "(%.4f, best %.6f)\n",
			  r->score, RANK_WEIGHT_EXP,
			  r->zfused ? "fused" : "rrf", r->fused, best_rrf);
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	h->explain = sbuf_detach(&sb, NULL);
	return CAIRN_OK;
}

/* Question with surrounding white space removed, for the exact drawer. */
static char *trim_dup(const char *q)
{
	size_t n;

	while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
		q++;
	n = strlen(q);
	while (n > 0 && (q[n - 1] == ' ' || q[n - 1] == '\t' ||
			 q[n - 1] == '\n' || q[n - 1] == '\r'))
		n--;
	return util_strndup(q, n);
}

/*
 * The hybrid pipeline (docs/RANKING.md): the BM25 pool (both schemas, one
 * ranking), the dense pool, the exact drawer, then rank_run().
 */
static int hybrid_rank(struct cairn_db *db, const char *query,
		       const cairn_recall_opts *opts, const struct terms *t,
		       struct pool *pool, const struct dense *d,
		       cairn_result *res, size_t k, double lex_floor)
{
	struct rank_config cfg;
	sqlite3_stmt *vst[2] = { NULL, NULL }, *rst[2] = { NULL, NULL };
	struct rank_cand *rc_v = NULL;
	struct rank_counts counts;
	struct sbuf sb = SBUF_INIT;
	char *key = NULL;
	double best_rrf = 0;
	size_t i, n, kept;
	int rc = CAIRN_OK, s;

	load_rank_config(db, &cfg);
	cfg.lex_floor = lex_floor;
	cfg.cos_floor = load_cos_floor(db, d, res);
#ifndef CAIRN_MUTATE_NO_FLOOR
	cfg.no_floor = opts->no_floor;
#else
	cfg.no_floor = 1;
#endif
	res->cos_floor = cfg.cos_floor;
	/* one BM25 ranking over both schemas */
	if (pool->n > 1)
		qsort(pool->v, pool->n, sizeof(pool->v[0]), bm25_desc);
	for (i = 0; i < pool->n; i++)
		pool->v[i].rank = (int)i + 1;
	n = pool->n;
	/* the dense pool: ranks and cosines, records only it found */
	for (i = 0; i < d->n; i++) {
		long at = pool_find(pool, d->hits[i].schema, d->hits[i].id);
		struct cand *c;

		if (at < 0) {
			cairn_record *rec = NULL;

			rc = fetch_rid(db, rst, d->hits[i].schema,
				       d->hits[i].rid, &rec);
			if (rc)
				goto out;
			if (!rec)
				continue; /* deleted since the cache loaded */
			c = pool_add(pool, rec);
			if (!c) {
				cairn_record_free(rec);
				rc = store_error(db, CAIRN_NOMEM, "out of memory");
				goto out;
			}
		} else {
			c = &pool->v[at];
		}
		c->dense_rank = (int)i + 1;
		c->cosine = d->hits[i].cos;
		c->has_vector = 1;
	}
	/* BM25 hits outside the dense pool: their own cosine, if they have a vector */
	for (i = 0; i < n; i++) {
		struct cand *c = &pool->v[i];

		if (c->dense_rank == 0) {
			rc = stored_cosine(db, vst, store_schema(c->rec->scope),
					   c->rec->id, d, &c->cosine,
					   &c->has_vector);
			if (rc)
				goto out;
		}
	}
	/* step 1: the exact drawer */
	key = trim_dup(query);
	if (!key) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (s = 0; s < 2 && *key && strlen(key) <= STORE_MAX_KEY; s++) {
		const char *schema = s == 0 ? "main" : "global";
		cairn_record *rec = NULL;
		long at;
		struct cand *c;

		if (s == 1 && !db->has_global)
			break;
		rc = fetch_record(db, schema, "key = ?1", key, 0, opts, &rec);
		if (rc)
			goto out;
		if (!rec)
			continue;
		at = pool_find(pool, schema, rec->id);
		if (at >= 0) {
			cairn_record_free(rec);
			pool->v[at].exact_key = 1;
		} else {
			c = pool_add(pool, rec);
			if (!c) {
				cairn_record_free(rec);
				rc = store_error(db, CAIRN_NOMEM, "out of memory");
				goto out;
			}
			c->exact_key = 1;
			rc = stored_cosine(db, vst, schema, rec->id, d, &c->cosine,
					   &c->has_vector);
			if (rc)
				goto out;
		}
		break; /* workspace first, as cairn_record_read_key */
	}
	/* the steps */
	rc_v = util_calloc(pool->n ? pool->n : 1, sizeof(*rc_v));
	if (!rc_v) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < pool->n; i++) {
		struct cand *c = &pool->v[i];
		struct rank_cand *r = &rc_v[i];

		r->id = i;
		r->kind = c->rec->kind;
		r->status = c->rec->status;
		r->confidence = c->rec->confidence;
		r->source = c->rec->src_path;
		r->time = c->rec->time;
		r->exact_key = c->exact_key;
		r->bm25_rank = c->rank; /* 0: only the dense pool or the key */
		r->bm25 = c->bm25;
		r->lexical = c->answer;
		r->dense_rank = c->dense_rank;
		r->cosine = c->cosine;
		r->has_vector = c->has_vector;
	}
	rc = rank_run(rc_v, pool->n, &cfg, lifecycle_now(), NULL, NULL,
		      &counts);
	if (rc) {
		rc = store_error(db, CAIRN_ERROR, "rerank failed");
		goto out;
	}
	res->hybrid = 1;
	res->dropped = counts.floor;
	res->dropped_dup = counts.dup;
	kept = rank_kept(rc_v, pool->n);
	for (i = 0; i < kept; i++)
		if (rc_v[i].rrf > best_rrf)
			best_rrf = rc_v[i].rrf;
	res->n = kept < k ? kept : k;
	if (res->n) {
		res->hits = util_calloc(res->n, sizeof(*res->hits));
		if (!res->hits) {
			res->n = 0;
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
	}
	for (i = 0; i < res->n; i++) {
		const struct rank_cand *r = &rc_v[i];
		struct cand *c = &pool->v[r->id];
		cairn_hit *h = &res->hits[i];

		h->score = r->score;
		h->relevance = r->relevance;
		h->lexical = c->signal;
		h->answer = c->answer;
		h->bm25 = r->bm25;
		h->bm25_rank = r->bm25_rank;
		h->weight = r->weight;
		h->dense_rank = r->dense_rank;
		h->cosine = r->cosine;
		h->has_vector = r->has_vector;
		h->rrf = r->rrf;
		h->pinned = r->pinned;
		h->exact_key = r->exact_key;
		h->decay = r->decay;
		h->basis = basis_name(r->basis);
		sbuf_reset(&sb);
		if (r->bm25_rank > 0)
			matched_terms(&sb, c, t);
		h->matched = util_strdup(sbuf_str(&sb));
		if (!h->matched || sb.err) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		if (opts->explain) {
			rc = explain_hybrid(h, c, r, &cfg, res, best_rrf);
			if (rc) {
				rc = store_error(db, rc, "out of memory");
				goto out;
			}
		}
		h->rec = c->rec; /* moved into the result */
		c->rec = NULL;
	}
out:
	sqlite3_finalize(vst[0]);
	sqlite3_finalize(vst[1]);
	sqlite3_finalize(rst[0]);
	sqlite3_finalize(rst[1]);
	cairn_free(rc_v);
	cairn_free(key);
	sbuf_release(&sb);
	return rc;
}

/*
 * Age the records now (SPEC 5.5, lifecycle.h). Ageing reads last_seen, so
 * the receipts the hook spooled (receipt.h) go into the store first.
 */
static int age_records(struct cairn_db *db, cairn_gc_result *out)
{
#ifndef CAIRN_MUTATE_NO_GC_DRAIN
	int rc = receipt_drain(db);
#else
	int rc = CAIRN_OK;
#endif

	return rc ? rc : lifecycle_run(db, 1, out);
}

/* ----------------------------------------------------------------- public */

static int explain_hit(cairn_hit *h, const struct cand *c, double floor,
		       double hit_floor, double best, int calibrated)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_addf(&sb,
		  "bm25: rank %d, raw %.4f (title x%g)\n"
		  "matched: %s\n"
		  "lexical: %.4f = bm25 / most the question could score\n"
		  "answer: %.4f = matched %.3f / question %.3f of IDF mass "
		  "(never said in the store: %.3f)\n"
		  "floor: question %.4f > %.2f (%s), hit %.4f > %.2f -> kept, "
		  "relevance %.4f\n"
		  "weight: %.2f (%s, %s)\n"
		  "score: %.4f = weight^%g x bm25/best (%.4f)\n",
		  c->rank, c->bm25, RECALL_W_TITLE, h->matched, c->signal,
		  c->answer, c->covered, c->mass, c->unseen, best, floor,
		  calibrated ? "calibrated" : "default, not calibrated",
		  c->answer, hit_floor, c->relevance, c->weight, c->rec->kind,
		  c->rec->status, c->score, RANK_WEIGHT_EXP,
		  c->best > 0 ? c->bm25 / c->best : 0);
	if (c->dated)
		sbuf_addf(&sb, "date: x %.2f (the question asks when; the "
			       "record states a date)\n",
			  1.0 + RECALL_DATE_BOOST);
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	h->explain = sbuf_detach(&sb, NULL);
	return CAIRN_OK;
}

int cairn_recall(cairn_db *db, const char *query,
		 const cairn_recall_opts *opts, cairn_result **out)
{
	static const cairn_recall_opts defaults;
	struct terms t;
	struct pool pool = { NULL, 0, 0 };
	struct sbuf sb = SBUF_INIT;
	struct dense dn;
	cairn_result *res = NULL;
	struct tok *tk;
	const char *identity;
	char err[256];
	size_t i, qlen, kept = 0;
	long bad;
	int rc = CAIRN_OK, k, calibrated = 0, s, own_read = 0;
	double floor, hit_floor;
	struct rank_config wcfg;
	struct answer_plan plan;

	*out = NULL;
	memset(&t, 0, sizeof(t));
	memset(&dn, 0, sizeof(dn));
	if (!opts)
		opts = &defaults;
	if (!query)
		return store_error(db, CAIRN_INVALID, "no question given");
	qlen = strlen(query);
	if (qlen > RECALL_MAX_QUERY)
		return store_error(db, CAIRN_TOOBIG,
				   "question of %zu bytes is over the limit "
				   "of %d",
				   qlen, RECALL_MAX_QUERY);
	bad = util_utf8_invalid_at(query, qlen);
	if (bad >= 0)
		return store_error(db, CAIRN_INVALID,
				   "question is not valid UTF-8 at byte %ld",
				   bad);
	k = opts->k > 0 ? opts->k : 5;
	if (k > RECALL_MAX_K)
		k = RECALL_MAX_K;
	tk = fts_tok(db->sql, err, sizeof(err));
	if (!tk)
		return store_error(db, CAIRN_IO, "%s", err);
	identity = tok_identity(tk);
	rc = register_aux(db);
	if (rc)
		return rc;
	/*
	 * SPEC 5.5: age the records at most daily, before searching. A recall
	 * that writes nothing (no_receipt: evaluation, calibration) does not;
	 * a failure (e.g. a read-only store) does not stop the recall.
	 */
	if (!opts->no_receipt && lifecycle_due(db) == 1)
		(void)age_records(db, NULL);
	res = util_calloc(1, sizeof(*res));
	if (!res)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	/*
	 * One read transaction for every lookup up to the receipt: each
	 * statement on its own would take and drop the WAL read lock and
	 * look at the files again (~700 system calls for a hook prompt, one
	 * per fetched record and per term). Not when the caller holds one.
	 */
	if (sqlite3_get_autocommit(db->sql) &&
	    sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL) == SQLITE_OK)
		own_read = 1;
	rc = query_terms(db, tk, query, &t);
	if (rc == CAIRN_OK)
		rc = load_bilingual(db);
	if (rc)
		goto out;
	if (t.n == 0) {
		rc = store_error(db, CAIRN_INVALID,
				 "the question has no searchable words");
		goto out;
	}
	floor = load_floor(db, identity, &calibrated);
	res->floor = floor;
	res->floor_calibrated = calibrated;
	for (s = 0; s < 2; s++) {
		const char *schema = s == 0 ? "main" : "global";
		long long ndocs = 0;
		struct termstat_key key;
		char base[4200];
		int keyed;
		size_t first = pool.n;

		if (s == 1 && !db->has_global)
			break;
		rc = count_records(db, schema, &ndocs);
		if (rc)
			goto out;
		/* the files beside the store: only in our own snapshot */
		keyed = own_read &&
			term_key(db, schema, s, ndocs, &key, base, sizeof(base));
		rc = term_stats(db, schema, s, keyed ? &key : NULL, base, &t,
				ndocs);
		if (rc)
			goto out;
		if (s == 0) {
			size_t before = t.n;

			rc = add_glosses(db, tk, &t);
			if (rc == CAIRN_OK && t.n > before)
				rc = term_stats(db, schema, s,
						keyed ? &key : NULL, base, &t,
						ndocs);
			if (rc)
				goto out;
		}
		if (s == 0) {
			cap_terms(&t);
			for (i = 0; i < t.n; i++)
				res->idf_mass += t.v[i].idf * t.v[i].weight;
		}
		rc = search_schema(db, schema, &t, opts, keyed ? &key : NULL,
				   base, &pool);
		if (rc)
			goto out;
		answer_plan(&plan, &t, ndocs);
		if (s == 0) /* the question's part the workspace never says */
			res->answer_unseen = plan.mass > 0 ? plan.unseen /
								     plan.mass
							   : 0;
		for (i = first; i < pool.n; i++) {
			score_signal(&pool.v[i], &t);
			score_answer(&pool.v[i], &plan);
		}
		if (doc_answer(&pool, first, &plan)) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		answer_chance(&pool, first, &plan, ndocs, s == 0 ? res : NULL);
	}
	/* the question's answerability: its best hit's, before any floor */
	for (i = 0; i < pool.n; i++)
		if (pool.v[i].answer > res->answer)
			res->answer = pool.v[i].answer;
	/* with vectors of the configured model: the hybrid pipeline */
	rc = recall_dense_pool(db, query, opts, &dn);
	if (rc == CAIRN_IO && dn.down) {
		/* the provider is down: the words alone, and say so */
		char msg[600];

		snprintf(msg, sizeof(msg), "lexical recall only: %s",
			 cairn_errmsg(db));
		cairn_free(res->notice);
		res->notice = util_strdup(msg); /* NULL on OOM: no notice */
		res->embed_down = 1;
		recall_dense_release(&dn);
		rc = CAIRN_OK;
	}
	if (rc)
		goto out;
	hit_floor = floor < RECALL_DEFAULT_FLOOR ? floor : RECALL_DEFAULT_FLOOR;
	if (dn.n > 0) {
		/* a question below the floor has no lexical evidence to keep */
		if (res->answer <= floor)
			for (i = 0; i < pool.n; i++)
				pool.v[i].answer = 0;
		rc = hybrid_rank(db, query, opts, &t, &pool, &dn, res,
				 (size_t)k, hit_floor);
		if (rc)
			goto out;
		goto terms;
	}
	/*
	 * lexical only (no model, or no vectors yet): the question is
	 * answered when its best hit is above the floor; each hit must then
	 * be above the lower of the floor and the default (a calibrated floor
	 * decides whether to answer, not which of the answers to show)
	 */
	load_rank_config(db, &wcfg);
	for (i = 0; i < pool.n; i++) {
		struct cand *c = &pool.v[i];

		c->weight = kind_weight(&wcfg, c->rec);
#ifndef CAIRN_MUTATE_NO_FLOOR
		if ((res->answer <= floor || c->answer <= hit_floor) &&
		    !opts->no_floor) {
#else
		if (0) {
#endif
			c->score = -1; /* dropped */
			res->dropped++;
			continue;
		}
		c->relevance = hit_floor < 1 ? (c->answer - hit_floor) /
						       (1 - hit_floor)
					     : 0;
		if (c->relevance < 0)
			c->relevance = 0;
		if (c->relevance > 1)
			c->relevance = 1;
		c->score = rank_tiebreak(c->weight) *
			   (c->best > 0 ? c->bm25 / c->best : 0);
		/* answer type: a question asking when prefers a dated record */
		c->dated = t.when && states_date(c->rec);
#ifdef CAIRN_MUTATE_NO_DATE_BOOST
		c->dated = 0; /* negative control: no answer-type preference */
#endif
		if (c->dated)
			c->score *= 1.0 + RECALL_DATE_BOOST;
	}
	if (pool.n > 1)
		qsort(pool.v, pool.n, sizeof(pool.v[0]), cand_cmp);
	for (i = 0; i < pool.n; i++)
		kept += pool.v[i].score >= 0;
	res->n = kept < (size_t)k ? kept : (size_t)k;
	if (res->n) {
		res->hits = util_calloc(res->n, sizeof(*res->hits));
		if (!res->hits) {
			res->n = 0;
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
	}
	for (i = 0; i < res->n; i++) {
		struct cand *c = &pool.v[i];
		cairn_hit *h = &res->hits[i];

		h->rec = c->rec;
		c->rec = NULL;
		h->score = c->score;
		h->relevance = c->relevance;
		h->lexical = c->signal;
		h->answer = c->answer;
		h->bm25 = c->bm25;
		h->bm25_rank = c->rank;
		h->weight = c->weight;
		sbuf_reset(&sb);
		matched_terms(&sb, c, &t);
		h->matched = util_strdup(sbuf_str(&sb));
		if (!h->matched || sb.err) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		if (opts->explain) {
			c->rec = h->rec; /* borrowed for the text */
			rc = explain_hit(h, c, floor, hit_floor, res->answer,
					 calibrated);
			c->rec = NULL;
			if (rc) {
				rc = store_error(db, rc, "out of memory");
				goto out;
			}
		}
	}
terms:
	sbuf_reset(&sb);
	for (i = 0; i < t.n; i++)
		sbuf_addf(&sb, "%s%.*s", i ? " " : "", (int)t.v[i].len,
			  t.v[i].text);
	res->terms = util_strdup(sbuf_str(&sb));
	if (!res->terms) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	rc = rerank_result(db, query, opts, res); /* step 6: off by default */
	if (rc == CAIRN_OK)
		rc = drift_mark(db, res); /* step 7: sources that moved on */
	if (own_read) {
		sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL);
		own_read = 0;
	}
	if (rc == CAIRN_OK && !opts->no_receipt)
		rc = receipt_write(db, query, identity, dn.label, res);
out:
	if (own_read)
		sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL);
	recall_dense_release(&dn);
	sbuf_release(&sb);
	pool_release(&pool);
	terms_release(&t);
	if (rc) {
		cairn_result_free(res);
		return rc;
	}
	*out = res;
	return CAIRN_OK;
}

void cairn_result_free(cairn_result *res)
{
	size_t i;

	if (!res)
		return;
	for (i = 0; i < res->n; i++) {
		cairn_record_free(res->hits[i].rec);
		cairn_free(res->hits[i].matched);
		cairn_free(res->hits[i].explain);
		cairn_free(res->hits[i].drift);
	}
	cairn_free(res->hits);
	cairn_free(res->terms);
	cairn_free(res->notice);
	cairn_free(res);
}
