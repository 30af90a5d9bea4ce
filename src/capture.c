/*
 * capture.c -- auto-capture (issue 7, seed 003): success events in a
 * session transcript become candidate records with proof.
 *
 * Layer: capture sits on ingest (the bounded line reader, times), json,
 * secret and the store (cairn_record_write and a key lookup on db->sql);
 * reflect.c supplies the statement rules; cli_capture.c and the hook sit on
 * it.
 *
 * Holds: the shell command classifier (what a successful command proves:
 * auth, deploy, publish, a database or SSH connection -> capability; a build
 * or test run -> procedure, with the set-up steps before it), the output
 * failure check, the transcript walker (Claude Code tool_use/tool_result
 * pairs, generic {"time","cmd","exit","output"} lines, user and assistant
 * texts for reflect.c), and the writer that merges by key.
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
#include "ingest.h"
#include "internal.h"
#include "json.h"
#include "secret.h"
#include "store.h"

/*
 * Titles and bodies are cut to their fixed buffers on purpose (a long
 * command makes a long title); utf8_tail() then drops a code point cut in
 * half, so the compiler's truncation warning is not an error here.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define CMD_MAX_WORDS 64     /* words kept per command part */
#define CMD_MAX_PARTS 16     /* parts (&& ; | ||) classified per command */
#define CMD_WORDBUF 4096     /* bytes of words per part */
#define KEY_PART_MAX 64      /* bytes of one key component */
#define SETUP_RING 6         /* set-up steps remembered for a procedure */
#define DEADLINE_EVERY 32    /* lines between deadline checks */

/* ============================================================ words */

/* One part of a command line, split into words (quotes removed). */
struct part {
	char buf[CMD_WORDBUF];
	char *w[CMD_MAX_WORDS];
	int n;
	char sep;         /* what follows: '&' &&, 'o' ||, 'b' &, ';', '|', 0 end */
	char aws_profile[KEY_PART_MAX]; /* AWS_PROFILE=... before the command */
	char pghost[KEY_PART_MAX];      /* PGHOST=... */
};

/* Split cmd into parts at unquoted && || ; | & and newlines. */
static int split_command(const char *cmd, struct part *parts, int max)
{
	int np = 0;
	const char *p = cmd;

	while (*p && np < max) {
		struct part *pt = &parts[np];
		size_t bl = 0;
		int in_word = 0;

		memset(pt, 0, sizeof(*pt));
		for (;;) {
			char c = *p;
			char q;

			if (c == '\0')
				break;
			if (c == '\\' && p[1] && p[1] != '\n') {
				c = p[1];
				p++;
				goto ordinary;
			}
			if (c == '\\' && p[1] == '\n') {
				p += 2;
				continue;
			}
			if (c == '\'' || c == '"') {
				q = c;
				p++;
				if (!in_word && pt->n < CMD_MAX_WORDS &&
				    bl < CMD_WORDBUF - 1) {
					pt->w[pt->n++] = pt->buf + bl;
					in_word = 1;
				}
				while (*p && *p != q) {
					if (q == '"' && *p == '\\' && p[1])
						p++;
					if (in_word && bl < CMD_WORDBUF - 2)
						pt->buf[bl++] = *p;
					p++;
				}
				if (*p)
					p++;
				continue;
			}
			if (c == ' ' || c == '\t' || c == '(' || c == ')' ||
			    c == '{' || c == '}') {
				if (in_word) {
					pt->buf[bl++] = '\0';
					in_word = 0;
				}
				p++;
				continue;
			}
			if (c == '\n' || c == ';' || c == '|' || c == '&') {
				if (c == '&' && p[1] == '&') {
					pt->sep = '&';
					p += 2;
				} else if (c == '|' && p[1] == '|') {
					pt->sep = 'o';
					p += 2;
				} else if (c == '&' && ((p > cmd && p[-1] == '>') ||
						      p[1] == '>')) {
					goto ordinary; /* 2>&1, &> */
				} else if (c == '&') {
					pt->sep = 'b'; /* a background job */
					p++;
				} else {
					pt->sep = c == '\n' ? ';' : c;
					p++;
				}
				break;
			}
		ordinary:
			if (!in_word) {
				if (pt->n == CMD_MAX_WORDS ||
				    bl >= CMD_WORDBUF - 2) {
					p++;
					continue;
				}
				pt->w[pt->n++] = pt->buf + bl;
				in_word = 1;
			}
			if (bl < CMD_WORDBUF - 2)
				pt->buf[bl++] = c;
			p++;
		}
		if (in_word)
			pt->buf[bl++] = '\0';
		if (pt->n > 0)
			np++;
	}
	return np;
}

/* Remove words i..i+k-1 of a part. */
static void drop_words(struct part *pt, int i, int k)
{
	if (i + k > pt->n)
		k = pt->n - i;
	memmove(&pt->w[i], &pt->w[i + k],
		(size_t)(pt->n - i - k) * sizeof(pt->w[0]));
	pt->n -= k;
}

/* Is w NAME=value with an identifier NAME? */
static int is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');
	const char *c;

	if (!eq || eq == w || !(isalpha((unsigned char)*w) || *w == '_'))
		return 0;
	for (c = w; c < eq; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return 0;
	return 1;
}

static void copy_part(char *dst, const char *src, size_t n)
{
	snprintf(dst, KEY_PART_MAX, "%.*s", (int)(n < KEY_PART_MAX - 1 ? n : KEY_PART_MAX - 1), src);
}

/*
 * Drop redirections, env assignments and wrappers (sudo, time, timeout N,
 * nohup, env, npx, python -m, poetry run, ...) so that w[0] is the tool,
 * reduced to its base name.
 */
static void normalise(struct part *pt)
{
	int i, changed = 1;

	for (i = 0; i < pt->n;) {
		const char *w = pt->w[i];
		int op = (w[0] == '>' || w[0] == '<' ||
			  (isdigit((unsigned char)w[0]) && (w[1] == '>' || w[1] == '<')) ||
			  (w[0] == '&' && w[1] == '>'));

		if (!op) {
			i++;
			continue;
		}
		/* "> file": an operator alone takes the next word */
		if (!strcmp(w, ">") || !strcmp(w, ">>") || !strcmp(w, "<") ||
		    !strcmp(w, "2>") || !strcmp(w, "2>>") || !strcmp(w, "1>") ||
		    !strcmp(w, "&>") || !strcmp(w, "<<") || !strcmp(w, "<<<"))
			drop_words(pt, i, 2);
		else
			drop_words(pt, i, 1);
	}
	while (changed && pt->n > 0) {
		const char *w = pt->w[0];
		const char *b;

		changed = 1;
		if (is_assignment(w)) {
			const char *v = strchr(w, '=') + 1;

			if (strncmp(w, "AWS_PROFILE=", 12) == 0)
				copy_part(pt->aws_profile, v, strlen(v));
			if (strncmp(w, "PGHOST=", 7) == 0)
				copy_part(pt->pghost, v, strlen(v));
			drop_words(pt, 0, 1);
			continue;
		}
		b = strrchr(w, '/');
		if (b && b[1])
			pt->w[0] = (char *)(b + 1);
		w = pt->w[0];
		if (!strcmp(w, "sudo") || !strcmp(w, "time") ||
		    !strcmp(w, "nohup") || !strcmp(w, "command") ||
		    !strcmp(w, "exec") || !strcmp(w, "env") ||
		    !strcmp(w, "nice") || !strcmp(w, "npx") ||
		    !strcmp(w, "bunx") || !strcmp(w, "pnpx") ||
		    !strcmp(w, "stdbuf")) {
			drop_words(pt, 0, 1);
			/* their own flags (sudo -u root, npx -y, ...) */
			while (pt->n > 0 && pt->w[0][0] == '-') {
				int val = !strcmp(pt->w[0], "-u") ||
					  !strcmp(pt->w[0], "-n") ||
					  !strcmp(pt->w[0], "-p");

				drop_words(pt, 0, val ? 2 : 1);
			}
			continue;
		}
		if (!strcmp(w, "timeout")) {
			drop_words(pt, 0, 1);
			while (pt->n > 0 && pt->w[0][0] == '-')
				drop_words(pt, 0, 1);
			drop_words(pt, 0, 1); /* the duration */
			continue;
		}
		if (pt->n >= 3 && (!strcmp(w, "python") || !strcmp(w, "python3")) &&
		    !strcmp(pt->w[1], "-m")) {
			drop_words(pt, 0, 2);
			continue;
		}
		if (pt->n >= 3 &&
		    ((!strcmp(w, "poetry") && !strcmp(pt->w[1], "run")) ||
		     (!strcmp(w, "uv") && !strcmp(pt->w[1], "run")) ||
		     (!strcmp(w, "pipenv") && !strcmp(pt->w[1], "run")) ||
		     (!strcmp(w, "bundle") && !strcmp(pt->w[1], "exec")) ||
		     ((!strcmp(w, "pnpm") || !strcmp(w, "yarn")) &&
		      (!strcmp(pt->w[1], "dlx") || !strcmp(pt->w[1], "exec"))))) {
			drop_words(pt, 0, 2);
			continue;
		}
		changed = 0;
	}
}

