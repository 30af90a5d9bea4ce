/*
 * seed_md.c -- reading one Markdown file for cairn seed: its top-level
 * blocks and paragraphs (md4c), its front matter (libyaml, else simple
 * "key: value" lines), and the fields a decision record writes in its
 * text: Status, Date, "Superseded by X", "Supersedes X" (docs/SEED.md).
 *
 * Layer: used by seed.c; knows nothing of the store.
 *
 * Invariants: a block's `text` is what record ids have always been
 * derived from (HTML comments included), so ids stay stable; `clean` and
 * the paragraphs drop HTML comments ("### Pros <!-- optional -->").
 * Every text kept is bounded (SEED_MAX_BLOCK_TEXT).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "internal.h"
#include "seed.h"
#include "seed_int.h"

/* ================================================================ helpers */

int seed_grow(void **v, size_t *cap, size_t n, size_t sz)
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

char *seed_dup_trim(const char *s, size_t n)
{
	while (n > 0 && seed_space((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && seed_space((unsigned char)s[n - 1]))
		n--;
	return util_strndup(s, n);
}

long seed_line_of(const size_t *ls, size_t nls, size_t off)
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

/* ========================================================= Markdown scan */

static void ms_finish_text(struct mscan *m)
{
	struct mblock *b;

	if (m->n == 0 || m->b[m->n - 1].text)
		return;
	b = &m->b[m->n - 1];
	b->text = seed_dup_trim(sbuf_str(&m->tb), m->tb.len);
	cairn_free(b->clean); /* set by a call whose text failed */
	b->clean = seed_dup_trim(sbuf_str(&m->tbc), m->tbc.len);
	if (!b->text || !b->clean)
		m->err = CAIRN_NOMEM;
	sbuf_reset(&m->tb);
	sbuf_reset(&m->tbc);
}

/* The blocks whose own text is a paragraph unit (a tight list item's
 * text comes without a P block). */
static int is_para(MD_BLOCKTYPE type)
{
	return type == MD_BLOCK_P || type == MD_BLOCK_H ||
	       type == MD_BLOCK_LI || type == MD_BLOCK_TD ||
	       type == MD_BLOCK_TH;
}

/* Close the open paragraph unit: its text is complete. */
static void para_close(struct mscan *m)
{
	struct mpara *p;

	if (!m->popen || m->np == 0)
		return;
	p = &m->p[m->np - 1];
	p->text = seed_dup_trim(sbuf_str(&m->pb), m->pb.len);
	if (!p->text)
		m->err = CAIRN_NOMEM;
	m->popen = 0;
	sbuf_reset(&m->pb);
}

static int ms_enter_block(MD_BLOCKTYPE type, void *detail, void *user)
{
	struct mscan *m = user;

	if (m->depth == 1) {
		struct mblock *b;

		if (seed_grow((void **)&m->b, &m->cap, m->n, sizeof(*m->b))) {
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
		sbuf_reset(&m->tbc);
	}
	if (type == MD_BLOCK_LI && m->depth == 2 && m->n > 0) {
		if (seed_grow((void **)&m->items, &m->capitems, m->nitems,
			      sizeof(*m->items))) {
			m->err = CAIRN_NOMEM;
			return 1;
		}
		m->items[m->nitems++] = 0;
		m->item_open = 1;
	}
	if (type == MD_BLOCK_TR) {
		m->row++;
		m->col = 0;
	}
	if (is_para(type) && m->n > 0) {
		struct mpara *p;

		para_close(m); /* a P inside a list item starts a new unit */
		if (seed_grow((void **)&m->p, &m->capp, m->np, sizeof(*m->p))) {
			m->err = CAIRN_NOMEM;
			return 1;
		}
		p = &m->p[m->np++];
		memset(p, 0, sizeof(*p));
		p->top = m->n - 1;
		p->type = (int)type;
		if (type == MD_BLOCK_H)
			p->level = (int)((MD_BLOCK_H_DETAIL *)detail)->level;
		if (type == MD_BLOCK_TD || type == MD_BLOCK_TH) {
			p->row = m->row;
			p->col = m->col++;
		}
		m->popen = 1;
		sbuf_reset(&m->pb);
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
	if (is_para(type))
		para_close(m);
	return 0;
}

static int ms_enter_span(MD_SPANTYPE type, void *detail, void *user)
{
	struct mscan *m = user;
	MD_SPAN_A_DETAIL *a = detail;
	struct mblock *b;

	if (type != MD_SPAN_A || m->n == 0 || a->href.size == 0)
		return 0;
	if (m->popen && m->np > 0) {
		struct mpara *p = &m->p[m->np - 1];

		if (seed_grow((void **)&p->links, &p->caplinks, p->nlinks,
			      sizeof(*p->links))) {
			m->err = CAIRN_NOMEM;
			return 1;
		}
		p->links[p->nlinks].off = m->pb.len;
		p->links[p->nlinks].href =
			util_strndup(a->href.text, a->href.size);
		if (!p->links[p->nlinks++].href)
			m->err = CAIRN_NOMEM;
	}
	if (m->text_done)
		return 0;
	b = &m->b[m->n - 1];
	if (!b->href) {
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

/* Add a text piece to sb, bounded; line breaks as '\n'. */
static void add_text(struct sbuf *sb, MD_TEXTTYPE type, const MD_CHAR *text,
		     MD_SIZE size)
{
	if (sb->len >= SEED_MAX_BLOCK_TEXT)
		return;
	switch (type) {
	case MD_TEXT_NULLCHAR:
		break;
	case MD_TEXT_BR:
	case MD_TEXT_SOFTBR:
		sbuf_addc(sb, '\n');
		break;
	default:
		sbuf_add(sb, text, size);
	}
}

static int ms_text(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size,
		   void *user)
{
	struct mscan *m = user;
	struct mblock *b;
	int comment = m->comment;

	if (m->n == 0)
		return 0;
	b = &m->b[m->n - 1];
	/* an inline HTML comment: kept in text (ids), dropped elsewhere */
	if (type == MD_TEXT_HTML) {
		if (!m->comment && size >= 4 && memcmp(text, "<!--", 4) == 0)
			comment = m->comment = 1;
		if (m->comment && size >= 3 &&
		    memmem(text, size, "-->", 3) != NULL)
			m->comment = 0;
	} else if (type != MD_TEXT_SOFTBR && type != MD_TEXT_BR) {
		comment = m->comment = 0;
	}
	/* the first text inside the document's bytes gives the line */
	if (text >= m->doc && text < m->doc + m->size) {
		size_t off = m->base + (size_t)(text - m->doc);
		long line = seed_line_of(m->ls, m->nls, off);

		if (b->line == 0 && m->depth > 1) {
			b->line = line;
			if (b->fenced && b->line > 1)
				b->line--; /* the opening fence line */
		}
		if (m->item_open && m->nitems > 0) {
			m->items[m->nitems - 1] = line;
			m->item_open = 0;
		}
		if (m->popen && m->np > 0 && m->p[m->np - 1].line == 0)
			m->p[m->np - 1].line = line;
	}
	if (m->popen && !comment)
		add_text(&m->pb, type, text, size);
	if (!m->text_done) {
		add_text(&m->tb, type, text, size);
		if (!comment)
			add_text(&m->tbc, type, text, size);
	}
	if (m->tb.err || m->tbc.err || m->pb.err)
		m->err = CAIRN_NOMEM;
	return 0;
}

void seed_ms_release(struct mscan *m)
{
	size_t i, j;

	for (i = 0; i < m->n; i++) {
		cairn_free(m->b[i].text);
		cairn_free(m->b[i].clean);
		cairn_free(m->b[i].href);
	}
	for (i = 0; i < m->np; i++) {
		cairn_free(m->p[i].text);
		for (j = 0; j < m->p[i].nlinks; j++)
			cairn_free(m->p[i].links[j].href);
		cairn_free(m->p[i].links);
	}
	cairn_free(m->b);
	cairn_free(m->p);
	cairn_free(m->items);
	sbuf_release(&m->tb);
	sbuf_release(&m->tbc);
	sbuf_release(&m->pb);
}

int seed_ms_parse(struct mscan *m, const char *doc, size_t size, size_t base,
		  const size_t *ls, size_t nls)
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
	sbuf_init(&m->tbc, 0);
	sbuf_init(&m->pb, 0);
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

void seed_front_release(struct front *f)
{
	int i;

	for (i = 0; i < SEED_FRONT_KEYS; i++)
		cairn_free(f->v[i]);
}

static const char *const front_names[SEED_FRONT_KEYS] = {
	"kind", "key", "status", "supersedes", "date", "id", "title", "format",
};

static void note(struct seed_note *n, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct seed_note *n, long line, const char *fmt, ...)
{
	va_list ap;

	n->line = line;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
}

/*
 * Not YAML ("title: ADR010: Use Luxon", which Docusaurus reads): each
 * "name: value" line at the left margin, the value as written (quotes
 * around it dropped). Other lines are ignored.
 */
static int front_lines(const char *t, size_t start, size_t len, long line0,
		       struct front *f)
{
	size_t off = start, end = start + len;
	long line = line0;
	int i;

	while (off < end) {
		size_t e = off, k, ks, ke, vs, ve;

		while (e < end && t[e] != '\n')
			e++;
		k = off;
		ks = k;
		while (k < e && (seed_alnum((unsigned char)t[k]) || t[k] == '_' ||
				 t[k] == '-'))
			k++;
		ke = k;
		if (ke > ks && k < e && t[k] == ':') {
			vs = k + 1;
			while (vs < e && (t[vs] == ' ' || t[vs] == '\t'))
				vs++;
			ve = e;
			while (ve > vs && seed_space((unsigned char)t[ve - 1]))
				ve--;
			if (ve - vs >= 2 && (t[vs] == '"' || t[vs] == '\'') &&
			    t[ve - 1] == t[vs]) {
				vs++;
				ve--;
			}
			for (i = 0; i < SEED_FRONT_KEYS; i++) {
				if (ke - ks != strlen(front_names[i]) ||
				    memcmp(t + ks, front_names[i], ke - ks) != 0 ||
				    ve == vs)
					continue;
				cairn_free(f->v[i]);
				f->v[i] = util_strndup(t + vs, ve - vs);
				if (!f->v[i])
					return CAIRN_NOMEM;
				f->line[i] = line;
			}
		}
		off = e + 1;
		line++;
	}
	return CAIRN_OK;
}

int seed_front_parse(const char *t, size_t len, struct front *f,
		     struct seed_note *err, struct seed_note *warn)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *pair;
	size_t off = 0, start, fm_len = 0;
	long line = 1;
	int rc = CAIRN_OK, have_doc = 0, i;

	memset(f, 0, sizeof(*f));
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
			note(err, 1, "front matter is not closed (no '---' line)");
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
		note(warn, (long)parser.problem_mark.line + 2,
		     "front matter is not valid YAML (%s): read as simple "
		     "'name: value' lines",
		     parser.problem ? parser.problem : "parse error");
		rc = front_lines(t, start, fm_len, 2, f);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);
	if (!root)
		goto out; /* empty front matter */
	if (root->type != YAML_MAPPING_NODE) {
		note(err, 2, "front matter must be a mapping of 'name: value' "
			     "lines");
		rc = CAIRN_INVALID;
		goto out;
	}
	for (pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(&doc, pair->value);

		if (!k || !v || k->type != YAML_SCALAR_NODE)
			continue;
		for (i = 0; i < SEED_FRONT_KEYS; i++) {
			if (strcmp((const char *)k->data.scalar.value,
				   front_names[i]) != 0)
				continue;
			/* a list: its first item, with a warning */
			if (v->type == YAML_SEQUENCE_NODE &&
			    v->data.sequence.items.top >
				    v->data.sequence.items.start) {
				yaml_node_t *it = yaml_document_get_node(
					&doc, *v->data.sequence.items.start);

				if (it && it->type == YAML_SCALAR_NODE) {
					if (v->data.sequence.items.top -
						    v->data.sequence.items.start >
					    1)
						note(warn,
						     (long)v->start_mark.line + 2,
						     "front matter '%s' is a list: "
						     "only its first item is read",
						     front_names[i]);
					v = it;
				}
			}
			/* "date: {YYYY-MM-DD}" is a YAML mapping: read
			 * the lines as written instead */
			if (v->type != YAML_SCALAR_NODE) {
				note(warn, (long)v->start_mark.line + 2,
				     "front matter '%s' is not a single value: "
				     "read as simple 'name: value' lines",
				     front_names[i]);
				seed_front_release(f);
				memset(f->v, 0, sizeof(f->v));
				memset(f->line, 0, sizeof(f->line));
				rc = front_lines(t, start, fm_len, 2, f);
				goto out;
			}
			cairn_free(f->v[i]);
			f->v[i] = util_strndup((const char *)v->data.scalar.value,
					       v->data.scalar.length);
			if (!f->v[i]) {
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

/* ================================================================ fields */

const char *seed_link_in(const struct mpara *p, const char *from, size_t len)
{
	size_t i, a, b;

	if (!p || !p->text || from < p->text)
		return NULL;
	a = (size_t)(from - p->text);
	b = a + len;
	for (i = 0; i < p->nlinks; i++)
		if (p->links[i].off >= a && p->links[i].off < b)
			return p->links[i].href;
	return NULL;
}

/*
 * "name:" or "name :" at s (< e), case-insensitive: the value after it.
 * loose: the colon may be missing ("Date 09/04/2018").
 */
static const char *field_as(const char *s, const char *e, const char *name,
			    int loose)
{
	size_t n = strlen(name);
	const char *after;

	if ((size_t)(e - s) < n || !seed_word_eq(s, n, name))
		return NULL;
	s += n;
	after = s;
	while (s < e && *s == ' ')
		s++;
	if (s < e && *s == ':')
		s++;
	else if (e - s >= 3 && memcmp(s, "\xEF\xBC\x9A", 3) == 0) /* ： */
		s += 3;
	else if (!loose || s == after)
		return NULL;
	while (s < e && seed_space((unsigned char)*s))
		s++;
	return s;
}

static const char *field(const char *s, const char *e, const char *name)
{
	return field_as(s, e, name, 0);
}

/* Is [s, e) a heading named name (a final ':' allowed)? */
static int heading_is(const char *s, const char *e, const char *name)
{
	while (e > s && (seed_space((unsigned char)e[-1]) || e[-1] == ':'))
		e--;
	return seed_word_eq(s, (size_t)(e - s), name);
}

static int status_maps(const char *s, size_t n)
{
	struct seed_status st;

	return n > 0 && seed_status_map_word(s, n, &st) == CAIRN_OK;
}

/* A link line's target must be a link or name a number ("ADR 14"). */
static int link_target_ok(const char *x, size_t xl, const char *href)
{
	size_t i;

	if (href)
		return 1;
	for (i = 0; i < xl; i++)
		if (x[i] >= '0' && x[i] <= '9')
			return 1;
	return 0;
}

/*
 * A status log, one dated line each ("2019-03-01 proposed\n2019-04-01
 * accepted"): the last line is the status now.
 */
static void status_log(struct seed_fields *o, const char *t)
{
	const char *last = t, *p;

	if (!(*t >= '0' && *t <= '9') || !strchr(t, '\n'))
		return;
	for (p = t; (p = strchr(p, '\n')) != NULL; p++)
		if (p[1] >= '0' && p[1] <= '9')
			last = p + 1;
	o->status = last;
	o->status_len = strcspn(last, "\n");
}

/* A checklist under Status ("- [ ] Proposed\n- [x] Accepted"): the
 * checked item. */
static void status_checked(const struct mscan *m, size_t i,
			   struct seed_fields *o)
{
	size_t j;

	if (strncmp(o->status, "[ ]", 3) != 0 &&
	    strncmp(o->status, "[x]", 3) != 0 &&
	    strncmp(o->status, "[X]", 3) != 0)
		return;
	for (j = i; j < m->np && m->p[j].type != MD_BLOCK_H; j++) {
		const char *t = m->p[j].text ? m->p[j].text : "";

		if (strncmp(t, "[x]", 3) == 0 || strncmp(t, "[X]", 3) == 0) {
			o->status = t + 3;
			o->status_len = strcspn(t + 3, "\n");
			o->status_line = m->p[j].line;
			o->status_para = &m->p[j];
			return;
		}
	}
	o->unchecked = 1; /* nothing checked: the template's choice left open */
}

static const char *const date_names[] = {
	"date", "decision date", "last updated", "updated", "created", "日期",
};

/* The cell a table gives for a name cell p (index i): the next cell of
 * its row ("| Status | Accepted |"), else, for a header cell, the one
 * below it ("| Created | Status |" over "| 2021-01-16 | Open |"). */
static const struct mpara *cell_value(const struct mscan *m, size_t i)
{
	const struct mpara *p = &m->p[i];
	size_t j;

	if (p->type == MD_BLOCK_TH) {
		for (j = i + 1; j < m->np && m->p[j].row <= p->row + 1 &&
				m->p[j].row != 0;
		     j++)
			if (m->p[j].row == p->row + 1 && m->p[j].col == p->col)
				return m->p[j].text && *m->p[j].text ? &m->p[j]
								    : NULL;
		return NULL;
	}
	if (i + 1 < m->np && m->p[i + 1].row == p->row && m->p[i + 1].text &&
	    *m->p[i + 1].text)
		return &m->p[i + 1];
	return NULL;
}

void seed_fields(const struct mscan *m, struct seed_fields *o)
{
	size_t i, k;
	int in_status = 0, in_date = 0, status_para_done = 0;
	const struct mpara *fs = NULL; /* a "Status:" field line's paragraph */
	const char *fsv = NULL;
	size_t fsl = 0;
	long fsline = 0;
	int late = 0; /* past the first section (not Status or Date) */

	memset(o, 0, sizeof(*o));
	for (i = 0; i < m->np; i++) {
		const struct mpara *p = &m->p[i];
		const char *t = p->text ? p->text : "", *te = t + strlen(t);
		const char *ls;

		if (p->type == MD_BLOCK_H) {
			const char *v;

			in_status = heading_is(t, te, "status") ||
				    heading_is(t, te, "状态");
			in_date = heading_is(t, te, "date") ||
				  heading_is(t, te, "日期");
			if (p->level >= 2 && !in_status && !in_date)
				late = 1;
			status_para_done = 0;
			/* "## Status: Accepted" */
			v = field(t, te, "status");
			if (v && v < te && !o->status) {
				o->status = v;
				o->status_len = strcspn(v, "\n");
				o->status_line = p->line;
				o->status_para = p;
			}
			continue;
		}
		/* a table: "| Status | Accepted |", or a header row */
		if (p->row) {
			const struct mpara *c = cell_value(m, i);

			if (c && heading_is(t, te, "status") && !fs) {
				fs = c;
				fsv = fs->text;
				fsl = strcspn(fsv, "\n");
				fsline = fs->line;
			}
			for (k = 0; c && k < ARRAY_SIZE(date_names) && !o->date;
			     k++)
				if (heading_is(t, te, date_names[k]) &&
				    seed_parse_date(c->text, strlen(c->text),
						    &o->d) == 0) {
					o->date = c->text;
					o->date_line = c->line;
				}
		}
		/* the first paragraph of a Status section is the status */
		if (in_status && !status_para_done && *t) {
			status_para_done = 1;
			if (!o->status) {
				o->status = t;
				o->status_len = strcspn(t, "\n");
				o->status_line = p->line;
				o->status_para = p;
				status_log(o, t);
				status_checked(m, i, o);
			}
		}
		if (in_date && !o->date && *t &&
		    seed_parse_date(t, strcspn(t, "\n"), &o->d) == 0) {
			o->date = t;
			o->date_line = p->line;
		}
		/* field lines: "Status: …", "Date: …", link lines */
		for (ls = t; ls < te; ) {
			const char *le = memchr(ls, '\n', (size_t)(te - ls));
			const char *v, *x;
			size_t xl;
			int sup;

			if (!le)
				le = te;
			v = field(ls, le, "status");
			/* in the sections, a "Status:" line may be prose
			 * ("Status: 404 when…"): only one that maps counts */
			if (v && late && !fs &&
			    !status_maps(v, (size_t)(le - v)))
				v = NULL;
			if (v && v < le && !fs) {
				fs = p;
				fsv = v;
				fsl = (size_t)(le - v);
				fsline = p->line;
			} else if (v && v == le && !fs && le < te) {
				/* "Status:" with the value on the next line */
				const char *n2 = le + 1;

				fs = p;
				fsv = n2;
				fsl = strcspn(n2, "\n");
				fsline = p->line;
			}
			for (k = 0; k < ARRAY_SIZE(date_names) && !o->date; k++) {
				v = field_as(ls, le, date_names[k], 1);
				if (v && v < le && !o->date_raw) {
					o->date_raw = v;
					o->date_raw_len = (size_t)(le - v);
				}
				if (v && v < le &&
				    seed_parse_date(v, (size_t)(le - v), &o->d) ==
					    0) {
					o->date = v;
					o->date_line = p->line;
				}
			}
			if (seed_link_line(ls, (size_t)(le - ls), &sup, &x, &xl)) {
				const char *href = seed_link_in(p, x, xl);

				if (link_target_ok(x, xl, href)) {
					if (!sup && !o->by) {
						o->by = x;
						o->by_len = xl;
						o->by_href = href;
						o->by_line = p->line;
					} else if (sup && !o->sups) {
						o->sups = x;
						o->sups_len = xl;
						o->sups_href = href;
						o->sups_line = p->line;
					}
				}
			}
			ls = le < te ? le + 1 : te;
		}
	}
	if (!o->status && fs) {
		o->status = fsv;
		o->status_len = fsl;
		o->status_line = fsline;
		o->status_para = fs;
	}
	if (o->date)
		o->date_len = strcspn(o->date, "\n");
}
