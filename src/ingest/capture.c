/*
 * capture.c -- auto-capture (seed 003): success events in a
 * session transcript become candidate records with proof.
 *
 * Layer: capture sits on ingest (the bounded line reader, times), json,
 * secret and the store (cairn_record_write and a key lookup on db->sql);
 * reflect.c supplies the statement rules; cli_capture.c and the hook sit on
 * it. capture_class.c (capture_int.h) tells what a successful command
 * proves.
 *
 * Holds: the transcript walker (Claude Code tool_use/tool_result pairs,
 * generic {"time","cmd","exit","output"} lines, user and assistant texts for
 * reflect.c), the candidates it collects (a build or test procedure with the
 * set-up steps before it), and the writer that merges by key.
 *
 * Why one candidate per key: a success seen again (later in the session,
 * in a later session) is more proof of the same fact, not a new fact. A
 * pending candidate gains proof (at most CAPTURE_MAX_PROOFS entries); an
 * accepted, rejected or retired key is left alone ("known"): capture never
 * re-proposes what a human already decided (the store would otherwise make a
 * new pending candidate on every run).
 *
 * Must never: store a secret (command, output and quotes are redacted
 * before anything else reads them; keys are built from the redacted text
 * and keep only [a-z0-9._@/-]), treat a failed command (error flag,
 * non-zero exit, failure text in the output, a part before `||`) as a
 * success, hold more than one line (INGEST_MAX_LINE) plus bounded tables in
 * memory, or stop on a malformed line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "capture.h"
#include "capture_int.h"
#include "ingest.h"
#include "internal.h"
#include "json.h"
#include "secret.h"
#include "store.h"

#define SETUP_RING 6         /* set-up steps remembered for a procedure */
#define DEADLINE_EVERY 32    /* lines between deadline checks */

/* ============================================================ candidates */

struct cand {
	char kind[16];
	char *key, *title, *body, *origin, *session, *time;
	struct sbuf proof;
	size_t nproofs;
	long line;
};

struct setup_step {
	char session[128];
	char cmd[256];
};

/* State of one transcript's walk. */
struct walk {
	const struct capture_opts *o;
	struct capture_stats *st;
	const char *path;
	const char *default_session;
	struct cand *c;          /* candidates, by key */
	size_t nc;
	struct { char id[96]; char *cmd; long line; } pending[CAPTURE_MAX_PENDING];
	size_t npending, pend_next;
	struct setup_step setup[SETUP_RING];
	size_t nsetup;
	char last_session[INGEST_MAX_SESSION + 1]; /* for --llm-cmd candidates */
	int nomem;
};

static void saw_session(struct walk *wk, const char *session)
{
	if (session)
		snprintf(wk->last_session, sizeof(wk->last_session), "%s", session);
}

static void cand_free(struct cand *c)
{
	cairn_free(c->key);
	cairn_free(c->title);
	cairn_free(c->body);
	cairn_free(c->origin);
	cairn_free(c->session);
	cairn_free(c->time);
	sbuf_release(&c->proof);
}

/*
 * A key the secret filter would flag (a registry host after "auth:" reads
 * like a token assignment) would be stored masked, and the next run would
 * not find it: such a key keeps its first two parts and a hash of itself.
 */
