/*
 * cairn.h -- long-term memory for AI agents: the public C API of libcairn.
 *
 * This header is the API specification. Every function documents its
 * behaviour, its return codes and who owns each pointer, with three fixed
 * phrasings: "borrowed until the next call on this handle", "caller frees
 * with cairn_free()" (or the named free function), and "copied".
 *
 * Conventions:
 *   - Public functions return int: CAIRN_OK (0) or a small positive code.
 *     cairn_errstr(rc) names a code; cairn_errmsg(db) gives the last detailed
 *     message for a handle. Codes are append-only and are never errno values.
 *   - Constructors return a code and fill an out-parameter.
 *   - Every destructor accepts NULL.
 *   - All strings are UTF-8 and NUL-terminated.
 */
#ifndef CAIRN_H
#define CAIRN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CAIRN_BUILD) && defined(__GNUC__)
#define CAIRN_API __attribute__((visibility("default")))
#else
#define CAIRN_API
#endif

#define CAIRN_VERSION "0.1.0"
#define CAIRN_VERSION_NUMBER 1000 /* major*1000000 + minor*1000 + patch */

/* ============================================================ error codes */

#define CAIRN_OK 0        /* success */
#define CAIRN_ERROR 1     /* generic failure (see cairn_errmsg) */
#define CAIRN_NOMEM 2     /* out of memory */
#define CAIRN_IO 3        /* file or OS I/O failed */
#define CAIRN_CORRUPT 4   /* a file is damaged or not what it claims */
#define CAIRN_INVALID 5   /* invalid argument or input */
#define CAIRN_TOOBIG 6    /* input over a named limit */
#define CAIRN_BUSY 7      /* the store stayed locked past the busy timeout */
#define CAIRN_NOTFOUND 8  /* no such record, key or receipt */
#define CAIRN_SECRET 9    /* the write contained a secret and was refused */
#define CAIRN_READONLY 10 /* the record is file-backed: edit its source */
#define CAIRN_EXISTS 11   /* already exists */
#define CAIRN_MISMATCH 12 /* built for another version, model or identity */

/* Static English name of a code, e.g. "out of memory". Never NULL. */
CAIRN_API const char *cairn_errstr(int rc);

/* Library version number; compare with CAIRN_VERSION_NUMBER. */
CAIRN_API int cairn_libversion_number(void);

/* ================================================================= memory */

/* Allocate n bytes (all library allocation goes through here). */
CAIRN_API void *cairn_malloc(size_t n);
/* Free memory the library handed to the caller. NULL is a no-op. */
CAIRN_API void cairn_free(void *p);


/* ================================================================ records */

/*
 * A record (SPEC 3). Returned records are allocated by the library: free
 * with cairn_record_free(). As input (cairn_record_write) the caller owns
 * it; NULL fields, and a confidence of 0, mean "default" or "unset":
 * `cairn_record r = {0};` (or memset to 0) and the fields wanted is a
 * complete input.
 */
typedef struct cairn_record {
	char *id;            /* stable id; file-backed: derived from path + heading */
	char *kind;          /* decision adr fact rule procedure capability finding history event note */
	char *key;           /* optional exact-match key, UNIQUE per scope; NULL if none */
	char *scope;         /* "workspace" (default), "global" or "machine" */
	char *title;         /* human-readable title ("" allowed) */
	char *body;          /* the real text; BM25 and vectors are computed from it */
	char *status;        /* candidate accepted unverified stale superseded historical false retired rejected */
	double confidence;   /* (0, 1]; verified = 1.0; on input 0 or negative =
	                      * the default (1.0 human, 0.5 agent-written; a
	                      * rewrite or revise keeps the record's), so a
	                      * record initialised with {0} gets the default */
	char *proof;         /* what verified it, e.g. "aws sts ok" */
	char *origin;        /* file human agent capture reflection */
	char *src_path;      /* file-backed: path relative to the workspace root */
	char *src_heading;   /* file-backed: heading path, " > " separated */
	long src_line;       /* file-backed: 1-based start line; 0 if none */
	char *src_commit;    /* file-backed: Git commit of the file's last change */
	char *src_session;   /* agent-written: session id */
	char *src_tool;      /* agent-written: tool or work item */
	char *time;          /* event time (ISO-8601) for events and dated records */
	char *created;       /* ISO-8601 UTC, set by the store */
	char *updated;       /* ISO-8601 UTC, set by the store */
	char *last_seen;     /* last time recall or read returned it; NULL if never */
	char *supersedes;    /* id this record replaces */
	char *superseded_by; /* id that replaced this record */
	long revision;       /* 1 for a new record, +1 on every change of text */
	char *hash;          /* SHA-256 of the content (file-backed: of the source chunk) */
} cairn_record;

/* Free a record returned by the library, and every string in it. NULL ok. */
CAIRN_API void cairn_record_free(cairn_record *rec);

/*
 * 1 when rec is file-backed (origin "file": seeded from a file, changed
 * only by editing the file and seeding again), else 0. With why (size >
 * 0): "file-backed: edit PATH:LINE", the message the library's refusals use.
 */
CAIRN_API int cairn_record_file_backed(const cairn_record *rec, char *why,
				       size_t size);
/* Free an array of n records returned by a list call. NULL ok. */
CAIRN_API void cairn_record_list_free(cairn_record **recs, size_t n);

/* Is s one of the kinds / statuses / origins of SPEC 3? (1 or 0) */
CAIRN_API int cairn_kind_valid(const char *s);
CAIRN_API int cairn_status_valid(const char *s);
CAIRN_API int cairn_origin_valid(const char *s);
/* Is s a scope: workspace, global or machine (workspace store, never
 * synced unless asked: docs/TEAM.md)? (1 or 0) */
CAIRN_API int cairn_scope_valid(const char *s);

/* ================================================================= stores */

typedef struct cairn_db cairn_db; /* opaque: one open workspace store (+ global) */

typedef struct cairn_open_opts {
	const char *global_dir; /* NULL: $CAIRN_GLOBAL, else $XDG_DATA_HOME/cairn, else ~/.local/share/cairn */
	int no_global;          /* 1: never attach the per-user global store */
	int create;             /* 1: create the store if it does not exist (cairn init) */
	int busy_timeout_ms;    /* how long to wait for a lock; 0: 10000 */
	const char *jieba_dict; /* NULL: $CAIRN_JIEBA_DICT or Debian's python3-jieba dictionary */
	const char *bilingual_dict; /* CC-CEDICT file for Chinese questions about English
				       records; NULL: $CAIRN_BILINGUAL; none: not used */
} cairn_open_opts;

