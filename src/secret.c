/*
 * secret.c -- the secret filter: hand-written matchers that find credentials
 * in text, so that cairn can refuse (or mask) them before anything is stored.
 *
 * Role: every write path runs secret_scan() over the text it is about to
 * store; a hit refuses the write with CAIRN_SECRET and the message from
 * secret_describe(), unless the caller asked for secret_redact().
 *
 * Must never: log, print or copy the secret bytes (secret_redact() copies
 * only the text around the hits); allocate while scanning; take more than
 * linear time (every look ahead or behind has a fixed bound); abort or read
 * out of bounds on any input (invalid UTF-8, NULs, megabytes).
 *
 * How it works: one left-to-right pass. At each byte the matchers below are
 * tried in order; a hit is reported and the pass resumes after it, so hits
 * come out in order and never overlap. A known token format found as the
 * value of an assignment is reported under its own kind, not the generic one.
 *
 * Kinds. The names are stable: they appear in error messages and in the
 * "[REDACTED:<kind>]" markers. "the hit" is the byte range reported.
 *
 *   kind                     matches; the hit
 *   ------------------------ ------------------------------------------------
 *   aws-access-key-id        AKIA|ASIA|ABIA|ACCA + 16 of [A-Z0-9]; the token
 *   aws-secret-access-key    exactly 40 of [A-Za-z0-9/+] with upper, lower and
 *                            a digit or / or +, on a line that mentions
 *                            "secret" or "aws" or holds an AWS key id before
 *                            it; the 40 bytes
 *   github-token             ghp_ gho_ ghu_ ghs_ ghr_ + 30..255 alnum, or
 *                            github_pat_ + 40..255 of [A-Za-z0-9_]; the token
 *   gitlab-token             glpat- + 20..64 of [A-Za-z0-9_-]; the token
 *   slack-token              xoxb- xoxp- xoxa- xoxr- xoxs- xapp- + 20..255 of
 *                            [A-Za-z0-9-]; the token
 *   slack-webhook            hooks.slack.com/services/ + 30..128 of
 *                            [A-Za-z0-9/]; from "hooks" to the end
 *   stripe-key               sk_live_ sk_test_ rk_live_ rk_test_ + 16..255
 *                            alnum; the token (pk_ keys are public: ignored)
 *   google-api-key           AIza + exactly 35 of [A-Za-z0-9_-]; the token
 *   google-oauth-secret      GOCSPX- + 24..64 of [A-Za-z0-9_-]; the token
 *   openai-key               sk- (sk-proj-, sk-svcacct-, ...) + 32..256 of
 *                            [A-Za-z0-9_-] with upper, lower and digit; the
 *                            token (sk-ant- is left to anthropic-key)
 *   anthropic-key            sk-ant- + 32..256 of [A-Za-z0-9_-] with upper,
 *                            lower and digit; the token
 *   npm-token                npm_ + exactly 36 alnum; the token
 *   huggingface-token        hf_ + 30..40 letters of both cases; the token
 *   private-key              -----BEGIN <...>PRIVATE KEY[ BLOCK]----- (RSA, EC,
 *                            DSA, OPENSSH, ENCRYPTED, PGP) followed by a
 *                            base64 body (a run of >= 40); from BEGIN to the
 *                            end of the END line, or of the body
 *   jwt                      eyJ... . ... . ... (three base64url parts of at
 *                            least 10, 10 and 16); the token
 *   password-in-url          scheme://user:password@host with a non-empty,
 *                            non-placeholder password; the password
 *   password-assignment      a password-like name (password, passwd, pwd,
 *                            pass, passphrase, *password, 密码, 口令), then
 *                            = : := => ?= or > (XML) or a blank (--flags), a
 *                            literal of >= 6 bytes that is not a placeholder,
 *                            a reference or code; the value
 *   high-entropy-assignment  a secret-like name (secret, token, auth,
 *                            authorization, api/access/secret/private/...
 *                            key, *secret, *token, 密钥, 令牌) assigned a
 *                            high-entropy literal (>= 16 bytes, letters and
 *                            digits, >= 3.3 bits/byte; or >= 32 hex digits);
 *                            the value
 *
 * Not secrets (never reported): placeholders (<your-token>, ${VAR}, $VAR,
 * %(x)s, {{ x }}, [REDACTED], ***, xxx, changeme, None, null, ""),
 * references (os.environ["K"], process.env.K, settings.SECRET_KEY,
 * user_password), paths, URLs without a password, UI labels, prose.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "secret.h"

enum kind {
	K_AWS_ID,
	K_AWS_SECRET,
	K_GITHUB,
	K_GITLAB,
	K_SLACK,
	K_SLACK_HOOK,
	K_STRIPE,
	K_GOOGLE_API,
	K_GOOGLE_OAUTH,
	K_OPENAI,
	K_ANTHROPIC,
	K_NPM,
	K_HUGGINGFACE,
	K_PRIVATE_KEY,
	K_JWT,
	K_URL_PASSWORD,
	K_PASSWORD,
	K_ENTROPY,
	K_COUNT
};

/* Indexed by enum kind; the order of the table in the header comment. */
static const char *const kind_names[K_COUNT] = {
	"aws-access-key-id",
	"aws-secret-access-key",
	"github-token",
	"gitlab-token",
	"slack-token",
	"slack-webhook",
	"stripe-key",
	"google-api-key",
	"google-oauth-secret",
	"openai-key",
	"anthropic-key",
	"npm-token",
	"huggingface-token",
	"private-key",
	"jwt",
	"password-in-url",
	"password-assignment",
	"high-entropy-assignment",
};

/* Test hook state (secret_disable_kind_for_test): all zero in production. */
static unsigned char kind_off[K_COUNT];

#define ON(k) (!kind_off[k])

/* Bounds on every look ahead or behind; they keep the pass linear. */
#define KEY_MAX 128         /* longest assignment name considered */
#define VALUE_MAX 512       /* longest assignment value considered */
#define JWT_PART_MAX 8192   /* longest JWT part */
#define PEM_MAX 65536       /* longest private key block */
#define USERINFO_MAX 256    /* longest user:password in a URL */
#define SCHEME_MAX 32       /* longest URL scheme */
#define CONTEXT_MAX 256     /* how far back a line is searched for context */
#define WORD_MAX 64         /* longest lower-cased word compared */

