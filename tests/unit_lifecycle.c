/*
 * unit_lifecycle.c -- ageing (stale after 90 days, retired after 180, only
 * decisions and facts), the daily guard, the revive to the previous status,
 * supersession and its finder, with the clock set through CAIRN_NOW. Each
 * rule has a case that fails without it (the kinds that never decay, the
 * key family, the kind, the similarity threshold).
 */
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "lifecycle.h"
#include "store.h"
#include "test.h"

static void put(cairn_db *db, const char *id, const char *kind,
		const char *status, const char *key, const char *title,
		const char *body, const char *created)
{
	char line[1024];
	int skipped = 0, rc;

	snprintf(line, sizeof(line),
		 "{\"id\":\"%s\",\"kind\":\"%s\",\"status\":\"%s\"%s%s%s,"
		 "\"title\":\"%s\",\"body\":\"%s\",\"created\":\"%s\","
		 "\"updated\":\"%s\"}",
		 id, kind, status, key ? ",\"key\":\"" : "", key ? key : "",
		 key ? "\"" : "", title, body, created, created);
	rc = cairn_import_line(db, line, strlen(line), 0, 0, &skipped);
	CHECK_MSG(rc == CAIRN_OK, "import %s: %s", id, cairn_errmsg(db));
}

static const char *status_of(cairn_db *db, const char *id)
{
	static char buf[32];
	cairn_record *r = NULL;

	buf[0] = '\0';
	if (cairn_record_get(db, id, &r) == CAIRN_OK)
		snprintf(buf, sizeof(buf), "%s", r->status);
	cairn_record_free(r);
	return buf;
}

static void test_clock(void)
{
	setenv("CAIRN_NOW", "2026-02-03T04:05:06Z", 1);
	CHECK_INT(lifecycle_now(), 1770091506LL);
	setenv("CAIRN_NOW", "not a time", 1);
	CHECK(lifecycle_now() > 1700000000LL); /* the system clock */
	unsetenv("CAIRN_NOW");
}

static void test_ageing_kinds(void)
{
	cairn_db *db = test_store("lifecycle-age", NULL, 0);
	static const char *const never[] = { "rule", "procedure",
					     "capability", "note", "event" };
	cairn_gc_result r;
	char id[16];
	size_t i;

	put(db, "d", "decision", "accepted", NULL, "D", "decision body",
	    "2026-01-01T00:00:00Z");
	put(db, "f", "fact", "unverified", NULL, "F", "fact body",
	    "2026-01-01T00:00:00Z");
	put(db, "young", "fact", "accepted", NULL, "Y", "young fact",
	    "2026-03-01T00:00:00Z");
	put(db, "false", "fact", "false", NULL, "X", "false fact",
	    "2025-01-01T00:00:00Z");
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		snprintf(id, sizeof(id), "n%zu", i);
		put(db, id, never[i], "accepted", NULL, "N", "never decays",
		    "2024-01-01T00:00:00Z");
	}
	setenv("CAIRN_NOW", "2026-04-05T00:00:00Z", 1); /* 94 days */
	CHECK_INT(lifecycle_run(db, 0, &r), CAIRN_OK);
	CHECK_INT(r.ran, 1);
	CHECK_INT(r.staled, 2);
	CHECK_INT(r.retired, 0);
	CHECK_STR(status_of(db, "d"), "stale");
	CHECK_STR(status_of(db, "f"), "stale");
	CHECK_STR(status_of(db, "young"), "accepted");
	CHECK_STR(status_of(db, "false"), "false"); /* only live records age */
	/* negative control for "never decay": these are years old */
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		snprintf(id, sizeof(id), "n%zu", i);
		CHECK_MSG(strcmp(status_of(db, id), "accepted") == 0,
			  "%s aged", never[i]);
	}
	/* the daily guard: 12 hours later nothing runs */
	setenv("CAIRN_NOW", "2026-04-05T12:00:00Z", 1);
	CHECK_INT(lifecycle_run(db, 0, &r), CAIRN_OK);
	CHECK_INT(r.ran, 0);
	/* forced (cairn gc), 181 days: stale -> retired */
	setenv("CAIRN_NOW", "2026-07-01T00:00:00Z", 1);
	CHECK_INT(cairn_gc(db, 1, &r), CAIRN_OK);
	CHECK_INT(r.ran, 1);
	CHECK_INT(r.retired, 2);
	CHECK_INT(r.staled, 1); /* young: 122 days */
	CHECK_STR(status_of(db, "d"), "retired");
	CHECK_STR(r.now, "2026-07-01T00:00:00Z");
	unsetenv("CAIRN_NOW");
	cairn_db_close(db);
}

static void test_revive_previous_status(void)
{
	cairn_db *db = test_store("lifecycle-revive", NULL, 0);
	int revived = 0;

	put(db, "u", "fact", "unverified", NULL, "U", "unverified fact",
	    "2026-01-01T00:00:00Z");
	put(db, "a", "decision", "accepted", NULL, "A", "accepted decision",
	    "2026-01-01T00:00:00Z");
	setenv("CAIRN_NOW", "2026-05-01T00:00:00Z", 1);
	CHECK_INT(lifecycle_run(db, 1, NULL), CAIRN_OK);
	CHECK_STR(status_of(db, "u"), "stale");
	CHECK_INT(lifecycle_revive(db, "main", "u", &revived), CAIRN_OK);
	CHECK_INT(revived, 1);
	CHECK_STR(status_of(db, "u"), "unverified"); /* not promoted */
	CHECK_INT(lifecycle_revive(db, "main", "a", &revived), CAIRN_OK);
	CHECK_STR(status_of(db, "a"), "accepted");
	/* not stale: nothing happens */
	CHECK_INT(lifecycle_revive(db, "main", "a", &revived), CAIRN_OK);
	CHECK_INT(revived, 0);
	/* revived records were seen now: the next run leaves them */
	setenv("CAIRN_NOW", "2026-05-03T00:00:00Z", 1);
	CHECK_INT(lifecycle_run(db, 1, NULL), CAIRN_OK);
	CHECK_STR(status_of(db, "u"), "unverified");
	unsetenv("CAIRN_NOW");
	cairn_db_close(db);
}

