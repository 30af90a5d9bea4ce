/*
 * unit_embed.c -- the embedding dispatcher and the static provider
 * (src/embed/embed.c, src/embed/embed_static.c): model families and instructions, the
 * identity string, SIF averaging on a generated file, damaged files, and
 * (when tests/tools/glove-setup has run) a semantic smoke test on GloVe.
 * The HTTP provider is tested against a local server by t_http_embed.sh.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn.h"
#include "embed.h"
#include "internal.h"
#include "test.h"

#define GLOVE_FILE "build/tools/glove-100d.cairnvec"

static double dot(const float *a, const float *b, int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += (double)a[i] * b[i];
	return s;
}

static void test_family(void)
{
	const char *q = "Represent this sentence for searching relevant "
			"passages: ";

	CHECK_STR(embed_family_of("bge-small-en-v1.5")->query, q);
	CHECK_STR(embed_family_of("BGE Base En v1.5")->name, "bge-en");
	CHECK_STR(embed_family_of("bge-base-en-v1.5-q8_0.gguf")->passage, "");
	CHECK_STR(embed_family_of("bge-m3")->name, "none");
	CHECK_STR(embed_family_of("bge-reranker-v2-m3")->name, "none");
	CHECK_STR(embed_family_of("e5-small-v2")->query, "query: ");
	CHECK_STR(embed_family_of("multilingual-e5-base")->passage, "passage: ");
	CHECK_STR(embed_family_of("all-MiniLM-L6-v2")->name, "none");
	CHECK_STR(embed_family_of(NULL)->name, "none");
}

static void test_identity_string(void)
{
	struct embed_identity id;
	char a[1200], b[1200], small[16];

	memset(&id, 0, sizeof(id));
	snprintf(id.provider, sizeof(id.provider), "gguf");
	snprintf(id.model, sizeof(id.model), "m\"odel");
	snprintf(id.revision, sizeof(id.revision), "abc");
	id.dim = 384;
	snprintf(id.pooling, sizeof(id.pooling), "cls");
	snprintf(id.query_instruction, sizeof(id.query_instruction), "q: ");
	CHECK_INT(embed_identity_string(&id, a, sizeof(a)), CAIRN_OK);
	CHECK_STR(a, "{\"provider\":\"gguf\",\"model\":\"m\\\"odel\","
		     "\"revision\":\"abc\",\"dim\":384,\"pooling\":\"cls\","
		     "\"query_instruction\":\"q: \","
		     "\"passage_instruction\":\"\"}");
	/* every field is part of it */
	snprintf(id.passage_instruction, sizeof(id.passage_instruction), "p");
	CHECK_INT(embed_identity_string(&id, b, sizeof(b)), CAIRN_OK);
	CHECK(strcmp(a, b) != 0);
	id.dim = 768;
	CHECK_INT(embed_identity_string(&id, a, sizeof(a)), CAIRN_OK);
	CHECK(strcmp(a, b) != 0);
	CHECK_INT(embed_identity_string(&id, small, sizeof(small)),
		  CAIRN_TOOBIG);
}

/* words on their own axes, "the" shares an axis with noise */
static void write_tiny(const char *path, int with_counts)
{
	const char *words[5] = { "the", "king", "queen", "banana", "royal" };
	unsigned long long counts[5] = { 1000000, 10, 10, 10, 10 };
	float v[5 * 4] = {
		0, 0, 0, 1,       /* the */
		1, 0, 0, 0,       /* king */
		0.8f, 0.6f, 0, 0, /* queen */
		0, 0, 1, 0,       /* banana */
		0.6f, 0.8f, 0, 0, /* royal */
	};
	char err[256];

	CHECK_INT(embed_static_write(path, words, v,
				     with_counts ? counts : NULL, 5, 4, err,
				     sizeof(err)),
		  CAIRN_OK);
}

static struct embedder *open_static(const char *path, const char *qi)
{
	struct embed_config cfg;
	struct embedder *e = NULL;
	char err[256];
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	cfg.provider = "static";
	cfg.model = path;
	cfg.query_instruction = qi;
	cfg.pooling = -1;
	rc = embed_open(&cfg, &e, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "%s", err);
	return e;
}

