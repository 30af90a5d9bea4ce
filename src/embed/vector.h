/*
 * vector.h -- the vector index: one embedding per record (its real text,
 * title + body) stored in SQLite under one identity per schema, the store's
 * embedding settings, and exact brute-force top-k search.
 *
 * Layer: on embed.h and store.h. Above it: recall/rank (dense pool) and the
 * cli (`cairn reindex`, `cairn model`).
 *
 * Storage (schema v4, in "main" and, when attached, "global"):
 *   vectors(rid INTEGER PRIMARY KEY -> records.rid, v BLOB) -- dim IEEE f16
 *   values, little-endian, L2-normalised; a trigger deletes a record's
 *   vector when its title or body changes or the record is deleted, so a
 *   stored vector always belongs to the record's current text.
 *   meta 'vector.identity' = embed_identity_string() of the vectors stored
 *   in that schema; meta 'vector.generation' = a counter bumped by every
 *   vector write (the in-memory cache reloads when it moves).
 *   The embedding settings are meta keys 'embed.*' of the main store
 *   (docs/EMBEDDINGS.md), overridden per process by CAIRN_EMBED_*.
 *
 * Errors: functions that take a db return CAIRN_* and leave a message in
 * cairn_errmsg(db). CAIRN_MISMATCH means the stored vectors were made by
 * another identity; its message names `cairn reindex`.
 *
 * Filtering by kind and status is done here, inside the scan (the cache
 * keeps each row's kind and status, refreshed when the store changed), so
 * the k best returned all pass the caller's filter.
 *
 * In memory (per db handle, loaded on the first search, reloaded when the
 * store changed): each schema's f16 matrix plus, from the second search,
 * an int8 copy for a cheaper first pass; results equal an exact f16 scan
 * (vector_matrix_topk). One search at a time per db handle (as for the
 * handle's SQLite connection). A load from SQLite also writes the sidecar
 * STORE.db-vectors (matrix, rids, ids, kinds, statuses), which the next
 * process maps instead while its header (identity, vector.generation,
 * vector.labels, largest rid, the database file's device and inode)
 * still matches; docs/EMBEDDINGS.md.
 */
#ifndef CAIRN_VECTOR_H
#define CAIRN_VECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "embed.h"
#include "quant.h"

struct cairn_db;

#define VECTOR_MAX_K 200    /* most hits one search returns */
#define VECTOR_MAX_DIM 4096 /* widest vector stored or searched */
#define VECTOR_ID_MAX 256   /* bytes of a record id, NUL included; records with
				longer ids are searched lexically only */

struct vector_hit {
	char id[VECTOR_ID_MAX]; /* record id */
	const char *schema;     /* "main" or "global" (static string) */
	long long rid;          /* records.rid in that schema */
	float cos;              /* cosine with the query (dot of unit vectors) */
};

/*
 * Which records a search may return: comma-separated lists in the format of
 * cairn_recall_opts (NULL: any kind; NULL statuses: "accepted,unverified").
 * A NULL filter pointer means the defaults.
 */
struct vector_filter {
	const char *kinds;
	const char *statuses;
};

/*
 * The store's embedding settings: meta 'embed.*' of the main store, then
 * CAIRN_EMBED_PROVIDER, _MODEL, _URL, _API_KEY_ENV, _QUERY_INSTRUCTION,
 * _PASSAGE_INSTRUCTION, _POOLING, _THREADS, _TIMEOUT_MS from the
 * environment. cfg points into strings owned by the struct.
 */
struct vector_settings {
	struct embed_config cfg;
	char *owned[8];
};

/* Load settings (db may be NULL: environment only). CAIRN_OK or an error. */
int vector_settings_load(struct cairn_db *db, struct vector_settings *s);
void vector_settings_release(struct vector_settings *s);
/* Store cfg as the main store's 'embed.*' keys (NULL fields are removed). */
int vector_settings_save(struct cairn_db *db, const struct embed_config *cfg);
/* 1 when the settings name a provider (not NULL, "" or "none"). */
int vector_settings_enabled(const struct vector_settings *s);

/*
 * The db's embedder, opened from its settings on first use and kept with
 * the handle (closed by cairn_db_close). *out is NULL when no provider is
 * configured (recall is then lexical only; not an error).
 */
int vector_embedder(struct cairn_db *db, struct embedder **out);

/*
 * Dense retrieval for recall: embed query (with the query instruction) by
 * the db's embedder and return its k best records (k <= VECTOR_MAX_K) that
 * pass f, best first, into hits (room for k). Returns CAIRN_OK with *n = 0
 * when no provider is configured or nothing has a vector yet (records
 * written after the last reindex have none: they are lexical-only), and
 * CAIRN_MISMATCH when a schema's vectors were built by another identity.
 */
int vector_query(struct cairn_db *db, const char *query,
		 const struct vector_filter *f, size_t k,
		 struct vector_hit *hits, size_t *n);

/*
 * The same from a query vector q (dim floats, unit length) made by
 * identity id; for tests and for callers that embed themselves. Schemas
 * whose stored identity differs give CAIRN_MISMATCH; schemas with no
 * vectors are skipped.
 */
int vector_search(struct cairn_db *db, const struct embed_identity *id,
		  const float *q, const struct vector_filter *f, size_t k,
		  struct vector_hit *hits, size_t *n);

