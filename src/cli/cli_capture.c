/*
 * cli_capture.c -- `cairn capture` (success events and the user's rules in
 * transcripts become candidates) and `cairn reflect` (rules, decisions and
 * environment facts; optionally an external command's proposals).
 *
 * Layer: top (the cairn command), on capture.h. Candidates go to stdout,
 * one line each ("ACTION KIND KEY  title"), then one count line per file;
 * --json prints one object instead. Problems go to stderr.
 *
 * Holds: both commands' --help texts, option parsing, and the printers of
 * candidates and per-file counts (one shared run()).
 *
 * Must never: print a secret (everything shown was redacted by capture),
 * or write anything with --dry-run (which also works outside a workspace).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "cli.h"
#include "json.h"

#define EXIT_OK 0
#define EXIT_ERR 1

static const char capture_help[] =
	"usage: cairn capture [--dry-run] [--json] [--session ID] [--no-rules]\n"
	"                     [--max-bytes N] FILE...\n"
	"\n"
	"Read activity logs and propose what they prove as candidate records\n"
	"(status 'candidate', origin 'capture'; nothing enters default recall\n"
	"until 'cairn approve'). Each FILE is JSON Lines, detected per line:\n"
	"\n"
	"  Claude Code session transcripts: each Bash tool_use with its\n"
	"    tool_result (the error flag and 'Exit code N' tell a failure),\n"
	"    and the user's messages;\n"
	"  generic command logs: {\"time\":\"2025-05-26T07:00:00Z\",\"cmd\":\"...\",\n"
	"    \"exit\":0,\"output\":\"...\"} (\"session\" optional; a line without\n"
	"    \"exit\" proves nothing).\n"
	"\n"
	"What becomes a candidate (only commands that succeeded: exit 0, no\n"
	"error flag, no failure text in the output, not before '||'):\n"
	"  auth, deploy, publish (aws, gh, gcloud, az, kubectl apply, helm,\n"
	"    docker push/login, npm publish, terraform apply, fly deploy,\n"
	"    vercel, wrangler, make deploy-*, ./deploy.sh, ...)  -> capability\n"
	"  database and SSH connections (psql, mysql, redis-cli, mongosh, ssh,\n"
	"    scp, rsync host:)                                  -> capability\n"
	"  builds and tests (make, npm test/run build, cargo, go, pytest,\n"
	"    mvn, gradle, cmake --build, ...)                   -> procedure,\n"
	"    with the set-up steps before it (npm ci, pip install, ...)\n"
	"  the user's lasting rules ('never touch PROD', '不要動 PROD 資料庫')\n"
	"                                                       -> rule\n"
	"Reading files, ls, cat, grep, git status and other trivial commands\n"
	"are never proposed.\n"
	"\n"
	"Each fact has a stable key (capability:aws:auth:PROFILE,\n"
	"capability:deploy:s3:BUCKET, capability:ssh:HOST, rule:..., ...), so\n"
	"it is proposed once: found again, a pending candidate gains proof (up\n"
	"to 5 entries) and a key already accepted, rejected or retired is left\n"
	"alone. Three or more successes of one command shape in a session (a\n"
	"psql per host) are one candidate, key SHAPE:group, listing the hosts;\n"
	"at most 20 capture candidates per session are kept.\n"
	"The proof holds the command, exit status, time, session, the\n"
	"transcript line and the first lines of output. Commands, output and\n"
	"quotes pass the secret filter first: secrets are masked as\n"
	"[REDACTED:kind], never stored. Malformed lines are counted and skipped.\n"
	"\n"
	"options:\n"
	"      --dry-run      print what would be proposed; write nothing (no\n"
	"                     workspace needed; with one, says which keys exist)\n"
	"      --json         one JSON object: candidates and per-file counts\n"
	"      --session ID   session of lines that name none (default: the file\n"
	"                     name without its extension)\n"
	"      --no-rules     success events only, not the user's rules\n"
	"      --max-bytes N  read only the last N bytes of each file\n"
	"\n"
	"output: one line per candidate, 'ACTION KIND KEY  TITLE' (ACTION: new,\n"
	"update, duplicate, known), then per file 'FILE: N proposed (...)'.\n"
	"\n"
	"exit status: 0 done, 1 a file could not be read or the store refused\n"
	"a write, 2 usage\n";

static const char reflect_help[] =
	"usage: cairn reflect [--dry-run] [--json] [--session ID]\n"
	"                     [--llm-cmd CMD [--llm-timeout MS]] [--max-bytes N]\n"
	"                     TRANSCRIPT...\n"
	"\n"
	"Extract lasting statements from a session's messages and propose them as\n"
	"candidate records (status 'candidate', origin 'reflection'; nothing\n"
	"enters default recall until 'cairn approve'). Rule-based:\n"
	"\n"
	"  rule      the user's imperatives meant to last: 'never ...',\n"
	"            'always ...', 'from now on ...', 'don't ... without/before\n"
	"            .../on prod', '不要動 PROD', '禁止...', '一定要...', '務必...'\n"
	"  decision  'let's go with X', 'we decided ...', 'we'll use X because Y',\n"
	"            '決定...', '我們用 X，因為 Y' (an assistant's only with a reason)\n"
	"  fact      the environment: 'the staging DB is at db.internal:5432',\n"
	"            'Node 20 is required', '資料庫在 10.0.0.5'\n"
	"\n"
	"Questions and one-off instructions are not statements. TRANSCRIPT is a\n"
	"Claude Code session JSONL or generic {\"speaker\",\"text\"} lines (see\n"
	"'cairn ingest --help'). Each statement's key is its kind plus a slug of\n"
	"its words, so the same statement is proposed once (see 'cairn capture\n"
	"--help' for how a key found again is handled). Quotes pass the secret\n"
	"filter first.\n"
	"\n"
	"options:\n"
	"      --dry-run          print what would be proposed; write nothing\n"
	"      --json             one JSON object: candidates and counts\n"
	"      --session ID       session of lines that name none\n"
	"      --llm-cmd CMD      also run CMD with /bin/sh -c, the transcript\n"
	"                         (secrets masked) on its stdin; each stdout line\n"
	"                         must be {\"kind\",\"key\",\"title\",\"body\"}\n"
	"                         (kind rule|decision|fact|capability|procedure,\n"
	"                         key \"KIND:...\"); other lines are counted as\n"
	"                         rejected. Its proposals are candidates too.\n"
	"      --llm-timeout MS   stop CMD after MS milliseconds (default 30000)\n"
	"      --max-bytes N      read only the last N bytes of each file\n"
	"\n"
	"exit status: 0 done (rejected --llm-cmd lines included), 1 a file could\n"
	"not be read or the store refused a write, 2 usage\n";

struct emit_ctx {
	struct sbuf *js; /* --json: the candidates array being built */
	size_t n;        /* candidates emitted */
};

