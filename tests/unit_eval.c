/*
 * unit_eval.c -- the evaluation engine (SPEC 8): the metric arithmetic
 * against hand-computed values, the dataset reader's errors, and small
 * end-to-end runs on datasets written into test_tmpdir, among them a seeded
 * workspace (docs/ seeded, answers are file paths, chunks de-duplicated).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cairn.h"
#include "eval.h"
#include "internal.h"
#include "test.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

#define CHECK_NEAR(a, b)                                                   \
	do {                                                               \
		double x_ = (a), y_ = (b);                                 \
		CHECK_MSG(NEAR(x_, y_), "%.12f != %.12f", x_, y_);         \
	} while (0)

/* 1/log2(i+1): the gain of a relevant hit at 1-based position i. */
static double gain(int i)
{
	return 1.0 / log2((double)i + 1.0);
}

static struct eval_qscore score(const char *const *ret, size_t n,
				const char *const *ans, size_t na)
{
	struct eval_qscore s;

	eval_score_query(ret, n, ans, na, &s);
	return s;
}

/* EVIDENCE-OF: SPEC 8 -- rank, MRR and nDCG@10 of one query, by hand */
static void test_score_query(void)
{
	const char *abc[3] = { "a", "b", "c" };
	const char *b[1] = { "b" };
	const char *a[1] = { "a" };
	const char *xayb[4] = { "x", "a", "y", "b" };
	const char *ab[2] = { "a", "b" };
	const char *xy[2] = { "x", "y" };
	const char *aaa[3] = { "a", "a", "a" };
	const char *aa[2] = { "a", "a" };
	const char *withnull[3] = { NULL, "x", "a" };
	const char *ids[12] = { "0", "1", "2", "3", "4", "5",
				"6", "7", "8", "9", "10", "11" };
	const char *eleven[1] = { "10" };
	const char *tenth[1] = { "9" };
	struct eval_qscore s;

	/* answer at rank 2: rr 1/2, nDCG = gain(2) / gain(1) */
	s = score(abc, 3, b, 1);
	CHECK_INT(s.rank, 2);
	CHECK_NEAR(s.rr, 0.5);
	CHECK_NEAR(s.ndcg, 1.0 / log2(3.0));
	CHECK_NEAR(s.ndcg, 0.630929753571);

	/* answer at rank 1: everything is 1 */
	s = score(abc, 3, a, 1);
	CHECK_INT(s.rank, 1);
	CHECK_NEAR(s.rr, 1.0);
	CHECK_NEAR(s.ndcg, 1.0);

	/* two answers at 2 and 4: DCG = g(2)+g(4), IDCG = g(1)+g(2) */
	s = score(xayb, 4, ab, 2);
	CHECK_INT(s.rank, 2);
	CHECK_NEAR(s.rr, 0.5);
	CHECK_NEAR(s.ndcg, (gain(2) + gain(4)) / (gain(1) + gain(2)));
	CHECK_NEAR(s.ndcg, 0.650920929807);
	/* the order of the answers does not matter */
	{
		const char *ba[2] = { "b", "a" };

		s = score(xayb, 4, ba, 2);
		CHECK_NEAR(s.ndcg, (gain(2) + gain(4)) / (gain(1) + gain(2)));
	}

	/* two answers, only one returned, at rank 1: 1 / (g1+g2) */
	s = score(abc, 1, ab, 2);
	CHECK_INT(s.rank, 1);
	CHECK_NEAR(s.ndcg, 1.0 / (1.0 + gain(2)));

	/* not found among the returned ids */
	s = score(xy, 2, a, 1);
	CHECK_INT(s.rank, 0);
	CHECK_NEAR(s.rr, 0);
	CHECK_NEAR(s.ndcg, 0);

	/* nothing returned */
	s = score(NULL, 0, a, 1);
	CHECK_INT(s.rank, 0);
	CHECK_NEAR(s.ndcg, 0);

	/* no-answer query: every figure 0, even with hits */
	s = score(abc, 3, NULL, 0);
	CHECK_INT(s.rank, 0);
	CHECK_NEAR(s.rr, 0);
	CHECK_NEAR(s.ndcg, 0);

	/* duplicate answers count once in the ideal */
	s = score(a, 1, aaa, 3);
	CHECK_NEAR(s.ndcg, 1.0);

	/* a duplicate returned id gains once */
	s = score(aa, 2, ab, 2);
	CHECK_INT(s.rank, 1);
	CHECK_NEAR(s.ndcg, 1.0 / (1.0 + gain(2)));

	/* NULL entries are skipped, positions still count */
	s = score(withnull, 3, a, 1);
	CHECK_INT(s.rank, 3);
	CHECK_NEAR(s.rr, 1.0 / 3.0);
	CHECK_NEAR(s.ndcg, gain(3));

	/* rank 10 is inside MRR@10 and nDCG@10 */
	s = score(ids, 12, tenth, 1);
	CHECK_INT(s.rank, 10);
	CHECK_NEAR(s.rr, 0.1);
	CHECK_NEAR(s.ndcg, gain(10));
	CHECK_NEAR(s.ndcg, 0.289064826318);

	/* rank 11 is found but outside MRR@10 and nDCG@10 */
	s = score(ids, 12, eleven, 1);
	CHECK_INT(s.rank, 11);
	CHECK_NEAR(s.rr, 0);
	CHECK_NEAR(s.ndcg, 0);

	/* 12 answers all returned: the ideal stops at 10 positions */
	s = score(ids, 12, ids, 12);
	CHECK_INT(s.rank, 1);
	CHECK_NEAR(s.ndcg, 1.0);
	/* 12 answers, only the last 2 returned first: DCG g1+g2, IDCG@10 */
	{
		const char *two[2] = { "10", "11" };
		double idcg = 0;
		int i;

		for (i = 1; i <= 10; i++)
			idcg += gain(i);
		s = score(two, 2, ids, 12);
		CHECK_NEAR(s.ndcg, (gain(1) + gain(2)) / idcg);
	}
}

