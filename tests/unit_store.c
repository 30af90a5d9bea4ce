/*
 * unit_store.c -- the record store through the public API (SPEC 3, 4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "cairn.h"
#include "internal.h"
#include "store.h"
#include "test.h"

static char *write_simple(cairn_db *db, const char *kind, const char *status,
			  const char *origin, const char *key, const char *body)
{
	return test_write_record(db, kind, status, origin, key, NULL, body);
}

/* EVIDENCE-OF: issue 2 -- database, -wal and -shm files are 0600 */
/* PRAGMA mmap_size of db's main schema, or -1. */
static long long mmap_size(cairn_db *db)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;

	if (sqlite3_prepare_v2(db->sql, "PRAGMA main.mmap_size", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void test_file_modes(void)
{
	cairn_db *db = test_store("modes", NULL, 0);
	char path[600];
	struct stat st;
	char *id = write_simple(db, "fact", NULL, NULL, NULL, "mode check");
	const char *suffix[3] = { "", "-wal", "-shm" };
	int i;

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/modes/.cairn/cairn.db%s",
			 test_tmpdir, suffix[i]);
		CHECK_MSG(stat(path, &st) == 0, "missing %s", path);
		CHECK_MSG((st.st_mode & 0777) == 0600, "%s has mode %o", path,
			  st.st_mode & 0777);
	}
	snprintf(path, sizeof(path), "%s/modes/.cairn", test_tmpdir);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
	cairn_free(id);
	cairn_db_close(db);
}

/* EVIDENCE-OF: SPEC 4.5 -- agent writes are candidates whatever they ask */
static void test_gate(void)
{
	cairn_db *db = test_store("gate", NULL, 0);
	const char *origins[3] = { "agent", "capture", "reflection" };
	cairn_record *r = NULL;
	int i;

	for (i = 0; i < 3; i++) {
		char *id = write_simple(db, "decision", "accepted", origins[i],
					NULL, "we will use Rust");

		CHECK(cairn_record_get(db, id, &r) == CAIRN_OK);
		CHECK_STR(r->status, "candidate");
		CHECK(r->confidence < 1.0);
		cairn_record_free(r);
		r = NULL;
		cairn_free(id);
	}
	cairn_db_close(db);
}

/* EVIDENCE-OF: SPEC 3 -- unknown statuses are errors, never coerced */
static void test_unknown_values(void)
{
	cairn_db *db = test_store("unknown", NULL, 0);
	cairn_record r;
	cairn_record **v = NULL;
	cairn_filter f;
	size_t n = 0;

	memset(&r, 0, sizeof(r));
	r.body = (char *)"x";
	r.confidence = -1;
	r.status = (char *)"Proposed";
	CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_INVALID);
	CHECK(strstr(cairn_errmsg(db), "unknown status 'Proposed'") != NULL);
	r.status = NULL;
	r.kind = (char *)"memo";
	CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_INVALID);
	r.kind = NULL;
	r.origin = (char *)"robot";
	CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_INVALID);
	r.origin = NULL;
	r.confidence = 2;
	CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_INVALID);
	r.confidence = -1;
	r.body = (char *)"bad \xff utf8";
	CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_INVALID);
	CHECK(strstr(cairn_errmsg(db), "at byte 4") != NULL);
	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	CHECK(cairn_record_list(db, &f, &v, &n) == CAIRN_OK);
	CHECK_INT(n, 0);
	cairn_record_list_free(v, n);
	cairn_db_close(db);
}

/* EVIDENCE-OF: SPEC 3 -- default filters return accepted + unverified only */
static void test_default_filter(void)
{
	cairn_db *db = test_store("filter", NULL, 0);
	const char *st[] = { "accepted", "unverified", "stale", "superseded",
			     "historical", "false", "retired", "rejected",
			     "candidate" };
	cairn_record **v = NULL;
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(st); i++)
		cairn_free(write_simple(db, "fact", st[i], NULL, NULL, st[i]));
	CHECK(cairn_record_list(db, NULL, &v, &n) == CAIRN_OK);
	CHECK_INT(n, 2);
	for (i = 0; i < n; i++)
		CHECK(strcmp(v[i]->status, "accepted") == 0 ||
		      strcmp(v[i]->status, "unverified") == 0);
	cairn_record_list_free(v, n);
	cairn_db_close(db);
}

/* EVIDENCE-OF: issue 2 -- UNIQUE(scope, key) with revisions */
static void test_key_revisions(void)
{
	cairn_db *db = test_store("keys", NULL, 0);
	cairn_record **v = NULL;
	char *a, *b;
	size_t n = 0;

	a = write_simple(db, "fact", NULL, NULL, "k", "one");
	b = write_simple(db, "fact", NULL, NULL, "k", "two");
	CHECK_STR(a, b);
	CHECK(cairn_record_history(db, "k", NULL, &v, &n) == CAIRN_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(v[0]->body, "two");
		CHECK_STR(v[1]->body, "one");
		CHECK_INT(v[0]->revision, 2);
	}
	cairn_record_list_free(v, n);
	cairn_free(a);
	cairn_free(b);
	cairn_db_close(db);
}

