/*
 * drift.h -- records that notice when their source moved on.
 *
 * A workspace record remembers the repository files it refers to (the
 * source file of a seeded record; the Makefile, scripts and package.json a
 * procedure or capability names; repository paths named in its text) with
 * each file's Git blob id at the time it was written, seeded, captured or
 * verified (table refs, store.c migration 6). Comparing those ids with
 * the files in today's tree tells whether the record may describe
 * something that has since changed. The comparison reads the files and
 * hashes them as Git does (SHA-1 of "blob <size>\0" + content): no `git`
 * process and no repository walk, so recall and the hook can afford it for
 * the few records they return. `cairn check` adds the history (commits and
 * lines since, renames) from git itself.
 */
#ifndef CAIRN_DRIFT_H
#define CAIRN_DRIFT_H

#include <stddef.h>

#include "cairn.h"

#define DRIFT_MAX_REFS 8

/*
 * The repository paths (relative to root, existing regular files below
 * it, never under .git/ or .cairn/) that a record of this kind with this
 * text and source path refers to, at most DRIFT_MAX_REFS, each once, the
 * source path first. Calls emit(path, arg) for each; returns the count.
 */
size_t drift_paths(const char *root, const char *kind, const char *title,
		   const char *body, const char *src_path,
		   void (*emit)(const char *path, void *arg), void *arg);

/*
 * Git's blob id of the file root/path (40 hex + NUL into out): 0, or -1
 * when it cannot be read (absent, not a regular file, over 64 MiB).
 */
int drift_blob(const char *root, const char *path, char out[41]);

/*
 * (Re)record the references of workspace record id against today's tree
 * (how: "write" or "verify"), replacing the earlier ones. Inside the
 * caller's write transaction. A record of the global store, or a
 * workspace outside Git, records nothing. CAIRN_OK or an SQL error.
 */
int drift_note(struct cairn_db *db, const char *id, const char *how);

/*
 * Recall's last step: each workspace hit whose references changed gets
 * its marker (hit.drift) and the store's down-weight (meta 'drift.weight',
 * default 0.85; `cairn check --weight`), and the hits are re-sorted by
 * score, equal scores in their order. CAIRN_OK or CAIRN_NOMEM.
 */
int drift_mark(struct cairn_db *db, cairn_result *res);

#endif /* CAIRN_DRIFT_H */
