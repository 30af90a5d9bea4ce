/*
 * bilingual.c -- the CC-CEDICT loader and the gloss-word lookup (see
 * bilingual.h for the format, the word rules and the limits).
 *
 * Layer: bottom, beside util. Uses only internal.h and the C library.
 *
 * Memory: the whole file stays in one buffer (the arena); an entry is a
 * few offsets into it, and an open-addressing hash table maps each distinct
 * headword to the first entry with that Simplified form and the first with
 * that Traditional form. Entries with the same headword are chained in file
 * order through next_simp / next_trad. Glosses are not pre-processed: a
 * lookup touches a handful of lines, while a load touches 120k, so the word
 * rules run at lookup time, on the stack, and the load stays one linear
 * pass (about 10 MiB) plus the SHA-256.
 *
 * Must never: allocate in bil_lookup, write to a struct bil after
 * bil_open, or abort on any file content (a malformed line is skipped).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bilingual.h"
#include "internal.h"

/* Version of the gloss-word rules; part of bil_identity. */
#define BIL_RULES_VERSION 1

/* Words taken from each part in the first round (see bilingual.h). */
#define BIL_HEAD_WORDS 2

/* "variant of X" / "see X" targets followed when nothing else emits. */
#define BIL_MAX_FOLLOW 2

#define NONE UINT32_MAX

/* One dictionary line; offsets are into bil.text. */
struct bil_entry {
	uint32_t simp;      /* offset of the Simplified headword */
	uint32_t trad;      /* offset of the Traditional headword */
	uint32_t gloss;     /* offset of the glosses, after the first '/' */
	uint32_t next_simp; /* next entry with the same Simplified; NONE */
	uint32_t next_trad; /* next entry with the same Traditional; NONE */
	uint16_t simp_len;  /* bytes of the Simplified headword */
	uint16_t trad_len;  /* bytes of the Traditional headword */
	uint16_t gloss_len; /* bytes of the glosses, without the final '/' */
	uint8_t proper;     /* 1: pinyin starts with a capital (a name) */
};

/* One hash-table slot: a distinct headword. Empty when both are NONE. */
struct bil_slot {
	uint32_t hash;       /* FNV-1a of the headword bytes */
	uint32_t first_simp; /* first entry with this Simplified form; NONE */
	uint32_t first_trad; /* first entry with this Traditional form; NONE */
};

struct bil {
	struct util_owned own;     /* first: bil_close, for the store's handle */
	char *text;                /* the whole file: the arena */
	size_t text_len;           /* its length in bytes */
	struct bil_entry *entries; /* the loaded lines, in file order */
	size_t n_entries;          /* number of entries */
	struct bil_slot *slots;    /* hash table; size is a power of two */
	size_t n_slots;            /* table size */
	struct bil_stats stats;    /* counts reported by bil_stats */
	char identity[64];         /* "cedict=<12 hex> gloss=<N>" */
};

/* ------------------------------------------------------------- loading */

