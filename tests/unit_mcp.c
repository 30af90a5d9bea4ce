/*
 * unit_mcp.c -- tests of the MCP server (src/serve/mcp.c) through its line
 * handler, mcp_handle_line(): the JSON-RPC rules, version negotiation,
 * the tool list, and one test for each behavioural claim in the tool
 * descriptions (seed 004 §5: a description that says what the code does
 * not do is worse than none). The claim each test binds is quoted above it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cairn.h"
#include "json.h"
#include "mcp.h"
#include "test.h"

#define SESSION "sess-unit-42"

/* ------------------------------------------------------------ helpers */

/* Send one line; the parsed reply, or NULL when there was none. */
static struct json *send_line(struct mcp_server *s, const char *line,
			      size_t len)
{
	struct json *j = NULL;
	char *reply = NULL, err[160];
	size_t n = 0;
	int rc = mcp_handle_line(s, line, len, &reply, &n);

	CHECK_INT(rc, CAIRN_OK);
	if (!reply)
		return NULL;
	CHECK_INT(n, strlen(reply));
	CHECK_MSG(memchr(reply, '\n', n) == NULL, "newline in reply: %s",
		  reply);
	rc = json_parse(reply, n, &j, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "reply is not JSON (%s): %s", err, reply);
	cairn_free(reply);
	return j;
}

static struct json *send(struct mcp_server *s, const char *line)
{
	return send_line(s, line, strlen(line));
}

/* Member by dotted path; numbers index arrays ("result.tools.0.name"). */
static const struct json *at(const struct json *j, const char *path)
{
	char part[64];

	while (j && *path) {
		size_t n = strcspn(path, ".");
		char *end;
		long idx;

		snprintf(part, sizeof(part), "%.*s", (int)n, path);
		path += n;
		if (*path == '.')
			path++;
		idx = strtol(part, &end, 10);
		if (*end == '\0' && j->type == JSON_ARRAY) {
			const struct json *c = j->child;

			while (c && idx-- > 0)
				c = c->next;
			j = c;
		} else {
			j = json_get(j, part);
		}
	}
	return j;
}

static const char *at_str(const struct json *j, const char *path)
{
	return json_str(at(j, path));
}

static long at_int(const struct json *j, const char *path)
{
	const struct json *n = at(j, path);

	return n && n->type == JSON_NUMBER ? (long)n->num : -999999;
}

/* The error code of a reply, or 0 when it is not an error. */
static long err_code(const struct json *j)
{
	return at(j, "error") ? at_int(j, "error.code") : 0;
}

static int is_true(const struct json *j)
{
	return j && j->type == JSON_TRUE;
}

static struct mcp_server *server(cairn_db *db)
{
	struct mcp_opts o = { SESSION };
	struct mcp_server *s = NULL;

	CHECK_INT(mcp_server_new(db, &o, &s), CAIRN_OK);
	return s;
}

/* A server after initialize with `version`. */
static struct mcp_server *ready(cairn_db *db, const char *version)
{
	struct mcp_server *s = server(db);
	struct json *j;
	char line[512];

	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
		 "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
		 "\"clientInfo\":{\"name\":\"unit-client\",\"version\":"
		 "\"9.1\"}}}",
		 version);
	j = send(s, line);
	CHECK_STR(at_str(j, "result.protocolVersion"), version);
	json_free(j);
	j = send(s, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/initialized\"}");
	CHECK(j == NULL);
	json_free(j);
	return s;
}

/* Call a tool; args is a JSON object text. Returns the whole reply. */
static struct json *call(struct mcp_server *s, const char *tool,
			 const char *args)
{
	struct sbuf sb = SBUF_INIT;
	struct json *j;

	sbuf_adds(&sb, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
		       "\"tools/call\",\"params\":{\"name\":\"");
	sbuf_adds(&sb, tool);
	sbuf_addf(&sb, "\",\"arguments\":%s}}", args);
	j = send(s, sbuf_str(&sb));
	sbuf_release(&sb);
	CHECK(j != NULL);
	CHECK_INT(err_code(j), 0);
	return j;
}

/* The text of a tool error, or NULL when the call succeeded. */
static const char *tool_error(const struct json *j)
{
	if (!is_true(at(j, "result.isError")))
		return NULL;
	return at_str(j, "result.content.0.text");
}

/* A tool call that must succeed: the structured content. */
#define SC(j) at((j), "result.structuredContent")

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every record of the store as text, one sorted line per record: id,
 * kind, key, status, scope, title, body, proof, origin, revision, updated,
 * and last_seen when with_seen. Caller frees with cairn_free().
 */
