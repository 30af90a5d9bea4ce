/*
 * ingest.h -- transcripts as events (issue 6, seed 004's history layer).
 *
 * Layer: ingest sits on store and json; the CLI sits on it. The cairn_
 * declarations below are meant for include/cairn.h; until they move there
 * they live here. The ingest_ ones are internal (the unit tests use them).
 *
 * A transcript is JSON Lines: Claude Code session transcripts, or a generic
 * form {"time","speaker","text","session"}; the format is detected per line.
 * Each user or assistant turn (and a one-line summary of each tool call)
 * becomes an `event` record with its time, session id and speaker, so that
 * `cairn recall --kind event` finds it and cairn_session_events() gives the
 * exchange around it back in its original order. docs/INGEST.md is the
 * user-facing description.
 */
#ifndef CAIRN_INGEST_H
#define CAIRN_INGEST_H

#include <stddef.h>
#include <stdio.h>

#include "cairn.h"
#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define INGEST_MAX_LINE ((size_t)1 << 20) /* 1 MiB: a longer line is reported and skipped */
#define INGEST_MAX_CHARS 4000              /* code points kept of an event's text */
#define INGEST_MAX_SUMMARY 200             /* bytes of a tool call's one-line summary */
#define INGEST_MAX_SPEAKER 64              /* bytes in a generic line's speaker */
#define INGEST_MAX_SESSION 256             /* bytes in a session id */

/* Options for cairn_ingest_file(); a zeroed struct (or NULL) means the defaults. */
typedef struct cairn_ingest_opts {
	unsigned flags;      /* CAIRN_WRITE_REDACT: store secrets masked instead of refusing the line */
	const char *session; /* session of generic lines without one; NULL: the file name without .jsonl */
	void (*progress)(void *user, size_t done, size_t total); /* bytes read of the file; may be NULL */
	void *user;          /* passed to progress */
	int include_tools;   /* 1: also tool output (failed tool calls' output,
			      * tool-result lines, generic tool/web speakers);
			      * 0: left out, not the user's or the assistant's
			      * words (stored prompt injection, issue 16) */
} cairn_ingest_opts;

/* What ingesting one file did. Release with cairn_ingest_report_release(). */
typedef struct cairn_ingest_report {
	size_t lines;     /* non-blank lines read */
	size_t events;    /* events those lines hold (written or not) */
	size_t added;     /* events stored now */
	size_t unchanged; /* events already stored (same id): not touched */
	size_t skipped;   /* lines with nothing to keep: summaries, meta, thinking, tool output */
	size_t tools;     /* tool-output events left out (no include_tools) */
	size_t refused;   /* lines refused for a secret (none of their events stored) */
	size_t errors;    /* lines reported and skipped: invalid JSON, too long, bad fields */
	char *messages;   /* "FILE:LINE: message\n" for every refused or bad line; NULL if none */
} cairn_ingest_report;

/*
 * Ingest one transcript file (JSON Lines) as event records.
 *
 * path is read as given (relative to the current directory); the records'
 * src_path is it relative to the workspace root when the file lies inside
 * the workspace, else its absolute path. Every event gets kind "event",
 * origin "human", status "unverified", the session id (src_session), the
 * speaker (src_tool, and the title "speaker · YYYY-MM-DD HH:MM"), the time
 * (normalised to UTC, "YYYY-MM-DDTHH:MM:SS.mmmZ") and the JSONL line
 * (src_line). A text longer than INGEST_MAX_CHARS code points is cut
 * there and ends in " […]" (after the secret filter saw all of it). Ids are "e" + 15 hex digits of SHA-256 over session, the
 * line's uuid (or line number), the event's place in the line, speaker and
 * text, so re-ingesting a file adds nothing (report->unchanged).
 * A line without a uuid (or "id") counts by its time, and only without a
 * time by its line number.
 *
 * A line is written whole or not at all. A line that is not JSON, longer
 * than INGEST_MAX_LINE, or has bad fields is reported and skipped
 * (report->errors); a line whose text holds a secret is refused
 * (report->refused) unless opts->flags has CAIRN_WRITE_REDACT, when it is
 * stored masked. Each such line adds "path:line: message" to
 * report->messages (the first 100; then one "path: N more problem lines
 * not listed"); the rest of the file is still ingested. All of the
 * file is one batch (cairn_begin .. cairn_commit), so the call must not be
 * made inside a batch.
 *
 * Returns CAIRN_OK when the file was read to its end (even with reported
 * lines: check report->refused and report->errors), else CAIRN_IO (cannot
 * read the file), CAIRN_INVALID (a batch is already open), CAIRN_NOMEM,
 * CAIRN_BUSY; then nothing of the file is written. rep is filled in both
 * cases; the caller releases it with cairn_ingest_report_release().
 */
