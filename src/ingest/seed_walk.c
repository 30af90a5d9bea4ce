/*
 * seed_walk.c -- which files a seed reads (docs/SEED.md, "What is read"):
 * the seeded paths resolved inside the workspace, folders walked without
 * following symlinks, and the workspace scan for files that look like
 * decision records; each seeded root is a scope for retiring.
 *
 * Layer: part of the seed run (seed_run.h).
 *
 * Must never: follow a symlink, leave the workspace, or walk more than
 * SEED_MAX_DEPTH folders deep.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seed_run.h"

#define SEED_SCAN_MAX 50000 /* Markdown files a workspace scan looks at */

/* Folders a workspace scan does not enter: dependencies and build output. */
static const char *const scan_skip[] = {
	"node_modules", "vendor", "third_party", "target", "build", "dist",
	"out", "bower_components", "site-packages", "venv", "__pycache__",
	"Pods",
};

/* ================================================================== paths */

static int is_markdown(const char *name)
{
	return seed_ends_with_ci(name, ".md") ||
	       seed_ends_with_ci(name, ".markdown") ||
	       seed_ends_with_ci(name, ".mdx");
}

static int add_file(struct run *r, const char *rel)
{
	struct sfile *f;

	if (seed_smap_get(&r->paths, rel, NULL))
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
	return seed_smap_put(&r->paths, f->rel, r->nfiles - 1);
}

/* A workspace scan's finds: files that look like decision records. */
struct scan_hit {
	char *rel;  /* relative path */
	int shaped; /* 1: it looks like a decision record (else only its name
		     * is numbered) */
};

struct scan {
	struct scan_hit *v; /* the files */
	size_t n, cap;      /* count, capacity */
	size_t looked;      /* Markdown files looked at */
};

static int cmp_hit(const void *a, const void *b)
{
	return strcmp(((const struct scan_hit *)a)->rel,
		      ((const struct scan_hit *)b)->rel);
}

/* "0005-x.md", "20200101-x.md", "adr-005-x.md", "ADR005.md", "rfc-12.md":
 * a name that numbers a record. */
static int numbered_name(const char *rel)
{
	const char *b = seed_base_name(rel), *p = b;
	int letters = 0;

	while (((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) &&
	       letters < 4) {
		p++;
		letters++;
	}
	if (letters > 0 && !(seed_word_eq(b, (size_t)letters, "adr") ||
			     seed_word_eq(b, (size_t)letters, "dr") ||
			     seed_word_eq(b, (size_t)letters, "rfc")))
		return 0;
	if (letters > 0 && (*p == '-' || *p == '_' || *p == ' '))
		p++;
	if (!(*p >= '0' && *p <= '9'))
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p == '-' || *p == '_' || *p == '.' || *p == ' ';
}

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
	int fd, shaped;

	if (sc->looked++ >= SEED_SCAN_MAX)
		return CAIRN_OK;
	fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return CAIRN_OK;
	do {
		got = read(fd, buf, sizeof(buf));
	} while (got < 0 && errno == EINTR);
	close(fd);
	shaped = got > 0 && seed_looks_like_adr(buf, (size_t)got);
	if (!shaped && !numbered_name(rel))
		return CAIRN_OK;
	if (seed_grow((void **)&sc->v, &sc->cap, sc->n, sizeof(*sc->v)))
		return CAIRN_NOMEM;
	sc->v[sc->n].shaped = shaped;
	sc->v[sc->n].rel = util_strdup(rel);
	return sc->v[sc->n++].rel ? CAIRN_OK : CAIRN_NOMEM;
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
				else if (!seed_smap_get(&r->paths, child.buf, NULL))
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

static int cmp_files(const void *a, const void *b)
{
	return strcmp(((const struct sfile *)a)->rel,
		      ((const struct sfile *)b)->rel);
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
	size_t n = seed_dir_len(rel);

	if (seed_index_name(seed_base_name(rel)) && n > 0) {
		n--; /* the slash */
		while (n > 0 && rel[n - 1] != '/')
			n--;
	}
	return n > 0 ? n - 1 : 0;
}

/* A found file and the length of its collection folder's path. */
struct found {
	const char *path;
	size_t cl;
};

/* By collection folder, then by path. */
static int cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	size_t n = x->cl < y->cl ? x->cl : y->cl;
	int c = strncmp(x->path, y->path, n);

	if (c == 0 && x->cl != y->cl)
		return x->cl < y->cl ? -1 : 1;
	return c ? c : strcmp(x->path, y->path);
}

