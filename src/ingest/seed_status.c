/*
 * seed_status.c -- the status table of cairn seed (docs/SEED.md, "Status
 * mapping"): what real decision records write as their
 * status, mapped to SPEC statuses.
 *
 * Layer: a pure function of its text, used by seed.c.
 *
 * The rules, in order:
 *   1. decorations are stripped: emoji, markup, brackets and punctuation
 *      around the words ("✅ Accepted", "**Accepted**", "[Draft]");
 *   2. a template's placeholder left in ("[Draft/Final/Postponed]",
 *      "proposed | accepted | …") is unverified: the file does not say
 *      which;
 *   3. otherwise the first word or phrase decides ("Pending", "on hold",
 *      "Partly superseded"); what follows it is a comment ("Rejected (see
 *      019)", "Decided. …"), except an alternative ("Accepted or Maybe":
 *      refused) and "superseded by X" / "supersedes X" in it, which are
 *      kept as links.
 * Must never: map a text that no rule covers (SPEC 3: an unknown status
 * is never read as unverified).
 */
#include <string.h>

#include "internal.h"
#include "seed.h"
#include "seed_int.h"

/*
 * The table. phrase: lower case; a space matches a run of spaces, '-' or
 * '_'. adr: 1 when the word may appear in a template's placeholder list.
 * Longer phrases come before their prefixes.
 */
