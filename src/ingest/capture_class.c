/*
 * capture_class.c -- the shell command classifier of auto-capture: what
 * the success of one command proves.
 *
 * Layer: under capture.c (which feeds it the redacted commands of a
 * transcript, through capture_int.h); sits only on internal.h. No store, no
 * I/O, no global state: a pure function of the command text.
 *
 * Holds: the command splitter (parts at unquoted && || ; | & and newlines,
 * words with quotes removed), the normaliser (redirections, NAME=value
 * assignments and wrappers such as sudo, timeout N, npx, python -m, poetry
 * run dropped, so that w[0] is the tool), the key builder, and the tool
 * family table: each family (aws, gh, npm, make, cargo/go/mvn, docker,
 * kubectl, gcloud, terraform, ssh, psql, ...) has one small rule that tells
 * what its success proves -- auth, deploy, publish, a database or SSH
 * connection -> capability; a build or test run -> procedure; an install or
 * configure -> a set-up step. Also the output failure check
 * (capture_output_failed).
 *
 * Must never: read past a part's fixed buffers (CMD_MAX_WORDS words,
 * CMD_WORDBUF bytes, CMD_MAX_PARTS parts: the rest is dropped), count a part
 * before or after `||` or a background job (`cmd &`) as proven, treat
 * --help, --version or --dry-run as a success, or put anything but
 * [a-z0-9._@/-] in a key (a REDACTED component becomes "unknown").
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "capture_int.h"
#include "internal.h"

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

/* What a part proves, least to most; a part's best one ranks its class. */
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

/* What every family rule reads: the part, its first words, its text. */
struct cls_in {
	const struct part *pt;
	const char *t0, *a1, *a2; /* the tool and the next two words, or "" */
	char cmd[300];            /* the part again, words joined, for bodies */
};

/* cl's kind and title; the body starts as the title (the rule sets it). */
static void cls_title(struct capture_class *cl, const char *kind,
		      const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cls_title(struct capture_class *cl, const char *kind,
		      const char *fmt, ...)
{
	char t[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t, sizeof(t), fmt, ap);
	va_end(ap);
	set_cls(cl, kind, t, t);
}

static void cls_body(struct capture_class *cl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void cls_body(struct capture_class *cl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cl->body, sizeof(cl->body), fmt, ap);
	va_end(ap);
}

/* A test run: procedure test:<name>. */
static enum prio proc_test(const struct cls_in *in, struct capture_class *cl,
			   const char *name)
{
	set_key(cl, "procedure", "test", name, NULL);
	cls_title(cl, "procedure", "Tests pass with `%s`", in->cmd);
	cls_body(cl, "Run the tests with `%s`", in->cmd);
	return P_BUILD;
}

/* A build: procedure build:<name>. */
static enum prio proc_build(const struct cls_in *in, struct capture_class *cl,
			    const char *name)
{
	set_key(cl, "procedure", "build", name, NULL);
	cls_title(cl, "procedure", "The build works with `%s`", in->cmd);
	cls_body(cl, "Build with `%s`", in->cmd);
	return P_BUILD;
}

/* A deploy named by its script or target: capability deploy:<x>. */
static enum prio cap_deploy(const struct cls_in *in, struct capture_class *cl,
			    const char *x)
{
	set_key(cl, "capability", "deploy", x, NULL);
	cls_title(cl, "capability", "Deploying (%s) works from this machine", x);
	cls_body(cl, "Deploying to %s works from this machine: `%s` succeeded.", x, in->cmd);
	return P_DEPLOY;
}

/* An upload to PyPI (twine, poetry). */
static enum prio cap_pypi(const struct cls_in *in, struct capture_class *cl)
{
	set_key(cl, "capability", "publish", "pypi", NULL);
	cls_title(cl, "capability", "Publishing to PyPI works from this machine");
	cls_body(cl, "Uploading packages to PyPI works from this machine: `%s` succeeded.", in->cmd);
	return P_DEPLOY;
}

/* ------------------------------------------------------------ aws */
static enum prio fam_aws(const struct cls_in *in, struct capture_class *cl)
{
	static const char vo[] = " --profile --region --output --query "
		"--endpoint-url --color --acl --exclude --include "
		"--storage-class --cache-control --content-type --sse "
		"--expires --metadata-directive --grants --source-region ";
	const struct part *pt = in->pt;
	const char *svc = positional(pt, 0, vo), *op = positional(pt, 1, vo);
	const char *prof = opt_value(pt, "--profile");
	const char *v;
	char x[KEY_PART_MAX];
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
			cls_title(cl, "capability", "Uploading to s3://%s works from this machine", x);
			cls_body(cl, "Deploying to s3://%s works from this machine (AWS profile %s): `%s` succeeded.", x, prof, in->cmd);
			return P_DEPLOY;
		}
	}
	if (!strcmp(svc, "cloudfront") && op && !strcmp(op, "create-invalidation")) {
		v = opt_value(pt, "--distribution-id");
		set_key(cl, "capability", "deploy", "cloudfront", v ? v : "default", NULL);
		cls_title(cl, "capability", "CloudFront invalidation works from this machine");
		cls_body(cl, "Invalidating CloudFront distribution %s works from this machine (AWS profile %s): `%s` succeeded.", v ? v : "(default)", prof, in->cmd);
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
		cls_title(cl, "capability", "Deploying %s %s works from this machine", svc, v ? v : "");
		cls_body(cl, "Deploying to AWS %s (%s) works from this machine (AWS profile %s): `%s` succeeded.", svc, v ? v : "default", prof, in->cmd);
		return P_DEPLOY;
	}
	/* any other successful call proves the credentials */
	set_key(cl, "capability", "aws", "auth", prof, NULL);
	cls_title(cl, "capability", "AWS credentials work on this machine (profile %s)", prof);
	cls_body(cl, "The AWS CLI is authenticated on this machine with profile %s: `%s` succeeded.", prof, in->cmd);
	return P_ACCESS;
}