static void emit(void *user, const struct capture_cand *c)
{
	struct emit_ctx *cx = user;

	if (cx->js) {
		struct sbuf *sb = cx->js;

		if (cx->n)
			sbuf_addc(sb, ',');
		sbuf_adds(sb, "{\"action\":");
		json_add_strz(sb, c->action);
		sbuf_adds(sb, ",\"kind\":");
		json_add_strz(sb, c->kind);
		sbuf_adds(sb, ",\"key\":");
		json_add_strz(sb, c->key);
		sbuf_adds(sb, ",\"title\":");
		json_add_strz(sb, c->title);
		sbuf_adds(sb, ",\"body\":");
		json_add_strz(sb, c->body);
		sbuf_adds(sb, ",\"proof\":");
		json_add_strz(sb, c->proof);
		sbuf_adds(sb, ",\"origin\":");
		json_add_strz(sb, c->origin);
		sbuf_adds(sb, ",\"session\":");
		if (c->session)
			json_add_strz(sb, c->session);
		else
			sbuf_adds(sb, "null");
		sbuf_adds(sb, ",\"time\":");
		if (c->time)
			json_add_strz(sb, c->time);
		else
			sbuf_adds(sb, "null");
		sbuf_adds(sb, ",\"path\":");
		json_add_strz(sb, c->path);
		sbuf_addf(sb, ",\"line\":%ld,\"id\":", c->line);
		if (c->id)
			json_add_strz(sb, c->id);
		else
			sbuf_adds(sb, "null");
		sbuf_addc(sb, '}');
	} else {
		printf("%-9s %-10s %s  %s\n", c->action, c->kind, c->key, c->title);
	}
	cx->n++;
}

