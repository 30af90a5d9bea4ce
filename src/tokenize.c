/*
 * tokenize.c -- the cairn tokenizer (tokenize.h says what it emits).
 *
 * Layer: above util; uses utf8proc, libstemmer and OpenCC, never SQLite.
 *
 * How it works: tok_run walks the original text one normalisation unit at a
 * time (a starter plus its combining marks), normalises the unit with
 * utf8proc into a fixed buffer and feeds each resulting code point, tagged
 * with the unit's original byte range and letter case, to a run
 * accumulator. A run is a Latin-style identifier, a Han run or a
 * bigram-script run; when the class of the input changes, or the run
 * reaches TOK_MAX_RUN_CPS, the run is flushed into tokens. Every buffer is
 * bounded by those caps, so time is linear and memory per call constant.
 *
 * The jieba dictionary: the file itself, kept in memory, is the key arena.
 * An open-addressing table (linear probing, power-of-two size, load at most
 * 3/4) maps every Han-only word and every prefix of one (frequency 0) to
 * its frequency, so a DAG scan stops at the first missing prefix. The hash
 * (FNV-1a, then a mixer) is built incrementally one character at a time,
 * both when loading and when scanning.
 *
 * The cache: building the table, hashing the dictionary for the identity
 * and deriving the t2s character table from OpenCC cost ~150 ms, most of
 * a hook process. tok_open writes what it built to one file of the cache
 * directory (see "cache" below for the format) and later calls map that
 * file read-only and use the table, the text and the t2s table in place.
 *
 * Invariants: nothing in struct tok is written after tok_open except the
 * stemmer's scratch and the OpenCC converter opened on first need; emitted
 * offsets satisfy start <= end <= len; the first token of a call is never
 * colocated.
 *
 * Must never: recurse, use VLAs, trust the dictionary file's format or the
 * cache file's contents, fail because of the cache, or read past the input
 * on any byte sequence.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libstemmer.h>
#include <opencc/opencc.h> /* types only: the library is loaded with dlopen() */
#include <pthread.h>
#include <utf8proc.h>

#include "internal.h"
#include "tokenize.h"

#define TOK_IDENTITY_VERSION "cairn-tok/2" /* bump when tokens change */
#define DICT_MAX_FILE_BYTES ((size_t)256 << 20) /* larger ones refused */
#define DICT_MAX_WORD_CHARS 64   /* longer dictionary words are ignored */
#define DICT_MAX_WORD_BYTES 255  /* so are longer ones in bytes (8-bit len) */
#define DICT_MIN_SLOTS 1024      /* smallest hash table */
#define DICT_HASH_HEX 12         /* hex digits of the file hash in identity */
#define NORM_MAX_UNIT_CPS 32     /* starter + marks normalised at once */
#define NORM_BUF_CPS 1024        /* room for one unit's normalised form */
#define MAX_PENDING_JOINERS 3    /* joiner characters allowed between words */
#define RUN_INITIAL_CAP 64       /* first allocation of the per-call arrays */
#define IDENTITY_MAX 192         /* bytes of the identity string */
#define NORM_OPTS                                                          \
	((utf8proc_option_t)(UTF8PROC_COMPOSE | UTF8PROC_COMPAT |          \
			     UTF8PROC_CASEFOLD | UTF8PROC_IGNORE))
#define HUGE_PAGE_BYTES ((uintptr_t)2 << 20) /* x86-64/arm64 huge page */
#define BMP_CPS 0x10000          /* code points in the BMP */
#define T2S_CHARS (0x4DC0 - 0x3400 + 0xA000 - 0x4E00 + 0xFB00 - 0xF900 + 2)
				 /* entries of tok.t2s_map (see t2s_ranges) */
#define T2S_HASH_HEX 8           /* hex digits of the t2s table hash */
#define FNV64_BASIS 0xcbf29ce484222325ULL
#define FNV64_PRIME 0x100000001b3ULL
#define CACHE_MAGIC "cairntok"   /* first 8 bytes of a cache file */
#define CACHE_FORMAT 1           /* bump when the cache layout changes */
#define CACHE_ENDIAN 0x0102030405060708ULL /* refuses a foreign byte order */
#define CACHE_ALIGN 64           /* alignment of each cache file section */
#define CACHE_MAX_BYTES ((uint64_t)1 << 30) /* larger cache files refused */
#define CACHE_PATH_MAX 4096      /* longest cache file path used */
#define CACHE_NAME_HEX 16        /* hex digits of the cache file name hash */
#define CACHE_HEX_FIELD 72       /* room for a SHA-256 hex in the header */
#ifndef TOK_OPENCC_DATADIR
#define TOK_OPENCC_DATADIR "/usr/share/opencc" /* OpenCC's PKGDATADIR */
#endif

/* Character classes of a normalised code point. */
enum cls {
	CLS_SEP,    /* separates tokens */
	CLS_WORD,   /* letter, digit or mark of an alphabetic word */
	CLS_JOIN,   /* `_`, `.` or `/`: joins identifier parts */
	CLS_APOS,   /* apostrophe: inside a word between two letters */
	CLS_HAN,    /* Han ideograph: segmented with the dictionary */
	CLS_BIGRAM  /* kana, Hangul: character bigrams */
};

/* Letter case of a word item, for camelCase splitting. */
enum kind {
	KIND_OTHER, /* uncased letter, mark, joiner */
	KIND_UPPER, /* came from an upper- or title-case letter */
	KIND_LOWER, /* came from a lower-case letter */
	KIND_DIGIT  /* a number character */
};

/* What the run accumulator holds. */
enum run_type {
	RUN_NONE,  /* nothing buffered */
	RUN_WORD,  /* an identifier: word items, joiners, apostrophes */
	RUN_HAN,   /* Han items */
	RUN_BIGRAM /* kana / Hangul items */
};

struct dict_entry {
	uint32_t off;  /* byte offset of the key in dict.text */
	uint32_t freq; /* jieba frequency; 0 for a key that is only a prefix */
	uint32_t tag;  /* high 24 bits of the mixed hash << 8 | key length;
			* 0 marks an empty slot (keys are never empty) */
};

struct dict {
	char *text;               /* the dictionary file; keys point into it
				   * (read-only when mapped from the cache) */
	size_t textlen;           /* its length in bytes */
	struct dict_entry *slots; /* the open-addressing table */
	size_t mask;              /* number of slots - 1 (a power of two - 1) */
	size_t count;             /* keys stored */
	double logtotal;          /* log of the sum of all frequencies */
	size_t maxchars;          /* longest stored word, in characters */
};

struct tok {
	struct dict dict;          /* the jieba dictionary */
	void *map;                 /* the mapped cache file; NULL when the
				    * tables were built (and dict owns them) */
	size_t maplen;             /* its length */
	int from_cache;            /* 1: the tables came from map */
	opencc_t cc;               /* t2s converter; NULL until first needed
				    * when the tables came from the cache */
	char *cc_config;           /* OpenCC config to open cc with */
	const int32_t *t2s_map;    /* T2S_CHARS entries, t2s of each BMP Han
				    * char alone: 0 same, -1 needs OpenCC in
				    * context, else it; NULL when t2s_all */
	int32_t *t2s_own;          /* t2s_map when built here, else NULL */
	int t2s_all;               /* 1: every Han run goes through OpenCC */
	char t2s_hash[T2S_HASH_HEX + 1]; /* hash of t2s_map for the identity */
	char dict_hex[65];         /* SHA-256 hex of the dictionary file */
	struct sb_stemmer *stem;   /* Snowball english; NULL when no_stem */
	int no_segment;            /* test only: a Han run is one token */
	double load_ms;            /* time spent loading the dictionary */
	char identity[IDENTITY_MAX]; /* see tok_identity() */
};

/* One normalised code point of the current run. */
struct item {
	size_t start;       /* original byte offset of its unit */
	size_t end;         /* original byte offset just past its unit */
	int32_t cp;         /* the normalised code point */
	unsigned char cls;  /* enum cls */
	unsigned char kind; /* enum kind */
};

/* One part of an identifier: items [b, e) of segment seg. */
struct part {
	size_t b;   /* first item */
	size_t e;   /* one past the last item */
	size_t seg; /* index of the joiner-separated segment */
	int alt;    /* 1: split from the part before at a letter/digit change
		     * (digit_break); emitted colocated with it */
};

/* One character of a Han or bigram run, as the segmenter sees it. */
struct hchar {
	size_t off;   /* byte offset in the run's (converted) UTF-8 */
	size_t start; /* original byte range: start */
	size_t end;   /* original byte range: end */
	size_t next;  /* best route: index of the last char of the word here */
	double score; /* best route: log probability from here to the end */
};

/* The state of one tok_run call. */
struct run {
	struct tok *t;          /* the tokenizer */
	tok_emit_fn emit;       /* the caller's callback */
	void *user;             /* its argument */
	char *err;              /* where internal errors are described */
	size_t errsize;         /* size of err */
	int emitted;            /* a token was emitted in this call */
	int type;               /* enum run_type of the buffered items */
	struct item *items;     /* the buffered run */
	size_t n;               /* items buffered */
	size_t committed;       /* word runs: items before trailing joiners */
	size_t icap;            /* capacity of items */
	struct part *parts;     /* identifier parts scratch */
	size_t pcap;            /* capacity of parts */
	struct hchar *hc;       /* Han / bigram run characters, plus one */
	size_t hcap;            /* capacity of hc */
	struct sbuf src;        /* UTF-8 of the run being segmented */
	int32_t norm[NORM_BUF_CPS]; /* one unit's normalised code points */
	char tokbuf[TOK_MAX_TOKEN_BYTES + 8]; /* token being built */
};

