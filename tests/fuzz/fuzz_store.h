/*
 * fuzz_store.h -- the temporary store the fuzz targets that need one share
 * (fuzz_hook.c, fuzz_mcp.c, fuzz_jsonl.c, fuzz_seed.c): a private directory
 * made with mkdtemp, a store in it opened once at start-up without the
 * global store, and its removal at exit.
 *
 * Layer: tests (fuzz harness); each fuzz target is its own program and
 *        includes this once, so the definitions here are static.
 * Holds: db (the store) and dir (its workspace root, also CAIRN_GLOBAL;
 *        CAIRN_CACHE_DIR is dir/cache), both for the including target.
 * Must never: leave the directory behind after a normal exit, or keep
 *        state of one target that another could see.
 *
 * Define FUZZ_STORE_NAME (a string literal: the target's name) and
 * _XOPEN_SOURCE 700 (for nftw) before including it.
 */
#ifndef CAIRN_FUZZ_STORE_H
#define CAIRN_FUZZ_STORE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cairn.h"

static cairn_db *db;
static char dir[] = "/tmp/cairn-fuzz-" FUZZ_STORE_NAME "-XXXXXX";

static int rm_one(const char *p, const struct stat *sb, int flag,
		  struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

static void cleanup(void)
{
	cairn_db_close(db);
	db = NULL;
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Make dir, the n folders subs[] inside it (relative names, parents first),
 * point CAIRN_GLOBAL and CAIRN_CACHE_DIR into it, open (creating) the store
 * dir/.cairn into db, and remove it all at exit. Aborts on any failure.
 */
static void fuzz_store_open(const char *const *subs, size_t n)
{
	char sub[256];
	cairn_open_opts o;
	size_t i;

	if (!mkdtemp(dir))
		abort();
	for (i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, subs[i]);
		if (mkdir(sub, 0700) != 0)
			abort();
	}
	setenv("CAIRN_GLOBAL", dir, 1);
	snprintf(sub, sizeof(sub), "%s/cache", dir);
	setenv("CAIRN_CACHE_DIR", sub, 1);
	snprintf(sub, sizeof(sub), "%s/.cairn", dir);
	memset(&o, 0, sizeof(o));
	o.create = 1;
	o.no_global = 1;
	if (cairn_db_open(sub, &o, &db) != CAIRN_OK)
		abort();
	atexit(cleanup);
}

/* Write one record (title ""; origin, status and path may be NULL; a
 * path is line 1 of that file) into db, or abort. Inline: not every
 * target writes records this way. */
static inline void fuzz_store_put(const char *kind, const char *key,
				  const char *body, const char *status,
				  const char *origin, const char *path)
{
	cairn_record r;

	memset(&r, 0, sizeof(r));
	r.kind = (char *)kind;
	r.key = (char *)key;
	r.title = (char *)"";
	r.body = (char *)body;
	r.status = (char *)status;
	r.origin = (char *)origin;
	r.src_path = (char *)path;
	r.src_line = path ? 1 : 0;
	r.confidence = -1;
	if (cairn_record_write(db, &r, 0, NULL) != CAIRN_OK)
		abort();
}

#endif /* CAIRN_FUZZ_STORE_H */
