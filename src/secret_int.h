/*
 * secret_int.h -- what the three files of the secret filter share:
 * secret.c (the kinds, the context matchers: URLs, command lines,
 * assignments, passphrases, and the pass over one buffer), secret_token.c
 * (the matchers that know a token by its own format: the provider shape
 * table, JWTs, PEM and PuTTY keys, AWS secrets, Azure SAS signatures) and
 * secret_scan.c (the views, the merge, the entry points of secret.h).
 */
#ifndef CAIRN_SECRET_INT_H
#define CAIRN_SECRET_INT_H

#include <stddef.h>
#include <string.h>

static inline int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline int is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static inline int is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static inline int is_alpha(int c)
{
	return is_upper(c) || is_lower(c);
}

static inline int is_alnum(int c)
{
	return is_alpha(c) || is_digit(c);
}

static inline int is_b64url(int c)
{
	return is_alnum(c) || c == '-' || c == '_';
}

static inline int is_b64all(int c)
{
	return is_b64url(c) || c == '+' || c == '/' || c == '=';
}

/*
 * Every kind: its enum name and its stable name. The first block is the
 * table in secret.c's header comment; the token kinds after it are the
 * provider formats of token_rules[] in secret_token.c, each one line there.
 */
#define KINDS                                                              \
	X(K_AWS_ID, "aws-access-key-id")                                   \
	X(K_AWS_SECRET, "aws-secret-access-key")                           \
	X(K_GITHUB, "github-token")                                        \
	X(K_GITLAB, "gitlab-token")                                        \
	X(K_SLACK, "slack-token")                                          \
	X(K_SLACK_HOOK, "slack-webhook")                                   \
	X(K_STRIPE, "stripe-key")                                          \
	X(K_GOOGLE_API, "google-api-key")                                  \
	X(K_GOOGLE_OAUTH, "google-oauth-secret")                           \
	X(K_OPENAI, "openai-key")                                          \
	X(K_ANTHROPIC, "anthropic-key")                                    \
	X(K_NPM, "npm-token")                                              \
	X(K_HUGGINGFACE, "huggingface-token")                              \
	X(K_PRIVATE_KEY, "private-key")                                    \
	X(K_JWT, "jwt")                                                    \
	X(K_URL_PASSWORD, "password-in-url")                               \
	X(K_PASSWORD, "password-assignment")                               \
	X(K_ENTROPY, "high-entropy-assignment")                            \
	X(K_BASIC_AUTH, "basic-auth")                                      \
	X(K_CLI_PASSWORD, "cli-password")                                  \
	X(K_PASSPHRASE, "passphrase")                                      \
	X(K_AZURE_STORAGE, "azure-storage-key")                            \
	X(K_AZURE_SAS, "azure-sas-token")                                  \
	X(K_AZURE_AD, "azure-ad-client-secret")                            \
	X(K_GOOGLE_TOKEN, "google-oauth-token")                            \
	X(K_STRIPE_HOOK, "stripe-webhook-secret")                          \
	X(K_SENDGRID, "sendgrid-api-key")                                  \
	X(K_TWILIO, "twilio-api-key")                                      \
	X(K_PYPI, "pypi-token")                                            \
	X(K_DIGITALOCEAN, "digitalocean-token")                            \
	X(K_SHOPIFY, "shopify-token")                                      \
	X(K_SQUARE, "square-token")                                        \
	X(K_MAILGUN, "mailgun-key")                                        \
	X(K_MAILCHIMP, "mailchimp-key")                                    \
	X(K_HEROKU, "heroku-key")                                          \
	X(K_DATABRICKS, "databricks-token")                                \
	X(K_DOPPLER, "doppler-token")                                      \
	X(K_LINEAR, "linear-api-key")                                      \
	X(K_NOTION, "notion-token")                                        \
	X(K_ATLASSIAN, "atlassian-token")                                  \
	X(K_DISCORD, "discord-bot-token")                                  \
	X(K_DISCORD_HOOK, "discord-webhook")                               \
	X(K_TELEGRAM, "telegram-bot-token")                                \
	X(K_AGE, "age-secret-key")                                         \
	X(K_ALIBABA, "alibaba-access-key")                                 \
	X(K_TENCENT, "tencent-secret-id")                                  \
	X(K_CONTENTFUL, "contentful-token")                                \
	X(K_CLOJARS, "clojars-token")                                      \
	X(K_DYNATRACE, "dynatrace-token")                                  \
	X(K_EASYPOST, "easypost-key")                                      \
	X(K_FACEBOOK, "facebook-access-token")                             \
	X(K_FIGMA, "figma-token")                                          \
	X(K_FLYIO, "flyio-token")                                          \
	X(K_FRAMEIO, "frameio-token")                                      \
	X(K_GOCARDLESS, "gocardless-token")                                \
	X(K_GRAFANA, "grafana-token")                                      \
	X(K_TERRAFORM, "terraform-cloud-token")                            \
	X(K_VAULT, "vault-token")                                          \
	X(K_INFRACOST, "infracost-key")                                    \
	X(K_JFROG, "jfrog-token")                                          \
	X(K_MAPBOX, "mapbox-secret-token")                                 \
	X(K_NEWRELIC, "newrelic-key")                                      \
	X(K_ONEPASSWORD, "1password-token")                                \
	X(K_PLANETSCALE, "planetscale-token")                              \
	X(K_POSTMAN, "postman-key")                                        \
	X(K_PREFECT, "prefect-key")                                        \
	X(K_PULUMI, "pulumi-token")                                        \
	X(K_README, "readme-key")                                          \
	X(K_RUBYGEMS, "rubygems-key")                                      \
	X(K_SCALINGO, "scalingo-token")                                    \
	X(K_SENTRY, "sentry-token")                                        \
	X(K_BREVO, "brevo-key")                                            \
	X(K_SHIPPO, "shippo-token")                                        \
	X(K_SOURCEGRAPH, "sourcegraph-token")                              \
	X(K_SONAR, "sonarqube-token")                                      \
	X(K_TYPEFORM, "typeform-token")                                    \
	X(K_YANDEX, "yandex-key")                                          \
	X(K_ADOBE, "adobe-client-secret")                                  \
	X(K_AIRTABLE, "airtable-token")                                    \
	X(K_PERPLEXITY, "perplexity-key")                                  \
	X(K_GROQ, "groq-key")                                              \
	X(K_REPLICATE, "replicate-token")                                  \
	X(K_XAI, "xai-key")                                                \
	X(K_OPENROUTER, "openrouter-key")                                  \
	X(K_SK_HEX, "sk-hex-api-key")                                      \
	X(K_LANGSMITH, "langsmith-key")                                    \
	X(K_SUPABASE, "supabase-token")                                    \
	X(K_DOCKER, "docker-hub-token")                                    \
	X(K_TAILSCALE, "tailscale-key")                                    \
	X(K_CLOUDFLARE_CA, "cloudflare-origin-ca-key")                     \
	X(K_BRAINTREE, "braintree-token")                                  \
	X(K_RAZORPAY, "razorpay-key")                                      \
	X(K_FLUTTERWAVE, "flutterwave-key")                                \
	X(K_CLICKUP, "clickup-token")                                      \
	X(K_DROPBOX, "dropbox-token")                                      \
	X(K_DUFFEL, "duffel-token")                                        \
	X(K_TEAMS_HOOK, "teams-webhook")                                   \
	X(K_NUGET, "nuget-key")                                            \
	X(K_OPENSHIFT, "openshift-token")                                  \
	X(K_PLAID, "plaid-token")                                          \
	X(K_PACKAGIST, "packagist-token")                                  \
	X(K_SETTLEMINT, "settlemint-token")                                \
	X(K_FCM, "firebase-fcm-key")                                       \
	X(K_NETLIFY, "netlify-token")                                      \
	X(K_RENDER, "render-key")                                          \
	X(K_BUILDKITE, "buildkite-token")                                  \
	X(K_OCTOPUS, "octopus-deploy-key")                                 \
	X(K_PINECONE, "pinecone-key")                                      \
	X(K_TWITTER, "twitter-bearer-token")                               \
	X(K_ASANA, "asana-token")                                          \
	X(K_AMAZON_MWS, "amazon-mws-token")                                \
	X(K_ZAPIER_HOOK, "zapier-webhook")                                 \
	X(K_CIRCLECI, "circleci-token")                                    \
	X(K_POSTHOG, "posthog-key")                                        \
	X(K_NVIDIA, "nvidia-api-key")                                      \
	X(K_TAVILY, "tavily-key")                                          \
	X(K_JINA, "jina-key")                                              \
	X(K_LANGFUSE, "langfuse-key")                                      \
	X(K_LIVE_KEY, "live-api-key")                                      \
	X(K_HARNESS, "harness-token")                                      \
	X(K_INTRA42, "intra42-secret")                                     \
	X(K_DEFINED, "defined-networking-key")                             \
	X(K_ONEPASSWORD_SK, "1password-secret-key")                        \
	X(K_AUTHRESS, "authress-key")                                      \
	X(K_BEDROCK, "aws-bedrock-api-key")                                \
	X(K_CLICKHOUSE, "clickhouse-cloud-key")                            \
	X(K_MAXMIND, "maxmind-license-key")                                \
	X(K_VERCEL, "vercel-token")

