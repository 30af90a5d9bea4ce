/*
 * seed_links.c -- the links between seeded records (docs/SEED.md,
 * "Superseded by X"): a link target, an ADR name or a record id resolved
 * to a record id; the newer record of a pair gets the reverse link.
 *
 * Layer: part of the seed run (seed_run.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed_run.h"

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
size_t seed_dir_len(const char *rel)
{
	const char *s = strrchr(rel, '/');

	return s ? (size_t)(s - rel) + 1 : 0;
}

/*
 * path with "." and ".." resolved lexically (no file system) into *out
 * (caller frees; NULL when nothing is left). CAIRN_NOMEM or CAIRN_OK.
 */
static int lexical_path(const char *path, char **out)
{
	char *parts = util_strdup(path);
	struct sbuf res = SBUF_INIT;
	char *save = NULL, *tok;
	size_t *stk = NULL, nst = 0, capst = 0;

	*out = NULL;
	if (!parts)
		return CAIRN_NOMEM;
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
		if (seed_grow((void **)&stk, &capst, nst, sizeof(*stk))) {
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
		return CAIRN_NOMEM;
	}
	*out = sbuf_detach(&res, NULL);
	return CAIRN_OK;
}

/*
 * The files other than fi that the first word of text with digits names
 * ("ADR-7", "0007"): by number, and by prefix when both have one; those
 * in fi's folder first, else anywhere. Returns how many; *hit is the last.
 */
static size_t ident_files(const struct run *r, size_t fi, const char *text,
			  size_t *hit)
{
	const struct sfile *f = &r->files[fi];
	const char *p = text;
	size_t i, hits = 0, pass;
	char prefix[16];
	long num;

	while (*p) {
		size_t wl = strcspn(p, " \t:,;()[]#");

		if (wl > 0 && split_ident(p, wl, prefix, sizeof(prefix), &num)) {
			for (pass = 0; pass < 2 && hits == 0; pass++) {
				for (i = 0; i < r->nfiles; i++) {
					const struct sfile *g = &r->files[i];
					const char *base = g->rel + seed_dir_len(g->rel);
					char gp[16];
					long gn;

					if (i == fi || !g->id)
						continue;
					/* "<slug>/index.md": the slug names it */
					if (seed_index_name(base) && base > g->rel) {
						base--;
						while (base > g->rel && base[-1] != '/')
							base--;
					}
					if (pass == 0 &&
					    (seed_dir_len(g->rel) != seed_dir_len(f->rel) ||
					     strncmp(g->rel, f->rel, seed_dir_len(f->rel))))
						continue;
					if (!split_ident(base, strlen(base), gp,
							 sizeof(gp), &gn) ||
					    gn != num)
						continue;
					if (*prefix && *gp && strcmp(prefix, gp) != 0)
						continue;
					hits++;
					*hit = i;
				}
			}
			break;
		}
		p += wl;
		while (*p && strchr(" \t:,;()[]#", *p))
			p++;
	}
	return hits;
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
	size_t idx, hits = 0, hit = 0;
	int rc = CAIRN_OK;

	*out = NULL;
	if (href && !strstr(href, "://") && href[0] != '#') {
		size_t hl = strcspn(href, "#?");
		char *n;

		sbuf_add(&sb, f->rel, seed_dir_len(f->rel));
		sbuf_add(&sb, href, hl);
		if (sb.err) {
			rc = CAIRN_NOMEM;
			goto out;
		}
		/* resolve "../" lexically against the file's folder */
		rc = lexical_path(sb.buf, &n);
		if (rc)
			goto out;
		if (n && seed_smap_get(&r->paths, n, &idx) && r->files[idx].id) {
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
			id = fid.err ? NULL : seed_derive_id(fid.buf, fid.len);
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
		hits = ident_files(r, fi, text, &hit);
		if (hits == 1) {
			*out = util_strdup(r->files[hit].id);
			rc = *out ? CAIRN_OK : CAIRN_NOMEM;
			goto out;
		}
		if (hits > 1) {
			seed_msg(r, 0, CAIRN_OK, f->rel, line,
				"'%s' matches %zu files: not linked", text,
				hits);
			goto out;
		}
		/* an existing record id */
		if (seed_id_ok(text)) {
			cairn_record *rec = NULL;

			if (cairn_record_get(r->db, text, &rec) == CAIRN_OK) {
				*out = util_strdup(rec->id);
				cairn_record_free(rec);
				rc = *out ? CAIRN_OK : CAIRN_NOMEM;
				goto out;
			}
		}
	}
	seed_msg(r, 0, CAIRN_OK, f->rel, line, "cannot resolve '%s': not linked",
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
int seed_resolve_links(struct run *r)
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

		if (!by[fi] || !seed_smap_get(&r->ids, by[fi], &ci))
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
			seed_chunk_hash(c, f);
		}
	}
	for (bi = 0; bi < r->nfiles; bi++)
		cairn_free(by[bi]);
	cairn_free(by);
	return rc;
}
