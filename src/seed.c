/*
 * seed.c -- file-backed records from Markdown: ADRs, decision records,
 * facts files and notes (SPEC 4.1, issue 6; user guide: docs/SEED.md).
 *
 * Layer: above store (it runs its own prepared statements on db->sql and
 * calls cairn_record_write for new records); below the CLI. Uses md4c to
 * parse Markdown, libyaml for front matter, and runs `git log` once per
 * file for provenance.
 *
 * The run has three phases:
 *   1. read: walk the paths, parse each file into chunks (records) with
 *      provenance, a derived id and a content hash; collect every error;
 *   2. plan: compare with the file-backed records already stored: each
 *      chunk is new, changed or unchanged; a stored file-backed record under
 *      the seeded paths that no chunk produces is retired;
 *   3. write: only when phase 1 had no error and this is not a dry run, all
 *      in one transaction.
 *
 * Invariants:
 *   - ids depend only on the path and heading path (or an explicit id, or a
 *     fact's key / text), never on the order of seeding, so re-seeding
 *     keeps them;
 *   - an unknown status or kind is an error naming path:line; nothing is
 *     coerced;
 *   - a file holding a secret is refused as a whole (no redaction);
 *   - time and memory are linear in the total input (hash tables for ids,
 *     paths and keys; per-file work is linear in the file).
 *
 * Must never: write anything on a dry run or after an error; follow
 * symlinks or walk more than SEED_MAX_DEPTH directories deep; run a shell
 * (git is started with an argument vector).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <md4c.h>
#include <yaml.h>

#include "secret.h"
#include "seed.h"
#include "store.h"

extern char **environ;

#define SEED_CHUNK_CHARS 800            /* default chunk target, in characters */
#define SEED_MAX_FILE ((size_t)4 << 20) /* largest Markdown file read: 4 MiB */
#define SEED_MAX_DEPTH 32               /* directory levels walked */
#define SEED_MAX_BLOCK_TEXT 1024        /* bytes of a block's first paragraph kept */
#define SEED_MAX_HEADING 256            /* bytes of one heading kept in a path */
#define SEED_MAX_ID 64                  /* bytes in a front-matter id */
#define SEED_MAX_MESSAGES 1000          /* messages kept in a report */
#define SEED_TITLE_CHARS 120            /* bytes of a title taken from text */

static const char *const default_paths[] = {
	"docs/decisions", "docs/adr", "doc/adr", "docs/architecture/decisions",
	".cairn/records",
};

/* ========================================================= status mapping */

/*
 * The ADR status vocabulary (Nygard, MADR, adr-tools) and the SPEC
 * statuses a file may name directly. The mapping keeps standing knowledge
 * recallable: a rejected proposal is a standing decision not to do it, so
 * it is "accepted" with the outcome "rejected" shown in its body.
 */
static const struct status_word {
	const char *word;    /* lower case, as written in the file */
	const char *status;  /* SPEC status */
	const char *outcome; /* shown in the body, or NULL */
	int adr;             /* 1: an ADR word (may appear in a template "X or Y") */
} status_words[] = {
	{ "accepted", "accepted", NULL, 1 },
	{ "approved", "accepted", NULL, 1 },
	{ "proposed", "unverified", NULL, 1 },
	{ "rejected", "accepted", "rejected", 1 },
	{ "deprecated", "historical", NULL, 1 },
	{ "superseded", "superseded", NULL, 1 },
	{ "unverified", "unverified", NULL, 0 },
	{ "stale", "stale", NULL, 0 },
	{ "historical", "historical", NULL, 0 },
	{ "false", "false", NULL, 0 },
	{ "retired", "retired", NULL, 0 },
};

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

/* Case-insensitive compare of n bytes of a with NUL-terminated lower-case w. */
static int word_eq(const char *a, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i] == '\0' || ascii_lower((unsigned char)a[i]) != w[i])
			return 0;
	return w[n] == '\0';
}

static const struct status_word *find_word(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(status_words); i++)
		if (word_eq(s, n, status_words[i].word))
			return &status_words[i];
	return NULL;
}

/*
 * "Accepted or Rejected", "Accepted | Rejected", "proposed/accepted": the
 * template's placeholder left in place, every part an ADR word. The file
 * does not say which, so the record is "unverified" (still recallable).
 */
static int is_placeholder(const char *s, size_t n)
{
	size_t i = 0, parts = 0;

	while (i < n) {
		size_t st, e;
		const struct status_word *w;

		while (i < n && (is_space((unsigned char)s[i]) || s[i] == '|' ||
				 s[i] == '/' || s[i] == ','))
			i++;
		if (i >= n)
			break;
		st = i;
		while (i < n && !is_space((unsigned char)s[i]) && s[i] != '|' &&
		       s[i] != '/' && s[i] != ',')
			i++;
		e = i;
		if (parts > 0 && word_eq(s + st, e - st, "or"))
			continue;
		w = find_word(s + st, e - st);
		if (!w || !w->adr)
			return 0;
		parts++;
	}
	return parts >= 2;
}

int cairn_seed_map_status(const char *text, const char **status,
			  const char **outcome, const char **target,
			  size_t *target_len)
{
	const struct status_word *w;
	const char *s = text, *e;
	size_t n;

	*status = NULL;
	*outcome = NULL;
	if (target)
		*target = NULL;
	if (target_len)
		*target_len = 0;
	if (!text)
		return CAIRN_INVALID;
	while (is_space((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && (is_space((unsigned char)e[-1]) || e[-1] == '.'))
		e--;
	n = (size_t)(e - s);
	if (n == 0)
		return CAIRN_INVALID;
	/* "Superseded by X" / "Superseded by: X" */
	if (n > 11 && word_eq(s, 11, "superseded ") && !find_word(s, n)) {
		const char *p = s + 11;

		while (p < e && is_space((unsigned char)*p))
			p++;
		if (e - p >= 2 && ascii_lower((unsigned char)p[0]) == 'b' &&
		    ascii_lower((unsigned char)p[1]) == 'y' &&
		    (e - p == 2 || is_space((unsigned char)p[2]) || p[2] == ':')) {
			p += 2;
			while (p < e && (is_space((unsigned char)*p) || *p == ':'))
				p++;
			*status = "superseded";
			if (target && p < e) {
				*target = p;
				*target_len = (size_t)(e - p);
			}
			return CAIRN_OK;
		}
		return CAIRN_INVALID;
	}
	w = find_word(s, n);
	if (w) {
		*status = w->status;
		*outcome = w->outcome;
		return CAIRN_OK;
	}
	if (is_placeholder(s, n)) {
		*status = "unverified";
		return CAIRN_OK;
	}
	return CAIRN_INVALID;
}

/* ================================================================ helpers */

/* A string -> index map with open addressing (keys borrowed). */
struct smap {
	const char **k; /* keys; NULL = empty slot */
	size_t *v;      /* values */
	size_t cap;     /* slots, a power of two (0 before first put) */
	size_t n;       /* keys stored */
};

static size_t str_hash(const char *s)
{
	size_t h = 1469598103934665603ULL; /* FNV-1a 64 */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int smap_get(const struct smap *m, const char *k, size_t *v)
{
	size_t i;

	if (m->cap == 0)
		return 0;
	for (i = str_hash(k) & (m->cap - 1); m->k[i];
	     i = (i + 1) & (m->cap - 1)) {
		if (strcmp(m->k[i], k) == 0) {
			if (v)
				*v = m->v[i];
			return 1;
		}
	}
	return 0;
}

/* Insert k -> v (k must not be present). CAIRN_OK or CAIRN_NOMEM. */
static int smap_put(struct smap *m, const char *k, size_t v)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64, j;
		const char **nk = util_calloc(ncap, sizeof(*nk));
		size_t *nv = util_calloc(ncap, sizeof(*nv));

		if (!nk || !nv) {
			cairn_free(nk);
			cairn_free(nv);
			return CAIRN_NOMEM;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->k[j])
				continue;
			for (i = str_hash(m->k[j]) & (ncap - 1); nk[i];
			     i = (i + 1) & (ncap - 1))
				;
			nk[i] = m->k[j];
			nv[i] = m->v[j];
		}
		cairn_free(m->k);
		cairn_free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = ncap;
	}
	for (i = str_hash(k) & (m->cap - 1); m->k[i]; i = (i + 1) & (m->cap - 1))
		;
	m->k[i] = k;
	m->v[i] = v;
	m->n++;
	return CAIRN_OK;
}

static void smap_release(struct smap *m)
{
	cairn_free(m->k);
	cairn_free(m->v);
	memset(m, 0, sizeof(*m));
}

/* Grow *v (of *cap elements of size sz) to hold at least n+1 elements. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	void *nv;
	size_t ncap;

	if (n < *cap)
		return CAIRN_OK;
	ncap = *cap ? *cap * 2 : 16;
	nv = util_realloc(*v, ncap * sz);
	if (!nv)
		return CAIRN_NOMEM;
	*v = nv;
	*cap = ncap;
	return CAIRN_OK;
}

/* A record id from a seed string: "f" + 15 hex digits of its SHA-256. */
static char *derive_id(const char *seed, size_t len)
{
	char hex[65];
	char *id = cairn_malloc(17);

	if (!id)
		return NULL;
	util_sha256_hex(seed, len, hex);
	id[0] = 'f';
	memcpy(id + 1, hex, 15);
	id[16] = '\0';
	return id;
}

