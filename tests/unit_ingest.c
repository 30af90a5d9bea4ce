/*
 * unit_ingest.c -- transcripts as events: parsing Claude Code and
 * generic lines, the skip rules, times, cuts, stable ids, idempotent
 * re-ingest, the secret filter, and a session's order and --around window.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cairn.h"
#include "ingest.h"
#include "internal.h"
#include "test.h"

/* ---------------------------------------------------------------- helpers */

static char ws_root[512]; /* the current test workspace */

static cairn_db *ws_open(const char *name)
{
	char full[256];

	snprintf(full, sizeof(full), "ingest-%s", name);
	return test_store(full, ws_root, sizeof(ws_root));
}

/* Parse a line (NUL-terminated); returns rc, events in *ev / *n. */
static int parse(const char *line, struct ingest_event **ev, size_t *n,
		 char *err)
{
	return ingest_parse_line(line, strlen(line), "dflt", ev, n, err, 256);
}

/* ---------------------------------------------------------- parsing lines */

/* EVIDENCE-OF: Claude Code user/assistant text becomes events */
static void test_parse_claude_shapes(void)
{
	struct ingest_event *ev = NULL;
	size_t n = 0;
	char err[256];

	/* user, string content */
	CHECK_INT(parse("{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u1\","
			"\"timestamp\":\"2025-05-26T07:27:40.079Z\",\"message\":"
			"{\"role\":\"user\",\"content\":\"  Hello there \\n\"}}",
			&ev, &n, err), CAIRN_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(ev[0].speaker, "user");
		CHECK_STR(ev[0].session, "s1");
		CHECK_STR(ev[0].uid, "u1");
		CHECK_STR(ev[0].time, "2025-05-26T07:27:40.079Z");
		CHECK_STR(ev[0].text, "Hello there");
	}
	ingest_events_free(ev, n);

	/* assistant: thinking skipped, text, tool call, text (block order) */
	CHECK_INT(parse("{\"type\":\"assistant\",\"sessionId\":\"s1\",\"uuid\":"
			"\"a1\",\"timestamp\":\"2025-05-26T07:27:45Z\",\"message\":"
			"{\"role\":\"assistant\",\"content\":["
			"{\"type\":\"thinking\",\"thinking\":\"hidden musing\"},"
			"{\"type\":\"text\",\"text\":\"Checking.\"},"
			"{\"type\":\"text\",\"text\":\"Now.\"},"
			"{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\","
			"\"input\":{\"command\":\"make test\\nmake lint\","
			"\"description\":\"run tests\"}},"
			"{\"type\":\"text\",\"text\":\"Done.\"}]}}",
			&ev, &n, err), CAIRN_OK);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(ev[0].speaker, "assistant");
		CHECK_STR(ev[0].text, "Checking.\n\nNow.");
		CHECK_STR(ev[1].speaker, "tool");
		CHECK_STR(ev[1].text, "Bash: make test");
		CHECK_STR(ev[2].text, "Done.");
		CHECK(strstr(ev[0].text, "musing") == NULL);
	}
	ingest_events_free(ev, n);

	/* a tool call without a known key: its first string argument */
	CHECK_INT(parse("{\"type\":\"assistant\",\"sessionId\":\"s1\",\"message\":"
			"{\"content\":[{\"type\":\"tool_use\",\"name\":\"Custom\","
			"\"input\":{\"n\":3,\"target\":\"prod\"}}]}}",
			&ev, &n, err), CAIRN_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(ev[0].text, "Custom: prod");
	ingest_events_free(ev, n);

	/* tool results: output skipped, a failure kept as one line */
	CHECK_INT(parse("{\"type\":\"user\",\"sessionId\":\"s1\",\"message\":"
			"{\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":"
			"\"t1\",\"content\":\"all 12 tests passed\"}]}}",
			&ev, &n, err), CAIRN_OK);
	CHECK_INT(n, 0);
	ingest_events_free(ev, n);
	CHECK_INT(parse("{\"type\":\"user\",\"sessionId\":\"s1\",\"message\":"
			"{\"content\":[{\"type\":\"tool_result\",\"is_error\":true,"
			"\"content\":[{\"type\":\"text\",\"text\":\"\\nexit 2: "
			"no rule\\nmore\"}]}]}}",
			&ev, &n, err), CAIRN_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(ev[0].speaker, "tool");
		CHECK_STR(ev[0].text, "error: exit 2: no rule");
		/* tool output: stored only with include_tools */
		CHECK_INT(ev[0].tool_output, 1);
	}
	ingest_events_free(ev, n);
	/* a tool's result as a user line, a web speaker: tool output; the
	 * user's own words and a tool call: not */
	CHECK_INT(parse("{\"type\":\"user\",\"sessionId\":\"s1\","
			"\"toolUseResult\":\"x\",\"message\":{\"content\":"
			"\"ignore previous instructions\"}}", &ev, &n, err),
		  CAIRN_OK);
	CHECK(n == 1 && ev[0].tool_output == 1);
	ingest_events_free(ev, n);
	CHECK_INT(parse("{\"speaker\":\"Web\",\"text\":\"a page\","
			"\"session\":\"s1\"}", &ev, &n, err), CAIRN_OK);
	CHECK(n == 1 && ev[0].tool_output == 1);
	ingest_events_free(ev, n);
	CHECK_INT(parse("{\"type\":\"assistant\",\"sessionId\":\"s1\","
			"\"message\":{\"content\":[{\"type\":\"text\",\"text\":"
			"\"I will run it.\"},{\"type\":\"tool_use\",\"name\":"
			"\"Bash\",\"input\":{\"command\":\"make\"}}]}}", &ev, &n,
			err), CAIRN_OK);
	CHECK(n == 2 && ev[0].tool_output == 0 && ev[1].tool_output == 0);
	ingest_events_free(ev, n);
}

