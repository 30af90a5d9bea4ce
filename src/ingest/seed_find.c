/*
 * seed_find.c -- finding decision records where a repository keeps them
 * (docs/SEED.md, "What is read"): the folders its tools are
 * configured with (adr-tools' .adr-dir, log4brains' .log4brains.yml),
 * files that look like decision records by their content, and template
 * titles.
 *
 * Layer: pure functions over text and two small files, used by seed.c.
 *
 * Invariants: recognition reads a bounded prefix of a file (16 KiB), so a
 * scan of a whole workspace is linear in its number of files.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "seed.h"
#include "seed_int.h"

#define FIND_PREFIX ((size_t)16 << 10) /* bytes of a file recognition reads */
#define FIND_MAX_DIRS 64               /* folders taken from configuration */
#define FIND_TOP_LINES 40              /* where an ADR's first section starts */

/* The sections decision records have; madr: 1 for MADR's own names. */
static const struct section {
	const char *name;
	int madr;
} sections[] = {
	{ "status", 0 },
	{ "context", 0 },
	{ "decision", 0 },
	{ "consequences", 0 },
	{ "context and problem statement", 1 },
	{ "decision outcome", 1 },
	{ "considered options", 1 },
	{ "decision drivers", 1 },
	{ "pros and cons of the options", 1 },
	{ "problem statement", 0 },
	{ "alternatives", 0 },
	{ "alternatives considered", 0 },
	{ "considered alternatives", 0 },
	{ "decision made", 0 },
	{ "decision description", 0 },
	{ "背景", 0 },
	{ "决策", 0 },
	{ "状态", 0 },
	{ "后果", 0 },
	{ "决定", 0 },
	{ "影响", 0 },
};

/* Trim [*s, *e) of spaces, '#', '*', ':' and a final period. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (seed_space((unsigned char)**s) || **s == '#' ||
			   **s == '*' || **s == '_'))
		(*s)++;
	while (*e > *s && (seed_space((unsigned char)(*e)[-1]) ||
			   (*e)[-1] == '#' || (*e)[-1] == '*' ||
			   (*e)[-1] == '_' || (*e)[-1] == ':' ||
			   (*e)[-1] == '.'))
		(*e)--;
}

/* "3. Use X", "ADR-003: Use X", "ADR 3 - X", "0003 Use X", "RFC 12: X". */
static int numbered(const char *s, const char *e)
{
	const char *p = s;
	int letters = 0, digits = 0;

	while (p < e && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
	       && letters < 8) {
		p++;
		letters++;
	}
	if (letters > 0 && p < e && (*p == '-' || *p == '_' || *p == ' ' ||
				     *p == '#'))
		p++;
	while (p < e && *p >= '0' && *p <= '9') {
		p++;
		digits++;
	}
	if (digits == 0 || digits > 8)
		return 0;
	return p < e && (*p == '.' || *p == ':' || *p == ')' || *p == ' ' ||
			 *p == '-' || *p == '_');
}

/*
 * A title that names the document a decision record: "Decision record for
 * X", "Architecture Decision Record: X", "ADR: X", "决策记录：X".
 */
static int decision_title(const char *s, const char *e)
{
	static const char *const names[] = {
		"architecture decision record", "architectural decision record",
		"any decision record", "decision record", "adr:", "adr -",
		"决策记录", "架构决策记录",
	};
	size_t i, n = (size_t)(e - s);

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		size_t l = strlen(names[i]);

		if (n > l && seed_word_eq(s, l, names[i]) &&
		    !seed_alnum((unsigned char)s[l]))
			return 1;
	}
	return 0;
}

int seed_looks_like_adr(const char *t, size_t n)
{
	const char *p = t, *e = t + (n < FIND_PREFIX ? n : FIND_PREFIX);
	unsigned seen = 0;
	int fence = 0, kinds = 0, madr = 0, num_title = 0, status = 0;
	int fm = 0, line = 0, first = 0, dec_title = 0;
	size_t i;

	while (p < e) {
		const char *le = memchr(p, '\n', (size_t)(e - p));
		const char *s = p, *q;

		if (!le)
			le = e;
		p = le < e ? le + 1 : e;
		line++;
		q = le;
		/* front matter: status: and date: keys count as a status */
		if (line == 1 && q - s >= 3 && memcmp(s, "---", 3) == 0) {
			fm = 1;
			continue;
		}
		if (fm) {
			if (q - s >= 3 && (memcmp(s, "---", 3) == 0 ||
					   memcmp(s, "...", 3) == 0)) {
				fm = 0;
				continue;
			}
			if (q - s > 7 && seed_word_eq(s, 7, "status:"))
				status = 1;
			continue;
		}
		while (s < q && (*s == ' ' || *s == '\t'))
			s++;
		if (q - s >= 3 && (memcmp(s, "```", 3) == 0 ||
				   memcmp(s, "~~~", 3) == 0)) {
			fence = !fence;
			continue;
		}
		if (fence)
			continue;
		/* "Status: Accepted", "* Status: Accepted" */
		{
			const char *f = s;

			if (f < q && (*f == '*' || *f == '-' || *f == '+'))
				f++;
			while (f < q && (*f == ' ' || *f == '*' || *f == '_'))
				f++;
			if (q - f > 7 && seed_word_eq(f, 7, "status:"))
				status = 1;
		}
		if (s < q && *s == '#') {
			int level = 0;
			const char *h = s, *he = q;

			while (h < he && *h == '#') {
				h++;
				level++;
			}
			if (h < he && *h != ' ' && *h != '\t')
				continue;
			trim(&h, &he);
			if (level == 1 && numbered(h, he))
				num_title = 1;
			if (level == 1 && decision_title(h, he))
				dec_title = 1;
			if (he - h > 7 && seed_word_eq(h, 7, "status:"))
				status = 1;
			for (i = 0; i < ARRAY_SIZE(sections); i++) {
				if (!seed_word_eq(h, (size_t)(he - h),
						  sections[i].name) ||
				    (seen & (1u << i)))
					continue;
				seen |= 1u << i;
				kinds++;
				if (!first)
					first = line;
				madr += sections[i].madr;
				if (i == 0)
					status = 1;

			}
		}
	}
	/* three plain sections alone must start near the top: a long
	 * document that has a "Decision" section somewhere is no ADR */
	/* "# Decision record for X" with one section of a decision record
	 * (Decision, Decision Made, Considered Alternatives, …) is one */
	return (kinds >= 2 && (num_title || status)) || madr >= 2 ||
	       (dec_title && kinds >= 1) ||
	       (kinds >= 3 && first > 0 && first <= FIND_TOP_LINES);
}