/*
 * Find the workspace store directory for a process started in `start`
 * (NULL: the current directory): $CAIRN_DIR if set, else the nearest
 * ".cairn" directory walking up from start, as git finds ".git".
 * On success *out is the directory (caller frees with cairn_free()).
 * CAIRN_NOTFOUND if there is none.
 */
CAIRN_API int cairn_workspace_find(const char *start, char **out);

/*
 * May this user's cairn use the store directory dir (".../.cairn")? A
 * symbolic link in its place that another user owns, or that leads to a
 * directory another user owns, is refused: the store would be another
 * user's, and the hook's log written into their directory (issue 31).
 * cairn_db_open and the hook's log check it. CAIRN_OK (also when dir is
 * no link, or is missing: the open says so then), or CAIRN_IO with a
 * one-line reason in why (may be NULL).
 */
CAIRN_API int cairn_workspace_check(const char *dir, char *why,
				    size_t whysize);

/*
 * Open the store in directory `dir` (the ".cairn" directory; its file is
 * cairn.db). opts may be NULL for defaults. Creates the directory (0700)
 * and database (0600) when opts->create is set; migrates the schema
 * forward; WAL mode, busy timeout, foreign keys on.
 *
 * Like sqlite3_open, *out is set even on most failures so that
 * cairn_errmsg() can explain them; always cairn_db_close() it.
 * Returns CAIRN_OK, CAIRN_NOTFOUND (no store and create not set),
 * CAIRN_MISMATCH (store written by a newer cairn), CAIRN_IO, CAIRN_NOMEM.
 */
CAIRN_API int cairn_db_open(const char *dir, const cairn_open_opts *opts,
			    cairn_db **out);

/* Close a store. NULL is a harmless no-op. Returns CAIRN_OK. */
CAIRN_API int cairn_db_close(cairn_db *db);

/* The last detailed error message on db. Borrowed until the next call on db. */
CAIRN_API const char *cairn_errmsg(const cairn_db *db);

/*
 * Set db's error message (printf-style, cut at 1,023 bytes) and return rc:
 * for code built on the library (the MCP server, the hook) that reports its
 * own failures the way the library's calls do, through cairn_errmsg(db).
 * db NULL: nothing is kept, rc is returned.
 */
