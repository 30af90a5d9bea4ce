/*
 * vector.c -- the vector index: per-record f16 embeddings in SQLite (schema
 * v4), the store's embedding settings, an in-memory matrix cached per db
 * handle, exact top-k by dot product, and `cairn reindex`'s engine.
 *
 * Layer: on embed.h and store.h (vector.h says what is stored where).
 *
 * Holds: the per-handle cache (struct vec_cache behind db->vec) and its
 * on-disk sidecar (STORE.db-vectors, mapped by the next process while it
 * matches the store), the embed.* settings keys, the identity check,
 * reindex batches. The kernels, the int8 copy and top-k are in
 * vector_kernel.c; the f16 codec is quant.c's.
 *
 * Why f16 is what is stored, and not int8 + scale: f16 keeps cosines to
 * ~1e-3 of the f32 ones with no per-vector scale, halves the bytes of f32
 * (100k x 384 = 77 MB), and AVX2 machines convert it in one instruction
 * (F16C). Stored int8 would put quantisation error into the cosine floor
 * and the RRF order. In memory an int8 copy (one scale per row) is kept
 * as well, only to make the scan cheaper (vector_kernel.c says how).
 *
 * Must never: compare vectors of two identities, return a record whose
 * kind or status the filter excludes, or keep a vector of a changed text
 * (the schema's triggers delete it; the cache reloads when rows change),
 * or map a sidecar whose header does not match the store as it is now.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <errno.h>
#include <signal.h>
#endif
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "quant.h"
#include "store.h"
#include "vector.h"
#include "words.h"

#define VEC_IDENTITY_MAX 1200       /* bytes of an identity string */
#define VEC_TEXT_MAX (16 * 1024)    /* bytes of a record's text embedded */
#define VEC_DEFAULT_BATCH 32        /* records per reindex transaction */
#define VEC_MAX_BATCH 1024

/* the spec's words (words.h) */
static const char *const kinds[] = { WORDS_ARRAY(CAIRN_KINDS) };
static const char *const statuses[] = { WORDS_ARRAY(CAIRN_STATUSES) };

/* ---------------------------------------------------------------- cache */

struct vec_schema {
	int loaded;
	long long generation;     /* meta 'vector.generation' at load */
	long long labels;         /* meta 'vector.labels' at load/refresh */
	char identity[VEC_IDENTITY_MAX];
	size_t n;
	int dim;
	unsigned short *mat;      /* n * dim f16 */
	struct vector_matrix vm;  /* mat with its int8 copy */
	long long *rid;
	uint32_t *idoff;          /* n: offsets of the ids in ids */
	char *ids;                /* the ids, each NUL-terminated */
	size_t idbytes;
	unsigned char *kind, *status; /* indexes into kinds[] / statuses[] */
	unsigned char *keep;      /* n: the current search's filter */
	int searches;             /* since the load (int8 copy from the 2nd) */
	void *map;                /* the mapped sidecar holding mat, rid, idoff,
				     ids, kind and status; NULL: all owned */
	size_t map_len;
};

struct vec_cache {
	struct embedder *emb;
	int emb_tried;
	int emb_rc;
	char emb_err[512];
	struct vec_schema s[2];
};

static void schema_clear(struct vec_schema *s)
{
	vector_matrix_release(&s->vm);
	if (s->map) {
		munmap(s->map, s->map_len);
	} else {
		cairn_free(s->mat);
		cairn_free(s->rid);
		cairn_free(s->idoff);
		cairn_free(s->ids);
		cairn_free(s->kind);
		cairn_free(s->status);
	}
	cairn_free(s->keep);
	memset(s, 0, sizeof(*s));
}

static void cache_free(void *p)
{
	struct vec_cache *c = p;
	int i;

	if (!c)
		return;
	embed_close(c->emb);
	for (i = 0; i < 2; i++)
		schema_clear(&c->s[i]);
	cairn_free(c);
}

static struct vec_cache *cache_of(struct cairn_db *db)
{
	if (!db->vec) {
		db->vec = util_calloc(1, sizeof(struct vec_cache));
		if (db->vec)
			db->vec_free = cache_free;
	}
	return db->vec;
}

static int index_of(const char *const *tab, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		if (strcmp(tab[i], s) == 0)
			return (int)i;
	return -1;
}

/* ----------------------------------------------------------------- meta */

static int meta_get(struct cairn_db *db, const char *schema, const char *k,
		    char *buf, size_t size)
{
	int found;

	return store_meta_get(db, schema, k, buf, size, &found);
}

static int meta_set(struct cairn_db *db, const char *schema, const char *k,
		    const char *v)
{
	return store_meta_set(db, schema, k, v, "writing the vector settings");
}

static int exec_sql(struct cairn_db *db, const char *sql, const char *what)
{
	int src = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);

	return src == SQLITE_OK ? CAIRN_OK : store_sql_error(db, src, what);
}

static int bump_generation(struct cairn_db *db, const char *schema)
{
	char sql[200];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO %s.meta (k, v) VALUES ('vector.generation', "
		 "'1') ON CONFLICT (k) DO UPDATE SET v = CAST(v AS INTEGER) "
		 "+ 1; INSERT OR IGNORE INTO %s.meta (k, v) VALUES "
		 "('vector.labels', '0')",
		 schema, schema);
	return exec_sql(db, sql, "writing vectors");
}

static int count_sql(struct cairn_db *db, const char *sql, long long *out)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

	if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		src = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return src == SQLITE_DONE ? CAIRN_OK
				  : store_sql_error(db, src, "counting vectors");
}

static int n_schemas(const struct cairn_db *db)
{
	return db->has_global ? 2 : 1;
}

static const char *schema_name(int i)
{
	return i == 0 ? "main" : "global";
}

/* ------------------------------------------------------------- settings */

/* Each embed.* key with the variable that overrides it (CAIRN_EMBED_*, read
 * when the store opened: its char * in struct store_env). */