/* ------------------------------------------------------------- helpers */

static uint64_t fnv_extend(uint64_t h, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= FNV64_PRIME;
	}
	return h;
}

static uint64_t hash_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/*
 * Decode one code point of UTF-8 already validated by util_utf8_invalid_at
 * (left >= 1). A sequence cut by left decodes as its lead byte, so even a
 * misuse never reads past s + left.
 */
static size_t utf8_decode(const unsigned char *s, size_t left, int32_t *cp)
{
	unsigned c = s[0];
	size_t n = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4, i;
	uint32_t v;

	if (n > left)
		n = 1;
	if (n == 1) {
		*cp = (int32_t)c;
		return 1;
	}
	v = c & (0x7Fu >> n);
	for (i = 1; i < n; i++)
		v = v << 6 | (s[i] & 0x3Fu);
	*cp = (int32_t)v;
	return n;
}

static int is_han(int32_t cp)
{
	return (cp >= 0x4E00 && cp <= 0x9FFF) ||
	       (cp >= 0x3400 && cp <= 0x4DBF) ||
	       (cp >= 0xF900 && cp <= 0xFAFF) ||
	       (cp >= 0x20000 && cp <= 0x3134F) || cp == 0x3005 ||
	       cp == 0x3007;
}

static int is_bigram_script(int32_t cp)
{
	return (cp >= 0x3041 && cp <= 0x309F) || /* hiragana */
	       (cp >= 0x30A1 && cp <= 0x30FA) || /* katakana */
	       (cp >= 0x30FC && cp <= 0x30FF) ||
	       (cp >= 0x31F0 && cp <= 0x31FF) ||
	       (cp >= 0xAC00 && cp <= 0xD7FF) || /* Hangul syllables */
	       (cp >= 0x1100 && cp <= 0x11FF) || /* Hangul jamo */
	       (cp >= 0x3131 && cp <= 0x318E) || (cp >= 0xA960 && cp <= 0xA97F);
}

static int classify(int32_t cp)
{
	utf8proc_category_t cat;

	if (cp < 0x80) {
		if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
		    (cp >= '0' && cp <= '9'))
			return CLS_WORD;
		if (cp == '_' || cp == '.' || cp == '/')
			return CLS_JOIN;
		if (cp == '\'')
			return CLS_APOS;
		return CLS_SEP;
	}
	if (cp == 0x2019)
		return CLS_APOS;
	if (is_han(cp))
		return CLS_HAN;
	if (is_bigram_script(cp))
		return CLS_BIGRAM;
	cat = utf8proc_category(cp);
	if ((cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_NO))
		return CLS_WORD; /* L*, M*, N* are contiguous in the enum */
	return CLS_SEP;
}

static int case_kind(utf8proc_category_t cat)
{
	if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT)
		return KIND_UPPER;
	if (cat == UTF8PROC_CATEGORY_LL)
		return KIND_LOWER;
	return KIND_OTHER;
}

/*
 * Ask for transparent huge pages on the page-aligned interior of a large
 * fresh allocation: loading touches ~17 MB at random, and on a VM the page
 * faults cost as much as the parsing. A hint only; failure is ignored.
 */
static void advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	uintptr_t b = ((uintptr_t)p + HUGE_PAGE_BYTES - 1) &
		      ~(HUGE_PAGE_BYTES - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(HUGE_PAGE_BYTES - 1);

	if (p && e > b)
		(void)madvise((void *)b, (size_t)(e - b), MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

static void set_err(char *err, size_t errsize, const char *msg)
{
	if (err && errsize)
		snprintf(err, errsize, "%s", msg);
}

/*
 * arr (of elem-sized elements, *cap of them) resized to hold at least need,
 * updating *cap; NULL when out of memory, arr then being unchanged.
 */
static void *grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : RUN_INITIAL_CAP;
	void *p;

	if (arr && need <= *cap)
		return arr;
	while (c < need)
		c *= 2;
	if (c > SIZE_MAX / elem)
		return NULL;
	p = util_realloc(arr, c * elem);
	if (p)
		*cap = c;
	return p;
}

/* ---------------------------------------------------------- dictionary */

/* The tag of a key: the top 24 bits of its mixed hash, then its length. */
static uint32_t key_tag(uint64_t h, size_t len)
{
	return (uint32_t)(h >> 40) << 8 | (uint32_t)len;
}

static const struct dict_entry *dict_find(const struct dict *d,
					  const char *key, size_t len,
					  uint64_t raw)
{
	uint64_t h = hash_mix(raw);
	uint32_t tag = key_tag(h, len);
	size_t i = (size_t)h & d->mask, probes;

	if (!d->slots || len == 0 || len > DICT_MAX_WORD_BYTES)
		return NULL;
	/* bounded and bounds-checked: a mapped table is not trusted */
	for (probes = 0; probes <= d->mask; probes++) {
		const struct dict_entry *e = &d->slots[i];

		if (e->tag == 0)
			return NULL;
		if (e->tag == tag && (size_t)e->off + len <= d->textlen &&
		    memcmp(d->text + e->off, key, len) == 0)
			return e;
		i = (i + 1) & d->mask;
	}
	return NULL;
}

/* Frequency of a whole word (0 if absent or only a prefix). */
static uint32_t dict_freq(const struct dict *d, const char *key, size_t len)
{
	const struct dict_entry *e;

	e = dict_find(d, key, len, fnv_extend(FNV64_BASIS, key, len));
	return e ? e->freq : 0;
}

double tok_word_logp(const struct tok *t, const char *word, size_t len)
{
	uint32_t f = dict_freq(&t->dict, word, len);

	return f ? log((double)f) - t->dict.logtotal : 1.0;
}

static void dict_place(struct dict_entry *slots, size_t mask,
		       const struct dict_entry *src, uint64_t h)
{
	size_t i = (size_t)h & mask;

	while (slots[i].tag != 0)
		i = (i + 1) & mask;
	slots[i] = *src;
}

static int dict_grow(struct dict *d)
{
	size_t oldcap = d->mask + 1, newcap = oldcap * 2, i;
	struct dict_entry *ns;

	ns = util_calloc(newcap, sizeof(*ns));
	if (!ns)
		return CAIRN_NOMEM;
	for (i = 0; i < oldcap; i++) {
		const struct dict_entry *e = &d->slots[i];
		uint64_t raw;

		if (e->tag == 0)
			continue;
		raw = fnv_extend(FNV64_BASIS, d->text + e->off,
				 e->tag & 0xFF);
		dict_place(ns, newcap - 1, e, hash_mix(raw));
	}
	cairn_free(d->slots);
	d->slots = ns;
	d->mask = newcap - 1;
	return CAIRN_OK;
}

/*
 * Store key text[off, off+len) with hash raw. A word sets its frequency
 * (the last entry of a duplicated word wins, as in jieba); a prefix is
 * added with frequency 0 only when absent.
 */
static int dict_put(struct dict *d, uint32_t off, size_t len, uint64_t raw,
		    uint32_t freq, int is_word)
{
	uint64_t h;
	uint32_t tag;
	size_t i;

	if ((d->count + 1) * 4 > (d->mask + 1) * 3 && dict_grow(d))
		return CAIRN_NOMEM;
	h = hash_mix(raw);
	tag = key_tag(h, len);
	i = (size_t)h & d->mask;
	for (;;) {
		struct dict_entry *e = &d->slots[i];

		if (e->tag == 0) {
			e->off = off;
			e->tag = tag;
			e->freq = is_word ? freq : 0;
			d->count++;
			return CAIRN_OK;
		}
		if (e->tag == tag &&
		    memcmp(d->text + e->off, d->text + off, len) == 0) {
			if (is_word)
				e->freq = freq;
			return CAIRN_OK;
		}
		i = (i + 1) & d->mask;
	}
}

/* Add one dictionary word and its prefixes, if it is all Han. */
static int dict_add_word(struct dict *d, size_t off, size_t len,
			 uint32_t freq)
{
	const unsigned char *w = (const unsigned char *)d->text + off;
	size_t p = 0, chars = 0, n;
	uint64_t raw = FNV64_BASIS;
	int32_t cp;
	int rc;

	while (p < len) {
		n = utf8_decode(w + p, len - p, &cp);
		if (!is_han(cp))
			return CAIRN_OK;
		p += n;
		chars++;
	}
	if (chars > DICT_MAX_WORD_CHARS || len > DICT_MAX_WORD_BYTES)
		return CAIRN_OK;
	if (chars > d->maxchars)
		d->maxchars = chars;
	p = 0;
	while (p < len) {
		n = utf8_decode(w + p, len - p, &cp);
		raw = fnv_extend(raw, (const char *)w + p, n);
		p += n;
		rc = dict_put(d, (uint32_t)off, p, raw, freq, p == len);
		if (rc)
			return rc;
	}
	return CAIRN_OK;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* Parse the lines "word freq [tag]" of d->text into the table. */
static int dict_parse(struct dict *d, const char *path, char *err,
		      size_t errsize)
{
	const char *p = d->text, *end = d->text + d->textlen;
	size_t lineno = 0, lines = 0, slots = DICT_MIN_SLOTS;
	uint64_t total = 0;
	int rc;

	for (p = d->text; p < end; p++) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			break;
		lines++;
	}
	while (slots < lines * 2 && slots < SIZE_MAX / 4)
		slots *= 2;
	d->slots = util_calloc(slots, sizeof(*d->slots));
	advise_huge(d->slots, slots * sizeof(*d->slots));
	if (!d->slots) {
		snprintf(err, errsize, "out of memory loading '%s'", path);
		return CAIRN_NOMEM;
	}
	d->mask = slots - 1;
	p = d->text;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *ls = p, *le = nl ? nl : end, *sp, *f, *fe;
		uint64_t freq = 0;

		p = nl ? nl + 1 : end;
		lineno++;
		while (ls < le && is_space(*ls))
			ls++;
		while (le > ls && is_space(le[-1]))
			le--;
		if (ls == le)
			continue;
		sp = memchr(ls, ' ', (size_t)(le - ls));
		if (!sp || sp == ls)
			goto bad;
		f = sp + 1;
		fe = memchr(f, ' ', (size_t)(le - f));
		if (!fe)
			fe = le;
		if (f == fe)
			goto bad;
		for (; f < fe; f++) {
			if (*f < '0' || *f > '9')
				goto bad;
			freq = freq * 10 + (uint64_t)(*f - '0');
			if (freq > UINT32_MAX)
				goto bad;
		}
		if (util_utf8_invalid_at(ls, (size_t)(sp - ls)) >= 0)
			goto bad;
		total += freq;
		rc = dict_add_word(d, (size_t)(ls - d->text), (size_t)(sp - ls),
				   (uint32_t)freq);
		if (rc) {
			snprintf(err, errsize, "out of memory loading '%s'",
				 path);
			return rc;
		}
	}
	if (total == 0) {
		snprintf(err, errsize,
			 "jieba dictionary '%s' has no words with a frequency",
			 path);
		return CAIRN_CORRUPT;
	}
	d->logtotal = log((double)total);
	return CAIRN_OK;
bad:
	snprintf(err, errsize,
		 "invalid jieba dictionary entry in '%s' at line %zu "
		 "(expected \"word frequency [tag]\")",
		 path, lineno);
	return CAIRN_CORRUPT;
}