static void safe_key(const char *key, char *out, size_t size)
{
	struct secret_hit hit;
	char hex[65];
	const char *c1, *c2;

	if (secret_scan(key, strlen(key), &hit, 1) == 0) {
		snprintf(out, size, "%s", key);
		return;
	}
	util_sha256_hex(key, strlen(key), hex);
	c1 = strchr(key, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	snprintf(out, size, "%.*s:h%.12s", c2 ? (int)(c2 - key) : 0, key, hex);
	if (!c2)
		snprintf(out, size, "key:h%.12s", hex);
}

/* Add (or merge by key) a candidate; proof_entry is one proof entry. */
static void add_cand(struct walk *wk, const char *kind, const char *key_in,
		     const char *title, const char *body, const char *origin,
		     const char *session, const char *time, long line,
		     const char *proof_entry)
{
	struct cand *c;
	size_t i;
	char key[256];

	safe_key(key_in, key, sizeof(key));

	for (i = 0; i < wk->nc; i++)
		if (!strcmp(wk->c[i].key, key))
			break;
	if (i < wk->nc) {
		c = &wk->c[i];
		if (c->nproofs < CAPTURE_MAX_PROOFS) {
			sbuf_adds(&c->proof, "\n\n");
			sbuf_adds(&c->proof, proof_entry);
			c->nproofs++;
		}
		return;
	}
	if (wk->nc == CAPTURE_MAX_CANDIDATES) {
		wk->st->dropped++;
		return;
	}
	if (!wk->c) {
		wk->c = util_calloc(CAPTURE_MAX_CANDIDATES, sizeof(*wk->c));
		if (!wk->c) {
			wk->nomem = 1;
			return;
		}
	}
	c = &wk->c[wk->nc];
	memset(c, 0, sizeof(*c));
	snprintf(c->kind, sizeof(c->kind), "%s", kind);
	c->key = util_strdup(key);
	c->title = util_strdup(title);
	c->body = util_strdup(body);
	c->origin = util_strdup(origin);
	c->session = session ? util_strdup(session) : NULL;
	c->time = time ? util_strdup(time) : NULL;
	c->line = line;
	sbuf_adds(&c->proof, proof_entry);
	c->nproofs = 1;
	if (!c->key || !c->title || !c->body || !c->origin ||
	    (session && !c->session) || (time && !c->time) || c->proof.err) {
		cand_free(c);
		wk->nomem = 1;
		return;
	}
	wk->nc++;
	wk->st->proposed++;
}

/*
 * A capture key's command shape: the key without its last component
 * ("capability:db:postgres:db1.internal" -> "capability:db:postgres"),
 * into out; 0 when the key has fewer than three components (nothing
 * varies but the kind).
 */
static int key_shape(const char *key, char *out, size_t size)
{
	const char *last = strrchr(key, ':'), *first = strchr(key, ':');

	if (!last || last == first || (size_t)(last - key) >= size)
		return 0;
	memcpy(out, key, (size_t)(last - key));
	out[last - key] = '\0';
	return 1;
}

/* The program of a capture candidate's first proof ("$ psql -h ..." ->
 * "psql") into out; "" when there is none. */
static void cand_program(const struct cand *c, char *out, size_t size)
{
	const char *p = sbuf_str(&c->proof);
	size_t n;

	out[0] = '\0';
	if (strncmp(p, "$ ", 2) != 0)
		return;
	p += 2;
	n = strcspn(p, " \t\n");
	if (n < size) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
}

/* Do c and d have the same command shape: capture, kind, session, the
 * key's shape (shape, of c) and the program? */
static int same_shape(const struct cand *c, const struct cand *d,
		      const char *shape, const char *prog)
{
	char other[256], dprog[64];

	if (strcmp(d->origin, "capture") != 0 || strcmp(d->kind, c->kind) != 0 ||
	    !util_streq(d->session, c->session) ||
	    !key_shape(d->key, other, sizeof(other)) || strcmp(other, shape) != 0)
		return 0;
	cand_program(d, dprog, sizeof(dprog));
	return strcmp(dprog, prog) == 0;
}

/*
 * One session's commands of one shape, e.g. a psql per host, are one
 * fact for a human to approve, not one candidate each (a
 * SessionEnd gave 110 candidates, one per host). CAPTURE_GROUP_MIN or more
 * capture candidates of a session with the same kind, key shape and
 * program (same_shape) become one
 * candidate, key SHAPE:group, listing what varied (the last key component)
 * and keeping the first proofs; then at most CAPTURE_MAX_PER_SESSION
 * capture candidates per session are kept (st->dropped counts the rest).
 * Statement rules and reflection (origin reflection) are left as they are.
 */
static void group_cands(struct walk *wk)
{
	size_t i, j, k, n;

#ifdef CAIRN_MUTATE_NO_CAPTURE_GROUP
	return; /* tests/mutate: every candidate kept, no cap */
#endif

	for (i = 0; i < wk->nc && !wk->nomem; i++) {
		struct cand *c = &wk->c[i];
		struct sbuf names = SBUF_INIT, title = SBUF_INIT, body = SBUF_INIT;
		char shape[256], prog[64];
		char *key;

		if (strcmp(c->origin, "capture") != 0 ||
		    !key_shape(c->key, shape, sizeof(shape)) ||
		    strstr(c->key, ":group") == c->key + strlen(shape))
			continue;
		cand_program(c, prog, sizeof(prog));
		for (n = 0, j = i; j < wk->nc; j++)
			n += same_shape(c, &wk->c[j], shape, prog);
		if (n < CAPTURE_GROUP_MIN)
			continue;
		/* fold the others into c, in order */
		for (k = 0, j = i; j < wk->nc; j++) {
			struct cand *d = &wk->c[j];

			if (!same_shape(c, d, shape, prog))
				continue;
			if (k < CAPTURE_GROUP_LIST)
				sbuf_addf(&names, "%s%s", k ? ", " : "",
					  d->key + strlen(shape) + 1);
			if (d != c && c->nproofs < CAPTURE_MAX_PROOFS) {
				sbuf_adds(&c->proof, "\n\n");
				sbuf_adds(&c->proof, sbuf_str(&d->proof));
				c->nproofs++;
			}
			k++;
			if (d != c) {
				cand_free(d);
				memset(d, 0, sizeof(*d)); /* key NULL: removed below */
			}
		}
		if (k > CAPTURE_GROUP_LIST)
			sbuf_addf(&names, " and %zu more", k - CAPTURE_GROUP_LIST);
		sbuf_addf(&title, "%s, and %zu more of the same command shape",
			  c->title, k - 1);
		sbuf_addf(&body, "%zu commands of the same shape succeeded in "
			  "one session, for: %s. The first:\n\n%s", k,
			  sbuf_str(&names), c->body);
		{
			struct sbuf kb = SBUF_INIT;

			sbuf_addf(&kb, "%s:group", shape);
			key = kb.err ? NULL : sbuf_detach(&kb, NULL);
			sbuf_release(&kb);
		}
		if (!key || title.err || body.err || names.err || c->proof.err) {
			cairn_free(key);
			wk->nomem = 1;
		} else {
			cairn_free(c->key);
			cairn_free(c->title);
			cairn_free(c->body);
			c->key = key;
			c->title = sbuf_detach(&title, NULL);
			c->body = sbuf_detach(&body, NULL);
		}
		sbuf_release(&names);
		sbuf_release(&title);
		sbuf_release(&body);
		wk->st->grouped += k;
		wk->st->proposed -= k - 1;
		/* close the gaps the folded ones left */
		for (k = j = 0; j < wk->nc; j++)
			if (wk->c[j].key)
				wk->c[k++] = wk->c[j];
		wk->nc = k;
	}
	/* the cap per session */
	for (i = 0; i < wk->nc; i++) {
		struct cand *c = &wk->c[i];

		if (!c->key || strcmp(c->origin, "capture") != 0)
			continue;
		for (n = 0, j = 0; j < i; j++)
			n += wk->c[j].key && !strcmp(wk->c[j].origin, "capture") &&
			     util_streq(wk->c[j].session, c->session);
		if (n >= CAPTURE_MAX_PER_SESSION) {
			cand_free(c);
			memset(c, 0, sizeof(*c));
		}
	}
	for (k = j = 0; j < wk->nc; j++) {
		if (wk->c[j].key) {
			wk->c[k++] = wk->c[j];
		} else {
			wk->st->dropped++;
			wk->st->proposed--;
		}
	}
	wk->nc = k;
}

/* Redact s in place (a new allocation when a secret was found). */
static char *redacted(struct walk *wk, const char *s, size_t len)
{
	struct secret_hit hits[16];
	size_t n = secret_scan(s, len, hits, 16);
	char *r;

	if (n == 0)
		return util_strndup(s, len);
	wk->st->redacted += n;
	r = secret_redact(s, len, NULL);
	if (!r)
		wk->nomem = 1;
	return r;
}

/* Does an option name credentials? ("--password", "--token=", "--api-key") */
static int secret_option(const char *w, size_t n)
{
	static const char *const names[] = { "password", "passwd", "token",
		"secret", "api-key", "apikey", "access-key", "private-key",
		"credential", NULL };
	char low[64];
	size_t i;

	if (n < 3 || n >= sizeof(low) || w[0] != '-')
		return 0;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)w[i]);
	low[n] = '\0';
	for (i = 0; names[i]; i++)
		if (strstr(low, names[i]) && !strstr(low, "-stdin") &&
		    !strstr(low, "-file") && !strstr(low, "-env"))
			return 1;
	return 0;
}

