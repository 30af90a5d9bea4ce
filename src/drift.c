/*
 * drift.c -- which repository files a record refers to, and whether they
 * changed since it was recorded (drift.h). Public: cairn_drift_check,
 * cairn_drift_free, cairn_record_verify.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sqlite3.h>

#include "drift.h"
#include "internal.h"
#include "store.h"

#define BLOB_LIMIT ((size_t)64 << 20)
#define DRIFT_CHUNK_FILE_MAX ((size_t)4 << 20) /* a seeded file: SEED_MAX_FILE */

/* ------------------------------------------------------------- the paths */

struct pathset {
	const char *root;
	char paths[DRIFT_MAX_REFS][PATH_MAX];
	size_t n;
};

/* 1 when root/rel is a regular file inside root, outside .git and .cairn. */
static int repo_file(const char *root, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;
	const char *s;

	if (!*rel || *rel == '/' || strlen(rel) >= PATH_MAX / 2)
		return 0;
	for (s = rel; *s; s++)
		if ((unsigned char)*s < 0x20)
			return 0;
	/* no component may be "..", ".git" or ".cairn" */
	for (s = rel; *s;) {
		size_t n = strcspn(s, "/");

		if ((n == 2 && memcmp(s, "..", 2) == 0) ||
		    (n == 4 && memcmp(s, ".git", 4) == 0) ||
		    (n == 6 && memcmp(s, ".cairn", 6) == 0))
			return 0;
		s += n;
		while (*s == '/')
			s++;
	}
	if ((size_t)snprintf(p, sizeof(p), "%s/%s", root, rel) >= sizeof(p))
		return 0;
	return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void add_path(struct pathset *ps, const char *rel, size_t len)
{
	char buf[PATH_MAX];

	while (len >= 2 && rel[0] == '.' && rel[1] == '/') {
		rel += 2;
		len -= 2;
	}
	if (ps->n >= DRIFT_MAX_REFS || len == 0 || len >= sizeof(buf))
		return;
	memcpy(buf, rel, len);
	buf[len] = '\0';
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->paths[i], buf) == 0)
			return;
	if (!repo_file(ps->root, buf))
		return;
	memcpy(ps->paths[ps->n++], buf, len + 1);
}

/* Files whose name alone says they are part of a repository's tooling. */
static const char *const known_names[] = {
	"Makefile", "GNUmakefile", "makefile", "Dockerfile", "Justfile",
	"justfile", "Rakefile", "Taskfile.yml", "package.json", "Cargo.toml",
	"go.mod", "pyproject.toml", "setup.py", "docker-compose.yml",
	"docker-compose.yaml", "compose.yml", "compose.yaml", "Gemfile",
	"pom.xml", "build.gradle", "CMakeLists.txt", "Procfile",
};

static const char *const known_ext[] = {
	".sh", ".bash", ".py", ".rb", ".pl", ".js", ".mjs", ".ts", ".go",
	".rs", ".c", ".h", ".java", ".kt", ".sql", ".yml", ".yaml", ".json",
	".toml", ".ini", ".cfg", ".conf", ".mk", ".tf", ".md", ".txt", ".env",
	".service", ".xml", ".gradle", ".lock",
};

static int looks_like_path(const char *t, size_t n)
{
	size_t i;

	if (n < 2 || memchr(t, ':', n) || t[0] == '-' || t[0] == '$')
		return 0;
	for (i = 0; i < ARRAY_SIZE(known_names); i++) {
		size_t k = strlen(known_names[i]);

		if (n >= k && memcmp(t + n - k, known_names[i], k) == 0 &&
		    (n == k || t[n - k - 1] == '/'))
			return 1;
	}
	for (i = 0; i < ARRAY_SIZE(known_ext); i++) {
		size_t k = strlen(known_ext[i]);

		if (n > k && memcmp(t + n - k, known_ext[i], k) == 0)
			return 1;
	}
	return memchr(t, '/', n) != NULL;
}

/* Is the word at t (n bytes) equal to w? */
static int word_is(const char *t, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(t, w, n) == 0;
}