/* The value of option opt: "--opt v", "--opt=v", or "-Xv" for one-letter opts. */
static const char *opt_value(const struct part *pt, const char *opt)
{
	size_t n = strlen(opt);
	int i;

	for (i = 1; i < pt->n; i++) {
		const char *w = pt->w[i];

		if (strcmp(w, opt) == 0)
			return i + 1 < pt->n ? pt->w[i + 1] : NULL;
		if (strncmp(w, opt, n) == 0 && w[n] == '=')
			return w + n + 1;
		if (n == 2 && opt[1] != '-' && strncmp(w, opt, 2) == 0 && w[2])
			return w + 2;
	}
	return NULL;
}

/* Does any word equal w? */
static int has_word(const struct part *pt, const char *w)
{
	int i;

	for (i = 1; i < pt->n; i++)
		if (strcmp(pt->w[i], w) == 0)
			return 1;
	return 0;
}

/*
 * The k-th positional word (0-based) after w[0]: not an option, not the
 * value of one of the options in vopts (space-separated "--x -y").
 */
static const char *positional(const struct part *pt, int k, const char *vopts)
{
	int i;

	for (i = 1; i < pt->n; i++) {
		const char *w = pt->w[i];

		if (w[0] == '-') {
			if (!strchr(w, '=') && vopts) {
				char pat[72];
				snprintf(pat, sizeof(pat), " %s ", w);
				if (strstr(vopts, pat))
					i++;
			}
			continue;
		}
		if (k-- == 0)
			return w;
	}
	return NULL;
}

/* ============================================================ keys */

/* Append a key component made of [a-z0-9._@/-] (others become '-'). */
static void key_add(char *key, size_t size, const char *part, size_t n)
{
	size_t len = strlen(key), i, k = 0;

	if (!part || n == 0 || strstr(part, "REDACTED")) {
		part = "unknown";
		n = 7;
	}
	if (len + 2 >= size)
		return;
	if (len)
		key[len++] = ':';
	for (i = 0; i < n && k < KEY_PART_MAX && len + 1 < size; i++) {
		unsigned char c = (unsigned char)part[i];

		c = (unsigned char)tolower(c);
		if (!(isalnum(c) || c == '.' || c == '_' || c == '@' ||
		      c == '/' || c == '-'))
			c = '-';
		if (c == '-' && len > 0 && (key[len - 1] == '-' || key[len - 1] == ':'))
			continue;
		key[len++] = (char)c;
		k++;
	}
	while (len > 0 && (key[len - 1] == '-' || key[len - 1] == '/'))
		len--;
	if (len > 0 && key[len - 1] == ':') {
		len--;
	}
	key[len] = '\0';
}

/* Set cl's key from NULL-terminated components. */
static void set_key(struct capture_class *cl, const char *a, ...)
{
	va_list ap;
	const char *s;

	cl->key[0] = '\0';
	va_start(ap, a);
	for (s = a; s; s = va_arg(ap, const char *))
		key_add(cl->key, sizeof(cl->key), s, strlen(s));
	va_end(ap);
}

/* The whole part again, words joined by blanks (for bodies). */
static void part_text(const struct part *pt, char *out, size_t size)
{
	size_t len = 0;
	int i;

	out[0] = '\0';
	for (i = 0; i < pt->n && len + 1 < size; i++) {
		int k = snprintf(out + len, size - len, "%s%s", i ? " " : "",
				 pt->w[i]);
		if (k < 0)
			break;
		len += (size_t)k;
		if (len >= size) {
			len = size - 1;
			break;
		}
	}
	/* never end a cut in the middle of a UTF-8 sequence */
	while (len > 0 && ((unsigned char)out[len - 1] & 0xC0) == 0x80 &&
	       len + 4 >= size)
		len--;
	out[len] = '\0';
}

/* Host of "user@host", "host:path", "scheme://user:pw@host:port/db". */
static void host_of(const char *w, char *out, size_t size, char *db,
		    size_t dbsize)
{
	const char *s = w, *e, *at;

	if (db && dbsize)
		db[0] = '\0';
	e = strstr(s, "://");
	if (e)
		s = e + 3;
	e = s + strcspn(s, "/?");
	at = memchr(s, '@', (size_t)(e - s));
	while (at) {
		s = at + 1;
		at = memchr(s, '@', (size_t)(e - s));
	}
	{
		size_t n = strcspn(s, ":/?");

		if (n > (size_t)(e - s))
			n = (size_t)(e - s);
		snprintf(out, size, "%.*s", (int)n, s);
	}
	if (db && dbsize && *e == '/' && e[1])
		snprintf(db, dbsize, "%.*s", (int)strcspn(e + 1, "?/"), e + 1);
}

/* ============================================================ classes */

enum prio { P_NONE, P_SETUP, P_BUILD, P_ACCESS, P_DEPLOY };

/* Drop a UTF-8 sequence cut off at the end of s. */
static void utf8_tail(char *s)
{
	size_t n = strlen(s), k = n, need;

	while (k > 0 && ((unsigned char)s[k - 1] & 0xC0) == 0x80 && n - k < 4)
		k--;
	if (k == 0 || !((unsigned char)s[k - 1] & 0x80))
		return;
	need = util_u8len((unsigned char)s[k - 1]);
	if (need != n - k + 1)
		s[k - 1] = '\0';
}

static void set_cls(struct capture_class *cl, const char *kind,
		    const char *title, const char *body)
{
	snprintf(cl->kind, sizeof(cl->kind), "%s", kind);
	snprintf(cl->title, sizeof(cl->title), "%s", title);
	snprintf(cl->body, sizeof(cl->body), "%s", body);
}

#define CLS(kind, ...)                                                     \
	do {                                                               \
		snprintf(t, sizeof(t), __VA_ARGS__);                       \
		snprintf(b, sizeof(b), "%s", t);                           \
		set_cls(cl, kind, t, b);                                   \
	} while (0)

/* Does s contain any of the words (space-separated list)? */
static int contains_any(const char *s, const char *list)
{
	char w[48];
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, " ");

		snprintf(w, sizeof(w), "%.*s", (int)n, p);
		if (n && strstr(s, w))
			return 1;
		p += n;
		while (*p == ' ')
			p++;
	}
	return 0;
}

