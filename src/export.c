/*
 * export.c -- JSON Lines export and import of records with their revisions.
 *
 * Layer: on store. Export is deterministic (records in id order, fixed key
 * order, revisions oldest first) so that export -> import into an empty
 * store -> export gives the same bytes.
 *
 * Import is a write path: every text passes the secret filter, and every
 * kind, status, origin and scope is validated, never coerced.
 *
 * Must never: write a half record (each line is one transaction unless the
 * caller batches), or accept a line that fails validation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "secret.h"
#include "store.h"

/* ------------------------------------------------------------------ export */

static void add_field(struct sbuf *sb, const char *name, sqlite3_stmt *st,
		      int col, int comma)
{
	if (comma)
		sbuf_addc(sb, ',');
	sbuf_addf(sb, "\"%s\":", name);
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		sbuf_adds(sb, "null");
	else if (sqlite3_column_type(st, col) == SQLITE_INTEGER)
		sbuf_addf(sb, "%lld", (long long)sqlite3_column_int64(st, col));
	else if (sqlite3_column_type(st, col) == SQLITE_FLOAT)
		json_add_num(sb, sqlite3_column_double(st, col));
	else
		json_add_str(sb, (const char *)sqlite3_column_text(st, col),
			     (size_t)sqlite3_column_bytes(st, col));
}

static const char *const rec_cols[] = {
	"id",        "kind",          "key",        "scope",       "title",
	"body",      "status",        "confidence", "proof",       "origin",
	"src_path",  "src_heading",   "src_line",   "src_commit",  "src_session",
	"src_tool",  "time",          "created",    "updated",     "last_seen",
	"supersedes", "superseded_by", "revision",  "hash",        "pending_key",
};
static const char *const rev_cols[] = {
	"revision", "title", "body",    "status", "confidence",
	"proof",    "origin", "updated", "hash",
};

static int export_schema(struct cairn_db *db, const char *schema,
			 int (*write)(void *, const char *, size_t),
			 void *user)
{
	struct sbuf sql = SBUF_INIT, line = SBUF_INIT;
	sqlite3_stmt *st = NULL, *hs = NULL;
	size_t i;
	int rc = CAIRN_OK, src;

	sbuf_adds(&sql, "SELECT ");
	for (i = 0; i < ARRAY_SIZE(rec_cols); i++)
		sbuf_addf(&sql, "%s%s", i ? "," : "", rec_cols[i]);
	sbuf_addf(&sql, " FROM %s.records ORDER BY id", schema);
	src = sqlite3_prepare_v2(db->sql, sbuf_str(&sql), -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "exporting");
		goto out;
	}
	sbuf_reset(&sql);
	sbuf_adds(&sql, "SELECT ");
	for (i = 0; i < ARRAY_SIZE(rev_cols); i++)
		sbuf_addf(&sql, "%s%s", i ? "," : "", rev_cols[i]);
	sbuf_addf(&sql, " FROM %s.revisions WHERE record_id = ?1 ORDER BY "
		  "revision", schema);
	src = sqlite3_prepare_v2(db->sql, sbuf_str(&sql), -1, &hs, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "exporting");
		goto out;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		int first = 1;

		sbuf_reset(&line);
		sbuf_addc(&line, '{');
		for (i = 0; i < ARRAY_SIZE(rec_cols); i++)
			add_field(&line, rec_cols[i], st, (int)i, i > 0);
		sbuf_adds(&line, ",\"history\":[");
		sqlite3_reset(hs);
		sqlite3_bind_text(hs, 1, (const char *)sqlite3_column_text(st, 0),
				  -1, SQLITE_TRANSIENT);
		while (sqlite3_step(hs) == SQLITE_ROW) {
			size_t k;

			sbuf_adds(&line, first ? "{" : ",{");
			for (k = 0; k < ARRAY_SIZE(rev_cols); k++)
				add_field(&line, rev_cols[k], hs, (int)k,
					  k > 0);
			sbuf_addc(&line, '}');
			first = 0;
		}
		sbuf_adds(&line, "]}\n");
		if (line.err) {
			rc = store_error(db, line.err, "exporting: %s",
					 cairn_errstr(line.err));
			goto out;
		}
		if (write(user, line.buf, line.len) != 0) {
			rc = store_error(db, CAIRN_IO, "exporting: write failed");
			goto out;
		}
	}
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "exporting");
out:
	sqlite3_finalize(st);
	sqlite3_finalize(hs);
	sbuf_release(&sql);
	sbuf_release(&line);
	return rc;
}

int cairn_export(cairn_db *db, int (*write)(void *, const char *, size_t),
		 void *user)
{
	int rc = export_schema(db, "main", write, user);

	if (rc == CAIRN_OK && db->has_global)
		rc = export_schema(db, "global", write, user);
	return rc;
}

