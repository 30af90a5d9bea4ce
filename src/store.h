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

struct bil; /* bilingual.h: recall's, kept in the handle (db->bil) */

#define STORE_SCHEMA_VERSION 8        /* PRAGMA user_version of a current store */
#define STORE_META_REVISION "records.revision" /* meta key: writes to records */
#define STORE_MAX_TEXT ((size_t)1 << 20) /* 1 MiB: largest title, body or proof */
#define STORE_MAX_KEY 512              /* bytes in a key */
#define STORE_MAX_ID 128               /* bytes in a record id */
#define STORE_ERRMSG 1024              /* bytes kept for the last error message */
#define STORE_SPOOL_FILE "receipts.pending" /* receipts not yet in the table (receipt.h) */

/*
 * The environment variables the library obeys, read once when a store
 * opens (store_env_read, from cairn_db_open), as SQLite reads its URI
 * parameters: no module calls getenv for them, and a variable set after
 * the open does not reach an open handle. docs/ARCHITECTURE.md
 * ("Environment") lists these and the few read elsewhere. Each string is
 * the handle's copy; NULL when the variable is unset ("" when set empty,
 * which some readers tell apart from unset).
 */
struct store_env {
	char *bilingual;           /* CAIRN_BILINGUAL: the bilingual table */
	char *jieba_dict;          /* CAIRN_JIEBA_DICT: the tokenizer's dictionary */
	char *rerank_model;        /* CAIRN_RERANK_MODEL: a model, or "none" */
	char *embed_provider;      /* CAIRN_EMBED_PROVIDER; the CAIRN_EMBED_* */
	char *embed_model;         /* CAIRN_EMBED_MODEL     override the store's */
	char *embed_url;           /* CAIRN_EMBED_URL       embed.* settings */
	char *embed_api_key_env;   /* CAIRN_EMBED_API_KEY_ENV   (vector.c) */
	char *embed_query_instruction;   /* CAIRN_EMBED_QUERY_INSTRUCTION */
	char *embed_passage_instruction; /* CAIRN_EMBED_PASSAGE_INSTRUCTION */
	char *embed_pooling;       /* CAIRN_EMBED_POOLING */
	char *embed_threads;       /* CAIRN_EMBED_THREADS */
	char *embed_timeout_ms;    /* CAIRN_EMBED_TIMEOUT_MS */
};

/* Fill env from the environment (CAIRN_OK or CAIRN_NOMEM; env is then
 * released). cairn_db_open calls it for db->env; a caller without a store
 * (vector_settings_load(NULL, ...)) calls it on a struct of its own. */
int store_env_read(struct store_env *env);
/* Free env's strings and zero it. */
void store_env_release(struct store_env *env);

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
	size_t links_cap;          /* allocated entries of links */
	int global_in_tx;          /* 1: the global store was attached inside
				    * the open transaction (store.c) */
	int rev_dirty;             /* records changed in this transaction: bit 0
				    * main, bit 1 global (store.c, rev_hook) */
	int rev_quiet;             /* 1: record changes now do not count (last_seen) */
	int busy_ms;               /* the connection's busy timeout */
	int spool_receipts;        /* 1: receipts go to the spool first (the
				    * hook; receipt.h) */
	int aux_registered;        /* 1 once recall's FTS5 functions exist */
	struct store_env env;      /* the environment, as read at open */
	char *bil_path;            /* bilingual dictionary file, or NULL (the
				    * open option, else $CAIRN_BILINGUAL) */
	struct bil *bil;           /* recall's dictionary (bilingual.h), loaded
				    * on the first recall that needs it; the
				    * store frees it without knowing its type
				    * (util_owned_free: struct util_owned
				    * first) */
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

/* Set db's message from a printf format and return rc: the public
 * cairn_db_fail (cairn.h), under the name the library's modules use. */
#define store_error cairn_db_fail
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
/*
 * The condition of store_find_one for "key = ?1" in the store of scope
 * (NULL: any scope of that store, the workspace's own before a machine
 * record's): keys are unique per scope, and the workspace store holds two.
 */