/* ------------------------------------------------------------- gh */
static enum prio fam_gh(const struct cls_in *in, struct capture_class *cl)
{
	const char *a1 = in->a1, *a2 = in->a2, *v;

	if (!strcmp(a1, "release") && !strcmp(a2, "create")) {
		v = opt_value(in->pt, "--repo");
		if (!v)
			v = opt_value(in->pt, "-R");
		set_key(cl, "capability", "publish", "github-release", v ? v : "default", NULL);
		cls_title(cl, "capability", "Publishing GitHub releases works from this machine");
		cls_body(cl, "Creating GitHub releases%s%s works from this machine: `%s` succeeded.", v ? " in " : "", v ? v : "", in->cmd);
		return P_DEPLOY;
	}
	if ((!strcmp(a1, "auth") && (!strcmp(a2, "status") || !strcmp(a2, "login"))) ||
	    (!strcmp(a1, "pr") && (!strcmp(a2, "create") || !strcmp(a2, "merge"))) ||
	    (!strcmp(a1, "workflow") && !strcmp(a2, "run")) || !strcmp(a1, "api")) {
		v = opt_value(in->pt, "--hostname");
		set_key(cl, "capability", "github", "auth", v ? v : "github.com", NULL);
		cls_title(cl, "capability", "The GitHub CLI is authenticated on this machine");
		cls_body(cl, "The GitHub CLI (gh) is logged in to %s on this machine: `%s` succeeded.", v ? v : "github.com", in->cmd);
		return P_ACCESS;
	}
	return P_NONE;
}

/* ---------------------------------------------- npm, yarn, pnpm, bun */
static enum prio fam_npm(const struct cls_in *in, struct capture_class *cl)
{
	static const char vo[] = " --prefix -C --workspace -w --filter ";
	const char *t0 = in->t0;
	const char *sub = positional(in->pt, 0, vo);
	const char *script = NULL;
	char x[KEY_PART_MAX], y[KEY_PART_MAX];

	if (!sub)
		return !strcmp(t0, "yarn") ? P_SETUP : P_NONE; /* plain `yarn` installs */
	if (!strcmp(sub, "publish")) {
		set_key(cl, "capability", "publish", "npm", "default", NULL);
		cls_title(cl, "capability", "Publishing to the npm registry works from this machine");
		cls_body(cl, "Publishing packages to the npm registry works from this machine: `%s` succeeded.", in->cmd);
		return P_DEPLOY;
	}
	if (!strcmp(sub, "ci") || !strcmp(sub, "install") || !strcmp(sub, "i") ||
	    !strcmp(sub, "add"))
		return P_SETUP;
	if (!strcmp(sub, "run") || !strcmp(sub, "run-script"))
		script = positional(in->pt, 1, vo);
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
		return cap_deploy(in, cl, x);
	}
	snprintf(y, sizeof(y), "%s%s%s", t0, strcmp(sub, script) ? "-run-" : "-", script);
	if (!strcmp(script, "t"))
		snprintf(y, sizeof(y), "%s-test", t0);
	if (strstr(script, "test") || strstr(script, "e2e") || !strcmp(script, "t"))
		return proc_test(in, cl, y);
	if (contains_any(script, "build dist package compile bundle"))
		return proc_build(in, cl, y);
	return P_NONE;
}

/* ------------------------------------------- test runners run alone */
static enum prio fam_tests(const struct cls_in *in, struct capture_class *cl)
{
	if (!strcmp(in->t0, "playwright") && strcmp(in->a1, "test"))
		return P_NONE;
	return proc_test(in, cl, !strcmp(in->t0, "py.test") ? "pytest" : in->t0);
}

/* ----------------------------------------------------------- make */
static enum prio fam_make(const struct cls_in *in, struct capture_class *cl)
{
	const char *tg;
	char targets[KEY_PART_MAX] = "", x[KEY_PART_MAX], y[KEY_PART_MAX];
	int i, k = 0;

	for (i = 0; (tg = positional(in->pt, i, " -C -f -j -l -o -W --directory --file --jobs ")); i++) {
		if (is_assignment(tg))
			continue;
		if (strstr(tg, "deploy") || strstr(tg, "publish")) {
			deploy_target(tg, x, sizeof(x));
			if (!strcmp(x, "default") && strstr(tg, "publish"))
				snprintf(x, sizeof(x), "%s", tg);
			return cap_deploy(in, cl, x);
		}
		if (contains_any(tg, "clean fmt format lint help tidy install uninstall run serve watch start dev print- docs"))
			return P_NONE;
		if (k++ < 3) {
			size_t l = strlen(targets);
			snprintf(targets + l, sizeof(targets) - l, "-%s", tg);
		}
	}
	snprintf(y, sizeof(y), "make%s", targets);
	if (strstr(targets, "test") || strstr(targets, "check"))
		return proc_test(in, cl, y);
	return proc_build(in, cl, y);
}

