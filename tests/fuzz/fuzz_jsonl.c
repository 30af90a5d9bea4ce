/*
 * fuzz_jsonl.c -- libFuzzer target for the JSON Lines readers: `cairn
 * import` lines (src/export.c, cairn_import_line) and transcript lines
 * (src/ingest/ingest.c, ingest_parse_line, ingest_text_cut, ingest_event_id,
 * ingest_time_norm).
 *
 * The first byte of the input picks the reader (bit 0: import or
 * transcript; bit 1: --replace / a default session); the rest is split into
 * lines, fed in order as the CLI does: import lines go into one batch over
 * a store made once at start-up (a few records), and a failing line rolls
 * the batch back, as `cairn import` does; the batch is rolled back at the
 * end so inputs do not pile up.
 *
 * Checks, import: a documented return code; an error leaves a message; a
 * line imported with an "id" can be read back under that id with the
 * line's kind, and its body is valid UTF-8.
 * Transcript: CAIRN_OK, CAIRN_INVALID or CAIRN_TOOBIG (with a message and
 * no events) or out of memory; every event has a session, a speaker and a
 * valid UTF-8 text; a time is NULL or normalised ("YYYY-MM-DDTHH:MM:SS.mmmZ",
 * which ingest_time_norm maps to itself); a cut text is valid UTF-8 of at
 * most INGEST_MAX_CHARS code points plus the " […]" mark; an event id is
 * "e" + 15 hex digits.
 *
 *   make fuzz FUZZ_TARGETS=jsonl   (or build/san/replay_jsonl tests/fuzz/corpus/jsonl)
 */
#define _XOPEN_SOURCE 700
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest.h"
#include "internal.h"
#include "json.h"

#define FUZZ_STORE_NAME "jsonl"
#include "fuzz_store.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const lines[] = {
		"{\"id\":\"r00000000000001\",\"kind\":\"fact\",\"key\":"
		"\"deploy:staging\",\"body\":\"Deploy with make deploy.\"}",
		"{\"id\":\"r00000000000002\",\"kind\":\"decision\",\"body\":"
		"\"We chose PostgreSQL.\",\"status\":\"accepted\"}",
	};
	size_t i;
	int sk;

	(void)argc;
	(void)argv;
	fuzz_store_open(NULL, 0);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (cairn_import_line(db, lines[i], strlen(lines[i]), 0, 0,
				      &sk) != CAIRN_OK)
			abort();
	return 0;
}

static void import_one(const char *line, size_t len, int replace)
{
	struct json *j = NULL;
	char e[64];
	const char *id, *kind;
	cairn_record *rec = NULL;
	int sk = -1, rc;

	rc = cairn_import_line(db, line, len, 0, replace, &sk);
	if (rc == CAIRN_NOMEM)
		return;
	if (rc != CAIRN_OK) {
		if (rc != CAIRN_INVALID && rc != CAIRN_TOOBIG &&
		    rc != CAIRN_SECRET && rc != CAIRN_EXISTS &&
		    rc != CAIRN_IO && rc != CAIRN_NOTFOUND) {
			fprintf(stderr, "import: unexpected %d: %s\n", rc,
				cairn_errmsg(db));
			abort();
		}
		if (!*cairn_errmsg(db))
			abort();
		/* as `cairn import`: the transaction holding the line is dropped */
		cairn_rollback(db);
		if (cairn_begin(db) != CAIRN_OK)
			abort();
		return;
	}
	if (sk != 0 && sk != 1)
		abort();
	if (sk || json_parse(line, len, &j, e, sizeof(e)) != CAIRN_OK)
		goto out;
	id = json_get_str(j, "id");
	kind = json_get_str(j, "kind");
	if (!id || strlen(id) != json_get(j, "id")->len ||
	    util_streq(json_get_str(j, "scope"), "global"))
		goto out;
	rc = cairn_record_get(db, id, &rec);
	if (rc == CAIRN_NOMEM)
		goto out;
	if (rc != CAIRN_OK || !util_streq(rec->id, id) ||
	    !util_streq(rec->kind, kind) || !rec->body ||
	    util_utf8_invalid_at(rec->body, strlen(rec->body)) >= 0) {
		fprintf(stderr, "imported %s not read back (%d): %s\n", id, rc,
			cairn_errmsg(db));
		abort();
	}
out:
	cairn_record_free(rec);
	json_free(j);
}

static int time_ok(const char *t)
{
	static const char form[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	char again[32];
	size_t i;

	if (strlen(t) != sizeof(form) - 1)
		return 0;
	for (i = 0; i < sizeof(form) - 1; i++)
		if (form[i] == 'd' ? (t[i] < '0' || t[i] > '9')
				   : t[i] != form[i])
			return 0;
	return ingest_time_norm(t, again) == 0 && strcmp(again, t) == 0;
}

static size_t code_points(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

static void transcript_one(const char *line, size_t len, long lineno,
			   const char *session)
{
	struct ingest_event *ev = NULL;
	char err[256], id[17], tn[32], *t;
	size_t n = 99, i, k;
	int rc;

	err[0] = '\0';
	rc = ingest_parse_line(line, len, session, &ev, &n, err, sizeof(err));
	if (rc == CAIRN_NOMEM)
		return;
	if (rc == CAIRN_INVALID || rc == CAIRN_TOOBIG) {
		if (ev || !err[0])
			abort();
		return;
	}
	if (rc != CAIRN_OK || (n && !ev))
		abort();
	for (i = 0; i < n; i++) {
		struct ingest_event *e = &ev[i];

		if (!e->session || !e->speaker || !e->text ||
		    util_utf8_invalid_at(e->text, strlen(e->text)) >= 0 ||
		    util_utf8_invalid_at(e->speaker, strlen(e->speaker)) >= 0 ||
		    (e->time && !time_ok(e->time))) {
			fprintf(stderr, "bad event %zu of line %ld\n", i,
				lineno);
			abort();
		}
		if (ingest_text_cut(&e->text) != CAIRN_OK)
			continue;
		if (util_utf8_invalid_at(e->text, strlen(e->text)) >= 0 ||
		    code_points(e->text) > INGEST_MAX_CHARS + 4)
			abort();
		ingest_event_id(e, lineno, i, id);
		if (id[0] != 'e' || strlen(id) != 16)
			abort();
		for (k = 1; k < 16; k++)
			if (!strchr("0123456789abcdef", id[k]))
				abort();
	}
	ingest_events_free(ev, n);
	/* the line as a time: never more than the normal form */
	if (len < 64) {
		t = util_strndup(line, len);
		if (t && ingest_time_norm(t, tn) == 0 && !time_ok(tn))
			abort();
		cairn_free(t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p, *end;
	int mode;
	long lineno = 0;

	if (!db)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 1)
		return 0;
	mode = data[0];
	p = (const char *)data + 1;
	end = (const char *)data + size;
	if (!(mode & 1) && cairn_begin(db) != CAIRN_OK)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);

		lineno++;
		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (len > 0) {
			if (mode & 1)
				transcript_one(p, len, lineno,
					       (mode & 2) ? "sess" : NULL);
			else
				import_one(p, len, (mode & 2) != 0);
		}
		p = nl ? nl + 1 : end;
	}
	if (!(mode & 1))
		cairn_rollback(db);
	return 0;
}