static char *dup_trim(const char *s, size_t n)
{
	while (n > 0 && is_space((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && is_space((unsigned char)s[n - 1]))
		n--;
	return util_strndup(s, n);
}

/* ================================================================ the run */

/* One record to be: a chunk of a file, or one fact of a facts file. */
struct chunk {
	char *id;            /* record id */
	char *title;         /* record title */
	char *body;          /* record body */
	char *heading;       /* heading path, " > " separated */
	char *key;           /* exact key, or NULL */
	const char *status;  /* SPEC status (static) */
	char *superseded_by; /* resolved id, or NULL */
	long line;           /* 1-based start line */
	size_t file;         /* index into run.files */
	int action;          /* enum cairn_seed_action */
	char hash[65];       /* content hash (see chunk_hash) */
};

/* One Markdown file. */
struct sfile {
	char *rel;            /* path relative to the workspace root */
	char *title;          /* file title */
	char *id;             /* id of its first record ("file id") */
	char *commit;         /* commit of its last change, or NULL */
	char *kind;           /* record kind */
	const char *status;   /* SPEC status of its records */
	const char *outcome;  /* "rejected" or NULL */
	char *target;         /* "superseded by" text (link text), or NULL */
	char *target_href;    /* its link target, or NULL */
	char *supersedes_raw; /* front matter supersedes, or NULL */
	char *supersedes;     /* resolved supersedes id, or NULL */
	char *key;            /* front matter key, or NULL */
	char *time;           /* front matter date or "Date:" line, or NULL */
	long status_line;     /* line of the status text (for messages) */
	long supersedes_line; /* line of front matter supersedes */
	size_t first;         /* index of its first chunk */
	size_t n;             /* chunks it produced */
	int failed;           /* 1: it had an error */
};

struct run {
	struct cairn_db *db;          /* the store */
	const cairn_seed_opts *opts;  /* options (never NULL) */
	char *root;                   /* real path of the workspace root */
	size_t chunk_chars;           /* chunk target */
	struct sfile *files;          /* files read, sorted by rel */
	size_t nfiles, capfiles;      /* count, capacity */
	struct chunk *chunks;         /* records to be */
	size_t nchunks, capchunks;    /* count, capacity */
	char **scopes;                /* seeded roots, relative ("" = all) */
	size_t nscopes, capscopes;    /* count, capacity */
	struct smap ids;              /* chunk id -> chunk index */
	struct smap paths;            /* rel path -> file index */
	struct smap keys;             /* key -> chunk index */
	struct sbuf msgs;             /* error and warning lines */
	size_t nerr, nwarn, nmsgs;    /* counts */
	char first_err[STORE_ERRMSG]; /* the first error */
	int first_err_rc;             /* its code */
	int git;                      /* 1: the root is in a git work tree */
};

static void run_msg(struct run *r, int error, int rc, const char *path,
		    long line, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Add "path:line: error|warning: text" to the run's messages. */
static void run_msg(struct run *r, int error, int rc, const char *path,
		    long line, const char *fmt, ...)
{
	char text[STORE_ERRMSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (error) {
		if (r->nerr == 0) {
			if (line > 0)
				snprintf(r->first_err, sizeof(r->first_err),
					 "%.300s:%ld: %.700s", path, line, text);
			else
				snprintf(r->first_err, sizeof(r->first_err),
					 "%.300s: %.700s", path, text);
			r->first_err_rc = rc;
		}
		r->nerr++;
	} else {
		r->nwarn++;
	}
	if (r->nmsgs++ >= SEED_MAX_MESSAGES)
		return;
	if (line > 0)
		sbuf_addf(&r->msgs, "%s:%ld: %s: %s\n", path, line,
			  error ? "error" : "warning", text);
	else
		sbuf_addf(&r->msgs, "%s: %s: %s\n", path,
			  error ? "error" : "warning", text);
}

/* ========================================================= Markdown scan */

/* One top-level block of a document (a direct child of the document). */
struct mblock {
	int type;   /* MD_BLOCKTYPE */
	int level;  /* heading level for MD_BLOCK_H */
	int fenced; /* 1: a fenced code block (its text starts a line later) */
	long line;  /* 1-based file line where it starts; 0 if unknown */
	char *text; /* plain text of its first paragraph (bounded) */
	char *href; /* its first link target, or NULL */
};

struct mscan {
	const char *doc;       /* the parsed bytes */
	size_t size;           /* their length */
	const size_t *ls;      /* line start offsets of the whole file */
	size_t nls;            /* lines in the file */
	size_t base;           /* offset of doc in the file */
	struct mblock *b;      /* top-level blocks */
	size_t n, cap;         /* count, capacity */
	long *items;           /* lines of top-level list items */
	size_t nitems, capitems; /* count, capacity */
	int depth;             /* blocks open (the document is depth 1) */
	int item_open;         /* 1: a top-level list item still needs its line */
	int text_done;         /* 1: the current block's first paragraph is complete */
	struct sbuf tb;        /* text of the current top-level block */
	int err;               /* CAIRN_NOMEM once allocation failed */
};

/* 1-based line of a file offset (binary search over line starts). */
static long line_of(const size_t *ls, size_t nls, size_t off)
{
	size_t lo = 0, hi = nls;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ls[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return (long)lo + 1;
}

static void ms_finish_text(struct mscan *m)
{
	struct mblock *b;

	if (m->n == 0 || m->b[m->n - 1].text)
		return;
	b = &m->b[m->n - 1];
	b->text = dup_trim(sbuf_str(&m->tb), m->tb.len);
	if (!b->text)
		m->err = CAIRN_NOMEM;
	sbuf_reset(&m->tb);
}

static int ms_enter_block(MD_BLOCKTYPE type, void *detail, void *user)
{
	struct mscan *m = user;

	if (m->depth == 1) {
		struct mblock *b;

		if (grow((void **)&m->b, &m->cap, m->n, sizeof(*m->b))) {
			m->err = CAIRN_NOMEM;
			return 1;
		}
		b = &m->b[m->n++];
		memset(b, 0, sizeof(*b));
		b->type = (int)type;
		if (type == MD_BLOCK_H)
			b->level = (int)((MD_BLOCK_H_DETAIL *)detail)->level;
		if (type == MD_BLOCK_CODE)
			b->fenced = ((MD_BLOCK_CODE_DETAIL *)detail)->fence_char != 0;
		m->text_done = 0;
		sbuf_reset(&m->tb);
	}
	if (type == MD_BLOCK_LI && m->depth == 2 && m->n > 0) {
		if (grow((void **)&m->items, &m->capitems, m->nitems,
			 sizeof(*m->items))) {
			m->err = CAIRN_NOMEM;
			return 1;
		}
		m->items[m->nitems++] = 0;
		m->item_open = 1;
	}
	m->depth++;
	return 0;
}

static int ms_leave_block(MD_BLOCKTYPE type, void *detail, void *user)
{
	struct mscan *m = user;

	(void)detail;
	m->depth--;
	if (m->depth >= 1 && m->n > 0 && !m->text_done &&
	    (type == MD_BLOCK_P || type == MD_BLOCK_H || type == MD_BLOCK_CODE ||
	     type == MD_BLOCK_HTML || type == MD_BLOCK_LI ||
	     type == MD_BLOCK_TD || type == MD_BLOCK_TH)) {
		m->text_done = 1;
		ms_finish_text(m);
	}
	if (m->depth == 1)
		ms_finish_text(m);
	if (type == MD_BLOCK_LI && m->depth == 2)
		m->item_open = 0;
	return 0;
}

static int ms_enter_span(MD_SPANTYPE type, void *detail, void *user)
{
	struct mscan *m = user;
	MD_SPAN_A_DETAIL *a = detail;
	struct mblock *b;

	if (type != MD_SPAN_A || m->n == 0 || m->text_done)
		return 0;
	b = &m->b[m->n - 1];
	if (!b->href && a->href.size > 0) {
		b->href = util_strndup(a->href.text, a->href.size);
		if (!b->href)
			m->err = CAIRN_NOMEM;
	}
	return 0;
}

static int ms_leave_span(MD_SPANTYPE type, void *detail, void *user)
{
	(void)type;
	(void)detail;
	(void)user;
	return 0;
}

static int ms_text(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size,
		   void *user)
{
	struct mscan *m = user;
	struct mblock *b;

	if (m->n == 0)
		return 0;
	b = &m->b[m->n - 1];
	/* the first text inside the document's bytes gives the line */
	if (text >= m->doc && text < m->doc + m->size) {
		size_t off = m->base + (size_t)(text - m->doc);
		long line = line_of(m->ls, m->nls, off);

		if (b->line == 0 && m->depth > 1) {
			b->line = line;
			if (b->fenced && b->line > 1)
				b->line--; /* the opening fence line */
		}
		if (m->item_open && m->nitems > 0) {
			m->items[m->nitems - 1] = line;
			m->item_open = 0;
		}
	}
	if (m->text_done || m->tb.len >= SEED_MAX_BLOCK_TEXT)
		return 0;
	switch (type) {
	case MD_TEXT_NULLCHAR:
		break;
	case MD_TEXT_BR:
	case MD_TEXT_SOFTBR:
		sbuf_addc(&m->tb, '\n');
		break;
	default:
		sbuf_add(&m->tb, text, size);
	}
	if (m->tb.err)
		m->err = CAIRN_NOMEM;
	return 0;
}

static void ms_release(struct mscan *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		cairn_free(m->b[i].text);
		cairn_free(m->b[i].href);
	}
	cairn_free(m->b);
	cairn_free(m->items);
	sbuf_release(&m->tb);
}

/* Parse doc (at file offset base) into its top-level blocks. */
static int ms_parse(struct mscan *m, const char *doc, size_t size,
		    size_t base, const size_t *ls, size_t nls)
{
	MD_PARSER p;

	memset(m, 0, sizeof(*m));
	memset(&p, 0, sizeof(p));
	m->doc = doc;
	m->size = size;
	m->base = base;
	m->ls = ls;
	m->nls = nls;
	sbuf_init(&m->tb, 0);
	p.flags = MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH;
	p.enter_block = ms_enter_block;
	p.leave_block = ms_leave_block;
	p.enter_span = ms_enter_span;
	p.leave_span = ms_leave_span;
	p.text = ms_text;
	if (md_parse(doc, (MD_SIZE)size, &p, m) != 0 && !m->err)
		m->err = CAIRN_INVALID;
	return m->err;
}

/* ========================================================= front matter */

struct front {
	char *kind;       /* kind:, or NULL */
	char *key;        /* key: */
	char *status;     /* status: */
	char *supersedes; /* supersedes: */
	char *date;       /* date: */
	char *id;         /* id: */
	char *title;      /* title: */
	char *format;     /* format: ("facts") */
	long line[8];     /* file line of each value, same order */
	long end;         /* line of the closing "---" (0: no front matter) */
	size_t body;      /* offset of the first byte after it */
};

static void front_release(struct front *f)
{
	cairn_free(f->kind);
	cairn_free(f->key);
	cairn_free(f->status);
	cairn_free(f->supersedes);
	cairn_free(f->date);
	cairn_free(f->id);
	cairn_free(f->title);
	cairn_free(f->format);
}

/*
 * Read YAML front matter ("---" on line 1 up to a "---" or "..." line).
 * Unknown keys are ignored; the known ones must be scalars.
 */
static int front_parse(struct run *r, const char *rel, const char *t,
		       size_t len, struct front *f)
{
	static const char *const names[8] = { "kind", "key", "status",
					      "supersedes", "date", "id",
					      "title", "format" };
	char **slots[8];
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *pair;
	size_t off = 0, start, fm_len;
	long line = 1;
	int rc = CAIRN_OK, have_doc = 0, i;

	memset(f, 0, sizeof(*f));
	slots[0] = &f->kind;
	slots[1] = &f->key;
	slots[2] = &f->status;
	slots[3] = &f->supersedes;
	slots[4] = &f->date;
	slots[5] = &f->id;
	slots[6] = &f->title;
	slots[7] = &f->format;
	if (len < 3 || memcmp(t, "---", 3) != 0)
		return CAIRN_OK;
	off = 3;
	while (off < len && (t[off] == ' ' || t[off] == '\t'))
		off++;
	if (off < len && t[off] != '\n')
		return CAIRN_OK; /* "---text": not front matter */
	off++;
	start = off;
	for (;;) {
		size_t e;

		if (off >= len) {
			run_msg(r, 1, CAIRN_INVALID, rel, 1,
				"front matter is not closed (no '---' line)");
			return CAIRN_INVALID;
		}
		line++;
		e = off;
		while (e < len && t[e] != '\n')
			e++;
		if ((e - off >= 3 && (memcmp(t + off, "---", 3) == 0 ||
				      memcmp(t + off, "...", 3) == 0))) {
			size_t k = off + 3;

			while (k < e && (t[k] == ' ' || t[k] == '\t'))
				k++;
			if (k == e) {
				fm_len = off - start;
				f->end = line;
				f->body = e < len ? e + 1 : e;
				break;
			}
		}
		off = e + 1;
	}
	if (!yaml_parser_initialize(&parser))
		return CAIRN_NOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)t + start,
				     fm_len);
	if (!yaml_parser_load(&parser, &doc)) {
		run_msg(r, 1, CAIRN_INVALID, rel,
			(long)parser.problem_mark.line + 2,
			"front matter is not valid YAML: %s",
			parser.problem ? parser.problem : "parse error");
		rc = CAIRN_INVALID;
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);
	if (!root)
		goto out; /* empty front matter */
	if (root->type != YAML_MAPPING_NODE) {
		run_msg(r, 1, CAIRN_INVALID, rel, 2,
			"front matter must be a mapping of 'name: value' lines");
		rc = CAIRN_INVALID;
		goto out;
	}
	for (pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(&doc, pair->value);

		if (!k || !v || k->type != YAML_SCALAR_NODE)
			continue;
		for (i = 0; i < 8; i++) {
			if (strcmp((const char *)k->data.scalar.value,
				   names[i]) != 0)
				continue;
			if (v->type != YAML_SCALAR_NODE) {
				run_msg(r, 1, CAIRN_INVALID, rel,
					(long)v->start_mark.line + 2,
					"front matter '%s' must be a single "
					"value",
					names[i]);
				rc = CAIRN_INVALID;
				goto out;
			}
			cairn_free(*slots[i]);
			*slots[i] = util_strndup(
				(const char *)v->data.scalar.value,
				v->data.scalar.length);
			if (!*slots[i]) {
				rc = CAIRN_NOMEM;
				goto out;
			}
			f->line[i] = (long)v->start_mark.line + 2;
		}
	}
out:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

/* =============================================================== chunking */

/* One file's text and its line tables. */
struct text {
	const char *t;   /* bytes (LF line ends) */
	size_t len;      /* length */
	size_t *ls;      /* ls[i]: offset of line i+1; ls[nls] = len */
	size_t nls;      /* lines */
	size_t *cp;      /* cp[i]: code points before line i+1 */
};

/* Code points in lines l1..l2 (1-based, inclusive). */
static size_t range_chars(const struct text *x, long l1, long l2)
{
	if (l2 < l1)
		return 0;
	return x->cp[l2] - x->cp[l1 - 1];
}

/* A section or a piece of one: the unit chunks are merged from. */
struct unit {
	long start, end;   /* lines, inclusive */
	size_t head;       /* index into the heading-path list */
	int heading_only;  /* 1: it holds headings and nothing else */
	size_t chars;      /* code points */
};

/*
 * An index of the top-level blocks with a known line (their lines only
 * grow in document order): how many blocks, and how many that are not
 * headings, start in a line range, in O(log n).
 */
struct bidx {
	long *line;    /* start line of the i-th block with a known line */
	size_t *body;  /* body[i]: non-heading blocks among the first i */
	size_t n;      /* blocks indexed */
};

static int bidx_build(struct bidx *x, const struct mscan *m)
{
	size_t i;

	x->n = 0;
	x->line = util_calloc(m->n + 1, sizeof(*x->line));
	x->body = util_calloc(m->n + 1, sizeof(*x->body));
	if (!x->line || !x->body)
		return CAIRN_NOMEM;
	for (i = 0; i < m->n; i++) {
		if (m->b[i].line <= 0)
			continue;
		x->line[x->n] = m->b[i].line;
		x->body[x->n + 1] =
			x->body[x->n] + (m->b[i].type != MD_BLOCK_H);
		x->n++;
	}
	return CAIRN_OK;
}

static void bidx_release(struct bidx *x)
{
	cairn_free(x->line);
	cairn_free(x->body);
}

/* Index of the first indexed block starting at or after line l. */
static size_t bidx_lower(const struct bidx *x, long l)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->line[mid] < l)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does [l1, l2] hold a top-level block that is not a heading? */
static int has_content(const struct bidx *x, long l1, long l2)
{
	size_t a = bidx_lower(x, l1), b = bidx_lower(x, l2 + 1);

	return x->body[b] > x->body[a];
}

/* Does [l1, l2] hold any top-level block? */
static int has_block(const struct bidx *x, long l1, long l2)
{
	return bidx_lower(x, l2 + 1) > bidx_lower(x, l1);
}

/* Heading text for a path: its first line, " > " made safe, bounded. */
static void add_heading(struct sbuf *sb, const char *h)
{
	size_t n = strcspn(h, "\n");

	if (n > SEED_MAX_HEADING)
		n = SEED_MAX_HEADING;
	while (n > 0 && ((unsigned char)h[n] & 0xC0) == 0x80)
		n--;
	sbuf_add(sb, h, n);
}

static char *heading_path(char *const stack[3])
{
	struct sbuf sb = SBUF_INIT;
	int i, first = 1;

	for (i = 0; i < 3; i++) {
		if (!stack[i])
			continue;
		if (!first)
			sbuf_adds(&sb, " > ");
		add_heading(&sb, stack[i]);
		first = 0;
	}
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	if (!sb.buf)
		return util_strdup("");
	return sbuf_detach(&sb, NULL);
}

/*
 * Split a document into units: sections at H1-H3 headings (the text
 * before the first heading is a section of its own), over-long sections cut
 * before top-level blocks so that each piece stays within the target.
 * paths receives one heading path per section (caller frees).
 */
static int make_units(const struct text *x, const struct mscan *m,
		      const struct bidx *bx, long first, size_t target,
		      struct unit **out,
		      size_t *nout, char ***paths, size_t *npaths)
{
	struct unit *u = NULL;
	char **p = NULL;
	char *stack[3] = { NULL, NULL, NULL };
	size_t nu = 0, capu = 0, np = 0, capp = 0, i, j;
	long start = first;
	int rc = CAIRN_OK;

	/* section boundaries: top-level H1-H3 with a known line */
	for (i = 0; i <= m->n; i++) {
		long end, s;
		int is_head = i < m->n && m->b[i].type == MD_BLOCK_H &&
			      m->b[i].level <= 3 && m->b[i].line > 0;
		char *hp;

		if (i < m->n && !is_head)
			continue;
		end = i < m->n ? m->b[i].line - 1 : (long)x->nls;
		/* close the section [start, end] */
		if (end >= start &&
		    (start != first || has_block(bx, start, end))) {
			size_t c = range_chars(x, start, end);
			long ps = start;

			hp = heading_path(stack);
			if (!hp || grow((void **)&p, &capp, np, sizeof(*p))) {
				cairn_free(hp);
				rc = CAIRN_NOMEM;
				goto out;
			}
			p[np++] = hp;
			if (c > target) {
				/* cut before top-level blocks, greedily */
				for (j = 0; j < m->n; j++) {
					long l = m->b[j].line, next = end + 1;
					size_t k;

					if (l <= ps || l > end)
						continue;
					for (k = j + 1; k < m->n; k++)
						if (m->b[k].line > l) {
							next = m->b[k].line;
							break;
						}
					if (next > end + 1)
						next = end + 1;
					if (range_chars(x, ps, next - 1) <= target)
						continue;
					if (!has_content(bx, ps, l - 1))
						continue;
					if (grow((void **)&u, &capu, nu,
						 sizeof(*u))) {
						rc = CAIRN_NOMEM;
						goto out;
					}
					u[nu].start = ps;
					u[nu].end = l - 1;
					u[nu].head = np - 1;
					u[nu].heading_only = 0;
					u[nu].chars = range_chars(x, ps, l - 1);
					nu++;
					ps = l;
				}
			}
			if (grow((void **)&u, &capu, nu, sizeof(*u))) {
				rc = CAIRN_NOMEM;
				goto out;
			}
			u[nu].start = ps;
			u[nu].end = end;
			u[nu].head = np - 1;
			u[nu].heading_only = !has_content(bx, ps, end);
			u[nu].chars = range_chars(x, ps, end);
			nu++;
		}
		if (i == m->n)
			break;
		/* the heading opens the next section */
		s = m->b[i].line;
		j = (size_t)m->b[i].level - 1;
		stack[j] = m->b[i].text;
		for (j = j + 1; j < 3; j++)
			stack[j] = NULL;
		start = s;
	}
out:
	*out = u;
	*nout = nu;
	*paths = p;
	*npaths = np;
	return rc;
}

/*
 * Merge units into chunks: neighbours while the sum stays within the
 * target; a heading-only unit always joins the unit after it (or, at the
 * end, the chunk before it), so no chunk is a bare heading.
 */
static size_t merge_units(struct unit *u, size_t n, size_t target)
{
	size_t i, out = 0;
	int open = 0;

	for (i = 0; i < n; i++) {
		struct unit *c = &u[out];

		if (!open) {
			u[out] = u[i];
			open = 1;
			continue;
		}
		/* a small unit (under a quarter of the target) may push
		 * its chunk up to 1.25 x target rather than stand alone */
		if (c->heading_only || c->chars + u[i].chars <= target ||
		    ((c->chars < target / 4 || u[i].chars < target / 4) &&
		     c->chars + u[i].chars <= target + target / 4)) {
			c->end = u[i].end;
			c->chars += u[i].chars;
			c->heading_only = c->heading_only && u[i].heading_only;
			continue;
		}
		out++;
		u[out] = u[i];
	}
	if (!open)
		return 0;
	out++;
	if (out >= 2 && u[out - 1].heading_only) {
		u[out - 2].end = u[out - 1].end;
		u[out - 2].chars += u[out - 1].chars;
		out--;
	}
	return out;
}

/* ================================================================ records */

/* The content hash: every field of the record that comes from the file. */
static void chunk_hash(struct chunk *c, const struct sfile *f)
{
	struct sbuf sb = SBUF_INIT;
	const char *parts[8];
	size_t i;

	parts[0] = f->kind;
	parts[1] = c->key;
	parts[2] = c->status;
	parts[3] = c->title;
	parts[4] = c->body;
	parts[5] = f->supersedes;
	parts[6] = c->superseded_by;
	parts[7] = f->time;
	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		sbuf_adds(&sb, parts[i] ? parts[i] : "");
		sbuf_addc(&sb, '\0');
	}
	util_sha256_hex(sbuf_str(&sb), sb.len, c->hash);
	sbuf_release(&sb);
}

static void chunk_release(struct chunk *c)
{
	cairn_free(c->id);
	cairn_free(c->title);
	cairn_free(c->body);
	cairn_free(c->heading);
	cairn_free(c->key);
	cairn_free(c->superseded_by);
}

/*
 * Give chunk ci its id: the file id for a file's first chunk, else derived
 * from path + seed text (+ an ordinal when the same seed repeats).
 */
static int assign_id(struct run *r, size_t ci, const char *seed_text,
		     int first)
{
	struct chunk *c = &r->chunks[ci];
	struct sfile *f = &r->files[c->file];
	struct sbuf sb = SBUF_INIT;
	size_t other, ord;
	int rc = CAIRN_OK;

	if (first) {
		c->id = util_strdup(f->id);
		if (!c->id)
			return CAIRN_NOMEM;
		if (smap_get(&r->ids, c->id, &other)) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, c->line,
				"id '%s' is also used by %s:%ld", c->id,
				r->files[r->chunks[other].file].rel,
				r->chunks[other].line);
			return CAIRN_INVALID;
		}
		return smap_put(&r->ids, c->id, ci);
	}
	for (ord = 1; ord < 100000; ord++) {
		sbuf_reset(&sb);
		sbuf_adds(&sb, f->id);
		sbuf_addc(&sb, '\0');
		sbuf_adds(&sb, seed_text);
		if (ord > 1)
			sbuf_addf(&sb, "%c#%zu", '\0', ord);
		if (sb.err) {
			rc = CAIRN_NOMEM;
			break;
		}
		cairn_free(c->id);
		c->id = derive_id(sb.buf, sb.len);
		if (!c->id) {
			rc = CAIRN_NOMEM;
			break;
		}
		if (!smap_get(&r->ids, c->id, NULL)) {
			rc = smap_put(&r->ids, c->id, ci);
			break;
		}
	}
	sbuf_release(&sb);
	return rc;
}