CAIRN_API int cairn_ingest_file(cairn_db *db, const char *path,
				const cairn_ingest_opts *opts,
				cairn_ingest_report *rep);

/* Free everything a report holds and zero it. NULL is a no-op. */
CAIRN_API void cairn_ingest_report_release(cairn_ingest_report *rep);

/*
 * The events of a session in their original order: by time, then source
 * path, then line, then the order they were stored in. Retired and
 * rejected events are left out. session is an exact session id, or a
 * unique prefix of one (at least 4 characters).
 *
 * With around_id NULL: every event, or with n > 0 the last n. With
 * around_id (a record id or unique prefix): that event and the n events
 * before and after it (n >= 0); session may then be NULL or "" to mean the
 * record's own session.
 *
 * *out is an array of *count records: the caller frees it with
 * cairn_record_list_free(). Errors: CAIRN_NOTFOUND (no events of that
 * session, no such record), CAIRN_INVALID (an ambiguous prefix, a record
 * that is not an event of that session, n < 0), CAIRN_NOMEM, CAIRN_BUSY.
 */
CAIRN_API int cairn_session_events(cairn_db *db, const char *session,
				   const char *around_id, int n,
				   cairn_record ***out, size_t *count);

/* ----------------------------------------------------------- internal */

/* One event parsed from a transcript line. Strings are owned by it. */
struct ingest_event {
	char *session; /* session id */
	char *speaker; /* "user", "assistant", "tool", or a generic line's speaker */
	char *time;    /* "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC), or NULL when the line has none */
	char *text;    /* the text, trimmed, whole (cairn_ingest_file cuts it) */
	char *uid;     /* the line's uuid or id, or NULL (then its time or line number counts) */
	int tool_output; /* 1: a tool's output or fetched content, not said by
			  * the user or the assistant (kept with include_tools;
			  * -1 once ingest decided to leave it out) */
};

/*
 * Parse one JSONL line (len bytes, no newline) into events. default_session
 * is used for generic lines without "session" (may be NULL: then such a
 * line is an error). On CAIRN_OK *out holds *n events (0 when the line has
 * nothing to keep: summaries, meta lines, thinking, tool output); free them
 * with ingest_events_free(). On CAIRN_INVALID or CAIRN_TOOBIG err (errsize
 * bytes) says why and *out is NULL. CAIRN_NOMEM on out of memory.
 */
int ingest_parse_line(const char *line, size_t len,
		      const char *default_session, struct ingest_event **out,
		      size_t *n, char *err, size_t errsize);

/* Free n events from ingest_parse_line(). NULL is a no-op. */
void ingest_events_free(struct ingest_event *ev, size_t n);

/*
 * Cut an event's text after INGEST_MAX_CHARS code points, at a code point
 * boundary, trimmed, with " […]" appended. *text (valid UTF-8, from
 * cairn_malloc) is replaced by a new allocation when it is cut; shorter
 * texts are left alone. CAIRN_OK or CAIRN_NOMEM (then *text is unchanged).
 */
int ingest_text_cut(char **text);

/*
 * Normalise a time to UTC "YYYY-MM-DDTHH:MM:SS.mmmZ" into out[32]:
 * ISO-8601 date or date-time ("T" or space; seconds, fraction and a "Z" or
 * +HH:MM / +HHMM / +HH offset optional). Returns 0, or -1 if unparseable.
 */
int ingest_time_norm(const char *s, char out[32]);

/* A number of seconds since the epoch (milliseconds when over 1e11) as
 * "YYYY-MM-DDTHH:MM:SS.mmmZ" into out[32]. 0, or -1 when out of range. */
int ingest_time_from_number(double v, char out[32]);

#define INGEST_READ_CHUNK 65536 /* bytes read from the file at a time */

/* A buffered line reader that never holds more than INGEST_MAX_LINE of a
 * line (shared with capture). Zero it and set f. */
struct ingest_reader {
	FILE *f;                     /* the file (the caller opens and closes it) */
	char buf[INGEST_READ_CHUNK]; /* bytes read ahead */
	size_t pos;                  /* next unread byte in buf */
	size_t len;                  /* bytes in buf */
	size_t consumed;             /* bytes of the file consumed so far */
};

/*
 * Read one line into sb, without its newline. Returns 1 when a line was
 * read, 0 at end of file, -1 on a read error. A line longer than
 * INGEST_MAX_LINE is read to its end but not kept: *toolong is set.
 */
int ingest_read_line(struct ingest_reader *rd, struct sbuf *sb, int *toolong);

/*
 * The id of an event: "e" + 15 hex digits of SHA-256 over session, "\n",
 * uid (else "T" + time, else "L" + line number), "#" + ordinal, "\n",
 * speaker, "\n", text
 * (as stored: redacted and cut). out[17].
 */
void ingest_event_id(const struct ingest_event *ev, long line, size_t ordinal,
		     char out[17]);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_INGEST_H */