/* ------------------------------------------ mvn, gradle: the goals */

/* Of several goals ("clean package"), the one that says most, or NULL. */
static const char *jvm_goal(const struct part *pt)
{
	const char *g, *sub = NULL;
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
	return sub;
}

/* ---------------------------------- cargo, go, mvn, gradle, dotnet, ... */
static enum prio fam_lang(const struct cls_in *in, struct capture_class *cl)
{
	const char *t0 = in->t0;
	const char *sub = positional(in->pt, 0, " -p --package -C --project ");
	char y[KEY_PART_MAX];

	if (!strcmp(t0, "mvn") || !strcmp(t0, "gradle") || !strcmp(t0, "gradlew")) {
		const char *g = jvm_goal(in->pt);

		if (g)
			sub = g;
	}
	if (!sub)
		return P_NONE;
	if (!strcmp(sub, "publish") && (!strcmp(t0, "cargo") || !strcmp(t0, "gradle") || !strcmp(t0, "gradlew"))) {
		const char *reg = !strcmp(t0, "cargo") ? "crates.io" : "maven";
		set_key(cl, "capability", "publish", reg, NULL);
		cls_title(cl, "capability", "Publishing to %s works from this machine", reg);
		cls_body(cl, "Publishing to %s works from this machine: `%s` succeeded.", reg, in->cmd);
		return P_DEPLOY;
	}
	if (!strcmp(t0, "mvn") && !strcmp(sub, "deploy")) {
		set_key(cl, "capability", "publish", "maven", NULL);
		cls_title(cl, "capability", "Publishing to the Maven repository works from this machine");
		cls_body(cl, "Publishing to the Maven repository works from this machine: `%s` succeeded.", in->cmd);
		return P_DEPLOY;
	}
	snprintf(y, sizeof(y), "%s-%s", !strcmp(t0, "gradlew") ? "gradle" : t0, sub);
	if (!strcmp(sub, "test") || !strcmp(sub, "verify") || !strcmp(sub, "check"))
		return proc_test(in, cl, y);
	if (!strcmp(sub, "build") || !strcmp(sub, "package") || !strcmp(sub, "compile") ||
	    !strcmp(sub, "assemble") || (!strcmp(t0, "dotnet") && !strcmp(sub, "publish")) ||
	    (!strcmp(t0, "mvn") && !strcmp(sub, "install")))
		return proc_build(in, cl, y);
	if ((!strcmp(t0, "go") && !strcmp(sub, "mod")) || !strcmp(sub, "fetch") ||
	    !strcmp(sub, "restore") || (!strcmp(t0, "meson") && !strcmp(sub, "setup")))
		return P_SETUP;
	return P_NONE;
}

/* ---------------------------------------------------- cmake, ninja */
static enum prio fam_cmake(const struct cls_in *in, struct capture_class *cl)
{
	if (has_word(in->pt, "--build"))
		return proc_build(in, cl, "cmake-build");
	return P_SETUP;
}

static enum prio fam_ninja(const struct cls_in *in, struct capture_class *cl)
{
	return proc_build(in, cl, "ninja");
}

/* ---------------------------------------------------------- Python */
static enum prio fam_pybuild(const struct cls_in *in, struct capture_class *cl)
{
	const char *a1 = in->a1;

	if (strcmp(in->t0, "build") &&
	    strcmp(a1, "sdist") && strcmp(a1, "bdist_wheel") && strcmp(a1, "build"))
		return P_NONE; /* setup.py, not a build */
	set_key(cl, "procedure", "build", "python-build", NULL);
	cls_title(cl, "procedure", "The Python package builds with `%s`", in->cmd);
	cls_body(cl, "Build the Python package with `%s`", in->cmd);
	return P_BUILD;
}

/* configure, pip, uv sync, bundle install, composer install: set-up */
static enum prio fam_install(const struct cls_in *in, struct capture_class *cl)
{
	const char *t0 = in->t0, *a1 = in->a1;

	if (!strcmp(t0, "configure") || !strcmp(t0, "pip") || !strcmp(t0, "pip3") ||
	    (!strcmp(t0, "uv") && (!strcmp(a1, "sync") || !strcmp(a1, "pip"))) ||
	    (!strcmp(t0, "bundle") && !strcmp(a1, "install")) ||
	    (!strcmp(t0, "composer") && !strcmp(a1, "install")))
		return P_SETUP;
	return P_NONE;
}

static enum prio fam_poetry(const struct cls_in *in, struct capture_class *cl)
{
	if (!strcmp(in->a1, "install"))
		return P_SETUP;
	if (!strcmp(in->a1, "publish"))
		return cap_pypi(in, cl);
	return P_NONE;
}

static enum prio fam_twine(const struct cls_in *in, struct capture_class *cl)
{
	return !strcmp(in->a1, "upload") ? cap_pypi(in, cl) : P_NONE;
}

/* --------------------------------------------------- docker, podman */

/* The image name of "registry/name:tag@digest" without tag and digest. */
static void image_name(const char *img, char *out, size_t size)
{
	size_t n = strlen(img);
	const char *slash = strrchr(img, '/');
	const char *colon = strrchr(img, ':');
	const char *atd = strchr(img, '@');

	/* the tag is a ':' after the last '/' */
	if (atd)
		n = (size_t)(atd - img);
	else if (colon && (!slash || colon > slash))
		n = (size_t)(colon - img);
	snprintf(out, size, "%.*s", (int)(n < size - 1 ? n : size - 1), img);
}