static void scan_text(struct pathset *ps, const char *s)
{
	static const char *const seps = " \t\r\n`'\"()[]{}<>,;|&=";
	const char *prev = NULL;
	size_t prevn = 0;

	while (s && *s && ps->n < DRIFT_MAX_REFS) {
		size_t n;

		s += strspn(s, seps);
		n = strcspn(s, seps);
		if (!n)
			break;
		{
			size_t m = n;

			/* a sentence's full stop or colon is not the path's */
			while (m > 0 && (s[m - 1] == '.' || s[m - 1] == ':' ||
					 s[m - 1] == '!' || s[m - 1] == '?'))
				m--;
			if (m && looks_like_path(s, m))
				add_path(ps, s, m);
		}
		/* commands whose file is implied */
		if (prev && word_is(prev, prevn, "make")) {
			add_path(ps, "Makefile", 8);
			add_path(ps, "GNUmakefile", 11);
			add_path(ps, "makefile", 8);
		}
		if (prev && (word_is(prev, prevn, "npm") ||
			     word_is(prev, prevn, "yarn") ||
			     word_is(prev, prevn, "pnpm")))
			add_path(ps, "package.json", 12);
		if (prev && word_is(prev, prevn, "cargo"))
			add_path(ps, "Cargo.toml", 10);
		if ((prev && word_is(prev, prevn, "docker") &&
		     word_is(s, n, "compose")) ||
		    word_is(s, n, "docker-compose")) {
			add_path(ps, "docker-compose.yml", 18);
			add_path(ps, "docker-compose.yaml", 19);
			add_path(ps, "compose.yml", 11);
			add_path(ps, "compose.yaml", 12);
		}
		prev = s;
		prevn = n;
		s += n;
	}
}

size_t drift_paths(const char *root, const char *kind, const char *title,
		   const char *body, const char *src_path,
		   void (*emit)(const char *path, void *arg), void *arg)
{
	struct pathset *ps;
	size_t n;

	(void)kind;
	if (!root)
		return 0;
	ps = util_calloc(1, sizeof(*ps));
	if (!ps)
		return 0;
	ps->root = root;
	if (src_path && *src_path)
		add_path(ps, src_path, strlen(src_path));
	scan_text(ps, title);
	scan_text(ps, body);
	for (size_t i = 0; i < ps->n; i++)
		emit(ps->paths[i], arg);
	n = ps->n;
	cairn_free(ps);
	return n;
}

/* ------------------------------------------------------------- the blobs */

static int blob_of(const void *data, size_t len, char out[41])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char head[32];
	int hl = snprintf(head, sizeof(head), "blob %zu", len);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok;

	if (!ctx)
		return -1;
	ok = EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1 &&
	     EVP_DigestUpdate(ctx, head, (size_t)hl + 1) == 1 &&
	     (len == 0 || EVP_DigestUpdate(ctx, data, len) == 1) &&
	     EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 20;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -1;
	util_hex(md, 20, out);
	return 0;
}

int drift_blob(const char *root, const char *path, char out[41])
{
	char p[PATH_MAX];
	struct stat st;
	char *data = NULL;
	size_t len = 0;
	int fd, rc;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", root, path) >= sizeof(p))
		return -1;
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > BLOB_LIMIT) {
		close(fd);
		return -1;
	}
	if (st.st_size > 0) {
		data = util_read_fd(fd, BLOB_LIMIT, &len);
		if (!data) {
			close(fd);
			return -1;
		}
	}
	close(fd);
	rc = blob_of(data ? data : "", len, out);
	cairn_free(data);
	return rc;
}

/* --------------------------------------------------------------- Git HEAD */

/* The Git directory of the repository holding root, into buf; 0 or -1. */
static int git_dir(const char *root, char *buf, size_t size)
{
	char dir[PATH_MAX], p[PATH_MAX + 8];
	struct stat st;

	if ((size_t)snprintf(dir, sizeof(dir), "%s", root) >= sizeof(dir))
		return -1;
	for (;;) {
		char *slash;

		if ((size_t)snprintf(p, sizeof(p), "%s/.git", dir) >= sizeof(p))
			return -1;
		if (stat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				return (size_t)snprintf(buf, size, "%s", p) < size ? 0 : -1;
			if (S_ISREG(st.st_mode)) {
				/* a worktree or submodule: "gitdir: PATH" */
				char *t = NULL, *e;
				size_t n;

				if (util_read_file(p, 4096, &t, &n, NULL, 0))
					return -1;
				e = t + strcspn(t, "\r\n");
				*e = '\0';
				if (strncmp(t, "gitdir: ", 8) != 0) {
					cairn_free(t);
					return -1;
				}
				{
					int w = t[8] == '/'
						? snprintf(buf, size, "%s", t + 8)
						: snprintf(buf, size, "%s/%s", dir, t + 8);

					cairn_free(t);
					return w >= 0 && (size_t)w < size ? 0 : -1;
				}
			}
		}
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return -1;
		*slash = '\0';
	}
}

/* Read one line of gitdir/name into out (trimmed); 0 or -1. */
static int read_line(const char *gitdir, const char *name, char *out,
		     size_t size)
{
	char p[PATH_MAX * 2];
	char *t = NULL;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", gitdir, name);
	if (util_read_file(p, 1 << 16, &t, &n, NULL, 0))
		return -1;
	t[strcspn(t, "\r\n")] = '\0';
	snprintf(out, size, "%s", t);
	cairn_free(t);
	return 0;
}