static void stats_json(struct sbuf *sb, const char *path, int ok,
		       const struct capture_stats *s)
{
	sbuf_adds(sb, "{\"path\":");
	json_add_strz(sb, path);
	sbuf_addf(sb, ",\"ok\":%s,\"lines\":%zu,\"malformed\":%zu,"
		  "\"commands\":%zu,\"failed\":%zu,\"statements\":%zu,"
		  "\"proposed\":%zu,\"added\":%zu,\"updated\":%zu,"
		  "\"duplicates\":%zu,\"known\":%zu,\"redacted\":%zu,"
		  "\"dropped\":%zu,\"grouped\":%zu,\"errors\":%zu,\"llm_lines\":%zu,"
		  "\"llm_rejected\":%zu,\"truncated\":%s,\"timed_out\":%s}",
		  ok ? "true" : "false", s->lines, s->malformed, s->commands,
		  s->failed, s->statements, s->proposed, s->added, s->updated,
		  s->duplicates, s->known, s->redacted, s->dropped, s->grouped,
		  s->errors,
		  s->llm_lines, s->llm_bad, s->truncated ? "true" : "false",
		  s->timed_out ? "true" : "false");
}

/* Open the store; in a dry run, none is fine. 0 or EXIT_ERR. */
static int open_store(cairn_db **db, int dry_run)
{
	char *dir = NULL;
	int rc;

	*db = NULL;
	if (!dry_run)
		return cli_open(db, 0);
	rc = cairn_workspace_find(NULL, &dir);
	cairn_free(dir);
	if (rc == CAIRN_NOTFOUND)
		return EXIT_OK;
	return cli_open(db, 0);
}

