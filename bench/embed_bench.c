/*
 * embed_bench.c -- throughput, single-query latency and peak memory of the
 * built-in BERT runtime (src/model/bert.c) on bge-shaped random-weight models.
 *
 * Layer: a program on src/model/bert.h (the runtime is internal; its models come
 * from tests/tools/make_model.py). Built and run by bench/run (make bench),
 * which writes the models into BUILD_DIR/embed-models once.
 *
 * Usage: embed_bench [--out FILE] [--threads N] [--seconds S]
 *                    NAME=MODEL.gguf...
 *
 * For each model, in a child process of its own (so peak RSS is that
 * model's):
 *   1. load:      bert_load (threads --threads, default all cores) and
 *                 bert_sha256 (as the gguf provider does at open); load
 *                 seconds and RSS after both.
 *   2. throughput at 16, 32 and 128 tokens: sequences of that length with
 *                 ids from a fixed LCG, embedded 16 per call (packed into
 *                 one batch per call) for at least --seconds (default 2)
 *                 after one untimed call: sequences/s and tokens/s.
 *   3. baseline:  the same sequences one per call (no packing), timed the
 *                 same way; the ratio is packed / one-at-a-time. The two
 *                 runs' vectors of the first call must agree (max |delta|
 *                 reported; a fast wrong answer shows there).
 *   4. latency:   one 16-token query per call, 5 untimed then 40 timed:
 *                 p50, p95, mean milliseconds.
 *   5. peak RSS:  getrusage(RUSAGE_SELF).ru_maxrss at the end.
 *   6. fresh:     what a hook pays per prompt: a new process (fork +
 *                 exec of this program with --one) that loads the model,
 *                 gets its SHA-256 and embeds one 16-token query, then
 *                 exits; --fresh N (default 15) timed runs after one
 *                 untimed, alternating with the baseline, the previous
 *                 runtime's path in the same run: CAIRN_BERT_KERNELS=0
 *                 (f32 copies made at load, OpenBLAS) and
 *                 CAIRN_CACHE_DIR="" (the whole file hashed). Per variant:
 *                 wall and CPU (user + sys, from wait4) p50 and the
 *                 child's peak RSS; the two variants' vectors must agree.
 *   --fresh-only: only step 6 (the rest is skipped).
 * JSON to --out (default bench/results/embed.json).
 *
 * embed_bench --one MODEL [OUT]: the fresh-process child (also handy under
 * `valgrind --tool=callgrind` or `perf stat`): load, SHA-256, one query;
 * prints "load_s sha_s query_s" and writes the vector to OUT if given.
 *
 * Must never: report a ratio from runs that embedded different sequences,
 * or write outside --out and its temporary files.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "bert.h"
#include "cairn.h"

#define PER_CALL 16      /* sequences per packed call */
#define MAX_MODELS 8
#define LAT_WARM 5
#define LAT_RUNS 40
#define N_SEQS 256       /* distinct sequences cycled through */

static const size_t LENGTHS[] = { 16, 32, 128 };

static double now_s(void)
{
	return bench_now_s();
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

static long peak_kb(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return ru.ru_maxrss;
}

/* ids[N_SEQS][len]: a CLS-like first id, then LCG ids below nvocab. */
static void make_ids(int32_t *ids, size_t len, uint32_t nvocab, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 12345u;
	size_t i;

	for (i = 0; i < N_SEQS * len; i++) {
		x = x * 1664525u + 1013904223u;
		ids[i] = (int32_t)(5 + (x >> 8) % (nvocab - 5));
	}
}

struct tp {
	double seqs_per_s;     /* wall clock */
	double tokens_per_s;   /* wall clock */
	double tokens_per_cpu_s; /* per second of CPU time of all threads */
	double seconds;        /* wall */
	size_t seqs;
};

/* CPU seconds of the whole process (every thread). */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Embed sequences per_call at a time, cycling through the N_SEQS, until
 * secs have passed (at least one call; one untimed
 * call first); returns CAIRN_*.
 */
static int throughput(struct bert_model *m, const int32_t *ids, size_t len,
		      size_t per_call, double secs, float *out, struct tp *r)
{
	const int32_t *ptr[PER_CALL];
	size_t lens[PER_CALL], done = 0, i;
	char err[256] = "";
	double t0, c0, t;
	int rc;

	for (i = 0; i < PER_CALL; i++)
		lens[i] = len;
	for (i = 0; i < per_call; i++)
		ptr[i] = ids + i * len;
	rc = bert_embed_ids(m, ptr, lens, per_call, out, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "embed_bench: %s\n", err);
		return rc;
	}
	t0 = now_s();
	c0 = cpu_s();
	do {
		for (i = 0; i < per_call; i++)
			ptr[i] = ids + ((done + i) % N_SEQS) * len;
		rc = bert_embed_ids(m, ptr, lens, per_call, out, err,
				    sizeof(err));
		if (rc) {
			fprintf(stderr, "embed_bench: %s\n", err);
			return rc;
		}
		done += per_call;
		t = now_s() - t0;
	} while (t < secs);
	r->seconds = t;
	r->seqs = done;
	r->seqs_per_s = (double)done / t;
	r->tokens_per_s = (double)(done * len) / t;
	r->tokens_per_cpu_s = (double)(done * len) / (cpu_s() - c0);
	return CAIRN_OK;
}

