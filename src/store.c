/*
 * store.c -- the record store: SQLite schema, migrations, and the record
 * operations of SPEC 3 (write, revise, status changes, get, drawer reads,
 * listing, history, statistics).
 *
 * Layer: directly on SQLite. Above it: recall, seed, capture, eval, cli.
 *
 * Invariants:
 *   - one workspace database (schema "main") plus, when it exists or is
 *     needed, the per-user global database attached as "global";
 *   - UNIQUE(scope, key): rewriting a key replaces the text and keeps the
 *     old revision in `revisions`;
 *   - statuses, kinds and origins are exactly SPEC 3's: unknown values are
 *     errors, never coerced (SQL CHECK constraints back the C checks);
 *   - agent, capture and reflection writes become candidates (approval gate);
 *   - every text passes the secret filter before any SQL runs, so a refused
 *     secret never reaches the database, its WAL, or a log.
 *
 * Must never: read another workspace's store; create files with modes wider
 * than 0600 (directories 0700); leave a half-written record (every write is
 * one transaction).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fts.h"
#include "secret.h"
#include "drift.h"
#include "store.h"

int store_sql_error(struct cairn_db *db, int sqlite_rc, const char *what)
{
	int prim = sqlite_rc & 0xff;
	int rc;

	switch (prim) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		rc = CAIRN_BUSY;
		break;
	case SQLITE_NOMEM:
		rc = CAIRN_NOMEM;
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		rc = CAIRN_CORRUPT;
		break;
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_FULL:
	case SQLITE_READONLY:
	case SQLITE_PERM:
		rc = CAIRN_IO;
		break;
	case SQLITE_CONSTRAINT:
		rc = CAIRN_INVALID;
		break;
	default:
		rc = CAIRN_ERROR;
	}
	if (rc == CAIRN_BUSY)
		return store_error(db, rc,
				   "%s: store is locked by another process "
				   "(waited %d ms)",
				   what, db ? db->busy_ms : 0);
	return store_error(db, rc, "%s: %s", what,
			   db && db->sql ? sqlite3_errmsg(db->sql)
					 : sqlite3_errstr(sqlite_rc));
}


int store_exec(struct cairn_db *db, const char *sql, const char *what)
{
	int src = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);

	if (src != SQLITE_OK)
		return store_sql_error(db, src, what);
	return CAIRN_OK;
}

/* ------------------------------------------------------------ transactions */

/*
 * sqlite3_update_hook: a row of a records table changed. Changes made
 * while db->rev_quiet is set (last_seen) do not count.
 */
void store_rev_hook(void *user, int op, const char *schema,
		     const char *table, sqlite3_int64 rowid)
{
	struct cairn_db *db = user;

	(void)op;
	(void)rowid;
	if (db->rev_quiet || strcmp(table, "records") != 0)
		return;
	db->rev_dirty |= strcmp(schema, "global") == 0 ? 2 : 1;
}

/* Forget the imported records whose links await the commit. */
void store_links_forget(struct cairn_db *db)
{
	size_t i;

	for (i = 0; i < db->nlinks; i++)
		cairn_free(db->links[i]);
	cairn_free(db->links);
	db->links = NULL;
	db->nlinks = 0;
	db->links_cap = 0;
}

/*
 * The statement that finds a dangling link of one record of schema: a row
 * (the column's name, the id it names) when its supersedes or its
 * superseded_by names a record of neither store, no row when both hold.
 */
static int links_prepare(struct cairn_db *db, const char *schema,
			 sqlite3_stmt **st)
{
	char sql[1024];
	int src;

	/* one side per column; the global store's part only when attached */
#define LINK_SIDE(col)                                                       \
	"SELECT '" col "', r." col " FROM %s.records r WHERE r.id = ?1 AND "  \
	"r." col " IS NOT NULL AND NOT (EXISTS (SELECT 1 FROM main.records " \
	"m WHERE m.id = r." col ")%s)"
	snprintf(sql, sizeof(sql),
		 LINK_SIDE("supersedes") " UNION ALL " LINK_SIDE(
			 "superseded_by") " LIMIT 1",
		 schema,
		 db->has_global ? " OR EXISTS (SELECT 1 FROM global.records g "
				  "WHERE g.id = r.supersedes)"
				: "",
		 schema,
		 db->has_global ? " OR EXISTS (SELECT 1 FROM global.records g "
				  "WHERE g.id = r.superseded_by)"
				: "");
#undef LINK_SIDE
	src = sqlite3_prepare_v2(db->sql, sql, -1, st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "checking links");
	return CAIRN_OK;
}

/*
 * Before a COMMIT of imported links (store_import_record): the
 * supersedes and superseded_by of each record imported in it name a
 * record of either store. A link may point forward in the file, so it is
 * checked once all of it is in: one statement per schema, stepped once
 * per record.
 */
static int links_check(struct cairn_db *db)
{
	sqlite3_stmt *st[2] = { NULL, NULL }; /* main, global */
	size_t i;
	int rc = CAIRN_OK;

	for (i = 0; i < db->nlinks && rc == CAIRN_OK; i++) {
		int g = db->links[i][0] == 'g', src;
		const char *id = db->links[i] + 1;

		if (!st[g]) {
			rc = links_prepare(db, g ? "global" : "main", &st[g]);
			if (rc)
				break;
		}
		sqlite3_reset(st[g]);
		sqlite3_bind_text(st[g], 1, id, -1, SQLITE_STATIC);
		src = sqlite3_step(st[g]);
		if (src == SQLITE_ROW) {
			int by = strcmp((const char *)sqlite3_column_text(
						st[g], 0),
					"superseded_by") == 0;

			rc = store_error(db, CAIRN_NOTFOUND,
					 "record '%s' %s '%.64s', which is "
					 "neither in the store nor imported",
					 id, by ? "is superseded by" : "supersedes",
					 (const char *)sqlite3_column_text(st[g],
									   1));
		} else if (src != SQLITE_DONE) {
			rc = store_sql_error(db, src, "checking links");
		}
	}
	sqlite3_finalize(st[0]);
	sqlite3_finalize(st[1]);
	store_links_forget(db);
	return rc;
}

/* Before a COMMIT: move the revision of each schema whose records changed. */
static int rev_bump(struct cairn_db *db)
{
	int s, rc = CAIRN_OK;

	rc = links_check(db);
	if (rc) {
		db->rev_dirty = 0; /* the transaction is rolled back */
		return rc;
	}

	for (s = 0; s < 2 && rc == CAIRN_OK; s++) {
		char sql[128];

		if (!(db->rev_dirty & (1 << s)))
			continue;
		snprintf(sql, sizeof(sql),
			 "UPDATE %s.meta SET v = CAST(v AS INTEGER) + 1 "
			 "WHERE k = '" STORE_META_REVISION "'",
			 s == 0 ? "main" : "global");
		rc = store_exec(db, sql, "counting the write");
	}
	db->rev_dirty = 0;
	return rc;
}

/*
 * After a transaction ended (ok: committed): a global store attached in
 * it stays when it committed with a schema, else it is detached, so that
 * the next write attaches and migrates it again.
 */
static void global_settle(struct cairn_db *db, int ok)
{
	if (!db->global_in_tx)
		return;
	db->global_in_tx = 0;
	if (ok && db->has_global)
		return;
	sqlite3_exec(db->sql, "DETACH DATABASE global", NULL, NULL, NULL);
	db->has_global = 0;
}

int store_tx_begin(struct cairn_db *db)
{
	if (db->in_batch)
		return CAIRN_OK;
	return store_exec(db, "BEGIN IMMEDIATE", "starting a write");
}