#define SET_ENV(field) offsetof(struct store_env, field)
static const struct {
	const char *key; /* the main store's meta key */
	size_t env;      /* its override in struct store_env */
} setting_names[] = {
	{ "embed.provider", SET_ENV(embed_provider) },
	{ "embed.model", SET_ENV(embed_model) },
	{ "embed.url", SET_ENV(embed_url) },
	{ "embed.api_key_env", SET_ENV(embed_api_key_env) },
	{ "embed.query_instruction", SET_ENV(embed_query_instruction) },
	{ "embed.passage_instruction", SET_ENV(embed_passage_instruction) },
	{ "embed.pooling", SET_ENV(embed_pooling) },
	{ "embed.threads", SET_ENV(embed_threads) },
};
#undef SET_ENV
#define SET_TIMEOUT_KEY "embed.timeout_ms" /* CAIRN_EMBED_TIMEOUT_MS overrides */

static const char *env_value(const struct store_env *env, size_t off)
{
	return *(char *const *)((const char *)env + off);
}

static int pooling_code(const char *s)
{
	static const char *const names[] = { "none", "mean", "cls", "last",
					     "rank" };
	int i = index_of(names, ARRAY_SIZE(names), s);

	return i;
}

int vector_settings_load(struct cairn_db *db, struct vector_settings *s)
{
	char buf[1024];
	const char *vals[ARRAY_SIZE(setting_names)];
	struct store_env own;
	const struct store_env *ev;
	size_t i;
	int rc;

	memset(&own, 0, sizeof(own));
	ev = db ? &db->env : &own;
	memset(s, 0, sizeof(*s));
	s->cfg.pooling = -1;
	/* no store: the environment as it is now (cairn model embed outside
	 * a workspace) */
	if (!db && (rc = store_env_read(&own)) != CAIRN_OK)
		return rc;
	for (i = 0; i < ARRAY_SIZE(setting_names); i++) {
		const char *env = env_value(ev, setting_names[i].env);
		int found = 0;

		vals[i] = NULL;
		if (env) {
			found = 1;
			snprintf(buf, sizeof(buf), "%s", env);
		} else if (db) {
			rc = store_meta_get(db, "main", setting_names[i].key, buf,
				       sizeof(buf), &found);
			if (rc)
				goto fail;
		}
		if (!found)
			continue;
		s->owned[i] = util_strdup(buf);
		if (!s->owned[i]) {
			rc = CAIRN_NOMEM;
			goto fail;
		}
		vals[i] = s->owned[i];
	}
	s->cfg.provider = vals[0];
	s->cfg.model = vals[1];
	s->cfg.url = vals[2];
	s->cfg.api_key_env = vals[3];
	s->cfg.query_instruction = vals[4];
	s->cfg.passage_instruction = vals[5];
	if (vals[6] && *vals[6]) {
		s->cfg.pooling = pooling_code(vals[6]);
		if (s->cfg.pooling < 0) {
			rc = store_error(db, CAIRN_INVALID,
					 "unknown pooling '%s' (mean, cls, "
					 "last, none)",
					 vals[6]);
			goto fail;
		}
	}
	if (vals[7] && *vals[7])
		s->cfg.threads = atoi(vals[7]);
	{
		const char *env = ev->embed_timeout_ms;

		buf[0] = '\0';
		if (!env && db) {
			rc = meta_get(db, "main", SET_TIMEOUT_KEY, buf,
				      sizeof(buf));
			if (rc)
				goto fail;
		}
		s->cfg.timeout_ms = atoi(env ? env : buf);
		if (s->cfg.timeout_ms < 0)
			s->cfg.timeout_ms = 0;
	}
	if (!db)
		store_env_release(&own);
	return CAIRN_OK;
fail:
	if (!db)
		store_env_release(&own);
	vector_settings_release(s);
	if (rc == CAIRN_NOMEM)
		store_error(db, rc, "out of memory");
	return rc;
}

void vector_settings_release(struct vector_settings *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s->owned); i++)
		cairn_free(s->owned[i]);
	memset(s, 0, sizeof(*s));
}

int vector_settings_enabled(const struct vector_settings *s)
{
	const char *p = s->cfg.provider;

	return p && *p && strcmp(p, "none") != 0;
}

int vector_settings_save(struct cairn_db *db, const struct embed_config *cfg)
{
	static const char *const pool_names[] = { "none", "mean", "cls",
						  "last", "rank" };
	const char *vals[ARRAY_SIZE(setting_names)];
	char threads[32], timeout[32];
	size_t i;
	int rc;

	vals[0] = cfg->provider;
	vals[1] = cfg->model;
	vals[2] = cfg->url;
	vals[3] = cfg->api_key_env;
	vals[4] = cfg->query_instruction;
	vals[5] = cfg->passage_instruction;
	vals[6] = cfg->pooling >= 0 && cfg->pooling < 5
			  ? pool_names[cfg->pooling]
			  : NULL;
	snprintf(threads, sizeof(threads), "%d", cfg->threads);
	vals[7] = cfg->threads > 0 ? threads : NULL;
	snprintf(timeout, sizeof(timeout), "%d", cfg->timeout_ms);
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	for (i = 0; rc == CAIRN_OK && i < ARRAY_SIZE(setting_names); i++)
		rc = meta_set(db, "main", setting_names[i].key, vals[i]);
	if (rc == CAIRN_OK)
		rc = meta_set(db, "main", SET_TIMEOUT_KEY,
			      cfg->timeout_ms > 0 ? timeout : NULL);
	rc = store_tx_end(db, rc);
	if (rc == CAIRN_OK && db->vec) {
		/* the cached embedder was made from the old settings */
		struct vec_cache *c = db->vec;

		embed_close(c->emb);
		c->emb = NULL;
		c->emb_tried = 0;
	}
	return rc;
}

/*
 * The width of the main store's vectors when they were made by the http
 * provider with this model id (0 otherwise): the http provider then needs
 * no dimension probe at open (a probe doubled each hook's cost).
 */
static int stored_http_dim(struct cairn_db *db, const char *model)
{
	char buf[VEC_IDENTITY_MAX];
	struct json *j = NULL;
	const char *p, *m;
	double dim = 0;

	if (!model || vector_get_identity(db, "main", buf, sizeof(buf)) ||
	    !buf[0] || json_parse(buf, strlen(buf), &j, NULL, 0) != CAIRN_OK)
		return 0;
	p = json_get_str(j, "provider");
	m = json_get_str(j, "model");
	if (!p || !m || strcmp(p, "http") != 0 || strcmp(m, model) != 0 ||
	    !json_get_num(j, "dim", &dim) || dim < 1 || dim > EMBED_MAX_DIM)
		dim = 0;
	json_free(j);
	return (int)dim;
}