/* EVIDENCE-OF: SPEC 8 -- recall@k, MRR, nDCG, injection and no-answer sums */
static void test_metrics(void)
{
	struct eval_metrics m;
	struct eval_qscore s;
	const char *ret[5] = { "x", "y", "z", "a", "w" };
	const char *a[1] = { "a" };
	const char *x[1] = { "x" };
	const char *y[1] = { "y" };
	const char *q[1] = { "q" };

	memset(&m, 0, sizeof(m));
	CHECK(eval_metric(&m, EVAL_R1) < 0); /* undefined with no query */
	eval_score_query(ret, 5, x, 1, &s); /* rank 1 */
	eval_metrics_add(&m, 1, 5, &s);
	eval_score_query(ret, 5, y, 1, &s); /* rank 2 */
	eval_metrics_add(&m, 1, 5, &s);
	eval_score_query(ret, 5, a, 1, &s); /* rank 4 */
	eval_metrics_add(&m, 1, 5, &s);
	eval_score_query(ret, 5, q, 1, &s); /* not found */
	eval_metrics_add(&m, 1, 5, &s);
	eval_score_query(NULL, 0, NULL, 0, &s); /* no answer, empty */
	eval_metrics_add(&m, 0, 0, &s);
	eval_score_query(ret, 2, NULL, 0, &s); /* no answer, 2 hits */
	eval_metrics_add(&m, 0, 2, &s);

	CHECK_INT(m.answerable, 4);
	CHECK_INT(m.no_answer, 2);
	CHECK_INT(m.no_answer_empty, 1);
	CHECK_NEAR(eval_metric(&m, EVAL_R1), 1.0 / 4);
	CHECK_NEAR(eval_metric(&m, EVAL_R3), 2.0 / 4);
	CHECK_NEAR(eval_metric(&m, EVAL_R5), 3.0 / 4);
	CHECK_NEAR(eval_metric(&m, EVAL_R10), 3.0 / 4);
	CHECK_NEAR(eval_metric(&m, EVAL_MRR), (1 + 0.5 + 0.25 + 0) / 4);
	CHECK_NEAR(eval_metric(&m, EVAL_NDCG10),
		   (1 + gain(2) + gain(4) + 0) / 4);
	/* injection figures exist only where the hook's block was rendered */
	CHECK(eval_metric(&m, EVAL_INJECTION) < 0);
	CHECK(eval_metric(&m, EVAL_NOTHING_INJECTED) < 0);
	eval_metrics_add_hook(&m, 1, 2, 1);
	eval_metrics_add_hook(&m, 1, 3, 0);
	eval_metrics_add_hook(&m, 1, 0, 0);
	eval_metrics_add_hook(&m, 1, 1, 1);
	eval_metrics_add_hook(&m, 0, 0, 0);
	eval_metrics_add_hook(&m, 0, 1, 0);
	CHECK_NEAR(eval_metric(&m, EVAL_INJECTION), 2.0 / 4);
	CHECK_NEAR(eval_metric(&m, EVAL_NOTHING_INJECTED), 1.0 / 2);
	/* the blocks' size: an empty block counts in characters, not in
	 * the injected prompts */
	eval_metrics_add_block(&m, 2, 1, 500);
	eval_metrics_add_block(&m, 0, 0, 0);
	eval_metrics_add_block(&m, 1, 0, 300);
	CHECK(m.hook_prompts == 2);
	CHECK(m.hook_entries == 3);
	CHECK(m.hook_relevant == 1);
	CHECK(m.hook_chars == 800);
}

static void num4(double v, const char *want)
{
	struct sbuf sb = SBUF_INIT;

	eval_add_num4(&sb, v);
	CHECK_STR(sbuf_str(&sb), want);
	sbuf_release(&sb);
}

/* EVIDENCE-OF: issue eval -- JSON numbers are rounded to 4 decimals */
static void test_num4(void)
{
	num4(0, "0");
	num4(1, "1");
	num4(0.8, "0.8");
	num4(30.0 / 41.0, "0.7317");
	num4(0.00004, "0");
	num4(0.99996, "1");
	num4(12.3456789, "12.3457");
	num4(0.05, "0.05");
	num4(-0.25, "-0.25");
}

/* ---------------------------------------------------------- datasets */

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK_MSG(f != NULL, "cannot write %s", path);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void make_dir(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", test_tmpdir, name);
	mkdir(out, 0700);
}

/* Does directory dir hold no entry (the temporary stores are gone)? */
static int dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	for (e = readdir(d); e; e = readdir(d))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n == 0;
}

/*
 * Six rows, each on its own topic; the answerable questions use words that
 * appear in their answer row only. Row r6 holds a GitHub token.
 */