int store_tx_end(struct cairn_db *db, int rc)
{
	if (db->in_batch)
		return rc;
	if (rc != CAIRN_OK) {
		db->rev_dirty = 0;
		store_links_forget(db);
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
		global_settle(db, 0);
		return rc;
	}
	rc = rev_bump(db);
	if (rc == CAIRN_OK)
		rc = store_exec(db, "COMMIT", "committing a write");
	if (rc)
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	global_settle(db, rc == CAIRN_OK);
	return rc;
}

int cairn_begin(cairn_db *db)
{
	int rc;

	if (db->in_batch)
		return store_error(db, CAIRN_INVALID, "a batch is already open");
	rc = store_exec(db, "BEGIN IMMEDIATE", "starting a batch");
	if (rc == CAIRN_OK)
		db->in_batch = 1;
	return rc;
}

int cairn_commit(cairn_db *db)
{
	int rc;

	if (!db->in_batch)
		return store_error(db, CAIRN_INVALID, "no batch is open");
	db->in_batch = 0;
	rc = rev_bump(db);
	if (rc == CAIRN_OK)
		rc = store_exec(db, "COMMIT", "committing a batch");
	if (rc)
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
	global_settle(db, rc == CAIRN_OK);
	return rc;
}

int cairn_rollback(cairn_db *db)
{
	int rc;

	if (!db->in_batch)
		return CAIRN_OK;
	db->in_batch = 0;
	db->rev_dirty = 0;
	store_links_forget(db);
	rc = store_exec(db, "ROLLBACK", "rolling back a batch");
	global_settle(db, 0);
	return rc;
}

/* -------------------------------------------------------------- settings */

int store_meta_get(struct cairn_db *db, const char *schema, const char *k,
		   char *buf, size_t size, int *found)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	int src;

	buf[0] = '\0';
	*found = 0;
	snprintf(sql, sizeof(sql), "SELECT v FROM %s.meta WHERE k = ?1",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
		if (src == SQLITE_ROW) {
			const char *v = (const char *)sqlite3_column_text(st, 0);

			snprintf(buf, size, "%s", v ? v : "");
			*found = v != NULL;
			src = SQLITE_DONE;
		}
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_error(db, CAIRN_ERROR, "reading the setting %s: %s",
				   k, sqlite3_errmsg(db->sql));
	return CAIRN_OK;
}

int store_meta_set(struct cairn_db *db, const char *schema, const char *k,
		   const char *v, const char *what)
{
	char sql[160];
	sqlite3_stmt *st = NULL;
	int src;

	if (v)
		snprintf(sql, sizeof(sql),
			 "INSERT OR REPLACE INTO %s.meta (k, v) VALUES (?1, ?2)",
			 schema);
	else
		snprintf(sql, sizeof(sql), "DELETE FROM %s.meta WHERE k = ?1",
			 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
		if (v)
			sqlite3_bind_text(st, 2, v, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, what);
	return CAIRN_OK;
}

int store_revision(struct cairn_db *db, const char *schema, long long *out)
{
	char v[32];
	int found, rc;

	*out = 0;
	rc = store_meta_get(db, schema, STORE_META_REVISION, v, sizeof(v),
			    &found);
	if (rc == CAIRN_OK && !found)
		return CAIRN_NOTFOUND;
	if (rc == CAIRN_OK)
		*out = strtoll(v, NULL, 10);
	return rc;
}

int store_db_file(const struct cairn_db *db, int si, char *buf, size_t size)
{
	const char *dir = si == 0 ? db->dir : db->global_dir;

	return dir && snprintf(buf, size, "%s/%s", dir,
			       si == 0 ? "cairn.db" : "global.db") < (int)size;
}

int store_dir_file(const struct cairn_db *db, const char *name, char *buf,
		   size_t size)
{
	return snprintf(buf, size, "%s/%s", db->dir, name) < (int)size;
}

/* ----------------------------------------------------------------- records */

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	if (!t)
		return NULL;
	return util_strndup((const char *)t, (size_t)sqlite3_column_bytes(st, i));
}

cairn_record *store_row_record(sqlite3_stmt *st, int c)
{
	cairn_record *r = util_calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->id = col_dup(st, c + 0);
	r->kind = col_dup(st, c + 1);
	r->key = col_dup(st, c + 2);
	r->scope = col_dup(st, c + 3);
	r->title = col_dup(st, c + 4);
	r->body = col_dup(st, c + 5);
	r->status = col_dup(st, c + 6);
	r->confidence = sqlite3_column_double(st, c + 7);
	r->proof = col_dup(st, c + 8);
	r->origin = col_dup(st, c + 9);
	r->src_path = col_dup(st, c + 10);
	r->src_heading = col_dup(st, c + 11);
	r->src_line = (long)sqlite3_column_int64(st, c + 12);
	r->src_commit = col_dup(st, c + 13);
	r->src_session = col_dup(st, c + 14);
	r->src_tool = col_dup(st, c + 15);
	r->time = col_dup(st, c + 16);
	r->created = col_dup(st, c + 17);
	r->updated = col_dup(st, c + 18);
	r->last_seen = col_dup(st, c + 19);
	r->supersedes = col_dup(st, c + 20);
	r->superseded_by = col_dup(st, c + 21);
	r->revision = (long)sqlite3_column_int64(st, c + 22);
	r->hash = col_dup(st, c + 23);
	if (!r->id || !r->kind || !r->scope || !r->title || !r->body ||
	    !r->status || !r->origin || !r->created || !r->updated) {
		cairn_record_free(r);
		return NULL;
	}
	return r;
}

void cairn_record_free(cairn_record *r)
{
	if (!r)
		return;
	cairn_free(r->id);
	cairn_free(r->kind);
	cairn_free(r->key);
	cairn_free(r->scope);
	cairn_free(r->title);
	cairn_free(r->body);
	cairn_free(r->status);
	cairn_free(r->proof);
	cairn_free(r->origin);
	cairn_free(r->src_path);
	cairn_free(r->src_heading);
	cairn_free(r->src_commit);
	cairn_free(r->src_session);
	cairn_free(r->src_tool);
	cairn_free(r->time);
	cairn_free(r->created);
	cairn_free(r->updated);
	cairn_free(r->last_seen);
	cairn_free(r->supersedes);
	cairn_free(r->superseded_by);
	cairn_free(r->hash);
	cairn_free(r);
}

void cairn_record_list_free(cairn_record **recs, size_t n)
{
	size_t i;

	if (!recs)
		return;
	for (i = 0; i < n; i++)
		cairn_record_free(recs[i]);
	cairn_free(recs);
}

const char *store_schema(const char *scope)
{
	return scope && strcmp(scope, "global") == 0 ? "global" : "main";
}

int store_is_file_backed(const cairn_record *r, char *msg, size_t size)
{
	if (!r->origin || strcmp(r->origin, "file") != 0)
		return 0;
	if (msg && size)
		snprintf(msg, size, "file-backed: edit %s:%ld",
			 r->src_path ? r->src_path : "(unknown file)",
			 r->src_line > 0 ? r->src_line : 1);
	return 1;
}

int cairn_record_file_backed(const cairn_record *rec, char *why, size_t size)
{
	return store_is_file_backed(rec, why, size);
}

int store_new_id(char out[17])
{
	unsigned char rnd[8];
	char hex[17];

	if (util_random(rnd, sizeof(rnd)))
		return CAIRN_IO;
	util_hex(rnd, sizeof(rnd), hex);
	out[0] = 'r';
	memcpy(out + 1, hex, 15); /* 'r' + 15 hex digits: 60 random bits */
	out[16] = '\0';
	return CAIRN_OK;
}

static int is_blank(const char *s)
{
	if (!s)
		return 1;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return *s == '\0';
}