static const struct status_rule {
	const char *phrase;  /* as written, lower case */
	const char *status;  /* SPEC status */
	const char *outcome; /* shown in the body, or NULL */
	int sup;             /* 1: a superseded word ("by X" may follow) */
	const char *rule;    /* the row of docs/SEED.md */
} rules[] = {
	/* accepted */
	{ "accepted", "accepted", NULL, 0, "accepted" },
	{ "accept", "accepted", NULL, 0, "accepted" },
	{ "approved", "accepted", NULL, 0, "accepted" },
	{ "adopted", "accepted", NULL, 0, "accepted" },
	{ "agreed", "accepted", NULL, 0, "accepted" },
	{ "decided", "accepted", NULL, 0, "accepted" },
	{ "final", "accepted", NULL, 0, "accepted" },
	{ "implemented", "accepted", NULL, 0, "accepted" },
	{ "active", "accepted", NULL, 0, "accepted" },
	{ "in effect", "accepted", NULL, 0, "accepted" },
	{ "done", "accepted", NULL, 0, "accepted" },
	{ "completed", "accepted", NULL, 0, "accepted" },
	{ "complete", "accepted", NULL, 0, "accepted" },
	{ "ratified", "accepted", NULL, 0, "accepted" },
	{ "current", "accepted", NULL, 0, "accepted" },
	{ "live", "accepted", NULL, 0, "accepted" },
	{ "in use", "accepted", NULL, 0, "accepted" },
	{ "implementing", "accepted", NULL, 0, "accepted" },
	{ "amended", "accepted", NULL, 0, "accepted" },
	{ "partly superseded", "accepted", NULL, 0, "partly superseded" },
	{ "partially superseded", "accepted", NULL, 0, "partly superseded" },
	{ "partly superceded", "accepted", NULL, 0, "partly superseded" },
	{ "partially superceded", "accepted", NULL, 0, "partly superseded" },
	/* not yet agreed */
	{ "proposed", "unverified", NULL, 0, "proposed" },
	{ "proposal", "unverified", NULL, 0, "proposed" },
	{ "draft", "unverified", NULL, 0, "proposed" },
	{ "pending", "unverified", NULL, 0, "proposed" },
	{ "incomplete", "unverified", NULL, 0, "proposed" },
	{ "open", "unverified", NULL, 0, "proposed" },
	{ "work in progress", "unverified", NULL, 0, "proposed" },
	{ "in progress", "unverified", NULL, 0, "proposed" },
	{ "wip", "unverified", NULL, 0, "proposed" },
	{ "under review", "unverified", NULL, 0, "proposed" },
	{ "in review", "unverified", NULL, 0, "proposed" },
	{ "under discussion", "unverified", NULL, 0, "proposed" },
	{ "in discussion", "unverified", NULL, 0, "proposed" },
	{ "suggested", "unverified", NULL, 0, "proposed" },
	{ "under consideration", "unverified", NULL, 0, "proposed" },
	{ "request for comments", "unverified", NULL, 0, "proposed" },
	{ "rfc", "unverified", NULL, 0, "proposed" },
	{ "experimental", "unverified", NULL, 0, "proposed" },
	{ "trial", "unverified", NULL, 0, "proposed" },
	{ "tentative", "unverified", NULL, 0, "proposed" },
	{ "planned", "unverified", NULL, 0, "proposed" },
	{ "on hold", "unverified", NULL, 0, "on hold" },
	{ "postponed", "unverified", NULL, 0, "on hold" },
	{ "deferred", "unverified", NULL, 0, "on hold" },
	{ "paused", "unverified", NULL, 0, "on hold" },
	{ "blocked", "unverified", NULL, 0, "on hold" },
	/* a standing decision not to do it */
	{ "rejected", "accepted", "rejected", 0, "rejected" },
	{ "declined", "accepted", "rejected", 0, "rejected" },
	{ "refused", "accepted", "rejected", 0, "rejected" },
	{ "not accepted", "accepted", "rejected", 0, "rejected" },
	{ "not approved", "accepted", "rejected", 0, "rejected" },
	{ "won't do", "accepted", "rejected", 0, "rejected" },
	{ "wont do", "accepted", "rejected", 0, "rejected" },
	{ "cancelled", "accepted", "abandoned", 0, "abandoned" },
	{ "canceled", "accepted", "abandoned", 0, "abandoned" },
	{ "abandoned", "accepted", "abandoned", 0, "abandoned" },
	{ "withdrawn", "accepted", "abandoned", 0, "abandoned" },
	{ "retracted", "accepted", "abandoned", 0, "abandoned" },
	{ "discarded", "accepted", "abandoned", 0, "abandoned" },
	{ "dropped", "accepted", "abandoned", 0, "abandoned" },
	/* no longer in effect */
	{ "deprecated", "historical", NULL, 0, "deprecated" },
	{ "obsolete", "historical", NULL, 0, "deprecated" },
	{ "obsoleted", "historical", NULL, 0, "deprecated" },
	{ "archived", "historical", NULL, 0, "deprecated" },
	{ "revoked", "historical", NULL, 0, "deprecated" },
	{ "reverted", "historical", NULL, 0, "deprecated" },
	{ "expired", "historical", NULL, 0, "deprecated" },
	{ "inactive", "historical", NULL, 0, "deprecated" },
	{ "sunset", "historical", NULL, 0, "deprecated" },
	{ "sunsetted", "historical", NULL, 0, "deprecated" },
	/* replaced by a newer record */
	{ "superseded", "superseded", NULL, 1, "superseded" },
	{ "superceded", "superseded", NULL, 1, "superseded" },
	{ "superseeded", "superseded", NULL, 1, "superseded" },
	{ "replaced", "superseded", NULL, 1, "superseded" },
	/* SPEC statuses, named directly */
	{ "unverified", "unverified", NULL, 0, "SPEC status" },
	{ "stale", "stale", NULL, 0, "SPEC status" },
	{ "historical", "historical", NULL, 0, "SPEC status" },
	{ "false", "false", NULL, 0, "SPEC status" },
	{ "retired", "retired", NULL, 0, "SPEC status" },
	/* Chinese */
	{ "已被取代", "superseded", NULL, 1, "superseded" },
	{ "被取代", "superseded", NULL, 1, "superseded" },
	{ "已取代", "superseded", NULL, 1, "superseded" },
	{ "已接受", "accepted", NULL, 0, "accepted" },
	{ "接受", "accepted", NULL, 0, "accepted" },
	{ "已采纳", "accepted", NULL, 0, "accepted" },
	{ "采纳", "accepted", NULL, 0, "accepted" },
	{ "已批准", "accepted", NULL, 0, "accepted" },
	{ "已通过", "accepted", NULL, 0, "accepted" },
	{ "通过", "accepted", NULL, 0, "accepted" },
	{ "提议", "unverified", NULL, 0, "proposed" },
	{ "提案", "unverified", NULL, 0, "proposed" },
	{ "草案", "unverified", NULL, 0, "proposed" },
	{ "草稿", "unverified", NULL, 0, "proposed" },
	{ "待定", "unverified", NULL, 0, "proposed" },
	{ "讨论中", "unverified", NULL, 0, "proposed" },
	{ "已拒绝", "accepted", "rejected", 0, "rejected" },
	{ "拒绝", "accepted", "rejected", 0, "rejected" },
	{ "已否决", "accepted", "rejected", 0, "rejected" },
	{ "否决", "accepted", "rejected", 0, "rejected" },
	{ "已废弃", "historical", NULL, 0, "deprecated" },
	{ "废弃", "historical", NULL, 0, "deprecated" },
	{ "已弃用", "historical", NULL, 0, "deprecated" },
	{ "弃用", "historical", NULL, 0, "deprecated" },
};

