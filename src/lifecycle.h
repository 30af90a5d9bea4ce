/*
 * lifecycle.h -- records age (SPEC 5.5) and are replaced:
 * decisions and facts unseen for 90 days become `stale`, for 180 days
 * `retired`; capabilities, rules and procedures (and every other kind)
 * never decay; an explicit read revives a stale record to the status it
 * had. Supersession links an old record to its replacement and takes the
 * old one out of default recall (the finder, which lists the records a new
 * one may replace, is supersede.h's).
 *
 * Layer: on store.h, below recall (docs/ARCHITECTURE.md, "Layers"). Above
 * it: receipt.c (the clock), gc.c (cairn_gc), recall.c (the daily run),
 * cli_gc.c. The finder (cairn_supersede_suggest) recalls, so it is in
 * supersede.c, above recall. cairn_record_read_key (cairn.h) is here: the
 * store reads and marks the record (store_read_key), the lifecycle then
 * revives it when it is stale.
 */
#ifndef CAIRN_LIFECYCLE_H
#define CAIRN_LIFECYCLE_H

#include <stddef.h>

#include "cairn.h"

struct cairn_db;

#define LIFECYCLE_STALE_DAYS 90    /* unseen this long: stale */
#define LIFECYCLE_RETIRE_DAYS 180  /* unseen this long: retired */
#define LIFECYCLE_EVERY_SECONDS 86400 /* the automatic run: at most daily */

/*
 * The clock of the lifecycle: $CAIRN_NOW (an ISO-8601 time; a test knob,
 * read nowhere else) or the system clock. Unix seconds.
 */
long long lifecycle_now(void);
/* lifecycle_now() as "YYYY-MM-DDTHH:MM:SSZ" (buf >= 21 bytes): last_seen. */
void lifecycle_now_iso(char *buf, size_t size);

/*
 * Age the records of both schemas as of lifecycle_now(). Unless force, does
 * nothing when the last run (meta 'lifecycle.last_run' of the main store)
 * is less than LIFECYCLE_EVERY_SECONDS ago. "Unseen" counts from
 * last_seen, or from created for a record never returned. File-backed
 * records age too (a re-seed of an unchanged file leaves their status).
 */
int lifecycle_run(struct cairn_db *db, int force, cairn_gc_result *out);
/* 1 when lifecycle_run(db, 0, ...) would age now, 0 if not, -code on error. */
int lifecycle_due(struct cairn_db *db);

/*
 * Revive record id (in schema "main" or "global") if it is stale: back to
 * the status it had before it went stale (accepted or unverified), and
 * last_seen = now. *revived (may be NULL) = 1 when it was stale. Meant for
 * the explicit reads (cairn_record_read_key).
 */
int lifecycle_revive(struct cairn_db *db, const char *schema, const char *id,
		     int *revived);

#endif /* CAIRN_LIFECYCLE_H */
