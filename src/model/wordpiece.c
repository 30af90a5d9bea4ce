/*
 * wordpiece.c -- BERT's WordPiece tokeniser (tokenizer.ggml.model "bert").
 *
 * Layer: model files, inside vocab (sees struct vocab through
 * VOCAB_INTERNAL); uses utf8proc for categories, NFD and lower case.
 *
 * Follows HF tokenizers' BertNormalizer + BertPreTokenizer + WordPiece:
 *  1. clean: drop NUL, U+FFFD and control characters (categories Cc, Cf,
 *     Co, except tab, LF, CR; unassigned code points stay, as HF's category
 *     tables have no Cn); White_Space characters end a word;
 *  2. every CJK ideograph (BERT's ranges) is a word of its own;
 *  3. strip accents (NFD, drop Mn) and lower-case, when the model says so;
 *  4. punctuation (Unicode P*, and ASCII symbols) is a word of its own;
 *  5. each word: greedy longest-match-first pieces; a word with a part no
 *     piece matches, or longer than VOCAB_MAX_WORD_CHARS, is one [UNK].
 * llama.cpp stores the vocabulary with a phantom space: a word-initial
 * piece is "▁" + text, a continuation piece is its text without "##".
 *
 * Holds: nothing; one pass over the text with a bounded word buffer.
 *
 * Must never: read outside the text (it is valid UTF-8, checked by the
 * caller), or emit an id the vocabulary does not have.
 */
#define VOCAB_INTERNAL
#include <string.h>
#include <utf8proc.h>

#include "internal.h"
#include "vocab.h"

/* A word's bytes: "▁" + up to VOCAB_MAX_WORD_CHARS characters of 4 bytes. */
#define WORD_BYTES (3 + 4 * VOCAB_MAX_WORD_CHARS + 8)

struct word {
	char buf[WORD_BYTES]; /* "▁" then the word's UTF-8 */
	size_t len;           /* bytes used, the prefix included */
	size_t chars; /* characters in the word (may exceed the buffer) */
};

static int is_ws(int32_t c)
{
	/* Unicode White_Space, as Rust's char::is_whitespace */
	return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 ||
	       c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
	       c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
	       c == 0x3000;
}

static int is_control(int32_t c)
{
	int cat;

	if (c == '\t' || c == '\n' || c == '\r')
		return 0;
	cat = utf8proc_category(c);
	return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
	       cat == UTF8PROC_CATEGORY_CS || cat == UTF8PROC_CATEGORY_CO;
}

