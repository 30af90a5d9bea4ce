/*
 * seed_bench.c -- the speed of `cairn seed` (cairn_seed, no git) against a
 * plain SQLite INSERT loop of the same rows, in one run (STYLE.md 8).
 *
 * Layer: a program on the public API (cairn.h, and seed.h until cairn_seed
 * moves into cairn.h) and SQLite; nothing else of src/ is called. Built and
 * run by bench/run (make bench).
 *
 * What it does:
 *   1. input:     in a temporary workspace, from a fixed seed (--seed):
 *                 docs/facts/facts-NN.facts.md with --facts short facts in
 *                 all (default 20000; FACTS_PER_FILE a file, a heading every
 *                 FACTS_PER_HEADING, every --key-every-th keyed (default
 *                 KEY_EVERY, 0: none), some unverified, docs/SEED.md
 *                 "Facts files") and docs/adr/NNNN-*.md, --adrs ADRs (default
 *                 500) with Status, Context, Decision and Consequences
 *                 sections, long enough to be cut into several chunks; every
 *                 SUPERSEDE_EVERY-th is "Superseded by" the next one.
 *   2. plan:      cairn_seed(dry_run) on the fresh store: read, parse, chunk
 *                 and plan, nothing written.
 *   3. candidate: cairn_seed(no_git) of "docs" into the fresh store: every
 *                 record new, one transaction (records/s).
 *   4. re-seed:   cairn_seed again, nothing changed: every record unchanged.
 *   5. baseline:  the records the seed wrote, read back (id, kind, status,
 *                 title, body, path, line), inserted with one prepared
 *                 INSERT per row into a plain table (no index but the
 *                 primary key, no full-text index) of a fresh SQLite file,
 *                 WAL + synchronous=NORMAL as cairn uses, in one
 *                 transaction: the same number of rows and the same text.
 *   6. report:    times, rates, the ratios seed / INSERT, SHA-256 of the
 *                 generated input and of the sorted (id, hash) pairs of the
 *                 seeded records; JSON to --out.
 *
 * Determinism: the input files depend on --seed, --facts and --adrs only;
 * the record hash changes exactly when seeding (ids, chunking, status
 * mapping, content hash) changes. Timings do not hash.
 *
 * Must never: write outside its temporary directory and --out, or report a
 * ratio when the seed did not write every record, the re-seed left one
 * changed, or the baseline holds another number of rows.
 */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sqlite3.h>

#include "bench_util.h"
#include "cairn.h"
#include "seed.h"

#define DEFAULT_FACTS 20000u  /* facts in all */
#define DEFAULT_ADRS 500u     /* ADR files */
#define DEFAULT_SEED 20241130u
#define FACTS_PER_FILE 5000   /* a facts file stays far below seed's 4 MiB */
#define FACTS_PER_HEADING 50  /* "## Area N" every this many facts */
#define KEY_EVERY 10          /* default: every 10th fact has [key=...] */
#define UNVERIFIED_EVERY 7    /* every 7th fact is [unverified] */
#define SUPERSEDE_EVERY 20    /* every 20th ADR is superseded by the next */
#define TARGET_RATE 5000.0    /* records/s without embeddings */

/* ================================================================== PRNG */

struct rng {
	uint64_t s; /* xorshift64* state, never 0 */
};

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = splitmix64(seed);
	if (r->s == 0)
		r->s = 1;
}

static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

static size_t rng_below(struct rng *r, size_t n)
{
	return (size_t)(rng_next(r) % n);
}

/* ================================================================= input */

static const char *const nouns[] = {
	"service", "queue", "database", "cache", "cluster", "bucket", "index",
	"gateway", "worker", "scheduler", "pipeline", "runner", "replica",
	"schema", "table", "topic", "deployment", "container", "image",
	"certificate", "domain", "session", "form", "page", "submission",
	"report", "dashboard", "alert", "metric", "log", "trace",
	"release", "branch", "build", "artifact", "package", "dependency",
	"library", "endpoint", "request", "response", "payload", "webhook",
	"migration", "backup", "snapshot", "volume", "region", "zone",
	"account", "role", "policy", "secret store", "key vault", "network",
	"subnet", "firewall", "load balancer", "proxy", "browser", "client",
	"server", "team", "user", "admin", "editor", "reviewer", "translator",
};

