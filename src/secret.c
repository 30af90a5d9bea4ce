/*
 * secret.c -- the secret filter: hand-written matchers that find credentials
 * in text, so that cairn can refuse (or mask) them before anything is stored.
 *
 * Role: every write path runs secret_scan() over the text it is about to
 * store; a hit refuses the write with CAIRN_SECRET and the message from
 * secret_describe(), unless the caller asked for secret_redact().
 *
 * Must never: log, print or copy the secret bytes (secret_redact() copies
 * only the text around the hits); take more than linear time (every look
 * ahead or behind has a fixed bound, no matcher backtracks); abort or read
 * out of bounds on any input (invalid UTF-8, NULs, megabytes).
 *
 * How it works: one left-to-right pass. At each byte the matchers below are
 * tried in order; a hit is reported and the pass resumes after it. A known
 * token format found as the value of an assignment is reported under its
 * own kind, not the generic one. The same pass then runs over normalised
 * views of the text (see "normalised views" below: NFKC to ASCII, format
 * characters dropped, %XX decoded, wrapped lines joined, base64 decoded,
 * up to 4 layers deep); their hits map back to original byte ranges, and
 * overlapping hits merge, so hits come out in order and never overlap.
 *
 * Three files: this one holds the kinds, the matchers that need context (a
 * password in a URL, command-line flags, assignments, passphrases, Basic
 * auth, Chinese names) and the pass over one buffer; secret_token.c the
 * matchers that know a token by its own format; secret_scan.c the
 * normalised views, the merge and the entry points of secret.h. They
 * share secret_int.h.
 *
 * Beyond the table below, token_rules[] (secret_token.c) holds the provider
 * formats (about 230 shapes, one line each: a prefix and up to five class
 * segments), each under its own kind name (sendgrid-api-key,
 * twilio-api-key, pypi-token, azure-storage-key, vercel-token, ...); a
 * token with a distinctive prefix is found even glued to a name
 * (key_AKIA..., GITHUB_TOKEN_ghp_..., tokenghp_...: glue_level()); m_cli() the
 * command-line password flags (curl -u, sshpass -p, mysql -pX, redis-cli
 * -a, smbclient -U u%p, openssl -passin pass:, .netrc, ...) as
 * "cli-password"; passphrase_at() a multi-word "password: correct horse
 * battery staple" as "passphrase"; basic_auth() "Basic <base64 of
 * user:password>" as "basic-auth"; m_sas() (secret_token.c) an Azure SAS
 * "&sig=" as "azure-sas-token"; m_putty() (secret_token.c) PuTTY key files.
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
 *                            base64 body (a run of >= 40), its lines also
 *                            quoted as Markdown ("> "), in comments or
 *                            split into string literals ("...\n" + "...");
 *                            from BEGIN to the end of the END line, or of
 *                            the body
 *   jwt                      eyJ... . ... . ... (three base64url parts of at
 *                            least 10, 10 and 16); the token
 *   password-in-url          scheme://user:password@host with a non-empty,
 *                            non-placeholder password; the password
 *   password-assignment      a password-like name (password, passwd, pwd,
 *                            pass, passphrase, *password, 密码, 口令), then
 *                            = : := => ?= or > (XML) or a blank (--flags), a
 *                            literal of >= 6 bytes that is not a placeholder,
 *                            a reference or code; the value. Also a
 *                            NuGet.config <add key="ClearTextPassword"
 *                            value="..."/> and Bundler's
 *                            BUNDLE_GEMS__CONTRIBSYS__COM=<user:password>
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "secret.h"
#include "secret_int.h"

/* Indexed by enum kind (secret_int.h). */
static const char *const kind_names[K_COUNT] = {
#define X(k, name) name,
	KINDS
#undef X
};

/* Test hook state (secret_disable_kind_for_test): all zero in production. */
unsigned char secret_kind_off[K_COUNT];

/* Bounds on every look ahead or behind; they keep the pass linear. */
#define KEY_MAX 128         /* longest assignment name considered */
#define VALUE_MAX 512       /* longest assignment value considered */
#define USERINFO_MAX 256    /* longest user:password in a URL */
#define SCHEME_MAX 32       /* longest URL scheme */
#define WORD_MAX 64         /* longest lower-cased word compared */