/* A deploy target name from "deploy-staging", "deploy:prod", "deploy.sh". */
static void deploy_target(const char *w, char *out, size_t size)
{
	const char *d = strstr(w, "deploy");
	char tmp[KEY_PART_MAX];
	size_t n;

	snprintf(tmp, sizeof(tmp), "%s", w);
	n = strcspn(tmp, ".");
	if (n && strcmp(tmp + n, ".sh") == 0)
		tmp[n] = '\0';
	d = strstr(tmp, "deploy");
	if (d) {
		const char *rest = d + 6;

		while (*rest == '-' || *rest == ':' || *rest == '_')
			rest++;
		if (*rest) {
			snprintf(out, size, "%s", rest);
			return;
		}
		if (d > tmp) {
			n = (size_t)(d - tmp);
			while (n > 0 && strchr("-:_", tmp[n - 1]))
				n--;
			if (n) {
				snprintf(out, size, "%.*s", (int)n, tmp);
				return;
			}
		}
	}
	snprintf(out, size, "%s", "default");
}

/* Classify one normalised part: its priority, and cl filled. */
static enum prio classify_part0(const struct part *pt, struct capture_class *cl)
{
	const char *t0 = pt->n ? pt->w[0] : "";
	const char *a1 = pt->n > 1 ? pt->w[1] : "";
	const char *a2 = pt->n > 2 ? pt->w[2] : "";
	char t[200], b[600], x[KEY_PART_MAX], y[KEY_PART_MAX], cmd[300];
	const char *v;

	memset(cl, 0, sizeof(*cl));
	if (!pt->n)
		return P_NONE;
	part_text(pt, cmd, sizeof(cmd));
	/* (-h is a host for psql, mysql, redis-cli: not taken for help) */
	if (has_word(pt, "--help") || has_word(pt, "--version") ||
	    has_word(pt, "help") || has_word(pt, "--dry-run"))
		return P_NONE;