static const char corpus6[] =
	"{\"id\":\"r1\",\"title\":\"Postgres backups\",\"text\":\"Nightly "
	"postgres backups go to the glacier bucket with pgbackrest.\","
	"\"time\":\"2024-01-02\"}\n"
	"{\"id\":\"r2\",\"title\":\"Frontend bundler\",\"text\":\"The frontend "
	"bundler is esbuild; webpack was dropped.\",\"time\":\"\"}\n"
	"\n"
	"{\"id\":\"r3\",\"title\":\"Welsh translations\",\"text\":\"Welsh "
	"translations live in locale files reviewed by translators.\","
	"\"time\":\"2023-05-06\"}\n"
	"{\"id\":\"r4\",\"title\":\"Dependabot\",\"text\":\"Dependabot pull "
	"requests are merged weekly by the rota.\",\"time\":\"2023-07-08\"}\n"
	"{\"id\":\"r5\",\"title\":\"Kubernetes ingress\",\"text\":\"The ingress "
	"controller terminates TLS with certificates from letsencrypt.\","
	"\"time\":\"2022-01-01\"}\n"
	"{\"id\":\"r6\",\"title\":\"Deploy token\",\"text\":\"export "
	"GITHUB_TOKEN=ghp_Zr4kQ8mN2pX7vB1cL9tY6wE3sA5dF0gH8jK2 for the "
	"deploy job\",\"time\":\"2021-01-01\"}\n";

static const char queries4[] =
	"{\"id\":\"dev-1\",\"text\":\"pgbackrest glacier\",\"answers\":[\"r1\"],"
	"\"category\":\"ops\"}\n"
	"{\"id\":\"dev-2\",\"text\":\"esbuild webpack\",\"answers\":[\"r2\"],"
	"\"category\":\"web\"}\n"
	"{\"id\":\"test-3\",\"text\":\"letsencrypt certificates\","
	"\"answers\":[\"r5\"],\"category\":\"ops\"}\n"
	"{\"id\":\"test-4\",\"text\":\"sourdough starter hydration\","
	"\"answers\":[],\"category\":\"none\"}\n";

/* EVIDENCE-OF: SPEC 8 -- a lexically obvious dataset scores recall@1 = 1 */
static void test_end_to_end(void)
{
	char ds[600], tmp[600], err[512];
	struct eval_opts o;
	struct eval_report *r = NULL;
	struct sbuf sb = SBUF_INIT;
	size_t i;
	int rc;

	make_dir(ds, sizeof(ds), "eval-ds");
	make_dir(tmp, sizeof(tmp), "eval-tmp");
	put_file(ds, "corpus.jsonl", corpus6);
	put_file(ds, "queries.jsonl", queries4);
	memset(&o, 0, sizeof(o));
	o.tmpdir = tmp;
	o.hook = 1;
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (!r)
		return;
	CHECK_INT(r->corpus, 6);
	CHECK_INT(r->nq, 4);
	CHECK_INT(r->redacted, 1);
	CHECK_INT(r->stores, 1);
	CHECK_INT(r->unknown_answers, 0);
	CHECK_INT(r->all.answerable, 3);
	CHECK_INT(r->all.no_answer, 1);
	/* no word of the no-answer question is in the corpus */
	CHECK_INT(r->all.no_answer_empty, 1);
	CHECK_NEAR(eval_metric(&r->all, EVAL_R1), 1.0);
	CHECK_NEAR(eval_metric(&r->all, EVAL_MRR), 1.0);
	CHECK_NEAR(eval_metric(&r->all, EVAL_INJECTION), 1.0);
	CHECK_NEAR(eval_metric(&r->all, EVAL_NOTHING_INJECTED), 1.0);
	CHECK(r->floor_known);
	/* categories in order of first appearance */
	CHECK_INT(r->ncats, 3);
	if (r->ncats == 3) {
		CHECK_STR(r->cats[0].name, "ops");
		CHECK_INT(r->cats[0].m.answerable, 2);
		CHECK_STR(r->cats[1].name, "web");
		CHECK_STR(r->cats[2].name, "none");
		CHECK_INT(r->cats[2].m.no_answer, 1);
	}
	for (i = 0; i < r->nq; i++)
		if (r->q[i].nanswers)
			CHECK_INT(r->q[i].score.rank, 1);
	CHECK_MSG(dir_empty(tmp), "temporary store left in %s", tmp);

	eval_report_json(&sb, r, "tiny");
	CHECK(sb.err == CAIRN_OK);
	CHECK(strstr(sbuf_str(&sb), "\"recall@1\":1,") != NULL);
	CHECK(strstr(sbuf_str(&sb), "\"no_answer_empty\":1,") != NULL);
	CHECK(strstr(sbuf_str(&sb), "\"dataset\":\"tiny\"") != NULL);
	CHECK(strstr(sbuf_str(&sb), "\"none\":{\"recall@1\":null") != NULL);
	CHECK(strstr(sbuf_str(&sb), "\"redacted\":1,") != NULL);
	CHECK(strstr(sbuf_str(&sb), "\"injection_hit_rate\":1,"
			 "\"no_answer_nothing_injected\":1") != NULL);
	CHECK(strstr(sbuf_str(&sb), "\"hook\":{\"budget\":4000,\"k\":3}") !=
	      NULL);
	sbuf_release(&sb);
	/* the block's entries are the hook's: r1 for "pgbackrest glacier" */
	CHECK_INT(r->q[0].ninjected, 1);
	if (r->q[0].ninjected == 1)
		CHECK_STR(r->q[0].injected[0], "r1");
	CHECK_INT(r->q[3].ninjected, 0);
	eval_report_free(r);
	r = NULL;

	/*
	 * Negative control: the hook's budget counts. With 60 characters no
	 * entry fits, so nothing is injected although recall@1 stays 1 (a
	 * rank-based proxy would still say 1).
	 */
	o.hook_budget = 60;
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (r) {
		CHECK_NEAR(eval_metric(&r->all, EVAL_R1), 1.0);
		CHECK_NEAR(eval_metric(&r->all, EVAL_INJECTION), 0.0);
		eval_report_free(r);
		r = NULL;
	}
	o.hook_budget = 0;
	o.hook = 0;
	/* without the hook, no injection figure is claimed */
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (r) {
		CHECK(eval_metric(&r->all, EVAL_INJECTION) < 0);
		eval_report_json(&sb, r, "tiny");
		CHECK(strstr(sbuf_str(&sb), "\"injection_hit_rate\":null")
		      != NULL);
		sbuf_release(&sb);
		eval_report_free(r);
		r = NULL;
	}

	/* --split by id prefix */
	o.split = "dev";
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (r) {
		CHECK_INT(r->nq, 2);
		CHECK_STR(r->q[0].id, "dev-1");
		CHECK_STR(r->q[1].id, "dev-2");
	}
	eval_report_free(r);
	r = NULL;

	/* --split that matches nothing is an error */
	o.split = "holdout";
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_INT(rc, CAIRN_INVALID);
	CHECK(r == NULL);
	CHECK(strstr(err, "holdout") != NULL);
	CHECK_MSG(dir_empty(tmp), "temporary store left in %s", tmp);
}

