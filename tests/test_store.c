/*
 * test_store.c -- harness helper for unit tests that need a store: a fresh
 * workspace under test_tmpdir (see test.h). Linked into the unit binary;
 * scripts/unit-one adds it when the store is among the sources.
 */
#include <stdio.h>
#include <string.h>

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