/* The text being scanned. Bytes are unsigned; at() is -1 past the end. */
struct scan {
	const unsigned char *t;
	size_t len;
};

/* One hit before it is reported: enum kind and byte range. */
struct match {
	int kind;
	size_t start, end;
};

/* What is known about an assignment before its value is read. */
struct assign {
	int kc;     /* enum keyclass of the name */
	int sep;    /* '=', ':', '>' or ' ': see parse_sep() */
	int inside; /* the quote the name sits inside, not closed after it */
	int code;   /* "a.b = x": an attribute assigned with spaces */
};

/* An assignment value: its bytes [start, end) and the quote around it. */
struct value {
	size_t start, end;
	int quote; /* the opening quote character, or 0 when unquoted */
};

/* What an assignment name says its value is. */
enum keyclass {
	KEY_NONE,
	KEY_PASSWORD,      /* password, DB_PASSWORD, passphrase, 密码 */
	KEY_WEAK_PASSWORD, /* pass, pwd: also names non-secrets; stricter */
	KEY_SECRET,        /* token, secret, api_key, ...: needs entropy */
};

/* ------------------------------------------------------- byte classes */

static int at(const struct scan *s, size_t i)
{
	return i < s->len ? s->t[i] : -1;
}

static int before(const struct scan *s, size_t i)
{
	return i > 0 && i - 1 < s->len ? s->t[i - 1] : -1;
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static int is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static int is_alpha(int c)
{
	return is_upper(c) || is_lower(c);
}

static int is_alnum(int c)
{
	return is_alpha(c) || is_digit(c);
}

static int is_upnum(int c)
{
	return is_upper(c) || is_digit(c);
}

static int is_word(int c)
{
	return is_alnum(c) || c == '_';
}

static int is_b64url(int c)
{
	return is_alnum(c) || c == '-' || c == '_';
}

static int is_b64(int c)
{
	return is_alnum(c) || c == '+' || c == '/';
}

static int is_slackc(int c)
{
	return is_alnum(c) || c == '-';
}

static int is_alnum_slash(int c)
{
	return is_alnum(c) || c == '/';
}

static int is_ident(int c)
{
	return is_word(c) || c == '.' || c == '-';
}

static int is_scheme(int c)
{
	return is_alnum(c) || c == '+' || c == '.' || c == '-';
}

static int is_hex(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_hspace(int c)
{
	return c == ' ' || c == '\t';
}

static int is_quote(int c)
{
	return c == '"' || c == '\'' || c == '`';
}

/* Is c one of the bytes of set? (Never true for NUL.) */
static int in_set(int c, const char *set)
{
	return c > 0 && strchr(set, c) != NULL;
}

static int to_lower(int c)
{
	return is_upper(c) ? c + ('a' - 'A') : c;
}

/* Length of the run of bytes of class cls at i, counting at most cap. */
static size_t run_len(const struct scan *s, size_t i, int (*cls)(int),
		      size_t cap)
{
	size_t n = 0;

	while (n < cap && cls(at(s, i + n)))
		n++;
	return n;
}

static int starts_with(const struct scan *s, size_t i, const char *lit)
{
	size_t n = strlen(lit);

	return i <= s->len && s->len - i >= n && memcmp(s->t + i, lit, n) == 0;
}

static int starts_with_ci(const struct scan *s, size_t i, const char *lit)
{
	size_t n = strlen(lit), k;

	if (i > s->len || s->len - i < n)
		return 0;
	for (k = 0; k < n; k++)
		if (to_lower(s->t[i + k]) != lit[k])
			return 0;
	return 1;
}

/* Does [b, b+n) contain lit (lower case) ignoring ASCII case? */
static int contains_ci(const unsigned char *b, size_t n, const char *lit)
{
	size_t m = strlen(lit), i, k;

	for (i = 0; i + m <= n; i++) {
		for (k = 0; k < m; k++)
			if (to_lower(b[i + k]) != lit[k])
				break;
		if (k == m)
			return 1;
	}
	return 0;
}

/* Lower-case copy of a short word into out[WORD_MAX]; 0 if too long. */
static int lower_word(const unsigned char *b, size_t n, char *out)
{
	size_t i;

	if (n >= WORD_MAX)
		return 0;
	for (i = 0; i < n; i++)
		out[i] = (char)to_lower(b[i]);
	out[n] = '\0';
	return 1;
}

static int in_list(const char *w, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(w, list[i]) == 0)
			return 1;
	return 0;
}

static int ends_with(const char *w, const char *suffix)
{
	size_t a = strlen(w), b = strlen(suffix);

	return a >= b && strcmp(w + a - b, suffix) == 0;
}

/* ------------------------------------------------------ value statistics */

/* What a candidate value is made of. */
struct vstat {
	size_t upper, lower, digit, space, high, other;
	size_t hexdigits; /* bytes that are hex digits */
	int hex;          /* only hex digits and '-' */
	double bits;      /* Shannon entropy, bits per byte */
};

static double entropy(const unsigned char *b, size_t n)
{
	size_t count[256];
	double h = 0.0;
	size_t i;

	if (n == 0)
		return 0.0;
	memset(count, 0, sizeof(count));
	for (i = 0; i < n; i++)
		count[b[i]]++;
	for (i = 0; i < 256; i++) {
		double p;

		if (!count[i])
			continue;
		p = (double)count[i] / (double)n;
		h -= p * log2(p);
	}
	return h;
}

static void value_stats(const unsigned char *b, size_t n, struct vstat *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	st->hex = 1;
	for (i = 0; i < n; i++) {
		int c = b[i];

		if (is_upper(c))
			st->upper++;
		else if (is_lower(c))
			st->lower++;
		else if (is_digit(c))
			st->digit++;
		else if (c == ' ' || c == '\t')
			st->space++;
		else if (c >= 0x80)
			st->high++;
		else
			st->other++;
		if (is_hex(c))
			st->hexdigits++;
		else if (c != '-')
			st->hex = 0;
	}
	st->bits = entropy(b, n);
}

/* How many of upper / lower / digit occur. */
static int char_classes(const struct vstat *st)
{
	return (st->upper > 0) + (st->lower > 0) + (st->digit > 0);
}

/* ------------------------------------------- placeholders and references */

/*
 * Is this value a placeholder rather than a secret: empty, a template or
 * variable reference, a mask, a well-known dummy word?
 */
static int is_placeholder(const unsigned char *b, size_t n)
{
	static const char *const words[] = {
		"password", "passwd", "pass", "pwd", "secret", "token",
		"changeme", "changeit", "change_me", "example", "placeholder",
		"redacted", "none", "null", "nil", "undefined", "true",
		"false", "string", "required", "optional", "empty", "dummy",
		"foobar", "mypassword", "yourpassword", "test", "todo", "tbd",
		"fixme", "hidden", "masked", "filtered", "removed", "omitted",
		"notset", "unset", "default", "apikey", "api_key", "api-key",
		"passphrase",
	};
	char w[WORD_MAX];
	unsigned char seen[256];
	size_t i, distinct = 0;
	int mask = 1, envname = 1, under = 0;

	if (n == 0)
		return 1;
	if (b[0] == '<' || b[0] == '{' || b[0] == '[')
		return 1; /* <your-token> {{ x }} {password} [REDACTED] */
	/* ${VAR} $(cmd) $VAR $self->x; not a bcrypt-like "$2b$..." */
	if (b[0] == '$' && (n == 1 || b[1] == '{' || b[1] == '(' ||
			    is_alpha(b[1]) || b[1] == '_'))
		return 1;
	if (b[0] == '%' && n > 1 &&
	    (b[1] == '(' || b[n - 1] == '%' || (n == 2 && b[1] == 's')))
		return 1; /* %(password)s %PASSWORD% %s */
	if (b[0] == '!' && n > 1) {
		/* YAML tags that name the real source: !vault, !secret, !Ref */
		for (i = 1; i < n && is_alpha(b[i]); i++)
			;
		if (i == n)
			return 1;
	}
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++) {
		int c = b[i];

		if (!seen[c]) {
			seen[c] = 1;
			distinct++;
		}
		if (c < 0x80 && !in_set(c, "*xX.#?-_"))
			mask = 0;
		if (c == '_')
			under = 1;
		if (!is_upnum(c) && c != '_')
			envname = 0;
	}
	if (mask || distinct <= 2)
		return 1; /* ******** xxx ... XXXX-XXXX aaaaaa */
	if (envname && under && is_upper(b[0]))
		return 1; /* DB_PASSWORD: a variable's name, not its value */
	if (lower_word(b, n, w) && in_list(w, words, ARRAY_SIZE(words)))
		return 1;
	if (n >= 4 && contains_ci(b, 4, "your"))
		return 1; /* your-token YOUR_API_KEY your_password_here */
	if (contains_ci(b, n, "placeholder") || contains_ci(b, n, "redacted") ||
	    contains_ci(b, n, "changeme") || contains_ci(b, n, "change_me") ||
	    contains_ci(b, n, "replace_me") ||
	    contains_ci(b, n, "replace-me") ||
	    contains_ci(b, n, "replaceme"))
		return 1;
	if (n > 4 && (contains_ci(b + n - 4, 4, "here")) &&
	    (memchr(b, '_', n) || memchr(b, '-', n)))
		return 1; /* token_here insert-key-here */
	return 0;
}

