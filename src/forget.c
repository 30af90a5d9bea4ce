/*
 * forget.c -- pending forgets: an agent's proposal to retire a record it
 * did not write, kept until a human confirms or drops it (SPEC 4.5: writes
 * have an approval gate, and so do forgets, so that no agent can remove a
 * human's rule on its own).
 *
 * Layer: on store. A proposal is one row of the record's own schema's meta
 * table, key "forget.pending.<id>", value
 * "<time>\t<session>\t<tool>[\t<reason>]" (a proposal stored before
 * reasons were kept has three fields: its reason is ""): no schema change, and the record itself is untouched until a human
 * applies the proposal (cairn_forget_resolve), so the record stays in
 * recall and in the hook's drawer meanwhile.
 *
 * Must never: change a record's status on a proposal, or keep a proposal
 * for a record that no longer exists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "secret.h"
#include "store.h"

#define FORGET_META "forget.pending."

/* The schema holding record r. */
static const char *schema_of(const cairn_record *r)
{
	return r->scope && strcmp(r->scope, "global") == 0 ? "global" : "main";
}

/* Can a proposal apply to a record with this status? Not to one retired
 * or rejected already, nor to a candidate: that one awaits a human's review
 * anyway, and 'cairn reject' is its forget. */
static int forgettable(const char *status)
{
	return strcmp(status, "retired") != 0 &&
	       strcmp(status, "rejected") != 0 &&
	       strcmp(status, "candidate") != 0;
}

/* Copy tab-separated field i of v (0-based) into a new string, "" if none. */
static char *field(const char *v, int i)
{
	const char *e;

	for (; i > 0 && v; i--) {
		v = strchr(v, '\t');
		if (v)
			v++;
	}
	if (!v)
		return util_strdup("");
	e = strchr(v, '\t');
	return util_strndup(v, e ? (size_t)(e - v) : strlen(v));
}

/* Make a one-line field of s for the tab-separated value (tabs and
 * newlines become spaces), at most max bytes. */
static void add_field(struct sbuf *sb, const char *s, size_t max)
{
	size_t i, n = s ? strlen(s) : 0;

	if (n > max)
		n = max;
	while (n > 0 && util_utf8_invalid_at(s, n) != -1)
		n--;
	for (i = 0; i < n; i++)
		sbuf_addc(sb, s[i] == '\t' || s[i] == '\n' || s[i] == '\r'
				      ? ' ' : s[i]);
}

int cairn_forget_propose(cairn_db *db, const char *id, const char *session,
			 const char *tool)
{
	return cairn_forget_propose_v2(db, id, session, tool, NULL);
}

