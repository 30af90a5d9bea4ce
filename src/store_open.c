/*
 * store_open.c -- finding, opening and closing a store: the workspace
 * walk, the database file and its connection settings, the global store's
 * attach, and the calls that tune a short-lived process (the hook).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fts.h"
#include "secret.h"
#include "drift.h"
#include "store.h"

/* ------------------------------------------------------------- environment */

/* The variables of struct store_env, each with where it goes. */
static const struct {
	const char *name; /* the variable */
	size_t off;       /* its char * in struct store_env */
} env_vars[] = {
	{ "CAIRN_BILINGUAL", offsetof(struct store_env, bilingual) },
	{ "CAIRN_JIEBA_DICT", offsetof(struct store_env, jieba_dict) },
	{ "CAIRN_RERANK_MODEL", offsetof(struct store_env, rerank_model) },
	{ "CAIRN_EMBED_PROVIDER", offsetof(struct store_env, embed_provider) },
	{ "CAIRN_EMBED_MODEL", offsetof(struct store_env, embed_model) },
	{ "CAIRN_EMBED_URL", offsetof(struct store_env, embed_url) },
	{ "CAIRN_EMBED_API_KEY_ENV",
	  offsetof(struct store_env, embed_api_key_env) },
	{ "CAIRN_EMBED_QUERY_INSTRUCTION",
	  offsetof(struct store_env, embed_query_instruction) },
	{ "CAIRN_EMBED_PASSAGE_INSTRUCTION",
	  offsetof(struct store_env, embed_passage_instruction) },
	{ "CAIRN_EMBED_POOLING", offsetof(struct store_env, embed_pooling) },
	{ "CAIRN_EMBED_THREADS", offsetof(struct store_env, embed_threads) },
	{ "CAIRN_EMBED_TIMEOUT_MS",
	  offsetof(struct store_env, embed_timeout_ms) },
};

int store_env_read(struct store_env *env)
{
	size_t i;

	memset(env, 0, sizeof(*env));
	for (i = 0; i < ARRAY_SIZE(env_vars); i++) {
		const char *v = getenv(env_vars[i].name);
		char **slot = (char **)((char *)env + env_vars[i].off);

		if (!v)
			continue;
		*slot = util_strdup(v);
		if (!*slot) {
			store_env_release(env);
			return CAIRN_NOMEM;
		}
	}
	return CAIRN_OK;
}

void store_env_release(struct store_env *env)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(env_vars); i++) {
		char **slot = (char **)((char *)env + env_vars[i].off);

		cairn_free(*slot);
		*slot = NULL;
	}
}

/* ------------------------------------------------------------- open, close */

/* Create path as a 0600 file if it does not exist, so SQLite inherits 0600
 * for the -wal and -shm files it creates beside it. */
static int precreate(struct cairn_db *db, const char *path)
{
	/* a symbolic link in its place is refused, never followed (issue
	 * 16: a cloned repository could ship one) */
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return store_error(db, CAIRN_IO, errno == ELOOP
				   ? "cannot create '%s': it is a symbolic "
				     "link (refused)" : "cannot create '%s': %s",
				   path, strerror(errno));
	close(fd);
	return CAIRN_OK;
}

