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
#include "words.h"

static char *write_simple(cairn_db *db, const char *kind, const char *status,
			  const char *origin, const char *key, const char *body)
{
	return test_write_record(db, kind, status, origin, key, NULL, body);
}

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

/* EVIDENCE-OF: database, -wal and -shm files are 0600 */
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

/*
 * EVIDENCE-OF: a {0}-initialised cairn_record is a complete input: its
 * confidence 0 means the default (1.0 human, 0.5 agent), not 0.00; a
 * rewrite of a key and a revise with confidence 0 keep the record's
 * (issue 33, item 5; include/cairn.h)
 */
static void test_zero_confidence_default(void)
{
	cairn_db *db = test_store("zeroconf", NULL, 0);
	cairn_record r = { 0 }, ch = { 0 }, *got = NULL;
	char *id = NULL, *aid = NULL;

	r.kind = (char *)"fact";
	r.key = (char *)"zero:conf";
	r.body = (char *)"the cache holds 10 GB";
	CHECK_INT(cairn_record_write(db, &r, 0, &id), CAIRN_OK);
	CHECK(cairn_record_get(db, id, &got) == CAIRN_OK);
	if (got)
		CHECK(got->confidence == 1.0);
	cairn_record_free(got);
	got = NULL;
	/* an agent's {0} write: the agent default */
	r.key = NULL;
	r.origin = (char *)"agent";
	r.body = (char *)"the cache may hold 20 GB";
	CHECK_INT(cairn_record_write(db, &r, 0, &aid), CAIRN_OK);
	CHECK(cairn_record_get(db, aid, &got) == CAIRN_OK);
	if (got)
		CHECK(got->confidence == 0.5);
	cairn_record_free(got);
	got = NULL;
	/* a set confidence, then a rewrite and a revise that leave it 0 */
	r.origin = NULL;
	r.key = (char *)"zero:conf";
	r.confidence = 0.7;
	r.body = (char *)"the cache holds 12 GB";
	CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_OK);
	r.confidence = 0;
	r.body = (char *)"the cache holds 14 GB";
	CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_OK);
	ch.body = (char *)"the cache holds 16 GB";
	CHECK_INT(cairn_record_revise(db, id, &ch, 0), CAIRN_OK);
	CHECK(cairn_record_get(db, id, &got) == CAIRN_OK);
	if (got) {
		CHECK(got->confidence == 0.7);
		CHECK_STR(got->body, "the cache holds 16 GB");
	}
	cairn_record_free(got);
	cairn_free(id);
	cairn_free(aid);
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

/* EVIDENCE-OF: UNIQUE(scope, key) with revisions */
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
 * EVIDENCE-OF: forward migrations: a store left at schema 2
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
 * EVIDENCE-OF: the public calls the faces use instead of SQL
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
	/* what the faces report with instead of the store's internals */
	CHECK_INT(cairn_db_fail(db, CAIRN_INVALID, "bad %s %d", "x", 3),
		  CAIRN_INVALID);
	CHECK_STR(cairn_errmsg(db), "bad x 3");
	CHECK_INT(cairn_db_fail(NULL, CAIRN_NOMEM, "none"), CAIRN_NOMEM);
	{
		cairn_record fr;
		char why[128] = "";

		memset(&fr, 0, sizeof(fr));
		fr.origin = (char *)"human";
		CHECK_INT(cairn_record_file_backed(&fr, why, sizeof(why)), 0);
		CHECK_STR(why, "");
		fr.origin = (char *)"file";
		fr.src_path = (char *)"docs/adr/0001-x.md";
		fr.src_line = 7;
		CHECK_INT(cairn_record_file_backed(&fr, why, sizeof(why)), 1);
		CHECK_STR(why, "file-backed: edit docs/adr/0001-x.md:7");
		CHECK_INT(cairn_record_file_backed(&fr, NULL, 0), 1);
	}
	cairn_free(id);
	cairn_db_close(db);
}

/*
 * the words of `CHECK (COL IN ('a','b',...))` in the records table's SQL,
 * as one string "a b ..." (empty when the column has no such CHECK)
 */
