/*
 * store_pull.c -- the store's gate for what a team server sends (sync.c,
 * docs/TEAM.md).
 *
 * Layer: part of the store (the one module that writes records and
 * revisions: tests/t_layers.sh). sync.c talks to PostgreSQL and decides
 * what to take; every record or revision it takes is written here, behind
 * the same rules as any other write:
 *   - never trust the server: kind, status, origin (never "file": Git
 *     carries those), the scope of the store it goes to, confidence, the
 *     size limits, UTF-8 and the secret filter over every text field,
 *     provenance and hash included (a secret refuses, it is never masked:
 *     the text is someone else's), a valid id, a positive revision;
 *   - the approval gate team-wide: an agent's record (sync.c makes any
 *     record by a role that is no declared person one) that arrives
 *     standing without an approval (the caller's approved_by: a person's
 *     row in cairn.approvals for this very text) is stored as a
 *     candidate;
 *   - a seeded file's id ("f" + 15 hex digits) never comes from a server:
 *     a clone that has not seeded yet would take a forged ADR for the
 *     file's; dates are ISO-8601 and links valid ids, as on write;
 *   - UNIQUE(scope, key): a standing (accepted) local record keeps its key
 *     against a later server record that does not supersede it: that one
 *     is stored as a candidate for the key (pending_key), the way an
 *     agent's text for a taken key waits; any other local holder yields
 *     the key and becomes a candidate for it;
 *   - retiring or superseding another member's human record (the server's
 *     author is not its created_by) is a proposal: the record stands and
 *     the caller records a pending forget (unless the team opted out);
 *   - the revision: a record whose text or revision changes keeps its old
 *     text in revisions first (STORE_KEEP_REVISION_SQL).
 * Status, times, revision and hash are kept as the server gives them: they
 * are the team's, not this write's.
 *
 * Must never: write anything for a refused record; run outside the
 * caller's transaction (sync.c holds one per page).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"
#include "store.h"

int store_file_id_shaped(const char *id)
{
	size_t i;

	if (!id || id[0] != 'f' || strlen(id) != 16)
		return 0;
	for (i = 1; i < 16; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		      (id[i] >= 'a' && id[i] <= 'f') ||
		      (id[i] >= 'A' && id[i] <= 'F')))
			return 0;
	return 1;
}

static int agentish(const char *o)
{
	return strcmp(o, "agent") == 0 || strcmp(o, "capture") == 0 ||
	       strcmp(o, "reflection") == 0;
}

/* One text as given: the size limit, UTF-8 and the secret filter (refuse). */
static int pulled_text(struct cairn_db *db, const char *field, const char *v)
{
	const char *p = v;
	char *own = NULL;
	int rc;

	if (!v)
		return CAIRN_OK;
#ifndef CAIRN_MUTATE_SYNC_NO_PULL_SECRET
	rc = store_clean_text(db, field, &p, &own, 0);
#else
	/* tests/mutate: the server is trusted with secrets */
	rc = strlen(p) > STORE_MAX_TEXT ||
			     util_utf8_invalid_at(p, strlen(p)) >= 0
		     ? store_error(db, CAIRN_INVALID, "%s is too long or not "
				   "UTF-8", field)
		     : CAIRN_OK;
#endif
	cairn_free(own);
	return rc;
}