/* Append a chunk for file fi; its strings are taken over (freed on error). */
static int add_chunk(struct run *r, size_t fi, long line, char *heading,
		     char *title, char *body, char *key, const char *status,
		     size_t *out)
{
	struct chunk *c;

	if (grow((void **)&r->chunks, &r->capchunks, r->nchunks,
		 sizeof(*r->chunks))) {
		cairn_free(heading);
		cairn_free(title);
		cairn_free(body);
		cairn_free(key);
		return CAIRN_NOMEM;
	}
	c = &r->chunks[r->nchunks];
	memset(c, 0, sizeof(*c));
	c->file = fi;
	c->line = line;
	c->heading = heading;
	c->title = title;
	c->body = body;
	c->key = key;
	c->status = status;
	*out = r->nchunks++;
	if (!heading || !title || !body)
		return CAIRN_NOMEM;
	return CAIRN_OK;
}

/* Register a key for chunk ci (keys are unique across the seed). */
static int claim_key(struct run *r, size_t ci)
{
	struct chunk *c = &r->chunks[ci];
	size_t other;

	if (!c->key)
		return CAIRN_OK;
	if (strlen(c->key) > STORE_MAX_KEY || !*c->key) {
		run_msg(r, 1, CAIRN_INVALID, r->files[c->file].rel, c->line,
			"key is empty or longer than %d bytes", STORE_MAX_KEY);
		return CAIRN_INVALID;
	}
	if (smap_get(&r->keys, c->key, &other)) {
		run_msg(r, 1, CAIRN_INVALID, r->files[c->file].rel, c->line,
			"key '%s' is also used by %s:%ld", c->key,
			r->files[r->chunks[other].file].rel,
			r->chunks[other].line);
		return CAIRN_INVALID;
	}
	return smap_put(&r->keys, c->key, ci);
}

