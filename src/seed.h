/*
 * seed.h -- seeding file-backed records from Markdown (SPEC 4.1, issue 6).
 *
 * Layer: seed sits on store (and md4c, libyaml, git); the CLI sits on it.
 * The declarations below are meant for include/cairn.h; until they move
 * there they live here.
 *
 * docs/SEED.md is the user-facing description: the folders, the front
 * matter, the ADR status mapping, the facts-file form, the chunking rules
 * and how ids are derived.
 */
#ifndef CAIRN_SEED_H
#define CAIRN_SEED_H

#include <stddef.h>

#include "cairn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What seeding does (or, with dry_run, would do) to one record. */
enum cairn_seed_action {
	CAIRN_SEED_UNCHANGED = 0, /* same content hash: not touched */
	CAIRN_SEED_NEW = 1,       /* no record with this id yet: inserted */
	CAIRN_SEED_CHANGED = 2,   /* content differs: updated, old revision kept */
	CAIRN_SEED_RETIRED = 3,   /* its file or section is gone: status retired */
};

/* Options for cairn_seed(); a zeroed struct (or NULL) means the defaults. */
typedef struct cairn_seed_opts {
	int dry_run;                      /* 1: plan only, write nothing */
	int strict;                       /* 1: any file's error writes nothing */
	int no_git;                       /* 1: do not ask git for commits */
	const char *const *default_paths; /* used when n == 0; NULL: the built-in list */
	size_t n_default_paths;           /* entries in default_paths */
	size_t chunk_chars;               /* chunk target in characters; 0: 800 */
	void (*progress)(void *user, size_t done, size_t total); /* per file; may be NULL */
	void *user;                       /* passed to progress */
} cairn_seed_opts;

/* One record of the plan. All strings are owned by the report. */
typedef struct cairn_seed_item {
	int action;         /* enum cairn_seed_action */
	char *id;           /* record id */
	char *path;         /* source path, relative to the workspace root */
	long line;          /* 1-based start line (0 if unknown, e.g. retired) */
	char *heading;      /* heading path, " > " separated ("" if none) */
	char *title;        /* record title */
	char *kind;         /* record kind */
	char *status;       /* status it gets (retired: "retired") */
} cairn_seed_item;

/* What seeding found in one file (cairn seed --dry-run lists these). */
typedef struct cairn_seed_source {
	char *path;          /* relative to the workspace root */
	char *kind;          /* record kind ("" when skipped or failed early) */
	char *status_text;   /* the status as written ("" when none) */
	char *status;        /* the SPEC status it maps to ("" if none) */
	char *rule;          /* the status table's row (docs/SEED.md) */
	char *time;          /* the date found ("" when none) */
	char *supersedes;    /* id of the record it supersedes, or "" */
	char *superseded_by; /* id of the record that supersedes it, or "" */
	char *skipped;       /* why it makes no record, or NULL */
	char *error;         /* its first error (the file is skipped), or NULL */
	size_t records;      /* records it produces */
} cairn_seed_source;

/* The outcome of a seed (or its plan). Release with cairn_seed_report_release(). */
typedef struct cairn_seed_report {
	size_t files;          /* Markdown files read (not skipped ones) */
	size_t n_failed;       /* files with an error: skipped, their records kept */
	size_t n_skipped;      /* templates and index pages: no record */
	size_t records;        /* records those files produce */
	size_t n_new;          /* items with CAIRN_SEED_NEW */
	size_t n_changed;      /* items with CAIRN_SEED_CHANGED */
	size_t n_unchanged;    /* items with CAIRN_SEED_UNCHANGED */
	size_t n_retired;      /* items with CAIRN_SEED_RETIRED */
	size_t n_errors;       /* errors (each one line in messages) */
	size_t n_warnings;     /* warnings (each one line in messages) */
	cairn_seed_item *items; /* every record in file order, then the retired ones */
	size_t n_items;        /* entries in items */
	char *messages;        /* "path:line: error|warning: text\n" lines; NULL if none */
	cairn_seed_source *sources; /* every file looked at, in path order */
	size_t n_sources;      /* entries in sources */
	char *searched;        /* where it looked, for "nothing found" ("a, b") */
	int dry_run;           /* 1 when nothing was written */
} cairn_seed_report;

/*
 * Seed file-backed records from Markdown files (SPEC 4.1).
 *
 * paths: n files or directories, absolute or relative to the workspace
 * root (cairn_db_root), all inside the workspace. With n == 0 and no
 * opts->default_paths, the folders the workspace's tools name (.adr-dir,
 * .log4brains.yml), the default folders that exist (docs/SEED.md lists
 * them) and files that look like decision records anywhere in the
 * workspace are read; with opts->default_paths, those folders only.
 * Directories are walked (no symlinked directories, no hidden ones, at
 * most 32 levels); *.md, *.markdown and *.mdx files are read, except index
 * pages (README/index that are no decision record) and templates (by
 * their content).
 *
 * Each file becomes one record, or several chunks (docs/SEED.md). Each
 * record gets origin "file", provenance (path, heading path, start line,
 * the commit of the file's last change unless opts->no_git), an id derived
 * from path + heading path (stable across re-seeding), and a content hash:
 * an unchanged record is not touched, a changed one is updated with its
 * previous revision kept, and a file-backed record under the seeded paths
 * that no file produces any more is retired.
 *
 * All of it is one transaction (or part of the caller's cairn_begin
 * batch). A file with an error (unknown status or kind, bad front
 * matter, a secret, invalid UTF-8, a key another record holds) is listed
 * in out->messages as "path:line: error: …" and skipped: its records stay
 * as they were, the other files are seeded, and the return is CAIRN_OK
 * with out->n_errors > 0. With opts->strict any error writes nothing:
 * cairn_errmsg(db) holds the first, and the return is CAIRN_INVALID (or
 * CAIRN_SECRET when the first error is a secret). With opts->dry_run the
 * plan is computed the same way and nothing is written.
 *
 * out: filled on success and on per-file errors (the plan and messages);
 * the caller releases it with cairn_seed_report_release(). opts may be
 * NULL. Other errors: CAIRN_INVALID (a path outside the workspace or that
 * does not exist), CAIRN_IO, CAIRN_NOMEM, CAIRN_BUSY.
 */
CAIRN_API int cairn_seed(cairn_db *db, const char *const *paths, size_t n,
			 const cairn_seed_opts *opts,
			 cairn_seed_report *out);

/* Free everything a report holds and zero it. NULL is a no-op. */
CAIRN_API void cairn_seed_report_release(cairn_seed_report *rep);

/*
 * Map an ADR status text (the first line of a "## Status" section, a
 * "Status:" line, front matter "status:", or a facts-file tag) to a SPEC
 * status (docs/SEED.md has the table). Case and a final period are
 * ignored, as are decorations (emoji, markup, brackets) and a comment
 * after the status word. On success *status is a static SPEC status,
 * *outcome is "rejected", "abandoned" or NULL, and *target (may be NULL)
 * points into text at the X of "Superseded by X" (len in *target_len),
 * else NULL.
 * Returns CAIRN_OK, or CAIRN_INVALID for an unknown status.
 */
CAIRN_API int cairn_seed_map_status(const char *text, const char **status,
				    const char **outcome,
				    const char **target,
				    size_t *target_len);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_SEED_H */
