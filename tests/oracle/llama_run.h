/*
 * llama_run.h -- embedding through node-llama-cpp's prebuilt libllama,
 * loaded with dlopen() (the oracle's reference and the benchmark's
 * baseline).
 *
 * Layer: test tooling, on llama_abi.h; used by tests/oracle/oracle.c and
 * bench/oracle_bench.c.
 */
#ifndef CAIRN_ORACLE_LLAMA_RUN_H
#define CAIRN_ORACLE_LLAMA_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "llama_abi.h"

struct ll_embedder;

/*
 * dlopen libllama.v0.4.0.so from dir, check its ABI against llama_abi.h,
 * load the CPU backend variants found in dir. 0 or -1 with err (the
 * dlerror() text when the library cannot be loaded). Once per process.
 */
int ll_init(const char *dir, char *err, size_t errsize);

/* "key = value" lines of ggml's CPU features (llama_print_system_info). */
const char *ll_system_info(void);

/*
 * Load model path with pooling (LL_POOL_*, or LL_POOL_UNSPECIFIED for the
 * file's own), `threads` threads, up to max_seqs sequences of at most
 * max_tokens tokens in one call. NULL with err on failure.
 */
struct ll_embedder *ll_open(const char *path, int pooling, int threads,
			    int max_seqs, int max_tokens, char *err,
			    size_t errsize);
void ll_close(struct ll_embedder *e);

int ll_dim(const struct ll_embedder *e);     /* floats per output */
int ll_pooling(const struct ll_embedder *e); /* effective LL_POOL_* */

/*
 * llama_tokenize(add_special=1, parse_special=0): at most max ids into
 * ids; the count, or -1 on failure.
 */
int ll_tokenize(struct ll_embedder *e, const char *text, int32_t *ids,
		int max);

/*
 * One llama_encode() over n sequences (seq ids 0..n-1, positions from 0,
 * every token an output), then llama_get_embeddings_seq() for each:
 * n * ll_dim() floats into out, as libllama returns them (not
 * normalised). 0 or -1 with err.
 */
int ll_embed_ids(struct ll_embedder *e, const int32_t *const *seqs,
		 const size_t *lens, size_t n, float *out, char *err,
		 size_t errsize);

#endif /* CAIRN_ORACLE_LLAMA_RUN_H */