/* EVIDENCE-OF: static provider: SIF average, normalised */
static void test_static_tiny(void)
{
	char path[600], err[256];
	struct embedder *e;
	const struct embed_identity *id;
	float v[3 * 4];
	const char *texts[3] = { "The KING!", "queen", "the banana, the" };
	int pass;

	for (pass = 0; pass < 2; pass++) {
		snprintf(path, sizeof(path), "%s/tiny%d.cairnvec", test_tmpdir,
			 pass);
		write_tiny(path, pass);
		e = open_static(path, NULL);
		if (!e)
			return;
		id = embed_identity(e);
		CHECK_INT(id->dim, 4);
		CHECK_STR(id->provider, "static");
		CHECK_STR(id->pooling, "sif");
		CHECK_INT((int)strlen(id->revision), 64);
		CHECK_STR(id->model, pass ? "tiny1.cairnvec" : "tiny0.cairnvec");
		CHECK_INT(embed_texts(e, 0, texts, 3, v, err, sizeof(err)),
			  CAIRN_OK);
		/* unit length */
		CHECK(fabs(dot(v, v, 4) - 1) < 1e-5);
		CHECK(fabs(dot(v + 4, v + 4, 4) - 1) < 1e-5);
		/* "the" is frequent: SIF weighs it down, so "The KING!" is
		 * nearly king; case and punctuation do not matter */
		CHECK(v[0] > v[3] && v[3] > 0);
		CHECK(dot(v, v + 4, 4) > 0.7);
		CHECK(dot(v + 8, v, 4) < dot(v + 4, v, 4));
		if (pass == 1) {
			/* with counts "the" is 10^5 times as frequent */
			CHECK(v[0] > 0.99f && v[3] < 0.01f);
			CHECK(dot(v + 8, v, 4) < 0.01);
		} else {
			/* Zipf over 5 words: "the" (rank 1) weighs about
			 * half of "king" (rank 2): 1e-3/(1e-3 + 1/H5) vs
			 * 1e-3/(1e-3 + 1/(2 H5)) */
			CHECK(fabs(v[3] / v[0] - 0.5012) < 0.01);
		}
		embed_close(e);
	}
}

