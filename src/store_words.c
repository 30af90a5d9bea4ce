/*
 * store_words.c -- the spec's words as the store checks them, and the
 * names of the error codes.
 *
 * Layer: store (no SQL here). The kinds, statuses, scopes and origins come
 * from words.h, the one table; the SQL CHECK constraints of the shipped
 * migrations back these checks (unit_store compares the two).
 *
 * Must never: accept a word words.h does not list, coerce one (an unknown
 * value is an error for the caller to report), or name an error code by
 * its position.
 */
#include <string.h>

#include "store.h"
#include "words.h"

/* ------------------------------------------------------------ vocabularies */

/* the spec's words (words.h) */
static const char *const kinds[] = { WORDS_ARRAY(CAIRN_KINDS) };
static const char *const statuses[] = { WORDS_ARRAY(CAIRN_STATUSES) };
static const char *const origins[] = { WORDS_ARRAY(CAIRN_ORIGINS) };

static int in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	if (!s)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

int cairn_kind_valid(const char *s)
{
	return in_list(s, kinds, ARRAY_SIZE(kinds));
}

int cairn_status_valid(const char *s)
{
	return in_list(s, statuses, ARRAY_SIZE(statuses));
}

int cairn_origin_valid(const char *s)
{
	return in_list(s, origins, ARRAY_SIZE(origins));
}

/*
 * workspace and machine records live in the workspace store (machine: true
 * only on this machine, a capability proved here; team sync leaves them
 * local unless asked, docs/TEAM.md), global ones in the user's.
 */
int cairn_scope_valid(const char *s)
{
	static const char *const scopes[] = { WORDS_ARRAY(CAIRN_SCOPES) };

	return in_list(s, scopes, ARRAY_SIZE(scopes));
}

const char *store_key_where(const char *scope)
{
	if (scope && strcmp(scope, "machine") == 0)
		return "key = ?1 AND scope = 'machine'";
	if (scope && strcmp(scope, "global") == 0)
		return "key = ?1";
	/* the workspace store's own key first, then a machine record's */
	return scope ? "key = ?1 AND scope = 'workspace'"
		     : "key = ?1 ORDER BY scope = 'machine'";
}

const char *cairn_errstr(int rc)
{
	/* by code, not by position: unit_store reads the codes from cairn.h */
	static const char *const names[] = {
		[CAIRN_OK] = "ok",
		[CAIRN_ERROR] = "error",
		[CAIRN_NOMEM] = "out of memory",
		[CAIRN_IO] = "I/O error",
		[CAIRN_CORRUPT] = "corrupt data",
		[CAIRN_INVALID] = "invalid input",
		[CAIRN_TOOBIG] = "input too large",
		[CAIRN_BUSY] = "store is busy",
		[CAIRN_NOTFOUND] = "not found",
		[CAIRN_SECRET] = "secret refused",
		[CAIRN_READONLY] = "record is file-backed",
		[CAIRN_EXISTS] = "already exists",
		[CAIRN_MISMATCH] = "identity mismatch",
	};

	if (rc < 0 || (size_t)rc >= ARRAY_SIZE(names) || !names[rc])
		return "unknown error";
	return names[rc];
}

int cairn_libversion_number(void)
{
	return CAIRN_VERSION_NUMBER;
}