/* Text of lines [l1, l2], trimmed, with the outcome line when rejected. */
static char *chunk_body(const struct text *x, long l1, long l2,
			const char *outcome)
{
	struct sbuf sb = SBUF_INIT;
	const char *s = x->t + x->ls[l1 - 1];
	size_t n = x->ls[l2] - x->ls[l1 - 1];
	char *trim = dup_trim(s, n);

	if (!trim)
		return NULL;
	if (!outcome)
		return trim;
	sbuf_addf(&sb, "Outcome: %s.\n\n%s", outcome, trim);
	cairn_free(trim);
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

/* First non-blank line in [l1, l2] (l2 + 1 if all are blank). */
static long first_text_line(const struct text *x, long l1, long l2)
{
	long l;

	for (l = l1; l <= l2; l++) {
		size_t i;

		for (i = x->ls[l - 1]; i < x->ls[l]; i++)
			if (!is_space((unsigned char)x->t[i]))
				return l;
	}
	return l2 + 1;
}

/* The title for a chunk: the file's, or "File title: Heading". */
static char *chunk_title(const struct sfile *f, const char *heading)
{
	const char *last = heading ? strrchr(heading, '>') : NULL;
	struct sbuf sb = SBUF_INIT;

	if (last && last > heading && last[-1] == ' ' && last[1] == ' ')
		last += 2;
	else
		last = heading;
	if (!last || !*last || strcmp(last, f->title) == 0)
		return util_strdup(f->title);
	sbuf_addf(&sb, "%s: %s", f->title, last);
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

/* Chunk an ordinary document (ADR, decision record, note). */
static int chunk_document(struct run *r, size_t fi, const struct text *x,
			  const struct mscan *m, long first)
{
	struct sfile *f = &r->files[fi];
	struct unit *u = NULL;
	struct bidx bx;
	char **paths = NULL;
	size_t nu = 0, np = 0, i, ci;
	int rc;

	memset(&bx, 0, sizeof(bx));
	if (first > (long)x->nls ||
	    first_text_line(x, first, (long)x->nls) > (long)x->nls) {
		run_msg(r, 0, CAIRN_OK, f->rel, 0, "empty file: no record");
		return CAIRN_OK;
	}
	if (range_chars(x, first, (long)x->nls) <= r->chunk_chars) {
		char *h = NULL;

		for (i = 0; i < m->n; i++)
			if (m->b[i].type == MD_BLOCK_H && m->b[i].level == 1) {
				struct sbuf sb = SBUF_INIT;

				add_heading(&sb, m->b[i].text);
				h = sb.err ? NULL : sbuf_detach(&sb, NULL);
				if (!h)
					h = util_strdup("");
				break;
			}
		if (!h)
			h = util_strdup("");
		rc = add_chunk(r, fi, first_text_line(x, first, (long)x->nls),
			       h, util_strdup(f->title),
			       chunk_body(x, first, (long)x->nls, f->outcome),
			       f->key ? util_strdup(f->key) : NULL, f->status,
			       &ci);
		if (rc == CAIRN_OK && f->key && !r->chunks[ci].key)
			rc = CAIRN_NOMEM;
		if (rc == CAIRN_OK)
			rc = assign_id(r, ci, "", 1);
		if (rc == CAIRN_OK)
			rc = claim_key(r, ci);
		return rc;
	}
	rc = bidx_build(&bx, m);
	if (rc == CAIRN_OK)
		rc = make_units(x, m, &bx, first, r->chunk_chars, &u, &nu,
				&paths, &np);
	if (rc)
		goto out;
	nu = merge_units(u, nu, r->chunk_chars);
	for (i = 0; i < nu && rc == CAIRN_OK; i++) {
		const char *hp = paths[u[i].head];
		char *key = NULL;

		if (i == 0 && f->key) {
			key = util_strdup(f->key);
			if (!key) {
				rc = CAIRN_NOMEM;
				break;
			}
		}
		rc = add_chunk(r, fi, first_text_line(x, u[i].start, u[i].end),
			       util_strdup(hp), chunk_title(f, hp),
			       chunk_body(x, u[i].start, u[i].end, f->outcome),
			       key, f->status, &ci);
		if (rc == CAIRN_OK)
			rc = assign_id(r, ci, hp, i == 0);
		if (rc == CAIRN_OK)
			rc = claim_key(r, ci);
	}
out:
	for (i = 0; i < np; i++)
		cairn_free(paths[i]);
	cairn_free(paths);
	cairn_free(u);
	bidx_release(&bx);
	return rc;
}

/* ================================================================= facts */

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Parse a fact's leading tag "[status, key=K]" (both parts optional, in
 * any order). *rest is the text after it. CAIRN_INVALID names the problem
 * in msg.
 */
static int fact_tag(const char *s, const char **status, const char **outcome,
		    char **key, const char **rest, char *msg, size_t msize)
{
	const char *e, *p;

	*status = NULL;
	*outcome = NULL;
	*key = NULL;
	*rest = s;
	if (*s != '[')
		return CAIRN_OK;
	e = strchr(s, ']');
	if (!e || memchr(s, '\n', (size_t)(e - s)))
		return CAIRN_OK; /* not a tag: plain text */
	p = s + 1;
	while (p < e) {
		const char *q = p, *qe;

		while (q < e && *q != ',' && *q != ';')
			q++;
		qe = q;
		while (p < qe && is_space((unsigned char)*p))
			p++;
		while (qe > p && is_space((unsigned char)qe[-1]))
			qe--;
		if (qe - p > 4 && (word_eq(p, 4, "key=") ||
				   word_eq(p, 4, "key:"))) {
			if (*key) {
				snprintf(msg, msize, "two keys in one fact");
				return CAIRN_INVALID;
			}
			*key = dup_trim(p + 4, (size_t)(qe - p - 4));
			if (!*key)
				return CAIRN_NOMEM;
		} else if (qe > p) {
			char word[64];
			const char *tgt;
			size_t tl;

			if ((size_t)(qe - p) >= sizeof(word) || *status) {
				snprintf(msg, msize, "unknown fact tag '%.*s'",
					 (int)(qe - p), p);
				return CAIRN_INVALID;
			}
			memcpy(word, p, (size_t)(qe - p));
			word[qe - p] = '\0';
			if (cairn_seed_map_status(word, status, outcome, &tgt,
						  &tl) != CAIRN_OK) {
				snprintf(msg, msize,
					 "unknown status '%s' (expected "
					 "accepted, unverified, false, stale, "
					 "historical, superseded, retired, "
					 "proposed, rejected, deprecated; see "
					 "docs/SEED.md)",
					 word);
				return CAIRN_INVALID;
			}
		}
		p = q + 1;
	}
	p = e + 1;
	while (*p == ' ' || *p == '\t')
		p++;
	*rest = p;
	return CAIRN_OK;
}

/* Strip a list marker ("- ", "* ", "+ ", "1. ", "1) ") from a line. */
static const char *skip_marker(const char *s, const char *end)
{
	const char *p = s;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && (*p == '-' || *p == '*' || *p == '+')) {
		p++;
	} else {
		const char *d = p;

		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == d || p >= end || (*p != '.' && *p != ')'))
			return s;
		p++;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/*
 * A facts file: each top-level list item is one record, its own status
 * and optional key in a leading tag. Paragraphs and other blocks are
 * context for the reader and produce no record.
 */
static int chunk_facts(struct run *r, size_t fi, const struct text *x,
		       const struct mscan *m)
{
	struct sfile *f = &r->files[fi];
	long *bounds = NULL;
	char *stack[3] = { NULL, NULL, NULL };
	size_t nb = 0, i, j, hb = 0, nfacts = 0;
	struct sbuf sb = SBUF_INIT;
	int rc = CAIRN_OK;

	bounds = util_calloc(m->n + m->nitems + 1, sizeof(*bounds));
	if (!bounds)
		return CAIRN_NOMEM;
	for (i = 0; i < m->n; i++)
		if (m->b[i].line > 0)
			bounds[nb++] = m->b[i].line;
	for (i = 0; i < m->nitems; i++)
		if (m->items[i] > 0)
			bounds[nb++] = m->items[i];
	qsort(bounds, nb, sizeof(*bounds), cmp_long);
	for (i = 0; i < m->nitems && rc == CAIRN_OK; i++) {
		long l = m->items[i], end = (long)x->nls, ln;
		const char *status, *outcome, *rest;
		char *key = NULL, *text = NULL, *hp = NULL, *title = NULL;
		char msg[512];
		size_t lo = 0, hi = nb, ci;

		if (l <= 0)
			continue;
		/* the next boundary after l ends the item */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (bounds[mid] <= l)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nb)
			end = bounds[lo] - 1;
		/* headings above the item give its path */
		for (; hb < m->n && m->b[hb].line < l; hb++) {
			if (m->b[hb].type != MD_BLOCK_H || m->b[hb].level > 3 ||
			    m->b[hb].line == 0)
				continue;
			j = (size_t)m->b[hb].level - 1;
			stack[j] = m->b[hb].text;
			for (j = j + 1; j < 3; j++)
				stack[j] = NULL;
		}
		/* the item's text: marker stripped, lines dedented */
		sbuf_reset(&sb);
		for (ln = l; ln <= end; ln++) {
			const char *s = x->t + x->ls[ln - 1];
			const char *e = x->t + x->ls[ln];

			if (ln == l)
				s = skip_marker(s, e);
			else
				while (s < e && (*s == ' ' || *s == '\t'))
					s++;
			sbuf_add(&sb, s, (size_t)(e - s));
		}
		if (sb.err) {
			rc = CAIRN_NOMEM;
			break;
		}
		text = dup_trim(sbuf_str(&sb), sb.len);
		if (!text) {
			rc = CAIRN_NOMEM;
			break;
		}
		rc = fact_tag(text, &status, &outcome, &key, &rest, msg,
			      sizeof(msg));
		if (rc == CAIRN_INVALID) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, l, "%s", msg);
			f->failed = 1;
			rc = CAIRN_OK;
			cairn_free(text);
			continue;
		}
		if (rc == CAIRN_OK && !*rest) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, l,
				"fact has a tag but no text");
			f->failed = 1;
			cairn_free(key);
			cairn_free(text);
			continue;
		}
		if (rc) {
			cairn_free(text);
			break;
		}
		hp = heading_path(stack);
		title = hp && *hp ? chunk_title(f, hp) : util_strdup(f->title);
		{
			char *body = outcome ? NULL : util_strdup(rest);

			if (outcome) {
				struct sbuf ob = SBUF_INIT;

				sbuf_addf(&ob, "Outcome: %s.\n\n%s", outcome,
					  rest);
				body = ob.err ? NULL : sbuf_detach(&ob, NULL);
				sbuf_release(&ob);
			}
			rc = add_chunk(r, fi, l, hp, title, body, key,
				       status ? status : f->status, &ci);
		}
		if (rc == CAIRN_OK) {
			/* keyed: the key names it; else its section + text */
			sbuf_reset(&sb);
			if (r->chunks[ci].key)
				sbuf_addf(&sb, "key%c%s", '\0',
					  r->chunks[ci].key);
			else
				sbuf_addf(&sb, "fact%c%s%c%s", '\0',
					  r->chunks[ci].heading, '\0', rest);
			if (sb.err)
				rc = CAIRN_NOMEM;
		}
		cairn_free(text);
		if (rc == CAIRN_OK) {
			/* assign_id takes a C string: hash the bytes here */
			char *seedhex = cairn_malloc(65);

			if (!seedhex) {
				rc = CAIRN_NOMEM;
				break;
			}
			util_sha256_hex(sb.buf, sb.len, seedhex);
			rc = assign_id(r, ci, seedhex, 0);
			cairn_free(seedhex);
		}
		if (rc == CAIRN_OK)
			rc = claim_key(r, ci);
		if (rc == CAIRN_INVALID) {
			f->failed = 1;
			rc = CAIRN_OK;
		}
		nfacts++;
	}
	if (rc == CAIRN_OK && nfacts == 0)
		run_msg(r, 0, CAIRN_OK, f->rel, 0,
			"facts file without list items: no record");
	sbuf_release(&sb);
	cairn_free(bounds);
	return rc;
}

/* ================================================================== files */

static const char *static_kind(const char *k)
{
	static const char *const kinds[] = {
		"decision", "adr",   "fact",    "rule",  "procedure",
		"capability", "finding", "history", "event", "note",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(kinds[i], k) == 0)
			return kinds[i];
	return NULL;
}