/* What is known about an assignment before its value is read. */
struct assign {
	int kc;     /* enum keyclass of the name */
	int sep;    /* '=', ':', '>' or ' ': see parse_sep() */
	int inside; /* the quote the name sits inside, not closed after it */
	int code;   /* "a.b = x": an attribute assigned with spaces */
	int flag;   /* the name is a --flag: the value is an argument */
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
	KEY_ENV_KEY,       /* STRIPE_KEY: a random token, nothing else */
};

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

void secret_value_stats(const unsigned char *b, size_t n, struct vstat *st)
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

/* ------------------------------------------- placeholders and references */

/*
 * Could the upper-case name [b, b+n) be made of words (DB_PASSWORD,
 * S3_BUCKET) rather than drawn at random (L4_K85N4RYK): few digits, and
 * a vowel in every six letters or so?
 */
static int word_like(const unsigned char *b, size_t n)
{
	size_t i, digits = 0, letters = 0, vowels = 0;

	for (i = 0; i < n; i++) {
		if (is_digit(b[i]))
			digits++;
		if (is_alpha(b[i])) {
			letters++;
			if (strchr("AEIOUaeiou", b[i]))
				vowels++;
		}
	}
	return digits * 6 <= n && (letters < 6 || vowels * 6 >= letters);
}

/*
 * Is this value a placeholder rather than a secret: empty, a template or
 * variable reference, a mask, a well-known dummy word?
 */
static int placeholder(const unsigned char *b, size_t n, int env);

static int is_placeholder(const unsigned char *b, size_t n)
{
	return placeholder(b, n, 1);
}

/* env: an upper-case name with '_' (DB_PASSWORD) counts as a reference. */
static int placeholder(const unsigned char *b, size_t n, int env)
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
	if (env && envname && under && is_upper(b[0]) && word_like(b, n))
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
 * Does word (lower case) occur in the identifier [b, b+n) as a whole
 * segment: at a start, after '_' or at a camelCase hump, and ending at an
 * end, '_', a digit or a capital? (userPassword, db_pwd; not "QPwdx".)
 */
static int has_segment(const unsigned char *b, size_t n, const char *word)
{
	size_t m = strlen(word), i, k;

	for (i = 0; i + m <= n; i++) {
		for (k = 0; k < m; k++)
			if (to_lower(b[i + k]) != word[k])
				break;
		if (k < m)
			continue;
		if (i > 0 && b[i - 1] != '_' &&
		    !(is_upper(b[i]) && is_lower(b[i - 1])))
			continue;
		if (i + m < n && b[i + m] != '_' && !is_upper(b[i + m]) &&
		    !is_digit(b[i + m]))
			continue;
		if (i + m < n && is_upper(b[i + m]) && is_upper(b[i + m - 1]) &&
		    i + m + 1 < n && is_upper(b[i + m + 1]))
			continue;
		return 1;
	}
	return 0;
}

/*
 * A variable named after what it holds: user_password, apiToken,
 * challengePassword. Such a value names the secret; it is not the secret.
 */
static int is_named_ref(const unsigned char *b, size_t n)
{
	size_t i, hump = 0, digits = 0;

	if (!is_identifier(b, n))
		return 0;
	for (i = 1; i < n; i++) {
		if (is_lower(b[i - 1]) && is_upper(b[i]))
			hump++;
		if (is_digit(b[i]))
			digits++;
	}
	if (!hump && !memchr(b, '_', n))
		return 0;
	if (hump * 5 > n || digits * 6 > n || entropy(b, n) >= 4.2)
		return 0; /* case and digits at random: a token, not a name */
	return has_segment(b, n, "password") || has_segment(b, n, "passwd") ||
	       has_segment(b, n, "secret") || has_segment(b, n, "token") ||
	       has_segment(b, n, "pwd") || has_segment(b, n, "apikey") ||
	       has_segment(b, n, "api_key");
}

/* A snake_case identifier (index_info, user_pass): a variable in code. */
static int is_snake_ident(const unsigned char *b, size_t n)
{
	size_t i;

	if (!is_identifier(b, n) || !memchr(b, '_', n))
		return 0;
	for (i = 0; i < n; i++) {
		if (is_upper(b[i]))
			return 0;
		/* words with a number at the end: user2_pass, not e5awm4q */
		if (i > 0 && is_digit(b[i - 1]) && is_lower(b[i]))
			return 0;
	}
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
	/* a long random segment: base64 that starts with '/', not a path */
	for (i = 0; i < n;) {
		size_t k = i;
		struct vstat st;

		while (k < n && b[k] != '/')
			k++;
		if (k - i >= 16) {
			secret_value_stats(b + i, k - i, &st);
			if (char_classes(&st) == 3 && st.bits >= 3.5)
				return 0;
		}
		i = k + 1;
	}
	return 1;
}

