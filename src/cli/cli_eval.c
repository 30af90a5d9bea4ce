/*
 * cli_eval.c -- `cairn eval`: score recall on a labelled dataset (SPEC 8).
 *
 * Layer: top (the `cairn` command). The work is eval_run() in eval.c; this
 * file parses the options, shows progress on stderr, prints the table or
 * the JSON object, and writes the --misses file.
 *
 * Exit codes: 0 the evaluation ran (whatever the scores), 1 error, 2 usage.
 *
 * Must never: open the user's store (eval builds its own temporary one), or
 * leave the temporary store behind when interrupted (SIGINT and SIGTERM stop
 * the run between two queries, and eval_run() cleans up).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cairn.h"
#include "cli.h"
#include "eval.h"
#include "hook_inject.h"
#include "json.h"
#include "internal.h"

#define EVAL_PROGRESS_QUERIES 50 /* a progress line every this many queries */
#define EVAL_PROGRESS_ROWS 1000  /* and every this many corpus rows */

static const char eval_help[] =
	"usage: cairn eval DIR [--json] [--split NAME] [--per-group] [--k N]\n"
	"                      [--no-floor] [--seed] [--hook [--budget N]]\n"
	"                      [--misses FILE] [--queries FILE] [--sweep]\n"
	"                      [--offtopic FILE] [--quiet]\n"
	"       cairn eval --drift [--json] [--files N] [--commits N] [--seed S]\n"
	"\n"
	"--drift measures drift detection on a scripted repository history\n"
	"instead (`cairn eval --drift --help`).\n"
	"\n"
	"Measure recall quality on a labelled dataset (SPEC 8). DIR holds:\n"
	"  corpus.jsonl   {\"id\",\"text\",\"title\",\"time\",\"group\"?}: one record each\n"
	"  queries.jsonl  {\"id\",\"text\",\"answers\":[ids],\"category\",\"group\"?}:\n"
	"                 answers [] means no record answers the question\n"
	"  probes.jsonl   optional: more no-answer questions, used only to\n"
	"                 calibrate the no-match floor, never scored\n"
	"\n"
	"The corpus is loaded into a fresh temporary store (under $TMPDIR or\n"
	"/tmp, removed afterwards) as accepted notes whose ids are the corpus\n"
	"ids; your own store is never opened. Rows that hold a secret are stored\n"
	"masked and counted as 'redacted'. With probes.jsonl the floor is\n"
	"calibrated from the probes; then every query is asked with k hits and\n"
	"no receipt.\n"
	"\n"
	"Hybrid recall: with an embedding provider in the environment\n"
	"(CAIRN_EMBED_PROVIDER and CAIRN_EMBED_MODEL, as for `cairn reindex`),\n"
	"the temporary store's records are embedded before calibration, the\n"
	"cosine floor is calibrated from the probes too, and recall fuses BM25\n"
	"and vectors (without probes the cosine only orders the hits lexical\n"
	"evidence keeps, as in a store never calibrated for its model);\n"
	"without a provider, recall is lexical only.\n"
	"\n"
	"A workspace folder (DIR with docs/ and no corpus.jsonl, or any DIR\n"
	"with docs/ under --seed) is measured seeding included: a copy of\n"
	"DIR/docs is seeded as `cairn seed --no-git docs` would, and answer ids\n"
	"are paths relative to DIR (docs/decisions/x.md). A hit counts for the\n"
	"file its record was seeded from; a file seeds into several chunks, so\n"
	"recall is asked for 3k hits and the first k distinct files are kept\n"
	"(rank = position among distinct files).\n"
	"\n"
	"metrics (over answerable queries; rank = first returned answer):\n"
	"  R@k         share of queries with an answer in the top k (1,3,5,10)\n"
	"  MRR         mean of 1/rank, 0 when no answer is in the top 10\n"
	"  nDCG@10     binary relevance: sum of 1/log2(i+1) over answer\n"
	"              positions i <= 10, divided by the ideal for\n"
	"              min(answers, 10) answers\n"
	"  inject      with --hook: injection hit rate, the share of queries\n"
	"              with an answer among the entries of the block the hook\n"
	"              would print (its own recall and rendering: budget,\n"
	"              floor, one entry per source); \"-\" without --hook\n"
	"  empty       no-answer queries for which recall returned nothing, of all\n"
	"              no-answer queries (higher is better)\n"
	"  quiet       with --hook: no-answer queries for which the hook would\n"
	"              inject nothing, of all no-answer queries\n"
	"  blocks      with --hook: queries whose block held an entry, entries\n"
	"              per such query, characters per query (over all\n"
	"              queries) and the share of entries that are an answer\n"
	"              of their query (JSON, overall and per category:\n"
	"              hook_block {prompts_injected entries\n"
	"              relevant_entries chars})\n"
	"  stale-hit   over all queries: the share that returned a record\n"
	"              default recall must never return (status other than\n"
	"              accepted or unverified, or superseded by another); a\n"
	"              chunk counts before de-duplication, the hook's block\n"
	"              too. Must be 0; the line names the store's such records\n"
	"  AUROC       the answerability score (recall --explain: the share of\n"
	"              the question's informative IDF mass its best hit\n"
	"              matches) of answerable above no-answer queries: the\n"
	"              chance a random answerable one scores higher (ties\n"
	"              half); per category, its answerable queries against\n"
	"              every no-answer one. JSON: answer_auroc\n"
	"\n"
	"options:\n"
	"      --json          one JSON object: recall@1 recall@3 recall@5\n"
	"                      recall@10 mrr ndcg@10 answerable no_answer\n"
	"                      no_answer_empty injection_hit_rate\n"
	"                      no_answer_nothing_injected stale_hit_rate\n"
	"                      stale_hits, by_category (the same keys per\n"
	"                      category), dataset corpus queries stale_records\n"
	"                      floor cos_floor (hybrid; else null)\n"
	"                      cos_floor_calibrated (stores) redacted\n"
	"                      elapsed_s (seeded: seed\n"
	"                      {files records seconds}); 4 decimals;\n"
	"                      a rate with no answerable query is null\n"
	"      --split NAME    only queries whose \"split\" field is NAME or, in\n"
	"                      rows without that field, whose id starts with NAME\n"
	"      --per-group     one store per \"group\" value (e.g. each LoCoMo\n"
	"                      conversation is its own memory), each calibrated\n"
	"                      from its probes (probes without a group apply to\n"
	"                      all); scores are pooled over queries\n"
	"      --k N           hits asked per query, 1..100 (default 10)\n"
	"      --no-floor      keep hits below the no-match floor; no calibration\n"
	"      --seed          seed DIR/docs even when DIR has corpus.jsonl\n"
	"      --hook          also render every query as `cairn hook` would\n"
	"                      for a UserPromptSubmit and score that block\n"
	"                      (inject, quiet; --misses lines get \"injected\")\n"
	"      --budget N      the hook's character budget (default 4000)\n"
	"      --misses FILE   write one JSON line per answerable query whose\n"
	"                      answer is not in the top 3: id, text, category,\n"
	"                      answers, rank (0: not returned), returned ids\n"
	"      --queries FILE  write one JSON line per query (all of them): the\n"
	"                      --misses fields and answer, lexical, unseen\n"
	"      --sweep         run without the floor, then print R@3 and the\n"
	"                      shares of answerable and no-answer queries left\n"
	"                      empty at every floor 0.00 .. 1.00, applied as\n"
	"                      recall applies it (JSON: answer_auroc, sweep);\n"
	"                      scripts/sweep-chart draws them (docs/sweep.png);\n"
	"                      with --hook, the hook's own answerability\n"
	"                      floor instead: injection hit, quiet share and\n"
	"                      entries per injected query at each floor (JSON:\n"
	"                      hook_floor, hook_sweep)\n"
	"      --offtopic FILE also ask every store each question of FILE\n"
	"                      (one a line, '#' comments), questions about\n"
	"                      nothing any store holds, and count those\n"
	"                      recall returns nothing for (JSON: offtopic\n"
	"                      {asked quiet quiet_rate}); tests/data/\n"
	"                      offtopic.txt is one such list, in English and\n"
	"                      Chinese, kept apart from calibration's probes\n"
	"      --quiet         no progress on stderr\n"
	"      --record        also append the --json object, with \"recorded\"\n"
	"                      (the time, ISO-8601 UTC), as one line to the\n"
	"                      workspace's .cairn/eval.jsonl, the history that\n"
	"                      'cairn serve' charts (the store is not opened)\n"
	"\n"
	"exit status: 0 evaluated (whatever the scores), 1 error (missing file,\n"
	"malformed line: named as file:line), 2 usage\n";