static enum prio fam_docker(const struct cls_in *in, struct capture_class *cl)
{
	const char *a1 = in->a1, *v;
	char x[KEY_PART_MAX];

	if (!strcmp(a1, "push")) {
		const char *img = positional(in->pt, 1, NULL);

		if (!img)
			return P_NONE;
		image_name(img, x, sizeof(x));
		set_key(cl, "capability", "publish", "docker", x, NULL);
		cls_title(cl, "capability", "Pushing images to %s works from this machine", x);
		cls_body(cl, "Pushing container images to %s works from this machine: `%s` succeeded.", x, in->cmd);
		return P_DEPLOY;
	}
	if (!strcmp(a1, "login")) {
		const char *reg = positional(in->pt, 1, " -u --username -p --password ");
		set_key(cl, "capability", "docker", "registry", reg ? reg : "docker.io", NULL);
		cls_title(cl, "capability", "Docker is logged in to %s on this machine", reg ? reg : "docker.io");
		cls_body(cl, "Docker is logged in to the registry %s on this machine: `%s` succeeded.", reg ? reg : "docker.io", in->cmd);
		return P_ACCESS;
	}
	if (!strcmp(a1, "build") || (!strcmp(a1, "buildx") && !strcmp(in->a2, "build"))) {
		v = opt_value(in->pt, "-t");
		if (!v)
			v = opt_value(in->pt, "--tag");
		snprintf(x, sizeof(x), "%.*s", (int)strcspn(v ? v : "image", ":@"), v ? v : "image");
		set_key(cl, "procedure", "build", "docker", x, NULL);
		cls_title(cl, "procedure", "The image %s builds with `%s`", x, in->cmd);
		cls_body(cl, "Build the container image with `%s`", in->cmd);
		return P_BUILD;
	}
	return P_NONE;
}

/* ---------------------------------------------------- kubectl, helm */
static enum prio fam_kube(const struct cls_in *in, struct capture_class *cl)
{
	static const char vo[] = " -n --namespace --context --kubeconfig -f --filename -l -o ";
	const struct part *pt = in->pt;
	const char *ctx = opt_value(pt, "--context");
	const char *sub = positional(pt, 0, vo);

	if (!ctx)
		ctx = opt_value(pt, "--kube-context");
	if (!ctx)
		ctx = "current";
	if (!sub)
		return P_NONE;
	if (!strcmp(in->t0, "helm")) {
		const char *rel;

		if (strcmp(sub, "upgrade") && strcmp(sub, "install"))
			return P_NONE;
		rel = positional(pt, 1, vo);
		set_key(cl, "capability", "deploy", "helm", rel ? rel : "default", NULL);
		cls_title(cl, "capability", "Deploying the Helm release %s works from this machine", rel ? rel : "");
		cls_body(cl, "Deploying the Helm release %s to Kubernetes (context %s) works from this machine: `%s` succeeded.", rel ? rel : "(unnamed)", ctx, in->cmd);
		return P_DEPLOY;
	}
	if (!strcmp(sub, "apply") || !strcmp(sub, "rollout") || !strcmp(sub, "set") ||
	    !strcmp(sub, "create") || !strcmp(sub, "replace") || !strcmp(sub, "patch") ||
	    !strcmp(sub, "scale")) {
		const char *how = positional(pt, 1, vo);

		/* rollout status/history: reads */
		if (strcmp(sub, "rollout") || !strcmp(how ? how : "", "restart") ||
		    !strcmp(how ? how : "", "undo")) {
			set_key(cl, "capability", "deploy", "kubernetes", ctx, NULL);
			cls_title(cl, "capability", "Deploying to Kubernetes (context %s) works from this machine", ctx);
			cls_body(cl, "Deploying to the Kubernetes cluster of context %s works from this machine: `%s` succeeded.", ctx, in->cmd);
			return P_DEPLOY;
		}
	} else if (strcmp(sub, "get") && strcmp(sub, "describe") && strcmp(sub, "logs") &&
		   strcmp(sub, "top") && strcmp(sub, "cluster-info")) {
		return P_NONE;
	}
	set_key(cl, "capability", "kubernetes", "access", ctx, NULL);
	cls_title(cl, "capability", "kubectl reaches the cluster (context %s) from this machine", ctx);
	cls_body(cl, "kubectl is authenticated to the Kubernetes cluster of context %s on this machine: `%s` succeeded.", ctx, in->cmd);
	return P_ACCESS;
}

/* --------------------------------------------- gcloud, gsutil, az */
static enum prio fam_gcloud(const struct cls_in *in, struct capture_class *cl)
{
	static const char vo[] = " --project --region --account --format --configuration ";
	const struct part *pt = in->pt;
	const char *g1 = positional(pt, 0, vo), *g2 = positional(pt, 1, vo);
	const char *g3 = positional(pt, 2, vo);
	const char *v;

