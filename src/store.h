/*
 * store.h -- the record store's interface to the other modules.
 *
 * Layer: store sits on SQLite; recall, seed, capture, eval and the CLI sit
 * on it. struct cairn_db is visible to those modules (not to library users)
 * so that they can run their own prepared statements on db->sql.
 */
#ifndef CAIRN_STORE_H
#define CAIRN_STORE_H

#include <sqlite3.h>

#include "internal.h"

#define STORE_SCHEMA_VERSION 7        /* PRAGMA user_version of a current store */
#define STORE_META_REVISION "records.revision" /* meta key: writes to records */
#define STORE_MAX_TEXT ((size_t)1 << 20) /* 1 MiB: largest title, body or proof */
#define STORE_MAX_KEY 512              /* bytes in a key */
#define STORE_MAX_ID 128               /* bytes in a record id */
#define STORE_ERRMSG 1024              /* bytes kept for the last error message */
#define STORE_SPOOL_FILE "receipts.pending" /* receipts not yet in the table (receipt.h) */

struct cairn_db {
	sqlite3 *sql;              /* the connection; main = workspace store */
	char *dir;                 /* the store directory (".cairn") */
	char *root;                /* workspace root: the parent of dir */
	char *global_dir;          /* directory of the per-user global store */
	int has_global;            /* 1 when the global store is attached as "global" */
	int no_global;             /* 1: never attach or create the global store */
	int in_batch;              /* 1 inside cairn_begin() .. cairn_commit() */
	char **links;              /* records imported with links in this
				    * transaction: 'm' or 'g' + id, checked at
				    * the commit (store.c, links_check) */
	size_t nlinks;
	int global_in_tx;          /* 1: the global store was attached inside
				    * the open transaction (store.c) */
	int rev_dirty;             /* records changed in this transaction: bit 0
				    * main, bit 1 global (store.c, rev_hook) */
	int rev_quiet;             /* 1: record changes now do not count (last_seen) */
	int busy_ms;               /* the connection's busy timeout */
	int spool_receipts;        /* 1: receipts go to the spool first (the
				    * hook; receipt.h) */
	int aux_registered;        /* 1 once recall's FTS5 functions exist */
	char *bil_path;            /* bilingual dictionary file, or NULL */
	struct bil *bil;           /* loaded on the first recall that needs it */
	int bil_tried;             /* 1 once loading was attempted */
	void *vec;                 /* vector.c's cache (embedder, matrix) */
	void (*vec_free)(void *);  /* frees vec; called by cairn_db_close */
	void *rerank;              /* rerank.c's cache (loaded cross-encoders) */
	void (*rerank_free)(void *); /* frees rerank; called by cairn_db_close */
	char errmsg[STORE_ERRMSG]; /* last detailed error message */
};

/*
 * Columns read by store_row_record(), in order. Every SELECT that feeds it
 * names exactly these.
 */
#define STORE_COLS                                                          \
	"id, kind, key, scope, title, body, status, confidence, proof, "    \
	"origin, src_path, src_heading, src_line, src_commit, src_session, " \
	"src_tool, time, created, updated, last_seen, supersedes, "         \
	"superseded_by, revision, hash"

/* STORE_COLS qualified with the table alias "r". */
#define STORE_COLS_R                                                        \
	"r.id, r.kind, r.key, r.scope, r.title, r.body, r.status, "         \
	"r.confidence, r.proof, r.origin, r.src_path, r.src_heading, "      \
	"r.src_line, r.src_commit, r.src_session, r.src_tool, r.time, "     \
	"r.created, r.updated, r.last_seen, r.supersedes, "                 \
	"r.superseded_by, r.revision, r.hash"

/*
 * Copy record ?1's current text into revisions (schema given twice as %s):
 * the one definition of what a kept revision holds (the store's writes,
 * seed's included: store_file_update).
 */
#define STORE_KEEP_REVISION_SQL                                             \
	"INSERT OR REPLACE INTO %s.revisions (record_id, revision, title, "  \
	"body, status, confidence, proof, origin, updated, hash) SELECT id, " \
	"revision, title, body, status, confidence, proof, origin, updated, " \
	"hash FROM %s.records WHERE id = ?1"