static int check_text(struct cairn_db *db, const char *field, const char *s)
{
	long bad;
	size_t n;

	if (!s)
		return CAIRN_OK;
	n = strlen(s);
	if (n > STORE_MAX_TEXT)
		return store_error(db, CAIRN_TOOBIG,
				   "%s is too large: %zu bytes (limit %zu)",
				   field, n, STORE_MAX_TEXT);
	bad = util_utf8_invalid_at(s, n);
	if (bad >= 0)
		return store_error(db, CAIRN_INVALID,
				   "%s is not valid UTF-8 at byte %ld", field,
				   bad);
	return CAIRN_OK;
}

/*
 * Run the secret filter over one field. Without CAIRN_WRITE_REDACT a hit
 * refuses the write; with it, *masked receives the redacted copy (caller
 * frees). The message names the kind and line, never the secret.
 */
static int filter_secret(struct cairn_db *db, const char *field, const char *s,
			 unsigned flags, char **masked)
{
	struct secret_hit hit;
	char msg[256];

	*masked = NULL;
	if (!s || secret_scan(s, strlen(s), &hit, 1) == 0)
		return CAIRN_OK;
	if (secret_unscanned(&hit))
		return store_error(db, CAIRN_NOMEM, "out of memory");
	if (!(flags & CAIRN_WRITE_REDACT)) {
		secret_describe(&hit, field, msg, sizeof(msg));
		return store_error(db, CAIRN_SECRET, "%s", msg);
	}
	*masked = secret_redact(s, strlen(s), NULL);
	if (!*masked)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	return CAIRN_OK;
}

/* The four secret-checked text fields of a write, possibly redacted. */
struct clean_text {
	const char *key, *title, *body, *proof; /* what will be stored */
	char *own[4];                           /* redacted copies to free */
};

static void clean_release(struct clean_text *c)
{
	int i;

	for (i = 0; i < 4; i++)
		cairn_free(c->own[i]);
}

static int clean_fields(struct cairn_db *db, const cairn_record *r,
			unsigned flags, struct clean_text *c)
{
	const char *names[4] = { "key", "title", "body", "proof" };
	const char *vals[4];
	const char **dst[4];
	int i, rc;

	memset(c, 0, sizeof(*c));
	vals[0] = r->key;
	vals[1] = r->title;
	vals[2] = r->body;
	vals[3] = r->proof;
	dst[0] = &c->key;
	dst[1] = &c->title;
	dst[2] = &c->body;
	dst[3] = &c->proof;
	for (i = 0; i < 4; i++) {
		rc = check_text(db, names[i], vals[i]);
		if (rc)
			return rc;
		rc = filter_secret(db, names[i], vals[i], flags, &c->own[i]);
		if (rc)
			return rc;
		*dst[i] = c->own[i] ? c->own[i] : vals[i];
	}
	/*
	 * Provenance fields are stored as given, so a secret there is refused
	 * even with CAIRN_WRITE_REDACT (SPEC 4.6: every write path).
	 */
	{
		const char *pn[7] = { "source path", "source heading",
				      "source commit", "session", "tool",
				      "time", "supersedes" };
		const char *pv[7];
		struct secret_hit hit;
		char msg[256];

		pv[0] = r->src_path;
		pv[1] = r->src_heading;
		pv[2] = r->src_commit;
		pv[3] = r->src_session;
		pv[4] = r->src_tool;
		pv[5] = r->time;
		pv[6] = r->supersedes;
		for (i = 0; i < 7; i++) {
			rc = check_text(db, pn[i], pv[i]);
			if (rc)
				return rc;
			if (pv[i] && secret_scan(pv[i], strlen(pv[i]), &hit, 1)) {
				if (secret_unscanned(&hit))
					return store_error(db, CAIRN_NOMEM,
							   "out of memory");
				secret_describe(&hit, pn[i], msg, sizeof(msg));
				return store_error(db, CAIRN_SECRET, "%s", msg);
			}
		}
	}
	if (c->key && strlen(c->key) > STORE_MAX_KEY)
		return store_error(db, CAIRN_TOOBIG,
				   "key is too long: %zu bytes (limit %d)",
				   strlen(c->key), STORE_MAX_KEY);
	if (r->id && !store_id_valid(r->id))
		return store_error(db, CAIRN_INVALID,
				   "invalid record id '%.64s' (1 to %d letters, "
				   "digits and . _ : - /, not starting with . - "
				   "or /, no '..')",
				   r->id, STORE_MAX_ID);
	{
		const char *dn[4] = { "time", "created", "updated",
				      "last_seen" };
		const char *dv[4];
		int nd = flags & CAIRN_WRITE_KEEP_TIMES ? 4 : 1;

		dv[0] = r->time;
		dv[1] = r->created;
		dv[2] = r->updated;
		dv[3] = r->last_seen;
		for (i = 0; i < nd; i++)
			if (dv[i] && !util_iso_valid(dv[i]))
				return store_error(
					db, CAIRN_INVALID,
					"%s '%.64s' is not an ISO-8601 date "
					"(YYYY-MM-DD[THH:MM[:SS]][Z])",
					dn[i], dv[i]);
	}
	return CAIRN_OK;
}

int store_id_valid(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n > STORE_MAX_ID || id[0] == '.' || id[0] == '-' ||
	    id[0] == '/')
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)id[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
		      ch == ':' || ch == '-' || ch == '/'))
			return 0;
		/* a path-like id (an evaluation's "docs/adr/1.md") never
		 * climbs: no ".." component */
		if (ch == '/' && id[i + 1] == '.' && id[i + 2] == '.' &&
		    (id[i + 3] == '/' || id[i + 3] == '\0'))
			return 0;
	}
	return 1;
}

static void content_hash(const char *title, const char *body, char out[65])
{
	struct sbuf sb = SBUF_INIT;

	sbuf_adds(&sb, title ? title : "");
	sbuf_addc(&sb, '\0');
	sbuf_adds(&sb, body ? body : "");
	util_sha256_hex(sbuf_str(&sb), sb.len, out);
	sbuf_release(&sb);
}

static int is_agentish(const char *origin)
{
	return strcmp(origin, "agent") == 0 || strcmp(origin, "capture") == 0 ||
	       strcmp(origin, "reflection") == 0;
}

/* Look up a record in one schema by a WHERE clause on one text value. */
int store_find_one(struct cairn_db *db, const char *schema,
		    const char *where, const char *val, cairn_record **out)
{
	struct sbuf sql = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc = CAIRN_OK, src;

	*out = NULL;
	sbuf_addf(&sql, "SELECT " STORE_COLS " FROM %s.records WHERE %s",
		  schema, where);
	if (sql.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	src = sqlite3_prepare_v2(db->sql, sql.buf, -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "reading a record");
		goto out;
	}
	sqlite3_bind_text(st, 1, val, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		*out = store_row_record(st, 0);
		if (!*out)
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
	} else if (src == SQLITE_DONE) {
		rc = CAIRN_NOTFOUND;
	} else {
		rc = store_sql_error(db, src, "reading a record");
	}
out:
	sqlite3_finalize(st);
	sbuf_release(&sql);
	return rc;
}

/* Copy the current text of record `id` into revisions. */
static int keep_revision(struct cairn_db *db, const char *schema,
			 const char *id)
{
	char sql[512];
	sqlite3_stmt *st = NULL;
	int src;

	snprintf(sql, sizeof(sql), STORE_KEEP_REVISION_SQL, schema, schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "keeping a revision");
	return CAIRN_OK;
}