static char *default_global_dir(void)
{
	const char *g = getenv("CAIRN_GLOBAL");
	const char *x = getenv("XDG_DATA_HOME");
	const char *h = getenv("HOME");
	struct sbuf sb = SBUF_INIT;

	if (g && *g)
		return util_strdup(g);
	if (x && *x)
		sbuf_addf(&sb, "%s/cairn", x);
	else
		sbuf_addf(&sb, "%s/.local/share/cairn", h && *h ? h : "/tmp");
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

int cairn_workspace_find(const char *start, char **out)
{
	const char *env = getenv("CAIRN_DIR");
	char cwd[PATH_MAX], path[PATH_MAX + 16];
	struct stat st;
	char *slash;

	*out = NULL;
	if (env && *env) {
		*out = util_strdup(env);
		return *out ? CAIRN_OK : CAIRN_NOMEM;
	}
	if (start) {
		if (!realpath(start, cwd))
			return CAIRN_NOTFOUND;
	} else if (!getcwd(cwd, sizeof(cwd))) {
		return CAIRN_IO;
	}
	for (;;) {
		snprintf(path, sizeof(path), "%s/.cairn",
			 strcmp(cwd, "/") == 0 ? "" : cwd);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			*out = util_strdup(path);
			return *out ? CAIRN_OK : CAIRN_NOMEM;
		}
		if (strcmp(cwd, "/") == 0)
			return CAIRN_NOTFOUND;
		slash = strrchr(cwd, '/');
		if (!slash)
			return CAIRN_NOTFOUND;
		if (slash == cwd)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

int cairn_workspace_check(const char *dir, char *why, size_t whysize)
{
	struct stat lst, st;
	uid_t me = geteuid();

	if (why && whysize)
		why[0] = '\0';
	if (lstat(dir, &lst) != 0 || !S_ISLNK(lst.st_mode))
		return CAIRN_OK;
	if (lst.st_uid != me) {
		if (why)
			snprintf(why, whysize, "'%s' is a symbolic link owned "
				 "by another user (uid %u): refused",
				 dir, (unsigned)lst.st_uid);
		return CAIRN_IO;
	}
	if (stat(dir, &st) == 0 && st.st_uid != me) {
		if (why)
			snprintf(why, whysize, "'%s' is a symbolic link to a "
				 "directory owned by another user (uid %u): "
				 "refused",
				 dir, (unsigned)st.st_uid);
		return CAIRN_IO;
	}
	return CAIRN_OK;
}

static int connection_setup(struct cairn_db *db, int busy_ms,
			    const char *jieba)
{
	struct tok_opts topts;
	char err[256];
	int rc;

	sqlite3_busy_timeout(db->sql, busy_ms);
	sqlite3_update_hook(db->sql, store_rev_hook, db); /* migration 5 */
	db->busy_ms = busy_ms;
	sqlite3_extended_result_codes(db->sql, 1);
	rc = store_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		      "PRAGMA foreign_keys=ON;",
		  "configuring the store");
	if (rc)
		return rc;
	memset(&topts, 0, sizeof(topts));
	topts.jieba_dict = jieba;
	if (fts_register(db->sql, &topts, err, sizeof(err)) != CAIRN_OK)
		return store_error(db, CAIRN_ERROR, "%s", err);
	return CAIRN_OK;
}

int store_attach_global(struct cairn_db *db, int create)
{
	struct sbuf path = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	struct stat sst;
	int rc = CAIRN_OK, src;

	if (db->has_global)
		return CAIRN_OK;
	if (db->no_global || !db->global_dir)
		return store_error(db, CAIRN_NOTFOUND,
				   "the global store is disabled");
	sbuf_addf(&path, "%s/global.db", db->global_dir);
	if (path.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	if (stat(path.buf, &sst) != 0) {
		if (!create) {
			rc = CAIRN_NOTFOUND;
			goto out;
		}
		if (util_mkdir_p(db->global_dir, 0700) != 0) {
			rc = store_error(db, CAIRN_IO,
					 "cannot create '%s': %s",
					 db->global_dir, strerror(errno));
			goto out;
		}
		rc = precreate(db, path.buf);
		if (rc)
			goto out;
	}
	src = sqlite3_prepare_v2(db->sql, "ATTACH DATABASE ?1 AS global", -1,
				 &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, path.buf, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "attaching the global store");
		goto out;
	}
	db->has_global = 1;
	/* attached inside a transaction: a rollback takes its schema back
	 * too, so it is detached again then (global_settle) */
	db->global_in_tx = !sqlite3_get_autocommit(db->sql);
	rc = store_migrate(db, "global");
	if (rc) {
		if (db->global_in_tx) {
			db->has_global = 0; /* detached when the tx ends */
		} else {
			sqlite3_exec(db->sql, "DETACH DATABASE global", NULL,
				     NULL, NULL);
			db->has_global = 0;
		}
	}
out:
	sbuf_release(&path);
	return rc;
}

int cairn_db_open(const char *dir, const cairn_open_opts *opts,
		  cairn_db **out)
{
	cairn_open_opts defaults;
	struct cairn_db *db;
	struct sbuf path = SBUF_INIT;
	struct stat st;
	char *slash;
	int rc, src;

	*out = NULL;
	if (!opts) {
		memset(&defaults, 0, sizeof(defaults));
		opts = &defaults;
	}
	db = util_calloc(1, sizeof(*db));
	if (!db)
		return CAIRN_NOMEM;
	*out = db;
	db->dir = util_strdup(dir);
	db->no_global = opts->no_global;
	if (store_env_read(&db->env) != CAIRN_OK)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	{
		const char *bp = opts->bilingual_dict ? opts->bilingual_dict
						      : db->env.bilingual;

		if (bp && *bp) {
			db->bil_path = util_strdup(bp);
			if (!db->bil_path)
				return store_error(db, CAIRN_NOMEM,
						   "out of memory");
		}
	}
	db->global_dir = opts->global_dir ? util_strdup(opts->global_dir)
					  : default_global_dir();
	if (!db->dir || !db->global_dir)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	/* the workspace root is the directory holding ".cairn" */
	db->root = util_strdup(dir);
	if (!db->root)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	slash = strrchr(db->root, '/');
	if (slash && strcmp(slash, "/.cairn") == 0)
		*(slash == db->root ? slash + 1 : slash) = '\0';
	else if (!slash && strcmp(db->root, ".cairn") == 0)
		strcpy(db->root, ".");

	sbuf_addf(&path, "%s/cairn.db", dir);
	if (path.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	{
		char why[600];

		rc = cairn_workspace_check(dir, why, sizeof(why));
		if (rc) {
			rc = store_error(db, rc, "%s", why);
			goto out;
		}
	}
	if (stat(path.buf, &st) != 0) {
		if (!opts->create) {
			rc = store_error(db, CAIRN_NOTFOUND,
					 "no cairn store at '%s': run "
					 "'cairn init' first",
					 dir);
			goto out;
		}
		if (util_mkdir_p(dir, 0700) != 0) {
			rc = store_error(db, CAIRN_IO,
					 "cannot create '%s': %s", dir,
					 strerror(errno));
			goto out;
		}
		rc = precreate(db, path.buf);
		if (rc)
			goto out;
	}
	/* NOFOLLOW: the store (and the attached global one) is never a
	 * symbolic link's target */
	src = sqlite3_open_v2(path.buf, &db->sql,
			      SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
				      SQLITE_OPEN_NOFOLLOW,
			      NULL);
	if (src != SQLITE_OK) {
		struct stat lst;

		rc = lstat(path.buf, &lst) == 0 && S_ISLNK(lst.st_mode)
			     ? store_error(db, CAIRN_IO, "cannot open '%s': it "
					   "is a symbolic link (refused)",
					   path.buf)
			     : store_sql_error(db, src, "opening the store");
		goto out;
	}
	/* an empty option is no option: the environment's, as tok_open did */
	rc = connection_setup(db, opts->busy_timeout_ms > 0
					  ? opts->busy_timeout_ms
					  : 10000,
			      opts->jieba_dict && *opts->jieba_dict
				      ? opts->jieba_dict
				      : db->env.jieba_dict);
	if (rc)
		goto out;
	rc = store_migrate(db, "main");
	if (rc)
		goto out;
	if (!db->no_global) {
		rc = store_attach_global(db, 0);
		if (rc == CAIRN_NOTFOUND)
			rc = CAIRN_OK;
	}
out:
	sbuf_release(&path);
	return rc;
}

int cairn_db_close(cairn_db *db)
{
	if (!db)
		return CAIRN_OK;
	if (db->vec_free)
		db->vec_free(db->vec);
	if (db->rerank_free)
		db->rerank_free(db->rerank);
	store_links_forget(db);
	if (db->sql)
		sqlite3_close_v2(db->sql);
	util_owned_free(db->bil); /* recall's dictionary (bilingual.h) */
	cairn_free(db->bil_path);
	store_env_release(&db->env);
	cairn_free(db->dir);
	cairn_free(db->root);
	cairn_free(db->global_dir);
	cairn_free(db);
	return CAIRN_OK;
}

int cairn_db_fail(cairn_db *db, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!db)
		return rc;
	va_start(ap, fmt);
	vsnprintf(db->errmsg, sizeof(db->errmsg), fmt, ap);
	va_end(ap);
	return rc;
}

const char *cairn_errmsg(const cairn_db *db)
{
	if (!db)
		return "out of memory";
	return db->errmsg[0] ? db->errmsg : "no error";
}

const char *cairn_db_root(const cairn_db *db)
{
	return db->root;
}

const char *cairn_db_dir(const cairn_db *db)
{
	return db->dir;
}

#define STORE_MMAP_BYTES "1073741824" /* map up to 1 GiB of a store file */

void cairn_db_map_files(cairn_db *db)
{
	/* every attached schema (workspace and global store) */
	sqlite3_exec(db->sql, "PRAGMA mmap_size=" STORE_MMAP_BYTES, NULL, NULL,
		     NULL);
}

void cairn_db_short_lived(cairn_db *db)
{
	cairn_db_map_files(db);
	/*
	 * A short-lived process is usually the only connection, so its close
	 * would be the last one: SQLite would then copy the WAL into the
	 * database, fsync both and the folder, and delete the WAL -- four
	 * fsyncs per prompt for one receipt. Leave that to SQLite's automatic
	 * checkpoint (every ~1000 WAL pages, in whichever connection commits
	 * then); the WAL is as durable as the database file
	 * (synchronous=NORMAL). cairn_db_checkpoint() empties the WAL before
	 * the process ends.
	 */
	sqlite3_db_config(db->sql, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/*
	 * And most prompts write nothing at all: the receipt (and last_seen)
	 * is appended to the spool, moved into the store in one write every
	 * RECEIPT_SPOOL_DRAIN bytes (receipt.h).
	 */
	db->spool_receipts = 1;
}

int cairn_db_spool_receipts(cairn_db *db, int on)
{
	int was = db->spool_receipts;

	db->spool_receipts = on != 0;
	return was;
}

/*
 * With NO_CKPT_ON_CLOSE alone the WAL was never emptied: the next hook,
 * again the only connection, finds no WAL index in shared memory, so
 * SQLite rebuilds it by reading every frame of the WAL (recovery) and,
 * having forgotten which frames were already copied into the database,
 * copies them all again at its automatic checkpoint; a WAL that is never
 * reset only grows (~40 pages a prompt, 17 MB after 270 prompts of
 * bench/hook_bench.c, each hook then reading all of it and rewriting
 * ~1 350 pages). A TRUNCATE checkpoint at the end copies this process's
 * own pages once (two fsyncs, as any checkpoint) and leaves the WAL empty.
 * Without waiting: while another connection reads, SQLite keeps the WAL
 * index in shared memory and that connection's checkpoints do the work.
 */
void cairn_db_checkpoint(cairn_db *db)
{
	if (!db || !db->sql)
		return;
	sqlite3_busy_timeout(db->sql, 0);
	/* every attached schema; SQLITE_BUSY (a reader) is fine */
	(void)sqlite3_wal_checkpoint_v2(db->sql, NULL,
					SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_busy_timeout(db->sql, db->busy_ms);
}