const char *store_key_where(const char *scope);
/* Schema name for a scope: "main" (workspace, machine) or "global". */
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
 * is the one place that writes them (tests/t_layers.sh):
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
/*
 * What a team server says of a record sync.c pulls: who wrote it there and
 * who approved it (the server's stamps). author NULL: the text is this
 * machine's own (a conflict's losing text, a record giving up its key),
 * written through the same gate.
 */
struct store_pulled {
	const char *remote;      /* the remote's name */
	const char *author;      /* the server's author stamp, or NULL */
	const char *approved_by; /* the server's approval stamp, or NULL */
	const char *created_by;  /* the server's stamp of the record's maker */
	int others_forget;       /* the team lets a member retire another's
				  * human record directly (no proposal) */
};
/* What store_pull_record did besides writing the record. */
struct store_pull_result {
	int gated;                      /* 1: an agent's record arrived
					 * standing without approval: stored
					 * as a candidate */
	char yielded[STORE_MAX_ID + 1]; /* the local record that gave up its
					 * key to this one (now a candidate
					 * for it), or "" */
	int proposed;                   /* a retirement or supersession of
					 * another member's human record: the
					 * record stands (kept_*), the caller
					 * records a pending forget */
	char kept_status[16];
	char kept_superseded_by[STORE_MAX_ID + 1];
	char held[STORE_MAX_ID + 1];    /* the standing local record that
					 * keeps the key this one names: this
					 * one is stored as a candidate for
					 * it (pending_key), or "" */
};
/*
 * The store's gate for what a team server sends (store_pull.c). Inside
 * the caller's transaction:
 *   store_pull_check     the checks alone: kind, status, origin (not
 *                        file), the scope of schema's store, confidence,
 *                        a positive revision, a valid id, and every text
 *                        field (provenance, dates and hash too) through
 *                        the size limit, UTF-8 and the secret filter (a
 *                        secret refuses, never masked)
 *   store_pull_record    those checks, then the approval gate (an agent's
 *                        standing record without from->approved_by, from
 *                        the server, becomes a candidate), a local holder
 *                        of its key yields it, the replaced text is kept
 *                        as a revision, and r is written over (or as)
 *                        record r->id with its status, times, revision
 *                        and hash as given
 *   store_pull_revision  a revision of record_id older than its current
 *                        one, checked the same way; kept once
 * A refused record or revision: CAIRN_INVALID, CAIRN_TOOBIG, CAIRN_SECRET
 * or CAIRN_READONLY (file-backed here) with db's message saying why, and
 * nothing written; other codes are the store's errors.
 */
int store_pull_check(struct cairn_db *db, const char *schema,
		     const cairn_record *r, const char *pending_key);
int store_pull_record(struct cairn_db *db, const char *schema,
		      const cairn_record *r, const char *pending_key,
		      const struct store_pulled *from,
		      struct store_pull_result *res);
int store_pull_revision(struct cairn_db *db, const char *schema,
			const char *record_id, const cairn_record *v);
/* Seeding a file whose id a record pulled from a team server holds
 * (src_tool "team:..."): that record is dropped here (the server keeps
 * it; a later pull of the id is refused, file-backed here), so seeding
 * never fails because of a pulled record; *dropped says whether it was.
 * A record written on this machine is left alone. */
int store_pull_yield_id(struct cairn_db *db, const char *id, int *dropped);
/* 1 when id may name a record: 1..STORE_MAX_ID bytes of letters, digits
 * and . _ : - /, not starting with . - or /, no ".." component. */
int store_id_valid(const char *id);
/* 1 when id has the shape of a seeded file's derived id ("f" + 15 lower
 * hex digits, seed_derive_id): only seeding gives such ids. */
int store_file_id_shaped(const char *id);
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
/* Bind text s to parameter i of st (copied), or NULL when s is NULL. */
void store_bind_opt(sqlite3_stmt *st, int i, const char *s);
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
/*
 * The store's part of an explicit read by key (cairn_record_read_key,
 * lifecycle.c): the record with this key, the workspace's first (scope
 * "workspace", "global" or NULL for both), into *out (caller frees), its
 * schema ("main" or "global") into *schema, and its last_seen set to now.
 * The revive of a stale record is the lifecycle's, above the store.
 */
int store_read_key(struct cairn_db *db, const char *key, const char *scope,
		   const char **schema, cairn_record **out);
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
