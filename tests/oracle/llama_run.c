/*
 * llama_run.c -- embedding through node-llama-cpp's prebuilt libllama
 * (dlopen()ed from build/tools/, never linked, never committed).
 *
 * Layer: test tooling, on llama_abi.h (llama_run.h). Used by the oracle
 * (tests/oracle/oracle.c) and the throughput comparison
 * (bench/oracle_bench.c).
 *
 * Holds: resolving the dozen entry points, the ABI check of the parameter
 * structs, one model + context per embedder (embeddings on, the requested
 * pooling, no GPU layers, flash attention off -- llama.cpp's flash
 * attention path rounds K and V to F16, about 1e-3 relative error per
 * element, and node-llama-cpp leaves it off by default --, n_threads and
 * n_threads_batch both set), and
 * packing several sequences into one llama_batch for llama_encode().
 *
 * Must never: call into the library before llama_abi_check() passed, or
 * print libllama's log unless ORACLE_VERBOSE is set.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama_run.h"

static struct ll_api api;
static int ready;

struct ll_embedder {
	struct llama_model *model;
	struct llama_context *ctx;
	const struct llama_vocab *vocab;
	int dim, pooling, max_seqs, max_tokens;
	struct ll_batch batch;
};

static void quiet_log(int level, const char *text, void *ud)
{
	(void)level;
	(void)ud;
	if (getenv("ORACLE_VERBOSE"))
		fputs(text, stderr);
}

#define SYM(field, name)                                                  \
	do {                                                              \
		*(void **)(&api.field) = dlsym(h, name);                  \
		if (!api.field) {                                         \
			snprintf(err, errsize, "libllama has no %s", name); \
			return -1;                                        \
		}                                                         \
	} while (0)

int ll_init(const char *dir, char *err, size_t errsize)
{
	char path[4096];
	void *h;

	if (ready)
		return 0;
	snprintf(path, sizeof(path), "%s/libllama.v0.4.0.so", dir);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errsize, "cannot load %s: %s", path, dlerror());
		return -1;
	}
	SYM(backend_init, "llama_backend_init");
	SYM(backend_free, "llama_backend_free");
	SYM(log_set, "llama_log_set");
	SYM(load_all_from_path, "ggml_backend_load_all_from_path");
	SYM(reg_count, "ggml_backend_reg_count");
	SYM(model_default_params, "llama_model_default_params");
	SYM(context_default_params, "llama_context_default_params");
	SYM(model_load_from_file, "llama_model_load_from_file");
	SYM(model_free, "llama_model_free");
	SYM(init_from_model, "llama_init_from_model");
	SYM(free_ctx, "llama_free");
	SYM(model_get_vocab, "llama_model_get_vocab");
	SYM(model_n_embd, "llama_model_n_embd");
	SYM(model_n_cls_out, "llama_model_n_cls_out");
	SYM(pooling_type, "llama_pooling_type");
	SYM(tokenize, "llama_tokenize");
	SYM(batch_init, "llama_batch_init");
	SYM(batch_free, "llama_batch_free");
	SYM(encode, "llama_encode");
	SYM(get_embeddings_seq, "llama_get_embeddings_seq");
	SYM(print_system_info, "llama_print_system_info");

	struct ll_model_params mp = api.model_default_params();
	struct ll_context_params cp = api.context_default_params();
	if (llama_abi_check(&mp, &cp, err, errsize) != 0)
		return -1;
	api.log_set(quiet_log, NULL);
	api.backend_init();
	api.load_all_from_path(dir);
	if (api.reg_count() == 0) {
		snprintf(err, errsize, "no ggml backend could be loaded from "
			 "%s (set ORACLE_VERBOSE=1 to see why)", dir);
		return -1;
	}
	ready = 1;
	return 0;
}

const char *ll_system_info(void)
{
	return ready ? api.print_system_info() : "";
}

struct ll_embedder *ll_open(const char *path, int pooling, int threads,
			    int max_seqs, int max_tokens, char *err,
			    size_t errsize)
{
	struct ll_embedder *e;
	struct ll_model_params mp;
	struct ll_context_params cp;
	uint32_t total = (uint32_t)max_seqs * (uint32_t)max_tokens;

	if (!ready) {
		snprintf(err, errsize, "ll_init was not called");
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	mp = api.model_default_params();
	mp.n_gpu_layers = 0;
	e->model = api.model_load_from_file(path, mp);
	if (!e->model) {
		snprintf(err, errsize, "libllama cannot load %s "
			 "(ORACLE_VERBOSE=1 shows its log)", path);
		free(e);
		return NULL;
	}
	cp = api.context_default_params();
	cp.n_ctx = total;
	cp.n_batch = total;
	cp.n_ubatch = total;
	cp.n_seq_max = (uint32_t)max_seqs;
	cp.n_threads = threads;
	cp.n_threads_batch = threads;
	cp.embeddings = true;
	cp.pooling_type = pooling;
	cp.flash_attn_type = 0; /* off: its path casts K and V to F16 */
	cp.offload_kqv = false;
	cp.op_offload = false;
	e->ctx = api.init_from_model(e->model, cp);
	if (!e->ctx) {
		snprintf(err, errsize, "libllama cannot make a context for %s",
			 path);
		api.model_free(e->model);
		free(e);
		return NULL;
	}
	e->vocab = api.model_get_vocab(e->model);
	e->pooling = api.pooling_type(e->ctx);
	e->dim = e->pooling == LL_POOL_RANK ? (int)api.model_n_cls_out(e->model)
					    : api.model_n_embd(e->model);
	e->max_seqs = max_seqs;
	e->max_tokens = max_tokens;
	e->batch = api.batch_init((int32_t)total, 0, 1);
	return e;
}