static int is_punct(int32_t c)
{
	int cat;

	if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) ||
	    (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
		return 1;
	cat = utf8proc_category(c);
	return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

/* BERT's "Chinese character" ranges (CJK ideographs, not kana or hangul). */
static int is_cjk(int32_t c)
{
	return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
	       (c >= 0x20000 && c <= 0x2A6DF) ||
	       (c >= 0x2A700 && c <= 0x2B73F) ||
	       (c >= 0x2B740 && c <= 0x2B81F) ||
	       (c >= 0x2B920 && c <= 0x2CEAF) || (c >= 0xF900 && c <= 0xFAFF) ||
	       (c >= 0x2F800 && c <= 0x2FA1F);
}

static void word_reset(struct word *w)
{
	memcpy(w->buf, "\xE2\x96\x81", 3);
	w->len = 3;
	w->chars = 0;
}

static void word_add(struct word *w, int32_t c)
{
	w->chars++;
	if (w->chars <= VOCAB_MAX_WORD_CHARS)
		w->len += (size_t)utf8proc_encode_char(
			c, (utf8proc_uint8_t *)w->buf + w->len);
}

/*
 * Greedy longest-match-first over one word. The first piece is looked up
 * with the phantom "▁", the rest without. Any unmatched part makes the
 * whole word [UNK].
 */
static void word_emit(const struct vocab *v, struct word *w,
		      struct vocab_ids *out)
{
	const struct vocab_trie *t = &v->match;
	size_t start = 3, mark = out->n;

	if (w->chars == 0)
		return;
	if (w->chars > VOCAB_MAX_WORD_CHARS || !t->node) {
		vocab_ids_push(out, v->unk);
		word_reset(w);
		return;
	}
	while (start < w->len) {
		const struct vocab_node *node = t->node;
		int32_t best = -1;
		size_t end = 0;

		if (start == 3) {
			for (size_t i = 0; i < 3 && node; i++)
				node = vocab_trie_step(
					t, node, (unsigned char)w->buf[i]);
		} else if (w->len - start >= 3 &&
			   memcmp(w->buf + start, "\xE2\x96\x81", 3) == 0) {
			/*
			 * A literal "▁" in the text: a continuation piece
			 * starting with it would be a word-initial piece of
			 * the phantom-space vocabulary (HF's vocabulary has
			 * no "##▁..."), so nothing matches here.
			 */
			node = NULL;
		}
		for (size_t p = start; p < w->len && node; p++) {
			node = vocab_trie_step(t, node,
					       (unsigned char)w->buf[p]);
			if (node && node->id >= 0) {
				best = node->id;
				end = p + 1;
			}
		}
		if (best < 0) {
			out->n = mark;
			vocab_ids_push(out, v->unk);
			break;
		}
		vocab_ids_push(out, best);
		start = end;
	}
	word_reset(w);
}

/* One character after normalisation: split on punctuation, else append. */
static void put_char(const struct vocab *v, struct word *w, int32_t c,
		     struct vocab_ids *out)
{
	if (is_punct(c)) {
		word_emit(v, w, out);
		word_add(w, c);
		word_emit(v, w, out);
	} else if (is_ws(c)) {
		word_emit(v, w, out);
	} else {
		word_add(w, c);
	}
}

/* Lower case as Rust's char::to_lowercase (İ is the one multi-char case). */
static void put_lower(const struct vocab *v, struct word *w, int32_t c,
		      struct vocab_ids *out)
{
	if (!v->lowercase) {
		put_char(v, w, c, out);
	} else if (c == 0x130) {
		put_char(v, w, 'i', out);
		put_char(v, w, 0x307, out);
	} else {
		put_char(v, w, utf8proc_tolower(c), out);
	}
}

static void put_normalized(const struct vocab *v, struct word *w, int32_t c,
			   struct vocab_ids *out)
{
	utf8proc_int32_t d[32];
	utf8proc_ssize_t nd;
	int bound = 0;

	if (!v->strip_accents) {
		put_lower(v, w, c, out);
		return;
	}
	nd = utf8proc_decompose_char(c, d, (utf8proc_ssize_t)ARRAY_SIZE(d),
				     UTF8PROC_DECOMPOSE, &bound);
	if (nd < 0 || nd > (utf8proc_ssize_t)ARRAY_SIZE(d)) {
		d[0] = c;
		nd = 1;
	}
	for (utf8proc_ssize_t i = 0; i < nd; i++)
		if (utf8proc_category(d[i]) != UTF8PROC_CATEGORY_MN)
			put_lower(v, w, d[i], out);
}

int wordpiece_tokenize(const struct vocab *v, const char *text, size_t len,
		       size_t limit, struct vocab_ids *out)
{
	struct word w;
	size_t i = 0;

	word_reset(&w);
	while (i < len && out->n < limit && !out->err) {
		utf8proc_int32_t c;
		utf8proc_ssize_t k =
			utf8proc_iterate((const utf8proc_uint8_t *)text + i,
					 (utf8proc_ssize_t)(len - i), &c);

		if (k <= 0)
			return CAIRN_INVALID; /* the caller checked the text */
		i += (size_t)k;
		/* fast path: ASCII letters and digits need no table */
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			word_add(&w, c);
			continue;
		}
		if (c >= 'A' && c <= 'Z') {
			word_add(&w, v->lowercase ? c + 32 : c);
			continue;
		}
		if (c == 0 || c == 0xFFFD || is_control(c))
			continue;
		if (is_ws(c)) {
			word_emit(v, &w, out);
		} else if (is_cjk(c)) {
			word_emit(v, &w, out);
			put_normalized(v, &w, c, out);
			word_emit(v, &w, out);
		} else {
			put_normalized(v, &w, c, out);
		}
	}
	if (out->n < limit)
		word_emit(v, &w, out);
	return CAIRN_OK;
}
