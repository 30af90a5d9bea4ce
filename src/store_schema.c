/*
 * store_schema.c -- the store's schema: the migrations, applied in order
 * from PRAGMA user_version (store_migrate, from cairn_db_open and the
 * global store's attach). docs/ARCHITECTURE.md lists the tables.
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

/* ------------------------------------------------------------------ schema */

/*
 * Migrations, applied in order from the store's PRAGMA user_version. Each
 * runs in one transaction; never edit a shipped step, append a new one.
 */
static const char *const migrations[] = {
	/* 1: records and their revisions (SPEC 3) */
	"CREATE TABLE records ("
	" rid INTEGER PRIMARY KEY,"
	" id TEXT NOT NULL UNIQUE,"
	" kind TEXT NOT NULL CHECK (kind IN ('decision','adr','fact','rule',"
	"  'procedure','capability','finding','history','event','note')),"
	" key TEXT,"
	" scope TEXT NOT NULL DEFAULT 'workspace'"
	"  CHECK (scope IN ('workspace','global')),"
	" title TEXT NOT NULL DEFAULT '',"
	" body TEXT NOT NULL,"
	" status TEXT NOT NULL CHECK (status IN ('candidate','accepted',"
	"  'unverified','stale','superseded','historical','false','retired',"
	"  'rejected')),"
	" confidence REAL NOT NULL DEFAULT 1.0"
	"  CHECK (confidence >= 0 AND confidence <= 1),"
	" proof TEXT,"
	" origin TEXT NOT NULL CHECK (origin IN ('file','human','agent',"
	"  'capture','reflection')),"
	" src_path TEXT, src_heading TEXT, src_line INTEGER,"
	" src_commit TEXT, src_session TEXT, src_tool TEXT,"
	" time TEXT, created TEXT NOT NULL, updated TEXT NOT NULL,"
	" last_seen TEXT,"
	" supersedes TEXT, superseded_by TEXT,"
	" revision INTEGER NOT NULL DEFAULT 1,"
	" hash TEXT,"
	" pending_key TEXT,"
	" UNIQUE (scope, key));"
	"CREATE INDEX records_status ON records(status, kind);"
	"CREATE INDEX records_src ON records(src_path);"
	"CREATE TABLE revisions ("
	" record_id TEXT NOT NULL REFERENCES records(id) ON DELETE CASCADE,"
	" revision INTEGER NOT NULL,"
	" title TEXT NOT NULL, body TEXT NOT NULL, status TEXT NOT NULL,"
	" confidence REAL NOT NULL, proof TEXT, origin TEXT NOT NULL,"
	" updated TEXT NOT NULL, hash TEXT,"
	" PRIMARY KEY (record_id, revision));"
	"CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);",

	/* 2: full-text index (our tokenizer) and recall receipts (SPEC 5.3) */
	"CREATE VIRTUAL TABLE records_fts USING fts5("
	" title, body, content='records', content_rowid='rid',"
	" tokenize='cairn');"
	"CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN"
	" INSERT INTO records_fts(rowid, title, body)"
	"  VALUES (new.rid, new.title, new.body); END;"
	"CREATE TRIGGER records_ad AFTER DELETE ON records BEGIN"
	" INSERT INTO records_fts(records_fts, rowid, title, body)"
	"  VALUES ('delete', old.rid, old.title, old.body); END;"
	"CREATE TRIGGER records_au AFTER UPDATE OF title, body ON records BEGIN"
	" INSERT INTO records_fts(records_fts, rowid, title, body)"
	"  VALUES ('delete', old.rid, old.title, old.body);"
	" INSERT INTO records_fts(rowid, title, body)"
	"  VALUES (new.rid, new.title, new.body); END;"
	"CREATE VIRTUAL TABLE records_vocab USING fts5vocab(records_fts, 'row');"
	"CREATE TABLE receipts ("
	" id TEXT PRIMARY KEY,"
	" query_sha256 TEXT NOT NULL,"
	" ids TEXT NOT NULL,"
	" detail TEXT NOT NULL,"
	" provider TEXT NOT NULL,"
	" revision TEXT NOT NULL,"
	" time TEXT NOT NULL);",

	/*
	 * 3: key lookups (WHERE key = ?) could not use UNIQUE(scope, key) and
	 * scanned the table: seeding 20k keyed facts ran at 2,600 records/s
	 * (bench/seed_bench.c). An index on (src_session, time) for cairn
	 * session was tried and dropped: it cut bench/recall_bench.c's load
	 * rate from ~6,000 to ~1,600 records/s.
	 */
	"CREATE INDEX records_key ON records(key);",

	/*
	 * 4: one embedding per record (src/embed/vector.h): dim IEEE f16 values of
	 * the record's title + body, under the identity in meta
	 * 'vector.identity'. A vector never outlives the text it was made
	 * from: changing the title or body, or deleting the record, deletes it
	 * and bumps meta 'vector.generation'; a changed status or kind of a
	 * record with a vector bumps 'vector.labels'. The in-memory index
	 * (vector.c) watches both counters.
	 */
	"CREATE TABLE vectors ("
	" rid INTEGER PRIMARY KEY,"
	" v BLOB NOT NULL);"
	"CREATE TRIGGER vectors_ad AFTER DELETE ON records"
	" WHEN EXISTS (SELECT 1 FROM vectors WHERE rid = old.rid) BEGIN"
	" DELETE FROM vectors WHERE rid = old.rid;"
	" UPDATE meta SET v = CAST(v AS INTEGER) + 1"
	"  WHERE k = 'vector.generation'; END;"
	"CREATE TRIGGER vectors_au AFTER UPDATE OF title, body ON records"
	" WHEN (old.title IS NOT new.title OR old.body IS NOT new.body)"
	"  AND EXISTS (SELECT 1 FROM vectors WHERE rid = old.rid) BEGIN"
	" DELETE FROM vectors WHERE rid = old.rid;"
	" UPDATE meta SET v = CAST(v AS INTEGER) + 1"
	"  WHERE k = 'vector.generation'; END;"
	"CREATE TRIGGER vectors_al AFTER UPDATE OF status, kind ON records"
	" WHEN (old.status IS NOT new.status OR old.kind IS NOT new.kind)"
	"  AND EXISTS (SELECT 1 FROM vectors WHERE rid = new.rid) BEGIN"
	" UPDATE meta SET v = CAST(v AS INTEGER) + 1"
	"  WHERE k = 'vector.labels'; END;",

	/*
	 * 5: the records' revision, meta 'records.revision' (its row: see
	 * migrate()), moved by one in every transaction that changed a
	 * record other than in its last_seen (rev_hook, rev_bump). A receipt
	 * names it (src/receipt.c). Reading count(*) and max(updated) instead
	 * walked every record on every recall: a quarter of a 10k-record hook
	 * call's instructions, and most of the store's pages faulted in.
	 * Triggers counting each row were tried: a record's INSERT then writes
	 * two tables, needs a statement journal, and FTS5 flushes its pending
	 * terms at every statement (bench/recall_bench.c load: 3,300 -> 700
	 * records/s).
	 */
	"",

	/*
	 * 6: the repository files a workspace record refers to and their Git
	 * blob ids when it was written, seeded or verified (src/drift.h);
	 * seen_blob and commits keep what `cairn check` learnt from git for
	 * the hook, which never runs it.
	 */
	"CREATE TABLE refs ("
	" record_id TEXT NOT NULL REFERENCES records(id) ON DELETE CASCADE,"
	" path TEXT NOT NULL,"
	" blob TEXT NOT NULL,"
	" commit_id TEXT NOT NULL DEFAULT '',"
	" recorded TEXT NOT NULL,"
	" how TEXT NOT NULL CHECK (how IN ('write','verify')),"
	" seen_blob TEXT, commits INTEGER,"
	" PRIMARY KEY (record_id, path));",

	/*
	 * 7: team sync (src/ingest/sync.c, docs/TEAM.md): for each server (its
	 * cairn.meta server_id) and record, the server version this copy is
	 * based on and a fingerprint of the record as last synced; a record
	 * whose fingerprint differs is unsynced. No trigger on records: the
	 * write path pays nothing, sync compares.
	 */
	"CREATE TABLE sync_state ("
	" server TEXT NOT NULL,"
	" record_id TEXT NOT NULL,"
	" ver INTEGER NOT NULL,"
	" state TEXT NOT NULL,"
	" PRIMARY KEY (server, record_id));",

	/*
	 * 8: the machine scope: a workspace-store record true only
	 * on this machine (a capability proved here), which team sync keeps
	 * local unless asked (cairn sync --include-machine). Migration 1's
	 * CHECK (scope IN ('workspace','global')) gains 'machine' in place
	 * (widen_scope): SQLite's documented way to relax a CHECK, which no
	 * stored row can fail. Rebuilding the table instead would move every
	 * rid under FTS5's external content and the vectors, and would need
	 * foreign keys off, which cannot change inside a transaction.
	 */
	"",
};

