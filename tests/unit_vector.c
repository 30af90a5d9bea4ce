/*
 * unit_vector.c -- the vector index (src/embed/vector.c, vector_kernel.c): the
 * kernels against a double-precision reference, top-k against a sort,
 * storage under one identity, filters, triggers, cache refresh, settings,
 * reindex and resume, the schema v4 migration.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cairn.h"
#include "embed.h"
#include "internal.h"
#include "store.h"
#include "test.h"
#include "vector.h"

static unsigned long long rng_state = 0x9E3779B97F4A7C15ULL;

static double rnd(void) /* uniform in [-1, 1) */
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / (double)(1ULL << 52) - 1.0;
}

static char *write_rec(cairn_db *db, const char *kind, const char *status,
		       const char *title, const char *body)
{
	return test_write_record(db, kind, status, "human", NULL, title, body);
}

static void check_kernel(int dim, size_t n)
{
	unsigned short *rows = calloc(n * (size_t)dim, 2);
	float *q = calloc((size_t)dim, 4), *a = calloc(n, 4), *b = calloc(n, 4);
	size_t i;
	int j;
	double worst = 0;

	for (i = 0; i < n * (size_t)dim; i++)
		rows[i] = quant_f32_to_f16((float)rnd());
	for (j = 0; j < dim; j++)
		q[j] = (float)rnd();
	vector_dots(rows, n, dim, q, a);
	vector_dots_portable(rows, n, dim, q, b);
	for (i = 0; i < n; i++) {
		double ref = 0;

		for (j = 0; j < dim; j++)
			ref += (double)quant_f16_to_f32(rows[i * dim + j]) * q[j];
		if (fabs(a[i] - ref) > worst)
			worst = fabs(a[i] - ref);
		if (fabs(b[i] - ref) > worst)
			worst = fabs(b[i] - ref);
	}
	CHECK_MSG(worst < 1e-3, "dim %d: kernel error %g", dim, worst);
	free(rows);
	free(q);
	free(a);
	free(b);
}

static void test_kernels(void)
{
	check_kernel(384, 300);
	check_kernel(100, 50);
	check_kernel(7, 20);    /* no SIMD block at all */
	check_kernel(45, 33);   /* a tail after 8-wide blocks */
	check_kernel(64, 70000); /* big enough to split over two threads */
	fprintf(stderr, "  (vector kernel: %s)\n",
		vector_simd_active() ? "avx2+fma+f16c" : "portable");
}

static int cmp_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

static void test_topk(void)
{
	size_t n = 5000, i, m, idx[VECTOR_MAX_K], k;
	float *s = malloc(n * 4), *kept = malloc(n * 4);
	unsigned char *keep = malloc(n);
	size_t nk = 0;

	for (i = 0; i < n; i++) {
		s[i] = (float)rnd();
		keep[i] = (i % 3) != 0;
		if (keep[i])
			kept[nk++] = s[i];
	}
	qsort(kept, nk, 4, cmp_desc);
	for (k = 1; k <= VECTOR_MAX_K; k += 66) {
		m = vector_topk(s, n, k, keep, idx);
		CHECK_INT(m, k);
		for (i = 0; i < m; i++) {
			CHECK(keep[idx[i]]);
			CHECK(s[idx[i]] == kept[i]);
		}
	}
	/* k above the limit is capped, fewer candidates than k */
	CHECK_INT(vector_topk(s, n, 10000, NULL, idx), VECTOR_MAX_K);
	CHECK_INT(vector_topk(s, 3, 10, NULL, idx), 3);
	CHECK(s[idx[0]] >= s[idx[1]] && s[idx[1]] >= s[idx[2]]);
	/* ties keep the lower index first */
	{
		float t[4] = { 0.5f, 0.9f, 0.5f, 0.5f };

		CHECK_INT(vector_topk(t, 4, 3, NULL, idx), 3);
		CHECK_INT(idx[0], 1);
		CHECK_INT(idx[1], 0);
		CHECK_INT(idx[2], 2);
	}
	free(s);
	free(kept);
	free(keep);
}