/*
 * Mask credentials passed as options, which the secret filter cannot know
 * by their shape: the value of --password/--token/--secret/... options
 * ("--token X", "--token=X"), of -p in `docker|podman|helm ... login`, and
 * mysql's attached -pPASSWORD. Returns a new string; *n counts masks.
 */
static char *mask_options(const char *cmd, size_t *n)
{
	struct sbuf sb = SBUF_INIT;
	const char *p = cmd;
	int mask_next = 0, login = strstr(cmd, " login") != NULL;
	int mysql = strstr(cmd, "mysql") != NULL || strstr(cmd, "mariadb") != NULL;
	int redis = strstr(cmd, "redis-cli") != NULL;

	while (*p) {
		size_t ws = strspn(p, " \t"), len;
		const char *w = p + ws;
		const char *eq;

		sbuf_add(&sb, p, ws);
		if (!*w)
			break;
		/* one word, quotes kept as they are */
		len = 0;
		while (w[len] && w[len] != ' ' && w[len] != '\t') {
			if (w[len] == '\'' || w[len] == '"') {
				char q = w[len++];

				while (w[len] && w[len] != q)
					len++;
				if (w[len])
					len++;
				continue;
			}
			len++;
		}
		eq = memchr(w, '=', len);
		if (mask_next && w[0] != '-') {
			sbuf_adds(&sb, "[REDACTED:option]");
			(*n)++;
			mask_next = 0;
		} else if (eq && secret_option(w, (size_t)(eq - w)) && eq + 1 < w + len) {
			sbuf_add(&sb, w, (size_t)(eq - w) + 1);
			sbuf_adds(&sb, "[REDACTED:option]");
			(*n)++;
		} else if (mysql && len > 2 && w[0] == '-' && w[1] == 'p' &&
			   w[2] != ' ') {
			sbuf_adds(&sb, "-p[REDACTED:option]");
			(*n)++;
		} else {
			mask_next = (!eq && secret_option(w, len)) ||
				    (login && len == 2 && !memcmp(w, "-p", 2)) ||
				    (redis && len == 2 && !memcmp(w, "-a", 2));
			sbuf_add(&sb, w, len);
		}
		p = w + len;
	}
	return sbuf_detach(&sb, NULL);
}

/* First lines of an output, bounded, prefixed "> ". */
static void add_excerpt(struct sbuf *sb, const char *out)
{
	size_t bytes = 0;
	int lines = 0;
	const char *p = out;

	while (*p == '\n' || *p == '\r')
		p++;
	while (*p && lines < CAPTURE_EXCERPT_LINES && bytes < CAPTURE_EXCERPT_BYTES) {
		size_t n = strcspn(p, "\n");
		size_t k = n;

		if (bytes + k > CAPTURE_EXCERPT_BYTES) {
			k = CAPTURE_EXCERPT_BYTES - bytes;
			while (k > 0 && ((unsigned char)p[k] & 0xC0) == 0x80)
				k--;
		}
		while (k > 0 && p[k - 1] == '\r')
			k--;
		sbuf_adds(sb, "\n> ");
		sbuf_add(sb, p, k);
		if (k < n)
			sbuf_adds(sb, " …");
		bytes += k;
		lines++;
		p += n;
		if (*p)
			p++;
	}
	if (*p)
		sbuf_adds(sb, "\n> …");
}

/* The provenance line of a proof entry: identity "session S · line N of". */
static void add_where(struct sbuf *sb, const struct walk *wk,
		      const char *session, const char *time, long line)
{
	if (time)
		sbuf_addf(sb, "%.10s %.8sZ · ", time, time + 11);
	sbuf_addf(sb, "session %s · line %ld of %s", session ? session : "-",
		  line, wk->path);
}