/* ------------------------------------------------------------------ import */

/* A JSON member as a string: the string, NULL for null/absent, or an error. */
static int member_str(struct cairn_db *db, const struct json *o,
		      const char *name, const char **out)
{
	const struct json *m = json_get(o, name);

	*out = NULL;
	if (!m || m->type == JSON_NULL)
		return CAIRN_OK;
	if (m->type != JSON_STRING)
		return store_error(db, CAIRN_INVALID,
				   "import: \"%s\" must be a string", name);
	if (memchr(m->str, '\0', m->len))
		return store_error(db, CAIRN_INVALID,
				   "import: \"%s\" contains a NUL byte", name);
	*out = m->str;
	return CAIRN_OK;
}

static int member_num(struct cairn_db *db, const struct json *o,
		      const char *name, double *out, int *present)
{
	const struct json *m = json_get(o, name);

	*present = 0;
	if (!m || m->type == JSON_NULL)
		return CAIRN_OK;
	if (m->type != JSON_NUMBER)
		return store_error(db, CAIRN_INVALID,
				   "import: \"%s\" must be a number", name);
	*out = m->num;
	*present = 1;
	return CAIRN_OK;
}

/*
 * Check one text for secrets; with CAIRN_WRITE_REDACT returns a masked copy
 * in *own (caller frees) and points *val at it.
 */
static int import_secret(struct cairn_db *db, const char *field,
			 const char **val, char **own, unsigned flags)
{
	struct secret_hit hit;
	char msg[256];

	*own = NULL;
	if (!*val || secret_scan(*val, strlen(*val), &hit, 1) == 0)
		return CAIRN_OK;
	if (secret_unscanned(&hit))
		return store_error(db, CAIRN_NOMEM, "out of memory");
	if (!(flags & CAIRN_WRITE_REDACT)) {
		secret_describe(&hit, field, msg, sizeof(msg));
		return store_error(db, CAIRN_SECRET, "import: %s", msg);
	}
	*own = secret_redact(*val, strlen(*val), NULL);
	if (!*own)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	*val = *own;
	return CAIRN_OK;
}

