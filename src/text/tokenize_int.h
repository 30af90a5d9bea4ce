/*
 * tokenize_int.h -- what the two halves of the tokenizer share: the
 * tables that tokenize_tables.c builds (or maps from the cache) and
 * tokenize.c reads, the hashing and UTF-8 decoding both do the same way,
 * and the dictionary lookup.
 *
 * Layer: private to tokenize.c and tokenize_tables.c (tokenize.h is the
 * tokenizer's interface); above util, never SQLite.
 *
 * The small functions here are static inline: the lookup and the decoder
 * run per character of every text indexed or searched, and a call into the
 * other file for each would cost what they do.
 *
 * Must never: be included outside src/tokenize*.c; the lookup must never
 * trust a mapped table (every probe is bounded and bounds-checked).
 */
#ifndef CAIRN_TOKENIZE_INT_H
#define CAIRN_TOKENIZE_INT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <opencc/opencc.h> /* types only: the library is loaded with dlopen() */
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

static inline uint64_t fnv_extend(uint64_t h, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= FNV64_PRIME;
	}
	return h;
}

static inline uint64_t hash_mix(uint64_t h)
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
static inline size_t utf8_decode(const unsigned char *s, size_t left,
				 int32_t *cp)
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

static inline int is_han(int32_t cp)
{
	return (cp >= 0x4E00 && cp <= 0x9FFF) ||
	       (cp >= 0x3400 && cp <= 0x4DBF) ||
	       (cp >= 0xF900 && cp <= 0xFAFF) ||
	       (cp >= 0x20000 && cp <= 0x3134F) || cp == 0x3005 ||
	       cp == 0x3007;
}

static inline void set_err(char *err, size_t errsize, const char *msg)
{
	if (err && errsize)
		snprintf(err, errsize, "%s", msg);
}

/*
 * arr (of elem-sized elements, *cap of them) resized to hold at least need,
 * updating *cap; NULL when out of memory, arr then being unchanged.
 */
static inline void *grow(void *arr, size_t *cap, size_t need, size_t elem)
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

/* The tag of a key: the top 24 bits of its mixed hash, then its length. */
static inline uint32_t key_tag(uint64_t h, size_t len)
{
	return (uint32_t)(h >> 40) << 8 | (uint32_t)len;
}

static inline const struct dict_entry *dict_find(const struct dict *d,
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
static inline uint32_t dict_freq(const struct dict *d, const char *key,
				 size_t len)
{
	const struct dict_entry *e;

	e = dict_find(d, key, len, fnv_extend(FNV64_BASIS, key, len));
	return e ? e->freq : 0;
}

/*
 * Convert items [0, n) to Simplified in place with t2s_map when that is
 * exact. Returns 1 when the run needs OpenCC instead.
 */
int tok_t2s_items(const struct tok *t, struct item *items, size_t n);
/* Open t's OpenCC converter: CAIRN_OK, or CAIRN_IO with err set. */
int tok_open_cc(struct tok *t, char *err, size_t errsize);
/* OpenCC's conversion of s (t's converter open); NULL when it fails, else
 * freed with tok_cc_free. */
char *tok_cc_convert(const struct tok *t, const char *s, size_t len);
void tok_cc_free(char *s);

#endif /* CAIRN_TOKENIZE_INT_H */