/*
 * Read the dictionary file in one allocation of its exact size (a growing
 * buffer costs a third of the load time in copies and page faults).
 */
static int dict_read(struct dict *d, const char *path, char *err,
		     size_t errsize)
{
	struct stat st;
	size_t got = 0;
	int fd, rc = CAIRN_OK;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize,
			 "jieba dictionary not found: cannot open '%s': %s; "
			 "install it with `apt-get install python3-jieba`, or "
			 "set CAIRN_JIEBA_DICT to the path of a jieba dict.txt",
			 path, strerror(errno));
		return CAIRN_IO;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsize,
			 "jieba dictionary '%s' is not a regular file", path);
		rc = CAIRN_IO;
		goto out;
	}
	if ((uint64_t)st.st_size > DICT_MAX_FILE_BYTES) {
		snprintf(err, errsize,
			 "jieba dictionary '%s' is larger than %zu bytes", path,
			 DICT_MAX_FILE_BYTES);
		rc = CAIRN_TOOBIG;
		goto out;
	}
	d->text = cairn_malloc((size_t)st.st_size + 1);
	advise_huge(d->text, (size_t)st.st_size + 1);
	if (!d->text) {
		snprintf(err, errsize, "out of memory loading '%s'", path);
		rc = CAIRN_NOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, d->text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errsize, "cannot read '%s': %s", path,
				 strerror(errno));
			rc = CAIRN_IO;
			goto out;
		}
		if (n == 0)
			break; /* the file shrank: use what was read */
		got += (size_t)n;
	}
	d->text[got] = '\0';
	d->textlen = got;
out:
	close(fd);
	return rc;
}

static int dict_load(struct dict *d, const char *path, char *err,
		     size_t errsize)
{
	int rc = dict_read(d, path, err, errsize);

	if (rc)
		return rc;
	return dict_parse(d, path, err, errsize);
}

/* ------------------------------------------------------ t2s shortcut */

/*
 * OpenCC is most of the cost of tokenizing Chinese, and its t2s output
 * equals a character-by-character mapping except inside the few TSPhrases
 * entries that convert a character differently from TSCharacters. These
 * are the characters of such entries (乾隆 keeps 乾, 反覆 -> 反复, 藉口 ->
 * 借口, 於 in names...), found by dumping OpenCC 1.1.6's TSPhrases and
 * TSCharacters. A run containing one of them goes through OpenCC; other
 * runs are mapped character by character with a table computed from
 * OpenCC itself at open, so a new OpenCC's character table is followed
 * (and changes the identity).
 */
static const int32_t t2s_in_phrases[] = {
	0x4E48, 0x4E7E, 0x4FF1, 0x5412, 0x5641, 0x5F77, 0x5FB5, 0x65BC,
	0x6607, 0x6C88, 0x6FDB, 0x7274, 0x756B, 0x77AD, 0x85B9, 0x85C9,
	0x8879, 0x8986, 0x9245, 0x934A, 0x937E, 0x9EBC, 0x9EBD,
};

/* The BMP code points whose t2s_map entries are kept, in index order. */
static const int32_t t2s_ranges[][2] = {
	{ 0x3400, 0x4DBF }, { 0x4E00, 0x9FFF }, { 0xF900, 0xFAFF },
	{ 0x3005, 0x3005 }, { 0x3007, 0x3007 },
};

/* Index of cp in t2s_map, or -1 when it has none. */
static long t2s_index(int32_t cp)
{
	long base = 0;
	size_t r;

	for (r = 0; r < ARRAY_SIZE(t2s_ranges); r++) {
		if (cp >= t2s_ranges[r][0] && cp <= t2s_ranges[r][1])
			return base + (cp - t2s_ranges[r][0]);
		base += t2s_ranges[r][1] - t2s_ranges[r][0] + 1;
	}
	return -1;
}

/*
 * OpenCC is loaded with dlopen() when a conversion is first needed, not
 * linked: the tables of the tokenizer cache already hold the conversion of
 * every character alone, so most processes never call it, and linking it
 * (with libstdc++ and libmarisa) cost every cairn process ~2.6 ms of
 * start-up, a tenth of a hook call (bench/hook_bench.c). The cache key
 * names the library file (TOK_OPENCC_LIBDIR, from pkg-config at build
 * time) without loading it.
 */
#define TOK_LIBOPENCC "libopencc.so.1.1" /* Debian's libopencc1.1 (ABI 1.1) */
#ifndef TOK_OPENCC_LIBDIR
#define TOK_OPENCC_LIBDIR "/usr/lib/x86_64-linux-gnu"
#endif

static struct {
	opencc_t (*open)(const char *);
	const char *(*error)(void);
	char *(*convert)(opencc_t, const char *, size_t);
	void (*convert_free)(char *);
	int (*close)(opencc_t);
	char why[256]; /* "" when loaded */
} occ;
static pthread_once_t occ_once = PTHREAD_ONCE_INIT;

static void occ_load(void)
{
	static const char *const names[] = {
		"opencc_open", "opencc_error", "opencc_convert_utf8",
		"opencc_convert_utf8_free", "opencc_close",
	};
	void **const slots[] = {
		(void **)&occ.open,	    (void **)&occ.error,
		(void **)&occ.convert,	    (void **)&occ.convert_free,
		(void **)&occ.close,
	};

	(void)util_dl_syms(TOK_LIBOPENCC, "Debian's libopencc1.1", names,
			   slots, ARRAY_SIZE(names), occ.why, sizeof(occ.why));
}

/* Load OpenCC once; NULL when loaded, else why not. */
static const char *occ_need(void)
{
	pthread_once(&occ_once, occ_load);
	return occ.why[0] ? occ.why : NULL;
}

/*
 * Fill t->t2s_map with one OpenCC call over every character of t2s_ranges,
 * one per line (so no phrase can match). A character whose conversion is
 * not one character, or that is in t2s_in_phrases, gets -1. If the output
 * does not line up, t2s_all sends every run through OpenCC.
 */
