/*
 * sync.c -- team memory on PostgreSQL (docs/TEAM.md).
 *
 * Local-first: the SQLite store stays the recall index and nothing on the
 * hook's or the MCP server's path touches this file. `cairn sync` pushes
 * the records changed here and pulls the others' since the last sync.
 *
 * What travels: a workspace's records to the team space of its repository
 * (the remote's space), global records to the user's own space
 * ("user:" + the server role), file-backed records never (Git carries
 * their source), machine-scoped ones only with CAIRN_SYNC_MACHINE (and
 * none is ever pulled: it is true on the machine that proved it). Vectors do not travel: a pulled record is embedded by the
 * next `cairn reindex` with whatever model this machine has (the store's
 * triggers drop a vector whose text changed).
 *
 * Change tracking costs the write path nothing: sync_state (migration 7)
 * keeps, per remote (NAME@server_id: state_key) and record, the server
 * version ("ver") this copy is based on and a fingerprint of the record as
 * last synced. A record whose fingerprint differs is a local change.
 *
 * Server: schema "cairn" (versioned in cairn.meta, migrated forward under
 * an advisory lock). Every push runs under one transaction-scoped
 * advisory lock and takes its "seq" numbers from one sequence while
 * holding it, so seq order is commit order and a pull's cursor (the
 * largest seq seen, per space) never skips a row.
 *
 * Conflict rule: a push whose base version is not the server's (someone
 * else changed the record since this machine last synced it) keeps the
 * server's version; when the text differs, this machine's text becomes a
 * new candidate (pending_key: approving it replaces the keyed record), so
 * nothing is lost silently. A status-only conflict keeps the server's
 * status and says so. A new keyed record whose key another record holds
 * on the server becomes a candidate for that key.
 *
 * Never trust the server: this file writes no record or revision itself
 * (tests/t_layers.sh); what it takes goes through the store's gate,
 * store_pull_record/_revision (store_pull.c): the secret filter and the
 * store's validity rules, else it is refused (counted, logged, not
 * stored).
 *
 * Who wrote what is the server's word, never the row's (server schema 2):
 * triggers the schema owner owns stamp each row with the role that wrote
 * it (records.author and created_by, revisions.author) and each approval
 * (cairn.approvals: the approver's own row, with a hash of the text it
 * approved); cairn.roles, the owner's list, says which roles are people.
 * A row by a role that is no declared person is an agent's whatever its
 * origin says (srec_trust), so the gate keeps it a candidate unless a
 * person's approval of that very text stands (SYNC_PG_WHO); a pulled
 * record's source names its author ("from the team, by alice"). A seeded
 * file's id, a key held by an accepted record, another member's
 * retirement of a human record (a pending forget instead), bad dates and
 * dangling links: store_pull.c and pull_schema.
 *
 * libpq is loaded with dlopen() on the first sync, so no other command
 * (the hook above all) pays for it.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h> /* types only: libpq is loaded with dlopen() */

#include "secret.h"
#include "store.h"

#define SYNC_LIBPQ "libpq.so.5"
#define SYNC_SERVER_SCHEMA 2      /* cairn.meta schema_version this cairn writes */
#define SYNC_LOCK 0x636169726eLL  /* advisory lock key of pushes and migrations */
#define SYNC_BATCH 500            /* records per push transaction / pull page */
#define SYNC_NAME_MAX 64

/* ------------------------------------------------------------------ libpq */

static struct {
	PGconn *(*connectdb)(const char *);
	ConnStatusType (*status)(const PGconn *);
	char *(*error_message)(const PGconn *);
	void (*finish)(PGconn *);
	PGresult *(*exec)(PGconn *, const char *);
	PGresult *(*exec_params)(PGconn *, const char *, int, const Oid *,
				 const char *const *, const int *,
				 const int *, int);
	ExecStatusType (*result_status)(const PGresult *);
	char *(*result_error_message)(const PGresult *);
	void (*clear)(PGresult *);
	int (*ntuples)(const PGresult *);
	char *(*getvalue)(const PGresult *, int, int);
	int (*getisnull)(const PGresult *, int, int);
	int (*consume_input)(PGconn *);
	PGnotify *(*notifies)(PGconn *);
	void (*freemem)(void *);
	int (*socket)(const PGconn *);
	PQconninfoOption *(*conninfo_parse)(const char *, char **);
	void (*conninfo_free)(PQconninfoOption *);
	char why[512];
} pq;

static pthread_once_t pq_once = PTHREAD_ONCE_INIT;

static void pq_load(void)
{
	static const char *const names[] = {
		"PQconnectdb",	   "PQstatus",	       "PQerrorMessage",
		"PQfinish",	   "PQexec",	       "PQexecParams",
		"PQresultStatus",  "PQresultErrorMessage", "PQclear",
		"PQntuples",	   "PQgetvalue",       "PQgetisnull",
		"PQconsumeInput",  "PQnotifies",       "PQfreemem",
		"PQsocket",	   "PQconninfoParse",  "PQconninfoFree",
	};
	void **const slots[] = {
		(void **)&pq.connectdb,	    (void **)&pq.status,
		(void **)&pq.error_message, (void **)&pq.finish,
		(void **)&pq.exec,	    (void **)&pq.exec_params,
		(void **)&pq.result_status, (void **)&pq.result_error_message,
		(void **)&pq.clear,	    (void **)&pq.ntuples,
		(void **)&pq.getvalue,	    (void **)&pq.getisnull,
		(void **)&pq.consume_input, (void **)&pq.notifies,
		(void **)&pq.freemem,	    (void **)&pq.socket,
		(void **)&pq.conninfo_parse, (void **)&pq.conninfo_free,
	};

	(void)util_dl_syms(SYNC_LIBPQ, "Debian's libpq5", names, slots,
			   ARRAY_SIZE(names), pq.why, sizeof(pq.why));
}

static int pq_ready(struct cairn_db *db)
{
	pthread_once(&pq_once, pq_load);
	if (pq.why[0])
		return store_error(db, CAIRN_IO, "team sync: %s", pq.why);
	return CAIRN_OK;
}

/* ---------------------------------------------------------------- remotes */

static int name_valid(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return 0;
	for (; *s; s++, n++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return 0;
	}
	return n <= SYNC_NAME_MAX;
}

static int meta_set(struct cairn_db *db, const char *schema, const char *k,
		    const char *v)
{
	return store_meta_set(db, schema, k, v, "writing a setting");
}

struct remote {
	char name[SYNC_NAME_MAX + 1];
	char url[2048];
	char space[512];
	char server[80]; /* the server's id once connected ("" before) */
};

/*
 * The key of a remote's sync state (sync_state.server, the cursors in
 * meta): its name and the server's id, NAME@SERVER_ID. Two remotes on one
 * server (two spaces, or two roles that row-level security shows other
 * rows) each keep their own: with the server's id alone, a record synced
 * to one counted as synced to the other and never went there.
 */
static void state_key(const struct remote *r, char *buf, size_t size)
{
	snprintf(buf, size, "%s@%s", r->name, r->server);
}

static int remote_get(struct cairn_db *db, const char *name,
		      struct remote *r)
{
	char k[160];
	int found, rc;

	memset(r, 0, sizeof(*r));
	if (!name) {
		/* the only remote */
		sqlite3_stmt *st = NULL;
		int n = 0;

		if (sqlite3_prepare_v2(db->sql,
				       "SELECT k FROM main.meta WHERE k LIKE "
				       "'remote.%.url' ORDER BY k",
				       -1, &st, NULL) != SQLITE_OK)
			return store_sql_error(db, sqlite3_errcode(db->sql),
					       "reading remotes");
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *kk = (const char *)sqlite3_column_text(st, 0);
			size_t len = strlen(kk) - 11; /* "remote." ".url" */

			if (n++ == 0 && len <= SYNC_NAME_MAX)
				memcpy(r->name, kk + 7, len);
		}
		sqlite3_finalize(st);
		if (n == 0)
			return store_error(db, CAIRN_NOTFOUND,
					   "no remote: add one with `cairn "
					   "remote add NAME postgres://...`");
		if (n > 1)
			return store_error(db, CAIRN_INVALID,
					   "%d remotes: name the one to sync "
					   "(cairn remote list)", n);
	} else {
		if (!name_valid(name))
			return store_error(db, CAIRN_INVALID,
					   "invalid remote name '%s' (letters, "
					   "digits, - and _, at most %d)",
					   name, SYNC_NAME_MAX);
		snprintf(r->name, sizeof(r->name), "%s", name);
	}
	snprintf(k, sizeof(k), "remote.%s.url", r->name);
	rc = store_meta_get(db, "main", k, r->url, sizeof(r->url), &found);
	if (rc)
		return rc;
	if (!found)
		return store_error(db, CAIRN_NOTFOUND,
				   "no remote '%s' (cairn remote list)",
				   r->name);
	snprintf(k, sizeof(k), "remote.%s.space", r->name);
	rc = store_meta_get(db, "main", k, r->space, sizeof(r->space), &found);
	if (rc)
		return rc;
	snprintf(k, sizeof(k), "remote.%s.server", r->name);
	return store_meta_get(db, "main", k, r->server, sizeof(r->server),
			      &found);
}