/*
 * A status written as a sentence ("Gathering information. We are starting
 * with Bulma.", "The team approved it in May."): when no row of the table
 * starts it, its first sentence is read by these two tables (docs/SEED.md,
 * "Statuses written as sentences"). starts: phrases a sentence may begin
 * with that say what stage the decision is in. words: clear status words
 * looked for anywhere in the first sentence; every one found must give the
 * same status, and a negation ("not", "no", "never", "n't", 未, 不, 没)
 * refuses the sentence. Anything else stays unknown (SPEC 3).
 */
static const struct status_rule sentence_starts[] = {
	{ "gathering information", "unverified", NULL, 0, "proposed (sentence)" },
	{ "gathering feedback", "unverified", NULL, 0, "proposed (sentence)" },
	{ "gathering requirements", "unverified", NULL, 0, "proposed (sentence)" },
	{ "collecting information", "unverified", NULL, 0, "proposed (sentence)" },
	{ "investigating", "unverified", NULL, 0, "proposed (sentence)" },
	{ "researching", "unverified", NULL, 0, "proposed (sentence)" },
	{ "evaluating", "unverified", NULL, 0, "proposed (sentence)" },
	{ "exploring", "unverified", NULL, 0, "proposed (sentence)" },
	{ "under evaluation", "unverified", NULL, 0, "proposed (sentence)" },
	{ "being evaluated", "unverified", NULL, 0, "proposed (sentence)" },
	{ "being discussed", "unverified", NULL, 0, "proposed (sentence)" },
	{ "to be decided", "unverified", NULL, 0, "proposed (sentence)" },
	{ "tbd", "unverified", NULL, 0, "proposed (sentence)" },
	{ "收集信息", "unverified", NULL, 0, "proposed (sentence)" },
	{ "调研中", "unverified", NULL, 0, "proposed (sentence)" },
	{ "评估中", "unverified", NULL, 0, "proposed (sentence)" },
};

