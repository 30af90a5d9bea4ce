/*
 * unit_faults.c -- allocation-failure injection along the write, seed,
 * recall and import paths (SPEC 9).
 *
 * For N = 1, 2, ...: fail the N-th allocation through the one wrapper
 * (util_fail_alloc_after), run the operation, and check that it either
 * succeeded or returned CAIRN_NOMEM with a message; that nothing of a
 * failed write is in the store (no half-written record); and that the store
 * still passes cairn_check_integrity (PRAGMA integrity_check and the
 * full-text index's own check). Leaks are LeakSanitizer's (make check runs
 * with detect_leaks=1). The loop ends at the first N the operation never
 * reached (util_fail_alloc_pending() > 0 afterwards) and succeeded: every
 * allocation along the path has then been failed once. SQLite's and other
 * libraries' own allocations are not injected here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cairn.h"
#include "internal.h"
#include "seed.h"
#include "test.h"

#define FAULT_MAX_N 20000 /* a path longer than this is a failure itself */

/* rc is success or a clean out-of-memory error with a message. */
static int clean_rc(cairn_db *db, int rc, const char *what, long n)
{
	if (rc == CAIRN_OK)
		return 1;
	if (rc == CAIRN_NOMEM && cairn_errmsg(db) && *cairn_errmsg(db))
		return 1;
	fprintf(stderr, "%s: allocation %ld failed gave %d (%s), not "
			"CAIRN_NOMEM\n",
		what, n, rc, cairn_errmsg(db) ? cairn_errmsg(db) : "");
	return 0;
}

static int integrity_ok(cairn_db *db, const char *what, long n)
{
	int rc = cairn_check_integrity(db);

	if (rc != CAIRN_OK)
		fprintf(stderr, "%s: after failing allocation %ld: %s\n", what,
			n, cairn_errmsg(db));
	return rc == CAIRN_OK;
}

static int key_exists(cairn_db *db, const char *key)
{
	cairn_record *r = NULL;
	int rc = cairn_record_read_key(db, key, NULL, &r);

	cairn_record_free(r);
	return rc == CAIRN_OK;
}

/* EVIDENCE-OF: fail every allocation of a record write. */
static void test_fault_write(void)
{
	cairn_db *db = test_store("faults-write", NULL, 0);
	long n, reached = 0;
	int bad = 0, done = 0;

	for (n = 1; n <= FAULT_MAX_N && !done && !bad; n++) {
		cairn_record r;
		char key[32], *id = NULL;
		int rc;

		snprintf(key, sizeof(key), "fault:%ld", n);
		memset(&r, 0, sizeof(r));
		r.kind = (char *)"decision";
		r.key = key;
		r.title = (char *)"Use PostgreSQL for orders";
		r.body = (char *)"We chose PostgreSQL 16 for the orders "
				 "service; 部署用 make deploy.";
		r.confidence = -1;
		util_fail_alloc_after(n);
		rc = cairn_record_write(db, &r, 0, &id);
		done = util_fail_alloc_pending() > 0;
		util_fail_alloc_after(0);
		if (!clean_rc(db, rc, "write", n))
			bad++;
		else if ((rc == CAIRN_OK) != key_exists(db, key)) {
			fprintf(stderr, "write: allocation %ld: rc %d but the "
					"record is %s\n",
				n, rc, rc ? "there" : "missing");
			bad++;
		}
		if (!integrity_ok(db, "write", n))
			bad++;
		if (done && rc != CAIRN_OK)
			bad++;
		reached = n;
		cairn_free(id);
	}
	CHECK_MSG(done, "write: still failing after %ld allocations", reached);
	printf("faults: write: allocations 1..%ld failed in turn\n", reached - 1);
	CHECK_INT(bad, 0);
	CHECK(reached > 3); /* the path allocates: the loop really ran */
	cairn_db_close(db);
}

/* EVIDENCE-OF: fail every allocation of an import line. */
static void test_fault_import(void)
{
	cairn_db *db = test_store("faults-import", NULL, 0);
	long n, reached = 0;
	int bad = 0, done = 0;

	for (n = 1; n <= FAULT_MAX_N && !done && !bad; n++) {
		char line[512], id[32];
		cairn_record *got = NULL;
		int rc, sk = 0, there;

		snprintf(id, sizeof(id), "r%014ld", n);
		snprintf(line, sizeof(line),
			 "{\"id\":\"%s\",\"kind\":\"fact\",\"key\":\"imp:%ld\","
			 "\"title\":\"imported\",\"body\":\"Imported fact %ld "
			 "about the staging deploy.\",\"status\":\"accepted\","
			 "\"confidence\":0.8,\"src_path\":\"a.md\"}",
			 id, n, n);
		util_fail_alloc_after(n);
		rc = cairn_import_line(db, line, strlen(line), 0, 0, &sk);
		done = util_fail_alloc_pending() > 0;
		util_fail_alloc_after(0);
		if (!clean_rc(db, rc, "import", n))
			bad++;
		there = cairn_record_get(db, id, &got) == CAIRN_OK;
		cairn_record_free(got);
		if (bad)
			;
		else if ((rc == CAIRN_OK) != there) {
			fprintf(stderr, "import: allocation %ld: rc %d, record "
					"%s\n",
				n, rc, there ? "there" : "missing");
			bad++;
		}
		if (!integrity_ok(db, "import", n))
			bad++;
		if (done && rc != CAIRN_OK)
			bad++;
		reached = n;
	}
	CHECK_MSG(done, "import: still failing after %ld allocations", reached);
	printf("faults: import: allocations 1..%ld failed in turn\n", reached - 1);
	CHECK_INT(bad, 0);
	CHECK(reached > 3);
	cairn_db_close(db);
}