/* Benchmark one model; writes one JSON object to f. */
static int bench_model(const char *name, const char *path, int threads,
		       double secs, FILE *f)
{
	struct bert_opts o = { -1, threads, 0 };
	struct bert_model *m = NULL;
	char err[256] = "";
	double t0, load_s, lat[LAT_RUNS], sum = 0.0;
	float *packed = NULL, *single = NULL;
	int32_t *ids = NULL;
	size_t il, i;
	const char *sha;
	long rss_load;
	int rc, dim;

	t0 = now_s();
	rc = bert_load(path, &o, &m, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "embed_bench: %s: %s\n", path, err);
		return rc;
	}
	load_s = now_s() - t0;
	/* the gguf provider hashes the file at open (vector identity) */
	sha = bert_sha256(m);
	rss_load = rss_kb();
	dim = bert_dim(m);
	packed = calloc((size_t)PER_CALL * dim, sizeof(float));
	single = calloc((size_t)PER_CALL * dim, sizeof(float));
	ids = calloc((size_t)N_SEQS * 128, sizeof(int32_t));
	if (!packed || !single || !ids) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	fprintf(f, "{\"name\": ");
	bench_json_str(f, name);
	fprintf(f, ", \"file\": ");
	bench_json_str(f, path);
	fprintf(f, ", \"sha256\": ");
	bench_json_str(f, sha);
	fprintf(f, ", \"dim\": %d, \"ctx\": %zu, \"threads\": %d, "
		   "\"load_s\": %.3f, \"rss_after_load_mb\": %.1f, "
		   "\"lengths\": [",
		dim, bert_ctx(m), bert_threads(m), load_s,
		(double)rss_load / 1024.0);
	for (il = 0; il < sizeof(LENGTHS) / sizeof(LENGTHS[0]); il++) {
		size_t len = LENGTHS[il];
		struct tp pk, one;
		double worst = 0.0;

		make_ids(ids, len, 30522, (uint32_t)(len * 7 + 1));
		fprintf(stderr, "  %s: %zu tokens...\n", name, len);
		if ((rc = throughput(m, ids, len, PER_CALL, secs, packed,
				     &pk)) ||
		    (rc = throughput(m, ids, len, 1, secs, single, &one)))
			goto out;
		/* agreement on the first PER_CALL sequences */
		{
			const int32_t *ptr[PER_CALL];
			size_t lens[PER_CALL];

			for (i = 0; i < PER_CALL; i++) {
				ptr[i] = ids + i * len;
				lens[i] = len;
			}
			rc = bert_embed_ids(m, ptr, lens, PER_CALL, packed, err,
					    sizeof(err));
			for (i = 0; !rc && i < PER_CALL; i++)
				rc = bert_embed_ids(m, &ptr[i], &lens[i], 1,
						    single + i * dim, err,
						    sizeof(err));
			if (rc)
				goto out;
			for (i = 0; i < (size_t)PER_CALL * dim; i++)
				if (fabs(packed[i] - single[i]) > worst)
					worst = fabs(packed[i] - single[i]);
		}
		fprintf(f, "%s\n    {\"tokens\": %zu, "
			   "\"packed\": {\"seqs_per_s\": %.2f, "
			   "\"tokens_per_s\": %.1f, "
			   "\"tokens_per_cpu_s\": %.1f, \"seqs\": %zu, "
			   "\"seconds\": %.2f}, "
			   "\"one_per_call\": {\"seqs_per_s\": %.2f, "
			   "\"tokens_per_s\": %.1f, "
			   "\"tokens_per_cpu_s\": %.1f, \"seqs\": %zu, "
			   "\"seconds\": %.2f}, "
			   "\"ratio_packed_over_single\": %.3f, "
			   "\"max_abs_delta\": %.3g}",
			il ? "," : "", len, pk.seqs_per_s, pk.tokens_per_s,
			pk.tokens_per_cpu_s, pk.seqs, pk.seconds,
			one.seqs_per_s, one.tokens_per_s, one.tokens_per_cpu_s,
			one.seqs, one.seconds,
			pk.seqs_per_s / one.seqs_per_s, worst);
	}
	/* single-query latency, 16 tokens */
	make_ids(ids, 16, 30522, 99);
	for (i = 0; i < LAT_WARM + LAT_RUNS; i++) {
		const int32_t *p = ids + (i % N_SEQS) * 16;
		size_t len = 16;
		double t;

		t = now_s();
		rc = bert_embed_ids(m, &p, &len, 1, single, err, sizeof(err));
		t = now_s() - t;
		if (rc)
			goto out;
		if (i >= LAT_WARM) {
			lat[i - LAT_WARM] = t * 1000.0;
			sum += t * 1000.0;
		}
	}
	qsort(lat, LAT_RUNS, sizeof(double), bench_cmp_double);
	fprintf(f, "],\n  \"latency_16_tokens_ms\": {\"p50\": %.2f, "
		   "\"p95\": %.2f, \"mean\": %.2f, \"runs\": %d},\n"
		   "  \"peak_rss_mb\": %.1f",
		lat[LAT_RUNS / 2], lat[(LAT_RUNS * 95) / 100], sum / LAT_RUNS,
		LAT_RUNS, (double)peak_kb() / 1024.0);
	rc = CAIRN_OK;