/* Set db's message from a printf format and return rc. */
int store_error(struct cairn_db *db, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* STORE_COLS qualified with the table alias "r". */
#define STORE_COLS_R                                                        \
	"r.id, r.kind, r.key, r.scope, r.title, r.body, r.status, "         \
	"r.confidence, r.proof, r.origin, r.src_path, r.src_heading, "      \
	"r.src_line, r.src_commit, r.src_session, r.src_tool, r.time, "     \
	"r.created, r.updated, r.last_seen, r.supersedes, "                 \
	"r.superseded_by, r.revision, r.hash"

/* Set db's message from SQLite's and map the SQLite code to a cairn code. */
int store_sql_error(struct cairn_db *db, int sqlite_rc, const char *what);
/* Build a record from the current row of a statement selecting STORE_COLS
 * starting at column `first`. NULL on out of memory. */
cairn_record *store_row_record(sqlite3_stmt *st, int first);
/* Attach (creating if `create`) the global store. CAIRN_OK if attached. */
int store_attach_global(struct cairn_db *db, int create);
/* Schema name for a scope: "main" or "global". */
const char *store_schema(const char *scope);
/* Run BEGIN IMMEDIATE unless inside a batch. */
int store_tx_begin(struct cairn_db *db);
/* Commit (or, when rc != CAIRN_OK, roll back) unless inside a batch; returns rc or the commit's error. */
int store_tx_end(struct cairn_db *db, int rc);
/* Is record id file-backed? Fills msg with "file-backed: edit <path>:<line>". */
int store_is_file_backed(const cairn_record *r, char *msg, size_t size);
/*
 * Append " AND col IN ('a','b')" for a comma-separated list whose every
 * item passes `valid` (so quoting them literally is safe); an empty or
 * NULL list appends nothing. CAIRN_INVALID names an unknown item.
 */
int store_add_in(struct cairn_db *db, struct sbuf *sql, const char *col,
		 const char *list, int (*valid)(const char *),
		 const char *what);
/*
 * The one write gate for an imported record (export.c): the checks of
 * cairn_record_write (kind, status, origin, scope, confidence, the size
 * limits, UTF-8, the secret filter, a valid id and dates) with the
 * status, times, revision and hash kept as given, into schema. A key held
 * by another record: CAIRN_EXISTS naming it. Its supersedes and
 * superseded_by are checked when the transaction commits.
 */
int store_import_record(struct cairn_db *db, const char *schema,
			const cairn_record *r, const char *pending_key,
			unsigned flags);
/*
 * The other writes of records and revisions, all here so that the store
 * is the one place that writes them (issue 15; tests/t_layers.sh):
 *   store_import_drop      cairn import --replace: the record with id
 *   store_import_revision  an imported revision of record_id: title,
 *                          body, status, confidence, proof, origin,
 *                          updated, hash and revision of v (checked; the
 *                          texts through store_clean_text)
 *   store_seen             last_seen = when for the ids of a JSON array,
 *                          in both stores; not a change (no revision)
 *   store_age              lifecycle's ageing of schema: records of the
 *                          kinds of the SQL list `ages` unseen since cut_stale become
 *                          stale (their status kept in meta
 *                          'lifecycle.prev.<id>'), stale ones unseen
 *                          since cut_retire retired; *staled, *retired
 *                          gain the counts
 *   store_revive           a stale record back to status (meta_key
 *                          dropped)
 *   store_supersede_link   o superseded by n, n supersedes o
 * Each runs inside the caller's transaction.
 */
int store_import_drop(struct cairn_db *db, const char *schema, const char *id);
int store_import_revision(struct cairn_db *db, const char *schema,
			  const char *record_id, const cairn_record *v,
			  unsigned flags);
int store_seen(struct cairn_db *db, const char *ids_json, const char *when);
int store_age(struct cairn_db *db, const char *schema, const char *ages,
	      const char *cut_stale, const char *cut_retire,
	      long long *staled, long long *retired);
int store_revive(struct cairn_db *db, const char *schema, const char *id,
		 const char *status, const char *now, const char *meta_key);
int store_supersede_link(struct cairn_db *db, const cairn_record *o,
			 const cairn_record *n, const char *now);
/*
 * The proof of workspace record id becomes `proof` (cairn verify: a human
 * checked it against the tree), as a new revision (the old one kept),
 * inside the caller's transaction. The size limit and UTF-8 are checked.
 */
int store_record_proof(struct cairn_db *db, const char *id,
		       const char *proof, const char *now);
/*
 * Seed's writes of file-backed records in the workspace store, inside the
 * caller's transaction (seed's batch): a record whose section changed
 * (its revision kept; kind, key, text, status, provenance, links, hash as
 * given, confidence 1, origin file; the size limits, UTF-8 and the secret
 * filter: a secret refuses), one whose file is gone (retired, key freed),
 * and one whose text is unchanged but moved (provenance only, no
 * revision). A key clash: CAIRN_INVALID.
 */
int store_file_update(struct cairn_db *db, const cairn_record *r,
		      const char *now);
int store_file_retire(struct cairn_db *db, const char *id, const char *now);
int store_file_provenance(struct cairn_db *db, const cairn_record *r);
/*
 * Replace the proof of candidate `id` in the workspace store (capture
 * merging what it saw again): the size limit, UTF-8 and the secret filter
 * (a secret refuses), one transaction or the caller's batch. A record
 * that is no longer a candidate is left as it is.
 */
int store_candidate_proof(struct cairn_db *db, const char *id,
			  const char *proof);
/*
 * One text of a write that is stored as given (an imported revision):
 * the size limit, UTF-8 and the secret filter; with CAIRN_WRITE_REDACT a
 * hit is masked into *own (caller frees) and *val points at it.
 */
int store_clean_text(struct cairn_db *db, const char *field, const char **val,
		     char **own, unsigned flags);
/* 1 when id may name a record: 1..STORE_MAX_ID bytes of letters, digits
 * and . _ : - /, not starting with . - or /, no ".." component. */
int store_id_valid(const char *id);
/* Generate a new random record id ("r" + 15 hex digits) into out[17]. */
int store_new_id(char out[17]);
/*
 * The setting k of schema's meta table into buf ("" and *found 0 when
 * absent or NULL). CAIRN_OK, or the SQLite error naming k.
 */
int store_meta_get(struct cairn_db *db, const char *schema, const char *k,
		   char *buf, size_t size, int *found);
/*
 * Set meta k to v in schema (v NULL: remove it), inside the caller's write
 * transaction; what names the step in an error. CAIRN_OK or an SQL error.
 */
/*
 * sqlite3_update_hook callback (store_open.c installs it): marks the
 * schemas whose records a transaction changed (the revision, migration 5).
 */
void store_rev_hook(void *user, int op, const char *schema, const char *table,
		    sqlite3_int64 rowid);
/* Drop the links an import batch still had to check at its commit. */
void store_links_forget(struct cairn_db *db);
/* Run sql (no results) on db's connection; what names it in an error. */
int store_exec(struct cairn_db *db, const char *sql, const char *what);
/*
 * Bring one schema ("main" or "global") to STORE_SCHEMA_VERSION
 * (store_schema.c). CAIRN_MISMATCH for a store of a newer cairn.
 */
int store_migrate(struct cairn_db *db, const char *schema);
/*
 * The record of schema matching "where" (a condition on ?1 = val) into
 * *out (caller frees); CAIRN_NOTFOUND when none.
 */
int store_find_one(struct cairn_db *db, const char *schema,
		   const char *where, const char *val, cairn_record **out);
int store_meta_set(struct cairn_db *db, const char *schema, const char *k,
		   const char *v, const char *what);
/*
 * The records revision of schema (meta STORE_META_REVISION) into *out.
 * CAIRN_NOTFOUND when the store has no such row, else store_meta_get's.
 */
int store_revision(struct cairn_db *db, const char *schema, long long *out);
/*
 * The database file of schema si (0 main, 1 global) into buf: the files
 * kept beside it (vector.c, termstat.h) are named after it. 0 when there
 * is none or it does not fit.
 */
int store_db_file(const struct cairn_db *db, int si, char *buf, size_t size);
/* STORE_DIR/name into buf; 0 when it does not fit. */
int store_dir_file(const struct cairn_db *db, const char *name, char *buf,
		   size_t size);

#endif /* CAIRN_STORE_H */
