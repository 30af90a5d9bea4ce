/*
 * unit_receipt.c -- receipts survive a locked store (receipt.c): the recall
 * still answers, its receipt goes to the spool, `cairn receipt` finds it
 * there, and the next recall that gets the lock moves it into the table
 * with last_seen. Torn and malformed spool lines are skipped, not fatal.
 * Negative control (tests/mutate, NO_RECEIPT_SPOOL): without the spool,
 * the locked recall fails with CAIRN_BUSY and test_locked_store fails.
 * A receipt's database revision moves with every transaction that writes
 * to the records and with nothing else (recall's own last_seen included).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#include "cairn.h"
#include "receipt.h"
#include "store.h"
#include "test.h"

static long spool_size(const char *root)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/.cairn/%s", root, RECEIPT_SPOOL);
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void spool_add(const char *root, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/.cairn/%s", root, RECEIPT_SPOOL);
	f = fopen(path, "a");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static cairn_db *open_short(const char *root)
{
	char dir[1100];
	cairn_open_opts o;
	cairn_db *db = NULL;

	snprintf(dir, sizeof(dir), "%s/.cairn", root);
	memset(&o, 0, sizeof(o));
	o.no_global = 1;
	o.busy_timeout_ms = 50;
	CHECK_INT(cairn_db_open(dir, &o, &db), CAIRN_OK);
	return db;
}

static char *last_seen(cairn_db *db, const char *id)
{
	cairn_record *r = NULL;
	char *s = NULL;

	/* cairn_record_get is a read that does not revive or touch last_seen */
	CHECK_INT(cairn_record_get(db, id, &r), CAIRN_OK);
	if (r && r->last_seen)
		s = strdup(r->last_seen);
	cairn_record_free(r);
	return s;
}

/*
 * A store in workspace name (root) holding one accepted record of kind
 * "Staging deploys"; its id into *id. Reopened with a 50 ms busy wait.
 */
static cairn_db *staging_store(const char *name, const char *kind,
			       char *root, size_t size, char **id)
{
	cairn_db *w = test_store(name, root, size);

	*id = test_write_record(w, kind, "accepted", "human", NULL,
				"Staging deploys",
				"Deploy to staging with make deploy-staging.");
	cairn_db_close(w);
	return open_short(root);
}

/* Recall q on db expecting one hit; its receipt id into rid (32 bytes). */
static void recall_one(cairn_db *db, const char *q, char *rid)
{
	cairn_result *res = NULL;

	CHECK_MSG(cairn_recall(db, q, NULL, &res) == CAIRN_OK, "recall: %s",
		  cairn_errmsg(db));
	CHECK(res && res->n == 1 && res->receipt_id[0]);
	rid[0] = '\0';
	if (res)
		snprintf(rid, 32, "%s", res->receipt_id);
	cairn_result_free(res);
}