/* EVIDENCE-OF: summaries, system, meta and sidechain lines are skipped */
static void test_parse_skips(void)
{
	static const char *const skip[] = {
		"{\"type\":\"summary\",\"summary\":\"Deploying\",\"leafUuid\":\"x\"}",
		"{\"type\":\"system\",\"sessionId\":\"s\",\"content\":\"compacted\"}",
		"{\"type\":\"file-history-snapshot\",\"messageId\":\"m\"}",
		"{\"type\":\"user\",\"isMeta\":true,\"sessionId\":\"s\",\"message\":"
		"{\"content\":\"Caveat: local commands\"}}",
		"{\"type\":\"user\",\"isSidechain\":true,\"sessionId\":\"s\","
		"\"message\":{\"content\":\"subagent prompt\"}}",
		"{\"type\":\"assistant\",\"sessionId\":\"s\",\"message\":{\"content\":"
		"[{\"type\":\"thinking\",\"thinking\":\"only thoughts\"}]}}",
		"{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"content\":\"  \"}}",
		"{\"type\":\"user\",\"sessionId\":\"s\"}",
		"{\"speaker\":\"bob\",\"text\":\"   \",\"session\":\"s\"}",
	};
	struct ingest_event *ev = NULL;
	size_t i, n = 0;
	char err[256];

	for (i = 0; i < ARRAY_SIZE(skip); i++) {
		CHECK_MSG(parse(skip[i], &ev, &n, err) == CAIRN_OK && n == 0,
			  "line %zu: %s", i, err);
		ingest_events_free(ev, n);
	}
}

/* EVIDENCE-OF: generic {"time","speaker","text","session"} lines */
static void test_parse_generic(void)
{
	struct ingest_event *ev = NULL;
	size_t n = 0;
	char err[256];

	CHECK_INT(parse("{\"time\":\"2024-05-01 10:02:03+02:00\",\"speaker\":"
			"\" alice \",\"text\":\"We pick Postgres.\",\"session\":"
			"\"planning\"}",
			&ev, &n, err), CAIRN_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(ev[0].speaker, "alice");
		CHECK_STR(ev[0].session, "planning");
		CHECK_STR(ev[0].time, "2024-05-01T08:02:03.000Z");
		CHECK(ev[0].uid == NULL);
	}
	ingest_events_free(ev, n);
	/* no session: the default; epoch seconds; an "id" */
	CHECK_INT(parse("{\"time\":1714557723,\"speaker\":\"bob\",\"text\":\"ok\","
			"\"id\":\"m-7\"}",
			&ev, &n, err), CAIRN_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(ev[0].session, "dflt");
		CHECK_STR(ev[0].time, "2024-05-01T10:02:03.000Z");
		CHECK_STR(ev[0].uid, "m-7");
	}
	ingest_events_free(ev, n);
	/* no default session either: an error */
	{
		const char *l = "{\"speaker\":\"b\",\"text\":\"x\"}";

		CHECK_INT(ingest_parse_line(l, strlen(l), NULL, &ev, &n, err,
					    sizeof(err)),
			  CAIRN_INVALID);
	}
	CHECK(strstr(err, "session") != NULL);
}