/* ------------------------------------------------- command-line passwords */

/* How a command-line rule's value is given and read. */
enum {
	CLI_ATT = 1,      /* attached to the flag: -pSECRET */
	CLI_SEP = 2,      /* the next word: -p SECRET (also --flag=SECRET) */
	CLI_USER = 4,     /* user:password, the password is the secret */
	CLI_PCT = 8,      /* user%password (smbclient) */
	CLI_COMMA = 16,   /* user,password (lftp) */
	CLI_PASSPFX = 32, /* pass:SECRET (openssl -passin) */
	CLI_NEXT = 64,    /* the word after the flag's own word: /user:u pw */
};

/* A command and one of its flags that takes a password. */
static const struct cli_rule {
	const char *cmd, *flag;
	int mode;
} cli_rules[] = {
	{ "curl", "-u", CLI_ATT | CLI_SEP | CLI_USER },
	{ "curl", "--user", CLI_SEP | CLI_USER },
	{ "curl", "-U", CLI_ATT | CLI_SEP | CLI_USER },
	{ "curl", "--proxy-user", CLI_SEP | CLI_USER },
	{ "sshpass", "-p", CLI_ATT | CLI_SEP },
	{ "mysql", "-p", CLI_ATT },
	{ "mysqldump", "-p", CLI_ATT },
	{ "mysqladmin", "-p", CLI_ATT },
	{ "mysqlimport", "-p", CLI_ATT },
	{ "mysqlcheck", "-p", CLI_ATT },
	{ "mysqlpump", "-p", CLI_ATT },
	{ "mysqlsh", "-p", CLI_ATT },
	{ "mariadb", "-p", CLI_ATT },
	{ "mariadb-dump", "-p", CLI_ATT },
	{ "redis-cli", "-a", CLI_SEP },
	{ "sqlcmd", "-P", CLI_SEP },
	{ "bcp", "-P", CLI_SEP },
	{ "osql", "-P", CLI_SEP },
	{ "smbclient", "-U", CLI_SEP | CLI_PCT },
	{ "smbclient", "--user", CLI_SEP | CLI_PCT },
	{ "rpcclient", "-U", CLI_SEP | CLI_PCT },
	{ "smbmap", "-p", CLI_SEP },
	{ "zip", "-P", CLI_SEP },
	{ "unzip", "-P", CLI_SEP },
	{ "7z", "-p", CLI_ATT },
	{ "7za", "-p", CLI_ATT },
	{ "7zz", "-p", CLI_ATT },
	{ "rar", "-p", CLI_ATT },
	{ "unrar", "-p", CLI_ATT },
	{ "ldapsearch", "-w", CLI_SEP },
	{ "ldapadd", "-w", CLI_SEP },
	{ "ldapmodify", "-w", CLI_SEP },
	{ "ldapdelete", "-w", CLI_SEP },
	{ "ldapwhoami", "-w", CLI_SEP },
	{ "ldappasswd", "-w", CLI_SEP },
	{ "ldapcompare", "-w", CLI_SEP },
	{ "openssl", "-passin", CLI_SEP | CLI_PASSPFX },
	{ "openssl", "-passout", CLI_SEP | CLI_PASSPFX },
	{ "openssl", "-pass", CLI_SEP | CLI_PASSPFX },
	{ "openssl", "-k", CLI_SEP },
	{ "login", "-p", CLI_SEP },  /* docker/podman/helm/oras login */
	{ "mongo", "-p", CLI_SEP },
	{ "mongosh", "-p", CLI_SEP },
	{ "mongodump", "-p", CLI_SEP },
	{ "mongorestore", "-p", CLI_SEP },
	{ "mongoexport", "-p", CLI_SEP },
	{ "mongoimport", "-p", CLI_SEP },
	{ "keytool", "-storepass", CLI_SEP },
	{ "keytool", "-keypass", CLI_SEP },
	{ "keytool", "-srcstorepass", CLI_SEP },
	{ "keytool", "-deststorepass", CLI_SEP },
	{ "keytool", "-srckeypass", CLI_SEP },
	{ "keytool", "-destkeypass", CLI_SEP },
	{ "ssh-keygen", "-N", CLI_SEP },
	{ "ssh-keygen", "-P", CLI_SEP },
	{ "lftp", "-u", CLI_SEP | CLI_COMMA },
	{ "xfreerdp", "/p:", CLI_ATT },
	{ "evil-winrm", "-p", CLI_SEP },
	{ "wget", "--password", CLI_SEP },
	{ "wget", "--http-password", CLI_SEP },
	{ "wget", "--ftp-password", CLI_SEP },
	{ "wget", "--proxy-password", CLI_SEP },
	{ "gpg", "--passphrase", CLI_SEP },
	{ "machine", "password", CLI_SEP }, /* .netrc */
	{ "default", "password", CLI_SEP }, /* .netrc */
	{ "htpasswd", "-b", CLI_SEP },
	{ "use", "/user:", CLI_ATT | CLI_NEXT }, /* net use X: \\h /user:u pw */
	{ "runas", "/user:", CLI_ATT | CLI_NEXT },
};