	/* ------------------------------------------------------- aws */
	if (!strcmp(t0, "aws")) {
		static const char vo[] = " --profile --region --output --query "
			"--endpoint-url --color --acl --exclude --include "
			"--storage-class --cache-control --content-type --sse "
			"--expires --metadata-directive --grants --source-region ";
		const char *svc = positional(pt, 0, vo), *op = positional(pt, 1, vo);
		const char *prof = opt_value(pt, "--profile");
		int i;

		if (!prof)
			prof = pt->aws_profile[0] ? pt->aws_profile : "default";
		if (!svc || !strcmp(svc, "configure"))
			return P_NONE;
		if (!strcmp(svc, "s3") && op &&
		    (!strcmp(op, "cp") || !strcmp(op, "sync") || !strcmp(op, "mv"))) {
			const char *dst = NULL, *w;

			/* the destination: the last positional word */
			for (i = 2; (w = positional(pt, i, vo)); i++)
				dst = w;
			if (dst && !strncmp(dst, "s3://", 5)) {
				snprintf(x, sizeof(x), "%.*s", (int)strcspn(dst + 5, "/"), dst + 5);
				set_key(cl, "capability", "deploy", "s3", x, NULL);
				CLS("capability", "Uploading to s3://%s works from this machine", x);
				snprintf(b, sizeof(b), "Deploying to s3://%s works from this machine (AWS profile %s): `%s` succeeded.", x, prof, cmd);
				snprintf(cl->body, sizeof(cl->body), "%s", b);
				return P_DEPLOY;
			}
		}
		if (!strcmp(svc, "cloudfront") && op && !strcmp(op, "create-invalidation")) {
			v = opt_value(pt, "--distribution-id");
			set_key(cl, "capability", "deploy", "cloudfront", v ? v : "default", NULL);
			CLS("capability", "CloudFront invalidation works from this machine");
			snprintf(cl->body, sizeof(cl->body), "Invalidating CloudFront distribution %s works from this machine (AWS profile %s): `%s` succeeded.", v ? v : "(default)", prof, cmd);
			return P_DEPLOY;
		}
		if (op && ((!strcmp(svc, "ecs") && !strcmp(op, "update-service")) ||
			   (!strcmp(svc, "lambda") && !strcmp(op, "update-function-code")) ||
			   (!strcmp(svc, "cloudformation") && !strcmp(op, "deploy")))) {
			v = opt_value(pt, "--service");
			if (!v)
				v = opt_value(pt, "--function-name");
			if (!v)
				v = opt_value(pt, "--stack-name");
			set_key(cl, "capability", "deploy", svc, v ? v : "default", NULL);
			CLS("capability", "Deploying %s %s works from this machine", svc, v ? v : "");
			snprintf(cl->body, sizeof(cl->body), "Deploying to AWS %s (%s) works from this machine (AWS profile %s): `%s` succeeded.", svc, v ? v : "default", prof, cmd);
			return P_DEPLOY;
		}
		/* any other successful call proves the credentials */
		set_key(cl, "capability", "aws", "auth", prof, NULL);
		CLS("capability", "AWS credentials work on this machine (profile %s)", prof);
		snprintf(cl->body, sizeof(cl->body), "The AWS CLI is authenticated on this machine with profile %s: `%s` succeeded.", prof, cmd);
		return P_ACCESS;
	}
	/* ------------------------------------------------------- gh */
	if (!strcmp(t0, "gh")) {
		if (!strcmp(a1, "release") && !strcmp(a2, "create")) {
			v = opt_value(pt, "--repo");
			if (!v)
				v = opt_value(pt, "-R");
			set_key(cl, "capability", "publish", "github-release", v ? v : "default", NULL);
			CLS("capability", "Publishing GitHub releases works from this machine");
			snprintf(cl->body, sizeof(cl->body), "Creating GitHub releases%s%s works from this machine: `%s` succeeded.", v ? " in " : "", v ? v : "", cmd);
			return P_DEPLOY;
		}
		if ((!strcmp(a1, "auth") && (!strcmp(a2, "status") || !strcmp(a2, "login"))) ||
		    (!strcmp(a1, "pr") && (!strcmp(a2, "create") || !strcmp(a2, "merge"))) ||
		    (!strcmp(a1, "workflow") && !strcmp(a2, "run")) || !strcmp(a1, "api")) {
			v = opt_value(pt, "--hostname");
			set_key(cl, "capability", "github", "auth", v ? v : "github.com", NULL);
			CLS("capability", "The GitHub CLI is authenticated on this machine");
			snprintf(cl->body, sizeof(cl->body), "The GitHub CLI (gh) is logged in to %s on this machine: `%s` succeeded.", v ? v : "github.com", cmd);
			return P_ACCESS;
		}
		return P_NONE;
	}
	/* ------------------------------------------- npm, yarn, pnpm, bun */
	if (!strcmp(t0, "npm") || !strcmp(t0, "yarn") || !strcmp(t0, "pnpm") ||
	    !strcmp(t0, "bun")) {
		const char *sub = positional(pt, 0, " --prefix -C --workspace -w --filter ");
		const char *script = NULL;

		if (!sub) {
			if (!strcmp(t0, "yarn"))
				goto setup; /* plain `yarn` installs */
			return P_NONE;
		}
		if (!strcmp(sub, "publish")) {
			set_key(cl, "capability", "publish", "npm", "default", NULL);
			CLS("capability", "Publishing to the npm registry works from this machine");
			snprintf(cl->body, sizeof(cl->body), "Publishing packages to the npm registry works from this machine: `%s` succeeded.", cmd);
			return P_DEPLOY;
		}
		if (!strcmp(sub, "ci") || !strcmp(sub, "install") || !strcmp(sub, "i") ||
		    !strcmp(sub, "add"))
			goto setup;
		if (!strcmp(sub, "run") || !strcmp(sub, "run-script"))
			script = positional(pt, 1, " --prefix -C --workspace -w --filter ");
		else if (!strcmp(sub, "test") || !strcmp(sub, "t") || !strcmp(sub, "build"))
			script = sub;
		else if (strcmp(t0, "npm") != 0)
			script = sub; /* yarn build, pnpm deploy */
		if (!script)
			return P_NONE;
		if (strstr(script, "deploy") || strstr(script, "release")) {
			deploy_target(script, x, sizeof(x));
			if (strstr(script, "release") && !strstr(script, "deploy"))
				snprintf(x, sizeof(x), "%s", script);
			set_key(cl, "capability", "deploy", x, NULL);
			CLS("capability", "Deploying (%s) works from this machine", x);
			snprintf(cl->body, sizeof(cl->body), "Deploying to %s works from this machine: `%s` succeeded.", x, cmd);
			return P_DEPLOY;
		}
		snprintf(y, sizeof(y), "%s%s%s", t0, strcmp(sub, script) ? "-run-" : "-", script);
		if (!strcmp(script, "t"))
			snprintf(y, sizeof(y), "%s-test", t0);
		if (strstr(script, "test") || strstr(script, "e2e") || !strcmp(script, "t")) {
			set_key(cl, "procedure", "test", y, NULL);
			CLS("procedure", "Tests pass with `%s`", cmd);
			snprintf(cl->body, sizeof(cl->body), "Run the tests with `%s`", cmd);
			return P_BUILD;
		}
		if (contains_any(script, "build dist package compile bundle")) {
			set_key(cl, "procedure", "build", y, NULL);
			CLS("procedure", "The build works with `%s`", cmd);
			snprintf(cl->body, sizeof(cl->body), "Build with `%s`", cmd);
			return P_BUILD;
		}
		return P_NONE;
	}
	if (!strcmp(t0, "jest") || !strcmp(t0, "vitest") || !strcmp(t0, "mocha") ||
	    (!strcmp(t0, "playwright") && !strcmp(a1, "test")) ||
	    !strcmp(t0, "pytest") || !strcmp(t0, "py.test") || !strcmp(t0, "tox") ||
	    !strcmp(t0, "nox") || !strcmp(t0, "unittest") || !strcmp(t0, "ctest") ||
	    !strcmp(t0, "rspec")) {
		set_key(cl, "procedure", "test", !strcmp(t0, "py.test") ? "pytest" : t0, NULL);
		CLS("procedure", "Tests pass with `%s`", cmd);
		snprintf(cl->body, sizeof(cl->body), "Run the tests with `%s`", cmd);
		return P_BUILD;
	}
	/* ------------------------------------------------------- make */
	if (!strcmp(t0, "make") || !strcmp(t0, "gmake")) {
		const char *tg;
		char targets[KEY_PART_MAX] = "";
		int i, k = 0;

		for (i = 0; (tg = positional(pt, i, " -C -f -j -l -o -W --directory --file --jobs ")); i++) {
			if (is_assignment(tg))
				continue;
			if (strstr(tg, "deploy") || strstr(tg, "publish")) {
				deploy_target(tg, x, sizeof(x));
				if (!strcmp(x, "default") && strstr(tg, "publish"))
					snprintf(x, sizeof(x), "%s", tg);
				set_key(cl, "capability", "deploy", x, NULL);
				CLS("capability", "Deploying (%s) works from this machine", x);
				snprintf(cl->body, sizeof(cl->body), "Deploying to %s works from this machine: `%s` succeeded.", x, cmd);
				return P_DEPLOY;
			}
			if (contains_any(tg, "clean fmt format lint help tidy install uninstall run serve watch start dev print- docs"))
				return P_NONE;
			if (k++ < 3) {
				size_t l = strlen(targets);
				snprintf(targets + l, sizeof(targets) - l, "-%s", tg);
			}
		}
		snprintf(y, sizeof(y), "make%s", targets);
		if (strstr(targets, "test") || strstr(targets, "check")) {
			set_key(cl, "procedure", "test", y, NULL);
			CLS("procedure", "Tests pass with `%s`", cmd);
			snprintf(cl->body, sizeof(cl->body), "Run the tests with `%s`", cmd);
		} else {
			set_key(cl, "procedure", "build", y, NULL);
			CLS("procedure", "The build works with `%s`", cmd);
			snprintf(cl->body, sizeof(cl->body), "Build with `%s`", cmd);
		}
		return P_BUILD;
	}
	/* --------------------------------------- cargo, go, mvn, gradle, ... */
	if (!strcmp(t0, "cargo") || !strcmp(t0, "go") || !strcmp(t0, "mvn") ||
	    !strcmp(t0, "gradle") || !strcmp(t0, "gradlew") || !strcmp(t0, "dotnet") ||
	    !strcmp(t0, "meson") || !strcmp(t0, "swift")) {
		const char *sub = positional(pt, 0, " -p --package -C --project ");

		if (!strcmp(t0, "mvn") || !strcmp(t0, "gradle") || !strcmp(t0, "gradlew")) {
			/* several goals ("clean package"): the one that says most */
			const char *g;
			int i, best = 0;

			for (i = 0; (g = positional(pt, i, " -f -s -P -pl --file --settings ")); i++) {
				int r = (!strcmp(g, "deploy") || !strcmp(g, "publish")) ? 3 :
					(!strcmp(g, "package") || !strcmp(g, "install") ||
					 !strcmp(g, "build") || !strcmp(g, "assemble") ||
					 !strcmp(g, "compile")) ? 2 :
					(!strcmp(g, "test") || !strcmp(g, "verify") ||
					 !strcmp(g, "check")) ? 1 : 0;

				if (r > best) {
					best = r;
					sub = g;
				}
			}
		}
		if (!sub)
			return P_NONE;
		if (!strcmp(sub, "publish") && (!strcmp(t0, "cargo") || !strcmp(t0, "gradle") || !strcmp(t0, "gradlew"))) {
			const char *reg = !strcmp(t0, "cargo") ? "crates.io" : "maven";
			set_key(cl, "capability", "publish", reg, NULL);
			CLS("capability", "Publishing to %s works from this machine", reg);
			snprintf(cl->body, sizeof(cl->body), "Publishing to %s works from this machine: `%s` succeeded.", reg, cmd);
			return P_DEPLOY;
		}
		if (!strcmp(t0, "mvn") && !strcmp(sub, "deploy")) {
			set_key(cl, "capability", "publish", "maven", NULL);
			CLS("capability", "Publishing to the Maven repository works from this machine");
			snprintf(cl->body, sizeof(cl->body), "Publishing to the Maven repository works from this machine: `%s` succeeded.", cmd);
			return P_DEPLOY;
		}
		snprintf(y, sizeof(y), "%s-%s", !strcmp(t0, "gradlew") ? "gradle" : t0, sub);
		if (!strcmp(sub, "test") || !strcmp(sub, "verify") || !strcmp(sub, "check")) {
			set_key(cl, "procedure", "test", y, NULL);
			CLS("procedure", "Tests pass with `%s`", cmd);
			snprintf(cl->body, sizeof(cl->body), "Run the tests with `%s`", cmd);
			return P_BUILD;
		}
		if (!strcmp(sub, "build") || !strcmp(sub, "package") || !strcmp(sub, "compile") ||
		    !strcmp(sub, "assemble") || (!strcmp(t0, "dotnet") && !strcmp(sub, "publish")) ||
		    (!strcmp(t0, "mvn") && !strcmp(sub, "install"))) {
			set_key(cl, "procedure", "build", y, NULL);
			CLS("procedure", "The build works with `%s`", cmd);
			snprintf(cl->body, sizeof(cl->body), "Build with `%s`", cmd);
			return P_BUILD;
		}
		if ((!strcmp(t0, "go") && !strcmp(sub, "mod")) || !strcmp(sub, "fetch") ||
		    !strcmp(sub, "restore") || (!strcmp(t0, "meson") && !strcmp(sub, "setup")))
			goto setup;
		return P_NONE;
	}
	if (!strcmp(t0, "cmake")) {
		if (has_word(pt, "--build")) {
			set_key(cl, "procedure", "build", "cmake-build", NULL);
			CLS("procedure", "The build works with `%s`", cmd);
			snprintf(cl->body, sizeof(cl->body), "Build with `%s`", cmd);
			return P_BUILD;
		}
		goto setup;
	}
	if (!strcmp(t0, "ninja")) {
		set_key(cl, "procedure", "build", "ninja", NULL);
		CLS("procedure", "The build works with `%s`", cmd);
		snprintf(cl->body, sizeof(cl->body), "Build with `%s`", cmd);
		return P_BUILD;
	}
	if (!strcmp(t0, "build") || (!strcmp(t0, "setup.py") && (!strcmp(a1, "sdist") || !strcmp(a1, "bdist_wheel") || !strcmp(a1, "build")))) {
		set_key(cl, "procedure", "build", "python-build", NULL);
		CLS("procedure", "The Python package builds with `%s`", cmd);
		snprintf(cl->body, sizeof(cl->body), "Build the Python package with `%s`", cmd);
		return P_BUILD;
	}
	if (!strcmp(t0, "configure") || !strcmp(t0, "pip") || !strcmp(t0, "pip3") ||
	    (!strcmp(t0, "poetry") && !strcmp(a1, "install")) ||
	    (!strcmp(t0, "uv") && (!strcmp(a1, "sync") || !strcmp(a1, "pip"))) ||
	    (!strcmp(t0, "bundle") && !strcmp(a1, "install")) ||
	    (!strcmp(t0, "composer") && !strcmp(a1, "install")))
		goto setup;
	if (!strcmp(t0, "twine") && !strcmp(a1, "upload")) {
		set_key(cl, "capability", "publish", "pypi", NULL);
		CLS("capability", "Publishing to PyPI works from this machine");
		snprintf(cl->body, sizeof(cl->body), "Uploading packages to PyPI works from this machine: `%s` succeeded.", cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "poetry") && !strcmp(a1, "publish")) {
		set_key(cl, "capability", "publish", "pypi", NULL);
		CLS("capability", "Publishing to PyPI works from this machine");
		snprintf(cl->body, sizeof(cl->body), "Uploading packages to PyPI works from this machine: `%s` succeeded.", cmd);
		return P_DEPLOY;
	}
	/* ------------------------------------------------------- docker */
	if (!strcmp(t0, "docker") || !strcmp(t0, "podman")) {
		if (!strcmp(a1, "push")) {
			const char *img = positional(pt, 1, NULL);
			size_t n;

			if (!img)
				return P_NONE;
			n = strlen(img);
			/* drop the tag (a ':' after the last '/') and digest */
			{
				const char *slash = strrchr(img, '/');
				const char *colon = strrchr(img, ':');
				const char *atd = strchr(img, '@');

				if (atd)
					n = (size_t)(atd - img);
				else if (colon && (!slash || colon > slash))
					n = (size_t)(colon - img);
			}
			snprintf(x, sizeof(x), "%.*s", (int)(n < sizeof(x) - 1 ? n : sizeof(x) - 1), img);
			set_key(cl, "capability", "publish", "docker", x, NULL);
			CLS("capability", "Pushing images to %s works from this machine", x);
			snprintf(cl->body, sizeof(cl->body), "Pushing container images to %s works from this machine: `%s` succeeded.", x, cmd);
			return P_DEPLOY;
		}
		if (!strcmp(a1, "login")) {
			const char *reg = positional(pt, 1, " -u --username -p --password ");
			set_key(cl, "capability", "docker", "registry", reg ? reg : "docker.io", NULL);
			CLS("capability", "Docker is logged in to %s on this machine", reg ? reg : "docker.io");
			snprintf(cl->body, sizeof(cl->body), "Docker is logged in to the registry %s on this machine: `%s` succeeded.", reg ? reg : "docker.io", cmd);
			return P_ACCESS;
		}
		if (!strcmp(a1, "build") || (!strcmp(a1, "buildx") && !strcmp(a2, "build"))) {
			v = opt_value(pt, "-t");
			if (!v)
				v = opt_value(pt, "--tag");
			snprintf(x, sizeof(x), "%.*s", (int)strcspn(v ? v : "image", ":@"), v ? v : "image");
			set_key(cl, "procedure", "build", "docker", x, NULL);
			CLS("procedure", "The image %s builds with `%s`", x, cmd);
			snprintf(cl->body, sizeof(cl->body), "Build the container image with `%s`", cmd);
			return P_BUILD;
		}
		return P_NONE;
	}
	/* ------------------------------------------------- kubernetes */
	if (!strcmp(t0, "kubectl") || !strcmp(t0, "helm")) {
		const char *ctx = opt_value(pt, "--context");
		static const char vo[] = " -n --namespace --context --kubeconfig -f --filename -l -o ";
		const char *sub = positional(pt, 0, vo);

		if (!ctx)
			ctx = opt_value(pt, "--kube-context");
		if (!ctx)
			ctx = "current";
		if (!sub)
			return P_NONE;
		if (!strcmp(t0, "helm") && (!strcmp(sub, "upgrade") || !strcmp(sub, "install"))) {
			const char *rel = positional(pt, 1, vo);
			set_key(cl, "capability", "deploy", "helm", rel ? rel : "default", NULL);
			CLS("capability", "Deploying the Helm release %s works from this machine", rel ? rel : "");
			snprintf(cl->body, sizeof(cl->body), "Deploying the Helm release %s to Kubernetes (context %s) works from this machine: `%s` succeeded.", rel ? rel : "(unnamed)", ctx, cmd);
			return P_DEPLOY;
		}
		if (!strcmp(t0, "helm"))
			return P_NONE;
		if (!strcmp(sub, "apply") || !strcmp(sub, "rollout") || !strcmp(sub, "set") ||
		    !strcmp(sub, "create") || !strcmp(sub, "replace") || !strcmp(sub, "patch") ||
		    !strcmp(sub, "scale")) {
			if (!strcmp(sub, "rollout") && strcmp(positional(pt, 1, vo) ? positional(pt, 1, vo) : "", "restart") &&
			    strcmp(positional(pt, 1, vo) ? positional(pt, 1, vo) : "", "undo"))
				goto k8s_access; /* rollout status/history: reads */
			set_key(cl, "capability", "deploy", "kubernetes", ctx, NULL);
			CLS("capability", "Deploying to Kubernetes (context %s) works from this machine", ctx);
			snprintf(cl->body, sizeof(cl->body), "Deploying to the Kubernetes cluster of context %s works from this machine: `%s` succeeded.", ctx, cmd);
			return P_DEPLOY;
		}
		if (!strcmp(sub, "get") || !strcmp(sub, "describe") || !strcmp(sub, "logs") ||
		    !strcmp(sub, "top") || !strcmp(sub, "cluster-info")) {
		k8s_access:
			set_key(cl, "capability", "kubernetes", "access", ctx, NULL);
			CLS("capability", "kubectl reaches the cluster (context %s) from this machine", ctx);
			snprintf(cl->body, sizeof(cl->body), "kubectl is authenticated to the Kubernetes cluster of context %s on this machine: `%s` succeeded.", ctx, cmd);
			return P_ACCESS;
		}
		return P_NONE;
	}
	/* ------------------------------------------------ gcloud, azure */
	if (!strcmp(t0, "gcloud")) {
		static const char vo[] = " --project --region --account --format --configuration ";
		const char *g1 = positional(pt, 0, vo), *g2 = positional(pt, 1, vo);
		const char *g3 = positional(pt, 2, vo);

		if (!g1 || !strcmp(g1, "config") || !strcmp(g1, "components") || !strcmp(g1, "info"))
			return P_NONE;
		if (g2 && !strcmp(g2, "deploy") && (!strcmp(g1, "app") || !strcmp(g1, "run") || !strcmp(g1, "functions"))) {
			const char *what = !strcmp(g1, "app") ? "app-engine" : !strcmp(g1, "run") ? "cloud-run" : "cloud-functions";
			const char *svc = strcmp(g1, "app") ? g3 : NULL;
			set_key(cl, "capability", "deploy", what, svc ? svc : "default", NULL);
			CLS("capability", "Deploying to Google %s works from this machine", what);
			snprintf(cl->body, sizeof(cl->body), "Deploying to Google %s%s%s works from this machine: `%s` succeeded.", what, svc ? " service " : "", svc ? svc : "", cmd);
			return P_DEPLOY;
		}
		v = opt_value(pt, "--project");
		set_key(cl, "capability", "gcloud", "auth", NULL);
		CLS("capability", "The gcloud CLI is authenticated on this machine");
		snprintf(cl->body, sizeof(cl->body), "The gcloud CLI is authenticated on this machine%s%s: `%s` succeeded.", v ? ", project " : "", v ? v : "", cmd);
		return P_ACCESS;
	}
	if (!strcmp(t0, "gsutil") && positional(pt, 0, NULL) &&
	    (!strcmp(positional(pt, 0, NULL), "cp") ||
	     !strcmp(positional(pt, 0, NULL), "rsync")) &&
	    pt->n > 2 && !strncmp(pt->w[pt->n - 1], "gs://", 5)) {
		const char *dst = pt->w[pt->n - 1];
		snprintf(x, sizeof(x), "%.*s", (int)strcspn(dst + 5, "/"), dst + 5);
		set_key(cl, "capability", "deploy", "gcs", x, NULL);
		CLS("capability", "Uploading to gs://%s works from this machine", x);
		snprintf(cl->body, sizeof(cl->body), "Deploying to gs://%s works from this machine: `%s` succeeded.", x, cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "az")) {
		if (!strcmp(a1, "login") || (!strcmp(a1, "account") && !strcmp(a2, "show"))) {
			set_key(cl, "capability", "azure", "auth", NULL);
			CLS("capability", "The Azure CLI is authenticated on this machine");
			snprintf(cl->body, sizeof(cl->body), "The Azure CLI is logged in on this machine: `%s` succeeded.", cmd);
			return P_ACCESS;
		}
		if (has_word(pt, "deploy") || has_word(pt, "deployment")) {
			set_key(cl, "capability", "deploy", "azure", a1, NULL);
			CLS("capability", "Deploying to Azure %s works from this machine", a1);
			snprintf(cl->body, sizeof(cl->body), "Deploying to Azure (%s) works from this machine: `%s` succeeded.", a1, cmd);
			return P_DEPLOY;
		}
		return P_NONE;
	}
	/* --------------------------------------------- IaC and PaaS deploys */
	if ((!strcmp(t0, "terraform") || !strcmp(t0, "tofu")) ) {
		const char *sub = positional(pt, 0, NULL);
		v = opt_value(pt, "-chdir");
		if (sub && !strcmp(sub, "apply")) {
			const char *dir = v ? strrchr(v, '/') : NULL;
			dir = dir && dir[1] ? dir + 1 : v;
			set_key(cl, "capability", "deploy", "terraform", dir ? dir : "default", NULL);
			CLS("capability", "terraform apply works from this machine%s%s", dir ? " in " : "", dir ? dir : "");
			snprintf(cl->body, sizeof(cl->body), "Applying the Terraform configuration%s%s works from this machine (its provider credentials are set up): `%s` succeeded.", dir ? " in " : "", dir ? dir : "", cmd);
			return P_DEPLOY;
		}
		if (sub && !strcmp(sub, "init"))
			goto setup;
		return P_NONE;
	}
	if (!strcmp(t0, "pulumi") && !strcmp(a1, "up")) {
		v = opt_value(pt, "--stack");
		if (!v)
			v = opt_value(pt, "-s");
		set_key(cl, "capability", "deploy", "pulumi", v ? v : "default", NULL);
		CLS("capability", "pulumi up works from this machine (stack %s)", v ? v : "default");
		snprintf(cl->body, sizeof(cl->body), "Deploying the Pulumi stack %s works from this machine: `%s` succeeded.", v ? v : "(default)", cmd);
		return P_DEPLOY;
	}
	if ((!strcmp(t0, "fly") || !strcmp(t0, "flyctl"))) {
		if (!strcmp(a1, "deploy")) {
			v = opt_value(pt, "--app");
			if (!v)
				v = opt_value(pt, "-a");
			set_key(cl, "capability", "deploy", "fly", v ? v : "default", NULL);
			CLS("capability", "Deploying to Fly.io%s%s works from this machine", v ? " app " : "", v ? v : "");
			snprintf(cl->body, sizeof(cl->body), "Deploying to Fly.io%s%s works from this machine: `%s` succeeded.", v ? ", app " : "", v ? v : "", cmd);
			return P_DEPLOY;
		}
		if (!strcmp(a1, "auth") && (!strcmp(a2, "whoami") || !strcmp(a2, "login"))) {
			set_key(cl, "capability", "fly", "auth", NULL);
			CLS("capability", "flyctl is logged in on this machine");
			snprintf(cl->body, sizeof(cl->body), "flyctl is logged in to Fly.io on this machine: `%s` succeeded.", cmd);
			return P_ACCESS;
		}
		return P_NONE;
	}
	if (!strcmp(t0, "vercel") || !strcmp(t0, "netlify")) {
		int prod = has_word(pt, "--prod") || has_word(pt, "--production");
		if ((!strcmp(t0, "vercel") && (pt->n == 1 || !strcmp(a1, "deploy") || a1[0] == '-')) ||
		    (!strcmp(t0, "netlify") && !strcmp(a1, "deploy"))) {
			set_key(cl, "capability", "deploy", t0, prod ? "production" : "preview", NULL);
			CLS("capability", "Deploying to %s (%s) works from this machine", t0, prod ? "production" : "preview");
			snprintf(cl->body, sizeof(cl->body), "Deploying to %s %s works from this machine: `%s` succeeded.", t0, prod ? "production" : "preview", cmd);
			return P_DEPLOY;
		}
		return P_NONE;
	}
	if (!strcmp(t0, "wrangler") && !strcmp(a1, "pages") && !strcmp(a2, "deploy")) {
		v = opt_value(pt, "--project-name");
		set_key(cl, "capability", "deploy", "cloudflare-pages", v ? v : "default", NULL);
		CLS("capability", "Deploying to Cloudflare Pages works from this machine");
		snprintf(cl->body, sizeof(cl->body), "Deploying to Cloudflare Pages (project %s) works from this machine: `%s` succeeded.", v ? v : "default", cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "wrangler") && (!strcmp(a1, "deploy") || !strcmp(a1, "publish"))) {
		v = opt_value(pt, "--env");
		set_key(cl, "capability", "deploy", "cloudflare-workers", v ? v : "default", NULL);
		CLS("capability", "Deploying Cloudflare Workers works from this machine");
		snprintf(cl->body, sizeof(cl->body), "Deploying to Cloudflare Workers (%s) works from this machine: `%s` succeeded.", v ? v : "default environment", cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "firebase") && !strcmp(a1, "deploy")) {
		v = opt_value(pt, "--project");
		set_key(cl, "capability", "deploy", "firebase", v ? v : "default", NULL);
		CLS("capability", "Deploying to Firebase works from this machine");
		snprintf(cl->body, sizeof(cl->body), "Deploying to Firebase (%s) works from this machine: `%s` succeeded.", v ? v : "default project", cmd);
		return P_DEPLOY;
	}
	if ((!strcmp(t0, "serverless") || !strcmp(t0, "sls")) && !strcmp(a1, "deploy")) {
		v = opt_value(pt, "--stage");
		set_key(cl, "capability", "deploy", "serverless", v ? v : "default", NULL);
		CLS("capability", "serverless deploy works from this machine");
		snprintf(cl->body, sizeof(cl->body), "Deploying with the Serverless Framework (stage %s) works from this machine: `%s` succeeded.", v ? v : "default", cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "git") && !strcmp(a1, "push") &&
	    (!strcmp(a2, "heroku") || !strcmp(a2, "dokku"))) {
		set_key(cl, "capability", "deploy", a2, NULL);
		CLS("capability", "Deploying to %s with git push works from this machine", a2);
		snprintf(cl->body, sizeof(cl->body), "Deploying to %s works from this machine: `%s` succeeded.", a2, cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "cap") && pt->n == 3 && !strcmp(a2, "deploy")) {
		set_key(cl, "capability", "deploy", a1, NULL);
		CLS("capability", "Deploying (%s) works from this machine", a1);
		snprintf(cl->body, sizeof(cl->body), "Deploying to %s with Capistrano works from this machine: `%s` succeeded.", a1, cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "kamal") && !strcmp(a1, "deploy")) {
		v = opt_value(pt, "-d");
		if (!v)
			v = opt_value(pt, "--destination");
		set_key(cl, "capability", "deploy", "kamal", v ? v : "default", NULL);
		CLS("capability", "Deploying with kamal works from this machine");
		snprintf(cl->body, sizeof(cl->body), "Deploying with kamal (%s) works from this machine: `%s` succeeded.", v ? v : "default destination", cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "wasm-pack") && !strcmp(a1, "build")) {
		set_key(cl, "procedure", "build", "wasm-pack", NULL);
		CLS("procedure", "The WebAssembly build works with `%s`", cmd);
		snprintf(cl->body, sizeof(cl->body), "Build the WebAssembly package with `%s`", cmd);
		return P_BUILD;
	}
	if (!strcmp(t0, "ansible-playbook")) {
		const char *pb = positional(pt, 0, " -i --inventory -l --limit -e --extra-vars -u --user -t --tags ");
		if (!pb)
			return P_NONE;
		snprintf(x, sizeof(x), "%.*s", (int)strcspn(pb, "."), strrchr(pb, '/') ? strrchr(pb, '/') + 1 : pb);
		set_key(cl, "capability", "deploy", "ansible", x, NULL);
		CLS("capability", "The Ansible playbook %s runs from this machine", x);
		snprintf(cl->body, sizeof(cl->body), "Running the Ansible playbook %s against its hosts works from this machine: `%s` succeeded.", pb, cmd);
		return P_DEPLOY;
	}
	/* a deploy script: ./deploy.sh staging, scripts/deploy-prod.sh */
	if (strstr(t0, "deploy") && strstr(t0, ".sh")) {
		const char *arg = positional(pt, 0, NULL);
		deploy_target(t0, x, sizeof(x));
		if (!strcmp(x, "default") && arg)
			snprintf(x, sizeof(x), "%s", arg);
		set_key(cl, "capability", "deploy", x, NULL);
		CLS("capability", "Deploying (%s) works from this machine", x);
		snprintf(cl->body, sizeof(cl->body), "Deploying to %s works from this machine: `%s` succeeded.", x, cmd);
		return P_DEPLOY;
	}
	/* ------------------------------------------------------ ssh, scp */
	if (!strcmp(t0, "ssh")) {
		const char *h = positional(pt, 0, " -p -i -l -o -F -J -L -R -D -b -c -E -e -m -O -Q -S -W -w -B ");
		if (!h || has_word(pt, "-G") || has_word(pt, "-V"))
			return P_NONE;
		host_of(h, x, sizeof(x), NULL, 0);
		set_key(cl, "capability", "ssh", x, NULL);
		CLS("capability", "SSH to %s works from this machine", x);
		snprintf(cl->body, sizeof(cl->body), "SSH access to %s works from this machine (key/credentials set up): `%s` succeeded.", h, cmd);
		return P_ACCESS;
	}
	if (!strcmp(t0, "scp") || !strcmp(t0, "rsync")) {
		int i;
		for (i = pt->n - 1; i > 0; i--) {
			const char *w = pt->w[i];
			const char *colon = strchr(w, ':');
			const char *slash = strchr(w, '/');

			/* host:path (a '/' before the ':' makes it a local path) */
			if (w[0] != '-' && colon && colon > w && !strstr(w, "://") &&
			    (!slash || slash > colon)) {
				char h[KEY_PART_MAX];
				snprintf(h, sizeof(h), "%.*s", (int)(colon - w), w);
				host_of(h, x, sizeof(x), NULL, 0);
				set_key(cl, "capability", "ssh", x, NULL);
				CLS("capability", "SSH to %s works from this machine", x);
				snprintf(cl->body, sizeof(cl->body), "Copying files over SSH to/from %s works from this machine: `%s` succeeded.", x, cmd);
				return P_ACCESS;
			}
		}
		return P_NONE;
	}
	/* ------------------------------------------- database migrations */
	if ((!strcmp(t0, "flyway") || !strcmp(t0, "liquibase"))) {
		const char *sub = positional(pt, 0, NULL);
		int i;

		if (!sub || (strcmp(sub, "migrate") && strcmp(sub, "update") &&
			     strcmp(sub, "info") && strcmp(sub, "validate")))
			return P_NONE;
		for (i = 1; i < pt->n; i++) {
			const char *u = strstr(pt->w[i], "jdbc:");

			if (u) {
				const char *engine = strstr(u, "postgres") ? "postgres" :
						     strstr(u, "mysql") || strstr(u, "mariadb") ? "mysql" :
						     strstr(u, "sqlserver") ? "sqlserver" :
						     strstr(u, "oracle") ? "oracle" : "db";
				char dbn[KEY_PART_MAX];

				host_of(u, x, sizeof(x), dbn, sizeof(dbn));
				if (!x[0])
					snprintf(x, sizeof(x), "localhost");
				set_key(cl, "capability", "db", engine, x, NULL);
				CLS("capability", "Connecting to %s on %s works from this machine (%s %s)", engine, x, t0, sub);
				snprintf(cl->body, sizeof(cl->body), "Connecting to the %s server on %s works from this machine (credentials set up): `%s` succeeded.", engine, x, cmd);
				return P_ACCESS;
			}
		}
		return P_NONE;
	}
	/* ------------------------------------------------------ databases */
	if (!strcmp(t0, "psql") || !strcmp(t0, "mysql") || !strcmp(t0, "mariadb") ||
	    !strcmp(t0, "redis-cli") || !strcmp(t0, "mongosh") || !strcmp(t0, "mongo")) {
		const char *engine = !strcmp(t0, "psql") ? "postgres" :
				     !strcmp(t0, "redis-cli") ? "redis" :
				     (!strcmp(t0, "mongosh") || !strcmp(t0, "mongo")) ? "mongodb" : "mysql";
		char dbn[KEY_PART_MAX] = "";
		const char *h = opt_value(pt, !strcmp(t0, "psql") ? "--host" : "-h");
		int i;

		if (!h)
			h = opt_value(pt, "-h");
		if (!h)
			h = opt_value(pt, "--host");
		if (!strcmp(t0, "psql") && !h && pt->pghost[0])
			h = pt->pghost;
		/* a conninfo string: "host=db.internal port=5432 dbname=erp" */
		for (i = 1; i < pt->n && !h && !strcmp(t0, "psql"); i++) {
			const char *hp = strstr(pt->w[i], "host=");

			if (hp && (hp == pt->w[i] || hp[-1] == ' ')) {
				snprintf(x, sizeof(x), "%.*s", (int)strcspn(hp + 5, " "), hp + 5);
				h = x;
				v = strstr(pt->w[i], "dbname=");
				if (v)
					snprintf(dbn, sizeof(dbn), "%.*s", (int)strcspn(v + 7, " "), v + 7);
			}
		}
		for (i = 1; i < pt->n && !h; i++)
			if (strstr(pt->w[i], "://")) {
				host_of(pt->w[i], x, sizeof(x), dbn, sizeof(dbn));
				h = x;
			}
		if (h && h != x)
			host_of(h, x, sizeof(x), NULL, 0);
		if (!h || !x[0])
			snprintf(x, sizeof(x), "localhost");
		if (!dbn[0]) {
			v = opt_value(pt, "-d");
			if (!v)
				v = opt_value(pt, "--dbname");
			if (!v && strcmp(t0, "psql"))
				v = opt_value(pt, "-D");
			if (v && !strstr(v, "://"))
				snprintf(dbn, sizeof(dbn), "%s", v);
		}
		set_key(cl, "capability", "db", engine, x, NULL);
		CLS("capability", "Connecting to %s on %s works from this machine", engine, x);
		snprintf(cl->body, sizeof(cl->body), "Connecting to the %s server on %s%s%s works from this machine (credentials set up): `%s` succeeded.", engine, x, dbn[0] ? ", database " : "", dbn, cmd);
		return P_ACCESS;
	}
	return P_NONE;
setup:
	snprintf(cl->title, sizeof(cl->title), "%.199s", cmd);
	cl->setup = 1;
	return P_SETUP;
}