/* The int8 first pass + f16 rescoring equals a full f16 scan exactly. */
static void check_matrix(size_t n, int dim, size_t k, int dups)
{
	unsigned short *h = calloc(n * (size_t)dim, 2);
	float *q = calloc((size_t)dim, 4), *full = calloc(n, 4), cs[VECTOR_MAX_K];
	unsigned char *keep = calloc(n, 1);
	size_t ia[VECTOR_MAX_K], ib[VECTOR_MAX_K], i, m1, m2, same = 1;
	struct vector_matrix m;
	int j;

	for (i = 0; i < n * (size_t)dim; i++)
		h[i] = quant_f32_to_f16((float)rnd() * 0.1f);
	if (dups == 2) /* one cluster: scores closer than int8's error */
		for (i = 0; i < n * (size_t)dim; i++)
			h[i] = quant_f32_to_f16(0.05f * (float)((i % (size_t)dim) % 3) +
					  (float)rnd() * 0.002f);
	if (dups == 1) /* exact ties: rows 5.. are copies of row 0..4 */
		for (i = 5; i < n && i < 60; i++)
			memcpy(h + i * dim, h + (i % 5) * dim, (size_t)dim * 2);
	for (j = 0; j < dim; j++)
		q[j] = (float)rnd();
	/* one spike: the int8 query is coarse (step 50/127 for the other
	 * components), so the first pass is far off; a bound that leaves the
	 * query's own rounding out drops true top-k rows */
	if (dups == 3)
		q[0] = 50.0f;
	for (i = 0; i < n; i++)
		keep[i] = (i % 7) != 3;
	memset(&m, 0, sizeof(m));
	m.n = n;
	m.dim = dim;
	m.h = h;
	/* without the int8 copy: a plain f16 scan, the same answer */
	m2 = vector_matrix_topk(&m, q, keep, k, ib, cs);
	m1 = vector_topk((vector_dots(h, n, dim, q, full), full), n, k, keep,
			 ia);
	CHECK_INT(m1, m2);
	for (i = 0; i < m1 && i < m2; i++)
		CHECK(ia[i] == ib[i] && full[ia[i]] == cs[i]);
	CHECK_INT(vector_matrix_build(&m), CAIRN_OK);
	/* the int8 copy is the documented rounding of each row (whichever
	 * kernel built it): scale = max|x| / 127, round half away from zero,
	 * l1 = sum of |int8| */
	{
		size_t bad = 0;

		for (i = 0; i < n && m.q8; i++) {
			float mx = 0, inv;
			long l1 = 0;

			for (j = 0; j < dim; j++)
				if (fabsf(quant_f16_to_f32(h[i * dim + j])) > mx)
					mx = fabsf(quant_f16_to_f32(h[i * dim + j]));
			inv = mx > 0 ? 127.0f / mx : 0;
			for (j = 0; j < dim; j++) {
				float y = quant_f16_to_f32(h[i * dim + j]) * inv;
				signed char c = (signed char)(y >= 0 ? y + 0.5f
								      : y - 0.5f);

				bad += m.q8[i * dim + j] != c;
				l1 += c < 0 ? -c : c;
			}
			bad += m.scale[i] != mx / 127.0f;
			bad += m.l1[i] != (float)l1;
		}
		CHECK_MSG(bad == 0, "n %zu dim %d: %zu int8 values, scales or "
			  "sums differ from the rounding rule", n, dim, bad);
	}
	vector_dots(h, n, dim, q, full);
	m1 = vector_topk(full, n, k, keep, ia);
	m2 = vector_matrix_topk(&m, q, keep, k, ib, cs);
	CHECK_INT(m1, m2);
	for (i = 0; i < m1 && i < m2; i++)
		if (ia[i] != ib[i] || full[ia[i]] != cs[i])
			same = 0;
	CHECK_MSG(same, "n %zu dim %d k %zu: int8+rescore differs from the "
		  "f16 scan", n, dim, k);
	/* negative control: the int8 pass alone is not exact */
	if (n > 1000) {
		float *a = calloc(n, 4);
		size_t diff = 0;

		vector_dots_i8(&m, q, a);
		for (i = 0; i < n; i++)
			diff += a[i] != full[i];
		CHECK(diff > n / 2);
		free(a);
	}
	vector_matrix_release(&m);
	free(h);
	free(q);
	free(full);
	free(keep);
}

