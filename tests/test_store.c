/*
 * test_store.c -- harness helpers for unit tests that need a store: a fresh
 * workspace under test_tmpdir, files written into it, records written into
 * the store (see test.h). Linked into the unit binary; scripts/unit-one adds
 * it when the store is among the sources.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cairn.h"
#include "test.h"

struct cairn_db *test_store(const char *name, char *root, size_t rootsize)
{
	char ws[512], dir[600];
	cairn_open_opts o;
	cairn_db *db = NULL;
	int rc;

	snprintf(ws, sizeof(ws), "%s/%s", test_tmpdir, name);
	snprintf(dir, sizeof(dir), "%s/.cairn", ws);
	if (root)
		snprintf(root, rootsize, "%s", ws);
	memset(&o, 0, sizeof(o));
	o.create = 1;
	o.no_global = 1;
	rc = cairn_db_open(dir, &o, &db);
	CHECK_MSG(rc == CAIRN_OK, "open: %s", cairn_errmsg(db));
	return db;
}

void test_write_file(const char *root, const char *rel, const char *text,
		     char *path)
{
	size_t i;
	FILE *f;

	snprintf(path, 1024, "%s/%s", root, rel);
	for (i = strlen(root) + 1; path[i]; i++) {
		if (path[i] == '/') {
			path[i] = '\0';
			mkdir(path, 0700);
			path[i] = '/';
		}
	}
	f = fopen(path, "w");
	CHECK_MSG(f != NULL, "cannot write %s: %s", path, strerror(errno));
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

char *test_write_record(struct cairn_db *db, const char *kind,
			const char *status, const char *origin,
			const char *key, const char *title, const char *body)
{
	cairn_record r;
	char *id = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	r.kind = (char *)kind;
	r.status = (char *)status;
	r.origin = (char *)origin;
	r.key = (char *)key;
	r.title = (char *)title;
	r.body = (char *)body;
	r.confidence = -1;
	rc = cairn_record_write(db, &r, 0, &id);
	CHECK_MSG(rc == CAIRN_OK, "write: %s", cairn_errmsg(db));
	return id;
}
