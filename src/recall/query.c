/*
 * query.c -- the question's terms (SPEC 5.2 step 1; query.h): tokenised as
 * records are, de-duplicated, stop words (English and Chinese question
 * words, stop-character bigrams) dropped unless nothing else is left, each
 * word's background idf from jieba's dictionary, the words written as
 * names, whether the question asks when; then the English glosses of the
 * Chinese words the store never says (glossary.h, bilingual.h); the cap
 * of a long question at RECALL_MAX_TERMS once recall has counted the
 * terms in the store (query_cap).
 *
 * Layer: internal to recall; on tokenize, glossary, bilingual and the
 * store's handle (its error message and its bilingual dictionary). Above
 * it: recall.c.
 * Invariants: a term is the token exactly as the index holds it (same
 *   tokenizer, query mode); at most 4 x RECALL_MAX_TERMS are collected
 *   (query_cap keeps RECALL_MAX_TERMS).
 * Must never: run SQL, or keep anything of the question past
 *   query_release().
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bilingual.h"
#include "glossary.h"
#include "query.h"
#include "store.h"
#include "tokenize.h"

/*
 * Words of an ordinary record, for a Chinese word's background idf: a
 * word whose share of jieba's dictionary counts is p turns up in a record
 * of this many words with a chance of about this x p, so its idf there is
 * -log(RECALL_BG_WORDS x p). A word the store never says weighs no more
 * than that in the answerability (score_answer): 需要 or 准备 missing from
 * an English store says little, 吉他 or 红烧肉 missing says a lot.
 */
#define RECALL_BG_WORDS 100.0

/* ------------------------------------------------------------- stop words */

/*
 * Function words of questions in English and Chinese. They carry no topic,
 * and dropping them keeps "how do I ..." from matching every record that
 * says "how". Compared after tokenisation, so the list holds each word as
 * the tokenizer emits it: the Snowball stem where it differs ("why" is
 * searched as whi, "does" as doe, "any" as ani), which
 * contract recall.t checks word by word. Personal pronouns are here too:
 * "what did she say about her trip" is about the trip.
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
	/* as Snowball stems "why", "does" and "any" */
	"whi", "doe", "ani",
	/* personal pronouns (not "mine": the stem of "mining" too) */
	"he", "she", "her", "hers", "him", "his", "herself", "himself",
	"itself", "myself", "yourself", "ourselv", "themselv", "yours",
	"ours", "theirs",
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

void query_release(struct terms *t)
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

int query_states_date(const cairn_record *r)
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
int query_terms(struct cairn_db *db, struct tok *tk, const char *q,
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
 * record (SPEC 5.2; the paraphrase-zh category) without adding
 * noise where the store already speaks Chinese: glossing every word cost
 * cmrc2018 R@1 0.984 -> 0.972. Call after recall.c's term_stats() (uses df).
 */
int query_glosses(struct cairn_db *db, struct tok *tk, struct terms *t)
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
int query_bilingual(struct cairn_db *db)
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

/* Append a term as a quoted FTS5 string with the tokenizer's raw escape. */
void query_add_raw(struct sbuf *m, const struct qterm *q)
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

/* The term whose loss costs least among those drop[] leaves, with
 * ref[i] == want: the lowest idf x weight; t->n if none. */
static size_t cheapest_term(const struct terms *t, const unsigned char *drop,
			    const unsigned char *ref, int want)
{
	size_t i, w = t->n;

	for (i = 0; i < t->n; i++)
		if (!drop[i] && ref[i] == want &&
		    (w == t->n || t->v[i].idf * t->v[i].weight <
					  t->v[w].idf * t->v[w].weight))
			w = i;
	return w;
}

/*
 * Keep at most RECALL_MAX_TERMS terms (query.h). A long question (a
 * pasted conversation, a log) has more: first the words the store never
 * says go (they match nothing, and as the rarest by idf they would push
 * out the words that do match -- a long Chinese text's segmentation
 * fragments are such words), then the most common ones (lowest idf x
 * weight). A word that a gloss or an alias points at goes last. The
 * glosses' and aliases' indices are kept true.
 */
int query_cap(struct terms *t)
{
	unsigned char *drop, *ref;
	size_t *to, i, j, a, b, left, n0 = t->n;

	if (t->n <= RECALL_MAX_TERMS)
		return 0;
	drop = util_calloc(t->n, 1);
	ref = util_calloc(t->n, 1);
	to = util_calloc(t->n, sizeof(*to));
	if (!drop || !ref || !to) {
		cairn_free(drop);
		cairn_free(ref);
		cairn_free(to);
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		if (t->v[i].gloss && t->v[i].from < t->n)
			ref[t->v[i].from] = 1;
		for (a = 0; a < t->v[i].nsame; a++)
			if (t->v[i].same[a] < t->n)
				ref[t->v[i].same[a]] = 1;
	}
	left = t->n - RECALL_MAX_TERMS;
#ifndef CAIRN_MUTATE_CAP_UNSEEN_KEPT
	for (i = t->n; left > 0 && i-- > 0;)
		if (t->v[i].df == 0 && !t->v[i].gloss && !ref[i]) {
			drop[i] = 1; /* the store never says it */
			left--;
		}
#endif
	for (; left > 0; left--) {
		size_t w = cheapest_term(t, drop, ref, 0);

		if (w == t->n)
			w = cheapest_term(t, drop, ref, 1);
		drop[w] = 1;
	}
	for (i = 0, j = 0; i < t->n; i++) {
		to[i] = drop[i] ? (size_t)-1 : j;
		if (drop[i])
			cairn_free(t->v[i].text);
		else
			t->v[j++] = t->v[i];
	}
	t->n = j;
	for (i = 0; i < t->n; i++) {
		struct qterm *q = &t->v[i];

		if (q->gloss) /* its word dropped: it counts for none */
			q->from = q->from < n0 ? to[q->from] : (size_t)-1;
		for (a = 0, b = 0; a < q->nsame; a++)
			if (q->same[a] < n0 && to[q->same[a]] != (size_t)-1)
				q->same[b++] = to[q->same[a]];
		q->nsame = b;
	}
	cairn_free(drop);
	cairn_free(ref);
	cairn_free(to);
	return 0;
}