#define CLI_LINE_MAX 512 /* how far along its line a command is read */

/* End of the shell word at p (quotes kept together), before limit. */
static size_t word_end(const struct scan *s, size_t p, size_t limit)
{
	int q = 0;

	while (p < limit) {
		int c = s->t[p];

		if (q) {
			if (c == q)
				q = 0;
		} else if (c == '\'' || c == '"') {
			q = c;
		} else if (is_hspace(c)) {
			break;
		}
		p++;
	}
	return p;
}

/* Strip one pair of quotes from the word [*a, *e). */
static void unquote(const struct scan *s, size_t *a, size_t *e)
{
	if (*e - *a >= 2 && is_quote(s->t[*a]) && s->t[*e - 1] == s->t[*a]) {
		(*a)++;
		(*e)--;
	} else if (*e > *a && is_quote(s->t[*a])) {
		(*a)++; /* a quote closed later on the line: 'sshpass -p x' */
	} else if (*e > *a && is_quote(s->t[*e - 1])) {
		(*e)--;
	}
}

/* Is [b, b+n) a password given on a command line (not a placeholder)? */
static int cli_secret(const unsigned char *b, size_t n)
{
	size_t i, digits = 0;

	if (n < 4 || placeholder(b, n, 0) || b[0] == '-' || b[0] == '$' ||
	    b[0] == '`' || memchr(b, '$', n))
		return 0;
	for (i = 0; i < n; i++) {
		if (is_digit(b[i]))
			digits++;
		/* a quote, a blank or non-ASCII inside: prose quoting a
		 * command ("curl -u a:", `mysql -p…`), not a password */
		if (b[i] <= ' ' || b[i] >= 0x7f || is_quote(b[i]))
			return 0;
	}
	return digits < n; /* all digits: a port, a uid:gid */
}

/* The password part of value [a, e) read as mode says; 0 if none. */
static int cli_value(const struct scan *s, size_t a, size_t e, int mode,
		     size_t *pa, size_t *pe)
{
	const unsigned char *b;
	size_t k;
	int sep = mode & CLI_USER ? ':' : mode & CLI_PCT ? '%' :
		  mode & CLI_COMMA ? ',' : 0;

	unquote(s, &a, &e);
	for (k = a; k < e; k++)
		if (is_quote(s->t[k]) || is_hspace(s->t[k]))
			break; /* the end of a quoted line: ... -p x"} */
	e = k;
	if (mode & CLI_PASSPFX) {
		if (e - a < 5 || memcmp(s->t + a, "pass:", 5) != 0)
			return 0;
		a += 5;
	}
	if (sep) {
		b = memchr(s->t + a, sep, e - a);
		if (!b)
			return 0;
		a = (size_t)(b - s->t) + 1;
	}
	if (!cli_secret(s->t + a, e - a))
		return 0;
	*pa = a;
	*pe = e;
	return 1;
}