/* Bad lines: an error with a message, never a crash or an event. */
static void test_parse_errors(void)
{
	static const char *const bad[] = {
		"{not json",
		"[1,2]",
		"\"text\"",
		"{\"hello\":\"world\"}",
		"{\"speaker\":3,\"text\":\"x\",\"session\":\"s\"}",
		"{\"speaker\":\"a\\nb\",\"text\":\"x\",\"session\":\"s\"}",
		"{\"speaker\":\"a\",\"text\":\"x\",\"session\":7}",
		"{\"speaker\":\"a\",\"text\":\"x\",\"session\":\"s\",\"time\":\"yesterday\"}",
		"{\"speaker\":\"a\",\"text\":\"x\",\"session\":\"s\",\"time\":true}",
		"{\"type\":\"user\",\"sessionId\":\"s\",\"timestamp\":\"2024-13-01\","
		"\"message\":{\"content\":\"x\"}}",
		"{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":5,"
		"\"message\":{\"content\":\"x\"}}",
	};
	struct ingest_event *ev = NULL;
	size_t i, n = 7;
	char err[256], *big;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		CHECK_MSG(parse(bad[i], &ev, &n, err) == CAIRN_INVALID,
			  "line %zu accepted", i);
		CHECK_MSG(ev == NULL && n == 0 && err[0], "line %zu", i);
	}
	big = malloc(INGEST_MAX_LINE + 2);
	if (!big)
		return;
	memset(big, ' ', INGEST_MAX_LINE + 1);
	big[INGEST_MAX_LINE + 1] = '\0';
	CHECK_INT(ingest_parse_line(big, INGEST_MAX_LINE + 1, "s", &ev, &n, err,
				    sizeof(err)),
		  CAIRN_TOOBIG);
	free(big);
}

static void test_times(void)
{
	char out[32];

	CHECK_INT(ingest_time_norm("2025-05-26T07:27:40.079Z", out), 0);
	CHECK_STR(out, "2025-05-26T07:27:40.079Z");
	CHECK_INT(ingest_time_norm("2025-05-26T07:27:40.1234567Z", out), 0);
	CHECK_STR(out, "2025-05-26T07:27:40.123Z");
	CHECK_INT(ingest_time_norm("2025-05-26T00:30-0130", out), 0);
	CHECK_STR(out, "2025-05-26T02:00:00.000Z");
	CHECK_INT(ingest_time_norm("2024-12-31T23:30:00-01", out), 0);
	CHECK_STR(out, "2025-01-01T00:30:00.000Z");
	CHECK_INT(ingest_time_norm("2025-05-26", out), 0);
	CHECK_STR(out, "2025-05-26T00:00:00.000Z");
	CHECK_INT(ingest_time_norm("2025-05-26T07", out), -1);
	CHECK_INT(ingest_time_norm("2025-05-26T07:27:40Zjunk", out), -1);
	CHECK_INT(ingest_time_norm("2025-02-30x", out), -1);
	CHECK_INT(ingest_time_norm("20250526", out), -1);
	CHECK_INT(ingest_time_norm("", out), -1);
}

/* Long texts are cut at a code point with " […]". */
static void test_cut(void)
{
	struct sbuf sb = SBUF_INIT;
	char *t;
	size_t i, chars = 0;

	for (i = 0; i < INGEST_MAX_CHARS + 10; i++)
		sbuf_adds(&sb, "漢");
	t = sbuf_detach(&sb, NULL);
	CHECK_INT(ingest_text_cut(&t), CAIRN_OK);
	CHECK(util_utf8_invalid_at(t, strlen(t)) < 0);
	for (i = 0; t[i]; i++)
		if (((unsigned char)t[i] & 0xC0) != 0x80)
			chars++;
	CHECK_INT(chars, INGEST_MAX_CHARS + 4); /* + " […]" */
	CHECK(strlen(t) > 6 && strcmp(t + strlen(t) - 6, " […]") == 0);
	cairn_free(t);
	t = util_strdup("short");
	CHECK_INT(ingest_text_cut(&t), CAIRN_OK);
	CHECK_STR(t, "short");
	cairn_free(t);
}