static enum prio classify_part(const struct part *pt, struct capture_class *cl)
{
	enum prio p = classify_part0(pt, cl);

	utf8_tail(cl->title);
	utf8_tail(cl->body);
	return p;
}

/* ============================================================ public */

/*
 * Classify every part of a command; the parts before `||` are left out
 * (their success is not shown). Fills up to max classes with a kind, one
 * per key, best first; *setup gets the set-up parts (joined by " && ").
 */
static size_t classify_all(const char *cmd, struct capture_class *out,
			   size_t max, char *setup, size_t setupsize)
{
	struct part *parts;
	struct capture_class cl;
	enum prio pr[CMD_MAX_PARTS];
	size_t n = 0, i;
	int np, k;

	if (setup && setupsize)
		setup[0] = '\0';
	parts = util_calloc(CMD_MAX_PARTS, sizeof(*parts));
	if (!parts)
		return 0;
	np = split_command(cmd, parts, CMD_MAX_PARTS);
	for (k = 0; k < np; k++) {
		enum prio p;

		/* before `||` it may have failed; after it, it ran because
		 * something failed; a background job (`cmd &`) had not
		 * finished */
		if (parts[k].sep == 'o' || (k > 0 && parts[k - 1].sep == 'o') ||
		    parts[k].sep == 'b')
			continue;
		normalise(&parts[k]);
		p = classify_part(&parts[k], &cl);
		if (p == P_SETUP) {
			if (setup && setupsize) {
				size_t l = strlen(setup);
				snprintf(setup + l, setupsize - l, "%s%s", l ? " && " : "", cl.title);
			}
			continue;
		}
		if (p == P_NONE)
			continue;
		for (i = 0; i < n; i++)
			if (!strcmp(out[i].key, cl.key))
				break;
		if (i < n || n == max)
			continue;
		/* insert by priority, stable */
		for (i = n; i > 0 && pr[i - 1] < p; i--) {
			out[i] = out[i - 1];
			pr[i] = pr[i - 1];
		}
		out[i] = cl;
		pr[i] = p;
		n++;
	}
	cairn_free(parts);
	return n;
}

