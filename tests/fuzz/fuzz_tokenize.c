/*
 * fuzz_tokenize.c -- libFuzzer target for the tokenizer (tokenize.h).
 *
 * Any bytes: tok_run() in index mode and in query mode must return, never
 * crash, leak or read out of bounds. Checked on every input:
 *   - it succeeds exactly when the input is valid UTF-8; otherwise it
 *     answers CAIRN_INVALID with "invalid UTF-8 at byte N", N < size;
 *   - every token is non-empty, at most TOK_MAX_TOKEN_BYTES bytes (the raw
 *     escape below excepted: it passes its bytes through uncut), valid
 *     UTF-8, and comes from a byte range start <= end <= size; the first
 *     token is never colocated;
 *   - query mode emits the same tokens as index mode (tokenize.h), unless
 *     the input starts with the raw escape TOK_RAW, which yields the rest
 *     verbatim as one token over [1, size);
 *   - a callback that stops after some token stops tok_run with its value.
 *
 * The tokenizer (jieba dictionary, OpenCC) is opened once and kept in a
 * static: loading it per input would make fuzzing uselessly slow. It stays
 * reachable, so LeakSanitizer does not count it.
 *
 *   make fuzz FUZZ_TIME=60     (build/fuzz/fuzz_tokenize, libFuzzer)
 *   build/san/replay_tokenize tests/fuzz/corpus/tokenize   (make check)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tokenize.h"

#define FUZZ_STOP_RC 77 /* what the stopping callback returns */

static struct tok *tok; /* opened on first input, kept for the process */

/* Tokens of one run, rendered as "start-end[+]token\n" lines. */
struct collect {
	struct sbuf sb;  /* the rendering */
	size_t size;     /* input length, for the offset checks */
	size_t ntok;     /* tokens seen */
	size_t stop_at;  /* stop with FUZZ_STOP_RC at this token (0: never) */
	int raw;         /* query mode on a TOK_RAW input: no length cap */
};

static int emit(void *user, const char *token, size_t len, size_t start,
		size_t end, int colocated)
{
	struct collect *c = user;

	if (len == 0 || !token || (len > TOK_MAX_TOKEN_BYTES && !c->raw))
		abort();
	if (util_utf8_invalid_at(token, len) != -1)
		abort();
	if (start > end || end > c->size)
		abort();
	if (c->ntok == 0 && colocated)
		abort();
	c->ntok++;
	sbuf_addf(&c->sb, "%zu-%zu%s", start, end, colocated ? "+" : " ");
	sbuf_add(&c->sb, token, len);
	sbuf_addc(&c->sb, '\n');
	if (c->stop_at && c->ntok == c->stop_at)
		return FUZZ_STOP_RC;
	return 0;
}

static struct tok *get_tok(void)
{
	char err[512];

	if (tok)
		return tok;
	if (tok_open(NULL, &tok, err, sizeof(err)) != CAIRN_OK) {
		fprintf(stderr, "fuzz_tokenize: cannot open the tokenizer: "
				"%s\n",
			err);
		abort();
	}
	return tok;
}

/* The "invalid UTF-8 at byte N" message, with N inside the input. */
static void check_invalid(const char *err, size_t size, long bad)
{
	static const char pre[] = "invalid UTF-8 at byte ";
	char *end = NULL;
	long n;

	if (strncmp(err, pre, sizeof(pre) - 1) != 0)
		abort();
	n = strtol(err + sizeof(pre) - 1, &end, 10);
	if (*end != '\0' || n != bad || n < 0 || (size_t)n >= size)
		abort();
}

/* Run one mode; returns tok_run's code with the tokens in c. */
static int run(const uint8_t *data, size_t size, unsigned flags,
	       size_t stop_at, struct collect *c)
{
	char err[256];
	int rc;

	memset(c, 0, sizeof(*c));
	c->size = size;
	c->stop_at = stop_at;
	c->raw = (flags & TOK_QUERY) && size > 0 && data[0] == (uint8_t)TOK_RAW;
	rc = tok_run(get_tok(), (const char *)data, size, flags, emit, c, err,
		     sizeof(err));
	if (c->sb.err)
		abort();
	if (rc == CAIRN_INVALID) {
		long bad = util_utf8_invalid_at((const char *)data, size);

		if (bad < 0 || c->ntok != 0)
			abort();
		check_invalid(err, size, bad);
	} else if (rc == CAIRN_OK) {
		if (util_utf8_invalid_at((const char *)data, size) != -1)
			abort();
	} else if (rc != FUZZ_STOP_RC) {
		fprintf(stderr, "fuzz_tokenize: tok_run returned %d: %s\n",
			rc, err);
		abort();
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct collect doc, query, stop;
	int rc_doc, rc_query, rc;
	int raw = size > 0 && data[0] == (uint8_t)TOK_RAW;

	rc_doc = run(data, size, 0, 0, &doc);
	rc_query = run(data, size, TOK_QUERY, 0, &query);
	if (rc_doc != rc_query)
		abort();
	if (rc_doc == CAIRN_OK && raw) {
		/* the raw escape: the rest verbatim, one token over [1, size) */
		struct sbuf want = SBUF_INIT;

		if (size > 1) {
			sbuf_addf(&want, "1-%zu ", size);
			sbuf_add(&want, data + 1, size - 1);
			sbuf_addc(&want, '\n');
		}
		if (want.err || want.len != query.sb.len ||
		    memcmp(sbuf_str(&want), sbuf_str(&query.sb), want.len) != 0)
			abort();
		sbuf_release(&want);
	} else if (doc.sb.len != query.sb.len ||
		   memcmp(sbuf_str(&doc.sb), sbuf_str(&query.sb),
			  doc.sb.len) != 0) {
		fprintf(stderr, "index and query mode differ:\n%s--\n%s",
			sbuf_str(&doc.sb), sbuf_str(&query.sb));
		abort();
	}

	/* stop early at a token chosen by the input; no leak, same prefix */
	if (doc.ntok > 0) {
		size_t k = (size_t)data[size - 1] % doc.ntok + 1;

		rc = run(data, size, 0, k, &stop);
		if (rc != FUZZ_STOP_RC || stop.ntok != k ||
		    stop.sb.len > doc.sb.len ||
		    memcmp(sbuf_str(&stop.sb), sbuf_str(&doc.sb),
			   stop.sb.len) != 0)
			abort();
		sbuf_release(&stop.sb);
	}
	sbuf_release(&doc.sb);
	sbuf_release(&query.sb);
	return 0;
}