/* The kind a folder gives (docs/SEED.md), by the file's relative path. */
static const char *folder_kind(const char *rel)
{
	static const struct {
		const char *prefix; /* folder, with a final slash */
		const char *kind;   /* its kind */
	} folders[] = {
		{ "docs/decisions/", "decision" },
		{ "docs/adr/", "adr" },
		{ "doc/adr/", "adr" },
		{ "docs/architecture/decisions/", "adr" },
		{ ".cairn/records/", "note" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(folders); i++) {
		const char *p = strstr(rel, folders[i].prefix);

		/* at the start, or below a folder ("sub/docs/adr/x.md") */
		if (p && (p == rel || p[-1] == '/'))
			return folders[i].kind;
	}
	/* a folder named adr, adrs or decisions anywhere */
	if (strstr(rel, "/adr/") || strncmp(rel, "adr/", 4) == 0 ||
	    strstr(rel, "/adrs/") || strncmp(rel, "adrs/", 5) == 0)
		return "adr";
	if (strstr(rel, "/decisions/") || strncmp(rel, "decisions/", 10) == 0)
		return "decision";
	return "note";
}

static int ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && word_eq(s + n - m, m, suffix);
}

/* Find the "Status" section's value, or a "Status:" line before it. */
static void find_status(const struct mscan *m, const char **text,
			const char **href, long *line)
{
	size_t i;

	*text = NULL;
	*href = NULL;
	*line = 0;
	int preamble = 1;

	for (i = 0; i < m->n; i++) {
		const struct mblock *b = &m->b[i];
		const char *t = b->text ? b->text : "";

		/* "## Status: Accepted" */
		if (b->type == MD_BLOCK_H && strlen(t) > 7 &&
		    word_eq(t, 7, "status:")) {
			*text = t + 7;
			*href = b->href;
			*line = b->line;
			return;
		}
		if (b->type == MD_BLOCK_H && strlen(t) == 6 &&
		    word_eq(t, 6, "status")) {
			size_t j;

			for (j = i + 1; j < m->n; j++) {
				if (m->b[j].type == MD_BLOCK_H)
					return; /* an empty Status section */
				if (m->b[j].text && *m->b[j].text) {
					*text = m->b[j].text;
					*href = m->b[j].href;
					*line = m->b[j].line;
					return;
				}
			}
			return;
		}
		if (b->type == MD_BLOCK_H && b->level >= 2)
			preamble = 0;
		/* "Status: Accepted" as a paragraph or list item line, in
		 * the part before the first section (MADR 2, Nygard variants) */
		if (preamble &&
		    (b->type == MD_BLOCK_P || b->type == MD_BLOCK_UL) &&
		    strlen(t) > 7 && word_eq(t, 7, "status:")) {
			*text = t + 7;
			*href = b->href;
			*line = b->line;
			return;
		}
	}
}

/* A "Date: YYYY-MM-DD" paragraph in the document, as the record time. */
static char *find_date(const struct mscan *m)
{
	size_t i;

	for (i = 0; i < m->n && i < 8; i++) {
		const char *t = m->b[i].text;

		if (m->b[i].type != MD_BLOCK_P || !t || strlen(t) < 15 ||
		    !word_eq(t, 5, "date:"))
			continue;
		t += 5;
		while (*t == ' ')
			t++;
		if (strlen(t) >= 10 && t[4] == '-' && t[7] == '-') {
			char d[11];

			memcpy(d, t, 10);
			d[10] = '\0';
			if (util_parse_iso(d) >= 0)
				return util_strdup(d);
		}
	}
	return NULL;
}

/* File title: front matter, first H1, else the file name. */
static char *file_title(const struct front *fm, const struct mscan *m,
			const char *rel)
{
	const char *base = strrchr(rel, '/');
	size_t i, n;

	if (fm->title && *fm->title)
		return dup_trim(fm->title, strlen(fm->title));
	for (i = 0; i < m->n; i++)
		if (m->b[i].type == MD_BLOCK_H && m->b[i].level == 1 &&
		    m->b[i].text && *m->b[i].text) {
			n = strcspn(m->b[i].text, "\n");
			return util_strndup(m->b[i].text,
					    n > SEED_TITLE_CHARS
						    ? SEED_TITLE_CHARS
						    : n);
		}
	base = base ? base + 1 : rel;
	n = strlen(base);
	if (ends_with_ci(base, ".markdown"))
		n -= 9;
	else if (ends_with_ci(base, ".md"))
		n -= 3;
	return util_strndup(base, n);
}

static int id_chars_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > SEED_MAX_ID)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		      *s == '.' || *s == ':'))
			return 0;
	return 1;
}

/* Build the line tables of a text. */
static int text_index(struct text *x)
{
	size_t i, n = 1, k = 0, c = 0;

	for (i = 0; i < x->len; i++)
		if (x->t[i] == '\n' && i + 1 < x->len)
			n++;
	x->nls = n;
	x->ls = util_calloc(n + 1, sizeof(*x->ls));
	x->cp = util_calloc(n + 1, sizeof(*x->cp));
	if (!x->ls || !x->cp)
		return CAIRN_NOMEM;
	x->ls[0] = 0;
	x->cp[0] = 0;
	for (i = 0; i < x->len; i++) {
		if (((unsigned char)x->t[i] & 0xC0) != 0x80)
			c++;
		if (x->t[i] == '\n' && i + 1 < x->len) {
			k++;
			x->ls[k] = i + 1;
			x->cp[k] = c;
		}
	}
	x->ls[n] = x->len;
	x->cp[n] = c;
	return CAIRN_OK;
}

/* Run argv (no shell) in the workspace root; its first output line into out. */
static int run_git(const char *const *argv, char *out, size_t size)
{
	posix_spawn_file_actions_t fa;
	int fds[2], status = 0, rc = -1;
	pid_t pid;
	size_t got = 0;

	out[0] = '\0';
	if (pipe(fds) != 0)
		return -1;
	if (posix_spawn_file_actions_init(&fa) != 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	if (posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv,
			 environ) == 0)
		rc = 0;
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	for (;;) {
		char buf[256];
		ssize_t n = read(fds[0], buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got + 1 < size) {
			size_t take = (size_t)n < size - 1 - got ? (size_t)n
								 : size - 1 - got;

			memcpy(out + got, buf, take);
			got += take;
		}
	}
	close(fds[0]);
	out[got] = '\0';
	out[strcspn(out, "\n")] = '\0';
	if (rc == 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rc = -1;
	}
	return rc;
}

/* The commit of the file's last change: `git log -1 --format=%H -- FILE`. */
static char *git_commit(struct run *r, const char *rel)
{
	const char *argv[] = { "git", "-C", r->root, "log", "-1",
			       "--format=%H", "--", rel, NULL };
	char out[128];
	size_t i, n;

	if (!r->git || run_git(argv, out, sizeof(out)) != 0)
		return NULL;
	n = strlen(out);
	if (n != 40 && n != 64)
		return NULL; /* untracked: no commit */
	for (i = 0; i < n; i++)
		if (!((out[i] >= '0' && out[i] <= '9') ||
		      (out[i] >= 'a' && out[i] <= 'f')))
			return NULL;
	return util_strdup(out);
}

/*
 * Read and parse file fi into chunks. Errors in the file are messages
 * (f->failed); the return is CAIRN_OK for them and a code only for
 * failures of the run itself (out of memory).
 */
static int read_file(struct run *r, size_t fi)
{
	struct sfile *f = &r->files[fi];
	struct front fm;
	struct mscan m;
	struct text x;
	struct sbuf abs = SBUF_INIT;
	struct secret_hit hit;
	char err[512], *raw = NULL, *t = NULL;
	const char *st_text = NULL, *st_href = NULL, *kind;
	size_t len = 0, i, k, nbefore = r->nerr;
	long st_line = 0, first;
	int rc = CAIRN_OK, is_facts;

	memset(&fm, 0, sizeof(fm));
	memset(&m, 0, sizeof(m));
	memset(&x, 0, sizeof(x));
	f->first = r->nchunks;
	sbuf_addf(&abs, "%s/%s", r->root, f->rel);
	if (abs.err) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	rc = util_read_file(abs.buf, SEED_MAX_FILE, &raw, &len, err,
			    sizeof(err));
	if (rc) {
		if (rc == CAIRN_NOMEM)
			goto out;
		run_msg(r, 1, rc, f->rel, 0, "%s",
			rc == CAIRN_TOOBIG
				? "file is over the 4 MiB limit of a seeded "
				  "file (SEED_MAX_FILE): split it"
				: err);
		rc = CAIRN_OK;
		goto out;
	}
	/* normalise: no BOM, LF line ends (line numbers do not move) */
	t = cairn_malloc(len + 1);
	if (!t) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	i = (len >= 3 && memcmp(raw, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
	for (k = 0; i < len; i++)
		if (!(raw[i] == '\r' && i + 1 < len && raw[i + 1] == '\n'))
			t[k++] = raw[i] == '\r' ? '\n' : raw[i];
	t[k] = '\0';
	x.t = t;
	x.len = k;
	rc = text_index(&x);
	if (rc)
		goto out;
	{
		long bad = util_utf8_invalid_at(t, k);

		const char *nul = memchr(t, '\0', k);

		if (bad >= 0) {
			run_msg(r, 1, CAIRN_INVALID, f->rel,
				line_of(x.ls, x.nls, (size_t)bad),
				"not valid UTF-8 (byte %ld)", bad);
			goto out;
		}
		/* found by tests/fuzz/fuzz_seed.c: texts are C strings */
		if (nul) {
			run_msg(r, 1, CAIRN_INVALID, f->rel,
				line_of(x.ls, x.nls, (size_t)(nul - t)),
				"holds a NUL byte (byte %ld): not a text file",
				(long)(nul - t));
			goto out;
		}
	}
	if (secret_scan(t, k, &hit, 1) > 0) {
		if (secret_unscanned(&hit)) {
			rc = CAIRN_NOMEM;
			goto out;
		}
		run_msg(r, 1, CAIRN_SECRET, f->rel, (long)hit.line,
			"refusing to store a secret: %s (remove it from the "
			"file; seed never stores secrets)",
			hit.kind);
		goto out;
	}
	if (front_parse(r, f->rel, t, k, &fm) != CAIRN_OK)
		goto out;
	first = fm.end + 1;
	rc = ms_parse(&m, t + fm.body, k - fm.body, fm.body, x.ls, x.nls);
	if (rc == CAIRN_INVALID) {
		run_msg(r, 1, rc, f->rel, 0, "cannot parse the Markdown");
		rc = CAIRN_OK;
		goto out;
	}
	if (rc)
		goto out;
	/* kind: front matter, else the folder */
	if (fm.kind) {
		kind = static_kind(fm.kind);
		if (!kind) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, fm.line[0],
				"unknown kind '%s' (expected one of: "
				"decision, adr, fact, rule, procedure, "
				"capability, finding, history, event, note)",
				fm.kind);
			goto out;
		}
	} else {
		kind = folder_kind(f->rel);
	}
	is_facts = (fm.format && strcmp(fm.format, "facts") == 0) ||
		   ends_with_ci(f->rel, ".facts.md");
	if (fm.format && strcmp(fm.format, "facts") != 0) {
		run_msg(r, 1, CAIRN_INVALID, f->rel, fm.line[7],
			"unknown format '%s' (expected facts)", fm.format);
		goto out;
	}
	if (is_facts && !fm.kind)
		kind = "fact";
	f->kind = util_strdup(kind);
	f->title = file_title(&fm, &m, f->rel);
	if (!f->kind || !f->title) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	/* status: front matter, else the Status section (not in facts files) */
	if (fm.status) {
		st_text = fm.status;
		st_line = fm.line[2];
	} else if (!is_facts) {
		find_status(&m, &st_text, &st_href, &st_line);
	}
	f->status = "accepted";
	if (st_text) {
		const char *tgt = NULL;
		size_t tl = 0;
		size_t n = strcspn(st_text, "\n");
		char *first_line = util_strndup(st_text, n);

		if (!first_line) {
			rc = CAIRN_NOMEM;
			goto out;
		}
		f->status_line = st_line;
		if (cairn_seed_map_status(first_line, &f->status, &f->outcome,
					  &tgt, &tl) != CAIRN_OK) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, st_line,
				"unknown status '%s' (expected Accepted, "
				"Proposed, Rejected, Deprecated, Superseded by "
				"..., or a SPEC status; see docs/SEED.md)",
				first_line);
			cairn_free(first_line);
			goto out;
		}
		if (tgt) {
			f->target = util_strndup(tgt, tl);
			if (st_href)
				f->target_href = util_strdup(st_href);
			if (!f->target || (st_href && !f->target_href)) {
				cairn_free(first_line);
				rc = CAIRN_NOMEM;
				goto out;
			}
		}
		cairn_free(first_line);
	}
	/* id, key, date, supersedes from the front matter */
	if (fm.id) {
		if (!id_chars_ok(fm.id)) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, fm.line[5],
				"invalid id '%s' (1-%d of A-Z a-z 0-9 . _ : -)",
				fm.id, SEED_MAX_ID);
			goto out;
		}
		f->id = util_strdup(fm.id);
	} else {
		struct sbuf sb = SBUF_INIT;

		sbuf_addf(&sb, "file%c%s", '\0', f->rel);
		f->id = sb.err ? NULL : derive_id(sb.buf, sb.len);
		sbuf_release(&sb);
	}
	if (!f->id) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	if (fm.key) {
		f->key = dup_trim(fm.key, strlen(fm.key));
		if (!f->key) {
			rc = CAIRN_NOMEM;
			goto out;
		}
	}
	if (fm.date) {
		if (util_parse_iso(fm.date) < 0) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, fm.line[4],
				"date '%s' is not an ISO-8601 date", fm.date);
			goto out;
		}
		f->time = util_strdup(fm.date);
	} else {
		f->time = find_date(&m);
	}
	if (fm.supersedes) {
		f->supersedes_raw = util_strdup(fm.supersedes);
		f->supersedes_line = fm.line[3];
		if (!f->supersedes_raw) {
			rc = CAIRN_NOMEM;
			goto out;
		}
	}
	if (is_facts)
		rc = chunk_facts(r, fi, &x, &m);
	else
		rc = chunk_document(r, fi, &x, &m, first);
	if (rc == CAIRN_INVALID)
		rc = CAIRN_OK; /* reported */
	if (rc)
		goto out;
	f->commit = git_commit(r, f->rel);
