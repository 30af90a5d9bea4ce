/*
 * oracle_bench.c -- embedding throughput of cairn's BERT runtime
 * (src/model/bert.c) against llama.cpp's (node-llama-cpp's prebuilt libllama,
 * through its C API) on the same GGUF files, the same sequences and the
 * same thread count, in one run.
 *
 * Layer: a program on src/model/bert.h and tests/oracle/llama_run.h. Built and
 * run by bench/oracle_bench (make oracle), which writes the models.
 *
 * Usage: oracle_bench LIBDIR [--out FILE] [--threads N] [--seconds S]
 *                    NAME=MODEL.gguf...
 *
 * For each model and each length L in 16, 32, 128 tokens: 64 sequences of
 * L ids ([CLS]/<s>, ids from a fixed LCG over the non-special rows,
 * [SEP]/</s>), cycled through, timed for at least --seconds (default 2)
 * after one untimed call, in three runs, each in a child process of its
 * own (no thread pool of one engine spins while the other runs):
 *   cairn         bert_embed_ids, 16 sequences per call (packed)
 *   llama         llama_encode of 16 sequences per call (one batch, seq
 *                 ids 0..15) + llama_get_embeddings_seq
 *   llama-single  one sequence per llama_encode (what node-llama-cpp's
 *                 JS embedding call does)
 * sequences/s and tokens/s each; ratio = cairn / the faster llama run.
 * The first call's vectors of the three runs must agree (min cosine
 * reported): a fast wrong answer shows there.
 * JSON to --out (default bench/results/embed-vs-llama.json), with the
 * load average at the start and the end (a warning when it exceeded the
 * core count: other processes shared the CPUs).
 *
 * Must never: compare runs that embedded different sequences or used
 * different thread counts, or write outside --out.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "bert.h"
#include "cairn.h"
#include "llama_run.h"
#include "vocab.h"

#define PER_CALL 16
#define N_SEQS 64
#define MAX_MODELS 8

static const size_t LENGTHS[] = { 16, 32, 128 };
#define N_LEN (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

enum { RUN_CAIRN, RUN_LLAMA, RUN_LLAMA1, N_RUNS };
static const char *const RUN_NAME[N_RUNS] = { "cairn", "llama",
					      "llama-single" };

struct result {
	double seqs_s[N_LEN];
	int ok;
	char err[256];
};

static int32_t *seqs[N_LEN][N_SEQS];

static void make_seqs(int32_t cls, int32_t sep, int32_t lo, int32_t hi)
{
	uint64_t x = 0x2545F4914F6CDD1DULL;

	for (size_t l = 0; l < N_LEN; l++)
		for (size_t s = 0; s < N_SEQS; s++) {
			size_t L = LENGTHS[l];
			int32_t *q = malloc(L * sizeof(int32_t));
			if (!q)
				exit(2);
			q[0] = cls;
			for (size_t i = 1; i + 1 < L; i++) {
				x = x * 6364136223846793005ULL +
				    1442695040888963407ULL;
				q[i] = lo + (int32_t)((x >> 33) %
						      (uint64_t)(hi - lo));
			}
			q[L - 1] = sep;
			seqs[l][s] = q;
		}
}

/* One run in this (child) process: writes the result and the first
 * call's vectors (PER_CALL * dim floats per length) to fd. */