static uint32_t fnv1a(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* The headword bytes a slot stands for. */
static const char *slot_key(const struct bil *b, const struct bil_slot *s,
			    size_t *len)
{
	const struct bil_entry *e;

	if (s->first_simp != NONE) {
		e = &b->entries[s->first_simp];
		*len = e->simp_len;
		return b->text + e->simp;
	}
	e = &b->entries[s->first_trad];
	*len = e->trad_len;
	return b->text + e->trad;
}

/*
 * The slot holding key, or the empty slot where it would go. The table is
 * never more than 3/4 full, so the probe ends.
 */
static struct bil_slot *slot_find(const struct bil *b, const char *key,
				  size_t len, uint32_t h)
{
	size_t mask = b->n_slots - 1;
	size_t i = h & mask;

	for (;;) {
		struct bil_slot *s = &b->slots[i];
		const char *k;
		size_t klen;

		if (s->first_simp == NONE && s->first_trad == NONE)
			return s;
		if (s->hash == h) {
			k = slot_key(b, s, &klen);
			if (klen == len && memcmp(k, key, len) == 0)
				return s;
		}
		i = (i + 1) & mask;
	}
}

static size_t skip_spaces(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/*
 * Parse line[0, n) ("Trad Simp [pinyin] /g1/g2/") into e, with offsets
 * relative to base. Returns 0, or -1 when the line does not have that shape.
 */
static int parse_line(const char *line, size_t n, size_t base,
		      struct bil_entry *e)
{
	size_t i = 0, t0, t1, s0, s1, p0, g0, g1;

	t0 = i;
	while (i < n && line[i] != ' ')
		i++;
	t1 = i;
	i = skip_spaces(line, i, n);
	s0 = i;
	while (i < n && line[i] != ' ' && line[i] != '[')
		i++;
	s1 = i;
	i = skip_spaces(line, i, n);
	if (t1 == t0 || s1 == s0 || i >= n || line[i] != '[')
		return -1;
	p0 = ++i;
	while (i < n && line[i] != ']')
		i++;
	if (i >= n)
		return -1;
	i = skip_spaces(line, i + 1, n);
	if (i >= n || line[i] != '/')
		return -1;
	g0 = i + 1;
	g1 = n;
	while (g1 > g0 && (line[g1 - 1] == ' ' || line[g1 - 1] == '\t'))
		g1--;
	if (g1 <= g0 || line[g1 - 1] != '/')
		return -1;
	g1--;
	/* at least one non-empty gloss */
	for (i = g0; i < g1 && (line[i] == '/' || line[i] == ' '); i++)
		;
	if (i == g1)
		return -1;
	e->trad = (uint32_t)(base + t0);
	e->trad_len = (uint16_t)(t1 - t0);
	e->simp = (uint32_t)(base + s0);
	e->simp_len = (uint16_t)(s1 - s0);
	e->gloss = (uint32_t)(base + g0);
	e->gloss_len = (uint16_t)(g1 - g0);
	e->proper = p0 < n && line[p0] >= 'A' && line[p0] <= 'Z';
	e->next_simp = NONE;
	e->next_trad = NONE;
	return 0;
}

/* Parse every line of b->text into b->entries (sized for all lines). */
static int load_lines(struct bil *b, const char *path, char *err,
		      size_t errsize)
{
	size_t pos = 0, lineno = 0;

	while (pos < b->text_len) {
		const char *line = b->text + pos;
		const char *nl = memchr(line, '\n', b->text_len - pos);
		size_t n = nl ? (size_t)(nl - line) : b->text_len - pos;
		size_t next = pos + n + (nl ? 1 : 0);

		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n > BIL_MAX_LINE) {
			snprintf(err, errsize,
				 "line %zu of '%s' is longer than %d bytes",
				 lineno, path, BIL_MAX_LINE);
			return CAIRN_TOOBIG;
		}
		if (n == 0 || line[0] == '#') {
			pos = next;
			continue;
		}
		if (util_utf8_invalid_at(line, n) >= 0 ||
		    parse_line(line, n, pos, &b->entries[b->n_entries]) != 0) {
			b->stats.malformed++;
			if (!b->stats.first_malformed)
				b->stats.first_malformed = lineno;
		} else {
			b->n_entries++;
		}
		pos = next;
	}
	return CAIRN_OK;
}

/*
 * Build the hash table: walk the entries backwards and push each on the
 * front of its chains, so that chains end up in file order.
 */
static int build_table(struct bil *b)
{
	size_t upper = 0, want, i;

	for (i = 0; i < b->n_entries; i++) {
		const struct bil_entry *e = &b->entries[i];

		upper++;
		if (e->trad_len != e->simp_len ||
		    memcmp(b->text + e->trad, b->text + e->simp,
			   e->simp_len) != 0)
			upper++;
	}
	/* load factor at most 3/4 */
	want = upper + upper / 3 + 1;
	b->n_slots = 16;
	while (b->n_slots < want)
		b->n_slots *= 2;
	b->slots = util_calloc(b->n_slots, sizeof(*b->slots));
	if (!b->slots)
		return CAIRN_NOMEM;
	for (i = 0; i < b->n_slots; i++) {
		b->slots[i].first_simp = NONE;
		b->slots[i].first_trad = NONE;
	}
	for (i = b->n_entries; i > 0; i--) {
		struct bil_entry *e = &b->entries[i - 1];
		const char *s = b->text + e->simp;
		const char *t = b->text + e->trad;
		uint32_t h = fnv1a(s, e->simp_len);
		struct bil_slot *slot = slot_find(b, s, e->simp_len, h);

		if (slot->first_simp == NONE && slot->first_trad == NONE)
			b->stats.keys++;
		slot->hash = h;
		e->next_simp = slot->first_simp;
		slot->first_simp = (uint32_t)(i - 1);
		if (e->trad_len == e->simp_len &&
		    memcmp(t, s, e->simp_len) == 0)
			continue;
		h = fnv1a(t, e->trad_len);
		slot = slot_find(b, t, e->trad_len, h);
		if (slot->first_simp == NONE && slot->first_trad == NONE)
			b->stats.keys++;
		slot->hash = h;
		e->next_trad = slot->first_trad;
		slot->first_trad = (uint32_t)(i - 1);
	}
	return CAIRN_OK;
}

/*
 * Read the whole file into b->text with one allocation (util_read_file
 * grows a buffer chunk by chunk, which costs a third of the load here).
 */
static int read_text(struct bil *b, const char *path, char *err,
		     size_t errsize)
{
	struct stat st;
	size_t size, got = 0;
	int fd, rc = CAIRN_OK;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "cannot open dictionary '%s': %s", path,
			 strerror(errno));
		return CAIRN_IO;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, errsize, "cannot read dictionary '%s': %s", path,
			 strerror(errno));
		rc = CAIRN_IO;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errsize,
			 "cannot read dictionary '%s': not a regular file",
			 path);
		rc = CAIRN_IO;
		goto out;
	}
	if ((unsigned long long)st.st_size > BIL_MAX_FILE) {
		snprintf(err, errsize,
			 "dictionary '%s' is larger than %zu MiB", path,
			 BIL_MAX_FILE >> 20);
		rc = CAIRN_TOOBIG;
		goto out;
	}
	size = (size_t)st.st_size;
	b->text = cairn_malloc(size + 1);
	if (!b->text) {
		snprintf(err, errsize, "out of memory loading '%s'", path);
		rc = CAIRN_NOMEM;
		goto out;
	}
	while (got < size) {
		ssize_t n = read(fd, b->text + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errsize,
				 "cannot read dictionary '%s': %s", path,
				 strerror(errno));
			rc = CAIRN_IO;
			goto out;
		}
		if (n == 0)
			break; /* it shrank meanwhile: use what is there */
		got += (size_t)n;
	}
	b->text[got] = '\0';
	b->text_len = got;
