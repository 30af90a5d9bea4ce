/*
 * fts.c -- the FTS5 tokenizer "cairn": tokenize.c behind SQLite's fts5_api.
 *
 * Layer: above tokenize.c; the only file that speaks the FTS5 tokenizer
 * API (v1 xCreateTokenizer, found with `SELECT fts5(?1)`).
 *
 * Every Fts5Tokenizer instance FTS5 creates is the registration itself: the
 * tokenizer takes no arguments and keeps no per-table state, and all
 * tables on a connection share the one struct tok, loaded on the first
 * xTokenize (or fts_tok) call and freed by the registration's destructor
 * when the connection closes.
 *
 * Invariants: FTS5 flags map one way only (QUERY -> TOK_QUERY; DOCUMENT,
 * AUX and PREFIX otherwise ignored); a callback failure from FTS5 is
 * returned to FTS5 unchanged; our own failures become SQLITE_ERROR or
 * SQLITE_NOMEM.
 *
 * Must never: load dictionaries in fts_register, or keep a pointer to a
 * caller's tok_opts strings (they are copied).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "fts.h"

#define FTS_ERRMSG_MAX 512 /* bytes kept of a load failure message */

/* One registration of "cairn" on one connection. */
struct fts_reg {
	char *jieba_dict;            /* copy of opts->jieba_dict, or NULL */
	char *opencc_config;         /* copy of opts->opencc_config, or NULL */
	struct tok_opts opts;        /* the options, pointing at the copies */
	struct tok *tok;             /* loaded on first use; NULL until then */
	char errmsg[FTS_ERRMSG_MAX]; /* why the last load or run failed */
	int open_rc;                 /* tok_open's code when the load failed */
};

/* Adapts tok_emit_fn to FTS5's xToken. */
struct fts_emit {
	void *ctx; /* FTS5's context for xToken */
	int (*xToken)(void *, int, const char *, int, int,
		      int); /* FTS5's token callback */
	int rc;    /* the SQLite code xToken failed with, or SQLITE_OK */
};

static void reg_free(void *p)
{
	struct fts_reg *reg = p;

	if (!reg)
		return;
	tok_close(reg->tok);
	cairn_free(reg->jieba_dict);
	cairn_free(reg->opencc_config);
	cairn_free(reg);
}

/* The registration's tok, loading it on first use; NULL with err set. */
static struct tok *reg_tok(struct fts_reg *reg, char *err, size_t errsize)
{
	int rc;

	if (reg->tok)
		return reg->tok;
	rc = tok_open(&reg->opts, &reg->tok, reg->errmsg,
		      sizeof(reg->errmsg));
	if (rc) {
		reg->tok = NULL;
		reg->open_rc = rc;
		if (err && errsize)
			snprintf(err, errsize, "%s", reg->errmsg);
		return NULL;
	}
	return reg->tok;
}

static int fts_create(void *ctx, const char **azArg, int nArg,
		      Fts5Tokenizer **ppOut)
{
	(void)azArg;
	*ppOut = NULL;
	if (nArg > 0)
		return SQLITE_ERROR; /* "cairn" takes no arguments */
	*ppOut = (Fts5Tokenizer *)ctx;
	return SQLITE_OK;
}

static void fts_delete(Fts5Tokenizer *p)
{
	(void)p; /* the registration owns everything */
}

static int fts_emit_token(void *user, const char *token, size_t len,
			  size_t start, size_t end, int colocated)
{
	struct fts_emit *fe = user;
	int rc;

	if (len > INT_MAX || end > INT_MAX)
		return 1; /* cannot happen: FTS5 texts are under INT_MAX */
	rc = fe->xToken(fe->ctx, colocated ? FTS5_TOKEN_COLOCATED : 0, token,
			(int)len, (int)start, (int)end);
	if (rc != SQLITE_OK) {
		fe->rc = rc;
		return 1;
	}
	return 0;
}

