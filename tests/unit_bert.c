/*
 * unit_bert.c -- the BERT runtime (src/model/bert.c) against an independent
 * float64 NumPy forward pass (tests/tools/bert_ref.py), on tiny random
 * models that tests/tools/make_model.py writes in llama.cpp's `bert`
 * layout: BERT and XLM-R shapes; f32, f16, bf16, q8_0, q4_0..q5_1 and a
 * K-quant mix; mean, cls, last and rank pooling; split and fused QKV.
 * ISSUE 4: max |delta| <= 1e-5 per embedding (and per rank logit).
 *
 * Also: packing many sequences per batch gives what one at a time gives,
 * the thread count does not change the result, truncation to the context
 * and to max_tokens, pooling overrides, optional tensors left out, and
 * the refusals (missing tensor, wrong shape, unsupported type, vocabulary
 * and table sizes that differ, bad token ids, wrong mode, no tokenizer,
 * truncated file) with their messages; 300 randomly corrupted files load
 * or fail cleanly. A negative control shows the comparison fails when the
 * pooling differs. Texts go through the file's tokeniser (vocab.h).
 *
 * Both matrix paths are checked against the reference: each short
 * sequence alone on a fresh model runs the small-batch kernels on the
 * file's own F32/F16/BF16/Q8_0 weights (and must make no f32 copy), the
 * whole set at once runs OpenBLAS on the f32 copies, then the kernels on
 * those copies; CAIRN_BERT_KERNELS=0 turns the kernels off. bert_sha256's
 * cache (a private CAIRN_CACHE_DIR): equal to a full hash, read on a hit,
 * rebuilt when the model changes (even in place with size and mtime kept)
 * or when the cache file is truncated, garbage or over-long; off for "".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "bert.h"
#include "internal.h"
#include "test.h"
#include "vocab.h"

#define TOL 1e-5      /* ISSUE 4: max |delta| per embedding */
#define N_VOCAB 300   /* --vocab of every generated model */
#define MAX_SEQ 48    /* sequences in one test call */
#define MAX_LEN 128   /* tokens in one test sequence */
#define MAX_DIM 256   /* widest test model */

static char dir[512]; /* test_tmpdir/bert */

/* Run a shell command; 0 on success. */
static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* Write model NAME.gguf with make_model.py ARGS; 0 on success. */
static int make_model(const char *name, const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 tests/tools/make_model.py %s/%s.gguf "
		 "--vocab %d %s",
		 dir, name, N_VOCAB, args);
	return sh(cmd);
}

static void model_path(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s.gguf", dir, name);
}

/* A set of token-id sequences. */
struct seqs {
	int32_t ids[MAX_SEQ][MAX_LEN];
	size_t lens[MAX_SEQ];
	const int32_t *ptr[MAX_SEQ];
	size_t n;
};

/* n sequences from a fixed LCG: the lengths cycle through lens_cycle, ids
 * cover 0 and N_VOCAB - 1. */
static void make_seqs(struct seqs *s, size_t n, const size_t *cyc,
		      size_t ncyc, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i, j;

	memset(s, 0, sizeof(*s));
	s->n = n;
	for (i = 0; i < n; i++) {
		s->lens[i] = cyc[i % ncyc];
		for (j = 0; j < s->lens[i]; j++) {
			x = x * 1664525u + 1013904223u;
			s->ids[i][j] = (int32_t)((x >> 8) % N_VOCAB);
		}
		if (s->lens[i] > 2) {
			s->ids[i][1] = 0;
			s->ids[i][2] = N_VOCAB - 1;
		}
		s->ptr[i] = s->ids[i];
	}
}

/*
 * Run bert_ref.py on model NAME with the sequences (extra: its options);
 * read n rows of width dim into ref. 0 on success.
 */
static int reference(const char *name, const struct seqs *s, int dim,
		     const char *extra, double *ref)
{
	char ids[600], outp[600], cmd[2048];
	FILE *f;
	size_t i, j;
	int ok = 1;

	snprintf(ids, sizeof(ids), "%s/%s.ids", dir, name);
	snprintf(outp, sizeof(outp), "%s/%s.ref", dir, name);
	f = fopen(ids, "w");
	if (!f)
		return -1;
	for (i = 0; i < s->n; i++) {
		for (j = 0; j < s->lens[i]; j++)
			fprintf(f, "%s%d", j ? " " : "", (int)s->ids[i][j]);
		fputc('\n', f);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 tests/tools/bert_ref.py %s/%s.gguf %s %s %s",
		 dir, name, ids, outp, extra ? extra : "");
	if (sh(cmd))
		return -1;
	f = fopen(outp, "r");
	if (!f)
		return -1;
	for (i = 0; i < s->n * (size_t)dim && ok; i++)
		ok = fscanf(f, "%lf", &ref[i]) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* Largest |a - b| over n values. */
static double max_delta(const float *a, const double *b, size_t n)
{
	double m = 0.0;
	size_t i;

	for (i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);

		if (!(d <= m)) /* NaN counts as infinitely wrong */
			m = isnan(d) ? INFINITY : d;
	}
	return m;
}

