/*
 * secret_token.c -- the secret filter's format matchers: a credential
 * known by its own shape, wherever it stands (no name, no "=" needed).
 *
 * Layer: part of the secret filter (secret.h); secret.c's pass calls
 * secret_match_token() at every byte, over the text and over each
 * normalised view (secret_scan.c). Shares secret_int.h's kinds, byte
 * classes and value statistics; sits on nothing else but pthread_once.
 *
 * Holds: token_rules[], the provider formats (about 230 shapes, one line
 * each: a literal prefix and up to five class segments, each under its own
 * kind name: github-token, sendgrid-api-key, pypi-token, ...) with the
 * per-first-byte index built once; JWTs; PEM private key blocks; PuTTY key
 * files; AWS secret access keys (40 base64 bytes on a line that says
 * secret or aws); Azure SAS signatures (&sig=).
 *
 * Must never: backtrack or look further than its fixed bounds (a segment
 * takes at most max bytes, JWT_PART_MAX, PEM_MAX, CONTEXT_MAX), match
 * inside a longer word (only a distinctive prefix may follow a name, as in
 * key_AKIA...: see glue_level()), report a kind switched off by the test
 * hook, or copy the bytes it matched.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"
#include "secret_int.h"

/* Bounds on every look ahead or behind; they keep the pass linear. */
#define JWT_PART_MAX 8192   /* longest JWT part */
#define PEM_MAX 65536       /* longest private key block */
#define CONTEXT_MAX 256     /* how far back a line is searched for context */

/* ------------------------------------------------------- token formats */

/*
 * A token known by its shape: a literal prefix (may be empty), then up to
 * five segments, each a run of one byte class with length bounds and the
 * literal that follows it. Every class excludes the literal after it, so
 * the match is one greedy pass with no backtracking: a segment takes at
 * most max bytes, then its literal must follow. After the last segment the
 * token must end (no byte of its class, no letter or digit).
 */
struct seg {
	int (*cls)(int);
	unsigned short min, max;
	const char *lit; /* the literal after this segment, or NULL */
};

struct token_rule {
	const char *prefix;
	int kind;              /* enum kind */
	unsigned char classes; /* how many of upper/lower/digit the body has */
	unsigned char bits10;  /* entropy of the body, tenths of a bit/byte */
	struct seg seg[5];
};

static int is_lonum(int c)
{
	return is_lower(c) || is_digit(c);
}