static int fts_tokenize(Fts5Tokenizer *p, void *ctx, int flags,
			const char *text, int ntext,
			int (*xToken)(void *, int, const char *, int, int,
				      int))
{
	struct fts_reg *reg = (struct fts_reg *)p;
	struct fts_emit fe;
	struct tok *t;
	unsigned tflags = 0;
	int rc;

	t = reg_tok(reg, NULL, 0);
	if (!t) /* out of memory is not a broken tokenizer (unit_faults) */
		return reg->open_rc == CAIRN_NOMEM ? SQLITE_NOMEM
						   : SQLITE_ERROR;
	if (ntext <= 0)
		return SQLITE_OK;
	if (flags & FTS5_TOKENIZE_QUERY)
		tflags |= TOK_QUERY;
	fe.ctx = ctx;
	fe.xToken = xToken;
	fe.rc = SQLITE_OK;
	rc = tok_run(t, text, (size_t)ntext, tflags, fts_emit_token, &fe,
		     reg->errmsg, sizeof(reg->errmsg));
	if (fe.rc != SQLITE_OK)
		return fe.rc;
	if (rc == CAIRN_OK)
		return SQLITE_OK;
	return rc == CAIRN_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
}

/* The connection's fts5_api, or NULL when FTS5 is not compiled in. */
static fts5_api *get_api(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	fts5_api *api = NULL;

	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) !=
	    SQLITE_OK)
		goto out;
	if (sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL) !=
	    SQLITE_OK)
		goto out;
	(void)sqlite3_step(st);
out:
	sqlite3_finalize(st);
	return api;
}

/*
 * Register "cairn" on db with a copy of opts; nothing is loaded until the
 * tokenizer is first used.
 */
int fts_register(sqlite3 *db, const struct tok_opts *opts, char *err,
		 size_t errsize)
{
	struct fts_reg *reg = NULL;
	fts5_tokenizer methods;
	fts5_api *api;
	int rc = CAIRN_OK;

	if (err && errsize)
		err[0] = '\0';
	api = db ? get_api(db) : NULL;
	if (!api) {
		if (err && errsize)
			snprintf(err, errsize,
				 "SQLite FTS5 is not available%s%s",
				 db ? ": " : "", db ? sqlite3_errmsg(db) : "");
		return CAIRN_ERROR;
	}
	reg = util_calloc(1, sizeof(*reg));
	if (!reg)
		goto nomem;
	if (opts) {
		reg->opts = *opts;
		reg->jieba_dict = util_strdup(opts->jieba_dict);
		reg->opencc_config = util_strdup(opts->opencc_config);
		if ((opts->jieba_dict && !reg->jieba_dict) ||
		    (opts->opencc_config && !reg->opencc_config))
			goto nomem;
	}
	reg->opts.jieba_dict = reg->jieba_dict;
	reg->opts.opencc_config = reg->opencc_config;
	methods.xCreate = fts_create;
	methods.xDelete = fts_delete;
	methods.xTokenize = fts_tokenize;
	/* on failure FTS5 does not call reg_free: we do */
	if (api->xCreateTokenizer(api, FTS_TOKENIZER_NAME, reg, &methods,
				  reg_free) != SQLITE_OK) {
		if (err && errsize)
			snprintf(err, errsize,
				 "cannot register the FTS5 tokenizer '%s'",
				 FTS_TOKENIZER_NAME);
		rc = CAIRN_ERROR;
		goto out;
	}
	reg = NULL;
	goto out;
nomem:
	if (err && errsize)
		snprintf(err, errsize, "out of memory");
	rc = CAIRN_NOMEM;
out:
	reg_free(reg);
	return rc;
}

/*
 * Find db's "cairn" registration through xFindTokenizer (checking it is
 * ours) and return its tok, loading it if needed.
 */
struct tok *fts_tok(sqlite3 *db, char *err, size_t errsize)
{
	fts5_tokenizer tk;
	void *ud = NULL;
	fts5_api *api;

	if (err && errsize)
		err[0] = '\0';
	api = db ? get_api(db) : NULL;
	if (!api) {
		if (err && errsize)
			snprintf(err, errsize, "SQLite FTS5 is not available");
		return NULL;
	}
	memset(&tk, 0, sizeof(tk));
	if (api->xFindTokenizer(api, FTS_TOKENIZER_NAME, &ud, &tk) !=
		    SQLITE_OK ||
	    tk.xCreate != fts_create || !ud) {
		if (err && errsize)
			snprintf(err, errsize,
				 "the '%s' FTS5 tokenizer is not registered "
				 "on this connection",
				 FTS_TOKENIZER_NAME);
		return NULL;
	}
	return reg_tok(ud, err, errsize);
}