static const struct status_rule sentence_words[] = {
	{ "accepted", "accepted", NULL, 0, "accepted (sentence)" },
	{ "approved", "accepted", NULL, 0, "accepted (sentence)" },
	{ "adopted", "accepted", NULL, 0, "accepted (sentence)" },
	{ "agreed", "accepted", NULL, 0, "accepted (sentence)" },
	{ "decided", "accepted", NULL, 0, "accepted (sentence)" },
	{ "ratified", "accepted", NULL, 0, "accepted (sentence)" },
	{ "proposed", "unverified", NULL, 0, "proposed (sentence)" },
	{ "draft", "unverified", NULL, 0, "proposed (sentence)" },
	{ "under discussion", "unverified", NULL, 0, "proposed (sentence)" },
	{ "under review", "unverified", NULL, 0, "proposed (sentence)" },
	{ "under consideration", "unverified", NULL, 0, "proposed (sentence)" },
	{ "on hold", "unverified", NULL, 0, "on hold (sentence)" },
	{ "postponed", "unverified", NULL, 0, "on hold (sentence)" },
	{ "rejected", "accepted", "rejected", 0, "rejected (sentence)" },
	{ "declined", "accepted", "rejected", 0, "rejected (sentence)" },
	{ "abandoned", "accepted", "abandoned", 0, "abandoned (sentence)" },
	{ "withdrawn", "accepted", "abandoned", 0, "abandoned (sentence)" },
	{ "deprecated", "historical", NULL, 0, "deprecated (sentence)" },
	{ "obsolete", "historical", NULL, 0, "deprecated (sentence)" },
	{ "superseded", "superseded", NULL, 1, "superseded (sentence)" },
	{ "superceded", "superseded", NULL, 1, "superseded (sentence)" },
	{ "已接受", "accepted", NULL, 0, "accepted (sentence)" },
	{ "已采纳", "accepted", NULL, 0, "accepted (sentence)" },
	{ "已批准", "accepted", NULL, 0, "accepted (sentence)" },
	{ "已通过", "accepted", NULL, 0, "accepted (sentence)" },
	{ "讨论中", "unverified", NULL, 0, "proposed (sentence)" },
	{ "已拒绝", "accepted", "rejected", 0, "rejected (sentence)" },
	{ "已否决", "accepted", "rejected", 0, "rejected (sentence)" },
	{ "已废弃", "historical", NULL, 0, "deprecated (sentence)" },
	{ "已弃用", "historical", NULL, 0, "deprecated (sentence)" },
	{ "已被取代", "superseded", NULL, 1, "superseded (sentence)" },
};

/* The code point at s (< e) and its length; 0xFFFD for a broken one. */
static unsigned cp_at(const char *s, const char *e, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = (size_t)(e - s), k, i;
	unsigned c;

	if (p[0] < 0x80) {
		*len = 1;
		return p[0];
	}
	k = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC0 ? 2 : 1;
	if (k == 1 || k > n) {
		*len = 1;
		return 0xFFFD;
	}
	c = p[0] & (0x3F >> (k - 1));
	for (i = 1; i < k; i++)
		c = (c << 6) | (p[i] & 0x3F);
	*len = k;
	return c;
}

/* A letter or digit of a script status words are written in. */
static int is_letter(unsigned c)
{
	if (c < 0x80)
		return seed_alnum((int)c);
	return (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) ||
	       (c >= 0x370 && c <= 0x52F) || (c >= 0x3040 && c <= 0x30FF) ||
	       (c >= 0x3400 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF);
}

/* Strip decorations (emoji, markup, brackets, punctuation) at both ends. */
static void strip(const char **ps, const char **pe)
{
	const char *s = *ps, *e = *pe;
	size_t l;

	while (s < e && !is_letter(cp_at(s, e, &l)))
		s += l;
	while (e > s) {
		const char *q = e - 1;

		while (q > s && ((unsigned char)*q & 0xC0) == 0x80)
			q--;
		if (is_letter(cp_at(q, e, &l)))
			break;
		e = q;
	}
	*ps = s;
	*pe = e;
}

/* Does phrase match at s? The end of the match, or NULL. */
static const char *match(const char *s, const char *e, const char *phrase)
{
	const char *p = phrase;

	while (*p) {
		if (*p == ' ') {
			if (s >= e || !(seed_space((unsigned char)*s) ||
					*s == '-' || *s == '_'))
				return NULL;
			while (s < e && (seed_space((unsigned char)*s) ||
					 *s == '-' || *s == '_'))
				s++;
			p++;
			continue;
		}
		if (*p == '\'') { /* "won't", "won’t" */
			if (s < e && *s == '\'') {
				s++;
			} else if (e - s >= 3 && memcmp(s, "\xE2\x80\x99", 3) == 0) {
				s += 3;
			} else {
				return NULL;
			}
			p++;
			continue;
		}
		if (s >= e || seed_lower((unsigned char)*s) != (unsigned char)*p)
			return NULL;
		s++;
		p++;
	}
	/* an ASCII word ends at a word boundary; CJK words need none */
	if (seed_alnum((unsigned char)p[-1]) && s < e &&
	    seed_alnum((unsigned char)*s))
		return NULL;
	return s;
}