int cairn_remote_add(cairn_db *db, const char *name, const char *conninfo,
		     const char *space)
{
	PQconninfoOption *opts, *o;
	char *err = NULL, k[160];
	int rc, found;
	char old[8];

	if (!name_valid(name))
		return store_error(db, CAIRN_INVALID,
				   "invalid remote name '%s' (letters, digits, "
				   "- and _, at most %d)",
				   name ? name : "", SYNC_NAME_MAX);
	if (!conninfo || !*conninfo || strlen(conninfo) >= 2048)
		return store_error(db, CAIRN_INVALID,
				   "a remote needs a connection string "
				   "(postgres://USER@HOST/DB?sslmode=require)");
	rc = pq_ready(db);
	if (rc)
		return rc;
	opts = pq.conninfo_parse(conninfo, &err);
	if (!opts) {
		rc = store_error(db, CAIRN_INVALID,
				 "not a PostgreSQL connection string: %s",
				 err ? err : "out of memory");
		if (err)
			pq.freemem(err);
		return rc;
	}
	for (o = opts; o->keyword; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
			break;
	if (o->keyword) {
		pq.conninfo_free(opts);
		return store_error(db, CAIRN_INVALID,
				   "the connection string carries a password; "
				   "cairn never stores one: remove it and put "
				   "it in ~/.pgpass (or the file $PGPASSFILE "
				   "names), one line "
				   "host:port:database:user:password, mode "
				   "0600");
	}
	pq.conninfo_free(opts);
	if (!space || !*space)
		return store_error(db, CAIRN_INVALID,
				   "no team space: give --space NAME (or add "
				   "a Git remote 'origin' to derive it from)");
	if (strlen(space) >= 512 ||
	    util_utf8_invalid_at(space, strlen(space)) >= 0 ||
	    strncmp(space, "user:", 5) == 0)
		return store_error(db, CAIRN_INVALID,
				   "invalid team space '%s' (any text but "
				   "'user:...', which names a person's own "
				   "space)", space);
	snprintf(k, sizeof(k), "remote.%s.url", name);
	rc = store_meta_get(db, "main", k, old, sizeof(old), &found);
	if (rc)
		return rc;
	if (found)
		return store_error(db, CAIRN_EXISTS,
				   "remote '%s' exists (cairn remote rm %s "
				   "first)", name, name);
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = meta_set(db, "main", k, conninfo);
	snprintf(k, sizeof(k), "remote.%s.space", name);
	if (rc == CAIRN_OK)
		rc = meta_set(db, "main", k, space);
	return store_tx_end(db, rc);
}

int cairn_remote_rm(cairn_db *db, const char *name)
{
	static const char *const parts[] = { "url", "space", "server" };
	struct remote r;
	char k[160];
	size_t i;
	int rc;

	rc = remote_get(db, name, &r);
	if (rc)
		return rc;
	rc = store_tx_begin(db);
	for (i = 0; rc == CAIRN_OK && i < ARRAY_SIZE(parts); i++) {
		snprintf(k, sizeof(k), "remote.%s.%s", r.name, parts[i]);
		rc = meta_set(db, "main", k, NULL);
	}
	return store_tx_end(db, rc);
}

static void json_str(struct sbuf *sb, const char *s)
{
	sbuf_addc(sb, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			sbuf_addf(sb, "\\%c", c);
		else if (c < 0x20)
			sbuf_addf(sb, "\\u%04x", c);
		else
			sbuf_addc(sb, (char)c);
	}
	sbuf_addc(sb, '"');
}

int cairn_remote_list_json(cairn_db *db, char **out)
{
	struct sbuf sb = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	int n = 0;

	*out = NULL;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT u.k, u.v, s.v FROM main.meta u LEFT JOIN "
			       "main.meta s ON s.k = substr(u.k, 1, "
			       "length(u.k) - 4) || '.space' WHERE u.k LIKE "
			       "'remote.%.url' ORDER BY u.k",
			       -1, &st, NULL) != SQLITE_OK)
		return store_sql_error(db, sqlite3_errcode(db->sql),
				       "reading remotes");
	sbuf_addc(&sb, '[');
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		char nm[SYNC_NAME_MAX + 1];
		size_t len = strlen(k) - 11;

		if (len > SYNC_NAME_MAX)
			continue;
		memcpy(nm, k + 7, len);
		nm[len] = '\0';
		if (n++)
			sbuf_addc(&sb, ',');
		sbuf_adds(&sb, "{\"name\":");
		json_str(&sb, nm);
		sbuf_adds(&sb, ",\"url\":");
		json_str(&sb, (const char *)sqlite3_column_text(st, 1));
		sbuf_adds(&sb, ",\"space\":");
		json_str(&sb, (const char *)sqlite3_column_text(st, 2));
		sbuf_addc(&sb, '}');
	}
	sqlite3_finalize(st);
	sbuf_addc(&sb, ']');
	if (sb.err) {
		sbuf_release(&sb);
		return store_error(db, CAIRN_NOMEM, "out of memory");
	}
	*out = sbuf_detach(&sb, NULL);
	return CAIRN_OK;
}

/* ----------------------------------------------------------- connections */

struct pg {
	PGconn *c;
	char server[80]; /* cairn.meta server_id */
	char user[256];  /* session_user */
	const char *remote; /* the remote's name (borrowed from its struct remote) */
	int others_forget;  /* cairn.meta others_forget = 'direct': a member
			     * retires another's human record directly */
	char state[SYNC_NAME_MAX + 82]; /* sync_state key: NAME@server */
};

/* A sentence about why connecting failed, with the fix where we know it. */
static int connect_error(struct cairn_db *db, const struct remote *r,
			 const char *msg)
{
	char m[768];
	const char *hint = "";
	size_t n;

	snprintf(m, sizeof(m), "%s", msg ? msg : "unknown error");
	n = strlen(m);
	while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
		m[--n] = '\0';
	for (n = 0; m[n]; n++)
		if (m[n] == '\n' || m[n] == '\t')
			m[n] = ' ';
	if (strstr(m, "password authentication failed") ||
	    strstr(m, "no password supplied") ||
	    strstr(m, "password is required"))
		hint = " -- the password is wrong or missing: cairn reads it "
		       "from ~/.pgpass or the file $PGPASSFILE names "
		       "(host:port:database:user:password, mode 0600)";
	else if (strstr(m, "server does not support SSL"))
		hint = " -- the connection string requires TLS (sslmode) "
		       "but the server offers none";
	else if (strstr(m, "certificate verify failed") ||
		 strstr(m, "does not match host name") ||
		 strstr(m, "root certificate file"))
		hint = " -- the server's certificate is not one this machine "
		       "can verify: sslrootcert=FILE (or $PGSSLROOTCERT) must "
		       "name the CA that signed it, and the host must be a "
		       "name or address the certificate lists";
	else if (strstr(m, "no encryption"))
		hint = " -- the server accepts this role only over TLS: add "
		       "sslmode=require (or verify-full) to the connection "
		       "string";
	else if (strstr(m, "Connection refused") ||
		 strstr(m, "No such file or directory") ||
		 strstr(m, "could not translate host name") ||
		 strstr(m, "timeout expired"))
		hint = " -- the server is not reachable; local work goes on, "
		       "sync again later";
	return store_error(db, CAIRN_IO, "cannot reach remote '%s': %s%s",
			   r->name, m, hint);
}

static int pg_fail(struct cairn_db *db, struct pg *g, PGresult *res,
		   const char *what)
{
	char m[512];
	const char *e = res ? pq.result_error_message(res)
			    : pq.error_message(g->c);
	size_t n;

	snprintf(m, sizeof(m), "%s", e && *e ? e : "no reply");
	n = strlen(m);
	while (n && m[n - 1] == '\n')
		m[--n] = '\0';
	if (res)
		pq.clear(res);
	return store_error(db, CAIRN_IO, "server: %s: %s", what, m);
}

/* Run sql with text parameters; *out gets the result (caller clears). */
static int pg_q(struct cairn_db *db, struct pg *g, const char *sql, int n,
		const char *const *params, PGresult **out, const char *what)
{
	PGresult *res = n ? pq.exec_params(g->c, sql, n, NULL, params, NULL,
					   NULL, 0)
			  : pq.exec(g->c, sql);
	ExecStatusType s = res ? pq.result_status(res) : PGRES_FATAL_ERROR;

	if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
		return pg_fail(db, g, res, what);
	if (out)
		*out = res;
	else
		pq.clear(res);
	return CAIRN_OK;
}

/* The server schema, one step per version; never edit a shipped step. */
static const char *const server_steps[] = {
	/* 1: records and revisions by space; seq orders pushes */
	"CREATE SEQUENCE cairn.seq;"
	"CREATE TABLE cairn.records ("
	" space text NOT NULL, id text NOT NULL,"
	" kind text NOT NULL, key text, pending_key text,"
	" title text NOT NULL, body text NOT NULL, status text NOT NULL,"
	" confidence double precision NOT NULL, proof text,"
	" origin text NOT NULL, src_session text, src_tool text,"
	" \"time\" text, created text NOT NULL, updated text NOT NULL,"
	" supersedes text, superseded_by text, revision bigint NOT NULL,"
	" hash text, scope text NOT NULL,"
	" ver bigint NOT NULL, seq bigint NOT NULL,"
	" author text NOT NULL DEFAULT session_user, approved_by text,"
	" PRIMARY KEY (space, id));"
	"CREATE INDEX records_seq ON cairn.records (space, seq);"
	"CREATE INDEX records_key ON cairn.records (space, scope, key);"
	"CREATE TABLE cairn.revisions ("
	" space text NOT NULL, id text NOT NULL, revision bigint NOT NULL,"
	" title text NOT NULL, body text NOT NULL, status text NOT NULL,"
	" confidence double precision NOT NULL, proof text,"
	" origin text NOT NULL, updated text NOT NULL, hash text,"
	" PRIMARY KEY (space, id, revision));"
	/* who wrote and who approved is the server's word, not the client's */
	"CREATE FUNCTION cairn.stamp() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN NEW.author := session_user;"
	" IF NEW.approved_by IS NOT NULL AND (TG_OP = 'INSERT' OR"
	"  NEW.approved_by IS DISTINCT FROM OLD.approved_by) THEN"
	"  NEW.approved_by := session_user; END IF;"
	" RETURN NEW; END $$;"
	"CREATE TRIGGER records_stamp BEFORE INSERT OR UPDATE ON cairn.records"
	" FOR EACH ROW EXECUTE FUNCTION cairn.stamp();"
	"INSERT INTO cairn.meta (k, v) VALUES ('server_id',"
	" md5(random()::text || clock_timestamp()::text));",
	/*
	 * 2: identity is the server's word. The roles the owner declares
	 * people or automation (the role that migrates is a person: it owns
	 * the schema); who created a record (created_by) and who wrote a
	 * revision (author), stamped like records.author; an approval is
	 * the approver's own row, stamped with the role and a hash of the
	 * text as it is on the server when approved: a later text voids it.
	 * (The stamp trigger is dropped while created_by is filled, so the
	 * migration does not make the owner every record's author.)
	 */
	"CREATE TABLE cairn.roles (role name PRIMARY KEY, kind text NOT NULL"
	" CHECK (kind IN ('person', 'automation')));"
	"INSERT INTO cairn.roles VALUES (session_user, 'person');"
	"DROP TRIGGER records_stamp ON cairn.records;"
	"ALTER TABLE cairn.records ADD COLUMN created_by text;"
	"UPDATE cairn.records SET created_by = author;"
	"ALTER TABLE cairn.revisions ADD COLUMN author text;"
	"CREATE OR REPLACE FUNCTION cairn.stamp() RETURNS trigger"
	" LANGUAGE plpgsql AS $$"
	" BEGIN NEW.author := session_user;"
	" IF TG_OP = 'INSERT' THEN NEW.created_by := session_user;"
	" ELSE NEW.created_by := OLD.created_by; END IF;"
	" IF NEW.approved_by IS NOT NULL AND (TG_OP = 'INSERT' OR"
	"  NEW.approved_by IS DISTINCT FROM OLD.approved_by) THEN"
	"  NEW.approved_by := session_user; END IF;"
	" RETURN NEW; END $$;"
	"CREATE TRIGGER records_stamp BEFORE INSERT OR UPDATE ON cairn.records"
	" FOR EACH ROW EXECUTE FUNCTION cairn.stamp();"
	"CREATE FUNCTION cairn.stamp_author() RETURNS trigger"
	" LANGUAGE plpgsql AS $$"
	" BEGIN NEW.author := session_user; RETURN NEW; END $$;"
	"CREATE TRIGGER revisions_stamp BEFORE INSERT OR UPDATE ON"
	" cairn.revisions FOR EACH ROW EXECUTE FUNCTION cairn.stamp_author();"
	"CREATE FUNCTION cairn.text_hash(title text, body text) RETURNS text"
	" LANGUAGE sql IMMUTABLE AS $$ SELECT encode(sha256(convert_to("
	" title || chr(10) || body, getdatabaseencoding())), 'hex') $$;"
	"CREATE TABLE cairn.approvals ("
	" space text NOT NULL, id text NOT NULL, text_hash text NOT NULL,"
	" approver text NOT NULL DEFAULT session_user,"
	" at timestamptz NOT NULL DEFAULT now(),"
	" PRIMARY KEY (space, id, text_hash, approver));"
	"CREATE FUNCTION cairn.stamp_approval() RETURNS trigger"
	" LANGUAGE plpgsql AS $$ DECLARE h text;"
	" BEGIN SELECT cairn.text_hash(r.title, r.body) INTO h"
	"  FROM cairn.records r WHERE r.space = NEW.space AND r.id = NEW.id;"
	" IF h IS NULL THEN RAISE EXCEPTION"
	"  'cairn: no record % to approve in space %', NEW.id, NEW.space;"
	" END IF;"
	" NEW.text_hash := h; NEW.approver := session_user; NEW.at := now();"
	" RETURN NEW; END $$;"
	"CREATE TRIGGER approvals_stamp BEFORE INSERT OR UPDATE ON"
	" cairn.approvals FOR EACH ROW EXECUTE FUNCTION cairn.stamp_approval();"
	/* a pending forget (an agent's proposal to retire a record) is
	 * shared: the proposing role's own row */
	"CREATE TABLE cairn.forgets ("
	" space text NOT NULL, id text NOT NULL,"
	" proposer text NOT NULL DEFAULT session_user,"
	" at timestamptz NOT NULL DEFAULT now(),"
	" seq bigint NOT NULL DEFAULT nextval('cairn.seq'),"
	" PRIMARY KEY (space, id, proposer));"
	"CREATE INDEX forgets_seq ON cairn.forgets (space, seq);"
	"CREATE FUNCTION cairn.stamp_proposer() RETURNS trigger"
	" LANGUAGE plpgsql AS $$"
	" BEGIN NEW.proposer := session_user; NEW.at := now(); RETURN NEW;"
	" END $$;"
	"CREATE TRIGGER forgets_stamp BEFORE INSERT OR UPDATE ON cairn.forgets"
	" FOR EACH ROW EXECUTE FUNCTION cairn.stamp_proposer();",
};