/* EVIDENCE-OF: issue eval -- a "split" field wins over the id prefix */
static void test_split_field(void)
{
	char ds[600], tmp[600], err[512];
	struct eval_opts o;
	struct eval_report *r = NULL;
	int rc;

	make_dir(ds, sizeof(ds), "eval-split");
	make_dir(tmp, sizeof(tmp), "eval-split-tmp");
	put_file(ds, "corpus.jsonl", corpus6);
	put_file(ds, "queries.jsonl",
		 "{\"id\":\"dev-1\",\"split\":\"test\",\"text\":\"esbuild\","
		 "\"answers\":[\"r2\"],\"category\":\"a\"}\n"
		 "{\"id\":\"test-2\",\"split\":\"dev\",\"text\":\"glacier\","
		 "\"answers\":[\"r1\"],\"category\":\"a\"}\n"
		 "{\"id\":\"dev-3\",\"text\":\"ingress\",\"answers\":[\"r5\"],"
		 "\"category\":\"a\"}\n");
	memset(&o, 0, sizeof(o));
	o.tmpdir = tmp;
	o.split = "dev";
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (r) {
		CHECK_INT(r->nq, 2);
		CHECK_STR(r->q[0].id, "test-2");
		CHECK_STR(r->q[1].id, "dev-3");
	}
	eval_report_free(r);
}

/* EVIDENCE-OF: issue eval -- --per-group builds one store per group */
static void test_per_group(void)
{
	char ds[600], tmp[600], err[512];
	struct eval_opts o;
	struct eval_report *r = NULL;
	int rc;

	make_dir(ds, sizeof(ds), "eval-groups");
	make_dir(tmp, sizeof(tmp), "eval-groups-tmp");
	/* the same id in two groups is fine: they are separate stores */
	put_file(ds, "corpus.jsonl",
		 "{\"id\":\"t1\",\"group\":\"g1\",\"title\":\"\",\"text\":\"Alice "
		 "adopted a greyhound named Comet.\",\"time\":\"\"}\n"
		 "{\"id\":\"t2\",\"group\":\"g1\",\"title\":\"\",\"text\":\"Alice "
		 "paints watercolours on Sundays.\",\"time\":\"\"}\n"
		 "{\"id\":\"t1\",\"group\":\"g2\",\"title\":\"\",\"text\":\"Bob "
		 "repairs vintage motorcycles.\",\"time\":\"\"}\n"
		 "{\"id\":\"t2\",\"group\":\"g2\",\"title\":\"\",\"text\":\"Bob "
		 "grows chillies on his balcony.\",\"time\":\"\"}\n");
	put_file(ds, "queries.jsonl",
		 "{\"id\":\"q1\",\"group\":\"g1\",\"text\":\"greyhound Comet\","
		 "\"answers\":[\"t1\"],\"category\":\"c\"}\n"
		 "{\"id\":\"q2\",\"group\":\"g2\",\"text\":\"chillies balcony\","
		 "\"answers\":[\"t2\"],\"category\":\"c\"}\n"
		 "{\"id\":\"q3\",\"group\":\"g2\",\"text\":\"watercolours\","
		 "\"answers\":[],\"category\":\"n\"}\n");
	put_file(ds, "probes.jsonl",
		 "{\"id\":\"p1\",\"text\":\"tax return deadline\",\"answers\":[],"
		 "\"category\":\"probe\"}\n"
		 "{\"id\":\"p2\",\"group\":\"g1\",\"text\":\"chess openings\","
		 "\"category\":\"probe\"}\n");
	memset(&o, 0, sizeof(o));
	o.tmpdir = tmp;
	o.per_group = 1;
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (r) {
		CHECK_INT(r->stores, 2);
		CHECK_INT(r->corpus, 4);
		CHECK_INT(r->calibrated, 2);
		CHECK_INT(r->probes, 3); /* g1: p1 + p2, g2: p1 */
		CHECK_NEAR(eval_metric(&r->all, EVAL_R1), 1.0);
		/* g1's row about watercolours is not in g2's store */
		CHECK_INT(r->all.no_answer_empty, 1);
		CHECK_INT(r->unknown_answers, 0);
	}
	eval_report_free(r);
	r = NULL;
	CHECK_MSG(dir_empty(tmp), "temporary store left in %s", tmp);

	/* pooled, the duplicate id is an error naming its line */
	o.per_group = 0;
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK(rc != CAIRN_OK);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err, "corpus.jsonl:3:") != NULL, "err: %s", err);
	CHECK_MSG(dir_empty(tmp), "temporary store left in %s", tmp);
}

