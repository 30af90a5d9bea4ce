/*
 * vocab.h -- the tokenisers of BERT-family GGUF models, built from the
 * file's `tokenizer.ggml.*` metadata.
 *
 * Layer: model files, above gguf.h. wordpiece.c implements
 * tokenizer.ggml.model = "bert" (WordPiece, phantom-space vocabulary);
 * unigram.c implements "t5" (SentencePiece Unigram with the precompiled
 * charsmap normaliser, as XLM-RoBERTa GGUFs carry it). vocab_load()
 * dispatches on the model name.
 *
 * Token ids are int32 indices into tokenizer.ggml.tokens.
 */
#ifndef CAIRN_VOCAB_H
#define CAIRN_VOCAB_H

#include <stddef.h>
#include <stdint.h>

struct gguf;
struct vocab;

enum vocab_kind { VOCAB_WORDPIECE = 1, VOCAB_UNIGRAM = 2 };

/*
 * Build the tokeniser of g. The vocabulary is copied (g may be closed
 * afterwards). CAIRN_INVALID with err set when the metadata is missing or
 * inconsistent (unknown model, bad special ids, ...).
 */
int vocab_load(const struct gguf *g, struct vocab **out, char *err,
	       size_t errsize);
void vocab_free(struct vocab *v);

int vocab_kind(const struct vocab *v);
size_t vocab_size(const struct vocab *v);
/* The token's text (as stored), or NULL if id is out of range. */
const char *vocab_token(const struct vocab *v, int32_t id);
/* Special ids (-1 when the vocabulary has none). */
int32_t vocab_cls(const struct vocab *v); /* [CLS] / <s> */
int32_t vocab_sep(const struct vocab *v); /* [SEP] / </s> */
int32_t vocab_pad(const struct vocab *v);
int32_t vocab_unk(const struct vocab *v);

/*
 * Tokenise text (UTF-8, len bytes; invalid UTF-8 is CAIRN_INVALID).
 * With add_special, the sequence is [CLS] tokens [SEP] (WordPiece) or
 * <s> tokens </s> (Unigram), the tokens truncated so the whole fits max.
 * Writes at most max ids; *n is the number written. Returns CAIRN_OK,
 * CAIRN_INVALID or CAIRN_NOMEM.
 */
int vocab_encode(const struct vocab *v, const char *text, size_t len,
		 int add_special, int32_t *ids, size_t max, size_t *n);

/*
 * A pair for cross-encoders: [CLS] a [SEP] b [SEP] (WordPiece) or
 * <s> a </s></s> b </s> (Unigram); the longer side is truncated first so
 * the whole fits max.
 */
int vocab_encode_pair(const struct vocab *v, const char *a, size_t alen,
		      const char *b, size_t blen, int32_t *ids, size_t max,
		      size_t *n);

#endif /* CAIRN_VOCAB_H */