static int server_version(struct cairn_db *db, struct pg *g, int *v)
{
	PGresult *res = pq.exec(g->c, "SELECT v FROM cairn.meta WHERE k = "
				      "'schema_version'");

	*v = 0;
	if (!res || pq.result_status(res) != PGRES_TUPLES_OK) {
		if (res)
			pq.clear(res);
		return CAIRN_NOTFOUND; /* no schema yet */
	}
	if (pq.ntuples(res) == 1)
		*v = atoi(pq.getvalue(res, 0, 0));
	pq.clear(res);
	(void)db;
	return CAIRN_OK;
}

static int server_migrate(struct cairn_db *db, struct pg *g)
{
	char sql[128];
	int v = 0, rc;

	if (server_version(db, g, &v) == CAIRN_OK && v == SYNC_SERVER_SCHEMA)
		return CAIRN_OK;
	if (v > SYNC_SERVER_SCHEMA)
		return store_error(db, CAIRN_MISMATCH,
				   "the server's cairn schema is version %d, "
				   "newer than this cairn (%d): upgrade cairn",
				   v, SYNC_SERVER_SCHEMA);
	rc = pg_q(db, g, "BEGIN", 0, NULL, NULL, "migrating");
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_xact_lock(%lld)",
		 SYNC_LOCK);
	if (rc == CAIRN_OK)
		rc = pg_q(db, g, sql, 0, NULL, NULL, "migrating");
	if (rc == CAIRN_OK)
		rc = pg_q(db, g,
			  "CREATE SCHEMA IF NOT EXISTS cairn;"
			  "CREATE TABLE IF NOT EXISTS cairn.meta (k text "
			  "PRIMARY KEY, v text NOT NULL)",
			  0, NULL, NULL,
			  "creating schema cairn (a role that may not: ask "
			  "the schema's owner to sync once, docs/TEAM.md)");
	if (rc == CAIRN_OK)
		rc = server_version(db, g, &v) == CAIRN_OK
			     ? CAIRN_OK
			     : pg_fail(db, g, NULL, "reading the schema");
	for (; rc == CAIRN_OK && v < SYNC_SERVER_SCHEMA; v++) {
		rc = pg_q(db, g, server_steps[v], 0, NULL, NULL,
			  "migrating the server schema");
		snprintf(sql, sizeof(sql),
			 "INSERT INTO cairn.meta (k, v) VALUES "
			 "('schema_version', '%d') ON CONFLICT (k) DO UPDATE "
			 "SET v = EXCLUDED.v", v + 1);
		if (rc == CAIRN_OK)
			rc = pg_q(db, g, sql, 0, NULL, NULL,
				  "migrating the server schema");
	}
	if (rc == CAIRN_OK)
		return pg_q(db, g, "COMMIT", 0, NULL, NULL, "migrating");
	{
		PGresult *res = pq.exec(g->c, "ROLLBACK");

		if (res)
			pq.clear(res);
	}
	return rc;
}

static void pg_close(struct pg *g)
{
	if (g->c)
		pq.finish(g->c);
	g->c = NULL;
}

static int pg_open(struct cairn_db *db, struct remote *r, struct pg *g)
{
	PGresult *res = NULL;
	int rc;

	memset(g, 0, sizeof(*g));
	rc = pq_ready(db);
	if (rc)
		return rc;
	g->c = pq.connectdb(r->url);
	if (!g->c)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	if (pq.status(g->c) != CONNECTION_OK) {
		rc = connect_error(db, r, pq.error_message(g->c));
		pg_close(g);
		return rc;
	}
	rc = server_migrate(db, g);
	if (rc == CAIRN_OK)
		rc = pg_q(db, g,
			  "SELECT (SELECT v FROM cairn.meta WHERE k = "
			  "'server_id'), session_user, (SELECT v FROM "
			  "cairn.meta WHERE k = 'others_forget') = 'direct'",
			  0, NULL, &res, "reading the server's id");
	if (rc == CAIRN_OK) {
		snprintf(g->server, sizeof(g->server), "%s",
			 pq.getvalue(res, 0, 0));
		snprintf(g->user, sizeof(g->user), "%s",
			 pq.getvalue(res, 0, 1));
		g->others_forget = strcmp(pq.getvalue(res, 0, 2), "t") == 0;
		pq.clear(res);
	}
	if (rc == CAIRN_OK && strcmp(r->server, g->server) != 0) {
		char k[160];

		snprintf(k, sizeof(k), "remote.%s.server", r->name);
		rc = meta_set(db, "main", k, g->server);
		snprintf(r->server, sizeof(r->server), "%s", g->server);
	}
	g->remote = r->name;
	state_key(r, g->state, sizeof(g->state));
	if (rc)
		pg_close(g);
	return rc;
}

/* --------------------------------------------------------------- records */

/* The fields that travel, in the order of both SELECTs below. */
enum {
	F_ID, F_KIND, F_KEY, F_PKEY, F_TITLE, F_BODY, F_STATUS, F_CONF,
	F_PROOF, F_ORIGIN, F_SESSION, F_TOOL, F_TIME, F_CREATED, F_UPDATED,
	F_SUPERSEDES, F_SUPBY, F_REV, F_HASH, F_SCOPE, NF
};

#define SYNC_COLS                                                           \
	"id, kind, key, pending_key, title, body, status, confidence, proof, " \
	"origin, src_session, src_tool, time, created, updated, supersedes, " \
	"superseded_by, revision, hash, scope"

#define SYNC_PG_COLS                                                        \
	"id, kind, key, pending_key, title, body, status, confidence, proof, " \
	"origin, src_session, src_tool, \"time\", created, updated, "       \
	"supersedes, superseded_by, revision, hash, scope"

/*
 * What the server says of a row besides its fields (after SYNC_PG_COLS,
 * from "cairn.records r"): its version; the approval that holds, the
 * approver's own row (cairn.approvals) by a declared person for the text
 * as it is now (a later text voids it; the row's approved_by column is
 * not it); who wrote this version (author, the stamp trigger's); and
 * whether that role is a declared person or automation (cairn.roles).
 */
#define SYNC_PG_WHO                                                         \
	"ver, (SELECT a.approver FROM cairn.approvals a JOIN cairn.roles p " \
	"ON p.role = a.approver AND p.kind = 'person' WHERE a.space = "     \
	"r.space AND a.id = r.id AND a.text_hash = cairn.text_hash(r.title, " \
	"r.body) ORDER BY a.at LIMIT 1), author, (SELECT p.kind FROM "      \
	"cairn.roles p WHERE p.role = r.author), created_by"

struct srec {
	char *f[NF];
	char fp[65];       /* fingerprint of f */
	long long base;    /* sync_state ver; -1 none */
	char state[65];    /* sync_state fingerprint ("" none) */
	long long ver;     /* server: ver */
	char *approved_by; /* server: approved_by, or NULL */
	char *author;      /* server: author */
	char *author_kind; /* server: "person", "automation" or NULL */
	char *created_by;  /* server: who made the record */
};

static void srec_clear(struct srec *r)
{
	int i;

	for (i = 0; i < NF; i++)
		cairn_free(r->f[i]);
	cairn_free(r->approved_by);
	cairn_free(r->author);
	cairn_free(r->author_kind);
	cairn_free(r->created_by);
	memset(r, 0, sizeof(*r));
}

static int srec_set(struct srec *r, int i, const char *v)
{
	char *d = NULL;

	if (v) {
		d = util_strdup(v);
		if (!d)
			return -1;
	}
	cairn_free(r->f[i]);
	r->f[i] = d;
	return 0;
}

static int is_agentish(const char *o)
{
	return o && (strcmp(o, "agent") == 0 || strcmp(o, "capture") == 0 ||
		     strcmp(o, "reflection") == 0);
}

/*
 * The fingerprint of what travels. Ageing is this machine's business
 * (last_seen differs per machine): "stale" counts as "accepted", and
 * confidence is compared at 6 decimals.
 */
static void srec_fp(struct srec *r)
{
	struct sbuf sb = SBUF_INIT;
	int i;

	for (i = 0; i < NF; i++) {
		const char *v = r->f[i];

		if (i == F_UPDATED || i == F_HASH)
			continue; /* updated moves with ageing; hash follows text */
		if (i == F_STATUS && v && strcmp(v, "stale") == 0)
			v = "accepted";
		if (i == F_CONF && v) {
			sbuf_addf(&sb, "%.6f", strtod(v, NULL));
		} else if (v) {
			sbuf_adds(&sb, v);
		} else {
			sbuf_addc(&sb, '\1');
		}
		sbuf_addc(&sb, '\0');
	}
	util_sha256_hex(sb.buf ? sb.buf : "", sb.len, r->fp);
	sbuf_release(&sb);
}

