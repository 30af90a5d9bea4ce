/*
 * fts.h -- the FTS5 tokenizer "cairn" (tokenize.c behind SQLite's fts5_api).
 *
 * Layer: above tokenize.h; the only module that knows the FTS5 tokenizer
 * API. The store creates its FTS5 tables with tokenize='cairn' after
 * calling fts_register() on each connection.
 *
 * Invariants: one registration per call owns one lazily loaded struct tok;
 * it is freed by SQLite (the registration's destructor) when db closes.
 * Errors inside the tokenizer (invalid UTF-8, a missing dictionary) fail
 * the FTS5 statement with SQLITE_ERROR; fts_tok() tells why loading failed.
 *
 * Must never: load dictionaries at registration time, or hand FTS5 a
 * colocated first token or an offset outside the text.
 */
#ifndef CAIRN_FTS_H
#define CAIRN_FTS_H

#include <stddef.h>

#include <sqlite3.h>

#include "tokenize.h"

#define FTS_TOKENIZER_NAME "cairn" /* the name used in tokenize='...' */

/*
 * Register the FTS5 tokenizer named "cairn" on db. Dictionaries are loaded
 * lazily on first use of the tokenizer (not at registration), from opts
 * (copied; NULL means all defaults). Returns CAIRN_OK, or CAIRN_ERROR with
 * a message if FTS5 is missing, or CAIRN_NOMEM.
 */
int fts_register(sqlite3 *db, const struct tok_opts *opts, char *err,
		 size_t errsize);

/*
 * The shared tok used by db's tokenizer (loading it if needed), or NULL
 * with err filled (not registered, or the dictionaries failed to load).
 * Borrowed; valid while db is open.
 */
struct tok *fts_tok(sqlite3 *db, char *err, size_t errsize);

#endif /* CAIRN_FTS_H */