/* The commit HEAD names (40 hex) into out, or "" when unknown. */
static void git_head(const char *root, char out[41])
{
	char gd[PATH_MAX], line[512], common[PATH_MAX];

	out[0] = '\0';
	if (git_dir(root, gd, sizeof(gd)) || read_line(gd, "HEAD", line, sizeof(line)))
		return;
	if (strncmp(line, "ref: ", 5) == 0) {
		char ref[512], val[512];
		char *packed = NULL;
		size_t n;

		snprintf(ref, sizeof(ref), "%s", line + 5);
		/* a linked worktree keeps its refs in the common dir */
		if (read_line(gd, "commondir", common, sizeof(common)) == 0) {
			char c2[PATH_MAX * 2];
			int w = common[0] == '/'
				? snprintf(c2, sizeof(c2), "%s", common)
				: snprintf(c2, sizeof(c2), "%s/%s", gd, common);

			if (w < 0 || (size_t)w >= sizeof(gd) ||
			    (size_t)snprintf(gd, sizeof(gd), "%s", c2) >= sizeof(gd))
				return;
		}
		if (read_line(gd, ref, val, sizeof(val)) == 0) {
			if (strlen(val) == 40)
				memcpy(out, val, 41);
			return;
		}
		{
			char pr[PATH_MAX + 16];

			if ((size_t)snprintf(pr, sizeof(pr), "%s/packed-refs", gd) >=
				    sizeof(pr) ||
			    util_read_file(pr, 64 << 20, &packed, &n, NULL, 0))
				return;
		}
		for (char *l = packed; l && *l;) {
			char *e = l + strcspn(l, "\n");
			size_t rl = strlen(ref);

			if (e - l > 41 + (long)rl && l[40] == ' ' &&
			    (size_t)(e - l - 41) == rl &&
			    memcmp(l + 41, ref, rl) == 0) {
				memcpy(out, l, 40);
				out[40] = '\0';
				break;
			}
			l = *e ? e + 1 : e;
		}
		cairn_free(packed);
		return;
	}
	if (strlen(line) == 40)
		memcpy(out, line, 41);
}

/* ------------------------------------------------------------ recording */

struct note_ctx {
	struct cairn_db *db;
	sqlite3_stmt *ins;
	const char *id, *how, *head, *now;
	int rc;
};

static void note_one(const char *path, void *arg)
{
	struct note_ctx *c = arg;
	char blob[41];
	int src;

	if (c->rc)
		return;
	if (drift_blob(c->db->root, path, blob))
		return;
	sqlite3_reset(c->ins);
	sqlite3_bind_text(c->ins, 1, c->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(c->ins, 2, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(c->ins, 3, blob, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(c->ins, 4, c->head, -1, SQLITE_STATIC);
	sqlite3_bind_text(c->ins, 5, c->now, -1, SQLITE_STATIC);
	sqlite3_bind_text(c->ins, 6, c->how, -1, SQLITE_STATIC);
	src = sqlite3_step(c->ins);
	if (src != SQLITE_DONE)
		c->rc = store_sql_error(c->db, src, "recording a reference");
}

int drift_note(struct cairn_db *db, const char *id, const char *how)
{
	sqlite3_stmt *sel = NULL, *del = NULL;
	struct note_ctx c;
	char head[41], now[32], gd[PATH_MAX];
	int src, rc = CAIRN_OK;

	memset(&c, 0, sizeof(c));
#ifdef CAIRN_MUTATE_NO_DRIFT_NOTE
	return CAIRN_OK; /* negative control: nothing remembers its files */
#endif
	if (!db || !db->root || git_dir(db->root, gd, sizeof(gd)))
		return CAIRN_OK; /* outside Git there is no tree to compare */
	src = sqlite3_prepare_v2(db->sql,
				 "SELECT kind, title, body, src_path FROM "
				 "main.records WHERE id = ?1", -1, &sel, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(db->sql,
					 "DELETE FROM main.refs WHERE record_id = ?1",
					 -1, &del, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(
			db->sql,
			"INSERT OR REPLACE INTO main.refs (record_id, path, blob, "
			"commit_id, recorded, how) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
			-1, &c.ins, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "preparing the references");
		goto out;
	}
	sqlite3_bind_text(sel, 1, id, -1, SQLITE_STATIC);
	src = sqlite3_step(sel);
	if (src != SQLITE_ROW) {
		if (src != SQLITE_DONE)
			rc = store_sql_error(db, src, "reading a record");
		goto out; /* a global record: no references */
	}
	sqlite3_bind_text(del, 1, id, -1, SQLITE_STATIC);
	src = sqlite3_step(del);
	if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "replacing references");
		goto out;
	}
	git_head(db->root, head);
	util_now_iso(now, sizeof(now));
	c.db = db;
	c.id = id;
	c.how = how;
	c.head = head;
	c.now = now;
	drift_paths(db->root, (const char *)sqlite3_column_text(sel, 0),
		    (const char *)sqlite3_column_text(sel, 1),
		    (const char *)sqlite3_column_text(sel, 2),
		    (const char *)sqlite3_column_text(sel, 3), note_one, &c);
	rc = c.rc;
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(del);
	sqlite3_finalize(c.ins);
	return rc;
}

/* ------------------------------------------------ a seeded chunk's text */

/* Line [*s, *e) of [p, end) with blanks and a CR trimmed; the start of the
 * next line is returned. */
static const char *trimmed_line(const char *p, const char *end,
				const char **s, const char **e)
{
	const char *le = memchr(p, '\n', (size_t)(end - p));

	if (!le)
		le = end;
	*s = p;
	*e = le;
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' ||
			   (*e)[-1] == '\r'))
		(*e)--;
	return le < end ? le + 1 : end;
}