static const struct status_rule *find_rule(const char *s, const char *e,
					   const char **end)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		const char *m = match(s, e, rules[i].phrase);

		if (m) {
			*end = m;
			return &rules[i];
		}
	}
	return NULL;
}

/* The end of the first sentence of [s, e): its '.', '!', '?', ';', '。',
 * '！', '？', '；' (a '.' between two digits is no end), or a line end. */
static const char *sentence_end(const char *s, const char *e)
{
	const char *p;

	for (p = s; p < e; p++) {
		if (*p == '\n' || *p == '!' || *p == '?' || *p == ';')
			return p;
		if (*p == '.' && !(p > s && p + 1 < e &&
				   seed_alnum((unsigned char)p[-1]) &&
				   seed_alnum((unsigned char)p[1])))
			return p;
		if (e - p >= 3 && (memcmp(p, "\xE3\x80\x82", 3) == 0 ||
				   memcmp(p, "\xEF\xBC\x81", 3) == 0 ||
				   memcmp(p, "\xEF\xBC\x9F", 3) == 0 ||
				   memcmp(p, "\xEF\xBC\x9B", 3) == 0))
			return p;
	}
	return e;
}

/* Does [s, e) hold a negation: "not", "no", "never", "nor", "n't", or
 * 未, 不, 没 (Chinese)? */
static int has_negation(const char *s, const char *e)
{
	static const char *const neg[] = { "not", "no", "never", "nor",
					   "neither", "cannot" };
	const char *p;
	size_t i;

	for (p = s; p < e; p++) {
		if (p > s && seed_alnum((unsigned char)p[-1]))
			continue;
		for (i = 0; i < ARRAY_SIZE(neg); i++) {
			size_t l = strlen(neg[i]);

			if ((size_t)(e - p) >= l && seed_word_eq(p, l, neg[i]) &&
			    ((size_t)(e - p) == l ||
			     !seed_alnum((unsigned char)p[l])))
				return 1;
		}
	}
	for (p = s; p + 3 <= e; p++)
		if ((p[0] == 'n' || p[0] == 'N') &&
		    (p[1] == '\'' || (e - p >= 5 &&
				      memcmp(p + 1, "\xE2\x80\x99", 3) == 0)) &&
		    (p[1] == '\'' ? p[2] : p[4]) == 't')
			return 1;
	return memmem(s, (size_t)(e - s), "未", 3) ||
	       memmem(s, (size_t)(e - s), "不", 3) ||
	       memmem(s, (size_t)(e - s), "没", 3);
}

/*
 * The sentence rules (see sentence_starts): the rule of the first sentence
 * of [s, e), or NULL when none maps it or its words disagree.
 */
static const struct status_rule *sentence_rule(const char *s, const char *e)
{
	const struct status_rule *found = NULL;
	const char *se = sentence_end(s, e), *p, *m;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sentence_starts); i++)
		if (match(s, se, sentence_starts[i].phrase))
			return &sentence_starts[i];
	if (has_negation(s, se))
		return NULL;
	for (p = s; p < se; p++) {
		if (p > s && seed_alnum((unsigned char)p[-1]))
			continue;
		for (i = 0; i < ARRAY_SIZE(sentence_words); i++) {
			const struct status_rule *w = &sentence_words[i];

			m = match(p, se, w->phrase);
			if (!m)
				continue;
			if (found && (strcmp(found->status, w->status) != 0 ||
				      found->outcome != w->outcome))
				return NULL; /* "proposed, accepted, …" */
			found = w;
			break;
		}
	}
	return found;
}

/* Skip spaces; return the new start. */
static const char *skip_sp(const char *s, const char *e)
{
	while (s < e && seed_space((unsigned char)*s))
		s++;
	return s;
}

/* Is [s, e) an ellipsis or "etc" (in a template's list)? */
static int is_ellipsis(const char *s, const char *e)
{
	while (s < e && seed_space((unsigned char)*s))
		s++;
	while (e > s && seed_space((unsigned char)e[-1]))
		e--;
	return (e - s == 3 && (memcmp(s, "\xE2\x80\xA6", 3) == 0 ||
			       memcmp(s, "...", 3) == 0 ||
			       seed_word_eq(s, 3, "etc"))) ||
	       (e - s == 4 && seed_word_eq(s, 4, "etc."));
}

