/*
 * seed.c -- file-backed records from Markdown: ADRs, decision records,
 * facts files and notes (SPEC 4.1; user guide: docs/SEED.md).
 *
 * Layer: above store (it reads the stored file-backed records with its own
 * SELECTs on db->sql; every write goes through the store's gate:
 * store_file_update/_retire/_provenance and cairn_record_write for new
 * records); below the CLI. Uses md4c to
 * parse Markdown, libyaml for front matter, and runs `git log` once per
 * file for provenance.
 *
 * The run has three phases:
 *   1. read: find the files (seed_walk.c: the paths, the tools' folders,
 *      the workspace scan), parse each one (seed_md.c) into chunks
 *      (seed_chunk.c) with provenance, a derived id and a content hash,
 *      its status through the table (seed_status.c) and its date
 *      (seed_date.c); resolve links (seed_links.c); collect every error;
 *   2. plan: compare with the file-backed records already stored: each
 *      chunk is new, changed or unchanged; a stored file-backed record under
 *      the seeded paths that no chunk produces is retired; a file with an
 *      error is left out, its records neither changed nor retired;
 *   3. write: unless this is a dry run (or --strict and a file had an
 *      error), all in one transaction.
 *
 * seed_run.h holds the run's state the parts share.
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
 * Must never: write anything on a dry run or (strict) after an error;
 * write a file that had an error; follow
 * symlinks or walk more than SEED_MAX_DEPTH directories deep; run a shell
 * (git is started with an argument vector).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <md4c.h>

#include "secret.h"
#include "drift.h"
#include "seed_run.h"
#include "words.h"

extern char **environ;

static const char *const default_paths[] = {
	"docs/decisions", "docs/adr", "doc/adr", "docs/architecture/decisions",
	".cairn/records",
	/* where real repositories keep them */
	"docs/adrs", "doc/adrs", "docs/architecture/adr",
	"docs/architecture/adrs", "doc/architecture/decisions",
	"docs/architecture-decisions", "docs/architecture-decision-records",
	"architecture-decision-record", "architecture-decision-records",
	"adr", "adrs", "decisions", "doc/decisions",
};

/* ================================================================ helpers */