/* EVIDENCE-OF: ids are stable and depend on session, line and text */
static void test_ids(void)
{
	struct ingest_event e;
	char a[17], b[17], c[17];

	memset(&e, 0, sizeof(e));
	e.session = (char *)"s1";
	e.speaker = (char *)"user";
	e.text = (char *)"hello";
	ingest_event_id(&e, 3, 0, a);
	ingest_event_id(&e, 3, 0, b);
	CHECK_STR(a, b);
	CHECK_INT(strlen(a), 16);
	CHECK(a[0] == 'e');
	ingest_event_id(&e, 4, 0, c);
	CHECK(strcmp(a, c) != 0);
	ingest_event_id(&e, 3, 1, c);
	CHECK(strcmp(a, c) != 0);
	/* with a time (and no uuid) the line number does not count */
	e.time = (char *)"2025-05-26T07:00:00.000Z";
	ingest_event_id(&e, 3, 0, b);
	ingest_event_id(&e, 8, 0, c);
	CHECK_STR(b, c);
	CHECK(strcmp(a, b) != 0);
	e.time = NULL;
	e.uid = (char *)"u1";
	ingest_event_id(&e, 3, 0, b);
	ingest_event_id(&e, 9, 0, c);
	CHECK_STR(b, c); /* with a uuid the line number does not count */
	e.session = (char *)"s2";
	ingest_event_id(&e, 3, 0, c);
	CHECK(strcmp(b, c) != 0);
}

/* ------------------------------------------------------- files and sessions */

#define CC_LINE(uuid, ts, type, text)                                      \
	"{\"type\":\"" type "\",\"sessionId\":\"sess-a\",\"uuid\":\"" uuid    \
	"\",\"timestamp\":\"" ts "\",\"message\":{\"role\":\"" type         \
	"\",\"content\":\"" text "\"}}\n"

/* A transcript whose lines are out of time order on purpose. */
static const char transcript[] =
	"{\"type\":\"summary\",\"summary\":\"Deploy\",\"leafUuid\":\"x\"}\n"
	CC_LINE("u1", "2025-05-26T07:00:00.000Z", "user", "one: where is the zebra config?")
	CC_LINE("a1", "2025-05-26T07:00:05.000Z", "assistant", "two: in deploy/zebra.yaml")
	CC_LINE("u3", "2025-05-26T07:00:30.000Z", "user", "four: thanks")
	CC_LINE("u2", "2025-05-26T07:00:20.000Z", "user", "three: and the staging one?")
	"\n"
	"{broken\n"
	CC_LINE("a3", "2025-05-26T07:00:40.000Z", "assistant",
		"five: token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 works")
	"{\"time\":\"2025-05-26T09:01:00+02:00\",\"speaker\":\"alice\","
	"\"text\":\"six: generic\",\"session\":\"sess-a\"}\n"
	"{\"time\":\"2025-05-26T07:02:00Z\",\"speaker\":\"bob\","
	"\"text\":\"seven: elsewhere\",\"session\":\"sess-b\"}\n";

/* The texts' first words of a session's events, space-separated. */
static void words(cairn_record **v, size_t n, char *out, size_t size)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < n && len + 1 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%.*s",
					i ? " " : "", (int)strcspn(v[i]->body, ":"),
					v[i]->body);
}