/* Run eval on a dataset made of these two files; expect failure. */
static void expect_error(const char *name, const char *corpus,
			 const char *queries, int want_rc, const char *want)
{
	char ds[600], tmp[700], err[512];
	struct eval_opts o;
	struct eval_report *r = NULL;
	int rc;

	make_dir(ds, sizeof(ds), name);
	snprintf(tmp, sizeof(tmp), "%s-tmp", ds);
	mkdir(tmp, 0700);
	if (corpus)
		put_file(ds, "corpus.jsonl", corpus);
	if (queries)
		put_file(ds, "queries.jsonl", queries);
	memset(&o, 0, sizeof(o));
	o.tmpdir = tmp;
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == want_rc, "%s: rc %d (%s), want %d", name, rc, err,
		  want_rc);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err, want) != NULL, "%s: \"%s\" lacks \"%s\"", name,
		  err, want);
	CHECK_MSG(dir_empty(tmp), "temporary store left in %s", tmp);
	eval_report_free(r);
}

/* EVIDENCE-OF: issue eval -- a malformed line is an error naming file:line */
static void test_errors(void)
{
	static const char q1[] =
		"{\"id\":\"q\",\"text\":\"glacier\",\"answers\":[\"r1\"],"
		"\"category\":\"c\"}\n";

	expect_error("eval-e1", NULL, q1, CAIRN_IO, "corpus.jsonl");
	expect_error("eval-e2", corpus6, NULL, CAIRN_IO, "queries.jsonl");
	expect_error("eval-e3",
		     "{\"id\":\"a\",\"text\":\"x\"}\n\n{\"id\":\"b\",\"text\":}\n",
		     q1, CAIRN_INVALID, "corpus.jsonl:3:");
	expect_error("eval-e4", "{\"id\":\"a\",\"text\":\"x\"}\n[1,2]\n", q1,
		     CAIRN_INVALID, "corpus.jsonl:2: expected a JSON object");
	expect_error("eval-e5", "{\"id\":\"a\"}\n", q1, CAIRN_INVALID,
		     "corpus.jsonl:1: missing \"text\"");
	expect_error("eval-e6", "{\"id\":7,\"text\":\"x\"}\n", q1,
		     CAIRN_INVALID, "corpus.jsonl:1: \"id\" must be a string");
	expect_error("eval-e7", corpus6,
		     "{\"id\":\"q\",\"text\":\"glacier\",\"answers\":[\"r1\"]}"
		     "\n{\"id\":\"q2\",\"text\":\"glacier\"}\n",
		     CAIRN_INVALID, "queries.jsonl:2: missing \"answers\"");
	expect_error("eval-e8", corpus6,
		     "{\"id\":\"q\",\"text\":\"x\",\"answers\":[1]}\n",
		     CAIRN_INVALID, "queries.jsonl:1: answer 1");
	expect_error("eval-e9", corpus6, "\n\n", CAIRN_INVALID,
		     "holds no query");
}

/* EVIDENCE-OF: issue eval -- a line over EVAL_MAX_LINE is refused */
static void test_long_line(void)
{
	char ds[600], tmp[600], path[700], err[512];
	struct eval_opts o;
	struct eval_report *r = NULL;
	FILE *f;
	size_t i;
	int rc;

	make_dir(ds, sizeof(ds), "eval-long");
	make_dir(tmp, sizeof(tmp), "eval-long-tmp");
	snprintf(path, sizeof(path), "%s/corpus.jsonl", ds);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"b\",\"text\":\"", f);
	for (i = 0; i < EVAL_MAX_LINE; i++)
		fputc('y', f);
	fputs("\"}\n", f);
	fclose(f);
	put_file(ds, "queries.jsonl",
		 "{\"id\":\"q\",\"text\":\"x\",\"answers\":[\"a\"]}\n");
	memset(&o, 0, sizeof(o));
	o.tmpdir = tmp;
	rc = eval_run(ds, &o, &r, err, sizeof(err));
	CHECK_INT(rc, CAIRN_TOOBIG);
	CHECK_MSG(strstr(err, "corpus.jsonl:2:") != NULL, "err: %s", err);
	eval_report_free(r);
}

/* ------------------------------------------------------ seeded workspace */

/* A section of ADR 1: about 300 characters, "bucket" in each. */
#define ADR1_SECTION(name, words)                                          \
	"## " name "\n\n" words "\n\nThe bucket keeps every nightly archive "   \
	"for ninety days, and the bucket policy forbids deletion by the "     \
	"application role. Restores are rehearsed each quarter from the "     \
	"bucket so the runbook stays honest and the team knows the steps.\n\n"

/* Longer than the 800-character chunk target: seeded as several chunks. */
static const char adr1[] =
	"# ADR001: Back up Postgres with pgbackrest\n\n"
	"Date: 2024-01-02\n\n"
	ADR1_SECTION("Status", "Accepted.")
	ADR1_SECTION("Context", "Postgres needs point in time recovery.")
	ADR1_SECTION("Decision", "We run pgbackrest into the glacier bucket.")
	ADR1_SECTION("Consequences", "Operators learn pgbackrest commands.");