int vector_embedder(struct cairn_db *db, struct embedder **out)
{
	struct vec_cache *c = cache_of(db);
	struct vector_settings s;
	int rc;

	*out = NULL;
	if (!c)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	if (c->emb_tried) {
		*out = c->emb;
		if (c->emb_rc)
			store_error(db, c->emb_rc, "%s", c->emb_err);
		return c->emb_rc;
	}
	rc = vector_settings_load(db, &s);
	if (rc)
		return rc;
	c->emb_tried = 1;
	if (vector_settings_enabled(&s) && strcmp(s.cfg.provider, "http") == 0)
		s.cfg.dim = stored_http_dim(db, s.cfg.model);
	if (vector_settings_enabled(&s)) {
		c->emb_rc = embed_open(&s.cfg, &c->emb, c->emb_err,
				       sizeof(c->emb_err));
		if (c->emb_rc)
			store_error(db, c->emb_rc, "%s", c->emb_err);
	}
	vector_settings_release(&s);
	*out = c->emb;
	return c->emb_rc;
}

/* ------------------------------------------------------------- identity */

int vector_get_identity(struct cairn_db *db, const char *schema, char *buf,
			size_t size)
{
	return meta_get(db, schema, "vector.identity", buf, size);
}

int vector_set_identity(struct cairn_db *db, const char *schema,
			const struct embed_identity *id, long long *dropped)
{
	char want[VEC_IDENTITY_MAX], have[VEC_IDENTITY_MAX], sql[96];
	long long n = 0;
	int rc;

	if (dropped)
		*dropped = 0;
	if (strcmp(schema, "main") != 0 && strcmp(schema, "global") != 0)
		return store_error(db, CAIRN_INVALID, "unknown schema '%s'",
				   schema);
	if (embed_identity_string(id, want, sizeof(want)))
		return store_error(db, CAIRN_TOOBIG, "identity is too long");
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = vector_get_identity(db, schema, have, sizeof(have));
	if (rc == CAIRN_OK && strcmp(have, want) != 0) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.vectors",
			 schema);
		rc = count_sql(db, sql, &n);
		if (rc == CAIRN_OK) {
			snprintf(sql, sizeof(sql), "DELETE FROM %s.vectors",
				 schema);
			rc = exec_sql(db, sql, "dropping old vectors");
		}
		if (rc == CAIRN_OK)
			rc = meta_set(db, schema, "vector.identity", want);
		if (rc == CAIRN_OK)
			rc = bump_generation(db, schema);
	}
	rc = store_tx_end(db, rc);
	if (rc == CAIRN_OK && dropped)
		*dropped = n;
	return rc;
}

/* ---------------------------------------------------------------- write */

static int put_blob(struct cairn_db *db, const char *schema, long long rid,
		    const float *v, int dim, const char *title,
		    const char *body, int *written)
{
	unsigned short *h = util_calloc((size_t)dim, sizeof(*h));
	unsigned char *blob = util_calloc((size_t)dim, 2);
	char sql[256];
	sqlite3_stmt *st = NULL;
	double ss = 0;
	int i, src, rc = CAIRN_OK;

	*written = 0;
	if (!h || !blob) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < dim; i++)
		ss += (double)v[i] * v[i];
	ss = ss > 0 ? 1.0 / sqrt(ss) : 0;
	for (i = 0; i < dim; i++) {
		h[i] = quant_f32_to_f16((float)(v[i] * ss));
		blob[2 * i] = (unsigned char)h[i];
		blob[2 * i + 1] = (unsigned char)(h[i] >> 8);
	}
	/* only if the text is still the one embedded */
	if (title)
		snprintf(sql, sizeof(sql),
			 "INSERT OR REPLACE INTO %s.vectors (rid, v) SELECT "
			 "?1, ?2 FROM %s.records WHERE rid = ?1 AND title = "
			 "?3 AND body = ?4",
			 schema, schema);
	else
		snprintf(sql, sizeof(sql),
			 "INSERT OR REPLACE INTO %s.vectors (rid, v) "
			 "VALUES (?1, ?2)",
			 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, rid);
		sqlite3_bind_blob(st, 2, blob, dim * 2, SQLITE_STATIC);
		if (title) {
			sqlite3_bind_text(st, 3, title, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 4, body, -1, SQLITE_STATIC);
		}
		src = sqlite3_step(st);
	}
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "writing a vector");
	else
		*written = sqlite3_changes(db->sql) > 0;
out:
	sqlite3_finalize(st);
	cairn_free(h);
	cairn_free(blob);
	return rc;
}

static int identity_dim(const char *identity)
{
	const char *p = strstr(identity, "\"dim\":");

	return p ? atoi(p + 6) : 0;
}

int vector_put(struct cairn_db *db, const char *id, const float *v, int dim)
{
	char have[VEC_IDENTITY_MAX], sql[96];
	sqlite3_stmt *st = NULL;
	long long rid = -1;
	int i, src, rc = CAIRN_OK, written = 0;
	const char *schema = NULL;

	for (i = 0; i < n_schemas(db) && rid < 0; i++) {
		snprintf(sql, sizeof(sql),
			 "SELECT rid FROM %s.records WHERE id = ?1",
			 schema_name(i));
		src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
			src = sqlite3_step(st);
			if (src == SQLITE_ROW) {
				rid = sqlite3_column_int64(st, 0);
				schema = schema_name(i);
				src = SQLITE_DONE;
			}
		}
		sqlite3_finalize(st);
		st = NULL;
		if (src != SQLITE_DONE)
			return store_sql_error(db, src, "finding the record");
	}
	if (rid < 0)
		return store_error(db, CAIRN_NOTFOUND, "no record '%s'", id);
	rc = vector_get_identity(db, schema, have, sizeof(have));
	if (rc)
		return rc;
	if (!have[0] || identity_dim(have) != dim)
		return store_error(db, CAIRN_MISMATCH,
				   "the %s store's vector identity is %s, not "
				   "%d-wide: set it first",
				   schema, have[0] ? "another" : "unset", dim);
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = put_blob(db, schema, rid, v, dim, NULL, NULL, &written);
	if (rc == CAIRN_OK)
		rc = bump_generation(db, schema);
	return store_tx_end(db, rc);
}

