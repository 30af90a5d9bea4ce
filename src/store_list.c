/*
 * store_list.c -- the store's reading side beyond one record: listing
 * with filters, a key's revisions, the counts of cairn stats and the
 * integrity check.
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

/* ----------------------------------------------------------------- listing */

/*
 * Append "AND col IN ('a','b')" for a comma-separated list whose every
 * item passes `valid` (so quoting them literally is safe).
 */
int store_add_in(struct cairn_db *db, struct sbuf *sql, const char *col,
		 const char *list, int (*valid)(const char *),
		 const char *what)
{
	const char *p = list;
	int first = 1;

	if (!list || !*list)
		return CAIRN_OK;
	sbuf_addf(sql, " AND %s IN (", col);
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char item[64];

		if (n == 0 || n >= sizeof(item))
			return store_error(db, CAIRN_INVALID, "empty or "
					   "overlong %s in filter", what);
		memcpy(item, p, n);
		item[n] = '\0';
		if (!valid(item))
			return store_error(db, CAIRN_INVALID,
					   "unknown %s '%s'", what, item);
		sbuf_addf(sql, "%s'%s'", first ? "" : ",", item);
		first = 0;
		p += n;
		if (*p == ',')
			p++;
	}
	sbuf_addc(sql, ')');
	return CAIRN_OK;
}

int cairn_record_list(cairn_db *db, const cairn_filter *f,
		      cairn_record ***out, size_t *n)
{
	static const cairn_filter none;
	struct sbuf where = SBUF_INIT, sql = SBUF_INIT;
	cairn_record **v = NULL;
	size_t cap = 0, len = 0;
	sqlite3_stmt *st = NULL;
	const char *want;
	int rc, src;

	*out = NULL;
	*n = 0;
	if (!f)
		f = &none;
	/* SPEC 3: default listing is accepted + unverified only */
#ifndef CAIRN_MUTATE_NO_STATUS_FILTER
	want = f->statuses && *f->statuses ? f->statuses
					   : "accepted,unverified";
#else
	/* tests/mutate: the default lists every status */
	want = f->statuses && *f->statuses ? f->statuses : "all";
#endif
	sbuf_adds(&where, " WHERE 1");
	rc = store_add_in(db, &where, "kind", f->kinds, cairn_kind_valid, "kind");
	if (rc == CAIRN_OK && strcmp(want, "all") != 0)
		rc = store_add_in(db, &where, "status", want,
			    cairn_status_valid, "status");
	if (rc == CAIRN_OK)
		rc = store_add_in(db, &where, "origin", f->origins,
			    cairn_origin_valid, "origin");
	if (rc == CAIRN_OK)
		rc = store_add_in(db, &where, "scope", f->scope, cairn_scope_valid,
			    "scope");
	if (rc)
		goto out;
	sbuf_addf(&sql, "SELECT " STORE_COLS " FROM main.records%s",
		  sbuf_str(&where));
	if (db->has_global)
		sbuf_addf(&sql,
			  " UNION ALL SELECT " STORE_COLS
			  " FROM global.records%s",
			  sbuf_str(&where));
	sbuf_adds(&sql, " ORDER BY updated DESC, id");
	if (f->limit > 0)
		sbuf_addf(&sql, " LIMIT %ld", f->limit);
	if (sql.err || where.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	src = sqlite3_prepare_v2(db->sql, sql.buf, -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "listing records");
		goto out;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			cairn_record **nv =
				util_realloc(v, ncap * sizeof(*v));

			if (!nv) {
				rc = store_error(db, CAIRN_NOMEM,
						 "out of memory");
				goto out;
			}
			v = nv;
			cap = ncap;
		}
		v[len] = store_row_record(st, 0);
		if (!v[len]) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		len++;
	}
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "listing records");
out:
	sqlite3_finalize(st);
	sbuf_release(&where);
	sbuf_release(&sql);
	if (rc) {
		cairn_record_list_free(v, len);
		return rc;
	}
	*out = v;
	*n = len;
	return CAIRN_OK;
}