void store_bind_opt(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* The resolved values of one write, after defaults and the gate. */
struct write_plan {
	const char *kind, *scope, *origin, *status; /* validated */
	double confidence;                            /* 0..1 */
	char now[32];                                 /* the write's time */
	char hash[65];                                /* content hash */
};

static int plan_write(struct cairn_db *db, const cairn_record *r,
		      struct write_plan *p, int as_given)
{
	p->kind = r->kind ? r->kind : "note";
	p->scope = r->scope ? r->scope : "workspace";
	p->origin = r->origin ? r->origin : "human";
	if (!cairn_kind_valid(p->kind))
		return store_error(db, CAIRN_INVALID,
				   "unknown kind '%s' (expected one of: "
				   "decision, adr, fact, rule, procedure, "
				   "capability, finding, history, event, note)",
				   p->kind);
	if (!cairn_scope_valid(p->scope))
		return store_error(db, CAIRN_INVALID,
				   "unknown scope '%s' (expected workspace, "
				   "global or machine)",
				   p->scope);
	if (!cairn_origin_valid(p->origin))
		return store_error(db, CAIRN_INVALID,
				   "unknown origin '%s' (expected one of: "
				   "file, human, agent, capture, reflection)",
				   p->origin);
	if (r->status && !cairn_status_valid(r->status))
		return store_error(db, CAIRN_INVALID,
				   "unknown status '%s' (expected one of: "
				   "candidate, accepted, unverified, stale, "
				   "superseded, historical, false, retired, "
				   "rejected)",
				   r->status);
	/* SPEC 4.5: nothing an agent proposes skips the approval gate */
#ifndef CAIRN_MUTATE_NO_GATE
	if (as_given) /* import: a record keeps the status it was exported with */
		p->status = r->status ? r->status
			  : is_agentish(p->origin) ? "candidate" : "accepted";
	else if (is_agentish(p->origin))
		p->status = "candidate";
	else
		p->status = r->status ? r->status : "accepted";
#else
	/* tests/mutate: agent writes keep the status they ask for */
	p->status = r->status ? r->status : "accepted";
#endif
	if (isnan(r->confidence) || r->confidence > 1.0)
		return store_error(db, CAIRN_INVALID,
				   "confidence %g is outside 0..1",
				   r->confidence);
	/* 0 (a {0}-initialised record) or negative: the default, as in
	 * an options struct; a stored confidence is above 0 */
	if (r->confidence > 0)
		p->confidence = r->confidence;
	else
		p->confidence = is_agentish(p->origin) ? 0.5 : 1.0;
	if (is_blank(r->body))
		return store_error(db, CAIRN_INVALID, "the body is empty");
	util_now_iso(p->now, sizeof(p->now));
	return CAIRN_OK;
}

static int insert_record(struct cairn_db *db, const char *schema,
			 const cairn_record *r, const struct clean_text *c,
			 const struct write_plan *p, const char *id,
			 const char *pending_key, unsigned flags)
{
	char sql[640];
	sqlite3_stmt *st = NULL;
	int keep = (flags & CAIRN_WRITE_KEEP_TIMES) != 0;
	int src;

	snprintf(sql, sizeof(sql),
		 "INSERT INTO %s.records (id, kind, key, scope, title, body, "
		 "status, confidence, proof, origin, src_path, src_heading, "
		 "src_line, src_commit, src_session, src_tool, time, created, "
		 "updated, last_seen, supersedes, superseded_by, revision, "
		 "hash, pending_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
		 "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
		 "?21, ?22, ?23, ?24, ?25)",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "writing a record");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, p->kind, -1, SQLITE_STATIC);
	store_bind_opt(st, 3, pending_key ? NULL : c->key);
	sqlite3_bind_text(st, 4, p->scope, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, c->title ? c->title : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, c->body, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, p->status, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 8, p->confidence);
	store_bind_opt(st, 9, c->proof);
	sqlite3_bind_text(st, 10, p->origin, -1, SQLITE_STATIC);
	store_bind_opt(st, 11, r->src_path);
	store_bind_opt(st, 12, r->src_heading);
	if (r->src_line > 0)
		sqlite3_bind_int64(st, 13, r->src_line);
	store_bind_opt(st, 14, r->src_commit);
	store_bind_opt(st, 15, r->src_session);
	store_bind_opt(st, 16, r->src_tool);
	store_bind_opt(st, 17, r->time);
	sqlite3_bind_text(st, 18, keep && r->created ? r->created : p->now, -1,
			  SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 19, keep && r->updated ? r->updated : p->now, -1,
			  SQLITE_TRANSIENT);
	store_bind_opt(st, 20, keep ? r->last_seen : NULL);
	store_bind_opt(st, 21, r->supersedes);
	store_bind_opt(st, 22, keep ? r->superseded_by : NULL);
	sqlite3_bind_int64(st, 23, keep && r->revision > 0 ? r->revision : 1);
	sqlite3_bind_text(st, 24, keep && r->hash ? r->hash : p->hash, -1,
			  SQLITE_TRANSIENT);
	store_bind_opt(st, 25, pending_key);
	src = sqlite3_step(st);
	sqlite3_finalize(st);
	if (src == SQLITE_CONSTRAINT_UNIQUE ||
	    src == SQLITE_CONSTRAINT_PRIMARYKEY)
		return store_error(db, CAIRN_EXISTS,
				   "a record with id '%s' or with this key "
				   "already exists", id);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "writing a record");
	return CAIRN_OK;
}

/* Replace the text of existing record `old` (same key): a new revision. */
static int update_text(struct cairn_db *db, const char *schema,
		       const cairn_record *old, const cairn_record *r,
		       const struct clean_text *c, const struct write_plan *p)
{
	char sql[512];
	sqlite3_stmt *st = NULL;
	int rc, src;

	if (old->hash && strcmp(old->hash, p->hash) == 0 &&
	    strcmp(old->status, p->status) == 0 &&
	    strcmp(old->kind, p->kind) == 0 && util_streq(old->proof, c->proof) &&
	    old->confidence == p->confidence)
		return CAIRN_OK; /* identical: no new revision */
	rc = keep_revision(db, schema, old->id);
	if (rc)
		return rc;
	snprintf(sql, sizeof(sql),
		 "UPDATE %s.records SET kind = ?2, title = ?3, body = ?4, "
		 "status = ?5, confidence = ?6, proof = ?7, origin = ?8, "
		 "updated = ?9, revision = revision + 1, hash = ?10, "
		 "time = coalesce(?11, time), src_path = ?12, "
		 "src_heading = ?13, src_line = ?14, src_commit = ?15, "
		 "src_session = ?16, src_tool = ?17 WHERE id = ?1",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "updating a record");
	sqlite3_bind_text(st, 1, old->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, p->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, c->title ? c->title : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, c->body, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, p->status, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 6, p->confidence);
	store_bind_opt(st, 7, c->proof);
	sqlite3_bind_text(st, 8, p->origin, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, p->now, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, p->hash, -1, SQLITE_STATIC);
	store_bind_opt(st, 11, r->time);
	store_bind_opt(st, 12, r->src_path);
	store_bind_opt(st, 13, r->src_heading);
	if (r->src_line > 0)
		sqlite3_bind_int64(st, 14, r->src_line);
	else
		sqlite3_bind_null(st, 14);
	store_bind_opt(st, 15, r->src_commit);
	store_bind_opt(st, 16, r->src_session);
	store_bind_opt(st, 17, r->src_tool);
	src = sqlite3_step(st);
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "updating a record");
	return CAIRN_OK;
}

/* A record a write links to (supersedes) must exist, in either store. */
static int link_target(struct cairn_db *db, const char *id)
{
	sqlite3_stmt *st = NULL;
	int src;

	/* existence only: the record itself is not loaded */
	src = sqlite3_prepare_v2(
		db->sql,
		db->has_global ? "SELECT 1 FROM main.records WHERE id = ?1 "
				 "UNION ALL SELECT 1 FROM global.records "
				 "WHERE id = ?1 LIMIT 1"
			       : "SELECT 1 FROM main.records WHERE id = ?1",
		-1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src == SQLITE_ROW)
		return CAIRN_OK;
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "finding the superseded record");
	return store_error(db, CAIRN_NOTFOUND,
			   "supersedes '%.64s': no such record", id);
}