out:
	close(fd);
	return rc;
}

static void bil_release(void *self)
{
	bil_close(self);
}

/*
 * Load a CC-CEDICT file: read it whole, hash it for the identity, parse
 * every line, build the table (see bilingual.h for the codes).
 */
int bil_open(const char *path, struct bil **out, char *err, size_t errsize)
{
	struct bil *b = NULL;
	char hex[65];
	double t0 = util_now_ms();
	size_t lines = 1, i;
	int rc;

	*out = NULL;
	b = util_calloc(1, sizeof(*b));
	if (!b) {
		rc = CAIRN_NOMEM;
		snprintf(err, errsize, "out of memory loading '%s'", path);
		goto out;
	}
	b->own.release = bil_release;
	rc = read_text(b, path, err, errsize);
	if (rc != CAIRN_OK)
		goto out;
	util_sha256_hex(b->text, b->text_len, hex);
	snprintf(b->identity, sizeof(b->identity), "cedict=%.12s gloss=%d",
		 hex, BIL_RULES_VERSION);
	for (i = 0; i < b->text_len; i++) {
		if (b->text[i] == '\n')
			lines++;
	}
	b->entries = util_calloc(lines, sizeof(*b->entries));
	if (!b->entries) {
		rc = CAIRN_NOMEM;
		snprintf(err, errsize, "out of memory loading '%s'", path);
		goto out;
	}
	rc = load_lines(b, path, err, errsize);
	if (rc != CAIRN_OK)
		goto out;
	if (b->n_entries == 0) {
		rc = CAIRN_CORRUPT;
		snprintf(err, errsize,
			 "no dictionary entries in '%s' (expected CC-CEDICT "
			 "lines \"Trad Simp [pin1 yin1] /gloss/\")",
			 path);
		goto out;
	}
	rc = build_table(b);
	if (rc != CAIRN_OK) {
		snprintf(err, errsize, "out of memory loading '%s'", path);
		goto out;
	}
	b->stats.entries = b->n_entries;
	b->stats.load_ms = util_now_ms() - t0;
	*out = b;
	b = NULL;
out:
	bil_close(b);
	return rc;
}

/* Free a dictionary and its arena. NULL is a no-op. */
void bil_close(struct bil *b)
{
	if (!b)
		return;
	cairn_free(b->slots);
	cairn_free(b->entries);
	cairn_free(b->text);
	cairn_free(b);
}