static struct bert_model *load(const char *name, int pooling, int threads,
			       size_t max_tokens)
{
	struct bert_opts o = { pooling, threads, max_tokens };
	struct bert_model *m = NULL;
	char path[600], err[256] = "";
	int rc;

	model_path(name, path, sizeof(path));
	rc = bert_load(path, &o, &m, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "load %s: rc %d: %s", name, rc, err);
	return m;
}

static const size_t LENS[] = { 1, 2, 3, 7, 16, 31, 64, 90, 5, 40, 64, 13 };

/* at most BERT_SMALL_ROWS (96) in bert_int.h: the small-batch kernels */
#define SMALL_ROWS 96

/* Does this machine run the AVX2 kernels (as bert.c decides)? */
static int cpu_kernels(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return 0;
#endif
}

/* Should a model made with make_model.py ARGS run on the kernels? Only
 * types f32, f16, bf16 and q8_0 (every matrix) are read in place. */
static int expect_kernels(const char *args)
{
	static const char *const in_place[] = { "--types f32", "--types f16",
						"--types bf16",
						"--types q8_0" };
	const char *e = getenv("CAIRN_BERT_KERNELS");
	size_t i, n;

	if (!cpu_kernels() || (e && strcmp(e, "0") == 0))
		return 0;
	for (i = 0; i < ARRAY_SIZE(in_place); i++) {
		const char *p = strstr(args, in_place[i]);

		n = strlen(in_place[i]);
		if (p && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	}
	return 0;
}

/* Each sequence of s of at most maxlen tokens alone (one call each)
 * against ref; the max |delta|. */
static double alone(struct bert_model *m, const struct seqs *s, int rank,
		    int dim, const double *ref, size_t maxlen)
{
	static float one[MAX_DIM];
	char err[256] = "";
	double d, worst = 0.0;
	size_t i;
	int rc;

	for (i = 0; i < s->n; i++) {
		if (s->lens[i] > maxlen)
			continue;
		rc = rank ? bert_rank_ids(m, &s->ptr[i], &s->lens[i], 1, one,
					  err, sizeof(err))
			  : bert_embed_ids(m, &s->ptr[i], &s->lens[i], 1, one,
					   err, sizeof(err));
		CHECK_MSG(rc == CAIRN_OK, "seq %zu alone: rc %d: %s", i, rc,
			  err);
		d = max_delta(one, ref + i * (size_t)dim, (size_t)dim);
		if (!(d <= worst))
			worst = d;
	}
	return worst;
}

/*
 * One variant: generate, run C (threads 2) and the reference on the same
 * sequences, compare. pooling/max_tokens go to bert_opts, ref_opts to
 * bert_ref.py. Prints the max |delta|.
 */
static void variant(const char *name, const char *args, int pooling,
		    size_t max_tokens, const char *ref_opts)
{
	static struct seqs s;
	static double ref[MAX_SEQ * MAX_DIM];
	static float out[MAX_SEQ * MAX_DIM];
	struct bert_model *m;
	char err[256] = "";
	int rc, dim, rank;
	double d;

	if (make_model(name, args)) {
		CHECK_MSG(0, "make_model %s", name);
		return;
	}
	m = load(name, pooling, 2, max_tokens);
	if (!m)
		return;
	rank = bert_pooling(m) == BERT_POOL_RANK;
	dim = rank ? 1 : bert_dim(m);
	make_seqs(&s, ARRAY_SIZE(LENS), LENS, ARRAY_SIZE(LENS), 7);
	if (reference(name, &s, dim, ref_opts, ref) != 0) {
		CHECK_MSG(0, "%s: no reference", name);
		bert_free(m);
		return;
	}
	/* the small-batch kernels straight on the file's weights: each
	 * short sequence alone on the fresh model makes no f32 copy */
	CHECK_MSG(bert_kernels(m) == expect_kernels(args),
		  "%s: kernels %d, expected %d", name, bert_kernels(m),
		  expect_kernels(args));
	d = alone(m, &s, rank, dim, ref, SMALL_ROWS);
	fprintf(stderr, "bert %-24s max|delta| %.2e alone (%s)", name, d,
		bert_kernels(m) ? "kernels, file types" : "OpenBLAS");
	CHECK_MSG(d <= TOL, "%s alone: max |delta| %.3e > %g", name, d, TOL);
	CHECK_MSG(bert_f32_copies(m) == !bert_kernels(m),
		  "%s: f32 copies %d after short calls", name,
		  bert_f32_copies(m));
	/* all at once: a large batch (OpenBLAS on the f32 copies) unless
	 * truncation leaves it small */
	if (rank)
		rc = bert_rank_ids(m, s.ptr, s.lens, s.n, out, err,
				   sizeof(err));
	else
		rc = bert_embed_ids(m, s.ptr, s.lens, s.n, out, err,
				    sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "%s: rc %d: %s", name, rc, err);
	{
		size_t rows = 0, i, cap = bert_max_tokens(m);

		for (i = 0; i < s.n; i++)
			rows += s.lens[i] < cap ? s.lens[i] : cap;
		if (rows > SMALL_ROWS)
			CHECK_MSG(bert_f32_copies(m), "%s: no f32 copies "
				  "after a batch of %zu rows", name, rows);
		else
			CHECK_MSG(bert_f32_copies(m) == !bert_kernels(m),
				  "%s: f32 copies %d after %zu rows", name,
				  bert_f32_copies(m), rows);
	}
	if (rc == CAIRN_OK) {
		d = max_delta(out, ref, s.n * (size_t)dim);
		fprintf(stderr, ", %.2e batched", d);
		CHECK_MSG(d <= TOL, "%s: max |delta| %.3e > %g", name, d, TOL);
	}
	/* alone again: the kernels now read the f32 copies */
	d = alone(m, &s, rank, dim, ref, MAX_LEN);
	fprintf(stderr, ", %.2e alone after\n", d);
	CHECK_MSG(d <= TOL, "%s alone after: max |delta| %.3e > %g", name,
		  d, TOL);
	bert_free(m);
}

/* ISSUE 4: every type, both families, every pooling, split and fused. */
static void test_variants(void)
{
	variant("bert_f32_mean", "--types f32 --pool mean", -1, 0, NULL);
	variant("bert_f16_cls_fused", "--types f16 --pool cls --qkv fused",
		-1, 0, NULL);
	variant("bert_bf16_last", "--types bf16 --pool last --eps 1e-5", -1,
		0, NULL);
	/* widths that are not multiples of 8 (kernel tails) and odd column
	 * counts */
	variant("bert_f16_odd", "--types f16 --embd 45 --heads 3 --ff 75", -1,
		0, NULL);
	variant("bert_f32_odd", "--types f32 --embd 60 --heads 4 --ff 100 "
		"--qkv fused", -1, 0, NULL);
	variant("bert_q8_0_mean", "--types q8_0 --seed 3", -1, 0, NULL);
	variant("bert_q4_0_absent", "--types q4_0 --pool absent", -1, 0,
		NULL);
	variant("bert_q4_1", "--types q4_1 --seed 4", -1, 0, NULL);
	variant("bert_q5_0_fused", "--types q5_0 --qkv fused", -1, 0, NULL);
	variant("bert_q5_1_cls", "--types q5_1 --pool cls", -1, 0, NULL);
	variant("bert_legacy_none", "--types legacy --pool none", -1, 0,
		NULL);
	variant("bert_kmix_mean",
		"--types kmix --embd 256 --ff 512 --heads 8 --seed 5", -1, 0,
		NULL);
	variant("bert_kmix_fused_cls",
		"--types kmix --embd 256 --ff 512 --heads 4 --qkv fused "
		"--pool cls --layers 3",
		-1, 0, NULL);
	variant("xlmr_f16_mean", "--family xlmr --types f16 --eps 1e-5", -1,
		0, NULL);
	variant("xlmr_q8_0_cls_fused",
		"--family xlmr --types q8_0 --pool cls --qkv fused", -1, 0,
		NULL);
	variant("xlmr_kmix_mean",
		"--family xlmr --types kmix --embd 256 --ff 768 --heads 16",
		-1, 0, NULL);
	/* rerankers: dense+tanh+output head, and an output-only head */
	variant("xlmr_rank_q8_0", "--family xlmr --types q8_0 --pool rank",
		-1, 0, NULL);
	variant("bert_rank_out_f16",
		"--types f16 --pool rank --head out --qkv fused", -1, 0, NULL);
	/* optional tensors absent: token types, fused QKV bias, cls bias */
	variant("bert_no_types", "--types f16 --drop token_types.weight", -1,
		0, NULL);
	variant("bert_fused_nobias",
		"--types q8_0 --qkv fused --drop blk.0.attn_qkv.bias "
		"--drop blk.1.attn_qkv.bias",
		-1, 0, NULL);
	variant("bert_rank_nobias", "--types f32 --pool rank --drop cls.bias",
		-1, 0, NULL);
	/* configuration overrides the file: pooling and max_tokens */
	variant("bert_override_cls", "--types f16 --pool mean", BERT_POOL_CLS,
		0, "--pool cls");
	variant("bert_max8", "--types f32 --pool mean --seed 9", -1, 8,
		"--max 8");
}

/* Many sequences (several batches) at once equal each alone, and 1, 2
 * and 3 threads agree with the reference. */
static void test_packing_threads(void)
{
	static struct seqs s;
	static double ref[MAX_SEQ * MAX_DIM];
	static float all[MAX_SEQ * MAX_DIM], one[MAX_DIM];
	static const size_t lens[] = { 64, 50, 1, 64, 33, 64, 17, 64, 2, 64 };
	struct bert_model *m;
	char err[256] = "";
	int threads, dim;
	size_t i;
	double d, worst = 0.0;

	if (make_model("pack", "--types f16 --embd 96 --heads 6 --ff 160 "
			       "--seed 11")) {
		CHECK_MSG(0, "make_model pack");
		return;
	}
	/* 40 sequences of up to 64 tokens: over BERT_BATCH_TOKENS (1024),
	 * so the call runs several batches */
	make_seqs(&s, 40, lens, ARRAY_SIZE(lens), 21);
	if (reference("pack", &s, 96, NULL, ref)) {
		CHECK_MSG(0, "pack: no reference");
		return;
	}
	for (threads = 1; threads <= 3; threads++) {
		m = load("pack", -1, threads, 0);
		if (!m)
			return;
		dim = bert_dim(m);
		CHECK_INT(dim, 96);
		CHECK_INT(bert_threads(m), threads);
		CHECK_INT(bert_embed_ids(m, s.ptr, s.lens, s.n, all, err,
					 sizeof(err)),
			  CAIRN_OK);
		d = max_delta(all, ref, s.n * (size_t)dim);
		CHECK_MSG(d <= TOL, "threads %d: max |delta| %.3e", threads,
			  d);
		if (d > worst)
			worst = d;
		if (threads == 2) {
			/* one at a time: the same vectors (1e-6: only the
			 * GEMM blocking differs) */
			for (i = 0; i < s.n; i++) {
				double dd = 0.0;
				size_t j;

				CHECK_INT(bert_embed_ids(m, &s.ptr[i],
							 &s.lens[i], 1, one,
							 err, sizeof(err)),
					  CAIRN_OK);
				for (j = 0; j < (size_t)dim; j++)
					if (fabs(one[j] - all[i * dim + j]) > dd)
						dd = fabs(one[j] -
							  all[i * dim + j]);
				CHECK_MSG(dd <= 1e-6, "seq %zu alone differs "
					  "by %.3e", i, dd);
				/* alone, a short one takes the few-rows
				 * kernel (bert_kernels.c): the reference too */
				dd = max_delta(one, ref + i * dim,
					       (size_t)dim);
				CHECK_MSG(dd <= TOL, "seq %zu alone: max "
					  "|delta| %.3e", i, dd);
			}
		}
		/* unit length */
		for (i = 0; i < s.n; i++) {
			double nn = 0.0;
			int j;

			for (j = 0; j < dim; j++)
				nn += (double)all[i * dim + j] *
				      all[i * dim + j];
			CHECK_MSG(fabs(nn - 1.0) < 1e-5, "norm^2 %g", nn);
		}
		bert_free(m);
	}
	fprintf(stderr, "bert %-24s max|delta| %.2e (40 seqs, 1-3 threads)\n",
		"pack", worst);
}

/* Negative control: the comparison catches a wrong pooling. */
static void test_negative_control(void)
{
	static struct seqs s;
	static double ref[MAX_SEQ * MAX_DIM];
	static float out[MAX_SEQ * MAX_DIM];
	struct bert_model *m;
	char err[256];
	double d;

	if (make_model("neg", "--types f32 --pool mean")) {
		CHECK_MSG(0, "make_model neg");
		return;
	}
	m = load("neg", -1, 1, 0);
	if (!m)
		return;
	make_seqs(&s, 4, LENS + 3, 4, 5);
	CHECK_INT(bert_embed_ids(m, s.ptr, s.lens, s.n, out, err, sizeof(err)),
		  CAIRN_OK);
	if (reference("neg", &s, bert_dim(m), "--pool cls", ref) == 0) {
		d = max_delta(out, ref, s.n * (size_t)bert_dim(m));
		CHECK_MSG(d > 1e-2, "mean vs cls differ by only %.3e", d);
	} else {
		CHECK_MSG(0, "neg: no reference");
	}
	bert_free(m);
}

/* Load must fail with rc and a message containing want. */
static void expect_load_fail(const char *name, const char *args,
			     int pooling, int want, const char *msg)
{
	struct bert_opts o = { pooling, 1, 0 };
	struct bert_model *m = (struct bert_model *)1;
	char path[600], err[256] = "";
	int rc;

	if (args && make_model(name, args)) {
		CHECK_MSG(0, "make_model %s", name);
		return;
	}
	model_path(name, path, sizeof(path));
	rc = bert_load(path, &o, &m, err, sizeof(err));
	CHECK_MSG(rc == want, "%s: rc %d, want %d (%s)", name, rc, want, err);
	CHECK_MSG(m == NULL, "%s: model not NULL on failure", name);
	CHECK_MSG(strstr(err, msg) != NULL, "%s: message \"%s\" lacks \"%s\"",
		  name, err, msg);
	if (rc == CAIRN_OK)
		bert_free(m);
}

static void test_malformed(void)
{
	char path[600], cmd[1400];

	expect_load_fail("no_ffn_up", "--drop blk.1.ffn_up.weight", -1,
			 CAIRN_INVALID,
			 "tensor 'blk.1.ffn_up.weight' is missing");
	expect_load_fail("no_pos", "--drop position_embd.weight", -1,
			 CAIRN_INVALID,
			 "tensor 'position_embd.weight' is missing");
	expect_load_fail("no_bias", "--drop blk.0.attn_v.bias", -1,
			 CAIRN_INVALID, "tensor 'blk.0.attn_v.bias' is missing");
	expect_load_fail("bad_k", "--bad-shape blk.0.attn_k.weight", -1,
			 CAIRN_INVALID,
			 "tensor 'blk.0.attn_k.weight' has shape [64, 65, 1, 1], "
			 "expected [64, 64]");
	expect_load_fail("bad_norm", "--bad-shape token_embd_norm.bias", -1,
			 CAIRN_INVALID, "tensor 'token_embd_norm.bias' has shape");
	expect_load_fail("bad_qkv", "--qkv fused --bad-shape "
				    "blk.1.attn_qkv.weight",
			 -1, CAIRN_INVALID,
			 "tensor 'blk.1.attn_qkv.weight' has shape");
	expect_load_fail("bad_type", "--bad-type blk.0.attn_output.weight", -1,
			 CAIRN_INVALID,
			 "tensor 'blk.0.attn_output.weight' has unsupported "
			 "type");
	expect_load_fail("bad_heads", "--heads 5", -1, CAIRN_INVALID,
			 "not a multiple of the head count");
	/* rank asked of a model without a classifier head */
	expect_load_fail("no_head", "--pool mean", BERT_POOL_RANK,
			 CAIRN_INVALID, "rank pooling needs a classifier head");
	expect_load_fail("file_rank_no_head", "--pool rank --drop cls.weight "
					      "--drop cls.bias --drop "
					      "cls.output.weight --drop "
					      "cls.output.bias",
			 -1, CAIRN_INVALID, "needs a classifier head");
	expect_load_fail("no_head", NULL, 0, CAIRN_INVALID,
			 "pooling 0 is not one of");
	expect_load_fail("extra_rows", "--extra-rows 3", -1, CAIRN_INVALID,
			 "the tokenizer has 300 tokens but 'token_embd.weight' "
			 "has 303 rows");
	/* not a file, and a file cut in half */
	snprintf(path, sizeof(path), "%s/absent.gguf", dir);
	{
		struct bert_model *m = (struct bert_model *)1;
		char err[256] = "";

		CHECK_INT(bert_load(path, NULL, &m, err, sizeof(err)),
			  CAIRN_IO);
		CHECK(m == NULL);
	}
	snprintf(cmd, sizeof(cmd),
		 "head -c 30000 %s/no_head.gguf > %s/cut.gguf", dir, dir);
	if (sh(cmd) == 0) {
		struct bert_model *m = (struct bert_model *)1;
		char err[256] = "";

		snprintf(path, sizeof(path), "%s/cut.gguf", dir);
		CHECK_INT(bert_load(path, NULL, &m, err, sizeof(err)),
			  CAIRN_INVALID);
		CHECK(m == NULL);
		CHECK(err[0] != '\0');
	}
}

/*
 * Corrupt bytes of a valid model's header, metadata and tensor table (and
 * a few in its data): every load either fails with a message or gives a
 * model that embeds; nothing crashes (ASan/UBSan watch).
 */
static void test_corrupt(void)
{
	char path[600], out[600], err[256];
	unsigned char *buf = NULL;
	size_t len = 0, hdr;
	uint32_t x = 12345;
	int i, loaded = 0, refused = 0;
	FILE *f;

	if (make_model("corrupt", "--types q8_0 --layers 1 --embd 32 "
				  "--heads 2 --ff 64 --ctx 16"))
		return;
	model_path("corrupt", path, sizeof(path));
	snprintf(out, sizeof(out), "%s/corrupt-x.gguf", dir);
	f = fopen(path, "rb");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len);
	if (!buf || fread(buf, 1, len, f) != len) {
		fclose(f);
		free(buf);
		CHECK(0);
		return;
	}
	fclose(f);
	/* the metadata and tensor table come first; the vocabulary makes
	 * them a few KB */
	hdr = len < 8192 ? len : 8192;
	for (i = 0; i < 300; i++) {
		struct bert_model *m = NULL;
		unsigned char *c = malloc(len);
		size_t pos;
		int k, rc;

		if (!c)
			break;
		memcpy(c, buf, len);
		for (k = 0; k < 1 + i % 3; k++) {
			x = x * 1664525u + 1013904223u;
			pos = (i % 10 == 9) ? (x >> 4) % len : (x >> 4) % hdr;
			c[pos] = (unsigned char)(x >> 24);
		}
		f = fopen(out, "wb");
		if (f) {
			fwrite(c, 1, len, f);
			fclose(f);
		}
		free(c);
		err[0] = '\0';
		rc = bert_load(out, NULL, &m, err, sizeof(err));
		if (rc == CAIRN_OK) {
			int32_t ids[4] = { 0, 1, 2, 3 };
			const int32_t *p = ids;
			size_t n = 4;
			float v[64];

			loaded++;
			if (bert_pooling(m) == BERT_POOL_RANK ||
			    bert_dim(m) > 64)
				rc = CAIRN_OK;
			else
				rc = bert_embed_ids(m, &p, &n, 1, v, err,
						    sizeof(err));
			CHECK_MSG(rc == CAIRN_OK || rc == CAIRN_INVALID,
				  "embed after corruption %d: rc %d", i, rc);
			bert_free(m);
		} else {
			refused++;
			CHECK_MSG(m == NULL && err[0] != '\0',
				  "corruption %d: rc %d without a message", i,
				  rc);
		}
	}
	free(buf);
	fprintf(stderr, "bert corrupt: %d loaded, %d refused\n", loaded,
		refused);
	CHECK(refused > 0);
}