/* A single identifier [A-Za-z_$][A-Za-z0-9_$]* of the whole of [b, b+n)? */
static int is_identifier(const unsigned char *b, size_t n)
{
	size_t i;

	if (n == 0 || !(is_alpha(b[0]) || b[0] == '_' || b[0] == '$'))
		return 0;
	for (i = 1; i < n; i++)
		if (!is_word(b[i]) && b[i] != '$')
			return 0;
	return 1;
}

/* A dotted name, every part an identifier: settings.SECRET_KEY, self.pw. */
static int is_dotted_ref(const unsigned char *b, size_t n)
{
	size_t i, part = 0, parts = 0;

	for (i = 0; i <= n; i++) {
		if (i == n || b[i] == '.') {
			if (!is_identifier(b + part, i - part))
				return 0;
			parts++;
			part = i + 1;
		}
	}
	return parts >= 2;
}

/*
 * A variable named after what it holds: user_password, apiToken,
 * challengePassword. Such a value names the secret; it is not the secret.
 */
static int is_named_ref(const unsigned char *b, size_t n)
{
	size_t i;
	int hump = 0;

	if (!is_identifier(b, n))
		return 0;
	for (i = 1; i < n; i++)
		if (is_lower(b[i - 1]) && is_upper(b[i]))
			hump = 1;
	if (!hump && !memchr(b, '_', n))
		return 0;
	return contains_ci(b, n, "password") || contains_ci(b, n, "passwd") ||
	       contains_ci(b, n, "secret") || contains_ci(b, n, "token") ||
	       contains_ci(b, n, "pwd") || contains_ci(b, n, "apikey") ||
	       contains_ci(b, n, "api_key");
}

/* A snake_case identifier (index_info, user_pass): a variable in code. */
static int is_snake_ident(const unsigned char *b, size_t n)
{
	size_t i;

	if (!is_identifier(b, n) || !memchr(b, '_', n))
		return 0;
	for (i = 0; i < n; i++)
		if (is_upper(b[i]))
			return 0;
	return 1;
}

/* A version number: 1.302103, 2.0.1. */
static int is_version(const unsigned char *b, size_t n)
{
	size_t i;
	int dot = 0;

	for (i = 0; i < n; i++) {
		if (b[i] == '.')
			dot = 1;
		else if (!is_digit(b[i]))
			return 0;
	}
	return dot;
}

/* A file path: /run/secrets/db, ./conf/key, ~/x, ../y, made of path bytes. */
static int is_path(const unsigned char *b, size_t n)
{
	size_t i;

	if (n < 2)
		return 0;
	if (!(b[0] == '/' || (b[0] == '~' && b[1] == '/') ||
	      (b[0] == '.' && (b[1] == '/' || b[1] == '.'))))
		return 0;
	for (i = 0; i < n; i++)
		if (!is_word(b[i]) && !in_set(b[i], "./~-"))
			return 0;
	return 1;
}

/* ------------------------------------------------------- token formats */

