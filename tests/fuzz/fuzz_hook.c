/*
 * fuzz_hook.c -- libFuzzer target for the Claude Code hook's input
 * handling: the JSON object `cairn hook` reads on stdin (src/cli/cli_hook.c,
 * cmd_hook) and what it does with it (src/recall/hook_inject.c:
 * hook_prompt_block, hook_session_block; src/serve/hook.c: hook_output_json).
 *
 * The input is one hook input, read as cmd_hook reads it (a C string:
 * bytes after a NUL are not seen; over CLI_MAX_STDIN it is refused). It is
 * parsed with json_parse; the same members cmd_hook reads are taken
 * (hook_event_name, cwd, prompt, transcript_path, session_id); a
 * UserPromptSubmit prompt is recalled and rendered over a store made once
 * at start-up, a SessionStart renders the drawer. Receipts are not written
 * (no_receipt), so inputs do not pile up. The budget is 4000, 300 or 60
 * characters by the input's length, so that cuts are exercised.
 *
 * Checks: the block never holds more characters than the budget, never
 * more entries than k, is valid UTF-8; the Claude Code output object built
 * from it is one line of JSON whose hookSpecificOutput.additionalContext
 * is exactly the block, and whose hookEventName is the event.
 *
 *   make fuzz FUZZ_TARGETS=hook   (or build/san/replay_hook tests/fuzz/corpus/hook)
 */
#define _XOPEN_SOURCE 700
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"
#include "json.h"

#define FUZZ_STORE_NAME "hook"
#include "fuzz_store.h"

/* cli.c CLI_MAX_STDIN: cli_read_stdin refuses more */
#define FUZZ_MAX_STDIN ((size_t)16 << 20)

/* A record of origin "file" when it has a path, else "human". */
static void put(const char *kind, const char *key, const char *body,
		const char *status, const char *path)
{
	fuzz_store_put(kind, key, body, status, path ? "file" : "human", path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_store_open(NULL, 0);
	put("fact", "deploy:staging",
	    "Deploy to staging with make deploy-staging.\nIt takes 5 minutes.",
	    NULL, NULL);
	put("decision", "db:engine",
	    "We chose PostgreSQL 16 for the orders service.\nOne database "
	    "per service.\nMigrations with sqitch.\nA fourth line.",
	    "accepted", NULL);
	put("adr", "adr:queue", "We use NATS as the message queue for events.",
	    "accepted", "docs/adr/0001-queue.md");
	put("adr", NULL, "NATS subjects are named service.entity.event.",
	    "accepted", "docs/adr/0001-queue.md");
	put("rule", "rule:prod", "Never touch PROD by hand; use the pipeline.",
	    "accepted", NULL);
	put("capability", "cap:aws", "aws sts get-caller-identity works here.",
	    "unverified", NULL);
	put("fact", NULL, "部署到测试环境用 make deploy-staging，大约五分钟。",
	    NULL, NULL);
	put("fact", "cand:1", "A candidate waiting for approval.", "candidate",
	    NULL);
	return 0;
}

static size_t u8chars(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

static void check_output(const char *event, const struct sbuf *text)
{
	struct sbuf outj = SBUF_INIT;
	struct json *j = NULL;
	const struct json *hso, *ctx;
	char e[160];

	hook_output_json(&outj, event, text->buf, text->len);
	if (outj.err) {
		sbuf_release(&outj);
		return;
	}
	if (outj.len == 0 || outj.buf[outj.len - 1] != '\n' ||
	    memchr(outj.buf, '\n', outj.len - 1))
		abort();
	if (json_parse(outj.buf, outj.len - 1, &j, e, sizeof(e)) !=
	    CAIRN_OK) {
		fprintf(stderr, "hook output is not JSON: %s\n", e);
		abort();
	}
	hso = json_get(j, "hookSpecificOutput");
	ctx = hso ? json_get(hso, "additionalContext") : NULL;
	if (!ctx || ctx->type != JSON_STRING || ctx->len != text->len ||
	    memcmp(ctx->str, text->buf, text->len) != 0 ||
	    !util_streq(json_get_str(hso, "hookEventName"), event))
		abort();
	json_free(j);
	sbuf_release(&outj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t budgets[] = { HOOK_DEFAULT_BUDGET, 300, 60 };
	struct hook_opts o;
	struct hook_result res;
	struct sbuf text = SBUF_INIT;
	struct json *j = NULL;
	const char *event, *prompt;
	char *in, err[256];
	int rc, prompt_event = 0;

	if (!db)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size > FUZZ_MAX_STDIN)
		return 0; /* cli_read_stdin refuses it */
	in = util_strndup((const char *)data, size);
	if (!in)
		return 0;
	/* cmd_hook: json_parse(in, strlen(in)) and a JSON object, else logged */
	if (json_parse(in, strlen(in), &j, err, sizeof(err)) != CAIRN_OK ||
	    j->type != JSON_OBJECT)
		goto out;
	event = json_get_str(j, "hook_event_name");
	prompt = json_get_str(j, "prompt");
	(void)json_get_str(j, "cwd");
	(void)json_get_str(j, "transcript_path");
	(void)json_get_str(j, "session_id");
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	o.budget = budgets[size % 3];
	o.no_receipt = 1;
	if (!event)
		goto out;
	if (strcmp(event, "UserPromptSubmit") == 0 && prompt && *prompt) {
		prompt_event = 1;
		rc = hook_prompt_block(db, prompt, &o, &text, &res);
	} else if (strcmp(event, "SessionStart") == 0)
		rc = hook_session_block(db, &o, &text, &res);
	else
		goto out;
	if (rc == CAIRN_NOMEM)
		goto out;
	if (rc != CAIRN_OK && rc != CAIRN_INVALID && rc != CAIRN_TOOBIG) {
		fprintf(stderr, "hook: unexpected %d: %s\n", rc,
			cairn_errmsg(db));
		abort();
	}
	if (rc != CAIRN_OK)
		goto out;
	if (u8chars(text.buf ? text.buf : "", text.len) > o.budget ||
	    res.injected > (prompt_event ? (size_t)HOOK_DEFAULT_K : (size_t)HOOK_MAX_K) || res.injected > res.found ||
	    (text.len && util_utf8_invalid_at(text.buf, text.len) >= 0)) {
		fprintf(stderr, "hook block breaks its budget or k: %zu chars, "
				"%zu entries\n",
			u8chars(text.buf, text.len), res.injected);
		abort();
	}
	if (text.len > 0)
		check_output(event, &text);
out:
	sbuf_release(&text);
	json_free(j);
	cairn_free(in);
	return 0;
}