/* ----------------------------------------------------------------- load */

/*
 * The sidecar: what load_schema reads out of SQLite, written next to the
 * store (cairn.db-vectors, global.db-vectors: the store's .gitignore
 * already covers cairn.db-*) after each load and memory-mapped by the next
 * process instead of reading every vector and record row again (a hook
 * is a new process per prompt; at 10k records the SQLite read is most of
 * a dense search). It is used only when its header matches the schema
 * as it is now: the identity string, 'vector.generation' and
 * 'vector.labels' (bumped in the transactions that change any vector,
 * kind or status), the largest vector rid and the database file's device
 * and inode; anything else, a short or malformed file included, means
 * reading SQLite and writing a fresh sidecar (temporary file, rename).
 * The header is read before the rows, so a sidecar's rows are never
 * older than its header says. Host byte order (little-endian only: no
 * sidecar elsewhere); every kind, status and id offset is checked on map.
 */
#define VEC_SIDE_MAGIC "cairnVS1"

struct side_header {
	char magic[8];
	uint32_t dim, identlen;
	uint64_t n, idbytes;
	int64_t generation, labels, max_rid;
	uint64_t dev, ino;
};

/* Byte offsets of each section (64-byte aligned) and the file's size. */
struct side_layout {
	size_t ident, mat, rid, idoff, kind, status, ids, total;
};

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

static int side_layout(size_t n, size_t dim, size_t identlen,
		       size_t idbytes, struct side_layout *l)
{
	if (n > ((size_t)1 << 32) || dim > VECTOR_MAX_DIM ||
	    identlen >= VEC_IDENTITY_MAX || idbytes > ((size_t)1 << 32))
		return -1;
	l->ident = sizeof(struct side_header);
	l->mat = align64(l->ident + identlen);
	l->rid = align64(l->mat + n * dim * 2);
	l->idoff = align64(l->rid + n * sizeof(long long));
	l->kind = align64(l->idoff + n * sizeof(uint32_t));
	l->status = align64(l->kind + n);
	l->ids = align64(l->status + n);
	l->total = l->ids + idbytes;
	return 0;
}

/* Paths of schema si's database file and its sidecar; 0 when unknown. */
static int side_paths(struct cairn_db *db, int si, char *dbf, char *side,
		      size_t size)
{
	return store_db_file(db, si, dbf, size) &&
	       snprintf(side, size, "%s-vectors", dbf) < (int)size;
}

static int max_rid(struct cairn_db *db, const char *schema, long long *out)
{
	char sql[96];

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(rid), -1) FROM %s.vectors",
		 schema);
	return count_sql(db, sql, out);
}

/* Fill the header for schema s as loaded now; 0 when it cannot be. */
static int side_expect(struct cairn_db *db, int si, const struct vec_schema *s,
		       long long maxr, struct side_header *h)
{
	char dbf[4200], side[4200];
	struct stat st;

	if (!side_paths(db, si, dbf, side, sizeof(dbf)) || stat(dbf, &st) != 0)
		return 0;
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, VEC_SIDE_MAGIC, 8);
	h->dim = (uint32_t)s->dim;
	h->identlen = (uint32_t)strlen(s->identity);
	h->generation = s->generation;
	h->labels = s->labels;
	h->max_rid = maxr;
	h->dev = (uint64_t)st.st_dev;
	h->ino = (uint64_t)st.st_ino;
	return 1;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VEC_SIDECAR 1
#else
#define VEC_SIDECAR 0
#endif

