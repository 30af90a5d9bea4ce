/*
 * cli_ingest.c -- `cairn ingest` (transcripts as events) and `cairn session`
 * (a session's events in their original order).
 *
 * Layer: top (the cairn command), on ingest.h. Reported lines go to stderr
 * as "cairn: FILE:LINE: message"; counts to stdout (one JSON object with
 * --json). A progress line goes to stderr only when stderr is a terminal
 * and the file is large.
 *
 * Must never: print the text of a refused line (the messages name the
 * secret's kind and line only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ingest.h"
#include "json.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_USAGE 2
#define PROGRESS_MIN ((size_t)8 << 20) /* files from 8 MiB show progress */
#define SESSION_DEFAULT_AROUND 5       /* -n with --around when not given */
#define SESSION_MAX_N 100000           /* largest -n */
#define SESSION_LINE_BYTES 160         /* text shown per event (human output) */

/* ------------------------------------------------------------------ ingest */

static const char ingest_help[] =
	"usage: cairn ingest [--redact] [--include-tools] [--session ID] [--json]\n"
	"                    FILE...\n"
	"\n"
	"Turn transcripts (JSON Lines) into 'event' records, one per turn, with\n"
	"the time, session id and speaker, so that 'cairn recall --kind event'\n"
	"finds what was said and 'cairn session' restores the exchange around\n"
	"it. Two formats, detected per line:\n"
	"\n"
	"  Claude Code session transcripts (~/.claude/projects/*/*.jsonl):\n"
	"    user and assistant text become events (speaker user/assistant);\n"
	"    each tool call becomes a one-line event 'Name: command or file'\n"
	"    (speaker tool); with --include-tools each failed tool call also\n"
	"    'error: first line'; thinking, successful tool output, summary,\n"
	"    system and meta lines and subagent (sidechain) lines are skipped.\n"
	"  Generic lines: {\"time\":\"2024-05-01T10:02:00Z\",\"speaker\":\"alice\",\n"
	"    \"text\":\"...\",\"session\":\"s1\"}; \"id\" is optional, \"time\" may\n"
	"    be ISO-8601 or seconds since the epoch, and a line without\n"
	"    \"session\" belongs to --session (default: the file name\n"
	"    without its extension).\n"
	"\n"
	"Tool output is not the user's or the assistant's words, and a fetched\n"
	"page or a command's output can hold text written to steer an agent:\n"
	"without --include-tools it is left out (failed tool calls' output,\n"
	"user lines carrying a tool result, and generic lines whose speaker is\n"
	"tool, tools, tool_result, tool-result, function, function_call_output,\n"
	"observation, web, browser, fetch or search).\n"
	"\n"
	"Events are stored as origin 'human', status 'unverified' (a record of\n"
	"what was said, not a claim: default recall finds them), kind 'event',\n"
	"source FILE:LINE. Times are stored in UTC. A text over 4000 characters\n"
	"is cut there and ends in ' [\xe2\x80\xa6]'. Ids come from the session, the\n"
	"line and the text, so ingesting the same file again adds nothing.\n"
	"\n"
	"Every event passes the secret filter: a line holding a secret is\n"
	"refused whole (or stored masked with --redact), invalid JSON and lines\n"
	"over 1 MiB are skipped; each is reported as FILE:LINE on stderr and\n"
	"the rest of the file is still ingested. Each FILE is one transaction.\n"
	"\n"
	"options:\n"
	"      --redact       store secrets masked as [REDACTED:kind] instead\n"
	"                     of refusing their lines\n"
	"      --include-tools  keep tool output too (see above)\n"
	"      --session ID   session of generic lines that name none\n"
	"      --json         one JSON object: per-file counts and totals\n"
	"\n"
	"exit status: 0 all lines ingested or skipped by rule, 1 a line was\n"
	"refused or invalid, or a file could not be read, 2 usage\n";