static void check_words(const char *sql, const char *col, char *out,
			size_t cap)
{
	char pat[64];
	const char *p, *end;
	size_t n = 0;

	out[0] = '\0';
	snprintf(pat, sizeof(pat), "CHECK (%s IN (", col);
	p = strstr(sql, pat);
	if (!p)
		return;
	p += strlen(pat);
	end = strchr(p, ')');
	for (; p && p < end; p++) {
		const char *q;

		if (*p != '\'')
			continue;
		q = strchr(p + 1, '\'');
		if (!q || q > end || n + (size_t)(q - p) + 1 >= cap)
			break;
		if (n)
			out[n++] = ' ';
		memcpy(out + n, p + 1, (size_t)(q - p - 1));
		n += (size_t)(q - p - 1);
		out[n] = '\0';
		p = q;
	}
}

/*
 * EVIDENCE-OF: the spec's words are defined once (words.h) -- the SQL
 * CHECKs of the shipped migrations name exactly the kinds, statuses,
 * scopes and origins the store validates, and the manual page lists every kind and
 * status: a word added to words.h without a migration and the docs fails
 */
static void test_words_one_table(void)
{
	static const char *const kinds[] = { WORDS_ARRAY(CAIRN_KINDS) };
	static const char *const statuses[] = { WORDS_ARRAY(CAIRN_STATUSES) };
	cairn_db *db = test_store("words", NULL, 0);
	sqlite3_stmt *st = NULL;
	char got[512], *man = NULL, err[256];
	size_t i, len = 0;

	CHECK_INT(sqlite3_prepare_v2(db->sql,
				     "SELECT sql FROM main.sqlite_master "
				     "WHERE name = 'records'",
				     -1, &st, NULL),
		  SQLITE_OK);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	{
		const char *sql = (const char *)sqlite3_column_text(st, 0);

		check_words(sql, "kind", got, sizeof(got));
		CHECK_STR(got, WORDS_SPACED(CAIRN_KINDS) + 1);
		check_words(sql, "status", got, sizeof(got));
		CHECK_STR(got, WORDS_SPACED(CAIRN_STATUSES) + 1);
		check_words(sql, "origin", got, sizeof(got));
		CHECK_STR(got, WORDS_SPACED(CAIRN_ORIGINS) + 1);
		/* (the scope's CHECK is the one migration 8 rewrote) */
		check_words(sql, "scope", got, sizeof(got));
		CHECK_STR(got, WORDS_SPACED(CAIRN_SCOPES) + 1);
	}
	sqlite3_finalize(st);
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		CHECK(cairn_kind_valid(kinds[i]));
	for (i = 0; i < ARRAY_SIZE(statuses); i++)
		CHECK(cairn_status_valid(statuses[i]));
	CHECK(!cairn_kind_valid("memo") && !cairn_status_valid("done"));
	/* the manual page (run from the repository root) */
	CHECK_INT(util_read_file("docs/cairn.1", 1 << 22, &man, &len, err,
				 sizeof(err)),
		  0);
	for (i = 0; man && i < ARRAY_SIZE(kinds); i++)
		CHECK_MSG(strstr(man, kinds[i]) != NULL,
			  "docs/cairn.1 never names kind %s", kinds[i]);
	for (i = 0; man && i < ARRAY_SIZE(statuses); i++)
		CHECK_MSG(strstr(man, statuses[i]) != NULL,
			  "docs/cairn.1 never names status %s", statuses[i]);
	cairn_free(man);
	cairn_db_close(db);
}

/*
 * EVIDENCE-OF: every error code of cairn.h has its own name -- the codes
 * are read from the header itself, so a code appended without a name in
 * cairn_errstr's table fails here
 */
static void test_errstr_names(void)
{
	char *h = NULL, err[256];
	const char *p = NULL, *end = NULL;
	size_t len = 0;
	int seen = 0;

	/* the block from "error codes" to cairn_errstr's declaration */
	CHECK_INT(util_read_file("include/cairn.h", 1 << 22, &h, &len, err,
				 sizeof(err)),
		  0);
	if (h && (p = strstr(h, "= error codes")) != NULL)
		end = strstr(p, "cairn_errstr");
	CHECK_MSG(p && end, "no error code block in include/cairn.h");
	for (; end && (p = strstr(p, "\n#define CAIRN_")) != NULL && p < end;
	     p++) {
		char name[64];
		int code;

		if (sscanf(p + 1, "#define %63s %d", name, &code) != 2)
			continue;
		seen++;
		CHECK_MSG(strcmp(cairn_errstr(code), "unknown error") != 0,
			  "%s (%d) has no name in cairn_errstr", name, code);
	}
	CHECK_MSG(seen >= 13, "only %d error codes found in cairn.h", seen);
	CHECK_STR(cairn_errstr(CAIRN_NOMEM), "out of memory");
	CHECK_STR(cairn_errstr(CAIRN_MISMATCH), "identity mismatch");
	CHECK_STR(cairn_errstr(-1), "unknown error");
	CHECK_STR(cairn_errstr(CAIRN_MISMATCH + 1), "unknown error");
	cairn_free(h);
}