static int t2s_build(struct tok *t)
{
	struct sbuf in = SBUF_INIT;
	const char *p, *q;
	char *out = NULL, hex[65];
	unsigned char tmp[4];
	size_t r;
	long idx = 0;
	int32_t cp;

	t->t2s_all = 1;
	if (!t->cc)
		return CAIRN_OK;
	t->t2s_own = util_calloc(T2S_CHARS, sizeof(*t->t2s_own));
	if (!t->t2s_own)
		return CAIRN_NOMEM;
	for (r = 0; r < ARRAY_SIZE(t2s_ranges); r++) {
		for (cp = t2s_ranges[r][0]; cp <= t2s_ranges[r][1]; cp++) {
			utf8proc_ssize_t n = utf8proc_encode_char(cp, tmp);

			sbuf_add(&in, tmp, (size_t)n);
			sbuf_addc(&in, '\n');
		}
	}
	if (in.err) {
		sbuf_release(&in);
		return CAIRN_NOMEM;
	}
	out = occ.convert(t->cc, in.buf, in.len);
	if (!out)
		goto done;
	for (p = in.buf, q = out; *p && idx < T2S_CHARS; idx++) {
		const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
		int32_t to = -1;

		if (!pe || !qe)
			goto done;
		if (qe > q && utf8_decode((const unsigned char *)q,
					  (size_t)(qe - q), &to) !=
				      (size_t)(qe - q))
			to = -1;
		if (qe == q)
			to = -1;
		utf8_decode((const unsigned char *)p, (size_t)(pe - p), &cp);
		t->t2s_own[idx] = to == cp ? 0 : to;
		p = pe + 1;
		q = qe + 1;
	}
	if (*p || *q || idx != T2S_CHARS)
		goto done;
	for (r = 0; r < ARRAY_SIZE(t2s_in_phrases); r++) {
		idx = t2s_index(t2s_in_phrases[r]);
		if (idx >= 0)
			t->t2s_own[idx] = -1;
	}
	util_sha256_hex(t->t2s_own, T2S_CHARS * sizeof(*t->t2s_own), hex);
	snprintf(t->t2s_hash, sizeof(t->t2s_hash), "%.*s", T2S_HASH_HEX, hex);
	t->t2s_map = t->t2s_own;
	t->t2s_all = 0;
done:
	if (out)
		occ.convert_free(out);
	sbuf_release(&in);
	return CAIRN_OK;
}

/*
 * Convert items [0, n) to Simplified in place with t2s_map when that is
 * exact. Returns 1 when the run needs OpenCC instead.
 */
static int t2s_items(const struct tok *t, struct item *items, size_t n)
{
	size_t i;
	long idx;

	if (t->t2s_all || !t->t2s_map)
		return 1;
	for (i = 0; i < n; i++) {
		if (items[i].cp >= BMP_CPS)
			return 1;
		idx = t2s_index(items[i].cp);
		if (idx >= 0 && t->t2s_map[idx] < 0)
			return 1;
	}
	for (i = 0; i < n; i++) {
		idx = t2s_index(items[i].cp);
		if (idx >= 0 && t->t2s_map[idx] > 0)
			items[i].cp = t->t2s_map[idx];
	}
	return 0;
}

/* --------------------------------------------------------------- cache */

/*
 * A cache file is the header below, then the dictionary text, the hash
 * table (struct dict_entry[nslots]) and, unless t2s_all, the t2s table
 * (int32_t[T2S_CHARS]), each at a CACHE_ALIGN-aligned offset, all in this
 * host's byte order. Entries hold offsets into the text, never pointers,
 * so the mapped file is used as it is.
 *
 * Its name hashes the dictionary path and the OpenCC config (so a changed
 * dictionary replaces its file instead of adding one); its header holds
 * the SHA-256 of the full key (cache_key), which must match. The header is
 * checksummed, every size and offset is checked against the file, the t2s
 * table is range-checked and checksummed, and every table lookup is
 * bounded (dict_find), so a truncated or corrupt file is rebuilt, or at
 * worst gives wrong segments, never a crash. The text and the table are
 * not checksummed on load: reading all 17 MB would cost most of what the
 * cache saves. Files are written whole to a temporary name and renamed,
 * so concurrent writers and readers only ever see complete files.
 */
struct cache_header {
	char magic[8];          /* CACHE_MAGIC, not NUL-terminated */
	uint32_t format;        /* CACHE_FORMAT */
	uint32_t header_bytes;  /* sizeof(struct cache_header) */
	uint64_t endian;        /* CACHE_ENDIAN in the writer's byte order */
	uint64_t file_bytes;    /* size of the whole file */
	uint64_t text_off;      /* the dictionary text: offset */
	uint64_t text_len;      /* and length in bytes */
	uint64_t slots_off;     /* the hash table: offset */
	uint64_t nslots;        /* and number of entries (a power of two) */
	uint64_t count;         /* dict.count */
	uint64_t maxchars;      /* dict.maxchars */
	double logtotal;        /* dict.logtotal */
	uint64_t t2s_off;       /* the t2s table: offset */
	uint64_t t2s_len;       /* and length in bytes; 0 when t2s_all */
	uint64_t t2s_sum;       /* cache_sum of the t2s table */
	uint32_t t2s_all;       /* tok.t2s_all */
	uint32_t reserved;      /* 0 */
	char key[CACHE_HEX_FIELD];      /* SHA-256 hex of the cache key */
	char dict_hex[CACHE_HEX_FIELD]; /* tok.dict_hex */
	char t2s_hash[16];              /* tok.t2s_hash */
	char check[CACHE_HEX_FIELD];    /* SHA-256 hex of the header with
					 * check all zero */
};

_Static_assert(sizeof(struct cache_header) == 352,
	       "struct cache_header has no padding");

/* Where a tokenizer's cache file is, and what it must have been built from. */
struct cache_loc {
	char dir[CACHE_PATH_MAX];  /* the cache directory */
	char file[CACHE_PATH_MAX]; /* the cache file in it */
	char key[65];              /* SHA-256 hex of the cache key */
};

/* Sequential writer of a cache file with a sticky error. */
struct cache_out {
	int fd;       /* the temporary file */
	uint64_t pos; /* bytes written */
	int err;      /* a write failed */
};

/*
 * A checksum of p[0, len) that changes whenever one 8-byte word does: four
 * FNV-style lanes (each step a bijection of the lane), so it runs at
 * memory speed.
 */
static uint64_t cache_sum(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t lane[4] = { FNV64_BASIS, FNV64_BASIS ^ 1, FNV64_BASIS ^ 2,
			     FNV64_BASIS ^ 3 };
	uint64_t w, h;
	size_t i, k;

	for (i = 0; i + 32 <= len; i += 32) {
		for (k = 0; k < 4; k++) {
			memcpy(&w, b + i + 8 * k, 8);
			lane[k] = (lane[k] ^ w) * FNV64_PRIME;
		}
	}
	h = fnv_extend(FNV64_BASIS, (const char *)b + i, len - i);
	for (k = 0; k < 4; k++)
		h = hash_mix(h ^ lane[k]) * FNV64_PRIME;
	return h;
}

static uint64_t align_up(uint64_t n)
{
	return (n + CACHE_ALIGN - 1) & ~(uint64_t)(CACHE_ALIGN - 1);
}

/* Add path's identity (size, times, inode) to key; -1 if it has none. */
static int key_add_stat(struct sbuf *key, const char *what, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	sbuf_addf(key, "%s=%s size=%lld mtime=%lld.%09ld ctime=%lld.%09ld "
		       "ino=%llu dev=%llu\n",
		  what, path, (long long)st.st_size,
		  (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
		  (long long)st.st_ctim.tv_sec, (long)st.st_ctim.tv_nsec,
		  (unsigned long long)st.st_ino, (unsigned long long)st.st_dev);
	return 0;
}

/*
 * The OpenCC config file and its directory, found the way OpenCC finds
 * them (the name as given, else in its data directory). Replacing a data
 * file (a package upgrade renames files into place) changes the
 * directory's times.
 */
static int key_add_opencc(struct sbuf *key, const char *cfg)
{
	char path[CACHE_PATH_MAX], *slash;
	int n;

	n = snprintf(path, sizeof(path), "%s", cfg);
	if (access(path, R_OK) != 0) {
		if (strchr(cfg, '/'))
			return -1;
		n = snprintf(path, sizeof(path), "%s/%s", TOK_OPENCC_DATADIR,
			     cfg);
	}
	if (n < 0 || (size_t)n >= sizeof(path) ||
	    key_add_stat(key, "opencc-config", path))
		return -1;
	slash = strrchr(path, '/');
	if (slash == path)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(path, sizeof(path), ".");
	if (key_add_stat(key, "opencc-dir", path))
		return -1;
	/* the library (not loaded): a new OpenCC may convert differently */
	if (key_add_stat(key, "opencc-lib",
			 TOK_OPENCC_LIBDIR "/" TOK_LIBOPENCC) == 0)
		return 0;
	sbuf_adds(key, "opencc-lib=unknown\n");
	return 0;
}

/*
 * The cache directory: o->cache_dir, else $CAIRN_CACHE_DIR, else
 * $XDG_CACHE_HOME/cairn (absolute only, as XDG says), else
 * $HOME/.cache/cairn. 0 when there is none or it is "" (no cache).
 */
static int cache_dir(const struct tok_opts *o, char *buf, size_t size)
{
	return util_cache_dir(o->cache_dir, buf, size);
}

/*
 * Fill *loc for the tables of dict_path and cfg: the cache file and the
 * hash of everything the cached tables depend on (this code's layout and
 * constants, the dictionary file, the OpenCC config, data and library).
 * 0 when there is no usable cache (no directory, a file that cannot be
 * stat'ed, no memory).
 */
static int cache_locate(const struct tok_opts *o, const char *dict_path,
			const char *cfg, struct cache_loc *loc)
{
	struct sbuf key = SBUF_INIT;
	char hex[65];
	int n, ok = 0;

	if (!cache_dir(o, loc->dir, sizeof(loc->dir)))
		return 0;
	sbuf_addf(&key, "%d\n%s\n%s", CACHE_FORMAT, dict_path, cfg);
	if (key.err)
		goto out;
	util_sha256_hex(key.buf, key.len, hex);
	n = snprintf(loc->file, sizeof(loc->file), "%s/tok%d-%.*s.bin",
		     loc->dir, CACHE_FORMAT, CACHE_NAME_HEX, hex);
	if (n < 0 || (size_t)n >= sizeof(loc->file))
		goto out;
	sbuf_reset(&key);
	sbuf_addf(&key,
		  "cairn tokenizer cache format=%d entry=%zu t2s=%d "
		  "words=%d/%d slots=%d phrases=%016llx utf8proc=%s\n",
		  CACHE_FORMAT, sizeof(struct dict_entry), (int)T2S_CHARS,
		  DICT_MAX_WORD_CHARS, DICT_MAX_WORD_BYTES, DICT_MIN_SLOTS,
		  (unsigned long long)fnv_extend(
			  fnv_extend(FNV64_BASIS,
				     (const char *)t2s_in_phrases,
				     sizeof(t2s_in_phrases)),
			  (const char *)t2s_ranges, sizeof(t2s_ranges)),
		  utf8proc_version());
	sbuf_addf(&key, "opencc=%s\n", cfg);
	if (key_add_stat(&key, "dict", dict_path) ||
	    key_add_opencc(&key, cfg) || key.err)
		goto out;
	util_sha256_hex(key.buf, key.len, loc->key);
	ok = 1;
out:
	sbuf_release(&key);
	return ok;
}

static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return 1;
}

