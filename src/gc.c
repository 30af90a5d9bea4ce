/*
 * gc.c -- cairn_gc (cairn.h): the lifecycle's ageing on request (`cairn
 * gc`), at once with force, else only when the daily run is due.
 *
 * Layer: lifecycle (docs/ARCHITECTURE.md, "Layers"), on lifecycle.h and
 * receipt.h. Above it: cli_gc.c, and recall's own daily run before a
 * search (recall.c, forced once lifecycle_due says the run is due).
 * Must never: age before the spooled receipts are in the store: ageing
 * reads last_seen, and the hook's receipts (receipt.h) set it.
 */
#include "lifecycle.h"
#include "receipt.h"
#include "store.h"

int cairn_gc(cairn_db *db, int force, cairn_gc_result *out)
{
	int rc;

	if (!force && lifecycle_due(db) != 1)
		return lifecycle_run(db, 0, out); /* not due (or its error) */
#ifndef CAIRN_MUTATE_NO_GC_DRAIN
	rc = receipt_drain(db);
#else
	rc = CAIRN_OK;
#endif
	return rc ? rc : lifecycle_run(db, 1, out);
}