out:
	free(ids);
	free(single);
	free(packed);
	bert_free(m);
	return rc;
}

/* The fresh-process child: load, SHA-256, one 16-token query. */
static int one_query(const char *path, const char *vec_out)
{
	struct bert_opts o = { -1, 0, 0 };
	struct bert_model *m = NULL;
	char err[256] = "";
	int32_t ids[16];
	const int32_t *p = ids;
	size_t len = 16;
	float v[4096];
	double t0, t1, t2, t3;
	uint32_t x = 99u * 2654435761u + 12345u;
	int i, rc;

	for (i = 0; i < 16; i++) {
		x = x * 1664525u + 1013904223u;
		ids[i] = (int32_t)(5 + (x >> 8) % (30522 - 5));
	}
	t0 = now_s();
	rc = bert_load(path, &o, &m, err, sizeof(err));
	t1 = now_s();
	if (rc == 0 && bert_dim(m) > 4096)
		rc = CAIRN_INVALID;
	if (rc == 0)
		(void)bert_sha256(m);
	t2 = now_s();
	if (rc == 0)
		rc = bert_embed_ids(m, &p, &len, 1, v, err, sizeof(err));
	t3 = now_s();
	if (rc) {
		fprintf(stderr, "embed_bench --one: %s: %s\n", path, err);
		bert_free(m);
		return 1;
	}
	printf("%.6f %.6f %.6f %d\n", t1 - t0, t2 - t1, t3 - t2,
	       bert_kernels(m));
	if (vec_out) {
		FILE *f = fopen(vec_out, "wb");

		if (!f || fwrite(v, sizeof(float), (size_t)bert_dim(m), f) !=
				  (size_t)bert_dim(m)) {
			if (f)
				fclose(f);
			bert_free(m);
			return 1;
		}
		fclose(f);
	}
	bert_free(m);
	return 0;
}

struct fresh_run {
	double wall, cpu, load, sha, query; /* seconds */
	long maxrss_kb;
	int kernels;
};