#define SCOPE_CHECK_OLD "CHECK (scope IN ('workspace','global'))"
#define SCOPE_CHECK_NEW "CHECK (scope IN ('workspace','global','machine'))"

static int pragma_int(struct cairn_db *db, const char *schema,
		      const char *name, int *out)
{
	char sql[64];
	sqlite3_stmt *st = NULL;
	int src;

	snprintf(sql, sizeof(sql), "PRAGMA %s.%s", schema, name);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_step(st);
	if (src != SQLITE_ROW) {
		sqlite3_finalize(st);
		return store_sql_error(db, src, "reading schema version");
	}
	*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return CAIRN_OK;
}

static int user_version(struct cairn_db *db, const char *schema, int *out)
{
	return pragma_int(db, schema, "user_version", out);
}

/*
 * Migration 8: the records table's scope CHECK gains 'machine', in
 * schema's sqlite_master, inside the migration's transaction. The steps
 * are those of https://sqlite.org/lang_altertable.html ("making other
 * kinds of table schema changes": removing or relaxing a CHECK): with
 * writable_schema on, rewrite the CREATE TABLE text, then bump
 * schema_version so that every connection reparses it.
 */
static int widen_scope(struct cairn_db *db, const char *schema)
{
	char sql[320];
	sqlite3_stmt *st = NULL;
	int ver = 0, rc, src, n = 0;

	rc = pragma_int(db, schema, "schema_version", &ver);
	if (rc)
		return rc;
	rc = store_exec(db, "PRAGMA writable_schema=ON", "migrating the store");
	if (rc)
		return rc;
	snprintf(sql, sizeof(sql),
		 "UPDATE %s.sqlite_master SET sql = replace(sql, ?1, ?2) "
		 "WHERE type = 'table' AND name = 'records' AND "
		 "instr(sql, ?1) > 0",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, SCOPE_CHECK_OLD, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, SCOPE_CHECK_NEW, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
		n = sqlite3_changes(db->sql);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "migrating the store");
	if (rc == CAIRN_OK && n == 0) {
		/* widened already (a store whose user_version was put back) */
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM %s.sqlite_master WHERE type = "
			 "'table' AND name = 'records' AND instr(sql, ?1) > 0",
			 schema);
		src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_text(st, 1, SCOPE_CHECK_NEW, -1,
					  SQLITE_STATIC);
			src = sqlite3_step(st);
		}
		n = src == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
		sqlite3_finalize(st);
		if (n != 1)
			rc = store_error(db, CAIRN_CORRUPT,
					 "store '%s': the records table has "
					 "no scope CHECK of migration 1 to "
					 "widen",
					 schema);
		n = 0;
	}
	if (rc == CAIRN_OK && n == 1) {
		snprintf(sql, sizeof(sql), "PRAGMA %s.schema_version=%d",
			 schema, ver + 1);
		rc = store_exec(db, sql, "migrating the store");
	}
	/* off again whatever happened: the caller rolls back on an error */
	sqlite3_exec(db->sql, "PRAGMA writable_schema=OFF", NULL, NULL, NULL);
	return rc;
}