static const char adr2[] =
	"# ADR002: Bundle the frontend with esbuild\n\n"
	"Date: 2024-02-03\n\n"
	"## Status\n\nAccepted\n\n"
	"## Decision\n\nThe frontend bundler is esbuild; webpack was dropped. "
	"Source maps are uploaded to a bucket.\n";

static const char adr3[] =
	"# ADR003: Welsh translations\n\n"
	"## Status\n\nProposed\n\n"
	"## Decision\n\nWelsh translations live in locale files reviewed by "
	"translators.\n";

#define P1 "docs/decisions/ADR001-postgres-backups.md"
#define P2 "docs/decisions/ADR002-esbuild.md"
#define P3 "docs/decisions/ADR003-welsh.md"

static const char ws_queries[] =
	"{\"id\":\"q1\",\"text\":\"pgbackrest glacier\",\"answers\":[\"" P1
	"\"],\"category\":\"en\"}\n"
	"{\"id\":\"q2\",\"text\":\"which bundler replaced webpack\","
	"\"answers\":[\"" P2 "\"],\"category\":\"en\"}\n"
	"{\"id\":\"q3\",\"text\":\"Welsh locale translators\",\"answers\":[\""
	P3 "\"],\"category\":\"en\"}\n"
	"{\"id\":\"q4\",\"text\":\"guitar tuning pegs\",\"answers\":[],"
	"\"category\":\"none\"}\n"
	"{\"id\":\"q5\",\"text\":\"bucket\",\"answers\":[\"" P2 "\"],"
	"\"category\":\"dedup\"}\n";

/* The index of the query with this id in r, or r->nq. */
static size_t find_query(const struct eval_report *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->nq; i++)
		if (strcmp(r->q[i].id, id) == 0)
			break;
	return i;
}

