/*
 * ingest.h -- transcripts as events (seed 004's history layer).
 *
 * Layer: ingest sits on store and json; the CLI sits on it. Its public
 * calls (cairn_ingest_file, cairn_ingest_report_release,
 * cairn_session_events) are declared in include/cairn.h; the ingest_ ones
 * below are internal (the unit tests use them).
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