	if (!g1 || !strcmp(g1, "config") || !strcmp(g1, "components") || !strcmp(g1, "info"))
		return P_NONE;
	if (g2 && !strcmp(g2, "deploy") && (!strcmp(g1, "app") || !strcmp(g1, "run") || !strcmp(g1, "functions"))) {
		const char *what = !strcmp(g1, "app") ? "app-engine" : !strcmp(g1, "run") ? "cloud-run" : "cloud-functions";
		const char *svc = strcmp(g1, "app") ? g3 : NULL;
		set_key(cl, "capability", "deploy", what, svc ? svc : "default", NULL);
		cls_title(cl, "capability", "Deploying to Google %s works from this machine", what);
		cls_body(cl, "Deploying to Google %s%s%s works from this machine: `%s` succeeded.", what, svc ? " service " : "", svc ? svc : "", in->cmd);
		return P_DEPLOY;
	}
	v = opt_value(pt, "--project");
	set_key(cl, "capability", "gcloud", "auth", NULL);
	cls_title(cl, "capability", "The gcloud CLI is authenticated on this machine");
	cls_body(cl, "The gcloud CLI is authenticated on this machine%s%s: `%s` succeeded.", v ? ", project " : "", v ? v : "", in->cmd);
	return P_ACCESS;
}

static enum prio fam_gsutil(const struct cls_in *in, struct capture_class *cl)
{
	const struct part *pt = in->pt;
	const char *sub = positional(pt, 0, NULL), *dst;
	char x[KEY_PART_MAX];

	if (!sub || (strcmp(sub, "cp") && strcmp(sub, "rsync")) || pt->n <= 2 ||
	    strncmp(pt->w[pt->n - 1], "gs://", 5))
		return P_NONE;
	dst = pt->w[pt->n - 1];
	snprintf(x, sizeof(x), "%.*s", (int)strcspn(dst + 5, "/"), dst + 5);
	set_key(cl, "capability", "deploy", "gcs", x, NULL);
	cls_title(cl, "capability", "Uploading to gs://%s works from this machine", x);
	cls_body(cl, "Deploying to gs://%s works from this machine: `%s` succeeded.", x, in->cmd);
	return P_DEPLOY;
}

static enum prio fam_az(const struct cls_in *in, struct capture_class *cl)
{
	const char *a1 = in->a1;

	if (!strcmp(a1, "login") || (!strcmp(a1, "account") && !strcmp(in->a2, "show"))) {
		set_key(cl, "capability", "azure", "auth", NULL);
		cls_title(cl, "capability", "The Azure CLI is authenticated on this machine");
		cls_body(cl, "The Azure CLI is logged in on this machine: `%s` succeeded.", in->cmd);
		return P_ACCESS;
	}
	if (has_word(in->pt, "deploy") || has_word(in->pt, "deployment")) {
		set_key(cl, "capability", "deploy", "azure", a1, NULL);
		cls_title(cl, "capability", "Deploying to Azure %s works from this machine", a1);
		cls_body(cl, "Deploying to Azure (%s) works from this machine: `%s` succeeded.", a1, in->cmd);
		return P_DEPLOY;
	}
	return P_NONE;
}

/* ------------------------------------------------ IaC and PaaS deploys */
static enum prio fam_terraform(const struct cls_in *in, struct capture_class *cl)
{
	const char *sub = positional(in->pt, 0, NULL);
	const char *v = opt_value(in->pt, "-chdir");

	if (sub && !strcmp(sub, "apply")) {
		const char *dir = v ? strrchr(v, '/') : NULL;
		dir = dir && dir[1] ? dir + 1 : v;
		set_key(cl, "capability", "deploy", "terraform", dir ? dir : "default", NULL);
		cls_title(cl, "capability", "terraform apply works from this machine%s%s", dir ? " in " : "", dir ? dir : "");
		cls_body(cl, "Applying the Terraform configuration%s%s works from this machine (its provider credentials are set up): `%s` succeeded.", dir ? " in " : "", dir ? dir : "", in->cmd);
		return P_DEPLOY;
	}
	if (sub && !strcmp(sub, "init"))
		return P_SETUP;
	return P_NONE;
}

static enum prio fam_pulumi(const struct cls_in *in, struct capture_class *cl)
{
	const char *v;

	if (strcmp(in->a1, "up"))
		return P_NONE;
	v = opt_value(in->pt, "--stack");
	if (!v)
		v = opt_value(in->pt, "-s");
	set_key(cl, "capability", "deploy", "pulumi", v ? v : "default", NULL);
	cls_title(cl, "capability", "pulumi up works from this machine (stack %s)", v ? v : "default");
	cls_body(cl, "Deploying the Pulumi stack %s works from this machine: `%s` succeeded.", v ? v : "(default)", in->cmd);
	return P_DEPLOY;
}

static enum prio fam_fly(const struct cls_in *in, struct capture_class *cl)
{
	const char *a1 = in->a1, *a2 = in->a2, *v;

	if (!strcmp(a1, "deploy")) {
		v = opt_value(in->pt, "--app");
		if (!v)
			v = opt_value(in->pt, "-a");
		set_key(cl, "capability", "deploy", "fly", v ? v : "default", NULL);
		cls_title(cl, "capability", "Deploying to Fly.io%s%s works from this machine", v ? " app " : "", v ? v : "");
		cls_body(cl, "Deploying to Fly.io%s%s works from this machine: `%s` succeeded.", v ? ", app " : "", v ? v : "", in->cmd);
		return P_DEPLOY;
	}
	if (!strcmp(a1, "auth") && (!strcmp(a2, "whoami") || !strcmp(a2, "login"))) {
		set_key(cl, "capability", "fly", "auth", NULL);
		cls_title(cl, "capability", "flyctl is logged in on this machine");
		cls_body(cl, "flyctl is logged in to Fly.io on this machine: `%s` succeeded.", in->cmd);
		return P_ACCESS;
	}
	return P_NONE;
}