/* EVIDENCE-OF: SPEC 4.6 -- a refused secret leaves no trace in the store */
static void test_secret_refused(void)
{
	cairn_db *db = test_store("secret", NULL, 0);
	const char *secret = "ghp_Zq8xW2vR4tY6uI8oP0aS2dF4gH6jK8lL0zX2";
	char body[256], path[600];
	char *data = NULL, err[128];
	size_t len = 0;
	cairn_record r;
	int rc;

	snprintf(body, sizeof(body), "the token is %s ok", secret);
	memset(&r, 0, sizeof(r));
	r.body = body;
	r.confidence = -1;
	rc = cairn_record_write(db, &r, 0, NULL);
	CHECK_INT(rc, CAIRN_SECRET);
	CHECK(strstr(cairn_errmsg(db), secret) == NULL);
	cairn_db_close(db);
	snprintf(path, sizeof(path), "%s/secret/.cairn/cairn.db", test_tmpdir);
	CHECK(util_read_file(path, 1 << 26, &data, &len, err, sizeof(err)) ==
	      CAIRN_OK);
	CHECK(data && memmem(data, len, "ghp_Zq8x", 8) == NULL);
	cairn_free(data);
}

/*
 * Fault injection: fail the N-th allocation of a write; the call either
 * succeeds or fails cleanly (no crash, no leak: ASan checks), and the store
 * stays consistent.
 */
static void test_alloc_failures(void)
{
	cairn_db *db = test_store("faults", NULL, 0);
	cairn_record r;
	long n;
	int ok = 0, failed = 0;

	memset(&r, 0, sizeof(r));
	r.body = (char *)"fault injected write";
	r.key = (char *)"fault:key";
	r.confidence = -1;
	for (n = 1; n <= 40; n++) {
		char *id = NULL;
		int rc;

		util_fail_alloc_after(n);
		rc = cairn_record_write(db, &r, 0, &id);
		util_fail_alloc_after(0);
		if (rc == CAIRN_OK)
			ok++;
		else
			failed++;
		CHECK(rc == CAIRN_OK || rc == CAIRN_NOMEM || rc == CAIRN_ERROR);
		cairn_free(id);
	}
	CHECK(ok > 0);
	CHECK(failed > 0);
	CHECK_INT(cairn_check_integrity(db), CAIRN_OK);
	cairn_db_close(db);
}

/*
 * EVIDENCE-OF: issue 2 -- forward migrations: a store left at schema 2
 * (before the key index) is brought to the current schema on open, and a
 * store from a newer cairn is refused, not damaged.
 */
