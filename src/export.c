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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
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

/* A whole number in lo..hi from a JSON number, or CAIRN_INVALID. */
static int whole(struct cairn_db *db, const char *name, double v, double lo,
		 double hi, long *out)
{
	if (!(v >= lo && v <= hi) || v != floor(v))
		return store_error(db, CAIRN_INVALID,
				   "import: \"%s\" must be a whole number in "
				   "%.0f..%.0f",
				   name, lo, hi);
	*out = (long)v;
	return CAIRN_OK;
}

/*
 * One record line into schema through the store's write gate
 * (store_import_record), then its revisions.
 */
static int import_row(struct cairn_db *db, const char *schema,
		      const struct json *o, unsigned flags)
{
	const char *v[ARRAY_SIZE(rec_cols)];
	double conf = 1.0, rev = 1, line = 0;
	int has_conf = 0, has_rev = 0, has_line = 0;
	char idbuf[17];
	cairn_record r;
	size_t i;
	int rc = CAIRN_OK;

	memset(&r, 0, sizeof(r));
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
	}
	if (rc)
		goto out;
	/* 0 id, 1 kind, 2 key, 3 scope, 4 title, 5 body, 6 status, 9 origin */
	if (!v[1]) {
		rc = store_error(db, CAIRN_INVALID, "import: missing kind");
		goto out;
	}
	if (!v[5] || !*v[5]) {
		rc = store_error(db, CAIRN_INVALID, "import: missing body");
		goto out;
	}
	if (has_conf && !(conf >= 0 && conf <= 1)) {
		rc = store_error(db, CAIRN_INVALID,
				 "import: confidence %g outside 0..1", conf);
		goto out;
	}
	if (has_rev)
		rc = whole(db, "revision", rev, 1, 1e9, &r.revision);
	if (rc == CAIRN_OK && has_line)
		rc = whole(db, "src_line", line, 0, 1e9, &r.src_line);
	if (rc)
		goto out;
	if (!v[0]) {
		rc = store_new_id(idbuf);
		if (rc)
			goto out;
		v[0] = idbuf;
	}
	r.id = (char *)v[0];
	r.kind = (char *)v[1];
	r.key = (char *)v[2];
	r.scope = (char *)(strcmp(schema, "global") == 0 ? "global"
			   : v[3] && strcmp(v[3], "machine") == 0 ? "machine"
								   : "workspace");
	r.title = (char *)(v[4] ? v[4] : "");
	r.body = (char *)v[5];
	r.status = (char *)v[6];
	r.confidence = has_conf ? conf : 1.0;
	r.proof = (char *)v[8];
	r.origin = (char *)v[9];
	r.src_path = (char *)v[10];
	r.src_heading = (char *)v[11];
	r.src_commit = (char *)v[13];
	r.src_session = (char *)v[14];
	r.src_tool = (char *)v[15];
	r.time = (char *)v[16];
	r.created = (char *)v[17];
	r.updated = (char *)v[18];
	r.last_seen = (char *)v[19];
	r.supersedes = (char *)v[20];
	r.superseded_by = (char *)v[21];
	r.hash = (char *)v[23];
	rc = store_import_record(db, schema, &r, v[24], flags);
	if (rc)
		goto out;
	{
		const struct json *h = json_get(o, "history");
		const struct json *e;

		if (h && h->type != JSON_ARRAY && h->type != JSON_NULL) {
			rc = store_error(db, CAIRN_INVALID,
					 "import: \"history\" must be an array");
			goto out;
		}
		for (e = h && h->type == JSON_ARRAY ? h->child : NULL; e;
		     e = e->next) {
			cairn_record rv;
			double hrev = 0, hconf = 1;
			int hr = 0, hc = 0;

			memset(&rv, 0, sizeof(rv));
			rc = member_num(db, e, "revision", &hrev, &hr);
			if (!rc)
				rc = member_num(db, e, "confidence", &hconf, &hc);
			if (!rc)
				rc = member_str(db, e, "title",
						(const char **)&rv.title);
			if (!rc)
				rc = member_str(db, e, "body",
						(const char **)&rv.body);
			if (!rc)
				rc = member_str(db, e, "status",
						(const char **)&rv.status);
			if (!rc)
				rc = member_str(db, e, "proof",
						(const char **)&rv.proof);
			if (!rc)
				rc = member_str(db, e, "origin",
						(const char **)&rv.origin);
			if (!rc)
				rc = member_str(db, e, "updated",
						(const char **)&rv.updated);
			if (!rc)
				rc = member_str(db, e, "hash",
						(const char **)&rv.hash);
			if (!rc && (!hr || !(hrev >= 1 && hrev <= 1e9) ||
				    hrev != floor(hrev)))
				rc = store_error(db, CAIRN_INVALID,
						 "import: invalid history entry");
			if (rc)
				goto out;
			rv.revision = (long)hrev;
			rv.confidence = hconf;
			rc = store_import_revision(db, schema, r.id, &rv,
						   flags);
			if (rc)
				goto out;
		}
	}
out:
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
	if (scope && !cairn_scope_valid(scope)) {
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
		rc = store_import_drop(db, schema, id);
		if (rc)
			goto out;
	}
	rc = import_row(db, schema, o, flags);
out:
	if (in_tx)
		rc = store_tx_end(db, rc);
	json_free(o);
	if (rc && strncmp(db->errmsg, "import:", 7) != 0) {
		char msg[STORE_ERRMSG];

		snprintf(msg, sizeof(msg), "%s", db->errmsg);
		store_error(db, rc, "import: %s", msg);
	}
	return rc;
}