static enum prio fam_vercel(const struct cls_in *in, struct capture_class *cl)
{
	const char *t0 = in->t0, *a1 = in->a1;
	int prod = has_word(in->pt, "--prod") || has_word(in->pt, "--production");
	const char *where = prod ? "production" : "preview";

	if ((!strcmp(t0, "vercel") && (in->pt->n == 1 || !strcmp(a1, "deploy") || a1[0] == '-')) ||
	    (!strcmp(t0, "netlify") && !strcmp(a1, "deploy"))) {
		set_key(cl, "capability", "deploy", t0, where, NULL);
		cls_title(cl, "capability", "Deploying to %s (%s) works from this machine", t0, where);
		cls_body(cl, "Deploying to %s %s works from this machine: `%s` succeeded.", t0, where, in->cmd);
		return P_DEPLOY;
	}
	return P_NONE;
}

static enum prio fam_wrangler(const struct cls_in *in, struct capture_class *cl)
{
	const char *a1 = in->a1, *v;

	if (!strcmp(a1, "pages") && !strcmp(in->a2, "deploy")) {
		v = opt_value(in->pt, "--project-name");
		set_key(cl, "capability", "deploy", "cloudflare-pages", v ? v : "default", NULL);
		cls_title(cl, "capability", "Deploying to Cloudflare Pages works from this machine");
		cls_body(cl, "Deploying to Cloudflare Pages (project %s) works from this machine: `%s` succeeded.", v ? v : "default", in->cmd);
		return P_DEPLOY;
	}
	if (!strcmp(a1, "deploy") || !strcmp(a1, "publish")) {
		v = opt_value(in->pt, "--env");
		set_key(cl, "capability", "deploy", "cloudflare-workers", v ? v : "default", NULL);
		cls_title(cl, "capability", "Deploying Cloudflare Workers works from this machine");
		cls_body(cl, "Deploying to Cloudflare Workers (%s) works from this machine: `%s` succeeded.", v ? v : "default environment", in->cmd);
		return P_DEPLOY;
	}
	return P_NONE;
}

static enum prio fam_firebase(const struct cls_in *in, struct capture_class *cl)
{
	const char *v;

	if (strcmp(in->a1, "deploy"))
		return P_NONE;
	v = opt_value(in->pt, "--project");
	set_key(cl, "capability", "deploy", "firebase", v ? v : "default", NULL);
	cls_title(cl, "capability", "Deploying to Firebase works from this machine");
	cls_body(cl, "Deploying to Firebase (%s) works from this machine: `%s` succeeded.", v ? v : "default project", in->cmd);
	return P_DEPLOY;
}

static enum prio fam_serverless(const struct cls_in *in, struct capture_class *cl)
{
	const char *v;

	if (strcmp(in->a1, "deploy"))
		return P_NONE;
	v = opt_value(in->pt, "--stage");
	set_key(cl, "capability", "deploy", "serverless", v ? v : "default", NULL);
	cls_title(cl, "capability", "serverless deploy works from this machine");
	cls_body(cl, "Deploying with the Serverless Framework (stage %s) works from this machine: `%s` succeeded.", v ? v : "default", in->cmd);
	return P_DEPLOY;
}

/* git push heroku, git push dokku */
static enum prio fam_git(const struct cls_in *in, struct capture_class *cl)
{
	const char *a2 = in->a2;

	if (strcmp(in->a1, "push") || (strcmp(a2, "heroku") && strcmp(a2, "dokku")))
		return P_NONE;
	set_key(cl, "capability", "deploy", a2, NULL);
	cls_title(cl, "capability", "Deploying to %s with git push works from this machine", a2);
	cls_body(cl, "Deploying to %s works from this machine: `%s` succeeded.", a2, in->cmd);
	return P_DEPLOY;
}

/* Capistrano: cap <stage> deploy */
static enum prio fam_cap(const struct cls_in *in, struct capture_class *cl)
{
	if (in->pt->n != 3 || strcmp(in->a2, "deploy"))
		return P_NONE;
	set_key(cl, "capability", "deploy", in->a1, NULL);
	cls_title(cl, "capability", "Deploying (%s) works from this machine", in->a1);
	cls_body(cl, "Deploying to %s with Capistrano works from this machine: `%s` succeeded.", in->a1, in->cmd);
	return P_DEPLOY;
}

static enum prio fam_kamal(const struct cls_in *in, struct capture_class *cl)
{
	const char *v;

	if (strcmp(in->a1, "deploy"))
		return P_NONE;
	v = opt_value(in->pt, "-d");
	if (!v)
		v = opt_value(in->pt, "--destination");
	set_key(cl, "capability", "deploy", "kamal", v ? v : "default", NULL);
	cls_title(cl, "capability", "Deploying with kamal works from this machine");
	cls_body(cl, "Deploying with kamal (%s) works from this machine: `%s` succeeded.", v ? v : "default destination", in->cmd);
	return P_DEPLOY;
}

