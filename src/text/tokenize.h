/*
 * tokenize.h -- the cairn tokenizer: text in, normalised search tokens out.
 *
 * Layer: just above util (internal.h). No SQLite here; fts.c wraps this as
 * the FTS5 tokenizer "cairn", and the recall layer calls it directly to
 * tokenise queries.
 *
 * What it does to text (the same in index and query mode, so that a query
 * matches exactly what indexing produced):
 *   - Normalises with NFKC + Unicode case folding, stripping default
 *     ignorables (utf8proc). Offsets reported are always byte offsets into
 *     the ORIGINAL text; a token made from part of a normalisation unit (one
 *     character plus its combining marks) reports the whole unit.
 *   - Latin and other alphabetic scripts: words are runs of letters, digits
 *     and combining marks; an apostrophe between two letters stays inside
 *     the word (' and U+2019 both become '). Identifiers joined by `_`, `.`
 *     or `/` (snake_case, a.b.c, src/store.c) and camelCase / PascalCase /
 *     HTTPServer words are split into parts; each part is a normal token
 *     (so BM25 counts it) and the whole identifier, lower-cased and not
 *     stemmed, is emitted colocated with its first part. A camelCase segment
 *     inside a longer identifier also gets its own colocated whole. A change
 *     between a cased letter and a digit splits too (EMNLP2022, python3,
 *     100ms: "emnlp +emnlp2022 +2022"), but the part after such a change is
 *     colocated with the part before it, so a word keeps its length in
 *     positions (BM25's length normalisation of every record is unchanged)
 *     while "EMNLP 2022" and "EMNLP2022" share their parts. Hyphens
 *     split words. Parts made only of a-z (and ') are stemmed with Snowball
 *     "english"; tokens with digits or other letters are kept as they are.
 *     Single-letter tokens are KEPT ("c" of store.c, "R", "x"): dropping
 *     stop words is not the tokenizer's job and BM25's IDF already weighs
 *     them down.
 *   - Han ideographs: each maximal Han run is converted Traditional ->
 *     Simplified with OpenCC and segmented the way jieba does without HMM
 *     (the maximum-probability route through the dictionary DAG). Each path
 *     word is emitted; a path word of 3+ characters is preceded by its
 *     dictionary sub-words of 2 and 3 characters (jieba's cut_for_search
 *     order). A run of 2+ consecutive single characters on the path that
 *     is not itself a dictionary word falls back to character bigrams, each
 *     followed by its first character colocated (so one-character queries
 *     still find OOV text); the last character gets its own position.
 *   - Kana and Hangul: the same bigram-plus-colocated-unigram scheme.
 *   - Everything else (punctuation, symbols, whitespace, emoji) separates.
 *   - Tokens are at most TOK_MAX_TOKEN_BYTES bytes: longer words are cut at
 *     a character boundary, longer whole identifiers are not emitted (their
 *     parts are). Runs longer than TOK_MAX_RUN_CPS code points are cut.
 *
 * Query mode (TOK_QUERY) emits the same tokens as document mode: sub-words
 * and whole identifiers are what make a query phrased differently from the
 * document still meet it, and identical output keeps phrase queries exact.
 * The one difference is the raw escape below.
 *
 * Raw escape: in TOK_QUERY mode, text whose first byte is 0x01 (TOK_RAW)
 * yields the remaining bytes verbatim as one token, with offsets [1, len).
 * The recall layer tokenises a query itself and passes each token as
 * "\x01token" inside an FTS5 string, so that FTS5 does not stem or split it
 * a second time. The text must still be valid UTF-8.
 *
 * Invariants: a struct tok is immutable after tok_open except for the
 * stemmer's scratch buffer and the OpenCC converter tok_run may open on
 * first need (see tok_open), so one tok may serve any number of
 * connections but only one thread at a time. Every offset pair satisfies
 * start <= end <= len. The first token of a tok_run is never colocated.
 * Work is linear in the input; memory per call is bounded by the run caps.
 *
 * Must never: crash or read out of bounds on any input, allocate other than
 * through the cairn wrappers (the libraries it calls use their own), or
 * stem a token that contains digits.
 */
#ifndef CAIRN_TOKENIZE_H
#define CAIRN_TOKENIZE_H

#include <stddef.h>