int cairn_record_write(cairn_db *db, const cairn_record *r, unsigned flags,
		       char **out_id)
{
	struct clean_text c;
	struct write_plan p;
	cairn_record *old = NULL, m;
	const char *schema;
	char idbuf[17];
	const char *id = NULL;
	char msg[STORE_ERRMSG];
	int rc, in_tx = 0;

	memset(&c, 0, sizeof(c));
	if (out_id)
		*out_id = NULL;
	rc = plan_write(db, r, &p, 0);
	if (rc)
		goto out;
	rc = clean_fields(db, r, flags, &c);
	if (rc)
		goto out;
	schema = store_schema(p.scope);
	if (strcmp(schema, "global") == 0) {
		rc = store_attach_global(db, 1);
		if (rc)
			goto out;
	}
	rc = store_tx_begin(db);
	if (rc)
		goto out;
	in_tx = 1;
#ifndef CAIRN_MUTATE_NO_UNIQUE_KEY
	if (c.key && *c.key) {
		rc = store_find_one(db, schema, store_key_where(p.scope),
				    c.key, &old);
		if (rc == CAIRN_NOTFOUND)
			rc = CAIRN_OK;
		if (rc)
			goto out;
	}
#else
	/* tests/mutate: no lookup, so a rewritten key is a second insert */
#endif
	if (old && store_is_file_backed(old, msg, sizeof(msg)) &&
	    strcmp(p.origin, "file") != 0) {
		rc = store_error(db, CAIRN_READONLY, "%s", msg);
		goto out;
	}
	m = *r;
	if (old) {
		/* rewriting a key: the fields not given are kept */
		int own = is_agentish(p.origin) &&
			  strcmp(old->status, "candidate") != 0;

		if (!r->kind)
			p.kind = old->kind;
		if (!r->title)
			c.title = old->title;
		if (!r->proof)
			c.proof = old->proof;
		if (r->confidence <= 0 && !is_agentish(p.origin))
			p.confidence = old->confidence;
		/* the record's provenance too, unless this write becomes
		 * a candidate of its own (below), which has its own */
		if (!own && strcmp(p.origin, "file") != 0 &&
		    !r->src_path && !r->src_heading && !r->src_commit &&
		    r->src_line <= 0) {
			m.src_path = old->src_path;
			m.src_heading = old->src_heading;
			m.src_line = old->src_line;
			m.src_commit = old->src_commit;
		}
		if (!own && !r->src_session && !r->src_tool) {
			m.src_session = old->src_session;
			m.src_tool = old->src_tool;
		}
	}
	/* once the title is known: the rewritten key's kept one, or the new */
	content_hash(c.title, c.body, p.hash);
	if (r->supersedes && strcmp(p.origin, "file") != 0) {
		/* (seed links its files itself, in an order of its own; a
		 * link kept from the record is not checked again) */
		rc = link_target(db, r->supersedes);
		if (rc)
			goto out;
	}
	if (old && is_agentish(p.origin) &&
	    strcmp(old->status, "candidate") != 0) {
		/*
		 * An agent may not overwrite a standing record: its text
		 * becomes a candidate that replaces the keyed record only
		 * when a human approves it (pending_key).
		 */
		rc = store_new_id(idbuf);
		if (rc)
			goto out;
		id = idbuf;
		rc = insert_record(db, schema, &m, &c, &p, id, c.key, flags);
	} else if (old) {
		id = old->id;
		rc = update_text(db, schema, old, &m, &c, &p);
	} else {
		if (r->id) {
			id = r->id;
		} else {
			rc = store_new_id(idbuf);
			if (rc)
				goto out;
			id = idbuf;
		}
		rc = insert_record(db, schema, &m, &c, &p, id, NULL, flags);
	}
	/* the files it refers to, as they are now (drift.h) */
	if (rc == CAIRN_OK && strcmp(schema, "main") == 0)
		rc = drift_note(db, id, "write");
	if (rc == CAIRN_OK && out_id) {
		*out_id = util_strdup(id);
		if (!*out_id)
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
	}
out:
	if (in_tx)
		rc = store_tx_end(db, rc);
	if (rc && out_id && *out_id) {
		cairn_free(*out_id);
		*out_id = NULL;
	}
	cairn_record_free(old);
	clean_release(&c);
	return rc;
}

int store_import_record(struct cairn_db *db, const char *schema,
			const cairn_record *r, const char *pending_key,
			unsigned flags)
{
	struct clean_text c;
	struct write_plan p;
	cairn_record *holder = NULL;
	int rc;

	flags |= CAIRN_WRITE_KEEP_TIMES;
	memset(&c, 0, sizeof(c));
	rc = plan_write(db, r, &p, 1);
	if (rc == CAIRN_OK)
		rc = clean_fields(db, r, flags, &c);
	if (rc == CAIRN_OK && pending_key) {
		rc = check_text(db, "pending key", pending_key);
		if (rc == CAIRN_OK && strlen(pending_key) > STORE_MAX_KEY)
			rc = store_error(db, CAIRN_TOOBIG,
					 "pending key is too long (limit %d)",
					 STORE_MAX_KEY);
	}
	if (rc == CAIRN_OK)
		rc = check_text(db, "superseded_by", r->superseded_by);
	if (rc == CAIRN_OK)
		rc = check_text(db, "hash", r->hash);
	if (rc == CAIRN_OK && r->revision < 0)
		rc = store_error(db, CAIRN_INVALID, "revision %ld is negative",
				 r->revision);
	if (rc)
		goto out;
	if (!r->id || (strcmp(schema, "global") == 0) !=
			      (strcmp(p.scope, "global") == 0)) {
		rc = store_error(db, CAIRN_INVALID,
				 "an imported record needs an id and its scope");
		goto out;
	}
	content_hash(c.title, c.body, p.hash);
	if (c.key && *c.key) {
		rc = store_find_one(db, schema, store_key_where(p.scope),
				    c.key, &holder);
		if (rc == CAIRN_OK) {
			rc = store_error(db, CAIRN_EXISTS,
					 "key '%.64s' already belongs to record "
					 "'%s' in the %s store",
					 c.key, holder->id, p.scope);
			goto out;
		}
		if (rc != CAIRN_NOTFOUND)
			goto out;
	}
	rc = insert_record(db, schema, r, &c, &p, r->id, pending_key, flags);
	/* the files it refers to, as they are here now (drift.h) */
	if (rc == CAIRN_OK && strcmp(schema, "main") == 0)
		rc = drift_note(db, r->id, "write");
	if (rc == CAIRN_OK && (r->supersedes || r->superseded_by)) {
		/* checked when the transaction commits (links_check) */
		char **grown = db->links;
		struct sbuf e = SBUF_INIT;

		if (db->nlinks == db->links_cap) {
			/* doubling: one import may link every record */
			size_t cap = db->links_cap ? 2 * db->links_cap : 16;

			grown = util_realloc(db->links, cap * sizeof(*grown));
			if (grown) {
				db->links = grown;
				db->links_cap = cap;
			}
		}
		sbuf_addf(&e, "%c%s", strcmp(schema, "global") == 0 ? 'g' : 'm',
			  r->id);
		if (!grown || e.err) {
			sbuf_release(&e);
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
		} else {
			db->links[db->nlinks++] = sbuf_detach(&e, NULL);
		}
	}
out:
	cairn_record_free(holder);
	clean_release(&c);
	return rc;
}