int store_pull_check(struct cairn_db *db, const char *schema,
		     const cairn_record *r, const char *pending_key)
{
	const char *names[] = { "id",	      "key",	   "pending key",
				"title",      "body",	   "proof",
				"source path", "source heading",
				"source commit", "session", "tool",
				"time",	      "supersedes", "superseded by",
				"created",    "updated",   "hash" };
	const char *vals[ARRAY_SIZE(names)];
	const char *want = strcmp(schema, "global") == 0 ? "global" : NULL;
	size_t i;
	int rc;

	vals[0] = r->id;
	vals[1] = r->key;
	vals[2] = pending_key;
	vals[3] = r->title;
	vals[4] = r->body;
	vals[5] = r->proof;
	vals[6] = r->src_path;
	vals[7] = r->src_heading;
	vals[8] = r->src_commit;
	vals[9] = r->src_session;
	vals[10] = r->src_tool;
	vals[11] = r->time;
	vals[12] = r->supersedes;
	vals[13] = r->superseded_by;
	vals[14] = r->created;
	vals[15] = r->updated;
	vals[16] = r->hash;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		rc = pulled_text(db, names[i], vals[i]);
		if (rc)
			return rc;
	}
	/* the scopes of the workspace store: workspace, machine (its own) */
	if (!r->scope || (want ? strcmp(r->scope, want) != 0
			       : strcmp(r->scope, "workspace") != 0 &&
					 strcmp(r->scope, "machine") != 0))
		return store_error(db, CAIRN_INVALID,
				   "not a record of the %s store (scope %s)",
				   want ? want : "workspace",
				   r->scope ? r->scope : "missing");
	if (!r->kind || !cairn_kind_valid(r->kind) || !r->status ||
	    !cairn_status_valid(r->status) || !r->origin ||
	    !cairn_origin_valid(r->origin))
		return store_error(db, CAIRN_INVALID,
				   "unknown kind, status or origin");
	if (strcmp(r->origin, "file") == 0)
		return store_error(db, CAIRN_INVALID,
				   "a file-backed record (Git carries those)");
	if (!r->body || !r->title || !r->created || !r->updated)
		return store_error(db, CAIRN_INVALID,
				   "its title, body or dates are missing");
	if (isnan(r->confidence) || r->confidence < 0 || r->confidence > 1)
		return store_error(db, CAIRN_INVALID,
				   "confidence %g is outside 0..1",
				   r->confidence);
	if (r->revision < 1)
		return store_error(db, CAIRN_INVALID,
				   "its revision is not a positive number");
	if (!r->id || !store_id_valid(r->id))
		return store_error(db, CAIRN_INVALID, "its id is not valid");
#ifndef CAIRN_MUTATE_SYNC_FILE_ID
	/* a seeded file's id is derived from its path ("f" + 15 hex
	 * digits): only Git gives those, never a server (a clone that has
	 * not seeded yet would take a forged ADR for the file's) */
	if (store_file_id_shaped(r->id))
		return store_error(db, CAIRN_READONLY,
				   "the id of a file-backed record (a seeded "
				   "file's: Git carries those, never the "
				   "server)");
#endif
	{
		const char *dn[3] = { "created", "updated", "time" };
		const char *dv[3];

		dv[0] = r->created;
		dv[1] = r->updated;
		dv[2] = r->time;
		for (i = 0; i < 3; i++)
			if (dv[i] && !util_iso_valid(dv[i]))
				return store_error(db, CAIRN_INVALID,
						   "%s '%.64s' is not an "
						   "ISO-8601 date", dn[i],
						   dv[i]);
	}
	if ((r->supersedes && !store_id_valid(r->supersedes)) ||
	    (r->superseded_by && !store_id_valid(r->superseded_by)))
		return store_error(db, CAIRN_INVALID,
				   "it links to an invalid record id");
	if ((r->key && strlen(r->key) > STORE_MAX_KEY) ||
	    (pending_key && strlen(pending_key) > STORE_MAX_KEY))
		return store_error(db, CAIRN_TOOBIG, "its key is too long");
	return CAIRN_OK;
}


/* Run sql with ?1 = a; what names it in an error. */
static int run1(struct cairn_db *db, const char *sql, const char *a,
		const char *what)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, what);
	return CAIRN_OK;
}

int store_pull_record(struct cairn_db *db, const char *schema,
		      const cairn_record *r, const char *pending_key,
		      const struct store_pulled *from,
		      struct store_pull_result *res)
{
	cairn_record *cur = NULL, *holder = NULL;
	const char *status, *key = r->key, *pkey = pending_key;
	const char *supby = r->superseded_by, *origin = r->origin;
	const char *tool = r->src_tool;
	char sql[1024];
	sqlite3_stmt *st = NULL;
	int rc, src;

