/*
 * ingest.c -- transcripts as events (seed 004's history layer):
 * JSON Lines transcripts become `event` records, and a session's events
 * come back in their original order.
 *
 * Layer: ingest sits on store (cairn_record_write and its own queries on
 * db->sql), json and secret; the CLI (cli_ingest.c) sits on it.
 *
 * Two line formats, detected per line:
 *   - Claude Code session transcripts: objects with "type" ("user",
 *     "assistant", "summary", "system", ...), "sessionId", "timestamp",
 *     "uuid" and "message": {"role", "content"}, where content is a string
 *     or an array of blocks (text, tool_use, tool_result, thinking, ...);
 *   - generic lines: {"time", "speaker", "text", "session"} ("id" optional).
 * What each becomes is listed in docs/INGEST.md.
 *
 * Why events are origin "human", status "unverified": an event is a record
 * of what was said, not a claim. Origins agent/capture/reflection would make
 * every event a candidate behind the approval gate, and statuses outside
 * accepted/unverified leave default recall, yet `cairn recall --kind event`
 * must find them. The person who ran `cairn ingest` is the one who put them
 * there; "unverified" keeps them below accepted decisions and facts in the
 * kind/status weights.
 *
 * Invariants: a line is written whole or not at all (one SAVEPOINT per
 * line inside the file's batch); event ids depend only on the session, the
 * line's uuid (or number), the event's place in the line, the speaker and
 * the stored text, so re-ingesting adds nothing.
 *
 * Must never: abort or read out of bounds on any input (invalid JSON,
 * megabyte lines, NULs), keep a line longer than INGEST_MAX_LINE in memory,
 * print a secret (messages name the kind and line, never the bytes).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "ingest.h"
#include "internal.h"
#include "json.h"
#include "secret.h"
#include "store.h"

#define INGEST_PROGRESS_STEP ((size_t)1 << 20) /* report progress every MiB */
#define INGEST_MAX_UID 256               /* bytes of a line's uuid or id */
#define INGEST_MAX_MSG 512               /* bytes of one parse error message */
#define INGEST_MAX_REPORTED 100          /* problem lines listed per file; the rest are counted */

/* ================================================================ times */

/* Parse exactly n decimal digits at s into *out. 0, or -1 if not digits. */
static int digits(const char *s, int n, int *out)
{
	int i, v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Seconds since the epoch (and milliseconds) as "YYYY-MM-DDTHH:MM:SS.mmmZ". */
static int format_utc(long long secs, int ms, char out[32])
{
	struct tm tm;
	time_t t = (time_t)secs;
	char buf[96]; /* room for any ints, so the compiler sees no truncation */
	size_t n;

	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 ||
	    tm.tm_year + 1900 > 9999)
		return -1;
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, ms);
	n = strlen(buf);
	if (n >= 32)
		return -1;
	memcpy(out, buf, n + 1);
	return 0;
}

/* Parse "+HH:MM", "+HHMM" or "+HH" at *p into seconds east of UTC. */
static int parse_offset(const char **pp, int *off)
{
	const char *p = *pp;
	int sign = *p == '-' ? -1 : 1, oh, om = 0;

	p++;
	if (digits(p, 2, &oh))
		return -1;
	p += 2;
	if (*p == ':')
		p++;
	if (*p) {
		if (digits(p, 2, &om))
			return -1;
		p += 2;
	}
	if (oh > 23 || om > 59)
		return -1;
	*off = sign * (oh * 60 + om) * 60;
	*pp = p;
	return 0;
}

/* Normalise an ISO-8601 time to UTC with milliseconds (ingest.h). */
int ingest_time_norm(const char *s, char out[32])
{
	int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, off = 0, k;
	const char *p;
	struct tm tm;

	if (!s || strlen(s) < 10)
		return -1;
	if (digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
	    s[7] != '-' || digits(s + 8, 2, &d))
		return -1;
	p = s + 10;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (digits(p, 2, &h) || p[2] != ':' || digits(p + 3, 2, &mi))
			return -1;
		p += 5;
		if (*p == ':') {
			if (digits(p + 1, 2, &sec))
				return -1;
			p += 3;
			if (*p == '.' || *p == ',') {
				p++;
				if (*p < '0' || *p > '9')
					return -1;
				/* keep milliseconds; finer digits are dropped */
				for (k = 0; *p >= '0' && *p <= '9'; p++) {
					if (k < 3)
						ms = ms * 10 + (*p - '0');
					k++;
				}
				for (; k < 3; k++)
					ms *= 10;
			}
		}
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			if (parse_offset(&p, &off))
				return -1;
		}
	}
	if (*p)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	return format_utc((long long)timegm(&tm) - off, ms, out);
}

/* A number time: seconds since the epoch, or milliseconds when over 1e11 (ingest.h). */
int ingest_time_from_number(double v, char out[32])
{
	long long ms;

	if (!(v >= 0 && v < 253402300800000.0))
		return -1;
	if (v < 1e11)
		v *= 1000.0;
	ms = (long long)v;
	return format_utc(ms / 1000, (int)(ms % 1000), out);
}

/* ================================================================ texts */

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

/* Trim s (len bytes) on both sides: *start and the new length. */
static size_t trim(const char *s, size_t len, const char **start)
{
	while (len > 0 && is_space(*s)) {
		s++;
		len--;
	}
	while (len > 0 && is_space(s[len - 1]))
		len--;
	*start = s;
	return len;
}

