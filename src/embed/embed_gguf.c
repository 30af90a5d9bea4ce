/*
 * embed_gguf.c -- the "gguf" provider: a BERT-family encoder from a GGUF
 * file, run by cairn's own runtime (bert.h).
 *
 * Layer: a provider behind embed.c, on bert.h.
 * Holds: nothing but the mapping of bert.h onto struct embed_provider.
 *
 * The identity's revision is the file's SHA-256, its pooling the effective
 * one (the file's, or the configured override), and general.name picks the
 * instruction family (embed.c).
 *
 * Must never: open a cross-encoder (rank pooling) as an embedder.
 */
#include <stdio.h>
#include <string.h>

#include "bert.h"
#include "embed.h"
#include "internal.h"

static const char *pool_name(int p)
{
	switch (p) {
	case BERT_POOL_MEAN: return "mean";
	case BERT_POOL_CLS: return "cls";
	case BERT_POOL_LAST: return "last";
	case BERT_POOL_RANK: return "rank";
	default: return "none";
	}
}

static int gguf_embed(void *impl, const char *const *texts, size_t n,
		      float *out, char *err, size_t errsize)
{
	return bert_embed(impl, texts, n, out, err, errsize);
}

static void gguf_close(void *impl)
{
	bert_free(impl);
}

int embed_gguf_open(const struct embed_config *cfg, struct embed_provider *p,
		    char *err, size_t errsize)
{
	struct bert_opts o;
	struct bert_model *m = NULL;
	const char *sha;
	int rc;

	memset(&o, 0, sizeof(o));
	o.pooling = cfg->pooling;
	o.threads = cfg->threads;
	rc = bert_load(cfg->model, &o, &m, err, errsize);
	if (rc)
		return rc;
	if (bert_pooling(m) == BERT_POOL_RANK ||
	    bert_pooling(m) == BERT_POOL_NONE) {
		snprintf(err, errsize,
			 "'%s' has %s pooling: it is not an embedding model "
			 "(a reranker or a token model)",
			 cfg->model, pool_name(bert_pooling(m)));
		bert_free(m);
		return CAIRN_INVALID;
	}
	sha = bert_sha256(m);
	if (!sha || !*sha) {
		snprintf(err, errsize, "cannot hash '%s'", cfg->model);
		bert_free(m);
		return CAIRN_IO;
	}
	memset(p, 0, sizeof(*p));
	p->impl = m;
	p->dim = bert_dim(m);
	snprintf(p->revision, sizeof(p->revision), "%s", sha);
	snprintf(p->pooling, sizeof(p->pooling), "%s",
		 pool_name(bert_pooling(m)));
	snprintf(p->name, sizeof(p->name), "%s",
		 bert_name(m) ? bert_name(m) : "");
	p->embed = gguf_embed;
	p->close = gguf_close;
	return CAIRN_OK;
}
