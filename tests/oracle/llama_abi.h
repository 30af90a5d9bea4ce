/*
 * llama_abi.h -- the few parts of libllama's C ABI that the oracle calls,
 * declared by hand for the one prebuilt build it is used with:
 * @node-llama-cpp/linux-x64@3.21.1 (llama.cpp release "v0.4.0", commit
 * 80fb11ac73e66d89eae2c6a91d8a77428fa733ed in node-llama-cpp's
 * llama/gitRelease.bundle, include/llama.h).
 *
 * Layer: test tooling (tests/oracle/, bench/oracle_bench.c); nothing in
 * src/ includes it. No llama.cpp source is compiled or committed: the
 * library is dlopen()ed from build/tools/ (tests/oracle/setup).
 *
 * Holds: the parameter structs that are passed by value
 * (llama_model_params, llama_context_params) with every member in the
 * order and type of that header, so a copy returned by
 * llama_*_default_params() can be edited by name; llama_batch; function
 * pointer types for dlsym(). llama_abi_check() compares the defaults the
 * library returns with the values that version's source sets, so a
 * library of another version (another layout) is refused instead of
 * being called with misplaced fields.
 *
 * Must never: be used with another libllama build without re-reading that
 * build's llama.h.
 */
#ifndef CAIRN_ORACLE_LLAMA_ABI_H
#define CAIRN_ORACLE_LLAMA_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* enum llama_pooling_type */
#define LL_POOL_UNSPECIFIED (-1)
#define LL_POOL_NONE 0
#define LL_POOL_MEAN 1
#define LL_POOL_CLS 2
#define LL_POOL_LAST 3
#define LL_POOL_RANK 4

/* The member order and types of that llama.h; enums are int-sized. */
struct ll_model_params {
	void *devices;                 /* ggml_backend_dev_t * */
	const void *tensor_buft_overrides;
	int32_t n_gpu_layers;
	int split_mode;
	int load_mode;
	int lazy_mode;
	int32_t main_gpu;
	const float *tensor_split;
	void *progress_callback;
	void *progress_callback_user_data;
	const void *kv_overrides;
	bool vocab_only;
	bool check_tensors;
	bool use_extra_bufts;
	bool no_host;
	bool no_alloc;
	bool load_mtp;
};

struct ll_context_params {
	uint32_t n_ctx;
	uint32_t n_batch;
	uint32_t n_ubatch;
	uint32_t n_seq_max;
	uint32_t n_rs_seq;
	uint32_t n_outputs_max;
	uint32_t n_outputs_max_per_seq;
	int32_t n_threads;
	int32_t n_threads_batch;
	int ctx_type;
	int rope_scaling_type;
	int pooling_type;
	int attention_type;
	int flash_attn_type;
	float rope_freq_base;
	float rope_freq_scale;
	float yarn_ext_factor;
	float yarn_attn_factor;
	float yarn_beta_fast;
	float yarn_beta_slow;
	uint32_t yarn_orig_ctx;
	float defrag_thold;
	void *cb_eval;
	void *cb_eval_user_data;
	int type_k;                    /* enum ggml_type */
	int type_v;
	void *abort_callback;
	void *abort_callback_data;
	bool embeddings;
	bool offload_kqv;
	bool no_perf;
	bool op_offload;
	bool swa_full;
	bool kv_unified;
	void *samplers;
	size_t n_samplers;
	void *ctx_other;
};

struct ll_batch {
	int32_t n_tokens;
	int32_t *token;
	float *embd;
	int32_t *pos;
	int32_t *n_seq_id;
	int32_t **seq_id;
	int8_t *logits;
};

struct llama_model;
struct llama_context;
struct llama_vocab;

typedef void (*ll_log_cb)(int level, const char *text, void *ud);