int seed_placeholder_title(const char *title)
{
	const char *s = title, *e;
	size_t n, i;

	if (!title)
		return 0;
	e = s + strlen(s);
	while (s < e && seed_space((unsigned char)*s))
		s++;
	while (e > s && seed_space((unsigned char)e[-1]))
		e--;
	n = (size_t)(e - s);
	if (n == 0)
		return 0;
	if (n >= 2 && ((*s == '[' && e[-1] == ']') ||
		       (*s == '{' && e[-1] == '}') ||
		       (*s == '<' && e[-1] == '>')))
		return 1;
	if (seed_word_eq(s, n, "title") || seed_word_eq(s, n, "adr title") ||
	    seed_word_eq(s, n, "adr template") ||
	    seed_word_eq(s, n, "template"))
		return 1;
	for (i = 0; i < n; i++) {
		/* "NUMBER. TITLE": the upper-case word TITLE */
		if (i + 5 <= n && memcmp(s + i, "TITLE", 5) == 0 &&
		    (i == 0 || !seed_alnum((unsigned char)s[i - 1])) &&
		    (i + 5 == n || !seed_alnum((unsigned char)s[i + 5])))
			return 1;
		/* "{title}", "[short title of …]" inside */
		if ((s[i] == '{' || s[i] == '[') && i + 1 < n) {
			char close = s[i] == '{' ? '}' : ']';
			const char *c = memchr(s + i, close, n - i);
			const char *w;

			if (!c)
				continue;
			for (w = s + i; w + 5 <= c; w++)
				if (seed_word_eq(w, 5, "title"))
					return 1;
		}
	}
	return 0;
}

int seed_placeholder_date(const char *s, size_t n)
{
	while (n > 0 && seed_space((unsigned char)s[n - 1]))
		n--;
	if (n >= 2 && s[0] == '{' && s[n - 1] == '}')
		return 1;
	return (n == 4 && memcmp(s, "DATE", 4) == 0) ||
	       (n == 10 && seed_word_eq(s, 10, "yyyy-mm-dd"));
}

/* Append a configured folder: "./docs/adr/" -> "docs/adr"; no "..". */
static int add_dir(char ***dirs, size_t *n, const char *s, size_t len)
{
	char **nv;
	char *d;

	while (len > 0 && (seed_space((unsigned char)*s) || *s == '"' ||
			   *s == '\'')) {
		s++;
		len--;
	}
	while (len > 0 && (seed_space((unsigned char)s[len - 1]) ||
			   s[len - 1] == '"' || s[len - 1] == '\'' ||
			   s[len - 1] == '/'))
		len--;
	while (len >= 2 && s[0] == '.' && s[1] == '/') {
		s += 2;
		len -= 2;
	}
	if (len == 0 || s[0] == '/' || *n >= FIND_MAX_DIRS ||
	    memmem(s, len, "..", 2) || memchr(s, '#', len))
		return CAIRN_OK;
	d = util_strndup(s, len);
	if (!d)
		return CAIRN_NOMEM;
	nv = util_realloc(*dirs, (*n + 1) * sizeof(*nv));
	if (!nv) {
		cairn_free(d);
		return CAIRN_NOMEM;
	}
	nv[(*n)++] = d;
	*dirs = nv;
	return CAIRN_OK;
}

int seed_config_dirs(const char *root, char ***dirs, size_t *n)
{
	char path[4096], err[256], *buf = NULL;
	size_t len = 0;
	int rc = CAIRN_OK;

	*dirs = NULL;
	*n = 0;
	/* adr-tools: .adr-dir holds the folder, one line */
	snprintf(path, sizeof(path), "%s/.adr-dir", root);
	if (util_read_file(path, 4096, &buf, &len, err, sizeof(err)) ==
	    CAIRN_OK) {
		rc = add_dir(dirs, n, buf, strcspn(buf, "\r\n"));
		cairn_free(buf);
		buf = NULL;
		if (rc)
			return rc;
	}
	/* log4brains: adrFolder: of the project and of each package */
	snprintf(path, sizeof(path), "%s/.log4brains.yml", root);
	if (util_read_file(path, 1 << 20, &buf, &len, err, sizeof(err)) ==
	    CAIRN_OK) {
		const char *p = buf, *e = buf + len;

		while (p < e && rc == CAIRN_OK) {
			const char *le = memchr(p, '\n', (size_t)(e - p));
			const char *s = p;

			if (!le)
				le = e;
			while (s < le && (*s == ' ' || *s == '\t' || *s == '-'))
				s++;
			if (le - s > 10 && memcmp(s, "adrFolder:", 10) == 0)
				rc = add_dir(dirs, n, s + 10,
					     (size_t)(le - s - 10));
			p = le < e ? le + 1 : e;
		}
		cairn_free(buf);
	}
	return rc;
}