/*
 * Cut an event text after INGEST_MAX_CHARS code points, appending " […]"
 * (ingest.h). *text is replaced by a new allocation when it is cut.
 */
int ingest_text_cut(char **text)
{
	const char *s = *text, *keep;
	size_t i, chars = 0, n;
	struct sbuf sb = SBUF_INIT;

	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) == 0x80)
			continue; /* a continuation byte: same code point */
		if (chars == INGEST_MAX_CHARS)
			break;
		chars++;
	}
	if (!s[i])
		return CAIRN_OK;
	n = trim(s, i, &keep);
	sbuf_add(&sb, keep, n);
	sbuf_adds(&sb, " […]");
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	cairn_free(*text);
	*text = sbuf_detach(&sb, NULL);
	return CAIRN_OK;
}

/* Append the first non-blank line of s to sb, at most max bytes (a cut ends in "…"). */
static void add_first_line(struct sbuf *sb, const char *s, size_t max)
{
	const char *line = s;
	size_t n = 0;

	while (*s) {
		n = strcspn(s, "\n");
		n = trim(s, n, &line);
		if (n > 0)
			break;
		s += strcspn(s, "\n");
		if (*s)
			s++;
	}
	if (!*s)
		return;
	if (n > max) {
		n = max;
		/* do not cut a UTF-8 sequence in half */
		while (n > 0 && ((unsigned char)line[n] & 0xC0) == 0x80)
			n--;
		sbuf_add(sb, line, n);
		sbuf_adds(sb, "…");
		return;
	}
	sbuf_add(sb, line, n);
}

/* ============================================================== parsing */

/* Events of one line being built. */
struct evlist {
	struct ingest_event *v; /* the events */
	size_t n;               /* events in v */
	size_t cap;             /* slots allocated */
	const char *session;    /* the line's session (borrowed from its JSON) */
	const char *speaker;    /* the line's speaker (borrowed) */
	const char *time;       /* normalised time or NULL (borrowed) */
	const char *uid;        /* uuid / id or NULL (borrowed) */
	int tool_output;        /* events added now are tool output */
};

/* Free n events from ingest_parse_line() (ingest.h). */
void ingest_events_free(struct ingest_event *ev, size_t n)
{
	size_t i;

	if (!ev)
		return;
	for (i = 0; i < n; i++) {
		cairn_free(ev[i].session);
		cairn_free(ev[i].speaker);
		cairn_free(ev[i].time);
		cairn_free(ev[i].text);
		cairn_free(ev[i].uid);
	}
	cairn_free(ev);
}

/* Add an event with speaker sp and text (len bytes, trimmed; empty: none). */
static int add_event(struct evlist *el, const char *sp, const char *text,
		     size_t len)
{
	struct ingest_event *e;

	len = trim(text, len, &text);
	if (len == 0)
		return CAIRN_OK;
	if (el->n == el->cap) {
		size_t cap = el->cap ? 2 * el->cap : 4;
		struct ingest_event *nv = util_realloc(el->v, cap * sizeof(*nv));

		if (!nv)
			return CAIRN_NOMEM;
		el->v = nv;
		el->cap = cap;
	}
	e = &el->v[el->n];
	memset(e, 0, sizeof(*e));
	el->n++;
	e->session = util_strdup(el->session);
	e->speaker = util_strdup(sp);
	e->text = util_strndup(text, len);
	if (el->time)
		e->time = util_strdup(el->time);
	if (el->uid)
		e->uid = util_strdup(el->uid);
	e->tool_output = el->tool_output;
	if (!e->session || !e->speaker || !e->text ||
	    (el->time && !e->time) || (el->uid && !e->uid))
		return CAIRN_NOMEM;
	return CAIRN_OK;
}

/* Read a time member (string or number; absent or null: none) into buf. */
static int get_time(const struct json *j, const char *key, char buf[32],
		    const char **out, char *err, size_t errsize)
{
	const struct json *t = json_get(j, key);

	*out = NULL;
	if (!t || t->type == JSON_NULL)
		return CAIRN_OK;
	if ((t->type == JSON_STRING && ingest_time_norm(t->str, buf) == 0) ||
	    (t->type == JSON_NUMBER && ingest_time_from_number(t->num, buf) == 0)) {
		*out = buf;
		return CAIRN_OK;
	}
	snprintf(err, errsize, "\"%s\" is not an ISO-8601 time or a number "
		 "of seconds", key);
	return CAIRN_INVALID;
}

/* Check a session id: present, one line, at most INGEST_MAX_SESSION bytes. */
static int check_session(const char *s, char *err, size_t errsize)
{
	if (!s || !*s) {
		snprintf(err, errsize, "no session id (give the line a "
			 "\"session\", or --session)");
		return CAIRN_INVALID;
	}
	if (strlen(s) > INGEST_MAX_SESSION || strpbrk(s, "\n\r")) {
		snprintf(err, errsize, "the session id is longer than %d bytes "
			 "or spans lines", INGEST_MAX_SESSION);
		return CAIRN_INVALID;
	}
	return CAIRN_OK;
}