/*
 * A template's placeholder: parts joined by '|', '/', " or " (or by ','
 * when every part is a bare word), each part a status word (perhaps with
 * "by X" after a superseded word) or an ellipsis.
 */
static int is_placeholder(const char *s, const char *e)
{
	size_t parts = 0;
	int strong = 0, bare = 1;

	while (s < e) {
		const char *q = s, *pe, *m;
		const struct status_rule *r;

		/* the part ends at a separator */
		while (q < e && *q != '|' && *q != '/' && *q != ',') {
			if (q > s && seed_space((unsigned char)q[-1]) &&
			    e - q >= 3 && seed_word_eq(q, 2, "or") &&
			    seed_space((unsigned char)q[2]))
				break;
			q++;
		}
		pe = q;
		if (q < e && *q != '|' && *q != '/' && *q != ',') {
			strong = 1; /* " or " */
			q += 2;
		} else if (q < e) {
			strong |= *q != ',';
			q++;
		}
		if (!is_ellipsis(s, pe)) {
			const char *ps = s, *pe2 = pe;

			strip(&ps, &pe2);
			r = find_rule(ps, pe2, &m);
			if (!r)
				return 0;
			m = skip_sp(m, pe2);
			if (m < pe2) {
				if (!r->sup || !(pe2 - m >= 2 &&
						 seed_word_eq(m, 2, "by")))
					return 0;
				bare = 0;
			}
			parts++;
		}
		s = q;
	}
	return parts >= 2 && (strong || bare);
}

/* The X after "by" in [s, e) ("by X", "by: X", "2019-12-19 by X"). */
static int after_by(const char *s, const char *e, const char **x, size_t *xl)
{
	const char *p;

	for (p = s; p + 2 <= e; p++) {
		if (seed_word_eq(p, 2, "by") &&
		    (p == s || !seed_alnum((unsigned char)p[-1])) &&
		    (p + 2 == e || !seed_alnum((unsigned char)p[2]))) {
			const char *t = p + 2, *te = e;

			while (t < te && (seed_space((unsigned char)*t) ||
					  *t == ':'))
				t++;
			while (te > t && (seed_space((unsigned char)te[-1]) ||
					  te[-1] == '.' || te[-1] == ')'))
				te--;
			if (t == te)
				return 0;
			*x = t;
			*xl = (size_t)(te - t);
			return 1;
		}
	}
	return 0;
}

int seed_link_line(const char *s, size_t n, int *sup, const char **x,
		   size_t *xl)
{
	static const char *const by[] = { "superseded", "superceded",
					  "replaced" };
	static const char *const of[] = { "supersedes", "supercedes",
					  "replaces" };
	const char *e = s + n, *m;
	size_t i;

	s = skip_sp(s, e);
	for (i = 0; i < ARRAY_SIZE(by); i++) {
		m = match(s, e, by[i]);
		/* "Superseded by X", "Superseded: 2019-12-19 by X" */
		if (m && (m == e || *m == ' ' || *m == ':') &&
		    after_by(m, e, x, xl)) {
			*sup = 0;
			return 1;
		}
	}
	for (i = 0; i < ARRAY_SIZE(of); i++) {
		m = match(s, e, of[i]);
		if (m && m < e && (*m == ' ' || *m == ':')) {
			const char *t = m, *te = e;

			while (t < te && (seed_space((unsigned char)*t) ||
					  *t == ':'))
				t++;
			while (te > t && (seed_space((unsigned char)te[-1]) ||
					  te[-1] == '.' || te[-1] == ')'))
				te--;
			if (t == te)
				return 0;
			*sup = 1;
			*x = t;
			*xl = (size_t)(te - t);
			return 1;
		}
	}
	return 0;
}

