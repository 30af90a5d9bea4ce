/*
 * hook.c -- what the agent hook injects (SPEC 5.4): the block of past
 * records for a prompt, and the always-on drawer for a session start.
 *
 * Layer: on recall and store. The process side (stdin, deadline, log,
 * exit codes) is cli_hook.c; this file only renders text, so that
 * `cairn eval` can later render exactly what the hook would inject.
 *
 * The block says these are past project records, not the conversation;
 * each entry carries date · kind · source · relevance and the first lines
 * of the real body (never keywords), and the whole block stays within a
 * character budget: entries that do not fit are left out whole.
 *
 * Must never: inject records the caller's default filters exclude, cut a
 * UTF-8 sequence, or claim a way to read records that does not exist.
 */
#include <stdio.h>
#include <string.h>

#include "hook.h"
#include "json.h"
#include "store.h"

#define HOOK_LINES 3       /* body lines per entry */
#define HOOK_LINE_CHARS 200 /* characters per body line */
#define HOOK_DRAWER_MAX 20 /* rules + capabilities at session start */

/* Characters (code points) in s[0..n). */
static size_t u8chars(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* Byte length of at most `chars` characters of s (NUL-terminated). */
static size_t u8prefix(const char *s, size_t chars)
{
	size_t i = 0, c = 0;

	while (s[i] && s[i] != '\n') {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (c == chars)
				break;
			c++;
		}
		i++;
	}
	return i;
}

/* One entry: header line and the first lines of the body. */
static void render_entry(struct sbuf *e, size_t n, const cairn_record *r,
			 double relevance, int show_relevance)
{
	const char *date = r->time ? r->time : r->updated;
	const char *b = r->body;
	int lines = 0;

	sbuf_addf(e, "[%zu] %.10s · %s · ", n, date, r->kind);
	if (r->src_path) {
		sbuf_adds(e, r->src_path);
		if (r->src_line > 0)
			sbuf_addf(e, ":%ld", r->src_line);
	} else if (r->src_session) {
		sbuf_addf(e, "session %s", r->src_session);
	} else {
		sbuf_addf(e, "written by %s", r->origin);
	}
	if (show_relevance)
		sbuf_addf(e, " · relevance %.2f", relevance);
	if (strcmp(r->status, "accepted") != 0)
		sbuf_addf(e, " · %s", r->status);
	sbuf_addf(e, " · id %s\n", r->id);
	if (*r->title)
		sbuf_addf(e, "    %.*s\n", (int)u8prefix(r->title, HOOK_LINE_CHARS),
			  r->title);
	while (*b && lines < HOOK_LINES) {
		size_t len = strcspn(b, "\n"), keep;

		if (len > 0 && strspn(b, " \t\r") < len) {
			keep = u8prefix(b, HOOK_LINE_CHARS);
			sbuf_addf(e, "    %.*s%s\n", (int)keep, b,
				  keep < len ? " …" : "");
			lines++;
		}
		b += len;
		if (*b == '\n')
			b++;
	}
}

/* Append entry e to out if the total stays within budget characters. */
static int fits(struct sbuf *out, const struct sbuf *e, size_t budget,
		size_t footer)
{
	if (u8chars(sbuf_str(out), out->len) + u8chars(sbuf_str(e), e->len) +
		    footer >
	    budget)
		return 0;
	sbuf_add(out, e->buf, e->len);
	return 1;
}

static const char read_hint[] =
	"Read a record in full with `cairn get ID`.\n";

int hook_prompt_block(cairn_db *db, const char *prompt,
		      const struct hook_opts *o, struct sbuf *out,
		      struct hook_result *res)
{
	cairn_recall_opts ro;
	cairn_result *rr = NULL;
	struct sbuf e = SBUF_INIT;
	size_t i, footer = u8chars(read_hint, strlen(read_hint));
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&ro, 0, sizeof(ro));
	ro.k = o->k > 0 ? o->k : HOOK_DEFAULT_K;
	rc = cairn_recall(db, prompt, &ro, &rr);
	if (rc)
		return rc;
	snprintf(res->receipt, sizeof(res->receipt), "%s", rr->receipt_id);
	res->found = rr->n;
	if (rr->n == 0)
		goto out; /* nothing relevant: inject nothing */
	sbuf_adds(out, "Past project records from cairn's memory, recalled for "
		       "this prompt. They are not part of the current "
		       "conversation and may be out of date; check before "
		       "relying on them.\n");
	for (i = 0; i < rr->n; i++) {
		const cairn_hit *h = &rr->hits[i];

		sbuf_reset(&e);
		render_entry(&e, res->injected + 1, h->rec, h->relevance, 1);
		if (e.err) {
			rc = e.err;
			goto out;
		}
		if (!fits(out, &e, o->budget, footer))
			break;
		res->injected++;
	}
	if (res->injected == 0) {
		sbuf_reset(out); /* not even one entry fits: say nothing */
		goto out;
	}
	sbuf_adds(out, read_hint);
	if (out->err)
		rc = out->err;
out:
	sbuf_release(&e);
	cairn_result_free(rr);
	return rc;
}

int hook_session_block(cairn_db *db, const struct hook_opts *o,
		       struct sbuf *out, struct hook_result *res)
{
	cairn_filter f;
	cairn_record **v = NULL, **cand = NULL;
	size_t n = 0, nc = 0, i;
	struct sbuf e = SBUF_INIT;
	size_t footer = u8chars(read_hint, strlen(read_hint));
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&f, 0, sizeof(f));
	f.kinds = "rule,capability";
	f.limit = HOOK_DRAWER_MAX;
	rc = cairn_record_list(db, &f, &v, &n);
	if (rc)
		goto out;
	memset(&f, 0, sizeof(f));
	f.statuses = "candidate";
	rc = cairn_record_list(db, &f, &cand, &nc);
	if (rc)
		goto out;
	res->found = n;
	if (n == 0 && nc == 0)
		goto out;
	if (n > 0)
		sbuf_adds(out, "Standing rules and capabilities of this project "
			       "from cairn's memory (past records, not part "
			       "of the current conversation). Check a "
			       "capability here before concluding that "
			       "something cannot be done from this "
			       "machine.\n");
	for (i = 0; i < n; i++) {
		sbuf_reset(&e);
		render_entry(&e, res->injected + 1, v[i], 0, 0);
		if (e.err) {
			rc = e.err;
			goto out;
		}
		if (!fits(out, &e, o->budget, footer + 80))
			break;
		res->injected++;
	}
	if (nc > 0)
		sbuf_addf(out, "%zu candidate record%s wait%s for a human to "
			  "approve or reject (`cairn candidates`).\n",
			  nc, nc == 1 ? "" : "s", nc == 1 ? "s" : "");
	if (res->injected > 0)
		sbuf_adds(out, read_hint);
	if (out->err)
		rc = out->err;
out:
	sbuf_release(&e);
	cairn_record_list_free(v, n);
	cairn_record_list_free(cand, nc);
	return rc;
}

void hook_output_json(struct sbuf *sb, const char *event, const char *text,
		      size_t len)
{
	sbuf_adds(sb, "{\"hookSpecificOutput\":{\"hookEventName\":");
	json_add_strz(sb, event);
	sbuf_adds(sb, ",\"additionalContext\":");
	json_add_str(sb, text, len);
	sbuf_adds(sb, "}}\n");
}