static void test_locked_store(void)
{
	char root[512], dbpath[1100], rid[32], later[32];
	time_t t = time(NULL) + 86400;
	cairn_db *db;
	cairn_result *res = NULL;
	sqlite3 *lock = NULL;
	char *id, *json = NULL, *seen;

	db = staging_store("rcpt", "fact", root, sizeof(root), &id);
	/* first recall: ageing and the first receipt, unlocked */
	CHECK_INT(cairn_recall(db, "deploy staging", NULL, &res), CAIRN_OK);
	cairn_result_free(res);
	res = NULL;
	seen = last_seen(db, id);
	CHECK(seen != NULL);
	free(seen);
	snprintf(dbpath, sizeof(dbpath), "%s/.cairn/cairn.db", root);
	CHECK_INT(sqlite3_open(dbpath, &lock), SQLITE_OK);
	CHECK_INT(sqlite3_exec(lock, "BEGIN IMMEDIATE; UPDATE meta SET v = v "
				     "WHERE 0",
			       NULL, NULL, NULL),
		  SQLITE_OK);

	/* locked: the recall answers, the receipt is spooled, with a
	 * last_seen a day ahead (the lifecycle's clock) to tell it apart */
	strftime(later, sizeof(later), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	setenv("CAIRN_NOW", later, 1);
	recall_one(db, "how do I deploy to staging", rid);
	unsetenv("CAIRN_NOW");
	CHECK(spool_size(root) > 0);
	seen = last_seen(db, id);
	CHECK(seen && strcmp(seen, later) != 0); /* not written yet */
	free(seen);
	CHECK_INT(cairn_receipt_json(db, rid, &json), CAIRN_OK);
	CHECK(json && strstr(json, "\"pending\":true") && strstr(json, id));
	cairn_free(json);
	json = NULL;

	/* an appender killed mid-line and a line that is not a receipt */
	spool_add(root, "{\"id\":\"qnot-a-receipt\"}\n{\"id\":\"qtorn\",\"que");
	sqlite3_exec(lock, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(lock);

	/* unlocked again: the next receipt (of a question with no answer, so
	 * that it sets no last_seen itself) moves the spooled one in */
	CHECK_INT(cairn_recall(db, "zebra unicorn", NULL, &res), CAIRN_OK);
	CHECK(res && res->n == 0);
	cairn_result_free(res);
	CHECK_INT(spool_size(root), 0);
	seen = last_seen(db, id);
	CHECK_MSG(seen && strcmp(seen, later) == 0, "last_seen %s, want %s",
		  seen ? seen : "(none)", later);
	free(seen);
	CHECK_INT(cairn_receipt_json(db, rid, &json), CAIRN_OK);
	CHECK(json && !strstr(json, "pending") && strstr(json, id));
	cairn_free(json);
	json = NULL;
	CHECK_INT(cairn_receipt_json(db, "qtorn", &json), CAIRN_NOTFOUND);
	CHECK_INT(cairn_receipt_json(db, "qnot-a-receipt", &json),
		  CAIRN_NOTFOUND);
	cairn_db_close(db);
	cairn_free(id);
}

/* The lock error names the wait that was really configured. */
static void test_busy_message(void)
{
	char root[512], dbpath[1100];
	cairn_db *db, *w;
	sqlite3 *lock = NULL;
	cairn_record r;
	char *id = NULL;

	w = test_store("rcpt-msg", root, sizeof(root));
	cairn_db_close(w);
	db = open_short(root);
	snprintf(dbpath, sizeof(dbpath), "%s/.cairn/cairn.db", root);
	CHECK_INT(sqlite3_open(dbpath, &lock), SQLITE_OK);
	CHECK_INT(sqlite3_exec(lock, "BEGIN IMMEDIATE", NULL, NULL, NULL),
		  SQLITE_OK);
	memset(&r, 0, sizeof(r));
	r.kind = (char *)"fact";
	r.body = (char *)"a write that waits";
	r.confidence = -1;
	CHECK_INT(cairn_record_write(db, &r, 0, &id), CAIRN_BUSY);
	CHECK_MSG(strstr(cairn_errmsg(db), "(waited 50 ms)") != NULL, "%s",
		  cairn_errmsg(db));
	cairn_free(id);
	sqlite3_exec(lock, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(lock);
	cairn_db_close(db);
}

/* The revision a new receipt for question q names ("db:N"), as a number. */
static long long receipt_rev(cairn_db *db, const char *q)
{
	cairn_result *res = NULL;
	char *json = NULL;
	const char *p;
	long long n = -1;

	CHECK_INT(cairn_recall(db, q, NULL, &res), CAIRN_OK);
	if (res && res->receipt_id[0] &&
	    cairn_receipt_json(db, res->receipt_id, &json) == CAIRN_OK &&
	    (p = strstr(json, " db:")) != NULL)
		n = atoll(p + 4);
	cairn_free(json);
	cairn_result_free(res);
	return n;
}

static void test_revision(void)
{
	char root[512];
	cairn_db *db;
	cairn_record ch;
	char *id, *id2;
	long long r0, r1;

	db = test_store("rcpt-rev", root, sizeof(root));
	id = test_write_record(db, "fact", "accepted", "human", NULL,
			       "Staging deploys",
			       "Deploy to staging with make deploy-staging.");
	r0 = receipt_rev(db, "deploy staging");
	CHECK_MSG(r0 >= 1, "revision %lld after a write", r0);
	/* a recall sets last_seen: not a change of the store's content */
	CHECK_INT(receipt_rev(db, "deploy staging"), r0);
	CHECK_INT(receipt_rev(db, "deploy staging"), r0);
	/* a new record, a revision, a status change, a deletion: each counts */
	id2 = test_write_record(db, "note", "accepted", "human", NULL,
				"Prod deploys", "Deploy to prod on Tuesdays.");
	r1 = receipt_rev(db, "deploy staging");
	CHECK_MSG(r1 > r0, "write: %lld after %lld", r1, r0);
	memset(&ch, 0, sizeof(ch));
	ch.body = (char *)"Deploy to staging with make stage.";
	ch.confidence = -1;
	CHECK_INT(cairn_record_revise(db, id, &ch, 0), CAIRN_OK);
	r0 = r1;
	r1 = receipt_rev(db, "deploy staging");
	CHECK_MSG(r1 > r0, "revise: %lld after %lld", r1, r0);
	CHECK_INT(cairn_record_set_status(db, id2, NULL, "retired", 0), CAIRN_OK);
	r0 = r1;
	r1 = receipt_rev(db, "deploy staging");
	CHECK_MSG(r1 > r0, "status: %lld after %lld", r1, r0);
	/* any statement inside a batch counts, through the update hook */
	CHECK_INT(cairn_begin(db), CAIRN_OK);
	CHECK_INT(sqlite3_exec(db->sql,
			       "DELETE FROM records WHERE kind = 'note'", NULL,
			       NULL, NULL),
		  SQLITE_OK);
	CHECK_INT(cairn_commit(db), CAIRN_OK);
	r0 = r1;
	r1 = receipt_rev(db, "deploy staging");
	CHECK_MSG(r1 > r0, "delete: %lld after %lld", r1, r0);
	cairn_db_close(db);
	cairn_free(id);
	cairn_free(id2);
}

/* Count rows of main.receipts. */
static long long receipt_rows(cairn_db *db)
{
	sqlite3_stmt *st = NULL;
	long long n = -1;

	if (sqlite3_prepare_v2(db->sql, "SELECT count(*) FROM main.receipts",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void set_now(const char *iso)
{
	if (iso)
		setenv("CAIRN_NOW", iso, 1);
	else
		unsetenv("CAIRN_NOW");
}

/*
 * Spool-first (the hook, db->spool_receipts): a recall writes nothing to
 * the database, `cairn receipt` finds the receipt in the spool, the
 * receipt that finds RECEIPT_SPOOL_DRAIN bytes spooled moves them all,
 * and ageing reads the spooled last_seen: a decision seen 60 days after it
 * was written is not stale 150 days after it was written (it would be
 * without the drain in cairn_gc: unseen for 150 > LIFECYCLE_STALE_DAYS).
 */
static void test_spool_first(void)
{
	char root[512], rid[32], *id, *json = NULL, *seen;
	cairn_db *db;
	cairn_result *res = NULL;
	cairn_gc_result gc;
	cairn_record *r = NULL;
	long long rows0;
	int i, drained = 0;

	set_now("2026-01-01T00:00:00Z");
	db = staging_store("rcpt-first", "decision", root, sizeof(root), &id);
	db->spool_receipts = 1;
	set_now("2026-03-02T00:00:00Z"); /* day 60: ages nothing yet */
	recall_one(db, "deploy staging", rid);
	rows0 = receipt_rows(db);
	CHECK_INT(rows0, 0);
	CHECK(spool_size(root) > 0);
	seen = last_seen(db, id);
	CHECK(seen == NULL); /* not in the table yet */
	free(seen);
	CHECK_INT(cairn_receipt_json(db, rid, &json), CAIRN_OK);
	CHECK(json && strstr(json, "\"pending\":true") && strstr(json, id));
	cairn_free(json);
	json = NULL;

	/* day 150: a forced run drains first, so the record is not stale */
	set_now("2026-05-31T00:00:00Z");
	CHECK_INT(cairn_gc(db, 1, &gc), CAIRN_OK);
	CHECK_INT((int)gc.staled, 0);
	CHECK_INT(spool_size(root), 0);
	CHECK_INT(receipt_rows(db), 1);
	CHECK_INT(cairn_record_get(db, id, &r), CAIRN_OK);
	CHECK(r && strcmp(r->status, "accepted") == 0 && r->last_seen &&
	      strcmp(r->last_seen, "2026-03-02T00:00:00Z") == 0);
	cairn_record_free(r);

	/* receipts pile up in the spool until it holds RECEIPT_SPOOL_DRAIN
	 * bytes; the next one moves them all (and itself) into the table */
	for (i = 0; i < 400 && !drained; i++) {
		long before = spool_size(root);

		CHECK_INT(cairn_recall(db, "deploy staging", NULL, &res),
			  CAIRN_OK);
		cairn_result_free(res);
		res = NULL;
		if (before >= (long)RECEIPT_SPOOL_DRAIN) {
			CHECK_INT(spool_size(root), 0);
			CHECK_INT(receipt_rows(db), 1 + i + 1);
			drained = 1;
		} else {
			CHECK_INT(receipt_rows(db), 1);
		}
	}
	CHECK_MSG(drained, "the spool never drained in %d recalls", i);
	set_now(NULL);
	cairn_db_close(db);
	cairn_free(id);
}

void unit_receipt(void)
{
	RUN(test_spool_first);
	RUN(test_locked_store);
	RUN(test_busy_message);
	RUN(test_revision);
}