/* Step a prepared UPDATE of a seed write; a key clash named as seed did. */
static int file_step(struct cairn_db *db, sqlite3_stmt *st, const char *what)
{
	int src = sqlite3_step(st);

	sqlite3_finalize(st);
	if (src == SQLITE_CONSTRAINT_UNIQUE)
		return store_error(db, CAIRN_INVALID,
				   "%s: a key is already used by another record",
				   what);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, what);
	return CAIRN_OK;
}

int store_file_update(struct cairn_db *db, const cairn_record *r,
		      const char *now)
{
	struct clean_text c;
	sqlite3_stmt *st = NULL;
	char keep_sql[400];
	int rc, src;

	/* the gate's checks; a file's secret is refused, never masked */
	rc = clean_fields(db, r, 0, &c);
	if (rc == CAIRN_OK && !cairn_kind_valid(r->kind))
		rc = store_error(db, CAIRN_INVALID, "unknown kind '%s'",
				 r->kind);
	if (rc == CAIRN_OK && !cairn_status_valid(r->status))
		rc = store_error(db, CAIRN_INVALID, "unknown status '%s'",
				 r->status);
	if (rc)
		goto out;
	snprintf(keep_sql, sizeof(keep_sql), STORE_KEEP_REVISION_SQL, "main",
		 "main");
	src = sqlite3_prepare_v2(db->sql, keep_sql, -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "keeping a revision");
		goto out;
	}
	sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
	rc = file_step(db, st, "keeping a revision");
	if (rc)
		goto out;
	src = sqlite3_prepare_v2(
		db->sql,
		"UPDATE main.records SET kind = ?2, key = ?3, title = ?4, "
		"body = ?5, status = ?6, confidence = 1.0, origin = 'file', "
		"src_path = ?7, src_heading = ?8, src_line = ?9, "
		"src_commit = ?10, time = ?11, supersedes = ?12, "
		"superseded_by = ?13, hash = ?14, updated = ?15, "
		"revision = revision + 1 WHERE id = ?1",
		-1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "updating a record");
		goto out;
	}
	sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, r->kind, -1, SQLITE_STATIC);
	store_bind_opt(st, 3, c.key);
	sqlite3_bind_text(st, 4, c.title ? c.title : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, c.body ? c.body : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, r->status, -1, SQLITE_STATIC);
	store_bind_opt(st, 7, r->src_path);
	store_bind_opt(st, 8, r->src_heading);
	sqlite3_bind_int64(st, 9, r->src_line);
	store_bind_opt(st, 10, r->src_commit);
	store_bind_opt(st, 11, r->time);
	store_bind_opt(st, 12, r->supersedes);
	store_bind_opt(st, 13, r->superseded_by);
	store_bind_opt(st, 14, r->hash);
	sqlite3_bind_text(st, 15, now, -1, SQLITE_STATIC);
	rc = file_step(db, st, "updating a record");
out:
	clean_release(&c);
	return rc;
}

int store_file_retire(struct cairn_db *db, const char *id, const char *now)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(db->sql,
				     "UPDATE main.records SET status = "
				     "'retired', key = NULL, updated = ?2 "
				     "WHERE id = ?1",
				     -1, &st, NULL);

	if (src != SQLITE_OK)
		return store_sql_error(db, src, "retiring a record");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
	return file_step(db, st, "retiring a record");
}

int store_file_provenance(struct cairn_db *db, const cairn_record *r)
{
	sqlite3_stmt *st = NULL;
	int rc, src, i;
	const char *v[3];

	v[0] = r->src_path;
	v[1] = r->src_heading;
	v[2] = r->src_commit;
	for (i = 0; i < 3; i++) {
		rc = check_text(db, "source", v[i]);
		if (rc)
			return rc;
	}
	src = sqlite3_prepare_v2(db->sql,
				 "UPDATE main.records SET src_path = ?2, "
				 "src_heading = ?3, src_line = ?4, src_commit "
				 "= ?5 WHERE id = ?1",
				 -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "updating provenance");
	sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
	store_bind_opt(st, 2, r->src_path);
	store_bind_opt(st, 3, r->src_heading);
	sqlite3_bind_int64(st, 4, r->src_line);
	store_bind_opt(st, 5, r->src_commit);
	return file_step(db, st, "updating provenance");
}

/* Run sql with up to three text parameters (NULL: unbound); *changes
 * (if not NULL) gains the rows it changed. */
static int run3(struct cairn_db *db, const char *sql, const char *a,
		const char *b, const char *c, long long *changes,
		const char *what)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

	if (src == SQLITE_OK) {
		if (a)
			sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
		if (b)
			sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
		if (c)
			sqlite3_bind_text(st, 3, c, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, what);
	if (changes)
		*changes += sqlite3_changes(db->sql);
	return CAIRN_OK;
}

int store_import_drop(struct cairn_db *db, const char *schema, const char *id)
{
	char sql[96];

	snprintf(sql, sizeof(sql), "DELETE FROM %s.records WHERE id = ?1",
		 schema);
	return run3(db, sql, id, NULL, NULL, NULL, "importing");
}

int store_import_revision(struct cairn_db *db, const char *schema,
			  const char *record_id, const cairn_record *v,
			  unsigned flags)
{
	const char *t = v->title ? v->title : "", *b = v->body, *p = v->proof;
	char *o1 = NULL, *o2 = NULL, *o3 = NULL, sql[256], now[32];
	sqlite3_stmt *st = NULL;
	int rc, src;

	if (!b || !v->status || !cairn_status_valid(v->status) ||
	    (v->origin && !cairn_origin_valid(v->origin)) || v->revision < 1 ||
	    isnan(v->confidence) || v->confidence < 0 || v->confidence > 1 ||
	    (v->updated && !util_iso_valid(v->updated)))
		return store_error(db, CAIRN_INVALID,
				   "import: invalid history entry");
	rc = store_clean_text(db, "title", &t, &o1, flags);
	if (rc == CAIRN_OK)
		rc = store_clean_text(db, "body", &b, &o2, flags);
	if (rc == CAIRN_OK)
		rc = store_clean_text(db, "proof", &p, &o3, flags);
	if (rc)
		goto out;
	util_now_iso(now, sizeof(now));
	snprintf(sql, sizeof(sql),
		 "INSERT INTO %s.revisions (record_id, revision, title, body, "
		 "status, confidence, proof, origin, updated, hash) VALUES "
		 "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, record_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, v->revision);
		sqlite3_bind_text(st, 3, t, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, b, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, v->status, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 6, v->confidence);
		store_bind_opt(st, 7, p);
		sqlite3_bind_text(st, 8, v->origin ? v->origin : "human", -1,
				  SQLITE_STATIC);
		sqlite3_bind_text(st, 9, v->updated ? v->updated : now, -1,
				  SQLITE_STATIC);
		store_bind_opt(st, 10, v->hash);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "importing history");
out:
	cairn_free(o1);
	cairn_free(o2);
	cairn_free(o3);
	return rc;
}

int store_seen(struct cairn_db *db, const char *ids_json, const char *when)
{
	int i, rc = CAIRN_OK;

	for (i = 0; i < 2 && rc == CAIRN_OK; i++) {
		const char *schema = i == 0 ? "main" : "global";
		char sql[160];

		if (i == 1 && !db->has_global)
			break;
		snprintf(sql, sizeof(sql),
			 "UPDATE %s.records SET last_seen = ?1 WHERE id IN "
			 "(SELECT value FROM json_each(?2))",
			 schema);
		db->rev_quiet = 1; /* not a change of the content */
		rc = run3(db, sql, when, ids_json, NULL, NULL,
			  "updating last_seen");
		db->rev_quiet = 0;
	}
	return rc;
}

