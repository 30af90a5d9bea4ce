/*
 * cli_hook.c -- `cairn hook`: the Claude Code hook process (SPEC 5.4).
 *
 * Layer: top. Reads the hook JSON on stdin; for UserPromptSubmit and
 * SessionStart renders the block (hook_inject.c, through hook_answer in
 * hook.c) and prints Claude Code's hook output object; for Stop and
 * SessionEnd runs capture and reflection (capture.h) on the transcript
 * and prints nothing. Appends one line per call to .cairn/hook.log:
 * time, event, outcome (injected / empty / captured / timeout / error /
 * ignored), latency, counts, receipt.
 * `cairn stats --hook` reads that log.
 *
 * Must never: block or fail the user's prompt or the end of a turn. Every
 * path exits 0 (exit code 2 would block a UserPromptSubmit or keep a Stop
 * going); on any error or past the deadline it prints nothing, and a Stop
 * or SessionEnd prints nothing at all (a Stop's JSON output could block
 * stopping). Never logs the prompt text.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "cli.h"
#include "hook.h"
#include "hook_server.h"
#include "json.h"

#define HOOK_MAX_INPUT ((size_t)1 << 20)  /* 1 MiB of hook JSON */
#define HOOK_DEFAULT_DEADLINE_MS 1500      /* then print nothing */
#define HOOK_LOG_MAX ((off_t)1 << 20)      /* rotate hook.log past 1 MiB */
#define HOOK_LOG_LINES 100000              /* lines read by stats --hook */
#define HOOK_STOP_TAIL ((size_t)4 << 20)   /* a Stop reads the last 4 MiB of the transcript */

static int log_fd = -1;        /* .cairn/hook.log, opened early */
static double t_start;         /* monotonic ms at start */
static const char *log_event = "unknown"; /* event name for the log */
static int sock_refused;       /* hook.sock was not a socket of ours */
static int log_down;           /* 1: the embedding provider failed (lexical) */