out:
	if (r->nerr > nbefore)
		f->failed = 1;
	f->n = r->nchunks - f->first;
	front_release(&fm);
	ms_release(&m);
	cairn_free(x.ls);
	cairn_free(x.cp);
	cairn_free(t);
	cairn_free(raw);
	sbuf_release(&abs);
	return rc;
}

/* ================================================================== paths */

static int skip_name(const char *name)
{
	static const char *const skip[] = { "readme.md", "readme.markdown",
					    "index.md", "index.markdown" };
	size_t i, n = strlen(name);

	for (i = 0; i < ARRAY_SIZE(skip); i++)
		if (word_eq(name, n, skip[i]))
			return 1;
	/* a template is not a record */
	for (i = 0; i + 8 <= n; i++)
		if (word_eq(name + i, 8, "template"))
			return 1;
	return 0;
}

static int is_markdown(const char *name)
{
	return ends_with_ci(name, ".md") || ends_with_ci(name, ".markdown");
}

static int add_file(struct run *r, const char *rel)
{
	struct sfile *f;

	if (smap_get(&r->paths, rel, NULL))
		return CAIRN_OK;
	if (grow((void **)&r->files, &r->capfiles, r->nfiles,
		 sizeof(*r->files)))
		return CAIRN_NOMEM;
	f = &r->files[r->nfiles];
	memset(f, 0, sizeof(*f));
	f->rel = util_strdup(rel);
	if (!f->rel)
		return CAIRN_NOMEM;
	r->nfiles++;
	return smap_put(&r->paths, f->rel, r->nfiles - 1);
}

/* Walk directory rel (relative to root; "" = the root) without recursion. */
static int walk(struct run *r, const char *rel)
{
	struct dirent_todo {
		char *rel; /* directory, relative */
		int depth; /* levels below the seeded path */
	} *todo = NULL;
	size_t ntodo = 0, captodo = 0;
	struct sbuf p = SBUF_INIT, child = SBUF_INIT;
	int rc = CAIRN_OK;

	if (grow((void **)&todo, &captodo, 0, sizeof(*todo)))
		return CAIRN_NOMEM;
	todo[0].rel = util_strdup(rel);
	todo[0].depth = 0;
	if (!todo[0].rel) {
		cairn_free(todo);
		return CAIRN_NOMEM;
	}
	ntodo = 1;
	while (ntodo > 0 && rc == CAIRN_OK) {
		struct dirent_todo cur = todo[--ntodo];
		struct dirent *de;
		DIR *d;

		sbuf_reset(&p);
		sbuf_addf(&p, "%s%s%s", r->root, *cur.rel ? "/" : "", cur.rel);
		d = p.err ? NULL : opendir(p.buf);
		if (!d) {
			cairn_free(cur.rel);
			continue;
		}
		while ((de = readdir(d)) != NULL && rc == CAIRN_OK) {
			struct stat st;

			if (de->d_name[0] == '.')
				continue; /* hidden, ".", ".." */
			sbuf_reset(&child);
			sbuf_addf(&child, "%s%s%s", cur.rel, *cur.rel ? "/" : "",
				  de->d_name);
			sbuf_reset(&p);
			sbuf_addf(&p, "%s/%s", r->root, sbuf_str(&child));
			if (child.err || p.err) {
				rc = CAIRN_NOMEM;
				break;
			}
			if (lstat(p.buf, &st) != 0)
				continue;
			if (S_ISDIR(st.st_mode)) {
				if (cur.depth + 1 >= SEED_MAX_DEPTH)
					continue;
				if (grow((void **)&todo, &captodo, ntodo,
					 sizeof(*todo))) {
					rc = CAIRN_NOMEM;
					break;
				}
				todo[ntodo].rel = util_strdup(child.buf);
				todo[ntodo].depth = cur.depth + 1;
				if (!todo[ntodo].rel) {
					rc = CAIRN_NOMEM;
					break;
				}
				ntodo++;
			} else if (S_ISREG(st.st_mode) &&
				   is_markdown(de->d_name) &&
				   !skip_name(de->d_name)) {
				rc = add_file(r, child.buf);
			}
		}
		closedir(d);
		cairn_free(cur.rel);
	}
	while (ntodo > 0)
		cairn_free(todo[--ntodo].rel);
	cairn_free(todo);
	sbuf_release(&p);
	sbuf_release(&child);
	return rc;
}

/* Lexically normalise a relative path: drop ".", empty parts, a final "/".
 * NULL for ".." or out of memory. */
static int norm_rel(const char *s, char **out)
{
	struct sbuf sb = SBUF_INIT;

	*out = NULL;
	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 2 && s[0] == '.' && s[1] == '.') {
			sbuf_release(&sb);
			return CAIRN_INVALID;
		}
		if (n > 0 && !(n == 1 && s[0] == '.')) {
			if (sb.len)
				sbuf_addc(&sb, '/');
			sbuf_add(&sb, s, n);
		}
		s += n;
		if (*s == '/')
			s++;
	}
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	*out = sb.buf ? sbuf_detach(&sb, NULL) : util_strdup("");
	return *out ? CAIRN_OK : CAIRN_NOMEM;
}

/*
 * Resolve one PATH (absolute, or relative to the root) to a path relative
 * to the root. *exists tells whether it is there; *isdir whether a folder.
 */
static int resolve_path(struct run *r, const char *in, char **rel,
			int *exists, int *isdir)
{
	char real[PATH_MAX];
	struct sbuf sb = SBUF_INIT;
	struct stat st;
	size_t rl = strlen(r->root);
	const char *p;
	int rc = CAIRN_OK;

	*rel = NULL;
	*exists = 0;
	*isdir = 0;
	if (in[0] == '/')
		sbuf_adds(&sb, in);
	else
		sbuf_addf(&sb, "%s/%s", r->root, in);
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	if (realpath(sb.buf, real) && stat(real, &st) == 0) {
		*exists = 1;
		*isdir = S_ISDIR(st.st_mode) != 0;
		p = real;
	} else {
		p = sb.buf; /* gone: compare lexically */
	}
	if (strcmp(p, r->root) == 0) {
		*rel = util_strdup("");
		rc = *rel ? CAIRN_OK : CAIRN_NOMEM;
	} else if (strncmp(p, r->root, rl) == 0 &&
		   (p[rl] == '/' || strcmp(r->root, "/") == 0)) {
		rc = norm_rel(p + rl + (p[rl] == '/'), rel);
	} else {
		sbuf_release(&sb);
		return store_error(r->db, CAIRN_INVALID,
				   "'%s' is outside the workspace '%s'", in,
				   r->root);
	}
	sbuf_release(&sb);
	if (rc == CAIRN_NOMEM) /* not "leaves the workspace" (unit_faults) */
		return store_error(r->db, CAIRN_NOMEM, "out of memory");
	if (rc)
		return store_error(r->db, CAIRN_INVALID,
				   "'%s' leaves the workspace", in);
	return CAIRN_OK;
}

/* ============================================================ supersedes */

/* "ADR-025", "adr025", "0025": the letters (lower case) and the number. */
static int split_ident(const char *s, size_t n, char *prefix, size_t psize,
		       long *num)
{
	size_t i = 0, k = 0;
	long v = 0;
	int digits = 0;

	while (i < n && ((s[i] >= 'A' && s[i] <= 'Z') ||
			 (s[i] >= 'a' && s[i] <= 'z'))) {
		if (k + 1 < psize)
			prefix[k++] = (char)ascii_lower((unsigned char)s[i]);
		i++;
	}
	prefix[k] = '\0';
	if (i < n && (s[i] == '-' || s[i] == '_' || s[i] == ' '))
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9' && digits < 9) {
		v = v * 10 + (s[i] - '0');
		digits++;
		i++;
	}
	*num = v;
	return digits > 0;
}

/* Dir part of rel (with final slash) length. */
static size_t dir_len(const char *rel)
{
	const char *s = strrchr(rel, '/');

	return s ? (size_t)(s - rel) + 1 : 0;
}

/*
 * Resolve a reference from file fi: a link target (relative path to a
 * seeded file), an identifier like "ADR025" matched against file names
 * (same folder first; two matches are ambiguous), or an existing record
 * id. *out: the id (caller frees) or NULL with a warning.
 */
