/*
 * seed_int.h -- what the parts of the seeder share: the status
 * table (seed_status.c), the date forms (seed_date.c) and recognising
 * decision records and their tools' configuration (seed_find.c). seed.c
 * runs the seed itself (reading, chunking, the plan and the write).
 *
 * Layer: internal to seed; nothing here is public API.
 */
#ifndef CAIRN_SEED_INT_H
#define CAIRN_SEED_INT_H

#include <stddef.h>

#include <md4c.h>

#include "internal.h"

static inline int seed_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static inline int seed_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

static inline int seed_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* Case-insensitive compare of n bytes of a with NUL-terminated lower-case w. */
static inline int seed_word_eq(const char *a, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i] == '\0' ||
		    seed_lower((unsigned char)a[i]) != (unsigned char)w[i])
			return 0;
	return w[n] == '\0';
}

/* ------------------------------------------------------- seed_status.c */

/* A status text mapped through the table of docs/SEED.md. */
struct seed_status {
	const char *status;     /* SPEC status (static) */
	const char *outcome;    /* "rejected", "abandoned" or NULL */
	const char *target;     /* X of "superseded by X", into the text */
	size_t target_len;      /* its length */
	const char *supersedes; /* X of "...; supersedes X", into the text */
	size_t supersedes_len;  /* its length */
	const char *rule;       /* the table row that mapped it (static) */
};

/*
 * Map n bytes of a status text. CAIRN_OK with *st filled, or
 * CAIRN_INVALID when no rule maps it (never a guess).
 */
int seed_status_map(const char *text, size_t n, struct seed_status *st);

/*
 * The same without the sentence rules: for a "Status:" line in prose,
 * which counts only when its first word maps ("Status: 404 when the
 * request is rejected" is no status).
 */
int seed_status_map_word(const char *text, size_t n, struct seed_status *st);

/* Is n bytes of status text a question ("What is the status, such as
 * proposed, …?"): a template's prompt left in, not a status? */
int seed_status_prompt(const char *text, size_t n);

/*
 * Does a line start with "Superseded by X" / "Superseded: DATE by X" /
 * "Replaced by X" (*sup = 0, target X), or "Supersedes X" / "Replaces X"
 * (*sup = 1)? 1 with *x, *xl set into the line, else 0.
 */
int seed_link_line(const char *s, size_t n, int *sup, const char **x,
		   size_t *xl);

/* ---------------------------------------------------------- seed_date.c */

/* A date found in a file. */
struct seed_date {
	char iso[11]; /* "YYYY-MM-DD" */
	int a, b, y;  /* the numbers of a numeric "a/b/y" date */
	int ambiguous; /* 1: a/b/y with a, b <= 12 and a != b: order unknown */
	int dayfirst;  /* evidence: 1 day first (a > 12), -1 month first, 0 none */
};

/*
 * Parse n bytes as a date in a form ADRs use: ISO (YYYY-MM-DD, with or
 * without a time), YYYY/MM/DD, DD.MM.YYYY, a/b/YYYY (day first unless
 * only month first is possible; *ambiguous when both are), "December 1,
 * 2021", "1 Dec 2021", "2021年12月1日". Text after the date is ignored.
 * 0 with *d filled, -1 if it is no date.
 */
int seed_parse_date(const char *s, size_t n, struct seed_date *d);

/* Rewrite an ambiguous a/b/y date in d->iso, day first or month first. */
void seed_date_order(struct seed_date *d, int dayfirst);

/* ---------------------------------------------------------- seed_find.c */

/*
 * Does this Markdown text look like a decision record? A numbered title
 * ("# 3. Use X", "# ADR-003: Use X") or MADR front matter (status: or
 * date: with a decision section), plus at least two of the sections
 * Status, Context, Decision, Consequences (or the MADR ones). Reads at
 * most the first 16 KiB.
 */
int seed_looks_like_adr(const char *t, size_t n);

/*
 * Is a title a template's placeholder: "[short title …]", "{title}",
 * "<title>", "NUMBER. TITLE", "Title"?
 */
int seed_placeholder_title(const char *title);

/* Is a "Date:" value a template's placeholder: DATE, YYYY-MM-DD, {date}? */
int seed_placeholder_date(const char *s, size_t n);

/*
 * The decision folders the workspace's tools are configured with, each
 * relative to root (caller frees the vector and its strings): adr-tools'
 * .adr-dir and log4brains' .log4brains.yml (adrFolder, also of
 * packages). CAIRN_OK (perhaps none) or CAIRN_NOMEM.
 */
int seed_config_dirs(const char *root, char ***dirs, size_t *n);

/* ------------------------------------------------------------ seed_md.c */

#define SEED_MAX_BLOCK_TEXT 1024 /* bytes of a block's or paragraph's text kept */
#define SEED_FRONT_KEYS 8        /* known front matter keys */

int seed_grow(void **v, size_t *cap, size_t n, size_t sz);
char *seed_dup_trim(const char *s, size_t n);
long seed_line_of(const size_t *ls, size_t nls, size_t off);