static void test_matrix_exact(void)
{
	check_matrix(20000, 384, 200, 0);
	check_matrix(20000, 384, 200, 2);
	check_matrix(20000, 384, 200, 3);
	check_matrix(3000, 45, 10, 1);
	check_matrix(50, 8, 200, 1); /* fewer rows than k */
	check_matrix(1, 3, 1, 0);
}

static void fake_identity(struct embed_identity *id, const char *model,
			  int dim)
{
	memset(id, 0, sizeof(*id));
	snprintf(id->provider, sizeof(id->provider), "test");
	snprintf(id->model, sizeof(id->model), "%s", model);
	snprintf(id->revision, sizeof(id->revision), "r1");
	id->dim = dim;
	snprintf(id->pooling, sizeof(id->pooling), "n/a");
}

static void unit(float *v, int dim, int axis, float tilt)
{
	int i;

	for (i = 0; i < dim; i++)
		v[i] = 0;
	v[axis] = 1;
	v[(axis + 1) % dim] = tilt;
}

/* EVIDENCE-OF: exact top-k over stored vectors, filters, triggers */
static void test_store_search(void)
{
	cairn_db *db = test_store("vsearch", NULL, 0);
	struct embed_identity id, other;
	struct vector_hit hits[VECTOR_MAX_K];
	struct vector_filter f;
	float v[8], q[8];
	char *a = write_rec(db, "fact", "accepted", "alpha", "first");
	char *b = write_rec(db, "decision", "accepted", "beta", "second");
	char *c = write_rec(db, "fact", "unverified", "gamma", "third");
	char *d = write_rec(db, "fact", "candidate", "delta", "fourth");
	long long dropped = -1;
	size_t n = 0;
	cairn_record patch;

	fake_identity(&id, "m", 8);
	/* before an identity, putting is refused */
	unit(v, 8, 0, 0);
	CHECK_INT(vector_put(db, a, v, 8), CAIRN_MISMATCH);
	CHECK_INT(vector_set_identity(db, "main", &id, &dropped), CAIRN_OK);
	CHECK_INT(dropped, 0);
	CHECK_INT(vector_put(db, a, v, 8), CAIRN_OK);
	unit(v, 8, 0, 0.5f);
	CHECK_INT(vector_put(db, b, v, 8), CAIRN_OK);
	unit(v, 8, 1, 0);
	CHECK_INT(vector_put(db, c, v, 8), CAIRN_OK);
	unit(v, 8, 0, 0.1f);
	CHECK_INT(vector_put(db, d, v, 8), CAIRN_OK);
	CHECK_INT(vector_put(db, "nope", v, 8), CAIRN_NOTFOUND);
	CHECK_INT(vector_put(db, a, v, 4), CAIRN_MISMATCH);

	unit(q, 8, 0, 0);
	/* default statuses: accepted + unverified, so d (candidate) is out */
	CHECK_MSG(vector_search(db, &id, q, NULL, 10, hits, &n) == CAIRN_OK,
		  "%s", cairn_errmsg(db));
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(hits[0].id, a);
		CHECK(fabsf(hits[0].cos - 1.0f) < 1e-3f);
		CHECK_STR(hits[1].id, b);
		CHECK(fabsf(hits[1].cos - 1.0f / sqrtf(1.25f)) < 1e-3f);
		CHECK_STR(hits[2].id, c);
		CHECK(fabsf(hits[2].cos) < 1e-3f);
		CHECK_STR(hits[0].schema, "main");
	}
	/* k = 1 */
	CHECK_INT(vector_search(db, &id, q, NULL, 1, hits, &n), CAIRN_OK);
	CHECK_INT(n, 1);
	/* kinds and statuses */
	f.kinds = "fact";
	f.statuses = "accepted,candidate";
	CHECK_INT(vector_search(db, &id, q, &f, 10, hits, &n), CAIRN_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(hits[0].id, a);
		CHECK_STR(hits[1].id, d);
	}
	f.kinds = "all";
	f.statuses = "all";
	CHECK_INT(vector_search(db, &id, q, &f, 10, hits, &n), CAIRN_OK);
	CHECK_INT(n, 4);
	f.kinds = "bogus";
	CHECK_INT(vector_search(db, &id, q, &f, 10, hits, &n), CAIRN_INVALID);
	/* a status change (approve) is seen by the cached index */
	CHECK_INT(cairn_record_set_status(db, d, "candidate", "accepted", 0),
		  CAIRN_OK);
	CHECK_INT(vector_search(db, &id, q, NULL, 10, hits, &n), CAIRN_OK);
	CHECK_INT(n, 4);
	/* changing a record's text drops its vector (trigger) and the cache */
	memset(&patch, 0, sizeof(patch));
	patch.body = (char *)"first, rewritten";
	patch.confidence = -1;
	CHECK_INT(cairn_record_revise(db, a, &patch, 0), CAIRN_OK);
	CHECK_INT(vector_search(db, &id, q, NULL, 10, hits, &n), CAIRN_OK);
	CHECK_INT(n, 3);
	if (n >= 1)
		CHECK_STR(hits[0].id, d);
	/* a change made through another handle (another process) is seen:
	 * the triggers move the counters the cache watches */
	{
		char dir[600];
		cairn_open_opts o;
		cairn_db *db2 = NULL;

		snprintf(dir, sizeof(dir), "%s/vsearch/.cairn", test_tmpdir);
		memset(&o, 0, sizeof(o));
		o.no_global = 1;
		CHECK_INT(cairn_db_open(dir, &o, &db2), CAIRN_OK);
		CHECK_INT(cairn_record_set_status(db2, b, NULL, "retired", 0),
			  CAIRN_OK);
		CHECK_INT(vector_search(db, &id, q, NULL, 10, hits, &n),
			  CAIRN_OK);
		CHECK_INT(n, 2);
		{
			char sql[100];

			snprintf(sql, sizeof(sql),
				 "DELETE FROM records WHERE id = '%s'", d);
			CHECK(sqlite3_exec(db2->sql, sql, NULL, NULL, NULL) ==
			      SQLITE_OK);
		}
		CHECK_INT(vector_search(db, &id, q, NULL, 10, hits, &n),
			  CAIRN_OK);
		CHECK_INT(n, 1);
		if (n == 1)
			CHECK_STR(hits[0].id, c);
		cairn_db_close(db2);
	}
	/* another identity is refused, naming cairn reindex */
	fake_identity(&other, "other-model", 8);
	CHECK_INT(vector_search(db, &other, q, NULL, 10, hits, &n),
		  CAIRN_MISMATCH);
	CHECK(strstr(cairn_errmsg(db), "cairn reindex") != NULL);
	/* switching the identity drops every old vector */
	CHECK_INT(vector_set_identity(db, "main", &other, &dropped), CAIRN_OK);
	CHECK_INT(dropped, 2); /* b (retired) and c; a and d lost theirs */
	CHECK_INT(vector_search(db, &other, q, NULL, 10, hits, &n), CAIRN_OK);
	CHECK_INT(n, 0);
	/* and the old identity now finds nothing to compare with either */
	CHECK_INT(vector_search(db, &id, q, NULL, 10, hits, &n), CAIRN_OK);
	CHECK_INT(n, 0);
	cairn_free(a);
	cairn_free(b);
	cairn_free(c);
	cairn_free(d);
	cairn_db_close(db);
}