static void child(int run, const char *lib, const char *path, int threads,
		  double seconds, int dim, int fd)
{
	struct result r;
	struct bert_model *bm = NULL;
	struct ll_embedder *le = NULL;
	struct bert_opts bo = { -1, threads, 0 };
	float *vec = calloc((size_t)PER_CALL * (size_t)dim, sizeof(float));
	float *first = calloc(N_LEN * PER_CALL * (size_t)dim, sizeof(float));
	int per = run == RUN_LLAMA1 ? 1 : PER_CALL;

	memset(&r, 0, sizeof(r));
	if (!vec || !first)
		exit(2);
	if (run == RUN_CAIRN) {
		if (bert_load(path, &bo, &bm, r.err, sizeof(r.err)) != CAIRN_OK)
			goto out;
	} else {
		if (ll_init(lib, r.err, sizeof(r.err)) != 0)
			goto out;
		le = ll_open(path, LL_POOL_UNSPECIFIED, threads, per, 128,
			     r.err, sizeof(r.err));
		if (!le)
			goto out;
	}
	for (size_t l = 0; l < N_LEN; l++) {
		size_t lens[PER_CALL], done = 0, calls = 0;
		const int32_t *const *base = (const int32_t *const *)seqs[l];
		double t0 = 0;

		for (size_t i = 0; i < PER_CALL; i++)
			lens[i] = LENGTHS[l];
		/* call 0 untimed (its vectors are kept), then time */
		for (;;) {
			size_t s0 = (calls * (size_t)per) % N_SEQS;
			int rc;

			if (run == RUN_CAIRN)
				rc = bert_embed_ids(bm, base + s0, lens,
						    (size_t)per, vec, r.err,
						    sizeof(r.err)) == CAIRN_OK
					     ? 0
					     : -1;
			else
				rc = ll_embed_ids(le, base + s0, lens,
						  (size_t)per, vec, r.err,
						  sizeof(r.err));
			if (rc != 0)
				goto out;
			if (calls * (size_t)per < PER_CALL)
				memcpy(first + (l * PER_CALL +
						calls * (size_t)per) *
						       (size_t)dim,
				       vec, (size_t)per * (size_t)dim *
						    sizeof(float));
			calls++;
			if (calls * (size_t)per == PER_CALL) {
				t0 = bench_now_s();
				done = 0;
				continue;
			}
			if (calls * (size_t)per > PER_CALL) {
				done += (size_t)per;
				double dt = bench_now_s() - t0;
				if (dt >= seconds) {
					r.seqs_s[l] = (double)done / dt;
					break;
				}
			}
		}
	}
	r.ok = 1;
out:
	if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r) ||
	    write(fd, first, N_LEN * PER_CALL * (size_t)dim * sizeof(float)) < 0)
		_exit(2);
	_exit(0);
}

static int run_child(int run, const char *lib, const char *path,
		     int threads, double seconds, int dim, struct result *r,
		     float *first)
{
	int fds[2];
	pid_t pid;
	size_t want = N_LEN * PER_CALL * (size_t)dim * sizeof(float), got = 0;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[0]);
		child(run, lib, path, threads, seconds, dim, fds[1]);
	}
	close(fds[1]);
	memset(r, 0, sizeof(*r));
	if (read(fds[0], r, sizeof(*r)) != (ssize_t)sizeof(*r)) {
		snprintf(r->err, sizeof(r->err), "the %s run died",
			 RUN_NAME[run]);
		r->ok = 0;
	}
	while (r->ok && got < want) {
		ssize_t k = read(fds[0], (char *)first + got, want - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fds[0]);
	waitpid(pid, NULL, 0);
	if (r->ok && got < want) {
		snprintf(r->err, sizeof(r->err), "short read from %s",
			 RUN_NAME[run]);
		r->ok = 0;
	}
	return r->ok ? 0 : -1;
}

static double min_cosine(const float *a, const float *b, size_t n, int dim)
{
	double worst = 1.0;

	for (size_t s = 0; s < n; s++) {
		double ab = 0, aa = 0, bb = 0;
		for (int i = 0; i < dim; i++) {
			double x = a[s * (size_t)dim + (size_t)i];
			double y = b[s * (size_t)dim + (size_t)i];
			ab += x * y;
			aa += x * x;
			bb += y * y;
		}
		double c = aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
		if (c < worst)
			worst = c;
	}
	return worst;
}