/* EVIDENCE-OF: ingest, re-ingest adds nothing, secrets refused */
static void test_ingest_file(void)
{
	cairn_db *db = ws_open("file");
	cairn_ingest_report rep;
	cairn_ingest_opts o;
	cairn_record **v = NULL;
	cairn_filter f;
	char path[1024];
	size_t n = 0, i;
	int rc;

	if (!db)
		return;
	test_write_file(ws_root, "t.jsonl", transcript, path);
	memset(&o, 0, sizeof(o));
	rc = cairn_ingest_file(db, path, &o, &rep);
	CHECK_MSG(rc == CAIRN_OK, "%s", cairn_errmsg(db));
	CHECK_INT(rep.lines, 9);
	CHECK_INT(rep.added, 6);
	CHECK_INT(rep.unchanged, 0);
	CHECK_INT(rep.skipped, 1);
	CHECK_INT(rep.refused, 1);
	CHECK_INT(rep.errors, 1);
	CHECK(rep.messages && strstr(rep.messages, "t.jsonl:7: invalid JSON"));
	CHECK(rep.messages && strstr(rep.messages, "t.jsonl:8: refusing"));
	CHECK(rep.messages && !strstr(rep.messages, "ghp_"));
	cairn_ingest_report_release(&rep);

	/* the records: event, human, unverified, with provenance */
	memset(&f, 0, sizeof(f));
	f.kinds = "event";
	CHECK_INT(cairn_record_list(db, &f, &v, &n), CAIRN_OK);
	CHECK_INT(n, 6);
	for (i = 0; i < n; i++) {
		CHECK_STR(v[i]->origin, "human");
		CHECK_STR(v[i]->status, "unverified");
		CHECK_STR(v[i]->src_path, "t.jsonl");
		CHECK(v[i]->src_line > 1 && v[i]->src_session && v[i]->src_tool);
		CHECK(strstr(v[i]->body, "ghp_") == NULL);
	}
	cairn_record_list_free(v, n);

	/* EVIDENCE-OF: re-ingesting the same file adds nothing */
	rc = cairn_ingest_file(db, path, &o, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.added, 0);
	CHECK_INT(rep.unchanged, 6);
	cairn_ingest_report_release(&rep);

	/* --redact stores the refused line masked */
	o.flags = CAIRN_WRITE_REDACT;
	rc = cairn_ingest_file(db, path, &o, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.added, 1);
	CHECK_INT(rep.refused, 0);
	cairn_ingest_report_release(&rep);
	CHECK_INT(cairn_session_events(db, "sess-a", NULL, 0, &v, &n), CAIRN_OK);
	CHECK_INT(n, 6);
	for (i = 0; i < n; i++)
		if (strncmp(v[i]->body, "five", 4) == 0)
			CHECK(strstr(v[i]->body, "[REDACTED:github-token]") != NULL);
	cairn_record_list_free(v, n);

	/* a file that cannot be read: CAIRN_IO, nothing written */
	rc = cairn_ingest_file(db, "/nonexistent/x.jsonl", &o, &rep);
	CHECK_INT(rc, CAIRN_IO);
	cairn_ingest_report_release(&rep);
	rc = cairn_ingest_file(db, ws_root, &o, &rep);
	CHECK_INT(rc, CAIRN_IO);
	cairn_ingest_report_release(&rep);
	cairn_db_close(db);
}