/* Map schema si's sidecar into s when it matches want; 1 when it did. */
static int side_map(struct cairn_db *db, int si, struct vec_schema *s,
		    const struct side_header *want)
{
	char dbf[4200], side[4200];
	struct side_header h;
	struct side_layout l;
	struct stat st;
	unsigned char *p;
	size_t i;
	int fd;

	if (!VEC_SIDECAR || !side_paths(db, si, dbf, side, sizeof(dbf)))
		return 0;
	fd = open(side, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, want->magic, 8) != 0 || h.dim != want->dim ||
	    h.identlen != want->identlen ||
	    h.generation != want->generation || h.labels != want->labels ||
	    h.max_rid != want->max_rid || h.dev != want->dev ||
	    h.ino != want->ino || h.n == 0 || h.idbytes == 0 ||
	    side_layout((size_t)h.n, h.dim, h.identlen, (size_t)h.idbytes,
			&l) != 0 ||
	    (size_t)st.st_size != l.total) {
		close(fd);
		return 0;
	}
	/* private and writable: a label refresh rewrites kind and status
	 * in this process only */
	p = mmap(NULL, l.total, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	s->map = p;
	s->map_len = l.total;
	s->n = (size_t)h.n;
	s->mat = (unsigned short *)(void *)(p + l.mat);
	s->rid = (long long *)(void *)(p + l.rid);
	s->idoff = (uint32_t *)(void *)(p + l.idoff);
	s->kind = p + l.kind;
	s->status = p + l.status;
	s->ids = (char *)p + l.ids;
	s->idbytes = (size_t)h.idbytes;
	if (memcmp(p + l.ident, s->identity, h.identlen) != 0 ||
	    s->ids[s->idbytes - 1] != '\0')
		goto bad;
	for (i = 0; i < s->n; i++)
		if (s->kind[i] >= ARRAY_SIZE(kinds) ||
		    s->status[i] >= ARRAY_SIZE(statuses) ||
		    s->idoff[i] >= s->idbytes)
			goto bad;
	return 1;
bad:
	munmap(p, l.total);
	s->map = NULL;
	s->map_len = 0;
	s->n = 0;
	s->mat = NULL;
	s->rid = NULL;
	s->idoff = NULL;
	s->kind = s->status = NULL;
	s->ids = NULL;
	s->idbytes = 0;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *b = buf;

	while (len > 0) {
		ssize_t w = pwrite(fd, b, len, off);

		if (w <= 0)
			return -1;
		b += w;
		len -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Write s (just read from SQLite) as schema si's sidecar; failures only
 * mean that the next process reads SQLite again. */
static void side_write(struct cairn_db *db, int si, const struct vec_schema *s,
		       const struct side_header *want)
{
	char dbf[4200], side[4200], tmp[4300];
	struct side_header h = *want;
	struct side_layout l;
	int fd, ok;

	if (!VEC_SIDECAR || s->n == 0 || !side_paths(db, si, dbf, side,
						      sizeof(dbf)))
		return;
	h.n = s->n;
	h.idbytes = s->idbytes;
	if (side_layout(s->n, (size_t)s->dim, h.identlen, s->idbytes, &l))
		return;
	util_sweep_tmp(si == 0 ? db->dir : db->global_dir, side);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", side, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return;
	ok = ftruncate(fd, (off_t)l.total) == 0 &&
	     write_all(fd, &h, sizeof(h), 0) == 0 &&
	     write_all(fd, s->identity, h.identlen, (off_t)l.ident) == 0 &&
	     write_all(fd, s->mat, s->n * (size_t)s->dim * 2,
		       (off_t)l.mat) == 0 &&
	     write_all(fd, s->rid, s->n * sizeof(long long),
		       (off_t)l.rid) == 0 &&
	     write_all(fd, s->idoff, s->n * sizeof(uint32_t),
		       (off_t)l.idoff) == 0 &&
	     write_all(fd, s->kind, s->n, (off_t)l.kind) == 0 &&
	     write_all(fd, s->status, s->n, (off_t)l.status) == 0 &&
	     write_all(fd, s->ids, s->idbytes, (off_t)l.ids) == 0;
	if (close(fd) != 0)
		ok = 0;
	if (!ok || rename(tmp, side) != 0)
		unlink(tmp);
}

/* Grow the per-row arrays of s to hold cap rows. */
static int schema_grow(struct vec_schema *s, size_t cap)
{
	unsigned short *mat = util_realloc(s->mat, cap * (size_t)s->dim * 2);
	long long *rid;
	uint32_t *idoff;
	unsigned char *kind, *status;

	if (!mat)
		return -1;
	s->mat = mat;
	if (!(rid = util_realloc(s->rid, cap * sizeof(*rid))))
		return -1;
	s->rid = rid;
	if (!(idoff = util_realloc(s->idoff, cap * sizeof(*idoff))))
		return -1;
	s->idoff = idoff;
	if (!(kind = util_realloc(s->kind, cap)))
		return -1;
	s->kind = kind;
	if (!(status = util_realloc(s->status, cap)))
		return -1;
	s->status = status;
	return 0;
}

static int load_schema(struct cairn_db *db, int si, struct vec_schema *s)
{
	const char *schema = schema_name(si);
	char sql[256], gen[32];
	sqlite3_stmt *st = NULL;
	struct sbuf ids = SBUF_INIT;
	struct side_header want;
	long long maxr = -1;
	size_t cap = 0, i = 0;
	int src, rc, side_ok;

	schema_clear(s);
	rc = vector_get_identity(db, schema, s->identity, sizeof(s->identity));
	if (rc == CAIRN_OK)
		rc = meta_get(db, schema, "vector.generation", gen, sizeof(gen));
	if (rc)
		return rc;
	s->generation = atoll(gen);
	rc = meta_get(db, schema, "vector.labels", gen, sizeof(gen));
	if (rc == CAIRN_OK)
		rc = max_rid(db, schema, &maxr);
	if (rc)
		return rc;
	s->labels = atoll(gen);
	s->dim = identity_dim(s->identity);
	if (maxr < 0 || s->dim <= 0) {
		s->loaded = 1;
		return CAIRN_OK;
	}
	if (s->dim > VECTOR_MAX_DIM)
		return store_error(db, CAIRN_CORRUPT,
				   "the %s store's vectors are %d-wide "
				   "(limit %d)",
				   schema, s->dim, VECTOR_MAX_DIM);
	side_ok = side_expect(db, si, s, maxr, &want);
	if (side_ok && side_map(db, si, s, &want))
		goto done;
	snprintf(sql, sizeof(sql),
		 "SELECT v.rid, r.id, r.kind, r.status, v.v FROM %s.vectors "
		 "v JOIN %s.records r ON r.rid = v.rid ORDER BY v.rid",
		 schema, schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	while ((src == SQLITE_OK || src == SQLITE_ROW) &&
	       (src = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 1);
		int idlen = sqlite3_column_bytes(st, 1);
		const unsigned char *b = sqlite3_column_blob(st, 4);
		int bytes = sqlite3_column_bytes(st, 4), k, t, j;
		unsigned short *row;

		k = index_of(kinds, ARRAY_SIZE(kinds),
			     (const char *)sqlite3_column_text(st, 2));
		t = index_of(statuses, ARRAY_SIZE(statuses),
			     (const char *)sqlite3_column_text(st, 3));
		if (id && (idlen >= VECTOR_ID_MAX || strlen(id) != (size_t)idlen))
			continue; /* an id this long stays lexical-only */
		if (bytes != s->dim * 2 || !b || !id || k < 0 || t < 0) {
			long long bad = sqlite3_column_int64(st, 0);
			int dim = s->dim;

			sqlite3_finalize(st); /* after the last column read */
			sbuf_release(&ids);
			schema_clear(s);
			return store_error(db, CAIRN_CORRUPT,
					   "the %s store's vector of record "
					   "%lld is damaged (%d bytes for %d "
					   "dimensions): run 'cairn reindex'",
					   schema, bad, bytes, dim);
		}
		if (i == cap) {
			cap = cap ? 2 * cap : 1024;
			if (schema_grow(s, cap) != 0) {
				src = SQLITE_NOMEM;
				break;
			}
		}
		row = s->mat + i * (size_t)s->dim;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(row, b, (size_t)bytes); /* stored little-endian */
		(void)j;
#else
		for (j = 0; j < s->dim; j++)
			row[j] = (unsigned short)(b[2 * j] | b[2 * j + 1] << 8);
#endif
		s->rid[i] = sqlite3_column_int64(st, 0);
		s->idoff[i] = (uint32_t)ids.len;
		sbuf_add(&ids, id, (size_t)idlen + 1);
		if (ids.err || ids.len > ((size_t)1 << 32)) {
			src = SQLITE_NOMEM;
			break;
		}
		s->kind[i] = (unsigned char)k;
		s->status[i] = (unsigned char)t;
		i++;
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE) {
		sbuf_release(&ids);
		schema_clear(s);
		if (src == SQLITE_NOMEM)
			return store_error(db, CAIRN_NOMEM,
					   "out of memory loading vectors");
		return store_sql_error(db, src, "loading vectors");
	}
	s->n = i;
	s->idbytes = ids.len;
	s->ids = sbuf_detach(&ids, NULL);
	if (s->n > 0 && !s->ids) {
		schema_clear(s);
		return store_error(db, CAIRN_NOMEM,
				   "out of memory loading vectors");
	}
	if (side_ok)
		side_write(db, si, s, &want);
done:
	s->keep = util_calloc(s->n ? s->n : 1, 1);
	if (!s->keep) {
		schema_clear(s);
		return store_error(db, CAIRN_NOMEM,
				   "out of memory loading vectors");
	}
	s->vm.n = s->n;
	s->vm.dim = s->dim;
	s->vm.h = s->mat;
	/* the int8 copy is built on the second search: a one-shot process
	 * (the CLI, the hook) pays one f16 scan instead of the build */
	s->loaded = 1;
	return CAIRN_OK;
}

/*
 * Keep schema si's cache in step with the store: the schema's triggers
 * bump meta 'vector.generation' whenever vectors are written or deleted
 * (text changed, record deleted, reindex) and 'vector.labels' when a
 * record with a vector changes status or kind. Two small reads per search;
 * last_seen and receipts (written by every recall) move neither.
 */
static int sync_schema(struct cairn_db *db, int si, struct vec_schema *s)
{
	const char *schema = schema_name(si);
	char sql[200], gen[32], lab[32];
	sqlite3_stmt *st = NULL;
	size_t i = 0;
	int src, rc;

	if (!s->loaded)
		return load_schema(db, si, s);
	rc = meta_get(db, schema, "vector.generation", gen, sizeof(gen));
	if (rc == CAIRN_OK)
		rc = meta_get(db, schema, "vector.labels", lab, sizeof(lab));
	if (rc)
		return rc;
	if (atoll(gen) != s->generation)
		return load_schema(db, si, s);
	if (atoll(lab) == s->labels)
		return CAIRN_OK;
	snprintf(sql, sizeof(sql),
		 "SELECT v.rid, r.kind, r.status FROM %s.vectors v JOIN "
		 "%s.records r ON r.rid = v.rid ORDER BY v.rid",
		 schema, schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	while ((src == SQLITE_OK || src == SQLITE_ROW) &&
	       (src = sqlite3_step(st)) == SQLITE_ROW) {
		int k, t;

		if (i >= s->n || sqlite3_column_int64(st, 0) != s->rid[i])
			break;
		k = index_of(kinds, ARRAY_SIZE(kinds),
			     (const char *)sqlite3_column_text(st, 1));
		t = index_of(statuses, ARRAY_SIZE(statuses),
			     (const char *)sqlite3_column_text(st, 2));
		s->kind[i] = (unsigned char)(k < 0 ? 0 : k);
		s->status[i] = (unsigned char)(t < 0 ? 0 : t);
		i++;
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE || i != s->n)
		return load_schema(db, si, s); /* rows moved: reload all */
	s->labels = atoll(lab);
	return CAIRN_OK;
}

/* --------------------------------------------------------------- search */

static int parse_filter(struct cairn_db *db, const char *list,
			const char *const *tab, size_t n, unsigned *mask,
			const char *what)
{
	const char *p = list;

	*mask = 0;
	if (p && strcmp(p, "all") == 0) {
		*mask = (1u << n) - 1;
		return CAIRN_OK;
	}
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p), i;
		int found = 0;

		while (len && *p == ' ') {
			p++;
			len--;
		}
		while (len && p[len - 1] == ' ')
			len--;
		for (i = 0; len && i < n; i++)
			if (strlen(tab[i]) == len &&
			    memcmp(tab[i], p, len) == 0) {
				*mask |= 1u << i;
				found = 1;
			}
		if (len && !found)
			return store_error(db, CAIRN_INVALID,
					   "unknown %s '%.*s'", what,
					   (int)len, p);
		p = e ? e + 1 : NULL;
	}
	return CAIRN_OK;
}

int vector_search(struct cairn_db *db, const struct embed_identity *id,
		  const float *q, const struct vector_filter *f, size_t k,
		  struct vector_hit *hits, size_t *n)
{
	struct vec_cache *c = cache_of(db);
	char want[VEC_IDENTITY_MAX];
	unsigned kmask = 0, smask = 0;
	float *scores = NULL;
	unsigned char *keep = NULL;
	size_t *idx = NULL, got = 0, i;
	int si, rc;

	*n = 0;
	if (!c)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	if (k > VECTOR_MAX_K)
		k = VECTOR_MAX_K;
	if (k == 0)
		return CAIRN_OK;
	if (embed_identity_string(id, want, sizeof(want)))
		return store_error(db, CAIRN_TOOBIG, "identity is too long");
	rc = parse_filter(db, f ? f->kinds : NULL, kinds, ARRAY_SIZE(kinds),
			  &kmask, "kind");
	if (rc == CAIRN_OK)
		rc = parse_filter(db,
				  f && f->statuses ? f->statuses
						   : "accepted,unverified",
				  statuses, ARRAY_SIZE(statuses), &smask,
				  "status");
	if (rc)
		return rc;
	if (kmask == 0)
		kmask = (1u << ARRAY_SIZE(kinds)) - 1;
	idx = util_calloc(k, sizeof(*idx));
	if (!idx)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	for (si = 0; si < n_schemas(db); si++) {
		struct vec_schema *s = &c->s[si];
		size_t m;

		rc = sync_schema(db, si, s);
		if (rc)
			goto out;
		if (s->n == 0)
			continue;
		if (strcmp(s->identity, want) != 0) {
			rc = store_error(db, CAIRN_MISMATCH,
					 "the %s store's vectors were made by "
					 "another model or settings (%s); this "
					 "one is %s: run 'cairn reindex' to "
					 "rebuild them",
					 si == 0 ? "workspace" : "global",
					 s->identity, want);
			goto out;
		}
		keep = s->keep;
		if (!scores)
			scores = cairn_malloc(k * sizeof(*scores));
		if (!scores) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < s->n; i++)
			keep[i] = (kmask >> s->kind[i] & 1) &&
				  (smask >> s->status[i] & 1);
		if (!s->vm.q8 && s->searches++ >= 1 &&
		    vector_matrix_build(&s->vm) != CAIRN_OK) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		m = vector_matrix_topk(&s->vm, q, keep, k, idx, scores);
		if (m == (size_t)-1) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		/* merge into hits (sorted, best first) */
		for (i = 0; i < m; i++) {
			float cs = scores[i];
			size_t pos = got;

			while (pos > 0 && hits[pos - 1].cos < cs)
				pos--;
			if (pos >= k)
				break;
			if (got < k)
				got++;
			memmove(hits + pos + 1, hits + pos,
				(got - 1 - pos) * sizeof(*hits));
			snprintf(hits[pos].id, sizeof(hits[pos].id), "%s",
				 s->ids + s->idoff[idx[i]]);
			hits[pos].schema = schema_name(si);
			hits[pos].rid = s->rid[idx[i]];
			hits[pos].cos = cs;
		}
	}
	*n = got;
out:
	cairn_free(scores);
	cairn_free(idx);
	return rc;
}

int vector_query(struct cairn_db *db, const char *query,
		 const struct vector_filter *f, size_t k,
		 struct vector_hit *hits, size_t *n)
{
	struct embedder *e = NULL;
	const struct embed_identity *id;
	float *q = NULL;
	char err[512];
	int rc;

	*n = 0;
	rc = vector_embedder(db, &e);
	if (rc || !e)
		return rc;
	id = embed_identity(e);
	q = util_calloc((size_t)id->dim, sizeof(*q));
	if (!q)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	rc = embed_texts(e, 1, &query, 1, q, err, sizeof(err));
	if (rc)
		store_error(db, rc, "embedding the query: %s", err);
	else
		rc = vector_search(db, id, q, f, k, hits, n);
	cairn_free(q);
	return rc;
}

/* ---------------------------------------------------------------- stats */

int vector_drop_all(struct cairn_db *db, long long *dropped)
{
	struct vector_stats st;
	int si, rc;

	*dropped = 0;
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = vector_stats(db, &st);
	if (rc == CAIRN_OK)
		*dropped = st.with_vector;
	for (si = 0; rc == CAIRN_OK && si < (db->has_global ? 2 : 1); si++) {
		char sql[256];
		const char *schema = schema_name(si);
		int src;

		snprintf(sql, sizeof(sql),
			 "DELETE FROM %s.vectors; DELETE FROM %s.meta WHERE k "
			 "= 'vector.identity'; UPDATE %s.meta SET v = CAST(v "
			 "AS INTEGER) + 1 WHERE k = 'vector.generation'",
			 schema, schema, schema);
		src = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);
		if (src != SQLITE_OK)
			rc = store_sql_error(db, src, "dropping vectors");
	}
	return store_tx_end(db, rc);
}