static int srec_from_sqlite(struct srec *r, sqlite3_stmt *st, int first)
{
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < NF; i++) {
		const char *v = (const char *)sqlite3_column_text(st, first + i);

		if (srec_set(r, i, v)) {
			srec_clear(r);
			return -1;
		}
	}
	srec_fp(r);
	return 0;
}

/* Columns SYNC_PG_COLS, then SYNC_PG_WHO. */
static int srec_from_pg(struct srec *r, PGresult *res, int row)
{
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < NF; i++) {
		const char *v = pq.getisnull(res, row, i)
					? NULL
					: pq.getvalue(res, row, i);

		if (srec_set(r, i, v))
			goto oom;
	}
	r->ver = atoll(pq.getvalue(res, row, NF));
	if (!pq.getisnull(res, row, NF + 1) &&
	    !(r->approved_by = util_strdup(pq.getvalue(res, row, NF + 1))))
		goto oom;
	if (!(r->author = util_strdup(pq.getvalue(res, row, NF + 2))))
		goto oom;
	if (!pq.getisnull(res, row, NF + 3) &&
	    !(r->author_kind = util_strdup(pq.getvalue(res, row, NF + 3))))
		goto oom;
	if (!pq.getisnull(res, row, NF + 4) &&
	    !(r->created_by = util_strdup(pq.getvalue(res, row, NF + 4))))
		goto oom;
	srec_fp(r);
	return 0;
oom:
	srec_clear(r);
	return -1;
}

struct rlist {
	struct srec *v;
	size_t n, cap;
};

static void rlist_free(struct rlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		srec_clear(&l->v[i]);
	cairn_free(l->v);
	memset(l, 0, sizeof(*l));
}

static struct srec *rlist_push(struct rlist *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct srec *v = util_realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

/*
 * The records of schema that travel (machine-scoped ones only with
 * CAIRN_SYNC_MACHINE) and differ from their last sync under sync state
 * key `state` (NAME@server), into *out and/or counted into *count.
 */
static int local_changes(struct cairn_db *db, const char *schema,
			 const char *state_key, unsigned flags,
			 struct rlist *out, size_t *count)
{
	char sql[600];
	sqlite3_stmt *st = NULL;
	int src, rc = CAIRN_OK;

	if (count)
		*count = 0;
	snprintf(sql, sizeof(sql),
		 "SELECT " SYNC_COLS ", s.ver, s.state FROM %s.records r "
		 "LEFT JOIN %s.sync_state s ON s.server = ?1 AND "
		 "s.record_id = r.id WHERE r.origin <> 'file'%s ORDER BY "
		 "r.rid",
		 schema, schema,
#ifndef CAIRN_MUTATE_SYNC_PUSH_MACHINE
		 flags & CAIRN_SYNC_MACHINE ? "" : " AND r.scope <> 'machine'"
#else
		 "" /* tests/mutate: machine-scoped records travel unasked */
#endif
		 );
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading local changes");
	sqlite3_bind_text(st, 1, state_key, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		struct srec tmp, *r;
		const char *state = (const char *)sqlite3_column_text(st, NF + 1);

		if (srec_from_sqlite(&tmp, st, 0)) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			break;
		}
		if (state && strcmp(state, tmp.fp) == 0) {
			srec_clear(&tmp);
			continue;
		}
		if (count)
			(*count)++;
		if (!out) {
			srec_clear(&tmp);
			continue;
		}
		tmp.base = sqlite3_column_type(st, NF) == SQLITE_NULL
				   ? -1
				   : sqlite3_column_int64(st, NF);
		snprintf(tmp.state, sizeof(tmp.state), "%s", state ? state : "");
		r = rlist_push(out);
		if (!r) {
			srec_clear(&tmp);
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			break;
		}
		*r = tmp;
	}
	if (rc == CAIRN_OK && src != SQLITE_DONE)
		rc = store_sql_error(db, src, "reading local changes");
	sqlite3_finalize(st);
	return rc;
}

static int state_set(struct cairn_db *db, const char *schema,
		     const char *server, const char *id, long long ver,
		     const char *fp)
{
	char sql[320];
	sqlite3_stmt *st = NULL;
	int src;

	/*
	 * Never backwards: of two syncs of one store at once, the one that
	 * saw the older server version must not overwrite the newer's state.
	 */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO %s.sync_state (server, record_id, ver, state) "
		 "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (server, record_id) DO "
		 "UPDATE SET ver = excluded.ver, state = excluded.state WHERE "
		 "excluded.ver >= sync_state.ver",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, server, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, ver);
		sqlite3_bind_text(st, 4, fp, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "keeping sync state");
	return CAIRN_OK;
}

/* One local record of schema by id into *r; CAIRN_NOTFOUND if none. */
static int local_get(struct cairn_db *db, const char *schema, const char *id,
		     struct srec *r)
{
	char sql[256];
	sqlite3_stmt *st = NULL;
	int src, rc = CAIRN_NOTFOUND;

	snprintf(sql, sizeof(sql),
		 "SELECT " SYNC_COLS " FROM %s.records WHERE id = ?1", schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading a record");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		rc = srec_from_sqlite(r, st, 0)
			     ? store_error(db, CAIRN_NOMEM, "out of memory")
			     : CAIRN_OK;
	else if (src != SQLITE_DONE)
		rc = store_sql_error(db, src, "reading a record");
	sqlite3_finalize(st);
	return rc;
}

/* s as a record for the store; r borrows s's strings. */
static void srec_record(const struct srec *s, cairn_record *r)
{
	memset(r, 0, sizeof(*r));
	r->id = s->f[F_ID];
	r->kind = s->f[F_KIND];
	r->key = s->f[F_KEY];
	r->scope = s->f[F_SCOPE];
	r->title = s->f[F_TITLE];
	r->body = s->f[F_BODY];
	r->status = s->f[F_STATUS];
	r->confidence = s->f[F_CONF] ? strtod(s->f[F_CONF], NULL) : -1;
	r->proof = s->f[F_PROOF];
	r->origin = s->f[F_ORIGIN];
	r->src_session = s->f[F_SESSION];
	r->src_tool = s->f[F_TOOL];
	r->time = s->f[F_TIME];
	r->created = s->f[F_CREATED];
	r->updated = s->f[F_UPDATED];
	r->supersedes = s->f[F_SUPERSEDES];
	r->superseded_by = s->f[F_SUPBY];
	r->revision = s->f[F_REV] ? atol(s->f[F_REV]) : 0;
	r->hash = s->f[F_HASH];
}

/* The store's answers that refuse one record (the others stop the sync). */
static int refusal(int rc)
{
	return rc == CAIRN_INVALID || rc == CAIRN_TOOBIG ||
	       rc == CAIRN_SECRET || rc == CAIRN_READONLY;
}

/*
 * Never trust the server: would the store take s into schema? 0 yes; a
 * refusal is logged and counted (nothing stored); other codes are errors.
 */
static int pulled_check(struct cairn_db *db, const char *schema,
			const struct srec *s, cairn_sync_report *rep,
			struct sbuf *log, int *refused)
{
	cairn_record r;
	int rc;

	*refused = 0;
	srec_record(s, &r);
	rc = store_pull_check(db, schema, &r, s->f[F_PKEY]);
	if (!refusal(rc))
		return rc;
	sbuf_addf(log, "refused %s from the server (by %s): %s\n",
		  s->f[F_ID] ? s->f[F_ID] : "?", s->author ? s->author : "?",
		  db->errmsg);
	rep->refused++;
	*refused = 1;
	return CAIRN_OK;
}

/*
 * Who wrote a server row is the server's word (author, stamped by the
 * schema owner's trigger), never the row's own: a row whose author is
 * not a declared person (cairn.roles) is no human's record, whatever its
 * origin says: it is stored as an agent's, so the approval gate decides
 * (automation's records arrive as candidates). A person's row may say
 * less than "human" (an agent's text it pushed), never more. The record's
 * source names the team member ("team:ROLE" in src_tool, shown "from the
 * team, by ROLE"); an event keeps its speaker there.
 */
static int srec_trust(struct srec *s)
{
	char tool[300];
	int person = s->author_kind && strcmp(s->author_kind, "person") == 0;

#ifndef CAIRN_MUTATE_SYNC_ROW_ORIGIN
	if (!person && s->f[F_ORIGIN] && strcmp(s->f[F_ORIGIN], "human") == 0 &&
	    srec_set(s, F_ORIGIN, "agent"))
		return -1;
#else
	(void)person; /* tests/mutate: the row's origin stands */
#endif
	if (s->f[F_KIND] && strcmp(s->f[F_KIND], "event") != 0) {
		snprintf(tool, sizeof(tool), "team:%s",
			 s->author ? s->author : "?");
		if (srec_set(s, F_TOOL, tool))
			return -1;
	}
	srec_fp(s);
	return 0;
}

/*
 * Write s over (or as) local record s->id of schema through the store's
 * gate (store_pull_record): from_server says whether s is the server's
 * (its approval stamp decides the gate) or this machine's own text. A
 * record the gate kept as a candidate has s updated to match, so its
 * fingerprint is what is stored.
 */
static int local_put(struct cairn_db *db, const char *schema,
		     const struct pg *g, struct srec *s, int from_server,
		     struct sbuf *log)
{
	struct store_pulled from;
	struct store_pull_result res;
	cairn_record r;
	int rc;