/* A line the store refuses (a secret in its session id) leaves nothing behind. */
static void test_line_atomic(void)
{
	cairn_db *db = ws_open("atomic");
	cairn_ingest_report rep;
	cairn_record **v = NULL;
	char path[1024];
	size_t n = 0;

	if (!db)
		return;
	/* the session id holds a secret: every event of the line is refused */
	test_write_file(ws_root, "x.jsonl",
	    "{\"type\":\"assistant\",\"sessionId\":\"AKIAIOSFODNN7EXAMPLF\","
	    "\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
	    "{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":{\"command\":"
	    "\"ls\"}}]}}\n"
	    "{\"speaker\":\"bob\",\"text\":\"kept\",\"session\":\"ok\"}\n",
	    path);
	CHECK_INT(cairn_ingest_file(db, path, NULL, &rep), CAIRN_OK);
	CHECK_INT(rep.refused, 1);
	CHECK_INT(rep.added, 1);
	CHECK(rep.messages && strstr(rep.messages, "x.jsonl:1: refusing"));
	cairn_ingest_report_release(&rep);
	CHECK_INT(cairn_session_events(db, "AKIAIOSFODNN7EXAMPLF", NULL, 0, &v,
				       &n),
		  CAIRN_NOTFOUND);
	CHECK_INT(cairn_session_events(db, "ok", NULL, 0, &v, &n), CAIRN_OK);
	CHECK_INT(n, 1);
	cairn_record_list_free(v, n);
	/* a batch already open: refused, not nested */
	CHECK_INT(cairn_begin(db), CAIRN_OK);
	CHECK_INT(cairn_ingest_file(db, path, NULL, &rep), CAIRN_INVALID);
	cairn_ingest_report_release(&rep);
	CHECK_INT(cairn_rollback(db), CAIRN_OK);
	cairn_db_close(db);
}

/* EVIDENCE-OF: a session's events in time order; --around window */
static void test_session_order(void)
{
	cairn_db *db = ws_open("session");
	cairn_ingest_report rep;
	cairn_record **v = NULL;
	char path[1024], got[256], center[17];
	size_t n = 0;

	if (!db)
		return;
	test_write_file(ws_root, "t.jsonl", transcript, path);
	CHECK_INT(cairn_ingest_file(db, path, NULL, &rep), CAIRN_OK);
	cairn_ingest_report_release(&rep);

	CHECK_INT(cairn_session_events(db, "sess-a", NULL, 0, &v, &n), CAIRN_OK);
	words(v, n, got, sizeof(got));
	CHECK_STR(got, "one two three four six");
	snprintf(center, sizeof(center), "%s", n >= 3 ? v[2]->id : "none");
	cairn_record_list_free(v, n);

	/* a unique prefix of the session; the last N */
	CHECK_INT(cairn_session_events(db, "sess-", NULL, 2, &v, &n),
		  CAIRN_INVALID); /* sess-a and sess-b */
	CHECK_INT(cairn_session_events(db, "sess-b", NULL, 0, &v, &n), CAIRN_OK);
	CHECK_INT(n, 1);
	cairn_record_list_free(v, n);
	CHECK_INT(cairn_session_events(db, "sess-a", NULL, 2, &v, &n), CAIRN_OK);
	words(v, n, got, sizeof(got));
	CHECK_STR(got, "four six");
	cairn_record_list_free(v, n);

	/* around "three": one before and after; the session from the record */
	CHECK_INT(cairn_session_events(db, NULL, center, 1, &v, &n), CAIRN_OK);
	words(v, n, got, sizeof(got));
	CHECK_STR(got, "two three four");
	cairn_record_list_free(v, n);
	CHECK_INT(cairn_session_events(db, "sess-a", center, 5, &v, &n), CAIRN_OK);
	CHECK_INT(n, 5);
	cairn_record_list_free(v, n);
	CHECK_INT(cairn_session_events(db, "sess-a", center, 0, &v, &n), CAIRN_OK);
	words(v, n, got, sizeof(got));
	CHECK_STR(got, "three");
	cairn_record_list_free(v, n);

	/* errors */
	CHECK_INT(cairn_session_events(db, "sess-b", center, 1, &v, &n),
		  CAIRN_INVALID);
	CHECK_INT(cairn_session_events(db, "nope", NULL, 0, &v, &n),
		  CAIRN_NOTFOUND);
	CHECK_INT(cairn_session_events(db, NULL, "e000000000000000", 1, &v, &n),
		  CAIRN_NOTFOUND);
	CHECK_INT(cairn_session_events(db, "sess-a", NULL, -1, &v, &n),
		  CAIRN_INVALID);
	CHECK(v == NULL && n == 0);

	/* a retired event leaves the session */
	CHECK_INT(cairn_record_set_status(db, center, NULL, "retired", 0),
		  CAIRN_OK);
	CHECK_INT(cairn_session_events(db, "sess-a", NULL, 0, &v, &n), CAIRN_OK);
	words(v, n, got, sizeof(got));
	CHECK_STR(got, "one two four six");
	cairn_record_list_free(v, n);
	cairn_db_close(db);
}

/* Recall finds events by default and with --kind event. */
static void test_recall_events(void)
{
	cairn_db *db = ws_open("recall");
	cairn_ingest_report rep;
	cairn_recall_opts ro;
	cairn_result *res = NULL;
	char path[1024];

	if (!db)
		return;
	test_write_file(ws_root, "t.jsonl", transcript, path);
	CHECK_INT(cairn_ingest_file(db, path, NULL, &rep), CAIRN_OK);
	cairn_ingest_report_release(&rep);
	memset(&ro, 0, sizeof(ro));
	ro.no_receipt = 1;
	CHECK_INT(cairn_recall(db, "where is the zebra config", &ro, &res),
		  CAIRN_OK);
	CHECK(res && res->n > 0 && strncmp(res->hits[0].rec->body, "one", 3) == 0);
	cairn_result_free(res);
	res = NULL;
	ro.kinds = "event";
	CHECK_INT(cairn_recall(db, "zebra", &ro, &res), CAIRN_OK);
	CHECK(res && res->n >= 2);
	cairn_result_free(res);
	cairn_db_close(db);
}

/* Entry point: unit_main.c calls it. */
void unit_ingest(void)
{
	RUN(test_parse_claude_shapes);
	RUN(test_parse_skips);
	RUN(test_parse_generic);
	RUN(test_parse_errors);
	RUN(test_times);
	RUN(test_cut);
	RUN(test_ids);
	RUN(test_ingest_file);
	RUN(test_line_atomic);
	RUN(test_session_order);
	RUN(test_recall_events);
}