/* A token known by its prefix: body class, length bounds, randomness. */
struct prefix_rule {
	const char *prefix;
	const char *unless;     /* a longer prefix left to another rule */
	int kind;               /* enum kind */
	int (*body)(int);       /* class of the bytes after the prefix */
	unsigned short min, max; /* body length bounds */
	unsigned char classes;  /* how many of upper/lower/digit the body has */
	double bits;            /* entropy of the body, bits per byte */
};

static const struct prefix_rule prefix_rules[] = {
	{ "AKIA", NULL, K_AWS_ID, is_upnum, 16, 16, 1, 2.5 },
	{ "ASIA", NULL, K_AWS_ID, is_upnum, 16, 16, 1, 2.5 },
	{ "ABIA", NULL, K_AWS_ID, is_upnum, 16, 16, 1, 2.5 },
	{ "ACCA", NULL, K_AWS_ID, is_upnum, 16, 16, 1, 2.5 },
	{ "AIza", NULL, K_GOOGLE_API, is_b64url, 35, 35, 2, 3.0 },
	{ "GOCSPX-", NULL, K_GOOGLE_OAUTH, is_b64url, 24, 64, 2, 3.0 },
	{ "github_pat_", NULL, K_GITHUB, is_word, 40, 255, 3, 3.5 },
	{ "ghp_", NULL, K_GITHUB, is_alnum, 30, 255, 3, 3.5 },
	{ "gho_", NULL, K_GITHUB, is_alnum, 30, 255, 3, 3.5 },
	{ "ghu_", NULL, K_GITHUB, is_alnum, 30, 255, 3, 3.5 },
	{ "ghs_", NULL, K_GITHUB, is_alnum, 30, 255, 3, 3.5 },
	{ "ghr_", NULL, K_GITHUB, is_alnum, 30, 255, 3, 3.5 },
	{ "glpat-", NULL, K_GITLAB, is_b64url, 20, 64, 2, 3.0 },
	{ "xoxb-", NULL, K_SLACK, is_slackc, 20, 255, 2, 3.0 },
	{ "xoxp-", NULL, K_SLACK, is_slackc, 20, 255, 2, 3.0 },
	{ "xoxa-", NULL, K_SLACK, is_slackc, 20, 255, 2, 3.0 },
	{ "xoxr-", NULL, K_SLACK, is_slackc, 20, 255, 2, 3.0 },
	{ "xoxs-", NULL, K_SLACK, is_slackc, 20, 255, 2, 3.0 },
	{ "xapp-", NULL, K_SLACK, is_slackc, 20, 255, 2, 3.0 },
	{ "hooks.slack.com/services/", NULL, K_SLACK_HOOK, is_alnum_slash,
	  30, 128, 2, 3.0 },
	{ "sk_live_", NULL, K_STRIPE, is_alnum, 16, 255, 2, 3.0 },
	{ "sk_test_", NULL, K_STRIPE, is_alnum, 16, 255, 2, 3.0 },
	{ "rk_live_", NULL, K_STRIPE, is_alnum, 16, 255, 2, 3.0 },
	{ "rk_test_", NULL, K_STRIPE, is_alnum, 16, 255, 2, 3.0 },
	{ "sk-ant-", NULL, K_ANTHROPIC, is_b64url, 32, 256, 3, 3.5 },
	{ "sk-", "sk-ant-", K_OPENAI, is_b64url, 32, 256, 3, 3.5 },
	{ "npm_", NULL, K_NPM, is_alnum, 36, 36, 2, 3.0 },
	{ "hf_", NULL, K_HUGGINGFACE, is_alpha, 30, 40, 2, 3.0 },
};

/* A token starting at i, known by its prefix. */
static int m_prefix(const struct scan *s, size_t i, struct match *m)
{
	int c = at(s, i);
	size_t r;

	if (is_b64url(before(s, i)))
		return 0; /* inside a longer word */
	for (r = 0; r < ARRAY_SIZE(prefix_rules); r++) {
		const struct prefix_rule *pr = &prefix_rules[r];
		size_t plen, n;
		struct vstat st;

		if (pr->prefix[0] != c || !ON(pr->kind) ||
		    !starts_with(s, i, pr->prefix))
			continue;
		if (pr->unless && starts_with(s, i, pr->unless))
			continue;
		plen = strlen(pr->prefix);
		n = run_len(s, i + plen, pr->body, (size_t)pr->max + 1);
		if (n < pr->min || n > pr->max || is_alnum(at(s, i + plen + n)))
			continue;
		value_stats(s->t + i + plen, n, &st);
		if (char_classes(&st) < pr->classes || st.bits < pr->bits)
			continue;
		m->kind = pr->kind;
		m->start = i;
		m->end = i + plen + n;
		return 1;
	}
	return 0;
}

/* A JSON Web Token: header.payload.signature, the header starting eyJ. */
static int m_jwt(const struct scan *s, size_t i, struct match *m)
{
	size_t p = i, a, b, c;

	if (!ON(K_JWT) || !starts_with(s, i, "eyJ") || is_b64url(before(s, i)))
		return 0;
	a = run_len(s, p, is_b64url, JWT_PART_MAX);
	if (a < 10 || at(s, p + a) != '.')
		return 0;
	p += a + 1;
	b = run_len(s, p, is_b64url, JWT_PART_MAX);
	if (b < 10 || at(s, p + b) != '.')
		return 0;
	p += b + 1;
	c = run_len(s, p, is_b64url, JWT_PART_MAX);
	if (c < 16)
		return 0;
	m->kind = K_JWT;
	m->start = i;
	m->end = p + c;
	return 1;
}

/* Skip blanks, newlines and escaped newlines ("\n" inside JSON strings). */
static size_t pem_skip_space(const struct scan *s, size_t p, size_t limit)
{
	while (p < limit) {
		int c = s->t[p];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			p++;
		} else if (c == '\\') {
			size_t q = p;

			while (q < limit && s->t[q] == '\\')
				q++;
			if (q < limit && (s->t[q] == 'n' || s->t[q] == 'r'))
				p = q + 1;
			else
				break;
		} else {
			break;
		}
	}
	return p;
}