int main(int argc, char **argv)
{
	const char *out = "bench/results/embed-vs-llama.json", *lib;
	int threads = 2, nm = 0;
	double seconds = 2.0;
	const char *names[MAX_MODELS], *paths[MAX_MODELS];
	char cpu[256], err[512];
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: oracle_bench LIBDIR [--out FILE] "
			"[--threads N] [--seconds S] NAME=MODEL.gguf...\n");
		return 2;
	}
	lib = argv[1];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (strchr(argv[i], '=') && nm < MAX_MODELS) {
			char *eq = strchr(argv[i], '=');
			*eq = 0;
			names[nm] = argv[i];
			paths[nm++] = eq + 1;
		} else {
			fprintf(stderr, "oracle_bench: bad argument %s\n",
				argv[i]);
			return 2;
		}
	}
	if (threads < 1 || nm == 0 || !(seconds > 0)) {
		fprintf(stderr, "oracle_bench: need threads >= 1, seconds > 0 "
			"and a model\n");
		return 2;
	}
	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "oracle_bench: cannot write %s\n", out);
		return 2;
	}
	bench_cpu_model(cpu, sizeof(cpu));
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	fprintf(f, "{\n  \"benchmark\": \"embed-vs-llama\",\n  \"cpu\": ");
	bench_json_str(f, cpu);
	fprintf(f, ",\n  \"cores\": %ld,\n  \"loadavg_start\": %.2f,", cores,
		bench_loadavg());
	fprintf(f, "\n  \"threads\": %d,\n  \"seconds_per_cell\": %g,\n"
		"  \"per_call\": %d,\n  \"baseline\": ", threads, seconds,
		PER_CALL);
	bench_json_str(f, "node-llama-cpp 3.21.1 prebuilt libllama "
		       "(@node-llama-cpp/linux-x64, llama.cpp v0.4.0), C API, "
		       "CPU, flash attention off");
	fprintf(f, ",\n  \"models\": [");
	int bad = 0;
	for (int m = 0; m < nm; m++) {
		struct bert_model *bm = NULL;
		struct bert_opts bo = { -1, 1, 0 };
		struct result r[N_RUNS];
		float *first[N_RUNS];
		int dim;

		if (bert_load(paths[m], &bo, &bm, err, sizeof(err)) !=
		    CAIRN_OK) {
			fprintf(stderr, "oracle_bench: %s: %s\n", paths[m],
				err);
			return 2;
		}
		const struct vocab *v = bert_vocab(bm);
		dim = bert_dim(bm);
		/* non-special ids: after the specials at the front */
		make_seqs(vocab_cls(v), vocab_sep(v), 8,
			  (int32_t)vocab_size(v) - 2);
		bert_free(bm);
		for (int k = 0; k < N_RUNS; k++) {
			first[k] = calloc(N_LEN * PER_CALL * (size_t)dim,
					  sizeof(float));
			if (!first[k])
				return 2;
			fprintf(stderr, "== %s %s\n", names[m], RUN_NAME[k]);
			if (run_child(k, lib, paths[m], threads, seconds, dim,
				      &r[k], first[k]) != 0) {
				fprintf(stderr, "oracle_bench: %s %s: %s\n",
					names[m], RUN_NAME[k], r[k].err);
				return 2;
			}
		}
		fprintf(f, "%s\n    {\"name\": ", m ? "," : "");
		bench_json_str(f, names[m]);
		fprintf(f, ", \"file\": ");
		bench_json_str(f, paths[m]);
		fprintf(f, ", \"dim\": %d,\n     \"lengths\": [", dim);
		for (size_t l = 0; l < N_LEN; l++) {
			double c = r[RUN_CAIRN].seqs_s[l];
			double lp = r[RUN_LLAMA].seqs_s[l];
			double l1 = r[RUN_LLAMA1].seqs_s[l];
			double best = lp > l1 ? lp : l1;
			size_t off = l * PER_CALL * (size_t)dim;
			double cos1 = min_cosine(first[RUN_CAIRN] + off,
						 first[RUN_LLAMA] + off,
						 PER_CALL, dim);
			double cos2 = min_cosine(first[RUN_CAIRN] + off,
						 first[RUN_LLAMA1] + off,
						 PER_CALL, dim);
			double mc = cos1 < cos2 ? cos1 : cos2;
			if (!(mc >= 0.9999))
				bad = 1;
			fprintf(f, "%s\n       {\"tokens\": %zu, "
				"\"cairn_seqs_s\": %.1f, \"cairn_tokens_s\": %.0f, "
				"\"llama_seqs_s\": %.1f, \"llama_tokens_s\": %.0f, "
				"\"llama_single_seqs_s\": %.1f, "
				"\"llama_single_tokens_s\": %.0f, "
				"\"ratio_vs_best_llama\": %.2f, "
				"\"min_cosine_cairn_llama\": %.7f}",
				l ? "," : "", LENGTHS[l], c,
				c * (double)LENGTHS[l], lp,
				lp * (double)LENGTHS[l], l1,
				l1 * (double)LENGTHS[l], best > 0 ? c / best : 0,
				mc);
			printf("%-14s %4zu tok  cairn %8.1f seq/s %8.0f tok/s | "
			       "llama %8.1f seq/s (single %8.1f) | ratio %.2f "
			       "| min cos %.7f\n", names[m], LENGTHS[l], c,
			       c * (double)LENGTHS[l], lp, l1,
			       best > 0 ? c / best : 0, mc);
		}
		fprintf(f, "]}");
		for (int k = 0; k < N_RUNS; k++)
			free(first[k]);
		for (size_t l = 0; l < N_LEN; l++)
			for (size_t s = 0; s < N_SEQS; s++)
				free(seqs[l][s]);
	}
	double load = bench_loadavg();
	fprintf(f, "\n  ],\n  \"loadavg_end\": %.2f\n}\n", load);
	fclose(f);
	if (load > (double)cores)
		fprintf(stderr, "oracle_bench: the load average was %.1f on %ld "
			"cores: other processes shared the CPUs, the numbers are "
			"not representative\n", load, cores);
	if (bad)
		fprintf(stderr, "oracle_bench: the engines' vectors disagree "
			"(min cosine < 0.9999): see %s\n", out);
	return bad;
}