/* A command finished: classify it and keep what it proves. */
static void on_command(struct walk *wk, const char *cmd_raw, int ok,
		       int exitcode, const char *out_raw, const char *session,
		       const char *time, long line)
{
	struct capture_class cls[4];
	char setup[512];
	char *cmd, *out;
	size_t n, i;
	struct sbuf pf = SBUF_INIT, body = SBUF_INIT;

	if (wk->o->what && !(wk->o->what & CAPTURE_EVENTS))
		return;
	wk->st->commands++;
	saw_session(wk, session);
	cmd = redacted(wk, cmd_raw, strlen(cmd_raw));
	out = redacted(wk, out_raw ? out_raw : "", out_raw ? strlen(out_raw) : 0);
	if (!cmd || !out) {
		wk->nomem = 1;
		goto out;
	}
	{
		char *m = mask_options(cmd, &wk->st->redacted);

		if (!m) {
			wk->nomem = 1;
			goto out;
		}
		cairn_free(cmd);
		cmd = m;
	}
	if (!ok || capture_output_failed(out)) {
		wk->st->failed++;
		goto out;
	}
	n = capture_classify_all(cmd, cls, 4, setup, sizeof(setup));
	if (setup[0]) {
		/* remember the set-up steps for the next build or test */
		struct setup_step *s;

		if (wk->nsetup == SETUP_RING) {
			memmove(&wk->setup[0], &wk->setup[1], (SETUP_RING - 1) * sizeof(wk->setup[0]));
			wk->nsetup--;
		}
		s = &wk->setup[wk->nsetup++];
		snprintf(s->session, sizeof(s->session), "%s", session ? session : "");
		snprintf(s->cmd, sizeof(s->cmd), "%.255s", setup);
	}
	if (n == 0)
		goto out;
	sbuf_addf(&pf, "$ %s\nexit %d · ", cmd, exitcode);
	add_where(&pf, wk, session, time, line);
	add_excerpt(&pf, out);
	if (pf.err) {
		wk->nomem = 1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct capture_class *c = &cls[i];

		sbuf_reset(&body);
		sbuf_adds(&body, c->body);
		if (!strcmp(c->kind, "procedure")) {
			size_t k, m = 0;

			/* the set-up steps of this session before it */
			for (k = 0; k < wk->nsetup; k++)
				if (!strcmp(wk->setup[k].session, session ? session : "") &&
				    !strstr(cmd, wk->setup[k].cmd))
					m++;
			if (m || setup[0]) {
				sbuf_reset(&body);
				sbuf_adds(&body, "Steps that worked, in order:");
				for (k = 0; k < wk->nsetup; k++)
					if (!strcmp(wk->setup[k].session, session ? session : "") &&
					    !strstr(cmd, wk->setup[k].cmd))
						sbuf_addf(&body, "\n- `%s`", wk->setup[k].cmd);
				sbuf_addf(&body, "\n- `%s`", cmd);
			} else {
				sbuf_adds(&body, ".");
			}
			sbuf_adds(&body, "\n(It succeeded in a recorded session; see the proof.)");
		}
		if (body.err) {
			wk->nomem = 1;
			break;
		}
		add_cand(wk, c->kind, c->key, c->title, sbuf_str(&body), "capture",
			 session, time, line, sbuf_str(&pf));
	}
	if (n && !strcmp(cls[0].kind, "procedure"))
		wk->nsetup = 0; /* a procedure used them up */
out:
	sbuf_release(&pf);
	sbuf_release(&body);
	cairn_free(cmd);
	cairn_free(out);
}

/* A user or assistant text: hand it to the statement rules. */
static void on_text(struct walk *wk, const char *text_raw, int from_user,
		    const char *speaker, const char *session, const char *time,
		    long line)
{
	struct reflect_stmt *sv;
	unsigned what = wk->o && wk->o->what ? wk->o->what : CAPTURE_ALL;
	size_t n, i;
	char *text;

	if (!(what & (CAPTURE_RULES | CAPTURE_REFLECT)))
		return;
	if (!from_user && !(what & CAPTURE_REFLECT))
		return;
	/* command output, hook and slash-command noise pasted as a turn */
	if (text_raw[0] == '<' || !strncmp(text_raw, "Caveat:", 7) ||
	    !strncmp(text_raw, "[Request interrupted", 20))
		return;
	wk->st->statements++;
	saw_session(wk, session);
	text = redacted(wk, text_raw, strlen(text_raw));
	sv = util_calloc(16, sizeof(*sv));
	if (!text || !sv) {
		wk->nomem = 1;
		cairn_free(text);
		cairn_free(sv);
		return;
	}
	n = reflect_text(text, from_user, what, sv, 16);
	for (i = 0; i < n; i++) {
		struct sbuf pf = SBUF_INIT;
		char title[160];
		const char *origin = !strcmp(sv[i].kind, "rule") &&
				     !(what & CAPTURE_REFLECT) ? "capture" :
				     !strcmp(sv[i].kind, "rule") && (what & CAPTURE_EVENTS) ? "capture" : "reflection";
		size_t tl = strlen(sv[i].title);

		if (tl > 140) {
			tl = 140;
			while (tl > 0 && ((unsigned char)sv[i].title[tl] & 0xC0) == 0x80)
				tl--;
		}
		snprintf(title, sizeof(title), "%.*s%s", (int)tl, sv[i].title,
			 tl < strlen(sv[i].title) ? "…" : "");
		sbuf_addf(&pf, "\"%s\" (%s) · ", sv[i].text, speaker);
		add_where(&pf, wk, session, time, line);
		if (pf.err)
			wk->nomem = 1;
		else
			add_cand(wk, sv[i].kind, sv[i].key, title, sv[i].text,
				 origin, session, time, line, sbuf_str(&pf));
		sbuf_release(&pf);
	}
	cairn_free(sv);
	cairn_free(text);
}

/* ============================================================ parsing */

static void pending_add(struct walk *wk, const char *id, const char *cmd, long line)
{
	size_t slot;

	if (!id || !cmd || strlen(id) >= sizeof(wk->pending[0].id))
		return;
	if (wk->npending < CAPTURE_MAX_PENDING) {
		slot = wk->npending++;
	} else {
		/* the oldest call never got its result: forget it */
		slot = wk->pend_next;
		wk->pend_next = (wk->pend_next + 1) % CAPTURE_MAX_PENDING;
		cairn_free(wk->pending[slot].cmd);
	}
	snprintf(wk->pending[slot].id, sizeof(wk->pending[slot].id), "%s", id);
	wk->pending[slot].cmd = util_strdup(cmd);
	wk->pending[slot].line = line;
	if (!wk->pending[slot].cmd)
		wk->nomem = 1;
}