CAIRN_API int cairn_db_fail(cairn_db *db, int rc, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* The workspace root (parent of the ".cairn" directory). Borrowed. */
CAIRN_API const char *cairn_db_root(const cairn_db *db);

/*
 * Tune a connection for a short-lived process that mostly reads (the
 * Claude Code hook): memory-map up to 1 GiB of each store file, leave the
 * WAL to SQLite's automatic checkpoints instead of one at close (four
 * fsyncs), and append receipts to the spool instead of writing them
 * (SPEC 5.3; moved into the store by a later write). Call
 * cairn_db_checkpoint() before closing. Failures are harmless and ignored.
 */
CAIRN_API void cairn_db_short_lived(cairn_db *db);

/*
 * Read the store files through a memory map (up to 1 GiB each) instead of
 * copying their pages into SQLite's 2 MB cache: a long-lived process that
 * reads many records (`cairn mcp` answering the hook) stops re-reading
 * the pages that cache evicted. The mapped pages count in its resident
 * set. cairn_db_short_lived() does this too. Failures are harmless and
 * ignored.
 */
CAIRN_API void cairn_db_map_files(cairn_db *db);

/*
 * Receipts of this handle's recalls go to the spool (on = 1) or straight
 * into the store (0). Returns the previous setting.
 */
CAIRN_API int cairn_db_spool_receipts(cairn_db *db, int on);

/*
 * Copy the WAL into the store files and empty it, without waiting for a
 * reader (then a later checkpoint does it). After cairn_db_short_lived.
 */
CAIRN_API void cairn_db_checkpoint(cairn_db *db);

/* The store directory given to cairn_db_open (".cairn", or $CAIRN_DIR):
 * its database file is <dir>/cairn.db. Borrowed. */
CAIRN_API const char *cairn_db_dir(const cairn_db *db);

/* ========================================================= writing records */

enum cairn_write_flags {
	CAIRN_WRITE_REDACT = 1 << 0, /* mask secrets as [REDACTED:kind] instead of refusing */
	CAIRN_WRITE_KEEP_TIMES = 1 << 1, /* import: keep created/updated/revision as given */
};

/*
 * Write a record. Defaults: kind "note", scope "workspace", origin
 * "human". The status follows the approval gate (SPEC 4.5): a human write
 * without a status is "accepted"; any write whose origin is agent,
 * capture or reflection is stored as "candidate" whatever status it asks
 * for. When (scope, key) already exists, the existing record's text is
 * replaced, its previous revision kept (cairn_record_history), and its id
 * kept; the fields rec leaves NULL (kind, title, proof, provenance,
 * supersedes) or 0 / negative (confidence) keep the record's. Every text
 * field passes the secret filter first. A given id is 1..128 bytes of
 * letters, digits and . _ : - / (not starting with . - or /, no ".."
 * component); time is an ISO-8601 date or date-time; supersedes names a
 * record that exists.
 *
 * On success *out_id (if not NULL) receives the id (caller frees with
 * cairn_free()). Errors: CAIRN_INVALID (unknown kind/status/origin/scope,
 * invalid UTF-8, empty body, a bad id or time, a NaN or out-of-range
 * confidence), CAIRN_NOTFOUND (supersedes names no record), CAIRN_SECRET
 * (a secret was found and
 * CAIRN_WRITE_REDACT not given; nothing written), CAIRN_READONLY (the key
 * belongs to a file-backed record), CAIRN_TOOBIG, CAIRN_BUSY, CAIRN_IO.
 */
CAIRN_API int cairn_record_write(cairn_db *db, const cairn_record *rec,
				 unsigned flags, char **out_id);

/*
 * Revise a record by id: non-NULL title, body, status, proof and a
 * confidence above 0 in `changes` replace the record's (0, as in a
 * {0}-initialised `changes`, keeps it); the old revision is
 * kept. File-backed records answer CAIRN_READONLY with the message
 * "file-backed: edit <path>:<line>". Secret filter as for writes.
 */
CAIRN_API int cairn_record_revise(cairn_db *db, const char *id,
				  const cairn_record *changes, unsigned flags);

/*
 * Change a record's status (approve: candidate -> accepted; reject:
 * candidate -> rejected; forget: -> retired). `from` (NULL: any) is the
 * status the record must have now, else CAIRN_INVALID. File-backed
 * records answer CAIRN_READONLY unless `allow_file` is set.
 */
CAIRN_API int cairn_record_set_status(cairn_db *db, const char *id,
				      const char *from, const char *to,
				      int allow_file);

/*
 * Pending forgets (SPEC 4.5): an agent's forget of a record it did not
 * write is a proposal that a human confirms, as a write is a candidate.
 * cairn_forget_propose records one for the record with exactly this id (a
 * prefix is CAIRN_INVALID) and changes nothing else: the record keeps its
 * status until cairn_forget_resolve applies the proposal (apply 1: the
 * record becomes retired) or drops it (apply 0). A second proposal for the
 * same record keeps the first (dropping it also clears one whose record
 * was retired by other means since). CAIRN_READONLY for a file-backed record,
 * CAIRN_INVALID for one already retired or rejected; resolve answers
 * CAIRN_NOTFOUND when no proposal is pending. cairn_forget_pending: 1 when
 * one is pending for id (or a unique prefix of it), else 0.
 */
typedef struct cairn_forget {
	cairn_record *rec; /* the record proposed for retirement */
	char *time;        /* when it was proposed (ISO-8601 UTC) */
	char *session;     /* the proposing agent's session ("" if none) */
	char *tool;        /* its client or work item ("" if none) */
	char *reason;      /* why the agent asks ("" if it gave none) */
} cairn_forget;

CAIRN_API int cairn_forget_propose(cairn_db *db, const char *id,
				   const char *session, const char *tool);
/*
 * The same with the agent's reason (NULL or "": none), kept with the
 * proposal for the human who decides: one line (tabs and line breaks
 * become spaces), at most CAIRN_FORGET_REASON_MAX bytes (cut at a
 * character), through the secret filter like every write (CAIRN_SECRET).
 */
#define CAIRN_FORGET_REASON_MAX 500
CAIRN_API int cairn_forget_propose_v2(cairn_db *db, const char *id,
				      const char *session, const char *tool,
				      const char *reason);
CAIRN_API int cairn_forget_pending(cairn_db *db, const char *id);
CAIRN_API int cairn_forget_resolve(cairn_db *db, const char *id, int apply);
/* The pending proposals, oldest first; free with cairn_forget_list_free(). */
CAIRN_API int cairn_forget_list(cairn_db *db, cairn_forget **out, size_t *n);
CAIRN_API void cairn_forget_list_free(cairn_forget *v, size_t n);

/* ========================================================= reading records */

/*
 * Get a record by id, or by a unique id prefix of at least 4 characters.
 * *out: caller frees with cairn_record_free(). CAIRN_NOTFOUND, or
 * CAIRN_INVALID for an ambiguous prefix.
 */
CAIRN_API int cairn_record_get(cairn_db *db, const char *id,
			       cairn_record **out);

/*
 * The exact drawer (SPEC 5.1): the record with this key, workspace first,
 * then global (scope NULL), or in the named scope. Updates last_seen and
 * revives a "stale" record to "accepted". CAIRN_NOTFOUND if none.
 */
CAIRN_API int cairn_record_read_key(cairn_db *db, const char *key,
				    const char *scope, cairn_record **out);

/*
 * The record with this key, as cairn_record_read_key finds it (workspace
 * first, then global, or only `scope`), but a lookup only: last_seen and
 * the status are left as they are (forgetting a record is not reading
 * it). *out: caller frees with cairn_record_free(). CAIRN_NOTFOUND.
 */
CAIRN_API int cairn_record_find_key(cairn_db *db, const char *key,
				    const char *scope, cairn_record **out);

/* Filter for listing; NULL or "" fields mean "any" (statuses: the default). */
typedef struct cairn_filter {
	const char *kinds;    /* comma-separated kinds */
	const char *statuses; /* comma-separated; NULL: "accepted,unverified"; "all": every status */
	const char *scope;    /* "workspace", "global" or "machine" */
	const char *origins;  /* comma-separated origins */
	long limit;           /* 0: no limit */
} cairn_filter;

/*
 * List records matching f (NULL: defaults), newest update first. *out is
 * an array of *n records: free with cairn_record_list_free(). CAIRN_INVALID
 * for an unknown kind/status/origin in the filter.
 */
CAIRN_API int cairn_record_list(cairn_db *db, const cairn_filter *f,
				cairn_record ***out, size_t *n);

/*
 * Revisions of the record with this key (workspace first, then global),
 * or, when no record has that key, with this id; newest first, the
 * current one included as the first element.
 */
CAIRN_API int cairn_record_history(cairn_db *db, const char *key,
				   const char *scope, cairn_record ***out,
				   size_t *n);

/* ================================================================== drift */

/*
 * A workspace record remembers the repository files it refers to (the
 * source file of a seeded record; the Makefile, scripts, package.json a
 * procedure or capability names; paths named in its text that exist) and
 * each one's Git blob id when it was written, seeded or verified. One
 * cairn_drift is one such reference compared with today's tree.
 */
typedef struct cairn_drift {
	char *record_id;
	char *kind;
	char *title;
	char *path;          /* relative to the workspace root */
	const char *state;   /* "same", "changed", "deleted" or "renamed" (static) */
	char *renamed_to;    /* "renamed": where the same content is now (HEAD's tree) */
	char *blob;          /* the file's Git blob id when recorded */
	char blob_now[41];   /* "changed": its blob id today; "" otherwise */
	char *commit;        /* HEAD when recorded ("" outside a commit) */
	char *recorded;      /* when recorded (ISO-8601 UTC) */
	char *how;           /* "write" (write, seed, capture) or "verify" */
	long commits;        /* CAIRN_DRIFT_HISTORY: commits since that touched it; -1 unknown */
	long lines_added;    /* CAIRN_DRIFT_HISTORY: lines added since; -1 unknown */
	long lines_removed;  /* CAIRN_DRIFT_HISTORY: lines removed since; -1 unknown */
} cairn_drift;

enum cairn_drift_flags {
	CAIRN_DRIFT_ALL = 1 << 0,     /* list unchanged references too */
	CAIRN_DRIFT_HISTORY = 1 << 1, /* ask git for commits, lines and renames */
};

/*
 * Compare the references of record id (NULL: of every standing record)
 * with the files today; *out gets *n references (changed, deleted or
 * renamed ones; every one with CAIRN_DRIFT_ALL), in record order. Caller
 * frees with cairn_drift_free(). Only CAIRN_DRIFT_HISTORY runs `git`
 * (never recall or the hook); it also keeps the commit counts it found
 * for recall's marker.
 */
CAIRN_API int cairn_drift_check(cairn_db *db, const char *id, unsigned flags,
				cairn_drift **out, size_t *n);
CAIRN_API void cairn_drift_free(cairn_drift *d, size_t n);

/*
 * The factor (0..1) recall multiplies a drifted record's score by, kept in
 * the workspace store (default 0.85; 1 turns the down-weight off).
 */
CAIRN_API int cairn_drift_set_weight(cairn_db *db, double w);

/*
 * A human re-affirms record id against today's tree: its references are
 * recorded anew and the act is a new revision (proof "verified by a human
 * against the tree at COMMIT on DATE"; the previous revision is kept).
 */
CAIRN_API int cairn_record_verify(cairn_db *db, const char *id);

/* Counts by kind, status, origin and scope as a JSON object string. Caller frees with cairn_free(). */
CAIRN_API int cairn_stats_json(cairn_db *db, char **out);

/*
 * Check the store: PRAGMA integrity_check on each database and the
 * full-text index's own integrity check. CAIRN_OK when all say ok, else
 * CAIRN_CORRUPT with the findings in cairn_errmsg().
 */
CAIRN_API int cairn_check_integrity(cairn_db *db);


/* ================================================================= recall */

typedef struct cairn_recall_opts {
	int k;                /* results wanted; 0: 5; at most 100 */
	const char *kinds;    /* comma-separated kinds; NULL: any */
	const char *statuses; /* comma-separated; NULL: "accepted,unverified" */
	int explain;          /* 1: fill each hit's explain text */
	int no_floor;         /* 1: return hits below the no-match floor too (evaluation, calibration) */
	int no_receipt;       /* 1: write no receipt and no last_seen (evaluation) */
	/* cross-encoder rerank of the top 10 (docs/RANKING.md step 6) */
	int rerank;           /* 0: when a rerank model is configured
				 ($CAIRN_RERANK_MODEL, else the store's
				 rerank.model); 1: on (CAIRN_INVALID when no
				 model is given or configured); -1: off */
	const char *rerank_model; /* with rerank 1: this GGUF file; NULL: the configured one */
	/* embedding the question over a network (the http provider): the most it
	   may take, retries included; past it, or when the provider is down,
	   recall is lexical only and result.notice says so */
	int embed_budget_ms;  /* 0: CAIRN_EMBED_BUDGET_MS; < 0: no bound */
} cairn_recall_opts;

#define CAIRN_EMBED_BUDGET_MS 2000 /* the default of embed_budget_ms */

typedef struct cairn_hit {
	cairn_record *rec;   /* the record (owned by the result) */
	double score;        /* final score: relevance x weight (x decay) */
	double relevance;    /* 0..1 above the floor: clamp((s - floor)/(1 - floor)) */
	double lexical;      /* lexical signal s in 0..1: bm25 over the most the question could score */
	double bm25;         /* raw BM25 (higher is better) */
	int bm25_rank;       /* 1-based rank in the BM25 pool */
	double weight;       /* kind/status weight (SPEC 5.2) */
	char *matched;       /* matched query terms, space-separated */
	char *explain;       /* with opts.explain: one line per ranking step */
	/* hybrid recall (result.hybrid = 1; docs/RANKING.md); 0 otherwise */
	int dense_rank;      /* 1-based rank in the dense pool; 0: not in it */
	double cosine;       /* cosine with the question; 0 without a vector */
	int has_vector;      /* 1: the record has a vector of this identity */
	double rrf;          /* weighted reciprocal-rank fusion sum */
	int pinned;          /* 1: pinned first as an overwhelming BM25 hit */
	int exact_key;       /* 1: the question is this record's key */
	double decay;        /* time decay factor (1: none) */
	const char *basis;   /* relevance from "cosine", "lexical" or "key" (static) */
	/* cross-encoder rerank (result.reranked = 1); 0 otherwise */
	double rerank;       /* the cross-encoder's raw score of (question, title + body) */
	int rerank_rank;     /* 1-based rank among the rescored hits; 0: not rescored */
	int rerank_from;     /* 1-based position before the rerank; 0: not rescored */
	/* drift (cairn_drift_check): a file this record refers to changed */
	char *drift;         /* NULL, or "scripts/deploy.sh changed since this was recorded" */
	double drift_weight; /* the factor its score took for that (1: none) */
	/* answerability (docs/RANKING.md): what the floor decides on */
	double answer;       /* 0..1: share of the question's IDF mass this hit matches,
				each word weighed by what can match it (its glosses) */
} cairn_hit;

typedef struct cairn_result {
	cairn_hit *hits;        /* n hits, best first */
	size_t n;               /* number of hits returned */
	size_t dropped;         /* hits the floor removed */
	double floor;           /* the no-match floor used */
	int floor_calibrated;   /* 1: measured by cairn calibrate for this tokenizer */
	char receipt_id[32];    /* the receipt ("" with no_receipt) */
	char *terms;            /* the query terms searched, space-separated */
	double idf_mass;        /* sum of the terms' idf (the lexical signal's denominator) */
	/* hybrid recall: vectors of the configured model were searched too */
	int hybrid;             /* 1: BM25 + dense fused (docs/RANKING.md); 0: lexical only */
	double cos_floor;       /* the cosine floor used (hybrid) */
	int cos_floor_calibrated; /* 1: measured by cairn calibrate for this vector identity */
	size_t dropped_dup;     /* hits removed by the per-source limit (hybrid) */
	char *notice;           /* NULL, or a sentence for the user (e.g. the cosine
				   floor was calibrated for another model) */
	/* cross-encoder rerank (docs/RANKING.md step 6) */
	int reranked;           /* 1: the top hits were rescored and re-fused */
	size_t rerank_n;        /* hits the cross-encoder scored */
	double rerank_ms;       /* milliseconds to score them (tokenise + run) */
	double rerank_load_ms;  /* milliseconds to load the model (0: cached) */
	char rerank_model[256]; /* the model's file name ("" when not reranked) */
	int embed_down;         /* 1: the embedding model failed (no answer within
				   opts.embed_budget_ms, an error, NaN): lexical
				   only, see notice */
	/* answerability: the best hit's, before the floor */
	double answer;          /* 0..1; 0 when nothing matched */
	double answer_unseen;   /* share of the question's mass the workspace store never says */
	/* the chance test of the workspace store (docs/RANKING.md) */
	size_t chance_words;    /* the question's tested words (in under
				   max(1/sqrt(N), CAIRN_CHANCE_SHARE) of the records) */
	double chance_expected; /* times chance would put their pairs in one record */
	size_t chance_met;      /* meetings of the pairs chance puts together less
				   than once, in records without a source file
				   (counting stops once above chance) */
	int chance_only;        /* 1: no more than chance: every hit's answerability 0 */
	double chance_all_expected;  /* times chance would put all of them in one record */
	double chance_pair_expected; /* times chance would give the pairs of chance_met */
	size_t chance_together;      /* most of them one record of the pool holds */
	double chance_together_expected; /* times chance would put that many in one record */
	/* the lone-word rule (docs/RANKING.md): a hit holding one word of
	   the question while a heavier one is missing has answerability 0 */
	size_t lone;            /* hits of the pool it zeroed */
	double answer_lone;     /* the best answerability they had before it
				   (0: none); cairn_calibrate measures a probe
				   by the higher of this and answer */
	size_t words;           /* the question's words searched: the terms
				   less the glosses added for them */
} cairn_result;

/*
 * Recall records for a question (SPEC 5.2): BM25 over our tokenizer
 * (title weighted above body), the kind/status weights, and the no-match
 * floor: hits whose lexical signal is at or below the floor are dropped,
 * so a question the store cannot answer returns nothing. Unless
 * opts->no_receipt, writes a receipt (SPEC 5.3) and updates last_seen of
 * the returned records in one batched write (and first ages the records,
 * at most daily: cairn_gc).
 *
 * When an embedding model is configured and records have vectors of its
 * identity, recall is hybrid (docs/RANKING.md): BM25 and dense pools fused
 * by weighted RRF, the overwhelming BM25 hit pinned, the cosine floor
 * calibrated for that identity, decay by kind, at most 2 chunks per source
 * file; result->hybrid is 1 and the hits carry the dense figures. Vectors
 * of another identity: CAIRN_MISMATCH (the message names cairn reindex).
 *
 * When the question cannot be embedded because the provider does not
 * answer within opts->embed_budget_ms (a server that is down, refuses or
 * times out: CAIRN_IO from the http provider), recall is lexical only,
 * result->hybrid is 0 and result->notice says why: never an error, so that
 * the hook still injects what the words find.
 *
 * Either way, with a rerank model (opts->rerank; docs/RANKING.md step 6)
 * the top 10 hits are rescored by a cross-encoder and their order fused
 * 1:1 by reciprocal rank with the order above; result->reranked is 1 and
 * the hits carry rerank, rerank_rank and rerank_from. Off by default.
 *
 * *out: caller frees with cairn_result_free(). An empty result is
 * CAIRN_OK with n == 0. Errors: CAIRN_INVALID (empty or invalid UTF-8
 * question, unknown kind/status), CAIRN_TOOBIG (question over 64 KiB),
 * CAIRN_IO (tokenizer dictionary missing), CAIRN_BUSY.
 */
CAIRN_API int cairn_recall(cairn_db *db, const char *query,
			   const cairn_recall_opts *opts, cairn_result **out);

/* Free a recall result. NULL ok. */
CAIRN_API void cairn_result_free(cairn_result *res);

/*
 * The built-in generic probes: off-topic questions in English and Chinese
 * (cooking, gardening, sport, travel) that `cairn calibrate` uses when no
 * probe file is given. *n gets their number. Static; never freed.
 */
CAIRN_API const char *const *cairn_default_probes(size_t *n);

/*
 * A receipt by id as a JSON object string: query_sha256, ids (in order),
 * provider, revision, time and the per-hit figures. Caller frees with
 * cairn_free(). CAIRN_NOTFOUND if none.
 */
CAIRN_API int cairn_receipt_json(cairn_db *db, const char *id, char **out);

/*
 * Calibrate the no-match floor from n questions the store cannot answer:
 * the median of their answerability (each probe's best hit,
 * cairn_hit.answer), never below the default floor, rounded up to 0.01,
 * stored with the tokenizer identity it was measured for. Not the highest
 * probe: one probe that shares most of its words with the store would
 * set the bar for every real question; the probes above the floor are
 * reported (cairn_calibration). *floor_out (if not NULL) gets it.
 */
CAIRN_API int cairn_calibrate(cairn_db *db, const char *const *probes,
			      size_t n, double *floor_out);

/* What cairn_calibrate_ex measured. */
/*
 * The no-match floor before calibration, and the least answerability any
 * single hit must have: recall answers a question when its best
 * hit's answerability is above the floor in force (calibrated or this),
 * and then returns the hits above min(that floor, this one).
 */
#define CAIRN_DEFAULT_FLOOR 0.12
/*
 * The chance test (docs/RANKING.md): the question's words are unrelated in
 * the store, and no record answers it (cairn_result.chance_only), when
 * nothing links them beyond chance. It tests the words in fewer than
 * max(1/sqrt(N), CAIRN_CHANCE_SHARE) of the store's N records, and only
 * when chance would put their pairs in one record at least
 * CAIRN_CHANCE_POWER times.
 */
#define CAIRN_CHANCE_POWER 0.3
#define CAIRN_CHANCE_SHARE 0.02

#define CAIRN_CAL_SHOW 8 /* probes let through that cairn_calibration names */

typedef struct cairn_calibration {
	double lexical_floor; /* as cairn_calibrate */
	int has_cosine;       /* 1: a vector model is configured and vectors exist */
	double cosine_floor;  /* highest probe cosine, rounded up to 0.01 */
	char identity[1200];  /* the vector identity it was stored with ("" if none) */
	/* what the floor lets through */
	size_t probes;        /* probes asked (those with searchable words) */
	double probe_max;     /* the highest probe answerability */
	size_t through;       /* probes whose answerability is above the floor */
	size_t shown;         /* of them, named in through_idx (at most CAIRN_CAL_SHOW) */
	size_t through_idx[CAIRN_CAL_SHOW]; /* their indexes in probes[], best first */
	double through_answer[CAIRN_CAL_SHOW]; /* and their answerability */
} cairn_calibration;

/*
 * cairn_calibrate, and when the store has vectors of the configured
 * model: the cosine floor for that vector identity (the highest cosine
 * any probe reaches with any record, rounded up to 0.01), stored with the
 * identity. Recall uses a cosine floor only for the identity it was
 * measured for. *out may be NULL.
 */
CAIRN_API int cairn_calibrate_ex(cairn_db *db, const char *const *probes,
				 size_t n, cairn_calibration *out);

/*
 * The cosine floor alone, as cairn_calibrate_ex measures it; the lexical
 * floor is left as it is (cairn setup claude-code --model calibrates a new
 * model with built-in off-topic questions, which say nothing about the
 * store's own near misses). out->has_cosine 0: no vectors of the
 * configured model. *out may be NULL.
 */
CAIRN_API int cairn_calibrate_cosine(cairn_db *db, const char *const *probes,
				     size_t n, cairn_calibration *out);

/* ============================================================== lifecycle */

/* What one lifecycle run did (SPEC 5.5). */
typedef struct cairn_gc_result {
	int ran;             /* 0: skipped, the last run was less than a day ago */
	long long staled;    /* decisions and facts unseen 90 days -> stale */
	long long retired;   /* unseen 180 days -> retired */
	char now[32];        /* the time it ran as (ISO-8601 UTC) */
} cairn_gc_result;

/*
 * Age the records (SPEC 5.5): decisions and facts unseen for 90 days
 * become "stale", for 180 days "retired"; capabilities, rules, procedures
 * and every other kind never decay. Unless `force`, does nothing when it
 * ran less than a day ago (cairn_recall calls it so before searching,
 * except with no_receipt); `cairn gc` forces it. $CAIRN_NOW (ISO-8601)
 * sets its clock, for tests. *out may be NULL.
 */
CAIRN_API int cairn_gc(cairn_db *db, int force, cairn_gc_result *out);

/*
 * Record new_id replaces old_id: old.superseded_by = new, new.supersedes =
 * old, old's status -> "superseded" (it leaves default recall). CAIRN_INVALID
 * when they are the same record or new is not live (superseded, false,
 * retired, rejected); CAIRN_EXISTS when old is already superseded by
 * another record; CAIRN_READONLY when old is file-backed (the message says
 * which file to edit); CAIRN_NOTFOUND.
 */
CAIRN_API int cairn_supersede(cairn_db *db, const char *old_id,
			      const char *new_id);

/* One record that a record may replace. */
typedef struct cairn_suggestion {
	cairn_record *rec;   /* the existing record (owned by the array) */
	double similarity;   /* lexical similarity 0..1 (token cosine) */
	int same_family;     /* 1: its key has the same family (text before the last ':') */
} cairn_suggestion;

/*
 * Records that record id may replace: same kind, live (accepted,
 * unverified), same scope, not id itself, the same key family when id has
 * a key, and a lexical similarity of at least 0.5 of title + body; best
 * first, at most 10. For `cairn write` / `cairn approve` to ask, and
 * `cairn supersede --suggest`. *out: free with cairn_suggestions_free().
 */
CAIRN_API int cairn_supersede_suggest(cairn_db *db, const char *id,
				      cairn_suggestion **out, size_t *n);
CAIRN_API void cairn_suggestions_free(cairn_suggestion *v, size_t n);

/* ========================================================= export, import */

/*
 * Export every record (every status, both scopes) with its revisions as
 * JSON Lines, one record per line, in id order, to the callback. The
 * output is deterministic: export -> import into an empty store -> export
 * gives the same bytes.
 */
CAIRN_API int cairn_export(cairn_db *db,
			   int (*write)(void *user, const char *buf, size_t len),
			   void *user);

/*
 * Import one JSON Lines record as written by cairn_export (or a subset of
 * its fields: kind and body are required). A record whose id exists is
 * replaced only when `replace` is set, else skipped (*skipped = 1). It
 * passes the checks of cairn_record_write (secret filter, size limits,
 * UTF-8, no NUL, a valid id, ISO-8601 created/updated/last_seen/time)
 * with its status, times and revision kept; a key another record holds
 * is CAIRN_EXISTS naming that record. Its supersedes and superseded_by
 * must name records that exist when the transaction commits (so, inside
 * a cairn_begin batch, records later in the same batch count): else the
 * commit fails with CAIRN_NOTFOUND and nothing of it is kept. The first
 * global record attaches (creating) the global store, inside a batch too.
 */
CAIRN_API int cairn_import_line(cairn_db *db, const char *line, size_t len,
				unsigned flags, int replace, int *skipped);

/* ============================================================ team sync */

/*
 * Team memory on PostgreSQL (docs/TEAM.md). The workspace store stays the
 * recall index; sync copies changes to and from a server. Remotes live in
 * the workspace store's meta table: a name, a libpq connection string and
 * the team space of this repository. The connection string must not carry
 * a password (CAIRN_INVALID, naming ~/.pgpass and PGPASSFILE).
 */
CAIRN_API int cairn_remote_add(cairn_db *db, const char *name,
			       const char *conninfo, const char *space);
/* Remove remote name (its sync state stays harmlessly). CAIRN_NOTFOUND. */
CAIRN_API int cairn_remote_rm(cairn_db *db, const char *name);
/*
 * The remotes as a JSON array [{"name","url","space"}], name order.
 * Caller frees with cairn_free().
 */
CAIRN_API int cairn_remote_list_json(cairn_db *db, char **out);

typedef struct cairn_sync_report {
	size_t pushed;     /* records sent to the server */
	size_t pulled;     /* records taken from the server */
	size_t conflicts;  /* conflicting revisions kept as candidates */
	size_t refused;    /* server records refused (secret, invalid) */
	size_t unsynced;   /* local changes not on the server after the run */
	char *log;         /* one line per notable event; caller frees with cairn_free() */
} cairn_sync_report;

/*
 * Sync with remote name (NULL: the only one): push this workspace's
 * changed records (and global ones, to the user's own space), then pull
 * everyone else's since the last sync. File-backed records never travel;
 * machine-scoped ones stay too unless flags has CAIRN_SYNC_MACHINE (and
 * are never pulled: what one machine proved is not true of another).
 * Sync state is kept per remote (its name and the server's id).
 * A record changed here and on the server keeps the server's version;
 * this machine's text becomes a candidate (never lost). The secret filter
 * and the approval gate run on what is pulled. rep is filled (also on
 * failure, as far as the run got); free rep->log with cairn_free().
 * CAIRN_IO when the server cannot be reached (message says why: refused,
 * password, TLS), CAIRN_MISMATCH for a server schema newer than this cairn.
 */
CAIRN_API int cairn_sync(cairn_db *db, const char *name,
			 cairn_sync_report *rep);
enum cairn_sync_flag {
	CAIRN_SYNC_MACHINE = 1 << 0, /* push machine-scoped records too */
};
/* cairn_sync with flags (enum cairn_sync_flag); cairn_sync passes 0. */
CAIRN_API int cairn_sync_flags(cairn_db *db, const char *name,
			       unsigned flags, cairn_sync_report *rep);

/*
 * Follow remote name (NULL: the only one) with LISTEN cairn_sync: open a
 * listening connection, then wait up to timeout_ms for another machine's
 * push (CAIRN_OK), CAIRN_NOTFOUND on timeout, CAIRN_IO when the connection
 * failed. Open the watch before the sync it follows so that no push falls
 * between the two. Close with cairn_watch_close() (NULL ok).
 */
typedef struct cairn_watch cairn_watch;
CAIRN_API int cairn_watch_open(cairn_db *db, const char *name,
			       cairn_watch **out);
CAIRN_API int cairn_watch_wait(cairn_watch *w, int timeout_ms);
CAIRN_API void cairn_watch_close(cairn_watch *w);

/*
 * Local changes not yet on remote name (NULL: the only one), counted
 * without the network (machine-scoped records not among them).
 * CAIRN_NOTFOUND when no remote exists.
 */
CAIRN_API int cairn_sync_unsynced(cairn_db *db, const char *name, size_t *n);

/* Begin / commit a batch (one transaction around many writes). A commit
 * first checks the links of the records imported in it (above). */
CAIRN_API int cairn_begin(cairn_db *db);
CAIRN_API int cairn_commit(cairn_db *db);
CAIRN_API int cairn_rollback(cairn_db *db);

/* ================================================================= models */

/*
 * The built-in catalogue of GGUF conversions (docs/EMBEDDINGS.md, "Models
 * by name"). Every string is static.
 */
typedef struct cairn_model_entry {
	const char *name;      /* "bge-small-en-v1.5": what pull, rm and reindex --model take */
	const char *kind;      /* "embedding" or "reranker" */
	const char *repo;      /* Hugging Face repository of the conversion */
	const char *file;      /* the GGUF file in it */
	long long size;        /* bytes, as the repository lists it (rounded) */
	int dims;              /* output width; 1 for a reranker */
	const char *pooling;   /* "cls", "mean" or "rank" */
	const char *query_instruction;   /* prepended to queries ("" none) */
	const char *passage_instruction; /* prepended to records ("" none) */
	const char *languages; /* "en", "zh", "zh, en", "100+ languages" */
	const char *note;      /* one line: what it is good for */
} cairn_model_entry;

/* The catalogue: *n entries, static. */
CAIRN_API const cairn_model_entry *cairn_model_catalogue(size_t *n);
/* The catalogue entry called name, or NULL. */
CAIRN_API const cairn_model_entry *cairn_model_lookup(const char *name);

/*
 * The directory pulled models live in: $CAIRN_MODEL_DIR, else
 * $CAIRN_CACHE_DIR/models, else $XDG_CACHE_HOME/cairn/models, else
 * ~/.cache/cairn/models. Copied into buf. CAIRN_OK, or CAIRN_NOTFOUND
 * when there is no HOME either, CAIRN_TOOBIG when it does not fit.
 */
CAIRN_API int cairn_model_dir(char *buf, size_t size);

typedef struct cairn_pull_opts {
	const char *sha256;   /* 64 hex digits the file must hash to; NULL: record
				 the hash of the first download (NAME.json) */
	const char *dir;      /* NULL: cairn_model_dir() */
	const char *name;     /* for a URL: the name to keep it under; NULL: the
				 URL's file name less ".gguf" */
	/* progress, about every 100 ms and at the end: bytes on disk, and the
	   whole file's size (0 while unknown) */
	void (*progress)(void *user, long long have, long long total);
	void *user;
	long long max_size;   /* most bytes the file may have; 0: the catalogue's
				 size + 25 %, or MODEL_MAX_URL_BYTES for a URL */
} cairn_pull_opts;

typedef struct cairn_pull_result {
	char name[128];        /* the model's name */
	char path[4096];       /* the GGUF file: DIR/NAME.gguf */
	char url[2048];        /* where it came from */
	char sha256[65];       /* its SHA-256 */
	long long size;        /* its bytes */
	long long resumed_from;/* bytes a partial file already had (0: none) */
	int transfers;         /* HTTP transfers made (0: it was there already) */
	int already;           /* 1: present and its hash checked: nothing fetched */
	int pinned;            /* 1: the hash was given (--sha256) and matched */
	char error[1024];      /* on failure: one line for the user */
} cairn_pull_result;

/*
 * Download a model into the model directory: `what` is a catalogue name
 * (fetched from $HF_ENDPOINT, default https://huggingface.co, REPO/resolve/
 * main/FILE) or an http(s) URL of a .gguf file. The bytes go to
 * DIR/NAME.gguf.part; a part left by an interrupted pull is resumed with an
 * HTTP Range request made conditional with If-Range on the ETag or
 * Last-Modified the part was started with (NAME.gguf.part.if-range): a file
 * changed on the server since, or a server that ignores Range, starts the
 * file again, and a part without a recorded validator is started again. A
 * transfer cut in the middle, or slower than MODEL_LOW_SPEED_BPS over
 * MODEL_STALL_S seconds, is resumed up to MODEL_TRIES times. An answer
 * longer than the bound (opts->max_size) is cut there and removed
 * (CAIRN_TOOBIG), as is one whose Content-Length passes it. The
 * finished file is hashed, checked against opts->sha256 when given, checked
 * to be a GGUF file, then renamed to DIR/NAME.gguf, and DIR/NAME.json
 * records its name, source, size and SHA-256. A model already there is
 * hashed again and not fetched. Only this function downloads anything.
 *
 * Errors (out->error says which, with what to do): CAIRN_INVALID (unknown
 * name, bad URL or hash), CAIRN_NOTFOUND (HTTP 404), CAIRN_MISMATCH (the
 * file's SHA-256 is not the pinned one: the file is removed), CAIRN_IO (no
 * network, another HTTP error, a full disk: the partial file is kept to
 * resume), CAIRN_CORRUPT (not a GGUF file: removed), CAIRN_BUSY (another
 * pull of the same model holds its partial file), CAIRN_ERROR (libcurl
 * could not be loaded), CAIRN_TOOBIG (the answer passed the size bound:
 * removed). out must not be NULL.
 */
CAIRN_API int cairn_model_pull(const char *what, const cairn_pull_opts *opts,
			       cairn_pull_result *out);

/*
 * The file of an installed model: DIR/NAME.gguf into path (and its
 * recorded SHA-256 into sha256, "" when NAME.json is missing; either may be
 * NULL). dir NULL: cairn_model_dir(). CAIRN_OK, CAIRN_NOTFOUND (not
 * pulled), CAIRN_INVALID (not a valid name), CAIRN_TOOBIG.
 */
CAIRN_API int cairn_model_installed(const char *name, const char *dir,
				    char *path, size_t size, char sha256[65]);

/*
 * Remove an installed model: DIR/NAME.gguf, NAME.json and a partial
 * NAME.gguf.part. CAIRN_NOTFOUND when none of them is there; CAIRN_IO with
 * errno's reason in err.
 */
CAIRN_API int cairn_model_remove(const char *name, const char *dir, char *err,
				 size_t errsize);

/*
 * Which catalogue models suit a store: han is the share (0..1) of records
 * written mostly in Chinese characters, locale the user's (LANG; NULL ok).
 * Returns the embedding model's name; *reranker (if not NULL) the
 * reranker's, *why (if not NULL) one static sentence saying why.
 */
CAIRN_API const char *cairn_model_recommend(double han, const char *locale,
					    const char **reranker,
					    const char **why);

/* ================================================================ seeding */

/* Markdown in Git becomes file-backed records (SPEC 4.1, docs/SEED.md). */

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

/* ============================================================= transcripts */

/* Transcripts (JSON Lines) become event records (docs/INGEST.md). */

/* Options for cairn_ingest_file(); a zeroed struct (or NULL) means the defaults. */
typedef struct cairn_ingest_opts {
	unsigned flags;      /* CAIRN_WRITE_REDACT: store secrets masked instead of refusing the line */
	const char *session; /* session of generic lines without one; NULL: the file name without .jsonl */
	void (*progress)(void *user, size_t done, size_t total); /* bytes read of the file; may be NULL */
	void *user;          /* passed to progress */
	int include_tools;   /* 1: also tool output (failed tool calls' output,
			      * tool-result lines, generic tool/web speakers);
			      * 0: left out, not the user's or the assistant's
			      * words (stored prompt injection) */
} cairn_ingest_opts;

/* What ingesting one file did. Release with cairn_ingest_report_release(). */
typedef struct cairn_ingest_report {
	size_t lines;     /* non-blank lines read */
	size_t events;    /* events those lines hold (written or not) */
	size_t added;     /* events stored now */
	size_t unchanged; /* events already stored (same id): not touched */
	size_t skipped;   /* lines with nothing to keep: summaries, meta, thinking, tool output */
	size_t tools;     /* tool-output events left out (no include_tools) */
	size_t refused;   /* lines refused for a secret (none of their events stored) */
	size_t errors;    /* lines reported and skipped: invalid JSON, too long, bad fields */
	char *messages;   /* "FILE:LINE: message\n" for every refused or bad line; NULL if none */
} cairn_ingest_report;

/*
 * Ingest one transcript file (JSON Lines) as event records.
 *
 * path is read as given (relative to the current directory); the records'
 * src_path is it relative to the workspace root when the file lies inside
 * the workspace, else its absolute path. Every event gets kind "event",
 * origin "human", status "unverified", the session id (src_session), the
 * speaker (src_tool, and the title "speaker · YYYY-MM-DD HH:MM"), the time
 * (normalised to UTC, "YYYY-MM-DDTHH:MM:SS.mmmZ") and the JSONL line
 * (src_line). A text longer than 4,000 code points is cut
 * there and ends in " […]" (after the secret filter saw all of it). Ids are "e" + 15 hex digits of SHA-256 over session, the
 * line's uuid (or line number), the event's place in the line, speaker and
 * text, so re-ingesting a file adds nothing (report->unchanged).
 * A line without a uuid (or "id") counts by its time, and only without a
 * time by its line number.
 *
 * A line is written whole or not at all. A line that is not JSON, longer
 * than 1 MiB, or has bad fields is reported and skipped
 * (report->errors); a line whose text holds a secret is refused
 * (report->refused) unless opts->flags has CAIRN_WRITE_REDACT, when it is
 * stored masked. Each such line adds "path:line: message" to
 * report->messages (the first 100; then one "path: N more problem lines
 * not listed"); the rest of the file is still ingested. All of the
 * file is one batch (cairn_begin .. cairn_commit), so the call must not be
 * made inside a batch.
 *
 * Returns CAIRN_OK when the file was read to its end (even with reported
 * lines: check report->refused and report->errors), else CAIRN_IO (cannot
 * read the file), CAIRN_INVALID (a batch is already open), CAIRN_NOMEM,
 * CAIRN_BUSY; then nothing of the file is written. rep is filled in both
 * cases; the caller releases it with cairn_ingest_report_release().
 */
CAIRN_API int cairn_ingest_file(cairn_db *db, const char *path,
				const cairn_ingest_opts *opts,
				cairn_ingest_report *rep);

/* Free everything a report holds and zero it. NULL is a no-op. */
CAIRN_API void cairn_ingest_report_release(cairn_ingest_report *rep);

/*
 * The events of a session in their original order: by time, then source
 * path, then line, then the order they were stored in. Retired and
 * rejected events are left out. session is an exact session id, or a
 * unique prefix of one (at least 4 characters).
 *
 * With around_id NULL: every event, or with n > 0 the last n. With
 * around_id (a record id or unique prefix): that event and the n events
 * before and after it (n >= 0); session may then be NULL or "" to mean the
 * record's own session.
 *
 * *out is an array of *count records: the caller frees it with
 * cairn_record_list_free(). Errors: CAIRN_NOTFOUND (no events of that
 * session, no such record), CAIRN_INVALID (an ambiguous prefix, a record
 * that is not an event of that session, n < 0), CAIRN_NOMEM, CAIRN_BUSY.
 */
CAIRN_API int cairn_session_events(cairn_db *db, const char *session,
				   const char *around_id, int n,
				   cairn_record ***out, size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_H */