/*
 * Make id the identity of schema's vectors ("main" or "global"). When the
 * stored identity differs, every vector of that schema is deleted first
 * (*dropped gets how many; may be NULL): identities never mix.
 */
int vector_set_identity(struct cairn_db *db, const char *schema,
			const struct embed_identity *id, long long *dropped);
/* Stored identity string of schema into buf; "" when none. */
int vector_get_identity(struct cairn_db *db, const char *schema, char *buf,
			size_t size);

/*
 * Store v (dim floats; normalised here) as the vector of record `id` (looked
 * up in main, then global), whose schema's identity must already be set
 * (vector_set_identity) with the same dim. For tests that choose vectors.
 */
int vector_put(struct cairn_db *db, const char *id, const float *v,
	       int dim);

/* Counts for `cairn stats` / `cairn reindex --status`, over all schemas. */
struct vector_stats {
	long long records;     /* records in the store(s) */
	long long with_vector; /* of those, with a vector of the stored identity */
	int dim;               /* of the main schema's identity; 0 if none */
	char identity[1200];   /* main schema's stored identity; "" if none */
};
int vector_stats(struct cairn_db *db, struct vector_stats *st);

/*
 * Drop every vector and the stored identity of every schema, in one
 * transaction (`cairn reindex --provider none`); *dropped: how many.
 */
int vector_drop_all(struct cairn_db *db, long long *dropped);

/*
 * Issue 31: try model e, before `cairn reindex` changes anything, on two
 * fixed texts and the first VECTOR_PROBE_RECORDS records of the workspace,
 * as passages and as queries. A model yielding NaN or infinity fails here
 * (CAIRN_CORRUPT, from embed_texts) instead of leaving a configured model
 * that no question can use; any other embed error too. The message names
 * what failed.
 */
#define VECTOR_PROBE_RECORDS 16 /* one small batch: under a second on a CPU */
int vector_probe(struct cairn_db *db, struct embedder *e);

/*
 * `cairn reindex`: embed (as passages) every record of main and global
 * lacking a vector, in batches of `batch` records (0: 32), each committed on
 * its own so an interrupted run resumes where it stopped. Sets the identity
 * of each schema first (dropping vectors of another identity). progress,
 * if not NULL, is called after each batch with (done, total).
 */
struct vector_reindex_result {
	long long embedded;   /* vectors written by this run */
	long long total;      /* records that lacked a vector at the start */
	long long dropped;    /* vectors of another identity deleted */
	long long have;       /* records with a vector at the end */
	double seconds;       /* wall time of the embedding */
};
int vector_reindex(struct cairn_db *db, struct embedder *e, size_t batch,
		   void (*progress)(void *ctx, long long done,
				    long long total),
		   void *ctx, struct vector_reindex_result *res);

/*
 * Kernels, exposed for the benchmark and the unit tests: dot products of q
 * with n rows of dim f16 values (row-major) into out. vector_dots picks the
 * AVX2/FMA kernel at run time when the CPU has it, else the portable one.
 */
void vector_dots(const unsigned short *rows, size_t n, int dim,
		 const float *q, float *out);
void vector_dots_portable(const unsigned short *rows, size_t n, int dim,
			  const float *q, float *out);
/* 1 when vector_dots uses the AVX2/FMA kernel on this CPU. */
int vector_simd_active(void);

/*
 * Top-k of n scores (k <= VECTOR_MAX_K): indices into idx, best first
 * (ties by lower index); returns how many (min(k, n)). keep may be NULL.
 */
size_t vector_topk(const float *scores, size_t n, size_t k,
		   const unsigned char *keep, size_t *idx);

/*
 * An in-memory matrix as vector_search scans it: the f16 rows (the stored
 * values, which define the cosines) and an int8 copy with one scale per row
 * that a first pass reads (half the bytes) against the query quantised to
 * int8 as well (integer dot products: 32 products per AVX2 instruction);
 * the rows whose first-pass score could still reach the k-th best (a
 * proven error bound: both quantisations and the float rounding) are then
 * scored exactly from f16, so the result equals an exact f16 scan.
 */
struct vector_matrix {
	size_t n;
	int dim;
	const unsigned short *h;  /* n * dim f16 (not owned) */
	signed char *q8;          /* n * dim (owned; vector_matrix_build) */
	float *scale;             /* n (owned) */
	float *l1;                /* n (owned): sum of |q8| of each row */
	float *scratch;           /* 2n (owned): one search at a time */
	int32_t *iscratch;        /* n (owned): the integer dot products */
};
/* Build q8 and scale from h; CAIRN_NOMEM. */
int vector_matrix_build(struct vector_matrix *m);
void vector_matrix_release(struct vector_matrix *m);
/*
 * Exact top-k of q against m's rows that pass keep (NULL: all): row
 * indices into idx and cosines into cos (room for k each), best first.
 * Returns how many, or (size_t)-1 when out of memory. Uses m's scratch
 * (allocated once: fresh pages per query cost more than the scan), so
 * one call at a time per matrix.
 */
size_t vector_matrix_topk(const struct vector_matrix *m, const float *q,
			  const unsigned char *keep, size_t k, size_t *idx,
			  float *cos);
/* The int8 pass alone: out[i] = scale[i] * (q8 row i . q). */
void vector_dots_i8(const struct vector_matrix *m, const float *q,
		    float *out);

#endif /* CAIRN_VECTOR_H */