int vector_stats(struct cairn_db *db, struct vector_stats *st)
{
	char sql[200];
	int si, rc = CAIRN_OK;

	memset(st, 0, sizeof(*st));
	for (si = 0; rc == CAIRN_OK && si < n_schemas(db); si++) {
		long long a = 0, b = 0;

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.records",
			 schema_name(si));
		rc = count_sql(db, sql, &a);
		if (rc == CAIRN_OK) {
			snprintf(sql, sizeof(sql),
				 "SELECT count(*) FROM %s.vectors",
				 schema_name(si));
			rc = count_sql(db, sql, &b);
		}
		st->records += a;
		st->with_vector += b;
	}
	if (rc == CAIRN_OK)
		rc = vector_get_identity(db, "main", st->identity,
					 sizeof(st->identity));
	st->dim = identity_dim(st->identity);
	return rc;
}

/* -------------------------------------------------------------- reindex */

/* title + "\n" + body, cut at VEC_TEXT_MAX bytes on a UTF-8 boundary */
static char *record_text(const char *title, const char *body)
{
	struct sbuf sb = SBUF_INIT;
	size_t len;

	if (title && *title) {
		sbuf_adds(&sb, title);
		sbuf_addc(&sb, '\n');
	}
	sbuf_adds(&sb, body ? body : "");
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	len = sb.len;
	if (len > VEC_TEXT_MAX) {
		len = VEC_TEXT_MAX;
		while (len > 0 && ((unsigned char)sb.buf[len] & 0xC0) == 0x80)
			len--;
		sb.buf[len] = '\0';
		sb.len = len;
	}
	return sbuf_detach(&sb, NULL);
}