#define TOK_RAW '\x01'           /* query-mode raw escape byte (see above) */
#define TOK_MAX_TOKEN_BYTES 256  /* longest token emitted, in bytes */
#define TOK_MAX_RUN_CPS 1024     /* longest run segmented as one piece */
#define TOK_DEFAULT_JIEBA_DICT "/usr/lib/python3/dist-packages/jieba/dict.txt"
#define TOK_DEFAULT_OPENCC "t2s.json"

struct tok; /* opaque: dictionaries loaded once, then read-only */

struct tok_opts {
	const char *jieba_dict;    /* NULL: the default (a store passes
				    * $CAIRN_JIEBA_DICT, read at open) */
	const char *opencc_config; /* NULL: "t2s.json" */
	int no_stem;               /* 1: no English stemming */
	int no_segment;            /* test only, 1: a Han run is one token */
	const char *cache_dir;     /* NULL: $CAIRN_CACHE_DIR, else
				    * $XDG_CACHE_HOME/cairn, else
				    * ~/.cache/cairn; "": no cache */
};

/*
 * Load the dictionaries named by o (NULL: all defaults) and return a
 * tokenizer in *out (caller frees with tok_close). A missing jieba
 * dictionary is CAIRN_IO with a message naming the path and the fix; a
 * malformed one is CAIRN_CORRUPT; a missing OpenCC config is CAIRN_IO.
 *
 * The compiled tables (the dictionary's hash table and text, the t2s
 * character table and the hashes that go into the identity) are cached in
 * a file of the cache directory (o->cache_dir, an empty string or a set
 * but empty $CAIRN_CACHE_DIR turning the cache off), keyed by the
 * dictionary's path, size, times and inode and by the OpenCC config, data
 * and library, and memory-mapped read-only by later calls; OpenCC itself is
 * then only opened by tok_run, for the few runs whose conversion depends
 * on context. The cache never changes the tokens or the identity, and a
 * cache that cannot be read, validated, created or written is silently
 * rebuilt or skipped: tok_open never fails because of it. o's strings are
 * only read during the call.
 */
int tok_open(const struct tok_opts *o, struct tok **out, char *err,
	     size_t errsize);

/* Free a tokenizer. NULL is a no-op. */
void tok_close(struct tok *t);

enum tok_flags {
	TOK_QUERY = 1 << 0 /* tokenising a query (enables the raw escape) */
};

/*
 * Called for each token: its normalised bytes (not NUL-terminated, borrowed
 * for the call), the byte range [start, end) of the source text it came
 * from, and colocated=1 when it sits at the same position as the previous
 * token. Returning non-zero stops tok_run, which returns that value.
 */
typedef int (*tok_emit_fn)(void *user, const char *token, size_t len,
			   size_t start, size_t end, int colocated);

/*
 * Tokenise text[0, len) (text may be NULL when len is 0), calling emit for
 * each token. Returns CAIRN_OK, the callback's non-zero value, CAIRN_INVALID
 * with "invalid UTF-8 at byte N" in err, CAIRN_NOMEM, or CAIRN_IO when
 * OpenCC, opened on first need (see tok_open), cannot be opened.
 */
int tok_run(struct tok *t, const char *text, size_t len, unsigned flags,
	    tok_emit_fn emit, void *user, char *err, size_t errsize);

/*
 * A string that changes whenever the tokens for some text could change,
 * e.g. "cairn-tok/2 jieba=0123456789ab opencc=t2s stem=english
 * unicode=15.0.0". Borrowed; valid until tok_close.
 */
const char *tok_identity(const struct tok *t);

/*
 * Milliseconds tok_open spent loading the jieba dictionary (mapping the
 * cache file when the tables came from the cache).
 */
double tok_dict_load_ms(const struct tok *t);

/* 1 when t's tables were mapped from the cache file, else 0. */
int tok_cached(const struct tok *t);

/*
 * Background statistics (recall's answerability): the natural
 * log of a word's share of all word occurrences in the jieba dictionary,
 * log(freq / total), for a token as the tokenizer emits it (simplified
 * Chinese). 1 (no share: a positive number) when the word is not in the
 * dictionary.
 */
double tok_word_logp(const struct tok *t, const char *word, size_t len);

#endif /* CAIRN_TOKENIZE_H */