/* Take the pending command of a tool_use id (caller frees), or NULL. */
static char *pending_take(struct walk *wk, const char *id)
{
	size_t i;

	if (!id)
		return NULL;
	for (i = 0; i < wk->npending; i++)
		if (wk->pending[i].cmd && !strcmp(wk->pending[i].id, id)) {
			char *c = wk->pending[i].cmd;

			wk->pending[i].cmd = NULL;
			wk->pending[i].id[0] = '\0';
			return c;
		}
	return NULL;
}

/* Is a tool name a shell? */
static int is_shell_tool(const char *name)
{
	return name && (!strcmp(name, "Bash") || !strcmp(name, "bash") ||
			!strcmp(name, "shell") || !strcmp(name, "Shell") ||
			!strcmp(name, "run_shell_command") ||
			!strcmp(name, "exec_command"));
}

/* The text of a tool_result content (string or text blocks), joined. */
static void result_text(const struct json *c, struct sbuf *sb)
{
	const struct json *x;

	if (!c)
		return;
	if (c->type == JSON_STRING) {
		sbuf_add(sb, c->str, c->len);
		return;
	}
	if (c->type != JSON_ARRAY)
		return;
	for (x = c->child; x; x = x->next) {
		const char *t = json_get_str(x, "text");

		if (t) {
			if (sb->len)
				sbuf_addc(sb, '\n');
			sbuf_adds(sb, t);
		}
	}
}

/* "Exit code N" at the start of an error result; else 1. */
static int exit_of_error(const char *s)
{
	const char *p = strstr(s, "Exit code ");

	if (p && p - s < 16)
		return atoi(p + 10);
	return 1;
}

static int is_true(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);

	return v && v->type == JSON_TRUE;
}

/* A Claude Code line. */
static void walk_claude(struct walk *wk, const struct json *j, const char *type,
			long line)
{
	const struct json *content, *b;
	const char *session = json_get_str(j, "sessionId");
	char tbuf[32];
	const char *time = NULL, *ts = json_get_str(j, "timestamp");
	int user = !strcmp(type, "user"), side = is_true(j, "isSidechain");

	if (strcmp(type, "user") != 0 && strcmp(type, "assistant") != 0)
		return;
	if (is_true(j, "isMeta"))
		return;
	if (!session || !*session || strlen(session) > INGEST_MAX_SESSION)
		session = wk->default_session;
	if (ts && ingest_time_norm(ts, tbuf) == 0)
		time = tbuf;
	content = json_get(json_get(j, "message"), "content");
	if (!content)
		return;
	if (content->type == JSON_STRING) {
		if (!side)
			on_text(wk, content->str, user, type, session, time, line);
		return;
	}
	if (content->type != JSON_ARRAY)
		return;
	for (b = content->child; b; b = b->next) {
		const char *bt = json_get_str(b, "type");

		if (!bt)
			continue;
		if (!strcmp(bt, "text") && !side) {
			const char *t = json_get_str(b, "text");

			if (t)
				on_text(wk, t, user, type, session, time, line);
		} else if (!strcmp(bt, "tool_use") && !user &&
			   is_shell_tool(json_get_str(b, "name"))) {
			const char *cmd = json_get_str(json_get(b, "input"), "command");

			if (cmd)
				pending_add(wk, json_get_str(b, "id"), cmd, line);
		} else if (!strcmp(bt, "tool_result") && user) {
			char *cmd = pending_take(wk, json_get_str(b, "tool_use_id"));
			struct sbuf out = SBUF_INIT;
			int err, code;

			if (!cmd)
				continue;
			result_text(json_get(b, "content"), &out);
			err = is_true(b, "is_error") ||
			      is_true(json_get(j, "toolUseResult"), "interrupted");
			code = err ? exit_of_error(sbuf_str(&out)) : 0;
			if (out.err)
				wk->nomem = 1;
			else
				on_command(wk, cmd, !err, err && code == 0 ? 1 : code,
					   sbuf_str(&out), session, time, line);
			sbuf_release(&out);
			cairn_free(cmd);
		}
	}
}

/* A generic line: {"time","cmd","exit","output"} or {"speaker","text"}. */
static int walk_generic(struct walk *wk, const struct json *j, long line)
{
	const char *cmd = json_get_str(j, "cmd");
	const char *session = json_get_str(j, "session");
	const struct json *t = json_get(j, "time"), *e;
	char tbuf[32];
	const char *time = NULL;

	if (!cmd)
		cmd = json_get_str(j, "command");
	if (!session || !*session || strlen(session) > INGEST_MAX_SESSION)
		session = wk->default_session;
	if (t && ((t->type == JSON_STRING && ingest_time_norm(t->str, tbuf) == 0) ||
		  (t->type == JSON_NUMBER && ingest_time_from_number(t->num, tbuf) == 0)))
		time = tbuf;
	if (cmd) {
		double code = 0;
		const char *out = json_get_str(j, "output");
		int have;

		e = json_get(j, "exit");
		if (!e)
			e = json_get(j, "exit_code");
		have = e && e->type == JSON_NUMBER;
		if (have)
			code = e->num;
		if (!out)
			out = json_get_str(j, "stdout");
		/* no exit status: nothing shows it succeeded */
		on_command(wk, cmd, have && code == 0, have ? (int)code : -1,
			   out, session, time, line);
		return 1;
	}
	{
		const char *speaker = json_get_str(j, "speaker");
		const char *text = json_get_str(j, "text");

		if (speaker && text) {
			int user = strcmp(speaker, "assistant") && strcmp(speaker, "ai") &&
				   strcmp(speaker, "agent") && strcmp(speaker, "bot") &&
				   strcmp(speaker, "claude") && strcmp(speaker, "system") &&
				   strcmp(speaker, "tool") && strcmp(speaker, "model");

			on_text(wk, text, user, speaker, session, time, line);
			return 1;
		}
	}
	return 0;
}