static void test_instructions(void)
{
	char path[600], err[256];
	struct embedder *e;
	float q[4], p[4];
	const char *t = "king";

	snprintf(path, sizeof(path), "%s/tinyi.cairnvec", test_tmpdir);
	write_tiny(path, 1);
	/* a query instruction made of a known word moves only queries */
	e = open_static(path, "banana ");
	if (!e)
		return;
	CHECK_STR(embed_identity(e)->query_instruction, "banana ");
	CHECK_STR(embed_identity(e)->passage_instruction, "");
	CHECK_INT(embed_texts(e, 1, &t, 1, q, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(embed_texts(e, 0, &t, 1, p, err, sizeof(err)), CAIRN_OK);
	CHECK(p[0] > 0.99f);
	CHECK(q[2] > 0.5f); /* banana's axis */
	embed_close(e);
	/* an unknown word and an empty text give a zero vector, not NaN */
	e = open_static(path, NULL);
	if (!e)
		return;
	t = "zzzz";
	CHECK_INT(embed_texts(e, 0, &t, 1, p, err, sizeof(err)), CAIRN_OK);
	CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0);
	embed_close(e);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	if (!f)
		return;
	fwrite(b, 1, n, f);
	fclose(f);
}

/* Damaged files are errors, never crashes. */
static void test_static_damaged(void)
{
	char path[600], bad[600], err[256];
	struct embed_config cfg;
	struct embedder *e = NULL;
	char *data = NULL;
	size_t len = 0, cut;
	int rc;

	snprintf(path, sizeof(path), "%s/good.cairnvec", test_tmpdir);
	snprintf(bad, sizeof(bad), "%s/bad.cairnvec", test_tmpdir);
	write_tiny(path, 1);
	CHECK_INT(util_read_file(path, 1 << 20, &data, &len, err, sizeof(err)),
		  CAIRN_OK);
	memset(&cfg, 0, sizeof(cfg));
	cfg.provider = "static";
	cfg.model = bad;
	cfg.pooling = -1;
	/* every truncation */
	for (cut = 0; data && cut < len; cut++) {
		write_bytes(bad, data, cut);
		rc = embed_open(&cfg, &e, err, sizeof(err));
		CHECK_MSG(rc == CAIRN_CORRUPT, "cut %zu: rc %d", cut, rc);
		embed_close(e);
		e = NULL;
	}
	/* trailing bytes, bad magic, absurd dim, zero-length word */
	if (data) {
		char *more = malloc(len + 1);

		memcpy(more, data, len);
		more[len] = 0;
		write_bytes(bad, more, len + 1);
		CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_CORRUPT);
		memcpy(more, data, len);
		more[0] = 'X';
		write_bytes(bad, more, len);
		CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_CORRUPT);
		CHECK(strstr(err, "not a cairn static vector file") != NULL);
		memcpy(more, data, len);
		more[15] = 0x7f; /* dim 2^30 + 4 */
		write_bytes(bad, more, len);
		CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_CORRUPT);
		memcpy(more, data, len);
		more[32] = 0; /* first word's length */
		write_bytes(bad, more, len);
		CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_CORRUPT);
		memcpy(more, data, len);
		more[8] = 9; /* version */
		write_bytes(bad, more, len);
		CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_MISMATCH);
		free(more);
	}
	/* a duplicate word */
	{
		const char *w[2] = { "a", "a" };
		float v[2] = { 1, 1 };

		CHECK_INT(embed_static_write(bad, w, v, NULL, 2, 1, err,
					     sizeof(err)),
			  CAIRN_OK);
		CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_CORRUPT);
		CHECK(strstr(err, "duplicate") != NULL);
	}
	cfg.model = "/nonexistent/x.cairnvec";
	CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_IO);
	cfg.provider = "carrier-pigeon";
	CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_INVALID);
	CHECK(strstr(err, "unknown embedding provider") != NULL);
	cfg.provider = "none";
	CHECK_INT(embed_open(&cfg, &e, err, sizeof(err)), CAIRN_INVALID);
	CHECK(e == NULL);
	cairn_free(data);
}

/* EVIDENCE-OF: a real semantic signal from GloVe vectors */
static void test_glove_smoke(void)
{
	struct embedder *e;
	float v[3 * 100];
	const char *t[3] = { "king", "queen", "banana" };
	char err[256];

	if (access(GLOVE_FILE, R_OK) != 0) {
		test_skip("%s is absent (run `make test-data`)", GLOVE_FILE);
		return;
	}
	e = open_static(GLOVE_FILE, NULL);
	if (!e)
		return;
	CHECK_INT(embed_identity(e)->dim, 100);
	CHECK_INT(embed_texts(e, 0, t, 3, v, err, sizeof(err)), CAIRN_OK);
	CHECK_MSG(dot(v, v + 100, 100) > dot(v, v + 200, 100),
		  "sim(king, queen) %.3f <= sim(king, banana) %.3f",
		  dot(v, v + 100, 100), dot(v, v + 200, 100));
	fprintf(stderr, "  glove: sim(king, queen) %.3f, sim(king, banana) %.3f\n",
		dot(v, v + 100, 100), dot(v, v + 200, 100));
	{
		const char *s[2] = { "the database stores records on disk",
				     "records are kept in an sqlite file" };
		const char *u = "my cat likes to sleep in the sun";
		float a[200], b[100];

		CHECK_INT(embed_texts(e, 0, s, 2, a, err, sizeof(err)), CAIRN_OK);
		CHECK_INT(embed_texts(e, 0, &u, 1, b, err, sizeof(err)), CAIRN_OK);
		CHECK(dot(a, a + 100, 100) > dot(a, b, 100));
	}
	embed_close(e);
}

void unit_embed(void)
{
	RUN(test_family);
	RUN(test_identity_string);
	RUN(test_static_tiny);
	RUN(test_instructions);
	RUN(test_static_damaged);
	RUN(test_glove_smoke);
}