static const char *const verbs[] = {
	"runs on", "writes to", "reads from", "depends on", "replaces",
	"is owned by", "is deployed to", "is backed up to", "publishes to",
	"listens to", "is cached in", "is monitored by", "is limited by",
	"is rotated by", "is migrated to", "is retired after", "calls",
};

static const char *const adjectives[] = {
	"primary", "secondary", "shared", "internal", "public", "nightly",
	"weekly", "regional", "legacy", "new", "small", "large", "read-only",
	"managed", "self-hosted", "encrypted", "versioned", "temporary",
	"staging", "production", "preview", "blue", "green", "canary",
};

static const char *const names[] = {
	"Postgres", "Redis", "Sidekiq", "Solid Queue", "ECS", "Fargate",
	"CloudFront", "S3", "RDS", "SQS", "SNS", "Terraform", "GitHub Actions",
	"Dependabot", "Sentry", "Splunk", "Notify", "Signon", "Rails",
	"esbuild", "webpack", "Node", "Ruby", "Docker", "Kubernetes", "Nginx",
	"OpenSearch", "Grafana", "Prometheus", "Pact", "Playwright", "Rspec",
};

#define PICK(r, a) ((a)[rng_below((r), sizeof(a) / sizeof((a)[0]))])

/* A growable text buffer; aborts the program when memory runs out. */
struct text {
	char *b;  /* the text, NUL-terminated */
	size_t n; /* its length */
	size_t cap; /* allocated bytes */
};