/* The file name without its directory and last extension. */
static char *file_stem(const char *path)
{
	const char *b = strrchr(path, '/'), *dot;

	b = b ? b + 1 : path;
	dot = strrchr(b, '.');
	return util_strndup(b, dot && dot != b ? (size_t)(dot - b) : strlen(b));
}

/* ============================================================ writing */

/* Count proof entries ("· session " marks each one). */
static size_t count_entries(const char *proof)
{
	size_t n = 0;
	const char *p = proof;

	while (p && (p = strstr(p, " · session ")) != NULL) {
		n++;
		p += 11;
	}
	return n;
}

/* The identity of each entry of new_proof not yet in old: appended to sb. */
static size_t merge_proof(const char *old, const char *newp, struct sbuf *sb)
{
	size_t added = 0, have = count_entries(old);
	const char *p = newp;

	sbuf_adds(sb, old ? old : "");
	while (p && *p) {
		const char *end = strstr(p, "\n\n");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *ses = NULL;
		char ident[400];

		/* the identity: "session S · line N of FILE" */
		{
			const char *q = p;
			while ((q = strstr(q, "session ")) && q < p + n) {
				ses = q;
				break;
			}
		}
		if (ses) {
			size_t k = (size_t)(p + n - ses);

			k = strcspn(ses, "\n") < k ? strcspn(ses, "\n") : k;
			snprintf(ident, sizeof(ident), "%.*s", (int)k, ses);
			/* the file may be named differently (relative, absolute) */
			{
				char *of = strstr(ident, " of ");
				if (of)
					of[4] = '\0';
			}
			if ((!old || !strstr(old, ident)) && have + added < CAPTURE_MAX_PROOFS) {
				sbuf_adds(sb, "\n\n");
				sbuf_add(sb, p, n);
				added++;
			}
		}
		p = end ? end + 2 : NULL;
	}
	return added;
}

/*
 * Give a pending candidate more proof. The store's writes keep a record
 * whose title and body are unchanged as it is (no new revision), so the
 * proof, which is not part of the text, is set here; it is checked by the
 * secret filter once more (it was built from redacted parts).
 */
static int add_proof(cairn_db *db, const char *id, const char *proof)
{
	return store_candidate_proof(db, id, proof); /* the store's gate */
}

/* Write or merge one candidate; fills action and *id_out (caller frees). */
static int write_cand(cairn_db *db, struct walk *wk, struct cand *c,
		      const char **action, char **id_out, char *err, size_t errsize)
{
	sqlite3_stmt *st = NULL;
	char *old_id = NULL, *old_status = NULL, *old_proof = NULL;
	struct sbuf merged = SBUF_INIT;
	cairn_record r;
	int rc = CAIRN_OK, src;

	*id_out = NULL;
	*action = "new";
	if (db) {
		src = sqlite3_prepare_v2(db->sql,
			"SELECT id, status, proof FROM main.records WHERE key = ?1",
			-1, &st, NULL);
		if (src != SQLITE_OK)
			return store_sql_error(db, src, "reading a key");
		sqlite3_bind_text(st, 1, c->key, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
		if (src == SQLITE_ROW) {
			old_id = util_strdup((const char *)sqlite3_column_text(st, 0));
			old_status = util_strdup((const char *)sqlite3_column_text(st, 1));
			old_proof = util_strdup(sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "");
			if (!old_id || !old_status || !old_proof)
				rc = CAIRN_NOMEM;
		} else if (src != SQLITE_DONE) {
			rc = store_sql_error(db, src, "reading a key");
		}
		sqlite3_finalize(st);
		if (rc)
			goto out;
	}
	if (old_id && strcmp(old_status, "candidate") != 0) {
		*action = "known";
		*id_out = old_id;
		old_id = NULL;
		wk->st->known++;
		goto out;
	}
	memset(&r, 0, sizeof(r));
	r.kind = c->kind;
	r.key = c->key;
	r.title = c->title;
	r.body = c->body;
	r.proof = (char *)sbuf_str(&c->proof);
	r.origin = c->origin;
	r.confidence = -1;
	r.src_path = (char *)wk->path;
	r.src_line = c->line;
	r.src_session = c->session;
	r.src_tool = !strcmp(c->origin, "capture") ? (char *)"cairn capture" : (char *)"cairn reflect";
	r.time = c->time;
	if (old_id) {
		if (merge_proof(old_proof, sbuf_str(&c->proof), &merged) == 0) {
			*action = "duplicate";
			*id_out = old_id;
			old_id = NULL;
			wk->st->duplicates++;
			goto out;
		}
		if (merged.err) {
			rc = CAIRN_NOMEM;
			goto out;
		}
		*action = "update";
		wk->st->updated++;
		if (!wk->o->dry_run)
			rc = add_proof(db, old_id, sbuf_str(&merged));
		if (rc == CAIRN_SECRET) {
			if (err && errsize && !err[0])
				snprintf(err, errsize, "%s: %s", c->key, cairn_errmsg(db));
			*action = "error";
			wk->st->updated--;
			wk->st->errors++;
			rc = CAIRN_OK;
		}
		*id_out = old_id;
		old_id = NULL;
		goto out;
	} else {
		wk->st->added++;
	}
	if (wk->o->dry_run) {
		*id_out = old_id;
		old_id = NULL;
		goto out;
	}
	rc = cairn_record_write(db, &r, CAIRN_WRITE_REDACT, id_out);
	if (rc == CAIRN_SECRET || rc == CAIRN_INVALID || rc == CAIRN_TOOBIG ||
	    rc == CAIRN_READONLY) {
		if (err && errsize && !err[0])
			snprintf(err, errsize, "%s: %s", c->key, cairn_errmsg(db));
		*action = "error";
		if (old_id)
			wk->st->updated--;
		else
			wk->st->added--;
		wk->st->errors++;
		rc = CAIRN_OK;
	}
out:
	cairn_free(old_id);
	cairn_free(old_status);
	cairn_free(old_proof);
	sbuf_release(&merged);
	return rc;
}

/* ============================================================ the walk */

/* Seek to the last max bytes, at a line start. 1 when the head is left out. */
static int seek_tail(FILE *f, size_t max)
{
	struct stat sb;
	int c;

	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (size_t)sb.st_size <= max)
		return 0;
	if (fseeko(f, (off_t)(sb.st_size - (off_t)max - 1), SEEK_SET) != 0)
		return 0;
	c = fgetc(f);
	if (c != '\n')
		while ((c = fgetc(f)) != EOF && c != '\n')
			;
	return 1;
}