/* ------------------------------------------------------------ own objects */

/* The tables FTS5 makes for records_fts (content='records': no _content). */
static const char *const fts_shadow[] = {
	"records_fts_data", "records_fts_idx", "records_fts_docsize",
	"records_fts_config",
};

/* The tables SQLite itself makes (ANALYZE, AUTOINCREMENT): data only. */
static const char *const sqlite_own[] = {
	"sqlite_stat1", "sqlite_stat4", "sqlite_sequence",
};

static int in_list(const char *const *list, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return 1;
	return 0;
}

/*
 * 1 when sql is one whole statement of a migration: SQLite keeps the text
 * of a CREATE as written (less a schema qualifier and IF NOT EXISTS, which
 * the migrations use nowhere now), so a statement cairn ran is found
 * verbatim, starting a migration or after a ';', and ending one or before
 * a ';'. The records table's scope CHECK is compared as migration 1 wrote
 * it (widen_scope rewrote it in place).
 */
static int migration_statement(const char *sql, int is_records)
{
	char buf[2048];
	const char *want = sql;
	size_t i, n;

	if (is_records) {
		const char *at = strstr(sql, SCOPE_CHECK_NEW);

		if (at && strlen(sql) - strlen(SCOPE_CHECK_NEW) +
				  strlen(SCOPE_CHECK_OLD) < sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - sql),
				 sql, SCOPE_CHECK_OLD,
				 at + strlen(SCOPE_CHECK_NEW));
			want = buf;
		}
	}
	n = strlen(want);
	if (n == 0)
		return 0;
	for (i = 0; i < ARRAY_SIZE(migrations); i++) {
		const char *m = migrations[i], *p = m;

		while ((p = strstr(p, want)) != NULL) {
			const char *b = p;

			while (b > m && (b[-1] == ' ' || b[-1] == '\n'))
				b--;
			if ((b == m || b[-1] == ';') &&
			    (p[n] == '\0' || p[n] == ';'))
				return 1;
			p++;
		}
	}
	return 0;
}