/* "\ringest FILE  42%" on stderr. */
static void ingest_progress(void *user, size_t done, size_t total)
{
	const char *path = user;

	if (total < PROGRESS_MIN)
		return;
	fprintf(stderr, "\ringest %s %3zu%%", path,
		done >= total ? (size_t)100 : done * 100 / total);
	if (done >= total)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Print a report's "FILE:LINE: message" lines to stderr. */
static void print_messages(const char *m)
{
	while (m && *m) {
		size_t n = strcspn(m, "\n");

		fprintf(stderr, "cairn: %.*s\n", (int)n, m);
		m += n;
		if (*m)
			m++;
	}
}

/* Append one file's counts as a JSON object. */
static void file_json(struct sbuf *sb, const char *path,
		      const cairn_ingest_report *r, int ok)
{
	sbuf_adds(sb, "{\"path\":");
	json_add_strz(sb, path);
	sbuf_addf(sb, ",\"ok\":%s,\"lines\":%zu,\"events\":%zu,\"added\":%zu,"
		  "\"unchanged\":%zu,\"skipped\":%zu,\"tool_output\":%zu,"
		  "\"refused\":%zu,\"errors\":%zu}",
		  ok ? "true" : "false", r->lines, r->events, r->added,
		  r->unchanged, r->skipped, r->tools, r->refused, r->errors);
}

/* `cairn ingest FILE...` (cli.h). */
int cmd_ingest(int argc, char **argv)
{
	enum { O_REDACT = 256, O_SESSION, O_JSON, O_TOOLS };
	static const struct option lo[] = { { "redact", 0, 0, O_REDACT },
					    { "include-tools", 0, 0, O_TOOLS },
					    { "session", 1, 0, O_SESSION },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	struct sbuf js = SBUF_INIT;
	cairn_ingest_opts o;
	cairn_db *db = NULL;
	size_t added = 0, unchanged = 0, refused = 0, errors = 0, nfiles = 0;
	int c, i, rc, ret = EXIT_OK;

	memset(&o, 0, sizeof(o));
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_REDACT: o.flags |= CAIRN_WRITE_REDACT; break;
		case O_SESSION: o.session = optarg; break;
		case O_TOOLS: o.include_tools = 1; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(ingest_help);
		default: return cli_usage("ingest", "unknown option");
		}
	}
	if (optind >= argc)
		return cli_usage("ingest", "expected at least one FILE");
	if (o.session && !*o.session)
		return cli_usage("ingest", "--session needs a non-empty ID");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	sbuf_adds(&js, "{\"files\":[");
	for (i = optind; i < argc; i++) {
		cairn_ingest_report rep;

		o.progress = isatty(2) && !cli_state.json ? ingest_progress
							  : NULL;
		o.user = argv[i];
		rc = cairn_ingest_file(db, argv[i], &o, &rep);
		print_messages(rep.messages);
		if (rc) {
			cli_db_fail(db, rc);
			ret = EXIT_ERR;
		}
		if (rep.refused || rep.errors)
			ret = EXIT_ERR;
		if (cli_state.json) {
			if (nfiles)
				sbuf_addc(&js, ',');
			file_json(&js, argv[i], &rep, rc == CAIRN_OK);
		} else if (rc == CAIRN_OK) {
			printf("%s: %zu event%s (%zu new, %zu unchanged) from "
			       "%zu line%s",
			       argv[i], rep.events, rep.events == 1 ? "" : "s",
			       rep.added, rep.unchanged, rep.lines,
			       rep.lines == 1 ? "" : "s");
			if (rep.skipped)
				printf(", %zu skipped", rep.skipped);
			if (rep.tools)
				printf(", %zu tool output%s left out "
				       "(--include-tools)", rep.tools,
				       rep.tools == 1 ? "" : "s");
			if (rep.refused)
				printf(", %zu refused", rep.refused);
			if (rep.errors)
				printf(", %zu invalid", rep.errors);
			printf("\n");
		}
		nfiles++;
		added += rep.added;
		unchanged += rep.unchanged;
		refused += rep.refused;
		errors += rep.errors;
		cairn_ingest_report_release(&rep);
	}
	if (cli_state.json) {
		sbuf_addf(&js, "],\"added\":%zu,\"unchanged\":%zu,"
			  "\"refused\":%zu,\"errors\":%zu}",
			  added, unchanged, refused, errors);
		cli_print_json(&js);
	} else if (nfiles > 1) {
		printf("total: %zu new, %zu unchanged, %zu refused, %zu "
		       "invalid\n",
		       added, unchanged, refused, errors);
	}
	sbuf_release(&js);
	cairn_db_close(db);
	return ret;
}

/* ----------------------------------------------------------------- session */