int cairn_record_history(cairn_db *db, const char *key, const char *scope,
			 cairn_record ***out, size_t *n)
{
	cairn_record *cur = NULL, **v = NULL;
	const char *schema;
	char sql[512];
	sqlite3_stmt *st = NULL;
	size_t len = 0, cap = 8;
	int rc, src;

	*out = NULL;
	*n = 0;
	rc = CAIRN_NOTFOUND;
	if (!scope || strcmp(scope, "global") != 0)
		rc = store_find_one(db, "main", store_key_where(scope), key,
				    &cur);
	schema = "main";
	if (rc == CAIRN_NOTFOUND && db->has_global &&
	    (!scope || strcmp(scope, "global") == 0)) {
		rc = store_find_one(db, "global", "key = ?1", key, &cur);
		schema = "global";
	}
	/* not a key: a record id (a record need not have a key, and
	 * `cairn receipt`, `list` and the hook show ids) */
	if (rc == CAIRN_NOTFOUND && (!scope || strcmp(scope, "global") != 0)) {
		rc = store_find_one(db, "main", "id = ?1", key, &cur);
		schema = "main";
	}
	if (rc == CAIRN_NOTFOUND && db->has_global &&
	    (!scope || strcmp(scope, "global") == 0)) {
		rc = store_find_one(db, "global", "id = ?1", key, &cur);
		schema = "global";
	}
	if (rc == CAIRN_NOTFOUND)
		return store_error(db, rc, "no record with key or id '%s'",
				   key);
	if (rc)
		return rc;
	v = util_calloc(cap, sizeof(*v));
	if (!v) {
		cairn_record_free(cur);
		return store_error(db, CAIRN_NOMEM, "out of memory");
	}
	v[len++] = cur;
	/* revisions as records: the current row's fields, the old text */
	snprintf(sql, sizeof(sql),
		 "SELECT r.id, r.kind, r.key, r.scope, v.title, v.body, "
		 "v.status, v.confidence, v.proof, v.origin, r.src_path, "
		 "r.src_heading, r.src_line, r.src_commit, r.src_session, "
		 "r.src_tool, r.time, r.created, v.updated, r.last_seen, "
		 "r.supersedes, r.superseded_by, v.revision, v.hash FROM "
		 "%s.revisions v JOIN %s.records r ON r.id = v.record_id "
		 "WHERE v.record_id = ?1 ORDER BY v.revision DESC",
		 schema, schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "reading history");
		goto out;
	}
	sqlite3_bind_text(st, 1, cur->id, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cairn_record **nv =
				util_realloc(v, 2 * cap * sizeof(*v));

			if (!nv) {
				rc = store_error(db, CAIRN_NOMEM,
						 "out of memory");
				goto out;
			}
			v = nv;
			cap *= 2;
		}
		v[len] = store_row_record(st, 0);
		if (!v[len]) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		len++;
	}
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "reading history");
out:
	sqlite3_finalize(st);
	if (rc) {
		cairn_record_list_free(v, len);
		return rc;
	}
	*out = v;
	*n = len;
	return CAIRN_OK;
}

/* ------------------------------------------------------------------- stats */

static void stats_group(struct cairn_db *db, struct sbuf *sb, const char *col,
			int *rc)
{
	struct sbuf sql = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	int src, first = 1;

	sbuf_addf(&sql, "SELECT %s, count(*) FROM (SELECT %s FROM "
		  "main.records", col, col);
	if (db->has_global)
		sbuf_addf(&sql, " UNION ALL SELECT %s FROM global.records",
			  col);
	sbuf_addf(&sql, ") GROUP BY 1 ORDER BY 1");
	src = sqlite3_prepare_v2(db->sql, sbuf_str(&sql), -1, &st, NULL);
	sbuf_release(&sql);
	if (src != SQLITE_OK) {
		*rc = store_sql_error(db, src, "counting records");
		return;
	}
	sbuf_addf(sb, "\"%s\":{", col);
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		/* values are CHECK-constrained identifiers: no escaping needed */
		sbuf_addf(sb, "%s\"%s\":%lld", first ? "" : ",",
			  (const char *)sqlite3_column_text(st, 0),
			  (long long)sqlite3_column_int64(st, 1));
		first = 0;
	}
	sbuf_addc(sb, '}');
	if (src != SQLITE_DONE)
		*rc = store_sql_error(db, src, "counting records");
	sqlite3_finalize(st);
}

