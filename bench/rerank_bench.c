/*
 * rerank_bench.c -- latency of the cross-encoder rerank (SPEC 5.2 step 6,
 * src/recall/rerank.c): what `cairn recall --rerank` adds to a recall that returns
 * 10 hits, on a bge-reranker-base-shaped random-weight model.
 *
 * Layer: a program on libcairn's public API (cairn.h). Its model comes from
 * tests/tools/make_model.py (see Usage); the weights are random, so the
 * scores mean nothing, but the work per token is a real model's.
 *
 * Usage: rerank_bench --model FILE.gguf [--runs N] [--words W]
 *                     [--out FILE]
 *
 * A temporary store gets 12 records of W words each (default 120, about
 * one ADR section), every word from the test model's vocabulary so that a
 * word is one token (a real reranker's vocabulary gives ~1.3 tokens per
 * English word), and all sharing the question's words so that recall
 * returns 10 of them. Then, alternating in the same run, N times each
 * (default 5) after one untimed call of each:
 *   baseline: cairn_recall(k 10, rerank off);
 *   rerank:   cairn_recall(k 10, rerank on with --model).
 * Reported: p50 / min / max milliseconds of both, the p50 of the rerank
 * step alone (cairn_result.rerank_ms: tokenise + run the 10 pairs), the
 * model load of the first call (rerank_load_ms), the ratio of the p50s and
 * the load average before and after (the machine may be shared).
 * JSON to --out (default bench/results/rerank.json).
 *
 * The model (bge-reranker-base is XLM-RoBERTa base: 12 layers, 768 wide,
 * 12 heads, 3072 feed-forward, 250002 tokens, 512 positions + 2):
 *   /usr/bin/python3 tests/tools/make_model.py build/rerank-base.gguf \
 *     --family xlmr --pool rank --types f16 --embd 768 --layers 12 \
 *     --heads 12 --ff 3072 --ctx 514 --vocab 250002
 *
 * Build against a build's library (bench/run does not build it yet):
 *   P="sqlite3 libutf8proc opencc libcrypto md4c yaml-0.1 openblas libcurl"
 *   cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc $(pkg-config --cflags $P) \
 *     -o build/rerank_bench bench/rerank_bench.c bench/bench_util.c \
 *     build/libcairn.a $(pkg-config --libs $P) -lstemmer -lm -lpthread
 *   build/rerank_bench --model build/rerank-base.gguf
 *
 * Must never: report a ratio from runs whose results differ in the records
 * they hold (checked: the same ids, whatever the order), or write outside
 * --out and its temporary store.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "cairn.h"

#define N_RECS 12
#define MAX_RUNS 100

/* Words of the XLM-R test vocabulary (tests/tools/make_model.py). */
static const char *const words[] = {
	"the", "of", "and", "to", "a", "in", "is", "it", "that", "for",
	"on", "was", "with", "as", "be", "by", "this", "are", "hello",
	"world", "memory", "agent", "note", "fox", "dog", "quick", "brown",
	"jumps", "over", "lazy", "search", "query",
};
#define QUESTION "quick brown fox search memory"