/* A line's uuid or id: a string of at most INGEST_MAX_UID bytes, or NULL. */
static int get_uid(const struct json *j, const char *key, const char **out,
		   char *err, size_t errsize)
{
	const struct json *u = json_get(j, key);

	*out = NULL;
	if (!u || u->type == JSON_NULL)
		return CAIRN_OK;
	if (u->type != JSON_STRING || u->len == 0 ||
	    u->len > INGEST_MAX_UID) {
		snprintf(err, errsize, "\"%s\" must be a string of 1 to %d "
			 "bytes", key, INGEST_MAX_UID);
		return CAIRN_INVALID;
	}
	*out = u->str;
	return CAIRN_OK;
}

/*
 * Speakers of generic lines that are tools or fetched pages, not a person
 * or the assistant (compared without case): left out without
 * include_tools.
 */
static const char *const tool_speakers[] = {
	"tool", "tools", "tool_result", "tool-result", "function",
	"function_call_output", "observation", "web", "browser", "fetch",
	"search", NULL
};

static int is_tool_speaker(const char *sp)
{
	size_t i;

	for (i = 0; tool_speakers[i]; i++)
		if (strcasecmp(sp, tool_speakers[i]) == 0)
			return 1;
	return 0;
}

/* A generic line: {"time","speaker","text","session"[,"id"]}. */
static int parse_generic(const struct json *j, const char *default_session,
			 struct evlist *el, char tbuf[32], char *err,
			 size_t errsize)
{
	const char *speaker = json_get_str(j, "speaker");
	const char *text = json_get_str(j, "text");
	const struct json *s = json_get(j, "session");
	size_t n;
	int rc;

	if (!speaker || !text) {
		snprintf(err, errsize, "\"speaker\" and \"text\" must be "
			 "strings");
		return CAIRN_INVALID;
	}
	n = trim(speaker, strlen(speaker), &speaker);
	if (n == 0 || n > INGEST_MAX_SPEAKER ||
	    memchr(speaker, '\n', n) != NULL) {
		snprintf(err, errsize, "\"speaker\" must be one line of 1 to "
			 "%d bytes", INGEST_MAX_SPEAKER);
		return CAIRN_INVALID;
	}
	if (s && s->type != JSON_NULL && s->type != JSON_STRING) {
		snprintf(err, errsize, "\"session\" must be a string");
		return CAIRN_INVALID;
	}
	el->session = s && s->type == JSON_STRING && *s->str ? s->str
							      : default_session;
	rc = check_session(el->session, err, errsize);
	if (rc)
		return rc;
	rc = get_time(j, "time", tbuf, &el->time, err, errsize);
	if (rc)
		return rc;
	rc = get_uid(j, "id", &el->uid, err, errsize);
	if (rc)
		return rc;
	{
		/* the speaker is trimmed in place of a copy: NUL-terminate it */
		char sp[INGEST_MAX_SPEAKER + 1];

		memcpy(sp, speaker, n);
		sp[n] = '\0';
		el->tool_output = is_tool_speaker(sp);
		return add_event(el, sp, text, strlen(text));
	}
}

/*
 * Keys tried, in order, for the one argument a tool call's summary shows:
 * the shell command, the file, the search pattern, ... (Claude Code's tool
 * inputs; other tools fall back to their first string argument).
 */
static const char *const tool_keys[] = {
	"command", "file_path", "notebook_path", "path", "pattern", "url",
	"query", "description", "prompt", "skill", NULL
};

/* A one-line "tool" event: "label: first line of text" (or just the label). */
static int add_tool_line(struct evlist *el, const char *label,
			 const char *text)
{
	struct sbuf sb = SBUF_INIT;
	int rc;

	add_first_line(&sb, label, INGEST_MAX_SPEAKER);
	if (text && *text) {
		sbuf_adds(&sb, ": ");
		add_first_line(&sb, text, INGEST_MAX_SUMMARY);
	}
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	rc = add_event(el, "tool", sbuf_str(&sb), sb.len);
	sbuf_release(&sb);
	return rc;
}

/* "Name: first line of its main argument", at most INGEST_MAX_SUMMARY bytes. */
static int add_tool_use(struct evlist *el, const struct json *b)
{
	const char *name = json_get_str(b, "name");
	const struct json *in = json_get(b, "input"), *m;
	const char *arg = NULL;
	size_t i;

	for (i = 0; tool_keys[i] && !arg; i++)
		arg = json_get_str(in, tool_keys[i]);
	if (!arg && in && in->type == JSON_OBJECT)
		for (m = in->child; m && !arg; m = m->next)
			arg = json_str(m);
	return add_tool_line(el, name && *name ? name : "tool", arg);
}

/* A failed tool call: "error: first line of its output". Other results: nothing. */
static int add_tool_error(struct evlist *el, const struct json *b)
{
	const struct json *err = json_get(b, "is_error");
	const struct json *c = json_get(b, "content"), *x;
	const char *first = NULL;
	int rc, was = el->tool_output;

	if (!err || err->type != JSON_TRUE)
		return CAIRN_OK;
	if (c && c->type == JSON_STRING)
		first = c->str;
	for (x = c && c->type == JSON_ARRAY ? c->child : NULL; x && !first;
	     x = x->next)
		first = json_get_str(x, "text");
	/* the tool's own output, whatever it says */
	el->tool_output = 1;
	rc = add_tool_line(el, "error", first);
	el->tool_output = was;
	return rc;
}

/* Is member key of j the literal true? */
static int is_true(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);

	return v && v->type == JSON_TRUE;
}