/* One top-level block of a document (a direct child of the document). */
struct mblock {
	int type;    /* MD_BLOCKTYPE */
	int level;   /* heading level for MD_BLOCK_H */
	int fenced;  /* 1: a fenced code block (its text starts a line later) */
	long line;   /* 1-based file line where it starts; 0 if unknown */
	char *text;  /* plain text of its first paragraph (bounded): ids use it */
	char *clean; /* the same without HTML comments: titles, headings shown */
	char *href;  /* its first link target, or NULL */
};

/* A link in a paragraph: where its text starts, and its target. */
struct mlink {
	size_t off; /* offset into the paragraph's text */
	char *href; /* target */
};

/* A paragraph, heading or table cell at any depth (not in code). */
struct mpara {
	size_t top;            /* index of its top-level block */
	int type;              /* MD_BLOCK_P, _H, _TD or _TH */
	int level;             /* heading level */
	long row;              /* table row (cells), else 0 */
	int col;               /* column of a cell (0 first) */
	long line;             /* 1-based line of its first text; 0 unknown */
	char *text;            /* text without HTML comments (bounded) */
	struct mlink *links;   /* its links */
	size_t nlinks, caplinks; /* count, capacity */
};

struct mscan {
	const char *doc;       /* the parsed bytes */
	size_t size;           /* their length */
	const size_t *ls;      /* line start offsets of the whole file */
	size_t nls;            /* lines in the file */
	size_t base;           /* offset of doc in the file */
	struct mblock *b;      /* top-level blocks */
	size_t n, cap;         /* count, capacity */
	struct mpara *p;       /* paragraphs, headings, cells */
	size_t np, capp;       /* count, capacity */
	long *items;           /* lines of top-level list items */
	size_t nitems, capitems; /* count, capacity */
	int depth;             /* blocks open (the document is depth 1) */
	int item_open;         /* 1: a top-level list item still needs its line */
	int text_done;         /* 1: the current block's first paragraph is complete */
	int popen;             /* 1: a paragraph is open */
	int comment;           /* 1: inside an inline HTML comment */
	long row;              /* table rows seen */
	int col;               /* cells seen in the current row */
	struct sbuf tb;        /* text of the current top-level block */
	struct sbuf tbc;       /* the same without HTML comments */
	struct sbuf pb;        /* text of the open paragraph */
	int err;               /* CAIRN_NOMEM once allocation failed */
};

/* Parse doc (at file offset base) into its blocks and paragraphs. */
int seed_ms_parse(struct mscan *m, const char *doc, size_t size, size_t base,
		  const size_t *ls, size_t nls);
void seed_ms_release(struct mscan *m);

/* Front matter: the known keys, in this order. */
enum { FM_KIND, FM_KEY, FM_STATUS, FM_SUPERSEDES, FM_DATE, FM_ID, FM_TITLE,
       FM_FORMAT };

struct front {
	char *v[SEED_FRONT_KEYS];  /* values, or NULL (enum order) */
	long line[SEED_FRONT_KEYS]; /* file line of each value */
	long end;                  /* line of the closing "---" (0: none) */
	size_t body;               /* offset of the first byte after it */
};

/* A message for the run: its line and text. */
struct seed_note {
	long line;
	char text[600];
};

/*
 * Read front matter ("---" on line 1 up to a "---" or "..." line): YAML,
 * else simple "name: value" lines with a warning in *warn (text set).
 * CAIRN_OK, CAIRN_INVALID (*err set) or CAIRN_NOMEM.
 */
int seed_front_parse(const char *t, size_t len, struct front *f,
		     struct seed_note *err, struct seed_note *warn);
void seed_front_release(struct front *f);

/* The fields a decision record writes in its text. Pointers into m. */
struct seed_fields {
	const char *status;           /* status text (one line), or NULL */
	size_t status_len;
	long status_line;
	const struct mpara *status_para; /* its paragraph (for its links) */
	int unchecked;                /* 1: a Status checklist with nothing checked */
	const char *date;             /* a date that parses, or NULL */
	size_t date_len;
	long date_line;
	struct seed_date d;           /* it, parsed */
	const char *date_raw;         /* the first "Date:" line's value, or NULL */
	size_t date_raw_len;
	const char *by;               /* X of a "Superseded by X" line */
	size_t by_len;
	const char *by_href;          /* its link, or NULL */
	long by_line;
	const char *sups;             /* X of a "Supersedes X" line */
	size_t sups_len;
	const char *sups_href;
	long sups_line;
};

/*
 * Find the fields: the status (a Status section's first paragraph, a
 * "## Status: X" heading, else the first "Status: X" line of any
 * paragraph, list item or table row), the first "Date: X" that parses
 * (also a Date section), and the first "Superseded by X" and "Supersedes
 * X" lines anywhere.
 */
void seed_fields(const struct mscan *m, struct seed_fields *o);

/* The target of the first link of p inside [from, from + len), or NULL. */
const char *seed_link_in(const struct mpara *p, const char *from, size_t len);

#endif /* CAIRN_SEED_INT_H */
