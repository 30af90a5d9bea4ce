/*
 * embed.c -- the embedding dispatcher: opens the configured provider,
 * builds the identity stored with every vector, prepends the query or
 * passage instruction, and checks and L2-normalises what comes back.
 *
 * Layer: above bert.h (through embed_gguf.c), embed_static.c and
 * embed_http.c; below vector.c and the cli.
 *
 * Holds: the model-family table of instructions (bge English v1.5, e5),
 * the canonical identity string.
 *
 * Must never: return a vector that is not finite and unit length, or an
 * identity that leaves out anything that changes the vectors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "internal.h"
#include "json.h"

struct embedder {
	struct embed_identity id;
	struct embed_provider p;
};

/*
 * Instructions by family, matched on a lower-cased model name. bge v1.5's
 * English models were trained with a query instruction and none for
 * passages (their model card's retrieval recipe); e5 models (English and
 * multilingual) with "query: " / "passage: " prefixes. bge-m3 and
 * everything else: none.
 */
static const struct embed_family families[] = {
	{ "bge-en", "Represent this sentence for searching relevant passages: ",
	  "" },
	{ "e5", "query: ", "passage: " },
	{ "none", "", "" },
};

static void lower_copy(const char *s, char *out, size_t size)
{
	size_t i;

	for (i = 0; s && s[i] && i + 1 < size; i++)
		out[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] + 32) : s[i];
	out[size ? (i < size ? i : size - 1) : 0] = '\0';
}

const struct embed_family *embed_family_of(const char *name)
{
	char n[256];

	lower_copy(name ? name : "", n, sizeof(n));
	/* bge-m3 and the Chinese bge models use no query instruction here */
	if (strstr(n, "bge") && !strstr(n, "m3") && !strstr(n, "-zh") &&
	    !strstr(n, "reranker") &&
	    (strstr(n, "-en") || strstr(n, "v1.5") || strstr(n, "v1_5")))
		return &families[0];
	if (strstr(n, "e5-") || strstr(n, "e5_") || strncmp(n, "e5", 2) == 0)
		return &families[1];
	return &families[2];
}

static void copy_field(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int embed_open(const struct embed_config *cfg, struct embedder **out,
	       char *err, size_t errsize)
{
	struct embedder *e = NULL;
	const struct embed_family *fam;
	const char *prov = cfg ? cfg->provider : NULL;
	int rc;

	*out = NULL;
	if (!prov || !*prov || strcmp(prov, "none") == 0) {
		snprintf(err, errsize, "no embedding provider configured "
				       "(see 'cairn reindex --help')");
		return CAIRN_INVALID;
	}
	if (!cfg->model || !*cfg->model) {
		snprintf(err, errsize, "embedding provider '%s' needs a model",
			 prov);
		return CAIRN_INVALID;
	}
	e = util_calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errsize, "out of memory");
		return CAIRN_NOMEM;
	}
	if (strcmp(prov, "gguf") == 0)
		rc = embed_gguf_open(cfg, &e->p, err, errsize);
	else if (strcmp(prov, "static") == 0)
		rc = embed_static_open(cfg, &e->p, err, errsize);
	else if (strcmp(prov, "http") == 0)
		rc = embed_http_open(cfg, &e->p, err, errsize);
	else {
		snprintf(err, errsize,
			 "unknown embedding provider '%s' (gguf, static, http "
			 "or none)", prov);
		rc = CAIRN_INVALID;
	}
	if (rc) {
		cairn_free(e);
		return rc;
	}
	if (e->p.dim <= 0 || e->p.dim > EMBED_MAX_DIM) {
		snprintf(err, errsize, "model '%s' has %d dimensions (1..%d "
				       "supported)", cfg->model, e->p.dim,
			 EMBED_MAX_DIM);
		embed_close(e);
		return CAIRN_INVALID;
	}
	copy_field(e->id.provider, sizeof(e->id.provider), prov);
	copy_field(e->id.model, sizeof(e->id.model),
		   strcmp(prov, "http") == 0 ? cfg->model
					     : base_name(cfg->model));
	copy_field(e->id.revision, sizeof(e->id.revision), e->p.revision);
	e->id.dim = e->p.dim;
	copy_field(e->id.pooling, sizeof(e->id.pooling),
		   e->p.pooling[0] ? e->p.pooling : "n/a");
	fam = embed_family_of(e->p.name[0] ? e->p.name : e->id.model);
	/* a name without a family falls back to the file / model id */
	if (strcmp(fam->name, "none") == 0 && e->p.name[0])
		fam = embed_family_of(e->id.model);
	copy_field(e->id.query_instruction, sizeof(e->id.query_instruction),
		   cfg->query_instruction ? cfg->query_instruction
					  : fam->query);
	copy_field(e->id.passage_instruction,
		   sizeof(e->id.passage_instruction),
		   cfg->passage_instruction ? cfg->passage_instruction
					    : fam->passage);
	*out = e;
	return CAIRN_OK;
}