/*
 * EVIDENCE-OF: the environment is read once, when the store opens (struct store_env,
 * docs/ARCHITECTURE.md "Environment"): what was set at the open reaches
 * the handle and its modules, a variable set or unset later does not, and
 * CAIRN_JIEBA_DICT reaches the store's tokenizer.
 */
static void test_env_at_open(void)
{
	char bad[600];
	cairn_record r;
	cairn_db *db;
	char *id = NULL;

	unsetenv("CAIRN_RERANK_MODEL");
	unsetenv("CAIRN_JIEBA_DICT");
	db = test_store("env-open", NULL, 0);
	CHECK(db && db->env.rerank_model == NULL);
	setenv("CAIRN_RERANK_MODEL", "none", 1);
	CHECK(db && db->env.rerank_model == NULL); /* set after the open */
	cairn_db_close(db);
	db = test_store("env-open", NULL, 0);
	CHECK_STR(db ? db->env.rerank_model : NULL, "none");
	unsetenv("CAIRN_RERANK_MODEL");
	CHECK_STR(db ? db->env.rerank_model : NULL, "none"); /* its copy */
	cairn_db_close(db);

	/* a missing dictionary named at the open fails the first write
	 * (the tokenizer opens then), though the variable is gone by then */
	snprintf(bad, sizeof(bad), "%s/no-such-dict.txt", test_tmpdir);
	setenv("CAIRN_JIEBA_DICT", bad, 1);
	db = test_store("env-jieba", NULL, 0);
	unsetenv("CAIRN_JIEBA_DICT");
	memset(&r, 0, sizeof(r));
	r.kind = (char *)"note";
	r.title = (char *)"数据";
	r.body = (char *)"数据库";
	r.confidence = -1;
	/* (FTS5 reports a tokenizer that cannot open as "SQL logic error",
	 * without the tokenizer's message) */
	CHECK(db && cairn_record_write(db, &r, 0, &id) != CAIRN_OK);
	cairn_free(id);
	id = NULL;
	cairn_db_close(db);
	/* negative control: opened without it, the same write succeeds */
	db = test_store("env-jieba", NULL, 0);
	CHECK_INT(db ? cairn_record_write(db, &r, 0, &id) : -1, CAIRN_OK);
	cairn_free(id);
	cairn_db_close(db);
}

/*
 * EVIDENCE-OF: the machine scope: a workspace-store record
 * true only here, its keys apart from the workspace's (UNIQUE(scope, key)),
 * found by scope, listed by scope.
 */
static void test_machine_scope(void)
{
	cairn_db *db = test_store("machine", NULL, 0);
	cairn_record in, *r = NULL, **v = NULL;
	cairn_filter f;
	char *mid = NULL, *wid = NULL, *again = NULL;
	size_t n = 0;

	memset(&in, 0, sizeof(in));
	in.kind = (char *)"capability";
	in.key = (char *)"gpu";
	in.scope = (char *)"machine";
	in.body = (char *)"CUDA 12 works on this machine";
	in.confidence = -1;
	CHECK_INT(cairn_record_write(db, &in, 0, &mid), CAIRN_OK);
	in.scope = (char *)"workspace";
	in.body = (char *)"the project needs a GPU for the bench";
	CHECK_INT(cairn_record_write(db, &in, 0, &wid), CAIRN_OK);
	CHECK(mid && wid && strcmp(mid, wid) != 0); /* one key per scope */
	/* rewriting the machine key revises the machine record only */
	in.scope = (char *)"machine";
	in.body = (char *)"CUDA 12.4 works on this machine";
	CHECK_INT(cairn_record_write(db, &in, 0, &again), CAIRN_OK);
	CHECK(again && strcmp(again, mid) == 0);
	CHECK_INT(cairn_record_find_key(db, "gpu", "machine", &r), CAIRN_OK);
	CHECK(r && strcmp(r->id, mid) == 0 && strcmp(r->scope, "machine") == 0 &&
	      r->revision == 2);
	cairn_record_free(r);
	r = NULL;
	CHECK_INT(cairn_record_find_key(db, "gpu", "workspace", &r), CAIRN_OK);
	CHECK(r && strcmp(r->id, wid) == 0 && r->revision == 1);
	cairn_record_free(r);
	r = NULL;
	/* no scope: the workspace's own first */
	CHECK_INT(cairn_record_read_key(db, "gpu", NULL, &r), CAIRN_OK);
	CHECK(r && strcmp(r->id, wid) == 0);
	cairn_record_free(r);
	r = NULL;
	memset(&f, 0, sizeof(f));
	f.scope = "machine";
	CHECK_INT(cairn_record_list(db, &f, &v, &n), CAIRN_OK);
	CHECK(n == 1 && strcmp(v[0]->id, mid) == 0);
	cairn_record_list_free(v, n);
	CHECK(cairn_scope_valid("machine") && !cairn_scope_valid("host"));
	in.scope = (char *)"host";
	CHECK_INT(cairn_record_write(db, &in, 0, NULL), CAIRN_INVALID);
	cairn_free(mid);
	cairn_free(wid);
	cairn_free(again);
	cairn_db_close(db);
}