/* Does the PEM label [b, b+n) name a private key? */
static int pem_private_label(const unsigned char *b, size_t n)
{
	static const char a[] = "PRIVATE KEY", k[] = "PRIVATE KEY BLOCK";

	return (n >= sizeof(a) - 1 &&
		memcmp(b + n - (sizeof(a) - 1), a, sizeof(a) - 1) == 0) ||
	       (n >= sizeof(k) - 1 &&
		memcmp(b + n - (sizeof(k) - 1), k, sizeof(k) - 1) == 0);
}

/* A PEM (or PGP armored) private key block with a real body. */
static int m_pem(const struct scan *s, size_t i, struct match *m)
{
	size_t p, label, limit, end, longest = 0;

	if (!ON(K_PRIVATE_KEY) || !starts_with(s, i, "-----BEGIN "))
		return 0;
	p = label = i + 11;
	while (p < s->len && p - label < 64 &&
	       (is_upnum(s->t[p]) || s->t[p] == ' '))
		p++;
	if (!pem_private_label(s->t + label, p - label) ||
	    !starts_with(s, p, "-----"))
		return 0;
	p += 5;
	end = p;
	limit = s->len - i > PEM_MAX ? i + PEM_MAX : s->len;
	for (;;) {
		size_t w = 0, k;
		int b64 = 1, colon = 0;

		p = pem_skip_space(s, p, limit);
		if (p >= limit)
			break;
		if (starts_with(s, p, "-----END")) {
			size_t q = p + 8;

			while (q < limit && q - p < 80 && s->t[q] != '\n' &&
			       !starts_with(s, q, "-----"))
				q++;
			if (starts_with(s, q, "-----"))
				end = q + 5 <= limit ? q + 5 : limit;
			break;
		}
		while (p + w < limit && s->t[p + w] != 0 &&
		       !in_set(s->t[p + w], " \t\r\n\\\"'"))
			w++;
		for (k = 0; k < w; k++) {
			int c = s->t[p + k];

			if (c == ':')
				colon = 1;
			if (!is_b64(c) && c != '=')
				b64 = 0;
		}
		if (w == 0)
			break;
		if (b64) {
			if (w > longest)
				longest = w;
			p += w;
			end = p;
			continue;
		}
		if (longest == 0 && colon) {
			/* an armor header: Proc-Type:, DEK-Info:, Version: */
			while (p < limit && s->t[p] != '\n' &&
			       !(s->t[p] == '\\' && at(s, p + 1) == 'n'))
				p++;
			continue;
		}
		break;
	}
	if (longest < 40)
		return 0;
	m->kind = K_PRIVATE_KEY;
	m->start = i;
	m->end = end;
	return 1;
}

/*
 * Does the line before i say the next value is an AWS secret: "secret",
 * "aws", or an AWS access key id (the CSV the console hands out)?
 */
static int aws_context(const struct scan *s, size_t i)
{
	size_t k = i, lo = i > CONTEXT_MAX ? i - CONTEXT_MAX : 0;

	while (k > lo && s->t[k - 1] != '\n')
		k--;
	for (; k < i; k++) {
		int c = to_lower(s->t[k]);

		if (c == 's' && starts_with_ci(s, k, "secret"))
			return 1;
		if (c == 'a' && (starts_with_ci(s, k, "aws") ||
				 starts_with(s, k, "AKIA") ||
				 starts_with(s, k, "ASIA")))
			return 1;
	}
	return 0;
}

/* An AWS secret access key: 40 base64 bytes in an AWS context. */
static int m_aws_secret(const struct scan *s, size_t i, struct match *m)
{
	struct vstat st;
	size_t n, k, nonhex = 0;

	if (!ON(K_AWS_SECRET) || !is_alnum(at(s, i)) || is_b64(before(s, i)))
		return 0;
	n = run_len(s, i, is_b64, 41);
	if (n != 40 || at(s, i + 40) == '=')
		return 0;
	value_stats(s->t + i, n, &st);
	for (k = 0; k < n; k++)
		if (!is_hex(s->t[i + k]))
			nonhex++;
	if (!st.upper || !st.lower || !(st.digit || st.other) || nonhex < 4 ||
	    st.bits < 4.0 || !aws_context(s, i))
		return 0;
	m->kind = K_AWS_SECRET;
	m->start = i;
	m->end = i + 40;
	return 1;
}

/* Any token recognised by its own format, starting at i. */
static int match_token(const struct scan *s, size_t i, struct match *m)
{
	return m_prefix(s, i, m) || m_jwt(s, i, m) || m_pem(s, i, m) ||
	       m_aws_secret(s, i, m);
}

/* ---------------------------------------------------- password in a URL */

/* scheme://user:password@host, at i == the ':' of "://". */
static int m_url(const struct scan *s, size_t i, struct match *m)
{
	size_t k = i, p, q, colon = 0, host = 0;

	if (!starts_with(s, i, "://"))
		return 0;
	while (k > 0 && i - k < SCHEME_MAX && is_scheme(s->t[k - 1]))
		k--;
	if (k == i || !is_alpha(s->t[k]))
		return 0;
	p = i + 3;
	for (q = p; q < s->len && q - p < USERINFO_MAX; q++) {
		int c = s->t[q];

		if (c == '@') {
			host = q;
			break;
		}
		if (c == ':' && !colon)
			colon = q;
		if (c <= ' ' || c == 0x7f || in_set(c, "/?\\\"'<>`"))
			return 0;
	}
	if (!host || !colon || host == colon + 1)
		return 0;
	if (!is_alnum(at(s, host + 1)) && at(s, host + 1) != '[')
		return 0;
	if (is_placeholder(s->t + colon + 1, host - colon - 1))
		return 0;
	if (match_token(s, colon + 1, m) && m->end <= host)
		return 1;
	if (!ON(K_URL_PASSWORD))
		return 0;
	m->kind = K_URL_PASSWORD;
	m->start = colon + 1;
	m->end = host;
	return 1;
}

/* ------------------------------------------------------------ assignments */

/*
 * Classify an assignment name by its last segment (split at _ - . and
 * camelCase humps) and the one before it. The short names "pass" and "pwd"
 * are weak: only as a whole segment in one case (db_pass, PWD, --pass), not
 * as a camelCase hump (FixIrreduciblePass, Test2::Event::Pass).
 */