static int import_row(struct cairn_db *db, const char *schema,
		      const struct json *o, unsigned flags)
{
	const char *v[ARRAY_SIZE(rec_cols)];
	char *own[ARRAY_SIZE(rec_cols)];
	double conf = 1.0, rev = 1, line = 0;
	int has_conf = 0, has_rev = 0, has_line = 0;
	char now[32], idbuf[17], hash[65];
	struct sbuf sql = SBUF_INIT, hb = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc = CAIRN_OK, src;

	memset(own, 0, sizeof(own));
	util_now_iso(now, sizeof(now));
	for (i = 0; i < ARRAY_SIZE(rec_cols) && rc == CAIRN_OK; i++) {
		v[i] = NULL;
		if (strcmp(rec_cols[i], "confidence") == 0)
			rc = member_num(db, o, "confidence", &conf, &has_conf);
		else if (strcmp(rec_cols[i], "revision") == 0)
			rc = member_num(db, o, "revision", &rev, &has_rev);
		else if (strcmp(rec_cols[i], "src_line") == 0)
			rc = member_num(db, o, "src_line", &line, &has_line);
		else
			rc = member_str(db, o, rec_cols[i], &v[i]);
		if (rc == CAIRN_OK && v[i]) {
			long bad = util_utf8_invalid_at(v[i], strlen(v[i]));

			if (bad >= 0)
				rc = store_error(db, CAIRN_INVALID,
						 "import: \"%s\" is not valid "
						 "UTF-8 at byte %ld",
						 rec_cols[i], bad);
		}
	}
	if (rc)
		goto out;
	/* 0 id, 1 kind, 2 key, 3 scope, 4 title, 5 body, 6 status, 9 origin */
	if (!v[1] || !cairn_kind_valid(v[1])) {
		rc = store_error(db, CAIRN_INVALID, "import: %s kind '%s'",
				 v[1] ? "unknown" : "missing",
				 v[1] ? v[1] : "");
		goto out;
	}
	if (!v[5] || !*v[5]) {
		rc = store_error(db, CAIRN_INVALID, "import: missing body");
		goto out;
	}
	if (v[6] && !cairn_status_valid(v[6])) {
		rc = store_error(db, CAIRN_INVALID,
				 "import: unknown status '%s'", v[6]);
		goto out;
	}
	if (v[9] && !cairn_origin_valid(v[9])) {
		rc = store_error(db, CAIRN_INVALID,
				 "import: unknown origin '%s'", v[9]);
		goto out;
	}
	if (has_conf && (conf < 0 || conf > 1)) {
		rc = store_error(db, CAIRN_INVALID,
				 "import: confidence %g outside 0..1", conf);
		goto out;
	}
	rc = import_secret(db, "key", &v[2], &own[2], flags);
	if (rc == CAIRN_OK)
		rc = import_secret(db, "title", &v[4], &own[4], flags);
	if (rc == CAIRN_OK)
		rc = import_secret(db, "body", &v[5], &own[5], flags);
	if (rc == CAIRN_OK)
		rc = import_secret(db, "proof", &v[8], &own[8], flags);
	if (rc)
		goto out;
	if (!v[0]) {
		rc = store_new_id(idbuf);
		if (rc)
			goto out;
		v[0] = idbuf;
	}
	if (!v[4])
		v[4] = "";
	if (!v[6])
		v[6] = v[9] && strcmp(v[9], "human") != 0 &&
				       strcmp(v[9], "file") != 0
			       ? "candidate"
			       : "accepted";
	if (!v[9])
		v[9] = "human";
	v[3] = strcmp(schema, "global") == 0 ? "global" : "workspace";
	if (!v[17])
		v[17] = now;
	if (!v[18])
		v[18] = now;
	if (!v[23]) {
		sbuf_adds(&hb, v[4]);
		sbuf_addc(&hb, '\0');
		sbuf_adds(&hb, v[5]);
		if (hb.err) {
			rc = store_error(db, hb.err, "import: out of memory");
			goto out;
		}
		util_sha256_hex(sbuf_str(&hb), hb.len, hash);
		v[23] = hash;
	}
	sbuf_addf(&sql, "INSERT INTO %s.records (", schema);
	for (i = 0; i < ARRAY_SIZE(rec_cols); i++)
		sbuf_addf(&sql, "%s%s", i ? "," : "", rec_cols[i]);
	sbuf_adds(&sql, ") VALUES (");
	for (i = 0; i < ARRAY_SIZE(rec_cols); i++)
		sbuf_addf(&sql, "%s?%zu", i ? "," : "", i + 1);
	sbuf_addc(&sql, ')');
	if (sql.err) { /* found by tests/unit_faults.c */
		rc = store_error(db, sql.err, "import: out of memory");
		goto out;
	}
	src = sqlite3_prepare_v2(db->sql, sbuf_str(&sql), -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "importing");
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(rec_cols); i++) {
		int k = (int)i + 1;

		if (strcmp(rec_cols[i], "confidence") == 0)
			sqlite3_bind_double(st, k, conf);
		else if (strcmp(rec_cols[i], "revision") == 0)
			sqlite3_bind_int64(st, k, has_rev ? (long long)rev : 1);
		else if (strcmp(rec_cols[i], "src_line") == 0 && has_line)
			sqlite3_bind_int64(st, k, (long long)line);
		else if (v[i])
			sqlite3_bind_text(st, k, v[i], -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, k);
	}
	src = sqlite3_step(st);
	if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "importing");
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	rc = CAIRN_OK;
	{
		const struct json *h = json_get(o, "history");
		const struct json *e;

		if (h && h->type != JSON_ARRAY && h->type != JSON_NULL) {
			rc = store_error(db, CAIRN_INVALID,
					 "import: \"history\" must be an array");
			goto out;
		}
		sbuf_reset(&sql);
		sbuf_addf(&sql, "INSERT INTO %s.revisions (record_id, revision, "
			  "title, body, status, confidence, proof, origin, "
			  "updated, hash) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,"
			  "?10)", schema);
		if (sql.err) {
			rc = store_error(db, sql.err, "import: out of memory");
			goto out;
		}
		for (e = h && h->type == JSON_ARRAY ? h->child : NULL; e;
		     e = e->next) {
			const char *t = NULL, *b = NULL, *s = NULL, *p = NULL,
				   *og = NULL, *u = NULL, *hh = NULL;
			char *o1 = NULL, *o2 = NULL, *o3 = NULL;
			double r = 0, c = 1;
			int hr = 0, hc = 0;

			rc = member_num(db, e, "revision", &r, &hr);
			if (!rc)
				rc = member_num(db, e, "confidence", &c, &hc);
			if (!rc)
				rc = member_str(db, e, "title", &t);
			if (!rc)
				rc = member_str(db, e, "body", &b);
			if (!rc)
				rc = member_str(db, e, "status", &s);
			if (!rc)
				rc = member_str(db, e, "proof", &p);
			if (!rc)
				rc = member_str(db, e, "origin", &og);
			if (!rc)
				rc = member_str(db, e, "updated", &u);
			if (!rc)
				rc = member_str(db, e, "hash", &hh);
			if (!rc && (!hr || !b || !s || !cairn_status_valid(s) ||
				    (og && !cairn_origin_valid(og))))
				rc = store_error(db, CAIRN_INVALID,
						 "import: invalid history entry");
			if (!rc)
				rc = import_secret(db, "title", &t, &o1, flags);
			if (!rc)
				rc = import_secret(db, "body", &b, &o2, flags);
			if (!rc)
				rc = import_secret(db, "proof", &p, &o3, flags);
			if (!rc) {
				src = sqlite3_prepare_v2(db->sql, sql.buf, -1,
							 &st, NULL);
				if (src == SQLITE_OK) {
					sqlite3_bind_text(st, 1, v[0], -1,
							  SQLITE_STATIC);
					sqlite3_bind_int64(st, 2, (long long)r);
					sqlite3_bind_text(st, 3, t ? t : "", -1,
							  SQLITE_STATIC);
					sqlite3_bind_text(st, 4, b, -1,
							  SQLITE_STATIC);
					sqlite3_bind_text(st, 5, s, -1,
							  SQLITE_STATIC);
					sqlite3_bind_double(st, 6, c);
					if (p)
						sqlite3_bind_text(st, 7, p, -1,
								  SQLITE_STATIC);
					sqlite3_bind_text(st, 8,
							  og ? og : "human", -1,
							  SQLITE_STATIC);
					sqlite3_bind_text(st, 9, u ? u : now,
							  -1, SQLITE_STATIC);
					if (hh)
						sqlite3_bind_text(st, 10, hh, -1,
								  SQLITE_STATIC);
					src = sqlite3_step(st);
				}
				sqlite3_finalize(st);
				st = NULL;
				if (src != SQLITE_DONE)
					rc = store_sql_error(db, src,
							     "importing history");
			}
			cairn_free(o1);
			cairn_free(o2);
			cairn_free(o3);
			if (rc)
				goto out;
		}
	}
