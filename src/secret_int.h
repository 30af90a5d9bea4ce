/*
 * secret_int.h -- what secret.c (the matchers) and secret_scan.c (the
 * views, the merge, the entry points of secret.h) share.
 */
#ifndef CAIRN_SECRET_INT_H
#define CAIRN_SECRET_INT_H

#include <stddef.h>

static inline int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline int is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static inline int is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static inline int is_alpha(int c)
{
	return is_upper(c) || is_lower(c);
}

static inline int is_alnum(int c)
{
	return is_alpha(c) || is_digit(c);
}

static inline int is_b64url(int c)
{
	return is_alnum(c) || c == '-' || c == '_';
}

static inline int is_b64all(int c)
{
	return is_b64url(c) || c == '+' || c == '/' || c == '=';
}

/*
 * Every matcher (only the token formats with tokens) over t[0, len), left
 * to right, resuming after each hit: add(arg, kind, start, end) for each,
 * in t's coordinates.
 */
void secret_match_run(const unsigned char *t, size_t len, int tokens,
		      void (*add)(void *arg, const char *kind, size_t start,
				  size_t end),
		      void *arg);

#endif /* CAIRN_SECRET_INT_H */