static char *snapshot(cairn_db *db, int with_seen)
{
	cairn_filter f;
	cairn_record **v = NULL;
	char **lines = NULL;
	size_t n = 0, i;
	struct sbuf out = SBUF_INIT;

	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	CHECK_INT(cairn_record_list(db, &f, &v, &n), CAIRN_OK);
	lines = calloc(n + 1, sizeof(*lines));
	for (i = 0; i < n; i++) {
		struct sbuf sb = SBUF_INIT;
		const cairn_record *r = v[i];

		sbuf_addf(&sb, "%s|%s|%s|%s|%s|%s|%s|%s|%s|%ld|%s|%s", r->id,
			  r->kind, r->key ? r->key : "-", r->status, r->scope,
			  r->title, r->body, r->proof ? r->proof : "-",
			  r->origin, r->revision, r->updated,
			  with_seen && r->last_seen ? r->last_seen : "-");
		lines[i] = sbuf_detach(&sb, NULL);
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (i = 0; i < n; i++) {
		sbuf_adds(&out, lines[i]);
		sbuf_addc(&out, '\n');
		cairn_free(lines[i]);
	}
	free(lines);
	cairn_record_list_free(v, n);
	return sbuf_detach(&out, NULL);
}

static size_t count_records(cairn_db *db)
{
	cairn_filter f;
	cairn_record **v = NULL;
	size_t n = 0;

	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	CHECK_INT(cairn_record_list(db, &f, &v, &n), CAIRN_OK);
	cairn_record_list_free(v, n);
	return n;
}

/* Write a human record (accepted unless status says otherwise). */
static char *put(cairn_db *db, const char *kind, const char *key,
		 const char *title, const char *body, const char *status)
{
	return test_write_record(db, kind, status, NULL, key, title, body);
}

/* A few records every tool test searches. */
static void fill(cairn_db *db)
{
	cairn_free(put(db, "decision", "db:engine", "Use PostgreSQL for orders",
		       "We chose PostgreSQL for the orders service because "
		       "we need transactions across tables.\nMySQL was "
		       "considered and rejected.",
		       NULL));
	cairn_free(put(db, "fact", "deploy:staging", "Deploy to staging",
		       "Deploy the orders service to staging with "
		       "make deploy-staging; PostgreSQL migrations run first.",
		       NULL));
	cairn_free(put(db, "rule", NULL, "Never touch PROD",
		       "Never run migrations against the PROD database by "
		       "hand.",
		       NULL));
}

/* Does the recall of `query` with `extra` arguments return id? */
static int recall_has(struct mcp_server *s, const char *query,
		      const char *extra, const char *id)
{
	char args[512];
	const struct json *e;
	struct json *j;
	int found = 0;

	snprintf(args, sizeof(args), "{\"query\":\"%s\"%s}", query, extra);
	j = call(s, "memory_recall", args);
	CHECK(tool_error(j) == NULL);
	for (e = at(SC(j), "results") ? at(SC(j), "results")->child : NULL;
	     e; e = e->next)
		if (util_streq(json_get_str(e, "id"), id))
			found = 1;
	json_free(j);
	return found;
}

/* ------------------------------------------------------- JSON-RPC rules */

/* Each malformed message gets the right error, and the next ping is still
 * answered. */
static void test_mcp_rpc_errors(void)
{
	static const struct {
		const char *line;
		long code;     /* expected error code; 0: no reply at all */
		int id_null;   /* 1: the error's id must be null */
	} cases[] = {
		{ "{not json", -32700, 1 },
		{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600,
		  1 },
		{ "\"just a string\"", -32600, 1 },
		{ "{\"id\":3,\"method\":\"ping\"}", -32600, 0 },
		{ "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", -32600,
		  0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}",
		  -32600, 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
		  -32600, 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":42}", -32600, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4}", -32600, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\","
		  "\"params\":\"x\"}", -32600, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"no/such\"}",
		  -32601, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/list\"}",
		  -32601, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\","
		  "\"params\":[1]}", -32602, 0 },
		/* requests before initialize */
		{ "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\"}",
		  -32002, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
		  "\"params\":{\"name\":\"memory_write\",\"arguments\":{"
		  "\"kind\":\"fact\",\"body\":\"x\"}}}", -32002, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"initialize\","
		  "\"params\":{}}", -32602, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"initialize\","
		  "\"params\":{\"protocolVersion\":5}}", -32602, 0 },
		/* notifications, responses and blank lines: no reply */
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}",
		  0, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\",\"params\":[]}",
		  0, 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}", 0, 0 },
		{ "   ", 0, 0 },
		{ "", 0, 0 },
	};
	cairn_db *db = test_store("mcp-rpc", NULL, 0);
	struct mcp_server *s = server(db);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct json *j = send(s, cases[i].line), *p;

		if (cases[i].code == 0) {
			CHECK_MSG(j == NULL, "case %zu: unexpected reply", i);
		} else {
			CHECK_MSG(err_code(j) == cases[i].code,
				  "case %zu (%s): code %ld", i, cases[i].line,
				  err_code(j));
			CHECK_MSG(at_str(j, "error.message") &&
					  *at_str(j, "error.message"),
				  "case %zu: no message", i);
			CHECK_STR(at_str(j, "jsonrpc"), "2.0");
			if (cases[i].id_null)
				CHECK_MSG(at(j, "id") &&
						  at(j, "id")->type == JSON_NULL,
					  "case %zu: id not null", i);
			else
				CHECK_MSG(at(j, "id") &&
						  at(j, "id")->type != JSON_NULL,
					  "case %zu: id lost", i);
		}
		json_free(j);
		/* the server keeps serving: ping (allowed before initialize) */
		p = send(s, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":"
			    "\"ping\"}");
		CHECK_MSG(p && at(p, "result") &&
				  at(p, "result")->type == JSON_OBJECT &&
				  util_streq(at_str(p, "id"), "p"),
			  "case %zu: ping not answered", i);
		json_free(p);
	}
	CHECK_STR(mcp_protocol(s), "");
	mcp_server_free(s);
	cairn_db_close(db);
}

/* Limits: a message over MCP_MAX_LINE and nesting deeper than the JSON
 * reader allows are refused, and the server keeps serving. */