int store_age(struct cairn_db *db, const char *schema, const char *ages,
	      const char *cut_stale, const char *cut_retire,
	      long long *staled, long long *retired)
{
	char sql[600];
	int rc;

	/* remember the status each record had, for the revive */
	snprintf(sql, sizeof(sql),
		 "INSERT OR REPLACE INTO %s.meta (k, v) SELECT "
		 "'lifecycle.prev.' || id, status FROM %s.records WHERE "
		 "kind IN %s AND status IN ('accepted','unverified') AND "
		 "coalesce(last_seen, created) < ?1",
		 schema, schema, ages);
	rc = run3(db, sql, cut_stale, NULL, NULL, NULL, "ageing records");
	if (rc)
		return rc;
	snprintf(sql, sizeof(sql),
		 "UPDATE %s.records SET status = 'stale' WHERE kind IN %s AND "
		 "status IN ('accepted','unverified') AND "
		 "coalesce(last_seen, created) < ?1",
		 schema, ages);
	rc = run3(db, sql, cut_stale, NULL, NULL, staled, "ageing records");
	if (rc)
		return rc;
	snprintf(sql, sizeof(sql),
		 "UPDATE %s.records SET status = 'retired' WHERE kind IN %s AND "
		 "status = 'stale' AND coalesce(last_seen, created) < ?1",
		 schema, ages);
	rc = run3(db, sql, cut_retire, NULL, NULL, retired,
		  "retiring records");
	if (rc)
		return rc;
	/* previous statuses of records no longer stale */
	snprintf(sql, sizeof(sql),
		 "DELETE FROM %s.meta WHERE k LIKE 'lifecycle.prev.%%' AND "
		 "substr(k, 16) NOT IN (SELECT id FROM %s.records WHERE "
		 "status = 'stale')",
		 schema, schema);
	return run3(db, sql, NULL, NULL, NULL, NULL, "ageing records");
}

int store_revive(struct cairn_db *db, const char *schema, const char *id,
		 const char *status, const char *now, const char *meta_key)
{
	char sql[200];
	int rc;

	snprintf(sql, sizeof(sql),
		 "UPDATE %s.records SET status = ?2, last_seen = ?3 WHERE "
		 "id = ?1 AND status = 'stale'",
		 schema);
	rc = run3(db, sql, id, status, now, NULL, "reviving a record");
	if (rc == CAIRN_OK) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s.meta WHERE k = ?1",
			 schema);
		rc = run3(db, sql, meta_key, NULL, NULL, NULL,
			  "reviving a record");
	}
	return rc;
}

int store_supersede_link(struct cairn_db *db, const cairn_record *o,
			 const cairn_record *n, const char *now)
{
	char sql[200];
	int rc;

	snprintf(sql, sizeof(sql),
		 "UPDATE %s.records SET status = 'superseded', "
		 "superseded_by = ?2, updated = ?3 WHERE id = ?1",
		 store_schema(o->scope));
	rc = run3(db, sql, o->id, n->id, now, NULL, "superseding");
	if (rc == CAIRN_OK) {
		snprintf(sql, sizeof(sql),
			 "UPDATE %s.records SET supersedes = ?2 WHERE id = ?1",
			 store_schema(n->scope));
		rc = run3(db, sql, n->id, o->id, NULL, NULL, "superseding");
	}
	return rc;
}

int store_record_proof(struct cairn_db *db, const char *id,
		       const char *proof, const char *now)
{
	char sql[160];
	int rc = check_text(db, "the proof", proof);

	if (rc == CAIRN_OK)
		rc = keep_revision(db, "main", id);
	if (rc)
		return rc;
	snprintf(sql, sizeof(sql),
		 "UPDATE main.records SET proof = ?2, updated = ?3, "
		 "revision = revision + 1 WHERE id = ?1");
	return run3(db, sql, id, proof, now, NULL, "verifying a record");
}

int store_candidate_proof(struct cairn_db *db, const char *id,
			  const char *proof)
{
	char now[32], *own = NULL;
	int rc;

	/* a proof holding a secret is refused (flags 0: never masked) */
	rc = store_clean_text(db, "the proof", &proof, &own, 0);
	if (rc == CAIRN_OK)
		rc = store_tx_begin(db);
	if (rc) {
		cairn_free(own);
		return rc;
	}
	util_now_iso(now, sizeof(now));
	rc = run3(db,
		  "UPDATE main.records SET proof = ?2, updated = ?3 "
		  "WHERE id = ?1 AND status = 'candidate'",
		  id, proof, now, NULL, "adding proof");
	cairn_free(own);
	return store_tx_end(db, rc);
}

int store_clean_text(struct cairn_db *db, const char *field, const char **val,
		     char **own, unsigned flags)
{
	int rc;

	*own = NULL;
	rc = check_text(db, field, *val);
	if (rc == CAIRN_OK)
		rc = filter_secret(db, field, *val, flags, own);
	if (rc == CAIRN_OK && *own)
		*val = *own;
	return rc;
}

/* Find a record by exact id or unique prefix, in either schema. */
static int find_by_id(struct cairn_db *db, const char *id, cairn_record **out,
		      const char **schema_out)
{
	const char *schemas[2] = { "main", "global" };
	struct sbuf pat = SBUF_INIT;
	cairn_record *hit = NULL;
	int i, rc = CAIRN_NOTFOUND, nmatch = 0;

	*out = NULL;
	if (!id || !*id)
		return store_error(db, CAIRN_INVALID, "no record id given");
	for (i = 0; i < 2; i++) {
		cairn_record *r = NULL;

		if (i == 1 && !db->has_global)
			break;
		rc = store_find_one(db, schemas[i], "id = ?1", id, &r);
		if (rc == CAIRN_OK) {
			*out = r;
			if (schema_out)
				*schema_out = schemas[i];
			return CAIRN_OK;
		}
		if (rc != CAIRN_NOTFOUND)
			return rc;
	}
	if (strlen(id) < 4 || strpbrk(id, "%_\\"))
		return store_error(db, CAIRN_NOTFOUND, "no record '%s'", id);
	/* unique prefix, as git accepts abbreviated object names */
	sbuf_addf(&pat, "%s%%", id);
	for (i = 0; i < 2 && pat.err == 0; i++) {
		struct sbuf sql = SBUF_INIT;
		sqlite3_stmt *st = NULL;
		int src;

		if (i == 1 && !db->has_global)
			break;
		sbuf_addf(&sql,
			  "SELECT " STORE_COLS " FROM %s.records WHERE id "
			  "LIKE ?1 LIMIT 2",
			  schemas[i]);
		src = sqlite3_prepare_v2(db->sql, sbuf_str(&sql), -1, &st,
					 NULL);
		sbuf_release(&sql);
		if (src != SQLITE_OK) {
			sbuf_release(&pat);
			cairn_record_free(hit);
			return store_sql_error(db, src, "reading a record");
		}
		sqlite3_bind_text(st, 1, pat.buf, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW) {
			nmatch++;
			if (!hit) {
				hit = store_row_record(st, 0);
				if (schema_out)
					*schema_out = schemas[i];
			}
		}
		sqlite3_finalize(st);
	}
	sbuf_release(&pat);
	if (nmatch == 1 && hit) {
		*out = hit;
		return CAIRN_OK;
	}
	cairn_record_free(hit);
	if (nmatch > 1)
		return store_error(db, CAIRN_INVALID,
				   "record id prefix '%s' is ambiguous", id);
	return store_error(db, CAIRN_NOTFOUND, "no record '%s'", id);
}

int cairn_record_get(cairn_db *db, const char *id, cairn_record **out)
{
	return find_by_id(db, id, out, NULL);
}