/* Search the store of workspace NAME through a fresh handle (a new
 * process, as far as the cache is concerned); the first hit's id into
 * top and its cosine into *cos; returns the hit count or -1. */
static int fresh_search(const char *name, const struct embed_identity *id,
			const float *q, char *top, size_t size, float *cos)
{
	char dir[600];
	cairn_open_opts o;
	cairn_db *db = NULL;
	struct vector_hit hits[10];
	size_t n = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s/.cairn", test_tmpdir, name);
	memset(&o, 0, sizeof(o));
	o.no_global = 1;
	if (cairn_db_open(dir, &o, &db) != CAIRN_OK) {
		cairn_db_close(db);
		return -1;
	}
	rc = vector_search(db, id, q, NULL, 10, hits, &n);
	snprintf(top, size, "%s", n ? hits[0].id : "");
	*cos = n ? hits[0].cos : 0;
	cairn_db_close(db);
	return rc == CAIRN_OK ? (int)n : -1;
}

/* Overwrite the first f16 1.0 (bytes 00 3c) after the header of the file
 * with 0; 1 when found. */
static int zero_first_one(const char *path)
{
	FILE *f = fopen(path, "r+b");
	long pos = 64;
	int c, prev = -1, done = 0;

	if (!f)
		return 0;
	fseek(f, pos, SEEK_SET);
	while (!done && (c = fgetc(f)) != EOF) {
		if (prev == 0x00 && c == 0x3c && (pos & 1) == 1) {
			fseek(f, pos, SEEK_SET);
			fputc(0, f);
			done = 1;
		}
		prev = c;
		pos++;
	}
	fclose(f);
	return done;
}

