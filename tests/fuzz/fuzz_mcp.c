/*
 * fuzz_mcp.c -- libFuzzer target for the MCP server's message handler
 * (src/serve/mcp.c, mcp_handle_line).
 *
 * The input is a session: lines separated by '\n', fed in order to one
 * fresh server over a store made once at start-up (a few records, one of
 * them file-backed). Each input runs inside a batch that is rolled back,
 * so writes and receipts of one input do not pile up for the next.
 *
 * Checks, for every line: mcp_handle_line returns CAIRN_OK (out of memory
 * aside); a reply, when there is one, has no newline, parses as JSON, is
 * an object with "jsonrpc":"2.0", an "id" member and exactly one of
 * "result" and "error"; an error's code is one of the JSON-RPC codes the
 * server uses; a tool result has a content array. A message without an
 * "id" member that parses as an object with a string method gets no
 * reply (notifications are never answered).
 *
 *   make fuzz FUZZ_TARGETS=mcp   (or build/san/replay_mcp tests/fuzz/corpus/mcp)
 */
#define _XOPEN_SOURCE 700
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mcp.h"

#define FUZZ_STORE_NAME "mcp"
#include "fuzz_store.h"

/* A record without a status. */
static void put(const char *kind, const char *key, const char *body,
		const char *origin, const char *path)
{
	fuzz_store_put(kind, key, body, NULL, origin, path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_store_open(NULL, 0);
	put("fact", "deploy:staging", "Deploy with make deploy-staging.",
	    NULL, NULL);
	put("decision", "db:engine", "We chose PostgreSQL for orders.", NULL,
	    NULL);
	put("adr", "adr:queue", "We use NATS as the message queue.", "file",
	    "docs/adr/0001-queue.md");
	put("rule", NULL, "Never touch PROD by hand.", "agent", NULL);
	return 0;
}

static int code_known(double c)
{
	return c == -32700 || c == -32600 || c == -32601 || c == -32602 ||
	       c == -32603 || c == -32002;
}

/* Would the server see this line as a notification (no reply due)? */
static int is_notification(const struct json *m)
{
	const struct json *meth = json_get(m, "method");

	return m->type == JSON_OBJECT && !json_get(m, "id") && meth &&
	       meth->type == JSON_STRING && strlen(meth->str) == meth->len &&
	       util_streq(json_get_str(m, "jsonrpc"), "2.0") &&
	       (!json_get(m, "params") ||
		json_get(m, "params")->type == JSON_OBJECT ||
		json_get(m, "params")->type == JSON_ARRAY);
}

static void check_reply(const char *line, size_t len, const char *reply,
			size_t n)
{
	struct json *in = NULL, *j = NULL;
	const struct json *res, *err;
	char e[160];
	int in_ok = len <= MCP_MAX_LINE &&
		    json_parse(line, len, &in, e, sizeof(e)) == CAIRN_OK;

	if (!reply) {
		/* silence is only for notifications, responses and blanks */
		const struct json *id = in_ok ? json_get(in, "id") : NULL;

		if (in_ok && in->type == JSON_OBJECT && !id &&
		    !is_notification(in) && !json_get(in, "result") &&
		    !json_get(in, "error"))
			abort();
		/* a request with a valid id and a method is always answered */
		if (id && (id->type == JSON_STRING || id->type == JSON_NUMBER) &&
		    json_get(in, "method"))
			abort();
		json_free(in);
		return;
	}
	if (in_ok && is_notification(in))
		abort();
	json_free(in);
	if (memchr(reply, '\n', n) || strlen(reply) != n)
		abort();
	if (json_parse(reply, n, &j, e, sizeof(e)) != CAIRN_OK) {
		fprintf(stderr, "reply is not JSON: %s\n%s\n", e, reply);
		abort();
	}
	res = json_get(j, "result");
	err = json_get(j, "error");
	if (j->type != JSON_OBJECT ||
	    !util_streq(json_get_str(j, "jsonrpc"), "2.0") ||
	    !json_get(j, "id") || !res == !err)
		abort();
	if (err) {
		double c = 0;

		if (!json_get_num(err, "code", &c) || !code_known(c) ||
		    !json_get_str(err, "message"))
			abort();
	}
	if (res && json_get(res, "isError") &&
	    (!json_get(res, "content") ||
	     json_get(res, "content")->type != JSON_ARRAY))
		abort();
	json_free(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct mcp_server *s = NULL;

	if (!db)
		LLVMFuzzerInitialize(NULL, NULL);
	if (mcp_server_new(db, NULL, &s) != CAIRN_OK)
		abort();
	if (cairn_begin(db) != CAIRN_OK)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		char *reply = NULL;
		size_t n = 0;
		int rc = mcp_handle_line(s, p, len, &reply, &n);

		if (rc != CAIRN_OK && rc != CAIRN_NOMEM)
			abort();
		if (rc == CAIRN_OK)
			check_reply(p, len, reply, n);
		cairn_free(reply);
		p += len + (nl ? 1 : 0);
	}
	cairn_rollback(db);
	mcp_server_free(s);
	return 0;
}
