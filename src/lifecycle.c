/*
 * lifecycle.c -- ageing, reviving and superseding records (SPEC 5.5).
 *
 * Layer: lifecycle, on store.h (docs/ARCHITECTURE.md, "Layers"). Above it:
 * receipt.c, gc.c (cairn_gc), recall.c (the daily run), cli_gc.c (`cairn
 * gc`, `cairn supersede`). Here too: cairn_record_read_key, the explicit
 * read by key that revives a stale record. The finder of replacements
 * recalls, so it is supersede.c's.
 * Holds: the ageing rules (which kinds, how many days), the clock and its
 * test knob $CAIRN_NOW, the previous status of stale records (meta
 * 'lifecycle.prev.<id>' of the record's schema, no schema change), the
 * last run time (meta 'lifecycle.last_run' of the main store).
 * Must never: age a kind other than decision and fact; change a record's
 * text; touch a record whose status is not accepted, unverified or stale.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lifecycle.h"
#include "store.h"

#define DAY 86400LL

/* The kinds that age (SPEC 5.5); everything else never decays. */
#define AGEING_KINDS "('decision','fact')"

long long lifecycle_now(void)
{
	const char *s = getenv("CAIRN_NOW"); /* test knob: docs/RANKING.md */
	long long t;

	if (s && *s) {
		t = util_parse_iso(s);
		if (t >= 0)
			return t;
	}
	return (long long)time(NULL);
}

static void iso_of(long long t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "1970-01-01T00:00:00Z");
}

static int meta_get(struct cairn_db *db, const char *schema, const char *k,
		    char *buf, size_t size)
{
	int found, rc = store_meta_get(db, schema, k, buf, size, &found);

	return rc ? rc : found ? CAIRN_OK : CAIRN_NOTFOUND;
}

void lifecycle_now_iso(char *buf, size_t size)
{
	iso_of(lifecycle_now(), buf, size);
}

int lifecycle_due(struct cairn_db *db)
{
	char last[64];
	long long now = lifecycle_now(), t;
	int rc;

	rc = meta_get(db, "main", "lifecycle.last_run", last, sizeof(last));
	if (rc && rc != CAIRN_NOTFOUND)
		return -rc;
	t = rc == CAIRN_OK ? util_parse_iso(last) : -1;
	/* a clock that moved back runs it again */
	return !(t >= 0 && now >= t && now - t < LIFECYCLE_EVERY_SECONDS);
}

int lifecycle_run(struct cairn_db *db, int force, cairn_gc_result *out)
{
	cairn_gc_result r;
	char cut_stale[32], cut_retire[32];
	long long now = lifecycle_now();
	int rc, s;

	memset(&r, 0, sizeof(r));
	iso_of(now, r.now, sizeof(r.now));
	if (!force) {
		rc = lifecycle_due(db);
		if (rc < 0)
			return -rc;
		if (!rc) {
			if (out)
				*out = r;
			return CAIRN_OK;
		}
	}
	iso_of(now - LIFECYCLE_STALE_DAYS * DAY, cut_stale, sizeof(cut_stale));
	iso_of(now - LIFECYCLE_RETIRE_DAYS * DAY, cut_retire,
	       sizeof(cut_retire));
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	for (s = 0; s < 2 && rc == CAIRN_OK; s++) {
		if (s == 1 && !db->has_global)
			break;
		rc = store_age(db, s == 0 ? "main" : "global", AGEING_KINDS,
			       cut_stale, cut_retire, &r.staled, &r.retired);
	}
	if (rc == CAIRN_OK)
		rc = store_meta_set(db, "main", "lifecycle.last_run", r.now,
				    "recording the lifecycle run");
	rc = store_tx_end(db, rc);
	if (rc)
		return rc;
	r.ran = 1;
	if (out)
		*out = r;
	return CAIRN_OK;
}