static size_t str_hash(const char *s)
{
	size_t h = 1469598103934665603ULL; /* FNV-1a 64 */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

int seed_smap_get(const struct smap *m, const char *k, size_t *v)
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
int seed_smap_put(struct smap *m, const char *k, size_t v)
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

void seed_smap_release(struct smap *m)
{
	cairn_free(m->k);
	cairn_free(m->v);
	memset(m, 0, sizeof(*m));
}

/* A record id from a seed string: "f" + 15 hex digits of its SHA-256. */
char *seed_derive_id(const char *seed, size_t len)
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

/* Add "path:line: error|warning: text" to the run's messages. */
void seed_msg(struct run *r, int error, int rc, const char *path,
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

/* ================================================================== files */

static const char *static_kind(const char *k)
{
	static const char *const kinds[] = { WORDS_ARRAY(CAIRN_KINDS) };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(kinds[i], k) == 0)
			return kinds[i];
	return NULL;
}

/* Does rel have a folder named name (case-insensitive)? */
static int has_folder(const char *rel, const char *name)
{
	size_t n = strlen(name);
	const char *p = rel;

	for (;;) {
		const char *e = strchr(p, '/');

		if (!e)
			return 0; /* the last part is the file */
		if ((size_t)(e - p) == n && seed_word_eq(p, n, name))
			return 1;
		p = e + 1;
	}
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
	/* a folder named adr, adrs or decisions anywhere (any case) */
	if (has_folder(rel, "adr") || has_folder(rel, "adrs"))
		return "adr";
	/* architecture-decision-record(s), architecture-decisions,
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

int seed_ends_with_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && seed_word_eq(s + n - m, m, suffix);
}

/* The base name of a path. */
const char *seed_base_name(const char *rel)
{
	const char *b = strrchr(rel, '/');

	return b ? b + 1 : rel;
}

/* README.md, index.md (.markdown, .mdx): an index page, unless an ADR. */
int seed_index_name(const char *name)
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

static int has_template(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i++)
		if (seed_word_eq(s + i, 8, "template"))
			return 1;
	return 0;
}

/* Does f's name say "template": its file name, for "<slug>/index.md" or
 * "<slug>/README.md" the slug, or its H1 ("Decision record template by
 * Michael Nygard")? */
static int name_has_template(const struct sfile *f)
{
	const char *name = seed_base_name(f->rel);

	if (has_template(name, strlen(name)))
		return 1;
	if (seed_index_name(name) && name > f->rel) {
		const char *slug = name - 1;

		while (slug > f->rel && slug[-1] != '/')
			slug--;
		if (has_template(slug, (size_t)(name - 1 - slug)))
			return 1;
	}
	return f->h1 && has_template(f->h1, strlen(f->h1));
}

/*
 * File title: front matter, first H1, else the file name (for a
 * folder-per-ADR "<slug>/index.md", the folder's name).
 */
static char *file_title(const struct front *fm, const char *h1,
			const char *rel)
{
	const char *base = seed_base_name(rel);
	size_t n;

	if (fm->v[FM_TITLE] && *fm->v[FM_TITLE])
		return seed_dup_trim(fm->v[FM_TITLE], strlen(fm->v[FM_TITLE]));
	if (h1 && *h1) {
		n = strcspn(h1, "\n");
		return util_strndup(h1, n > SEED_TITLE_CHARS ? SEED_TITLE_CHARS
							     : n);
	}
	if (seed_index_name(base) && base > rel) {
		const char *d = base - 1, *s = d;

		while (s > rel && s[-1] != '/')
			s--;
		return util_strndup(s, (size_t)(d - s));
	}
	n = strlen(base);
	if (seed_ends_with_ci(base, ".markdown"))
		n -= 9;
	else if (seed_ends_with_ci(base, ".mdx"))
		n -= 4;
	else if (seed_ends_with_ci(base, ".md"))
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

int seed_id_ok(const char *s)
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
	/* "What is the status, such as proposed, accepted, …?": the
	 * template's prompt, never a status */
	if (!f->named && seed_status_prompt(text, n)) {
		f->skipped = "a template (its status is a question: the "
			     "template's prompt left in)";
		return 1;
	}
	if (seed_status_map(text, n, &ss) != CAIRN_OK) {
		if (!f->named && name_has_template(f)) {
			f->skipped = "a template (its name or title says so "
				     "and its status is no status)";
			return 1;
		}
		seed_msg(r, 1, CAIRN_INVALID, f->rel, line,
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
 * The steps of read_file: each returns CAIRN_OK to go on, READ_STOP when
 * the file ends here without a failure of the run (an error in the file,
 * reported, or a file skipped), or a code of the run's own failure (out of
 * memory).
 */
#define READ_STOP (-1)

/*
 * File f's text into *raw (as read) and *text, x (no BOM, LF line ends, so
 * line numbers do not move; its line index built): valid UTF-8 without NUL.
 * The caller frees *raw, *text and x's tables.
 */
static int read_text(struct run *r, struct sfile *f, char **raw, char **text,
		     struct text *x)
{
	struct sbuf abs = SBUF_INIT;
	char err[512], *t;
	size_t len = 0, i, k;
	long bad;
	const char *nul;
	int rc;

	sbuf_addf(&abs, "%s/%s", r->root, f->rel);
	if (abs.err)
		return CAIRN_NOMEM;
	rc = util_read_file(abs.buf, SEED_MAX_FILE, raw, &len, err,
			    sizeof(err));
	sbuf_release(&abs);
	if (rc) {
		if (rc == CAIRN_NOMEM)
			return rc;
		seed_msg(r, 1, rc, f->rel, 0, "%s",
			rc == CAIRN_TOOBIG
				? "file is over the 4 MiB limit of a seeded "
				  "file (SEED_MAX_FILE): split it"
				: err);
		return READ_STOP;
	}
	util_sha256_hex(*raw, len, f->sha);
	t = *text = cairn_malloc(len + 1);
	if (!t)
		return CAIRN_NOMEM;
	i = (len >= 3 && memcmp(*raw, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
	for (k = 0; i < len; i++)
		if (!((*raw)[i] == '\r' && i + 1 < len && (*raw)[i + 1] == '\n'))
			t[k++] = (*raw)[i] == '\r' ? '\n' : (*raw)[i];
	t[k] = '\0';
	x->t = t;
	x->len = k;
	rc = text_index(x);
	if (rc)
		return rc;
	bad = util_utf8_invalid_at(t, k);
	nul = memchr(t, '\0', k);
	if (bad >= 0) {
		seed_msg(r, 1, CAIRN_INVALID, f->rel,
			seed_line_of(x->ls, x->nls, (size_t)bad),
			"not valid UTF-8 (byte %ld)", bad);
		return READ_STOP;
	}
	/* found by tests/fuzz/fuzz_seed.c: texts are C strings */
	if (nul) {
		seed_msg(r, 1, CAIRN_INVALID, f->rel,
			seed_line_of(x->ls, x->nls, (size_t)(nul - t)),
			"holds a NUL byte (byte %ld): not a text file",
			(long)(nul - t));
		return READ_STOP;
	}
	return CAIRN_OK;
}

/*
 * The file's H1: the first level-1 heading with text; "<!-- -->" when the
 * first one is only a comment (a template); NULL when there is none.
 */
static const char *file_h1(const struct mscan *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->b[i].type == MD_BLOCK_H && m->b[i].level == 1 &&
		    m->b[i].clean && *m->b[i].clean)
			return m->b[i].clean;
	/* a template is skipped by its content: a placeholder title (or an
	 * H1 that is only a comment), or a placeholder date */
	for (i = 0; i < m->n; i++)
		if (m->b[i].type == MD_BLOCK_H && m->b[i].level == 1) {
			if (m->b[i].text && *m->b[i].text && m->b[i].clean &&
			    !*m->b[i].clean)
				return "<!-- -->";
			break;
		}
	return NULL;
}

/* f->kind (front matter, else the folder) and *is_facts (a facts file). */
static int file_kind(struct run *r, struct sfile *f, const struct front *fm,
		     int *is_facts)
{
	const char *kind;

	if (fm->v[FM_KIND]) {
		kind = static_kind(fm->v[FM_KIND]);
		if (!kind) {
			seed_msg(r, 1, CAIRN_INVALID, f->rel, fm->line[FM_KIND],
				"unknown kind '%s' (expected one of: "
				"decision, adr, fact, rule, procedure, "
				"capability, finding, history, event, note)",
				fm->v[FM_KIND]);
			return READ_STOP;
		}
	} else {
		/* found by a tool's configuration or by content: an ADR */
		kind = f->found ? "adr" : folder_kind(f->rel);
	}
	*is_facts = (fm->v[FM_FORMAT] &&
		     strcmp(fm->v[FM_FORMAT], "facts") == 0) ||
		    seed_ends_with_ci(f->rel, ".facts.md");
	if (fm->v[FM_FORMAT] && strcmp(fm->v[FM_FORMAT], "facts") != 0) {
		seed_msg(r, 1, CAIRN_INVALID, f->rel, fm->line[FM_FORMAT],
			"unknown format '%s' (expected facts)",
			fm->v[FM_FORMAT]);
		return READ_STOP;
	}
	if (*is_facts && !fm->v[FM_KIND])
		kind = "fact";
	f->kind = util_strdup(kind);
	return f->kind ? CAIRN_OK : CAIRN_NOMEM;
}

/*
 * f's status: the front matter's, else the text's (fl), else accepted;
 * then the "Superseded by X" and "Supersedes X" lines of the text. An
 * error reported since the file began (r->nerr > nbefore) stops it.
 */
static int file_status(struct run *r, struct sfile *f, const struct front *fm,
		       const struct seed_fields *fl, size_t nbefore)
{
	int rc = CAIRN_OK;

	f->status = "accepted";
	f->rule = "no status";
	if (fm->v[FM_STATUS]) {
		char *st = NULL, *href = NULL;
		int skip;

		rc = unlink_md(fm->v[FM_STATUS], &st, &href);
		skip = rc == CAIRN_OK &&
		       map_status(r, f, st, strlen(st), fm->line[FM_STATUS],
				  NULL, href, &rc);
		cairn_free(st);
		cairn_free(href);
		if (skip)
			return rc ? rc : READ_STOP;
	} else if (fl->status && fl->unchecked) {
		/* "- [ ] Proposed\n- [ ] Accepted": which one is not said */
		f->status = "unverified";
		f->rule = "placeholder";
		f->status_line = fl->status_line;
		f->status_text = util_strndup(fl->status, fl->status_len);
		if (!f->status_text)
			return CAIRN_NOMEM;
	} else if (fl->status) {
		if (map_status(r, f, fl->status, fl->status_len,
			       fl->status_line, fl->status_para, NULL, &rc))
			return rc ? rc : READ_STOP;
	}
	if (rc)
		return rc;
	if (r->nerr > nbefore)
		return READ_STOP;
	/* "Superseded by X" and "Supersedes X" lines elsewhere in the text */
	if (fl->by && !f->target && (!f->rule ||
				     strcmp(f->rule, "partly superseded") != 0)) {
		f->status = "superseded";
		f->outcome = NULL;
		f->rule = "a 'Superseded by' line";
		f->status_line = fl->by_line;
		f->target = util_strndup(fl->by, fl->by_len);
		f->target_href = fl->by_href ? util_strdup(fl->by_href) : NULL;
		if (!f->target || (fl->by_href && !f->target_href))
			return CAIRN_NOMEM;
	}
	if (fl->sups && !f->supersedes_raw) {
		f->supersedes_raw = util_strndup(fl->sups, fl->sups_len);
		f->supersedes_href = fl->sups_href ? util_strdup(fl->sups_href)
						   : NULL;
		f->supersedes_line = fl->sups_line;
		if (!f->supersedes_raw || (fl->sups_href && !f->supersedes_href))
			return CAIRN_NOMEM;
	}
	return CAIRN_OK;
}

/* f's id (front matter, else derived from the path) and key. */
static int file_id(struct run *r, struct sfile *f, const struct front *fm)
{
	if (fm->v[FM_ID]) {
		if (!seed_id_ok(fm->v[FM_ID])) {
			seed_msg(r, 1, CAIRN_INVALID, f->rel, fm->line[FM_ID],
				"invalid id '%s' (1-%d of A-Z a-z 0-9 . _ : -)",
				fm->v[FM_ID], SEED_MAX_ID);
			return READ_STOP;
		}
		f->id = util_strdup(fm->v[FM_ID]);
	} else {
		struct sbuf sb = SBUF_INIT;

		sbuf_addf(&sb, "file%c%s", '\0', f->rel);
		f->id = sb.err ? NULL : seed_derive_id(sb.buf, sb.len);
		sbuf_release(&sb);
	}
	if (!f->id)
		return CAIRN_NOMEM;
	if (fm->v[FM_KEY]) {
		f->key = seed_dup_trim(fm->v[FM_KEY], strlen(fm->v[FM_KEY]));
		if (!f->key)
			return CAIRN_NOMEM;
	}
	return CAIRN_OK;
}

/*
 * f's date: the front matter's, else the text's (fl), else one in the
 * status ("Accepted on 2020-01-02"), through the same forms.
 */
static int file_date(struct run *r, struct sfile *f, const struct front *fm,
		     const struct seed_fields *fl)
{
	int rc;

	if (fm->v[FM_DATE]) {
		struct seed_date d;

		if (util_iso_valid(fm->v[FM_DATE])) { /* as the store checks */
			f->time = util_strdup(fm->v[FM_DATE]); /* as written */
			f->date_line = fm->line[FM_DATE];
			if (!f->time)
				return CAIRN_NOMEM;
		} else if (seed_parse_date(fm->v[FM_DATE],
					   strlen(fm->v[FM_DATE]), &d) == 0) {
			rc = take_date(r, f, &d, fm->line[FM_DATE]);
			if (rc)
				return rc;
		} else {
			seed_msg(r, 0, CAIRN_OK, f->rel, fm->line[FM_DATE],
				"date '%s' is in no form cairn reads (see "
				"docs/SEED.md): %s",
				fm->v[FM_DATE],
				fl->date ? "the date in the text is used"
					 : "the record has no date");
		}
	}
	if (!f->time && fl->date) {
		rc = take_date(r, f, &fl->d, fl->date_line);
		if (rc)
			return rc;
	}
	/* "Accepted on 2020-01-02", "Accepted (2020-01-02)": the status's date */
	if (!f->time && f->status_text) {
		const char *p;

		for (p = f->status_text; *p; p++) {
			struct seed_date d;

			if (*p < '0' || *p > '9' ||
			    (p > f->status_text && seed_alnum((unsigned char)p[-1])))
				continue;
			if (seed_parse_date(p, strlen(p), &d) == 0)
				return take_date(r, f, &d, f->status_line);
		}
	}
	return CAIRN_OK;
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
	struct secret_hit hit;
	char *raw = NULL, *t = NULL;
	const char *h1;
	size_t nbefore = r->nerr;
	long first;
	int rc, is_facts = 0;

	memset(&fm, 0, sizeof(fm));
	memset(&m, 0, sizeof(m));
	memset(&x, 0, sizeof(x));
	memset(&fe, 0, sizeof(fe));
	memset(&fw, 0, sizeof(fw));
	f->first = r->nchunks;
	rc = read_text(r, f, &raw, &t, &x);
	if (rc)
		goto out;
	/* one folder per ADR often holds index.md and a byte-identical
	 * README.md: the twin read first is seeded, this one is not */
	if (!f->named) {
		size_t j, dl = seed_dir_len(f->rel);

		for (j = 0; j < fi; j++) {
			const struct sfile *g = &r->files[j];

			if (g->skipped || g->failed || g->n == 0 ||
			    strcmp(g->sha, f->sha) != 0 ||
			    seed_dir_len(g->rel) != dl ||
			    strncmp(g->rel, f->rel, dl) != 0)
				continue;
			struct sbuf sb = SBUF_INIT;

			sbuf_addf(&sb, "a byte-identical twin of %s (seeded "
				       "once)", seed_base_name(g->rel));
			f->skip_note = sb.err ? NULL : sbuf_detach(&sb, NULL);
			sbuf_release(&sb);
			if (!f->skip_note) {
				rc = CAIRN_NOMEM;
				goto out;
			}
			f->skipped = f->skip_note;
			goto out;
		}
	}
	/* an index page (README.md, index.md) is read only when it is a
	 * decision record itself (one folder per ADR) */
	if (!f->named && seed_index_name(seed_base_name(f->rel)) &&
	    !seed_looks_like_adr(x.t, x.len)) {
		f->skipped = "an index page (README/index that is no decision "
			     "record)";
		goto out;
	}
	if (secret_scan(x.t, x.len, &hit, 1) > 0) {
		if (secret_unscanned(&hit)) {
			rc = CAIRN_NOMEM;
			goto out;
		}
		seed_msg(r, 1, CAIRN_SECRET, f->rel, (long)hit.line,
			"refusing to store a secret: %s (remove it from the "
			"file; seed never stores secrets)",
			hit.kind);
		goto out;
	}
	rc = seed_front_parse(x.t, x.len, &fm, &fe, &fw);
	if (rc == CAIRN_INVALID) {
		seed_msg(r, 1, CAIRN_INVALID, f->rel, fe.line, "%s", fe.text);
		rc = CAIRN_OK;
		goto out;
	}
	if (rc)
		goto out;
	first = fm.end + 1;
	rc = seed_ms_parse(&m, x.t + fm.body, x.len - fm.body, fm.body, x.ls,
			   x.nls);
	if (rc == CAIRN_INVALID) {
		seed_msg(r, 1, rc, f->rel, 0, "cannot parse the Markdown");
		rc = CAIRN_OK;
		goto out;
	}
	if (rc)
		goto out;
	h1 = file_h1(&m);
	if (!f->named && (seed_placeholder_title(fm.v[FM_TITLE]) ||
			  seed_placeholder_title(h1))) {
		f->skipped = "a template (its title is a placeholder)";
		goto out;
	}
	if (fw.text[0]) /* not for a template: it is skipped anyway */
		seed_msg(r, 0, CAIRN_OK, f->rel, fw.line, "%s", fw.text);
	rc = file_kind(r, f, &fm, &is_facts);
	if (rc)
		goto out;
	f->title = file_title(&fm, h1, f->rel);
	f->h1 = h1 ? util_strndup(h1, strcspn(h1, "\n")) : NULL;
	if (!f->title || (h1 && !f->h1)) {
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
	if (!f->named && fl.date_raw && !fl.date &&
	    seed_placeholder_date(fl.date_raw, fl.date_raw_len)) {
		f->skipped = "a template (its date is a placeholder)";
		goto out;
	}
	rc = file_status(r, f, &fm, &fl, nbefore);
	if (rc == CAIRN_OK)
		rc = file_id(r, f, &fm);
	if (rc == CAIRN_OK)
		rc = file_date(r, f, &fm, &fl);
	if (rc)
		goto out;
	if (is_facts)
		rc = seed_chunk_facts(r, fi, &x, &m);
	else
		rc = seed_chunk_document(r, fi, &x, &m, first);
	if (rc == CAIRN_INVALID)
		rc = CAIRN_OK; /* reported */
	if (rc)
		goto out;
	f->commit = git_commit(r, f->rel);
out:
	if (rc == READ_STOP)
		rc = CAIRN_OK; /* reported, or skipped */
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

/*
 * Write the plan: retire, update, refresh provenance, insert -- each
 * through the store's write gate (store.h: store_file_*, and
 * cairn_record_write for new records).
 */
static int write_plan(struct run *r, struct old *o, size_t no)
{
	char now[32];
	size_t i;
	int rc = CAIRN_OK;

	util_now_iso(now, sizeof(now));
	for (i = 0; i < no && rc == CAIRN_OK; i++) {
		if (o[i].seen || !in_scope(r, o[i].path) ||
		    strcmp(o[i].status, "retired") == 0)
			continue;
		rc = store_file_retire(r->db, o[i].id, now);
	}
	for (i = 0; i < r->nchunks && rc == CAIRN_OK; i++) {
		struct chunk *c = &r->chunks[i];
		struct sfile *f = &r->files[c->file];
		cairn_record rec;

		if (c->action != CAIRN_SEED_CHANGED)
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.id = c->id;
		rec.kind = f->kind;
		rec.key = c->key;
		rec.title = c->title;
		rec.body = c->body;
		rec.status = (char *)c->status;
		rec.src_path = f->rel;
		rec.src_heading = c->heading;
		rec.src_line = c->line;
		rec.src_commit = f->commit;
		rec.time = f->time;
		rec.supersedes = f->supersedes;
		rec.superseded_by = c->superseded_by;
		rec.hash = c->hash;
		rc = store_file_update(r->db, &rec, now);
	}
	/* provenance refresh for unchanged records (no new revision) */
	for (i = 0; i < no && rc == CAIRN_OK; i++) {
		size_t ci;
		struct chunk *c;
		struct sfile *f;
		cairn_record rec;

		if (!o[i].seen || !seed_smap_get(&r->ids, o[i].id, &ci))
			continue;
		c = &r->chunks[ci];
		f = &r->files[c->file];
		if (c->action != CAIRN_SEED_UNCHANGED)
			continue;
		if (util_streq(o[i].path, f->rel) &&
		    util_streq(o[i].heading, c->heading) &&
		    o[i].line == c->line && util_streq(o[i].commit, f->commit))
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.id = c->id;
		rec.src_path = f->rel;
		rec.src_heading = c->heading;
		rec.src_line = c->line;
		rec.src_commit = f->commit;
		rc = store_file_provenance(r->db, &rec);
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
		/* a record a team server gave this id never stops a seed:
		 * the file's record takes it (store_pull_yield_id) */
		{
			int dropped = 0;

			rc = store_pull_yield_id(r->db, c->id, &dropped);
			if (rc == CAIRN_OK && dropped)
				seed_msg(r, 0, CAIRN_OK, f->rel, c->line,
					 "id '%s' was held by a record pulled "
					 "from the team server: dropped here, "
					 "the file's record takes it",
					 c->id);
		}
		/* KEEP_TIMES: store our hash and link; times are "now" */
		if (rc == CAIRN_OK)
			rc = cairn_record_write(r->db, &rec,
						CAIRN_WRITE_KEEP_TIMES, NULL);
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
			seed_msg(r, 1, rc, f->rel, c->line, "%s", why);
			store_error(r->db, rc, "%s:%ld: %s", f->rel, c->line,
				    why);
		}
	}
	/*
	 * Seeding re-reads each file: every record it kept or changed agrees
	 * with its file again, so its references are recorded anew (new ones
	 * were, by cairn_record_write).
	 */
	for (i = 0; i < r->nchunks && rc == CAIRN_OK; i++) {
		struct chunk *c = &r->chunks[i];

		if (c->action == CAIRN_SEED_CHANGED ||
		    c->action == CAIRN_SEED_UNCHANGED)
			rc = drift_note(r->db, c->id, "write");
	}
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
			    !(seed_smap_get(oldmap, holder, &oi) && !o[oi].seen &&
			      in_scope(r, o[oi].path))) {
				struct sfile *f = &r->files[c->file];

				seed_msg(r, 1, CAIRN_INVALID, f->rel, c->line,
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

static void run_release(struct run *r)
{
	size_t i;

	for (i = 0; i < r->nchunks; i++)
		seed_chunk_release(&r->chunks[i]);
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
		cairn_free(f->skip_note);
		cairn_free(f->status_text);
		cairn_free(f->why);
	}
	cairn_free(r->files);
	for (i = 0; i < r->nscopes; i++)
		cairn_free(r->scopes[i]);
	cairn_free(r->scopes);
	cairn_free(r->flat);
	seed_smap_release(&r->ids);
	seed_smap_release(&r->paths);
	seed_smap_release(&r->keys);
	sbuf_release(&r->msgs);
	cairn_free(r->root);
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
		f->date_warn = 1;
	}
	return CAIRN_OK;
}

/*
 * Warn about each date whose order decide_dates guessed, once: only for a
 * file with a new or changed record (a re-seed of an unchanged file is
 * silent; the warning came when it was first seeded or last changed).
 */
static void warn_dates(struct run *r)
{
	size_t i, c;

	for (i = 0; i < r->nfiles; i++) {
		struct sfile *f = &r->files[i];
		int changed = 0;

		if (!f->date_warn)
			continue;
		for (c = f->first; c < f->first + f->n; c++)
			changed |= r->chunks[c].action == CAIRN_SEED_NEW ||
				   r->chunks[c].action == CAIRN_SEED_CHANGED;
		if (!changed)
			continue;
		seed_msg(r, 0, CAIRN_OK, f->rel, f->date_line,
			"date %02d/%02d/%04d is day/month or month/day: read "
			"as %s (%s); write it as YYYY-MM-DD to be sure",
			f->date.a, f->date.b, f->date.y, f->date.iso,
			r->dayfirst > 0	  ? "day first, as other dates here"
			: r->dayfirst < 0 ? "month first, as other dates here"
					  : "day first, as adr-tools wrote it");
	}
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

/*
 * Phase 1 of cairn_seed: find the files (the paths, or the defaults and
 * a scan), mark those in a folder the tools are configured with (conf),
 * read each into chunks, then decide the dates and resolve the links.
 */
static int read_all(struct run *r, const char *const *paths, size_t n,
		    int defaults, int scan, char **conf, size_t nconf)
{
	const cairn_seed_opts *opts = r->opts;
	size_t i;
	int rc = seed_collect(r, paths, n, defaults, scan);

	if (rc)
		return rc;
	/* a folder the tools are configured with holds ADRs */
	for (i = 0; i < r->nfiles; i++) {
		size_t k;

		for (k = 0; k < nconf; k++) {
			size_t cl = strlen(conf[k]);

			if (strncmp(r->files[i].rel, conf[k], cl) == 0 &&
			    r->files[i].rel[cl] == '/')
				r->files[i].found = 1;
		}
	}
	for (i = 0; i < r->nfiles && rc == CAIRN_OK; i++) {
		rc = read_file(r, i);
		if (opts->progress)
			opts->progress(opts->user, i + 1, r->nfiles);
	}
	if (rc == CAIRN_OK)
		rc = decide_dates(r);
	if (rc == CAIRN_OK)
		rc = seed_resolve_links(r);
	return rc;
}

/*
 * Phase 2 of cairn_seed, after the old records (o, no; oldmap: id ->
 * index) are loaded: each chunk's action (new, changed, unchanged; none
 * for a file that failed, whose old records are then kept), the old
 * records no file holds any more (retired), all into the report.
 */
static int plan(struct run *r, struct old *o, size_t no,
		const struct smap *oldmap, cairn_seed_report *out)
{
	size_t i, cap = 0;
	int rc = CAIRN_OK;

	for (i = 0; i < r->nchunks && rc == CAIRN_OK; i++) {
		struct chunk *c = &r->chunks[i];
		struct sfile *f = &r->files[c->file];
		size_t oi;

		if (f->failed) {
			c->action = -1; /* not written, provenance untouched */
			continue;
		}
		if (seed_smap_get(oldmap, c->id, &oi)) {
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
	for (i = 0; i < r->nfiles; i++) {
		size_t ci, oi;

		if (!r->files[i].failed)
			continue;
		for (oi = 0; oi < no; oi++)
			if (util_streq(o[oi].path, r->files[i].rel))
				o[oi].seen = 1;
		for (ci = r->files[i].first;
		     ci < r->files[i].first + r->files[i].n; ci++)
			if (seed_smap_get(oldmap, r->chunks[ci].id, &oi))
				o[oi].seen = 1;
	}
	for (i = 0; i < no && rc == CAIRN_OK; i++) {
		if (o[i].seen || !in_scope(r, o[i].path) ||
		    strcmp(o[i].status, "retired") == 0)
			continue;
		rc = report_add(out, &cap, CAIRN_SEED_RETIRED, o[i].id,
				o[i].path, o[i].line, o[i].heading, o[i].title,
				o[i].kind, "retired");
	}
	return rc;
}

/* Phase 3 of cairn_seed: the plan written in one transaction (the
 * caller's batch, else one of its own). */
static int write_batch(struct run *r, struct old *o, size_t no)
{
	struct cairn_db *db = r->db;
	int rc, own_batch = 0;

	if (!db->in_batch) {
		rc = cairn_begin(db);
		if (rc)
			return rc;
		own_batch = 1;
	}
	rc = write_plan(r, o, no);
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
	return rc;
}

int cairn_seed(cairn_db *db, const char *const *paths, size_t n,
	       const cairn_seed_opts *opts, cairn_seed_report *out)
{
	static const cairn_seed_opts none;
	struct run r;
	struct old *o = NULL;
	struct smap oldmap;
	size_t no = 0, i, nconf = 0;
	char real[PATH_MAX], **conf = NULL;
	const char **all = NULL;
	int rc, defaults = 0, scan = 0;
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
	rc = read_all(&r, paths, n, defaults, scan, conf, nconf);
	if (rc)
		goto out;
	/* phase 2: plan */
	rc = load_old(&r, &o, &no);
	for (i = 0; i < no && rc == CAIRN_OK; i++)
		rc = seed_smap_put(&oldmap, o[i].id, i);
	if (rc == CAIRN_OK)
		rc = check_keys(&r, o, no, &oldmap);
	if (rc)
		goto out;
	for (i = 0; i < r.nfiles; i++)
		out->files += r.files[i].skipped == NULL;
	rc = plan(&r, o, no, &oldmap, out);
	if (rc)
		goto out;
	warn_dates(&r);
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
	rc = write_batch(&r, o, no);
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
	seed_smap_release(&oldmap);
	run_release(&r);
	return rc;
}