static void text_addf(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_addf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int len;

	for (;;) {
		va_start(ap, fmt);
		len = vsnprintf(t->b ? t->b + t->n : NULL,
				t->b ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (len < 0) {
			fprintf(stderr, "seed_bench: formatting failed\n");
			exit(1);
		}
		if (t->b && t->n + (size_t)len < t->cap)
			break;
		t->cap = (t->cap + (size_t)len + 1) * 2;
		t->b = realloc(t->b, t->cap);
		if (!t->b) {
			fprintf(stderr, "seed_bench: out of memory\n");
			exit(1);
		}
		t->b[t->n] = '\0';
	}
	t->n += (size_t)len;
}

/* One sentence of 8-14 words about nouns, names and their relations. */
static void sentence(struct text *t, struct rng *r)
{
	text_addf(t, "The %s %s %s %s %s the %s %s", PICK(r, adjectives),
		  PICK(r, names), PICK(r, nouns), PICK(r, verbs),
		  PICK(r, names), PICK(r, adjectives), PICK(r, nouns));
	if (rng_below(r, 2))
		text_addf(t, " for the %s %s", PICK(r, nouns), PICK(r, nouns));
	text_addf(t, ".");
}

/* Write t to path; exits on failure. Hashes the path and the bytes. */
static void write_file(const char *path, const struct text *t,
		       EVP_MD_CTX *ctx, const char *rel)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(t->b, 1, t->n, f) != t->n || fclose(f) != 0) {
		fprintf(stderr, "seed_bench: cannot write %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
	EVP_DigestUpdate(ctx, rel, strlen(rel) + 1);
	EVP_DigestUpdate(ctx, t->b, t->n + 1);
}

/* The facts files: nfacts facts in files of FACTS_PER_FILE; every
 * key_every-th keyed (0: none). */
static size_t gen_facts(const char *ws, size_t nfacts, size_t key_every,
			uint64_t seed, EVP_MD_CTX *ctx, size_t *bytes)
{
	char path[1400], rel[64];
	struct text t = { NULL, 0, 0 };
	struct rng r;
	size_t i = 0, file = 0;

	rng_seed(&r, seed ^ 0xfac75ull);
	while (i < nfacts) {
		size_t end = i + FACTS_PER_FILE < nfacts ? i + FACTS_PER_FILE
							 : nfacts;

		t.n = 0;
		text_addf(&t, "# Platform facts, part %zu\n\n"
			      "Short facts about the platform, one per item.\n",
			  file + 1);
		for (; i < end; i++) {
			int keyed = key_every && i % key_every == 0;

			if (i % FACTS_PER_HEADING == 0)
				text_addf(&t, "\n## Area %zu\n\n",
					  i / FACTS_PER_HEADING + 1);
			text_addf(&t, "- ");
			if (keyed && i % UNVERIFIED_EVERY == 0)
				text_addf(&t, "[unverified, key=fact.%zu] ", i);
			else if (keyed)
				text_addf(&t, "[key=fact.%zu] ", i);
			else if (i % UNVERIFIED_EVERY == 0)
				text_addf(&t, "[unverified] ");
			/* the number keeps every fact's text distinct */
			text_addf(&t, "Fact %zu: ", i);
			sentence(&t, &r);
			text_addf(&t, "\n");
		}
		snprintf(rel, sizeof(rel), "docs/facts/facts-%02zu.facts.md",
			 file + 1);
		snprintf(path, sizeof(path), "%s/%s", ws, rel);
		write_file(path, &t, ctx, rel);
		*bytes += t.n;
		file++;
	}
	free(t.b);
	return file;
}

/* A paragraph of 2-4 sentences. */
static void paragraph(struct text *t, struct rng *r)
{
	size_t k, n = 2 + rng_below(r, 3);

	for (k = 0; k < n; k++) {
		if (k)
			text_addf(t, " ");
		sentence(t, r);
	}
	text_addf(t, "\n\n");
}

/* The ADR files: nadrs Nygard-style records, docs/adr/NNNN-*.md. */
static void gen_adrs(const char *ws, size_t nadrs, uint64_t seed,
		     EVP_MD_CTX *ctx, size_t *bytes)
{
	static const char *const sections[] = { "Context", "Decision",
						"Consequences" };
	char path[1400], rel[128];
	struct text t = { NULL, 0, 0 };
	struct rng r;
	size_t i, s, p;

	rng_seed(&r, seed ^ 0xad7ull);
	for (i = 1; i <= nadrs; i++) {
		const char *noun = PICK(&r, nouns), *name = PICK(&r, names);
		char slug[96];
		size_t k;

		snprintf(slug, sizeof(slug), "use-%s-for-the-%s", name, noun);
		for (k = 0; slug[k]; k++)
			if (slug[k] == ' ')
				slug[k] = '-';
			else if (slug[k] >= 'A' && slug[k] <= 'Z')
				slug[k] = (char)(slug[k] - 'A' + 'a');
		t.n = 0;
		text_addf(&t, "# ADR %zu: Use %s for the %s\n\n", i, name,
			  noun);
		text_addf(&t, "Date: 20%02zu-%02zu-%02zu\n\n## Status\n\n",
			  18 + i % 8, 1 + i % 12, 1 + i % 28);
		if (i % SUPERSEDE_EVERY == 0 && i < nadrs)
			text_addf(&t, "Superseded by ADR-%04zu\n\n", i + 1);
		else if (i % 9 == 0)
			text_addf(&t, "Proposed\n\n");
		else
			text_addf(&t, "Accepted\n\n");
		for (s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
			size_t np = 2 + rng_below(&r, 2);

			text_addf(&t, "## %s\n\n", sections[s]);
			for (p = 0; p < np; p++)
				paragraph(&t, &r);
		}
		snprintf(rel, sizeof(rel), "docs/adr/%04zu-%s.md", i, slug);
		snprintf(path, sizeof(path), "%s/%s", ws, rel);
		write_file(path, &t, ctx, rel);
		*bytes += t.n;
	}
	free(t.b);
}

/* ================================================================ helpers */

static void make_dir(const char *path)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "seed_bench: mkdir %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
}

static int cmp_rec(const void *a, const void *b)
{
	const cairn_record *x = *(cairn_record *const *)a;
	const cairn_record *y = *(cairn_record *const *)b;

	return strcmp(x->id, y->id);
}

/* One timed cairn_seed of "docs"; prints its messages on an error. */
static int seed_once(cairn_db *db, int dry_run, cairn_seed_report *rep,
		     double *secs)
{
	static const char *const paths[] = { "docs" };
	cairn_seed_opts so;
	double t0;
	int rc;

	memset(&so, 0, sizeof(so));
	so.no_git = 1;
	so.dry_run = dry_run;
	t0 = bench_now_s();
	rc = cairn_seed(db, paths, 1, &so, rep);
	*secs = bench_now_s() - t0;
	if (rc)
		fprintf(stderr, "seed_bench: cairn_seed: %s\n%s",
			cairn_errmsg(db), rep->messages ? rep->messages : "");
	return rc;
}