static void test_mcp_limits(void)
{
	cairn_db *db = test_store("mcp-limits", NULL, 0);
	struct mcp_server *s = server(db);
	size_t big = MCP_MAX_LINE + 10, i;
	char *line = malloc(big);
	struct json *j;

	/* a valid JSON string, just too long */
	memset(line, 'a', big);
	line[0] = '"';
	line[big - 1] = '"';
	j = send_line(s, line, big);
	CHECK_INT(err_code(j), -32600);
	CHECK(strstr(at_str(j, "error.message"), "too large") != NULL);
	json_free(j);
	/* 200 levels of nesting */
	for (i = 0; i < 200; i++)
		line[i] = '[';
	for (i = 0; i < 200; i++)
		line[200 + i] = ']';
	j = send_line(s, line, 400);
	CHECK_INT(err_code(j), -32700);
	json_free(j);
	/* deep nesting inside params of a valid request */
	{
		struct sbuf sb = SBUF_INIT;

		sbuf_adds(&sb, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
			       "\"ping\",\"params\":{\"x\":");
		for (i = 0; i < 100; i++)
			sbuf_adds(&sb, "{\"a\":");
		sbuf_adds(&sb, "1");
		for (i = 0; i < 100; i++)
			sbuf_addc(&sb, '}');
		sbuf_adds(&sb, "}}");
		j = send(s, sbuf_str(&sb));
		CHECK_INT(err_code(j), -32700);
		json_free(j);
		sbuf_release(&sb);
	}
	j = send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
	CHECK(j && at(j, "result") != NULL);
	CHECK_INT(at_int(j, "id"), 2);
	json_free(j);
	free(line);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* ---------------------------------------------------------- negotiation */

static int tools_have(const struct json *list, const char *field)
{
	const struct json *t;
	int all = 1;

	for (t = list ? list->child : NULL; t; t = t->next)
		if (!json_get(t, field))
			all = 0;
	return all && list && list->child;
}

static int tools_lack(const struct json *list, const char *field)
{
	const struct json *t;

	for (t = list ? list->child : NULL; t; t = t->next)
		if (json_get(t, field))
			return 0;
	return 1;
}

/* The client's revision when we know it, else our latest; the fields of
 * later revisions only when negotiated. */
static void test_mcp_negotiate(void)
{
	cairn_db *db = test_store("mcp-negotiate", NULL, 0);
	struct mcp_server *s;
	struct json *j, *l;

	fill(db);
	/* 2024-11-05: no outputSchema, annotations, structuredContent */
	s = ready(db, "2024-11-05");
	l = send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	CHECK(tools_have(at(l, "result.tools"), "inputSchema"));
	CHECK(tools_lack(at(l, "result.tools"), "outputSchema"));
	CHECK(tools_lack(at(l, "result.tools"), "annotations"));
	json_free(l);
	j = call(s, "memory_recall", "{\"query\":\"PostgreSQL orders\"}");
	CHECK(SC(j) == NULL);
	CHECK(strstr(at_str(j, "result.content.0.text"), "\"results\"") !=
	      NULL);
	json_free(j);
	/* a second initialize is refused */
	j = send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","
		    "\"params\":{\"protocolVersion\":\"2025-06-18\"}}");
	CHECK_INT(err_code(j), -32600);
	CHECK_STR(mcp_protocol(s), "2024-11-05");
	json_free(j);
	mcp_server_free(s);

	/* 2025-03-26: annotations, still no outputSchema */
	s = ready(db, "2025-03-26");
	l = send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	CHECK(tools_have(at(l, "result.tools"), "annotations"));
	CHECK(tools_lack(at(l, "result.tools"), "outputSchema"));
	json_free(l);
	mcp_server_free(s);

	/* an unknown revision gets the latest */
	s = server(db);
	j = send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		    "\"params\":{\"protocolVersion\":\"1999-01-01\"}}");
	CHECK_STR(at_str(j, "result.protocolVersion"), MCP_PROTOCOL_LATEST);
	CHECK_STR(at_str(j, "result.serverInfo.name"), "cairn");
	CHECK_STR(at_str(j, "result.serverInfo.version"), CAIRN_VERSION);
	CHECK(at(j, "result.capabilities.tools") &&
	      at(j, "result.capabilities.tools")->type == JSON_OBJECT);
	json_free(j);
	l = send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	CHECK(tools_have(at(l, "result.tools"), "outputSchema"));
	CHECK(tools_have(at(l, "result.tools"), "title"));
	json_free(l);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* ------------------------------------------------------------ tool list */

/* "No tool lets an agent approve its own candidates": the tools are
 * exactly these six, and each description covers the five points. */