/* EVIDENCE-OF: the hook's dense search maps the sidecar instead
 * of reading SQLite, and never uses one that no longer matches the store */
static void test_sidecar(void)
{
	cairn_db *db = test_store("vside", NULL, 0);
	struct embed_identity id;
	struct vector_hit hits[10];
	char side[600], top[VECTOR_ID_MAX], stale[640], live[640];
	char *r[40];
	float v[8], q[8], cos = 0;
	size_t n = 0, i;
	pid_t dead;
	FILE *f;

	fake_identity(&id, "m", 8);
	CHECK_INT(vector_set_identity(db, "main", &id, NULL), CAIRN_OK);
	for (i = 0; i < 40; i++) {
		char title[32];

		snprintf(title, sizeof(title), "rec %zu", i);
		r[i] = write_rec(db, "fact", "accepted", title, "body");
		/* r[0] is e0 exactly; the others lean on axis 1..7 */
		unit(v, 8, i == 0 ? 0 : 1 + (int)(i % 7), i == 0 ? 0 : 0.3f);
		CHECK_INT(vector_put(db, r[i], v, 8), CAIRN_OK);
	}
	unit(q, 8, 0, 0);
	snprintf(side, sizeof(side), "%s/vside/.cairn/cairn.db-vectors",
		 test_tmpdir);
	remove(side);
	/* the temporary file of a writer that died (a child that has exited)
	 * and one of a live process (this one's parent) */
	dead = fork();
	if (dead == 0)
		_exit(0);
	CHECK(dead > 0 && waitpid(dead, NULL, 0) == dead);
	snprintf(stale, sizeof(stale), "%s.%ld.tmp", side, (long)dead);
	snprintf(live, sizeof(live), "%s.%ld.tmp", side, (long)getppid());
	f = fopen(stale, "wb");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	f = fopen(live, "wb");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	/* a load from SQLite writes the sidecar (and sweeps the dead one's) */
	CHECK_INT(vector_search(db, &id, q, NULL, 10, hits, &n), CAIRN_OK);
	CHECK(n > 0 && strcmp(hits[0].id, r[0]) == 0);
	f = fopen(side, "rb");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK(access(stale, F_OK) != 0);
	CHECK(access(live, F_OK) == 0);
	remove(live);
	/* a fresh handle finds the same */
	CHECK_INT(fresh_search("vside", &id, q, top, sizeof(top), &cos), 10);
	CHECK_STR(top, r[0]);
	CHECK(fabsf(cos - 1.0f) < 1e-3f);
	/* it reads the sidecar, not SQLite: a tampered row shows */
	CHECK(zero_first_one(side));
	CHECK_INT(fresh_search("vside", &id, q, top, sizeof(top), &cos), 10);
	CHECK(strcmp(top, r[0]) != 0 || fabsf(cos - 1.0f) > 0.5f);
	/* negative control: once the store's vectors change, that sidecar
	 * is not used again (the generation moved): r[0] is back */
	unit(v, 8, 3, 0);
	CHECK_INT(vector_put(db, r[5], v, 8), CAIRN_OK);
	CHECK_INT(fresh_search("vside", &id, q, top, sizeof(top), &cos), 10);
	CHECK_STR(top, r[0]);
	CHECK(fabsf(cos - 1.0f) < 1e-3f);
	/* a damaged sidecar is ignored and rewritten: truncated ... */
	f = fopen(side, "r+b");
	CHECK(f != NULL);
	if (f) {
		CHECK(ftruncate(fileno(f), 100) == 0);
		fclose(f);
	}
	CHECK_INT(fresh_search("vside", &id, q, top, sizeof(top), &cos), 10);
	CHECK_STR(top, r[0]);
	/* ... or garbage that a wrong length would not catch */
	f = fopen(side, "r+b");
	CHECK(f != NULL);
	if (f) {
		char junk[4096];

		memset(junk, 0xff, sizeof(junk));
		fseek(f, 64, SEEK_SET);
		fwrite(junk, 1, sizeof(junk), f);
		fclose(f);
	}
	CHECK_INT(fresh_search("vside", &id, q, top, sizeof(top), &cos), 10);
	CHECK_STR(top, r[0]);
	CHECK(fabsf(cos - 1.0f) < 1e-3f);
	/* a status change is seen by a fresh handle (labels moved) */
	CHECK_INT(cairn_record_set_status(db, r[0], NULL, "retired", 0),
		  CAIRN_OK);
	CHECK_INT(fresh_search("vside", &id, q, top, sizeof(top), &cos), 10);
	CHECK(strcmp(top, r[0]) != 0);
	for (i = 0; i < 40; i++)
		cairn_free(r[i]);
	cairn_db_close(db);
}