enum kind {
#define X(k, name) k,
	KINDS
#undef X
	K_COUNT
};

/* Test hook state (secret_disable_kind_for_test): all zero in production. */
extern unsigned char secret_kind_off[K_COUNT];

#define ON(k) (!secret_kind_off[k])

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

/* ------------------------------------------------------- byte classes */

static inline int at(const struct scan *s, size_t i)
{
	return i < s->len ? s->t[i] : -1;
}

static inline int before(const struct scan *s, size_t i)
{
	return i > 0 && i - 1 < s->len ? s->t[i - 1] : -1;
}

static inline int is_upnum(int c)
{
	return is_upper(c) || is_digit(c);
}

static inline int is_word(int c)
{
	return is_alnum(c) || c == '_';
}

static inline int is_b64(int c)
{
	return is_alnum(c) || c == '+' || c == '/';
}

static inline int is_eq(int c)
{
	return c == '=';
}

static inline int is_slackc(int c)
{
	return is_alnum(c) || c == '-';
}

static inline int is_alnum_slash(int c)
{
	return is_alnum(c) || c == '/';
}

static inline int is_ident(int c)
{
	return is_word(c) || c == '.' || c == '-';
}

static inline int is_scheme(int c)
{
	return is_alnum(c) || c == '+' || c == '.' || c == '-';
}