struct batch {
	long long *rid;
	char **title, **body, **text;
	size_t n;
};

static void batch_clear(struct batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		cairn_free(b->title[i]);
		cairn_free(b->body[i]);
		cairn_free(b->text[i]);
	}
	b->n = 0;
}

static int reindex_schema(struct cairn_db *db, struct embedder *e, int si,
			  size_t batch, long long *done, long long total,
			  void (*progress)(void *, long long, long long),
			  void *ctx)
{
	const char *schema = schema_name(si);
	const struct embed_identity *id = embed_identity(e);
	struct batch b;
	char sql[300], err[512];
	float *out = NULL;
	long long last = -1;
	int rc = CAIRN_OK;

	memset(&b, 0, sizeof(b));
	b.rid = util_calloc(batch, sizeof(*b.rid));
	b.title = util_calloc(batch, sizeof(char *));
	b.body = util_calloc(batch, sizeof(char *));
	b.text = util_calloc(batch, sizeof(char *));
	out = util_calloc(batch * (size_t)id->dim, sizeof(*out));
	if (!b.rid || !b.title || !b.body || !b.text || !out) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	snprintf(sql, sizeof(sql),
		 "SELECT r.rid, r.title, r.body FROM %s.records r WHERE "
		 "r.rid > ?1 AND NOT EXISTS (SELECT 1 FROM %s.vectors v "
		 "WHERE v.rid = r.rid) ORDER BY r.rid LIMIT ?2",
		 schema, schema);
	for (;;) {
		sqlite3_stmt *st = NULL;
		size_t i;
		int src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

		batch_clear(&b);
		if (src == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, last);
			sqlite3_bind_int64(st, 2, (sqlite3_int64)batch);
		}
		while ((src == SQLITE_OK || src == SQLITE_ROW) &&
		       (src = sqlite3_step(st)) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 1);
			const char *bd = (const char *)sqlite3_column_text(st, 2);

			b.rid[b.n] = sqlite3_column_int64(st, 0);
			b.title[b.n] = util_strdup(t ? t : "");
			b.body[b.n] = util_strdup(bd ? bd : "");
			b.text[b.n] = record_text(t, bd);
			b.n++;
			if (!b.title[b.n - 1] || !b.body[b.n - 1] ||
			    !b.text[b.n - 1]) {
				src = SQLITE_NOMEM;
				break;
			}
		}
		sqlite3_finalize(st);
		if (src != SQLITE_DONE) {
			rc = store_sql_error(db, src, "reading records");
			goto out;
		}
		if (b.n == 0)
			break;
		last = b.rid[b.n - 1];
		rc = embed_texts(e, 0, (const char *const *)b.text, b.n, out,
				 err, sizeof(err));
		if (rc) {
			store_error(db, rc, "embedding records: %s", err);
			goto out;
		}
		rc = store_tx_begin(db);
		if (rc)
			goto out;
		for (i = 0; rc == CAIRN_OK && i < b.n; i++) {
			int written = 0;

			rc = put_blob(db, schema, b.rid[i],
				      out + i * (size_t)id->dim, id->dim,
				      b.title[i], b.body[i], &written);
			if (written)
				(*done)++;
		}
		if (rc == CAIRN_OK)
			rc = bump_generation(db, schema);
		rc = store_tx_end(db, rc);
		if (rc)
			goto out;
		if (progress)
			progress(ctx, *done, total);
	}