/* The caller's CAIRN_EMBED_* must not change what these tests see. */
static void clear_embed_env(void)
{
	static const char *const v[] = {
		"CAIRN_EMBED_PROVIDER", "CAIRN_EMBED_MODEL", "CAIRN_EMBED_URL",
		"CAIRN_EMBED_API_KEY_ENV", "CAIRN_EMBED_QUERY_INSTRUCTION",
		"CAIRN_EMBED_PASSAGE_INSTRUCTION", "CAIRN_EMBED_POOLING",
		"CAIRN_EMBED_THREADS", "CAIRN_EMBED_TIMEOUT_MS"
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		unsetenv(v[i]);
}

static void test_settings(void)
{
	cairn_db *db = test_store("vsettings", NULL, 0);
	struct embed_config cfg;
	struct vector_settings s;

	clear_embed_env();

	CHECK_INT(vector_settings_load(db, &s), CAIRN_OK);
	CHECK(!vector_settings_enabled(&s));
	vector_settings_release(&s);
	memset(&cfg, 0, sizeof(cfg));
	cfg.provider = "static";
	cfg.model = "/tmp/x.cairnvec";
	cfg.query_instruction = "";
	cfg.pooling = -1;
	cfg.timeout_ms = 1234;
	CHECK_INT(vector_settings_save(db, &cfg), CAIRN_OK);
	CHECK_INT(vector_settings_load(db, &s), CAIRN_OK);
	CHECK(vector_settings_enabled(&s));
	CHECK_STR(s.cfg.provider, "static");
	CHECK_STR(s.cfg.model, "/tmp/x.cairnvec");
	/* an empty instruction is kept as "" (not the family default) */
	CHECK_STR(s.cfg.query_instruction, "");
	CHECK(s.cfg.passage_instruction == NULL);
	CHECK(s.cfg.url == NULL);
	CHECK_INT(s.cfg.timeout_ms, 1234);
	CHECK_INT(s.cfg.pooling, -1);
	vector_settings_release(&s);
	/* the environment overrides for one process, as it was when the
	 * store opened: set now, it reaches the next handle, not this one */
	setenv("CAIRN_EMBED_MODEL", "/elsewhere.cairnvec", 1);
	setenv("CAIRN_EMBED_POOLING", "cls", 1);
	CHECK_INT(vector_settings_load(db, &s), CAIRN_OK);
	CHECK_STR(s.cfg.model, "/tmp/x.cairnvec");
	vector_settings_release(&s);
	cairn_db_close(db);
	db = test_store("vsettings", NULL, 0);
	CHECK_INT(vector_settings_load(db, &s), CAIRN_OK);
	CHECK_STR(s.cfg.model, "/elsewhere.cairnvec");
	CHECK_INT(s.cfg.pooling, 2);
	vector_settings_release(&s);
	/* no store: the environment as it is now */
	CHECK_INT(vector_settings_load(NULL, &s), CAIRN_OK);
	CHECK_STR(s.cfg.model, "/elsewhere.cairnvec");
	CHECK(s.cfg.provider == NULL);
	vector_settings_release(&s);
	setenv("CAIRN_EMBED_POOLING", "sideways", 1);
	cairn_db_close(db);
	db = test_store("vsettings", NULL, 0);
	CHECK_INT(vector_settings_load(db, &s), CAIRN_INVALID);
	unsetenv("CAIRN_EMBED_MODEL");
	unsetenv("CAIRN_EMBED_POOLING");
	cairn_db_close(db);
}

/* A tiny static model: each word on its own axis. */
static void tiny_model(const char *path)
{
	const char *words[6] = { "the", "cat", "dog", "car", "sat", "drove" };
	float vecs[6 * 6];
	char err[256];
	int i;

	memset(vecs, 0, sizeof(vecs));
	for (i = 0; i < 6; i++)
		vecs[i * 6 + i] = 1;
	CHECK_INT(embed_static_write(path, words, vecs, NULL, 6, 6, err,
				     sizeof(err)),
		  CAIRN_OK);
}

struct prog {
	long long calls, last;
};

static void on_progress(void *ctx, long long done, long long total)
{
	struct prog *p = ctx;

	p->calls++;
	p->last = done;
	(void)total;
}

/* EVIDENCE-OF: reindex is incremental and resumes */
static void test_reindex(void)
{
	cairn_db *db = test_store("vreindex", NULL, 0);
	char path[600], err[256];
	struct embed_config cfg;
	struct embedder *e = NULL;
	struct vector_reindex_result res;
	struct vector_hit hits[10];
	struct prog pr = { 0, 0 };
	struct vector_stats vs;
	char *ids[5];
	size_t n = 0;
	int i;

	clear_embed_env();
	snprintf(path, sizeof(path), "%s/tiny.cairnvec", test_tmpdir);
	tiny_model(path);
	ids[0] = write_rec(db, "fact", "accepted", "", "the cat sat");
	ids[1] = write_rec(db, "fact", "accepted", "", "the dog sat");
	ids[2] = write_rec(db, "fact", "accepted", "", "the car drove");
	ids[3] = write_rec(db, "fact", "accepted", "Cat", "cat cat");
	ids[4] = write_rec(db, "fact", "accepted", "", "nothing known here");
	memset(&cfg, 0, sizeof(cfg));
	cfg.provider = "static";
	cfg.model = path;
	cfg.pooling = -1;
	CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_OK);
	if (!e)
		goto out;
	CHECK_INT(vector_reindex(db, e, 2, on_progress, &pr, &res), CAIRN_OK);
	CHECK_INT(res.total, 5);
	CHECK_INT(res.embedded, 5);
	CHECK_INT(res.have, 5);
	CHECK_INT(pr.calls, 3); /* batches of 2: 2 + 2 + 1 */
	CHECK_INT(pr.last, 5);
	/* again: nothing to do */
	CHECK_INT(vector_reindex(db, e, 2, NULL, NULL, &res), CAIRN_OK);
	CHECK_INT(res.total, 0);
	CHECK_INT(res.embedded, 0);
	/* an interrupted run leaves some records without a vector: simulate
	 * by deleting two; the next run embeds exactly those */
	CHECK(sqlite3_exec(db->sql, "DELETE FROM vectors WHERE rid IN "
				    "(SELECT rid FROM records ORDER BY rid "
				    "LIMIT 2 OFFSET 2)",
			   NULL, NULL, NULL) == SQLITE_OK);
	CHECK_INT(vector_stats(db, &vs), CAIRN_OK);
	CHECK_INT(vs.records, 5);
	CHECK_INT(vs.with_vector, 3);
	CHECK_INT(vs.dim, 6);
	CHECK(strstr(vs.identity, "\"provider\":\"static\"") != NULL);
	CHECK_INT(vector_reindex(db, e, 0, NULL, NULL, &res), CAIRN_OK);
	CHECK_INT(res.total, 2);
	CHECK_INT(res.embedded, 2);
	CHECK_INT(res.have, 5);
	/* search by text through the stored settings */
	{
		struct embed_config save = cfg;

		save.model = path;
		CHECK_INT(vector_settings_save(db, &save), CAIRN_OK);
	}
	{
		struct vector_filter f = { NULL, NULL };

		CHECK_INT(vector_query(db, "a cat", &f, 10, hits, &n), CAIRN_OK);
		CHECK_INT(n, 5);
		if (n == 5) {
			CHECK_STR(hits[0].id, ids[3]); /* only cat */
			CHECK_STR(hits[1].id, ids[0]);
			CHECK(hits[0].cos > hits[1].cos);
			/* the record with no known word has a zero vector */
			CHECK_STR(hits[4].id, ids[4]);
			CHECK(fabsf(hits[4].cos) < 1e-6f);
		}
	}
	/* a record written after the reindex has no vector until the next */
	{
		char *late = write_rec(db, "fact", "accepted", "", "cat");
		int found = 0;
		size_t j;

		CHECK_INT(vector_query(db, "cat", NULL, 10, hits, &n), CAIRN_OK);
		for (j = 0; j < n; j++)
			found |= strcmp(hits[j].id, late) == 0;
		CHECK(!found);
		CHECK_INT(vector_reindex(db, e, 0, NULL, NULL, &res), CAIRN_OK);
		CHECK_INT(res.embedded, 1);
		CHECK_INT(vector_query(db, "cat", NULL, 10, hits, &n), CAIRN_OK);
		found = 0;
		for (j = 0; j < n; j++)
			found |= strcmp(hits[j].id, late) == 0;
		CHECK(found);
		cairn_free(late);
	}
out:
	embed_close(e);
	for (i = 0; i < 5; i++)
		cairn_free(ids[i]);
	cairn_db_close(db);
}