/* Classify a successful command (capture.h). */
int capture_classify(const char *cmd, struct capture_class *cl)
{
	struct capture_class v[4];
	size_t n = classify_all(cmd, v, 4, NULL, 0);

	memset(cl, 0, sizeof(*cl));
	if (n == 0) {
		/* a set-up step alone: not a candidate, but say so */
		char setup[256];

		classify_all(cmd, v, 0, setup, sizeof(setup));
		cl->setup = setup[0] != '\0';
		return 0;
	}
	*cl = v[0];
	return 1;
}

/* Failure text in the output of a command that exited 0 (capture.h). */
int capture_output_failed(const char *out)
{
	static const char *const marks[] = {
		"An error occurred (", "Unable to locate credentials",
		"npm ERR!", "npm error ", "fatal: ", "Permission denied",
		"Connection refused", "Could not resolve host",
		"could not connect to server", "Connection timed out",
		"ExpiredToken", "error: failed to push", "denied: requested access",
		"Error from server", "Traceback (most recent call last)",
		"command not found", "No such file or directory",
		"ERROR: ", "Error: ", "FAILED", "FAILURE", "BUILD FAILED",
		"failed to connect", "Authentication failed", "Access denied",
		"not logged in", "You are not logged", "401 Unauthorized",
		"403 Forbidden", "Could not connect", NULL
	};
	size_t i;

	if (!out)
		return 0;
	for (i = 0; marks[i]; i++)
		if (strstr(out, marks[i]))
			return 1;
	return 0;
}

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
 * fact for a human to approve, not one candidate each (issue 16: a
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
	n = classify_all(cmd, cls, 4, setup, sizeof(setup));
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
		size_t tl = strlen(sv[i].text);

		if (tl > 140) {
			tl = 140;
			while (tl > 0 && ((unsigned char)sv[i].text[tl] & 0xC0) == 0x80)
				tl--;
		}
		snprintf(title, sizeof(title), "%.*s%s", (int)tl, sv[i].text,
			 tl < strlen(sv[i].text) ? "…" : "");
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
	sqlite3_stmt *st = NULL;
	struct secret_hit hit;
	char now[32];
	int src;

	if (secret_scan(proof, strlen(proof), &hit, 1) > 0) {
		char m[256];

		secret_describe(&hit, "the proof", m, sizeof(m));
		return store_error(db, CAIRN_SECRET, "%s", m);
	}
	util_now_iso(now, sizeof(now));
	src = sqlite3_prepare_v2(db->sql,
				 "UPDATE main.records SET proof = ?2, updated = ?3 "
				 "WHERE id = ?1 AND status = 'candidate'",
				 -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "adding proof");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, proof, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, now, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "adding proof");
	return CAIRN_OK;
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