static int raw_exec(sqlite3 *raw, const char *sql)
{
	return sqlite3_exec(raw, sql, NULL, NULL, NULL);
}

/*
 * EVIDENCE-OF: migration 8 widens a schema-7 store's scope
 * CHECK in place: before it a machine record cannot be stored (the
 * negative control), after it it can, the store is intact, and an unknown
 * scope is still refused by SQL.
 */
static void test_machine_migration(void)
{
	cairn_db *db = test_store("migrate8", NULL, 0);
	char path[600], *id = NULL, *mid = NULL;
	sqlite3 *raw = NULL;
	sqlite3_stmt *st = NULL;
	cairn_open_opts o;
	cairn_record in;
	int ver = 0;

	id = write_simple(db, "fact", NULL, NULL, "k:8", "kept across migration 8");
	cairn_db_close(db);
	snprintf(path, sizeof(path), "%s/migrate8/.cairn/cairn.db", test_tmpdir);
	CHECK(sqlite3_open(path, &raw) == SQLITE_OK);
	/* back to schema 7: migration 1's CHECK, as a schema-7 store has it */
	if (sqlite3_prepare_v2(raw, "PRAGMA schema_version", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		ver = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	CHECK_INT(raw_exec(raw, "PRAGMA writable_schema=ON"), SQLITE_OK);
	CHECK_INT(raw_exec(raw,
			   "UPDATE sqlite_master SET sql = replace(sql, "
			   "\"'workspace','global','machine'\", "
			   "\"'workspace','global'\") WHERE name = 'records'"),
		  SQLITE_OK);
	CHECK_INT(sqlite3_changes(raw), 1);
	{
		char sql[64];

		snprintf(sql, sizeof(sql), "PRAGMA schema_version=%d", ver + 1);
		CHECK_INT(raw_exec(raw, sql), SQLITE_OK);
	}
	CHECK_INT(raw_exec(raw, "PRAGMA writable_schema=OFF"), SQLITE_OK);
	sqlite3_close(raw);
	CHECK(sqlite3_open(path, &raw) == SQLITE_OK);
	CHECK_INT(raw_exec(raw, "PRAGMA user_version=7"), SQLITE_OK);
	/* (an UPDATE of scope: no trigger needs cairn's FTS5 tokenizer) */
	CHECK(raw_exec(raw, "UPDATE records SET scope = 'machine' WHERE key = "
			    "'k:8'") == SQLITE_CONSTRAINT);
	sqlite3_close(raw);

	snprintf(path, sizeof(path), "%s/migrate8/.cairn", test_tmpdir);
	memset(&o, 0, sizeof(o));
	o.no_global = 1;
	db = NULL;
	CHECK_INT(cairn_db_open(path, &o, &db), CAIRN_OK);
	memset(&in, 0, sizeof(in));
	in.kind = (char *)"capability";
	in.scope = (char *)"machine";
	in.body = (char *)"docker runs rootless here";
	in.confidence = -1;
	CHECK_INT(cairn_record_write(db, &in, 0, &mid), CAIRN_OK);
	CHECK_INT(cairn_check_integrity(db), CAIRN_OK);
	cairn_db_close(db);
	snprintf(path, sizeof(path), "%s/migrate8/.cairn/cairn.db", test_tmpdir);
	CHECK(sqlite3_open(path, &raw) == SQLITE_OK);
	ver = -1;
	if (sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		ver = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	CHECK_INT(ver, STORE_SCHEMA_VERSION);
	/* (an UPDATE of scope: no trigger needs cairn's FTS5 tokenizer) */
	CHECK(raw_exec(raw, "UPDATE records SET scope = 'host' WHERE key = "
			    "'k:8'") == SQLITE_CONSTRAINT);
	sqlite3_close(raw);
	cairn_free(id);
	cairn_free(mid);
}

/* A server's record for store_pull_record, texts borrowed. */
static void pulled(cairn_record *r, const char *id, const char *origin,
		   const char *status, const char *key, const char *body)
{
	memset(r, 0, sizeof(*r));
	r->id = (char *)id;
	r->kind = (char *)"fact";
	r->key = (char *)key;
	r->scope = (char *)"workspace";
	r->title = (char *)"pulled";
	r->body = (char *)body;
	r->status = (char *)status;
	r->confidence = 0.9;
	r->origin = (char *)origin;
	r->created = (char *)"2026-01-01T00:00:00Z";
	r->updated = (char *)"2026-01-02T00:00:00Z";
	r->revision = 1;
	r->hash = (char *)"h1";
}

/*
 * EVIDENCE-OF: what a team server sends is written by the
 * store, behind its rules: the secret filter on every field (the hash
 * too), never a file-backed record or another store's scope, the approval
 * gate (no approved_by: a candidate), a local key holder yields, a changed
 * text keeps its revision, and a pulled revision is checked the same way.
 */
static void test_pull_gate(void)
{
	cairn_db *db = test_store("pull", NULL, 0);
	struct store_pulled srv = { "team", "alice", NULL, NULL, 0 };
	struct store_pull_result res;
	cairn_record r, *got = NULL, **hist = NULL;
	char *local = NULL;
	size_t n = 0;

	CHECK_INT(store_tx_begin(db), CAIRN_OK);
	/* the gate: an agent's accepted record without approval */
	pulled(&r, "rp1", "agent", "accepted", NULL, "an agent's unapproved fact");
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res), CAIRN_OK);
	CHECK(res.gated == 1);
	CHECK_INT(store_find_one(db, "main", "id = ?1", "rp1", &got), CAIRN_OK);
	CHECK(got && strcmp(got->status, "candidate") == 0);
	cairn_record_free(got);
	got = NULL;
	/* approved on the server: it stands */
	srv.approved_by = "bob";
	pulled(&r, "rp2", "agent", "accepted", NULL, "an agent's approved fact");
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res), CAIRN_OK);
	CHECK(res.gated == 0);
	CHECK_INT(store_find_one(db, "main", "id = ?1", "rp2", &got), CAIRN_OK);
	CHECK(got && strcmp(got->status, "accepted") == 0);
	cairn_record_free(got);
	got = NULL;
	srv.approved_by = NULL;
	/* refused, nothing stored: a secret in the body, in the hash */
	pulled(&r, "rp3", "human", "accepted", NULL,
	       "key AKIAIOSFODNN7EXAMPLE here");
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_SECRET);
	pulled(&r, "rp3", "human", "accepted", NULL, "an innocent body");
	r.hash = (char *)"ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c";
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_SECRET);
	CHECK_INT(store_find_one(db, "main", "id = ?1", "rp3", &got),
		  CAIRN_NOTFOUND);
	/* a file-backed record, a global one, revision 0: not this store's */
	pulled(&r, "rp4", "file", "accepted", NULL, "from a file");
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_INVALID);
	pulled(&r, "rp4", "human", "accepted", NULL, "a global one");
	r.scope = (char *)"global";
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_INVALID);
	pulled(&r, "rp4", "human", "accepted", NULL, "revision zero");
	r.revision = 0;
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_INVALID);
	CHECK_INT(store_find_one(db, "main", "id = ?1", "rp4", &got),
		  CAIRN_NOTFOUND);
	CHECK_INT(store_tx_end(db, CAIRN_OK), CAIRN_OK);

	/* a seeded file's id, a date that is none, a link that is no id */
	CHECK_INT(store_tx_begin(db), CAIRN_OK);
	pulled(&r, "fdd91428605c86f0", "human", "accepted", NULL, "forged");
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_READONLY);
	pulled(&r, "rp6", "human", "accepted", NULL, "dated badly");
	r.created = (char *)"not-a-date";
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_INVALID);
	pulled(&r, "rp6", "human", "accepted", NULL, "dated badly");
	r.updated = (char *)"2099-99-99T99:99:99Z";
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_INVALID);
	pulled(&r, "rp6", "human", "superseded", NULL, "linked badly");
	r.superseded_by = (char *)"../../etc/passwd";
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res),
		  CAIRN_INVALID);
	CHECK_INT(store_find_one(db, "main", "id = ?1", "rp6", &got),
		  CAIRN_NOTFOUND);
	CHECK_INT(store_tx_end(db, CAIRN_OK), CAIRN_OK);

	/* a standing local holder keeps its key: the later one waits */
	local = write_simple(db, "fact", NULL, NULL, "ci:runner", "runner two");
	CHECK_INT(store_tx_begin(db), CAIRN_OK);
	pulled(&r, "rp7", "human", "accepted", "ci:runner", "runner hijacked");
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res), CAIRN_OK);
	CHECK(local && strcmp(res.held, local) == 0 && !res.yielded[0]);
	CHECK_INT(store_find_one(db, "main", "id = ?1", "rp7", &got), CAIRN_OK);
	CHECK(got && got->key == NULL && strcmp(got->status, "candidate") == 0);
	cairn_record_free(got);
	got = NULL;
	CHECK_INT(store_tx_end(db, CAIRN_OK), CAIRN_OK);
	/* another member retiring alice's human record: a proposal */
	srv.author = "eve";
	srv.created_by = "alice";
	CHECK_INT(store_tx_begin(db), CAIRN_OK);
	pulled(&r, local, "human", "retired", "ci:runner", "runner two");
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res), CAIRN_OK);
	CHECK(res.proposed == 1 && strcmp(res.kept_status, "accepted") == 0);
	CHECK_INT(store_find_one(db, "main", "id = ?1", local, &got), CAIRN_OK);
	CHECK(got && strcmp(got->status, "accepted") == 0);
	cairn_record_free(got);
	got = NULL;
	CHECK_INT(store_tx_end(db, CAIRN_OK), CAIRN_OK);
	srv.author = "alice";
	srv.created_by = NULL;
	cairn_free(local);
	/* a holder that is not standing (a candidate) yields the key */
	local = write_simple(db, "fact", "candidate", "agent", "ci:runner2",
			     "runner two");
	CHECK_INT(store_tx_begin(db), CAIRN_OK);
	pulled(&r, "rp5", "human", "accepted", "ci:runner2", "runner one");
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res), CAIRN_OK);
	CHECK(local && strcmp(res.yielded, local) == 0);
	CHECK_INT(store_find_one(db, "main", "id = ?1", local, &got), CAIRN_OK);
	CHECK(got && got->key == NULL && strcmp(got->status, "candidate") == 0);
	cairn_record_free(got);
	got = NULL;
	/* a new text of rp5 keeps the old one as a revision */
	pulled(&r, "rp5", "human", "accepted", "ci:runner2", "runner one, moved");
	r.revision = 2;
	r.hash = (char *)"h2";
	CHECK_INT(store_pull_record(db, "main", &r, NULL, &srv, &res), CAIRN_OK);
	/* a pulled revision: a secret refused, an older one kept once */
	pulled(&r, "rp5", "human", "accepted", NULL, "old AKIAIOSFODNN7EXAMPLE");
	CHECK_INT(store_pull_revision(db, "main", "rp5", &r), CAIRN_SECRET);
	pulled(&r, "rp5", "human", "accepted", NULL, "runner one");
	CHECK_INT(store_pull_revision(db, "main", "rp5", &r), CAIRN_OK);
	CHECK_INT(store_tx_end(db, CAIRN_OK), CAIRN_OK);
	CHECK_INT(cairn_record_history(db, "ci:runner2", NULL, &hist, &n),
		  CAIRN_OK);
	CHECK_MSG(n == 2, "history of rp5 has %zu entries", n);
	if (n == 2)
		CHECK(strcmp(hist[0]->body, "runner one, moved") == 0 &&
		      strcmp(hist[1]->body, "runner one") == 0);
	cairn_record_list_free(hist, n);
	CHECK_INT(cairn_check_integrity(db), CAIRN_OK);
	cairn_free(local);
	cairn_db_close(db);
}

void unit_store(void)
{
	RUN(test_global_migration);
	RUN(test_forward_migration);
	RUN(test_file_modes);
	RUN(test_gate);
	RUN(test_unknown_values);
	RUN(test_zero_confidence_default);
	RUN(test_default_filter);
	RUN(test_key_revisions);
	RUN(test_secret_refused);
	RUN(test_alloc_failures);
	RUN(test_face_calls);
	RUN(test_words_one_table);
	RUN(test_errstr_names);
	RUN(test_env_at_open);
	RUN(test_machine_scope);
	RUN(test_machine_migration);
	RUN(test_pull_gate);
}