/* The next non-blank line of [p, end), trimmed, into [*s, *e) (*s NULL
 * when there is none); the start of the line after it is returned. */
static const char *next_line(const char *p, const char *end, const char **s,
			     const char **e)
{
	while (p < end) {
		p = trimmed_line(p, end, s, e);
		if (*s < *e)
			return p;
	}
	*s = *e = NULL;
	return end;
}

/* Does line [f, fe) equal [b, be), or end with it when prefix is 1? */
static int line_is(const char *f, const char *fe, const char *b,
		   const char *be, int prefix)
{
	size_t fl = (size_t)(fe - f), bl = (size_t)(be - b);

	if (prefix)
		return bl <= fl && memcmp(fe - bl, b, bl) == 0;
	return fl == bl && memcmp(f, b, bl) == 0;
}

/* Does trimmed line [s, e) start a unit a chunk may end before: a heading
 * or a list item ("- ", "* ", "+ ", "1. ")? */
static int unit_start(const char *s, const char *e)
{
	const char *p = s;

	if (*s == '#')
		return 1;
	if (e - s >= 2 && (*s == '-' || *s == '*' || *s == '+') && s[1] == ' ')
		return 1;
	while (p < e && *p >= '0' && *p <= '9')
		p++;
	return p > s && e - p >= 2 && (*p == '.' || *p == ')') && p[1] == ' ';
}

/*
 * Does a seeded chunk's text still stand in its file? body: the record's
 * body (a leading "Outcome: …." paragraph is the seed's, not the file's);
 * its non-blank lines, blanks trimmed, must be the file's non-blank lines
 * one after the other, unchanged (the first may have a prefix in the file:
 * a facts file's "- [tag] "), and the next non-blank line after them must
 * start a heading or list item, or the file end there (text added at the
 * chunk's end is a change of it). 1 when they are: the file changed
 * elsewhere, not in this chunk (issue 33: drift flags the chunks whose
 * lines changed). A chunk cut before a paragraph is then flagged, as
 * before: a false alarm, never a missed change of its own lines.
 */
static int chunk_still_there(const char *root, const char *path,
			     const char *body)
{
	char full[PATH_MAX], err[128], *text = NULL;
	const char *be, *fend, *p, *o;
	size_t len = 0;
	int found = 0;

	if (!body || !*body ||
	    (size_t)snprintf(full, sizeof(full), "%s/%s", root, path) >=
		    sizeof(full) ||
	    util_read_file(full, DRIFT_CHUNK_FILE_MAX, &text, &len, err,
			   sizeof(err)) != 0)
		return 0;
	o = strstr(body, ".\n\n");
	if (strncmp(body, "Outcome: ", 9) == 0 && o)
		body = o + 3;
	be = body + strlen(body);
	fend = text + len;
	for (p = text; p < fend && !found;) {
		const char *fs, *fe, *bs, *bee, *fp, *bp;
		int ok;

		p = next_line(p, fend, &fs, &fe);
		bp = next_line(body, be, &bs, &bee);
		if (!fs || !bs)
			break;
		/* the body from this file line on */
		ok = line_is(fs, fe, bs, bee, 1);
		fp = p;
		while (ok) {
			bp = next_line(bp, be, &bs, &bee);
			if (!bs) {
				/* and nothing was added to its end: the
				 * file ends, or the next unit starts */
				next_line(fp, fend, &fs, &fe);
				found = !fs || unit_start(fs, fe);
				break;
			}
			fp = next_line(fp, fend, &fs, &fe);
			ok = fs && line_is(fs, fe, bs, bee, 0);
		}
	}
	cairn_free(text);
	return found;
}