	memset(res, 0, sizeof(*res));
	rc = store_pull_check(db, schema, r, pending_key);
	if (rc)
		return rc;
	status = r->status;
#ifndef CAIRN_MUTATE_SYNC_NO_PULL_GATE
	/* SPEC 4.5 team-wide: approved here or on the server, nowhere else
	 * (a status that does not stand -- retired, superseded, ... --
	 * needs no approval: the proposal rule below may still hold it) */
	if (from->author && agentish(r->origin) && !from->approved_by &&
	    (strcmp(status, "accepted") == 0 || strcmp(status, "stale") == 0 ||
	     strcmp(status, "unverified") == 0)) {
		status = "candidate";
		res->gated = 1;
	}
#else
	/* tests/mutate: what the server says stands */
	(void)agentish;
#endif
	rc = store_find_one(db, schema, "id = ?1", r->id, &cur);
	if (rc == CAIRN_NOTFOUND)
		rc = CAIRN_OK;
	if (rc)
		goto out;
	if (cur && !util_streq(cur->scope, r->scope)) {
		rc = store_error(db, CAIRN_INVALID,
				 "record '%s' is of scope %s here, %s on the "
				 "server", r->id, cur->scope, r->scope);
		goto out;
	}
	if (cur && store_is_file_backed(cur, NULL, 0)) {
		rc = store_error(db, CAIRN_READONLY,
				 "record '%s' is file-backed here", r->id);
		goto out;
	}
#ifndef CAIRN_MUTATE_SYNC_TEAM_FORGET
	/*
	 * Retiring or superseding another member's human record is a
	 * proposal, as an agent's forget is: the record stands here and the
	 * caller records a pending forget (unless the team opted out).
	 */
	if (cur && !from->others_forget && from->author && from->created_by &&
	    strcmp(from->author, from->created_by) != 0 &&
	    strcmp(cur->origin, "human") == 0 &&
	    (strcmp(cur->status, "accepted") == 0 ||
	     strcmp(cur->status, "stale") == 0) &&
	    (strcmp(status, "retired") == 0 ||
	     strcmp(status, "superseded") == 0)) {
		status = cur->status;
		supby = cur->superseded_by;
		if (util_streq(cur->title, r->title) &&
		    util_streq(cur->body, r->body)) {
			/* who wrote the text is unchanged */
			origin = cur->origin;
			tool = cur->src_tool;
		} else if (from->author && agentish(origin) &&
			   !from->approved_by) {
			/* a new text with it: the gate, as for any other */
			status = "candidate";
			res->gated = 1;
		}
		res->proposed = 1;
	}
#endif
	/* the key is the server's record's: a local holder yields it */
	if (r->key) {
		char w[64];

		snprintf(w, sizeof(w), "key = ?1 AND scope = '%s'",
			 strcmp(r->scope, "machine") == 0 ? "machine"
			 : strcmp(r->scope, "global") == 0 ? "global"
							  : "workspace");
		rc = store_find_one(db, schema, w, r->key, &holder);
		if (rc == CAIRN_NOTFOUND)
			rc = CAIRN_OK;
		if (rc)
			goto out;
	}
	if (holder && strcmp(holder->id, r->id) != 0) {
		if (store_is_file_backed(holder, NULL, 0)) {
			rc = store_error(db, CAIRN_READONLY,
					 "key '%.64s' belongs to file-backed "
					 "record '%s' here",
					 r->key, holder->id);
			goto out;
		}
	}
#ifndef CAIRN_MUTATE_SYNC_KEY_HIJACK
	/* a key held by a standing record is not taken over by a later
	 * row (one that does not supersede it): the later one waits as a
	 * candidate for the key, as an agent's text for a taken key does */
	if (holder && strcmp(holder->id, r->id) != 0 &&
	    (strcmp(holder->status, "accepted") == 0 ||
	     strcmp(holder->status, "stale") == 0) &&
	    !util_streq(r->supersedes, holder->id)) {
		pkey = r->key;
		key = NULL;
		if (strcmp(status, "rejected") != 0)
			status = "candidate";
		snprintf(res->held, sizeof(res->held), "%s", holder->id);
		cairn_record_free(holder);
		holder = NULL;
	}
#endif
	if (holder && strcmp(holder->id, r->id) != 0) {
		snprintf(sql, sizeof(sql),
			 "UPDATE %s.records SET pending_key = key, key = NULL, "
			 "status = 'candidate' WHERE id = ?1",
			 schema);
		rc = run1(db, sql, holder->id, "yielding a key");
		if (rc)
			goto out;
		snprintf(res->yielded, sizeof(res->yielded), "%s", holder->id);
	}
	if (cur && (!util_streq(cur->hash, r->hash) ||
		    cur->revision != r->revision)) {
		snprintf(sql, sizeof(sql), STORE_KEEP_REVISION_SQL, schema,
			 schema);
		rc = run1(db, sql, r->id, "keeping a revision");
		if (rc)
			goto out;
	}
	if (res->proposed) {
		snprintf(res->kept_status, sizeof(res->kept_status), "%s",
			 status);
		snprintf(res->kept_superseded_by,
			 sizeof(res->kept_superseded_by), "%s",
			 supby ? supby : "");
	}
	if (cur)
		snprintf(sql, sizeof(sql),
			 "UPDATE %s.records SET kind = ?2, key = ?3, "
			 "pending_key = ?4, title = ?5, body = ?6, status = "
			 "?7, confidence = ?8, proof = ?9, origin = ?10, "
			 "src_session = ?11, src_tool = ?12, time = ?13, "
			 "created = ?14, updated = ?15, supersedes = ?16, "
			 "superseded_by = ?17, revision = ?18, hash = ?19 "
			 "WHERE id = ?1 AND scope = ?20",
			 schema);
	else
		snprintf(sql, sizeof(sql),
			 "INSERT INTO %s.records (id, kind, key, pending_key, "
			 "title, body, status, confidence, proof, origin, "
			 "src_session, src_tool, time, created, updated, "
			 "supersedes, superseded_by, revision, hash, scope) "
			 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
			 "?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
			 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "storing a pulled record");
		goto out;
	}
	sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, r->kind, -1, SQLITE_STATIC);
	store_bind_opt(st, 3, key);
	store_bind_opt(st, 4, pkey);
	sqlite3_bind_text(st, 5, r->title, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, r->body, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, status, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 8, r->confidence);
	store_bind_opt(st, 9, r->proof);
	sqlite3_bind_text(st, 10, origin, -1, SQLITE_STATIC);
	store_bind_opt(st, 11, r->src_session);
	store_bind_opt(st, 12, tool);
	store_bind_opt(st, 13, r->time);
	sqlite3_bind_text(st, 14, r->created, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 15, r->updated, -1, SQLITE_STATIC);
	store_bind_opt(st, 16, r->supersedes);
	store_bind_opt(st, 17, supby);
	sqlite3_bind_int64(st, 18, r->revision);
	store_bind_opt(st, 19, r->hash);
	sqlite3_bind_text(st, 20, r->scope, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "storing a pulled record");