/*
 * Issue 31: a store is only opened when every object in its schema is one
 * cairn made. A .cairn/cairn.db committed to a repository travels with
 * every clone, and a trigger planted in it (AFTER INSERT ON records ...
 * SET status='accepted', origin='human') would run inside every write of
 * every agent. Tables, indexes, views and triggers are compared with the
 * statements of the migrations above; FTS5's shadow tables of
 * records_fts, SQLite's own statistics tables and the automatic indexes
 * of UNIQUE and PRIMARY KEY constraints are accepted by name, as they hold
 * no code. Runs before any migration step, so nothing planted fires.
 */
static int own_objects(struct cairn_db *db, const char *schema)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	int src, rc = CAIRN_OK;

	snprintf(sql, sizeof(sql),
		 "SELECT type, name, tbl_name, sql FROM %s.sqlite_master "
		 "ORDER BY rowid",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading the store's schema");
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *tbl = (const char *)sqlite3_column_text(st, 2);
		const char *text = (const char *)sqlite3_column_text(st, 3);
		int ok;

		if (!type || !name)
			continue; /* SQLite refuses such a schema itself */
		if (text)
			ok = migration_statement(text,
						 strcmp(type, "table") == 0 &&
							 strcmp(name,
								"records") == 0);
		else /* an automatic index: a constraint of one of ours */
			ok = strcmp(type, "index") == 0 && tbl &&
			     strncmp(name, "sqlite_autoindex_", 17) == 0;
		if (!ok && strcmp(type, "table") == 0 &&
		    (in_list(fts_shadow, ARRAY_SIZE(fts_shadow), name) ||
		     in_list(sqlite_own, ARRAY_SIZE(sqlite_own), name)))
			ok = 1;
#ifdef CAIRN_MUTATE_TRUST_SCHEMA
		ok = 1; /* negative control: whatever the store holds */
#endif
		if (!ok) {
			int main_db = strcmp(schema, "main") == 0;

			rc = store_error(db, CAIRN_CORRUPT,
					 "store '%s/%s' holds %s '%.100s' that "
					 "cairn did not create: refused (a "
					 "store copied from elsewhere, e.g. "
					 "committed to a repository, can run "
					 "planted code; move the file away and "
					 "run 'cairn init')",
					 main_db ? db->dir : db->global_dir,
					 main_db ? "cairn.db" : "global.db",
					 type, name);
			break;
		}
	}
	if (rc == CAIRN_OK && src != SQLITE_DONE)
		rc = store_sql_error(db, src, "reading the store's schema");
	sqlite3_finalize(st);
	return rc;
}

