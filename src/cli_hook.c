/*
 * cli_hook.c -- `cairn hook`: the Claude Code hook process (SPEC 5.4).
 *
 * Layer: top. Reads the hook JSON on stdin, renders the block (hook.c),
 * prints Claude Code's hook output object, and appends one line per call
 * to .cairn/hook.log: time, event, outcome (injected / empty / timeout /
 * error / ignored), latency, counts, receipt. `cairn stats --hook` reads
 * that log.
 *
 * Must never: block or fail the user's prompt. Every path exits 0 (exit
 * code 2 would block a UserPromptSubmit); on any error or past the
 * deadline it prints nothing. Never logs the prompt text.
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

#include "cli.h"
#include "hook.h"
#include "json.h"

#define HOOK_MAX_INPUT ((size_t)1 << 20)  /* 1 MiB of hook JSON */
#define HOOK_DEFAULT_DEADLINE_MS 1500      /* then print nothing */
#define HOOK_LOG_MAX ((off_t)1 << 20)      /* rotate hook.log past 1 MiB */
#define HOOK_LOG_LINES 100000              /* lines read by stats --hook */

static int log_fd = -1;        /* .cairn/hook.log, opened early */
static double t_start;         /* monotonic ms at start */
static const char *log_event = "unknown"; /* event name for the log */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

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
		     log_event, outcome, now_ms() - t_start,
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
	char path[4096], old[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/hook.log", dir);
	if (stat(path, &st) == 0 && st.st_size > HOOK_LOG_MAX) {
		snprintf(old, sizeof(old), "%s.1", path);
		(void)rename(path, old);
	}
	log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

static const char hook_help[] =
	"usage: cairn hook [--budget N] [--deadline-ms N] [-k N]\n"
	"\n"
	"The Claude Code hook. Reads the hook's JSON on standard input and\n"
	"prints the context to add, as Claude Code's hook output object:\n"
	"  UserPromptSubmit  recall for the prompt: past records, each with\n"
	"                    date, kind, source, relevance and the first lines\n"
	"                    of its body; nothing when nothing is relevant\n"
	"  SessionStart      the standing rules and capabilities, and how many\n"
	"                    candidates wait for approval\n"
	"Other events print nothing. The workspace is found from the JSON's\n"
	"\"cwd\" (or CAIRN_DIR).\n"
	"\n"
	"It never blocks the prompt: it always exits 0, and on any error, or\n"
	"past the deadline, it prints nothing. Each call appends its event,\n"
	"outcome (injected, empty, timeout, error, ignored) and latency to\n"
	".cairn/hook.log; 'cairn stats --hook' summarises that log.\n"
	"\n"
	"options:\n"
	"  --budget N       at most N characters of context (default 4000)\n"
	"  --deadline-ms N  print nothing after N ms (default 1500)\n"
	"  -k N             records recalled for a prompt (default 5)\n"
	"\n"
	"In .claude/settings.json:\n"
	"  \"hooks\": {\"UserPromptSubmit\": [{\"hooks\": [{\"type\": \"command\",\n"
	"             \"command\": \"cairn hook\"}]}],\n"
	"           \"SessionStart\": [{\"hooks\": [{\"type\": \"command\",\n"
	"             \"command\": \"cairn hook\"}]}]}\n";

int cmd_hook(int argc, char **argv)
{
	enum { O_BUDGET = 256, O_DEADLINE };
	static const struct option lo[] = { { "budget", 1, 0, O_BUDGET },
					    { "deadline-ms", 1, 0, O_DEADLINE },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	struct hook_opts o;
	struct hook_result res;
	struct sbuf text = SBUF_INIT, outj = SBUF_INIT;
	struct json *j = NULL;
	cairn_open_opts oo;
	cairn_db *db = NULL;
	struct itimerval it;
	sigset_t block;
	const char *event, *cwd, *prompt;
	char *in = NULL, *dir = NULL, err[256], extra[160];
	long deadline = HOOK_DEFAULT_DEADLINE_MS;
	int c, rc;

	t_start = now_ms();
	memset(&o, 0, sizeof(o));
	o.budget = HOOK_DEFAULT_BUDGET;
	while ((c = cli_getopt(argc, argv, "k:h", lo)) != -1) {
		switch (c) {
		case O_BUDGET: o.budget = (size_t)strtoul(optarg, NULL, 10); break;
		case O_DEADLINE: deadline = strtol(optarg, NULL, 10); break;
		case 'k': o.k = atoi(optarg); break;
		case 'h': return cli_help(hook_help);
		default: return 0; /* never block a prompt, even on bad usage */
		}
	}
	if (o.budget == 0)
		o.budget = HOOK_DEFAULT_BUDGET;
	if (deadline > 0) {
		signal(SIGALRM, on_deadline);
		memset(&it, 0, sizeof(it));
		it.it_value.tv_sec = deadline / 1000;
		it.it_value.tv_usec = (deadline % 1000) * 1000;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	in = cli_read_stdin();
	if (!in || json_parse(in, strlen(in), &j, err, sizeof(err)) != CAIRN_OK ||
	    j->type != JSON_OBJECT)
		goto out; /* no workspace known yet: nothing to log to */
	event = json_get_str(j, "hook_event_name");
	cwd = json_get_str(j, "cwd");
	prompt = json_get_str(j, "prompt");
	log_event = event ? event : "unknown";
	if (cwd && *cwd && chdir(cwd) != 0)
		goto out;
	if (cairn_workspace_find(NULL, &dir) != CAIRN_OK)
		goto out; /* not a cairn workspace: stay silent */
	open_log(dir);
	if (!event || (strcmp(event, "UserPromptSubmit") != 0 &&
		       strcmp(event, "SessionStart") != 0)) {
		log_line("ignored", "");
		goto out;
	}
	memset(&oo, 0, sizeof(oo));
	oo.busy_timeout_ms = 200; /* a locked store must not eat the deadline */
	rc = cairn_db_open(dir, &oo, &db);
	if (rc == CAIRN_OK) {
		if (strcmp(event, "UserPromptSubmit") == 0)
			rc = prompt ? hook_prompt_block(db, prompt, &o, &text,
							&res)
				    : CAIRN_INVALID;
		else
			rc = hook_session_block(db, &o, &text, &res);
	}
	if (rc) {
		snprintf(extra, sizeof(extra), "%s",
			 db ? cairn_errmsg(db) : cairn_errstr(rc));
		/* one line per call: tabs and newlines out of the message */
		for (c = 0; extra[c]; c++)
			if (extra[c] == '\t' || extra[c] == '\n')
				extra[c] = ' ';
		log_line("error", extra);
		goto out;
	}
	if (text.len > 0)
		hook_output_json(&outj, event, text.buf, text.len);
	if (outj.err) {
		log_line("error", "out of memory");
		goto out;
	}
	/* from here on the deadline may not cut the output in half */
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	if (outj.len > 0) {
		fwrite(outj.buf, 1, outj.len, stdout);
		fflush(stdout);
	}
	snprintf(extra, sizeof(extra), "found=%zu injected=%zu chars=%zu%s%s",
		 res.found, res.injected, text.len,
		 res.receipt[0] ? " receipt=" : "", res.receipt);
	log_line(outj.len > 0 ? "injected" : "empty", extra);
out:
	json_free(j);
	cairn_free(in);
	cairn_free(dir);
	cairn_db_close(db);
	sbuf_release(&text);
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

/* `cairn stats --hook`: latency percentiles and outcomes from hook.log. */
int cli_hook_stats(int json)
{
	static const char *const outcomes[] = { "injected", "empty", "timeout",
						"error", "ignored" };
	size_t counts[5] = { 0 }, n = 0, cap = 0, i;
	double *lat = NULL, p50 = 0, p90 = 0, max = 0;
	char path[4200], *line = NULL, *dir = NULL;
	size_t lcap = 0;
	FILE *f;

	if (cairn_workspace_find(NULL, &dir) != CAIRN_OK)
		return cli_fail("not in a cairn workspace");
	snprintf(path, sizeof(path), "%s/hook.log", dir);
	cairn_free(dir);
	f = fopen(path, "r");
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
		for (k = 0; k < 5; k++)
			if (fields[2] && strcmp(fields[2], outcomes[k]) == 0)
				counts[k]++;
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
		p50 = lat[(n - 1) / 2];
		p90 = lat[(size_t)ceil(0.9 * (double)n) - 1];
		max = lat[n - 1];
	}
	cairn_free(lat);
	if (json) {
		printf("{\"calls\":%zu,\"p50_ms\":%.1f,\"p90_ms\":%.1f,"
		       "\"max_ms\":%.1f",
		       n, p50, p90, max);
		for (i = 0; i < 5; i++)
			printf(",\"%s\":%zu", outcomes[i], counts[i]);
		printf("}\n");
		return 0;
	}
	if (n == 0) {
		printf("no hook calls logged in %s\n", path);
		return 0;
	}
	printf("hook calls: %zu (log %s)\n", n, path);
	printf("latency:    p50 %.1f ms, p90 %.1f ms, max %.1f ms\n", p50, p90,
	       max);
	printf("outcomes:  ");
	for (i = 0; i < 5; i++)
		printf(" %s=%zu", outcomes[i], counts[i]);
	printf("\n");
	return 0;
}