int lifecycle_revive(struct cairn_db *db, const char *schema, const char *id,
		     int *revived)
{
	char sql[200], k[160], prev[32], now[32];
	sqlite3_stmt *st = NULL;
	int src, rc, stale = 0;

	if (revived)
		*revived = 0;
	snprintf(sql, sizeof(sql),
		 "SELECT status = 'stale' FROM %s.records WHERE id = ?1",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
		stale = src == SQLITE_ROW && sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_ROW && src != SQLITE_DONE)
		return store_sql_error(db, src, "reviving a record");
	if (!stale)
		return CAIRN_OK;
	snprintf(k, sizeof(k), "lifecycle.prev.%s", id);
	rc = meta_get(db, schema, k, prev, sizeof(prev));
	if (rc == CAIRN_NOTFOUND || (rc == CAIRN_OK &&
				     strcmp(prev, "unverified") != 0))
		snprintf(prev, sizeof(prev), "accepted");
	else if (rc)
		return rc;
	iso_of(lifecycle_now(), now, sizeof(now));
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = store_revive(db, schema, id, prev, now, k);
	rc = store_tx_end(db, rc);
	if (rc == CAIRN_OK && revived)
		*revived = 1;
	return rc;
}

int cairn_record_read_key(cairn_db *db, const char *key, const char *scope,
			  cairn_record **out)
{
	const char *schema;
	cairn_record *r = NULL;
	int rc = store_read_key(db, key, scope, &schema, &r);

	*out = NULL;
	if (rc)
		return rc;
	/*
	 * SPEC 5.5: an explicit read revives a stale record, back to the
	 * status it had before it went stale.
	 */
	if (strcmp(r->status, "stale") == 0) {
		int revived = 0;

		rc = lifecycle_revive(db, schema, r->id, &revived);
		if (!rc && revived) {
			cairn_record *again = NULL;

			rc = store_find_one(db, schema, "key = ?1", key, &again);
			if (!rc) {
				cairn_record_free(r);
				r = again;
			}
		}
	}
	if (rc) {
		cairn_record_free(r);
		return rc;
	}
	*out = r;
	return CAIRN_OK;
}

/* ------------------------------------------------------------ supersede */

static int live(const char *status)
{
	return strcmp(status, "accepted") == 0 ||
	       strcmp(status, "unverified") == 0 ||
	       strcmp(status, "candidate") == 0 ||
	       strcmp(status, "stale") == 0;
}

int cairn_supersede(cairn_db *db, const char *old_id, const char *new_id)
{
	cairn_record *o = NULL, *n = NULL;
	char msg[STORE_ERRMSG], now[32];
	int rc;

	if (!old_id || !new_id)
		return store_error(db, CAIRN_INVALID, "two record ids needed");
	rc = cairn_record_get(db, old_id, &o);
	if (rc == CAIRN_OK)
		rc = cairn_record_get(db, new_id, &n);
	if (rc)
		goto out;
	if (strcmp(o->id, n->id) == 0) {
		rc = store_error(db, CAIRN_INVALID,
				 "a record cannot supersede itself");
		goto out;
	}
	if (!live(n->status)) {
		rc = store_error(db, CAIRN_INVALID,
				 "record '%s' is %s: only a live record can "
				 "replace another",
				 n->id, n->status);
		goto out;
	}
	if (o->superseded_by && *o->superseded_by &&
	    strcmp(o->superseded_by, n->id) != 0) {
		rc = store_error(db, CAIRN_EXISTS,
				 "record '%s' is already superseded by '%s'",
				 o->id, o->superseded_by);
		goto out;
	}
	if (n->superseded_by && strcmp(n->superseded_by, o->id) == 0) {
		rc = store_error(db, CAIRN_INVALID,
				 "record '%s' is superseded by '%s': that "
				 "would be a loop",
				 n->id, o->id);
		goto out;
	}
	if (store_is_file_backed(o, msg, sizeof(msg))) {
		rc = store_error(db, CAIRN_READONLY,
				 "%s (front matter: status: superseded, "
				 "superseded_by)",
				 msg);
		goto out;
	}
	util_now_iso(now, sizeof(now));
	rc = store_tx_begin(db);
	if (rc)
		goto out;
	rc = store_supersede_link(db, o, n, now);
	rc = store_tx_end(db, rc);
out:
	cairn_record_free(o);
	cairn_record_free(n);
	return rc;
}
