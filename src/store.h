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
 * the one definition of what a kept revision holds, used by the store's
 * writes and by seed's batch writer.
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
/* Generate a new random record id ("r" + 15 hex digits) into out[17]. */
int store_new_id(char out[17]);
/*
 * The setting k of schema's meta table into buf ("" and *found 0 when
 * absent or NULL). CAIRN_OK, or the SQLite error naming k.
 */
int store_meta_get(struct cairn_db *db, const char *schema, const char *k,
		   char *buf, size_t size, int *found);
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