/* A command at i whose line gives a password by flag: curl -u u:p, ... */
static int m_cli(const struct scan *s, size_t i, struct match *m)
{
	size_t n, r, p, limit, w, we;
	int b = before(s, i);

	if (!ON(K_CLI_PASSWORD) || !(is_alnum(at(s, i))) || is_ident(b))
		return 0;
	if (!strchr("cs7mrbuzlokdeghwx", at(s, i)) && at(s, i) != 'u')
		return 0; /* no command starts with this byte */
	n = run_len(s, i, is_ident, 16);
	if (n >= 16 || !is_hspace(at(s, i + n)))
		return 0;
	for (r = 0; r < ARRAY_SIZE(cli_rules); r++)
		if (cli_rules[r].cmd[0] == s->t[i] &&
		    strlen(cli_rules[r].cmd) == n &&
		    memcmp(s->t + i, cli_rules[r].cmd, n) == 0)
			break;
	if (r == ARRAY_SIZE(cli_rules))
		return 0;
	limit = s->len - i > CLI_LINE_MAX ? i + CLI_LINE_MAX : s->len;
	for (p = i + n; p < limit; p++)
		if (s->t[p] == '\n' || s->t[p] == '|' || s->t[p] == ';')
			break;
	limit = p;
	/* .netrc: "machine h login u password p", not "default password" */
	if (((n == 7 && memcmp(s->t + i, "machine", 7) == 0) ||
	     (n == 7 && memcmp(s->t + i, "default", 7) == 0)) &&
	    !contains_ci(s->t + i, limit - i, " login "))
		return 0;
	for (w = i + n; w < limit; w = we) {
		size_t k;

		while (w < limit && is_hspace(s->t[w]))
			w++;
		we = word_end(s, w, limit);
		if (we == w)
			break;
		for (k = r; k < ARRAY_SIZE(cli_rules); k++) {
			const struct cli_rule *cr = &cli_rules[k];
			size_t fl = strlen(cr->flag), pa, pe;

			if (strlen(cr->cmd) != n ||
			    memcmp(s->t + i, cr->cmd, n) != 0)
				continue;
			if (we - w < fl || memcmp(s->t + w, cr->flag, fl) != 0)
				continue;
			if (we - w == fl && (cr->mode & CLI_SEP)) {
				size_t v = we, ve;

				while (v < limit && is_hspace(s->t[v]))
					v++;
				ve = word_end(s, v, limit);
				if (strcmp(cr->cmd, "htpasswd") == 0) {
					/* htpasswd -b FILE USER PASSWORD */
					int skip;

					for (skip = 0; skip < 2; skip++) {
						v = ve;
						while (v < limit &&
						       is_hspace(s->t[v]))
							v++;
						ve = word_end(s, v, limit);
					}
				}
				if (cli_value(s, v, ve, cr->mode, &pa, &pe))
					goto hit;
			} else if (we - w > fl && s->t[w + fl] == '=' &&
				   (cr->mode & CLI_SEP)) {
				if (cli_value(s, w + fl + 1, we, cr->mode, &pa,
					      &pe))
					goto hit;
			} else if (we - w > fl && (cr->mode & CLI_NEXT)) {
				size_t v = we, ve;

				while (v < limit && is_hspace(s->t[v]))
					v++;
				ve = word_end(s, v, limit);
				if (ve > v && s->t[v] != '/' &&
				    cli_value(s, v, ve, 0, &pa, &pe))
					goto hit;
			} else if (we - w > fl && (cr->mode & CLI_ATT)) {
				if (cli_value(s, w + fl, we, cr->mode, &pa, &pe))
					goto hit;
			}
			continue;
hit:
			m->kind = K_CLI_PASSWORD;
			m->start = pa;
			m->end = pe;
			return 1;
		}
	}
	return 0;
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
	if (secret_match_token(s, colon + 1, m) && m->end <= host)
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
		"password", "passwd", "passphrase", "passcode", "sshpass",
		"storepass", "keypass", "pgpass", "dbpass", "psk",
	};
	static const char *const weak[] = { "pwd", "pass" };
	static const char *const sec[] = {
		"secret", "token", "auth", "authorization", "apikey",
		"accesskey", "secretkey", "privatekey", "signingkey",
		"clientsecret", "accesstoken", "authtoken", "credential",
		"credentials", "creds", "pat", "apitoken", "bearer",
	};
	static const char *const keyed[] = {
		"api", "access", "secret", "private", "signing", "encryption",
		"master", "auth", "client", "service", "app", "subscription", "admin", "license", "consumer", "shared",
		"webhook", "deploy", "write", "storage", "management", "integration", "server", "partner",
	};
	static const char *const not_secret[] = {
		"public", "publishable", "site", "primary", "foreign", "sort",
		"partition", "cache", "idempotency", "ssh", "gpg", "pgp", "id",
		"object", "hash", "routing", "map", "lookup", "cursor", "shard",
		"row", "column", "registry", "dedup", "dedupe", "unique",
		"composite", "natural", "surrogate", "group", "order", "s3",
		"file", "path", "config", "hotkey", "shortcut", "keyboard",
		"music", "translation", "i18n", "label", "field", "column",
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
	/* Bundler's credentials for Sidekiq Pro/Enterprise's gem server:
	 * BUNDLE_GEMS__CONTRIBSYS__COM=<user:password> */
	if (contains_ci(k, n, "contribsys__com"))
		return KEY_PASSWORD;
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
	if (strcmp(last, "key") == 0 && prev[0] &&
	    !in_list(prev, not_secret, ARRAY_SIZE(not_secret))) {
		/* an environment variable PROVIDER_KEY: upper case only */
		for (i = 0; i < n; i++)
			if (is_lower(k[i]))
				return KEY_NONE;
		return KEY_ENV_KEY;
	}
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
		"bearer ", "basic ", "token ", "bot ", "digest ", "ssws ",
		"splunk ", "apikey ", "api-key ", "key ", "sso-key ",
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
		if (is_dotted_ref(b, n) ||
		    (is_snake_ident(b, n) && !a->flag && word_like(b, n)) ||
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
		/* "the password is required", "... is stored_in_vault":
		 * prose needs a digit or symbol, and a snake_case value is a
		 * name only when its parts read as words (r8_ostdxmjx7 does
		 * not) */
		if (a->sep == 'i' &&
		    (alpha || (is_snake_ident(b, n) && word_like(b, n)) ||
		     (is_identifier(b, n) && !digit)))
			return 0;
	} else if (memchr(b, ' ', n) && ((is_upper(b[0]) && !digit) ||
					 contains_ci(b, n, "password"))) {
		return 0; /* a UI label: "Enter your password" */
	} else if (a->kc == KEY_WEAK_PASSWORD && alpha) {
		return 0; /* PASS = 'somewhere': pass names too much */
	}
	if (alpha && (contains_ci(b, n, "password") ||
		      contains_ci(b, n, "passwd")))
		return 0; /* password = dbpassword: a name, not a secret */
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
	secret_value_stats(b, n, &st);
	if (st.space || st.high)
		return 0;
	if (st.hex)
		return st.hexdigits >= 32 && st.bits >= 2.7;
	if (!st.digit && st.upper * 5 >= n && st.lower * 5 >= n && n >= 24)
		return st.bits >= 3.9; /* random letters, no digit drawn */
	if (!st.digit || !(st.upper || st.lower))
		return 0;
	return st.bits >= 3.3;
}

