/*
 * secret.h -- the secret filter: finds credentials in text before it is
 * stored, so that secrets never enter memory.
 *
 * Layer: bottom, beside util; uses utf8proc. Pure functions over a byte
 * range: no SQLite, no I/O, no logging. The scan runs over the text as
 * written and over normalised views of it (NFKC, zero-width characters
 * dropped, wrapped lines joined, base64 and %XX decoded), which it
 * allocates only when the text has something to normalise; memory and
 * time stay linear in len.
 *
 * Must never: log, print or copy the secret bytes anywhere except the
 * redacted copy (where they are replaced), or abort on any input (invalid
 * UTF-8, embedded NULs and megabyte inputs are all fine).
 *
 * The kinds a hit can have are listed, with what each matches, in the table
 * at the top of secret.c; the names are stable (they show in error messages
 * and in "[REDACTED:<kind>]" markers).
 */
#ifndef CAIRN_SECRET_H
#define CAIRN_SECRET_H

#include <stddef.h>

#include "internal.h"

struct secret_hit {
	const char *kind;   /* static name, e.g. "aws-access-key-id", "jwt" */
	size_t start, end;  /* byte range of the secret itself in the text */
	size_t line;        /* 1-based line of start */
};

/*
 * Scan len bytes of text. Returns the number of hits (0 = clean) and fills
 * up to max of them into hits (which may be NULL when max is 0), in order of
 * position; hits never overlap. A hit found in a normalised view is the
 * range of the original bytes it came from (a whole base64 run, a token
 * with the zero-width characters inside it). Out of memory fails closed:
 * one hit of kind "unscanned-out-of-memory" over the whole text.
 */
size_t secret_scan(const char *text, size_t len, struct secret_hit *hits,
		   size_t max);

/*
 * A copy of text with each hit replaced by "[REDACTED:<kind>]", always
 * NUL-terminated; its length goes to *outlen when outlen is not NULL.
 * Caller frees with cairn_free(). NULL on out of memory (also when the
 * scan itself ran out).
 */
char *secret_redact(const char *text, size_t len, size_t *outlen);

/*
 * One-line message for a hit into buf (always NUL-terminated when size > 0):
 * "refusing to store a secret: <kind> on line <n>[ of <what>] (use --redact
 * to store it masked)". what names where the text came from (a field or a
 * file name) and may be NULL or "". The message never contains the secret.
 */
void secret_describe(const struct secret_hit *hit, const char *what,
		     char *buf, size_t size);

/*
 * Is hit the fail-closed one secret_scan() gives when it ran out of memory
 * (so a caller reports CAIRN_NOMEM rather than a secret)?
 */
int secret_unscanned(const struct secret_hit *hit);

/* Name of the i-th kind (0-based) in the table; NULL past the last. */
const char *secret_kind_name(size_t i);

/*
 * Test hook: turn off the matcher of one kind (by name) until further
 * notice, so a test can prove each matcher is load-bearing. NULL turns all
 * kinds back on. Unknown names are ignored. Test-only global state.
 */
void secret_disable_kind_for_test(const char *kind);

#endif /* CAIRN_SECRET_H */