/* The identity string (see bilingual.h). */
const char *bil_identity(const struct bil *b)
{
	return b->identity;
}

/* The load counts (see bilingual.h). */
void bil_stats(const struct bil *b, struct bil_stats *out)
{
	*out = b->stats;
}

/* -------------------------------------------------------------- lookup */

/* The words one lookup has emitted so far (on the caller's stack). */
struct collect {
	char words[BIL_MAX_WORDS][BIL_MAX_WORD + 1]; /* emitted, lower-case */
	size_t lens[BIL_MAX_WORDS];                   /* their lengths */
	size_t n;                                     /* how many */
	void (*emit)(void *, const char *, size_t);   /* the caller's sink */
	void *user;                                   /* its argument */
};

enum round { ROUND_HEAD, ROUND_REST };

/*
 * Function words and CEDICT's own abbreviations. Glosses are short and the
 * cap is small, so each of these would take the place of a content word;
 * BM25's IDF would weigh them near zero anyway.
 */
static const char *const stop_words[] = {
	"a", "abbr", "about", "all", "also", "am", "an", "and", "any", "are",
	"as", "at", "be", "been", "being", "but", "by", "cl", "coll", "did",
	"do", "does", "esp", "etc", "fig", "for", "from", "had", "has",
	"have", "he", "her", "him", "his", "in", "into", "is", "it",
	"its", "itself", "lit", "me", "my", "not", "of", "on", "one's",
	"oneself", "onto", "or", "our", "pr", "sb", "sb's", "she", "so",
	"some", "someone", "something", "sth", "sth's", "such", "than", "that",
	"the", "their", "them", "themselves", "these", "they", "this", "those",
	"to", "tw", "upon", "us", "usu", "was", "we", "were", "which", "who",
	"whom", "with", "you", "your",
};

/*
 * Parts starting with these (after leading "(...)" notes, case-insensitive)
 * name other headwords, pronunciations or grammar, not a meaning.
 */
static const char *const skip_prefixes[] = {
	"CL:", "see ", "also pr", "also written", "used in ", "used as ",
	"surname ", "classifier for", "lit.", "pr. ", "Taiwan pr.",
};

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Case-insensitive: does s[0, n) start with the NUL-terminated p? */
static int ci_prefix(const char *s, size_t n, const char *p)
{
	size_t i;

	for (i = 0; p[i]; i++) {
		if (i >= n || ascii_lower((unsigned char)s[i]) !=
				      ascii_lower((unsigned char)p[i]))
			return 0;
	}
	return 1;
}

/* Offset of the NUL-terminated p in s[0, n), case-insensitive; -1 if none. */
static long ci_find(const char *s, size_t n, const char *p)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ci_prefix(s + i, n - i, p))
			return (long)i;
	}
	return -1;
}