/*
 * A passphrase written as the rest of the line after a password-like name:
 * "password: correct horse battery staple". Three to eight words of 3..16
 * lower-case letters, none of them a word of prose or of a UI ("password:
 * required for every account", "Password: enter your password"), and
 * nothing else on the line. The end of the words goes to *end.
 */
static int passphrase_at(const struct scan *s, size_t p, size_t *end)
{
	static const char *const prose[] = {
		"the", "and", "for", "not", "are", "was", "were", "must",
		"should", "can", "will", "may", "might", "required", "optional",
		"your", "you", "our", "their", "this", "that", "its", "see",
		"use", "set", "enter", "type", "field", "value", "reset",
		"change", "changed", "minimum", "maximum", "least", "most",
		"characters", "chars", "length", "long", "same", "above",
		"below", "prompt", "prompted", "stored", "store", "secret",
		"hidden", "masked", "empty", "none", "null", "default", "only",
		"when", "then", "else", "never", "always", "please", "here",
		"there", "with", "from", "into", "onto", "has", "have", "had",
		"been", "being", "but", "any", "all", "each", "every", "per",
		"via", "using", "used", "user", "users", "account", "accounts",
		"password", "passwords", "passphrase", "login", "sign", "file",
		"env", "environment", "variable", "config", "configured",
		"needed", "needs", "need", "missing", "invalid", "wrong",
		"expired", "expires", "rotate", "rotated", "rotation", "policy",
		"see", "docs", "documentation", "example", "sample", "dummy",
		"test", "not", "too", "also", "like", "unless", "until", "after",
		"before", "how", "what", "why", "which", "who", "where", "our",
		"they", "them", "his", "her", "him", "she", "one", "two",
		"should", "would", "could", "does", "did", "done", "get", "got",
		"ask", "asks", "asked", "given", "give", "provide", "provided",
		"supply", "supplied", "manager", "vault", "keychain", "stdin",
	};
	size_t q = p, words = 0, letters;
	char w[WORD_MAX];

	for (;;) {
		size_t a = q;

		letters = run_len(s, q, is_lower, 17);
		if (letters < 3 || letters > 16 || is_alnum(at(s, q + letters)))
			return 0;
		if (!lower_word(s->t + a, letters, w) ||
		    in_list(w, prose, ARRAY_SIZE(prose)))
			return 0;
		q += letters;
		words++;
		if (at(s, q) == ' ' && is_lower(at(s, q + 1))) {
			q++;
			continue;
		}
		break;
	}
	if (words < 3 || words > 8)
		return 0;
	*end = q;
	while (is_hspace(at(s, q)) || at(s, q) == '\r')
		q++;
	return at(s, q) == '\n' || at(s, q) == -1;
}

