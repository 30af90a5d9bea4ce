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

#ifdef VOCAB_INTERNAL
#include "internal.h"
#endif

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
 * CAIRN_INVALID or CAIRN_NOMEM. CAIRN_INVALID too when max cannot hold the
 * specials (or, for WordPiece, the file has no [CLS]/[SEP]). Special-token
 * text inside `text` ("[SEP]", "</s>") is tokenised as text, never as the
 * special. A vocabulary is read-only after load: threads may share it.
 */
int vocab_encode(const struct vocab *v, const char *text, size_t len,
		 int add_special, int32_t *ids, size_t max, size_t *n);

/*
 * A pair for cross-encoders: [CLS] a [SEP] b [SEP] (WordPiece) or
 * <s> a </s></s> b </s> (Unigram); the longer side is truncated first so
 * the whole fits max (one token at a time from the longer side, from b on
 * a tie). max below 3 (WordPiece) or 4 (Unigram) is CAIRN_INVALID.
 */
int vocab_encode_pair(const struct vocab *v, const char *a, size_t alen,
		      const char *b, size_t blen, int32_t *ids, size_t max,
		      size_t *n);

/* ------------------------------------------------------------ limits */

#define VOCAB_MAX_TOKENS      (1u << 22) /* entries in a vocabulary */
#define VOCAB_MAX_TOKEN_BYTES 1024       /* bytes in one token's text */
/* WordPiece: a longer word is one [UNK] (BERT's max_input_chars_per_word) */
#define VOCAB_MAX_WORD_CHARS  100

/* Token types of tokenizer.ggml.token_type (llama.cpp's numbering). */
enum vocab_ttype {
	VOCAB_T_UNDEFINED = 0, VOCAB_T_NORMAL = 1, VOCAB_T_UNKNOWN = 2,
	VOCAB_T_CONTROL = 3, VOCAB_T_USER = 4, VOCAB_T_UNUSED = 5,
	VOCAB_T_BYTE = 6,
};

/* Id of the token whose text is exactly s[0..len), or -1 (hash lookup). */
int32_t vocab_find(const struct vocab *v, const char *s, size_t len);

/*
 * Building a vocabulary without a file (tests, tools): vocab_new() makes an
 * empty one of the given kind, vocab_add() appends tokens in id order,
 * vocab_build() checks the special ids and makes the lookup tables. The
 * options below are set on the returned object's fields through
 * vocab_set_opt() before vocab_build(). vocab_load() goes the same way.
 */
enum vocab_opt {
	VOCAB_OPT_CLS, VOCAB_OPT_SEP, VOCAB_OPT_PAD, VOCAB_OPT_UNK,
	VOCAB_OPT_LOWERCASE,        /* WordPiece: lower case (default 1) */
	VOCAB_OPT_STRIP_ACCENTS,    /* WordPiece: NFD, drop Mn (default: as
				       lower case) */
	VOCAB_OPT_ADD_SPACE_PREFIX, /* Unigram: dummy prefix ▁ (default 1) */
	VOCAB_OPT_REMOVE_EXTRA_WS,  /* Unigram: trim, collapse (default 1) */
	VOCAB_OPT_ADD_BOS,          /* Unigram: <s> with specials (default 1) */
	VOCAB_OPT_ADD_EOS,          /* Unigram: </s> with specials (default 1) */
};
/* CAIRN_OK, CAIRN_INVALID (unknown kind) or CAIRN_NOMEM; vocab_free frees. */
int vocab_new(int kind, struct vocab **out);
/* Append token vocab_size(): CAIRN_OK, CAIRN_INVALID (limits), CAIRN_NOMEM. */
int vocab_add(struct vocab *v, const char *s, size_t len, float score,
	      int type);
void vocab_set_opt(struct vocab *v, int opt, long value);
/* Unigram: the precompiled charsmap (copied); CAIRN_INVALID if malformed. */
int vocab_set_charsmap(struct vocab *v, const void *data, size_t len,
		       char *err, size_t errsize);
/* CAIRN_OK, CAIRN_INVALID (empty, no unknown token, a bad special id;
 * err says which) or CAIRN_NOMEM. err may be NULL. */
int vocab_build(struct vocab *v, char *err, size_t errsize);

/*
 * Tokenise without specials and without a cap into a caller's array that
 * grows (*ids, *n, *cap; free with cairn_free). For tests and tools.
 */
int vocab_tokenize_all(const struct vocab *v, const char *text, size_t len,
		       int32_t **ids, size_t *n, size_t *cap);

/* ------------------------------------------- internal to the tokenisers */
#ifdef VOCAB_INTERNAL

/*
 * A byte trie over token texts, children stored contiguously and sorted by
 * label (node 0 is the root). Unigram walks it for every piece that starts
 * at a position; WordPiece for the longest piece.
 */