static int is_stop_word(const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stop_words); i++) {
		if (strlen(stop_words[i]) == n &&
		    memcmp(stop_words[i], w, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * Bytes of the word character at s[0, n): an ASCII letter or digit (1), a
 * Latin letter from U+00C0-U+024F other than U+00D7 and U+00F7 (2), or 0.
 * Han, punctuation and everything else separate words.
 */
static size_t word_char(const char *s, size_t n)
{
	unsigned char c = (unsigned char)s[0];
	unsigned cp;

	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	if (c < 0xC3 || c > 0xC9 || n < 2)
		return 0;
	cp = ((unsigned)(c & 0x1F) << 6) | ((unsigned char)s[1] & 0x3F);
	if (cp < 0xC0 || cp > 0x24F || cp == 0xD7 || cp == 0xF7)
		return 0;
	return 2;
}

/* Emit w[0, n) unless it is a duplicate or the cap is reached. */
static void collect_add(struct collect *c, const char *w, size_t n)
{
	size_t i;

	if (c->n >= BIL_MAX_WORDS)
		return;
	for (i = 0; i < c->n; i++) {
		if (c->lens[i] == n && memcmp(c->words[i], w, n) == 0)
			return;
	}
	memcpy(c->words[c->n], w, n);
	c->words[c->n][n] = '\0';
	c->lens[c->n] = n;
	c->emit(c->user, c->words[c->n], n);
	c->n++;
}

/* Does the part p[0, n) name no meaning of its own (see skip_prefixes)? */
static int part_skipped(const char *p, size_t n)
{
	size_t i = 0, k;

	if (ci_find(p, n, "variant of") >= 0)
		return 1;
	/* leading "(...)" notes: "(archaic) variant of", "(Tw) see" */
	for (;;) {
		int depth = 0;

		i = skip_spaces(p, i, n);
		if (i >= n || p[i] != '(')
			break;
		for (; i < n; i++) {
			if (p[i] == '(')
				depth++;
			else if (p[i] == ')')
				depth--;
			if (depth == 0)
				break;
		}
		if (i < n)
			i++;
	}
	for (k = 0; k < ARRAY_SIZE(skip_prefixes); k++) {
		if (ci_prefix(p + i, n - i, skip_prefixes[k]))
			return 1;
	}
	return 0;
}

/*
 * Emit the content words of one part p[0, n) (a gloss, or a ';' piece of
 * one): in ROUND_HEAD the first BIL_HEAD_WORDS, in ROUND_REST the others.
 */
static void part_words(struct collect *c, const char *p, size_t n,
		       enum round round)
{
	char w[BIL_MAX_WORD + 1];
	size_t i = 0, k = 0;
	int depth = 0;

	if (part_skipped(p, n))
		return;
	while (i < n && c->n < BIL_MAX_WORDS) {
		size_t j, len = 0, step;
		int keep;

		if (p[i] == '(' || p[i] == '[') {
			depth++;
			i++;
			continue;
		}
		if (p[i] == ')' || p[i] == ']') {
			if (depth > 0)
				depth--;
			i++;
			continue;
		}
		step = word_char(p + i, n - i);
		if (depth > 0 || step == 0) {
			i += util_u8len((unsigned char)p[i]);
			continue;
		}
		/* a classifier note ends the meaning part of a gloss */
		if (n - i >= 3 && memcmp(p + i, "CL:", 3) == 0)
			break;
		/* a word: letters and digits, with inner apostrophes */
		keep = 1;
		for (j = i; j < n;) {
			step = word_char(p + j, n - j);
			if (step == 0 && p[j] == '\'' && j > i && j + 1 < n &&
			    word_char(p + j + 1, n - j - 1))
				step = 1;
			if (step == 0)
				break;
			if (len + step > BIL_MAX_WORD)
				keep = 0;
			for (; step > 0; step--, j++) {
				int ch = ascii_lower((unsigned char)p[j]);

				if (len < BIL_MAX_WORD)
					w[len++] = (char)ch;
			}
		}
		i = j;
		if (!keep || is_stop_word(w, len))
			continue;
		/* "bull's" -> "bull"; "one's" was caught just above */
		if (len > 2 && w[len - 2] == '\'' && w[len - 1] == 's')
			len -= 2;
		if (len < 2 || is_stop_word(w, len))
			continue;
		if ((round == ROUND_HEAD) == (k < BIL_HEAD_WORDS))
			collect_add(c, w, len);
		k++;
	}
}

/* End of the ';' piece of g[0, n) starting at i: a ';' outside brackets. */
static size_t part_end(const char *g, size_t n, size_t i)
{
	int depth = 0;

	for (; i < n; i++) {
		if (g[i] == '(' || g[i] == '[')
			depth++;
		else if ((g[i] == ')' || g[i] == ']') && depth > 0)
			depth--;
		else if (g[i] == ';' && depth == 0)
			break;
	}
	return i;
}

static int is_computing(const char *g, size_t n)
{
	return ci_find(g, n, "(computing") >= 0 ||
	       ci_find(g, n, "(computer") >= 0;
}

/* Tiers of bil_lookup's order: computing glosses, others, proper names. */
enum tier { TIER_COMPUTING, TIER_COMMON, TIER_PROPER };

/* One round of one tier over the entries chained from first. */
static void chain_words(const struct bil *b, uint32_t first, int trad,
			enum tier tier, enum round round, struct collect *c)
{
	uint32_t i;

	for (i = first; i != NONE && c->n < BIL_MAX_WORDS;) {
		const struct bil_entry *e = &b->entries[i];
		const char *g = b->text + e->gloss;
		size_t n = e->gloss_len, pos = 0;

		i = trad ? e->next_trad : e->next_simp;
		if ((tier == TIER_PROPER) != (e->proper != 0))
			continue;
		while (pos < n && c->n < BIL_MAX_WORDS) {
			const char *slash = memchr(g + pos, '/', n - pos);
			size_t end = slash ? (size_t)(slash - g) : n;
			size_t p = pos;

			if (tier == TIER_PROPER ||
			    (tier == TIER_COMPUTING) ==
				    is_computing(g + pos, end - pos)) {
				while (p < end) {
					size_t q = part_end(g, end, p);

					part_words(c, g + p, q - p, round);
					p = q + 1;
				}
			}
			pos = end + 1;
		}
	}
}

/* Markers, anywhere in a part, of a reference to another headword. */
static const char *const ref_markers[] = {
	"variant of ", "abbr. for ", "abbr. of ",
};

/*
 * The headword a "variant of X", "abbr. for X" or "see X" part refers to,
 * in *ref: the Simplified side of "Trad|Simp[pinyin]". Returns its length,
 * 0 if none.
 */
static size_t part_ref(const char *p, size_t n, const char **ref)
{
	size_t i = n, start, bar = 0, k;

	for (k = 0; k < ARRAY_SIZE(ref_markers) && i == n; k++) {
		long at = ci_find(p, n, ref_markers[k]);

		if (at >= 0)
			i = (size_t)at + strlen(ref_markers[k]);
	}
	if (i == n) {
		i = skip_spaces(p, 0, n);
		if (!ci_prefix(p + i, n - i, "see "))
			return 0;
		i += strlen("see ");
		if (ci_prefix(p + i, n - i, "also "))
			i += strlen("also ");
	}
	i = skip_spaces(p, i, n);
	start = i;
	while (i < n && strchr(" [/;,()", p[i]) == NULL) {
		if (p[i] == '|')
			bar = i + 1;
		i++;
	}
	if (bar)
		start = bar;
	/* a Han reference, not English ("see below") */
	if (i <= start || (unsigned char)p[start] < 0x80)
		return 0;
	*ref = p + start;
	return i - start;
}

static void lookup(const struct bil *b, const char *zh, size_t len,
		   struct collect *c, int follow);

/* When nothing was emitted: look up what "variant of"/"see" parts name. */
static void follow_refs(const struct bil *b, uint32_t first, int trad,
			const char *zh, size_t len, struct collect *c)
{
	uint32_t i;
	int followed = 0;

	for (i = first; i != NONE && followed < BIL_MAX_FOLLOW;) {
		const struct bil_entry *e = &b->entries[i];
		const char *g = b->text + e->gloss;
		size_t n = e->gloss_len, p = 0;

		i = trad ? e->next_trad : e->next_simp;
		while (p < n && followed < BIL_MAX_FOLLOW) {
			size_t q = part_end(g, n, p), rlen, s;
			const char *ref = NULL;

			/* parts end at '/' as well as ';' here */
			for (s = p; s < q && g[s] != '/'; s++)
				;
			rlen = part_ref(g + p, s - p, &ref);
			if (rlen &&
			    !(rlen == len && memcmp(ref, zh, len) == 0)) {
				lookup(b, ref, rlen, c, 0);
				followed++;
			}
			p = s + 1;
		}
	}
}

/*
 * Emit the words of headword zh[0, len) into c; follow: also look up what
 * its "variant of"/"see" parts name when it yields no word itself.
 */
static void lookup(const struct bil *b, const char *zh, size_t len,
		   struct collect *c, int follow)
{
	const struct bil_slot *s;
	uint32_t first;
	int trad, t, r;

	if (!zh || len == 0 || len > BIL_MAX_LINE)
		return;
	s = slot_find(b, zh, len, fnv1a(zh, len));
	if (s->first_simp == NONE && s->first_trad == NONE)
		return;
	trad = s->first_simp == NONE;
	first = trad ? s->first_trad : s->first_simp;
	for (r = ROUND_HEAD; r <= ROUND_REST; r++) {
		for (t = TIER_COMPUTING; t <= TIER_PROPER; t++)
			chain_words(b, first, trad, (enum tier)t, (enum round)r,
				    c);
	}
	if (c->n == 0 && follow)
		follow_refs(b, first, trad, zh, len, c);
}

/* Emit the gloss words of a headword (see bilingual.h for the rules). */
int bil_lookup(const struct bil *b, const char *zh, size_t len,
	       void (*emit)(void *user, const char *gloss_word, size_t n),
	       void *user)
{
	struct collect c;

	c.n = 0;
	c.emit = emit;
	c.user = user;
	lookup(b, zh, len, &c, 1);
	return (int)c.n;
}