/*
 * "Basic <base64 of user:password>" at p: the credential, when it decodes
 * to a user and a password that is not a placeholder.
 */
static int basic_auth(const struct scan *s, size_t p, struct match *m)
{
	unsigned char out[192];
	size_t n, i, o = 0, colon = 0;
	unsigned acc = 0, bits = 0;

	if (!ON(K_BASIC_AUTH) || !starts_with_ci(s, p, "basic "))
		return 0;
	p += 6;
	while (is_hspace(at(s, p)))
		p++;
	n = run_len(s, p, is_b64, 256);
	if (n < 8 || n > 255 || n % 4 == 1)
		return 0;
	for (i = 0; i < n; i++) {
		int c = s->t[p + i];
		int v = is_upper(c) ? c - 'A' : is_lower(c) ? c - 'a' + 26 :
			is_digit(c) ? c - '0' + 52 : c == '+' ? 62 : 63;

		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	for (i = 0; i < o; i++) {
		if (out[i] < 0x20 || out[i] >= 0x7f)
			return 0;
		if (out[i] == ':' && !colon)
			colon = i + 1;
	}
	if (!colon || o - colon < 1 ||
	    is_placeholder(out + colon, o - colon))
		return 0;
	m->kind = K_BASIC_AUTH;
	m->start = p;
	m->end = p + n + run_len(s, p + n, is_eq, 2);
	return 1;
}

/* The value of PROVIDER_KEY=: a random token of token bytes, >= 20 long. */
static int env_key_value(const struct scan *s, const struct value *v)
{
	size_t i, n = v->end - v->start;
	int hex = 1;

	if (n < 20)
		return 0;
	for (i = v->start; i < v->end; i++) {
		if (!is_alnum(s->t[i]) && !in_set(s->t[i], "-+=/"))
			return 0;
		if (!is_hex(s->t[i]))
			hex = 0;
	}
	if (hex)
		return n >= 32 && entropy(s->t + v->start, n) >= 3.0;
	return entropy(s->t + v->start, n) >= 3.5;
}

/*
 * The value at p of assignment a: a known token format, a password, or a
 * high-entropy secret.
 */
static int value_hit(const struct scan *s, size_t p, struct assign *a,
		     struct match *m)
{
	struct value v;
	size_t q0 = p + (is_quote(at(s, p)) ? 1 : 0), pend;

	if (basic_auth(s, q0, m))
		return 1;
	parse_value(s, p, &v);
	if (secret_match_token(s, v.start, m))
		return 1;
	if (a->kc == KEY_PASSWORD && !v.quote && ON(K_PASSPHRASE) &&
	    (a->sep == ':' || a->sep == '=') && passphrase_at(s, v.start, &pend)) {
		m->kind = K_PASSPHRASE;
		m->start = v.start;
		m->end = pend;
		return 1;
	}
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
			if (secret_match_token(s, v.start, m))
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
	if (a->kc == KEY_SECRET || a->kc == KEY_ENV_KEY) {
		if (!ON(K_ENTROPY) || !secret_value(s, &v) ||
		    (a->kc == KEY_ENV_KEY && !env_key_value(s, &v)))
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

/* Is the name [b, b+n) upper case (an environment variable)? */
static int upper_name(const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (is_lower(b[i]))
			return 0;
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
	a.flag = n > 2 && c == '-' && s->t[i + 1] == '-';
	a.sep = parse_sep(s, &p, open, a.flag);
	if (!a.sep && a.kc == KEY_PASSWORD &&
	    ((starts_with_ci(s, p, " is") &&
	      (at(s, p + 3) == ' ' || at(s, p + 3) == ':')) ||
	     (starts_with_ci(s, p, " was") &&
	      (at(s, p + 4) == ' ' || at(s, p + 4) == ':')))) {
		/* prose: "the password is Tr0ub4dor&3" */
		p += at(s, p + 1) == 'i' || at(s, p + 1) == 'I' ? 3 : 4;
		if (at(s, p) == ':')
			p++;
		while (is_hspace(at(s, p)))
			p++;
		a.sep = 'i';
	}
	if ((a.sep == '=' && at(s, i + n) == '=' && upper_name(s->t + i, n)) ||
	    a.sep == '>')
		a.flag = 1; /* PGPASSWORD=x, <password>x: literals, not code */
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
		a.flag = 0;
		return value_hit(s, p, &a, m);
	}
	return 0;
}

/*
 * A NuGet.config credential: <add key="ClearTextPassword" value="..." />
 * (or key="Password", an encrypted one); the value, when it is a literal
 * of at least 8 bytes and not a placeholder (%NUGET_PASSWORD%, $(Pw)).
 */
static int m_nuget(const struct scan *s, size_t i, struct match *m)
{
	static const char *const keys[] = {
		"<add key=\"cleartextpassword\"", "<add key=\"password\"",
	};
	size_t k, p = 0, e;

	if (!ON(K_PASSWORD))
		return 0;
	for (k = 0; k < ARRAY_SIZE(keys) && !p; k++)
		if (starts_with_ci(s, i, keys[k]))
			p = i + strlen(keys[k]);
	if (!p)
		return 0;
	while (is_hspace(at(s, p)))
		p++;
	if (!starts_with_ci(s, p, "value=\""))
		return 0;
	p += 7;
	for (e = p; e < s->len && e - p < VALUE_MAX && s->t[e] != '"' &&
		    s->t[e] != '\n'; e++)
		;
	if (at(s, e) != '"' || e - p < 8 ||
	    is_placeholder(s->t + p, e - p) ||
	    (s->t[p] == '$' && at(s, p + 1) == '('))
		return 0;
	m->kind = K_PASSWORD;
	m->start = p;
	m->end = e;
	return 1;
}

/* ------------------------------------------------------------------ scan */

/* Every matcher at byte i, most specific first. */
static int match_at(const struct scan *s, size_t i, struct match *m)
{
	int c = s->t[i];

	if (secret_match_token(s, i, m))
		return 1;
	if (c == ':' && m_url(s, i, m))
		return 1;
	if ((c == 'B' || c == 'b') && !is_ident(before(s, i)) &&
	    basic_auth(s, i, m))
		return 1;
	if (m_cli(s, i, m))
		return 1;
	if (m_assign(s, i, m))
		return 1;
	if (c >= 0xe4 && c <= 0xe5 && m_cjk(s, i, m))
		return 1;
	if (c == '<' && m_nuget(s, i, m))
		return 1;
	return 0;
}

/* See secret_int.h: the matchers over one buffer, hits in its coordinates. */
void secret_match_run(const unsigned char *t, size_t len, int tokens,
		      void (*add)(void *arg, const char *kind, size_t start,
				  size_t end),
		      void *arg)
{
	struct scan s;
	struct match m;
	size_t i = 0;

	s.t = t;
	s.len = len;
	while (i < s.len) {
		int hit = tokens ? secret_match_token(&s, i, &m) : match_at(&s, i, &m);

		if (!hit || NEVER(m.start < i || m.end <= m.start ||
				  m.end > s.len)) {
			i++;
			continue;
		}
		add(arg, kind_names[m.kind], m.start, m.end);
		i = m.end;
	}
}

/* See secret.h: the names of kind_names[], in the order of the table. */
const char *secret_kind_name(size_t i)
{
	return i < K_COUNT ? kind_names[i] : NULL;
}

/* See secret.h. Test-only: sets secret_kind_off[], which every matcher checks. */
void secret_disable_kind_for_test(const char *kind)
{
	size_t i;

	if (!kind) {
		memset(secret_kind_off, 0, sizeof(secret_kind_off));
		return;
	}
	for (i = 0; i < K_COUNT; i++)
		if (strcmp(kind, kind_names[i]) == 0)
			secret_kind_off[i] = 1;
}