/* Complete lines in the receipt spool: receipts not yet in the table. */
static long long spooled_lines(struct cairn_db *db)
{
	char path[4200], buf[8192];
	long long n = 0;
	ssize_t got;
	int fd;

	if (!store_dir_file(db, STORE_SPOOL_FILE, path, sizeof(path)))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			n += buf[i] == '\n';
	close(fd);
	return n;
}

int cairn_stats_json(cairn_db *db, char **out)
{
	struct sbuf sb = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	long long total = 0, revs = 0, receipts = 0;
	int rc = CAIRN_OK;

	*out = NULL;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT (SELECT count(*) FROM main.records), "
			       "(SELECT count(*) FROM main.revisions), "
			       "(SELECT count(*) FROM main.receipts)",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		total = sqlite3_column_int64(st, 0);
		revs = sqlite3_column_int64(st, 1);
		receipts = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	sbuf_addf(&sb, "{\"workspace_records\":%lld,\"revisions\":%lld,"
		  "\"receipts\":%lld,\"receipts_spooled\":%lld,"
		  "\"global_attached\":%s,",
		  total, revs, receipts, spooled_lines(db),
		  db->has_global ? "true" : "false");
	stats_group(db, &sb, "kind", &rc);
	sbuf_addc(&sb, ',');
	stats_group(db, &sb, "status", &rc);
	sbuf_addc(&sb, ',');
	stats_group(db, &sb, "origin", &rc);
	sbuf_addc(&sb, ',');
	stats_group(db, &sb, "scope", &rc);
	sbuf_addc(&sb, '}');
	if (rc == CAIRN_OK && sb.err)
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
	if (rc) {
		sbuf_release(&sb);
		return rc;
	}
	*out = sbuf_detach(&sb, NULL);
	return *out ? CAIRN_OK : CAIRN_NOMEM;
}

/* --------------------------------------------------------------- integrity */

int cairn_check_integrity(cairn_db *db)
{
	const char *schemas[2] = { "main", "global" };
	char sql[160];
	sqlite3_stmt *st = NULL;
	int i, src;

	for (i = 0; i < 2; i++) {
		if (i == 1 && !db->has_global)
			break;
		snprintf(sql, sizeof(sql), "PRAGMA %s.integrity_check",
			 schemas[i]);
		src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
		if (src != SQLITE_OK)
			return store_sql_error(db, src, "checking integrity");
		src = sqlite3_step(st);
		if (src != SQLITE_ROW ||
		    strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
			store_error(db, CAIRN_CORRUPT, "%s: %s", schemas[i],
				    src == SQLITE_ROW
					    ? (const char *)sqlite3_column_text(
						      st, 0)
					    : sqlite3_errmsg(db->sql));
			sqlite3_finalize(st);
			return CAIRN_CORRUPT;
		}
		sqlite3_finalize(st);
		/* the FTS index must agree with the records table */
		snprintf(sql, sizeof(sql),
			 "INSERT INTO %s.records_fts(records_fts, rank) "
			 "VALUES ('integrity-check', 1)",
			 schemas[i]);
		src = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);
		if (src != SQLITE_OK)
			return store_error(db, CAIRN_CORRUPT,
					   "%s full-text index: %s", schemas[i],
					   sqlite3_errmsg(db->sql));
	}
	return CAIRN_OK;
}