	from.remote = g->remote;
	from.author = from_server ? (s->author ? s->author : "?") : NULL;
	from.approved_by = from_server ? s->approved_by : NULL;
	from.created_by = from_server ? s->created_by : NULL;
	from.others_forget = g->others_forget;
	if (from_server && srec_trust(s))
		return store_error(db, CAIRN_NOMEM, "out of memory");
	srec_record(s, &r);
	rc = store_pull_record(db, schema, &r, s->f[F_PKEY], &from, &res);
	if (rc)
		return rc;
	if (res.yielded[0])
		sbuf_addf(log,
			  "conflict: key '%s' is %s's on the server; local %s "
			  "is now a candidate for it\n",
			  s->f[F_KEY], s->f[F_ID], res.yielded);
	if (res.proposed) {
		char tool[300];

		/* the record stands here; a pending forget waits for a
		 * human (cairn candidates), as an agent's forget does */
		snprintf(tool, sizeof(tool), "team:%s", from.author);
		sbuf_addf(log,
			  "proposal: %s would make %s (%s's) %s; it stands "
			  "here, a pending forget waits (cairn candidates)\n",
			  from.author, s->f[F_ID],
			  s->created_by ? s->created_by : "?",
			  s->f[F_STATUS]);
		rc = cairn_forget_propose(db, s->f[F_ID], "team", tool);
		if (rc && !refusal(rc)) /* (a candidate now: none) */
			return rc;
		/* s becomes what is stored: the record as it stood */
		{
			struct srec loc;
			int f, bad = 0;
			static const int kept[] = { F_STATUS, F_SUPBY,
						    F_ORIGIN, F_TOOL };

			rc = local_get(db, schema, s->f[F_ID], &loc);
			if (rc)
				return rc;
			for (f = 0; f < (int)ARRAY_SIZE(kept); f++)
				bad |= srec_set(s, kept[f], loc.f[kept[f]]);
			srec_clear(&loc);
			if (bad)
				return store_error(db, CAIRN_NOMEM,
						   "out of memory");
		}
		srec_fp(s);
	}
	if (res.held[0]) {
		sbuf_addf(log,
			  "key: %s (by %s) names key '%s', which accepted %s "
			  "holds here; kept as a candidate for it\n",
			  s->f[F_ID], from.author, s->f[F_KEY], res.held);
		if (srec_set(s, F_PKEY, s->f[F_KEY]) ||
		    srec_set(s, F_KEY, NULL) ||
		    (strcmp(s->f[F_STATUS], "rejected") != 0 &&
		     srec_set(s, F_STATUS, "candidate")))
			return store_error(db, CAIRN_NOMEM, "out of memory");
		srec_fp(s);
	}
	if (res.gated) {
		sbuf_addf(log,
			  "gate: %s (from %s) arrived %s with no approval on "
			  "the server; kept as a candidate\n",
			  s->f[F_ID], from.author, s->f[F_STATUS]);
		if (srec_set(s, F_STATUS, "candidate"))
			return store_error(db, CAIRN_NOMEM, "out of memory");
		srec_fp(s);
	}
	return CAIRN_OK;
}

/* ------------------------------------------------------------------- push */

enum act { A_NONE, A_PUSHED, A_ADOPT, A_TAKE, A_CONFLICT };

struct job {
	struct srec *loc;  /* the local change */
	struct srec srv;   /* the server's row when it wins (A_TAKE, A_CONFLICT) */
	enum act act;
	long long ver;     /* the server version after this push */
	int yielded;       /* the local record became a candidate for its key */
};

/*
 * One batch goes to the server in a fixed number of statements, whatever
 * its size: the server's rows of its ids, the keys new records claim, the
 * replaced texts into revisions, and one upsert over unnest()ed arrays.
 * (One statement per record ran at ~780 records/s, bench/sync_bench.)
 */
static const char *const pg_upsert =
	"INSERT INTO cairn.records (space, " SYNC_PG_COLS ", ver, seq, "
	"approved_by) SELECT $1, u.id, u.kind, u.key, u.pending_key, u.title, "
	"u.body, u.status, u.confidence::double precision, u.proof, u.origin, "
	"u.src_session, u.src_tool, u.t, u.created, u.updated, u.supersedes, "
	"u.superseded_by, u.revision::bigint, u.hash, u.scope, u.ver::bigint, "
	"nextval('cairn.seq'), u.approved_by FROM unnest($2::text[], "
	"$3::text[], $4::text[], $5::text[], $6::text[], $7::text[], "
	"$8::text[], $9::text[], $10::text[], $11::text[], $12::text[], "
	"$13::text[], $14::text[], $15::text[], $16::text[], $17::text[], "
	"$18::text[], $19::text[], $20::text[], $21::text[], $22::text[], "
	"$23::text[]) AS u(id, kind, key, pending_key, title, body, status, "
	"confidence, proof, origin, src_session, src_tool, t, created, "
	"updated, supersedes, superseded_by, revision, hash, scope, ver, "
	"approved_by) ON CONFLICT (space, id) DO UPDATE SET "
	"kind = EXCLUDED.kind, key = EXCLUDED.key, pending_key = "
	"EXCLUDED.pending_key, title = EXCLUDED.title, body = EXCLUDED.body, "
	"status = EXCLUDED.status, confidence = EXCLUDED.confidence, proof = "
	"EXCLUDED.proof, origin = EXCLUDED.origin, src_session = "
	"EXCLUDED.src_session, src_tool = EXCLUDED.src_tool, \"time\" = "
	"EXCLUDED.\"time\", created = EXCLUDED.created, updated = "
	"EXCLUDED.updated, supersedes = EXCLUDED.supersedes, superseded_by = "
	"EXCLUDED.superseded_by, revision = EXCLUDED.revision, hash = "
	"EXCLUDED.hash, ver = EXCLUDED.ver, seq = EXCLUDED.seq, approved_by "
	"= coalesce(EXCLUDED.approved_by, cairn.records.approved_by)";

static const char *const pg_select_ids =
	"SELECT " SYNC_PG_COLS ", " SYNC_PG_WHO " FROM cairn.records r "
	"WHERE space = $1 AND id = ANY($2::text[])";

/* Append v to a PostgreSQL text[] literal being built in sb. */
static void arr_add(struct sbuf *sb, const char *v)
{
	sbuf_addc(sb, sb->len ? ',' : '{');
	if (!v) {
		sbuf_adds(sb, "NULL");
		return;
	}
	sbuf_addc(sb, '"');
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			sbuf_addc(sb, '\\');
		sbuf_addc(sb, *v);
	}
	sbuf_addc(sb, '"');
}

static const char *arr_end(struct sbuf *sb)
{
	if (!sb->len)
		sbuf_addc(sb, '{');
	sbuf_addc(sb, '}');
	return sb->err ? NULL : sbuf_str(sb);
}

static void arrs_release(struct sbuf *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sbuf_release(&a[i]);
}

static int job_by_id(struct job *jobs, size_t n, const char *id)
{
	size_t i;

	/* ids are random: a linear scan of one batch is cheap enough */
	for (i = 0; i < n; i++)
		if (strcmp(jobs[i].loc->f[F_ID], id) == 0)
			return (int)i;
	return -1;
}

#define REV_COLS                                                            \
	"record_id, revision, title, body, status, confidence, proof, "     \
	"origin, updated, hash"

/*
 * This machine's kept revisions of the records a batch pushed (a record
 * revised twice before its first sync has two the server never saw).
 */
static int push_revisions(struct cairn_db *db, struct pg *g,
			  const char *schema, const char *space,
			  struct job *jobs, size_t n)
{
	struct sbuf a[10];
	const char *p[11];
	sqlite3_stmt *st = NULL;
	char sql[256];
	size_t i, cnt = 0;
	int c, src, rc = CAIRN_OK;