static int is_hexl(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

static int is_b64eq(int c)
{
	return is_b64(c) || c == '=';
}

static int is_b64urleq(int c)
{
	return is_b64url(c) || c == '=';
}

/* Bech32's alphabet in upper case (age secret keys). */
static int is_bech32u(int c)
{
	return c > 0 && strchr("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", c) != NULL;
}

/* Azure AD client secrets: [A-Za-z0-9_~.] and '-' after the "Q~". */
static int is_azc(int c)
{
	return is_word(c) || c == '~' || c == '.';
}

static int is_azc2(int c)
{
	return is_azc(c) || c == '-';
}

/* Webhook paths: letters, digits, / @ - (Teams, Slack workflows). */
static int is_hookc(int c)
{
	return is_alnum(c) || c == '/' || c == '@' || c == '-' || c == '_';
}

static int is_alnum_pct(int c)
{
	return is_alnum(c) || c == '%';
}

/* 1Password secret keys: upper case, digits and the '-' between groups. */
static int is_updash(int c)
{
	return is_upnum(c) || c == '-';
}

/* Authress keys: a case-blind run of letters, digits and '-'. */
static int is_alnum_dash(int c)
{
	return is_alnum(c) || c == '-';
}

static int is_usdash(int c)
{
	return c == '_' || c == '-';
}

#define S(c, lo, hi, l) { c, lo, hi, l }
#define END { NULL, 0, 0, NULL }
/* one segment after the prefix */
#define T1(pfx, k, cl, b, c1, lo1, hi1)                                    \
	{ pfx, k, cl, b, { S(c1, lo1, hi1, NULL), END, END, END } }

static const struct token_rule token_rules[] = {
	/* cloud providers */
	T1("AKIA", K_AWS_ID, 1, 25, is_upnum, 16, 16),
	T1("ASIA", K_AWS_ID, 1, 25, is_upnum, 16, 16),
	T1("ABIA", K_AWS_ID, 1, 25, is_upnum, 16, 16),
	T1("ACCA", K_AWS_ID, 1, 25, is_upnum, 16, 16),
	T1("A3T", K_AWS_ID, 1, 25, is_upnum, 17, 17),
	T1("ABSK", K_BEDROCK, 3, 40, is_b64eq, 109, 272),
	T1("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", K_BEDROCK, 2, 35,
	   is_b64eq, 40, 2048),
	T1("AIza", K_GOOGLE_API, 2, 30, is_b64url, 35, 35),
	T1("GOCSPX-", K_GOOGLE_OAUTH, 2, 30, is_b64url, 24, 64),
	T1("ya29.", K_GOOGLE_TOKEN, 2, 35, is_b64url, 30, 2048),
	T1("1//0", K_GOOGLE_TOKEN, 2, 35, is_b64url, 40, 512),
	{ "AAAA", K_FCM, 2, 35, { S(is_b64url, 7, 7, ":APA91b"),
				  S(is_b64url, 100, 200, NULL), END, END } },
	{ "", K_AZURE_AD, 2, 35, { S(is_azc, 3, 3, NULL),
				   S(is_digit, 1, 1, "Q~"),
				   S(is_azc2, 31, 34, NULL), END } },
	T1("AccountKey=", K_AZURE_STORAGE, 3, 40, is_b64eq, 80, 100),
	T1("SharedAccessKey=", K_AZURE_STORAGE, 3, 40, is_b64eq, 40, 100),
	T1("LTAI", K_ALIBABA, 2, 30, is_alnum, 12, 24),
	T1("AKID", K_TENCENT, 2, 35, is_alnum, 32, 36),
	T1("dop_v1_", K_DIGITALOCEAN, 2, 30, is_hexl, 64, 64),
	T1("doo_v1_", K_DIGITALOCEAN, 2, 30, is_hexl, 64, 64),
	T1("dor_v1_", K_DIGITALOCEAN, 2, 30, is_hexl, 64, 64),
	T1("HRKU-", K_HEROKU, 2, 35, is_b64url, 40, 80),
	T1("dapi", K_DATABRICKS, 2, 30, is_hexl, 32, 32),
	{ "", K_TERRAFORM, 2, 30, { S(is_lonum, 14, 14, ".atlasv1."),
				    S(is_b64urleq, 60, 70, NULL), END,
				    END } },
	T1("hvs.", K_VAULT, 2, 35, is_b64url, 24, 256),
	T1("hvb.", K_VAULT, 2, 35, is_b64url, 24, 512),
	T1("hvr.", K_VAULT, 2, 35, is_b64url, 24, 256),
	T1("s.", K_VAULT, 2, 35, is_alnum, 24, 24), /* legacy; see rule_match */
	T1("4b1d", K_CLICKHOUSE, 2, 35, is_alnum, 38, 38),
	T1("fo1_", K_FLYIO, 2, 35, is_b64url, 43, 43),
	T1("fm1r_", K_FLYIO, 2, 35, is_b64all, 40, 2048),
	T1("fm1a_", K_FLYIO, 2, 35, is_b64all, 40, 2048),
	T1("fm2_", K_FLYIO, 2, 35, is_b64all, 40, 2048),
	{ "v1.0-", K_CLOUDFLARE_CA, 2, 30, { S(is_hexl, 24, 24, "-"),
					     S(is_hexl, 146, 146, NULL), END,
					     END } },
	T1("sha256~", K_OPENSHIFT, 2, 35, is_b64url, 43, 43),
	T1("nfp_", K_NETLIFY, 2, 35, is_alnum, 36, 40),
	T1("rnd_", K_RENDER, 2, 35, is_alnum, 32, 32),
	T1("pscale_tkn_", K_PLANETSCALE, 2, 35, is_b64url, 32, 64),
	T1("pscale_oauth_", K_PLANETSCALE, 2, 35, is_b64url, 32, 64),
	T1("pscale_pw_", K_PLANETSCALE, 2, 35, is_b64url, 32, 64),
	T1("sbp_", K_SUPABASE, 2, 30, is_hexl, 40, 40),
	T1("sb_secret_", K_SUPABASE, 2, 35, is_b64url, 24, 64),
	T1("vcp_", K_VERCEL, 2, 35, is_b64url, 40, 64),
	T1("vci_", K_VERCEL, 2, 35, is_b64url, 40, 64),
	T1("vca_", K_VERCEL, 2, 35, is_b64url, 40, 64),
	T1("vcr_", K_VERCEL, 2, 35, is_b64url, 40, 64),
	T1("vck_", K_VERCEL, 2, 35, is_b64url, 40, 64),
	T1("tk-us-", K_SCALINGO, 2, 35, is_b64url, 48, 48),
	{ "dt0c01.", K_DYNATRACE, 2, 30, { S(is_upnum, 24, 24, "."),
					   S(is_upnum, 64, 64, NULL), END,
					   END } },
	/* code hosting and CI */
	T1("github_pat_", K_GITHUB, 2, 35, is_word, 40, 255),
	T1("ghp_", K_GITHUB, 2, 35, is_alnum, 30, 255),
	T1("gho_", K_GITHUB, 2, 35, is_alnum, 30, 255),
	T1("ghu_", K_GITHUB, 2, 35, is_alnum, 30, 255),
	T1("ghs_", K_GITHUB, 2, 35, is_alnum, 30, 255),
	T1("ghr_", K_GITHUB, 2, 35, is_alnum, 30, 255),
	T1("glpat-", K_GITLAB, 2, 30, is_b64url, 20, 300),
	T1("gldt-", K_GITLAB, 2, 30, is_b64url, 20, 64),
	T1("glrt-", K_GITLAB, 2, 30, is_b64url, 20, 300),
	T1("glffct-", K_GITLAB, 2, 30, is_b64url, 20, 64),
	T1("_gitlab_session=", K_GITLAB, 2, 30, is_lonum, 32, 32),
	T1("glcbt-", K_GITLAB, 2, 30, is_b64url, 20, 64),
	T1("glsoat-", K_GITLAB, 2, 30, is_b64url, 20, 64),
	T1("glimt-", K_GITLAB, 2, 30, is_b64url, 20, 64),
	T1("glagent-", K_GITLAB, 2, 30, is_b64url, 40, 64),
	T1("gloas-", K_GITLAB, 2, 30, is_b64url, 40, 64),
	T1("glft-", K_GITLAB, 2, 30, is_b64url, 20, 64),
	T1("glptt-", K_GITLAB, 2, 30, is_hexl, 40, 40),
	T1("GR1348941", K_GITLAB, 2, 30, is_b64url, 20, 64),
	T1("ATATT3", K_ATLASSIAN, 3, 40, is_b64urleq, 150, 300),
	T1("ATCTT3", K_ATLASSIAN, 3, 40, is_b64urleq, 150, 300),
	T1("ATBB", K_ATLASSIAN, 2, 35, is_alnum, 32, 64),
	T1("sgp_local_", K_SOURCEGRAPH, 2, 30, is_hexl, 40, 40),
	{ "sgp_", K_SOURCEGRAPH, 2, 30, { S(is_hexl, 16, 16, "_"),
					  S(is_hexl, 40, 40, NULL), END,
					  END } },
	T1("sgp_", K_SOURCEGRAPH, 2, 30, is_hexl, 40, 40),
	T1("squ_", K_SONAR, 2, 30, is_hexl, 40, 40),
	T1("sqp_", K_SONAR, 2, 30, is_hexl, 40, 40),
	T1("sqa_", K_SONAR, 2, 30, is_hexl, 40, 40),
	T1("bkua_", K_BUILDKITE, 2, 30, is_hexl, 40, 40),
	T1("pul-", K_PULUMI, 2, 30, is_hexl, 40, 40),
	T1("pnu_", K_PREFECT, 2, 35, is_alnum, 36, 36),
	T1("API-", K_OCTOPUS, 1, 30, is_upnum, 26, 32),
	T1("AKCp", K_JFROG, 2, 35, is_alnum, 69, 73),
	T1("cmVmdGtuOjAxOj", K_JFROG, 2, 35, is_b64url, 40, 80),
	T1("dckr_pat_", K_DOCKER, 2, 35, is_b64url, 27, 36),
	T1("dckr_oat_", K_DOCKER, 2, 35, is_b64url, 27, 36),
	T1("rubygems_", K_RUBYGEMS, 2, 30, is_hexl, 48, 48),
	T1("CLOJARS_", K_CLOJARS, 2, 30, is_lonum, 60, 60),
	T1("oy2", K_NUGET, 2, 35, is_lonum, 43, 43),
	T1("rdme_", K_README, 2, 30, is_lonum, 70, 70),
	T1("pypi-AgEIcHlwaS5vcmc", K_PYPI, 2, 35, is_b64url, 50, 1000),
	T1("pypi-AgENdGVzdC5weXBpLm9yZw", K_PYPI, 2, 35, is_b64url, 50, 1000),
	T1("npm_", K_NPM, 2, 30, is_alnum, 36, 36),
	{ "packagist_", K_PACKAGIST, 2, 30, { S(is_lower, 3, 3, "_"),
					      S(is_hexl, 60, 80, NULL), END,
					      END } },
	/* chat and messaging */
	T1("xoxb-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxp-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxa-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxr-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxs-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxo-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxe.xoxp-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxe-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxc-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("xoxd-", K_SLACK, 2, 30, is_b64all, 20, 512),
	T1("xapp-", K_SLACK, 2, 30, is_slackc, 20, 255),
	T1("hooks.slack.com/services/", K_SLACK_HOOK, 2, 30, is_alnum_slash,
	   30, 128),
	T1("hooks.slack.com/workflows/", K_SLACK_HOOK, 2, 30, is_alnum_slash,
	   30, 128),
	T1("hooks.slack.com/triggers/", K_SLACK_HOOK, 2, 30, is_alnum_slash,
	   30, 128),
	{ "discord.com/api/webhooks/", K_DISCORD_HOOK, 2, 30,
	  { S(is_digit, 17, 20, "/"), S(is_b64url, 60, 68, NULL), END, END } },
	{ "discordapp.com/api/webhooks/", K_DISCORD_HOOK, 2, 30,
	  { S(is_digit, 17, 20, "/"), S(is_b64url, 60, 68, NULL), END, END } },
	{ "M", K_DISCORD, 3, 35, { S(is_alnum, 23, 27, "."),
				   S(is_b64url, 6, 7, "."),
				   S(is_b64url, 27, 40, NULL), END } },
	{ "N", K_DISCORD, 3, 35, { S(is_alnum, 23, 27, "."),
				   S(is_b64url, 6, 7, "."),
				   S(is_b64url, 27, 40, NULL), END } },
	{ "O", K_DISCORD, 3, 35, { S(is_alnum, 23, 27, "."),
				   S(is_b64url, 6, 7, "."),
				   S(is_b64url, 27, 40, NULL), END } },
	{ "", K_TELEGRAM, 2, 30, { S(is_digit, 5, 16, ":A"),
				   S(is_b64url, 34, 34, NULL), END, END } },
	T1("webhook.office.com/webhookb2/", K_TEAMS_HOOK, 2, 30, is_hookc, 60,
	   400),
	T1("outlook.office.com/webhook/", K_TEAMS_HOOK, 2, 30, is_hookc, 60,
	   400),
	/* payments and commerce */
	T1("sk_live_", K_STRIPE, 2, 30, is_alnum, 16, 255),
	T1("sk_test_", K_STRIPE, 2, 30, is_alnum, 16, 255),
	T1("rk_live_", K_STRIPE, 2, 30, is_alnum, 16, 255),
	T1("rk_test_", K_STRIPE, 2, 30, is_alnum, 16, 255),
	T1("sk_prod_", K_STRIPE, 2, 30, is_alnum, 16, 255),
	T1("rk_prod_", K_STRIPE, 2, 30, is_alnum, 16, 255),
	T1("whsec_", K_STRIPE_HOOK, 2, 35, is_b64eq, 24, 64),
	T1("shpat_", K_SHOPIFY, 2, 30, is_hex, 32, 32),
	T1("shpca_", K_SHOPIFY, 2, 30, is_hex, 32, 32),
	T1("shppa_", K_SHOPIFY, 2, 30, is_hex, 32, 32),
	T1("shpss_", K_SHOPIFY, 2, 30, is_hex, 32, 32),
	T1("EAAA", K_SQUARE, 2, 35, is_b64url, 60, 60),
	T1("sq0atp-", K_SQUARE, 2, 30, is_b64url, 22, 60),
	T1("sq0csp-", K_SQUARE, 2, 30, is_b64url, 43, 43),
	{ "access_token$production$", K_BRAINTREE, 2, 30,
	  { S(is_lonum, 16, 16, "$"), S(is_hexl, 32, 32, NULL), END, END } },
	{ "access_token$sandbox$", K_BRAINTREE, 2, 30,
	  { S(is_lonum, 16, 16, "$"), S(is_hexl, 32, 32, NULL), END, END } },
	T1("rzp_live_", K_RAZORPAY, 1, 30, is_alnum, 14, 14),
	T1("rzp_test_", K_RAZORPAY, 1, 30, is_alnum, 14, 14),
	{ "FLWSECK-", K_FLUTTERWAVE, 2, 30,
	  { S(is_hexl, 32, 32, "-X"), END, END, END } },
	{ "FLWSECK_TEST-", K_FLUTTERWAVE, 2, 30,
	  { S(is_hexl, 32, 32, "-X"), END, END, END } },
	T1("FLWSECK_TEST", K_FLUTTERWAVE, 1, 15, is_hexl, 12, 12),
	T1("FLWSECK-", K_FLUTTERWAVE, 1, 15, is_hexl, 12, 12),
	T1("shippo_live_", K_SHIPPO, 2, 30, is_hexl, 40, 40),
	T1("shippo_test_", K_SHIPPO, 2, 30, is_hexl, 40, 40),
	T1("duffel_live_", K_DUFFEL, 2, 35, is_b64url, 43, 43),
	T1("duffel_test_", K_DUFFEL, 2, 35, is_b64url, 43, 43),
	T1("live_", K_GOCARDLESS, 2, 35, is_b64urleq, 40, 40),
	T1("EZAK", K_EASYPOST, 2, 35, is_alnum, 54, 54),
	T1("EZTK", K_EASYPOST, 2, 35, is_alnum, 54, 54),
	{ "access-sandbox-", K_PLAID, 2, 30,
	  { S(is_hexl, 8, 8, "-"), S(is_hexl, 4, 4, "-"), S(is_hexl, 4, 4, "-"),
	    S(is_hexl, 4, 4, "-"), S(is_hexl, 12, 12, NULL) } },
	{ "access-production-", K_PLAID, 2, 30,
	  { S(is_hexl, 8, 8, "-"), S(is_hexl, 4, 4, "-"), S(is_hexl, 4, 4, "-"),
	    S(is_hexl, 4, 4, "-"), S(is_hexl, 12, 12, NULL) } },
	{ "access-development-", K_PLAID, 2, 30,
	  { S(is_hexl, 8, 8, "-"), S(is_hexl, 4, 4, "-"), S(is_hexl, 4, 4, "-"),
	    S(is_hexl, 4, 4, "-"), S(is_hexl, 12, 12, NULL) } },
	/* email, marketing, analytics */
	{ "SG.", K_SENDGRID, 2, 35, { S(is_b64url, 22, 22, "."),
				      S(is_b64url, 43, 43, NULL), END, END } },
	{ "xkeysib-", K_BREVO, 2, 30, { S(is_hexl, 64, 64, "-"),
					S(is_alnum, 16, 16, NULL), END, END } },
	T1("key-", K_MAILGUN, 2, 30, is_hex, 32, 32),
	{ "", K_MAILCHIMP, 2, 30, { S(is_hexl, 32, 32, "-us"),
				    S(is_digit, 1, 2, NULL), END, END } },
	T1("SK", K_TWILIO, 2, 30, is_hex, 32, 32),
	{ "NRAK-", K_NEWRELIC, 1, 30, { S(is_upnum, 27, 27, NULL), END, END,
					END } },
	T1("NRJS-", K_NEWRELIC, 1, 20, is_hexl, 19, 19),
	T1("NRII-", K_NEWRELIC, 2, 30, is_b64url, 32, 32),
	T1("NRAA-", K_NEWRELIC, 2, 30, is_alnum, 27, 27),
	T1("tfp_", K_TYPEFORM, 2, 35, is_b64url, 40, 70),
	{ "PMAK-", K_POSTMAN, 2, 30, { S(is_hexl, 24, 24, "-"),
				       S(is_hexl, 34, 34, NULL), END, END } },
	T1("sntryu_", K_SENTRY, 2, 30, is_hexl, 64, 64),
	T1("sntrys_eyJ", K_SENTRY, 2, 35, is_b64eq, 50, 1000),
	T1("CFPAT-", K_CONTENTFUL, 2, 35, is_b64url, 43, 43),
	T1("figd_", K_FIGMA, 2, 35, is_b64url, 40, 64),
	T1("fio-u-", K_FRAMEIO, 2, 35, is_b64url, 64, 64),
	T1("p8e-", K_ADOBE, 2, 35, is_alnum, 32, 32),
	{ "pat", K_AIRTABLE, 2, 35, { S(is_alnum, 14, 14, "."),
				      S(is_hexl, 64, 64, NULL), END, END } },
	{ "pk_", K_CLICKUP, 2, 30, { S(is_digit, 6, 10, "_"),
				     S(is_upnum, 32, 32, NULL), END, END } },
	T1("sl.", K_DROPBOX, 2, 35, is_b64url, 100, 1400),
	T1("ntn_", K_NOTION, 2, 35, is_alnum, 46, 46),
	T1("secret_", K_NOTION, 2, 35, is_alnum, 43, 43),
	T1("lin_api_", K_LINEAR, 2, 35, is_alnum, 40, 40),
	T1("dp.pt.", K_DOPPLER, 2, 35, is_alnum, 40, 44),
	T1("dp.st.", K_DOPPLER, 2, 35, is_alnum, 40, 60),
	T1("dp.sa.", K_DOPPLER, 2, 35, is_alnum, 40, 44),
	T1("dp.ct.", K_DOPPLER, 2, 35, is_alnum, 40, 44),
	T1("dp.scim.", K_DOPPLER, 2, 35, is_alnum, 40, 44),
	T1("dp.audit.", K_DOPPLER, 2, 35, is_alnum, 40, 44),
	{ "sk.eyJ", K_MAPBOX, 2, 35, { S(is_b64url, 20, 1000, "."),
				       S(is_b64url, 20, 100, NULL), END,
				       END } },
	T1("ico-", K_INFRACOST, 2, 35, is_alnum, 32, 32),
	T1("ops_eyJ", K_ONEPASSWORD, 2, 35, is_b64eq, 100, 2000),
	T1("AQVN", K_YANDEX, 2, 35, is_b64url, 35, 38),
	T1("y0_", K_YANDEX, 2, 35, is_b64url, 55, 60),
	T1("AAAAAAAAAAAAAAAAAAAA", K_TWITTER, 2, 35, is_alnum_pct, 30, 200),
	{ "", K_ASANA, 2, 30, { S(is_digit, 1, 1, "/"),
				S(is_digit, 10, 20, ":"),
				S(is_hexl, 32, 32, NULL), END } },
	T1("AGE-SECRET-KEY-1", K_AGE, 2, 35, is_bech32u, 58, 58),
	{ "pcsk_", K_PINECONE, 2, 35, { S(is_alnum, 4, 8, "_"),
					S(is_b64url, 50, 80, NULL), END,
					END } },
	{ "sm_", K_SETTLEMINT, 2, 30, { S(is_lower, 3, 3, "_"),
					S(is_alnum, 16, 16, NULL), END, END } },
	/* AI providers */
	T1("sk-ant-", K_ANTHROPIC, 2, 35, is_b64url, 32, 256),
	T1("sk-or-", K_OPENROUTER, 2, 35, is_b64url, 32, 256),
	T1("sk-proj-", K_OPENAI, 2, 35, is_b64url, 32, 256),
	T1("sk-svcacct-", K_OPENAI, 2, 35, is_b64url, 32, 256),
	T1("sk-admin-", K_OPENAI, 2, 35, is_b64url, 32, 256),
	T1("sk-", K_SK_HEX, 2, 30, is_hexl, 32, 64),
	T1("sk-", K_OPENAI, 2, 35, is_b64url, 32, 256),
	T1("hf_", K_HUGGINGFACE, 2, 30, is_alpha, 30, 40),
	T1("api_org_", K_HUGGINGFACE, 2, 30, is_alpha, 30, 40),
	T1("pplx-", K_PERPLEXITY, 2, 35, is_alnum, 48, 56),
	T1("gsk_", K_GROQ, 2, 35, is_alnum, 52, 52),
	T1("r8_", K_REPLICATE, 2, 35, is_alnum, 37, 40),
	T1("xai-", K_XAI, 2, 35, is_alnum, 70, 90),
	{ "lsv2_pt_", K_LANGSMITH, 2, 30, { S(is_hexl, 32, 32, "_"),
					    S(is_hexl, 10, 10, NULL), END,
					    END } },
	{ "lsv2_sk_", K_LANGSMITH, 2, 30, { S(is_hexl, 32, 32, "_"),
					    S(is_hexl, 10, 10, NULL), END,
					    END } },
	{ "tskey-", K_TAILSCALE, 2, 35, { S(is_lower, 3, 8, "-"),
					  S(is_alnum, 6, 24, "-"),
					  S(is_alnum, 20, 64, NULL), END } },
	{ "glsa_", K_GRAFANA, 2, 35, { S(is_alnum, 32, 32, "_"),
				       S(is_hex, 8, 8, NULL), END, END } },
	T1("glc_", K_GRAFANA, 2, 35, is_b64eq, 32, 400),
	T1("EAAC", K_FACEBOOK, 2, 35, is_alnum, 100, 1024),
	T1("eyJrIjoi", K_GRAFANA, 2, 35, is_b64eq, 50, 400),
	{ "amzn.mws.", K_AMAZON_MWS, 2, 30,
	  { S(is_hexl, 8, 8, "-"), S(is_hexl, 4, 4, "-"), S(is_hexl, 4, 4, "-"),
	    S(is_hexl, 4, 4, "-"), S(is_hexl, 12, 12, NULL) } },
	{ "hooks.zapier.com/hooks/catch/", K_ZAPIER_HOOK, 1, 0,
	  { S(is_digit, 5, 12, "/"), S(is_alnum, 5, 12, NULL), END, END } },
	T1("CCIPAT_", K_CIRCLECI, 2, 35, is_b64url, 30, 80),
	T1("phx_", K_POSTHOG, 2, 35, is_alnum, 40, 50),
	T1("nvapi-", K_NVIDIA, 2, 35, is_b64url, 60, 70),
	T1("tvly-", K_TAVILY, 2, 35, is_b64url, 32, 48),
	T1("jina_", K_JINA, 2, 35, is_alnum, 50, 70),
	{ "sk-lf-", K_LANGFUSE, 2, 30,
	  { S(is_hexl, 8, 8, "-"), S(is_hexl, 4, 4, "-"), S(is_hexl, 4, 4, "-"),
	    S(is_hexl, 4, 4, "-"), S(is_hexl, 12, 12, NULL) } },
	T1("live_", K_LIVE_KEY, 2, 30, is_alnum, 30, 40),
	T1("test_", K_LIVE_KEY, 2, 30, is_alnum, 30, 40),
	{ "pat.", K_HARNESS, 2, 35, { S(is_b64url, 22, 22, "."),
				      S(is_alnum, 24, 24, "."),
				      S(is_alnum, 20, 20, NULL), END } },
	{ "sat.", K_HARNESS, 2, 35, { S(is_b64url, 22, 22, "."),
				      S(is_alnum, 24, 24, "."),
				      S(is_alnum, 20, 20, NULL), END } },
	{ "t1.", K_YANDEX, 2, 35, { S(is_b64urleq, 8, 2048, "."),
				    S(is_b64urleq, 86, 88, NULL), END, END } },
	{ "", K_MAXMIND, 2, 35, { S(is_alnum, 6, 6, "_"),
				  S(is_alnum, 29, 29, "_mmk"), END, END } },
	{ "", K_FACEBOOK, 2, 30, { S(is_digit, 15, 16, "|"),
				   S(is_b64url, 27, 40, NULL), END, END } },
	{ "A3-", K_ONEPASSWORD_SK, 2, 30, { S(is_upnum, 6, 6, "-"),
					    S(is_upnum, 11, 11, "-"),
					    S(is_upnum, 5, 5, "-"),
					    S(is_upnum, 5, 5, "-"),
					    S(is_upnum, 5, 5, NULL) } },
	{ "A3-", K_ONEPASSWORD_SK, 2, 30, { S(is_upnum, 6, 6, "-"),
					    S(is_upnum, 6, 6, "-"),
					    S(is_upnum, 5, 5, "-"),
					    S(is_upnum, 5, 5, "-"),
					    S(is_updash, 11, 11, NULL) } },
	{ "sc_", K_AUTHRESS, 2, 35, { S(is_alnum, 5, 30, "."),
				      S(is_alnum, 4, 6, ".acc"),
				      S(is_usdash, 1, 1, NULL),
				      S(is_alnum_dash, 10, 32, "."),
				      S(is_b64all, 30, 120, NULL) } },
	{ "ext_", K_AUTHRESS, 2, 35, { S(is_alnum, 5, 30, "."),
				       S(is_alnum, 4, 6, ".acc"),
				       S(is_usdash, 1, 1, NULL),
				       S(is_alnum_dash, 10, 32, "."),
				       S(is_b64all, 30, 120, NULL) } },
	{ "scauth_", K_AUTHRESS, 2, 35, { S(is_alnum, 5, 30, "."),
					  S(is_alnum, 4, 6, ".acc"),
					  S(is_usdash, 1, 1, NULL),
					  S(is_alnum_dash, 10, 32, "."),
					  S(is_b64all, 30, 120, NULL) } },
	{ "authress_", K_AUTHRESS, 2, 35, { S(is_alnum, 5, 30, "."),
					    S(is_alnum, 4, 6, ".acc"),
					    S(is_usdash, 1, 1, NULL),
					    S(is_alnum_dash, 10, 32, "."),
					    S(is_b64all, 30, 120, NULL) } },
	T1("s-s4t2ud-", K_INTRA42, 2, 30, is_hexl, 64, 64),
	T1("s-s4t2af-", K_INTRA42, 2, 30, is_hexl, 64, 64),
	T1("dnkey-", K_DEFINED, 2, 35, is_b64url, 40, 80),
	T1("EAAM", K_FACEBOOK, 2, 35, is_alnum, 100, 1024),
};

/* The first byte of text a rule's token may start with, or 0 for any. */
static int rule_first(const struct token_rule *r)
{
	return (unsigned char)r->prefix[0];
}

/* Does rule r match a token at i? The token's end goes to *end. */
static int rule_match(const struct scan *s, size_t i,
		      const struct token_rule *r, size_t plen, size_t *end)
{
	size_t p = i + plen, k;
	const struct seg *last = NULL;
	unsigned bits10;
	struct vstat st;

	if (plen && (s->len - i < plen || memcmp(s->t + i, r->prefix, plen)))
		return 0;
	for (k = 0; k < ARRAY_SIZE(r->seg) && r->seg[k].cls; k++) {
		const struct seg *g = &r->seg[k];
		size_t n = run_len(s, p, g->cls, g->max);

		if (n < g->min)
			return 0;
		p += n;
		if (g->lit) {
			if (!starts_with(s, p, g->lit))
				return 0;
			p += strlen(g->lit);
		}
		last = g;
	}
	if (!last)
		return 0;
	if (!last->lit && (last->cls(at(s, p)) || is_alnum(at(s, p))))
		return 0; /* a longer word: not this token */
	secret_value_stats(s->t + i + plen, p - i - plen, &st);
	/* a short random body, or a hex one, has less entropy to show */
	bits10 = r->bits10;
	if (p - i - plen < 24 && bits10 > 20)
		bits10 = 20;
	if ((r->seg[0].cls == is_hexl || r->seg[0].cls == is_hex) &&
	    bits10 > 28)
		bits10 = 28;
	if (char_classes(&st) < r->classes || st.bits * 10.0 < bits10)
		return 0;
	if (r->kind == K_OPENAI && !(st.upper && st.lower))
		return 0; /* sk- with hex or one case: another provider's */
	if (r->kind == K_VAULT && plen == 2 && st.upper < 5 && st.digit < 2)
		return 0; /* s.getElementsByTagName: a name, not a token */
	*end = p;
	return 1;
}

/*
 * The rules a token starting with byte c may match, in table order: those
 * whose prefix starts with c and those without a prefix whose first
 * segment's class holds c. Built once (pthread_once), read-only after.
 */
#define RULES_PER_BYTE 64
static unsigned short rules_by_byte[256][RULES_PER_BYTE];
static unsigned char rules_count[256];
static unsigned char rule_plen[ARRAY_SIZE(token_rules)];
static unsigned char rule_glue[ARRAY_SIZE(token_rules)];
static pthread_once_t rules_once = PTHREAD_ONCE_INIT;

/*
 * Where a token of this prefix may start glued to the byte before it, as
 * in key_AKIA..., GITHUB_TOKEN_ghp_..., x_xoxb-..., tokenghp_... (a name
 * built from an identifier carries the token with it; a gitleaks-class
 * scanner has no left boundary for these prefixes either):
 *   GLUE_NONE  only at the start of a word (no letter, digit, _ or - before)
 *   GLUE_SEP   also after '_' or '-'
 *   GLUE_WORD  also after a letter or digit
 * A prefix is distinctive enough for GLUE_SEP when it is at least three
 * bytes long and not a word or a part of one (live_, test_, secret_, key-,
 * sk-, ...); for GLUE_WORD when it also holds a '-', '.' or '_' after at
 * least four bytes, or is one of GitHub's gh?_ prefixes. Rules without a
 * prefix never glue.
 */
enum { GLUE_NONE, GLUE_SEP, GLUE_WORD };

static int glue_level(const char *prefix)
{
	/* words, parts of words, or too common in random text to glue */
	static const char *const loose[] = {
		"live_", "test_", "secret_", "key-", "sl.", "pat", "pat.",
		"sat.", "sk-", "s.", "t1.", "sm_", "pk_", "API-", "v1.0-",
		"1//0", "ico-", "SK", "AAAA", "EAAA", "EAAC", "EAAM",
		"4b1d", "oy2", "AQVN", "sc_", "ext_", "A3-", "M", "N", "O",
		"access-sandbox-", "access-production-", "access-development-",
	};
	/* distinctive, but an identifier may end with them: not after a
	 * letter or digit (disk_test_..., pnpm_...) */
	static const char *const sep_only[] = {
		"sk_live_", "sk_test_", "rk_live_", "rk_test_", "sk_prod_",
		"rk_prod_",
	};
	size_t n = strlen(prefix), k;
	const char *sep;

	if (n < 3)
		return GLUE_NONE;
	for (k = 0; k < ARRAY_SIZE(loose); k++)
		if (strcmp(prefix, loose[k]) == 0)
			return GLUE_NONE;
	for (k = 0; k < ARRAY_SIZE(sep_only); k++)
		if (strcmp(prefix, sep_only[k]) == 0)
			return GLUE_SEP;
	if (n == 4 && prefix[0] == 'g' && prefix[1] == 'h' && prefix[3] == '_')
		return GLUE_WORD; /* ghp_ gho_ ghu_ ghs_ ghr_ */
	sep = strpbrk(prefix + 1, "-._");
	if (n >= 5 && sep && (size_t)(sep - prefix) >= 3)
		return GLUE_WORD;
	return GLUE_SEP;
}

static void rules_index(void)
{
	size_t r;
	int c;

	for (r = 0; r < ARRAY_SIZE(token_rules); r++) {
		rule_plen[r] = (unsigned char)strlen(token_rules[r].prefix);
		rule_glue[r] = (unsigned char)glue_level(token_rules[r].prefix);
	}
	for (c = 1; c < 256; c++) {
		for (r = 0; r < ARRAY_SIZE(token_rules); r++) {
			const struct token_rule *tr = &token_rules[r];
			int f = rule_first(tr);

			if ((f && f != c) || (!f && !tr->seg[0].cls(c)))
				continue;
			if (NEVER(rules_count[c] >= RULES_PER_BYTE))
				break;
			rules_by_byte[c][rules_count[c]++] = (unsigned short)r;
		}
	}
}

/* A token starting at i, known by its shape. */
static int m_prefix(const struct scan *s, size_t i, struct match *m)
{
	int c = at(s, i), b = before(s, i);
	int glue = is_alnum(b) ? GLUE_WORD : is_b64url(b) ? GLUE_SEP : GLUE_NONE;
	size_t k, end;

	if (c <= 0)
		return 0;
	pthread_once(&rules_once, rules_index);
	for (k = 0; k < rules_count[c]; k++) {
		size_t r = rules_by_byte[c][k];
		const struct token_rule *tr = &token_rules[r];

		if (!ON(tr->kind))
			continue;
#ifndef CAIRN_MUTATE_NO_SECRET_GLUE
		if (glue > rule_glue[r])
			continue; /* inside a longer word */
#else
		if (glue)
			continue; /* the mutant: a left word boundary */
#endif
		if ((tr->kind == K_OPENAI || tr->kind == K_SK_HEX) &&
		    (starts_with(s, i, "sk-ant-") || starts_with(s, i, "sk-or-")))
			continue; /* left to their own rules */
		if (!rule_match(s, i, tr, rule_plen[r], &end))
			continue;
		m->kind = tr->kind;
		m->start = i;
		m->end = end;
		return 1;
	}
	return 0;
}

/* A JSON Web Token: header.payload.signature, the header starting eyJ. */
static int m_jwt(const struct scan *s, size_t i, struct match *m)
{
	size_t p = i, a, b, c;

	/* no left boundary: three dotted parts after eyJ are distinctive
	 * enough even glued to a name (token_eyJ...) */
	if (!ON(K_JWT) || !starts_with(s, i, "eyJ"))
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

/*
 * Bytes that may stand between the lines of a key without being part of
 * it: blanks, a Markdown quote ("> " before each line, as in runbooks and
 * ADRs), the quotes, '+', ',', '.', '&' and parentheses of string literals
 * joined in code ("-----BEGIN ...-----\n" + "MIIE...\n" +), and comment
 * leaders (# ; *). None is a byte of base64, so no body byte is skipped.
 */
static int pem_glue(int c)
{
#ifndef CAIRN_MUTATE_NO_SECRET_PEM_GLUE
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
	       in_set(c, "\"'`>,.&;#*()|");
#else
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'; /* mutant */
#endif
}

/*
 * Skip blanks, newlines, escaped newlines ("\n" inside JSON strings), line
 * continuations (a backslash at the end of a line) and pem_glue() bytes.
 */
static size_t pem_skip_space(const struct scan *s, size_t p, size_t limit)
{
	while (p < limit) {
		int c = s->t[p];

		if (pem_glue(c)) {
			p++;
		} else if (c == '\\') {
			size_t q = p;

			while (q < limit && s->t[q] == '\\')
				q++;
			if (q < limit && (s->t[q] == 'n' || s->t[q] == 'r' ||
					  s->t[q] == '\n'))
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

/* Past a Markdown quote marker ("> ", ">", "> > ") at p. */
static size_t skip_md_quote(const struct scan *s, size_t p, size_t limit)
{
	size_t q = p;

	while (q < limit && (s->t[q] == ' ' || s->t[q] == '\t'))
		q++;
	if (q >= limit || s->t[q] != '>')
		return p;
	while (q < limit &&
	       (s->t[q] == '>' || s->t[q] == ' ' || s->t[q] == '\t'))
		q++;
	return q;
}

/* A PuTTY private key file: from its first line to the end of its
 * Private-Lines block (and the Private-MAC line after it), also when
 * quoted as Markdown ("> " before each line). */
static int m_putty(const struct scan *s, size_t i, struct match *m)
{
	size_t limit, p, q, lines = 0;

	if (!ON(K_PRIVATE_KEY) || !starts_with(s, i, "PuTTY-User-Key-File-"))
		return 0;
	limit = s->len - i > PEM_MAX ? i + PEM_MAX : s->len;
	for (p = i; p < limit; p++)
		if (s->t[p] == 'P' && starts_with(s, p, "Private-Lines:"))
			break;
	if (p >= limit)
		return 0;
	/* the base64 lines of the private part */
	while (p < limit && s->t[p] != '\n')
		p++;
	for (q = p; q < limit;) {
		size_t a = q + 1, w;

		if (s->t[q] != '\n')
			break;
		a = skip_md_quote(s, a, limit);
		w = run_len(s, a, is_b64eq, 128);
		if (w == 0)
			break;
		q = a + w;
		lines++;
		if (q < limit && s->t[q] == '\r')
			q++;
	}
	if (lines == 0)
		return 0;
	p = q;
	if (p + 1 < limit &&
	    starts_with(s, skip_md_quote(s, p + 1, limit), "Private-MAC:")) {
		p++;
		while (p < limit && s->t[p] != '\n')
			p++;
	}
	m->kind = K_PRIVATE_KEY;
	m->start = i;
	m->end = p;
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

	if (!ON(K_AWS_SECRET) || !is_b64(at(s, i)) || is_b64(before(s, i)))
		return 0;
	n = run_len(s, i, is_b64, 41);
	if (n != 40 || at(s, i + 40) == '=')
		return 0;
	secret_value_stats(s->t + i, n, &st);
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

/* ------------------------------------------------- signed URLs (Azure) */

static int is_sigc(int c)
{
	return is_alnum(c) || c == '%' || c == '+' || c == '/' || c == '=';
}

/* An Azure SAS signature: ?...&sig=<base64, URL-encoded>; the value. */
static int m_sas(const struct scan *s, size_t i, struct match *m)
{
	size_t n, k, letters = 0;
	int b = before(s, i);

	if (!ON(K_AZURE_SAS) || !(b == '&' || b == '?' || b == ';') ||
	    !starts_with(s, i, "sig="))
		return 0;
	n = run_len(s, i + 4, is_sigc, 257);
	if (n < 40 || n > 256)
		return 0;
	for (k = 0; k < n; k++)
		if (is_alpha(s->t[i + 4 + k]))
			letters++;
	if (letters < 20)
		return 0;
	m->kind = K_AZURE_SAS;
	m->start = i + 4;
	m->end = i + 4 + n;
	return 1;
}

/* See secret_int.h. */
int secret_match_token(const struct scan *s, size_t i, struct match *m)
{
	int c = at(s, i);

	return m_prefix(s, i, m) || m_jwt(s, i, m) || m_pem(s, i, m) ||
	       m_aws_secret(s, i, m) || (c == 's' && m_sas(s, i, m)) ||
	       (c == 'P' && m_putty(s, i, m));
}