/*
 * Is path the source file of seeded record id, and its chunk unchanged in
 * it (chunk_still_there)? Then the file's change is not this record's.
 */
static int own_chunk_stands(struct cairn_db *db, const char *id,
			    const char *path)
{
	sqlite3_stmt *st = NULL;
	int stands = 0;

	if (sqlite3_prepare_v2(db->sql,
			       "SELECT body FROM main.records WHERE id = ?1 "
			       "AND origin = 'file' AND src_path = ?2",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		stands = chunk_still_there(db->root, path,
					   (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return stands;
}

#ifndef CAIRN_MUTATE_DRIFT_WHOLE_FILE
#define chunk_stands own_chunk_stands
#else
/* tests/mutate: any change of a seeded file drifts all its chunks */
#define chunk_stands(db, id, path) ((void)own_chunk_stands, 0)
#endif

/* --------------------------------------------------------------- marking */

/*
 * The blobs of the files one recall's hits refer to, each file hashed
 * once: the chunks of one seeded file all refer to it, and the hook asks
 * for 9 hits (strace counted the same file opened up to six times).
 */
#define BLOB_MEMO 32
struct blob_memo {
	size_t n;
	struct {
		char *path;
		char blob[41];
		int rc;
	} v[BLOB_MEMO];
};

static int memo_blob(struct blob_memo *m, const char *root, const char *path,
		     char out[41])
{
	size_t i;
	int rc;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->v[i].path, path) == 0) {
			memcpy(out, m->v[i].blob, 41);
			return m->v[i].rc;
		}
	rc = drift_blob(root, path, out);
	if (m->n < BLOB_MEMO && (m->v[m->n].path = util_strdup(path))) {
		memcpy(m->v[m->n].blob, out, 41);
		m->v[m->n++].rc = rc;
	}
	return rc;
}

static void memo_release(struct blob_memo *m)
{
	while (m->n > 0)
		cairn_free(m->v[--m->n].path);
}

/*
 * The drift of one record for recall and the hook, without running git: a
 * sentence naming the first changed or deleted file (caller frees), or
 * NULL when its references are unchanged or it has none. Files are hashed
 * through memo (one recall's).
 */
static char *drift_marker(struct cairn_db *db, const char *id,
			  const char *kind, struct blob_memo *memo)
{
	sqlite3_stmt *st = NULL;
	struct sbuf sb = SBUF_INIT;
	char *out = NULL;
	int changed = 0, deleted = 0;
	char first[PATH_MAX] = "";
	long commits = -1;

	if (!db || !db->root || !id)
		return NULL;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT path, blob, seen_blob, commits FROM main.refs "
			       "WHERE record_id = ?1 ORDER BY rowid",
			       -1, &st, NULL) != SQLITE_OK)
		return NULL; /* a store without the table: nothing to say */
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 0);
		const char *blob = (const char *)sqlite3_column_text(st, 1);
		const char *seen = (const char *)sqlite3_column_text(st, 2);
		char now[41];

		if (!path || !blob)
			continue;
		memset(now, 0, sizeof(now));
		if (memo_blob(memo, db->root, path, now)) {
			if (!deleted && !changed)
				snprintf(first, sizeof(first), "%s", path);
			deleted++;
			continue;
		}
		if (strcmp(now, blob) == 0)
			continue;
		/* a seeded chunk whose lines did not change */
		if (chunk_stands(db, id, path))
			continue;
		if (!changed && !deleted) {
			snprintf(first, sizeof(first), "%s", path);
			/* cairn check's count holds while the file is as it saw it */
			if (seen && strcmp(seen, now) == 0 &&
			    sqlite3_column_type(st, 3) == SQLITE_INTEGER)
				commits = sqlite3_column_int64(st, 3);
		}
		changed++;
	}
	sqlite3_finalize(st);
	if (!changed && !deleted)
		return NULL;
	sbuf_init(&sb, 4096);
	if (deleted && !changed)
		sbuf_addf(&sb, "%s was deleted or moved since this was recorded",
			  first);
	else if (commits > 0)
		sbuf_addf(&sb, "%s changed in %ld commit%s since this was recorded",
			  first, commits, commits == 1 ? "" : "s");
	else
		sbuf_addf(&sb, "%s changed since this was recorded", first);
	if (changed + deleted > 1)
		sbuf_addf(&sb, " (and %d more file%s)", changed + deleted - 1,
			  changed + deleted - 1 == 1 ? "" : "s");
	if (kind && (strcmp(kind, "capability") == 0 ||
		     strcmp(kind, "procedure") == 0))
		sbuf_adds(&sb, "; re-check before relying on it");
	out = sbuf_detach(&sb, NULL);
	sbuf_release(&sb);
	return out;
}