static int resolve_ref(struct run *r, size_t fi, const char *href,
		       const char *text, long line, char **out)
{
	const struct sfile *f = &r->files[fi];
	struct sbuf sb = SBUF_INIT;
	size_t idx, i, hits = 0, hit = 0, pass;
	char prefix[16];
	long num;
	int rc = CAIRN_OK;

	*out = NULL;
	if (href && !strstr(href, "://") && href[0] != '#') {
		size_t hl = strcspn(href, "#?");
		char *n;

		sbuf_add(&sb, f->rel, dir_len(f->rel));
		sbuf_add(&sb, href, hl);
		if (sb.err) {
			rc = CAIRN_NOMEM;
			goto out;
		}
		/* resolve "../" lexically against the file's folder */
		{
			char *parts = util_strdup(sb.buf);
			struct sbuf res = SBUF_INIT;
			char *save = NULL, *tok;
			size_t *stk = NULL, nst = 0, capst = 0;

			if (!parts) {
				rc = CAIRN_NOMEM;
				goto out;
			}
			for (tok = strtok_r(parts, "/", &save); tok;
			     tok = strtok_r(NULL, "/", &save)) {
				if (strcmp(tok, ".") == 0)
					continue;
				if (strcmp(tok, "..") == 0) {
					if (nst > 0)
						res.len = stk[--nst];
					if (res.buf)
						res.buf[res.len] = '\0';
					continue;
				}
				if (grow((void **)&stk, &capst, nst,
					 sizeof(*stk))) {
					res.err = CAIRN_NOMEM;
					break;
				}
				stk[nst++] = res.len;
				if (res.len)
					sbuf_addc(&res, '/');
				sbuf_adds(&res, tok);
			}
			cairn_free(stk);
			cairn_free(parts);
			if (res.err) {
				sbuf_release(&res);
				rc = CAIRN_NOMEM;
				goto out;
			}
			n = sbuf_detach(&res, NULL);
		}
		if (n && smap_get(&r->paths, n, &idx) && r->files[idx].id) {
			*out = util_strdup(r->files[idx].id);
			cairn_free(n);
			rc = *out ? CAIRN_OK : CAIRN_NOMEM;
			goto out;
		}
		/* not seeded now (deleted?): the id its path had, if stored */
		if (n) {
			struct sbuf fid = SBUF_INIT;
			cairn_record *rec = NULL;
			char *id;

			sbuf_addf(&fid, "file%c%s", '\0', n);
			id = fid.err ? NULL : derive_id(fid.buf, fid.len);
			sbuf_release(&fid);
			if (id && cairn_record_get(r->db, id, &rec) == CAIRN_OK) {
				cairn_record_free(rec);
				*out = id;
				cairn_free(n);
				goto out;
			}
			cairn_free(id);
		}
		cairn_free(n);
	}
	/* an identifier: the first word that has digits */
	if (text) {
		const char *p = text;

		while (*p) {
			size_t wl = strcspn(p, " \t:,;()[]");

			if (wl > 0 &&
			    split_ident(p, wl, prefix, sizeof(prefix), &num)) {
				for (pass = 0; pass < 2 && hits == 0; pass++) {
					for (i = 0; i < r->nfiles; i++) {
						const struct sfile *g = &r->files[i];
						const char *base = g->rel + dir_len(g->rel);
						char gp[16];
						long gn;

						if (i == fi || !g->id)
							continue;
						if (pass == 0 &&
						    (dir_len(g->rel) != dir_len(f->rel) ||
						     strncmp(g->rel, f->rel, dir_len(f->rel))))
							continue;
						if (!split_ident(base, strlen(base), gp,
								 sizeof(gp), &gn) ||
						    gn != num)
							continue;
						if (*prefix && *gp && strcmp(prefix, gp) != 0)
							continue;
						hits++;
						hit = i;
					}
				}
				break;
			}
			p += wl;
			while (*p && strchr(" \t:,;()[]", *p))
				p++;
		}
		if (hits == 1) {
			*out = util_strdup(r->files[hit].id);
			rc = *out ? CAIRN_OK : CAIRN_NOMEM;
			goto out;
		}
		if (hits > 1) {
			run_msg(r, 0, CAIRN_OK, f->rel, line,
				"'%s' matches %zu files: not linked", text,
				hits);
			goto out;
		}
		/* an existing record id */
		if (id_chars_ok(text)) {
			cairn_record *rec = NULL;

			if (cairn_record_get(r->db, text, &rec) == CAIRN_OK) {
				*out = util_strdup(rec->id);
				cairn_record_free(rec);
				rc = *out ? CAIRN_OK : CAIRN_NOMEM;
				goto out;
			}
		}
	}
	run_msg(r, 0, CAIRN_OK, f->rel, line, "cannot resolve '%s': not linked",
		text ? text : href);
out:
	sbuf_release(&sb);
	return rc;
}

/* Resolve every file's links, then set them on its chunks and hash them. */
static int resolve_links(struct run *r)
{
	size_t fi, ci;
	int rc;

	for (fi = 0; fi < r->nfiles; fi++) {
		struct sfile *f = &r->files[fi];
		char *by = NULL;

		if (f->failed)
			continue;
		if (f->target || f->target_href) {
			rc = resolve_ref(r, fi, f->target_href, f->target,
					 f->status_line, &by);
			if (rc)
				return rc;
		}
		if (f->supersedes_raw) {
			rc = resolve_ref(r, fi, f->supersedes_raw,
					 f->supersedes_raw, f->supersedes_line,
					 &f->supersedes);
			if (rc) {
				cairn_free(by);
				return rc;
			}
		}
		for (ci = f->first; ci < f->first + f->n; ci++) {
			struct chunk *c = &r->chunks[ci];

			if (by && strcmp(c->status, "superseded") == 0) {
				c->superseded_by = util_strdup(by);
				if (!c->superseded_by) {
					cairn_free(by);
					return CAIRN_NOMEM;
				}
			}
			chunk_hash(c, f);
		}
		cairn_free(by);
	}
	return CAIRN_OK;
}

/* ================================================================= store */

/* A file-backed record already stored. */
struct old {
	char *id, *path, *hash, *status, *commit, *heading, *title, *kind;
	long line;     /* src_line */
	int seen;      /* 1: a chunk of this run has its id */
};

static void old_release(struct old *o, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cairn_free(o[i].id);
		cairn_free(o[i].path);
		cairn_free(o[i].hash);
		cairn_free(o[i].status);
		cairn_free(o[i].commit);
		cairn_free(o[i].heading);
		cairn_free(o[i].title);
		cairn_free(o[i].kind);
	}
	cairn_free(o);
}

static char *coldup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? util_strdup((const char *)t) : NULL;
}

static int load_old(struct run *r, struct old **out, size_t *nout)
{
	struct old *o = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int src, rc = CAIRN_OK;

	src = sqlite3_prepare_v2(r->db->sql,
				 "SELECT id, src_path, hash, status, src_commit, "
				 "src_heading, title, kind, src_line FROM "
				 "main.records WHERE origin = 'file'",
				 -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(r->db, src, "reading file-backed records");
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&o, &cap, n, sizeof(*o))) {
			rc = CAIRN_NOMEM;
			break;
		}
		memset(&o[n], 0, sizeof(o[n]));
		o[n].id = coldup(st, 0);
		o[n].path = coldup(st, 1);
		o[n].hash = coldup(st, 2);
		o[n].status = coldup(st, 3);
		o[n].commit = coldup(st, 4);
		o[n].heading = coldup(st, 5);
		o[n].title = coldup(st, 6);
		o[n].kind = coldup(st, 7);
		o[n].line = (long)sqlite3_column_int64(st, 8);
		n++;
		if (!o[n - 1].id || !o[n - 1].status) {
			rc = CAIRN_NOMEM;
			break;
		}
	}
	if (rc == CAIRN_OK && src != SQLITE_DONE)
		rc = store_sql_error(r->db, src, "reading file-backed records");
	sqlite3_finalize(st);
	*out = o;
	*nout = n;
	return rc;
}

/* Is a stored source path under one of the seeded paths? */
static int in_scope(const struct run *r, const char *path)
{
	size_t i;

	if (!path)
		return 0;
	for (i = 0; i < r->nscopes; i++) {
		const char *s = r->scopes[i];
		size_t n = strlen(s);

		if (n == 0 || strcmp(path, s) == 0 ||
		    (strncmp(path, s, n) == 0 && path[n] == '/'))
			return 1;
	}
	return 0;
}

