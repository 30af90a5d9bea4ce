/*
 * seed_chunk.c -- a file's records (docs/SEED.md, "Chunking" and "Facts
 * files"): an ordinary document cut into sections at H1-H3 headings and
 * merged to about the chunk target, or a facts file's list items; each
 * record with its heading path, line, title, id and content hash.
 *
 * Layer: part of the seed run (seed_run.h).
 *
 * Invariants: ids depend only on the file id and the heading path as the
 * text has always given it (or a fact's key / text), never on the order
 * of seeding; no record is a bare heading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed_run.h"


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
void seed_chunk_hash(struct chunk *c, const struct sfile *f)
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

void seed_chunk_release(struct chunk *c)
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
		if (seed_smap_get(&r->ids, c->id, &other)) {
			seed_msg(r, 1, CAIRN_INVALID, f->rel, c->line,
				"id '%s' is also used by %s:%ld", c->id,
				r->files[r->chunks[other].file].rel,
				r->chunks[other].line);
			return CAIRN_INVALID;
		}
		return seed_smap_put(&r->ids, c->id, ci);
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
		c->id = seed_derive_id(sb.buf, sb.len);
		if (!c->id) {
			rc = CAIRN_NOMEM;
			break;
		}
		if (!seed_smap_get(&r->ids, c->id, NULL)) {
			rc = seed_smap_put(&r->ids, c->id, ci);
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
		seed_msg(r, 1, CAIRN_INVALID, r->files[c->file].rel, c->line,
			"key is empty or longer than %d bytes", STORE_MAX_KEY);
		return CAIRN_INVALID;
	}
	if (seed_smap_get(&r->keys, c->key, &other)) {
		seed_msg(r, 1, CAIRN_INVALID, r->files[c->file].rel, c->line,
			"key '%s' is also used by %s:%ld", c->key,
			r->files[r->chunks[other].file].rel,
			r->chunks[other].line);
		return CAIRN_INVALID;
	}
	return seed_smap_put(&r->keys, c->key, ci);
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
int seed_chunk_document(struct run *r, size_t fi, const struct text *x,
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
		seed_msg(r, 0, CAIRN_OK, f->rel, 0, "empty file: no record");
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
int seed_chunk_facts(struct run *r, size_t fi, const struct text *x,
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
			seed_msg(r, 1, CAIRN_INVALID, f->rel, l, "%s", msg);
			f->failed = 1;
			rc = CAIRN_OK;
			cairn_free(text);
			continue;
		}
		if (rc == CAIRN_OK && !*rest) {
			seed_msg(r, 1, CAIRN_INVALID, f->rel, l,
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
		seed_msg(r, 0, CAIRN_OK, f->rel, 0,
			"facts file without list items: no record");
	sbuf_release(&sb);
	cairn_free(bounds);
	return rc;
}