/* The 1-minute load average (other work on the machine), or -1. */
static double p50(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One recall; its ids sorted into ids (for the same-records check). */
static int one(cairn_db *db, int rerank, const char *model, double *ms,
	       double *rr_ms, double *load_ms, char ids[][20], size_t *n)
{
	cairn_recall_opts o;
	cairn_result *res = NULL;
	double t0;
	size_t i, j;
	int rc;

	memset(&o, 0, sizeof(o));
	o.k = 10;
	o.no_floor = 1;
	o.no_receipt = 1;
	o.rerank = rerank;
	o.rerank_model = model;
	t0 = bench_now_s();
	rc = cairn_recall(db, QUESTION, &o, &res);
	*ms = (bench_now_s() - t0) * 1e3;
	if (rc) {
		fprintf(stderr, "rerank_bench: recall: %s\n", cairn_errmsg(db));
		return rc;
	}
	if (rerank > 0 && !res->reranked) {
		fprintf(stderr, "rerank_bench: the rerank did not run\n");
		cairn_result_free(res);
		return 1;
	}
	*rr_ms = res->rerank_ms;
	*load_ms = res->rerank_load_ms;
	*n = res->n;
	for (i = 0; i < res->n && i < 10; i++)
		snprintf(ids[i], 20, "%s", res->hits[i].rec->id);
	for (i = 1; i < *n; i++) /* insertion sort: order does not matter */
		for (j = i; j > 0 && strcmp(ids[j - 1], ids[j]) > 0; j--) {
			char t[20];

			memcpy(t, ids[j], 20);
			memcpy(ids[j], ids[j - 1], 20);
			memcpy(ids[j - 1], t, 20);
		}
	cairn_result_free(res);
	return 0;
}

int main(int argc, char **argv)
{
	const char *model = NULL, *out = "bench/results/rerank.json";
	int runs = 5, nwords = 120, i, rc = 1;
	char tmpl[] = "/tmp/cairn-rerank-bench-XXXXXX", dir[600], cpu[256];
	double base[MAX_RUNS], rr[MAX_RUNS], step[MAX_RUNS], load0 = 0, d;
	double la0 = bench_loadavg(), la1;
	char ids_a[10][20], ids_b[10][20];
	size_t na = 0, nb = 0, w, r;
	cairn_open_opts oo;
	cairn_db *db = NULL;
	unsigned lcg = 12345;
	FILE *f;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
			model = argv[++i];
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--words") == 0 && i + 1 < argc)
			nwords = atoi(argv[++i]);
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out = argv[++i];
		else {
			fprintf(stderr, "usage: rerank_bench --model FILE.gguf "
					"[--runs N] [--words W] [--out FILE]\n");
			return 2;
		}
	}
	if (!model || runs < 1 || runs > MAX_RUNS || nwords < 5 ||
	    nwords > 2000) {
		fprintf(stderr, "rerank_bench: --model needed; --runs 1..%d, "
				"--words 5..2000\n",
			MAX_RUNS);
		return 2;
	}
	if (!mkdtemp(tmpl)) {
		perror("rerank_bench: mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/.cairn", tmpl);
	memset(&oo, 0, sizeof(oo));
	oo.create = 1;
	oo.no_global = 1;
	if (cairn_db_open(dir, &oo, &db) != CAIRN_OK) {
		fprintf(stderr, "rerank_bench: open: %s\n", cairn_errmsg(db));
		goto out;
	}
	for (r = 0; r < N_RECS; r++) {
		char body[20000], title[64];
		size_t len = 0;
		cairn_record rec;

		/* the question's words first, then words from a fixed LCG */
		len += (size_t)snprintf(body, sizeof(body), "%s", QUESTION);
		for (w = 5; (int)w < nwords && len + 16 < sizeof(body); w++) {
			lcg = lcg * 1103515245u + 12345u;
			len += (size_t)snprintf(body + len, sizeof(body) - len,
						" %s",
						words[(lcg >> 16) %
						      (sizeof(words) /
						       sizeof(words[0]))]);
		}
		snprintf(title, sizeof(title), "note %zu about the fox", r);
		memset(&rec, 0, sizeof(rec));
		rec.kind = (char *)"note";
		rec.title = title;
		rec.body = body;
		rec.confidence = -1;
		if (cairn_record_write(db, &rec, 0, NULL) != CAIRN_OK) {
			fprintf(stderr, "rerank_bench: write: %s\n",
				cairn_errmsg(db));
			goto out;
		}
	}
	/* untimed: the first rerank loads the model (its time is kept) */
	if (one(db, -1, NULL, &d, &d, &d, ids_a, &na) ||
	    one(db, 1, model, &d, &d, &load0, ids_b, &nb))
		goto out;
	for (i = 0; i < runs; i++) {
		if (one(db, -1, NULL, &base[i], &d, &d, ids_a, &na) ||
		    one(db, 1, model, &rr[i], &step[i], &d, ids_b, &nb))
			goto out;
		if (na != 10 || na != nb ||
		    memcmp(ids_a, ids_b, sizeof(ids_a)) != 0) {
			fprintf(stderr, "rerank_bench: the two recalls hold "
					"different records (%zu, %zu)\n",
				na, nb);
			goto out;
		}
	}
	la1 = bench_loadavg();
	bench_cpu_model(cpu, sizeof(cpu));
	{
		double bmin = base[0], bmax = base[0], rmin = rr[0],
		       rmax = rr[0], pb, pr, ps;

		for (i = 1; i < runs; i++) {
			bmin = base[i] < bmin ? base[i] : bmin;
			bmax = base[i] > bmax ? base[i] : bmax;
			rmin = rr[i] < rmin ? rr[i] : rmin;
			rmax = rr[i] > rmax ? rr[i] : rmax;
		}
		pb = p50(base, runs);
		pr = p50(rr, runs);
		ps = p50(step, runs);
		printf("rerank of 10 hits (%d words each), %d runs, %s\n",
		       nwords, runs, cpu);
		printf("  baseline recall (no rerank): p50 %.1f ms (%.1f..%.1f)\n",
		       pb, bmin, bmax);
		printf("  recall + rerank:             p50 %.1f ms (%.1f..%.1f)\n",
		       pr, rmin, rmax);
		printf("  rerank step alone:           p50 %.1f ms; model "
		       "load %.1f ms (first call only)\n",
		       ps, load0);
		printf("  ratio recall+rerank / recall: %.1f\n",
		       pb > 0 ? pr / pb : 0.0);
		printf("  load average %.2f before, %.2f after (%ld cores)\n",
		       la0, la1, sysconf(_SC_NPROCESSORS_ONLN));
		f = fopen(out, "w");
		if (!f) {
			perror("rerank_bench: --out");
			goto out;
		}
		fprintf(f, "{\"benchmark\":\"rerank\",\"cpu\":");
		bench_json_str(f, cpu);
		fprintf(f, ",\"hits\":10,\"words_per_record\":%d,\"runs\":%d,"
			   "\"baseline_p50_ms\":%.3f,\"baseline_min_ms\":%.3f,"
			   "\"baseline_max_ms\":%.3f,\"rerank_p50_ms\":%.3f,"
			   "\"rerank_min_ms\":%.3f,\"rerank_max_ms\":%.3f,"
			   "\"rerank_step_p50_ms\":%.3f,\"model_load_ms\":%.3f,"
			   "\"ratio\":%.3f,\"cores\":%ld,\"loadavg_before\":%.2f,"
			   "\"loadavg_after\":%.2f}\n",
			nwords, runs, pb, bmin, bmax, pr, rmin, rmax, ps, load0,
			pb > 0 ? pr / pb : 0.0, sysconf(_SC_NPROCESSORS_ONLN),
			la0, la1);
		fclose(f);
		printf("results: %s\n", out);
	}
	rc = 0;
out:
	cairn_db_close(db);
	nftw(tmpl, bench_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