/* EVIDENCE-OF: eval seeds a workspace's docs/, answers are paths */
static void test_seeded_workspace(void)
{
	char ws[600], docs[700], dec[800], tmp[600], err[512];
	struct eval_opts o;
	struct eval_report *r = NULL;
	struct sbuf sb = SBUF_INIT;
	size_t i, k;
	int rc;

	make_dir(ws, sizeof(ws), "eval-ws");
	make_dir(tmp, sizeof(tmp), "eval-ws-tmp");
	snprintf(docs, sizeof(docs), "%s/docs", ws);
	mkdir(docs, 0700);
	snprintf(dec, sizeof(dec), "%s/decisions", docs);
	mkdir(dec, 0700);
	put_file(dec, "ADR001-postgres-backups.md", adr1);
	put_file(dec, "ADR002-esbuild.md", adr2);
	put_file(dec, "ADR003-welsh.md", adr3);
	put_file(dec, "README.md", "# Decisions\n\nAn index page.\n");
	put_file(ws, "queries.jsonl", ws_queries);
	put_file(ws, "probes.jsonl",
		 "{\"id\":\"p1\",\"text\":\"sourdough starter hydration\"}\n");

	/* no corpus.jsonl, a docs/ folder: seeded without being asked */
	memset(&o, 0, sizeof(o));
	o.tmpdir = tmp;
	rc = eval_run(ws, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (!r)
		return;
	CHECK(r->seeded);
	CHECK_INT(r->seed_files, 3); /* README.md is an index page */
	CHECK_MSG(r->seed_records > 3, "records %zu", r->seed_records);
	CHECK_INT(r->corpus, 3);
	CHECK_INT(r->unknown_answers, 0);
	CHECK(r->seed_s > 0);
	i = find_query(r, "q1");
	if (i < r->nq) {
		CHECK_INT(r->q[i].score.rank, 1);
		CHECK(r->q[i].nreturned >= 1);
		if (r->q[i].nreturned >= 1)
			CHECK_STR(r->q[i].returned[0], P1);
	}
	CHECK_INT(r->q[find_query(r, "q2")].score.rank, 1);
	/* a Proposed ADR is unverified: still recalled */
	CHECK_INT(r->q[find_query(r, "q3")].score.rank, 1);
	CHECK_INT(r->all.no_answer_empty, 1);
	CHECK_MSG(dir_empty(tmp), "temporary store left in %s", tmp);
	eval_report_json(&sb, r, "ws");
	CHECK(sb.err == CAIRN_OK);
	CHECK(strstr(sbuf_str(&sb), "\"seed\":{\"files\":3,\"records\":") !=
	      NULL);
	sbuf_release(&sb);
	eval_report_free(r);
	r = NULL;

	/*
	 * Chunk de-duplication: "bucket" is in every chunk of ADR001 and in
	 * ADR002 once. Recall returns several chunks of ADR001; each file is
	 * kept once, at its best chunk, and ADR002's rank counts files.
	 */
	o.no_floor = 1;
	rc = eval_run(ws, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (!r)
		return;
	i = find_query(r, "q5");
	CHECK(i < r->nq);
	if (i < r->nq) {
		const struct eval_qresult *q = &r->q[i];

		CHECK_MSG(q->nhits >= 3, "hits %zu", q->nhits);
		CHECK_INT(q->nreturned, 2);
		for (k = 0; k + 1 < q->nreturned; k++)
			CHECK(strcmp(q->returned[k], q->returned[k + 1]) != 0);
		if (q->nreturned == 2) {
			CHECK_STR(q->returned[0], P1);
			CHECK_STR(q->returned[1], P2);
		}
		CHECK_INT(q->score.rank, 2);
		CHECK_NEAR(q->score.rr, 0.5);
	}
	eval_report_free(r);
	r = NULL;

	/* corpus.jsonl present: used, unless --seed */
	put_file(ws, "corpus.jsonl",
		 "{\"id\":\"" P1 "\",\"text\":\"pgbackrest glacier\"}\n");
	o.no_floor = 0;
	rc = eval_run(ws, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (r) {
		CHECK(!r->seeded);
		CHECK_INT(r->corpus, 1);
		CHECK_INT(r->unknown_answers, 3);
	}
	eval_report_free(r);
	r = NULL;
	o.seed = 1;
	rc = eval_run(ws, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (r) {
		CHECK(r->seeded);
		CHECK_INT(r->seed_files, 3);
	}
	eval_report_free(r);
	r = NULL;

	/* --seed with --per-group is refused; --seed without docs/ too */
	o.per_group = 1;
	rc = eval_run(ws, &o, &r, err, sizeof(err));
	CHECK_INT(rc, CAIRN_INVALID);
	CHECK(r == NULL);
	o.per_group = 0;
	rc = eval_run(tmp, &o, &r, err, sizeof(err));
	CHECK_INT(rc, CAIRN_IO);
	CHECK_MSG(strstr(err, "nothing to seed") != NULL, "err: %s", err);
	CHECK(r == NULL);
	CHECK_MSG(dir_empty(tmp), "temporary store left in %s", tmp);
}

/* ------------------------------------------------------ stale-hit rate */

/* EVIDENCE-OF: which records count as stale, and the rate */
/*
 * The AUROC of the answerability (answerable above no-answer,
 * ties half) and the sweep of floors, on a report built by hand.
 */
static void test_auroc_sweep(void)
{
	static char a1[] = "x", a2[] = "y", r1[] = "x", r2[] = "z", r3[] = "y";
	static char cat_a[] = "a", cat_b[] = "b", cat_n[] = "none";
	char *ans1[] = { a1 }, *ans2[] = { a2 };
	char *ret1[] = { r2, r1 }, *ret2[] = { r3 }, *ret3[] = { r2 };
	double s1[] = { 0.5, 0.3 }, s2[] = { 0.2 }, s3[] = { 0.4 };
	struct eval_qresult q[3];
	struct eval_report r;
	struct eval_point p[3];

	memset(q, 0, sizeof(q));
	memset(&r, 0, sizeof(r));
	/* answerable, best 0.5: its answer second, at 0.3 */
	q[0].category = cat_a;
	q[0].answers = ans1;
	q[0].nanswers = 1;
	q[0].returned = ret1;
	q[0].ret_answer = s1;
	q[0].nreturned = 2;
	q[0].answer = 0.5;
	/* answerable, best 0.2 */
	q[1].category = cat_b;
	q[1].answers = ans2;
	q[1].nanswers = 1;
	q[1].returned = ret2;
	q[1].ret_answer = s2;
	q[1].nreturned = 1;
	q[1].answer = 0.2;
	/* no answer, best 0.4 */
	q[2].category = cat_n;
	q[2].returned = ret3;
	q[2].ret_answer = s3;
	q[2].nreturned = 1;
	q[2].answer = 0.4;
	r.q = q;
	r.nq = 3;
	CHECK_NEAR(eval_auroc(&r, NULL), 0.5); /* 0.5 > 0.4, 0.2 < 0.4 */
	CHECK_NEAR(eval_auroc(&r, "a"), 1.0);
	CHECK_NEAR(eval_auroc(&r, "b"), 0.0);
	CHECK(eval_auroc(&r, "none") < 0); /* no answerable query */
	q[1].answer = 0.4;
	CHECK_NEAR(eval_auroc(&r, "b"), 0.5); /* a tie counts half */
	/* floors 0, 0.5, 1 */
	CHECK_INT(eval_sweep(&r, p, 3), 0);
	CHECK_NEAR(p[0].floor, 0);
	CHECK_NEAR(p[0].r3, 1.0);
	CHECK_NEAR(p[0].no_answer_empty, 0);
	CHECK_NEAR(p[1].floor, 0.5);
	CHECK_NEAR(p[1].r3, 0); /* the answers (0.3, 0.2) are dropped */
	CHECK_NEAR(p[1].answerable_empty, 1.0); /* at the floor is dropped too */
	CHECK_NEAR(p[1].no_answer_empty, 1.0);
	CHECK_NEAR(p[2].answerable_empty, 1.0);
	/* as recall: a question above the floor keeps its hits above 0.12 */
	q[1].answer = 0.2;
	s1[1] = 0.13;
	CHECK_INT(eval_sweep(&r, p, 3), 0);
	CHECK_NEAR(p[0].r3, 1.0);
	{
		struct eval_point p5[5]; /* floors 0, 0.25, 0.5, 0.75, 1 */

		CHECK_INT(eval_sweep(&r, p5, 5), 0);
		CHECK_NEAR(p5[1].r3, 0.5); /* x at 0.13 kept, y (0.2) empty */
		CHECK_NEAR(p5[1].no_answer_empty, 0);
	}
	/* a run with the floor in force cannot be swept */
	r.floor_known = 1;
	CHECK_INT(eval_sweep(&r, p, 3), -1);
}

static void test_stale_rule(void)
{
	cairn_record r;
	struct eval_metrics m;
	static const char *const live[] = { "accepted", "unverified" };
	static const char *const dead[] = { "candidate", "stale",
					    "superseded", "historical",
					    "false", "retired", "rejected" };
	size_t i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		r.status = (char *)live[i];
		CHECK_MSG(!eval_record_stale(&r), "%s", live[i]);
	}
	for (i = 0; i < sizeof(dead) / sizeof(dead[0]); i++) {
		r.status = (char *)dead[i];
		CHECK_MSG(eval_record_stale(&r), "%s", dead[i]);
	}
	/* accepted but replaced by another record: stale */
	r.status = (char *)"accepted";
	r.superseded_by = (char *)"r2";
	CHECK(eval_record_stale(&r));
	r.superseded_by = (char *)"";
	CHECK(!eval_record_stale(&r));
	/* the rate is over every query, answerable or not */
	memset(&m, 0, sizeof(m));
	CHECK(eval_metric(&m, EVAL_STALE_HIT) < 0);
	m.answerable = 3;
	m.no_answer = 1;
	eval_metrics_add_stale(&m, 0);
	eval_metrics_add_stale(&m, 2);
	eval_metrics_add_stale(&m, 0);
	eval_metrics_add_stale(&m, 0);
	CHECK_INT(m.stale_queries, 1);
	CHECK_INT(m.stale_hits, 2);
	CHECK_NEAR(eval_metric(&m, EVAL_STALE_HIT), 1.0 / 4);
}

static const char adr_old[] =
	"# ADR010: Sessions in memcached\n\n"
	"Date: 2021-03-04\n\n"
	"## Status\n\nSuperseded by [ADR011](ADR011-valkey-sessions.md)\n\n"
	"## Decision\n\nUser sessions are kept in memcached on the cache "
	"cluster; a lost session means a new login.\n";

static const char adr_new[] =
	"# ADR011: Sessions in Valkey\n\n"
	"Date: 2024-05-06\n\n"
	"## Status\n\nAccepted\n\n"
	"## Decision\n\nUser sessions are kept in Valkey with persistence; "
	"memcached on the cache cluster is retired for sessions.\n";

#define PNEW "docs/decisions/ADR011-valkey-sessions.md"

static const char stale_queries[] =
	"{\"id\":\"s1\",\"text\":\"where are user sessions kept, memcached "
	"cache cluster\",\"answers\":[\"" PNEW "\"]}\n"
	"{\"id\":\"s2\",\"text\":\"lost session new login\",\"answers\":[]}\n";

/*
 * EVIDENCE-OF: the stale-hit rate is 0 by default, and it is
 * not 0 by construction: the same run with the status filter removed
 * (statuses "all") returns the superseded ADR and the rate says so.
 */
static void test_stale_hit_rate(void)
{
	char ws[600], docs[700], dec[800], tmp[600], err[512];
	struct eval_opts o;
	struct eval_report *r = NULL;
	struct sbuf sb = SBUF_INIT;
	size_t i;
	int rc;

	make_dir(ws, sizeof(ws), "eval-stale");
	make_dir(tmp, sizeof(tmp), "eval-stale-tmp");
	snprintf(docs, sizeof(docs), "%s/docs", ws);
	mkdir(docs, 0700);
	snprintf(dec, sizeof(dec), "%s/decisions", docs);
	mkdir(dec, 0700);
	put_file(dec, "ADR010-memcached-sessions.md", adr_old);
	put_file(dec, "ADR011-valkey-sessions.md", adr_new);
	put_file(ws, "queries.jsonl", stale_queries);

	memset(&o, 0, sizeof(o));
	o.tmpdir = tmp;
	o.no_floor = 1; /* every matching record, unless the status filter */
	rc = eval_run(ws, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (!r)
		return;
	/* the superseded ADR is in the store, and default recall skips it */
	CHECK_MSG(r->stale_records >= 1, "stale records %zu",
		  r->stale_records);
	CHECK_INT(r->all.stale_hits, 0);
	CHECK_INT(r->all.stale_queries, 0);
	CHECK_NEAR(eval_metric(&r->all, EVAL_STALE_HIT), 0.0);
	CHECK_INT(r->q[0].score.rank, 1);
	eval_report_json(&sb, r, "stale");
	CHECK_MSG(strstr(sbuf_str(&sb), "\"stale_hit_rate\":0,") != NULL,
		  "%s", sbuf_str(&sb));
	CHECK(strstr(sbuf_str(&sb), "\"stale_records\":") != NULL);
	sbuf_release(&sb);
	eval_report_free(r);
	r = NULL;

	/* negative control: without the filter the superseded ADR comes back */
	o.statuses = "all";
	rc = eval_run(ws, &o, &r, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "eval_run: %s", err);
	if (!r)
		return;
	CHECK_MSG(r->all.stale_hits >= 1, "stale hits %zu", r->all.stale_hits);
	CHECK(r->all.stale_queries >= 1);
	CHECK(eval_metric(&r->all, EVAL_STALE_HIT) > 0);
	for (i = 0; i < r->nq; i++)
		if (strcmp(r->q[i].id, "s1") == 0)
			CHECK_MSG(r->q[i].stale >= 1, "s1 stale %zu",
				  r->q[i].stale);
	eval_report_free(r);
}

void unit_eval(void)
{
	RUN(test_score_query);
	RUN(test_metrics);
	RUN(test_num4);
	RUN(test_end_to_end);
	RUN(test_split_field);
	RUN(test_per_group);
	RUN(test_errors);
	RUN(test_long_line);
	RUN(test_seeded_workspace);
	RUN(test_auroc_sweep);
	RUN(test_stale_rule);
	RUN(test_stale_hit_rate);
}