out:
	batch_clear(&b);
	cairn_free(b.rid);
	cairn_free(b.title);
	cairn_free(b.body);
	cairn_free(b.text);
	cairn_free(out);
	return rc;
}

/* Texts every probe embeds besides the records: English, Chinese, a query. */
static const char *const probe_fixed[] = {
	"The deploy pipeline runs the database migrations before the release.",
	"\xe8\xae\xa2\xe5\x8d\x95\xe6\x95\xb0\xe6\x8d\xae\xe5\xad\x98\xe5\x9c\xa8 PostgreSQL \xe9\x87\x8c",
};

int vector_probe(struct cairn_db *db, struct embedder *e)
{
	const struct embed_identity *id = embed_identity(e);
	const char *texts[VECTOR_PROBE_RECORDS + ARRAY_SIZE(probe_fixed)];
	char *owned[VECTOR_PROBE_RECORDS];
	char err[512];
	sqlite3_stmt *st = NULL;
	float *out = NULL;
	size_t n = 0, k = 0, i;
	int rc = CAIRN_OK, src, q;

	for (i = 0; i < ARRAY_SIZE(probe_fixed); i++)
		texts[n++] = probe_fixed[i];
	src = sqlite3_prepare_v2(db->sql,
				 "SELECT title, body FROM main.records "
				 "ORDER BY rid LIMIT ?1",
				 -1, &st, NULL);
	if (src == SQLITE_OK)
		sqlite3_bind_int(st, 1, VECTOR_PROBE_RECORDS);
	while (src == SQLITE_OK || src == SQLITE_ROW) {
		src = sqlite3_step(st);
		if (src != SQLITE_ROW)
			break;
		owned[k] = record_text((const char *)sqlite3_column_text(st, 0),
				       (const char *)sqlite3_column_text(st, 1));
		if (!owned[k]) {
			src = SQLITE_NOMEM;
			break;
		}
		texts[n++] = owned[k++];
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "reading records");
		goto out;
	}
	out = util_calloc(n * (size_t)id->dim, sizeof(*out));
	if (!out) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	/* as passages and as queries: a model may fail either way */
	for (q = 0; q < 2 && rc == CAIRN_OK; q++) {
		rc = embed_texts(e, q, texts, n, out, err, sizeof(err));
		if (rc)
			store_error(db, rc, "the model was tried on %zu texts "
					    "before anything changed, and "
					    "failed: %s",
				    n, err);
	}
out:
	while (k > 0)
		cairn_free(owned[--k]);
	cairn_free(out);
	return rc;
}

int vector_reindex(struct cairn_db *db, struct embedder *e, size_t batch,
		   void (*progress)(void *ctx, long long done,
				    long long total),
		   void *ctx, struct vector_reindex_result *res)
{
	char sql[200];
	double t0;
	int si, rc = CAIRN_OK;

	memset(res, 0, sizeof(*res));
	if (batch == 0)
		batch = VEC_DEFAULT_BATCH;
	if (batch > VEC_MAX_BATCH)
		batch = VEC_MAX_BATCH;
	if (embed_identity(e)->dim > VECTOR_MAX_DIM)
		return store_error(db, CAIRN_INVALID, "vectors over %d "
				   "dimensions are not supported",
				   VECTOR_MAX_DIM);
	for (si = 0; rc == CAIRN_OK && si < n_schemas(db); si++) {
		long long dropped = 0, lack = 0;

		rc = vector_set_identity(db, schema_name(si),
					 embed_identity(e), &dropped);
		res->dropped += dropped;
		if (rc == CAIRN_OK) {
			snprintf(sql, sizeof(sql),
				 "SELECT count(*) FROM %s.records r WHERE NOT "
				 "EXISTS (SELECT 1 FROM %s.vectors v WHERE "
				 "v.rid = r.rid)",
				 schema_name(si), schema_name(si));
			rc = count_sql(db, sql, &lack);
		}
		res->total += lack;
	}
	t0 = (util_now_ms() / 1e3);
	for (si = 0; rc == CAIRN_OK && si < n_schemas(db); si++)
		rc = reindex_schema(db, e, si, batch, &res->embedded,
				    res->total, progress, ctx);
	res->seconds = (util_now_ms() / 1e3) - t0;
	for (si = 0; si < n_schemas(db); si++) {
		long long have = 0;

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.vectors",
			 schema_name(si));
		if (count_sql(db, sql, &have) == CAIRN_OK)
			res->have += have;
	}
	return rc;
}