/* EVIDENCE-OF: a schema-3 store gains the vector table */
static void test_migrate_v4(void)
{
	cairn_db *db = test_store("vmigrate", NULL, 0);
	char path[600];
	sqlite3 *raw = NULL;
	sqlite3_stmt *st = NULL;
	cairn_open_opts o;
	int version = -1, objects = -1;
	char *id = write_rec(db, "fact", "accepted", "", "kept");

	cairn_db_close(db);
	snprintf(path, sizeof(path), "%s/vmigrate/.cairn/cairn.db", test_tmpdir);
	CHECK(sqlite3_open(path, &raw) == SQLITE_OK);
	CHECK(sqlite3_exec(raw, "DROP TRIGGER vectors_ad; DROP TRIGGER "
				"vectors_au; DROP TRIGGER vectors_al; DROP "
				"TABLE vectors; DROP TABLE refs; DROP TABLE "
				"sync_state; PRAGMA user_version=3",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(raw);
	snprintf(path, sizeof(path), "%s/vmigrate/.cairn", test_tmpdir);
	memset(&o, 0, sizeof(o));
	o.no_global = 1;
	db = NULL;
	CHECK_INT(cairn_db_open(path, &o, &db), CAIRN_OK);
	if (sqlite3_prepare_v2(db->sql, "PRAGMA user_version", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db->sql, "SELECT count(*) FROM sqlite_master "
					"WHERE name IN ('vectors', "
					"'vectors_ad', 'vectors_au', "
					"'vectors_al')",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		objects = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	CHECK(version >= 4); /* 4 or any later schema */
	CHECK_INT(objects, 4);
	cairn_free(id);
	cairn_db_close(db);
}

void unit_vector(void)
{
	RUN(test_kernels);
	RUN(test_topk);
	RUN(test_matrix_exact);
	RUN(test_store_search);
	RUN(test_sidecar);
	RUN(test_settings);
	RUN(test_reindex);
	RUN(test_migrate_v4);
}