/* Run capture and reflection on one transcript (capture.h). */
int capture_transcript(cairn_db *db, const char *path,
		       const struct capture_opts *o, struct capture_stats *st,
		       char *err, size_t errsize)
{
	static const struct capture_opts none;
	struct walk *wk = NULL;
	struct ingest_reader *rd = NULL;
	struct sbuf line = SBUF_INIT;
	char *stem = NULL;
	FILE *f = NULL;
	long lineno = 0;
	int rc = CAIRN_OK, got, toolong, in_batch = 0;
	size_t i;
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
	for (;;) {
		struct json *j = NULL;
		const char *s, *type;
		size_t len;

		if (o->deadline_ms > 0 && lineno % DEADLINE_EVERY == 0 &&
		    util_now_ms() > o->deadline_ms) {
			st->timed_out = 1;
			break;
		}
		got = ingest_read_line(rd, &line, &toolong);
		if (got < 0) {
			snprintf(err, errsize, "cannot read '%s': %s", path, strerror(errno));
			rc = CAIRN_IO;
			goto out;
		}
		if (got == 0)
			break;
		lineno++;
		if (line.err) {
			rc = CAIRN_NOMEM;
			goto out;
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
		st->lines++;
		if (json_parse(s, len, &j, NULL, 0) != CAIRN_OK || j->type != JSON_OBJECT) {
			json_free(j);
			st->malformed++;
			continue;
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
		if (wk->nomem) {
			rc = CAIRN_NOMEM;
			goto out;
		}
	}
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
	/* write (or, dry run, look up) every candidate, one batch */
	if (db && !o->dry_run) {
		rc = cairn_begin(db);
		if (rc) {
			snprintf(err, errsize, "%s", cairn_errmsg(db));
			goto out;
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
			goto out;
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
			cc.path = path;
			cc.line = c->line;
			cc.action = action;
			cc.id = id;
			o->emit(o->user, &cc);
		}
		cairn_free(id);
	}
	if (in_batch) {
		in_batch = 0;
		rc = cairn_commit(db);
		if (rc)
			snprintf(err, errsize, "%s", cairn_errmsg(db));
	}
out:
	if (in_batch)
		cairn_rollback(db);
	if (rc == CAIRN_NOMEM && err && errsize && !err[0])
		snprintf(err, errsize, "out of memory");
	if (wk) {
		for (i = 0; i < wk->nc; i++)
			cand_free(&wk->c[i]);
		cairn_free(wk->c);
		for (i = 0; i < wk->npending; i++)
			cairn_free(wk->pending[i].cmd);
		cairn_free(wk);
	}
	sbuf_release(&line);
	cairn_free(rd);
	cairn_free(stem);
	fclose(f);
	return rc;
}