static enum prio fam_wasm_pack(const struct cls_in *in, struct capture_class *cl)
{
	if (strcmp(in->a1, "build"))
		return P_NONE;
	set_key(cl, "procedure", "build", "wasm-pack", NULL);
	cls_title(cl, "procedure", "The WebAssembly build works with `%s`", in->cmd);
	cls_body(cl, "Build the WebAssembly package with `%s`", in->cmd);
	return P_BUILD;
}

static enum prio fam_ansible(const struct cls_in *in, struct capture_class *cl)
{
	const char *pb = positional(in->pt, 0, " -i --inventory -l --limit -e --extra-vars -u --user -t --tags ");
	char x[KEY_PART_MAX];

	if (!pb)
		return P_NONE;
	snprintf(x, sizeof(x), "%.*s", (int)strcspn(pb, "."), strrchr(pb, '/') ? strrchr(pb, '/') + 1 : pb);
	set_key(cl, "capability", "deploy", "ansible", x, NULL);
	cls_title(cl, "capability", "The Ansible playbook %s runs from this machine", x);
	cls_body(cl, "Running the Ansible playbook %s against its hosts works from this machine: `%s` succeeded.", pb, in->cmd);
	return P_DEPLOY;
}

/* A tool of no family: a deploy script (./deploy.sh staging, deploy-prod.sh). */
static enum prio fam_deploy_script(const struct cls_in *in, struct capture_class *cl)
{
	const char *arg;
	char x[KEY_PART_MAX];

	if (!strstr(in->t0, "deploy") || !strstr(in->t0, ".sh"))
		return P_NONE;
	arg = positional(in->pt, 0, NULL);
	deploy_target(in->t0, x, sizeof(x));
	if (!strcmp(x, "default") && arg)
		snprintf(x, sizeof(x), "%s", arg);
	return cap_deploy(in, cl, x);
}

/* ------------------------------------------------------- ssh, scp */
static enum prio fam_ssh(const struct cls_in *in, struct capture_class *cl)
{
	const char *h = positional(in->pt, 0, " -p -i -l -o -F -J -L -R -D -b -c -E -e -m -O -Q -S -W -w -B ");
	char x[KEY_PART_MAX];

	if (!h || has_word(in->pt, "-G") || has_word(in->pt, "-V"))
		return P_NONE;
	host_of(h, x, sizeof(x), NULL, 0);
	set_key(cl, "capability", "ssh", x, NULL);
	cls_title(cl, "capability", "SSH to %s works from this machine", x);
	cls_body(cl, "SSH access to %s works from this machine (key/credentials set up): `%s` succeeded.", h, in->cmd);
	return P_ACCESS;
}

static enum prio fam_scp(const struct cls_in *in, struct capture_class *cl)
{
	const struct part *pt = in->pt;
	int i;

	for (i = pt->n - 1; i > 0; i--) {
		const char *w = pt->w[i];
		const char *colon = strchr(w, ':');
		const char *slash = strchr(w, '/');

		/* host:path (a '/' before the ':' makes it a local path) */
		if (w[0] != '-' && colon && colon > w && !strstr(w, "://") &&
		    (!slash || slash > colon)) {
			char h[KEY_PART_MAX], x[KEY_PART_MAX];
			snprintf(h, sizeof(h), "%.*s", (int)(colon - w), w);
			host_of(h, x, sizeof(x), NULL, 0);
			set_key(cl, "capability", "ssh", x, NULL);
			cls_title(cl, "capability", "SSH to %s works from this machine", x);
			cls_body(cl, "Copying files over SSH to/from %s works from this machine: `%s` succeeded.", x, in->cmd);
			return P_ACCESS;
		}
	}
	return P_NONE;
}

/* ---------------------------------------------- database migrations */
static enum prio fam_migrate(const struct cls_in *in, struct capture_class *cl)
{
	const struct part *pt = in->pt;
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
			char dbn[KEY_PART_MAX], x[KEY_PART_MAX];

			host_of(u, x, sizeof(x), dbn, sizeof(dbn));
			if (!x[0])
				snprintf(x, sizeof(x), "localhost");
			set_key(cl, "capability", "db", engine, x, NULL);
			cls_title(cl, "capability", "Connecting to %s on %s works from this machine (%s %s)", engine, x, in->t0, sub);
			cls_body(cl, "Connecting to the %s server on %s works from this machine (credentials set up): `%s` succeeded.", engine, x, in->cmd);
			return P_ACCESS;
		}
	}
	return P_NONE;
}

/* ------------------------------------------------------- databases */

/*
 * The server host of a database client into x (a -h/--host option,
 * PGHOST, a conninfo "host=", a URL; "localhost" when none), and the
 * database into dbn when the same place names it.
 */
static void db_target(const struct part *pt, const char *t0, char *x,
		      char *dbn)
{
	const char *h = opt_value(pt, !strcmp(t0, "psql") ? "--host" : "-h");
	const char *v;
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
			snprintf(x, KEY_PART_MAX, "%.*s", (int)strcspn(hp + 5, " "), hp + 5);
			h = x;
			v = strstr(pt->w[i], "dbname=");
			if (v)
				snprintf(dbn, KEY_PART_MAX, "%.*s", (int)strcspn(v + 7, " "), v + 7);
		}
	}
	for (i = 1; i < pt->n && !h; i++)
		if (strstr(pt->w[i], "://")) {
			host_of(pt->w[i], x, KEY_PART_MAX, dbn, KEY_PART_MAX);
			h = x;
		}
	if (h && h != x)
		host_of(h, x, KEY_PART_MAX, NULL, 0);
	if (!h || !x[0])
		snprintf(x, KEY_PART_MAX, "localhost");
}