/* One fresh child: exec self --one; baseline sets the old path's env. */
static int fresh_once(const char *self, const char *path, int baseline,
		      const char *vec, struct fresh_run *r)
{
	int fds[2], st;
	pid_t pid;
	struct rusage ru;
	char line[256];
	ssize_t got;
	double t0;

	if (pipe(fds) != 0)
		return -1;
	t0 = now_s();
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], 1) < 0)
			_exit(1);
		if (baseline) {
			setenv("CAIRN_BERT_KERNELS", "0", 1);
			setenv("CAIRN_CACHE_DIR", "", 1);
		}
		execl(self, self, "--one", path, vec, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	got = read(fds[0], line, sizeof(line) - 1);
	close(fds[0]);
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0 || got <= 0)
		return -1;
	r->wall = now_s() - t0;
	line[got] = '\0';
	if (sscanf(line, "%lf %lf %lf %d", &r->load, &r->sha, &r->query,
		   &r->kernels) != 4)
		return -1;
	r->cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	r->maxrss_kb = ru.ru_maxrss;
	return 0;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define FRESH_MAX 200

/* Step 6 for one model: JSON object members (no braces) to f. */
static int bench_fresh(const char *self, const char *path, int runs,
		       FILE *f)
{
	static double w[2][FRESH_MAX], c[2][FRESH_MAX], l[2][FRESH_MAX],
		sh[2][FRESH_MAX], q[2][FRESH_MAX];
	long rss[2] = { 0, 0 };
	int kern[2] = { 0, 0 }, i, v;
	char vec[2][64];
	float a[4096], b[4096];
	double worst = 0.0;
	size_t n0, n1, j;
	FILE *vf;

	if (runs > FRESH_MAX)
		runs = FRESH_MAX;
	for (v = 0; v < 2; v++)
		snprintf(vec[v], sizeof(vec[v]), "/tmp/embed-fresh-%d-%d.bin",
			 (int)getpid(), v);
	for (i = -1; i < runs; i++) {
		for (v = 0; v < 2; v++) {
			struct fresh_run r;

			if (fresh_once(self, path, v, i < 0 ? vec[v] : NULL,
				       &r) != 0) {
				fprintf(stderr, "embed_bench: fresh run of %s "
					"failed\n", path);
				return 1;
			}
			if (i < 0)
				continue; /* warm-up (page cache, sha cache) */
			w[v][i] = r.wall * 1e3;
			c[v][i] = r.cpu * 1e3;
			l[v][i] = r.load * 1e3;
			sh[v][i] = r.sha * 1e3;
			q[v][i] = r.query * 1e3;
			if (r.maxrss_kb > rss[v])
				rss[v] = r.maxrss_kb;
			kern[v] = r.kernels;
		}
	}
	/* the two paths' vectors agree */
	n0 = n1 = 0;
	if ((vf = fopen(vec[0], "rb"))) {
		n0 = fread(a, sizeof(float), 4096, vf);
		fclose(vf);
	}
	if ((vf = fopen(vec[1], "rb"))) {
		n1 = fread(b, sizeof(float), 4096, vf);
		fclose(vf);
	}
	unlink(vec[0]);
	unlink(vec[1]);
	if (n0 == 0 || n0 != n1) {
		fprintf(stderr, "embed_bench: fresh vectors missing\n");
		return 1;
	}
	for (j = 0; j < n0; j++)
		if (fabs(a[j] - b[j]) > worst)
			worst = fabs(a[j] - b[j]);
	fprintf(f, "  \"fresh_process_16_tokens\": {\"runs\": %d, "
		   "\"max_abs_delta\": %.3g", runs, worst);
	for (v = 0; v < 2; v++)
		fprintf(f, ",\n    \"%s\": {\"kernels\": %d, \"wall_ms_p50\": %.2f, "
			   "\"cpu_ms_p50\": %.2f, \"load_ms_p50\": %.2f, "
			   "\"sha_ms_p50\": %.2f, \"query_ms_p50\": %.2f, "
			   "\"peak_rss_mb\": %.1f}",
			v ? "baseline_f32_openblas_full_hash" : "current",
			kern[v], median(w[v], runs), median(c[v], runs),
			median(l[v], runs), median(sh[v], runs),
			median(q[v], runs), (double)rss[v] / 1024.0);
	fprintf(f, ",\n    \"cpu_ratio_baseline_over_current\": %.2f}",
		median(c[1], runs) / median(c[0], runs));
	return 0;
}