static void test_mcp_tools_list(void)
{
	static const char *const names[] = {
		"memory_recall",     "memory_read",    "memory_write",
		"memory_forget",     "memory_candidates", "find_precedents",
	};
	cairn_db *db = test_store("mcp-list", NULL, 0);
	struct mcp_server *s = ready(db, MCP_PROTOCOL_LATEST);
	struct json *l = send(s, "{\"jsonrpc\":\"2.0\",\"id\":\"x\","
				 "\"method\":\"tools/list\",\"params\":{}}");
	const struct json *t;
	size_t n = 0, i;

	for (t = at(l, "result.tools") ? at(l, "result.tools")->child : NULL;
	     t; t = t->next, n++) {
		const char *name = json_get_str(t, "name");
		const char *d = json_get_str(t, "description");
		int known = 0;

		for (i = 0; i < ARRAY_SIZE(names); i++)
			known |= util_streq(name, names[i]);
		CHECK_MSG(known, "unexpected tool %s", name);
		CHECK(name && !strstr(name, "approve") &&
		      !strstr(name, "reject") && !strstr(name, "accept"));
		CHECK_STR(at_str(t, "inputSchema.type"), "object");
		CHECK_STR(at_str(t, "outputSchema.type"), "object");
		CHECK(is_true(at(t, "inputSchema.additionalProperties")) == 0);
		/* seed 004 §5: what, when, after the call, differs, effects */
		CHECK_MSG(d && strstr(d, "Use it") && strstr(d, "Differs from") &&
				  strstr(d, "Side effects"),
			  "%s: description lacks a part", name);
	}
	CHECK_INT(n, ARRAY_SIZE(names));
	json_free(l);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* ---------------------------------------------------------- memory_write */

/* "stored as a candidate with origin agent and this session's provenance;
 * memory_recall does not return it by default and it is not an accepted
 * fact or decision until a human approves it"; "arguments other than kind,
 * key, title, body, proof and scope are refused". */
static void test_mcp_write_candidate(void)
{
	cairn_db *db = test_store("mcp-write", NULL, 0);
	struct mcp_server *s;
	struct json *j;
	const char *id;
	char *idcopy, *before;
	cairn_record *r = NULL;

	fill(db);
	s = ready(db, MCP_PROTOCOL_LATEST);
	before = snapshot(db, 1);
	/* status and origin cannot be passed: refused, nothing written */
	j = call(s, "memory_write", "{\"kind\":\"decision\",\"body\":\"Use "
				    "Redis for sessions\",\"status\":"
				    "\"accepted\"}");
	CHECK(tool_error(j) && strstr(tool_error(j), "unknown argument") &&
	      strstr(tool_error(j), "status"));
	json_free(j);
	j = call(s, "memory_write", "{\"kind\":\"decision\",\"body\":\"Use "
				    "Redis for sessions\",\"origin\":"
				    "\"human\"}");
	CHECK(tool_error(j) && strstr(tool_error(j), "origin"));
	json_free(j);
	{
		char *after = snapshot(db, 1);

		CHECK_STR(after, before);
		cairn_free(after);
	}
	cairn_free(before);

	j = call(s, "memory_write",
		 "{\"kind\":\"decision\",\"key\":\"cache:sessions\",\"title\":"
		 "\"Sessions in Valkey\",\"body\":\"Store web sessions in "
		 "Valkey with a 24 hour expiry.\",\"proof\":\"load test ok\"}");
	CHECK(tool_error(j) == NULL);
	CHECK_STR(at_str(SC(j), "record.status"), "candidate");
	CHECK_STR(at_str(SC(j), "record.origin"), "agent");
	CHECK_STR(at_str(SC(j), "record.kind"), "decision");
	CHECK_STR(at_str(SC(j), "record.source.session"), SESSION);
	CHECK(at_str(SC(j), "record.source.tool") &&
	      strstr(at_str(SC(j), "record.source.tool"), "memory_write") &&
	      strstr(at_str(SC(j), "record.source.tool"), "unit-client 9.1"));
	id = at_str(SC(j), "record.id");
	idcopy = util_strdup(id);
	CHECK(strstr(at_str(SC(j), "approve_with"), idcopy) != NULL);
	/* the text block carries the same JSON */
	CHECK(strstr(at_str(j, "result.content.0.text"), idcopy) != NULL);
	json_free(j);
	/* stored as reported */
	CHECK_INT(cairn_record_get(db, idcopy, &r), CAIRN_OK);
	CHECK_STR(r ? r->status : NULL, "candidate");
	CHECK_STR(r ? r->origin : NULL, "agent");
	cairn_record_free(r);
	/* not in default recall; found when candidates are asked for */
	CHECK(!recall_has(s, "Valkey sessions", "", idcopy));
	CHECK(recall_has(s, "Valkey sessions",
			 ",\"statuses\":[\"candidate\"]", idcopy));
	CHECK(!recall_has(s, "Valkey sessions", "", idcopy));
	/* listed by memory_candidates */
	j = call(s, "memory_candidates", "{}");
	CHECK_INT(at_int(SC(j), "count"), 1);
	CHECK_STR(at_str(SC(j), "candidates.0.id"), idcopy);
	CHECK_STR(at_str(SC(j), "candidates.0.status"), "candidate");
	json_free(j);
	/* "a key of a pending candidate: that candidate's text is replaced" */
	j = call(s, "memory_write",
		 "{\"kind\":\"decision\",\"key\":\"cache:sessions\",\"body\":"
		 "\"Store web sessions in Valkey with a 12 hour expiry.\"}");
	CHECK_STR(at_str(SC(j), "record.id"), idcopy);
	CHECK(strstr(at_str(SC(j), "record.body"), "12 hour") != NULL);
	json_free(j);
	/* a human approves: now it is found by default */
	CHECK_INT(cairn_record_set_status(db, idcopy, "candidate", "accepted",
					  0),
		  CAIRN_OK);
	CHECK(recall_has(s, "Valkey sessions", "", idcopy));
	cairn_free(idcopy);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* "With a key that names an existing record, approval replaces that
 * record's text"; "the key of a file-backed record is refused". */
static void test_mcp_write_existing_key(void)
{
	cairn_db *db = test_store("mcp-write-key", NULL, 0);
	struct mcp_server *s;
	cairn_record *r = NULL, fb;
	struct json *j;
	char *cand, *orig = NULL, *fid = NULL;

	fill(db);
	s = ready(db, MCP_PROTOCOL_LATEST);
	CHECK_INT(cairn_record_read_key(db, "deploy:staging", NULL, &r),
		  CAIRN_OK);
	orig = util_strdup(r ? r->id : "");
	cairn_record_free(r);
	j = call(s, "memory_write",
		 "{\"kind\":\"fact\",\"key\":\"deploy:staging\",\"body\":"
		 "\"Deploy to staging with ./ship staging.\"}");
	CHECK(tool_error(j) == NULL);
	CHECK_STR(at_str(SC(j), "record.status"), "candidate");
	cand = util_strdup(at_str(SC(j), "record.id"));
	CHECK(!util_streq(cand, orig));
	json_free(j);
	/* until approved, the keyed record keeps its text */
	CHECK_INT(cairn_record_read_key(db, "deploy:staging", NULL, &r),
		  CAIRN_OK);
	CHECK(r && strstr(r->body, "make deploy-staging") != NULL);
	cairn_record_free(r);
	CHECK_INT(cairn_record_set_status(db, cand, "candidate", "accepted", 0),
		  CAIRN_OK);
	CHECK_INT(cairn_record_read_key(db, "deploy:staging", NULL, &r),
		  CAIRN_OK);
	CHECK(r && strstr(r->body, "./ship staging") != NULL);
	CHECK_STR(r ? r->id : NULL, orig);
	cairn_record_free(r);

	/* a file-backed key */
	memset(&fb, 0, sizeof(fb));
	fb.kind = (char *)"adr";
	fb.key = (char *)"adr:queue";
	fb.title = (char *)"ADR 7: queue";
	fb.body = (char *)"We use NATS as the message queue.";
	fb.origin = (char *)"file";
	fb.src_path = (char *)"docs/adr/0007-queue.md";
	fb.src_line = 3;
	fb.confidence = -1;
	CHECK_INT(cairn_record_write(db, &fb, 0, &fid), CAIRN_OK);
	j = call(s, "memory_write", "{\"kind\":\"adr\",\"key\":\"adr:queue\","
				    "\"body\":\"We use Kafka.\"}");
	CHECK(tool_error(j) && strstr(tool_error(j), "docs/adr/0007-queue.md"));
	json_free(j);
	cairn_free(fid);
	cairn_free(cand);
	cairn_free(orig);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* "Text containing a secret ... is refused and nothing is stored". The
 * token is a fake in the shape the filter knows. */
static void test_mcp_write_secret(void)
{
	static const char token[] = "ghp_Zr4kQ8mN2pX7vB1cL9tY6wE3sA5dF0gH8jK2";
	cairn_db *db = test_store("mcp-secret", NULL, 0);
	struct mcp_server *s = ready(db, MCP_PROTOCOL_LATEST);
	size_t before = count_records(db);
	char args[256];
	struct json *j;
	const char *e;

	snprintf(args, sizeof(args),
		 "{\"kind\":\"capability\",\"body\":\"push with GITHUB_TOKEN=%s"
		 "\"}",
		 token);
	j = call(s, "memory_write", args);
	e = tool_error(j);
	CHECK(e && strstr(e, "secret") && strstr(e, "nothing was stored"));
	CHECK(e && strstr(e, token) == NULL && strstr(e, "Zr4kQ8") == NULL);
	CHECK(e && strstr(e, "--redact") == NULL);
	CHECK_INT(count_records(db), before);
	json_free(j);
	/* also in the proof */
	snprintf(args, sizeof(args),
		 "{\"kind\":\"capability\",\"body\":\"push works\",\"proof\":"
		 "\"%s\"}",
		 token);
	j = call(s, "memory_write", args);
	CHECK(tool_error(j) && !strstr(tool_error(j), token));
	CHECK_INT(count_records(db), before);
	json_free(j);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* ----------------------------------------------------- reading tools */

/* memory_recall: "stores a receipt of what was returned (its id is in the
 * answer) and sets last_seen on the returned records; it changes no
 * record's text or status"; "an empty result means the memory holds no
 * answer"; "by default only accepted and unverified records". */
static void test_mcp_recall(void)
{
	cairn_db *db = test_store("mcp-recall", NULL, 0);
	struct mcp_server *s;
	char *before, *after, *receipt = NULL, *rj = NULL;
	struct json *j;
	const struct json *h;
	cairn_record *r = NULL;

	fill(db);
	s = ready(db, MCP_PROTOCOL_LATEST);
	before = snapshot(db, 0);
	j = call(s, "memory_recall",
		 "{\"query\":\"how do I deploy the orders service to staging\","
		 "\"k\":3}");
	CHECK(tool_error(j) == NULL);
	CHECK(at_int(SC(j), "count") >= 1);
	CHECK_STR(at_str(SC(j), "results.0.key"), "deploy:staging");
	h = at(SC(j), "results.0");
	CHECK(json_get_str(h, "excerpt") &&
	      strstr(json_get_str(h, "excerpt"), "make deploy-staging"));
	CHECK(at(h, "relevance") && at(h, "relevance")->num > 0 &&
	      at(h, "relevance")->num <= 1);
	receipt = util_strdup(at_str(SC(j), "receipt"));
	CHECK(receipt && *receipt);
	CHECK_INT(cairn_receipt_json(db, receipt, &rj), CAIRN_OK);
	CHECK_INT(cairn_record_get(db, at_str(h, "id"), &r), CAIRN_OK);
	CHECK(r && r->last_seen != NULL);
	cairn_record_free(r);
	json_free(j);
	after = snapshot(db, 0);
	CHECK_STR(after, before); /* nothing but last_seen changed */
	cairn_free(after);
	/* no answer: empty */
	j = call(s, "memory_recall",
		 "{\"query\":\"zebra giraffe savanna photography\"}");
	CHECK_INT(at_int(SC(j), "count"), 0);
	json_free(j);
	/* kinds narrows the search */
	j = call(s, "memory_recall", "{\"query\":\"PROD database\","
				     "\"kinds\":[\"rule\"]}");
	CHECK_INT(at_int(SC(j), "count"), 1);
	CHECK_STR(at_str(SC(j), "results.0.kind"), "rule");
	json_free(j);
	cairn_free(rj);
	cairn_free(receipt);
	cairn_free(before);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* Excerpts: "the first lines of the body", at most 4 lines and 400
 * bytes, never a cut character; cut marked. */
static void test_mcp_excerpt(void)
{
	cairn_db *db = test_store("mcp-excerpt", NULL, 0);
	struct mcp_server *s;
	struct sbuf body = SBUF_INIT;
	struct json *j;
	const char *ex;
	size_t i, full;

	/* two 200-byte lines fill the budget with the separator to spare:
	 * the third line must not be reached with negative room */
	for (i = 0; i < 200; i++)
		sbuf_addc(&body, 'a');
	sbuf_adds(&body, " walrus\n");
	for (i = 0; i < 193; i++)
		sbuf_addc(&body, 'b');
	sbuf_adds(&body, "\nthird line\n");
	/* then a line of 2-byte characters that must not be split */
	for (i = 0; i < 300; i++)
		sbuf_adds(&body, "\xc3\xa9");
	cairn_free(put(db, "fact", "ex:1", "Walrus facts", sbuf_str(&body),
		       NULL));
	cairn_free(put(db, "fact", "ex:2", "Short walrus", "one line walrus",
		       NULL));
	full = body.len;
	sbuf_reset(&body);
	sbuf_adds(&body, "walrus\n");
	for (i = 0; i < 300; i++)
		sbuf_adds(&body, "\xc3\xa9");
	cairn_free(put(db, "fact", "ex:3", "Accents walrus", sbuf_str(&body),
		       NULL));
	s = ready(db, MCP_PROTOCOL_LATEST);
	j = call(s, "memory_read", "{\"key\":\"ex:1\"}");
	/* memory_read gives the whole body, not an excerpt */
	CHECK(at_str(SC(j), "record.body") &&
	      strlen(at_str(SC(j), "record.body")) == full);
	json_free(j);
	j = call(s, "memory_recall", "{\"query\":\"walrus\",\"k\":5}");
	CHECK_INT(at_int(SC(j), "count"), 3);
	for (i = 0; i < 3; i++) {
		char p[64];
		const char *key;

		snprintf(p, sizeof(p), "results.%zu.key", i);
		key = at_str(SC(j), p);
		snprintf(p, sizeof(p), "results.%zu.excerpt", i);
		ex = at_str(SC(j), p);
		snprintf(p, sizeof(p), "results.%zu.excerpt_truncated", i);
		CHECK(ex && strlen(ex) <= 400);
		CHECK(ex && util_utf8_invalid_at(ex, strlen(ex)) == -1);
		if (util_streq(key, "ex:1")) {
			CHECK(is_true(at(SC(j), p)));
			CHECK(ex && strstr(ex, "third") == NULL);
			CHECK(ex && strstr(ex, "walrus\nbbb") != NULL);
		} else if (util_streq(key, "ex:2")) {
			CHECK(!is_true(at(SC(j), p)));
			CHECK_STR(ex, "one line walrus");
		} else {
			CHECK(is_true(at(SC(j), p)));
			CHECK(ex && strncmp(ex, "walrus\n\xc3\xa9", 9) == 0);
		}
	}
	json_free(j);
	sbuf_release(&body);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* memory_recall: "the first search of a day also ages the store
 * (decisions and facts unseen for 90 days become stale, for 180 days
 * retired). It never changes a record's text." The clock is moved with
 * $CAIRN_NOW (the lifecycle's test knob). */
static void test_mcp_recall_ages(void)
{
	cairn_db *db = test_store("mcp-ages", NULL, 0);
	struct mcp_server *s;
	cairn_record *r = NULL;
	struct json *j;
	char *fact, *rule, *old, now[32];
	long long t;

	fact = put(db, "fact", NULL, "Cache size", "The cache holds 4 GB.",
		   NULL);
	rule = put(db, "rule", NULL, "No force push", "Never force push to "
		   "main.", NULL);
	old = put(db, "decision", NULL, "Old choice", "We chose Jenkins.",
		  NULL);
	s = ready(db, MCP_PROTOCOL_LATEST);
	util_now_iso(now, sizeof(now));
	t = util_parse_iso(now) + 100LL * 86400;
	{
		time_t tt = (time_t)t;
		struct tm tm;

		gmtime_r(&tt, &tm);
		strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	setenv("CAIRN_NOW", now, 1);
	j = call(s, "memory_recall", "{\"query\":\"zebra savanna\"}");
	CHECK(tool_error(j) == NULL);
	json_free(j);
	unsetenv("CAIRN_NOW");
	CHECK_INT(cairn_record_get(db, fact, &r), CAIRN_OK);
	CHECK_STR(r ? r->status : NULL, "stale");
	CHECK_STR(r ? r->body : NULL, "The cache holds 4 GB.");
	cairn_record_free(r);
	CHECK_INT(cairn_record_get(db, old, &r), CAIRN_OK);
	CHECK_STR(r ? r->status : NULL, "stale");
	cairn_record_free(r);
	CHECK_INT(cairn_record_get(db, rule, &r), CAIRN_OK);
	CHECK_STR(r ? r->status : NULL, "accepted"); /* rules never age */
	cairn_record_free(r);
	cairn_free(fact);
	cairn_free(rule);
	cairn_free(old);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* find_precedents: "restricted to kinds decision and adr with status
 * accepted or unverified". */
static void test_mcp_precedents(void)
{
	cairn_db *db = test_store("mcp-precedents", NULL, 0);
	struct mcp_server *s;
	struct json *j;
	const struct json *e;
	size_t n = 0;

	fill(db);
	s = ready(db, MCP_PROTOCOL_LATEST);
	/* the fact mentions PostgreSQL and the orders service too */
	j = call(s, "find_precedents",
		 "{\"query\":\"PostgreSQL orders service\"}");
	CHECK(tool_error(j) == NULL);
	for (e = at(SC(j), "results") ? at(SC(j), "results")->child : NULL; e;
	     e = e->next, n++)
		CHECK(util_streq(json_get_str(e, "kind"), "decision") ||
		      util_streq(json_get_str(e, "kind"), "adr"));
	CHECK_INT(n, 1);
	json_free(j);
	/* ... whereas memory_recall finds the fact as well */
	j = call(s, "memory_recall", "{\"query\":\"PostgreSQL orders "
				     "service\"}");
	CHECK(at_int(SC(j), "count") >= 2);
	json_free(j);
	/* kinds is not an argument of find_precedents */
	j = call(s, "find_precedents", "{\"query\":\"PostgreSQL\",\"kinds\":"
				       "[\"fact\"]}");
	CHECK(tool_error(j) && strstr(tool_error(j), "kinds"));
	json_free(j);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* memory_read: "reading by key sets the record's last_seen and turns a
 * stale record back into accepted; reading by id changes nothing"; "Any
 * status is returned"; file-backed records name their file. And
 * memory_candidates: "it changes nothing in the store". */
static void test_mcp_read(void)
{
	cairn_db *db = test_store("mcp-read", NULL, 0);
	struct mcp_server *s;
	char *sid, *before, *after, args[160];
	cairn_record fb, *r = NULL;
	struct json *j;
	char *fid = NULL;

	fill(db);
	sid = put(db, "fact", "ci:runner", "CI runner", "CI runs on the "
		  "self-hosted runner named blue.", "stale");
	memset(&fb, 0, sizeof(fb));
	fb.kind = (char *)"adr";
	fb.title = (char *)"ADR 2: logging";
	fb.body = (char *)"Structured logs as JSON lines.";
	fb.origin = (char *)"file";
	fb.src_path = (char *)"docs/adr/0002-logging.md";
	fb.src_line = 5;
	fb.confidence = -1;
	CHECK_INT(cairn_record_write(db, &fb, 0, &fid), CAIRN_OK);
	s = ready(db, MCP_PROTOCOL_LATEST);

	/* by id: nothing changes, not even last_seen; stale stays stale */
	before = snapshot(db, 1);
	snprintf(args, sizeof(args), "{\"id\":\"%s\"}", sid);
	j = call(s, "memory_read", args);
	CHECK(tool_error(j) == NULL);
	CHECK_STR(at_str(SC(j), "record.status"), "stale");
	CHECK_STR(at_str(SC(j), "record.body"),
		  "CI runs on the self-hosted runner named blue.");
	CHECK(!is_true(at(SC(j), "file_backed")));
	CHECK(at(SC(j), "edit") && at(SC(j), "edit")->type == JSON_NULL);
	json_free(j);
	j = call(s, "memory_candidates", "{\"kinds\":[\"fact\"],\"limit\":5}");
	CHECK_INT(at_int(SC(j), "count"), 0);
	json_free(j);
	after = snapshot(db, 1);
	CHECK_STR(after, before);
	cairn_free(after);
	cairn_free(before);

	/* by key: last_seen set, stale revived */
	j = call(s, "memory_read", "{\"key\":\"ci:runner\"}");
	CHECK(at_str(SC(j), "record.status") &&
	      strcmp(at_str(SC(j), "record.status"), "stale") != 0);
	json_free(j);
	CHECK_INT(cairn_record_get(db, sid, &r), CAIRN_OK);
	CHECK(r && (util_streq(r->status, "accepted") ||
		    util_streq(r->status, "unverified")));
	CHECK(r && r->last_seen != NULL);
	cairn_record_free(r);

	/* file-backed */
	snprintf(args, sizeof(args), "{\"id\":\"%s\"}", fid);
	j = call(s, "memory_read", args);
	CHECK(is_true(at(SC(j), "file_backed")));
	CHECK_STR(at_str(SC(j), "edit"), "docs/adr/0002-logging.md:5");
	CHECK_STR(at_str(SC(j), "record.source.path"),
		  "docs/adr/0002-logging.md");
	json_free(j);

	/* not found, both, neither */
	j = call(s, "memory_read", "{\"key\":\"no:such\"}");
	CHECK(tool_error(j) && strstr(tool_error(j), "no:such"));
	json_free(j);
	j = call(s, "memory_read", "{\"key\":\"ci:runner\",\"id\":\"r1234\"}");
	CHECK(tool_error(j) && strstr(tool_error(j), "exactly one"));
	json_free(j);
	j = call(s, "memory_read", "{}");
	CHECK(tool_error(j) && strstr(tool_error(j), "exactly one"));
	json_free(j);
	cairn_free(fid);
	cairn_free(sid);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* memory_forget: "its status becomes retired, so memory_recall ... no
 * longer return[s] it by default; its text ... stay[s]"; "A file-backed
 * record ... is not changed: the answer is an error naming the file and
 * line". */
static void test_mcp_forget(void)
{
	cairn_db *db = test_store("mcp-forget", NULL, 0);
	struct mcp_server *s;
	char *id, *fid = NULL, *before, *after, args[160];
	cairn_record fb, *r = NULL;
	struct json *j;

	fill(db);
	id = put(db, "fact", NULL, "Build cache", "The build cache lives in "
		 "/var/cache/buildkite and is shared.", NULL);
	memset(&fb, 0, sizeof(fb));
	fb.kind = (char *)"adr";
	fb.title = (char *)"ADR 3: build cache";
	fb.body = (char *)"We keep one shared build cache.";
	fb.origin = (char *)"file";
	fb.src_path = (char *)"docs/adr/0003-cache.md";
	fb.src_line = 1;
	fb.confidence = -1;
	CHECK_INT(cairn_record_write(db, &fb, 0, &fid), CAIRN_OK);
	s = ready(db, MCP_PROTOCOL_LATEST);
	CHECK(recall_has(s, "build cache buildkite", "", id));
	snprintf(args, sizeof(args), "{\"id\":\"%s\"}", id);
	/* "A record you did not write ... is not changed: the answer has
	 * pending true, and a human confirms with 'cairn approve ID'" */
	j = call(s, "memory_forget", args);
	CHECK(tool_error(j) == NULL);
	CHECK_STR(at_str(SC(j), "status"), "accepted");
	CHECK_STR(at_str(SC(j), "previous_status"), "accepted");
	CHECK(json_get(SC(j), "pending") &&
	      json_get(SC(j), "pending")->type == JSON_TRUE);
	json_free(j);
	CHECK_INT(cairn_record_get(db, id, &r), CAIRN_OK);
	CHECK_STR(r ? r->status : NULL, "accepted");
	cairn_record_free(r);
	CHECK(recall_has(s, "build cache buildkite", "", id));
	CHECK_INT(cairn_forget_pending(db, id), 1);
	/* the human confirms: retired, the text kept */
	CHECK_INT(cairn_forget_resolve(db, id, 1), CAIRN_OK);
	CHECK_INT(cairn_forget_pending(db, id), 0);
	CHECK_INT(cairn_record_get(db, id, &r), CAIRN_OK);
	CHECK_STR(r ? r->status : NULL, "retired");
	CHECK_STR(r ? r->body : NULL, "The build cache lives in "
		  "/var/cache/buildkite and is shared.");
	cairn_record_free(r);
	CHECK(!recall_has(s, "build cache buildkite", "", id));
	/* "by its full id (no prefix)": a prefix changes nothing */
	snprintf(args, sizeof(args), "{\"id\":\"%.6s\"}", id);
	j = call(s, "memory_forget", args);
	CHECK(tool_error(j) && strstr(tool_error(j), "full id"));
	json_free(j);
	/* by key */
	j = call(s, "memory_forget", "{\"key\":\"deploy:staging\"}");
	CHECK_STR(at_str(SC(j), "status"), "accepted");
	CHECK_STR(at_str(SC(j), "key"), "deploy:staging");
	json_free(j);
	/* "Your own pending candidate from this session is retired at once" */
	json_free(call(s, "memory_write", "{\"kind\":\"fact\",\"key\":"
		       "\"fact:own\",\"body\":\"The cache is warm at 9am.\"}"));
	j = call(s, "memory_forget", "{\"key\":\"fact:own\"}");
	CHECK_STR(at_str(SC(j), "previous_status"), "candidate");
	CHECK_STR(at_str(SC(j), "status"), "retired");
	json_free(j);
	/* by key the lookup is no read: a stale record is reported stale */
	cairn_free(put(db, "fact", "old:host", "Old host", "The API runs on "
		       "host kiwi.", "stale"));
	j = call(s, "memory_forget", "{\"key\":\"old:host\"}");
	CHECK_STR(at_str(SC(j), "previous_status"), "stale");
	json_free(j);
	j = call(s, "memory_forget", "{\"key\":\"no:such:key\"}");
	CHECK(tool_error(j) && strstr(tool_error(j), "no:such:key"));
	json_free(j);
	/* file-backed: error naming the file, nothing changed */
	before = snapshot(db, 1);
	snprintf(args, sizeof(args), "{\"id\":\"%s\"}", fid);
	j = call(s, "memory_forget", args);
	CHECK(tool_error(j) &&
	      strstr(tool_error(j), "docs/adr/0003-cache.md:1") &&
	      strstr(tool_error(j), "cairn seed"));
	json_free(j);
	after = snapshot(db, 1);
	CHECK_STR(after, before);
	cairn_free(after);
	cairn_free(before);
	cairn_free(fid);
	cairn_free(id);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* Argument errors are tool errors (isError) the model can read; unknown
 * tools and non-object arguments are -32602. */
static void test_mcp_arg_errors(void)
{
	static const struct {
		const char *tool, *args, *needle;
	} cases[] = {
		{ "memory_recall", "{}", "missing argument 'query'" },
		{ "memory_recall", "{\"query\":5}", "must be a string" },
		{ "memory_recall", "{\"query\":\"\"}", "empty" },
		{ "memory_recall", "{\"query\":\"x\",\"k\":\"5\"}", "integer" },
		{ "memory_recall", "{\"query\":\"x\",\"k\":0}", "integer" },
		{ "memory_recall", "{\"query\":\"x\",\"k\":2.5}", "integer" },
		{ "memory_recall", "{\"query\":\"x\",\"k\":101}", "integer" },
		{ "memory_recall", "{\"query\":\"x\",\"kinds\":\"fact\"}",
		  "array of kinds" },
		{ "memory_recall", "{\"query\":\"x\",\"kinds\":[\"bogus\"]}",
		  "bogus" },
		{ "memory_recall", "{\"query\":\"x\",\"statuses\":[]}",
		  "array of statuses" },
		{ "memory_recall", "{\"query\":\"a\\u0000b\"}", "NUL" },
		{ "memory_write", "{\"kind\":\"opinion\",\"body\":\"x\"}",
		  "unknown kind" },
		{ "memory_write", "{\"kind\":\"fact\"}", "missing argument "
		  "'body'" },
		{ "memory_write", "{\"kind\":\"fact\",\"body\":\"x\","
		  "\"scope\":\"team\"}", "workspace" },
		{ "memory_write", "{\"kind\":\"fact\",\"body\":\"   \"}",
		  "empty" },
		{ "memory_candidates", "{\"limit\":501}", "integer" },
		{ "memory_forget", "{\"id\":\"zzzz-none\"}", "not retired" },
	};
	cairn_db *db = test_store("mcp-args", NULL, 0);
	struct mcp_server *s = ready(db, MCP_PROTOCOL_LATEST);
	size_t before = count_records(db), i;
	struct json *j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *e;

		j = call(s, cases[i].tool, cases[i].args);
		e = tool_error(j);
		CHECK_MSG(e && strstr(e, cases[i].needle),
			  "case %zu: %s %s -> %s", i, cases[i].tool,
			  cases[i].args, e ? e : "(no error)");
		CHECK(SC(j) == NULL);
		json_free(j);
	}
	CHECK_INT(count_records(db), before);
	j = send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"memory_approve\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32602);
	json_free(j);
	j = send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"memory_recall\",\"arguments\":[]}}");
	CHECK_INT(err_code(j), -32602);
	json_free(j);
	j = send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
		    "\"params\":{}}");
	CHECK_INT(err_code(j), -32602);
	json_free(j);
	/* a tools/call notification is not executed */
	j = send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":"
		    "{\"name\":\"memory_write\",\"arguments\":{\"kind\":"
		    "\"fact\",\"body\":\"sneaky\"}}}");
	CHECK(j == NULL);
	json_free(j);
	CHECK_INT(count_records(db), before);
	mcp_server_free(s);
	cairn_db_close(db);
}

/* The id comes back exactly: strings, integers, large and negative. */
static void test_mcp_ids(void)
{
	static const char *const ids[] = { "\"abc\"", "0", "-5",
					   "9007199254740991", "\"x y\"" };
	cairn_db *db = test_store("mcp-ids", NULL, 0);
	struct mcp_server *s = server(db);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		char line[160], *reply = NULL;
		size_t n = 0;

		snprintf(line, sizeof(line),
			 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}",
			 ids[i]);
		CHECK_INT(mcp_handle_line(s, line, strlen(line), &reply, &n),
			  CAIRN_OK);
		CHECK_MSG(reply && strstr(reply, ids[i]),
			  "id %s: %s", ids[i], reply ? reply : "(none)");
		cairn_free(reply);
	}
	mcp_server_free(s);
	cairn_db_close(db);
}

void unit_mcp(void)
{
	RUN(test_mcp_rpc_errors);
	RUN(test_mcp_limits);
	RUN(test_mcp_negotiate);
	RUN(test_mcp_tools_list);
	RUN(test_mcp_write_candidate);
	RUN(test_mcp_write_existing_key);
	RUN(test_mcp_write_secret);
	RUN(test_mcp_recall);
	RUN(test_mcp_recall_ages);
	RUN(test_mcp_excerpt);
	RUN(test_mcp_precedents);
	RUN(test_mcp_read);
	RUN(test_mcp_forget);
	RUN(test_mcp_arg_errors);
	RUN(test_mcp_ids);
}