void embed_close(struct embedder *e)
{
	if (!e)
		return;
	if (e->p.close)
		e->p.close(e->p.impl);
	cairn_free(e);
}

const struct embed_identity *embed_identity(const struct embedder *e)
{
	return &e->id;
}

/*
 * {"provider":…,"model":…,"revision":…,"dim":N,"pooling":…,
 *  "query_instruction":…,"passage_instruction":…} -- fixed key order,
 * compact, so two identities are equal exactly when their strings are.
 */
int embed_identity_string(const struct embed_identity *id, char *buf,
			  size_t size)
{
	struct sbuf sb = SBUF_INIT;
	int rc = CAIRN_OK;

	sbuf_adds(&sb, "{\"provider\":");
	json_add_strz(&sb, id->provider);
	sbuf_adds(&sb, ",\"model\":");
	json_add_strz(&sb, id->model);
	sbuf_adds(&sb, ",\"revision\":");
	json_add_strz(&sb, id->revision);
	sbuf_addf(&sb, ",\"dim\":%d,\"pooling\":", id->dim);
	json_add_strz(&sb, id->pooling);
	sbuf_adds(&sb, ",\"query_instruction\":");
	json_add_strz(&sb, id->query_instruction);
	sbuf_adds(&sb, ",\"passage_instruction\":");
	json_add_strz(&sb, id->passage_instruction);
	sbuf_addc(&sb, '}');
	if (sb.err)
		rc = CAIRN_NOMEM;
	else if (sb.len + 1 > size)
		rc = CAIRN_TOOBIG;
	else
		memcpy(buf, sbuf_str(&sb), sb.len + 1);
	sbuf_release(&sb);
	if (rc && size)
		buf[0] = '\0';
	return rc;
}

void embed_set_budget(struct embedder *e, long ms)
{
	if (e && e->p.budget)
		e->p.budget(e->p.impl, ms);
}

int embed_texts(struct embedder *e, int is_query, const char *const *texts,
		size_t n, float *out, char *err, size_t errsize)
{
	const char *ins = is_query ? e->id.query_instruction
				   : e->id.passage_instruction;
	char **joined = NULL;
	size_t i, j, dim = (size_t)e->id.dim;
	int rc = CAIRN_OK;

	if (n == 0)
		return CAIRN_OK;
	if (n > EMBED_MAX_BATCH) {
		snprintf(err, errsize, "too many texts in one call (%zu, limit "
				       "%d)", n, EMBED_MAX_BATCH);
		return CAIRN_TOOBIG;
	}
	for (i = 0; i < n; i++)
		if (!texts[i]) {
			snprintf(err, errsize, "text %zu is NULL", i);
			return CAIRN_INVALID;
		}
	if (ins[0]) {
		joined = util_calloc(n, sizeof(*joined));
		if (!joined) {
			snprintf(err, errsize, "out of memory");
			return CAIRN_NOMEM;
		}
		for (i = 0; i < n; i++) {
			size_t a = strlen(ins), b = strlen(texts[i]);

			joined[i] = cairn_malloc(a + b + 1);
			if (!joined[i]) {
				snprintf(err, errsize, "out of memory");
				rc = CAIRN_NOMEM;
				goto out;
			}
			memcpy(joined[i], ins, a);
			memcpy(joined[i] + a, texts[i], b + 1);
		}
	}
	rc = e->p.embed(e->p.impl,
			joined ? (const char *const *)joined : texts, n, out,
			err, errsize);
	if (rc)
		goto out;
	for (i = 0; i < n; i++) {
		float *v = out + i * dim;
		double ss = 0;

		for (j = 0; j < dim; j++) {
			if (!isfinite(v[j])) {
				snprintf(err, errsize, "the model returned a "
						       "non-finite value (NaN "
						       "or infinity) for text "
						       "%zu",
					 i);
				rc = CAIRN_CORRUPT;
				goto out;
			}
			ss += (double)v[j] * v[j];
		}
		if (ss <= 0) {
			/* no known word / empty text: a zero vector scores
			 * 0 against everything, which is the honest answer */
			continue;
		}
		ss = 1.0 / sqrt(ss);
		for (j = 0; j < dim; j++)
			v[j] = (float)(v[j] * ss);
	}
out:
	if (joined) {
		for (i = 0; i < n; i++)
			cairn_free(joined[i]);
		cairn_free(joined);
	}
	return rc;
}