/* Is [off, off+len) an aligned section of a file of size bytes at or
 * after from? */
static int section_ok(uint64_t off, uint64_t len, uint64_t from,
		      uint64_t size)
{
	return off % CACHE_ALIGN == 0 && off >= from && off <= size &&
	       len <= size - off;
}

/* Does the mapped file m of size bytes hold valid tables for key? */
static int cache_valid(const unsigned char *m, uint64_t size, const char *key)
{
	struct cache_header h;
	char hex[65];
	const int32_t *map;
	uint64_t i;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, m, sizeof(h));
	memset(h.check, 0, sizeof(h.check));
	util_sha256_hex(&h, sizeof(h), hex);
	memcpy(&h, m, sizeof(h));
	if (memcmp(h.check, hex, 65) != 0 ||
	    memcmp(h.magic, CACHE_MAGIC, 8) != 0 ||
	    h.format != CACHE_FORMAT || h.header_bytes != sizeof(h) ||
	    h.endian != CACHE_ENDIAN || h.file_bytes != size ||
	    memcmp(h.key, key, 65) != 0 || h.reserved != 0)
		return 0;
	if (!section_ok(h.text_off, h.text_len, sizeof(h), size) ||
	    h.text_len > UINT32_MAX ||
	    h.nslots < DICT_MIN_SLOTS || (h.nslots & (h.nslots - 1)) ||
	    h.nslots > size / sizeof(struct dict_entry) ||
	    !section_ok(h.slots_off, h.nslots * sizeof(struct dict_entry),
			h.text_off + h.text_len, size) ||
	    h.count >= h.nslots || h.maxchars > DICT_MAX_WORD_CHARS ||
	    !isfinite(h.logtotal) || h.logtotal < 0.0 || h.t2s_all > 1 ||
	    !is_hex(h.dict_hex, 64) || h.dict_hex[64] != '\0')
		return 0;
	if (h.t2s_all)
		return h.t2s_len == 0 && h.t2s_hash[0] == '\0';
	if (h.t2s_len != T2S_CHARS * sizeof(int32_t) ||
	    !section_ok(h.t2s_off, h.t2s_len,
			h.slots_off + h.nslots * sizeof(struct dict_entry),
			size) ||
	    !is_hex(h.t2s_hash, T2S_HASH_HEX) ||
	    h.t2s_hash[T2S_HASH_HEX] != '\0' ||
	    cache_sum(m + h.t2s_off, h.t2s_len) != h.t2s_sum)
		return 0;
	map = (const int32_t *)(const void *)(m + h.t2s_off);
	for (i = 0; i < T2S_CHARS; i++) {
		if (map[i] < -1 || map[i] > 0x10FFFF ||
		    (map[i] >= 0xD800 && map[i] <= 0xDFFF))
			return 0;
	}
	return 1;
}

/*
 * Map loc's cache file into t if it is valid for loc's key. 0 on success;
 * -1 (nothing changed in t) otherwise.
 */
static int cache_load(struct tok *t, const struct cache_loc *loc)
{
	const struct cache_header *h;
	struct stat st;
	void *m;
	int fd;

	fd = open(loc->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(*h) ||
	    (uint64_t)st.st_size > CACHE_MAX_BYTES) {
		close(fd);
		return -1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	if (!cache_valid(m, (uint64_t)st.st_size, loc->key)) {
		munmap(m, (size_t)st.st_size);
		return -1;
	}
	h = m;
	t->map = m;
	t->maplen = (size_t)st.st_size;
	t->dict.text = (char *)m + h->text_off;
	t->dict.textlen = (size_t)h->text_len;
	t->dict.slots = (struct dict_entry *)(void *)((char *)m +
						      h->slots_off);
	t->dict.mask = (size_t)h->nslots - 1;
	t->dict.count = (size_t)h->count;
	t->dict.maxchars = (size_t)h->maxchars;
	t->dict.logtotal = h->logtotal;
	t->t2s_all = (int)h->t2s_all;
	t->t2s_map = h->t2s_all ? NULL
				: (const int32_t *)(const void *)((char *)m +
								  h->t2s_off);
	memcpy(t->t2s_hash, h->t2s_hash, sizeof(t->t2s_hash));
	memcpy(t->dict_hex, h->dict_hex, sizeof(t->dict_hex));
	t->from_cache = 1;
	return 0;
}

static void out_put(struct cache_out *w, const void *p, size_t len)
{
	const char *b = p;

	while (len && !w->err) {
		ssize_t n = write(w->fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			w->err = 1;
			break;
		}
		b += n;
		len -= (size_t)n;
		w->pos += (uint64_t)n;
	}
}

/* Zeros up to offset off. */
static void out_pad(struct cache_out *w, uint64_t off)
{
	static const char zeros[CACHE_ALIGN];

	if (off > w->pos && off - w->pos <= CACHE_ALIGN)
		out_put(w, zeros, (size_t)(off - w->pos));
}

/* Create dir and its missing parents, mode 0700; 0 when it exists. */
static int make_dirs(const char *dir)
{
	char path[CACHE_PATH_MAX];
	char *p;

	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/*
 * Write t's tables to loc's cache file: a temporary file (mode 0600, from
 * mkstemp) written, synced and renamed over it. Any failure leaves no
 * file behind and is otherwise ignored.
 */
static void cache_write(const struct tok *t, const struct cache_loc *loc)
{
	struct cache_header h;
	struct cache_out w = { -1, 0, 0 };
	char tmp[CACHE_PATH_MAX + 16], hex[65];
	const struct dict *d = &t->dict;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.format = CACHE_FORMAT;
	h.header_bytes = sizeof(h);
	h.endian = CACHE_ENDIAN;
	h.text_off = align_up(sizeof(h));
	h.text_len = d->textlen;
	h.slots_off = align_up(h.text_off + h.text_len);
	h.nslots = (uint64_t)d->mask + 1;
	h.count = d->count;
	h.maxchars = d->maxchars;
	h.logtotal = d->logtotal;
	h.t2s_all = t->t2s_all || !t->t2s_map;
	h.t2s_off = align_up(h.slots_off + h.nslots * sizeof(*d->slots));
	h.t2s_len = h.t2s_all ? 0 : T2S_CHARS * sizeof(int32_t);
	h.file_bytes = h.t2s_all ? h.slots_off + h.nslots * sizeof(*d->slots)
				 : h.t2s_off + h.t2s_len;
	if (!h.t2s_all)
		h.t2s_sum = cache_sum(t->t2s_map, (size_t)h.t2s_len);
	memcpy(h.key, loc->key, 65);
	memcpy(h.dict_hex, t->dict_hex, sizeof(t->dict_hex));
	if (!h.t2s_all)
		memcpy(h.t2s_hash, t->t2s_hash, sizeof(t->t2s_hash));
	util_sha256_hex(&h, sizeof(h), hex);
	memcpy(h.check, hex, 65);
	if (h.file_bytes > CACHE_MAX_BYTES || d->textlen > UINT32_MAX ||
	    make_dirs(loc->dir) != 0)
		return;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", loc->file);
	w.fd = mkstemp(tmp);
	if (w.fd < 0)
		return;
	out_put(&w, &h, sizeof(h));
	out_pad(&w, h.text_off);
	out_put(&w, d->text, d->textlen);
	out_pad(&w, h.slots_off);
	out_put(&w, d->slots, (size_t)h.nslots * sizeof(*d->slots));
	if (!h.t2s_all) {
		out_pad(&w, h.t2s_off);
		out_put(&w, t->t2s_map, (size_t)h.t2s_len);
	}
	if (w.pos != h.file_bytes || fsync(w.fd) != 0)
		w.err = 1;
	if (close(w.fd) != 0)
		w.err = 1;
	if (w.err || rename(tmp, loc->file) != 0)
		unlink(tmp);
}

/* ---------------------------------------------------------------- open */

/* The OpenCC config's short name for the identity: "t2s" for t2s.json. */
static void config_name(const char *cfg, char *out, size_t size)
{
	const char *base = strrchr(cfg, '/');
	size_t n;

	base = base ? base + 1 : cfg;
	n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".json") == 0)
		n -= 5;
	snprintf(out, size, "%.*s", (int)n, base);
}