	memset(a, 0, sizeof(a));
	snprintf(sql, sizeof(sql),
		 "SELECT " REV_COLS " FROM %s.revisions WHERE record_id = ?1",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading revisions");
	for (i = 0; i < n; i++) {
		if (jobs[i].act != A_PUSHED || atoll(jobs[i].loc->f[F_REV]) < 2)
			continue;
		sqlite3_bind_text(st, 1, jobs[i].loc->f[F_ID], -1,
				  SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (c = 0; c < 10; c++)
				arr_add(&a[c],
					(const char *)sqlite3_column_text(st, c));
			cnt++;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (cnt) {
		p[0] = space;
		for (c = 0; c < 10 && rc == CAIRN_OK; c++)
			if (!(p[1 + c] = arr_end(&a[c])))
				rc = store_error(db, CAIRN_NOMEM, "out of memory");
		if (rc == CAIRN_OK)
			rc = pg_q(db, g,
				  "INSERT INTO cairn.revisions (space, id, "
				  "revision, title, body, status, confidence, "
				  "proof, origin, updated, hash) SELECT $1, "
				  "u.id, u.revision::bigint, u.title, u.body, "
				  "u.status, u.confidence::double precision, "
				  "u.proof, u.origin, u.updated, u.hash FROM "
				  "unnest($2::text[], $3::text[], $4::text[], "
				  "$5::text[], $6::text[], $7::text[], "
				  "$8::text[], $9::text[], $10::text[], "
				  "$11::text[]) AS u(id, revision, title, body, "
				  "status, confidence, proof, origin, updated, "
				  "hash) ON CONFLICT DO NOTHING",
				  11, p, NULL, "pushing revisions");
	}
	arrs_release(a, 10);
	return rc;
}

/*
 * The server's revisions of records this page stored (ids: a text[]
 * literal), older than the local current one, into schema's revisions
 * through the store's gate (store_pull_revision: the checks of a pulled
 * record).
 */
static int pull_revisions(struct cairn_db *db, struct pg *g,
			  const char *schema, const char *space,
			  const char *ids, cairn_sync_report *rep,
			  struct sbuf *log)
{
	const char *p[2] = { space, ids };
	PGresult *res = NULL;
	int r, nt, rc;

	rc = pg_q(db, g,
		  "SELECT id, revision, title, body, status, confidence, "
		  "proof, origin, updated, hash, author, (SELECT p.kind FROM "
		  "cairn.roles p WHERE p.role = v.author) FROM "
		  "cairn.revisions v WHERE space = $1 AND id = "
		  "ANY($2::text[])",
		  2, p, &res, "pulling revisions");
	if (rc)
		return rc;
	nt = pq.ntuples(res);
	for (r = 0; r < nt && rc == CAIRN_OK; r++) {
		const char *f[12];
		cairn_record v;
		int c;

		for (c = 0; c < 12; c++)
			f[c] = pq.getisnull(res, r, c) ? NULL
						       : pq.getvalue(res, r, c);
		memset(&v, 0, sizeof(v));
		v.revision = atol(pq.getvalue(res, r, 1));
		v.title = (char *)f[2];
		v.body = (char *)f[3];
		v.status = (char *)f[4];
		v.confidence = f[5] ? strtod(f[5], NULL) : -1;
		v.proof = (char *)f[6];
		v.origin = (char *)f[7];
		/* who recorded it is the server's stamp: by a role that is
		 * no declared person, no revision is a human's */
		if (v.origin && strcmp(v.origin, "human") == 0 &&
		    !(f[11] && strcmp(f[11], "person") == 0))
			v.origin = (char *)"agent";
		v.updated = (char *)f[8];
		v.hash = (char *)f[9];
		rc = store_pull_revision(db, schema, f[0], &v);
		if (refusal(rc)) {
			sbuf_addf(log, "refused revision %s of %s from the "
				  "server (by %s): %s\n", f[1], f[0],
				  f[10] ? f[10] : "?", db->errmsg);
			rep->refused++;
			rc = CAIRN_OK;
		}
	}
	pq.clear(res);
	return rc;
}

/* An agent's record standing here was approved here (the gate). */
static int approved_here(const struct srec *l)
{
	return is_agentish(l->f[F_ORIGIN]) &&
	       strcmp(l->f[F_STATUS], "candidate") != 0 &&
	       strcmp(l->f[F_STATUS], "rejected") != 0;
}

/*
 * The approvals of the agents' records this batch pushed standing: each
 * is this role's own row in cairn.approvals, which the server stamps with
 * the role and a hash of the text as the push left it (the client sends
 * neither), so that a later text by anyone voids it.
 */
static int push_approvals(struct cairn_db *db, struct pg *g,
			  const char *space, const struct job *jobs, size_t n)
{
	struct sbuf ids = SBUF_INIT;
	const char *p[2];
	size_t i, cnt = 0;
	int rc = CAIRN_OK;

	for (i = 0; i < n; i++)
		if (jobs[i].act == A_PUSHED && approved_here(jobs[i].loc)) {
			arr_add(&ids, jobs[i].loc->f[F_ID]);
			cnt++;
		}
	if (cnt) {
		p[0] = space;
		p[1] = arr_end(&ids);
		rc = p[1] ? pg_q(db, g,
				 "INSERT INTO cairn.approvals (space, id, "
				 "text_hash) SELECT $1, u, '' FROM "
				 "unnest($2::text[]) AS u ON CONFLICT DO "
				 "NOTHING",
				 2, p, NULL, "recording approvals")
			  : store_error(db, CAIRN_NOMEM, "out of memory");
	}
	sbuf_release(&ids);
	return rc;
}

/* Decide and send one batch of local changes inside the push transaction. */
static int push_batch(struct cairn_db *db, struct pg *g, const char *schema,
		      const char *space, struct job *jobs, size_t n)
{
	struct sbuf a[23];
	const char *p[23];
	PGresult *res = NULL;
	char verbuf[24];
	size_t i, nrev = 0, nkey = 0, nup = 0;
	int rc, r, nt, f;

	memset(a, 0, sizeof(a));
	for (i = 0; i < n; i++)
		arr_add(&a[0], jobs[i].loc->f[F_ID]);
	p[0] = space;
	p[1] = arr_end(&a[0]);
	if (!p[1]) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	rc = pg_q(db, g, pg_select_ids, 2, p, &res, "reading records");
	if (rc)
		goto out;
	nt = pq.ntuples(res);
	for (r = 0; r < nt; r++) {
		int k = job_by_id(jobs, n, pq.getvalue(res, r, F_ID));

		if (k < 0)
			continue;
		if (srec_from_pg(&jobs[k].srv, res, r)) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			break;
		}
		jobs[k].act = A_PUSHED; /* "on the server", decided below */
	}
	pq.clear(res);
	res = NULL;
	if (rc)
		goto out;
	sbuf_reset(&a[0]);
	for (i = 0; i < n; i++) {
		struct job *j = &jobs[i];
		struct srec *l = j->loc;
		int has = j->act == A_PUSHED;

		j->act = A_NONE;
		if (has && j->srv.ver != l->base) {
			/* changed on the server since this machine's copy */
			if (strcmp(j->srv.fp, l->fp) == 0) {
				j->act = A_ADOPT; /* the same (a retried push) */
				j->ver = j->srv.ver;
			} else if (util_streq(j->srv.f[F_HASH], l->f[F_HASH])) {
				j->act = A_TAKE; /* status or links: the server's */
			} else {
				j->act = A_CONFLICT;
			}
			continue;
		}
		j->ver = has ? l->base + 1 : 1;
		if (has && !util_streq(j->srv.f[F_HASH], l->f[F_HASH])) {
			arr_add(&a[0], l->f[F_ID]); /* keep the replaced text */
			nrev++;
		}
		if (has)
			srec_clear(&j->srv);
		if (!has && l->f[F_KEY]) {
			arr_add(&a[1], l->f[F_KEY]);
			nkey++;
		}
		j->act = A_PUSHED;
	}
	if (nrev) {
		p[1] = arr_end(&a[0]);
		rc = p[1] ? pg_q(db, g,
				 "INSERT INTO cairn.revisions SELECT space, id, "
				 "revision, title, body, status, confidence, "
				 "proof, origin, updated, hash FROM "
				 "cairn.records WHERE space = $1 AND id = "
				 "ANY($2::text[]) ON CONFLICT DO NOTHING",
				 2, p, NULL, "keeping revisions")
			  : store_error(db, CAIRN_NOMEM, "out of memory");
		if (rc)
			goto out;
	}
	if (nkey) {
		/* new keyed records: is the key someone else's already? */
		p[1] = arr_end(&a[1]);
		rc = p[1] ? pg_q(db, g,
				 "SELECT scope, key FROM cairn.records WHERE "
				 "space = $1 AND key = ANY($2::text[])",
				 2, p, &res, "checking keys")
			  : store_error(db, CAIRN_NOMEM, "out of memory");
		if (rc)
			goto out;
		nt = pq.ntuples(res);
		for (i = 0; i < n && rc == CAIRN_OK; i++) {
			struct srec *l = jobs[i].loc;

			if (jobs[i].act != A_PUSHED || jobs[i].ver != 1 ||
			    !l->f[F_KEY])
				continue;
			for (r = 0; r < nt; r++) {
				if (strcmp(pq.getvalue(res, r, 1), l->f[F_KEY]) ||
				    strcmp(pq.getvalue(res, r, 0),
					   l->f[F_SCOPE]))
					continue;
				if (srec_set(l, F_PKEY, l->f[F_KEY]) ||
				    srec_set(l, F_KEY, NULL) ||
				    srec_set(l, F_STATUS, "candidate"))
					rc = store_error(db, CAIRN_NOMEM,
							 "out of memory");
				srec_fp(l);
				jobs[i].yielded = 1;
				break;
			}
		}
		pq.clear(res);
		res = NULL;
		if (rc)
			goto out;
	}
	for (f = 0; f < 23; f++)
		sbuf_reset(&a[f]);
	for (i = 0; i < n; i++) {
		struct srec *l = jobs[i].loc;

		if (jobs[i].act != A_PUSHED)
			continue;
		nup++;
		for (f = 0; f < NF; f++)
			arr_add(&a[f], l->f[f]);
		snprintf(verbuf, sizeof(verbuf), "%lld", jobs[i].ver);
		arr_add(&a[NF], verbuf);
		/* (kept for the column; the approval is push_approvals') */
		arr_add(&a[NF + 1], approved_here(l) ? g->user : NULL);
	}
	if (nup) {
		for (f = 0; f < NF + 2; f++) {
			p[1 + f] = arr_end(&a[f]);
			if (!p[1 + f]) {
				rc = store_error(db, CAIRN_NOMEM,
						 "out of memory");
				goto out;
			}
		}
		rc = pg_q(db, g, pg_upsert, 23, p, NULL, "pushing records");
	}
	if (rc == CAIRN_OK && nup)
		rc = push_approvals(db, g, space, jobs, n);
	if (rc == CAIRN_OK && nup)
		rc = push_revisions(db, g, schema, space, jobs, n);
out:
	arrs_release(a, 23);
	return rc;
}

/* A conflicting local text kept as a new local candidate. */
static int conflict_candidate(struct cairn_db *db, const char *schema,
			      const struct pg *g, const struct srec *l,
			      const struct srec *srv, struct sbuf *log)
{
	struct srec c;
	char id[17], now[32], proof[512];
	int rc, i;

	memset(&c, 0, sizeof(c));
	if (store_new_id(id))
		return store_error(db, CAIRN_IO, "no random id");
	util_now_iso(now, sizeof(now));
	snprintf(proof, sizeof(proof),
		 "conflict: this machine's revision %s of %s, made while %s "
		 "changed it on the server",
		 l->f[F_REV], l->f[F_ID], srv->author ? srv->author : "someone");
	for (i = 0; i < NF; i++)
		if (srec_set(&c, i, l->f[i]))
			goto oom;
	if (srec_set(&c, F_ID, id) || srec_set(&c, F_KEY, NULL) ||
	    srec_set(&c, F_PKEY, l->f[F_KEY] ? l->f[F_KEY] : l->f[F_PKEY]) ||
	    srec_set(&c, F_STATUS, "candidate") ||
	    srec_set(&c, F_PROOF, proof) || srec_set(&c, F_CREATED, now) ||
	    srec_set(&c, F_UPDATED, now) || srec_set(&c, F_REV, "1") ||
	    srec_set(&c, F_SUPERSEDES, NULL) || srec_set(&c, F_SUPBY, NULL))
		goto oom;
	rc = local_put(db, schema, g, &c, 0, log);
	if (rc == CAIRN_OK)
		sbuf_addf(log,
			  "conflict: %s changed here and on the server (by "
			  "%s); kept the server's, this machine's text is "
			  "candidate %s\n",
			  l->f[F_ID], srv->author ? srv->author : "?", id);
	srec_clear(&c);
	return rc;
oom:
	srec_clear(&c);
	return store_error(db, CAIRN_NOMEM, "out of memory");
}

static int pg_rollback(struct pg *g)
{
	PGresult *res = pq.exec(g->c, "ROLLBACK");

	if (res)
		pq.clear(res);
	return 0;
}

static int push_schema(struct cairn_db *db, struct pg *g, const char *schema,
		       const char *space, unsigned flags,
		       cairn_sync_report *rep, struct sbuf *log)
{
	struct rlist l = { 0 };
	struct job *jobs = NULL;
	size_t at, i, n;
	char lock[96];
	const char *p[1];
	int rc, in_tx, refused = 0;

	rc = local_changes(db, schema, g->state, flags, &l, NULL);
	if (rc || l.n == 0)
		goto out;
	jobs = util_calloc(SYNC_BATCH, sizeof(*jobs));
	if (!jobs) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	snprintf(lock, sizeof(lock), "SELECT pg_advisory_xact_lock(%lld)",
		 SYNC_LOCK);
	for (at = 0; rc == CAIRN_OK && at < l.n; at += n) {
		n = l.n - at < SYNC_BATCH ? l.n - at : SYNC_BATCH;
		memset(jobs, 0, n * sizeof(*jobs));
		rc = pg_q(db, g, "BEGIN", 0, NULL, NULL, "pushing");
		if (rc == CAIRN_OK)
			rc = pg_q(db, g, lock, 0, NULL, NULL, "pushing");
		for (i = 0; i < n; i++)
			jobs[i].loc = &l.v[at + i];
		if (rc == CAIRN_OK)
			rc = push_batch(db, g, schema, space, jobs, n);
		p[0] = space;
		if (rc == CAIRN_OK)
			rc = pg_q(db, g, "SELECT pg_notify('cairn_sync', $1)",
				  1, p, NULL, "notifying");
		if (rc == CAIRN_OK)
			rc = pg_q(db, g, "COMMIT", 0, NULL, NULL, "pushing");
		else
			pg_rollback(g);
		/* the server has it: now this machine's side, in one write */
		in_tx = 0;
		if (rc == CAIRN_OK) {
			rc = store_tx_begin(db);
			in_tx = rc == CAIRN_OK;
		}
		for (i = 0; rc == CAIRN_OK && i < n; i++) {
			struct job *j = &jobs[i];
			struct srec *lr = j->loc;

			switch (j->act) {
			case A_PUSHED:
				if (j->yielded) {
					rc = local_put(db, schema, g,
						       lr, 0, log);
					sbuf_addf(log,
						  "conflict: key '%s' is "
						  "taken on the server; %s is "
						  "now a candidate for it\n",
						  lr->f[F_PKEY], lr->f[F_ID]);
				}
				rep->pushed++;
				if (rc == CAIRN_OK)
					rc = state_set(db, schema, g->state,
						       lr->f[F_ID], j->ver,
						       lr->fp);
				break;
			case A_ADOPT:
				rc = state_set(db, schema, g->state,
					       lr->f[F_ID], j->ver, lr->fp);
				break;
			case A_CONFLICT:
				/* a server version the store refuses never
				 * wins: this machine's stays, to be pushed
				 * over it (its base is now that version) */
				rc = pulled_check(db, schema, &j->srv, rep, log,
						  &refused);
				if (rc == CAIRN_OK && refused) {
					rc = state_set(db, schema, g->state,
						       lr->f[F_ID], j->srv.ver,
						       "");
					break;
				}
#ifndef CAIRN_MUTATE_SYNC_NO_CONFLICT_CANDIDATE
				if (rc == CAIRN_OK)
					rc = conflict_candidate(db, schema,
								g, lr,
								&j->srv, log);
#else
				/* tests/mutate: the losing text is dropped */
				(void)conflict_candidate;
#endif
				rep->conflicts++;
				/* fall through: the server's version wins */
				/* FALLTHROUGH */
			case A_TAKE:
				if (rc)
					break;
				if (j->act == A_TAKE) {
					rc = pulled_check(db, schema, &j->srv,
							  rep, log, &refused);
					if (rc == CAIRN_OK && refused) {
						rc = state_set(db, schema,
							       g->state,
							       lr->f[F_ID],
							       j->srv.ver, "");
						break;
					}
				}
				if (rc == CAIRN_OK && j->act == A_TAKE)
					sbuf_addf(log,
						  "conflict: %s is %s on the "
						  "server (by %s), %s here; "
						  "kept the server's\n",
						  lr->f[F_ID],
						  j->srv.f[F_STATUS],
						  j->srv.author,
						  lr->f[F_STATUS]);
				if (rc == CAIRN_OK)
					rc = local_put(db, schema, g,
						       &j->srv, 1, log);
				if (rc == CAIRN_OK)
					rc = state_set(db, schema, g->state,
						       lr->f[F_ID], j->srv.ver,
						       j->srv.fp);
				break;
			case A_NONE:
				break;
			}
		}
		if (in_tx)
			rc = store_tx_end(db, rc);
		for (i = 0; i < n; i++)
			srec_clear(&jobs[i].srv);
	}
out:
	cairn_free(jobs);
	rlist_free(&l);
	return rc;
}

/* ------------------------------------------------------------------- pull */

/*
 * Does record id exist: here, in this page of the server's rows, or on
 * the server in this space (a page boundary)? A pulled record's links
 * are checked as on write: one naming no record is refused.
 */
static int link_known(struct cairn_db *db, struct pg *g, const char *schema,
		      const char *space, PGresult *page, int nt,
		      const char *id, int *known)
{
	const char *p[2] = { space, id };
	struct srec tmp;
	PGresult *res = NULL;
	int i, rc;

	*known = 1;
	for (i = 0; i < nt; i++)
		if (strcmp(pq.getvalue(page, i, F_ID), id) == 0)
			return CAIRN_OK;
	rc = local_get(db, schema, id, &tmp);
	if (rc == CAIRN_OK) {
		srec_clear(&tmp);
		return CAIRN_OK;
	}
	if (rc != CAIRN_NOTFOUND)
		return rc;
	rc = pg_q(db, g,
		  "SELECT 1 FROM cairn.records WHERE space = $1 AND id = $2",
		  2, p, &res, "checking a link");
	if (rc)
		return rc;
	*known = pq.ntuples(res) > 0;
	pq.clear(res);
	return CAIRN_OK;
}

static int pull_schema(struct cairn_db *db, struct pg *g, const char *schema,
		       const char *space, cairn_sync_report *rep,
		       struct sbuf *log)
{
	char k[700], cur[32], limit[16], state[65];
	const char *p[3];
	struct sbuf stored = SBUF_INIT; /* ids of revised records stored */
	int found, rc, more = 1;

	snprintf(k, sizeof(k), "sync.%s.%s.cursor", g->state, space);
	rc = store_meta_get(db, schema, k, cur, sizeof(cur), &found);
	if (rc)
		return rc;
	if (!found)
		snprintf(cur, sizeof(cur), "0");
	snprintf(limit, sizeof(limit), "%d", SYNC_BATCH);
	while (rc == CAIRN_OK && more) {
		PGresult *res = NULL;
		int i, nt;

		p[0] = space;
		p[1] = cur;
		p[2] = limit;
		rc = pg_q(db, g,
			  "SELECT " SYNC_PG_COLS ", " SYNC_PG_WHO ", seq FROM "
			  "cairn.records r WHERE space = $1 AND seq > "
			  "$2::bigint AND scope <> 'machine' ORDER BY seq "
			  "LIMIT $3::int",
			  3, p, &res, "pulling");
		if (rc)
			break;
		nt = pq.ntuples(res);
		more = nt == SYNC_BATCH;
		if (nt == 0) {
			pq.clear(res); /* nothing new: no local write at all */
			break;
		}
		rc = store_tx_begin(db);
		sbuf_reset(&stored);
		for (i = 0; rc == CAIRN_OK && i < nt; i++) {
			struct srec s, loc;
			long long base = -1;
			int exists;

			snprintf(cur, sizeof(cur), "%s",
				 pq.getvalue(res, i, NF + 5));
			if (srec_from_pg(&s, res, i)) {
				rc = store_error(db, CAIRN_NOMEM,
						 "out of memory");
				break;
			}
			/* (never trust the server: the store checks what it
			 * is given to write, below, and refuses it there) */
			/* this copy's base */
			state[0] = '\0';
			{
				char sql[200];
				sqlite3_stmt *st = NULL;

				snprintf(sql, sizeof(sql),
					 "SELECT ver, state FROM "
					 "%s.sync_state WHERE server = ?1 "
					 "AND record_id = ?2",
					 schema);
				if (sqlite3_prepare_v2(db->sql, sql, -1, &st,
						       NULL) == SQLITE_OK) {
					sqlite3_bind_text(st, 1, g->state, -1,
							  SQLITE_STATIC);
					sqlite3_bind_text(st, 2, s.f[F_ID], -1,
							  SQLITE_STATIC);
					if (sqlite3_step(st) == SQLITE_ROW) {
						base = sqlite3_column_int64(st,
									    0);
						snprintf(state, sizeof(state),
							 "%s",
							 sqlite3_column_text(
								 st, 1));
					}
				}
				sqlite3_finalize(st);
			}
			rc = local_get(db, schema, s.f[F_ID], &loc);
			exists = rc == CAIRN_OK;
			if (rc == CAIRN_NOTFOUND)
				rc = CAIRN_OK;
			if (rc) {
				srec_clear(&s);
				break;
			}
			if (exists && base == s.ver) {
				/* this machine's own push coming back */
			} else if (exists &&
				   strcmp(loc.f[F_ORIGIN], "file") != 0 &&
				   strcmp(loc.fp, state) != 0 &&
				   strcmp(loc.fp, s.fp) != 0) {
				/* changed here too: the next push decides */
				sbuf_addf(log, "%s changed here and on the "
					  "server: left for the next push\n",
					  s.f[F_ID]);
			} else {
				/* (a file-backed local record never travels:
				 * the store refuses what would overwrite it) */
				const char *dangling = NULL;
				int known = 1;

#ifndef CAIRN_MUTATE_SYNC_DANGLING_LINK
				if (s.f[F_SUPBY])
					rc = link_known(db, g, schema, space,
							res, nt, s.f[F_SUPBY],
							&known);
				if (rc == CAIRN_OK && known && s.f[F_SUPERSEDES]) {
					rc = link_known(db, g, schema, space,
							res, nt,
							s.f[F_SUPERSEDES],
							&known);
					if (!known)
						dangling = s.f[F_SUPERSEDES];
				} else if (!known) {
					dangling = s.f[F_SUPBY];
				}
#else
				/* tests/mutate: links are taken unchecked */
				(void)link_known;
				(void)known;
#endif
				if (rc == CAIRN_OK && dangling)
					rc = store_error(db, CAIRN_INVALID,
							 "it links to record "
							 "'%.64s', which does "
							 "not exist",
							 dangling);
				else if (rc == CAIRN_OK)
					rc = local_put(db, schema, g, &s, 1,
						       log);
				if (refusal(rc)) {
					/* a secret, an invalid record, or what
					 * only this store can tell: a local
					 * record of that id is file-backed or
					 * of another scope */
					sbuf_addf(log, "refused %s from the "
						  "server (by %s): %s\n",
						  s.f[F_ID] ? s.f[F_ID] : "?",
						  s.author, db->errmsg);
					rep->refused++;
					rc = CAIRN_OK;
				} else {
					if (rc == CAIRN_OK)
						rc = state_set(db, schema,
							       g->state,
							       s.f[F_ID], s.ver,
							       s.fp);
					if (atoll(s.f[F_REV]) > 1)
						arr_add(&stored, s.f[F_ID]);
					rep->pulled++;
				}
			}
			if (exists)
				srec_clear(&loc);
			srec_clear(&s);
		}
		pq.clear(res);
		if (rc == CAIRN_OK && stored.len) {
			const char *ids = arr_end(&stored);

			rc = ids ? pull_revisions(db, g, schema, space, ids, rep,
						  log)
				 : store_error(db, CAIRN_NOMEM, "out of memory");
		}
		if (rc == CAIRN_OK)
			rc = meta_set(db, schema, k, cur);
		rc = store_tx_end(db, rc);
	}
	sbuf_release(&stored);
	return rc;
}

/* ----------------------------------------------------- pending forgets */

/*
 * This machine's pending forgets (forget.c: meta "forget.pending.<id>")
 * of records that travel go to cairn.forgets, each the pushing role's own
 * row (ON CONFLICT: once per role). Those that came from the team (session
 * "team") are not sent back. Under the push lock, so that their seq
 * numbers are in commit order for the pull's cursor.
 */
static int push_forgets(struct cairn_db *db, struct pg *g, const char *schema,
			const char *space)
{
	struct sbuf ids = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	char sql[400], lock[96];
	const char *p[2];
	size_t n = 0;
	int src, rc = CAIRN_OK;

	snprintf(sql, sizeof(sql),
		 "SELECT r.id FROM %s.meta m JOIN %s.records r ON r.id = "
		 "substr(m.k, 16) WHERE m.k LIKE 'forget.pending.%%' AND "
		 "r.origin <> 'file' AND r.scope <> 'machine' AND m.v NOT "
		 "LIKE '%%' || char(9) || 'team' || char(9) || '%%'",
		 schema, schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading pending forgets");
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		arr_add(&ids, (const char *)sqlite3_column_text(st, 0));
		n++;
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE) {
		sbuf_release(&ids);
		return store_sql_error(db, src, "reading pending forgets");
	}
	if (n) {
		snprintf(lock, sizeof(lock),
			 "SELECT pg_advisory_xact_lock(%lld)", SYNC_LOCK);
		p[0] = space;
		p[1] = arr_end(&ids);
		rc = p[1] ? pg_q(db, g, "BEGIN", 0, NULL, NULL, "pushing")
			  : store_error(db, CAIRN_NOMEM, "out of memory");
		if (rc == CAIRN_OK)
			rc = pg_q(db, g, lock, 0, NULL, NULL, "pushing");
		if (rc == CAIRN_OK)
			rc = pg_q(db, g,
				  "INSERT INTO cairn.forgets (space, id) SELECT "
				  "$1, u FROM unnest($2::text[]) AS u ON "
				  "CONFLICT DO NOTHING",
				  2, p, NULL, "pushing pending forgets");
		if (rc == CAIRN_OK)
			rc = pg_q(db, g, "COMMIT", 0, NULL, NULL, "pushing");
		else if (p[1])
			pg_rollback(g);
	}
	sbuf_release(&ids);
	return rc;
}

/*
 * The others' pending forgets since this machine's cursor: each becomes a
 * pending forget here too (cairn candidates), for a record this store
 * holds and could retire; one it cannot (gone, file-backed, retired
 * already) is passed over.
 */
static int pull_forgets(struct cairn_db *db, struct pg *g, const char *schema,
			const char *space, struct sbuf *log)
{
	char k[700], cur[32], tool[300];
	const char *p[2];
	PGresult *res = NULL;
	int found, rc, i, nt;

	snprintf(k, sizeof(k), "sync.%s.%s.forgets", g->state, space);
	rc = store_meta_get(db, schema, k, cur, sizeof(cur), &found);
	if (rc)
		return rc;
	if (!found)
		snprintf(cur, sizeof(cur), "0");
	p[0] = space;
	p[1] = cur;
	rc = pg_q(db, g,
		  "SELECT id, proposer, seq FROM cairn.forgets WHERE space = "
		  "$1 AND seq > $2::bigint ORDER BY seq",
		  2, p, &res, "pulling pending forgets");
	if (rc)
		return rc;
	nt = pq.ntuples(res);
	if (nt == 0) {
		pq.clear(res);
		return CAIRN_OK;
	}
	rc = store_tx_begin(db);
	for (i = 0; rc == CAIRN_OK && i < nt; i++) {
		const char *id = pq.getvalue(res, i, 0);
		const char *who = pq.getvalue(res, i, 1);

		snprintf(cur, sizeof(cur), "%s", pq.getvalue(res, i, 2));
		if (strcmp(who, g->user) == 0)
			continue; /* this role's own */
		snprintf(tool, sizeof(tool), "team:%s", who);
		rc = cairn_forget_propose(db, id, "team", tool);
		if (rc == CAIRN_OK)
			sbuf_addf(log,
				  "forget: %s proposes retiring %s; pending "
				  "here (cairn candidates)\n",
				  who, id);
		else if (refusal(rc) || rc == CAIRN_NOTFOUND)
			rc = CAIRN_OK;
	}
	pq.clear(res);
	if (rc == CAIRN_OK)
		rc = meta_set(db, schema, k, cur);
	return store_tx_end(db, rc);
}

/* -------------------------------------------------------------------- sync */

/*
 * A store synced before sync state was keyed by remote (NAME@SERVER) kept
 * it under the server's id alone: the one remote on that server takes it
 * over (its records and cursors), so the upgrade re-pushes nothing. With
 * two remotes on the server the old state was wrong for one of them
 * (that is what the key fixes): it is left unused and they start afresh
 * (a record unchanged since is adopted, not pushed again).
 */
static int state_adopt(struct cairn_db *db, const struct pg *g)
{
	static const char *const sqls[] = {
		"INSERT OR IGNORE INTO %s.sync_state (server, record_id, ver, "
		"state) SELECT ?2, record_id, ver, state FROM %s.sync_state "
		"WHERE server = ?1",
		"DELETE FROM %s.sync_state WHERE server = ?1%.0s",
		"UPDATE OR IGNORE %s.meta SET k = 'sync.' || ?2 || substr(k, "
		"6 + length(?1)) WHERE k > 'sync.' || ?1 || '.' AND k < "
		"'sync.' || ?1 || '/' AND k LIKE '%%.cursor' %.0s",
	};
	sqlite3_stmt *st = NULL;
	char sql[400];
	int src, old = 0, owners = 0, rc, s;
	size_t i;

	/* old state under the bare id, and how many remotes name the server */
	src = sqlite3_prepare_v2(db->sql,
				 "SELECT (SELECT count(*) FROM main.meta WHERE "
				 "k LIKE 'remote.%.server' AND v = ?1), EXISTS "
				 "(SELECT 1 FROM main.sync_state WHERE server = "
				 "?1) OR EXISTS (SELECT 1 FROM main.meta WHERE "
				 "k > 'sync.' || ?1 || '.' AND k < 'sync.' || "
				 "?1 || '/')",
				 -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, g->server, -1, SQLITE_STATIC);
		if ((src = sqlite3_step(st)) == SQLITE_ROW) {
			owners = sqlite3_column_int(st, 0);
			old = sqlite3_column_int(st, 1);
			src = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading sync state");
	if (!old && db->has_global) {
		src = sqlite3_prepare_v2(db->sql,
					 "SELECT EXISTS (SELECT 1 FROM "
					 "global.sync_state WHERE server = ?1)",
					 -1, &st, NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_text(st, 1, g->server, -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW)
				old = sqlite3_column_int(st, 0);
		}
		sqlite3_finalize(st);
	}
	if (!old || owners != 1)
		return CAIRN_OK;
	rc = store_tx_begin(db);
	for (s = 0; rc == CAIRN_OK && s < 2; s++) {
		const char *schema = s ? "global" : "main";

		if (s && !db->has_global)
			break;
		for (i = 0; rc == CAIRN_OK && i < ARRAY_SIZE(sqls); i++) {
			snprintf(sql, sizeof(sql), sqls[i], schema, schema);
			src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
			if (src == SQLITE_OK) {
				sqlite3_bind_text(st, 1, g->server, -1,
						  SQLITE_STATIC);
				sqlite3_bind_text(st, 2, g->state, -1,
						  SQLITE_STATIC);
				src = sqlite3_step(st);
			}
			sqlite3_finalize(st);
			if (src != SQLITE_DONE)
				rc = store_sql_error(db, src,
						     "keeping sync state");
		}
	}
	return store_tx_end(db, rc);
}

int cairn_sync(cairn_db *db, const char *name, cairn_sync_report *rep)
{
	return cairn_sync_flags(db, name, 0, rep);
}

int cairn_sync_flags(cairn_db *db, const char *name, unsigned flags,
		     cairn_sync_report *rep)
{
	struct sbuf log = SBUF_INIT;
	struct remote r;
	struct pg g;
	char userspace[300];
	int rc, s, round;

	memset(rep, 0, sizeof(*rep));
	rc = remote_get(db, name, &r);
	if (rc)
		return rc;
	if (!r.space[0])
		return store_error(db, CAIRN_INVALID,
				   "remote '%s' has no team space", r.name);
	rc = pg_open(db, &r, &g);
	if (rc)
		goto out;
	store_attach_global(db, 0); /* global records travel when it exists */
	rc = state_adopt(db, &g);
	snprintf(userspace, sizeof(userspace), "user:%s", g.user);
	for (s = 0; rc == CAIRN_OK && s < 2; s++) {
		const char *schema = s ? "global" : "main";
		const char *space = s ? userspace : r.space;

		if (s && !db->has_global)
			break;
		/* conflicts add candidates: push them in the same run */
		for (round = 0; rc == CAIRN_OK && round < 3; round++) {
			size_t before = rep->pushed + rep->conflicts;

			rc = push_schema(db, &g, schema, space, flags, rep,
					 &log);
			if (rep->pushed + rep->conflicts == before ||
			    rep->conflicts == 0)
				break;
		}
		if (rc == CAIRN_OK)
			rc = push_forgets(db, &g, schema, space);
		if (rc == CAIRN_OK)
			rc = pull_schema(db, &g, schema, space, rep, &log);
		if (rc == CAIRN_OK)
			rc = pull_forgets(db, &g, schema, space, &log);
	}
	pg_close(&g);
out:
	{
		char msg[STORE_ERRMSG];
		size_t n = 0;

		/* db's message stays the failure's */
		memcpy(msg, db->errmsg, sizeof(msg));
		if (cairn_sync_unsynced(db, name ? name : r.name, &n) ==
		    CAIRN_OK)
			rep->unsynced = n;
		memcpy(db->errmsg, msg, sizeof(msg));
	}
	rep->log = sbuf_detach(&log, NULL);
	return rc;
}

int cairn_sync_unsynced(cairn_db *db, const char *name, size_t *n)
{
	struct remote r;
	char key[SYNC_NAME_MAX + 82];
	size_t m = 0;
	int rc;

	*n = 0;
	rc = remote_get(db, name, &r);
	state_key(&r, key, sizeof(key));
	if (rc == CAIRN_OK)
		rc = local_changes(db, "main", key, 0, NULL, n);
	if (rc == CAIRN_OK && store_attach_global(db, 0) == CAIRN_OK &&
	    db->has_global) {
		rc = local_changes(db, "global", key, 0, NULL, &m);
		*n += m;
	}
	return rc;
}

/* ------------------------------------------------------------------- watch */

struct cairn_watch {
	struct cairn_db *db;
	struct remote r;
	struct pg g;
};

int cairn_watch_open(cairn_db *db, const char *name, cairn_watch **out)
{
	cairn_watch *w;
	int rc;

	*out = NULL;
	w = util_calloc(1, sizeof(*w));
	if (!w)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	w->db = db;
	rc = remote_get(db, name, &w->r);
	if (rc == CAIRN_OK)
		rc = pg_open(db, &w->r, &w->g);
	if (rc == CAIRN_OK)
		rc = pg_q(db, &w->g, "LISTEN cairn_sync", 0, NULL, NULL,
			  "listening");
	if (rc) {
		cairn_watch_close(w);
		return rc;
	}
	*out = w;
	return CAIRN_OK;
}

int cairn_watch_wait(cairn_watch *w, int timeout_ms)
{
	double end = util_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int got = 0;

	for (;;) {
		PGnotify *nf;
		struct pollfd pfd;
		double left;

		if (!pq.consume_input(w->g.c))
			return pg_fail(w->db, &w->g, NULL, "following");
		while ((nf = pq.notifies(w->g.c)) != NULL) {
			got = 1;
			pq.freemem(nf);
		}
		if (got)
			return CAIRN_OK;
		left = end - util_now_ms();
		if (left <= 0)
			return CAIRN_NOTFOUND;
		pfd.fd = pq.socket(w->g.c);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (pfd.fd < 0)
			return pg_fail(w->db, &w->g, NULL, "following");
		if (poll(&pfd, 1, left > 1000 ? 1000 : (int)left + 1) < 0 &&
		    errno != EINTR)
			return store_error(w->db, CAIRN_IO, "poll: %s",
					   strerror(errno));
	}
}

void cairn_watch_close(cairn_watch *w)
{
	if (!w)
		return;
	pg_close(&w->g);
	cairn_free(w);
}