static enum keyclass classify_key(const unsigned char *k, size_t n)
{
	static const char *const pw[] = {
		"password", "passwd", "passphrase", "passcode",
	};
	static const char *const weak[] = { "pwd", "pass" };
	static const char *const sec[] = {
		"secret", "token", "auth", "authorization", "apikey",
		"accesskey", "secretkey", "privatekey", "signingkey",
		"clientsecret", "accesstoken", "authtoken",
	};
	static const char *const keyed[] = {
		"api", "access", "secret", "private", "signing", "encryption",
		"master", "auth", "client", "service", "app",
	};
	static const char *const noise[] = {
		"base", "value", "b64", "base64", "hex", "raw",
	};
	char last[WORD_MAX], prev[WORD_MAX], first[WORD_MAX], cur[WORD_MAX];
	size_t i, len = 0, up = 0, low = 0;
	int over = 0, hump = 0, plain = 0;

	last[0] = prev[0] = first[0] = '\0';
	for (i = 0; i <= n; i++) {
		int c = i < n ? k[i] : -1;
		int cut = c == -1 || c == '_' || c == '-' || c == '.';

		if (!cut && i > 0 && len > 0 &&
		    ((is_lower(k[i - 1]) && is_upper(c)) ||
		     (is_upper(k[i - 1]) && is_upper(c) && i + 1 < n &&
		      is_lower(k[i + 1]))))
			cut = 2; /* a camelCase hump starts a new segment */
		if (cut) {
			if (len > 0) {
				cur[len] = '\0';
				memcpy(first, prev, sizeof(first));
				memcpy(prev, last, sizeof(prev));
				memcpy(last, over ? "#" : cur,
				       over ? 2 : len + 1);
				plain = !hump && (up == 0 || low == 0);
			}
			len = up = low = 0;
			over = 0;
			hump = cut == 2;
			if (cut == 1)
				continue;
		}
		up += is_upper(c);
		low += is_lower(c);
		if (len < WORD_MAX - 1)
			cur[len++] = (char)to_lower(c);
		else
			over = 1;
	}
	if (in_list(last, noise, ARRAY_SIZE(noise))) {
		/* SECRET_KEY_BASE, token_value: the segment before decides */
		memcpy(last, prev, sizeof(last));
		memcpy(prev, first, sizeof(prev));
	}
	if (in_list(last, pw, ARRAY_SIZE(pw)) || ends_with(last, "password") ||
	    ends_with(last, "passwd"))
		return KEY_PASSWORD;
	if (in_list(last, weak, ARRAY_SIZE(weak)))
		return plain ? KEY_WEAK_PASSWORD : KEY_NONE;
	if (in_list(last, sec, ARRAY_SIZE(sec)) || ends_with(last, "secret") ||
	    ends_with(last, "token") || ends_with(last, "apikey"))
		return KEY_SECRET;
	if (strcmp(last, "key") == 0 && in_list(prev, keyed, ARRAY_SIZE(keyed)))
		return KEY_SECRET;
	return KEY_NONE;
}

/*
 * Parse the separator after a name ending at *pp: = : := => ?= += and the
 * full-width colon; '>' closes an XML element <password>; a blank
 * separates a --flag from its value. Moves *pp past it and the blanks after
 * it; returns '=', ':', '>' or ' ', or 0 when there is none.
 */
static int parse_sep(const struct scan *s, size_t *pp, int open, int flag)
{
	size_t p = *pp, q;
	int c, sep = 0;

	if (open == '<' && at(s, p) == '>') {
		*pp = p + 1;
		return '>';
	}
	if (is_quote(at(s, p)))
		p++; /* the closing quote of "password": */
	else if (at(s, p) == '\\' && is_quote(at(s, p + 1)))
		p += 2; /* \"password\": inside a JSON string */
	if (p > *pp && at(s, p) == ']')
		p++; /* app.config["SECRET_KEY"] = */
	q = p;
	while (is_hspace(at(s, p)))
		p++;
	c = at(s, p);
	if ((c == ':' || c == '?' || c == '+') && at(s, p + 1) == '=') {
		p += 2;
		sep = '=';
	} else if (c == '=' && at(s, p + 1) == '>') {
		p += 2;
		sep = '=';
	} else if (c == '=' && at(s, p + 1) != '=') {
		p++;
		sep = '=';
	} else if (c == ':' && at(s, p + 1) != ':') {
		p++;
		sep = ':';
	} else if (starts_with(s, p, "\xef\xbc\x9a")) { /* U+FF1A ： */
		p += 3;
		sep = ':';
	} else if (flag && p > q && c != '-') {
		sep = ' ';
	} else {
		return 0;
	}
	while (is_hspace(at(s, p)))
		p++;
	*pp = p;
	return sep;
}

/* Skip an HTTP auth scheme word before the credential: "Bearer abc". */
static size_t skip_auth_scheme(const struct scan *s, size_t p)
{
	static const char *const schemes[] = {
		"bearer ", "basic ", "token ", "bot ", "digest ",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(schemes); i++) {
		if (starts_with_ci(s, p, schemes[i])) {
			p += strlen(schemes[i]);
			while (is_hspace(at(s, p)))
				p++;
			break;
		}
	}
	return p;
}

/* Bytes that end an unquoted value. */
static int ends_unquoted(int c)
{
	return c <= ' ' || c >= 0x7f || in_set(c, ",;\"'`&<>()[]{}\\");
}

/* Parse the value at p: quoted (with escapes) or a run of value bytes. */
static void parse_value(const struct scan *s, size_t p, struct value *v)
{
	size_t e;
	int q = 0, esc = 0;

	if (is_quote(at(s, p))) {
		q = at(s, p);
		p++;
	} else if (at(s, p) == '\\' && is_quote(at(s, p + 1))) {
		q = at(s, p + 1);
		esc = 1;
		p += 2;
	}
	p = skip_auth_scheme(s, p);
	e = p;
	if (q) {
		while (e < s->len && e - p < VALUE_MAX) {
			int c = s->t[e];

			if (c == '\n' || c == '\r' || c == q)
				break;
			if (c == '\\') {
				if (esc && at(s, e + 1) == q)
					break;
				e += 2;
				continue;
			}
			e++;
		}
		if (e > s->len)
			e = s->len;
		/* a quote never closed on its line: trailing blanks are not
		 * part of the value (else trimming a text would change the
		 * verdict; found by tests/fuzz/fuzz_seed.c) */
		if (at(s, e) != q &&
		    !(esc && at(s, e) == '\\' && at(s, e + 1) == q))
			while (e > p && is_hspace(s->t[e - 1]))
				e--;
	} else {
		while (e < s->len && e - p < VALUE_MAX &&
		       !ends_unquoted(s->t[e]))
			e++;
	}
	v->start = p;
	v->end = e;
	v->quote = q;
}

