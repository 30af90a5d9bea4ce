/*
 * receipt.h -- recall receipts (SPEC 5.3): what a recall returned, kept so
 * that `cairn receipt ID` can show it later.
 *
 * A receipt is written in the recall's own write transaction, together
 * with last_seen of the returned records. When the store's write lock is
 * held by another process past the connection's busy timeout (the hook
 * waits 200 ms, not 10 s), the receipt is not dropped and the recall does
 * not fail: it is appended as one JSON line to the spool file
 * RECEIPT_SPOOL in the store directory, and the next receipt written
 * under the lock moves every spooled one into the table (last_seen
 * included). Lookups read the table, then the spool.
 *
 * The hook spools every receipt (db->spool_receipts): a prompt then
 * writes nothing to the database, and the hook whose receipt finds
 * RECEIPT_SPOOL_DRAIN bytes spooled writes them all in one transaction.
 * The daily ageing drains the spool first (receipt_drain), so last_seen
 * it reads is never behind.
 *
 * Layer: on store.h and json.h. Above it: recall.c.
 */
#ifndef CAIRN_RECEIPT_H
#define CAIRN_RECEIPT_H

#include "cairn.h"

struct cairn_db;

#define RECEIPT_SPOOL STORE_SPOOL_FILE     /* in the store directory */
#define RECEIPT_SPOOL_MAX (64u << 20)      /* a larger spool is left alone */
#define RECEIPT_SPOOL_DRAIN (32u << 10)    /* spool-first: drain from this size */

/*
 * Record a receipt for res (the question, the tokenizer identity, the
 * vector identity when hybrid) and set res->receipt_id; update last_seen
 * of the returned records. A locked store spools it instead (see above).
 */
int receipt_write(struct cairn_db *db, const char *query,
		  const char *identity, const char *vec_identity,
		  cairn_result *res);

/*
 * Move every spooled receipt into the table (last_seen included) in a
 * write of its own; nothing when the spool is empty or db is in a batch.
 * Run before anything that reads last_seen (the lifecycle's ageing).
 */
int receipt_drain(struct cairn_db *db);

#endif