static int status_map(const char *text, size_t n, struct seed_status *st,
		      int sentences)
{
	const struct status_rule *r;
	const char *s, *e, *m, *p;

	memset(st, 0, sizeof(*st));
	if (!text)
		return CAIRN_INVALID;
	s = text;
	e = text + n;
	strip(&s, &e);
	/* "2019-04-01: Accepted", "2019-04-01 accepted" (a status log) */
	if (s < e && *s >= '0' && *s <= '9') {
		const char *q = s;

		while (q < e && ((*q >= '0' && *q <= '9') || *q == '-' ||
				 *q == '/' || *q == '.'))
			q++;
		if (q - s >= 8) {
			s = q;
			strip(&s, &e);
		}
	}
	if (s == e)
		return CAIRN_INVALID;
	if (is_placeholder(s, e)) {
		st->status = "unverified";
		st->rule = "placeholder";
		return CAIRN_OK;
	}
	r = find_rule(s, e, &m);
	if (!r) {
		/* a status written as a sentence: its first sentence's
		 * documented phrases, else nothing */
		r = sentences ? sentence_rule(s, e) : NULL;
		if (r) {
			st->status = r->status;
			st->outcome = r->outcome;
			st->rule = r->rule;
			if (r->sup)
				after_by(s, sentence_end(s, e), &st->target,
					 &st->target_len);
			return CAIRN_OK;
		}
#ifndef CAIRN_MUTATE_SEED_GUESS
		return CAIRN_INVALID; /* never a guess (SPEC 3) */
#else
		st->status = "unverified";
		st->rule = "guess";
		return CAIRN_OK;
#endif
	}
	/* "Accepted or Maybe", "Accepted | ???": an alternative no rule maps
	 * (looked for in the text as written, decorations included) */
	p = skip_sp(m, text + n);
	if (p < text + n && (*p == '|' || *p == '/' ||
			     (text + n - p >= 3 && seed_word_eq(p, 2, "or") &&
			      seed_space((unsigned char)p[2]))))
		return CAIRN_INVALID;
	p = skip_sp(m, e);
	st->status = r->status;
	st->outcome = r->outcome;
	st->rule = r->rule;
	if (r->sup) {
		after_by(m, e, &st->target, &st->target_len);
		return CAIRN_OK;
	}
	/* a comment may name links: "accepted; supersedes ADR-0045",
	 * "Deprecated, superseded by ADR 7" */
	for (; p < e; p++) {
		int sup;
		const char *x;
		size_t xl;

		if (p > m && seed_alnum((unsigned char)p[-1]))
			continue;
		if (seed_link_line(p, (size_t)(e - p), &sup, &x, &xl)) {
			if (sup && !st->supersedes) {
				st->supersedes = x;
				st->supersedes_len = xl;
			} else if (!sup && !st->target &&
				   strcmp(r->rule, "partly superseded") != 0) {
				st->status = "superseded";
				st->outcome = NULL;
				st->rule = "superseded";
				st->target = x;
				st->target_len = xl;
			}
		}
	}
	return CAIRN_OK;
}

int seed_status_map(const char *text, size_t n, struct seed_status *st)
{
	return status_map(text, n, st, 1);
}

int seed_status_prompt(const char *text, size_t n)
{
	while (n > 0 && (seed_space((unsigned char)text[n - 1]) ||
			 text[n - 1] == '*' || text[n - 1] == '_' ||
			 text[n - 1] == '>'))
		n--;
	return (n >= 1 && text[n - 1] == '?') ||
	       (n >= 3 && memcmp(text + n - 3, "\xEF\xBC\x9F", 3) == 0);
}

int seed_status_map_word(const char *text, size_t n, struct seed_status *st)
{
	return status_map(text, n, st, 0);
}

int cairn_seed_map_status(const char *text, const char **status,
			  const char **outcome, const char **target,
			  size_t *target_len)
{
	struct seed_status st;
	int rc;

	*status = NULL;
	*outcome = NULL;
	if (target)
		*target = NULL;
	if (target_len)
		*target_len = 0;
	if (!text)
		return CAIRN_INVALID;
	rc = seed_status_map(text, strlen(text), &st);
	if (rc)
		return rc;
	*status = st.status;
	*outcome = st.outcome;
	if (target && st.target) {
		*target = st.target;
		if (target_len)
			*target_len = st.target_len;
	}
	return CAIRN_OK;
}