/* Bad inputs to a good model, and the wrong mode for the model. */
static void test_bad_input(void)
{
	struct bert_model *m, *r;
	int32_t good[3] = { 2, 10, 3 }, bad[3] = { 2, N_VOCAB, 3 };
	int32_t neg[2] = { 2, -1 };
	const int32_t *p[2];
	size_t lens[2];
	float out[2 * 64];
	const char *texts[1] = { "hello" };
	char err[256];

	if (make_model("nov", "--no-vocab --types f16") ||
	    make_model("rk", "--pool rank --types f32"))
		return;
	m = load("nov", -1, 2, 0);
	r = load("rk", -1, 2, 0);
	if (!m || !r)
		goto out;
	CHECK(bert_vocab(m) == NULL);
	CHECK_STR(bert_arch(m), "bert");
	CHECK_STR(bert_name(m), "cairn-test-bert");
	CHECK_INT(bert_ctx(m), 64);
	CHECK_INT(bert_pooling(m), BERT_POOL_MEAN);
	CHECK_INT(strlen(bert_sha256(m)), 64);
	p[0] = good;
	p[1] = bad;
	lens[0] = 3;
	lens[1] = 3;
	err[0] = '\0';
	CHECK_INT(bert_embed_ids(m, p, lens, 2, out, err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_MSG(strstr(err, "token id 300 out of range") != NULL, "%s", err);
	p[1] = neg;
	lens[1] = 2;
	CHECK_INT(bert_embed_ids(m, p, lens, 2, out, err, sizeof(err)),
		  CAIRN_INVALID);
	lens[1] = 0;
	CHECK_INT(bert_embed_ids(m, p, lens, 2, out, err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_MSG(strstr(err, "sequence 1 is empty") != NULL, "%s", err);
	CHECK_INT(bert_embed_ids(m, p, lens, 0, out, err, sizeof(err)),
		  CAIRN_OK);
	/* no tokenizer: texts are refused, ids work */
	err[0] = '\0';
	CHECK_INT(bert_embed(m, texts, 1, out, err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_MSG(strstr(err, "no tokenizer") != NULL, "%s", err);
	CHECK_INT(bert_embed_ids(m, p, lens, 1, out, err, sizeof(err)),
		  CAIRN_OK);
	/* the wrong mode */
	CHECK_INT(bert_rank_ids(m, p, lens, 1, out, err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_MSG(strstr(err, "no rank pooling") != NULL, "%s", err);
	CHECK_INT(bert_embed_ids(r, p, lens, 1, out, err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_MSG(strstr(err, "reranker") != NULL, "%s", err);
	CHECK_INT(bert_pooling(r), BERT_POOL_RANK);
	CHECK_INT(bert_rank_ids(r, p, lens, 1, out, err, sizeof(err)),
		  CAIRN_OK);
out:
	bert_free(m);
	bert_free(r);
}

/*
 * Texts through the model's own tokenizer: bert_embed equals
 * bert_embed_ids on vocab_encode's ids (and the reference on those), and
 * bert_rank equals bert_rank_ids on vocab_encode_pair's.
 */
static void text_family(const char *name, const char *args, int rank)
{
	static const char *const texts[] = {
		"hello world", "The quick brown fox jumps over the lazy dog.",
		"", "memory agent note: fix the cache bug!", "café 中文",
	};
	static struct seqs s;
	static double ref[MAX_SEQ * MAX_DIM];
	static float a[8 * MAX_DIM], b[8 * MAX_DIM];
	struct bert_model *m;
	const struct vocab *v;
	char err[256] = "";
	size_t i, n = ARRAY_SIZE(texts);
	int dim, rc;

	if (make_model(name, args))
		return;
	m = load(name, -1, 2, 0);
	if (!m)
		return;
	v = bert_vocab(m);
	CHECK(v != NULL);
	if (!v)
		goto out;
	memset(&s, 0, sizeof(s));
	s.n = n;
	for (i = 0; i < n; i++) {
		if (rank)
			rc = vocab_encode_pair(v, texts[0], strlen(texts[0]),
					       texts[i], strlen(texts[i]),
					       s.ids[i], MAX_LEN, &s.lens[i]);
		else
			rc = vocab_encode(v, texts[i], strlen(texts[i]), 1,
					  s.ids[i], MAX_LEN, &s.lens[i]);
		CHECK_INT(rc, CAIRN_OK);
		CHECK(s.lens[i] >= 2);
		s.ptr[i] = s.ids[i];
	}
	dim = rank ? 1 : bert_dim(m);
	if (rank) {
		rc = bert_rank(m, texts[0], texts, n, a, err, sizeof(err));
		CHECK_MSG(rc == CAIRN_OK, "%s", err);
		CHECK_INT(bert_rank_ids(m, s.ptr, s.lens, n, b, err,
					sizeof(err)),
			  CAIRN_OK);
	} else {
		rc = bert_embed(m, texts, n, a, err, sizeof(err));
		CHECK_MSG(rc == CAIRN_OK, "%s", err);
		CHECK_INT(bert_embed_ids(m, s.ptr, s.lens, n, b, err,
					 sizeof(err)),
			  CAIRN_OK);
	}
	CHECK(memcmp(a, b, n * (size_t)dim * sizeof(float)) == 0);
	if (reference(name, &s, dim, NULL, ref) == 0) {
		double d = max_delta(a, ref, n * (size_t)dim);

		fprintf(stderr, "bert %-24s max|delta| %.2e (texts)\n", name,
			d);
		CHECK_MSG(d <= TOL, "%s: max |delta| %.3e", name, d);
	} else {
		CHECK_MSG(0, "%s: no reference", name);
	}
out:
	bert_free(m);
}

static void test_texts(void)
{
	text_family("text_bert", "--types f16", 0);
	text_family("text_xlmr", "--family xlmr --types q8_0 --pool cls", 0);
	text_family("text_xlmr_rank", "--family xlmr --types f16 --pool rank",
		    1);
}

static void test_setup_failed(void)
{
	CHECK_MSG(0, "cannot create %s", dir);
}

/* $CAIRN_BERT_KERNELS=0: no kernels, f32 copies at load, same numbers. */
static void test_kernels_off(void)
{
	static struct seqs s;
	static double ref[MAX_SEQ * MAX_DIM];
	struct bert_model *m;
	double d;

	if (make_model("koff", "--types q8_0 --seed 12 --qkv fused")) {
		CHECK_MSG(0, "make_model koff");
		return;
	}
	make_seqs(&s, ARRAY_SIZE(LENS), LENS, ARRAY_SIZE(LENS), 8);
	if (reference("koff", &s, 64, NULL, ref) != 0) {
		CHECK_MSG(0, "koff: no reference");
		return;
	}
	setenv("CAIRN_BERT_KERNELS", "0", 1);
	m = load("koff", -1, 2, 0);
	unsetenv("CAIRN_BERT_KERNELS");
	if (!m)
		return;
	CHECK_INT(bert_dim(m), 64);
	CHECK_INT(bert_kernels(m), 0);
	CHECK_INT(bert_f32_copies(m), 1);
	d = alone(m, &s, 0, 64, ref, MAX_LEN);
	CHECK_MSG(d <= TOL, "kernels off: max |delta| %.3e", d);
	bert_free(m);
	/* and on again (where the CPU has them) */
	m = load("koff", -1, 2, 0);
	if (!m)
		return;
	CHECK_INT(bert_kernels(m), cpu_kernels());
	CHECK_INT(bert_f32_copies(m), !cpu_kernels());
	bert_free(m);
}

/* The one cache file in cdir: its path into out; 0 when exactly one. */
static int cache_file(const char *cdir, char *out, size_t size)
{
	DIR *d = opendir(cdir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (strncmp(e->d_name, "gguf-sha256-", 12) == 0 && l > 4 &&
		    strcmp(e->d_name + l - 4, ".txt") == 0) {
			snprintf(out, size, "%s/%s", cdir, e->d_name);
			n++;
		}
	}
	closedir(d);
	return n == 1 ? 0 : -1;
}

/* The SHA-256 of model NAME, loaded afresh (NULL on a failed load). */
static int sha_of(const char *name, char out[65])
{
	struct bert_model *m = load(name, -1, 1, 0);
	const char *sha;

	out[0] = '\0';
	if (!m)
		return -1;
	sha = bert_sha256(m);
	snprintf(out, 65, "%s", sha ? sha : "");
	bert_free(m);
	return 0;
}

static void write_text(const char *path, const char *text, size_t n)
{
	FILE *f = fopen(path, "wb");

	CHECK_MSG(f != NULL, "cannot write %s", path);
	if (!f)
		return;
	CHECK(fwrite(text, 1, n, f) == n);
	fclose(f);
}

/*
 * bert_sha256's cache: the digest equals a full hash; a later load reads
 * it from the cache file (shown by planting a digest there); a changed
 * model (new content, and a same-size same-mtime edit) is hashed again;
 * a truncated, garbage or non-hex cache file is refused and rewritten; an
 * empty CAIRN_CACHE_DIR writes nothing; an unusable one is no error.
 */
static void test_sha_cache(void)
{
	char cdir[700], path[600], file[1400], want[65], got[65], cmd[2000];
	char *data = NULL, *old = NULL, *cf = NULL;
	const char *saved = getenv("CAIRN_CACHE_DIR");
	char saved_copy[1024] = "";
	size_t len = 0, clen = 0;
	struct timespec ts[2];
	struct stat st;

	if (saved)
		snprintf(saved_copy, sizeof(saved_copy), "%s", saved);
	snprintf(cdir, sizeof(cdir), "%s/sha-cache/sub", dir);
	setenv("CAIRN_CACHE_DIR", cdir, 1);
	if (make_model("sha", "--types f16 --seed 21")) {
		CHECK_MSG(0, "make_model sha");
		goto out;
	}
	model_path("sha", path, sizeof(path));
	CHECK_INT(util_read_file(path, 1u << 28, &data, &len, NULL, 0), 0);
	if (!data)
		goto out;
	util_sha256_hex(data, len, want);
	/* first: hashed, the cache directory made, one file written 0600 */
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, want);
	CHECK_INT(cache_file(cdir, file, sizeof(file)), 0);
	CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_INT(util_read_file(file, 4096, &old, &clen, NULL, 0), 0);
	if (!old || clen < 66)
		goto out;
	CHECK(memcmp(old + clen - 65, want, 64) == 0);
	/* a hit is read, not hashed: plant another digest of the same form */
	memset(old + clen - 65, 'a', 64);
	write_text(file, old, clen);
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	/* corrupt: truncated, upper-case hex, garbage, empty: refused,
	 * hashed, rewritten whole */
	write_text(file, old, clen / 2);
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, want);
	CHECK(stat(file, &st) == 0 && (size_t)st.st_size == clen);
	memset(old + clen - 65, 'A', 64);
	write_text(file, old, clen);
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, want);
	write_text(file, "\x01\xff garbage\n", 11);
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, want);
	write_text(file, "", 0);
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, want);
	/* a longer line with the right prefix (extra byte) */
	cairn_free(old);
	old = NULL;
	CHECK_INT(util_read_file(file, 4096, &old, &clen, NULL, 0), 0);
	if (!old)
		goto out;
	{
		char *longer = util_calloc(clen + 2, 1);

		if (longer) {
			memcpy(longer, old, clen);
			longer[clen] = 'x';
			write_text(file, longer, clen + 1);
			cairn_free(longer);
			CHECK_INT(sha_of("sha", got), 0);
			CHECK_STR(got, want);
		}
	}
	/* stale: the same file edited in place inside the probed data,
	 * size and mtime kept: the probe differs, so hashed again */
	CHECK(stat(path, &st) == 0);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	data[len - 10] ^= 0x5a; /* in the last tensor's data */
	write_text(path, data, len);
	CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
	util_sha256_hex(data, len, want);
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, want);
	/* stale: a new model at the same path */
	if (make_model("sha", "--types f16 --seed 22") == 0) {
		cairn_free(data);
		data = NULL;
		CHECK_INT(util_read_file(path, 1u << 28, &data, &len, NULL, 0),
			  0);
		if (data) {
			util_sha256_hex(data, len, want);
			CHECK_INT(sha_of("sha", got), 0);
			CHECK_STR(got, want);
		}
	}
	/* "" turns the cache off: nothing written */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cdir);
	CHECK_INT(sh(cmd), 0);
	setenv("CAIRN_CACHE_DIR", "", 1);
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, want);
	CHECK(stat(cdir, &st) != 0);
	/* a cache directory that cannot exist (under a regular file) */
	snprintf(cmd, sizeof(cmd), "%s/sha-cache/plain/sub", dir);
	write_text(path, data ? data : "", data ? len : 0);
	snprintf(file, sizeof(file), "%s/sha-cache/plain", dir);
	write_text(file, "x", 1);
	setenv("CAIRN_CACHE_DIR", cmd, 1);
	CHECK_INT(sha_of("sha", got), 0);
	CHECK_STR(got, want);
out:
	if (saved)
		setenv("CAIRN_CACHE_DIR", saved_copy, 1);
	else
		unsetenv("CAIRN_CACHE_DIR");
	cairn_free(cf);
	cairn_free(old);
	cairn_free(data);
}

void unit_bert(void)
{
	char cmd[600];

	snprintf(dir, sizeof(dir), "%s/bert", test_tmpdir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	if (sh(cmd) != 0) {
		test_run("unit_bert_setup", test_setup_failed);
		return;
	}
	RUN(test_variants);
	RUN(test_packing_threads);
	RUN(test_kernels_off);
	RUN(test_sha_cache);
	RUN(test_negative_control);
	RUN(test_malformed);
	RUN(test_bad_input);
	RUN(test_corrupt);
	RUN(test_texts);
}