static inline int is_hex(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline int is_hspace(int c)
{
	return c == ' ' || c == '\t';
}

static inline int is_quote(int c)
{
	return c == '"' || c == '\'' || c == '`';
}

/* Is c one of the bytes of set? (Never true for NUL.) */
static inline int in_set(int c, const char *set)
{
	return c > 0 && strchr(set, c) != NULL;
}

static inline int to_lower(int c)
{
	return is_upper(c) ? c + ('a' - 'A') : c;
}

/* Length of the run of bytes of class cls at i, counting at most cap. */
static inline size_t run_len(const struct scan *s, size_t i, int (*cls)(int),
		      size_t cap)
{
	size_t n = 0;

	while (n < cap && cls(at(s, i + n)))
		n++;
	return n;
}

static inline int starts_with(const struct scan *s, size_t i, const char *lit)
{
	size_t n = strlen(lit);

	return i <= s->len && s->len - i >= n && memcmp(s->t + i, lit, n) == 0;
}

static inline int starts_with_ci(const struct scan *s, size_t i, const char *lit)
{
	size_t n = strlen(lit), k;

	if (i > s->len || s->len - i < n)
		return 0;
	for (k = 0; k < n; k++)
		if (to_lower(s->t[i + k]) != lit[k])
			return 0;
	return 1;
}

/* What a candidate value is made of. */
struct vstat {
	size_t upper, lower, digit, space, high, other;
	size_t hexdigits; /* bytes that are hex digits */
	int hex;          /* only hex digits and '-' */
	double bits;      /* Shannon entropy, bits per byte */
};

void secret_value_stats(const unsigned char *b, size_t n, struct vstat *st);

/* How many of upper / lower / digit occur. */
static inline int char_classes(const struct vstat *st)
{
	return (st->upper > 0) + (st->lower > 0) + (st->digit > 0);
}

/* Any token recognised by its own format, starting at i (secret_token.c). */
int secret_match_token(const struct scan *s, size_t i, struct match *m);

/*
 * Every matcher (only the token formats with tokens) over t[0, len), left
 * to right, resuming after each hit: add(arg, kind, start, end) for each,
 * in t's coordinates.
 */
void secret_match_run(const unsigned char *t, size_t len, int tokens,
		      void (*add)(void *arg, const char *kind, size_t start,
				  size_t end),
		      void *arg);

#endif /* CAIRN_SECRET_INT_H */