/* The entry points, resolved with dlsym() (see struct ll_api). */
struct ll_api {
	void (*backend_init)(void);
	void (*backend_free)(void);
	void (*log_set)(ll_log_cb cb, void *ud);
	void (*load_all_from_path)(const char *dir); /* libggml */
	size_t (*reg_count)(void);                   /* libggml */
	struct ll_model_params (*model_default_params)(void);
	struct ll_context_params (*context_default_params)(void);
	struct llama_model *(*model_load_from_file)(const char *path,
						    struct ll_model_params p);
	void (*model_free)(struct llama_model *m);
	struct llama_context *(*init_from_model)(struct llama_model *m,
						 struct ll_context_params p);
	void (*free_ctx)(struct llama_context *c);
	const struct llama_vocab *(*model_get_vocab)(const struct llama_model *m);
	int32_t (*model_n_embd)(const struct llama_model *m);
	uint32_t (*model_n_cls_out)(const struct llama_model *m);
	int (*pooling_type)(const struct llama_context *c);
	int32_t (*tokenize)(const struct llama_vocab *v, const char *text,
			    int32_t len, int32_t *tokens, int32_t max,
			    bool add_special, bool parse_special);
	struct ll_batch (*batch_init)(int32_t n_tokens, int32_t embd,
				      int32_t n_seq_max);
	void (*batch_free)(struct ll_batch b);
	int32_t (*encode)(struct llama_context *c, struct ll_batch b);
	float *(*get_embeddings_seq)(struct llama_context *c, int32_t seq);
	const char *(*print_system_info)(void);
};

/*
 * Compare the defaults of this build (llama-model.cpp and
 * llama-context.cpp of that commit) with what the library returned: a
 * shifted layout shows as wrong values. 0 when they match, else -1 with
 * the first difference in err.
 */
static inline int llama_abi_check(const struct ll_model_params *mp,
				  const struct ll_context_params *cp,
				  char *err, size_t errsize)
{
#define LL_EXPECT(cond)                                                   \
	do {                                                              \
		if (!(cond)) {                                            \
			snprintf(err, errsize, "libllama defaults differ from " \
				 "llama.h v0.4.0: %s", #cond);             \
			return -1;                                        \
		}                                                         \
	} while (0)
	LL_EXPECT(mp->devices == NULL && mp->tensor_buft_overrides == NULL);
	LL_EXPECT(mp->n_gpu_layers == -1 && mp->split_mode == 1);
	LL_EXPECT(mp->load_mode == -1 && mp->lazy_mode == 1);
	LL_EXPECT(mp->main_gpu == 0 && mp->tensor_split == NULL);
	LL_EXPECT(mp->kv_overrides == NULL && !mp->vocab_only);
	LL_EXPECT(!mp->check_tensors && mp->use_extra_bufts);
	LL_EXPECT(!mp->no_host && !mp->no_alloc && !mp->load_mtp);
	LL_EXPECT(cp->n_ctx == 512 && cp->n_batch == 2048);
	LL_EXPECT(cp->n_ubatch == 512 && cp->n_seq_max == 1);
	LL_EXPECT(cp->n_rs_seq == 0 && cp->n_outputs_max == 0);
	LL_EXPECT(cp->n_outputs_max_per_seq == 1);
	LL_EXPECT(cp->ctx_type == 0 && cp->rope_scaling_type == -1);
	LL_EXPECT(cp->pooling_type == -1 && cp->attention_type == -1);
	LL_EXPECT(cp->flash_attn_type == -1);
	LL_EXPECT(cp->yarn_ext_factor == -1.0f && cp->defrag_thold == -1.0f);
	LL_EXPECT(cp->yarn_orig_ctx == 0 && cp->cb_eval == NULL);
	LL_EXPECT(cp->type_k == 1 && cp->type_v == 1);
	LL_EXPECT(cp->abort_callback == NULL && !cp->embeddings);
	LL_EXPECT(cp->offload_kqv && cp->no_perf && cp->op_offload);
	LL_EXPECT(cp->swa_full && !cp->kv_unified);
	LL_EXPECT(cp->samplers == NULL && cp->n_samplers == 0);
	LL_EXPECT(cp->ctx_other == NULL);
#undef LL_EXPECT
	return 0;
}

#endif /* CAIRN_ORACLE_LLAMA_ABI_H */