/*
 * Find decision records anywhere in the workspace by their content. A
 * folder holding two or more is read as a whole (and retires what leaves
 * it); a lone one is read by itself; at the root only the records found.
 */
static int discover(struct run *r)
{
	struct scan sc;
	struct found *fv = NULL;
	size_t i, j, k, nf = 0, before = r->nfiles;
	int rc;

	memset(&sc, 0, sizeof(sc));
	rc = walk(r, "", &sc);
	if (sc.looked > SEED_SCAN_MAX)
		seed_msg(r, 0, CAIRN_OK, ".", 0,
			 "the workspace holds over %d Markdown files: only the "
			 "first were looked at for decision records; name the "
			 "folder: cairn seed PATH",
			 SEED_SCAN_MAX);
	if (rc == CAIRN_OK && sc.n > 0) {
		fv = util_calloc(sc.n, sizeof(*fv));
		if (!fv)
			rc = CAIRN_NOMEM;
	}
	if (sc.n > 1)
		qsort(sc.v, sc.n, sizeof(*sc.v), cmp_hit);
	for (i = 0; fv && i < sc.n; i++)
		if (sc.v[i].shaped) {
			fv[nf].path = sc.v[i].rel;
			fv[nf++].cl = collection_len(sc.v[i].rel);
		}
	if (nf > 1)
		qsort(fv, nf, sizeof(*fv), cmp_found);
	/* a folder (not the root) with two or more decision records is a
	 * collection: its numbered files are read too, and it is a scope;
	 * elsewhere each decision record is read by itself */
	for (i = 0; i < nf && rc == CAIRN_OK; i = j) {
		size_t cl = fv[i].cl;

		for (j = i + 1; j < nf && fv[j].cl == cl &&
				strncmp(fv[j].path, fv[i].path, cl) == 0;
		     j++)
			;
		if (cl > 0 && j - i >= 2) {
			char *c = util_strndup(fv[i].path, cl);

			if (!c) {
				rc = CAIRN_NOMEM;
				break;
			}
			for (k = 0; k < sc.n && rc == CAIRN_OK; k++)
				if (strncmp(sc.v[k].rel, c, cl) == 0 &&
				    sc.v[k].rel[cl] == '/')
					rc = add_file(r, sc.v[k].rel);
			if (rc == CAIRN_OK)
				rc = add_scope(r, c, 0);
			else
				cairn_free(c);
			continue;
		}
		for (k = i; k < j && rc == CAIRN_OK; k++) {
			int root = seed_dir_len(fv[k].path) == 0;
			char *c = util_strdup(root ? "" : fv[k].path);

			rc = add_file(r, fv[k].path);
			if (rc == CAIRN_OK)
				rc = c ? add_scope(r, c, root) : CAIRN_NOMEM;
			else
				cairn_free(c);
		}
	}
	for (i = before; i < r->nfiles; i++)
		r->files[i].found = 1;
	for (i = 0; i < sc.n; i++)
		cairn_free(sc.v[i].rel);
	cairn_free(sc.v);
	cairn_free(fv);
	return rc;
}

/* Collect the files under the seeded paths and record the scopes. */
int seed_collect(struct run *r, const char *const *paths, size_t n,
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
		else if (exists && is_markdown(rel)) {
			size_t ix;

			rc = add_file(r, rel);
			/* a file named explicitly is always read */
			if (rc == CAIRN_OK && seed_smap_get(&r->paths, rel, &ix))
				r->files[ix].named = 1;
		}
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
	seed_smap_release(&r->paths);
	for (j = 0; j < r->nfiles && rc == CAIRN_OK; j++)
		rc = seed_smap_put(&r->paths, r->files[j].rel, j);
	return rc;
}