static int sql_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "seed_bench: sqlite: %s: %s\n", sql,
			msg ? msg : "?");
		sqlite3_free(msg);
		return 1;
	}
	return 0;
}

/*
 * The baseline: the n records inserted row by row (one prepared INSERT,
 * bound and stepped per row) into a plain table, in one transaction.
 * *secs covers BEGIN..COMMIT; *rows is the table's count afterwards.
 */
static int insert_loop(const char *path, cairn_record **recs, size_t n,
		       double *secs, long long *rows)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	double t0;
	size_t i;
	int rc = 1;

	if (sqlite3_open(path, &db) != SQLITE_OK) {
		fprintf(stderr, "seed_bench: sqlite3_open %s\n", path);
		goto out;
	}
	if (sql_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "CREATE TABLE rows(id TEXT PRIMARY KEY, kind TEXT, "
			 "status TEXT, title TEXT, body TEXT, src_path TEXT, "
			 "src_line INTEGER)"))
		goto out;
	if (sqlite3_prepare_v2(db, "INSERT INTO rows VALUES(?,?,?,?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "seed_bench: prepare: %s\n",
			sqlite3_errmsg(db));
		goto out;
	}
	t0 = bench_now_s();
	if (sql_exec(db, "BEGIN"))
		goto out;
	for (i = 0; i < n; i++) {
		const cairn_record *x = recs[i];

		sqlite3_bind_text(st, 1, x->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, x->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, x->status, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, x->title, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, x->body, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, x->src_path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 7, x->src_line);
		if (sqlite3_step(st) != SQLITE_DONE) {
			fprintf(stderr, "seed_bench: insert: %s\n",
				sqlite3_errmsg(db));
			goto out;
		}
		sqlite3_reset(st);
	}
	if (sql_exec(db, "COMMIT"))
		goto out;
	*secs = bench_now_s() - t0;
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM rows", -1, &st,
			       NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		goto out;
	*rows = sqlite3_column_int64(st, 0);
	rc = 0;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* ================================================================ report */

static void usage(void)
{
	fprintf(stderr,
		"usage: seed_bench [--facts N] [--adrs M] [--key-every K] "
		"[--seed S] [--out FILE] [--tmpdir DIR] [--keep]\n");
}