/* EVIDENCE-OF: fail every allocation of a recall (which also
 * writes its receipt and last_seen). */
static void test_fault_recall(void)
{
	cairn_db *db = test_store("faults-recall", NULL, 0);
	static const char *const bodies[] = {
		"Deploy to staging with make deploy-staging.",
		"We chose PostgreSQL for the orders database.",
		"NATS is the message queue; subjects are service.entity.event.",
		"部署到测试环境用 make deploy-staging。",
	};
	cairn_recall_opts ro;
	long n, reached = 0;
	size_t i;
	int bad = 0, done = 0;

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		cairn_record r;

		memset(&r, 0, sizeof(r));
		r.kind = (char *)"fact";
		r.body = (char *)bodies[i];
		r.confidence = -1;
		CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_OK);
	}
	memset(&ro, 0, sizeof(ro));
	ro.explain = 1;
	for (n = 1; n <= FAULT_MAX_N && !done && !bad; n++) {
		cairn_result *res = NULL;
		int rc;

		util_fail_alloc_after(n);
		rc = cairn_recall(db, "how do I deploy to staging 测试环境",
				  &ro, &res);
		done = util_fail_alloc_pending() > 0;
		util_fail_alloc_after(0);
		if (!clean_rc(db, rc, "recall", n))
			bad++;
		else if (rc == CAIRN_OK && (!res || res->n == 0)) {
			fprintf(stderr, "recall: allocation %ld: OK without "
					"the hit\n",
				n);
			bad++;
		}
		if (!integrity_ok(db, "recall", n))
			bad++;
		if (done && rc != CAIRN_OK)
			bad++;
		cairn_result_free(res);
		reached = n;
	}
	CHECK_MSG(done, "recall: still failing after %ld allocations", reached);
	printf("faults: recall: allocations 1..%ld failed in turn\n", reached - 1);
	CHECK_INT(bad, 0);
	CHECK(reached > 3);
	cairn_db_close(db);
}

static void put_file(const char *root, const char *rel, const char *text)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static long count_records(cairn_db *db)
{
	cairn_record **v = NULL;
	cairn_filter f;
	size_t n = 0;

	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	if (cairn_record_list(db, &f, &v, &n) != CAIRN_OK)
		return -1;
	cairn_record_list_free(v, n);
	return (long)n;
}

/* EVIDENCE-OF: fail every allocation of a seed (two ADRs and a
 * facts file, one transaction); a failed seed writes nothing. */
static void test_fault_seed(void)
{
	char root[600], sub[700];
	cairn_db *db = test_store("faults-seed", root, sizeof(root));
	cairn_seed_opts so;
	long n, reached = 0, before;
	int bad = 0, done = 0;

	snprintf(sub, sizeof(sub), "%s/docs", root);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/docs/adr", root);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/.cairn/records", root);
	mkdir(sub, 0700);
	put_file(root, "docs/adr/0001-db.md",
		 "---\nstatus: accepted\ndate: 2024-01-02\n---\n"
		 "# 1. Use PostgreSQL\n\n## Context\n\nOrders need "
		 "transactions.\n\n## Decision\n\nPostgreSQL 16.\n");
	put_file(root, "docs/adr/0002-queue.md",
		 "# 2. Use NATS\n\nStatus: Superseded by "
		 "[ADR 1](0001-db.md)\n\n## Decision\n\nNATS JetStream.\n");
	put_file(root, ".cairn/records/platform.facts.md",
		 "# Platform facts\n\n- deploy:staging: make deploy-staging "
		 "[accepted]\n- The CI runs on GitHub Actions.\n");
	memset(&so, 0, sizeof(so));
	so.no_git = 1;
	before = count_records(db);
	CHECK_INT(before, 0);
	for (n = 1; n <= FAULT_MAX_N && !done && !bad; n++) {
		cairn_seed_report rep;
		long after;
		int rc;

		memset(&rep, 0, sizeof(rep));
		util_fail_alloc_after(n);
		rc = cairn_seed(db, NULL, 0, &so, &rep);
		done = util_fail_alloc_pending() > 0;
		util_fail_alloc_after(0);
		after = count_records(db);
		if (!clean_rc(db, rc, "seed", n))
			bad++;
		else if (rc != CAIRN_OK && after != before) {
			fprintf(stderr, "seed: allocation %ld failed but %ld "
					"records were written\n",
				n, after - before);
			bad++;
		}
		if (!integrity_ok(db, "seed", n))
			bad++;
		if (done && (rc != CAIRN_OK || after <= before))
			bad++;
		cairn_seed_report_release(&rep);
		reached = n;
		if (rc == CAIRN_OK && !done && after > before) {
			/* a failure was absorbed and the seed still wrote:
			 * start the next N from an empty store again */
			cairn_db_close(db);
			snprintf(sub, sizeof(sub), "%s/.cairn/cairn.db", root);
			remove(sub);
			snprintf(sub, sizeof(sub), "%s/.cairn/cairn.db-wal",
				 root);
			remove(sub);
			snprintf(sub, sizeof(sub), "%s/.cairn/cairn.db-shm",
				 root);
			remove(sub);
			db = test_store("faults-seed", NULL, 0);
		}
	}
	CHECK_MSG(done, "seed: still failing after %ld allocations", reached);
	printf("faults: seed: allocations 1..%ld failed in turn\n", reached - 1);
	CHECK_INT(bad, 0);
	CHECK(reached > 3);
	cairn_db_close(db);
}

void unit_faults(void)
{
	RUN(test_fault_write);
	RUN(test_fault_import);
	RUN(test_fault_recall);
	RUN(test_fault_seed);
}