/* The next thing after e on this line is a word: the value is prose. */
static int prose_follows(const struct scan *s, size_t e)
{
	size_t p = e;

	while (is_hspace(at(s, p)))
		p++;
	return p > e && (is_alpha(at(s, p)) || at(s, p) >= 0x80);
}

/* Is the literal assigned to a password-like name a password? */
static int password_value(const struct scan *s, const struct value *v,
			  const struct assign *a)
{
	const unsigned char *b = s->t + v->start;
	size_t n = v->end - v->start, i;
	int alpha = 1, digit = 0;

	if (n < 6 || is_placeholder(b, n) || is_path(b, n) ||
	    is_version(b, n) || is_named_ref(b, n) || b[0] == ':' ||
	    b[0] == '=' || contains_ci(b, n, "://"))
		return 0;
	for (i = 0; i < n; i++) {
		if (!is_alpha(b[i]))
			alpha = 0;
		if (is_digit(b[i]))
			digit = 1;
	}
	if (!v->quote) {
		if (is_dotted_ref(b, n) || is_snake_ident(b, n) ||
		    at(s, v->end) == '(' || at(s, v->end) == '[')
			return 0;
		if (a->code && is_identifier(b, n))
			return 0; /* self.password = credentials */
		if (a->kc == KEY_WEAK_PASSWORD && alpha)
			return 0; /* PASS = ignore */
		/* "Password: required for every account" */
		if (a->sep == ':' && alpha && prose_follows(s, v->end))
			return 0;
		/* "the --password option", "--password prompt" */
		if (a->sep == ' ' && alpha)
			return 0;
	} else if (memchr(b, ' ', n) && ((is_upper(b[0]) && !digit) ||
					 contains_ci(b, n, "password"))) {
		return 0; /* a UI label: "Enter your password" */
	}
	return 1;
}

/* Is the literal assigned to a secret-like name random enough? */
static int secret_value(const struct scan *s, const struct value *v)
{
	const unsigned char *b = s->t + v->start;
	size_t n = v->end - v->start;
	struct vstat st;

	if (n < 16 || is_placeholder(b, n) || is_path(b, n) ||
	    is_named_ref(b, n) || contains_ci(b, n, "://"))
		return 0;
	if (!v->quote && (is_dotted_ref(b, n) || at(s, v->end) == '(' ||
			  at(s, v->end) == '['))
		return 0;
	value_stats(b, n, &st);
	if (st.space || st.high)
		return 0;
	if (st.hex)
		return st.hexdigits >= 32 && st.bits >= 3.0;
	if (!st.digit || !(st.upper || st.lower))
		return 0;
	return st.bits >= 3.3;
}

/*
 * The value at p of assignment a: a known token format, a password, or a
 * high-entropy secret.
 */
static int value_hit(const struct scan *s, size_t p, struct assign *a,
		     struct match *m)
{
	struct value v;

	parse_value(s, p, &v);
	if (match_token(s, v.start, m))
		return 1;
	if (a->sep == ':' && !v.quote &&
	    is_identifier(s->t + v.start, v.end - v.start)) {
		/* a type annotation first: password: str = "hunter22" */
		size_t q = v.end;

		while (is_hspace(at(s, q)))
			q++;
		if (at(s, q) == '=' && at(s, q + 1) != '=') {
			q++;
			while (is_hspace(at(s, q)))
				q++;
			parse_value(s, q, &v);
			if (match_token(s, v.start, m))
				return 1;
			a->sep = '=';
		}
	}
	if (v.end <= v.start)
		return 0;
	if (a->inside && v.quote == a->inside)
		return 0; /* prompt='Password: ', the quote ends the string */
	if (a->sep == '>' && !(at(s, v.end) == '<' && at(s, v.end + 1) == '/'))
		return 0; /* <password>x</password>, not "<password>@host" */
	if (a->kc == KEY_SECRET) {
		if (!ON(K_ENTROPY) || !secret_value(s, &v))
			return 0;
		m->kind = K_ENTROPY;
	} else {
		if (!ON(K_PASSWORD) || !password_value(s, &v, a))
			return 0;
		m->kind = K_PASSWORD;
	}
	m->start = v.start;
	m->end = v.end;
	return 1;
}

/* name = value, name: value, "name": "value", --name value, <name>value. */
static int m_assign(const struct scan *s, size_t i, struct match *m)
{
	int c = at(s, i), open = before(s, i);
	struct assign a;
	size_t n, p;

	if (!(is_alpha(c) || c == '_' || c == '-') || is_ident(open))
		return 0;
	n = run_len(s, i, is_ident, KEY_MAX + 1);
	if (n > KEY_MAX)
		return 0;
	p = i + n;
	/* cheap rejection first: most words are not followed by = or : */
	if (!(is_quote(at(s, p)) || at(s, p) == '\\' || at(s, p) == '>' ||
	      is_hspace(at(s, p)) || at(s, p) == ':' || at(s, p) == '=' ||
	      at(s, p) == '?' || at(s, p) == '+' || at(s, p) == 0xef))
		return 0;
	a.kc = classify_key(s->t + i, n);
	if (a.kc == KEY_NONE)
		return 0;
	a.inside = 0;
	if (is_quote(open) && at(s, p) != open &&
	    !(at(s, p) == '\\' && at(s, p + 1) == open))
		a.inside = open;
	a.code = memchr(s->t + i, '.', n) && is_hspace(at(s, p));
	a.sep = parse_sep(s, &p, open, n > 2 && c == '-' && s->t[i + 1] == '-');
	if (!a.sep)
		return 0;
	return value_hit(s, p, &a, m);
}