static int touch_seen(struct cairn_db *db, const char *schema, const char *id)
{
	char sql[256], now[32];
	sqlite3_stmt *st = NULL;
	int src;

	util_now_iso(now, sizeof(now));
	snprintf(sql, sizeof(sql),
		 "UPDATE %s.records SET last_seen = ?2 WHERE id = ?1", schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
		db->rev_quiet = 1; /* not a change of the content */
		src = sqlite3_step(st);
		db->rev_quiet = 0;
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "updating last_seen");
	return CAIRN_OK;
}

int store_read_key(struct cairn_db *db, const char *key, const char *scope,
		   const char **schema, cairn_record **out)
{
	const char *order[2] = { "main", "global" };
	int i, rc;

	*out = NULL;
	*schema = NULL;
	if (!key || !*key)
		return store_error(db, CAIRN_INVALID, "no key given");
	if (scope && !cairn_scope_valid(scope))
		return store_error(db, CAIRN_INVALID, "unknown scope '%s'",
				   scope);
	for (i = 0; i < 2; i++) {
		cairn_record *r = NULL;

		if (scope && strcmp(store_schema(scope), order[i]) != 0)
			continue;
		if (i == 1 && !db->has_global)
			continue;
		rc = store_find_one(db, order[i], store_key_where(scope), key,
				    &r);
		if (rc == CAIRN_NOTFOUND)
			continue;
		if (rc)
			return rc;
		rc = touch_seen(db, order[i], r->id);
		if (rc) {
			cairn_record_free(r);
			return rc;
		}
		*out = r;
		*schema = order[i];
		return CAIRN_OK;
	}
	return store_error(db, CAIRN_NOTFOUND, "no record with key '%s'", key);
}

int cairn_record_find_key(cairn_db *db, const char *key, const char *scope,
			  cairn_record **out)
{
	const char *order[2] = { "main", "global" };
	int i, rc;

	*out = NULL;
	if (!key || !*key)
		return store_error(db, CAIRN_INVALID, "no key given");
	if (scope && !cairn_scope_valid(scope))
		return store_error(db, CAIRN_INVALID, "unknown scope '%s'",
				   scope);
	for (i = 0; i < 2; i++) {
		if (scope && strcmp(store_schema(scope), order[i]) != 0)
			continue;
		if (i == 1 && !db->has_global)
			continue;
		rc = store_find_one(db, order[i], store_key_where(scope), key,
				    out);
		if (rc != CAIRN_NOTFOUND)
			return rc;
	}
	return store_error(db, CAIRN_NOTFOUND, "no record with key '%s'", key);
}

int cairn_record_set_status(cairn_db *db, const char *id, const char *from,
			    const char *to, int allow_file)
{
	cairn_record *r = NULL, *target = NULL;
	const char *schema = "main";
	char sql[512], now[32], msg[STORE_ERRMSG];
	sqlite3_stmt *st = NULL;
	char *pending = NULL;
	int rc, src, in_tx = 0;

	if (!cairn_status_valid(to))
		return store_error(db, CAIRN_INVALID, "unknown status '%s'",
				   to ? to : "(null)");
	rc = find_by_id(db, id, &r, &schema);
	if (rc)
		return rc;
	if (!allow_file && store_is_file_backed(r, msg, sizeof(msg))) {
		rc = store_error(db, CAIRN_READONLY, "%s", msg);
		goto out;
	}
	if (from && strcmp(r->status, from) != 0) {
		rc = store_error(db, CAIRN_INVALID,
				 "record '%s' is %s, not %s", r->id, r->status,
				 from);
		goto out;
	}
	util_now_iso(now, sizeof(now));
	rc = store_tx_begin(db);
	if (rc)
		goto out;
	in_tx = 1;
	/* an approved candidate for an existing key replaces that record */
	snprintf(sql, sizeof(sql),
		 "SELECT pending_key FROM %s.records WHERE id = ?1", schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_text(st, 0))
			pending = util_strdup(
				(const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	st = NULL;
	if (pending && strcmp(to, "accepted") == 0) {
		struct clean_text c;
		struct write_plan p;

		rc = store_find_one(db, schema, store_key_where(r->scope),
				    pending, &target);
		if (rc == CAIRN_OK) {
			memset(&c, 0, sizeof(c));
			memset(&p, 0, sizeof(p));
			c.title = r->title;
			c.body = r->body;
			c.proof = r->proof;
			p.kind = r->kind;
			p.scope = r->scope;
			p.origin = r->origin;
			p.status = "accepted";
			p.confidence = r->confidence;
			memcpy(p.now, now, sizeof(now));
			content_hash(r->title, r->body, p.hash);
			rc = update_text(db, schema, target, r, &c, &p);
			if (rc)
				goto out;
			/* the candidate itself is now folded into the key */
			snprintf(sql, sizeof(sql),
				 "UPDATE %s.records SET status = 'superseded', "
				 "superseded_by = ?2, pending_key = NULL, "
				 "updated = ?3 WHERE id = ?1",
				 schema);
			src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
			if (src == SQLITE_OK) {
				sqlite3_bind_text(st, 1, r->id, -1,
						  SQLITE_STATIC);
				sqlite3_bind_text(st, 2, target->id, -1,
						  SQLITE_STATIC);
				sqlite3_bind_text(st, 3, now, -1,
						  SQLITE_STATIC);
				src = sqlite3_step(st);
			}
			sqlite3_finalize(st);
			st = NULL;
			if (src != SQLITE_DONE)
				rc = store_sql_error(db, src,
						     "approving a record");
			goto out;
		}
		if (rc != CAIRN_NOTFOUND)
			goto out;
		rc = CAIRN_OK; /* the keyed record is gone: take the key */
	}
	snprintf(sql, sizeof(sql),
		 "UPDATE %s.records SET status = ?2, updated = ?3%s WHERE "
		 "id = ?1",
		 schema,
		 pending && strcmp(to, "accepted") == 0
			 ? ", key = pending_key, pending_key = NULL"
			 : "");
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, to, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, now, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "changing a record's status");
out:
	if (in_tx)
		rc = store_tx_end(db, rc);
	cairn_free(pending);
	cairn_record_free(target);
	cairn_record_free(r);
	return rc;
}

int cairn_record_revise(cairn_db *db, const char *id,
			const cairn_record *ch, unsigned flags)
{
	cairn_record *r = NULL, merged;
	struct clean_text c;
	struct write_plan p;
	const char *schema = "main";
	char msg[STORE_ERRMSG];
	int rc, in_tx = 0;

	memset(&c, 0, sizeof(c));
	rc = find_by_id(db, id, &r, &schema);
	if (rc)
		return rc;
	if (store_is_file_backed(r, msg, sizeof(msg))) {
		rc = store_error(db, CAIRN_READONLY, "%s", msg);
		goto out;
	}
	merged = *r;
	merged.title = ch->title ? ch->title : r->title;
	merged.body = ch->body ? ch->body : r->body;
	merged.proof = ch->proof ? ch->proof : r->proof;
	merged.status = ch->status ? ch->status : r->status;
	merged.kind = ch->kind ? ch->kind : r->kind;
	merged.confidence = ch->confidence > 0 ? ch->confidence
					       : r->confidence;
	merged.key = NULL;
	merged.time = NULL;
	merged.id = NULL; /* the record's own, whatever an old import let in */
	rc = plan_write(db, &merged, &p, 0);
	if (rc)
		goto out;
	/* revise keeps the record's origin and asked-for status */
	p.status = merged.status;
	rc = clean_fields(db, &merged, flags, &c);
	if (rc)
		goto out;
	content_hash(c.title, c.body, p.hash);
	rc = store_tx_begin(db);
	if (rc)
		goto out;
	in_tx = 1;
	rc = update_text(db, schema, r, &merged, &c, &p);
out:
	if (in_tx)
		rc = store_tx_end(db, rc);
	clean_release(&c);
	cairn_record_free(r);
	return rc;
}