/* Set by SIGINT/SIGTERM; the progress callback turns it into a stop. */
static volatile sig_atomic_t eval_interrupted;

/* SIGINT/SIGTERM handler: only sets the flag (async-signal-safe). */
static void on_signal(int sig)
{
	(void)sig;
	eval_interrupted = 1;
}

/* State of the progress display on stderr. */
struct progress {
	int quiet;   /* --quiet: show nothing */
	int tty;     /* stderr is a terminal: rewrite one line with \r */
	int open;    /* a \r line is on screen and needs a newline */
};

/* The progress callback of eval_run(): prints, and stops on a signal. */
static int show_progress(void *user, enum eval_phase phase, size_t done,
			 size_t total)
{
	struct progress *p = user;
	char line[96];

	if (eval_interrupted)
		return 1;
	if (p->quiet)
		return 0;
	if (phase == EVAL_PHASE_LOAD) {
		if (total < EVAL_PROGRESS_ROWS ||
		    (done % EVAL_PROGRESS_ROWS != 0 && done != total))
			return 0;
		snprintf(line, sizeof(line), "eval: loading %zu/%zu rows",
			 done, total);
	} else {
		if (done % EVAL_PROGRESS_QUERIES != 0 && done != total)
			return 0;
		snprintf(line, sizeof(line), "eval: %zu/%zu queries", done,
			 total);
	}
	if (p->tty) {
		fprintf(stderr, "\r%-40s", line);
		p->open = 1;
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
	return 0;
}

/* The dataset's name: the last component of DIR (resolved when possible). */
static void dataset_name(const char *dir, char *out, size_t size)
{
	char real[PATH_MAX];
	const char *s = dir, *slash;
	size_t n;

	if (realpath(dir, real))
		s = real;
	n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		n--;
	slash = memrchr(s, '/', n);
	if (slash && n > 1) {
		n -= (size_t)(slash + 1 - s);
		s = slash + 1;
	}
	snprintf(out, size, "%.*s", (int)n, s);
}

/* A rate in the table: three decimals, or "-" when undefined. */
static void put_rate(const struct eval_metrics *m, enum eval_metric_kind k,
		     int width)
{
	double v = eval_metric(m, k);

	if (v < 0)
		printf(" %*s", width, "-");
	else
		printf(" %*.3f", width, v);
}

/* One row of the table. */
static void put_row(const char *name, int namew, const struct eval_metrics *m)
{
	char empty[48];

	printf("%-*s %5zu", namew, *name ? name : "(none)", m->answerable);
	put_rate(m, EVAL_R1, 6);
	put_rate(m, EVAL_R3, 6);
	put_rate(m, EVAL_R5, 6);
	put_rate(m, EVAL_R10, 6);
	put_rate(m, EVAL_MRR, 6);
	put_rate(m, EVAL_NDCG10, 7);
	put_rate(m, EVAL_INJECTION, 6);
	if (m->no_answer > 0)
		snprintf(empty, sizeof(empty), "%zu/%zu", m->no_answer_empty,
			 m->no_answer);
	else
		snprintf(empty, sizeof(empty), "-");
	printf(" %9s", empty);
	if (m->no_answer > 0 && m->hooked > 0)
		snprintf(empty, sizeof(empty), "%zu/%zu", m->nothing_injected,
			 m->no_answer);
	else
		snprintf(empty, sizeof(empty), "-");
	printf(" %9s\n", empty);
}

/* The human-readable report. */
static void print_table(const struct eval_report *r, const char *dataset)
{
	size_t i;
	int namew = 12;

	for (i = 0; i < r->ncats; i++) {
		int n = (int)strlen(r->cats[i].name);

		if (n > namew)
			namew = n > 32 ? 32 : n;
	}
	if (r->seeded)
		printf("dataset  %s: docs/ seeded, %zu queries (%zu answerable, "
		       "%zu no-answer)",
		       dataset, r->nq, r->all.answerable, r->all.no_answer);
	else
		printf("dataset  %s: %zu corpus rows, %zu queries (%zu "
		       "answerable, %zu no-answer)",
		       dataset, r->corpus, r->nq, r->all.answerable,
		       r->all.no_answer);
	if (r->stores > 1)
		printf(", %zu stores", r->stores);
	printf("\n");
	if (!r->floor_known)
		printf("floor    none (--no-floor)\n");
	else if (r->floor_min == r->floor_max)
		printf("floor    %.2f (%s)\n", r->floor,
		       r->calibrated ? "calibrated from probes.jsonl"
				     : "default, not calibrated");
	else
		printf("floor    mean %.3f, %.2f..%.2f over stores (%d of %zu "
		       "calibrated)\n",
		       r->floor, r->floor_min, r->floor_max, r->calibrated,
		       r->stores);
	if (r->floor_known)
		printf("         a question is answered when its best hit's "
		       "answerability is above it; then each hit above %.2f "
		       "(the lower of the floor and the default) is shown\n",
		       r->floor < CAIRN_DEFAULT_FLOOR ? r->floor
						      : CAIRN_DEFAULT_FLOOR);
	if (eval_auroc(r, NULL) >= 0)
		printf("AUROC    %.3f answerability, answerable vs no-answer\n",
		       eval_auroc(r, NULL));
	if (r->offtopic)
		printf("offtopic %zu of %zu off-topic questions got nothing "
		       "(%.0f%%)\n",
		       r->offtopic_quiet, r->offtopic,
		       100.0 * (double)r->offtopic_quiet / (double)r->offtopic);
	if (r->embed_identity[0])
		printf("vectors  %zu records embedded (hybrid recall): %s\n",
		       r->embedded, r->embed_identity);
	if (r->cos_known && r->cos_floor_min == r->cos_floor_max)
		printf("cosine   floor %.2f (%s)\n", r->cos_floor,
		       r->cos_calibrated ? "calibrated from probes.jsonl"
		       : r->cos_floor > 0 ? "not calibrated for this model"
					  : "0: not calibrated (no probes): the "
					    "cosine orders hits, keeps none");
	else if (r->cos_known)
		printf("cosine   floor mean %.3f, %.2f..%.2f over stores (%d of "
		       "%d calibrated)\n",
		       r->cos_floor, r->cos_floor_min, r->cos_floor_max,
		       r->cos_calibrated, r->cos_known);
	if (r->seeded)
		printf("seed     %zu files -> %zu records in %.3f s (%.0f "
		       "records/s, no git)\n",
		       r->seed_files, r->seed_records, r->seed_s,
		       r->seed_s > 0 ? (double)r->seed_records / r->seed_s
				     : 0.0);
	if (r->redacted > 0)
		printf("redacted %zu corpus rows held a secret (stored "
		       "masked)\n",
		       r->redacted);
	if (r->hooked)
		printf("hook     %d entries, budget %zu characters, as "
		       "`cairn hook` renders them\n",
		       r->hook_k, r->hook_budget);
	printf("\n%-*s %5s %6s %6s %6s %6s %6s %7s %6s %9s %9s\n", namew,
	       "category", "n", "R@1", "R@3", "R@5", "R@10", "MRR", "nDCG@10",
	       "inject", "empty", "quiet");
	put_row("all", namew, &r->all);
	if (r->ncats > 1 || (r->ncats == 1 && *r->cats[0].name))
		for (i = 0; i < r->ncats; i++)
			put_row(r->cats[i].name, namew, &r->cats[i].m);
	if (r->hooked) {
		const struct eval_metrics *a = &r->all;
		size_t nq = a->answerable + a->no_answer;

		printf("\nblocks   %zu of %zu queries injected (%zu of %zu "
		       "no-answer ones); %.2f entries per injected query, "
		       "%.0f characters per query; %zu of %zu entries (%.0f %%) "
		       "are an answer of their query\n",
		       a->hook_prompts, nq, a->no_answer - a->nothing_injected,
		       a->no_answer,
		       a->hook_prompts ? (double)a->hook_entries /
						 (double)a->hook_prompts
				       : 0.0,
		       nq ? (double)a->hook_chars / (double)nq : 0.0,
		       a->hook_relevant, a->hook_entries,
		       a->hook_entries ? 100.0 * (double)a->hook_relevant /
						 (double)a->hook_entries
				       : 0.0);
	}
	printf("\nstale    stale-hit rate %.4f: %zu of %zu queries returned a "
	       "record default recall must not return (%zu hits; the "
	       "store%s held %zu such records)\n",
	       eval_metric(&r->all, EVAL_STALE_HIT) < 0
		       ? 0.0
		       : eval_metric(&r->all, EVAL_STALE_HIT),
	       r->all.stale_queries, r->all.answerable + r->all.no_answer,
	       r->all.stale_hits, r->stores > 1 ? "s" : "",
	       r->stale_records);
	printf("\ntime     %.2f s (load %.2f s, queries %.2f s, %.1f ms per "
	       "query, k=%d)\n",
	       r->elapsed_s, r->load_s, r->query_s,
	       r->nq ? r->query_s * 1000.0 / (double)r->nq : 0.0, r->k);
}

/* Write the --misses file: answerable queries with no answer in the top 3. */
static int write_misses(const struct eval_report *r, const char *path,
			size_t *count, int all)
{
	struct sbuf sb = SBUF_INIT;
	FILE *f = NULL;
	size_t i;
	int ret = 0;

	*count = 0;
	f = fopen(path, "w");
	if (!f) {
		ret = cli_fail("cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	for (i = 0; i < r->nq; i++) {
		const struct eval_qresult *q = &r->q[i];

		if (!all && (q->nanswers == 0 || (q->score.rank >= 1 &&
						  q->score.rank <= EVAL_MISS_K)))
			continue;
		sbuf_reset(&sb);
		eval_qresult_json(&sb, q);
		if (sb.err) {
			ret = cli_fail("cannot format '%s': %s", path,
				       cairn_errstr(sb.err));
			goto out;
		}
		if (fwrite(sb.buf, 1, sb.len, f) != sb.len) {
			ret = cli_fail("cannot write '%s': %s", path,
				       strerror(errno));
			goto out;
		}
		(*count)++;
	}
out:
	if (f && fclose(f) != 0 && ret == 0)
		ret = cli_fail("cannot write '%s': %s", path, strerror(errno));
	sbuf_release(&sb);
	return ret;
}

/*
 * --record: the report as one JSON line with "recorded" (the time) at the
 * end of the workspace's .cairn/eval.jsonl (cli_serve.c charts it). One
 * write(2) of the whole line with O_APPEND, so concurrent runs do not
 * interleave their lines.
 */
static int record_run(const struct eval_report *r, const char *name)
{
	struct sbuf sb = SBUF_INIT;
	char *dir = NULL, path[4200], ts[32];
	time_t t = time(NULL);
	struct tm tm;
	int fd = -1, ret = 0;

	if (cairn_workspace_find(NULL, &dir) != CAIRN_OK)
		return cli_fail("eval --record: not in a cairn workspace (the "
				"runs are kept in its .cairn/eval.jsonl)");
	snprintf(path, sizeof(path), "%s/eval.jsonl", dir);
	cairn_free(dir);
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	eval_report_json(&sb, r, name);
	if (!sb.err && sb.len && sb.buf[sb.len - 1] == '}') {
		sb.len--;
		sbuf_addf(&sb, ",\"recorded\":\"%s\"}\n", ts);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (sb.err || fd < 0 ||
	    write(fd, sb.buf, sb.len) != (ssize_t)sb.len)
		ret = cli_fail("eval --record: cannot append to '%s': %s",
			       path, sb.err ? cairn_errstr(sb.err)
					    : strerror(errno));
	if (fd >= 0 && close(fd) != 0 && ret == 0)
		ret = cli_fail("eval --record: cannot write '%s': %s", path,
			       strerror(errno));
	sbuf_release(&sb);
	return ret;
}

#define SWEEP_POINTS 101 /* floors 0.00, 0.01, ... 1.00 */

/*
 * --sweep: R@3, answerable and no-answer queries left empty at each floor
 * (the answerability's operating points), as a table or JSON.
 */
static int print_sweep(const struct eval_report *r, const char *name)
{
	struct eval_point pts[SWEEP_POINTS];
	struct sbuf sb = SBUF_INIT;
	double auc = eval_auroc(r, NULL);
	size_t i;
	int ret = 0;

	if (eval_sweep(r, pts, SWEEP_POINTS) != 0)
		return cli_fail("eval: --sweep needs a run without the floor");
	if (cli_state.json) {
		sbuf_adds(&sb, "{\"dataset\":");
		json_add_strz(&sb, name);
		sbuf_adds(&sb, ",\"answer_auroc\":");
		if (auc < 0)
			sbuf_adds(&sb, "null");
		else
			eval_add_num4(&sb, auc);
		sbuf_adds(&sb, ",\"sweep\":[");
		for (i = 0; i < SWEEP_POINTS; i++) {
			sbuf_adds(&sb, i ? ",{\"floor\":" : "{\"floor\":");
			eval_add_num4(&sb, pts[i].floor);
			sbuf_adds(&sb, ",\"recall@3\":");
			eval_add_num4(&sb, pts[i].r3);
			sbuf_adds(&sb, ",\"no_answer_empty\":");
			eval_add_num4(&sb, pts[i].no_answer_empty);
			sbuf_adds(&sb, ",\"answerable_empty\":");
			eval_add_num4(&sb, pts[i].answerable_empty);
			sbuf_addc(&sb, '}');
		}
		sbuf_adds(&sb, "]}");
		cli_print_json(&sb);
		ret = sb.err != 0;
		sbuf_release(&sb);
		return ret;
	}
	printf("%s: answerability sweep (AUROC %s%.3f)\n", name,
	       auc < 0 ? "n/a " : "", auc < 0 ? 0.0 : auc);
	printf("floor   R@3     answerable empty   no-answer empty\n");
	for (i = 0; i < SWEEP_POINTS; i++)
		printf("%.2f    %.3f   %.3f              %.3f\n", pts[i].floor,
		       pts[i].r3, pts[i].answerable_empty,
		       pts[i].no_answer_empty);
	return 0;
}

/*
 * --sweep --hook: the hook's injection hit, quiet share and entries per
 * injected query at each answerability floor, as a table or JSON.
 */
static int print_hook_sweep(const struct eval_report *r, const char *name)
{
	struct eval_hook_point pts[SWEEP_POINTS];
	struct sbuf sb = SBUF_INIT;
	size_t i;
	int ret = 0;

	if (eval_hook_sweep(r, pts, SWEEP_POINTS) != 0)
		return cli_fail("eval: --sweep --hook needs the hook's blocks");
	if (cli_state.json) {
		sbuf_adds(&sb, "{\"dataset\":");
		json_add_strz(&sb, name);
		sbuf_addf(&sb, ",\"hook_floor\":%.2f,\"hook_sweep\":[",
			  HOOK_MIN_ANSWER);
		for (i = 0; i < SWEEP_POINTS; i++) {
			sbuf_adds(&sb, i ? ",{\"floor\":" : "{\"floor\":");
			eval_add_num4(&sb, pts[i].floor);
			sbuf_adds(&sb, ",\"inject\":");
			eval_add_num4(&sb, pts[i].inject);
			sbuf_adds(&sb, ",\"quiet\":");
			eval_add_num4(&sb, pts[i].quiet);
			sbuf_adds(&sb, ",\"entries\":");
			eval_add_num4(&sb, pts[i].entries);
			sbuf_addc(&sb, '}');
		}
		sbuf_adds(&sb, "]}");
		cli_print_json(&sb);
		ret = sb.err != 0;
		sbuf_release(&sb);
		return ret;
	}
	printf("%s: the hook's answerability floor (in force: %.2f)\n", name,
	       HOOK_MIN_ANSWER);
	printf("floor   inject  quiet   entries per injected query\n");
	for (i = 0; i < SWEEP_POINTS; i++)
		printf("%.2f    %.3f   %.3f   %.2f\n", pts[i].floor,
		       pts[i].inject, pts[i].quiet, pts[i].entries);
	return 0;
}

/* `cairn eval DIR [options]` (see eval_help); --drift: cli_eval_drift.c */
int cmd_eval(int argc, char **argv)
{
	enum { O_JSON = 256, O_SPLIT, O_PER_GROUP, O_QUIET, O_NO_FLOOR, O_K,
	       O_MISSES, O_SEED, O_HOOK, O_BUDGET, O_RECORD, O_QUERIES,
	       O_SWEEP, O_OFFTOPIC };
	static const struct option lo[] = {
		{ "json", 0, 0, O_JSON },	    { "split", 1, 0, O_SPLIT },
		{ "per-group", 0, 0, O_PER_GROUP }, { "quiet", 0, 0, O_QUIET },
		{ "no-floor", 0, 0, O_NO_FLOOR },   { "k", 1, 0, O_K },
		{ "misses", 1, 0, O_MISSES },	    { "seed", 0, 0, O_SEED },
		{ "hook", 0, 0, O_HOOK },	    { "budget", 1, 0, O_BUDGET },
		{ "record", 0, 0, O_RECORD },	    { "help", 0, 0, 'h' },
		{ "queries", 1, 0, O_QUERIES },	    { "sweep", 0, 0, O_SWEEP },
		{ "offtopic", 1, 0, O_OFFTOPIC },
		{ 0, 0, 0, 0 }
	};
	struct eval_opts opts;
	struct eval_report *r = NULL;
	struct progress prog;
	struct sigaction sa, old_int, old_term;
	struct sbuf sb = SBUF_INIT;
	const char *misses = NULL, *queries = NULL;
	int sweep = 0;
	char err[STORE_ERRMSG_CLI], name[256], *end;
	long k;
	size_t nmiss = 0;
	int c, rc, ret = 0, record = 0;

	for (c = 1; c < argc; c++)
		if (strcmp(argv[c], "--drift") == 0)
			return cmd_eval_drift(argc, argv);
	memset(&opts, 0, sizeof(opts));
	memset(&prog, 0, sizeof(prog));
	for (;;) {
		c = cli_getopt(argc, argv, "h", lo);
		if (c == -1)
			break;
		switch (c) {
		case O_JSON: cli_state.json = 1; break;
		case O_SPLIT: opts.split = optarg; break;
		case O_PER_GROUP: opts.per_group = 1; break;
		case O_QUIET: prog.quiet = 1; break;
		case O_NO_FLOOR: opts.no_floor = 1; break;
		case O_SEED: opts.seed = 1; break;
		case O_K:
			errno = 0;
			k = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || k < 1 ||
			    k > EVAL_MAX_K)
				return cli_usage("eval", "--k must be a "
						 "number in 1..%d",
						 EVAL_MAX_K);
			opts.k = (int)k;
			break;
		case O_MISSES: misses = optarg; break;
		case O_QUERIES: queries = optarg; break;
		case O_SWEEP: sweep = 1; break;
		case O_OFFTOPIC: opts.offtopic = optarg; break;
		case O_HOOK: opts.hook = 1; break;
		case O_RECORD: record = 1; break;
		case O_BUDGET:
			errno = 0;
			k = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || k < 1 ||
			    k > 1000000)
				return cli_usage("eval", "--budget must be a "
						 "number in 1..1000000");
			opts.hook_budget = (size_t)k;
			break;
		case 'h': return cli_help(eval_help);
		default: return cli_usage("eval", "unknown option");
		}
	}
	if (optind >= argc)
		return cli_usage("eval", "expected a dataset directory DIR");
	if (optind + 1 < argc)
		return cli_usage("eval", "expected exactly one DIR");
	if (opts.hook_budget && !opts.hook)
		return cli_usage("eval", "--budget applies to --hook");
	if (opts.hook && opts.no_floor)
		return cli_usage("eval", "--hook and --no-floor exclude each "
				 "other: the hook always applies the floor");
	if (opts.split && !*opts.split)
		return cli_usage("eval", "--split needs a non-empty NAME");
	if (sweep && opts.hook)
		opts.hook_sweep = 1; /* the hook's floor applied after */
	else if (sweep)
		opts.no_floor = 1; /* every hit kept; the floors are applied after */
	prog.tty = isatty(2);
	opts.progress = show_progress;
	opts.user = &prog;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	eval_interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = eval_run(argv[optind], &opts, &r, err, sizeof(err));
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (prog.open)
		fputc('\n', stderr);
	if (rc) {
		ret = cli_fail("eval: %s", err[0] ? err : cairn_errstr(rc));
		goto out;
	}
	dataset_name(argv[optind], name, sizeof(name));
	if (r->unknown_answers > 0)
		fprintf(stderr, "cairn: eval: warning: %zu answer ids name no "
			"%s%s\n",
			r->unknown_answers,
			r->seeded ? "seeded file" : "corpus row",
			opts.per_group ? " of their group" : "");
	if (misses) {
		ret = write_misses(r, misses, &nmiss, 0);
		if (ret)
			goto out;
	}
	if (record && (ret = record_run(r, name)) != 0)
		goto out;

	if (queries) {
		size_t nq = 0;

		ret = write_misses(r, queries, &nq, 1);
		if (ret)
			goto out;
	}
	if (sweep) {
		ret = opts.hook ? print_hook_sweep(r, name) : print_sweep(r, name);
		goto out;
	}
	if (cli_state.json) {
		eval_report_json(&sb, r, name);
		cli_print_json(&sb);
		if (sb.err)
			ret = 1;
	} else {
		print_table(r, name);
		if (misses)
			printf("misses   %zu queries without an answer in the "
			       "top 3, written to %s\n",
			       nmiss, misses);
	}
out:
	sbuf_release(&sb);
	eval_report_free(r);
	return ret;
}
