/*
 * bilingual.h -- a Chinese -> English dictionary (CC-CEDICT text format),
 * used by recall to add English glosses of a Chinese question's words.
 *
 * Layer: bottom, beside util and tokenize. Reads one local file; no SQLite,
 * no network, no tokenizer (recall runs the glosses through tok_run itself,
 * so stemming and case folding stay in one place).
 *
 * The file is the standard CC-CEDICT format, one entry a line:
 *
 *     Traditional Simplified [pin1 yin1] /gloss 1/gloss 2/
 *
 * with '#' lines as comments. A line that does not have that shape, or is
 * not valid UTF-8, is skipped and counted (bil_stats). Tests and benchmarks
 * make such a file with tests/tools/cedict-setup; the product never fetches
 * one.
 *
 * Invariants: a struct bil is read-only after bil_open, so any number of
 * threads may call bil_lookup on it at once. bil_lookup allocates nothing.
 * Limits: file <= BIL_MAX_FILE bytes, line <= BIL_MAX_LINE bytes, at most
 * BIL_MAX_WORDS words emitted per lookup, each <= BIL_MAX_WORD bytes.
 *
 * Must never: download anything, abort on a damaged file, or read outside
 * the loaded text on any key or file content.
 */
#ifndef CAIRN_BILINGUAL_H
#define CAIRN_BILINGUAL_H

#include <stddef.h>

#define BIL_MAX_FILE ((size_t)64 << 20) /* 64 MiB; CC-CEDICT is ~10 MiB */
#define BIL_MAX_LINE 4096               /* bytes per line, without "\r\n" */
#define BIL_MAX_WORDS 8                 /* gloss words emitted per lookup */
#define BIL_MAX_WORD 48                 /* longer gloss words are dropped */

struct bil; /* opaque: one loaded dictionary, read-only after bil_open */

/* What bil_open found, for logs and tests. */
struct bil_stats {
	size_t entries;         /* lines loaded as entries */
	size_t keys;            /* distinct headwords, both scripts */
	size_t malformed;       /* non-comment lines skipped as malformed */
	size_t first_malformed; /* line number (1-based) of the first; 0 */
	double load_ms;         /* wall time bil_open took */
};

/*
 * Load the CC-CEDICT file at path into *out (caller frees with bil_close).
 * Returns CAIRN_OK; CAIRN_IO when the file is missing or unreadable;
 * CAIRN_TOOBIG when it is over BIL_MAX_FILE or a line is over BIL_MAX_LINE;
 * CAIRN_CORRUPT when it holds no entry at all; CAIRN_NOMEM. On failure *out
 * is NULL and err holds a message naming the path (and the line).
 */
int bil_open(const char *path, struct bil **out, char *err, size_t errsize);

/* Free a dictionary. NULL is a no-op. */
void bil_close(struct bil *b);

/*
 * "cedict=<first 12 hex of the file's SHA-256> gloss=<N>", where N is the
 * version of the gloss-word rules below: it changes whenever the words a
 * lookup emits could change. Borrowed; valid until bil_close.
 */
const char *bil_identity(const struct bil *b);

/* Fill *out with the counts of the load. */
void bil_stats(const struct bil *b, struct bil_stats *out);

/*
 * Look up the headword zh[0, len) (UTF-8, not NUL-terminated): every entry
 * whose Simplified form is exactly zh or, when there is none, whose
 * Traditional form is. Calls emit once per content word of their glosses,
 * lower-cased (ASCII letters only), without duplicates, at most
 * BIL_MAX_WORDS times. The word is borrowed for the call and holds only
 * letters, digits and inner apostrophes (no spaces or hyphens).
 *
 * Content words: a gloss is split at '/' and, outside brackets, at ';'.
 * Dropped are: parenthesised notes "(computing)", "(abbr. for ...)";
 * bracketed pinyin "[gan1]" and Han references; "CL:..." classifier notes;
 * parts that say "variant of ...", or start "see ...", "also pr. ...",
 * "also written ...", "used in ...", "surname ...", "classifier for ...",
 * or "lit. ..."; function words (to, a, the, of, sb, sth, abbr, ...);
 * words of one letter; a final "'s". ("abbr. for 違建|违建, illegal
 * construction" keeps "illegal construction".)
 *
 * Order, when the cap bites: glosses tagged "(computing)" or "(computer)"
 * first (cairn's records are about software), then the other glosses in
 * dictionary order, then entries with a capitalised pinyin (proper names).
 * Two rounds over that order: first up to 2 words from each part, then the
 * rest, so that each sense gets its head word in before any long gloss
 * fills the cap. When no word results and a gloss says "variant of X",
 * "abbr. for X" or "see X", X is looked up instead (one level, at most
 * two such X).
 *
 * Returns the number of words emitted (0: no such headword, or no content
 * word). Allocates nothing.
 */
int bil_lookup(const struct bil *b, const char *zh, size_t len,
	       void (*emit)(void *user, const char *gloss_word, size_t n),
	       void *user);

#endif /* CAIRN_BILINGUAL_H */