/* ---------------------------------------------------------- cairn check */

/*
 * Run git -C root with args; its standard output (at most 1 MiB) into
 * *out (caller frees). 0 when git exited 0.
 */
static int run_git(const char *root, const char *const *args, char **out)
{
	const char *argv[16];
	int fds[2], status = 0;
	size_t n = 0, len = 0;
	pid_t pid;

	*out = NULL;
	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = root;
	for (; *args && n < ARRAY_SIZE(argv) - 1; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR);

		dup2(fds[1], 1);
		if (dn >= 0) {
			dup2(dn, 0);
			dup2(dn, 2);
		}
		close(fds[0]);
		close(fds[1]);
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	{
		struct sbuf sb = SBUF_INIT;
		char buf[4096];
		ssize_t r;

		sbuf_init(&sb, (size_t)1 << 20);
		while ((r = read(fds[0], buf, sizeof(buf))) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				break;
			sbuf_add(&sb, buf, (size_t)r);
		}
		*out = sb.err ? NULL : sbuf_detach(&sb, &len);
		sbuf_release(&sb);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/*
 * Lines added (returned) and removed (*removed) between the recorded blob
 * and the working file: git diff --no-index --numstat against a temporary
 * copy of the blob. -1 when git cannot tell (the blob was never committed).
 */
static long count_lines_diff(const char *root, const char *blob,
			     const char *path, long *removed)
{
	const char *cat[] = { "cat-file", "blob", blob, NULL };
	char tmpl[] = "/tmp/cairn-drift-XXXXXX";
	char full[PATH_MAX];
	char *out = NULL;
	long add = -1, del = -1;
	int fd;

	*removed = -1;
	if (run_git(root, cat, &out) != 0) {
		cairn_free(out);
		return -1;
	}
	fd = mkstemp(tmpl);
	if (fd < 0) {
		cairn_free(out);
		return -1;
	}
	if (out && util_write_all(fd, out, strlen(out)) != 0) {
		close(fd);
		unlink(tmpl);
		cairn_free(out);
		return -1;
	}
	close(fd);
	cairn_free(out);
	out = NULL;
	snprintf(full, sizeof(full), "%s/%s", root, path);
	{
		const char *d[] = { "diff", "--no-index", "--numstat", tmpl,
				    full, NULL };

		/* --no-index exits 1 when the files differ */
		(void)run_git(root, d, &out);
	}
	unlink(tmpl);
	if (out && sscanf(out, "%ld\t%ld", &add, &del) == 2)
		*removed = del;
	else
		add = -1;
	cairn_free(out);
	return add;
}

/* The path that holds blob in HEAD's tree now (a pure rename), or NULL. */
static char *find_renamed(const char *root, const char *blob, const char *path)
{
	const char *args[] = { "ls-tree", "-r", "HEAD", NULL };
	char *out = NULL, *found = NULL;

	if (run_git(root, args, &out) != 0 || !out) {
		cairn_free(out);
		return NULL;
	}
	for (char *l = out; *l && !found;) {
		char *e = l + strcspn(l, "\n");
		char *tab = memchr(l, '\t', (size_t)(e - l));

		/* "<mode> blob <id>\t<path>" */
		if (tab && tab - l > 45 && memcmp(tab - 40, blob, 40) == 0) {
			char *p = util_strndup(tab + 1, (size_t)(e - tab - 1));

			if (p && strcmp(p, path) != 0 && repo_file(root, p))
				found = p;
			else
				cairn_free(p);
		}
		l = *e ? e + 1 : e;
	}
	cairn_free(out);
	return found;
}

static void drift_clear(cairn_drift *d)
{
	cairn_free(d->record_id);
	cairn_free(d->kind);
	cairn_free(d->title);
	cairn_free(d->path);
	cairn_free(d->renamed_to);
	cairn_free(d->blob);
	cairn_free(d->commit);
	cairn_free(d->recorded);
	cairn_free(d->how);
}

void cairn_drift_free(cairn_drift *d, size_t n)
{
	if (!d)
		return;
	for (size_t i = 0; i < n; i++)
		drift_clear(&d[i]);
	cairn_free(d);
}

static char *col(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s ? util_strdup(s) : NULL;
}

/*
 * The state of reference d (its path filled; blob: the recorded one) in the
 * work tree at root: same, changed (the blob now; with history, the
 * commits since and the lines added and removed), deleted, or renamed
 * (with history: the path that holds the recorded blob now).
 */
static void check_one(const char *root, cairn_drift *d, const char *blob,
		      int history)
{
	char now[41];

	if (drift_blob(root, d->path, now) != 0) {
		d->state = "deleted";
		if (history)
			d->renamed_to = find_renamed(root, blob, d->path);
		if (d->renamed_to)
			d->state = "renamed";
	} else if (strcmp(now, blob) == 0) {
		d->state = "same";
	} else {
		d->state = "changed";
		memcpy(d->blob_now, now, sizeof(d->blob_now));
		if (history) {
			if (d->commit && strlen(d->commit) == 40) {
				char range[96], *o = NULL;
				const char *a[] = { "rev-list", "--count",
						    range, "--", d->path, NULL };

				snprintf(range, sizeof(range), "%s..HEAD",
					 d->commit);
				if (run_git(root, a, &o) == 0 && o)
					d->commits = strtol(o, NULL, 10);
				cairn_free(o);
			}
			d->lines_added = count_lines_diff(
				root, blob, d->path, &d->lines_removed);
		}
	}
}

/*
 * The blob and commit count of each changed reference of v into table
 * refs (seen_blob, commits), in one transaction: the hook's marker
 * (drift_marker) reads them without running git.
 */
static int keep_history(struct cairn_db *db, const cairn_drift *v, size_t nv)
{
	sqlite3_stmt *cache = NULL;
	int src, rc = store_tx_begin(db);

	if (rc)
		return rc;
	src = sqlite3_prepare_v2(db->sql,
				 "UPDATE main.refs SET seen_blob = ?3, "
				 "commits = ?4 WHERE record_id = ?1 AND "
				 "path = ?2", -1, &cache, NULL);
	if (src != SQLITE_OK)
		rc = store_sql_error(db, src, "keeping the history");
	for (size_t i = 0; i < nv && rc == CAIRN_OK; i++) {
		if (strcmp(v[i].state, "changed") != 0)
			continue;
		sqlite3_reset(cache);
		sqlite3_bind_text(cache, 1, v[i].record_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(cache, 2, v[i].path, -1, SQLITE_STATIC);
		sqlite3_bind_text(cache, 3, v[i].blob_now, -1, SQLITE_STATIC);
		if (v[i].commits >= 0)
			sqlite3_bind_int64(cache, 4, v[i].commits);
		else
			sqlite3_bind_null(cache, 4);
		src = sqlite3_step(cache);
		if (src != SQLITE_DONE)
			rc = store_sql_error(db, src, "keeping the history");
	}
	sqlite3_finalize(cache);
	return store_tx_end(db, rc);
}

int cairn_drift_check(cairn_db *db, const char *id, unsigned flags,
		      cairn_drift **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	cairn_drift *v = NULL;
	size_t nv = 0, cap = 0;
	int src, rc = CAIRN_OK, history = (flags & CAIRN_DRIFT_HISTORY) != 0;

	if (!db || !out || !n)
		return CAIRN_INVALID;
	*out = NULL;
	*n = 0;
	src = sqlite3_prepare_v2(
		db->sql,
		"SELECT f.record_id, r.kind, r.title, f.path, f.blob, "
		"f.commit_id, f.recorded, f.how FROM main.refs f "
		"JOIN main.records r ON r.id = f.record_id "
		"WHERE (?1 IS NULL OR f.record_id = ?1) AND r.status NOT IN "
		"('retired','rejected','superseded','false') "
		"ORDER BY f.record_id, f.rowid",
		-1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "reading references");
		goto out;
	}
	if (id)
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		cairn_drift *d;
		const char *blob = (const char *)sqlite3_column_text(st, 4);

		if (nv == cap) {
			size_t nc = cap ? cap * 2 : 16;
			cairn_drift *nvv = util_realloc(v, nc * sizeof(*v));

			if (!nvv) {
				rc = store_error(db, CAIRN_NOMEM, "out of memory");
				goto out;
			}
			v = nvv;
			cap = nc;
		}
		d = &v[nv];
		memset(d, 0, sizeof(*d));
		d->commits = d->lines_added = d->lines_removed = -1;
		d->record_id = col(st, 0);
		d->kind = col(st, 1);
		d->title = col(st, 2);
		d->path = col(st, 3);
		d->blob = col(st, 4);
		d->commit = col(st, 5);
		d->recorded = col(st, 6);
		d->how = col(st, 7);
		if (!d->record_id || !d->path || !blob) {
			nv++;
			cairn_drift_free(v, nv);
			v = NULL;
			nv = 0;
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		check_one(db->root, d, blob, history);
		/* a seeded record's file changed elsewhere than in its
		 * chunk: this record did not drift */
		if (strcmp(d->state, "changed") == 0 &&
		    chunk_stands(db, d->record_id, d->path)) {
			d->state = "same";
			d->blob_now[0] = '\0';
			d->commits = d->lines_added = d->lines_removed = -1;
		}
		nv++;
	}
	if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "reading references");
		goto out;
	}
	/* keep the history's counts for the hook's marker (drift_marker) */
	if (history && nv) {
		rc = keep_history(db, v, nv);
		if (rc)
			goto out;
	}
	if (!(flags & CAIRN_DRIFT_ALL)) {
		size_t w = 0;

		for (size_t i = 0; i < nv; i++) {
			if (strcmp(v[i].state, "same") == 0) {
				drift_clear(&v[i]);
				continue;
			}
			v[w++] = v[i];
		}
		nv = w;
	}
	*out = v;
	*n = nv;
	v = NULL;
	nv = 0;
out:
	sqlite3_finalize(st);
	cairn_drift_free(v, nv);
	if (rc && *out) {
		cairn_drift_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int cairn_record_verify(cairn_db *db, const char *id)
{
	char now[32], head[41], proof[160];
	cairn_record *rec = NULL;
	int rc, in_tx = 0;

	if (!db || !id)
		return CAIRN_INVALID;
	rc = cairn_record_get(db, id, &rec);
	if (rc)
		return rc;
	if (strcmp(rec->scope, "workspace") != 0) {
		rc = store_error(db, CAIRN_INVALID,
				 "%s is a global record: it refers to no workspace files",
				 rec->id);
		goto out;
	}
	rc = store_tx_begin(db);
	if (rc)
		goto out;
	in_tx = 1;
	util_now_iso(now, sizeof(now));
	git_head(db->root, head);
	snprintf(proof, sizeof(proof), "verified by a human against the tree%s%.12s on %.10s",
		 *head ? " at " : "", head, now);
	/* the store's write path: the old revision kept (store.h) */
	rc = store_record_proof(db, rec->id, proof, now);
	if (rc == CAIRN_OK)
		rc = drift_note(db, rec->id, "verify");
out:
	if (in_tx)
		rc = store_tx_end(db, rc);
	cairn_record_free(rec);
	return rc;
}

/* ------------------------------------------------------- recall's marker */

int cairn_drift_set_weight(cairn_db *db, double w)
{
	char v[32];
	int rc;

	if (!db || !(w >= 0 && w <= 1))
		return db ? store_error(db, CAIRN_INVALID,
					"the drift weight is a number from 0 to 1")
			  : CAIRN_INVALID;
	snprintf(v, sizeof(v), "%g", w);
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = store_meta_set(db, "main", "drift.weight", v,
			    "setting the drift weight");
	return store_tx_end(db, rc);
}

#define DRIFT_WEIGHT_DEFAULT 0.85

struct hit_ord {
	double score;
	size_t at;
};

/* best score first; equal scores keep their order (qsort is not stable) */
static int ord_cmp(const void *a, const void *b)
{
	const struct hit_ord *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return (x->at > y->at) - (x->at < y->at);
}

int drift_mark(struct cairn_db *db, cairn_result *res)
{
	char buf[32];
	int found = 0, any = 0;
	double w = DRIFT_WEIGHT_DEFAULT;
	struct blob_memo memo;

	if (!db || !res || !res->n)
		return CAIRN_OK;
	memo.n = 0;
	if (store_meta_get(db, "main", "drift.weight", buf, sizeof(buf),
			   &found) == CAIRN_OK && found) {
		char *end;
		double d = strtod(buf, &end);

		if (end != buf && *end == '\0' && d >= 0 && d <= 1)
			w = d;
	}
	for (size_t i = 0; i < res->n; i++) {
		cairn_hit *h = &res->hits[i];

		h->drift_weight = 1.0;
		if (!h->rec || !h->rec->scope ||
		    strcmp(h->rec->scope, "workspace") != 0)
			continue;
		h->drift = drift_marker(db, h->rec->id, h->rec->kind, &memo);
		if (h->drift) {
			h->drift_weight = w;
			h->score *= w;
			any = 1;
		}
	}
	memo_release(&memo);
	/* a drifted hit gives way to the next one only when they were close */
	if (any && res->n > 1) {
		struct hit_ord *o = util_calloc(res->n, sizeof(*o));
		cairn_hit *h = util_calloc(res->n, sizeof(*h));

		if (!o || !h) {
			cairn_free(o);
			cairn_free(h);
			return store_error(db, CAIRN_NOMEM, "out of memory");
		}
		for (size_t i = 0; i < res->n; i++)
			o[i] = (struct hit_ord){ res->hits[i].score, i };
		qsort(o, res->n, sizeof(o[0]), ord_cmp);
		for (size_t i = 0; i < res->n; i++)
			h[i] = res->hits[o[i].at];
		memcpy(res->hits, h, res->n * sizeof(*h));
		cairn_free(o);
		cairn_free(h);
	}
	return CAIRN_OK;
}