out:
	cairn_record_free(holder);
	cairn_record_free(cur);
	return rc;
}

int store_pull_revision(struct cairn_db *db, const char *schema,
			const char *record_id, const cairn_record *v)
{
	const char *names[] = { "title", "body", "proof", "updated", "hash" };
	const char *vals[5];
	char sql[512];
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc, src;

	vals[0] = v->title;
	vals[1] = v->body;
	vals[2] = v->proof;
	vals[3] = v->updated;
	vals[4] = v->hash;
	rc = pulled_text(db, "record id", record_id);
	for (i = 0; rc == CAIRN_OK && i < ARRAY_SIZE(names); i++)
		rc = pulled_text(db, names[i], vals[i]);
	if (rc)
		return rc;
	if (!v->title || !v->body || !v->updated)
		return store_error(db, CAIRN_INVALID, "a field is missing");
	if (!v->status || !cairn_status_valid(v->status) || !v->origin ||
	    !cairn_origin_valid(v->origin))
		return store_error(db, CAIRN_INVALID,
				   "unknown status or origin");
	if (isnan(v->confidence) || v->confidence < 0 || v->confidence > 1)
		return store_error(db, CAIRN_INVALID,
				   "confidence %g is outside 0..1",
				   v->confidence);
	if (v->revision < 1)
		return store_error(db, CAIRN_INVALID,
				   "its revision is not a positive number");
	/* only older than the record's current revision, and kept once */
	snprintf(sql, sizeof(sql),
		 "INSERT OR IGNORE INTO %s.revisions (record_id, revision, "
		 "title, body, status, confidence, proof, origin, updated, "
		 "hash) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE "
		 "?2 < (SELECT revision FROM %s.records WHERE id = ?1)",
		 schema, schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, record_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, v->revision);
		sqlite3_bind_text(st, 3, v->title, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, v->body, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, v->status, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 6, v->confidence);
		store_bind_opt(st, 7, v->proof);
		sqlite3_bind_text(st, 8, v->origin, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 9, v->updated, -1, SQLITE_STATIC);
		store_bind_opt(st, 10, v->hash);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "storing revisions");
	return CAIRN_OK;
}

int store_pull_yield_id(struct cairn_db *db, const char *id, int *dropped)
{
	static const char *const sqls[] = {
		"DELETE FROM main.records WHERE id = ?1 AND origin <> 'file' "
		"AND src_tool LIKE 'team:%'",
		"DELETE FROM main.sync_state WHERE record_id = ?1",
	};
	int rc;

	*dropped = 0;
	rc = run1(db, sqls[0], id, "dropping a pulled record");
	if (rc || sqlite3_changes(db->sql) == 0)
		return rc;
	*dropped = 1;
	return run1(db, sqls[1], id, "dropping a pulled record");
}