out:
	sqlite3_finalize(st);
	sbuf_release(&sql);
	sbuf_release(&hb);
	for (i = 0; i < ARRAY_SIZE(own); i++)
		cairn_free(own[i]);
	return rc;
}

int cairn_import_line(cairn_db *db, const char *line, size_t len,
		      unsigned flags, int replace, int *skipped)
{
	struct json *o = NULL;
	const char *id = NULL, *scope = NULL, *schema;
	char err[256];
	sqlite3_stmt *st = NULL;
	char sql[128];
	int rc, exists = 0, in_tx = 0;

	*skipped = 0;
	if (len > EXPORT_MAX_LINE)
		return store_error(db, CAIRN_TOOBIG,
				   "import: line of %zu bytes is over the "
				   "limit of %zu",
				   len, EXPORT_MAX_LINE);
	rc = json_parse(line, len, &o, err, sizeof(err));
	if (rc)
		return store_error(db, rc, "import: %s", err);
	if (o->type != JSON_OBJECT) {
		rc = store_error(db, CAIRN_INVALID,
				 "import: a line must be a JSON object");
		goto out;
	}
	rc = member_str(db, o, "id", &id);
	if (rc == CAIRN_OK)
		rc = member_str(db, o, "scope", &scope);
	if (rc)
		goto out;
	if (scope && strcmp(scope, "workspace") != 0 &&
	    strcmp(scope, "global") != 0) {
		rc = store_error(db, CAIRN_INVALID,
				 "import: unknown scope '%s'", scope);
		goto out;
	}
	schema = store_schema(scope);
	if (strcmp(schema, "global") == 0) {
		rc = store_attach_global(db, 1);
		if (rc)
			goto out;
	}
	rc = store_tx_begin(db);
	if (rc)
		goto out;
	in_tx = 1;
	if (id) {
		snprintf(sql, sizeof(sql),
			 "SELECT 1 FROM %s.records WHERE id = ?1", schema);
		if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) ==
		    SQLITE_OK) {
			sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
			exists = sqlite3_step(st) == SQLITE_ROW;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	if (exists && !replace) {
		*skipped = 1;
		goto out;
	}
	if (exists) {
		snprintf(sql, sizeof(sql),
			 "DELETE FROM %s.records WHERE id = ?1", schema);
		if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) ==
		    SQLITE_OK) {
			sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
			if (sqlite3_step(st) != SQLITE_DONE)
				rc = store_sql_error(db, sqlite3_errcode(db->sql),
						     "importing");
		}
		sqlite3_finalize(st);
		st = NULL;
		if (rc)
			goto out;
	}
	rc = import_row(db, schema, o, flags);
out:
	if (in_tx)
		rc = store_tx_end(db, rc);
	json_free(o);
	return rc;
}
