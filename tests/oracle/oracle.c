/*
 * oracle.c -- cairn's BERT runtime (src/model/bert.c) against llama.cpp's own
 * implementation (node-llama-cpp's prebuilt libllama, through its C API)
 * on one GGUF file: token ids must be equal, embeddings must point the
 * same way.
 *
 * Layer: test tooling, on src/model/bert.h and src/model/vocab.h (cairn) and
 * llama_run.h (libllama). Run by tests/oracle/run (make oracle).
 *
 * Usage: oracle LIBDIR MODEL.gguf TEXTS [--label NAME] [--min-cos X]
 *               [--max-rank-delta X] [--threads N]
 *               [--cairn-model OTHER.gguf] [--dump PREFIX]
 *
 * For every line of TEXTS (UTF-8; empty lines skipped):
 *   - ids:  cairn's vocab_encode(add_special) and libllama's
 *           llama_tokenize(add_special, no special parsing); equal or not;
 *   - each engine embeds its own ids; the cosine of the two vectors must
 *     be >= --min-cos (default 0.99999).
 * With RANK pooling (a cross-encoder file), consecutive lines form
 * (query, document) pairs; both engines score the same pair ids
 * (vocab_encode_pair, which llama.cpp's API has no call for) and the
 * scores must agree within --max-rank-delta * max(1, |score|) (default
 * 1e-4).
 * Prints one line per text, then
 *   SUMMARY <label> texts=N ids_equal=N max_dev=X passed=N failed=N
 * where max_dev is the largest 1 - cosine (or relative score difference).
 * --dump writes PREFIX.ids (the ids of each text as both engines got
 * them, one line per text, space-separated), PREFIX.cairn and
 * PREFIX.llama (each engine's vector or score per line, L2-normalised,
 * %.9e) for a third opinion (tests/tools/bert_ref.py in tests/oracle/run).
 * --cairn-model gives cairn another file than libllama (the negative
 * control of tests/oracle/run: a model of another seed must fail).
 * Exit 0 when nothing failed, 1 when something did, 2 on a set-up error
 * (libllama or the model cannot be loaded).
 *
 * Must never: compare vectors of different texts, or count a text whose
 * embedding failed as passed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bert.h"
#include "cairn.h"
#include "llama_run.h"
#include "vocab.h"

#define MAX_TEXTS 256
#define MAX_IDS 1024

static char *texts[MAX_TEXTS];
static size_t n_texts;

static int read_texts(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[8192];

	if (!f)
		return -1;
	while (n_texts < MAX_TEXTS && fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\n");
		line[len] = 0;
		if (len == 0)
			continue;
		texts[n_texts] = strdup(line);
		if (!texts[n_texts])
			break;
		n_texts++;
	}
	fclose(f);
	return 0;
}

static double cosine(const float *a, const float *b, int n)
{
	double ab = 0, aa = 0, bb = 0;

	for (int i = 0; i < n; i++) {
		ab += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	if (aa == 0 || bb == 0)
		return 0;
	return ab / sqrt(aa * bb);
}

static int same_ids(const int32_t *a, size_t na, const int32_t *b, int nb)
{
	if (nb < 0 || (size_t)nb != na)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static void show_ids(const char *who, const int32_t *ids, size_t n)
{
	fprintf(stderr, "    %s:", who);
	for (size_t i = 0; i < n && i < 40; i++)
		fprintf(stderr, " %d", ids[i]);
	fprintf(stderr, n > 40 ? " ...\n" : "\n");
}

/* one line: ids, or a vector L2-normalised (a score as it is) */
static void dump_vec(FILE *f, const float *x, const int32_t *ids, size_t n)
{
	double norm = 0;

	for (size_t i = 0; x && i < n; i++)
		norm += (double)x[i] * x[i];
	norm = n > 1 && norm > 0 ? sqrt(norm) : 1.0;
	for (size_t i = 0; i < n; i++) {
		if (ids)
			fprintf(f, "%s%d", i ? " " : "", ids[i]);
		else
			fprintf(f, "%s%.9e", i ? " " : "", x[i] / norm);
	}
	fputc('\n', f);
}