/*
 * --llm-cmd: the transcript (what was read of it, secrets masked) goes to
 * the command's stdin; each line it prints is validated strictly and
 * becomes a reflection candidate. A failing command or a bad line is
 * counted, never fatal.
 */
static int llm_pass(struct walk *wk, FILE *f, off_t start, char *err,
		    size_t errsize)
{
	struct sbuf in = SBUF_INIT;
	char buf[65536], msg[256], *masked = NULL, *out = NULL;
	size_t n, outlen = 0, masked_len = 0;
	const char *p;
	int rc;

	if (fseeko(f, start, SEEK_SET) != 0)
		return CAIRN_OK;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 &&
	       in.len < CAPTURE_LLM_MAX_IN)
		sbuf_add(&in, buf, n);
	if (in.err) {
		sbuf_release(&in);
		return CAIRN_NOMEM;
	}
	masked = redacted(wk, sbuf_str(&in), in.len);
	sbuf_release(&in);
	if (!masked)
		return CAIRN_NOMEM;
	masked_len = strlen(masked);
	rc = reflect_run_cmd(wk->o->llm_cmd, masked, masked_len,
			     wk->o->llm_timeout_ms > 0 ? wk->o->llm_timeout_ms
						       : CAPTURE_LLM_TIMEOUT_MS,
			     &out, &outlen, msg, sizeof(msg));
	cairn_free(masked);
	if (rc == CAIRN_NOMEM)
		return rc;
	if (rc) {
		if (err && errsize && !err[0])
			snprintf(err, errsize, "--llm-cmd: %s", msg);
		wk->st->llm_bad++;
		cairn_free(out);
		return CAIRN_OK;
	}
	for (p = out; p && *p;) {
		size_t len = strcspn(p, "\n");
		struct reflect_llm_cand lc;

		while (len > 0 && isspace((unsigned char)p[len - 1]))
			len--;
		if (len > 0) {
			memset(&lc, 0, sizeof(lc));
			if (reflect_llm_parse(p, len, &lc, msg, sizeof(msg)) == CAIRN_OK) {
				char *t = redacted(wk, lc.title, strlen(lc.title));
				char *b = redacted(wk, lc.body, strlen(lc.body));
				struct sbuf pf = SBUF_INIT;

				sbuf_addf(&pf, "proposed by --llm-cmd · ");
				add_where(&pf, wk, wk->last_session[0] ? wk->last_session : wk->default_session, NULL, 0);
				if (t && b && !pf.err && !strstr(lc.key, "REDACTED")) {
					add_cand(wk, lc.kind, lc.key, t, b, "reflection",
						 wk->last_session[0] ? wk->last_session : wk->default_session,
						 NULL, 0, sbuf_str(&pf));
					wk->st->llm_lines++;
				} else {
					if (!t || !b || pf.err)
						wk->nomem = 1;
					wk->st->llm_bad++;
				}
				sbuf_release(&pf);
				cairn_free(t);
				cairn_free(b);
			} else {
				wk->st->llm_bad++;
				if (err && errsize && !err[0])
					snprintf(err, errsize, "--llm-cmd: %s", msg);
			}
			cairn_free(lc.kind);
			cairn_free(lc.key);
			cairn_free(lc.title);
			cairn_free(lc.body);
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
	cairn_free(out);
	return wk->nomem ? CAIRN_NOMEM : CAIRN_OK;
}

/* One transcript line (trimmed, not empty) to the walk. */
static void walk_line(struct walk *wk, const char *s, size_t len, long lineno)
{
	struct capture_stats *st = wk->st;
	struct json *j = NULL;
	const char *type;

	st->lines++;
	if (json_parse(s, len, &j, NULL, 0) != CAIRN_OK || j->type != JSON_OBJECT) {
		json_free(j);
		st->malformed++;
		return;
	}
	type = json_get_str(j, "type");
	if (json_get(j, "cmd") || json_get(j, "command") ||
	    (json_get(j, "speaker") && json_get(j, "text"))) {
		if (!walk_generic(wk, j, lineno))
			st->malformed++;
	} else if (type) {
		walk_claude(wk, j, type, lineno);
	} else {
		st->malformed++;
	}
	json_free(j);
}

/*
 * Every line of the transcript to the walk, up to the deadline (then
 * st->timed_out). A line too long or not JSON is counted malformed.
 */
static int walk_lines(struct walk *wk, struct ingest_reader *rd, char *err,
		      size_t errsize)
{
	const struct capture_opts *o = wk->o;
	struct capture_stats *st = wk->st;
	struct sbuf line = SBUF_INIT;
	long lineno = 0;
	int rc = CAIRN_OK, got, toolong;

	for (;;) {
		const char *s;
		size_t len;

		if (o->deadline_ms > 0 && lineno % DEADLINE_EVERY == 0 &&
		    util_now_ms() > o->deadline_ms) {
			st->timed_out = 1;
			break;
		}
		got = ingest_read_line(rd, &line, &toolong);
		if (got < 0) {
			snprintf(err, errsize, "cannot read '%s': %s", wk->path, strerror(errno));
			rc = CAIRN_IO;
			break;
		}
		if (got == 0)
			break;
		lineno++;
		if (line.err) {
			rc = CAIRN_NOMEM;
			break;
		}
		if (toolong) {
			st->lines++;
			st->malformed++;
			continue;
		}
		s = sbuf_str(&line);
		len = line.len;
		if (lineno == 1 && len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) {
			s += 3;
			len -= 3;
		}
		while (len > 0 && isspace((unsigned char)*s)) {
			s++;
			len--;
		}
		while (len > 0 && isspace((unsigned char)s[len - 1]))
			len--;
		if (len == 0)
			continue;
		walk_line(wk, s, len, lineno);
		if (wk->nomem) {
			rc = CAIRN_NOMEM;
			break;
		}
	}
	sbuf_release(&line);
	return rc;
}

/*
 * Write (or, dry run, look up) every candidate in one batch, and hand
 * each to o->emit. On an error the batch is rolled back.
 */
static int write_all(cairn_db *db, struct walk *wk, char *err, size_t errsize)
{
	const struct capture_opts *o = wk->o;
	int rc = CAIRN_OK, in_batch = 0;
	size_t i;

	if (db && !o->dry_run) {
		rc = cairn_begin(db);
		if (rc) {
			snprintf(err, errsize, "%s", cairn_errmsg(db));
			return rc;
		}
		in_batch = 1;
	}
	for (i = 0; i < wk->nc; i++) {
		struct capture_cand cc;
		const char *action;
		char *id = NULL;
		struct cand *c = &wk->c[i];

		rc = write_cand(db, wk, c, &action, &id, err, errsize);
		if (rc) {
			if (db && err && errsize && !err[0])
				snprintf(err, errsize, "%s", cairn_errmsg(db));
			if (in_batch)
				cairn_rollback(db);
			return rc;
		}
		if (o->emit) {
			memset(&cc, 0, sizeof(cc));
			cc.kind = c->kind;
			cc.key = c->key;
			cc.title = c->title;
			cc.body = c->body;
			cc.proof = sbuf_str(&c->proof);
			cc.origin = c->origin;
			cc.session = c->session;
			cc.time = c->time;
			cc.path = wk->path;
			cc.line = c->line;
			cc.action = action;
			cc.id = id;
			o->emit(o->user, &cc);
		}
		cairn_free(id);
	}
	if (in_batch) {
		rc = cairn_commit(db);
		if (rc)
			snprintf(err, errsize, "%s", cairn_errmsg(db));
	}
	return rc;
}

static void walk_free(struct walk *wk)
{
	size_t i;

	if (!wk)
		return;
	for (i = 0; i < wk->nc; i++)
		cand_free(&wk->c[i]);
	cairn_free(wk->c);
	for (i = 0; i < wk->npending; i++)
		cairn_free(wk->pending[i].cmd);
	cairn_free(wk);
}

/* Run capture and reflection on one transcript (capture.h). */
int capture_transcript(cairn_db *db, const char *path,
		       const struct capture_opts *o, struct capture_stats *st,
		       char *err, size_t errsize)
{
	static const struct capture_opts none;
	struct walk *wk = NULL;
	struct ingest_reader *rd = NULL;
	char *stem = NULL;
	FILE *f = NULL;
	int rc = CAIRN_OK;
	struct stat sbuf;
	off_t start;

	if (!o)
		o = &none;
	memset(st, 0, sizeof(*st));
	if (err && errsize)
		err[0] = '\0';
	if (!path || !*path) {
		snprintf(err, errsize, "no transcript given");
		return CAIRN_INVALID;
	}
	if (!db && !o->dry_run) {
		snprintf(err, errsize, "no store open");
		return CAIRN_INVALID;
	}
	if (db && db->in_batch) {
		snprintf(err, errsize, "capture runs its own batch: commit the open one first");
		return CAIRN_INVALID;
	}
	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &sbuf) != 0 || S_ISDIR(sbuf.st_mode)) {
		snprintf(err, errsize, "cannot read '%s': %s", path,
			 f ? "it is a directory" : strerror(errno));
		if (f)
			fclose(f);
		return CAIRN_IO;
	}
	wk = util_calloc(1, sizeof(*wk));
	rd = util_calloc(1, sizeof(*rd));
	stem = file_stem(path);
	if (!wk || !rd || !stem) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	wk->o = o;
	wk->st = st;
	wk->path = path;
	wk->default_session = o->session_id && *o->session_id ? o->session_id : stem;
	if (o->max_bytes > 0)
		st->truncated = seek_tail(f, o->max_bytes);
	start = ftello(f);
	rd->f = f;
	rc = walk_lines(wk, rd, err, errsize);
	if (rc)
		goto out;
	if (o->llm_cmd && *o->llm_cmd &&
	    ((o->what ? o->what : CAPTURE_ALL) & CAPTURE_REFLECT)) {
		rc = llm_pass(wk, f, start < 0 ? 0 : start, err, errsize);
		if (rc)
			goto out;
		if (wk->nomem) {
			rc = CAIRN_NOMEM;
			goto out;
		}
	}
	group_cands(wk);
	if (wk->nomem) {
		rc = CAIRN_NOMEM;
		goto out;
	}
	rc = write_all(db, wk, err, errsize);
out:
	if (rc == CAIRN_NOMEM && err && errsize && !err[0])
		snprintf(err, errsize, "out of memory");
	walk_free(wk);
	cairn_free(rd);
	cairn_free(stem);
	fclose(f);
	return rc;
}