/* Chinese names for passwords and keys, as UTF-8. */
static const struct {
	const char *utf8;
	enum keyclass kc;
} cjk_keys[] = {
	{ "\xe5\xaf\x86\xe7\xa0\x81", KEY_PASSWORD }, /* 密码 password */
	{ "\xe5\x8f\xa3\xe4\xbb\xa4", KEY_PASSWORD }, /* 口令 password */
	{ "\xe5\xaf\x86\xe9\x92\xa5", KEY_SECRET },   /* 密钥 secret key */
	{ "\xe4\xbb\xa4\xe7\x89\x8c", KEY_SECRET },   /* 令牌 token */
};

/* 密码：hunter22, 密钥是 sk-..., 令牌=... */
static int m_cjk(const struct scan *s, size_t i, struct match *m)
{
	static const char *const seps[] = {
		":", "=", "\xef\xbc\x9a" /* ： */, "\xe6\x98\xaf" /* 是 */,
		"\xe4\xb8\xba" /* 为 */,
	};
	struct assign a;
	size_t k, j, p;

	for (k = 0; k < ARRAY_SIZE(cjk_keys); k++) {
		if (!starts_with(s, i, cjk_keys[k].utf8))
			continue;
		p = i + strlen(cjk_keys[k].utf8);
		while (is_hspace(at(s, p)) || starts_with(s, p, "\xe3\x80\x80"))
			p += at(s, p) == ' ' || at(s, p) == '\t' ? 1 : 3;
		for (j = 0; j < ARRAY_SIZE(seps); j++) {
			if (starts_with(s, p, seps[j])) {
				p += strlen(seps[j]);
				break;
			}
		}
		if (j == ARRAY_SIZE(seps))
			return 0;
		while (is_hspace(at(s, p)))
			p++;
		a.kc = cjk_keys[k].kc;
		a.sep = '=';
		a.inside = 0;
		a.code = 0;
		return value_hit(s, p, &a, m);
	}
	return 0;
}

/* ------------------------------------------------------------------ scan */

/* Every matcher at byte i, most specific first. */
static int match_at(const struct scan *s, size_t i, struct match *m)
{
	int c = s->t[i];

	if (match_token(s, i, m))
		return 1;
	if (c == ':' && m_url(s, i, m))
		return 1;
	if (m_assign(s, i, m))
		return 1;
	if (c >= 0xe4 && c <= 0xe5 && m_cjk(s, i, m))
		return 1;
	return 0;
}

typedef void (*hit_fn)(void *ctx, const struct secret_hit *hit);

/* The pass: report every hit, in order, to fn; return how many. */
static size_t scan_all(const char *text, size_t len, hit_fn fn, void *ctx)
{
	struct scan s;
	struct match m;
	size_t i = 0, count = 0, line = 1, counted = 0;

	if (!text)
		return 0;
	s.t = (const unsigned char *)text;
	s.len = len;
	while (i < len) {
		struct secret_hit hit;

		if (!match_at(&s, i, &m)) {
			i++;
			continue;
		}
		if (NEVER(m.start < i || m.end <= m.start || m.end > len)) {
			i++;
			continue;
		}
		for (; counted < m.start; counted++)
			if (s.t[counted] == '\n')
				line++;
		hit.kind = kind_names[m.kind];
		hit.start = m.start;
		hit.end = m.end;
		hit.line = line;
		fn(ctx, &hit);
		count++;
		i = m.end;
	}
	return count;
}

/* Collects hits into the caller's array for secret_scan(). */
struct collect {
	struct secret_hit *hits;
	size_t max, n;
};

static void collect_hit(void *ctx, const struct secret_hit *hit)
{
	struct collect *c = ctx;

	if (c->hits && c->n < c->max)
		c->hits[c->n] = *hit;
	c->n++;
}

/* See secret.h. Allocates nothing; the hits go to the caller's array. */
size_t secret_scan(const char *text, size_t len, struct secret_hit *hits,
		   size_t max)
{
	struct collect c;

	c.hits = hits;
	c.max = max;
	c.n = 0;
	scan_all(text, len, collect_hit, &c);
	return c.n;
}

/* Builds the redacted copy for secret_redact(). */
struct redact {
	const char *text;
	size_t last; /* end of the text already copied */
	struct sbuf sb;
};

static void redact_hit(void *ctx, const struct secret_hit *hit)
{
	struct redact *r = ctx;

	sbuf_add(&r->sb, r->text + r->last, hit->start - r->last);
	sbuf_addf(&r->sb, "[REDACTED:%s]", hit->kind);
	r->last = hit->end;
}

/*
 * See secret.h. The copy is built from the bytes around the hits only, so
 * no secret byte is ever copied, not even into a buffer freed later.
 */
char *secret_redact(const char *text, size_t len, size_t *outlen)
{
	struct redact r;
	char *out = NULL;

	if (outlen)
		*outlen = 0;
	if (!text) {
		text = "";
		len = 0;
	}
	r.text = text;
	r.last = 0;
	sbuf_init(&r.sb, 0);
	scan_all(text, len, redact_hit, &r);
	sbuf_add(&r.sb, text + r.last, len - r.last);
	if (r.sb.err)
		goto out;
	out = sbuf_detach(&r.sb, outlen);
out:
	sbuf_release(&r.sb);
	return out;
}

/* See secret.h. Names the kind and line, never the secret's bytes. */
void secret_describe(const struct secret_hit *hit, const char *what,
		     char *buf, size_t size)
{
	int named = what && *what;

	if (!buf || size == 0)
		return;
	if (!hit) {
		snprintf(buf, size, "no secret found");
		return;
	}
	snprintf(buf, size,
		 "refusing to store a secret: %s on line %zu%s%s "
		 "(use --redact to store it masked)",
		 hit->kind ? hit->kind : "secret", hit->line,
		 named ? " of " : "", named ? what : "");
}

/* See secret.h: the names of kind_names[], in the order of the table. */
const char *secret_kind_name(size_t i)
{
	return i < K_COUNT ? kind_names[i] : NULL;
}

/* See secret.h. Test-only: sets kind_off[], which every matcher checks. */
void secret_disable_kind_for_test(const char *kind)
{
	size_t i;

	if (!kind) {
		memset(kind_off, 0, sizeof(kind_off));
		return;
	}
	for (i = 0; i < K_COUNT; i++)
		if (strcmp(kind, kind_names[i]) == 0)
			kind_off[i] = 1;
}
