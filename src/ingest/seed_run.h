/*
 * seed_run.h -- the state of one cairn_seed() run, shared by its parts:
 * seed.c (reading files, the plan, the write, the report), seed_chunk.c
 * (records from a file's text), seed_links.c (supersedes links) and
 * seed_walk.c (which files are read).
 *
 * Layer: internal to seed; nothing here is public API.
 */
#ifndef CAIRN_SEED_RUN_H
#define CAIRN_SEED_RUN_H

#include <stddef.h>

#include "seed.h"
#include "seed_int.h"
#include "store.h"

#define SEED_CHUNK_CHARS 800            /* default chunk target, in characters */
#define SEED_MAX_FILE ((size_t)4 << 20) /* largest Markdown file read: 4 MiB */
#define SEED_MAX_DEPTH 32               /* directory levels walked */
#define SEED_MAX_HEADING 256            /* bytes of one heading kept in a path */
#define SEED_MAX_ID 64                  /* bytes in a front-matter id */
#define SEED_MAX_MESSAGES 1000          /* messages kept in a report */
#define SEED_TITLE_CHARS 120            /* bytes of a title taken from text */

/* A string -> index map with open addressing (keys borrowed). */
struct smap {
	const char **k; /* keys; NULL = empty slot */
	size_t *v;      /* values */
	size_t cap;     /* slots, a power of two (0 before first put) */
	size_t n;       /* keys stored */
};

int seed_smap_get(const struct smap *m, const char *k, size_t *v);
int seed_smap_put(struct smap *m, const char *k, size_t v);
void seed_smap_release(struct smap *m);

/* A record id from a seed string: "f" + 15 hex digits of its SHA-256. */
char *seed_derive_id(const char *seed, size_t len);


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
	char *skip_note;      /* skipped's text when built (a twin), or NULL */
	char sha[65];         /* SHA-256 of its bytes, "" before it is read */
	int date_warn;        /* 1: its date's order was a guess (warn if it changed) */
	struct seed_date date; /* the date found (ambiguous: decided later) */
	long date_line;       /* its line */
	long status_line;     /* line of the status text (for messages) */
	long supersedes_line; /* line of front matter supersedes */
	size_t first;         /* index of its first chunk */
	size_t n;             /* chunks it produced */
	int failed;           /* 1: it had an error */
	int found;            /* 1: found by configuration or content: an ADR */
	int named;            /* 1: named as a PATH: read even as an index page */
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

/* One file's text and its line tables. */

struct text {
	const char *t;   /* bytes (LF line ends) */
	size_t len;      /* length */
	size_t *ls;      /* ls[i]: offset of line i+1; ls[nls] = len */
	size_t nls;      /* lines */
	size_t *cp;      /* cp[i]: code points before line i+1 */
};

/* Add "path:line: error|warning: text" to the run's messages. */
void seed_msg(struct run *r, int error, int rc, const char *path, long line,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* seed.c: names */
const char *seed_base_name(const char *rel);
int seed_index_name(const char *name);
int seed_ends_with_ci(const char *s, const char *suffix);
int seed_id_ok(const char *s);

/* seed_chunk.c: a file's records */
int seed_chunk_document(struct run *r, size_t fi, const struct text *x,
			const struct mscan *m, long first);
int seed_chunk_facts(struct run *r, size_t fi, const struct text *x,
		     const struct mscan *m);
void seed_chunk_hash(struct chunk *c, const struct sfile *f);
void seed_chunk_release(struct chunk *c);

/* seed_links.c: supersedes and superseded-by links */
size_t seed_dir_len(const char *rel);
int seed_resolve_links(struct run *r);

/* seed_walk.c: the files under the seeded paths, and the scopes */
int seed_collect(struct run *r, const char *const *paths, size_t n,
		 int defaults, int scan);

#endif /* CAIRN_SEED_RUN_H */