/* One log line. Only async-signal-safe calls: used by the alarm handler. */
static void log_line(const char *outcome, const char *extra)
{
	char buf[512], ts[32];
	time_t t;
	struct tm tm;
	int n;

	if (log_fd < 0)
		return;
	t = time(NULL);
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(buf, sizeof(buf), "%s\t%s\t%s\t%.1f\t%s\n", ts,
		     log_event, outcome, util_now_ms() - t_start,
		     extra ? extra : "");
	if (n > 0)
		(void)!write(log_fd, buf,
			     (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void on_deadline(int sig)
{
	(void)sig;
	log_line("timeout", "");
	_exit(0); /* nothing was printed: stdout is written only at the end */
}

static void open_log(const char *dir)
{
	char path[4096], old[4200], why[600];
	struct stat st;

	/* never through a .cairn link into another user's directory */
	if (cairn_workspace_check(dir, why, sizeof(why)) != CAIRN_OK) {
		fprintf(stderr, "cairn: not logging: %s\n", why);
		return;
	}
	snprintf(path, sizeof(path), "%s/hook.log", dir);
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > HOOK_LOG_MAX) {
		snprintf(old, sizeof(old), "%s.1", path);
		(void)rename(path, old);
	}
	/* a symbolic link (a cloned repository could ship one) is refused,
	 * never appended to: said on stderr, the only place left */
	log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
				    O_NOFOLLOW, 0600);
	if (log_fd < 0 && errno == ELOOP)
		fprintf(stderr, "cairn: not logging to '%s': it is a symbolic "
			"link (refused)\n", path);
}

static const char hook_help[] =
	"usage: cairn hook [--budget N] [--deadline-ms N] [-k N]\n"
	"\n"
	"The Claude Code hook. Reads the hook's JSON on standard input and\n"
	"prints the context to add, as Claude Code's hook output object:\n"
	"  UserPromptSubmit  recall for the prompt, and for each sentence of\n"
	"                    it that asks (? or \xEF\xBC\x9F, outside fenced code;\n"
	"                    at most 3): past records that pass the hook's\n"
	"                    own test -- answerability 0.33 and four words\n"
	"                    of the question in common (three quarters of a\n"
	"                    shorter one's) -- one per source, a second\n"
	"                    within 0.8 of the first, ordered by the\n"
	"                    relevance they print, each with date, kind,\n"
	"                    source and the first lines of its body, and how\n"
	"                    to read one in full (MCP memory_read, cairn get\n"
	"                    ID); nothing when nothing passes (the agent can\n"
	"                    still call memory_recall); a prompt over 64 KiB\n"
	"                    is recalled for by its first 64 KiB\n"
	"  SessionStart      the standing rules and capabilities, and how many\n"
	"                    candidates wait for approval\n"
	"  Stop, SessionEnd  capture and reflection on the session transcript\n"
	"                    (\"transcript_path\"): what it finds is written as\n"
	"                    candidates for a human to approve; prints nothing\n"
	"Other events print nothing. The workspace is found from the JSON's\n"
	"\"cwd\" (or CAIRN_DIR, or the current directory).\n"
	"\n"
	"It never blocks the prompt or the end of a turn: it always exits 0,\n"
	"and on any error, or past the deadline, it prints nothing. Each call\n"
	"appends its event, outcome (injected, empty, captured, timeout,\n"
	"error, ignored), latency and counts to .cairn/hook.log; 'cairn stats\n"
	"--hook' summarises that log. 'cairn setup claude-code' installs it.\n"
	"\n"
	"A prompt or a session start is answered by the workspace's running\n"
	"'cairn mcp' when there is one (it has the store and the model in\n"
	"memory; the log line then ends in via=mcp), else by this process:\n"
	"the same text either way.\n"
	"\n"
	"options:\n"
	"  --budget N       at most N characters of context, 1..20000 (default\n"
	"                   4000; another value: an error in the log, nothing\n"
	"                   injected)\n"
	"  --deadline-ms N  print nothing after N ms (default 1500); capture\n"
	"                   stops reading the transcript at two thirds of it\n"
	"  -k N             entries for a prompt, 1..20 (default 3)\n"
	"  --local          do not ask a running 'cairn mcp'\n";

/* Copy msg into out without tabs and newlines (one log line per call). */
static void log_clean(char *out, size_t size, const char *msg)
{
	size_t i;

	snprintf(out, size, "%s", msg ? msg : "");
	for (i = 0; out[i]; i++)
		if (out[i] == '\t' || out[i] == '\n' || out[i] == '\r')
			out[i] = ' ';
}

/* Find the workspace from the hook's cwd, else CAIRN_DIR or ".". */
static int find_workspace(const char *cwd, char **dir)
{
	if (cwd && *cwd && chdir(cwd) != 0)
		return CAIRN_NOTFOUND;
	return cairn_workspace_find(NULL, dir);
}

/*
 * Stop / SessionEnd: capture and reflection on the transcript. A Stop
 * comes after every turn, so only the transcript's tail is read then
 * (what was captured before is found again as a duplicate, not written
 * twice); a SessionEnd reads it whole. Reading stops at two thirds of
 * the deadline so that writing what was found fits before it.
 */
static int hook_capture(cairn_db *db, const char *event, const char *path,
			const char *session, long deadline, char *extra,
			size_t size)
{
	struct capture_opts co;
	struct capture_stats st;
	char err[256];
	int rc;

	memset(&co, 0, sizeof(co));
	co.what = CAPTURE_ALL;
	co.session_id = session;
	if (strcmp(event, "Stop") == 0)
		co.max_bytes = HOOK_STOP_TAIL;
	if (deadline > 0)
		co.deadline_ms = t_start + (double)deadline * 2.0 / 3.0;
	err[0] = '\0';
	rc = capture_transcript(db, path, &co, &st, err, sizeof(err));
	if (rc) {
		log_clean(extra, size, err[0] ? err : cairn_errstr(rc));
		return rc;
	}
	snprintf(extra, size,
		 "lines=%zu commands=%zu proposed=%zu added=%zu updated=%zu "
		 "duplicates=%zu known=%zu errors=%zu%s%s",
		 st.lines, st.commands, st.proposed, st.added, st.updated,
		 st.duplicates, st.known, st.errors,
		 st.truncated ? " tail" : "", st.timed_out ? " partial" : "");
	return CAIRN_OK;
}

/*
 * Print the hook's output (past this point the deadline may not cut it in
 * half) and log the call with its counts.
 */
static void emit(const char *out, size_t len, size_t found, size_t injected,
		 size_t chars, const char *receipt, int served)
{
	char extra[256];
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	if (len > 0) {
		fwrite(out, 1, len, stdout);
		fflush(stdout);
	}
	snprintf(extra, sizeof(extra), "found=%zu injected=%zu chars=%zu%s%s%s%s%s",
		 found, injected, chars, receipt && *receipt ? " receipt=" : "",
		 receipt ? receipt : "", served ? " via=mcp" : "",
		 sock_refused ? " hook.sock=refused (a symbolic link or not "
				"our socket)" : "",
		 log_down ? " embed=down(lexical)" : "");
	log_line(len > 0 ? "injected" : "empty", extra);
}

/*
 * Ask the workspace's running `cairn mcp` (hook_server.h) for the text of
 * a prompt or a session start; print it and log the call. 0 when it
 * answered; -1: no server, no answer in time, or an error -- work locally.
 */
static int ask_server(const char *dir, const char *event, const char *prompt,
		      const struct hook_opts *o, long deadline)
{
	struct sbuf req = SBUF_INIT;
	struct json *j = NULL;
	char *reply = NULL;
	const char *out;
	double found = 0, injected = 0, chars = 0;
	long wait = HOOK_SERVER_WAIT_MS;
	int rc = -1;

	if (deadline > 0 && deadline - (long)(util_now_ms() - t_start) < wait)
		wait = deadline - (long)(util_now_ms() - t_start);
	sbuf_adds(&req, "{\"event\":");
	json_add_strz(&req, event);
	if (prompt) {
		sbuf_adds(&req, ",\"prompt\":");
		json_add_strz(&req, prompt);
	}
	sbuf_addf(&req, ",\"budget\":%zu,\"k\":%d}", o->budget, o->k);
	if (req.err)
		goto done;
	rc = hook_server_ask(dir, req.buf, req.len, wait, &reply);
	sock_refused = rc == -2;
	rc = -1;
	if (!reply)
		goto done;
	if (json_parse(reply, strlen(reply), &j, NULL, 0) != CAIRN_OK ||
	    j->type != JSON_OBJECT || !(out = json_get_str(j, "out")))
		goto done; /* an error or a reply we do not know */
	json_get_num(j, "found", &found);
	json_get_num(j, "injected", &injected);
	json_get_num(j, "chars", &chars);
	emit(out, strlen(out), (size_t)found, (size_t)injected, (size_t)chars,
	     json_get_str(j, "receipt"), 1);
	rc = 0;
done:
	json_free(j);
	cairn_free(reply);
	sbuf_release(&req);
	return rc;
}

int cmd_hook(int argc, char **argv)
{
	enum { O_BUDGET = 256, O_DEADLINE, O_LOCAL };
	static const struct option lo[] = { { "budget", 1, 0, O_BUDGET },
					    { "deadline-ms", 1, 0, O_DEADLINE },
					    { "local", 0, 0, O_LOCAL },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	struct hook_opts o;
	struct hook_result res;
	struct sbuf outj = SBUF_INIT;
	struct json *j = NULL;
	cairn_open_opts oo;
	cairn_db *db = NULL;
	struct itimerval it;
	sigset_t block;
	const char *event = NULL, *cwd = NULL, *prompt = NULL, *problem = NULL;
	const char *transcript = NULL, *session = NULL;
	char *in = NULL, *dir = NULL, err[256], extra[256];
	size_t chars = 0;
	long deadline = HOOK_DEFAULT_DEADLINE_MS;
	int c, rc, capture = 0, local = 0;

	t_start = util_now_ms();
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	o.budget = HOOK_DEFAULT_BUDGET;
	while ((c = cli_getopt(argc, argv, "k:h", lo)) != -1) {
		switch (c) {
		case O_BUDGET: {
			char *end;
			long b;

			errno = 0;
			b = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || b < 1 ||
			    b > HOOK_MAX_BUDGET)
				problem = "--budget must be a number from 1 to "
					  "20000"; /* logged; never blocks */
			else
				o.budget = (size_t)b;
			break;
		}
		case O_DEADLINE: deadline = strtol(optarg, NULL, 10); break;
		case O_LOCAL: local = 1; break;
		case 'k': o.k = atoi(optarg); break;
		case 'h': return cli_help(hook_help);
		default: problem = "bad options"; break; /* never block a prompt */
		}
	}
	if (o.k < 0 || o.k > HOOK_MAX_K)
		o.k = 0;
	if (deadline > 0) {
		signal(SIGALRM, on_deadline);
		memset(&it, 0, sizeof(it));
		it.it_value.tv_sec = deadline / 1000;
		it.it_value.tv_usec = (deadline % 1000) * 1000;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	in = cli_read_stdin_max(HOOK_MAX_INPUT);
	if (!in)
		problem = "hook input unreadable or over 1 MiB (HOOK_MAX_INPUT)";
	else if (json_parse(in, strlen(in), &j, err, sizeof(err)) != CAIRN_OK ||
		 j->type != JSON_OBJECT)
		problem = "hook input is not a JSON object";
	if (j && j->type == JSON_OBJECT) {
		event = json_get_str(j, "hook_event_name");
		cwd = json_get_str(j, "cwd");
		prompt = json_get_str(j, "prompt");
		transcript = json_get_str(j, "transcript_path");
		session = json_get_str(j, "session_id");
	}
	log_event = event ? event : "unknown";
	if (find_workspace(cwd, &dir) != CAIRN_OK)
		goto out; /* not a cairn workspace: nowhere to log, stay silent */
	open_log(dir);
	if (problem) {
		log_line("error", problem);
		goto out;
	}
	if (!event) {
		log_line("error", "no hook_event_name in hook input");
		goto out;
	}
	if (strcmp(event, "Stop") == 0 || strcmp(event, "SessionEnd") == 0)
		capture = 1;
	else if (strcmp(event, "UserPromptSubmit") != 0 &&
		 strcmp(event, "SessionStart") != 0) {
		log_line("ignored", "");
		goto out;
	}
	if (strcmp(event, "UserPromptSubmit") == 0 && (!prompt || !*prompt)) {
		log_line("error", "no prompt in hook input");
		goto out;
	}
	if (capture && (!transcript || !*transcript)) {
		log_line("error", "no transcript_path in hook input");
		goto out;
	}
	if (!capture && !local &&
	    ask_server(dir, event, prompt, &o, deadline) == 0)
		goto out;
	memset(&oo, 0, sizeof(oo));
	oo.busy_timeout_ms = 200; /* a locked store must not eat the deadline */
	rc = cairn_db_open(dir, &oo, &db);
	if (rc) {
		log_clean(extra, sizeof(extra),
			  db ? cairn_errmsg(db) : cairn_errstr(rc));
		log_line("error", extra);
		goto out;
	}
	cairn_db_short_lived(db);
	if (capture) {
		rc = hook_capture(db, event, transcript, session, deadline,
				  extra, sizeof(extra));
		sigemptyset(&block);
		sigaddset(&block, SIGALRM);
		sigprocmask(SIG_BLOCK, &block, NULL);
		log_line(rc ? "error" : "captured", extra);
		goto out; /* Stop and SessionEnd print nothing */
	}
	if (deadline > 0) {
		/* a provider that is down must leave time for the words:
		   half of what is left for embedding the prompt */
		long left = deadline - (long)(util_now_ms() - t_start);

		o.embed_budget_ms = left > 2 ? (int)(left / 2) : 1;
	}
	rc = hook_answer(db, event, prompt, &o, &outj, &res, &chars);
	if (rc) {
		log_clean(extra, sizeof(extra), cairn_errmsg(db));
		log_line("error", extra);
		goto out;
	}
	log_down = res.embed_down;
	emit(outj.buf, outj.len, res.found, res.injected, chars, res.receipt,
	     0);
out:
	json_free(j);
	cairn_free(in);
	cairn_free(dir);
	cairn_db_checkpoint(db); /* the WAL emptied for the next hook */
	cairn_db_close(db);
	sbuf_release(&outj);
	if (log_fd >= 0)
		close(log_fd);
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static const char *const hook_outcomes[] = { "injected", "empty", "captured",
					     "timeout", "error", "ignored" };

/* What the hook log says: calls, latency, outcomes (hook_outcomes). */
struct hook_summary {
	size_t calls;     /* lines read */
	size_t counts[ARRAY_SIZE(hook_outcomes)]; /* per hook_outcomes[] */
	size_t served;    /* answered by a running cairn mcp (via=mcp) */
	double p50, p90, max; /* latency, ms */
	int refused;          /* 1: the log is a symbolic link, not read */
};

static void hook_summarize(const char *path, struct hook_summary *s)
{
	size_t n = 0, cap = 0, lcap = 0;
	double *lat = NULL;
	char *line = NULL;
	FILE *f;

	memset(s, 0, sizeof(*s));
	{
		/* never through a link under .cairn (a cloned repository
		 * could ship one): cli_hook_stats says so */
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

		f = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (fd >= 0 && !f)
			close(fd);
		if (fd < 0 && errno == ELOOP)
			s->refused = 1;
	}
	while (f && n < HOOK_LOG_LINES && getline(&line, &lcap, f) > 0) {
		char *fields[5], *p = line;
		int k;

		for (k = 0; k < 5; k++) {
			fields[k] = p;
			p = p ? strchr(p, '\t') : NULL;
			if (p)
				*p++ = '\0';
		}
		if (!fields[3])
			continue;
		for (k = 0; k < (int)ARRAY_SIZE(hook_outcomes); k++)
			if (fields[2] && strcmp(fields[2], hook_outcomes[k]) == 0)
				s->counts[k]++;
		s->served += fields[4] && strstr(fields[4], "via=mcp") != NULL;
		if (n == cap) {
			double *nv = util_realloc(lat, (cap ? 2 * cap : 256) *
							       sizeof(*nv));

			if (!nv)
				break;
			lat = nv;
			cap = cap ? 2 * cap : 256;
		}
		lat[n++] = atof(fields[3]);
	}
	free(line);
	if (f)
		fclose(f);
	if (n > 0) {
		qsort(lat, n, sizeof(*lat), dbl_cmp);
		s->p50 = lat[(n - 1) / 2];
		s->p90 = lat[(size_t)ceil(0.9 * (double)n) - 1];
		s->max = lat[n - 1];
	}
	s->calls = n;
	cairn_free(lat);
}

static void summary_json(const struct hook_summary *s, struct sbuf *sb)
{
	size_t i;

	sbuf_addf(sb, "{\"calls\":%zu,\"p50_ms\":%.1f,\"p90_ms\":%.1f,"
		  "\"max_ms\":%.1f", s->calls, s->p50, s->p90, s->max);
	for (i = 0; i < ARRAY_SIZE(hook_outcomes); i++)
		sbuf_addf(sb, ",\"%s\":%zu", hook_outcomes[i], s->counts[i]);
	sbuf_addf(sb, ",\"served\":%zu}", s->served);
}

void cli_hook_stats_json(const char *dir, struct sbuf *sb)
{
	struct hook_summary s;
	char path[4200];

	snprintf(path, sizeof(path), "%s/hook.log", dir);
	hook_summarize(path, &s);
	summary_json(&s, sb);
}

/* `cairn stats --hook`: latency percentiles and outcomes from hook.log. */
int cli_hook_stats(int json)
{
	struct hook_summary s;
	char path[4200], *dir = NULL;
	size_t i;

	if (cairn_workspace_find(NULL, &dir) != CAIRN_OK)
		return cli_fail("not in a cairn workspace");
	snprintf(path, sizeof(path), "%s/hook.log", dir);
	hook_summarize(path, &s);
	if (s.refused) {
		cairn_free(dir);
		return cli_fail("not reading '%s': it is a symbolic link (refused)",
				path);
	}
	if (json) {
		struct sbuf sb = SBUF_INIT;

		summary_json(&s, &sb); /* the summary read above, once */
		cairn_free(dir);
		cli_print_json(&sb);
		sbuf_release(&sb);
		return 0;
	}
	cairn_free(dir);
	if (s.calls == 0) {
		printf("no hook calls logged in %s\n", path);
		return 0;
	}
	printf("hook calls: %zu (log %s)\n", s.calls, path);
	printf("latency:    p50 %.1f ms, p90 %.1f ms, max %.1f ms\n", s.p50,
	       s.p90, s.max);
	printf("outcomes:  ");
	for (i = 0; i < ARRAY_SIZE(hook_outcomes); i++)
		printf(" %s=%zu", hook_outcomes[i], s.counts[i]);
	printf("\nserved:     %zu by a running cairn mcp (via=mcp)\n", s.served);
	return 0;
}