/* A Claude Code line: user and assistant turns, tool call summaries. */
static int parse_claude(const struct json *j, const char *type,
			const char *default_session, struct evlist *el,
			char tbuf[32], char *err, size_t errsize)
{
	const struct json *content, *b;
	struct sbuf text = SBUF_INIT;
	const char *s;
	int rc;

	/* summaries, system lines, snapshots, queue operations: not said by anyone */
	if (strcmp(type, "user") != 0 && strcmp(type, "assistant") != 0)
		return CAIRN_OK;
	/* meta lines (command caveats) and sidechains (subagents' own
	 * exchanges; the main thread keeps their call and result) */
	if (is_true(j, "isMeta") || is_true(j, "isSidechain"))
		return CAIRN_OK;
	content = json_get(json_get(j, "message"), "content");
	if (!content)
		return CAIRN_OK;
	s = json_get_str(j, "sessionId");
	el->session = s && *s ? s : default_session;
	rc = check_session(el->session, err, errsize);
	if (rc)
		return rc;
	rc = get_time(j, "timestamp", tbuf, &el->time, err, errsize);
	if (rc)
		return rc;
	rc = get_uid(j, "uuid", &el->uid, err, errsize);
	if (rc)
		return rc;
	/* a tool's result delivered as a user line: not the user's words */
	el->tool_output = json_get(j, "toolUseResult") != NULL;
	if (content->type == JSON_STRING)
		return add_event(el, type, content->str, content->len);
	if (content->type != JSON_ARRAY)
		return CAIRN_OK;
	/*
	 * Text blocks next to each other make one event; a tool call between
	 * them ends it, so the events keep the blocks' order. Thinking,
	 * images and successful tool output are left out.
	 */
	for (b = content->child; b && rc == CAIRN_OK; b = b->next) {
		const char *bt = json_get_str(b, "type");
		const char *t = json_get_str(b, "text");

		if (!bt)
			continue;
		if (strcmp(bt, "text") == 0 && t) {
			if (text.len)
				sbuf_adds(&text, "\n\n");
			sbuf_adds(&text, t);
			continue;
		}
		if (strcmp(bt, "tool_use") != 0 && strcmp(bt, "tool_result") != 0)
			continue;
		if (text.len) {
			rc = text.err ? text.err
				      : add_event(el, type, text.buf, text.len);
			sbuf_reset(&text);
			if (rc)
				break;
		}
		if (strcmp(bt, "tool_use") == 0)
			rc = add_tool_use(el, b);
		else
			rc = add_tool_error(el, b);
	}
	if (rc == CAIRN_OK && text.len)
		rc = text.err ? text.err : add_event(el, type, text.buf, text.len);
	sbuf_release(&text);
	return rc == CAIRN_TOOBIG ? CAIRN_NOMEM : rc;
}

/* 1 when a string anywhere in v holds a NUL byte ("\u0000"). */
static int has_nul(const struct json *v)
{
	const struct json *c;

	if (v->type == JSON_STRING)
		return memchr(v->str, '\0', v->len) != NULL;
	for (c = v->child; c; c = c->next)
		if (has_nul(c) || (c->key && memchr(c->key, '\0', c->keylen)))
			return 1;
	return 0;
}

/* Parse one JSONL line into events (ingest.h). */
int ingest_parse_line(const char *line, size_t len,
		      const char *default_session, struct ingest_event **out,
		      size_t *n, char *err, size_t errsize)
{
	struct json *j = NULL;
	struct evlist el;
	char tbuf[32], perr[160];
	const char *type;
	int rc;

	memset(&el, 0, sizeof(el));
	*out = NULL;
	*n = 0;
	if (errsize)
		err[0] = '\0';
	if (len > INGEST_MAX_LINE) {
		snprintf(err, errsize, "line is longer than %zu bytes",
			 INGEST_MAX_LINE);
		return CAIRN_TOOBIG;
	}
	rc = json_parse(line, len, &j, perr, sizeof(perr));
	if (rc == CAIRN_NOMEM)
		goto out;
	if (rc) {
		snprintf(err, errsize, "invalid JSON: %s", perr);
		rc = CAIRN_INVALID;
		goto out;
	}
	if (j->type != JSON_OBJECT) {
		snprintf(err, errsize, "not a JSON object");
		rc = CAIRN_INVALID;
		goto out;
	}
	if (has_nul(j)) { /* stored text ends at a NUL: refuse, never cut */
		snprintf(err, errsize, "a string holds a NUL byte (\\u0000)");
		rc = CAIRN_INVALID;
		goto out;
	}
	type = json_get_str(j, "type");
	if (json_get(j, "speaker") && json_get(j, "text")) {
		rc = parse_generic(j, default_session, &el, tbuf, err, errsize);
	} else if (type) {
		rc = parse_claude(j, type, default_session, &el, tbuf, err,
				  errsize);
	} else {
		snprintf(err, errsize, "not a transcript line (expected a "
			 "Claude Code line with \"type\", or \"speaker\" and "
			 "\"text\")");
		rc = CAIRN_INVALID;
	}
out:
	json_free(j);
	if (rc) {
		ingest_events_free(el.v, el.n);
		return rc;
	}
	*out = el.v;
	*n = el.n;
	return CAIRN_OK;
}