/* Open t's OpenCC converter: CAIRN_OK, or CAIRN_IO with err set. */
static int open_cc(struct tok *t, char *err, size_t errsize)
{
	const char *why;

	if (t->cc)
		return CAIRN_OK;
	why = occ_need();
	if (why) {
		if (err && errsize)
			snprintf(err, errsize, "%s", why);
		return CAIRN_IO;
	}
	t->cc = occ.open(t->cc_config);
	if (t->cc != (opencc_t)-1)
		return CAIRN_OK;
	why = occ.error();
	t->cc = NULL;
	if (err && errsize)
		snprintf(err, errsize,
			 "cannot open OpenCC config '%s': %s; install it with "
			 "`apt-get install libopencc-data`",
			 t->cc_config, why ? why : "unknown error");
	return CAIRN_IO;
}

/*
 * Build t's tables from dict_path and OpenCC, and write them to the cache
 * at loc (NULL: none) unless the dictionary changed meanwhile.
 */
static int build_tables(struct tok *t, const struct tok_opts *o,
			const char *dict_path, const struct cache_loc *loc,
			char *err, size_t errsize)
{
	struct cache_loc now;
	double t0 = util_now_ms();
	int rc;

	rc = dict_load(&t->dict, dict_path, err, errsize);
	if (rc)
		return rc;
	t->load_ms = util_now_ms() - t0;
	rc = open_cc(t, err, errsize);
	if (rc)
		return rc;
	rc = t2s_build(t);
	if (rc) {
		set_err(err, errsize, "out of memory");
		return rc;
	}
	util_sha256_hex(t->dict.text, t->dict.textlen, t->dict_hex);
	if (loc && cache_locate(o, dict_path, t->cc_config, &now) &&
	    strcmp(now.key, loc->key) == 0)
		cache_write(t, loc);
	return CAIRN_OK;
}

/*
 * Load the jieba dictionary, the OpenCC converter and the stemmer named by
 * o, from the cache when it is valid, and compute the identity. On failure
 * *out is NULL and err says why.
 */
int tok_open(const struct tok_opts *o, struct tok **out, char *err,
	     size_t errsize)
{
	static const struct tok_opts defaults = { NULL, NULL, 0, 0, NULL };
	const char *dict_path, *cfg;
	char ccname[64];
	struct cache_loc *loc = NULL;
	struct tok *t = NULL;
	double t0;
	int rc = CAIRN_OK;

	if (err && errsize)
		err[0] = '\0';
	if (!out) {
		set_err(err, errsize, "tok_open: out is NULL");
		return CAIRN_INVALID;
	}
	*out = NULL;
	if (!o)
		o = &defaults;
	dict_path = o->jieba_dict;
	if (!dict_path || !*dict_path)
		dict_path = getenv("CAIRN_JIEBA_DICT");
	if (!dict_path || !*dict_path)
		dict_path = TOK_DEFAULT_JIEBA_DICT;
	cfg = o->opencc_config && *o->opencc_config ? o->opencc_config
						    : TOK_DEFAULT_OPENCC;
	t = util_calloc(1, sizeof(*t));
	if (t)
		t->cc_config = util_strdup(cfg);
	if (!t || !t->cc_config) {
		set_err(err, errsize, "out of memory");
		rc = CAIRN_NOMEM;
		goto out;
	}
#ifndef CAIRN_MUTATE_NO_SEGMENT
	t->no_segment = o->no_segment;
#else
	t->no_segment = 1; /* negative control: Chinese is not segmented */
#endif
	t0 = util_now_ms();
	loc = cairn_malloc(sizeof(*loc));
	if (loc && !cache_locate(o, dict_path, cfg, loc)) {
		cairn_free(loc);
		loc = NULL;
	}
	if (loc && cache_load(t, loc) == 0)
		t->load_ms = util_now_ms() - t0;
	else
		rc = build_tables(t, o, dict_path, loc, err, errsize);
	if (rc)
		goto out;
	if (!o->no_stem) {
		t->stem = sb_stemmer_new("english", NULL);
		if (!t->stem) {
			set_err(err, errsize,
				"cannot create the Snowball english stemmer");
			rc = CAIRN_NOMEM;
			goto out;
		}
	}
	config_name(cfg, ccname, sizeof(ccname));
	snprintf(t->identity, sizeof(t->identity),
		 "%s jieba=%.*s opencc=%s%s%s stem=%s unicode=%s%s",
		 TOK_IDENTITY_VERSION, DICT_HASH_HEX, t->dict_hex, ccname,
		 t->t2s_hash[0] ? "/" : "", t->t2s_hash,
		 t->stem ? "english" : "none", utf8proc_unicode_version(),
		 t->no_segment ? " seg=none" : "");
out:
	cairn_free(loc);
	if (rc) {
		tok_close(t);
		return rc;
	}
	*out = t;
	return CAIRN_OK;
}

/* Free a tokenizer and everything it loaded or mapped. */
void tok_close(struct tok *t)
{
	if (!t)
		return;
	if (t->cc)
		occ.close(t->cc);
	if (t->stem)
		sb_stemmer_delete(t->stem);
	if (t->map) {
		munmap(t->map, t->maplen);
	} else {
		cairn_free(t->dict.slots);
		cairn_free(t->dict.text);
	}
	cairn_free(t->t2s_own);
	cairn_free(t->cc_config);
	cairn_free(t);
}

/* The identity string (see tokenize.h). */
const char *tok_identity(const struct tok *t)
{
	return t ? t->identity : "";
}

/* Milliseconds spent reading and indexing (or mapping) the dictionary. */
double tok_dict_load_ms(const struct tok *t)
{
	return t ? t->load_ms : 0.0;
}

/* Whether the tables came from the cache file (see tokenize.h). */
int tok_cached(const struct tok *t)
{
	return t ? t->from_cache : 0;
}

/* ------------------------------------------------------------ emitting */

static int run_emit(struct run *r, const char *tok, size_t len, size_t start,
		    size_t end, int colocated)
{
	if (len == 0)
		return CAIRN_OK;
	if (!r->emitted)
		colocated = 0;
	r->emitted = 1;
	return r->emit(r->user, tok, len, start, end, colocated);
}

static int run_nomem(struct run *r)
{
	set_err(r->err, r->errsize, "out of memory tokenizing");
	return CAIRN_NOMEM;
}

/*
 * UTF-8 of items [b, e) into r->tokbuf. Returns the length, stopping at
 * the last whole character that fits TOK_MAX_TOKEN_BYTES; *cut is set when
 * something did not fit.
 */
static size_t encode_items(struct run *r, size_t b, size_t e, int *cut)
{
	unsigned char tmp[4];
	size_t len = 0, i;

	*cut = 0;
	for (i = b; i < e; i++) {
		utf8proc_ssize_t n = utf8proc_encode_char(r->items[i].cp, tmp);

		if (len + (size_t)n > TOK_MAX_TOKEN_BYTES) {
			*cut = 1;
			break;
		}
		memcpy(r->tokbuf + len, tmp, (size_t)n);
		len += (size_t)n;
	}
	return len;
}

/* ------------------------------------------------------------ identifiers */


/*
 * Is there a change between cased letters and digits between items i-1
 * and i (EMNLP2022, python3, 100ms)? Not a camelCase boundary.
 */
static int digit_break(const struct item *it, size_t i)
{
	const struct item *a = &it[i - 1], *b = &it[i];

	if (a->cls != CLS_WORD || b->cls != CLS_WORD || a->start == b->start)
		return 0;
#ifndef CAIRN_MUTATE_NO_DIGIT_SPLIT
	if (a->kind == KIND_DIGIT && b->kind == KIND_UPPER)
		return 0; /* camelCase already: 2Fast */
	return ((a->kind == KIND_UPPER || a->kind == KIND_LOWER) &&
		b->kind == KIND_DIGIT) ||
	       (a->kind == KIND_DIGIT && b->kind == KIND_LOWER);
#else
	return 0;
#endif
}