struct vocab_node {
	uint32_t first; /* index of the first child */
	uint16_t n;     /* number of children (<= 256) */
	uint8_t label;  /* the byte leading here from the parent */
	int32_t id;     /* token ending here, or -1 */
};

struct vocab_trie {
	struct vocab_node *node; /* node[0] is the root; NULL when empty */
	size_t n;                /* nodes */
	uint32_t root[256];      /* the root's child by byte, 0 = none */
};

/* A growable id array with a sticky error (CAIRN_NOMEM). */
struct vocab_ids {
	int32_t *id;  /* the ids */
	size_t n;     /* used */
	size_t cap;   /* allocated */
	int err;      /* sticky: CAIRN_OK or CAIRN_NOMEM */
};

struct vocab {
	int kind;             /* enum vocab_kind */
	size_t n;             /* tokens */
	struct sbuf text;     /* every token's text, each NUL-terminated */
	uint32_t *off;        /* n: offset of token i in text.buf */
	uint32_t *len;        /* n: byte length of token i */
	float *score;         /* n: tokenizer.ggml.scores (0 when absent) */
	uint8_t *type;        /* n: enum vocab_ttype */
	size_t cap;           /* allocated entries of off/len/score/type */
	uint32_t *slot;       /* hash table: id + 1, 0 = empty */
	size_t mask;          /* hash slots - 1 (a power of two minus one) */
	struct vocab_trie match; /* pieces the tokeniser may emit */
	struct vocab_trie user;  /* Unigram: user-defined tokens (verbatim) */
	size_t max_len;       /* longest token in bytes */
	int32_t cls, sep, pad, unk; /* special ids or -1 */
	int lowercase;        /* WordPiece: lowercase */
	int strip_accents;    /* WordPiece: NFD, drop Mn; -1 = as lowercase */
	int add_space_prefix; /* Unigram: dummy ▁ before the text */
	int remove_extra_ws;  /* Unigram: trim and collapse spaces */
	int add_bos, add_eos; /* Unigram: which specials vocab_encode adds */
	uint32_t *xcda;       /* Unigram charsmap: the double array, or NULL */
	size_t n_xcda;        /* entries of xcda */
	char *repl;           /* charsmap: NUL-terminated replacements */
	size_t n_repl;        /* bytes of repl */
	double unk_score;     /* Unigram: min normal score - 10 */
	int32_t byte_id[256]; /* Unigram: <0xXX> tokens, -1 when absent */
	int byte_fallback;    /* all 256 byte tokens present */
	int split_ok;         /* no piece has ▁ past its first byte */
	void *blob;           /* loaded from the cache: every array above
				 points into this read-only mapping of the
				 file (vocab_add must not be called); NULL
				 when built */
	size_t blob_len;      /* bytes mapped */
};

/*
 * The compiled-table cache (vocab.c): vocab_load() keeps each built
 * vocabulary in the cache directory (util_cache_dir) as
 * vocab-<SHA-256 of the tokenizer metadata>.bin and reads it back on the
 * next load, checked whole (size, checksum, every count, offset and id)
 * before use; a file that fails any check is rebuilt and rewritten.
 * vocab_cache_sum() is the file's checksum (exported for tests).
 */
#define VOCAB_CACHE_MAX_BYTES ((size_t)1 << 31)
#define VOCAB_CACHE_SUM_AT 56 /* offset of the u64 checksum in the file */
#define VOCAB_CACHE_HEAD 64   /* the checksum covers the bytes from here */
#define VOCAB_CACHE_HEADER_BYTES 1264 /* the header; the token text next */
uint64_t vocab_cache_sum(const unsigned char *p, size_t len);
/* 1 when v came from a cache file (for tests). */
int vocab_from_cache(const struct vocab *v);

/* Step from node to its child labelled c, or NULL. */
const struct vocab_node *vocab_trie_step(const struct vocab_trie *t,
					 const struct vocab_node *node,
					 unsigned char c);
void vocab_ids_push(struct vocab_ids *o, int32_t id);

/*
 * The tokenisers proper (no specials). They append to out and may stop
 * once out holds limit ids (the ids after that would be cut anyway).
 * text is valid UTF-8.
 */
int wordpiece_tokenize(const struct vocab *v, const char *text, size_t len,
		       size_t limit, struct vocab_ids *out);
int unigram_tokenize(const struct vocab *v, const char *text, size_t len,
		     size_t limit, struct vocab_ids *out);
/* Unigram's derived tables (unk score, bytes, split_ok); after tries. */
int unigram_prepare(struct vocab *v, char *err, size_t errsize);

#endif /* VOCAB_INTERNAL */

#endif /* CAIRN_VOCAB_H */