/* The id of an event (ingest.h). */
void ingest_event_id(const struct ingest_event *ev, long line, size_t ordinal,
		     char out[17])
{
	struct sbuf sb = SBUF_INIT;
	char hex[65];

	sbuf_adds(&sb, ev->session);
	sbuf_addc(&sb, '\n');
	/* the line's own id; else its time (a line moved in the file keeps
	 * its id); else, for a line with neither, its number */
	if (ev->uid)
		sbuf_adds(&sb, ev->uid);
	else if (ev->time)
		sbuf_addf(&sb, "T%s", ev->time);
	else
		sbuf_addf(&sb, "L%ld", line);
	sbuf_addf(&sb, "#%zu\n", ordinal);
	sbuf_adds(&sb, ev->speaker);
	sbuf_addc(&sb, '\n');
	sbuf_adds(&sb, ev->text);
	/* on out of memory the hash is of what was built; the write that
	 * follows fails for the same reason */
	util_sha256_hex(sbuf_str(&sb), sb.len, hex);
	sbuf_release(&sb);
	out[0] = 'e';
	memcpy(out + 1, hex, 15);
	out[16] = '\0';
}

/* ============================================================== reading */

/* Read one line of a transcript, bounded (ingest.h). */
int ingest_read_line(struct ingest_reader *rd, struct sbuf *sb, int *toolong)
{
	int got = 0;

	sbuf_reset(sb);
	*toolong = 0;
	for (;;) {
		const char *nl;
		size_t n;

		if (rd->pos == rd->len) {
			rd->len = fread(rd->buf, 1, sizeof(rd->buf), rd->f);
			rd->pos = 0;
			if (rd->len == 0)
				return ferror(rd->f) ? -1 : got;
		}
		got = 1;
		nl = memchr(rd->buf + rd->pos, '\n', rd->len - rd->pos);
		n = nl ? (size_t)(nl - (rd->buf + rd->pos)) : rd->len - rd->pos;
		if (!*toolong && sb->len + n <= INGEST_MAX_LINE)
			sbuf_add(sb, rd->buf + rd->pos, n);
		else
			*toolong = 1;
		rd->pos += n;
		rd->consumed += n;
		if (nl) {
			rd->pos++;
			rd->consumed++;
			return 1;
		}
	}
}

/* ============================================================== writing */

/* What one file's ingest needs at hand. */
struct ingest_ctx {
	struct cairn_db *db;       /* the store */
	const char *path;          /* the file as given (messages) */
	const char *src_path;      /* the file as stored in records */
	const char *session;       /* default session of generic lines */
	unsigned flags;            /* CAIRN_WRITE_REDACT or 0 */
	int include_tools;         /* keep tool-output events */
	cairn_ingest_report *rep;  /* counts */
	struct sbuf msgs;          /* "path:line: message" lines */
	size_t n_msgs;             /* problem lines seen (listed up to INGEST_MAX_REPORTED) */
};

static void report_line(struct ingest_ctx *cx, size_t line, const char *msg)
{
	if (++cx->n_msgs <= INGEST_MAX_REPORTED)
		sbuf_addf(&cx->msgs, "%s:%zu: %s\n", cx->path, line, msg);
}

/* The file as stored: relative to the workspace root when inside it. */
static int source_path(struct cairn_db *db, const char *path, char **out)
{
	char *abs = realpath(path, NULL), *root = NULL;
	size_t n;
	int rc = CAIRN_OK;

	*out = NULL;
	if (!abs)
		return store_error(db, CAIRN_IO, "cannot read '%s': %s", path,
				   strerror(errno));
	root = realpath(cairn_db_root(db), NULL);
	n = root ? strlen(root) : 0;
	if (root && strncmp(abs, root, n) == 0 && abs[n] == '/')
		*out = util_strdup(abs + n + 1);
	else
		*out = util_strdup(abs);
	if (!*out)
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
	free(root);
	free(abs);
	return rc;
}

/* The file name without its directory and last extension (a session id). */
static char *file_stem(const char *path)
{
	const char *b = strrchr(path, '/'), *dot;

	b = b ? b + 1 : path;
	dot = strrchr(b, '.');
	return util_strndup(b, dot && dot != b ? (size_t)(dot - b) : strlen(b));
}

static int savepoint(struct cairn_db *db, const char *sql)
{
	int src = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);

	return src == SQLITE_OK ? CAIRN_OK : store_sql_error(db, src, sql);
}

/*
 * Redact (with CAIRN_WRITE_REDACT) or check each event's whole text for
 * secrets before it is cut, so a cut never hides half a secret from the
 * filter. Returns CAIRN_OK, CAIRN_SECRET (msg says which) or CAIRN_NOMEM.
 */
static int prepare_texts(struct ingest_event *ev, size_t n, unsigned flags,
			 char *msg, size_t msgsize)
{
	struct secret_hit hit;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		size_t len = strlen(ev[i].text);

		if (ev[i].tool_output < 0)
			continue; /* left out: not stored, not checked */
		if (secret_scan(ev[i].text, len, &hit, 1) > 0) {
			char *masked;

			if (secret_unscanned(&hit))
				return CAIRN_NOMEM;
			if (!(flags & CAIRN_WRITE_REDACT)) {
				secret_describe(&hit, "the text", msg, msgsize);
				return CAIRN_SECRET;
			}
			masked = secret_redact(ev[i].text, len, NULL);
			if (!masked)
				return CAIRN_NOMEM;
			cairn_free(ev[i].text);
			ev[i].text = masked;
		}
		rc = ingest_text_cut(&ev[i].text);
		if (rc)
			return rc;
	}
	return CAIRN_OK;
}

