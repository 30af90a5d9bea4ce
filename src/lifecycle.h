/*
 * lifecycle.h -- records age (SPEC 5.5) and are replaced (issue 5):
 * decisions and facts unseen for 90 days become `stale`, for 180 days
 * `retired`; capabilities, rules and procedures (and every other kind)
 * never decay; an explicit read revives a stale record to the status it
 * had. Supersession links an old record to its replacement and takes the
 * old one out of default recall; the finder lists records a new one may
 * replace.
 *
 * Layer: on store.h (and recall through the public API for the finder).
 * Above it: recall.c (the daily run), cli_gc.c, and the store's read path
 * (the revive).
 */
#ifndef CAIRN_LIFECYCLE_H
#define CAIRN_LIFECYCLE_H

#include <stddef.h>

#include "cairn.h"

struct cairn_db;

#define LIFECYCLE_STALE_DAYS 90    /* unseen this long: stale */
#define LIFECYCLE_RETIRE_DAYS 180  /* unseen this long: retired */
#define LIFECYCLE_EVERY_SECONDS 86400 /* the automatic run: at most daily */
#define LIFECYCLE_SUGGEST_MAX 10   /* replacements listed at most */
#define LIFECYCLE_SUGGEST_MIN 0.5  /* lexical similarity a suggestion needs */

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
 * the store's explicit reads (cairn_record_read_key, cairn_record_get).
 */
int lifecycle_revive(struct cairn_db *db, const char *schema, const char *id,
		     int *revived);

#endif /* CAIRN_LIFECYCLE_H */