/*
 * Bring one schema ("main" or "global") to STORE_SCHEMA_VERSION. The
 * migration SQL is written unqualified; for "global" it runs with the
 * global database as the only place those names can resolve to, by
 * prefixing "global." to CREATE statements.
 */
int store_migrate(struct cairn_db *db, const char *schema)
{
	struct sbuf sql = SBUF_INIT;
	int version, rc, v, nested;

	rc = user_version(db, schema, &version);
	if (rc)
		return rc;
	if (version > STORE_SCHEMA_VERSION)
		return store_error(db, CAIRN_MISMATCH,
				   "store '%s' has schema version %d, newer "
				   "than this cairn (%d): upgrade cairn",
				   schema, version, STORE_SCHEMA_VERSION);
	rc = own_objects(db, schema);
	if (rc)
		return rc;
	if (version == STORE_SCHEMA_VERSION)
		return CAIRN_OK;
	/*
	 * Inside an open transaction (the global store attached by the first
	 * global record of a batch: cairn import) the migration is a
	 * savepoint of it, and goes or stays with it.
	 */
	nested = !sqlite3_get_autocommit(db->sql);
	rc = store_exec(db, nested ? "SAVEPOINT migrate" : "BEGIN IMMEDIATE",
		  "migrating the store");
	if (rc)
		return rc;
	/* re-read under the write lock: another process may have migrated */
	rc = user_version(db, schema, &version);
	for (v = version; rc == CAIRN_OK && v < STORE_SCHEMA_VERSION; v++) {
		const char *p = migrations[v];

		if (v + 1 == 8) { /* the machine scope (migration 8) */
			rc = widen_scope(db, schema);
			if (rc)
				break;
		}
		sbuf_reset(&sql);
		if (strcmp(schema, "main") == 0) {
			sbuf_adds(&sql, p);
		} else {
			/* qualify "CREATE [VIRTUAL ]TABLE|INDEX|TRIGGER name" */
			while (*p) {
				const char *c = strstr(p, "CREATE ");
				const char *name;

				if (!c) {
					sbuf_adds(&sql, p);
					break;
				}
				name = c + 7;
				if (strncmp(name, "VIRTUAL ", 8) == 0)
					name += 8;
				name = strchr(name, ' ');
				if (!name) {
					sbuf_adds(&sql, p);
					break;
				}
				name++;
				if (strncmp(name, "IF NOT EXISTS ", 14) == 0)
					name += 14; /* the name follows it */
				sbuf_add(&sql, p, (size_t)(name - p));
				sbuf_addf(&sql, "%s.", schema);
				p = name;
			}
		}
		if (v + 1 == 5) /* the revision's row (migration 5) */
			sbuf_addf(&sql,
				  ";INSERT OR IGNORE INTO %s.meta (k, v) "
				  "VALUES ('" STORE_META_REVISION "', '0')",
				  schema);
		sbuf_addf(&sql, ";PRAGMA %s.user_version=%d;", schema, v + 1);
		if (sql.err)
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
		else
			rc = store_exec(db, sql.buf, "migrating the store");
	}
	sbuf_release(&sql);
	if (rc) {
		sqlite3_exec(db->sql,
			     nested ? "ROLLBACK TO migrate; RELEASE migrate"
				    : "ROLLBACK",
			     NULL, NULL, NULL);
		return rc;
	}
	return store_exec(db, nested ? "RELEASE migrate" : "COMMIT",
		    "migrating the store");
}