/* Is there a camelCase boundary between items i-1 and i? */
static int camel_break(const struct item *it, size_t i, size_t n)
{
	const struct item *a = &it[i - 1], *b = &it[i];

	if (a->cls != CLS_WORD || b->cls != CLS_WORD || a->start == b->start)
		return 0;
	if (b->kind != KIND_UPPER)
		return 0;
	if (a->kind == KIND_LOWER || a->kind == KIND_DIGIT)
		return 1;
	return a->kind == KIND_UPPER && i + 1 < n &&
	       it[i + 1].cls == CLS_WORD && it[i + 1].kind == KIND_LOWER;
}

/* Emit one identifier part, stemmed when it is plain a-z English. */
static int emit_part(struct run *r, const struct part *pt, int colocated)
{
	int cut, stemmable = 1, letters = 0;
	size_t len = encode_items(r, pt->b, pt->e, &cut), i;
	const char *out = r->tokbuf;

	for (i = 0; i < len; i++) {
		char c = r->tokbuf[i];

		if (c >= 'a' && c <= 'z')
			letters = 1;
		else if (c != '\'')
			stemmable = 0;
	}
	if (r->t->stem && stemmable && letters) {
		const sb_symbol *s = sb_stemmer_stem(
			r->t->stem, (const sb_symbol *)r->tokbuf, (int)len);
		int slen;

		if (!s)
			return run_nomem(r);
		slen = sb_stemmer_length(r->t->stem);
		if (slen > 0) {
			out = (const char *)s;
			len = (size_t)slen;
		}
	}
	return run_emit(r, out, len, r->items[pt->b].start,
			r->items[pt->e - 1].end, colocated);
}

/* Emit items [b, e) as one unstemmed token, unless it is too long. */
static int emit_whole(struct run *r, size_t b, size_t e)
{
	int cut;
	size_t len = encode_items(r, b, e, &cut);

	if (cut)
		return CAIRN_OK;
	return run_emit(r, r->tokbuf, len, r->items[b].start,
			r->items[e - 1].end, 1);
}

/* Tokens of the identifier in items [0, n). */
static int word_flush(struct run *r, size_t n)
{
	const struct item *it = r->items;
	size_t np = 0, seg = 0, i = 0, k, m;
	void *p;
	int rc;

	p = grow(r->parts, &r->pcap, n, sizeof(*r->parts));
	if (!p)
		return run_nomem(r);
	r->parts = p;
	while (i < n) {
		size_t b;

		if (it[i].cls == CLS_JOIN) {
			while (i < n && it[i].cls == CLS_JOIN)
				i++;
			seg++;
			continue;
		}
		b = i++;
		while (i < n && it[i].cls != CLS_JOIN &&
		       !camel_break(it, i, n) && !digit_break(it, i))
			i++;
		r->parts[np].b = b;
		r->parts[np].e = i;
		r->parts[np].seg = seg;
		r->parts[np].alt = np > 0 && r->parts[np - 1].e == b &&
				   digit_break(it, b);
		np++;
	}
	for (k = 0; k < np; k++) {
		const struct part *pt = &r->parts[k];

		/*
		 * A part split off at a letter/digit change shares the
		 * position before it: "emnlp2022" stays one word long, so
		 * the lengths BM25 normalises by do not change.
		 */
		rc = emit_part(r, pt, pt->alt);
		if (rc)
			return rc;
		if (k == 0 && np > 1) {
			rc = emit_whole(r, 0, n);
			if (rc)
				return rc;
		}
		if (seg == 0 || (k > 0 && r->parts[k - 1].seg == pt->seg))
			continue;
		/* first part of a segment of a multi-segment identifier */
		m = k;
		while (m + 1 < np && r->parts[m + 1].seg == pt->seg)
			m++;
		if (m > k) {
			rc = emit_whole(r, pt->b, r->parts[m].e);
			if (rc)
				return rc;
		}
	}
	return CAIRN_OK;
}

/* ------------------------------------------------------------------ Han */

/* Emit characters [a, b) of the segmented run in text. */
static int emit_chars(struct run *r, const char *text, size_t a, size_t b,
		      int colocated)
{
	return run_emit(r, text + r->hc[a].off, r->hc[b].off - r->hc[a].off,
			r->hc[a].start, r->hc[b - 1].end, colocated);
}

/*
 * A run of single characters [a, b): one character is itself; two or more
 * become bigrams, each followed by its first character colocated, and the
 * last character. With use_dict, a run that is a dictionary word is
 * emitted as its characters (what jieba does).
 */
static int singles_flush(struct run *r, const char *text, size_t a, size_t b,
			 int use_dict)
{
	const struct hchar *hc = r->hc;
	size_t i;
	int rc, as_chars = 0;

	if (b - a == 1)
		return emit_chars(r, text, a, b, 0);
	if (use_dict)
		as_chars = dict_freq(&r->t->dict, text + hc[a].off,
				     hc[b].off - hc[a].off) != 0;
	for (i = a; i + 1 < b; i++) {
		if (as_chars) {
			rc = emit_chars(r, text, i, i + 1, 0);
		} else {
			rc = emit_chars(r, text, i, i + 2, 0);
			if (!rc)
				rc = emit_chars(r, text, i, i + 1, 1);
		}
		if (rc)
			return rc;
	}
	return emit_chars(r, text, b - 1, b, 0);
}

/* A path word [x, y): its dictionary 2- and 3-grams first, then itself. */
static int han_word(struct run *r, const char *text, size_t x, size_t y)
{
	const struct hchar *hc = r->hc;
	size_t L = y - x, i, g;
	int rc;

	for (g = 2; g <= 3; g++) {
		if (L <= g)
			break;
		for (i = x; i + g <= y; i++) {
			if (!dict_freq(&r->t->dict, text + hc[i].off,
				       hc[i + g].off - hc[i].off))
				continue;
			rc = emit_chars(r, text, i, i + g, 0);
			if (rc)
				return rc;
		}
	}
	return emit_chars(r, text, x, y, 0);
}

/*
 * Segment the m characters described by r->hc in text like jieba without
 * HMM: route[i] = max over dictionary words i..j of log(freq) - log(total)
 * + route[j+1] (ties to the longer word), then walk the route.
 */
static int han_segment(struct run *r, const char *text, size_t m)
{
	const struct dict *d = &r->t->dict;
	struct hchar *hc = r->hc;
	size_t idx, x, sb = SIZE_MAX;
	int rc;

	hc[m].score = 0.0;
	for (idx = m; idx-- > 0;) {
		uint64_t h = FNV64_BASIS;
		double best = 0.0;
		size_t bestx = SIZE_MAX, i;

		for (i = idx; i < m && i - idx < d->maxchars; i++) {
			const struct dict_entry *e;

			h = fnv_extend(h, text + hc[i].off,
				       hc[i + 1].off - hc[i].off);
			e = dict_find(d, text + hc[idx].off,
				      hc[i + 1].off - hc[idx].off, h);
			if (!e)
				break;
			if (e->freq) {
				double s = log((double)e->freq) - d->logtotal +
					   hc[i + 1].score;

				if (bestx == SIZE_MAX || s >= best) {
					best = s;
					bestx = i;
				}
			}
		}
		if (bestx == SIZE_MAX) {
			best = 0.0 - d->logtotal + hc[idx + 1].score;
			bestx = idx;
		}
		hc[idx].score = best;
		hc[idx].next = bestx;
	}
	x = 0;
	while (x < m) {
		size_t y = hc[x].next + 1;

		if (y - x == 1) {
			if (sb == SIZE_MAX)
				sb = x;
			x = y;
			continue;
		}
		if (sb != SIZE_MAX) {
			rc = singles_flush(r, text, sb, x, 1);
			if (rc)
				return rc;
			sb = SIZE_MAX;
		}
		rc = han_word(r, text, x, y);
		if (rc)
			return rc;
		x = y;
	}
	if (sb != SIZE_MAX)
		return singles_flush(r, text, sb, m, 1);
	return CAIRN_OK;
}

/*
 * Fill r->hc for the UTF-8 text[0, tlen). When it has exactly n characters
 * each maps to items[i]'s original range, otherwise all map to the run's.
 * Returns the number of characters, or SIZE_MAX when out of memory.
 */
static size_t map_chars(struct run *r, const char *text, size_t tlen,
			size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t m = 0, p = 0, i;
	int32_t cp;

	void *np;

	while (p < tlen) {
		np = grow(r->hc, &r->hcap, m + 2, sizeof(*r->hc));
		if (!np)
			return SIZE_MAX;
		r->hc = np;
		r->hc[m++].off = p;
		p += utf8_decode(s + p, tlen - p, &cp);
	}
	np = grow(r->hc, &r->hcap, m + 1, sizeof(*r->hc));
	if (!np)
		return SIZE_MAX;
	r->hc = np;
	r->hc[m].off = tlen;
	for (i = 0; i < m; i++) {
		r->hc[i].start = m == n ? r->items[i].start : r->items[0].start;
		r->hc[i].end = m == n ? r->items[i].end : r->items[n - 1].end;
	}
	return m;
}

/* UTF-8 of items [0, n) into r->src. */
static int items_to_src(struct run *r, size_t n)
{
	unsigned char tmp[4];
	size_t i;

	sbuf_reset(&r->src);
	for (i = 0; i < n; i++) {
		utf8proc_ssize_t k = utf8proc_encode_char(r->items[i].cp, tmp);

		sbuf_add(&r->src, tmp, (size_t)k);
	}
	return r->src.err ? run_nomem(r) : CAIRN_OK;
}