static const char session_help[] =
	"usage: cairn session [--around RECORD_ID] [-n N] [--full] [--json]\n"
	"                     [SESSION]\n"
	"\n"
	"The events of SESSION (an id, or a unique prefix of one) in their\n"
	"original order: by time, then by file and line. With --around, the\n"
	"event RECORD_ID and the N events before and after it (default 5);\n"
	"SESSION may then be left out (the record's own session). Without\n"
	"--around, every event of the session, or with -n N the last N.\n"
	"Retired and rejected events are left out. Typical use: 'cairn recall\n"
	"--kind event QUESTION' finds an event, 'cairn session --around ID'\n"
	"restores the exchange around it.\n"
	"\n"
	"Each event is one line, 'time · speaker: first line of the text'\n"
	"(time in UTC; '>' marks the --around event); --full prints whole\n"
	"texts. --json prints an array of records, bodies included.\n"
	"\n"
	"options:\n"
	"      --around ID    the event to centre on (id or unique prefix)\n"
	"  -n N               events before and after it (--around), else\n"
	"                     the last N (0..100000)\n"
	"      --full         whole texts, not first lines\n"
	"      --json         an array of records\n"
	"\n"
	"exit status: 0 ok, 1 no such session or event, or an error, 2 usage\n";

/* "2024-05-01 10:02:03" from a stored time, or "-". */
static void print_time(const char *t)
{
	if (t && strlen(t) >= 19)
		printf("%.10s %.8s", t, t + 11);
	else
		printf("%s", t ? t : "-");
}

/* One event: "[> ]time · speaker: text" (first line, or all with full). */
static void print_event(const cairn_record *r, int mark, int full)
{
	const char *b = r->body;
	size_t n = strcspn(b, "\n"), shown = n;

	if (mark >= 0)
		printf("%s", mark ? "> " : "  ");
	print_time(r->time);
	printf(" · %s: ", r->src_tool ? r->src_tool : "?");
	if (full) {
		printf("%s\n", b);
		return;
	}
	if (shown > SESSION_LINE_BYTES) {
		shown = SESSION_LINE_BYTES;
		/* do not cut a UTF-8 sequence in half */
		while (shown > 0 && ((unsigned char)b[shown] & 0xC0) == 0x80)
			shown--;
	}
	printf("%.*s%s\n", (int)shown, b,
	       shown < n || b[n] ? " …" : "");
}

/* `cairn session [--around ID] [-n N] [SESSION]` (cli.h). */
int cmd_session(int argc, char **argv)
{
	enum { O_AROUND = 256, O_FULL, O_JSON };
	static const struct option lo[] = { { "around", 1, 0, O_AROUND },
					    { "full", 0, 0, O_FULL },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	const char *around = NULL, *session = NULL;
	cairn_record **v = NULL, *center = NULL;
	cairn_db *db = NULL;
	size_t nv = 0, i;
	long n = -1;
	char *end;
	int c, rc, full = 0, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "n:h", lo)) != -1) {
		switch (c) {
		case O_AROUND: around = optarg; break;
		case 'n':
			n = strtol(optarg, &end, 10);
			if (!*optarg || *end || n < 0 || n > SESSION_MAX_N)
				return cli_usage("session", "-n must be a "
						 "number from 0 to %d",
						 SESSION_MAX_N);
			break;
		case O_FULL: full = 1; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(session_help);
		default: return cli_usage("session", "unknown option");
		}
	}
	if (optind + 1 < argc)
		return cli_usage("session", "expected one SESSION");
	if (optind < argc)
		session = argv[optind];
	if (!session && !around)
		return cli_usage("session", "expected a SESSION or --around "
				 "RECORD_ID");
	if (n < 0)
		n = around ? SESSION_DEFAULT_AROUND : 0;
	if (cli_open(&db, 0))
		return EXIT_ERR;
	rc = cairn_session_events(db, session, around, (int)n, &v, &nv);
	if (rc) {
		ret = cli_db_fail(db, rc);
		goto out;
	}
	if (cli_state.json) {
		cli_print_records_json(v, nv);
		goto out;
	}
	/* the --around record as stored (its id may have been a prefix) */
	if (around && cairn_record_get(db, around, &center) != CAIRN_OK)
		center = NULL;
	for (i = 0; i < nv; i++)
		print_event(v[i],
			    around ? center && strcmp(v[i]->id, center->id) == 0
				   : -1,
			    full);
out:
	cairn_record_free(center);
	cairn_record_list_free(v, nv);
	cairn_db_close(db);
	return ret;
}