int main(int argc, char **argv)
{
	const char *out = "bench/results/embed.json";
	const char *names[MAX_MODELS], *paths[MAX_MODELS];
	int n = 0, threads = 0, i, fresh = 15, fresh_only = 0;
	char self[4096];
	ssize_t sl;
	double secs = 2.0;
	char cpu[256], date[32], tmp[64];
	FILE *f;

	if (argc >= 3 && strcmp(argv[1], "--one") == 0)
		return one_query(argv[2], argc > 3 ? argv[3] : NULL);
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		fprintf(stderr, "embed_bench: cannot find /proc/self/exe\n");
		return 1;
	}
	self[sl] = '\0';
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fresh") == 0 && i + 1 < argc) {
			fresh = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--fresh-only") == 0) {
			fresh_only = 1;
		} else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			threads = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			secs = atof(argv[++i]);
		} else if (strchr(argv[i], '=') && n < MAX_MODELS) {
			char *eq = strchr(argv[i], '=');

			*eq = '\0';
			names[n] = argv[i];
			paths[n++] = eq + 1;
		} else {
			fprintf(stderr, "usage: embed_bench [--out FILE] "
					"[--threads N] [--seconds S] "
					"[--fresh N] [--fresh-only] "
					"NAME=MODEL.gguf...\n"
					"       embed_bench --one MODEL "
					"[VECTOR_OUT]\n");
			return 2;
		}
	}
	if (n == 0) {
		fprintf(stderr, "embed_bench: no models\n");
		return 2;
	}
	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "embed_bench: %s: %s\n", out, strerror(errno));
		return 1;
	}
	bench_cpu_model(cpu, sizeof(cpu));
	fprintf(f, "{\n  \"models\": [\n");
	for (i = 0; i < n; i++) {
		pid_t pid;
		int st;
		FILE *part;
		char buf[4096];
		size_t got;

		snprintf(tmp, sizeof(tmp), "/tmp/embed-bench-%d-%d.json",
			 (int)getpid(), i);
		fflush(f);
		pid = fork();
		if (pid == 0) {
			FILE *pf = fopen(tmp, "w");
			int rc;

			if (!pf)
				_exit(1);
			fprintf(stderr, "== %s (%s)\n", names[i], paths[i]);
			if (fresh_only) {
				fprintf(pf, "{\"name\": ");
				bench_json_str(pf, names[i]);
				fprintf(pf, ", \"file\": ");
				bench_json_str(pf, paths[i]);
				rc = 0;
			} else {
				rc = bench_model(names[i], paths[i], threads,
						 secs, pf);
			}
			if (!rc && fresh > 0) {
				fprintf(pf, ",\n");
				rc = bench_fresh(self, paths[i], fresh, pf);
			}
			fprintf(pf, "}");
			fclose(pf);
			_exit(rc ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "embed_bench: %s failed\n", names[i]);
			unlink(tmp);
			fclose(f);
			return 1;
		}
		part = fopen(tmp, "r");
		if (!part) {
			fclose(f);
			return 1;
		}
		fprintf(f, "%s  ", i ? ",\n" : "");
		while ((got = fread(buf, 1, sizeof(buf), part)) > 0)
			fwrite(buf, 1, got, f);
		fclose(part);
		unlink(tmp);
	}
	{
		time_t t = time(NULL);
		struct tm tmv;

		gmtime_r(&t, &tmv);
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tmv);
	}
	fprintf(f, "\n  ],\n  \"per_call\": %d, \"seconds_per_point\": %.1f,\n"
		   "  \"machine\": {\"nproc\": %ld, \"cpu\": ",
		PER_CALL, secs, sysconf(_SC_NPROCESSORS_ONLN));
	bench_json_str(f, cpu);
	fprintf(f, ", \"cairn\": \"%s\"},\n  \"date\": \"%s\"\n}\n",
		CAIRN_VERSION, date);
	fclose(f);
	printf("results: %s\n", out);
	return 0;
}