/* Tokens of the Han run in items [0, n). */
static int han_flush(struct run *r, size_t n)
{
	const char *text;
	char *conv = NULL;
	size_t tlen, m;
	int rc, use_cc;

	use_cc = t2s_items(r->t, r->items, n);
	rc = items_to_src(r, n);
	if (rc)
		return rc;
	text = r->src.buf;
	tlen = r->src.len;
	if (use_cc && !r->t->cc) {
		rc = open_cc(r->t, r->err, r->errsize);
		if (rc)
			return rc;
	}
	if (use_cc) {
		conv = occ.convert(r->t->cc, r->src.buf, r->src.len);
		if (conv && util_utf8_invalid_at(conv, strlen(conv)) < 0) {
			text = conv;
			tlen = strlen(conv);
		}
	}
	m = map_chars(r, text, tlen, n);
	if (m == SIZE_MAX) {
		rc = run_nomem(r);
		goto out;
	}
	if (r->t->no_segment && m > 0) {
		/* test only: the whole run, cut to a token's length */
		while (m > 1 && r->hc[m].off > TOK_MAX_TOKEN_BYTES)
			m--;
		rc = emit_chars(r, text, 0, m, 0);
		goto out;
	}
	rc = han_segment(r, text, m);
out:
	if (conv)
		occ.convert_free(conv);
	return rc;
}

/* Tokens of the kana / Hangul run in items [0, n). */
static int bigram_flush(struct run *r, size_t n)
{
	size_t m;
	int rc;

	rc = items_to_src(r, n);
	if (rc)
		return rc;
	m = map_chars(r, r->src.buf, r->src.len, n);
	if (m == SIZE_MAX)
		return run_nomem(r);
	return singles_flush(r, r->src.buf, 0, m, 0);
}

/* ---------------------------------------------------------- accumulator */

static int run_flush(struct run *r)
{
	int type = r->type, rc = CAIRN_OK;
	size_t n = type == RUN_WORD ? r->committed : r->n;

	r->type = RUN_NONE;
	r->n = 0;
	r->committed = 0;
	if (n == 0)
		return CAIRN_OK;
	if (type == RUN_WORD)
		rc = word_flush(r, n);
	else if (type == RUN_HAN)
		rc = han_flush(r, n);
	else if (type == RUN_BIGRAM)
		rc = bigram_flush(r, n);
	return rc;
}

/* May the word item it follow the pending joiners of the word run? */
static int joiners_ok(const struct run *r, const struct item *it)
{
	size_t pending = r->n - r->committed, i;

	for (i = r->committed; i < r->n; i++) {
		if (r->items[i].cls != CLS_APOS)
			continue;
		/* an apostrophe only between two letters, alone */
		return pending == 1 && it->kind != KIND_DIGIT &&
		       r->items[r->committed - 1].cls == CLS_WORD &&
		       r->items[r->committed - 1].kind != KIND_DIGIT;
	}
	return 1;
}

static int run_append(struct run *r, const struct item *it)
{
	void *p = grow(r->items, &r->icap, r->n + 1, sizeof(*r->items));

	if (!p)
		return run_nomem(r);
	r->items = p;
	r->items[r->n++] = *it;
	return CAIRN_OK;
}

static int run_add(struct run *r, const struct item *it)
{
	int want = RUN_NONE, rc;

	if (it->cls == CLS_WORD)
		want = RUN_WORD;
	else if (it->cls == CLS_HAN)
		want = RUN_HAN;
	else if (it->cls == CLS_BIGRAM)
		want = RUN_BIGRAM;
	if (r->type == RUN_WORD) {
		if (it->cls == CLS_JOIN || it->cls == CLS_APOS) {
			if (r->n - r->committed < MAX_PENDING_JOINERS)
				return run_append(r, it);
			return run_flush(r);
		}
		if (want == RUN_WORD && r->committed < TOK_MAX_RUN_CPS &&
		    joiners_ok(r, it)) {
			rc = run_append(r, it);
			r->committed = r->n;
			return rc;
		}
	} else if (r->type != RUN_NONE && r->type == want &&
		   r->n < TOK_MAX_RUN_CPS) {
		return run_append(r, it);
	}
	rc = run_flush(r);
	if (rc || want == RUN_NONE)
		return rc;
	r->type = want;
	rc = run_append(r, it);
	r->committed = r->n;
	return rc;
}

static int feed_cp(struct run *r, int32_t cp, size_t start, size_t end,
		   int kind)
{
	struct item it;

	it.start = start;
	it.end = end;
	it.cp = cp;
	it.cls = (unsigned char)classify(cp);
	it.kind = KIND_OTHER;
	if (it.cls == CLS_APOS) {
		it.cp = '\'';
	} else if (it.cls == CLS_WORD) {
		utf8proc_category_t cat;

		if (cp < 0x80)
			cat = cp <= '9' ? UTF8PROC_CATEGORY_ND
					: UTF8PROC_CATEGORY_LL;
		else
			cat = utf8proc_category(cp);
		if (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO)
			it.kind = KIND_DIGIT;
		else
			it.kind = (unsigned char)kind;
	}
	return run_add(r, &it);
}

/* Normalise the unit starting at *pos, feed its code points, advance. */
static int norm_unit(struct run *r, const char *text, size_t len,
		     size_t *pos)
{
	const unsigned char *s = (const unsigned char *)text;
	const utf8proc_property_t *prop;
	size_t p = *pos, q, count = 1, n;
	utf8proc_ssize_t k, i;
	int32_t cp, cp2;
	int kind, rc;

	if (s[p] < 0x80 && (p + 1 >= len || s[p + 1] < 0x80)) {
		int c = s[p];

		*pos = p + 1;
		kind = KIND_OTHER;
		if (c >= 'A' && c <= 'Z') {
			c += 'a' - 'A';
			kind = KIND_UPPER;
		} else if (c >= 'a' && c <= 'z') {
			kind = KIND_LOWER;
		}
		return feed_cp(r, c, p, p + 1, kind);
	}
	n = utf8_decode(s + p, len - p, &cp);
	q = p + n;
	while (q < len && count < NORM_MAX_UNIT_CPS) {
		size_t n2 = utf8_decode(s + q, len - q, &cp2);

		if (utf8proc_get_property(cp2)->combining_class == 0)
			break;
		q += n2;
		count++;
	}
	*pos = q;
	prop = utf8proc_get_property(cp);
	kind = case_kind((utf8proc_category_t)prop->category);
	if (count == 1 && prop->decomp_seqindex == UINT16_MAX &&
	    prop->casefold_seqindex == UINT16_MAX && !prop->ignorable)
		return feed_cp(r, cp, p, q, kind);
	k = utf8proc_decompose_custom(s + p, (utf8proc_ssize_t)(q - p),
				      r->norm, NORM_BUF_CPS, NORM_OPTS, NULL,
				      NULL);
	if (k >= 0 && k <= NORM_BUF_CPS)
		k = utf8proc_normalize_utf32(r->norm, k, NORM_OPTS);
	else
		k = -1;
	if (k < 0)
		return feed_cp(r, ' ', p, q, KIND_OTHER); /* a separator */
	for (i = 0; i < k; i++) {
		rc = feed_cp(r, r->norm[i], p, q, kind);
		if (rc)
			return rc;
	}
	return CAIRN_OK;
}

/*
 * Tokenise text[0, len): validate, handle the raw escape, then normalise
 * unit by unit into the run accumulator and flush the last run.
 */
int tok_run(struct tok *t, const char *text, size_t len, unsigned flags,
	    tok_emit_fn emit, void *user, char *err, size_t errsize)
{
	struct run *r = NULL;
	size_t p = 0;
	long bad;
	int rc = CAIRN_OK;

	if (err && errsize)
		err[0] = '\0';
	if (!t || !emit || (!text && len)) {
		set_err(err, errsize, "tok_run: invalid argument");
		return CAIRN_INVALID;
	}
	if (len == 0)
		return CAIRN_OK;
	bad = util_utf8_invalid_at(text, len);
	if (bad >= 0) {
		if (err && errsize)
			snprintf(err, errsize, "invalid UTF-8 at byte %ld",
				 bad);
		return CAIRN_INVALID;
	}
	if ((flags & TOK_QUERY) && text[0] == TOK_RAW) {
		if (len == 1)
			return CAIRN_OK;
		return emit(user, text + 1, len - 1, 1, len, 0);
	}
	r = cairn_malloc(sizeof(*r));
	if (!r) {
		set_err(err, errsize, "out of memory tokenizing");
		return CAIRN_NOMEM;
	}
	memset(r, 0, offsetof(struct run, norm));
	r->t = t;
	r->emit = emit;
	r->user = user;
	r->err = err;
	r->errsize = errsize;
	sbuf_init(&r->src, 0);
	while (p < len) {
		rc = norm_unit(r, text, len, &p);
		if (rc)
			goto out;
	}
	rc = run_flush(r);
out:
	sbuf_release(&r->src);
	cairn_free(r->items);
	cairn_free(r->parts);
	cairn_free(r->hc);
	cairn_free(r);
	return rc;
}
