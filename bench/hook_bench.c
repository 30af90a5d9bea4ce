/*
 * hook_bench.c -- `cairn hook` as a whole process ("benchmark the
 * hook as a whole process on a 10k-record workspace").
 *
 * Data (fixed seed; hashed): --n records (default 10 000) of engineering
 * notes written with cairn_record_write into a fresh workspace: words drawn
 * with a Zipf distribution (s = 1.05) from ~120 real engineering words
 * followed by generated English-like words (4 000 in all), about 10%
 * Chinese records from a small word list, titles 3-8 words, bodies 20-100
 * words; kinds 75% note, 10% decision, 5% fact, 5% rule, 5% capability (so
 * a session start has a drawer to print); every record dated 2026-01-01 so
 * the output does not change with the day; ids h0000000... so that it
 * does not change between runs. --q prompts (default 200): four
 * in five are 3-6 words of one record, one in five random words.
 *
 * Candidate: for each prompt, the cairn binary given with --cairn is run
 * as Claude Code runs a command hook: fork + exec `cairn hook`, the hook
 * JSON (UserPromptSubmit, cwd = the workspace) written to its stdin, its
 * stdout read to the end, waitpid. The wall time from fork to waitpid is
 * one sample. Also --sessions SessionStart calls.
 *
 * Floor, the same way: /bin/true through the same pipes, what starting
 * any process costs on this machine ("floor_bin_true").
 *
 * Baseline, in the same run and interleaved call by call (so that a busy
 * machine slows both alike): the same binary as `cairn --version`, through
 * the same pipes: the cost of starting this executable (loading its shared
 * libraries, relocations) with no work. ratio = hook / baseline; hook -
 * baseline is what the hook itself spends (open, recall, render, log).
 *
 * With --compare PATH a second cairn binary (e.g. the build before a
 * change) is timed on the same prompts, interleaved call by call with the
 * first, against the same store: "compare_prompt" and the ratio
 * "prompt_p50_vs_compare" (first / second) come out of one run.
 *
 * With --model FILE.gguf ("lexical-only and with a
 * bge-small-shaped model") the workspace is then embedded by the binary
 * itself, `cairn reindex --provider gguf --model FILE --yes` run in the
 * workspace (so the model is the store's setting, as a user would have
 * it; its wall time is "reindex_s"), and every hook call recalls with the
 * model: the prompt embedded (load the model, tokenise, run it), the dense
 * pool searched over the 10k stored vectors, fused with BM25. The SHA-256
 * cache of the model file lives in a private directory (CAIRN_CACHE_DIR
 * under the workspace); "sha_cache_files" says whether the hook processes
 * found it (1: one entry written once and reused by every call after).
 * --reuse DIR times an existing workspace kept by an earlier --keep run
 * with the same --n/--q/--seed (the prompts are made again from the seed;
 * nothing is written or re-embedded), for quick before/after comparisons.
 *
 * Besides wall time, each hook call's CPU time (user + system, from
 * wait4) is kept ("hook_prompt_cpu"): on a shared machine the wall time
 * mostly measures the others' load, the CPU time much less so.
 *
 * With --serve a `cairn mcp` of the same binary runs in the workspace for
 * the whole run (started as Claude Code starts it: its standard input a
 * pipe kept open), so every hook call is answered by it over
 * .cairn/hook.sock (hook_server.h); unless --compare names another
 * binary, the comparison is then the same binary's `cairn hook --local`,
 * interleaved call by call, and each served output must equal the local
 * one byte for byte ("served_local_mismatches", which must be 0).
 *
 * With --model a second workspace with the same records (the generator
 * run again from the same state; the prompts must come out the same) and
 * no vectors is the lexical baseline of the same run: its hook is timed
 * the same way (served by its own `cairn mcp` with --serve), interleaved
 * call by call ("lexical_prompt", "prompt_p50_vs_lexical"); after the
 * hooks, --recalls N (default 20) `cairn recall PROMPT` processes on each
 * workspace, interleaved ("recall_process", "recall_process_lexical").
 *
 * Memory ("rss", MiB): the peak resident set of every timed child from
 * wait4 (ru_maxrss: hook client, `--local` hook, `cairn recall`, p50 and
 * max over the calls; a forked child starts with this program's resident
 * pages counted, so /bin/true's figure is the floor under them), and of
 * each server VmHWM (and VmRSS) from /proc/PID/status just before it is
 * stopped. With --serve, each server's CPU time over the timed prompts
 * (/proc/PID/stat) divided by the prompts is "server_cpu_per_prompt_ms":
 * the answer's cost in the server, which the machine's load moves much
 * less than wall time.
 *
 * Untimed warm-up calls come first (page cache, tokenizer cache), so these
 * are warm numbers. Outputs are hashed (SHA-256 of every hook output, in
 * order): a faster hook that prints something else shows up as a changed
 * hash, and `injected_share` (prompts that got a block) must not drop.
 *
 *   hook_bench --cairn build/cairn [--compare OTHER_CAIRN] [--n N] [--q N]
 *              [--sessions N] [--seed S] [--out FILE] [--keep]
 *              [--model FILE.gguf] [--reuse DIR] [--serve] [--recalls N]
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "cairn.h"

#define VOCAB 4000      /* words drawn from */
#define WARMUP 20       /* untimed calls of each kind */
#define MAX_OUT (1 << 20) /* bytes of hook output kept */