int main(int argc, char **argv)
{
	size_t nfacts = DEFAULT_FACTS, nadrs = DEFAULT_ADRS, i, nrec = 0;
	size_t key_every = KEY_EVERY, nkeys = 0;
	size_t nfiles, in_bytes = 0, body_bytes = 0;
	uint64_t seed = DEFAULT_SEED;
	const char *out = "bench/results/seed.json", *tmpbase = NULL;
	char tmp[1024], ws[1100], path[1300], cpu[256], date[32];
	char input_hash[65], records_hash[65], line[256];
	double plan_s = 0, seed_s = 0, reseed_s = 0, insert_s = 0, open_s;
	double t0;
	long long rows = 0;
	cairn_seed_report plan, rep, again;
	cairn_open_opts oo;
	cairn_filter flt;
	cairn_record **recs = NULL;
	cairn_db *db = NULL;
	EVP_MD_CTX *ctx;
	time_t now;
	FILE *f;
	int keep = 0, ok;

	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i], *v = i + 1 < (size_t)argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--keep") == 0) {
			keep = 1;
			continue;
		}
		if (!v) {
			usage();
			return 2;
		}
		if (strcmp(a, "--facts") == 0)
			nfacts = strtoul(v, NULL, 10);
		else if (strcmp(a, "--adrs") == 0)
			nadrs = strtoul(v, NULL, 10);
		else if (strcmp(a, "--key-every") == 0)
			key_every = strtoul(v, NULL, 10);
		else if (strcmp(a, "--seed") == 0)
			seed = strtoull(v, NULL, 10);
		else if (strcmp(a, "--out") == 0)
			out = v;
		else if (strcmp(a, "--tmpdir") == 0)
			tmpbase = v;
		else {
			usage();
			return 2;
		}
		i++;
	}
	if (nfacts + nadrs < 10) {
		fprintf(stderr, "seed_bench: --facts + --adrs must be at least 10\n");
		return 2;
	}
	memset(&plan, 0, sizeof(plan));
	memset(&rep, 0, sizeof(rep));
	memset(&again, 0, sizeof(again));

	/* the input, generated once and hashed */
	snprintf(tmp, sizeof(tmp), "%s/cairn-seed-bench-XXXXXX",
		 tmpbase ? tmpbase : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		fprintf(stderr, "seed_bench: mkdtemp %s: %s\n", tmp,
			strerror(errno));
		return 1;
	}
	snprintf(ws, sizeof(ws), "%s/ws", tmp);
	make_dir(ws);
	snprintf(path, sizeof(path), "%s/docs", ws);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/docs/facts", ws);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/docs/adr", ws);
	make_dir(path);
	ctx = EVP_MD_CTX_new();
	if (!ctx) {
		fprintf(stderr, "seed_bench: out of memory\n");
		return 1;
	}
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	nfiles = gen_facts(ws, nfacts, key_every, seed, ctx, &in_bytes);
	nkeys = key_every ? (nfacts + key_every - 1) / key_every : 0;
	gen_adrs(ws, nadrs, seed, ctx, &in_bytes);
	nfiles += nadrs;
	bench_sha_hex(ctx, input_hash);
	printf("seed_bench: %zu facts (%zu keyed) in %zu facts files, %zu ADR "
	       "files, %.1f MB of Markdown\n",
	       nfacts, nkeys, nfiles - nadrs, nadrs, (double)in_bytes / 1e6);
	fflush(stdout);

	/* the candidate: plan, seed, re-seed */
	memset(&oo, 0, sizeof(oo));
	oo.create = 1;
	oo.no_global = 1;
	snprintf(path, sizeof(path), "%s/.cairn", ws);
	t0 = bench_now_s();
	if (cairn_db_open(path, &oo, &db) != CAIRN_OK) {
		fprintf(stderr, "seed_bench: open %s: %s\n", path,
			cairn_errmsg(db));
		return 1;
	}
	open_s = bench_now_s() - t0;
	fprintf(stderr, "planning (dry run)...\n");
	if (seed_once(db, 1, &plan, &plan_s))
		return 1;
	fprintf(stderr, "seeding...\n");
	if (seed_once(db, 0, &rep, &seed_s))
		return 1;
	fprintf(stderr, "re-seeding...\n");
	if (seed_once(db, 0, &again, &reseed_s))
		return 1;

	/* what was written: (id, hash) hashed, rows for the baseline */
	memset(&flt, 0, sizeof(flt));
	flt.statuses = "all";
	if (cairn_record_list(db, &flt, &recs, &nrec) != CAIRN_OK) {
		fprintf(stderr, "seed_bench: list: %s\n", cairn_errmsg(db));
		return 1;
	}
	qsort(recs, nrec, sizeof(*recs), cmp_rec);
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; i < nrec; i++) {
		int len = snprintf(line, sizeof(line), "%s\t%s\n", recs[i]->id,
				   recs[i]->hash ? recs[i]->hash : "");

		EVP_DigestUpdate(ctx, line, (size_t)len < sizeof(line)
						    ? (size_t)len
						    : sizeof(line) - 1);
		body_bytes += strlen(recs[i]->body) + strlen(recs[i]->title);
	}
	bench_sha_hex(ctx, records_hash);

	/* the baseline: the same rows, a plain INSERT loop */
	fprintf(stderr, "inserting (baseline)...\n");
	snprintf(path, sizeof(path), "%s/plain.db", tmp);
	if (insert_loop(path, recs, nrec, &insert_s, &rows))
		return 1;

	ok = rep.n_new == rep.records && nrec == rep.records &&
	     again.n_unchanged == rep.records && again.n_changed == 0 &&
	     again.n_retired == 0 && rows == (long long)nrec &&
	     plan.n_new == rep.records;
	bench_cpu_model(cpu, sizeof(cpu));
	now = time(NULL);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

	printf("\n%zu files -> %zu records (%zu new; re-seed: %zu unchanged, "
	       "%zu changed), %.1f MB of title + body\n",
	       rep.files, rep.records, rep.n_new, again.n_unchanged,
	       again.n_changed, (double)body_bytes / 1e6);
	printf("\n%-26s %10s %12s\n", "", "seconds", "records/s");
	printf("%-26s %10.3f %12.0f\n", "cairn_seed (all new)", seed_s,
	       (double)rep.records / seed_s);
	printf("%-26s %10.3f %12.0f\n", "plan only (dry run)", plan_s,
	       (double)rep.records / plan_s);
	printf("%-26s %10.3f %12.0f\n", "re-seed (all unchanged)", reseed_s,
	       (double)rep.records / reseed_s);
	printf("%-26s %10.3f %12.0f\n", "plain INSERT loop", insert_s,
	       (double)nrec / insert_s);
	printf("ratio seed / INSERT (time): %.2f; re-seed / INSERT: %.2f\n",
	       seed_s / insert_s, reseed_s / insert_s);
	printf("target %.0f records/s: %s\n", TARGET_RATE,
	       (double)rep.records / seed_s >= TARGET_RATE ? "met"
							    : "NOT met");
	printf("hashes: input %.16s records %.16s\n", input_hash,
	       records_hash);
	if (!ok)
		printf("CHECK FAILED: the seed, re-seed and baseline do not "
		       "hold the same records\n");

	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "seed_bench: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(f, "{\n  \"facts\": %zu,\n  \"keyed_facts\": %zu,\n"
		   "  \"adrs\": %zu,\n  \"files\": %zu,\n"
		   "  \"records\": %zu,\n  \"input_bytes\": %zu,\n"
		   "  \"text_bytes\": %zu,\n  \"seed\": %llu,\n"
		   "  \"consistent\": %s,\n",
		nfacts, nkeys, nadrs, rep.files, rep.records, in_bytes,
		body_bytes,
		(unsigned long long)seed, ok ? "true" : "false");
	fprintf(f,
		"  \"cairn_seed\": {\"open_s\": %.4f, \"plan_s\": %.4f, "
		"\"seed_s\": %.4f, \"records_per_s\": %.1f, \"new\": %zu},\n",
		open_s, plan_s, seed_s, (double)rep.records / seed_s,
		rep.n_new);
	fprintf(f,
		"  \"reseed\": {\"seconds\": %.4f, \"records_per_s\": %.1f, "
		"\"unchanged\": %zu, \"changed\": %zu, \"retired\": %zu},\n",
		reseed_s, (double)rep.records / reseed_s, again.n_unchanged,
		again.n_changed, again.n_retired);
	fprintf(f,
		"  \"insert_loop\": {\"seconds\": %.4f, \"records_per_s\": %.1f, "
		"\"rows\": %lld},\n",
		insert_s, (double)nrec / insert_s, rows);
	if (ok)
		fprintf(f,
			"  \"ratios\": {\"seed_s\": %.4f, \"reseed_s\": %.4f, "
			"\"plan_s\": %.4f},\n",
			seed_s / insert_s, reseed_s / insert_s,
			plan_s / insert_s);
	else
		fprintf(f, "  \"ratios\": null,\n");
	fprintf(f, "  \"target_records_per_s\": %.0f,\n  \"target_met\": %s,\n",
		TARGET_RATE,
		(double)rep.records / seed_s >= TARGET_RATE ? "true" : "false");
	fprintf(f, "  \"hashes\": {\"input\": \"%s\", \"records\": \"%s\"},\n",
		input_hash, records_hash);
	fprintf(f, "  \"machine\": {\"nproc\": %ld, \"cpu\": ",
		sysconf(_SC_NPROCESSORS_ONLN));
	bench_json_str(f, cpu);
	fprintf(f, ", \"sqlite\": \"%s\", \"cairn\": \"%s\"},\n",
		sqlite3_libversion(), CAIRN_VERSION);
	fprintf(f, "  \"date\": \"%s\"\n}\n", date);
	if (fclose(f) != 0) {
		fprintf(stderr, "seed_bench: writing %s failed\n", out);
		return 1;
	}
	printf("results: %s\n", out);

	cairn_record_list_free(recs, nrec);
	cairn_seed_report_release(&plan);
	cairn_seed_report_release(&rep);
	cairn_seed_report_release(&again);
	cairn_db_close(db);
	EVP_MD_CTX_free(ctx);
	if (keep)
		printf("kept: %s\n", tmp);
	else
		nftw(tmp, bench_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ok ? 0 : 1;
}