/* Write one event; CAIRN_EXISTS when its id is already stored. */
static int write_event(struct ingest_ctx *cx, const struct ingest_event *ev,
		       size_t line, size_t ordinal)
{
	char id[17], title[INGEST_MAX_SPEAKER + 32];
	cairn_record r;

	ingest_event_id(ev, (long)line, ordinal, id);
	if (ev->time)
		snprintf(title, sizeof(title), "%s · %.10s %.5s", ev->speaker,
			 ev->time, ev->time + 11);
	else
		snprintf(title, sizeof(title), "%s", ev->speaker);
	memset(&r, 0, sizeof(r));
	r.id = id;
	r.kind = (char *)"event";
	r.status = (char *)"unverified";
	r.origin = (char *)"human";
	r.confidence = -1;
	r.title = title;
	r.body = ev->text;
	r.src_path = (char *)cx->src_path;
	r.src_line = (long)line;
	r.src_session = ev->session;
	r.src_tool = ev->speaker;
	r.time = ev->time;
	return cairn_record_write(cx->db, &r, cx->flags, NULL);
}

/*
 * Ingest one line: parse, check, write all its events inside a savepoint.
 * A bad or refused line is reported and CAIRN_OK returned; any other
 * failure is returned (the file's batch is then rolled back).
 */
static int ingest_line(struct ingest_ctx *cx, const char *line, size_t len,
		       size_t lineno)
{
	struct ingest_event *ev = NULL;
	char err[INGEST_MAX_MSG];
	size_t n = 0, i, added = 0, same = 0, left_out = 0;
	int rc, in_sp = 0;

	rc = ingest_parse_line(line, len, cx->session, &ev, &n, err,
			       sizeof(err));
	if (rc == CAIRN_INVALID || rc == CAIRN_TOOBIG) {
		report_line(cx, lineno, err);
		cx->rep->errors++;
		rc = CAIRN_OK;
		goto out;
	}
	if (rc) {
		rc = store_error(cx->db, rc, "out of memory");
		goto out;
	}
	/* tool output stays out of the store unless asked; the others keep
	 * their place in the line (their ids count it) */
	for (i = 0; i < n; i++)
		if (!cx->include_tools && ev[i].tool_output) {
			ev[i].tool_output = -1; /* left out */
			left_out++;
		}
	cx->rep->tools += left_out;
	if (n == left_out) {
		cx->rep->skipped++;
		goto out;
	}
	cx->rep->events += n - left_out;
	rc = prepare_texts(ev, n, cx->flags, err, sizeof(err));
	if (rc == CAIRN_SECRET) {
		report_line(cx, lineno, err);
		cx->rep->refused++;
		rc = CAIRN_OK;
		goto out;
	}
	if (rc) {
		rc = store_error(cx->db, rc, "out of memory");
		goto out;
	}
	rc = savepoint(cx->db, "SAVEPOINT ingest_line");
	if (rc)
		goto out;
	in_sp = 1;
	for (i = 0; i < n; i++) {
		if (ev[i].tool_output < 0)
			continue;
		rc = write_event(cx, &ev[i], lineno, i);
		if (rc == CAIRN_EXISTS) {
			same++;
			rc = CAIRN_OK;
			continue;
		}
		if (rc)
			break;
		added++;
	}
	if (rc == CAIRN_SECRET || rc == CAIRN_INVALID || rc == CAIRN_TOOBIG) {
		/* a secret in the session or speaker, a field the store
		 * refuses: this line only */
		report_line(cx, lineno, cairn_errmsg(cx->db));
		if (rc == CAIRN_SECRET)
			cx->rep->refused++;
		else
			cx->rep->errors++;
		rc = savepoint(cx->db, "ROLLBACK TO ingest_line");
		if (rc == CAIRN_OK)
			rc = savepoint(cx->db, "RELEASE ingest_line");
		in_sp = 0;
		goto out;
	}
	if (rc)
		goto out;
	rc = savepoint(cx->db, "RELEASE ingest_line");
	in_sp = 0;
	if (rc)
		goto out;
	cx->rep->added += added;
	cx->rep->unchanged += same;
out:
	if (in_sp) {
		/* a fatal error: the whole batch is rolled back by the caller */
		sqlite3_exec(cx->db->sql, "ROLLBACK TO ingest_line", NULL, NULL,
			     NULL);
		sqlite3_exec(cx->db->sql, "RELEASE ingest_line", NULL, NULL,
			     NULL);
	}
	ingest_events_free(ev, n);
	return rc;
}