static const char *const real_words[] = {
	"deploy", "staging", "production", "database", "orders", "postgres",
	"redis", "cache", "queue", "kafka", "worker", "retry", "timeout",
	"auth", "token", "login", "session", "api", "gateway", "service",
	"metrics", "logging", "alert", "latency", "index", "schema",
	"migration", "backup", "restore", "cluster", "node", "pod",
	"container", "image", "build", "test", "release", "version", "branch",
	"merge", "review", "rollback", "config", "secret", "vault", "network",
	"dns", "certificate", "tls", "proxy", "balancer", "storage", "bucket",
	"upload", "download", "billing", "invoice", "customer", "report",
	"dashboard", "search", "query", "ranking", "terraform", "kubernetes",
	"helm", "docker", "nginx", "webhook", "cron", "scheduler", "replica",
	"shard", "partition", "snapshot", "ledger", "payment", "refund",
	"currency", "tax", "email", "notification", "template", "frontend",
	"bundler", "esbuild", "typescript", "python", "golang", "rust",
	"compiler", "linker", "benchmark", "profile", "memory", "leak",
	"thread", "lock", "mutex", "deadlock", "socket", "http", "grpc",
	"protobuf", "json", "yaml", "csv", "parquet", "warehouse", "etl",
	"airflow", "spark", "flink", "s3", "gcs", "azure", "aws", "iam",
	"role", "policy", "audit", "compliance", "gdpr", "encryption",
};
static const char *const zh_words[] = {
	"部署", "数据库", "订单", "缓存", "队列", "服务", "日志", "告警",
	"延迟", "索引", "迁移", "备份", "恢复", "集群", "节点", "容器",
	"镜像", "构建", "测试", "发布", "版本", "分支", "合并", "回滚",
	"配置", "密钥", "网络", "证书", "代理", "存储", "上传", "下载",
	"账单", "发票", "客户", "报表", "搜索", "查询", "排序", "生产环境",
};
#define NREAL (sizeof(real_words) / sizeof(real_words[0]))
#define NZH (sizeof(zh_words) / sizeof(zh_words[0]))

static char *vocab[VOCAB];
static double zipf[VOCAB];
static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t below(size_t n)
{
	return (size_t)(rnd() % n);
}

/* A word index with the Zipf distribution. */
static size_t zipf_word(void)
{
	double u = (double)(rnd() >> 11) / 9007199254740992.0;
	size_t lo = 0, hi = VOCAB - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (zipf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int vocab_init(void)
{
	static const char *const cons[] = { "b", "c", "d", "f", "g", "k",
					    "l", "m", "n", "p", "r", "s",
					    "t", "v", "z", "st", "tr", "pl" };
	static const char *const vow[] = { "a", "e", "i", "o", "u", "ai",
					   "ou", "ea" };
	double sum = 0, acc = 0;
	size_t i, k;

	for (i = 0; i < VOCAB; i++) {
		char w[32] = "";
		size_t syl = 2 + below(2);

		if (i < NREAL) {
			vocab[i] = strdup(real_words[i]);
		} else {
			for (k = 0; k < syl; k++) {
				strcat(w, cons[below(18)]);
				strcat(w, vow[below(8)]);
			}
			strcat(w, cons[below(18)]);
			vocab[i] = strdup(w);
		}
		if (!vocab[i])
			return -1;
		sum += 1.0 / pow((double)(i + 1), 1.05);
	}
	for (i = 0; i < VOCAB; i++) {
		acc += 1.0 / pow((double)(i + 1), 1.05) / sum;
		zipf[i] = acc;
	}
	zipf[VOCAB - 1] = 1.0;
	return 0;
}

/* Append n words (Chinese words run together, as Chinese is written). */
static void words(char *buf, size_t size, size_t n, int zh, size_t *picked,
		  size_t *npicked)
{
	size_t i, len = strlen(buf);

	for (i = 0; i < n && len + 32 < size; i++) {
		const char *w;

		if (zh && below(3) != 0) {
			w = zh_words[below(NZH)];
			len += (size_t)snprintf(buf + len, size - len, "%s", w);
			continue;
		}
		{
			size_t id = zipf_word();

			w = vocab[id];
			if (picked && *npicked < 64)
				picked[(*npicked)++] = id;
		}
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					len && buf[len - 1] != ' ' ? " " : "",
					w);
	}
	if (len + 1 < size && len && buf[len - 1] != ' ') {
		buf[len++] = ' ';
		buf[len] = '\0';
	}
}

struct corpus {
	char **prompt;  /* q prompts */
	size_t q;
};

static const char *pick_kind(void)
{
	size_t r = below(100);

	if (r < 75)
		return "note";
	if (r < 85)
		return "decision";
	if (r < 90)
		return "fact";
	if (r < 95)
		return "rule";
	return "capability";
}

/* Write n records into a fresh store at ws/.cairn; make the prompts. */
static int load(const char *ws, size_t n, struct corpus *c, EVP_MD_CTX *h,
		int reuse)
{
	char dir[4200], title[1024], body[8192], err[256];
	cairn_open_opts oo;
	cairn_db *db = NULL;
	size_t i, qi = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%s/.cairn", ws);
	memset(&oo, 0, sizeof(oo));
	oo.create = 1;
	oo.no_global = 1;
	/* reuse: only the prompts are made again; the store is not opened
	 * (this program's library could migrate it past the binaries timed) */
	rc = reuse ? CAIRN_OK : cairn_db_open(dir, &oo, &db);
	if (rc) {
		fprintf(stderr, "hook_bench: cannot create %s: %s\n", dir,
			cairn_errmsg(db));
		cairn_db_close(db);
		return -1;
	}
	(void)err;
	for (i = 0; i < n && rc == CAIRN_OK; i++) {
		cairn_record r;
		char id[32];
		size_t picked[64], np = 0;
		int zh = below(10) == 0;

		if (!reuse && i % 5000 == 0 &&
		    (rc = cairn_begin(db)) != CAIRN_OK)
			break;
		title[0] = body[0] = '\0';
		words(title, sizeof(title), 3 + below(6), zh, picked, &np);
		words(body, sizeof(body), 20 + below(81), zh, picked, &np);
		memset(&r, 0, sizeof(r));
		snprintf(id, sizeof(id), "h%07zu", i); /* fixed ids: hashable output */
		r.id = id;
		r.kind = (char *)pick_kind();
		r.title = title;
		r.body = body;
		r.origin = (char *)"human";
		r.status = (char *)"accepted";
		r.confidence = -1;
		r.time = (char *)"2026-01-01";
		EVP_DigestUpdate(h, title, strlen(title));
		EVP_DigestUpdate(h, body, strlen(body));
		rc = reuse ? CAIRN_OK : cairn_record_write(db, &r, 0, NULL);
		/* one prompt every n/q records: 4 in 5 from this record */
		if (rc == CAIRN_OK && qi < c->q && i % (n / c->q) == 0) {
			char p[512] = "";
			size_t k, m = 3 + below(4);

			if (below(5) == 0 || np == 0) {
				words(p, sizeof(p), m, 0, NULL, NULL);
			} else {
				for (k = 0; k < m; k++) {
					size_t len = strlen(p);

					snprintf(p + len, sizeof(p) - len,
						 "%s%s", k ? " " : "",
						 vocab[picked[below(np)]]);
				}
			}
			c->prompt[qi++] = strdup(p);
		}
		if (!reuse && rc == CAIRN_OK &&
		    (i % 5000 == 4999 || i == n - 1))
			rc = cairn_commit(db);
	}
	if (rc)
		fprintf(stderr, "hook_bench: write: %s\n", cairn_errmsg(db));
	c->q = qi;
	cairn_db_close(db);
	return rc ? -1 : 0;
}

/* CPU milliseconds (user + system) of the last child run() waited for:
 * unlike wall time, hardly moved by other work on the machine. */
static double last_cpu_ms;
/* Its peak resident set (ru_maxrss, KiB). A child of fork() starts with
 * this program's resident pages counted, so the same figure for
 * /bin/true ("floor_bin_true_rss") is what of it is not the child's. */
static long last_maxrss_kb;

/*
 * Run argv with `in` on stdin; read its stdout into out (at most
 * MAX_OUT bytes, NUL-terminated). Returns the wall milliseconds from
 * fork to waitpid, or -1; last_cpu_ms gets the child's CPU time.
 */
/* The hook's stdin for one prompt: what Claude Code writes (JSON). */
static void hook_input(char *buf, size_t size, const char *ws,
		       const char *session, const char *prompt)
{
	snprintf(buf, size,
		 "{\"hook_event_name\":\"UserPromptSubmit\",\"cwd\":\"%s\","
		 "\"session_id\":\"%s\",\"prompt\":\"%s\"}",
		 ws, session, prompt);
}

/*
 * --long: the prompt as a developer writes it, ~HOOK_BENCH_LONG characters:
 * context sentences of vocabulary words before and after, the prompt
 * itself as the sentence that asks. The hook then reads the whole prompt
 * and its asking sentence (hook_inject.c).
 */
#define HOOK_BENCH_LONG 4000
static void long_prompt(char *buf, size_t size, const char *prompt)
{
	size_t len = 0, w = 0;
	int asked = 0;

	buf[0] = '\0';
	while (len + 64 < size && len < HOOK_BENCH_LONG) {
		if (!asked && len >= HOOK_BENCH_LONG / 2) {
			len += (size_t)snprintf(buf + len, size - len,
						"%s?\\n", prompt);
			asked = 1;
			continue;
		}
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					vocab[(w * 7919 + 13) % VOCAB],
					(w + 1) % 12 == 0 ? ". " : " ");
		w++;
	}
}