static void test_supersede(void)
{
	cairn_db *db = test_store("lifecycle-supersede", NULL, 0);
	cairn_record *r = NULL;

	put(db, "old1", "fact", "accepted", "ttl:cache", "Cache TTL",
	    "The cache TTL is ten minutes", "2026-01-01T00:00:00Z");
	put(db, "new1", "fact", "accepted", "ttl:cache2", "Cache TTL",
	    "The cache TTL is thirty minutes", "2026-01-02T00:00:00Z");
	put(db, "gone", "fact", "false", NULL, "X", "a false record",
	    "2026-01-02T00:00:00Z");
	CHECK_INT(cairn_supersede(db, "old1", "old1"), CAIRN_INVALID);
	CHECK_INT(cairn_supersede(db, "old1", "gone"), CAIRN_INVALID);
	CHECK_INT(cairn_supersede(db, "old1", "nothere"), CAIRN_NOTFOUND);
	CHECK_INT(cairn_supersede(db, "old1", "new1"), CAIRN_OK);
	CHECK_INT(cairn_record_get(db, "old1", &r), CAIRN_OK);
	if (r) {
		CHECK_STR(r->status, "superseded");
		CHECK_STR(r->superseded_by, "new1");
	}
	cairn_record_free(r);
	r = NULL;
	CHECK_INT(cairn_record_get(db, "new1", &r), CAIRN_OK);
	if (r)
		CHECK_STR(r->supersedes, "old1");
	cairn_record_free(r);
	/* again with the same pair: fine; by another record: refused */
	CHECK_INT(cairn_supersede(db, "old1", "new1"), CAIRN_OK);
	put(db, "new2", "fact", "accepted", NULL, "T", "another",
	    "2026-01-03T00:00:00Z");
	CHECK_INT(cairn_supersede(db, "old1", "new2"), CAIRN_EXISTS);
	cairn_db_close(db);
}

static int suggested(const cairn_suggestion *v, size_t n, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].rec->id, id) == 0)
			return 1;
	return 0;
}

static void test_suggest(void)
{
	cairn_db *db = test_store("lifecycle-suggest", NULL, 0);
	cairn_suggestion *v = NULL;
	size_t n = 0;

	put(db, "newest", "fact", "accepted", "deploy:blyck", "Blyck deploys",
	    "Blyck deploys to ECS Fargate in eu-west-1 from GitHub Actions",
	    "2026-02-01T00:00:00Z");
	/* the one it replaces: same kind, family, similar text */
	put(db, "older", "fact", "accepted", "deploy:blyck-old",
	    "Blyck deploys",
	    "Blyck deploys to ECS in eu-west-1 from Jenkins",
	    "2026-01-01T00:00:00Z");
	/* negative controls, each failing one condition */
	put(db, "otherkind", "decision", "accepted", "deploy:blyck-d",
	    "Blyck deploys",
	    "Blyck deploys to ECS in eu-west-1 from Jenkins",
	    "2026-01-01T00:00:00Z");
	put(db, "otherfam", "fact", "accepted", "region:blyck",
	    "Blyck deploys",
	    "Blyck deploys to ECS in eu-west-1 from Jenkins",
	    "2026-01-01T00:00:00Z");
	put(db, "unlike", "fact", "accepted", "deploy:other", "Payments",
	    "Payments retry three times with exponential backoff on ECS",
	    "2026-01-01T00:00:00Z");
	put(db, "dead", "fact", "false", "deploy:dead", "Blyck deploys",
	    "Blyck deploys to ECS in eu-west-1 from Jenkins",
	    "2026-01-01T00:00:00Z");
	CHECK_INT(cairn_supersede_suggest(db, "newest", &v, &n), CAIRN_OK);
	CHECK_INT(n, 1);
	CHECK(suggested(v, n, "older"));
	CHECK(!suggested(v, n, "otherkind"));
	CHECK(!suggested(v, n, "otherfam"));
	CHECK(!suggested(v, n, "unlike"));
	CHECK(!suggested(v, n, "dead"));
	CHECK(!suggested(v, n, "newest"));
	if (n > 0) {
		CHECK(v[0].similarity >= 0.5 && v[0].similarity <= 1.0);
		CHECK_INT(v[0].same_family, 1);
	}
	cairn_suggestions_free(v, n);
	CHECK_INT(cairn_supersede_suggest(db, "nothere", &v, &n),
		  CAIRN_NOTFOUND);
	cairn_db_close(db);
}

void unit_lifecycle(void)
{
	RUN(test_clock);
	RUN(test_ageing_kinds);
	RUN(test_revive_previous_status);
	RUN(test_supersede);
	RUN(test_suggest);
}
