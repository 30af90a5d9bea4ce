/*
 * tokenize_tables.c -- the tokenizer's tables: the jieba dictionary, the
 * traditional-to-simplified character table derived from OpenCC, their
 * cache file, and tok_open / tok_close.
 *
 * Layer: above util; uses OpenCC (loaded with dlopen() when first needed)
 * and libstemmer, never SQLite. Below tokenize.c, which reads what this
 * file builds (tokenize_int.h is what they share).
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
 * stemmer's scratch and the OpenCC converter opened on first need.
 *
 * Must never: trust the dictionary file's format or the cache file's
 * contents, fail because of the cache, or write to a mapped cache file.
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
#include <pthread.h>

#include "internal.h"
#include "tokenize.h"
#include "tokenize_int.h"

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

/* ---------------------------------------------------------- dictionary */

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
int tok_t2s_items(const struct tok *t, struct item *items, size_t n)
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
int tok_open_cc(struct tok *t, char *err, size_t errsize)
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

char *tok_cc_convert(const struct tok *t, const char *s, size_t len)
{
	return occ.convert(t->cc, s, len);
}

void tok_cc_free(char *s)
{
	occ.convert_free(s);
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
	rc = tok_open_cc(t, err, errsize);
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