static double run(char *const argv[], const char *in, char *out,
		  size_t *outlen)
{
	struct rusage ru;
	int pin[2], pout[2], status;
	double t0 = bench_now_s();
	size_t len = 0, inlen = strlen(in);
	pid_t pid;

	if (pipe(pin) != 0 || pipe(pout) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		close(pin[0]);
		close(pin[1]);
		close(pout[0]);
		close(pout[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	if (write(pin[1], in, inlen) != (ssize_t)inlen)
		len = 0;
	close(pin[1]);
	for (;;) {
		ssize_t r = read(pout[0], out + len, MAX_OUT - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == MAX_OUT - 1)
			break;
	}
	out[len] = '\0';
	close(pout[0]);
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	last_cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	last_maxrss_kb = ru.ru_maxrss;
	*outlen = len;
	return (bench_now_s() - t0) * 1000.0;
}

/* The 1-minute load average (/proc/loadavg), or -1. */
struct stats {
	double p50, p90, mean, min;
};

/*
 * Start `cairn mcp` in ws with its standard input a pipe (*in: the end to
 * close when done) and its output discarded; wait until it listens on
 * ws/.cairn/hook.sock (10 s at most). The pid, or -1.
 */
static pid_t start_server(const char *cairn, const char *ws, int *in)
{
	char sock[4200];
	struct stat st;
	int p[2], i;
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/.cairn/hook.sock", ws);
	/* close-on-exec: a second server must not hold this one's input
	 * open (it would never see its end) */
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(p[0], 0);
		dup2(null, 1);
		close(p[0]);
		close(p[1]);
		if (chdir(ws) != 0)
			_exit(127);
		execl(cairn, cairn, "mcp", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	*in = p[1];
	for (i = 0; i < 1000; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (stat(sock, &st) == 0 && S_ISSOCK(st.st_mode))
			return pid;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "hook_bench: cairn mcp never listened on %s\n", sock);
	close(p[1]);
	waitpid(pid, NULL, 0);
	return -1;
}

/* Field name ("VmHWM", "VmRSS") of /proc/PID/status in KiB, or -1. */
static long proc_status_kb(pid_t pid, const char *name)
{
	char path[64], line[256];
	size_t nl = strlen(name);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, nl) == 0 && line[nl] == ':') {
			kb = strtol(line + nl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

/* CPU milliseconds (user + system) pid has used so far, from
 * /proc/PID/stat; -1 when unreadable. */
static double proc_cpu_ms(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, stime = 0;
	long tck = sysconf(_SC_CLK_TCK);
	size_t got;
	FILE *f;
	int i;

	if (pid <= 0 || tck <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	got = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[got] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return -1;
	/* after ") ": field 3 (state) ... 14 utime, 15 stime */
	for (i = 3; i < 14 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu %llu", &ut, &stime) != 2)
		return -1;
	return (double)(ut + stime) * 1000.0 / (double)tck;
}

/* Stop a server started by start_server (end of its input: it exits)
 * after reading its peak and current RSS. */
static void stop_server(pid_t pid, int in, long *hwm_kb, long *rss_kb)
{
	*hwm_kb = proc_status_kb(pid, "VmHWM");
	*rss_kb = proc_status_kb(pid, "VmRSS");
	close(in);
	waitpid(pid, NULL, 0);
}

static struct stats summarise(double *v, size_t n)
{
	struct stats s = { 0, 0, 0, 0 };
	size_t i;

	if (n == 0)
		return s;
	qsort(v, n, sizeof(*v), bench_cmp_double);
	for (i = 0; i < n; i++)
		s.mean += v[i];
	s.mean /= (double)n;
	s.p50 = v[(n - 1) / 2];
	s.p90 = v[(size_t)ceil(0.9 * (double)n) - 1];
	s.min = v[0];
	return s;
}

/* The largest of v[0..n), 0 for none. */
static double vmax(const double *v, size_t n)
{
	double m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* "name": {"p50_mb": .., "max_mb": ..} of peak RSS samples (MiB). */
static void put_rss(FILE *f, const char *name, const double *v, size_t n,
		    struct stats s, int last)
{
	fprintf(f, "    \"%s\": {\"p50_mb\": %.1f, \"max_mb\": %.1f}%s\n",
		name, s.p50, vmax(v, n), last ? "" : ",");
}

static void put_stats(FILE *f, const char *name, struct stats s, int last)
{
	fprintf(f, "  \"%s\": {\"p50_ms\": %.2f, \"p90_ms\": %.2f, "
		"\"mean_ms\": %.2f, \"min_ms\": %.2f}%s\n",
		name, s.p50, s.p90, s.mean, s.min, last ? "" : ",");
}

int main(int argc, char **argv)
{
	const char *cairn = NULL, *outpath = "bench/results/hook.json";
	const char *compare = NULL, *model = NULL, *reuse = NULL;
	char compare_abs[4096] = "", model_abs[4096] = "", cache[4200] = "";
	char reindex_out[4096] = "";
	double reindex_s = 0;
	long sha_files = -1;
	double *tc = NULL, *th_cpu = NULL, *tc_cpu = NULL;
	struct stats sc = { 0, 0, 0, 0 }, sh_cpu, sc_cpu = { 0, 0, 0, 0 };
	size_t n = 10000, q = 200, sessions = 50, i, injected = 0;
	size_t recalls = 20, lex_injected = 0, lex_mismatch = 0;
	/* --model: the same records in a workspace without vectors, its hook
	 * timed the same way (served or not) in the same run: the lexical
	 * baseline; and `cairn recall` processes on both */
	char lexbuf[] = "/tmp/cairn-hook-bench-lex-XXXXXX", *ws_lex = NULL;
	pid_t lex_server = -1;
	int lex_in = -1;
	long srv_hwm = -1, srv_rss = -1, lex_hwm = -1, lex_rss = -1;
	double *tl = NULL, *tl_cpu = NULL, *th_rss = NULL, *tl_rss = NULL;
	double *tc_rss = NULL, *tt_rss = NULL, *tr = NULL, *tr_lex = NULL;
	double *tr_rss = NULL, *trl_rss = NULL;
	struct stats sl = { 0, 0, 0, 0 }, sl_cpu = sl, sh_rss = sl, sl_rss = sl;
	struct stats sc_rss = sl, st_rss = sl, sr = sl, sr_lex = sl, sr_rss = sl;
	struct stats srl_rss = sl;
	uint64_t rng_load;
	double srv_cpu0 = -1, srv_cpu1 = -1, lex_cpu0 = -1, lex_cpu1 = -1;
	unsigned long long seed = 42;
	int keep = 0, serve = 0, local_cmp = 0, long_prompts = 0;
	double *tlong = NULL;
	struct stats slong = { 0, 0, 0, 0 };
	size_t mismatches = 0;
	pid_t server = -1;
	int server_in = -1;
	char *served = NULL;
	char wsbuf[] = "/tmp/cairn-hook-bench-XXXXXX", *out = NULL;
	char *ws = wsbuf, reuse_abs[4096];
	char cairn_abs[4096], cpu[256], corpus_hex[65], out_hex[65];
	double *th = NULL, *tb = NULL, *ts = NULL, t0, load_before, load_after;
	double *tt = NULL;
	struct stats st_true = { 0, 0, 0, 0 };
	struct corpus c;
	EVP_MD_CTX *hc = EVP_MD_CTX_new(), *ho = EVP_MD_CTX_new();
	struct stats sh, sb, ss;
	FILE *f;

	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i], *v = i + 1 < (size_t)argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--long") == 0) {
			long_prompts = 1;
			continue;
		}
		if (strcmp(a, "--keep") == 0) {
			keep = 1;
			continue;
		}
		if (strcmp(a, "--serve") == 0) {
			serve = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "hook_bench: %s needs a value\n", a);
			return 2;
		}
		if (strcmp(a, "--cairn") == 0)
			cairn = v;
		else if (strcmp(a, "--compare") == 0)
			compare = v;
		else if (strcmp(a, "--n") == 0)
			n = strtoul(v, NULL, 10);
		else if (strcmp(a, "--q") == 0)
			q = strtoul(v, NULL, 10);
		else if (strcmp(a, "--sessions") == 0)
			sessions = strtoul(v, NULL, 10);
		else if (strcmp(a, "--seed") == 0)
			seed = strtoull(v, NULL, 10);
		else if (strcmp(a, "--out") == 0)
			outpath = v;
		else if (strcmp(a, "--model") == 0)
			model = v;
		else if (strcmp(a, "--reuse") == 0)
			reuse = v;
		else if (strcmp(a, "--recalls") == 0)
			recalls = strtoul(v, NULL, 10);
		else {
			fprintf(stderr, "usage: hook_bench --cairn PATH "
				"[--compare PATH] [--n N] "
				"[--q N] [--sessions N] [--seed S] [--out FILE] "
				"[--keep] [--model FILE.gguf] [--reuse DIR] "
				"[--serve] [--recalls N]\n");
			return 2;
		}
		i++;
	}
	if (!cairn || !realpath(cairn, cairn_abs) || n < q || q == 0 ||
	    !hc || !ho || (compare && !realpath(compare, compare_abs)) ||
	    (model && !realpath(model, model_abs)) ||
	    (reuse && !realpath(reuse, reuse_abs))) {
		fprintf(stderr, "hook_bench: --cairn PATH (an executable) "
			"is required; --n must be >= --q > 0; --compare, "
			"--model and --reuse must name existing files\n");
		return 2;
	}
	rng = seed;
	EVP_DigestInit_ex(hc, EVP_sha256(), NULL);
	EVP_DigestInit_ex(ho, EVP_sha256(), NULL);
	c.q = q;
	c.prompt = calloc(q, sizeof(char *));
	out = malloc(MAX_OUT);
	th = calloc(q, sizeof(double));
	tlong = calloc(q, sizeof(double));
	tb = calloc(q + sessions, sizeof(double));
	ts = calloc(sessions + 1, sizeof(double));
	tc = calloc(q, sizeof(double));
	tt = calloc(q, sizeof(double));
	th_cpu = calloc(q, sizeof(double));
	tc_cpu = calloc(q, sizeof(double));
	tl = calloc(q, sizeof(double));
	tl_cpu = calloc(q, sizeof(double));
	th_rss = calloc(q, sizeof(double));
	tl_rss = calloc(q, sizeof(double));
	tc_rss = calloc(q, sizeof(double));
	tt_rss = calloc(q, sizeof(double));
	if (recalls > q)
		recalls = q;
	tr = calloc(recalls + 1, sizeof(double));
	tr_lex = calloc(recalls + 1, sizeof(double));
	tr_rss = calloc(recalls + 1, sizeof(double));
	trl_rss = calloc(recalls + 1, sizeof(double));
	if (!th_cpu || !tc_cpu || !tt || !tl || !tl_cpu || !th_rss ||
	    !tl_rss || !tc_rss || !tt_rss || !tr || !tr_lex || !tr_rss ||
	    !trl_rss) {
		fprintf(stderr, "hook_bench: out of memory\n");
		return 1;
	}
	if (reuse)
		ws = reuse_abs;
	if (!c.prompt || !out || !th || !tb || !ts || !tc || vocab_init() != 0 ||
	    (!reuse && !mkdtemp(ws))) {
		fprintf(stderr, "hook_bench: out of memory or no temp dir\n");
		return 1;
	}
	t0 = bench_now_s();
	load_before = bench_loadavg();
	rng_load = rng;
	if (load(ws, n, &c, hc, reuse != NULL) != 0)
		return 1;
	fprintf(stderr, "hook_bench: %zu records in %.1f s (%s), %zu prompts\n",
		n, bench_now_s() - t0, ws, c.q);
	if (model) {
		/* the same records (the generator started again from the same
		 * state), never embedded */
		struct corpus lc;
		EVP_MD_CTX *hl = EVP_MD_CTX_new();
		size_t k;

		lc.q = q;
		lc.prompt = calloc(q, sizeof(char *));
		if (!hl || !lc.prompt || !mkdtemp(lexbuf)) {
			fprintf(stderr, "hook_bench: no lexical workspace\n");
			return 1;
		}
		ws_lex = lexbuf;
		EVP_DigestInit_ex(hl, EVP_sha256(), NULL);
		rng = rng_load;
		if (load(ws_lex, n, &lc, hl, 0) != 0)
			return 1;
		for (k = 0; k < lc.q; k++) {
			if (lc.q != c.q || strcmp(lc.prompt[k], c.prompt[k]))
				lex_mismatch++;
			free(lc.prompt[k]);
		}
		free(lc.prompt);
		EVP_MD_CTX_free(hl);
		if (lex_mismatch) {
			fprintf(stderr, "hook_bench: the lexical workspace "
				"got other prompts\n");
			return 1;
		}
		fprintf(stderr, "hook_bench: the same records without vectors "
			"in %s\n", ws_lex);
	}
	/* the model's SHA-256 cache: private to this workspace, inherited by
	 * every process started below */
	snprintf(cache, sizeof(cache), "%s/sha-cache", ws);
	if (model && (mkdir(cache, 0700) != 0 && errno != EEXIST)) {
		fprintf(stderr, "hook_bench: cannot make %s\n", cache);
		return 1;
	}
	if (model)
		setenv("CAIRN_CACHE_DIR", cache, 1);
	if (model && !reuse) {
		char *ri_argv[] = { cairn_abs, (char *)"-C", ws,
				    (char *)"--json", (char *)"reindex",
				    (char *)"--provider", (char *)"gguf",
				    (char *)"--model", model_abs,
				    (char *)"--yes", NULL };
		size_t len = 0;

		fprintf(stderr, "hook_bench: cairn reindex --model %s\n",
			model_abs);
		reindex_s = run(ri_argv, "", out, &len) / 1000.0;
		if (reindex_s < 0 || !strstr(out, "\"embedded\"")) {
			fprintf(stderr, "hook_bench: cairn reindex failed\n");
			return 1;
		}
		snprintf(reindex_out, sizeof(reindex_out), "%s", out);
		while (len && (reindex_out[len - 1] == '\n'))
			reindex_out[--len] = '\0';
		fprintf(stderr, "hook_bench: reindexed in %.1f s: %s\n",
			reindex_s, reindex_out);
	}
	if (serve) {
		server = start_server(cairn_abs, ws, &server_in);
		if (server < 0)
			return 1;
		if (!compare) {
			compare = "--local";
			snprintf(compare_abs, sizeof(compare_abs), "%s",
				 cairn_abs);
			local_cmp = 1;
		}
		served = malloc(MAX_OUT);
		if (!served)
			return 1;
		if (ws_lex) {
			/* its own server; it must not see the model */
			lex_server = start_server(cairn_abs, ws_lex, &lex_in);
			if (lex_server < 0)
				return 1;
		}
	}
	{
		char *hook_argv[] = { cairn_abs, (char *)"hook", NULL };
		char *ver_argv[] = { cairn_abs, (char *)"--version", NULL };
		char *true_argv[] = { (char *)"/bin/true", NULL };
		char *cmp_argv[] = { compare_abs, (char *)"hook",
				     local_cmp ? (char *)"--local" : NULL,
				     NULL };
		char *rec_argv[] = { cairn_abs, (char *)"-C", ws,
				     (char *)"recall", NULL, NULL };
		char *rec_lex_argv[] = { cairn_abs, (char *)"-C", ws_lex,
					 (char *)"recall", NULL, NULL };
		char lex_json[8192];
		size_t served_len = 0;
		char json[8192];
		size_t len, nb = 0, k;
		double ms;

		/* warm-up: page cache, the tokenizer's table cache */
		for (k = 0; k < WARMUP; k++) {
			hook_input(json, sizeof(json), ws, "warm",
				   c.prompt[k % c.q]);
			run(hook_argv, json, out, &len);
			run(ver_argv, "", out, &len);
			if (compare)
				run(cmp_argv, json, out, &len);
			if (ws_lex) {
				hook_input(lex_json, sizeof(lex_json), ws_lex,
					   "warm", c.prompt[k % c.q]);
				run(hook_argv, lex_json, out, &len);
			}
		}
		/* the servers' CPU over the timed prompts: all of it is
		 * theirs to answer (a server gets nothing else meanwhile) */
		srv_cpu0 = proc_cpu_ms(server);
		lex_cpu0 = proc_cpu_ms(lex_server);
		for (k = 0; k < c.q; k++) {
			EVP_DigestUpdate(hc, c.prompt[k], strlen(c.prompt[k]) + 1);
			hook_input(json, sizeof(json), ws, "bench", c.prompt[k]);
			ms = run(hook_argv, json, out, &len);
			if (ms < 0) {
				fprintf(stderr, "hook_bench: cairn hook failed\n");
				return 1;
			}
			th[k] = ms;
			th_cpu[k] = last_cpu_ms;
			if (long_prompts) {
				char lp[4400], ljson[8192];

				long_prompt(lp, sizeof(lp), c.prompt[k]);
				hook_input(ljson, sizeof(ljson), ws, "bench", lp);
				ms = run(hook_argv, ljson, out, &len);
				if (ms < 0) {
					fprintf(stderr, "hook_bench: cairn hook "
						"failed (long prompt)\n");
					return 1;
				}
				tlong[k] = ms;
			}
			th_rss[k] = (double)last_maxrss_kb / 1024.0;
			injected += len > 0;
			EVP_DigestUpdate(ho, out, len + 1);
			if (served) {
				memcpy(served, out, len + 1);
				served_len = len;
			}
			ms = run(ver_argv, "", out, &len);
			if (ms < 0) {
				fprintf(stderr, "hook_bench: cairn --version "
					"failed\n");
				return 1;
			}
			tb[nb++] = ms;
			tt[k] = run(true_argv, "", out, &len);
			tt_rss[k] = (double)last_maxrss_kb / 1024.0;
			if (ws_lex) {
				hook_input(lex_json, sizeof(lex_json), ws_lex,
					   "bench", c.prompt[k]);
				ms = run(hook_argv, lex_json, out, &len);
				if (ms < 0) {
					fprintf(stderr, "hook_bench: the "
						"lexical hook failed\n");
					return 1;
				}
				tl[k] = ms;
				tl_cpu[k] = last_cpu_ms;
				tl_rss[k] = (double)last_maxrss_kb / 1024.0;
				lex_injected += len > 0;
			}
			if (compare) {
				/* json: the timed call's input, as it was */
				ms = run(cmp_argv, json, out, &len);
				if (ms < 0) {
					fprintf(stderr, "hook_bench: the "
						"--compare hook failed\n");
					return 1;
				}
				tc[k] = ms;
				tc_cpu[k] = last_cpu_ms;
				tc_rss[k] = (double)last_maxrss_kb / 1024.0;
				if (local_cmp && (len != served_len ||
						  memcmp(out, served, len) != 0))
					mismatches++;
			}
		}
		srv_cpu1 = proc_cpu_ms(server);
		lex_cpu1 = proc_cpu_ms(lex_server);
		snprintf(json, sizeof(json),
			 "{\"hook_event_name\":\"SessionStart\",\"cwd\":\"%s\","
			 "\"session_id\":\"bench\",\"source\":\"startup\"}", ws);
		for (k = 0; k < sessions; k++) {
			ms = run(hook_argv, json, out, &len);
			if (ms < 0)
				return 1;
			ts[k] = ms;
			EVP_DigestUpdate(ho, out, len + 1);
			ms = run(ver_argv, "", out, &len);
			if (ms < 0)
				return 1;
			tb[nb++] = ms;
		}
		/* `cairn recall` as a user runs it, a whole process, on
		 * both workspaces, interleaved (after the hooks: its receipts
		 * go to the database) */
		if (!ws_lex)
			recalls = 0;
		for (k = 0; k < recalls; k++) {
			rec_argv[4] = c.prompt[k];
			rec_lex_argv[4] = c.prompt[k];
			ms = run(rec_argv, "", out, &len);
			if (ms < 0) {
				fprintf(stderr, "hook_bench: cairn recall "
					"failed\n");
				return 1;
			}
			tr[k] = ms;
			tr_rss[k] = (double)last_maxrss_kb / 1024.0;
			ms = run(rec_lex_argv, "", out, &len);
			if (ms < 0) {
				fprintf(stderr, "hook_bench: cairn recall "
					"(lexical) failed\n");
				return 1;
			}
			tr_lex[k] = ms;
			trl_rss[k] = (double)last_maxrss_kb / 1024.0;
		}
		sh = summarise(th, c.q);
		if (long_prompts)
			slong = summarise(tlong, c.q);
		sh_rss = summarise(th_rss, c.q);
		st_rss = summarise(tt_rss, c.q);
		if (ws_lex) {
			sl = summarise(tl, c.q);
			sl_cpu = summarise(tl_cpu, c.q);
			sl_rss = summarise(tl_rss, c.q);
		}
		if (recalls) {
			sr = summarise(tr, recalls);
			sr_lex = summarise(tr_lex, recalls);
			sr_rss = summarise(tr_rss, recalls);
			srl_rss = summarise(trl_rss, recalls);
		}
		st_true = summarise(tt, c.q);
		sh_cpu = summarise(th_cpu, c.q);
		if (compare)
			sc_cpu = summarise(tc_cpu, c.q);
		ss = summarise(ts, sessions);
		sb = summarise(tb, nb);
		if (compare) {
			sc = summarise(tc, c.q);
			sc_rss = summarise(tc_rss, c.q);
		}
	}
	load_after = bench_loadavg();
	if (server > 0)
		stop_server(server, server_in, &srv_hwm, &srv_rss);
	if (lex_server > 0)
		stop_server(lex_server, lex_in, &lex_hwm, &lex_rss);
	if (model) {
		DIR *d = opendir(cache);
		struct dirent *e;

		sha_files = 0;
		while (d && (e = readdir(d)))
			sha_files += strncmp(e->d_name, "gguf-sha256-", 12) == 0;
		if (d)
			closedir(d);
	}
	bench_sha_hex(hc, corpus_hex);
	bench_sha_hex(ho, out_hex);
	bench_cpu_model(cpu, sizeof(cpu));
	f = fopen(outpath, "w");
	if (!f) {
		fprintf(stderr, "hook_bench: cannot write %s\n", outpath);
		return 1;
	}
	fprintf(f, "{\n  \"benchmark\": \"hook_bench\",\n  \"records\": %zu,\n"
		"  \"prompts\": %zu,\n  \"sessions\": %zu,\n  \"seed\": %llu,\n",
		n, c.q, sessions, seed);
	fprintf(f, "  \"machine\": ");
	bench_json_str(f, cpu);
	fprintf(f, ",\n  \"load_average\": {\"before\": %.2f, \"after\": %.2f}",
		load_before, load_after);
	fprintf(f, ",\n  \"cairn\": ");
	bench_json_str(f, cairn); /* as given: no path of this machine */
	fprintf(f, ",\n");
	if (model) {
		const char *b = strrchr(model, '/');

		fprintf(f, "  \"model\": ");
		bench_json_str(f, b ? b + 1 : model); /* no path either */
		fprintf(f, ",\n  \"reindex_s\": %.1f,\n  \"reindex\": %s,\n"
			"  \"sha_cache_files\": %ld,\n", reindex_s,
			reindex_out[0] ? reindex_out : "null", sha_files);
	}
	fprintf(f, "  \"serve\": %s,\n", serve ? "true" : "false");
	if (local_cmp)
		fprintf(f, "  \"served_local_mismatches\": %zu,\n",
			mismatches);
	put_stats(f, "hook_prompt", sh, 0);
	put_stats(f, "hook_prompt_cpu", sh_cpu, 0);
	if (long_prompts) {
		put_stats(f, "hook_long_prompt", slong, 0);
		fprintf(f, "  \"long_prompt_chars\": %d,\n"
			"  \"long_p50_vs_prompt_p50\": %.2f,\n",
			HOOK_BENCH_LONG, sh.p50 > 0 ? slong.p50 / sh.p50 : 0);
	}
	put_stats(f, "hook_session_start", ss, 0);
	put_stats(f, "baseline_version", sb, 0);
	put_stats(f, "floor_bin_true", st_true, 0);
	if (compare) {
		fprintf(f, "  \"compare\": ");
		bench_json_str(f, compare);
		fprintf(f, ",\n");
		put_stats(f, "compare_prompt", sc, 0);
		put_stats(f, "compare_prompt_cpu", sc_cpu, 0);
		fprintf(f, "  \"prompt_p50_vs_compare\": %.2f,\n",
			sc.p50 > 0 ? sh.p50 / sc.p50 : 0);
		fprintf(f, "  \"prompt_cpu_p50_vs_compare\": %.2f,\n",
			sc_cpu.p50 > 0 ? sh_cpu.p50 / sc_cpu.p50 : 0);
	}
	if (serve && srv_cpu0 >= 0 && srv_cpu1 >= 0)
		fprintf(f, "  \"server_cpu_per_prompt_ms\": %.2f,\n",
			(srv_cpu1 - srv_cpu0) / (double)c.q);
	if (lex_server > 0 && lex_cpu0 >= 0 && lex_cpu1 >= 0)
		fprintf(f, "  \"lexical_server_cpu_per_prompt_ms\": %.2f,\n",
			(lex_cpu1 - lex_cpu0) / (double)c.q);
	if (ws_lex) {
		put_stats(f, "lexical_prompt", sl, 0);
		put_stats(f, "lexical_prompt_cpu", sl_cpu, 0);
		fprintf(f, "  \"prompt_p50_vs_lexical\": %.2f,\n"
			"  \"lexical_injected_share\": %.3f,\n",
			sl.p50 > 0 ? sh.p50 / sl.p50 : 0,
			c.q ? (double)lex_injected / (double)c.q : 0);
	}
	if (recalls) {
		fprintf(f, "  \"recall_processes\": %zu,\n", recalls);
		put_stats(f, "recall_process", sr, 0);
		put_stats(f, "recall_process_lexical", sr_lex, 0);
		fprintf(f, "  \"recall_p50_vs_lexical\": %.2f,\n",
			sr_lex.p50 > 0 ? sr.p50 / sr_lex.p50 : 0);
	}
	/* peak resident sets, MiB: a process's ru_maxrss from wait4 (the
	 * floor's is what the fork of this program brings), a server's VmHWM
	 * (and VmRSS) from /proc/PID/status just before it is stopped */
	fprintf(f, "  \"rss\": {\n");
	put_rss(f, "hook_client", th_rss, c.q, sh_rss, 0);
	put_rss(f, "floor_bin_true", tt_rss, c.q, st_rss, 0);
	if (compare)
		put_rss(f, local_cmp ? "hook_local" : "compare_client",
			tc_rss, c.q, sc_rss, 0);
	if (ws_lex)
		put_rss(f, "lexical_hook_client", tl_rss, c.q, sl_rss, 0);
	if (recalls) {
		put_rss(f, "recall_process", tr_rss, recalls, sr_rss, 0);
		put_rss(f, "recall_process_lexical", trl_rss, recalls,
			srl_rss, 0);
	}
	fprintf(f, "    \"server_peak_mb\": %.1f,\n"
		"    \"server_now_mb\": %.1f,\n"
		"    \"lexical_server_peak_mb\": %.1f,\n"
		"    \"lexical_server_now_mb\": %.1f\n  },\n",
		srv_hwm < 0 ? -1.0 : (double)srv_hwm / 1024.0,
		srv_rss < 0 ? -1.0 : (double)srv_rss / 1024.0,
		lex_hwm < 0 ? -1.0 : (double)lex_hwm / 1024.0,
		lex_rss < 0 ? -1.0 : (double)lex_rss / 1024.0);
	fprintf(f, "  \"ratios\": {\"prompt_p50\": %.2f, \"prompt_p90\": %.2f, "
		"\"session_start_p50\": %.2f},\n",
		sb.p50 > 0 ? sh.p50 / sb.p50 : 0, sb.p90 > 0 ? sh.p90 / sb.p90 : 0,
		sb.p50 > 0 ? ss.p50 / sb.p50 : 0);
	fprintf(f, "  \"hook_minus_baseline_p50_ms\": %.2f,\n",
		sh.p50 - sb.p50);
	fprintf(f, "  \"hook_minus_floor_p50_ms\": %.2f,\n",
		sh.p50 - st_true.p50);
	fprintf(f, "  \"injected_share\": %.3f,\n",
		c.q ? (double)injected / (double)c.q : 0);
	fprintf(f, "  \"hashes\": {\"corpus\": \"%s\", \"outputs\": \"%s\"}\n}\n",
		corpus_hex, out_hex);
	fclose(f);
	printf("hook (UserPromptSubmit) p50 %.2f ms  p90 %.2f ms | "
	       "SessionStart p50 %.2f ms | cairn --version p50 %.2f ms | "
	       "ratio p50 %.2f | injected %zu/%zu\nresults: %s\n",
	       sh.p50, sh.p90, ss.p50, sb.p50,
	       sb.p50 > 0 ? sh.p50 / sb.p50 : 0, injected, c.q, outpath);
	printf("hook CPU (user + sys) p50 %.2f ms | /bin/true p50 %.2f ms\n",
	       sh_cpu.p50, st_true.p50);
	if (compare)
		printf("compare (%s) p50 %.2f ms  p90 %.2f ms | this / compare "
		       "p50 %.2f | CPU p50 %.2f ms, this / compare %.2f\n",
		       compare_abs, sc.p50, sc.p90,
		       sc.p50 > 0 ? sh.p50 / sc.p50 : 0, sc_cpu.p50,
		       sc_cpu.p50 > 0 ? sh_cpu.p50 / sc_cpu.p50 : 0);
	if (local_cmp)
		printf("served and local outputs differ for %zu of %zu "
		       "prompts\n", mismatches, c.q);
	if (ws_lex)
		printf("lexical hook (same records, no vectors) p50 %.2f ms | "
		       "this / lexical p50 %.2f\n", sl.p50,
		       sl.p50 > 0 ? sh.p50 / sl.p50 : 0);
	if (serve && srv_cpu1 >= 0)
		printf("server CPU per prompt %.2f ms\n",
		       (srv_cpu1 - srv_cpu0) / (double)c.q);
	if (lex_server > 0 && lex_cpu1 >= 0)
		printf("lexical server CPU per prompt %.2f ms\n",
		       (lex_cpu1 - lex_cpu0) / (double)c.q);
	if (recalls)
		printf("cairn recall process p50 %.2f ms (lexical %.2f), peak "
		       "RSS max %.1f MiB (lexical %.1f)\n", sr.p50, sr_lex.p50,
		       vmax(tr_rss, recalls), vmax(trl_rss, recalls));
	printf("peak RSS, MiB: hook client max %.1f (/bin/true %.1f)",
	       vmax(th_rss, c.q), vmax(tt_rss, c.q));
	if (compare)
		printf(" | %s max %.1f", local_cmp ? "hook --local" : "compare",
		       vmax(tc_rss, c.q));
	if (server > 0)
		printf(" | server VmHWM %.1f", (double)srv_hwm / 1024.0);
	if (lex_server > 0)
		printf(" (lexical %.1f)", (double)lex_hwm / 1024.0);
	printf("\n");
	if (keep || reuse)
		fprintf(stderr, "hook_bench: kept %s\n", ws);
	else
		nftw(ws, bench_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (ws_lex) /* made again by every run: 10 s */
		nftw(ws_lex, bench_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	for (i = 0; i < c.q; i++)
		free(c.prompt[i]);
	for (i = 0; i < VOCAB; i++)
		free(vocab[i]);
	free(c.prompt);
	free(out);
	free(served);
	free(tt);
	free(th);
	free(tlong);
	free(tb);
	free(ts);
	free(tc);
	free(th_cpu);
	free(tc_cpu);
	free(tl);
	free(tl_cpu);
	free(th_rss);
	free(tl_rss);
	free(tc_rss);
	free(tt_rss);
	free(tr);
	free(tr_lex);
	free(tr_rss);
	free(trl_rss);
	EVP_MD_CTX_free(hc);
	EVP_MD_CTX_free(ho);
	return 0;
}
