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
#include "seed_int.h"
#include "store.h"

extern char **environ;

#define SEED_CHUNK_CHARS 800            /* default chunk target, in characters */
#define SEED_MAX_FILE ((size_t)4 << 20) /* largest Markdown file read: 4 MiB */
#define SEED_MAX_DEPTH 32               /* directory levels walked */
#define SEED_MAX_HEADING 256            /* bytes of one heading kept in a path */
#define SEED_MAX_ID 64                  /* bytes in a front-matter id */
#define SEED_MAX_MESSAGES 1000          /* messages kept in a report */
#define SEED_TITLE_CHARS 120            /* bytes of a title taken from text */

static const char *const default_paths[] = {
	"docs/decisions", "docs/adr", "doc/adr", "docs/architecture/decisions",
	".cairn/records",
	/* issue 18: where real repositories keep them */
	"docs/adrs", "doc/adrs", "docs/architecture/adr",
	"docs/architecture/adrs", "doc/architecture/decisions",
	"docs/architecture-decisions", "docs/architecture-decision-records",
	"architecture-decision-record", "architecture-decision-records",
	"adr", "adrs", "decisions", "doc/decisions",
};

#define SEED_SCAN_MAX 50000 /* Markdown files a workspace scan looks at */

/* Folders a workspace scan does not enter: dependencies and build output. */
static const char *const scan_skip[] = {
	"node_modules", "vendor", "third_party", "target", "build", "dist",
	"out", "bower_components", "site-packages", "venv", "__pycache__",
	"Pods",
};

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
	char *supersedes_href; /* its link target (a "Supersedes [X](x.md)" line) */
	char *h1;             /* its first H1, or NULL */
	char *status_text;    /* the status as written, or NULL */
	const char *rule;     /* the status table's row that mapped it */
	const char *skipped;  /* why it makes no record (a template...), or NULL */
	char *why;            /* its first error, or NULL */
	struct seed_date date; /* the date found (ambiguous: decided later) */
	long date_line;       /* its line */
	long status_line;     /* line of the status text (for messages) */
	long supersedes_line; /* line of front matter supersedes */
	size_t first;         /* index of its first chunk */
	size_t n;             /* chunks it produced */
	int failed;           /* 1: it had an error */
	int found;            /* 1: found by configuration or content: an ADR */
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
	unsigned char *flat;          /* flat[i]: scope i covers its own files only */
	size_t capflat;               /* capacity */
	int dayfirst;                 /* evidence for d/m/y (> 0) or m/d/y (< 0) */
	struct smap ids;              /* chunk id -> chunk index */
	struct smap paths;            /* rel path -> file index */
	struct smap keys;             /* key -> chunk index */
	struct sbuf msgs;             /* error and warning lines */
	size_t nerr, nwarn, nmsgs;    /* counts */
	char first_err[STORE_ERRMSG]; /* the first error */
	char last_err[STORE_ERRMSG];  /* the latest error's text */
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
		snprintf(r->last_err, sizeof(r->last_err), "%s", text);
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
		      size_t *nout, char ***paths, char ***shown, size_t *npaths)
{
	struct unit *u = NULL;
	char **p = NULL, **dp = NULL;
	char *stack[3] = { NULL, NULL, NULL }, *cstack[3] = { NULL, NULL, NULL };
	size_t capd = 0;
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
			if (!hp || seed_grow((void **)&p, &capp, np, sizeof(*p)) ||
			    seed_grow((void **)&dp, &capd, np, sizeof(*dp))) {
				cairn_free(hp);
				rc = CAIRN_NOMEM;
				goto out;
			}
			dp[np] = heading_path(cstack);
			p[np++] = hp;
			if (!dp[np - 1]) {
				rc = CAIRN_NOMEM;
				goto out;
			}
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
					if (seed_grow((void **)&u, &capu, nu,
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
			if (seed_grow((void **)&u, &capu, nu, sizeof(*u))) {
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
		cstack[j] = m->b[i].clean;
		for (j = j + 1; j < 3; j++)
			stack[j] = cstack[j] = NULL;
		start = s;
	}
out:
	*out = u;
	*nout = nu;
	*paths = p;
	*shown = dp;
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

	if (seed_grow((void **)&r->chunks, &r->capchunks, r->nchunks,
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
	char *trim = seed_dup_trim(s, n);

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
			if (!seed_space((unsigned char)x->t[i]))
				return l;
	}
	return l2 + 1;
}

/*
 * The title for a chunk: the file's, or "File title: Heading" (never the
 * H1 again after a front matter title).
 */
static char *chunk_title(const struct sfile *f, const char *heading)
{
	const char *last = heading ? strrchr(heading, '>') : NULL;
	struct sbuf sb = SBUF_INIT;

	if (last && last > heading && last[-1] == ' ' && last[1] == ' ')
		last += 2;
	else
		last = heading;
	if (!last || !*last || strcmp(last, f->title) == 0 ||
	    (f->h1 && strcmp(last, f->h1) == 0))
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
	char **paths = NULL, **shown = NULL;
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

				add_heading(&sb, m->b[i].clean);
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
				&paths, &shown, &np);
	if (rc)
		goto out;
	nu = merge_units(u, nu, r->chunk_chars);
	for (i = 0; i < nu && rc == CAIRN_OK; i++) {
		const char *hp = paths[u[i].head], *sh = shown[u[i].head];
		char *key = NULL;

		if (i == 0 && f->key) {
			key = util_strdup(f->key);
			if (!key) {
				rc = CAIRN_NOMEM;
				break;
			}
		}
		rc = add_chunk(r, fi, first_text_line(x, u[i].start, u[i].end),
			       util_strdup(sh),
			       i == 0 ? util_strdup(f->title) : chunk_title(f, sh),
			       chunk_body(x, u[i].start, u[i].end, f->outcome),
			       key, f->status, &ci);
		if (rc == CAIRN_OK)
			rc = assign_id(r, ci, hp, i == 0);
		if (rc == CAIRN_OK)
			rc = claim_key(r, ci);
	}
out:
	for (i = 0; i < np; i++) {
		cairn_free(paths[i]);
		cairn_free(shown[i]);
	}
	cairn_free(paths);
	cairn_free(shown);
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
		while (p < qe && seed_space((unsigned char)*p))
			p++;
		while (qe > p && seed_space((unsigned char)qe[-1]))
			qe--;
		if (qe - p > 4 && (seed_word_eq(p, 4, "key=") ||
				   seed_word_eq(p, 4, "key:"))) {
			if (*key) {
				snprintf(msg, msize, "two keys in one fact");
				return CAIRN_INVALID;
			}
			*key = seed_dup_trim(p + 4, (size_t)(qe - p - 4));
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
		text = seed_dup_trim(sbuf_str(&sb), sb.len);
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
	static const char *const adr_names[] = {
		"architecture-decision-record/", "architecture-decision-records/",
		"architecture-decisions/", "architecture/decisions/",
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
	/* issue 18: architecture-decision-record(s), architecture-decisions,
	 * doc/architecture/decisions (adr-tools' own example) */
	for (i = 0; i < ARRAY_SIZE(adr_names); i++) {
		const char *p = strstr(rel, adr_names[i]);

		if (p && (p == rel || p[-1] == '/'))
			return "adr";
	}
	if (strstr(rel, "/decisions/") || strncmp(rel, "decisions/", 10) == 0)
		return "decision";
	return "note";
}

static int ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && seed_word_eq(s + n - m, m, suffix);
}

/* The base name of a path. */
static const char *base_name(const char *rel)
{
	const char *b = strrchr(rel, '/');

	return b ? b + 1 : rel;
}

/* README.md, index.md (.markdown, .mdx): an index page, unless an ADR. */
static int index_name(const char *name)
{
	static const char *const idx[] = { "readme.md", "readme.markdown",
					   "readme.mdx", "index.md",
					   "index.markdown", "index.mdx" };
	size_t i, n = strlen(name);

	for (i = 0; i < ARRAY_SIZE(idx); i++)
		if (seed_word_eq(name, n, idx[i]))
			return 1;
	return 0;
}

static int name_has_template(const char *rel)
{
	const char *name = base_name(rel);
	size_t i, n = strlen(name);

	for (i = 0; i + 8 <= n; i++)
		if (seed_word_eq(name + i, 8, "template"))
			return 1;
	return 0;
}

/*
 * File title: front matter, first H1, else the file name (for a
 * folder-per-ADR "<slug>/index.md", the folder's name).
 */
static char *file_title(const struct front *fm, const char *h1,
			const char *rel)
{
	const char *base = base_name(rel);
	size_t n;

	if (fm->v[FM_TITLE] && *fm->v[FM_TITLE])
		return seed_dup_trim(fm->v[FM_TITLE], strlen(fm->v[FM_TITLE]));
	if (h1 && *h1) {
		n = strcspn(h1, "\n");
		return util_strndup(h1, n > SEED_TITLE_CHARS ? SEED_TITLE_CHARS
							     : n);
	}
	if (index_name(base) && base > rel) {
		const char *d = base - 1, *s = d;

		while (s > rel && s[-1] != '/')
			s--;
		return util_strndup(s, (size_t)(d - s));
	}
	n = strlen(base);
	if (ends_with_ci(base, ".markdown"))
		n -= 9;
	else if (ends_with_ci(base, ".mdx"))
		n -= 4;
	else if (ends_with_ci(base, ".md"))
		n -= 3;
	return util_strndup(base, n);
}

/* "[text](href)" in a front matter value: the text and the target. */
static int unlink_md(const char *s, char **text, char **href)
{
	const char *o = strchr(s, '['), *c, *he;
	struct sbuf sb = SBUF_INIT;

	*text = NULL;
	*href = NULL;
	c = o ? strstr(o, "](") : NULL;
	he = c ? strchr(c + 2, ')') : NULL;
	if (!he) {
		*text = util_strdup(s);
		return *text ? CAIRN_OK : CAIRN_NOMEM;
	}
	sbuf_add(&sb, s, (size_t)(o - s));
	sbuf_add(&sb, o + 1, (size_t)(c - o - 1));
	sbuf_adds(&sb, he + 1);
	*href = util_strndup(c + 2, (size_t)(he - c - 2));
	if (sb.err || !*href) {
		sbuf_release(&sb);
		cairn_free(*href);
		*href = NULL;
		return CAIRN_NOMEM;
	}
	*text = sb.buf ? sbuf_detach(&sb, NULL) : util_strdup("");
	return *text ? CAIRN_OK : CAIRN_NOMEM;
}

/* Keep a date: the run decides an ambiguous one later (decide_dates). */
static int take_date(struct run *r, struct sfile *f, const struct seed_date *d,
		     long line)
{
	f->date = *d;
	f->date_line = line;
	r->dayfirst += d->dayfirst;
	f->time = util_strdup(d->iso);
	return f->time ? CAIRN_OK : CAIRN_NOMEM;
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

/* Map the status text of file f (n bytes); 0, or 1 when it makes the file a
 * template (a name with "template" and a status no rule maps). */
static int map_status(struct run *r, struct sfile *f, const char *text,
		      size_t n, long line, const struct mpara *para,
		      const char *fm_href, int *rc)
{
	struct seed_status ss;

	*rc = CAIRN_OK;
	f->status_line = line;
	f->status_text = util_strndup(text, n);
	if (!f->status_text) {
		*rc = CAIRN_NOMEM;
		return 0;
	}
	if (seed_status_map(text, n, &ss) != CAIRN_OK) {
		if (name_has_template(f->rel)) {
			f->skipped = "a template (its name says so and its "
				     "status is no status)";
			return 1;
		}
		run_msg(r, 1, CAIRN_INVALID, f->rel, line,
			"unknown status '%s' (no rule of the status table "
			"maps it: see docs/SEED.md; the file is skipped)",
			f->status_text);
		return 0;
	}
	f->status = ss.status;
	f->outcome = ss.outcome;
	f->rule = ss.rule;
	if (ss.target) {
		const char *h = para ? seed_link_in(para, ss.target,
						    ss.target_len)
				     : fm_href;

		f->target = util_strndup(ss.target, ss.target_len);
		f->target_href = h ? util_strdup(h) : NULL;
		if (!f->target || (h && !f->target_href))
			*rc = CAIRN_NOMEM;
	}
	if (ss.supersedes && !f->supersedes_raw) {
		const char *h = para ? seed_link_in(para, ss.supersedes,
						    ss.supersedes_len)
				     : fm_href;

		f->supersedes_raw = util_strndup(ss.supersedes,
						 ss.supersedes_len);
		f->supersedes_href = h ? util_strdup(h) : NULL;
		f->supersedes_line = line;
		if (!f->supersedes_raw || (h && !f->supersedes_href))
			*rc = CAIRN_NOMEM;
	}
	return 0;
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
	struct seed_fields fl;
	struct seed_note fe, fw;
	struct sbuf abs = SBUF_INIT;
	struct secret_hit hit;
	char err[512], *raw = NULL, *t = NULL;
	const char *kind, *h1 = NULL;
	size_t len = 0, i, k, nbefore = r->nerr;
	long first;
	int rc = CAIRN_OK, is_facts;

	memset(&fm, 0, sizeof(fm));
	memset(&m, 0, sizeof(m));
	memset(&x, 0, sizeof(x));
	memset(&fe, 0, sizeof(fe));
	memset(&fw, 0, sizeof(fw));
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
				seed_line_of(x.ls, x.nls, (size_t)bad),
				"not valid UTF-8 (byte %ld)", bad);
			goto out;
		}
		/* found by tests/fuzz/fuzz_seed.c: texts are C strings */
		if (nul) {
			run_msg(r, 1, CAIRN_INVALID, f->rel,
				seed_line_of(x.ls, x.nls, (size_t)(nul - t)),
				"holds a NUL byte (byte %ld): not a text file",
				(long)(nul - t));
			goto out;
		}
	}
	/* an index page (README.md, index.md) is read only when it is a
	 * decision record itself (one folder per ADR) */
	if (index_name(base_name(f->rel)) && !seed_looks_like_adr(t, k)) {
		f->skipped = "an index page (README/index that is no decision "
			     "record)";
		goto out;
	}
	if (secret_scan(t, k, &hit, 1) > 0) {
		run_msg(r, 1, CAIRN_SECRET, f->rel, (long)hit.line,
			"refusing to store a secret: %s (remove it from the "
			"file; seed never stores secrets)",
			hit.kind);
		goto out;
	}
	rc = seed_front_parse(t, k, &fm, &fe, &fw);
	if (rc == CAIRN_INVALID) {
		run_msg(r, 1, CAIRN_INVALID, f->rel, fe.line, "%s", fe.text);
		rc = CAIRN_OK;
		goto out;
	}
	if (rc)
		goto out;
	first = fm.end + 1;
	rc = seed_ms_parse(&m, t + fm.body, k - fm.body, fm.body, x.ls, x.nls);
	if (rc == CAIRN_INVALID) {
		run_msg(r, 1, rc, f->rel, 0, "cannot parse the Markdown");
		rc = CAIRN_OK;
		goto out;
	}
	if (rc)
		goto out;
	for (i = 0; i < m.n; i++)
		if (m.b[i].type == MD_BLOCK_H && m.b[i].level == 1 &&
		    m.b[i].clean && *m.b[i].clean) {
			h1 = m.b[i].clean;
			break;
		}
	/* a template is skipped by its content: a placeholder title (or an
	 * H1 that is only a comment), or a placeholder date */
	for (i = 0; i < m.n && !h1; i++)
		if (m.b[i].type == MD_BLOCK_H && m.b[i].level == 1) {
			if (m.b[i].text && *m.b[i].text && m.b[i].clean &&
			    !*m.b[i].clean)
				h1 = "<!-- -->";
			break;
		}
	if (seed_placeholder_title(fm.v[FM_TITLE]) ||
	    seed_placeholder_title(h1)) {
		f->skipped = "a template (its title is a placeholder)";
		goto out;
	}
	if (fw.text[0]) /* not for a template: it is skipped anyway */
		run_msg(r, 0, CAIRN_OK, f->rel, fw.line, "%s", fw.text);
	/* kind: front matter, else the folder */
	if (fm.v[FM_KIND]) {
		kind = static_kind(fm.v[FM_KIND]);
		if (!kind) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, fm.line[FM_KIND],
				"unknown kind '%s' (expected one of: "
				"decision, adr, fact, rule, procedure, "
				"capability, finding, history, event, note)",
				fm.v[FM_KIND]);
			goto out;
		}
	} else {
		/* found by a tool's configuration or by content: an ADR */
		kind = f->found ? "adr" : folder_kind(f->rel);
	}
	is_facts = (fm.v[FM_FORMAT] && strcmp(fm.v[FM_FORMAT], "facts") == 0) ||
		   ends_with_ci(f->rel, ".facts.md");
	if (fm.v[FM_FORMAT] && strcmp(fm.v[FM_FORMAT], "facts") != 0) {
		run_msg(r, 1, CAIRN_INVALID, f->rel, fm.line[FM_FORMAT],
			"unknown format '%s' (expected facts)",
			fm.v[FM_FORMAT]);
		goto out;
	}
	if (is_facts && !fm.v[FM_KIND])
		kind = "fact";
	f->kind = util_strdup(kind);
	f->title = file_title(&fm, h1, f->rel);
	f->h1 = h1 ? util_strndup(h1, strcspn(h1, "\n")) : NULL;
	if (!f->kind || !f->title || (h1 && !f->h1)) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	/* front matter supersedes (a path, a name, an id, or a link) */
	if (fm.v[FM_SUPERSEDES]) {
		rc = unlink_md(fm.v[FM_SUPERSEDES], &f->supersedes_raw,
			       &f->supersedes_href);
		f->supersedes_line = fm.line[FM_SUPERSEDES];
		if (rc)
			goto out;
	}
	/* status: front matter, else the text (not in facts files) */
	memset(&fl, 0, sizeof(fl));
	if (!is_facts)
		seed_fields(&m, &fl);
	if (fl.date_raw && !fl.date &&
	    seed_placeholder_date(fl.date_raw, fl.date_raw_len)) {
		f->skipped = "a template (its date is a placeholder)";
		goto out;
	}
	f->status = "accepted";
	f->rule = "no status";
	if (fm.v[FM_STATUS]) {
		char *st = NULL, *href = NULL;

		rc = unlink_md(fm.v[FM_STATUS], &st, &href);
		if (rc == CAIRN_OK &&
		    map_status(r, f, st, strlen(st), fm.line[FM_STATUS], NULL,
			       href, &rc)) {
			cairn_free(st);
			cairn_free(href);
			goto out;
		}
		cairn_free(st);
		cairn_free(href);
	} else if (fl.status) {
		if (map_status(r, f, fl.status, fl.status_len, fl.status_line,
			       fl.status_para, NULL, &rc))
			goto out;
	}
	if (rc || r->nerr > nbefore)
		goto out;
	/* "Superseded by X" and "Supersedes X" lines elsewhere in the text */
	if (fl.by && !f->target && (!f->rule ||
				    strcmp(f->rule, "partly superseded") != 0)) {
		f->status = "superseded";
		f->outcome = NULL;
		f->rule = "a 'Superseded by' line";
		f->status_line = fl.by_line;
		f->target = util_strndup(fl.by, fl.by_len);
		f->target_href = fl.by_href ? util_strdup(fl.by_href) : NULL;
		if (!f->target || (fl.by_href && !f->target_href)) {
			rc = CAIRN_NOMEM;
			goto out;
		}
	}
	if (fl.sups && !f->supersedes_raw) {
		f->supersedes_raw = util_strndup(fl.sups, fl.sups_len);
		f->supersedes_href = fl.sups_href ? util_strdup(fl.sups_href)
						  : NULL;
		f->supersedes_line = fl.sups_line;
		if (!f->supersedes_raw || (fl.sups_href && !f->supersedes_href)) {
			rc = CAIRN_NOMEM;
			goto out;
		}
	}
	/* id, key from the front matter */
	if (fm.v[FM_ID]) {
		if (!id_chars_ok(fm.v[FM_ID])) {
			run_msg(r, 1, CAIRN_INVALID, f->rel, fm.line[FM_ID],
				"invalid id '%s' (1-%d of A-Z a-z 0-9 . _ : -)",
				fm.v[FM_ID], SEED_MAX_ID);
			goto out;
		}
		f->id = util_strdup(fm.v[FM_ID]);
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
	if (fm.v[FM_KEY]) {
		f->key = seed_dup_trim(fm.v[FM_KEY], strlen(fm.v[FM_KEY]));
		if (!f->key) {
			rc = CAIRN_NOMEM;
			goto out;
		}
	}
	/* the date: front matter, else the text, through the same forms */
	if (fm.v[FM_DATE]) {
		struct seed_date d;

		if (util_parse_iso(fm.v[FM_DATE]) >= 0) {
			f->time = util_strdup(fm.v[FM_DATE]); /* as written */
			f->date_line = fm.line[FM_DATE];
			if (!f->time) {
				rc = CAIRN_NOMEM;
				goto out;
			}
		} else if (seed_parse_date(fm.v[FM_DATE],
					   strlen(fm.v[FM_DATE]), &d) == 0) {
			rc = take_date(r, f, &d, fm.line[FM_DATE]);
			if (rc)
				goto out;
		} else {
			run_msg(r, 0, CAIRN_OK, f->rel, fm.line[FM_DATE],
				"date '%s' is in no form cairn reads (see "
				"docs/SEED.md): %s",
				fm.v[FM_DATE],
				fl.date ? "the date in the text is used"
					: "the record has no date");
		}
	}
	if (!f->time && fl.date) {
		rc = take_date(r, f, &fl.d, fl.date_line);
		if (rc)
			goto out;
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
	if (r->nerr > nbefore) {
		f->failed = 1;
		if (!f->why)
			f->why = util_strdup(r->last_err);
	}
	f->n = r->nchunks - f->first;
	seed_front_release(&fm);
	seed_ms_release(&m);
	cairn_free(x.ls);
	cairn_free(x.cp);
	cairn_free(t);
	cairn_free(raw);
	sbuf_release(&abs);
	return rc;
}

/* ================================================================== paths */

static int is_markdown(const char *name)
{
	return ends_with_ci(name, ".md") || ends_with_ci(name, ".markdown") ||
	       ends_with_ci(name, ".mdx");
}

static int add_file(struct run *r, const char *rel)
{
	struct sfile *f;

	if (smap_get(&r->paths, rel, NULL))
		return CAIRN_OK;
	if (seed_grow((void **)&r->files, &r->capfiles, r->nfiles,
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

/* A workspace scan's finds: files that look like decision records. */
struct scan {
	char **v;        /* relative paths */
	size_t n, cap;   /* count, capacity */
	size_t looked;   /* Markdown files looked at */
};

static int scan_skip_dir(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(scan_skip); i++)
		if (strcmp(name, scan_skip[i]) == 0)
			return 1;
	return 0;
}

/* Scan: does the file at abs look like a decision record? Adds rel. */
static int scan_file(struct scan *sc, const char *abs, const char *rel)
{
	char buf[16384];
	ssize_t got;
	int fd;

	if (sc->looked++ >= SEED_SCAN_MAX)
		return CAIRN_OK;
	fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return CAIRN_OK;
	do {
		got = read(fd, buf, sizeof(buf));
	} while (got < 0 && errno == EINTR);
	close(fd);
	if (got <= 0 || !seed_looks_like_adr(buf, (size_t)got))
		return CAIRN_OK;
	if (seed_grow((void **)&sc->v, &sc->cap, sc->n, sizeof(*sc->v)))
		return CAIRN_NOMEM;
	sc->v[sc->n] = util_strdup(rel);
	return sc->v[sc->n++] ? CAIRN_OK : CAIRN_NOMEM;
}

/*
 * Walk directory rel (relative to root; "" = the root) without recursion.
 * Without sc every Markdown file is added; with sc (a workspace scan)
 * dependency folders are left out and the files that look like decision
 * records are collected in sc.
 */
static int walk(struct run *r, const char *rel, struct scan *sc)
{
	struct dirent_todo {
		char *rel; /* directory, relative */
		int depth; /* levels below the seeded path */
	} *todo = NULL;
	size_t ntodo = 0, captodo = 0;
	struct sbuf p = SBUF_INIT, child = SBUF_INIT;
	int rc = CAIRN_OK;

	if (seed_grow((void **)&todo, &captodo, 0, sizeof(*todo)))
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
				if (cur.depth + 1 >= SEED_MAX_DEPTH ||
				    (sc && scan_skip_dir(de->d_name)))
					continue;
				if (seed_grow((void **)&todo, &captodo, ntodo,
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
				   is_markdown(de->d_name)) {
				if (!sc)
					rc = add_file(r, child.buf);
				else if (!smap_get(&r->paths, child.buf, NULL))
					rc = scan_file(sc, p.buf, child.buf);
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
			prefix[k++] = (char)seed_lower((unsigned char)s[i]);
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
				if (seed_grow((void **)&stk, &capst, nst,
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
						/* "<slug>/index.md": the slug names it */
						if (index_name(base) && base > g->rel) {
							base--;
							while (base > g->rel && base[-1] != '/')
								base--;
						}
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

/*
 * Resolve every file's links; give the newer record of each "superseded
 * by" pair the reverse "supersedes" link when it names none; then set them
 * on the chunks and hash them.
 */
static int resolve_links(struct run *r)
{
	char **by = util_calloc(r->nfiles + 1, sizeof(*by));
	size_t fi, ci, bi;
	int rc = CAIRN_OK;

	if (!by)
		return CAIRN_NOMEM;
	for (fi = 0; fi < r->nfiles && rc == CAIRN_OK; fi++) {
		struct sfile *f = &r->files[fi];

		if (f->failed || f->skipped)
			continue;
		if (f->target || f->target_href)
			rc = resolve_ref(r, fi, f->target_href, f->target,
					 f->status_line, &by[fi]);
		if (rc == CAIRN_OK && (f->supersedes_raw || f->supersedes_href))
			rc = resolve_ref(r, fi,
					 f->supersedes_href ? f->supersedes_href
							    : f->supersedes_raw,
					 f->supersedes_raw, f->supersedes_line,
					 &f->supersedes);
	}
	for (fi = 0; fi < r->nfiles && rc == CAIRN_OK; fi++) {
		struct sfile *g;

		if (!by[fi] || !smap_get(&r->ids, by[fi], &ci))
			continue;
		g = &r->files[r->chunks[ci].file];
		if (g == &r->files[fi] || g->failed || g->supersedes ||
		    ci != g->first)
			continue;
		g->supersedes = util_strdup(r->files[fi].id);
		if (!g->supersedes)
			rc = CAIRN_NOMEM;
	}
	for (fi = 0; fi < r->nfiles && rc == CAIRN_OK; fi++) {
		struct sfile *f = &r->files[fi];

		if (f->failed || f->skipped)
			continue;
		for (ci = f->first; ci < f->first + f->n; ci++) {
			struct chunk *c = &r->chunks[ci];

			if (by[fi] && strcmp(c->status, "superseded") == 0) {
				c->superseded_by = util_strdup(by[fi]);
				if (!c->superseded_by) {
					rc = CAIRN_NOMEM;
					break;
				}
			}
			chunk_hash(c, f);
		}
	}
	for (bi = 0; bi < r->nfiles; bi++)
		cairn_free(by[bi]);
	cairn_free(by);
	return rc;
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
		if (seed_grow((void **)&o, &cap, n, sizeof(*o))) {
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

		/* a flat scope: the files directly in the folder */
		if (r->flat && r->flat[i]) {
			if ((n == 0 || (strncmp(path, s, n) == 0 &&
					path[n] == '/')) &&
			    !strchr(path + n + (n > 0), '/'))
				return 1;
			continue;
		}
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
			      in_scope(r, o[oi].path))) {
				struct sfile *f = &r->files[c->file];

				run_msg(r, 1, CAIRN_INVALID, f->rel, c->line,
					"key '%s' already belongs to record %s",
					c->key, holder);
				f->failed = 1;
				if (!f->why)
					f->why = util_strdup(r->last_err);
			}
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

	if (seed_grow((void **)&rep->items, cap, rep->n_items, sizeof(*rep->items)))
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
	for (i = 0; i < rep->n_sources; i++) {
		cairn_seed_source *s = &rep->sources[i];

		cairn_free(s->path);
		cairn_free(s->kind);
		cairn_free(s->status_text);
		cairn_free(s->status);
		cairn_free(s->rule);
		cairn_free(s->time);
		cairn_free(s->supersedes);
		cairn_free(s->superseded_by);
		cairn_free(s->skipped);
		cairn_free(s->error);
	}
	cairn_free(rep->sources);
	cairn_free(rep->searched);
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
		cairn_free(f->supersedes_href);
		cairn_free(f->h1);
		cairn_free(f->status_text);
		cairn_free(f->why);
	}
	cairn_free(r->files);
	for (i = 0; i < r->nscopes; i++)
		cairn_free(r->scopes[i]);
	cairn_free(r->scopes);
	cairn_free(r->flat);
	smap_release(&r->ids);
	smap_release(&r->paths);
	smap_release(&r->keys);
	sbuf_release(&r->msgs);
	cairn_free(r->root);
}

/* Record a seeded root (rel is taken over). */
static int add_scope(struct run *r, char *rel, int flat)
{
	size_t i;

	for (i = 0; i < r->nscopes; i++)
		if (strcmp(r->scopes[i], rel) == 0 &&
		    (r->flat ? r->flat[i] : 0) == flat) {
			cairn_free(rel);
			return CAIRN_OK;
		}
	if (seed_grow((void **)&r->scopes, &r->capscopes, r->nscopes,
		      sizeof(*r->scopes)) ||
	    seed_grow((void **)&r->flat, &r->capflat, r->nscopes,
		      sizeof(*r->flat))) {
		cairn_free(rel);
		return CAIRN_NOMEM;
	}
	r->flat[r->nscopes] = (unsigned char)flat;
	r->scopes[r->nscopes++] = rel;
	return CAIRN_OK;
}

/* The folder a found record belongs to: its own, or for "<slug>/index.md"
 * its parent's ("" is the root). Its length in rel. */
static size_t collection_len(const char *rel)
{
	size_t n = dir_len(rel);

	if (index_name(base_name(rel)) && n > 0) {
		n--; /* the slash */
		while (n > 0 && rel[n - 1] != '/')
			n--;
	}
	return n > 0 ? n - 1 : 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Find decision records anywhere in the workspace by their content. A
 * folder holding two or more is read as a whole (and retires what leaves
 * it); a lone one is read by itself; at the root only the records found.
 */
static int discover(struct run *r)
{
	struct scan sc;
	size_t i, j, before = r->nfiles;
	int rc;

	memset(&sc, 0, sizeof(sc));
	rc = walk(r, "", &sc);
	if (sc.looked > SEED_SCAN_MAX)
		run_msg(r, 0, CAIRN_OK, ".", 0,
			"the workspace holds over %d Markdown files: only the "
			"first were looked at for decision records; name the "
			"folder: cairn seed PATH",
			SEED_SCAN_MAX);
	if (sc.n > 1)
		qsort(sc.v, sc.n, sizeof(*sc.v), cmp_strp);
	for (i = 0; i < sc.n && rc == CAIRN_OK; i++) {
		size_t cl = collection_len(sc.v[i]), same = 0;
		char *c;

		for (j = 0; j < sc.n; j++)
			if (collection_len(sc.v[j]) == cl &&
			    strncmp(sc.v[j], sc.v[i], cl) == 0)
				same++;
		if (cl > 0 && same >= 2) {
			c = util_strndup(sc.v[i], cl);
			if (!c) {
				rc = CAIRN_NOMEM;
				break;
			}
			rc = walk(r, c, NULL);
			if (rc == CAIRN_OK)
				rc = add_scope(r, c, 0);
			else
				cairn_free(c);
			continue;
		}
		rc = add_file(r, sc.v[i]);
		if (rc == CAIRN_OK) {
			c = cl == 0 && dir_len(sc.v[i]) == 0 ? util_strdup("")
							      : util_strdup(sc.v[i]);
			rc = c ? add_scope(r, c, cl == 0 && dir_len(sc.v[i]) == 0)
			       : CAIRN_NOMEM;
		}
	}
	for (i = before; i < r->nfiles; i++)
		r->files[i].found = 1;
	for (i = 0; i < sc.n; i++)
		cairn_free(sc.v[i]);
	cairn_free(sc.v);
	return rc;
}

/* Collect the files under the seeded paths and record the scopes. */
static int collect(struct run *r, const char *const *paths, size_t n,
		   int defaults, int scan)
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
		if (exists && isdir)
			rc = walk(r, rel, NULL);
		else if (exists && is_markdown(rel))
			rc = add_file(r, rel);
		else if (exists)
			rc = store_error(r->db, CAIRN_INVALID,
					 "'%s' is not a Markdown file (.md)",
					 paths[i]);
		if (rc == CAIRN_OK)
			rc = add_scope(r, rel, 0);
		else
			cairn_free(rel);
	}
	if (rc == CAIRN_OK && scan)
		rc = discover(r);
	if (rc)
		return rc;
	/* sorted by path, so ids and output do not depend on readdir order */
	if (r->nfiles > 1)
		qsort(r->files, r->nfiles, sizeof(*r->files), cmp_files);
	smap_release(&r->paths);
	for (j = 0; j < r->nfiles && rc == CAIRN_OK; j++)
		rc = smap_put(&r->paths, r->files[j].rel, j);
	return rc;
}

/*
 * Decide the ambiguous a/b/YYYY dates: by the other numeric dates of the
 * run when they tell (13/05/2018 is day first), else day first, as
 * adr-tools wrote them. Each one is a warning: the order is a guess.
 */
static int decide_dates(struct run *r)
{
	size_t i;

	for (i = 0; i < r->nfiles; i++) {
		struct sfile *f = &r->files[i];

		if (!f->date.ambiguous || !f->time || f->failed || f->skipped)
			continue;
		seed_date_order(&f->date, r->dayfirst >= 0);
		cairn_free(f->time);
		f->time = util_strdup(f->date.iso);
		if (!f->time)
			return CAIRN_NOMEM;
		run_msg(r, 0, CAIRN_OK, f->rel, f->date_line,
			"date %02d/%02d/%04d is day/month or month/day: read "
			"as %s (%s); write it as YYYY-MM-DD to be sure",
			f->date.a, f->date.b, f->date.y, f->date.iso,
			r->dayfirst > 0	  ? "day first, as other dates here"
			: r->dayfirst < 0 ? "month first, as other dates here"
					  : "day first, as adr-tools wrote it");
	}
	return CAIRN_OK;
}

static char *dupz(const char *s)
{
	return util_strdup(s ? s : "");
}

/* What each file gave, for the report (cairn seed --dry-run). */
static int report_sources(struct run *r, cairn_seed_report *out)
{
	size_t i;

	out->sources = util_calloc(r->nfiles + 1, sizeof(*out->sources));
	if (!out->sources)
		return CAIRN_NOMEM;
	for (i = 0; i < r->nfiles; i++) {
		const struct sfile *f = &r->files[i];
		cairn_seed_source *s = &out->sources[out->n_sources++];
		const char *by = f->n > 0 && !f->failed
					 ? r->chunks[f->first].superseded_by
					 : NULL;
		int read = !f->skipped && !f->failed;

		s->path = dupz(f->rel);
		s->kind = dupz(read ? f->kind : NULL);
		s->status_text = dupz(f->status_text);
		s->status = dupz(read ? f->status : NULL);
		s->rule = dupz(read ? f->rule : NULL);
		s->time = dupz(read ? f->time : NULL);
		s->supersedes = dupz(read ? f->supersedes : NULL);
		s->superseded_by = dupz(by);
		s->skipped = f->skipped ? util_strdup(f->skipped) : NULL;
		s->error = f->failed ? dupz(f->why) : NULL;
		s->records = read ? f->n : 0;
		if (!s->path || !s->kind || !s->status_text || !s->status ||
		    !s->rule || !s->time || !s->supersedes || !s->superseded_by ||
		    (f->skipped && !s->skipped) || (f->failed && !s->error))
			return CAIRN_NOMEM;
		if (f->skipped)
			out->n_skipped++;
		else if (f->failed)
			out->n_failed++;
	}
	return CAIRN_OK;
}

/* "a, b, c" of the paths looked in, for a seed that found nothing. */
static char *searched(const char *const *paths, size_t n, int scan)
{
	struct sbuf sb = SBUF_INIT;
	size_t i;

	for (i = 0; i < n; i++)
		sbuf_addf(&sb, "%s%s", i ? ", " : "", *paths[i] ? paths[i] : ".");
	if (scan)
		sbuf_addf(&sb, "%sfiles that look like decision records "
			       "anywhere in the workspace",
			  n ? ", and " : "");
	if (sb.err || !sb.buf) {
		sbuf_release(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

int cairn_seed(cairn_db *db, const char *const *paths, size_t n,
	       const cairn_seed_opts *opts, cairn_seed_report *out)
{
	static const cairn_seed_opts none;
	struct run r;
	struct old *o = NULL;
	struct smap oldmap;
	size_t no = 0, i, cap = 0, nconf = 0;
	char real[PATH_MAX], **conf = NULL;
	const char **all = NULL;
	int rc, own_batch = 0, defaults = 0, scan = 0;
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
	if (n == 0 && opts->default_paths) {
		defaults = 1;
		paths = opts->default_paths;
		n = opts->n_default_paths;
	} else if (n == 0) {
		/* the tools' own folders, the default ones, and a scan */
		defaults = 1;
		scan = 1;
		rc = seed_config_dirs(r.root, &conf, &nconf);
		all = util_calloc(nconf + ARRAY_SIZE(default_paths) + 1,
				  sizeof(*all));
		if (rc || !all) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < nconf; i++)
			all[n++] = conf[i];
		for (i = 0; i < ARRAY_SIZE(default_paths); i++)
			all[n++] = default_paths[i];
		paths = all;
	}
	if (!opts->no_git) {
		const char *argv[] = { "git", "-C", r.root, "rev-parse",
				       "--is-inside-work-tree", NULL };

		r.git = run_git(argv, git_out, sizeof(git_out)) == 0 &&
			strcmp(git_out, "true") == 0;
	}
	/* phase 1: read */
	rc = collect(&r, paths, n, defaults, scan);
	if (rc)
		goto out;
	/* a folder the tools are configured with holds ADRs */
	for (i = 0; i < r.nfiles; i++) {
		size_t k;

		for (k = 0; k < nconf; k++) {
			size_t cl = strlen(conf[k]);

			if (strncmp(r.files[i].rel, conf[k], cl) == 0 &&
			    r.files[i].rel[cl] == '/')
				r.files[i].found = 1;
		}
	}
	for (i = 0; i < r.nfiles && rc == CAIRN_OK; i++) {
		rc = read_file(&r, i);
		if (opts->progress)
			opts->progress(opts->user, i + 1, r.nfiles);
	}
	if (rc == CAIRN_OK)
		rc = decide_dates(&r);
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
	for (i = 0; i < r.nfiles; i++)
		out->files += r.files[i].skipped == NULL;
	for (i = 0; i < r.nchunks && rc == CAIRN_OK; i++) {
		struct chunk *c = &r.chunks[i];
		struct sfile *f = &r.files[c->file];
		size_t oi;

		if (f->failed) {
			c->action = -1; /* not written, provenance untouched */
			continue;
		}
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
	/* the report's per-file part, before anything is written: a
	 * failure after the commit must not be one of the seed */
	if (r.nfiles > 0)
		rc = report_sources(&r, out);
	if (rc == CAIRN_OK && out->files == 0) {
		out->searched = searched(paths, n, scan);
		if (!out->searched)
			rc = CAIRN_NOMEM;
	}
	if (rc)
		goto out;
	/* --strict: any error writes nothing; else the files with errors
	 * are skipped (their records kept as they were) */
	if (r.nerr > 0 && opts->strict) {
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
	for (i = 0; i < nconf; i++)
		cairn_free(conf[i]);
	cairn_free(conf);
	cairn_free(all);
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