void ll_close(struct ll_embedder *e)
{
	if (!e)
		return;
	api.batch_free(e->batch);
	api.free_ctx(e->ctx);
	api.model_free(e->model);
	free(e);
}

int ll_dim(const struct ll_embedder *e)
{
	return e->dim;
}

int ll_pooling(const struct ll_embedder *e)
{
	return e->pooling;
}

int ll_tokenize(struct ll_embedder *e, const char *text, int32_t *ids,
		int max)
{
	int32_t n = api.tokenize(e->vocab, text, (int32_t)strlen(text), ids,
				 max, true, false);
	return n < 0 ? -1 : (int)n;
}

int ll_embed_ids(struct ll_embedder *e, const int32_t *const *seqs,
		 const size_t *lens, size_t n, float *out, char *err,
		 size_t errsize)
{
	struct ll_batch *b = &e->batch;
	int32_t k = 0;

	if (n == 0 || n > (size_t)e->max_seqs) {
		snprintf(err, errsize, "%zu sequences (at most %d)", n,
			 e->max_seqs);
		return -1;
	}
	for (size_t s = 0; s < n; s++) {
		if (lens[s] == 0 || lens[s] > (size_t)e->max_tokens) {
			snprintf(err, errsize, "sequence of %zu tokens",
				 lens[s]);
			return -1;
		}
		for (size_t i = 0; i < lens[s]; i++, k++) {
			b->token[k] = seqs[s][i];
			b->pos[k] = (int32_t)i;
			b->n_seq_id[k] = 1;
			b->seq_id[k][0] = (int32_t)s;
			b->logits[k] = 1;
		}
	}
	b->n_tokens = k;
	int rc = api.encode(e->ctx, *b);
	if (rc != 0) {
		snprintf(err, errsize, "llama_encode returned %d", rc);
		return -1;
	}
	for (size_t s = 0; s < n; s++) {
		const float *v = api.get_embeddings_seq(e->ctx, (int32_t)s);
		if (!v) {
			snprintf(err, errsize, "no embedding for sequence %zu",
				 s);
			return -1;
		}
		memcpy(out + s * (size_t)e->dim, v,
		       (size_t)e->dim * sizeof(float));
	}
	return 0;
}