int main(int argc, char **argv)
{
	const char *label = NULL, *cairn_model = NULL, *dump = NULL;
	FILE *fd_ids = NULL, *fd_c = NULL, *fd_l = NULL;
	double min_cos = 0.99999, max_rank = 1e-4;
	int threads = 2;
	char err[512];
	struct bert_model *bm = NULL;
	struct ll_embedder *le = NULL;
	struct bert_opts bo = { -1, 2, 0 };
	size_t passed = 0, failed = 0, ids_equal = 0, checked = 0;
	double max_dev = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: oracle LIBDIR MODEL.gguf TEXTS "
			"[--label NAME] [--min-cos X] [--max-rank-delta X] "
			"[--threads N] [--cairn-model OTHER.gguf]\n");
		return 2;
	}
	for (int i = 4; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--label") == 0)
			label = argv[i + 1];
		else if (strcmp(argv[i], "--min-cos") == 0)
			min_cos = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--max-rank-delta") == 0)
			max_rank = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--threads") == 0)
			threads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--cairn-model") == 0)
			cairn_model = argv[i + 1];
		else if (strcmp(argv[i], "--dump") == 0)
			dump = argv[i + 1];
		else {
			fprintf(stderr, "oracle: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (!label)
		label = argv[2];
	if (!cairn_model)
		cairn_model = argv[2];
	if (dump) {
		char p[4096];
		snprintf(p, sizeof(p), "%s.ids", dump);
		fd_ids = fopen(p, "w");
		snprintf(p, sizeof(p), "%s.cairn", dump);
		fd_c = fopen(p, "w");
		snprintf(p, sizeof(p), "%s.llama", dump);
		fd_l = fopen(p, "w");
		if (!fd_ids || !fd_c || !fd_l) {
			fprintf(stderr, "oracle: cannot write %s.*\n", dump);
			return 2;
		}
	}
	if (read_texts(argv[3]) != 0 || n_texts == 0) {
		fprintf(stderr, "oracle: cannot read texts from %s\n", argv[3]);
		return 2;
	}
	if (ll_init(argv[1], err, sizeof(err)) != 0) {
		fprintf(stderr, "oracle: %s\n", err);
		return 2;
	}
	bo.threads = threads;
	if (bert_load(cairn_model, &bo, &bm, err, sizeof(err)) != CAIRN_OK) {
		fprintf(stderr, "oracle: cairn cannot load %s: %s\n",
			cairn_model, err);
		return 2;
	}
	size_t ctx = bert_max_tokens(bm);
	int pool = bert_pooling(bm);
	/* the same pooling in both: cairn's effective one, told to libllama */
	le = ll_open(argv[2], pool, threads, 1,
		     (int)(ctx < MAX_IDS ? ctx : MAX_IDS), err, sizeof(err));
	if (!le) {
		fprintf(stderr, "oracle: %s\n", err);
		bert_free(bm);
		return 2;
	}
	if (ll_pooling(le) != pool) {
		fprintf(stderr, "oracle: libllama pools %d, cairn %d\n",
			ll_pooling(le), pool);
		return 2;
	}
	const struct vocab *v = bert_vocab(bm);
	int dim = pool == BERT_POOL_RANK ? 1 : bert_dim(bm);
	if (ll_dim(le) != dim) {
		fprintf(stderr, "oracle: libllama gives %d floats, cairn %d\n",
			ll_dim(le), dim);
		return 2;
	}
	float *a = calloc((size_t)dim, sizeof(float));
	float *b = calloc((size_t)dim, sizeof(float));
	static int32_t cid[MAX_IDS], lid[MAX_IDS];
	size_t max = ctx < MAX_IDS ? ctx : MAX_IDS;

	for (size_t t = 0; t < n_texts; t++) {
		size_t cn = 0;
		int ln, ok = 1, same;
		double dev;
		const int32_t *cp = cid, *lp = lid;

		if (pool == BERT_POOL_RANK) {
			if (t + 1 >= n_texts)
				break;
			/* a pair: both engines score cairn's pair ids */
			if (vocab_encode_pair(v, texts[t], strlen(texts[t]),
					      texts[t + 1],
					      strlen(texts[t + 1]), cid, max,
					      &cn) != CAIRN_OK) {
				printf("%-14s %3zu  pair encoding failed\n",
				       label, t);
				failed++;
				continue;
			}
			ln = (int)cn;
			lp = cid;
			same = 1;
		} else {
			if (vocab_encode(v, texts[t], strlen(texts[t]), 1, cid,
					 max, &cn) != CAIRN_OK) {
				printf("%-14s %3zu  cairn tokenisation failed\n",
				       label, t);
				failed++;
				continue;
			}
			ln = ll_tokenize(le, texts[t], lid, MAX_IDS);
			same = same_ids(cid, cn, lid, ln);
			if (!same) {
				fprintf(stderr, "  %s text %zu: ids differ: %s\n",
					label, t, texts[t]);
				show_ids("cairn", cid, cn);
				if (ln > 0)
					show_ids("llama", lid, (size_t)ln);
				ok = 0;
			}
		}
		if (ln <= 0 || (size_t)ln > max) {
			printf("%-14s %3zu  libllama gave %d ids (max %zu)\n",
			       label, t, ln, max);
			failed++;
			continue;
		}
		ids_equal += (size_t)same;
		checked++;
		int rc = pool == BERT_POOL_RANK
				 ? bert_rank_ids(bm, &cp, &cn, 1, a, err,
						 sizeof(err))
				 : bert_embed_ids(bm, &cp, &cn, 1, a, err,
						  sizeof(err));
		if (rc != CAIRN_OK) {
			printf("%-14s %3zu  cairn failed: %s\n", label, t, err);
			failed++;
			continue;
		}
		size_t lln = (size_t)ln;
		if (ll_embed_ids(le, &lp, &lln, 1, b, err, sizeof(err)) != 0) {
			printf("%-14s %3zu  libllama failed: %s\n", label, t,
			       err);
			failed++;
			continue;
		}
		if (pool == BERT_POOL_RANK) {
			dev = fabs((double)a[0] - b[0]) /
			      fmax(1.0, fabs((double)b[0]));
			ok = ok && dev <= max_rank;
			printf("%-14s %3zu %4zu ids %-5s score %+.7f %+.7f "
			       "rel.delta %.2e %s\n", label, t, cn, "pair",
			       a[0], b[0], dev, ok ? "ok" : "FAIL");
		} else {
			double c = cosine(a, b, dim);
			dev = 1.0 - c;
			ok = ok && c >= min_cos;
			printf("%-14s %3zu %4zu ids %-5s cos %.9f 1-cos %.2e %s\n",
			       label, t, cn, same ? "equal" : "DIFF", c, dev,
			       ok ? "ok" : "FAIL");
		}
		if (dev > max_dev)
			max_dev = dev;
		if (dump && same) {
			dump_vec(fd_ids, NULL, cp, cn);
			dump_vec(fd_c, a, NULL, (size_t)dim);
			dump_vec(fd_l, b, NULL, (size_t)dim);
		}
		if (ok)
			passed++;
		else
			failed++;
	}
	printf("SUMMARY %s texts=%zu ids_equal=%zu max_dev=%.3e passed=%zu "
	       "failed=%zu\n", label, checked, ids_equal, max_dev, passed,
	       failed);
	if (dump) {
		fclose(fd_ids);
		fclose(fd_c);
		fclose(fd_l);
	}
	free(a);
	free(b);
	ll_close(le);
	bert_free(bm);
	for (size_t t = 0; t < n_texts; t++)
		free(texts[t]);
	return failed ? 1 : 0;
}