/* Parse a byte count. */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (*end || v == 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

/* The shared body of both commands. */
static int run(const char *name, const char *help, unsigned what, int argc,
	       char **argv)
{
	enum { O_DRY = 256, O_JSON, O_SESSION, O_NORULES, O_MAX, O_LLM, O_LLMTO };
	static const struct option lo[] = {
		{ "dry-run", 0, 0, O_DRY },     { "json", 0, 0, O_JSON },
		{ "session", 1, 0, O_SESSION }, { "no-rules", 0, 0, O_NORULES },
		{ "max-bytes", 1, 0, O_MAX },   { "llm-cmd", 1, 0, O_LLM },
		{ "llm-timeout", 1, 0, O_LLMTO }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct capture_opts o;
	struct emit_ctx ex;
	struct sbuf js = SBUF_INIT, files = SBUF_INIT;
	cairn_db *db = NULL;
	int c, i, ret = EXIT_OK, is_capture = !strcmp(name, "capture");
	size_t nfiles = 0, tot_added = 0, tot_updated = 0;
	char err[1024];

	memset(&o, 0, sizeof(o));
	memset(&ex, 0, sizeof(ex));
	o.what = what;
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_DRY: o.dry_run = 1; break;
		case O_JSON: cli_state.json = 1; break;
		case O_SESSION: o.session_id = optarg; break;
		case O_NORULES:
			if (!is_capture)
				return cli_usage(name, "unknown option");
			o.what &= ~(unsigned)CAPTURE_RULES;
			break;
		case O_MAX:
			if (parse_size(optarg, &o.max_bytes))
				return cli_usage(name, "--max-bytes needs a positive number");
			break;
		case O_LLM:
			if (is_capture)
				return cli_usage(name, "unknown option");
			if (!*optarg)
				return cli_usage(name, "--llm-cmd needs a command");
			o.llm_cmd = optarg;
			break;
		case O_LLMTO: {
			size_t v;

			if (is_capture)
				return cli_usage(name, "unknown option");
			if (parse_size(optarg, &v) || v > 3600000)
				return cli_usage(name, "--llm-timeout needs 1 to 3600000 (ms)");
			o.llm_timeout_ms = (int)v;
			break;
		}
		case 'h': return cli_help(help);
		default: return cli_usage(name, "unknown option");
		}
	}
	if (optind >= argc)
		return cli_usage(name, "expected at least one FILE");
	if (o.session_id && !*o.session_id)
		return cli_usage(name, "--session needs a non-empty ID");
	if (open_store(&db, o.dry_run))
		return EXIT_ERR;
	o.emit = emit;
	o.user = &ex;
	if (cli_state.json) {
		ex.js = &js;
		sbuf_adds(&js, "{\"dry_run\":");
		sbuf_adds(&js, o.dry_run ? "true" : "false");
		sbuf_adds(&js, ",\"candidates\":[");
	}
	for (i = optind; i < argc; i++) {
		struct capture_stats st;
		int rc = capture_transcript(db, argv[i], &o, &st, err, sizeof(err));

		if (rc) {
			cli_fail("%s: %s", argv[i], err[0] ? err : cairn_errstr(rc));
			ret = EXIT_ERR;
		} else if (err[0]) {
			fprintf(stderr, "cairn: %s: %s\n", argv[i], err);
		}
		if (st.errors)
			ret = EXIT_ERR;
		if (cli_state.json) {
			if (nfiles)
				sbuf_addc(&files, ',');
			stats_json(&files, argv[i], rc == CAIRN_OK, &st);
		} else if (rc == CAIRN_OK) {
			printf("%s: %zu proposed (%zu new, %zu updated, %zu "
			       "duplicate, %zu known)", argv[i], st.proposed,
			       st.added, st.updated, st.duplicates, st.known);
			if (is_capture)
				printf(", %zu command%s (%zu failed)", st.commands,
				       st.commands == 1 ? "" : "s", st.failed);
			if (st.malformed)
				printf(", %zu malformed line%s skipped", st.malformed,
				       st.malformed == 1 ? "" : "s");
			if (st.redacted)
				printf(", %zu secret%s masked", st.redacted,
				       st.redacted == 1 ? "" : "s");
			if (st.grouped)
				printf(", %zu grouped by command shape",
				       st.grouped);
			if (st.dropped)
				printf(", %zu over the cap dropped", st.dropped);
			if (o.llm_cmd)
				printf(", --llm-cmd: %zu accepted, %zu rejected",
				       st.llm_lines, st.llm_bad);
			if (st.truncated)
				printf(", head of file not read");
			printf("%s\n", o.dry_run ? " [dry run]" : "");
		}
		nfiles++;
		tot_added += st.added;
		tot_updated += st.updated;
	}
	if (cli_state.json) {
		sbuf_adds(&js, "],\"files\":[");
		sbuf_add(&js, files.buf ? files.buf : "", files.len);
		sbuf_addf(&js, "],\"added\":%zu,\"updated\":%zu}", tot_added,
			  tot_updated);
		cli_print_json(&js);
	} else if (nfiles > 1) {
		printf("total: %zu new, %zu updated%s\n", tot_added, tot_updated,
		       o.dry_run ? " [dry run]" : "");
	}
	sbuf_release(&js);
	sbuf_release(&files);
	cairn_db_close(db);
	return ret;
}

/* `cairn capture FILE...` (cli.h). */
int cmd_capture(int argc, char **argv)
{
	return run("capture", capture_help, CAPTURE_EVENTS | CAPTURE_RULES,
		   argc, argv);
}

/* `cairn reflect TRANSCRIPT...` (cli.h). */
int cmd_reflect(int argc, char **argv)
{
	return run("reflect", reflect_help, CAPTURE_RULES | CAPTURE_REFLECT,
		   argc, argv);
}