static int step_done(struct run *r, sqlite3_stmt *st, const char *what)
{
	int src = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (src == SQLITE_CONSTRAINT_UNIQUE)
		return store_error(r->db, CAIRN_INVALID,
				   "%s: a key is already used by another record",
				   what);
	if (src != SQLITE_DONE)
		return store_sql_error(r->db, src, what);
	return CAIRN_OK;
}

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Write the plan: retire, update, refresh provenance, insert. */
static int write_plan(struct run *r, struct old *o, size_t no)
{
	sqlite3_stmt *retire = NULL, *keep = NULL, *upd = NULL, *prov = NULL;
	char now[32], keep_sql[400];
	size_t i;
	int src, rc = CAIRN_OK;

	util_now_iso(now, sizeof(now));
	src = sqlite3_prepare_v2(r->db->sql,
				 "UPDATE main.records SET status = 'retired', "
				 "key = NULL, updated = ?2 WHERE id = ?1",
				 -1, &retire, NULL);
	snprintf(keep_sql, sizeof(keep_sql), STORE_KEEP_REVISION_SQL, "main",
		 "main");
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(r->db->sql, keep_sql, -1, &keep, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(
			r->db->sql,
			"UPDATE main.records SET kind = ?2, key = ?3, "
			"title = ?4, body = ?5, status = ?6, confidence = 1.0, "
			"origin = 'file', src_path = ?7, src_heading = ?8, "
			"src_line = ?9, src_commit = ?10, time = ?11, "
			"supersedes = ?12, superseded_by = ?13, hash = ?14, "
			"updated = ?15, revision = revision + 1 WHERE id = ?1",
			-1, &upd, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(
			r->db->sql,
			"UPDATE main.records SET src_path = ?2, src_heading = ?3, "
			"src_line = ?4, src_commit = ?5 WHERE id = ?1",
			-1, &prov, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(r->db, src, "preparing the seed");
		goto out;
	}
	for (i = 0; i < no && rc == CAIRN_OK; i++) {
		if (o[i].seen || !in_scope(r, o[i].path) ||
		    strcmp(o[i].status, "retired") == 0)
			continue;
		sqlite3_bind_text(retire, 1, o[i].id, -1, SQLITE_STATIC);
		sqlite3_bind_text(retire, 2, now, -1, SQLITE_STATIC);
		rc = step_done(r, retire, "retiring a record");
	}
	for (i = 0; i < r->nchunks && rc == CAIRN_OK; i++) {
		struct chunk *c = &r->chunks[i];
		struct sfile *f = &r->files[c->file];

		if (c->action == CAIRN_SEED_CHANGED) {
			sqlite3_bind_text(keep, 1, c->id, -1, SQLITE_STATIC);
			rc = step_done(r, keep, "keeping a revision");
			if (rc)
				break;
			sqlite3_bind_text(upd, 1, c->id, -1, SQLITE_STATIC);
			sqlite3_bind_text(upd, 2, f->kind, -1, SQLITE_STATIC);
			bind_str(upd, 3, c->key);
			sqlite3_bind_text(upd, 4, c->title, -1, SQLITE_STATIC);
			sqlite3_bind_text(upd, 5, c->body, -1, SQLITE_STATIC);
			sqlite3_bind_text(upd, 6, c->status, -1, SQLITE_STATIC);
			sqlite3_bind_text(upd, 7, f->rel, -1, SQLITE_STATIC);
			bind_str(upd, 8, c->heading);
			sqlite3_bind_int64(upd, 9, c->line);
			bind_str(upd, 10, f->commit);
			bind_str(upd, 11, f->time);
			bind_str(upd, 12, f->supersedes);
			bind_str(upd, 13, c->superseded_by);
			sqlite3_bind_text(upd, 14, c->hash, -1, SQLITE_STATIC);
			sqlite3_bind_text(upd, 15, now, -1, SQLITE_STATIC);
			rc = step_done(r, upd, "updating a record");
		}
	}
	/* provenance refresh for unchanged records (no new revision) */
	for (i = 0; i < no && rc == CAIRN_OK; i++) {
		size_t ci;
		struct chunk *c;
		struct sfile *f;

		if (!o[i].seen || !smap_get(&r->ids, o[i].id, &ci))
			continue;
		c = &r->chunks[ci];
		f = &r->files[c->file];
		if (c->action != CAIRN_SEED_UNCHANGED)
			continue;
		if (util_streq(o[i].path, f->rel) &&
		    util_streq(o[i].heading, c->heading) &&
		    o[i].line == c->line && util_streq(o[i].commit, f->commit))
			continue;
		sqlite3_bind_text(prov, 1, c->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(prov, 2, f->rel, -1, SQLITE_STATIC);
		bind_str(prov, 3, c->heading);
		sqlite3_bind_int64(prov, 4, c->line);
		bind_str(prov, 5, f->commit);
		rc = step_done(r, prov, "updating provenance");
	}
	for (i = 0; i < r->nchunks && rc == CAIRN_OK; i++) {
		struct chunk *c = &r->chunks[i];
		struct sfile *f = &r->files[c->file];
		cairn_record rec;

		if (c->action != CAIRN_SEED_NEW)
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.id = c->id;
		rec.kind = f->kind;
		rec.key = c->key;
		rec.scope = (char *)"workspace";
		rec.title = c->title;
		rec.body = c->body;
		rec.status = (char *)c->status;
		rec.confidence = 1.0;
		rec.origin = (char *)"file";
		rec.src_path = f->rel;
		rec.src_heading = c->heading;
		rec.src_line = c->line;
		rec.src_commit = f->commit;
		rec.time = f->time;
		rec.supersedes = f->supersedes;
		rec.superseded_by = c->superseded_by;
		rec.hash = c->hash;
		/* KEEP_TIMES: store our hash and link; times are "now" */
		rc = cairn_record_write(r->db, &rec, CAIRN_WRITE_KEEP_TIMES,
					NULL);
		if (rc) {
			/* a copy: store_error writes the buffer it reads */
			char why[STORE_ERRMSG];

			if (rc == CAIRN_SECRET) /* the store's advice is --redact */
				snprintf(why, sizeof(why),
					 "refusing to store a secret found in "
					 "this section (remove it from the "
					 "file; seed never stores secrets)");
			else
				snprintf(why, sizeof(why), "%s",
					 cairn_errmsg(r->db));
			/* listed too: the store can refuse what the plan let
			 * through (a secret seen in a chunk's trimmed text but
			 * not in the file's; found by tests/fuzz/fuzz_seed.c) */
			run_msg(r, 1, rc, f->rel, c->line, "%s", why);
			store_error(r->db, rc, "%s:%ld: %s", f->rel, c->line,
				    why);
		}
	}
out:
	sqlite3_finalize(retire);
	sqlite3_finalize(keep);
	sqlite3_finalize(upd);
	sqlite3_finalize(prov);
	return rc;
}

/* Keys held by records other than the chunk's own: an error per conflict. */
static int check_keys(struct run *r, struct old *o, size_t no,
		      const struct smap *oldmap)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int src;

	src = sqlite3_prepare_v2(r->db->sql,
				 "SELECT id FROM main.records WHERE key = ?1",
				 -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(r->db, src, "checking keys");
	for (i = 0; i < r->nchunks; i++) {
		struct chunk *c = &r->chunks[i];
		const char *holder;
		size_t oi;

		if (!c->key)
			continue;
		sqlite3_bind_text(st, 1, c->key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			holder = (const char *)sqlite3_column_text(st, 0);
			/* a file-backed holder this run retires frees it */
			if (holder && strcmp(holder, c->id) != 0 &&
			    !(smap_get(oldmap, holder, &oi) && !o[oi].seen &&
			      in_scope(r, o[oi].path)))
				run_msg(r, 1, CAIRN_INVALID,
					r->files[c->file].rel, c->line,
					"key '%s' already belongs to record %s",
					c->key, holder);
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return CAIRN_OK;
}

/* ================================================================ report */

static int report_add(cairn_seed_report *rep, size_t *cap, int action,
		      const char *id, const char *path, long line,
		      const char *heading, const char *title, const char *kind,
		      const char *status)
{
	cairn_seed_item *it;

	if (grow((void **)&rep->items, cap, rep->n_items, sizeof(*rep->items)))
		return CAIRN_NOMEM;
	it = &rep->items[rep->n_items++];
	memset(it, 0, sizeof(*it));
	it->action = action;
	it->line = line;
	it->id = util_strdup(id ? id : "");
	it->path = util_strdup(path ? path : "");
	it->heading = util_strdup(heading ? heading : "");
	it->title = util_strdup(title ? title : "");
	it->kind = util_strdup(kind ? kind : "");
	it->status = util_strdup(status ? status : "");
	if (!it->id || !it->path || !it->heading || !it->title || !it->kind ||
	    !it->status)
		return CAIRN_NOMEM;
	switch (action) {
	case CAIRN_SEED_NEW: rep->n_new++; break;
	case CAIRN_SEED_CHANGED: rep->n_changed++; break;
	case CAIRN_SEED_RETIRED: rep->n_retired++; break;
	default: rep->n_unchanged++;
	}
	return CAIRN_OK;
}

void cairn_seed_report_release(cairn_seed_report *rep)
{
	size_t i;

	if (!rep)
		return;
	for (i = 0; i < rep->n_items; i++) {
		cairn_free(rep->items[i].id);
		cairn_free(rep->items[i].path);
		cairn_free(rep->items[i].heading);
		cairn_free(rep->items[i].title);
		cairn_free(rep->items[i].kind);
		cairn_free(rep->items[i].status);
	}
	cairn_free(rep->items);
	cairn_free(rep->messages);
	memset(rep, 0, sizeof(*rep));
}

static int cmp_files(const void *a, const void *b)
{
	return strcmp(((const struct sfile *)a)->rel,
		      ((const struct sfile *)b)->rel);
}

static void run_release(struct run *r)
{
	size_t i;

	for (i = 0; i < r->nchunks; i++)
		chunk_release(&r->chunks[i]);
	cairn_free(r->chunks);
	for (i = 0; i < r->nfiles; i++) {
		struct sfile *f = &r->files[i];

		cairn_free(f->rel);
		cairn_free(f->title);
		cairn_free(f->id);
		cairn_free(f->commit);
		cairn_free(f->kind);
		cairn_free(f->target);
		cairn_free(f->target_href);
		cairn_free(f->supersedes_raw);
		cairn_free(f->supersedes);
		cairn_free(f->key);
		cairn_free(f->time);
	}
	cairn_free(r->files);
	for (i = 0; i < r->nscopes; i++)
		cairn_free(r->scopes[i]);
	cairn_free(r->scopes);
	smap_release(&r->ids);
	smap_release(&r->paths);
	smap_release(&r->keys);
	sbuf_release(&r->msgs);
	cairn_free(r->root);
}

/* Collect the files under the seeded paths and record the scopes. */
static int collect(struct run *r, const char *const *paths, size_t n,
		   int defaults)
{
	size_t i, j;
	int rc = CAIRN_OK;

	for (i = 0; i < n && rc == CAIRN_OK; i++) {
		char *rel = NULL;
		int exists, isdir;

		rc = resolve_path(r, paths[i], &rel, &exists, &isdir);
		if (rc)
			break;
		if (!exists && !defaults) {
			/* gone: fine if it held records (they retire) */
			int known = 0;
			sqlite3_stmt *st = NULL;

			if (sqlite3_prepare_v2(r->db->sql,
					       "SELECT 1 FROM main.records WHERE "
					       "origin = 'file' AND (src_path = "
					       "?1 OR substr(src_path, 1, "
					       "length(?1) + 1) = ?1 || '/') "
					       "LIMIT 1",
					       -1, &st, NULL) == SQLITE_OK) {
				sqlite3_bind_text(st, 1, rel, -1, SQLITE_STATIC);
				known = sqlite3_step(st) == SQLITE_ROW;
			}
			sqlite3_finalize(st);
			if (!known) {
				rc = store_error(r->db, CAIRN_INVALID,
						 "'%s': no such file or "
						 "directory",
						 paths[i]);
				cairn_free(rel);
				break;
			}
		}
		if (grow((void **)&r->scopes, &r->capscopes, r->nscopes,
			 sizeof(*r->scopes))) {
			cairn_free(rel);
			rc = CAIRN_NOMEM;
			break;
		}
		r->scopes[r->nscopes++] = rel;
		if (exists && isdir)
			rc = walk(r, rel);
		else if (exists && is_markdown(rel))
			rc = add_file(r, rel);
		else if (exists)
			rc = store_error(r->db, CAIRN_INVALID,
					 "'%s' is not a Markdown file (.md)",
					 paths[i]);
	}
	if (rc)
		return rc;
	/* sorted by path, so ids and output do not depend on readdir order */
	qsort(r->files, r->nfiles, sizeof(*r->files), cmp_files);
	smap_release(&r->paths);
	for (j = 0; j < r->nfiles && rc == CAIRN_OK; j++)
		rc = smap_put(&r->paths, r->files[j].rel, j);
	return rc;
}

int cairn_seed(cairn_db *db, const char *const *paths, size_t n,
	       const cairn_seed_opts *opts, cairn_seed_report *out)
{
	static const cairn_seed_opts none;
	struct run r;
	struct old *o = NULL;
	struct smap oldmap;
	size_t no = 0, i, cap = 0;
	char real[PATH_MAX];
	int rc, own_batch = 0, defaults = 0;
	char git_out[64];

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	memset(&oldmap, 0, sizeof(oldmap));
	if (!opts)
		opts = &none;
	r.db = db;
	r.opts = opts;
	r.chunk_chars = opts->chunk_chars ? opts->chunk_chars
					  : SEED_CHUNK_CHARS;
	out->dry_run = opts->dry_run;
	if (!realpath(cairn_db_root(db), real))
		return store_error(db, CAIRN_IO,
				   "cannot resolve the workspace root '%s'",
				   cairn_db_root(db));
	r.root = util_strdup(real);
	if (!r.root)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	if (n == 0) {
		defaults = 1;
		paths = opts->default_paths ? opts->default_paths
					    : default_paths;
		n = opts->default_paths ? opts->n_default_paths
					: ARRAY_SIZE(default_paths);
	}
	if (!opts->no_git) {
		const char *argv[] = { "git", "-C", r.root, "rev-parse",
				       "--is-inside-work-tree", NULL };

		r.git = run_git(argv, git_out, sizeof(git_out)) == 0 &&
			strcmp(git_out, "true") == 0;
	}
	/* phase 1: read */
	rc = collect(&r, paths, n, defaults);
	if (rc)
		goto out;
	for (i = 0; i < r.nfiles && rc == CAIRN_OK; i++) {
		rc = read_file(&r, i);
		if (opts->progress)
			opts->progress(opts->user, i + 1, r.nfiles);
	}
	if (rc == CAIRN_OK)
		rc = resolve_links(&r);
	if (rc)
		goto out;
	/* phase 2: plan */
	rc = load_old(&r, &o, &no);
	for (i = 0; i < no && rc == CAIRN_OK; i++)
		rc = smap_put(&oldmap, o[i].id, i);
	if (rc == CAIRN_OK)
		rc = check_keys(&r, o, no, &oldmap);
	if (rc)
		goto out;
	out->files = r.nfiles;
	for (i = 0; i < r.nchunks && rc == CAIRN_OK; i++) {
		struct chunk *c = &r.chunks[i];
		struct sfile *f = &r.files[c->file];
		size_t oi;

		if (f->failed)
			continue;
		if (smap_get(&oldmap, c->id, &oi)) {
			o[oi].seen = 1;
			c->action = util_streq(o[oi].hash, c->hash) &&
						    strcmp(o[oi].status,
							   "retired") != 0
					    ? CAIRN_SEED_UNCHANGED
					    : CAIRN_SEED_CHANGED;
		} else {
			c->action = CAIRN_SEED_NEW;
		}
		out->records++;
		rc = report_add(out, &cap, c->action, c->id, f->rel, c->line,
				c->heading, c->title, f->kind, c->status);
	}
	/* records of a file that failed are neither planned nor retired */
	for (i = 0; i < r.nfiles; i++) {
		size_t ci, oi;

		if (!r.files[i].failed)
			continue;
		for (oi = 0; oi < no; oi++)
			if (util_streq(o[oi].path, r.files[i].rel))
				o[oi].seen = 1;
		for (ci = r.files[i].first;
		     ci < r.files[i].first + r.files[i].n; ci++)
			if (smap_get(&oldmap, r.chunks[ci].id, &oi))
				o[oi].seen = 1;
	}
	for (i = 0; i < no && rc == CAIRN_OK; i++) {
		if (o[i].seen || !in_scope(&r, o[i].path) ||
		    strcmp(o[i].status, "retired") == 0)
			continue;
		rc = report_add(out, &cap, CAIRN_SEED_RETIRED, o[i].id,
				o[i].path, o[i].line, o[i].heading, o[i].title,
				o[i].kind, "retired");
	}
	if (rc)
		goto out;
	if (r.nerr > 0) {
		rc = store_error(db, r.first_err_rc ? r.first_err_rc
						    : CAIRN_INVALID,
				 "%s%s", r.first_err,
				 r.nerr > 1 ? " (and more errors)" : "");
		goto out;
	}
	if (opts->dry_run)
		goto out;
	/* phase 3: write, in one transaction */
	if (!db->in_batch) {
		rc = cairn_begin(db);
		if (rc)
			goto out;
		own_batch = 1;
	}
	rc = write_plan(&r, o, no);
	if (own_batch) {
		if (rc) {
			char keepmsg[STORE_ERRMSG];

			snprintf(keepmsg, sizeof(keepmsg), "%s", db->errmsg);
			cairn_rollback(db);
			store_error(db, rc, "%s", keepmsg);
		} else {
			rc = cairn_commit(db);
		}
	}
out:
	out->n_errors = r.nerr;
	out->n_warnings = r.nwarn;
	if (r.msgs.len && !r.msgs.err)
		out->messages = sbuf_detach(&r.msgs, NULL);
	if (rc == CAIRN_NOMEM)
		store_error(db, rc, "out of memory");
	old_release(o, no);
	smap_release(&oldmap);
	run_release(&r);
	return rc;
}