int cairn_forget_propose_v2(cairn_db *db, const char *id, const char *session,
			    const char *tool, const char *reason)
{
	struct sbuf v = SBUF_INIT, k = SBUF_INIT, sql = SBUF_INIT;
	cairn_record *r = NULL;
	sqlite3_stmt *st = NULL;
	char now[32], msg[STORE_ERRMSG];
	int rc, src;

	rc = cairn_record_get(db, id, &r);
	if (rc)
		return rc;
	if (strcmp(r->id, id) != 0) {
		rc = store_error(db, CAIRN_INVALID, "give the full id of "
				 "record '%s', not a prefix", r->id);
		goto out;
	}
	if (store_is_file_backed(r, msg, sizeof(msg))) {
		rc = store_error(db, CAIRN_READONLY, "%s", msg);
		goto out;
	}
	if (reason && *reason) {
		struct secret_hit hit;

		if (secret_scan(reason, strlen(reason), &hit, 1) > 0) {
			if (secret_unscanned(&hit)) {
				rc = store_error(db, CAIRN_NOMEM,
						 "out of memory");
				goto out;
			}
			secret_describe(&hit, "reason", msg, sizeof(msg));
			rc = store_error(db, CAIRN_SECRET, "%s", msg);
			goto out;
		}
	}
	if (!forgettable(r->status)) {
		rc = store_error(db, CAIRN_INVALID, strcmp(r->status,
				 "candidate") == 0 ? "record '%s' is a %s: "
				 "'cairn reject' drops it" : "record '%s' is "
				 "already %s", r->id, r->status);
		goto out;
	}
	util_now_iso(now, sizeof(now));
	sbuf_adds(&v, now);
	sbuf_addc(&v, '\t');
	add_field(&v, session, 200);
	sbuf_addc(&v, '\t');
	add_field(&v, tool, 200);
	sbuf_addc(&v, '\t');
	add_field(&v, reason, CAIRN_FORGET_REASON_MAX);
	sbuf_addf(&k, FORGET_META "%s", r->id);
	/* the first proposal's time and session are kept */
	sbuf_addf(&sql, "INSERT OR IGNORE INTO %s.meta (k, v) VALUES (?1, ?2)",
		  schema_of(r));
	if (v.err || k.err || sql.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	src = sqlite3_prepare_v2(db->sql, sql.buf, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, k.buf, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, v.buf, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "proposing a forget");
out:
	sbuf_release(&sql);
	sbuf_release(&k);
	sbuf_release(&v);
	cairn_record_free(r);
	return rc;
}

/* Is a proposal stored for record r (whatever its status now)? */
static int stored(struct cairn_db *db, const cairn_record *r)
{
	char k[96 + sizeof(FORGET_META)], buf[8];
	int found = 0;

	snprintf(k, sizeof(k), FORGET_META "%s", r->id);
	return store_meta_get(db, schema_of(r), k, buf, sizeof(buf),
			      &found) == CAIRN_OK && found;
}

int cairn_forget_pending(cairn_db *db, const char *id)
{
	cairn_record *r = NULL;
	int found;

	if (cairn_record_get(db, id, &r) != CAIRN_OK)
		return 0;
	found = forgettable(r->status) && stored(db, r);
	cairn_record_free(r);
	return found;
}

/* Delete the proposal for id from schema. */
static int drop(struct cairn_db *db, const char *schema, const char *id)
{
	struct sbuf sql = SBUF_INIT, k = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	int src;

	sbuf_addf(&sql, "DELETE FROM %s.meta WHERE k = ?1", schema);
	sbuf_addf(&k, FORGET_META "%s", id);
	if (sql.err || k.err) {
		sbuf_release(&sql);
		sbuf_release(&k);
		return store_error(db, CAIRN_NOMEM, "out of memory");
	}
	src = sqlite3_prepare_v2(db->sql, sql.buf, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, k.buf, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	sbuf_release(&sql);
	sbuf_release(&k);
	return src == SQLITE_DONE ? CAIRN_OK
				  : store_sql_error(db, src, "dropping a forget");
}

int cairn_forget_resolve(cairn_db *db, const char *id, int apply)
{
	cairn_record *r = NULL;
	int rc;

	rc = cairn_record_get(db, id, &r);
	if (rc)
		return rc;
	/* dropping also clears a proposal its record outgrew (retired by
	 * hand since) */
	if (!stored(db, r) || (apply && !forgettable(r->status))) {
		rc = store_error(db, CAIRN_NOTFOUND, "no pending forget of "
				 "record '%s'", r->id);
		goto out;
	}
	rc = cairn_begin(db);
	if (rc)
		goto out;
	if (apply)
		rc = cairn_record_set_status(db, r->id, NULL, "retired", 0);
	if (rc == CAIRN_OK)
		rc = drop(db, schema_of(r), r->id);
	if (rc == CAIRN_OK)
		rc = cairn_commit(db);
	else
		cairn_rollback(db);
out:
	cairn_record_free(r);
	return rc;
}

void cairn_forget_list_free(cairn_forget *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		cairn_record_free(v[i].rec);
		cairn_free(v[i].session);
		cairn_free(v[i].tool);
		cairn_free(v[i].time);
		cairn_free(v[i].reason);
	}
	cairn_free(v);
}

int cairn_forget_list(cairn_db *db, cairn_forget **out, size_t *n)
{
	static const char *const schemas[2] = { "main", "global" };
	cairn_forget *v = NULL;
	size_t len = 0, cap = 0;
	int i, rc = CAIRN_OK;

	*out = NULL;
	*n = 0;
	for (i = 0; i < 2 && rc == CAIRN_OK; i++) {
		sqlite3_stmt *st = NULL;
		char sql[160];
		int src;

		if (i == 1 && !db->has_global)
			break;
		/* oldest proposal first; a proposal whose record is gone or
		 * already retired is not listed */
		snprintf(sql, sizeof(sql),
			 "SELECT substr(k, %d), v FROM %s.meta WHERE k LIKE "
			 "'forget.pending.%%' ORDER BY v, k",
			 (int)strlen(FORGET_META) + 1, schemas[i]);
		src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
		while (src == SQLITE_OK || src == SQLITE_ROW) {
			if ((src = sqlite3_step(st)) != SQLITE_ROW)
				break;
			const char *id, *val;
			cairn_record *r = NULL;

			id = (const char *)sqlite3_column_text(st, 0);
			val = (const char *)sqlite3_column_text(st, 1);
			if (!id || !val || cairn_record_get(db, id, &r) != CAIRN_OK)
				continue;
			if (strcmp(r->id, id) != 0 || !forgettable(r->status)) {
				cairn_record_free(r);
				continue;
			}
			if (len == cap) {
				size_t nc = cap ? cap * 2 : 8;
				cairn_forget *nv = util_realloc(v, nc * sizeof(*v));

				if (!nv) {
					cairn_record_free(r);
					rc = store_error(db, CAIRN_NOMEM,
							 "out of memory");
					break;
				}
				v = nv;
				cap = nc;
			}
			v[len].rec = r;
			v[len].time = field(val, 0);
			v[len].session = field(val, 1);
			v[len].tool = field(val, 2);
			v[len].reason = field(val, 3);
			len++;
			if (!v[len - 1].time || !v[len - 1].session ||
			    !v[len - 1].tool || !v[len - 1].reason) {
				rc = store_error(db, CAIRN_NOMEM,
						 "out of memory");
				break;
			}
		}
		if (rc == CAIRN_OK && src != SQLITE_DONE)
			rc = store_sql_error(db, src, "listing pending forgets");
		sqlite3_finalize(st);
	}
	if (rc) {
		cairn_forget_list_free(v, len);
		return rc;
	}
	*out = v;
	*n = len;
	return CAIRN_OK;
}