/* Ingest one transcript file (ingest.h). */
int cairn_ingest_file(cairn_db *db, const char *path,
		      const cairn_ingest_opts *opts, cairn_ingest_report *rep)
{
	struct ingest_ctx cx;
	struct ingest_reader *rd = NULL;
	struct sbuf line = SBUF_INIT;
	char *src_path = NULL, *stem = NULL, msg[STORE_ERRMSG];
	struct stat st;
	size_t total = 0, lineno = 0, next_progress = INGEST_PROGRESS_STEP;
	int rc = CAIRN_OK, in_batch = 0, toolong, got;
	FILE *f = NULL;

	memset(rep, 0, sizeof(*rep));
	memset(&cx, 0, sizeof(cx));
	if (!path || !*path)
		return store_error(db, CAIRN_INVALID, "no file given");
	if (db->in_batch)
		return store_error(db, CAIRN_INVALID, "ingest runs its own "
				   "batch: commit the open one first");
	f = fopen(path, "rb");
	if (!f) {
		rc = store_error(db, CAIRN_IO, "cannot read '%s': %s", path,
				 strerror(errno));
		goto out;
	}
	if (fstat(fileno(f), &st) != 0) {
		rc = store_error(db, CAIRN_IO, "cannot read '%s': %s", path,
				 strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = store_error(db, CAIRN_IO, "cannot read '%s': it is a "
				 "directory", path);
		goto out;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0)
		total = (size_t)st.st_size;
	rc = source_path(db, path, &src_path);
	if (rc)
		goto out;
	stem = file_stem(path);
	rd = util_calloc(1, sizeof(*rd));
	if (!stem || !rd) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	rd->f = f;
	cx.db = db;
	cx.path = path;
	cx.src_path = src_path;
	cx.session = opts && opts->session && *opts->session ? opts->session
							      : stem;
	cx.flags = opts ? opts->flags & CAIRN_WRITE_REDACT : 0;
#ifndef CAIRN_MUTATE_NO_TOOL_FILTER
	cx.include_tools = opts ? opts->include_tools : 0;
#else
	cx.include_tools = 1; /* tests/mutate: tool output always ingested */
#endif
	cx.rep = rep;
	rc = cairn_begin(db);
	if (rc)
		goto out;
	in_batch = 1;
	for (;;) {
		const char *s;
		size_t len;

		got = ingest_read_line(rd, &line, &toolong);
		if (got < 0) {
			rc = store_error(db, CAIRN_IO, "cannot read '%s': %s",
					 path, strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		lineno++;
		if (opts && opts->progress && rd->consumed >= next_progress) {
			opts->progress(opts->user, rd->consumed, total);
			next_progress = rd->consumed + INGEST_PROGRESS_STEP;
		}
		if (line.err) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		if (toolong) {
			char m[96];

			snprintf(m, sizeof(m), "line is longer than %zu bytes "
				 "(skipped)", INGEST_MAX_LINE);
			report_line(&cx, lineno, m);
			rep->lines++;
			rep->errors++;
			continue;
		}
		s = sbuf_str(&line);
		len = line.len;
		/* a UTF-8 byte order mark before the first line */
		if (lineno == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
			s += 3;
			len -= 3;
		}
		len = trim(s, len, &s);
		if (len == 0)
			continue;
		rep->lines++;
		rc = ingest_line(&cx, s, len, lineno);
		if (rc)
			goto out;
	}
	if (opts && opts->progress)
		opts->progress(opts->user, rd->consumed, total);
	if (cx.n_msgs > INGEST_MAX_REPORTED)
		sbuf_addf(&cx.msgs, "%s: %zu more problem lines not listed\n",
			  path, cx.n_msgs - INGEST_MAX_REPORTED);
	if (cx.msgs.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	in_batch = 0;
	rc = cairn_commit(db);
out:
	if (in_batch) {
		snprintf(msg, sizeof(msg), "%s", cairn_errmsg(db));
		cairn_rollback(db);
		store_error(db, rc, "%s", msg);
	}
	if (rc) {
		/* nothing of the file is written */
		rep->added = 0;
		rep->unchanged = 0;
	}
	if (cx.msgs.len && !cx.msgs.err)
		rep->messages = sbuf_detach(&cx.msgs, NULL);
	sbuf_release(&cx.msgs);
	sbuf_release(&line);
	cairn_free(rd);
	cairn_free(stem);
	cairn_free(src_path);
	if (f)
		fclose(f);
	return rc;
}

/* Free a report (ingest.h). */
void cairn_ingest_report_release(cairn_ingest_report *rep)
{
	if (!rep)
		return;
	cairn_free(rep->messages);
	memset(rep, 0, sizeof(*rep));
}

/* ============================================================= sessions */

/*
 * A session's events numbered in their original order: by time (normalised
 * UTC, so text order is time order; events without a time first), then
 * source path, line, and the order they were stored in (rid), which keeps
 * the order of several events from one line.
 */
#define SESSION_CTE                                                         \
	"WITH s AS (SELECT rid, row_number() OVER (ORDER BY "               \
	"coalesce(time, ''), coalesce(src_path, ''), coalesce(src_line, 0), " \
	"rid) AS pos FROM main.records WHERE kind = 'event' AND "           \
	"src_session = ?1 AND status NOT IN ('retired', 'rejected')) "

/* Resolve a session id or unique prefix to the stored id (caller frees). */
static int resolve_session(struct cairn_db *db, const char *session,
			   char **out)
{
	struct sbuf pat = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	const char *p;
	int src, rc = CAIRN_OK, nmatch = 0;

	*out = NULL;
	src = sqlite3_prepare_v2(db->sql,
				 "SELECT 1 FROM main.records WHERE kind = "
				 "'event' AND src_session = ?1 LIMIT 1",
				 -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading a session");
	sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	sqlite3_finalize(st);
	st = NULL;
	if (src == SQLITE_ROW) {
		*out = util_strdup(session);
		return *out ? CAIRN_OK
			    : store_error(db, CAIRN_NOMEM, "out of memory");
	}
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "reading a session");
	if (strlen(session) < 4)
		return store_error(db, CAIRN_NOTFOUND,
				   "no events of session '%s'", session);
	/* a unique prefix, as for record ids; LIKE's wildcards escaped */
	for (p = session; *p; p++) {
		if (*p == '%' || *p == '_' || *p == '\\')
			sbuf_addc(&pat, '\\');
		sbuf_addc(&pat, *p);
	}
	sbuf_addc(&pat, '%');
	if (pat.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	src = sqlite3_prepare_v2(db->sql,
				 "SELECT DISTINCT src_session FROM main.records "
				 "WHERE kind = 'event' AND src_session LIKE ?1 "
				 "ESCAPE '\\' LIMIT 2",
				 -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "reading a session");
		goto out;
	}
	sqlite3_bind_text(st, 1, pat.buf, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		/* LIKE folds ASCII case; a prefix must match exactly */
		if (!t || strncmp(t, session, strlen(session)) != 0)
			continue;
		nmatch++;
		if (!*out)
			*out = util_strdup(t);
	}
	if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "reading a session");
		goto out;
	}
	if (nmatch == 1 && !*out)
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
	else if (nmatch > 1)
		rc = store_error(db, CAIRN_INVALID,
				 "session prefix '%s' is ambiguous", session);
	else if (nmatch == 0)
		rc = store_error(db, CAIRN_NOTFOUND,
				 "no events of session '%s'", session);
out:
	if (rc) {
		cairn_free(*out);
		*out = NULL;
	}
	sqlite3_finalize(st);
	sbuf_release(&pat);
	return rc;
}

/* One integer from a statement with ?1 = session, ?2 = text (or unbound). */
static int query_int(struct cairn_db *db, const char *sql, const char *session,
		     const char *arg, long long *out)
{
	sqlite3_stmt *st = NULL;
	int src;

	*out = 0;
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading a session");
	sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
	if (arg)
		sqlite3_bind_text(st, 2, arg, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (src == SQLITE_DONE)
		return CAIRN_NOTFOUND;
	if (src != SQLITE_ROW)
		return store_sql_error(db, src, "reading a session");
	return CAIRN_OK;
}

/* The events of a session in order (ingest.h). */
int cairn_session_events(cairn_db *db, const char *session,
			 const char *around_id, int n, cairn_record ***out,
			 size_t *count)
{
	cairn_record *center = NULL, **v = NULL;
	char *sid = NULL;
	sqlite3_stmt *st = NULL;
	long long lo = 1, hi = LLONG_MAX, pos = 0, total = 0;
	size_t nv = 0, cap = 0;
	int rc, src;

	*out = NULL;
	*count = 0;
	if (n < 0)
		return store_error(db, CAIRN_INVALID, "a negative count of "
				   "events");
	if (around_id) {
		rc = cairn_record_get(db, around_id, &center);
		if (rc)
			goto out;
		if (strcmp(center->kind, "event") != 0 || !center->src_session) {
			rc = store_error(db, CAIRN_INVALID, "record '%s' is "
					 "not an event of a session",
					 center->id);
			goto out;
		}
		if (session && *session &&
		    strncmp(center->src_session, session, strlen(session))) {
			rc = store_error(db, CAIRN_INVALID, "record '%s' is "
					 "not an event of session '%s'",
					 center->id, session);
			goto out;
		}
		sid = util_strdup(center->src_session);
		if (!sid) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		rc = query_int(db, SESSION_CTE "SELECT s.pos FROM s JOIN "
			       "main.records r ON r.rid = s.rid WHERE r.id = ?2",
			       sid, center->id, &pos);
		if (rc == CAIRN_NOTFOUND)
			rc = store_error(db, CAIRN_NOTFOUND, "event '%s' is %s",
					 center->id, center->status);
		if (rc)
			goto out;
		lo = pos - n;
		hi = pos + n;
	} else {
		if (!session || !*session) {
			rc = store_error(db, CAIRN_INVALID, "no session given");
			goto out;
		}
		rc = resolve_session(db, session, &sid);
		if (rc)
			goto out;
		if (n > 0) {
			rc = query_int(db, SESSION_CTE "SELECT count(*) FROM s",
				       sid, NULL, &total);
			if (rc)
				goto out;
			lo = total - n + 1;
		}
	}
	src = sqlite3_prepare_v2(db->sql,
				 SESSION_CTE "SELECT " STORE_COLS_R " FROM s "
				 "JOIN main.records r ON r.rid = s.rid WHERE "
				 "s.pos BETWEEN ?2 AND ?3 ORDER BY s.pos",
				 -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "reading a session");
		goto out;
	}
	sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, lo);
	sqlite3_bind_int64(st, 3, hi);
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (nv == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			cairn_record **nvv = util_realloc(v, ncap * sizeof(*nvv));

			if (!nvv) {
				rc = store_error(db, CAIRN_NOMEM,
						 "out of memory");
				goto out;
			}
			v = nvv;
			cap = ncap;
		}
		v[nv] = store_row_record(st, 0);
		if (!v[nv]) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		nv++;
	}
	if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "reading a session");
		goto out;
	}
	*out = v;
	*count = nv;
	v = NULL;
	nv = 0;
	rc = CAIRN_OK;
out:
	sqlite3_finalize(st);
	cairn_record_list_free(v, nv);
	cairn_record_free(center);
	cairn_free(sid);
	return rc;
}