static void test_forward_migration(void)
{
	cairn_db *db = test_store("migrate", NULL, 0);
	char path[600], *id = NULL;
	sqlite3 *raw = NULL;
	sqlite3_stmt *st = NULL;
	cairn_open_opts o;
	int version = -1, has_index = 0;

	id = write_simple(db, "fact", NULL, NULL, "k:1", "kept across migration");
	cairn_db_close(db);
	snprintf(path, sizeof(path), "%s/migrate/.cairn/cairn.db", test_tmpdir);
	CHECK(sqlite3_open(path, &raw) == SQLITE_OK);
	/* back to what a schema-2 store had: no key index, no vector table,
	 * no drift references (v6), no sync state (v7) */
	CHECK(sqlite3_exec(raw,
			   "DROP TRIGGER vectors_ad; DROP TRIGGER vectors_au;"
			   "DROP TRIGGER vectors_al; DROP TABLE vectors;"
			   "DROP TABLE refs; DROP TABLE sync_state;"
			   "DROP INDEX records_key; DELETE FROM meta WHERE k = '"
			   STORE_META_REVISION "'; PRAGMA user_version=2",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(raw);

	snprintf(path, sizeof(path), "%s/migrate/.cairn", test_tmpdir);
	memset(&o, 0, sizeof(o));
	o.no_global = 1;
	db = NULL;
	CHECK_INT(cairn_db_open(path, &o, &db), CAIRN_OK);
	cairn_db_close(db);
	snprintf(path, sizeof(path), "%s/migrate/.cairn/cairn.db", test_tmpdir);
	CHECK(sqlite3_open(path, &raw) == SQLITE_OK);
	if (sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(raw, "SELECT count(*) FROM sqlite_master WHERE "
				    "name IN ('records_key', 'vectors')",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		has_index = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	CHECK_INT(version, STORE_SCHEMA_VERSION);
	CHECK_INT(has_index, 2); /* the key index (v3) and the vector table (v4) */
	/* the revision's row (v5) */
	has_index = 0;
	if (sqlite3_prepare_v2(raw, "SELECT count(*) FROM meta WHERE k = '"
				    STORE_META_REVISION "'",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		has_index = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	CHECK_INT(has_index, 1);
	/* a newer store is refused with CAIRN_MISMATCH */
	CHECK(sqlite3_exec(raw, "PRAGMA user_version=99", NULL, NULL, NULL) ==
	      SQLITE_OK);
	sqlite3_close(raw);
	snprintf(path, sizeof(path), "%s/migrate/.cairn", test_tmpdir);
	db = NULL;
	CHECK_INT(cairn_db_open(path, &o, &db), CAIRN_MISMATCH);
	CHECK(strstr(cairn_errmsg(db), "newer") != NULL);
	cairn_db_close(db);
	cairn_free(id);
}

/*
 * A new global store is migrated like a workspace one: every step is
 * qualified with the "global." schema (a CREATE TABLE IF NOT EXISTS once
 * became "global.IF NOT EXISTS refs", a syntax error, and no global
 * record could be written; migrate() now skips the clause).
 */
static void test_global_migration(void)
{
	char path[600], gdir[600];
	cairn_open_opts o;
	cairn_record r;
	cairn_db *db = NULL;
	char *id = NULL;

	snprintf(path, sizeof(path), "%s/gmig/.cairn", test_tmpdir);
	snprintf(gdir, sizeof(gdir), "%s/gmig-global", test_tmpdir);
	memset(&o, 0, sizeof(o));
	o.create = 1;
	o.global_dir = gdir;
	CHECK_INT(cairn_db_open(path, &o, &db), CAIRN_OK);
	memset(&r, 0, sizeof(r));
	r.scope = (char *)"global";
	r.body = (char *)"a global fact";
	r.confidence = -1;
	CHECK_INT(cairn_record_write(db, &r, 0, &id), CAIRN_OK);
	CHECK_MSG(id != NULL, "%s", cairn_errmsg(db));
	cairn_free(id);
	cairn_db_close(db);
}

/*
 * EVIDENCE-OF: issue 15 -- the public calls the faces use instead of SQL
 * on db->sql: cairn_record_find_key is a lookup only (last_seen and a
 * stale status stay), cairn_db_spool_receipts says what it was, and
 * cairn_db_dir names the store directory.
 */
static void test_face_calls(void)
{
	cairn_db *db = test_store("faces", NULL, 0);
	char *id = write_simple(db, "fact", "stale", NULL, "face:k", "kept stale");
	cairn_record *r = NULL;
	char want[600];

	CHECK_INT(cairn_record_find_key(db, "face:k", NULL, &r), CAIRN_OK);
	if (r) {
		CHECK_STR(r->id, id);
		CHECK_STR(r->status, "stale");
		CHECK(r->last_seen == NULL);
	}
	cairn_record_free(r);
	r = NULL;
	CHECK_INT(cairn_record_get(db, id, &r), CAIRN_OK);
	CHECK(r && r->last_seen == NULL && strcmp(r->status, "stale") == 0);
	cairn_record_free(r);
	r = NULL;
	CHECK_INT(cairn_record_find_key(db, "face:none", NULL, &r),
		  CAIRN_NOTFOUND);
	CHECK_INT(cairn_record_find_key(db, "face:k", "global", &r),
		  CAIRN_NOTFOUND);
	CHECK_INT(cairn_record_find_key(db, "face:k", "elsewhere", &r),
		  CAIRN_INVALID);
	CHECK_INT(cairn_db_spool_receipts(db, 1), 0);
	CHECK_INT(cairn_db_spool_receipts(db, 0), 1);
	snprintf(want, sizeof(want), "%s/faces/.cairn", test_tmpdir);
	CHECK_STR(cairn_db_dir(db), want);
	/* cairn_db_map_files: reads through the map from then on (SQLite's
	 * default, which the check needs to see move, is 0) */
	CHECK_INT(mmap_size(db), 0);
	cairn_db_map_files(db);
	CHECK(mmap_size(db) > 0);
	cairn_db_short_lived(db);
	CHECK_INT(cairn_db_spool_receipts(db, 0), 1);
	cairn_db_checkpoint(db);
	cairn_free(id);
	cairn_db_close(db);
}

void unit_store(void)
{
	RUN(test_global_migration);
	RUN(test_forward_migration);
	RUN(test_file_modes);
	RUN(test_gate);
	RUN(test_unknown_values);
	RUN(test_default_filter);
	RUN(test_key_revisions);
	RUN(test_secret_refused);
	RUN(test_alloc_failures);
	RUN(test_face_calls);
}