static enum prio fam_db(const struct cls_in *in, struct capture_class *cl)
{
	const struct part *pt = in->pt;
	const char *t0 = in->t0, *v;
	const char *engine = !strcmp(t0, "psql") ? "postgres" :
			     !strcmp(t0, "redis-cli") ? "redis" :
			     (!strcmp(t0, "mongosh") || !strcmp(t0, "mongo")) ? "mongodb" : "mysql";
	char dbn[KEY_PART_MAX] = "", x[KEY_PART_MAX];

	db_target(pt, t0, x, dbn);
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
	cls_title(cl, "capability", "Connecting to %s on %s works from this machine", engine, x);
	cls_body(cl, "Connecting to the %s server on %s%s%s works from this machine (credentials set up): `%s` succeeded.", engine, x, dbn[0] ? ", database " : "", dbn, in->cmd);
	return P_ACCESS;
}

/* ------------------------------------------------------- the table */

/*
 * The tool families: the names a part's tool (w[0], normalised) is looked
 * up by, and the rule that tells what its success proves. A name is in one
 * family only; a tool in none is tried as a deploy script (the last row).
 * A rule returns P_SETUP for a set-up step (classify_part0 fills it in).
 */
static const struct family {
	const char *tools; /* space-separated names, NULL: any other tool */
	enum prio (*rule)(const struct cls_in *in, struct capture_class *cl);
} families[] = {
	{ "aws", fam_aws },
	{ "gh", fam_gh },
	{ "npm yarn pnpm bun", fam_npm },
	{ "jest vitest mocha playwright pytest py.test tox nox unittest ctest rspec", fam_tests },
	{ "make gmake", fam_make },
	{ "cargo go mvn gradle gradlew dotnet meson swift", fam_lang },
	{ "cmake", fam_cmake },
	{ "ninja", fam_ninja },
	{ "build setup.py", fam_pybuild },
	{ "configure pip pip3 uv bundle composer", fam_install },
	{ "poetry", fam_poetry },
	{ "twine", fam_twine },
	{ "docker podman", fam_docker },
	{ "kubectl helm", fam_kube },
	{ "gcloud", fam_gcloud },
	{ "gsutil", fam_gsutil },
	{ "az", fam_az },
	{ "terraform tofu", fam_terraform },
	{ "pulumi", fam_pulumi },
	{ "fly flyctl", fam_fly },
	{ "vercel netlify", fam_vercel },
	{ "wrangler", fam_wrangler },
	{ "firebase", fam_firebase },
	{ "serverless sls", fam_serverless },
	{ "git", fam_git },
	{ "cap", fam_cap },
	{ "kamal", fam_kamal },
	{ "wasm-pack", fam_wasm_pack },
	{ "ansible-playbook", fam_ansible },
	{ "ssh", fam_ssh },
	{ "scp rsync", fam_scp },
	{ "flyway liquibase", fam_migrate },
	{ "psql mysql mariadb redis-cli mongosh mongo", fam_db },
	{ NULL, fam_deploy_script },
};

/* Is w one of the space-separated names? */
static int name_in(const char *names, const char *w)
{
	size_t n = strlen(w);
	const char *p = names;

	while (n && *p) {
		size_t k = strcspn(p, " ");

		if (k == n && !memcmp(p, w, n))
			return 1;
		p += k;
		while (*p == ' ')
			p++;
	}
	return 0;
}

/* Classify one normalised part: its priority, and cl filled. */
static enum prio classify_part0(const struct part *pt, struct capture_class *cl)
{
	const struct family *f;
	struct cls_in in;
	enum prio p;

	memset(cl, 0, sizeof(*cl));
	if (!pt->n)
		return P_NONE;
	in.pt = pt;
	in.t0 = pt->w[0];
	in.a1 = pt->n > 1 ? pt->w[1] : "";
	in.a2 = pt->n > 2 ? pt->w[2] : "";
	part_text(pt, in.cmd, sizeof(in.cmd));
	/* (-h is a host for psql, mysql, redis-cli: not taken for help) */
	if (has_word(pt, "--help") || has_word(pt, "--version") ||
	    has_word(pt, "help") || has_word(pt, "--dry-run"))
		return P_NONE;
	for (f = families; f->tools && !name_in(f->tools, in.t0); f++)
		;
	p = f->rule(&in, cl);
	if (p == P_SETUP) {
		snprintf(cl->title, sizeof(cl->title), "%.199s", in.cmd);
		cl->setup = 1;
	}
	return p;
}

static enum prio classify_part(const struct part *pt, struct capture_class *cl)
{
	enum prio p = classify_part0(pt, cl);

	utf8_tail(cl->title);
	utf8_tail(cl->body);
	return p;
}

/* ============================================================ public */

/* Classify every part of a command (capture_int.h). */
size_t capture_classify_all(const char *cmd, struct capture_class *out,
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
	size_t n = capture_classify_all(cmd, v, 4, NULL, 0);

	memset(cl, 0, sizeof(*cl));
	if (n == 0) {
		/* a set-up step alone: not a candidate, but say so */
		char setup[256];

		capture_classify_all(cmd, v, 0, setup, sizeof(setup));
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
