/*
 * secret_corpus.h -- the generated corpus of the secret filter's tests,
 * included once, by tests/unit_secret.c: credentials of many provider
 * families with random bodies, and look-alikes that must pass. Only FAKE
 * values: every body is drawn from a seeded random stream.
 *
 * Each family is a template: literal text with fills such as {a36} (36
 * random letters and digits) or {pw} (a random password), a disguise
 * applied to the rendered text (base64, a line break inside the token,
 * zero-width or full-width characters, URL encoding), whether it may
 * sit inside a line of prose, and whether its prefix is distinctive enough
 * to be found glued to a name (FG: after '_' or '-', as in key_AKIA...;
 * FW: after a letter or digit too, as in tokenghp_...).
 *
 * corpus_render_variant() renders a family as written (VAR_BARE), glued
 * to an identifier (VAR_GLUED, FG and FW families), quoted as Markdown
 * ("> " before each line: VAR_QUOTED) or, for a private key, split into
 * string literals joined in code (VAR_LITERALS).
 *
 * Fills: {aN} letters and digits, {AN} upper case and digits, {lN} lower
 * case and digits, {hN} lower hex, {HN} hex of both cases, {bN} base64url,
 * {sN} base64, {dN} digits, {LN} letters, {wN} lower-case letters, {cN}
 * bech32 (upper case), {zN} [A-Za-z0-9_~.], {ZN} that and '-', {rN} base64
 * of N random bytes, {pw} a password, {dice} a diceware passphrase, {uuid},
 * {basic} base64 of user:password, {sas} a URL-encoded SAS signature.
 */
#ifndef CAIRN_SECRET_CORPUS_H
#define CAIRN_SECRET_CORPUS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum corpus_xform {
	XF_NONE,
	XF_B64,   /* the whole text base64-encoded */
	XF_SPLIT, /* a line break inside the text */
	XF_ZW,    /* zero-width and format characters inside */
	XF_FW,    /* letters and digits full-width (U+FF01..) */
	XF_URL,   /* : / @ percent-encoded */
	XF_URL2,  /* percent-encoded twice */
};

struct corpus_family {
	const char *name;
	const char *tmpl;
	int xform;   /* enum corpus_xform */
	int inline_; /* 1: may sit inside a line of prose */
	int glue;    /* enum corpus_glue */
};

enum corpus_glue {
	GL_NONE,
	GL_SEP,  /* found glued after '_' or '-' (key_AKIA...) */
	GL_WORD, /* and after a letter or digit (tokenghp_...) */
};

/* How a family is rendered: see corpus_render_variant(). */
enum corpus_variant {
	VAR_BARE,
	VAR_GLUED,
	VAR_QUOTED,
	VAR_LITERALS,
};

#define F(n, t) { n, t, XF_NONE, 1, GL_NONE }
#define FG(n, t) { n, t, XF_NONE, 1, GL_SEP }
#define FW(n, t) { n, t, XF_NONE, 1, GL_WORD }
#define FL(n, t) { n, t, XF_NONE, 0, GL_NONE } /* alone on its line */
#define FX(n, t, x) { n, t, x, 0, GL_NONE }

static const struct corpus_family corpus_secrets[] = {
	/* cloud */
	FG("aws-access-key-id", "AKIA{A16}"),
	FG("aws-sts-key-id", "ASIA{A16}"),
	FL("aws-secret-access-key", "aws_secret_access_key = {s40}"),
	FG("google-api-key", "AIza{b35}"),
	FW("google-oauth-token", "ya29.{b120}"),
	FW("google-oauth-secret", "GOCSPX-{b28}"),
	F("google-refresh-token", "1//0{b100}"),
	F("firebase-fcm-key", "AAAA{b7}:APA91b{b134}"),
	FL("azure-storage-conn", "DefaultEndpointsProtocol=https;AccountName={w10};AccountKey={s86}==;EndpointSuffix=core.windows.net"),
	FL("azure-servicebus-conn", "Endpoint=sb://{w8}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s43}="),
	F("azure-sas-url", "https://{w8}.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&spr=https&sig={sas}"),
	F("azure-ad-client-secret", "{z3}{d1}Q~{Z34}"),
	FG("alibaba-access-key", "LTAI{a20}"),
	FG("tencent-secret-id", "AKID{a32}"),
	FW("digitalocean-token", "dop_v1_{h64}"),
	FW("digitalocean-oauth", "doo_v1_{h64}"),
	FW("heroku-key", "HRKU-AA{b58}"),
	FL("heroku-api-key-uuid", "HEROKU_API_KEY={uuid}"),
	FG("databricks-token", "dapi{h32}"),
	F("terraform-cloud-token", "{l14}.atlasv1.{b67}"),
	FG("vault-service-token", "hvs.{b90}"),
	FG("vault-batch-token", "hvb.{b138}"),
	FG("flyio-token", "fo1_{b43}"),
	F("flyio-macaroon", "FlyV1 fm2_{s200}"),
	F("cloudflare-origin-ca-key", "v1.0-{h24}-{h146}"),
	FG("openshift-token", "sha256~{b43}"),
	FG("netlify-token", "nfp_{a36}"),
	FG("render-key", "rnd_{a32}"),
	FW("planetscale-token", "pscale_tkn_{b43}"),
	FW("planetscale-password", "pscale_pw_{b43}"),
	FG("supabase-token", "sbp_{h40}"),
	FG("scalingo-token", "tk-us-{b48}"),
	FW("dynatrace-token", "dt0c01.{A24}.{A64}"),
	/* code hosting, CI, registries */
	FW("github-pat", "ghp_{a36}"),
	FW("github-oauth", "gho_{a36}"),
	FW("github-app-user", "ghu_{a36}"),
	FW("github-app-server", "ghs_{a36}"),
	FW("github-refresh", "ghr_{a36}"),
	FW("github-fine-grained", "github_pat_{a22}_{a59}"),
	FW("gitlab-pat", "glpat-{b20}"),
	FW("gitlab-deploy-token", "gldt-{b20}"),
	FW("gitlab-runner-token", "glrt-{b20}"),
	FW("gitlab-trigger-token", "glptt-{h40}"),
	FG("atlassian-api-token", "ATATT3{b186}"),
	FG("bitbucket-app-password", "ATBB{a32}"),
	FG("sourcegraph-token", "sgp_{h16}_{h40}"),
	FG("sonarqube-token", "squ_{h40}"),
	FW("buildkite-token", "bkua_{h40}"),
	FG("pulumi-token", "pul-{h40}"),
	FG("prefect-key", "pnu_{a36}"),
	F("octopus-deploy-key", "API-{A26}"),
	FG("jfrog-token", "AKCp{a69}"),
	FW("docker-hub-token", "dckr_pat_{b27}"),
	FW("rubygems-key", "rubygems_{h48}"),
	FW("clojars-token", "CLOJARS_{l60}"),
	F("nuget-key", "oy2{l43}"),
	FW("readme-key", "rdme_{l70}"),
	FW("pypi-token", "pypi-AgEIcHlwaS5vcmc{b70}"),
	FG("npm-token", "npm_{a36}"),
	FW("packagist-token", "packagist_uat_{h68}"),
	/* chat and messaging */
	FW("slack-bot-token", "xoxb-{d12}-{d12}-{a24}"),
	FW("slack-user-token", "xoxp-{d12}-{d12}-{d12}-{h32}"),
	FW("slack-app-token", "xapp-1-{A11}-{d13}-{h64}"),
	FW("slack-config-token", "xoxe.xoxp-1-{a140}"),
	F("slack-webhook", "https://hooks.slack.com/services/T{A8}/B{A10}/{a24}"),
	F("discord-bot-token", "M{a23}.{b6}.{b38}"),
	F("discord-webhook", "https://discord.com/api/webhooks/{d18}/{b68}"),
	F("telegram-bot-token", "{d10}:AA{b33}"),
	F("teams-webhook", "https://{w8}.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{h32}/{uuid}"),
	F("twilio-api-key", "SK{h32}"),
	FG("sendgrid-api-key", "SG.{b22}.{b43}"),
	F("mailgun-key", "key-{h32}"),
	F("mailchimp-key", "{h32}-us{d1}"),
	FW("brevo-key", "xkeysib-{h64}-{a16}"),
	/* payments and commerce */
	FG("stripe-secret-key", "sk_live_{a24}"),
	FG("stripe-test-key", "sk_test_{a99}"),
	FG("stripe-restricted-key", "rk_live_{a99}"),
	FW("stripe-webhook-secret", "whsec_{a32}"),
	FW("shopify-token", "shpat_{h32}"),
	FW("shopify-shared-secret", "shpss_{h32}"),
	F("square-access-token", "EAAA{b60}"),
	FW("square-oauth-secret", "sq0csp-{b43}"),
	FW("braintree-token", "access_token$production${l16}${h32}"),
	FW("razorpay-key", "rzp_live_{a14}"),
	FW("flutterwave-key", "FLWSECK-{h32}-X"),
	FW("shippo-token", "shippo_live_{h40}"),
	FW("duffel-token", "duffel_live_{b43}"),
	F("gocardless-token", "live_{b40}"),
	FG("easypost-key", "EZAK{a54}"),
	F("plaid-token", "access-production-{uuid}"),
	/* SaaS */
	FW("linear-api-key", "lin_api_{a40}"),
	FG("notion-token", "ntn_{d11}{a35}"),
	F("notion-legacy-token", "secret_{a43}"),
	FG("doppler-token", "dp.pt.{a43}"),
	FW("contentful-token", "CFPAT-{b43}"),
	FW("figma-token", "figd_{b40}"),
	FW("frameio-token", "fio-u-{b64}"),
	FG("grafana-cloud-token", "glc_{s60}"),
	FW("grafana-service-account", "glsa_{a32}_{h8}"),
	FW("newrelic-user-key", "NRAK-{A27}"),
	FW("newrelic-browser-key", "NRJS-{h19}"),
	FW("1password-service-token", "ops_eyJ{s250}"),
	FW("postman-key", "PMAK-{h24}-{h34}"),
	FW("sentry-user-token", "sntryu_{h64}"),
	FW("sentry-org-token", "sntrys_eyJ{s80}"),
	FG("typeform-token", "tfp_{b59}"),
	F("yandex-api-key", "AQVN{b35}"),
	FG("yandex-oauth-token", "y0_{b55}"),
	FG("adobe-client-secret", "p8e-{a32}"),
	F("airtable-token", "pat{a14}.{h64}"),
	F("clickup-token", "pk_{d8}_{A32}"),
	F("dropbox-token", "sl.{b135}"),
	FG("mapbox-secret-token", "sk.eyJ1Ijoi{b40}.{b22}"),
	F("infracost-key", "ico-{a32}"),
	F("settlemint-token", "sm_pat_{a16}"),
	FW("pinecone-key", "pcsk_{a5}_{b60}"),
	FG("twitter-bearer-token", "AAAAAAAAAAAAAAAAAAAAA{a70}"),
	F("asana-token", "1/{d16}:{h32}"),
	FW("tailscale-key", "tskey-auth-{a12}-{a33}"),
	FW("age-secret-key", "AGE-SECRET-KEY-1{c58}"),
	F("facebook-access-token", "EAACEdEose0cBA{a100}"),
	FG("grafana-legacy-key", "eyJrIjoi{s60}"),
	FW("amazon-mws-token", "amzn.mws.{uuid}"),
	F("zapier-webhook", "https://hooks.zapier.com/hooks/catch/{d7}/{l6}/"),
	FW("circleci-token", "CCIPAT_{b22}_{h40}"),
	FG("posthog-personal-key", "phx_{a43}"),
	FW("slack-client-token", "xoxc-{d12}-{d12}-{d13}-{h64}"),
	F("mollie-key", "live_{a30}"),
	F("lob-test-key", "test_{h35}"),
	F("harness-token", "pat.{b22}.{a24}.{a20}"),
	FG("intra42-secret", "s-s4t2ud-{h64}"),
	FW("defined-networking-key", "dnkey-{b26}-{b52}"),
	FL("env-provider-key", "MAILGUN_KEY={a32}"),
	FL("env-provider-key-hex", "export STRIPE_KEY={h40}"),
	FL("credentials-assignment", "credentials: {b40}"),
	FL("azure-devops-pat", "AZURE_DEVOPS_PAT={l52}"),
	F("okta-ssws-header", "Authorization: SSWS 00{b40}"),
	F("splunk-header", "Authorization: Splunk {uuid}"),
	/* AI providers */
	F("openai-key", "sk-{a48}"),
	FW("nvidia-api-key", "nvapi-{b64}"),
	FW("tavily-key", "tvly-{a32}"),
	FW("jina-key", "jina_{a60}"),
	FG("langfuse-key", "sk-lf-{uuid}"),
	FG("openai-project-key", "sk-proj-{b156}"),
	FG("anthropic-key", "sk-ant-api03-{b93}AA"),
	FG("openrouter-key", "sk-or-v1-{h64}"),
	F("deepseek-key", "sk-{h32}"),
	FG("huggingface-token", "hf_{L34}"),
	FW("huggingface-org-token", "api_org_{L34}"),
	FW("perplexity-key", "pplx-{a48}"),
	FG("groq-key", "gsk_{a52}"),
	FG("replicate-token", "r8_{a37}"),
	FG("xai-key", "xai-{a80}"),
	FW("langsmith-key", "lsv2_pt_{h32}_{h10}"),
	/* families a mature scanner's rule list has (gitleaks, 2026), with
	 * their own prefixes */
	F("1password-secret-key", "A3-{A6}-{A11}-{A5}-{A5}-{A5}"),
	F("1password-secret-key-6", "A3-{A6}-{A6}-{A5}-{A5}-{A5}-{A5}"),
	F("authress-key", "sc_{l12}.{l5}.acc_{l20}.{b60}"),
	FG("aws-bedrock-api-key", "ABSK{s132}"),
	FW("aws-bedrock-short-lived", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{s120}"),
	F("clickhouse-cloud-key", "4b1d{a38}"),
	F("maxmind-license-key", "{a6}_{a29}_mmk"),
	F("facebook-app-token", "{d15}|{b32}"),
	FW("gitlab-feature-flag-token", "glffct-{b20}"),
	FW("gitlab-session-cookie", "_gitlab_session={l32}"),
	FW("gitlab-pat-routable", "glpat-{b40}.01{l7}"),
	F("harness-sat", "sat.{b22}.{a24}.{a20}"),
	FG("stripe-prod-key", "sk_prod_{a40}"),
	F("vault-legacy-token", "s.{a24}"),
	FG("vault-batch-token-long", "hvb.{b290}"),
	F("yandex-iam-token", "t1.{b40}.{b86}"),
	FW("flutterwave-encryption-key", "FLWSECK_TEST{h12}"),
	FW("square-access-token-long", "sq0atp-{b40}"),
	FG("vercel-token", "vcp_{b56}"),
	FG("vercel-api-key", "vck_{b56}"),
	FG("openai-admin-key", "sk-admin-{b120}"),
	FL("sidekiq-secret", "BUNDLE_ENTERPRISE__CONTRIBSYS__COM={h8}:{h8}"),
	FL("sidekiq-secret-yaml", "BUNDLE_GEMS__CONTRIBSYS__COM: \"{h8}:{h8}\""),
	F("sidekiq-url", "https://{h8}:{h8}@gems.contribsys.com/"),
	FL("nuget-config-password", "<add key=\"ClearTextPassword\" value=\"{pw}\" />"),
	FL("nuget-config-password-enc", "  <add key=\"Password\" value=\"{s120}==\" />"),
	/* JWT and private keys */
	F("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{b40}.{b43}"),
	FL("rsa-private-key", "-----BEGIN RSA PRIVATE KEY-----\n{s64}\n{s64}\n{s20}==\n-----END RSA PRIVATE KEY-----"),
	FL("openssh-private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{s40}\n{s70}\n-----END OPENSSH PRIVATE KEY-----"),
	FL("ec-private-key", "-----BEGIN EC PRIVATE KEY-----\n{s64}\n{s48}\n-----END EC PRIVATE KEY-----"),
	FL("pgp-private-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{s64}\n{s64}\n=Ab1c\n-----END PGP PRIVATE KEY BLOCK-----"),
	FL("putty-private-key", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: {w6}@{w6}\nPublic-Lines: 2\n{s64}\n{s20}\nPrivate-Lines: 1\n{s44}\nPrivate-MAC: {h64}"),
	FL("pkcs8-private-key", "-----BEGIN PRIVATE KEY-----\\n{s64}\\n{s64}\\n-----END PRIVATE KEY-----"),
	/* keyword-anchored assignments */
	FL("password-assignment", "password={pw}"),
	FL("password-env", "export DB_PASSWORD={pw}"),
	FL("password-yaml", "  password: \"{pw}\""),
	FL("password-json", "{\"user\": \"{w6}\", \"password\": \"{pw}\"}"),
	FL("password-xml", "<password>{pw}</password>"),
	FL("password-ado-net", "Server={w6}.database.windows.net;Database={w6};User Id={w6};Password={pw};"),
	FL("passphrase", "password: {dice}"),
	FL("secret-assignment", "client_secret = \"{a32}\""),
	FL("api-key-assignment", "API_KEY={a40}"),
	FL("token-yaml", "  access_token: {b40}"),
	FL("datadog-api-key", "DD_API_KEY={h32}"),
	FL("twilio-auth-token", "TWILIO_AUTH_TOKEN={h32}"),
	FL("storage-key", "storage_key: {s64}"),
	/* authorization headers */
	F("bearer-header", "Authorization: Bearer {a40}"),
	F("basic-header", "Authorization: Basic {basic}"),
	F("curl-token-header", "curl -H 'Authorization: token {a40}' https://api.{w6}.com/"),
	F("api-key-header", "-H 'X-API-Key: {a32}'"),
	/* URLs with credentials */
	F("postgres-url", "postgres://{w6}:{pw}@db.{w6}.internal:5432/app"),
	F("mysql-url", "mysql://{w6}:{pw}@10.0.0.{d2}:3306/shop"),
	F("mongodb-srv-url", "mongodb+srv://{w6}:{pw}@cluster0.{l5}.mongodb.net/db"),
	F("redis-url", "redis://:{pw}@cache.{w6}.internal:6379/0"),
	F("amqp-url", "amqp://{w6}:{pw}@mq.{w6}.internal:5672/"),
	F("https-userinfo", "https://{w6}:{pw}@git.{w6}.com/team/repo.git"),
	/* command-line passwords */
	F("curl-user", "curl -u {w6}:{pw} https://{w6}.example.com/api"),
	F("sshpass", "sshpass -p {pw} ssh {w6}@10.1.2.{d2}"),
	F("sshpass-proxy", "ssh -o 'ProxyCommand=sshpass -p {pw} ssh -W %h:%p bastion' {w6}"),
	F("mysql-p", "mysql -u root -p{pw} {w6}"),
	F("mysqldump-p", "mysqldump -h db -u {w6} -p{pw} app > dump.sql"),
	F("password-flag", "{w6}ctl login --password={pw}"),
	F("pgpassword", "PGPASSWORD={pw} psql -h db -U {w6} app"),
	F("redis-cli-a", "redis-cli -h cache -a {pw} ping"),
	F("sqlcmd-P", "sqlcmd -S db -U sa -P {pw} -Q 'select 1'"),
	F("smbclient-U", "smbclient //files/share -U {w6}%{pw}"),
	F("openssl-passin", "openssl rsa -in k.pem -passin pass:{pw} -out k2.pem"),
	F("docker-login-p", "docker login -u {w6} -p {pw} registry.{w6}.io"),
	F("ldapsearch-w", "ldapsearch -x -D cn=admin -w {pw} -b dc=corp"),
	F("keytool-storepass", "keytool -list -keystore k.jks -storepass {pw}"),
	F("zip-P", "zip -P {pw} secret.zip notes.txt"),
	F("7z-p", "7z a -p{pw} backup.7z dir"),
	FL("netrc", "machine api.{w6}.com login {w6} password {pw}"),
	F("net-use", "net use Z: \\\\files\\{w6} /user:CORP\\{w6} {pw}"),
	F("password-is-prose", "the staging password is {pw} for now"),
	/* disguised: every one of these passes the matchers as written */
	FX("base64-aws-key", "aws_access_key_id=AKIA{A16}", XF_B64),
	FX("base64-github-token", "token ghp_{a36}", XF_B64),
	FX("base64-password-line", "password={pw}", XF_B64),
	FX("base64-private-key", "-----BEGIN RSA PRIVATE KEY-----\n{s64}\n{s64}\n-----END RSA PRIVATE KEY-----", XF_B64),
	FX("split-github-token", "ghp_{a36}", XF_SPLIT),
	FX("split-stripe-key", "sk_live_{a32}", XF_SPLIT),
	FX("zero-width-github-token", "ghp_{a36}", XF_ZW),
	FX("zero-width-aws-key", "AKIA{A16}", XF_ZW),
	FX("zero-width-openai-key", "sk-proj-{b100}", XF_ZW),
	FX("full-width-aws-key", "AKIA{A16}", XF_FW),
	FX("full-width-github-token", "ghp_{a36}", XF_FW),
	FX("url-encoded-postgres-url", "postgres://{w6}:{pw}@db.{w6}.com/app", XF_URL),
	FX("url-encoded-twice", "mysql://{w6}:{pw}@db.{w6}.com/app", XF_URL2),
};

/* Look-alikes: none of these may be reported. */
static const struct corpus_family corpus_innocents[] = {
	F("commit-hash", "commit {h40}"),
	F("short-hash", "fixed in {h7}, reverted in {h10}"),
	F("merge-range", "git log {h12}..{h12}"),
	F("uuid", "request_id={uuid}"),
	F("request-id-header", "X-Request-Id: {uuid}"),
	F("amz-request-id", "x-amz-request-id: {A16}"),
	F("amz-id-2", "x-amz-id-2: {r54}"),
	F("trace-id", "trace_id={h32} span_id={h16}"),
	F("sha256-digest", "sha256:{h64}"),
	F("image-digest", "ghcr.io/{w6}/{w6}@sha256:{h64}"),
	F("sha256sum", "{h64}  release-{d1}.{d2}.tar.gz"),
	F("md5", "md5 {h32}"),
	F("etag", "ETag: \"{h32}\""),
	F("npm-integrity", "\"integrity\": \"sha512-{r64}\""),
	F("go-sum", "golang.org/x/{w6} v0.{d2}.0 h1:{r32}"),
	F("ssh-fingerprint", "SHA256:{r32} {w6}@{w6}"),
	FL("ssh-public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{s43} {w6}@{w6}"),
	FL("pem-public-key", "-----BEGIN PUBLIC KEY-----\n{s64}\n{s64}\n-----END PUBLIC KEY-----"),
	FL("certificate", "-----BEGIN CERTIFICATE-----\n{s64}\n{s64}\n-----END CERTIFICATE-----"),
	F("data-uri", "<img src=\"data:image/png;base64,{r90}\">"),
	FW("prose-ghp", "ghp_ prefixes mark GitHub tokens; {w8} them"),
	F("prose-slack", "Slack bot tokens start with xoxb- and user tokens with xoxp-"),
	FG("prose-akia", "AKIA starts an AWS access key id, ASIA a temporary one"),
	F("prose-stripe", "use sk_test_ keys in {w6} and sk_live_ keys only in prod"),
	F("prose-sk", "the sk- prefix is OpenAI's, sk-ant- is Anthropic's"),
	F("bearer-doc", "Authorization: Bearer <token>"),
	F("bearer-var", "Authorization: Bearer $TOKEN"),
	F("bearer-template", "Authorization: Bearer {{ access_token }}"),
	F("basic-doc", "Authorization: Basic <base64 of user:password>"),
	FL("password-changeme", "password=changeme"),
	FL("password-angle", "password: <your-password>"),
	FL("password-env-ref", "password=${DB_PASSWORD}"),
	FL("password-mask", "password: ********"),
	FL("api-key-xxxx", "api_key: xxxx"),
	FL("token-x", "token: XXXXXXXXXXXXXXXXXXXXXXXX"),
	FW("ghp-xxxx", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
	FG("stripe-xxxx", "sk_live_XXXXXXXXXXXXXXXXXXXXXXXX"),
	FL("password-prose", "Password: required for every account"),
	FL("password-ui", "Password: enter your password to continue"),
	FL("password-policy", "password: must be at least 12 characters long"),
	F("curl-vars", "curl -u $USER:$TOKEN https://api.{w6}.com"),
	F("mysql-prompt", "mysql -u root -p {w6}"),
	F("sshpass-env", "sshpass -p \"$SSHPASS\" ssh {w6}"),
	F("docker-ports", "docker run -u 1000:1000 -p 8080:80 {w6}/{w6}:{d1}.{d1}"),
	F("url-no-password", "postgres://{w6}@localhost:5432/{w6}"),
	F("url-user-only", "https://{w6}@git.{w6}.com/x.git"),
	F("url-port", "http://localhost:{d4}/{w6}?q={w6}"),
	F("arn", "arn:aws:iam::{d12}:role/{w8}"),
	F("version", "upgraded {w6} from {d1}.{d2}.{d1} to {d1}.{d2}.{d2}"),
	F("timestamp", "at 2026-0{d1}-1{d1}T1{d1}:2{d1}:3{d1}Z build {d6} passed"),
	F("ip-mac", "host 10.{d2}.{d1}.{d2} mac 00:1a:2b:3c:4d:5e"),
	F("doc-url", "see https://docs.{w6}.com/{w8}/{w8}#{w6}"),
	F("sql", "SELECT * FROM users WHERE id = {d6} AND token_id = {d4}"),
	F("code-ref", "token = os.environ[\"{W8}_TOKEN\"]"),
	F("code-getpass", "password = getpass.getpass()"),
	FL("yaml-ref", "client_secret: ${CLIENT_SECRET}"),
	F("identifier", "{w8}_{w8}_{w8}_{w8}"),
	F("camel-identifier", "get{W6}{W8}Token"),
	F("key-value", "a key-value store keyed by {w6}"),
	F("null-token", "token: null"),
	F("aws-cli-ref", "AWS_SECRET_ACCESS_KEY=$(aws configure get aws_secret_access_key)"),
	F("hf-call", "hf_hub_download(repo_id=\"{w6}/{w6}\")"),
	F("uuid-session", "session {uuid} ended after {d2} minutes"),
	F("base64-binary", "blob {r48}"),
	F("hex-blob", "payload {h128}"),
	F("prose-en", "the {w6} {w8} was {w5} before the {w7} {w6}"),
	F("prose-zh", "\xe5\xaf\x86\xe7\xa0\x81\xe7\xad\x96\xe7\x95\xa5\xe8\xa7\x81\xe6\x96\x87\xe6\xa1\xa3 {w6}"),
	F("full-width-prose", "\xef\xbc\xa1\xef\xbc\xb7\xef\xbc\xb3 {w6} \xe2\x80\x8b{w8}"),
	F("url-encoded-query", "https://{w6}.com/search?q={w6}%20{w6}%3A{w6}&page={d1}"),
	F("wrapped-prose", "the {w8}\n{w8} was {w6}"),
	F("git-sha-column", "{h40}\n{h40}\n{h40}"),
	F("k8s-secret-ref", "secretKeyRef: {name: {w6}, key: password}"),
	FG("npm-config", "npm_config_cache=/tmp/{w6}"),
	F("password-reset", "password reset link sent to {w6}@{w6}.com"),
	F("pr-ref", "PR #{d4} closed issue #{d3}"),
	FL("env-cache-key", "CACHE_KEY=user_{d4}_profile_v{d1}"),
	FL("env-object-key", "S3_OBJECT_KEY=uploads/{d4}/report_{w6}.pdf"),
	FL("env-publishable-key", "STRIPE_PUBLISHABLE_KEY=pk_live_{a24}"),
	FL("env-gpg-key", "GPG_KEY={H40}"),
	FL("env-ssh-key", "SSH_KEY=~/.ssh/id_ed25519"),
	F("test-function", "def test_{w8}_{w6}_handles_{w5}():"),
	F("live-reload", "live_reload_interval={d3}"),
	F("pat-prose", "pat. on the back for {w6}"),
	FL("credentials-path", "credentials: ~/.config/{w6}/credentials.json"),
	F("sk-learn", "pip install scikit-learn sk-{w6}"),
	F("gerrit-change-id", "Change-Id: I{h40}"),
	F("ulid", "event {A26} stored"),
	F("ipfs-cid", "ipfs://Qm{a44}"),
	F("stripe-object-ids", "cus_{a14} paid pi_{a24} (ch_{a24}, evt_{a24})"),
	F("base64-json", "config {r1}eyJuYW1lIjoiZm9vIiwidGllciI6ImZyZWUifQ=="),
	F("base64-prose", "aGVsbG8gd29ybGQsIHRoaXMgaXMgb25seSBhIHRlc3Qgb2YgdGhlIGRlY29kZXI="),
	F("json-schema", "\"password\": {\"type\": \"string\", \"minLength\": {d1}}"),
	F("html-input", "<input type=\"password\" name=\"password\" id=\"pw{d2}\">"),
	F("sql-hash", "UPDATE users SET password_hash = $1 WHERE id = $2"),
	FL("helm-values", "password: {{ .Values.db.password }}"),
	F("oauth-token-type", "{\"token_type\": \"bearer\", \"expires_in\": 3600}"),
	FL("secret-name", "secret_name: prod-db-credentials"),
	F("gha-secret-ref", "AWS_ACCESS_KEY_ID: ${{ secrets.AWS_ACCESS_KEY_ID }}"),
	F("known-hosts", "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{s43}"),
	F("git-lfs-pointer", "oid sha256:{h64}\nsize {d6}"),
	FL("password-file-env", "MYSQL_ROOT_PASSWORD_FILE=/run/secrets/db"),
	F("password-stdin", "echo \"$CR_PAT\" | docker login ghcr.io -u {w6} --password-stdin"),
	FL("password-from-cat", "PASSWORD=$(cat /run/secrets/pw)"),
	F("curl-quoted-vars", "curl -u \"$USER:$PASS\" https://{w6}.example.com"),
	F("mysql-quoted-var", "mysql -u root -p\"$MYSQL_PWD\" {w6}"),
	F("openssl-env-pass", "openssl rsa -in k.pem -passin env:KEY_PASS -out k2.pem"),
	F("redis-cli-var", "redis-cli -a \"$REDIS_PASSWORD\" ping"),
	F("7z-prompt", "7z x -p archive.7z"),
	F("python-kwarg", "connect(host=h, user=u, password=db_pass)"),
	F("python-attr", "self.password = password"),
	F("go-struct-tag", "Password string `json:\"password\"`"),
	F("log-invalid-token", "401: invalid token: expired at 2026-0{d1}-0{d1}"),
	F("bitcoin-address", "send to bc1q{l38}"),
	F("password-is-required", "the password is required for {w6}"),
	F("password-is-vault", "password is: see vault entry {w6}"),
	F("password-is-length", "the password is {d2} characters long"),
	F("password-was-reset", "your password was reset by {w6}"),
	F("doc-default-password", " * @{w6}PwdCallback: the default password callback."),
	F("weak-name-word", "const PASS = '{w8}';"),
	F("password-names-password", "password = db{w2}password"),
	F("prose-quoting-commands", "repeats (\"curl -u a:\", \"%41\", spaces, ...) under the"),
	F("prose-mysql-ellipsis", "command lines (`curl -u`, `sshpass -p`, `mysql -p\xe2\x80\xa6`),"),
	F("net-use-no-password", "net use Z: \\\\files\\{w6} /user:CORP\\{w6} /persistent:yes"),
	/* identifiers that share a prefix with a token and are names */
	F("stripe-fixture-name", "def sk_test_fixture_name(): return sk_live_{w8}_mode"),
	F("disk-test-function", "disk_test_VerifyChecksumOnRead{d2} and risk_live_{W4}{w12}"),
	F("hf-hub-glued", "from huggingface_hub import hf_hub_download as my_hf_hub_download"),
	F("npm-config-glued", "export NPM_CONFIG_CACHE=$HOME/.npm; pnpm_config_{w8}=1"),
	F("glpat-example", "glpat_example and GLPAT_EXAMPLE_{W6} in the test names"),
	F("gitlab-prefixes-prose", "GitLab tokens start glpat-, gldt- or glrt-; see {w6}_glpat-docs"),
	F("github-prefix-glued", "the {w6}_ghp_ and GITHUB_TOKEN_ghp_ prefixes are checked"),
	F("akia-glued-short", "key_AKIA{A8} is too short to be a key"),
	F("xoxb-glued-prose", "x_xoxb- is how bot tokens look, not a token"),
	F("vercel-words", "vcp_ and vck_ prefixes; vercel_{w8}_config"),
	F("sk-prefix-words", "task-{w8}-runner, disk-{h12}, ask-{w6}"),
	F("pscale-words", "pscale_tkn_ and pscale_pw_ are PlanetScale's prefixes"),
	F("vault-path", "vault kv get secret/s.{w8}.config"),
	F("s-dot-code", "s.getElementsByTagName(x); s.addEventListener(y)"),
	F("s-dot-camel-24", "s.get{W1}{w5}{W1}{w6}{W1}{w7}(x)"),
	F("facebook-like-pipe", "| {d10} | {w8} |"),
	F("a3-sku", "A3-{A4} part number, A3-paper"),
	F("mmk-word", "currency_{w3}_mmk and {w6}_mmk"),
	F("t1-version", "t1.{w6}.{w8} node name"),
	F("clickhouse-like-hex", "4b1d{h6} short"),
	F("flutterwave-prose", "FLWSECK_TEST- keys and FLWSECK- keys are Flutterwave's"),
	F("sat-dot", "sat. on {w6} {d2}"),
	FL("nuget-config-ref", "<add key=\"ClearTextPassword\" value=\"%NUGET_PASSWORD%\" />"),
	FL("nuget-config-msbuild", "<add key=\"ClearTextPassword\" value=\"$(NuGetPassword)\" />"),
	FL("nuget-source", "<add key=\"nuget.org\" value=\"https://api.nuget.org/v3/index.json\" />"),
	FL("nuget-username", "<add key=\"Username\" value=\"{w6}@{w6}.com\" />"),
	FL("bundle-build-flags", "BUNDLE_BUILD__NOKOGIRI=--use-system-libraries"),
	FL("sidekiq-env-ref", "BUNDLE_GEMS__CONTRIBSYS__COM=${SIDEKIQ_CREDENTIALS}"),

};

#undef F
#undef FG
#undef FW
#undef FL
#undef FX

static uint64_t corpus_rng(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static char corpus_pick(uint64_t *s, const char *set)
{
	return set[corpus_rng(s) % strlen(set)];
}

/* A growing output buffer. */
struct cbuf {
	char *b;
	size_t n, size;
	int over;
};

static void cb_put(struct cbuf *c, char ch)
{
	if (c->n + 1 < c->size)
		c->b[c->n++] = ch;
	else
		c->over = 1;
}

static void cb_puts(struct cbuf *c, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cb_put(c, s[i]);
}

static const char corpus_b64chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void cb_b64(struct cbuf *c, const unsigned char *in, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		cb_put(c, corpus_b64chars[(v >> 18) & 63]);
		cb_put(c, corpus_b64chars[(v >> 12) & 63]);
		cb_put(c, i + 1 < n ? corpus_b64chars[(v >> 6) & 63] : '=');
		cb_put(c, i + 2 < n ? corpus_b64chars[v & 63] : '=');
	}
}

/* A password: 10..16 bytes with a letter and a digit. */
static void cb_password(struct cbuf *c, uint64_t *s)
{
	static const char set[] =
		"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!#^*_+-";
	size_t n = 10 + corpus_rng(s) % 7, i;

	cb_put(c, corpus_pick(s, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"));
	cb_put(c, corpus_pick(s, "23456789"));
	for (i = 2; i < n; i++)
		cb_put(c, corpus_pick(s, set));
}

static void cb_fill(struct cbuf *c, uint64_t *s, const char *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cb_put(c, corpus_pick(s, set));
}

static void cb_uuid(struct cbuf *c, uint64_t *s)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < 36; i++)
		cb_put(c, i == 8 || i == 13 || i == 18 || i == 23 ? '-' :
			  i == 14 ? '4' : corpus_pick(s, hx));
}

/* Expand the fills of tmpl into c. */
static void corpus_expand(const char *tmpl, uint64_t *s, struct cbuf *c)
{
	static const char *const dice[] = {
		"correct", "horse", "battery", "staple", "orbit", "lantern",
		"marble", "cactus", "velvet", "quartz", "pepper", "harbor",
		"glacier", "tundra", "falcon", "meadow", "copper", "violin",
		"saddle", "nectar", "puzzle", "walnut", "ember", "jigsaw",
		"mosaic", "pylon", "rhubarb", "sonnet", "turnip", "zephyr",
		"acorn", "bramble", "cobalt", "dingo", "fjord", "gusto",
	};
	const char *p = tmpl;

	while (*p) {
		const char *q;
		char cls;
		size_t n = 0;

		if (*p != '{' || !(q = strchr(p, '}')) || q - p > 8 ||
		    !(p[1] && (p[2] == '}' || (p[2] >= '0' && p[2] <= '9') ||
			       strncmp(p, "{pw}", 4) == 0 ||
			       strncmp(p, "{dice}", 6) == 0 ||
			       strncmp(p, "{uuid}", 6) == 0 ||
			       strncmp(p, "{basic}", 7) == 0 ||
			       strncmp(p, "{sas}", 5) == 0))) {
			cb_put(c, *p++);
			continue;
		}
		if (strncmp(p, "{pw}", 4) == 0) {
			cb_password(c, s);
		} else if (strncmp(p, "{dice}", 6) == 0) {
			size_t w = 4 + corpus_rng(s) % 3, k;

			for (k = 0; k < w; k++) {
				const char *d = dice[corpus_rng(s) %
						     (sizeof(dice) / sizeof(dice[0]))];
				if (k)
					cb_put(c, ' ');
				cb_puts(c, d, strlen(d));
			}
		} else if (strncmp(p, "{uuid}", 6) == 0) {
			cb_uuid(c, s);
		} else if (strncmp(p, "{basic}", 7) == 0) {
			char tmp[64];
			struct cbuf t = { tmp, 0, sizeof(tmp), 0 };

			cb_fill(&t, s, "abcdefghijklmnopqrstuvwxyz", 6);
			cb_put(&t, ':');
			cb_password(&t, s);
			cb_b64(c, (const unsigned char *)tmp, t.n);
		} else if (strncmp(p, "{sas}", 5) == 0) {
			size_t k;

			for (k = 0; k < 43; k++) {
				char ch = corpus_b64chars[corpus_rng(s) % 64];

				if (ch == '+')
					cb_puts(c, "%2B", 3);
				else if (ch == '/')
					cb_puts(c, "%2F", 3);
				else
					cb_put(c, ch);
			}
			cb_puts(c, "%3D", 3);
		} else {
			cls = p[1];
			for (q = p + 2; *q >= '0' && *q <= '9'; q++)
				n = n * 10 + (size_t)(*q - '0');
			switch (cls) {
			case 'a': cb_fill(c, s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", n); break;
			case 'A': cb_fill(c, s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", n); break;
			case 'l': cb_fill(c, s, "abcdefghijklmnopqrstuvwxyz0123456789", n); break;
			case 'h': cb_fill(c, s, "0123456789abcdef", n); break;
			case 'H': cb_fill(c, s, "0123456789abcdefABCDEF", n); break;
			case 'b': cb_fill(c, s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", n); break;
			case 's': cb_fill(c, s, corpus_b64chars, n); break;
			case 'd': cb_fill(c, s, "0123456789", n); break;
			case 'L': cb_fill(c, s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", n); break;
			case 'w': cb_fill(c, s, "abcdefghijklmnopqrstuvwxyz", n); break;
			case 'W': cb_fill(c, s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", n); break;
			case 'c': cb_fill(c, s, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", n); break;
			case 'z': cb_fill(c, s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~.", n); break;
			case 'Z': cb_fill(c, s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~.-", n); break;
			case 'r': {
				unsigned char raw[256];
				size_t k;

				for (k = 0; k < n && k < sizeof(raw); k++)
					raw[k] = (unsigned char)corpus_rng(s);
				cb_b64(c, raw, k);
				break;
			}
			default: cb_puts(c, p, (size_t)(q - p + 1)); break;
			}
		}
		p = strchr(p, '}') + 1;
	}
}

/* Percent-encode : / @ (and % itself) of [in, in+n) into c. */
static void cb_urlenc(struct cbuf *c, const char *in, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char tmp[4];

		if (in[i] == ':' || in[i] == '/' || in[i] == '@' ||
		    in[i] == '%') {
			snprintf(tmp, sizeof(tmp), "%%%02X",
				 (unsigned char)in[i]);
			cb_puts(c, tmp, 3);
		} else {
			cb_put(c, in[i]);
		}
	}
}

/* See the top of this file: one case of family f into buf. */
static size_t corpus_render_variant(const struct corpus_family *f,
				    uint64_t *s, int variant, char *buf,
				    size_t size);

static size_t corpus_render(const struct corpus_family *f, uint64_t *s,
			    char *buf, size_t size)
{
	return corpus_render_variant(f, s, VAR_BARE, buf, size);
}

/* Does the family hold a private key block (a case for VAR_LITERALS)? */
static int corpus_has_pem(const struct corpus_family *f)
{
	return f->xform == XF_NONE && strstr(f->tmpl, "-----BEGIN") != NULL;
}

/*
 * The lines of [in, in+n) as string literals joined in code, each with
 * the "\n" escape the key needs: key = "L1\n" +\n    "L2\n" +\n ... ;
 */
static void cb_literals(struct cbuf *c, const char *in, size_t n,
			uint64_t *s)
{
	static const char *const joins[] = { " +\n    ", "\n    ", ",\n    ",
					     " .\n    " };
	const char *join = joins[corpus_rng(s) % 4];
	size_t i = 0;

	cb_puts(c, "key = \"", 7);
	while (i < n) {
		size_t e = i;

		while (e < n && in[e] != '\n')
			e++;
		cb_puts(c, in + i, e - i);
		cb_puts(c, "\\n\"", 3);
		i = e + 1;
		if (i < n) {
			cb_puts(c, join, strlen(join));
			cb_put(c, '"');
		}
	}
	cb_put(c, ';');
}

/* [in, in+n) with "> " (or ">" or "> > ") before each line. */
static void cb_quoted(struct cbuf *c, const char *in, size_t n, uint64_t *s)
{
	static const char *const marks[] = { "> ", ">", "> > ", ">  " };
	const char *mark = marks[corpus_rng(s) % 4];
	size_t i;

	cb_puts(c, mark, strlen(mark));
	for (i = 0; i < n; i++) {
		cb_put(c, in[i]);
		if (in[i] == '\n' && i + 1 < n)
			cb_puts(c, mark, strlen(mark));
	}
}

static size_t corpus_render_variant(const struct corpus_family *f,
				    uint64_t *s, int variant, char *buf,
				    size_t size)
{
	static const char *const wraps[] = {
		"%s", "see %s", "the value was %s yesterday", "\"%s\"",
		"'%s'", "(%s)", "[%s]", "-> %s", "`%s`", "%s\n",
		"line one\n%s\nline three", "{\"note\": \"%s\"}",
		"- %s", "\xe7\x9c\x8b\xe8\xbf\x99\xe4\xb8\xaa %s \xe5\x90\xa7",
	};
	char raw[4096], mid[8192];
	struct cbuf r = { raw, 0, sizeof(raw), 0 };
	struct cbuf m = { mid, 0, sizeof(mid), 0 };
	struct cbuf o = { buf, 0, size, 0 };
	const char *w, *pct;
	size_t i;

	corpus_expand(f->tmpl, s, &r);
	if (r.over)
		return 0;
	switch (f->xform) {
	case XF_B64:
		cb_b64(&m, (const unsigned char *)raw, r.n);
		break;
	case XF_SPLIT: {
		size_t at = 6 + corpus_rng(s) % (r.n - 12);

		cb_puts(&m, raw, at);
		cb_put(&m, '\n');
		cb_puts(&m, raw + at, r.n - at);
		break;
	}
	case XF_ZW: {
		static const char *const zw[] = {
			"\xe2\x80\x8b", "\xe2\x80\x8c", "\xe2\x80\x8d",
			"\xe2\x81\xa0", "\xef\xbb\xbf", "\xc2\xad",
		};

		for (i = 0; i < r.n; i++) {
			cb_put(&m, raw[i]);
			if (i > 2 && corpus_rng(s) % 5 == 0) {
				const char *z = zw[corpus_rng(s) % 6];

				cb_puts(&m, z, strlen(z));
			}
		}
		break;
	}
	case XF_FW:
		for (i = 0; i < r.n; i++) {
			unsigned char ch = (unsigned char)raw[i];

			if (ch > 0x20 && ch < 0x7f && corpus_rng(s) % 2) {
				unsigned cp = 0xff01 + (ch - 0x21);

				cb_put(&m, (char)(0xe0 | (cp >> 12)));
				cb_put(&m, (char)(0x80 | ((cp >> 6) & 0x3f)));
				cb_put(&m, (char)(0x80 | (cp & 0x3f)));
			} else {
				cb_put(&m, (char)ch);
			}
		}
		break;
	case XF_URL:
		cb_urlenc(&m, raw, r.n);
		break;
	case XF_URL2: {
		char once[8192];
		struct cbuf t = { once, 0, sizeof(once), 0 };

		cb_urlenc(&t, raw, r.n);
		cb_urlenc(&m, once, t.n);
		break;
	}
	default:
		cb_puts(&m, raw, r.n);
		break;
	}
	if (m.over)
		return 0;
	if (variant == VAR_LITERALS) {
		/* the key alone, as string literals */
		cb_literals(&o, mid, m.n, s);
		if (o.over)
			return 0;
		buf[o.n] = '\0';
		return o.n;
	}
	w = f->inline_ ? wraps[corpus_rng(s) % (sizeof(wraps) / sizeof(wraps[0]))]
		       : "%s";
	pct = strstr(w, "%s");
	{
		char whole[12288];
		struct cbuf t = { whole, 0, sizeof(whole), 0 };

		cb_puts(&t, w, (size_t)(pct - w));
		if (variant == VAR_GLUED) {
			/* an identifier before the token: key_AKIA...,
			 * GITHUB_TOKEN_ghp_..., tokenghp_... */
			static const char *const sep[] = {
				"key_", "x_", "GITHUB_TOKEN_", "k_", "MY-",
				"api_key_", "SECRET__",
			};
			static const char *const word[] = {
				"token", "k9", "myKey", "X",
			};
			const char *g = f->glue == GL_WORD && corpus_rng(s) % 2 ?
						word[corpus_rng(s) % 4] :
						sep[corpus_rng(s) % 7];

			cb_puts(&t, g, strlen(g));
		}
		cb_puts(&t, mid, m.n);
		cb_puts(&t, pct + 2, strlen(pct + 2));
		if (t.over)
			return 0;
		if (variant == VAR_QUOTED)
			cb_quoted(&o, whole, t.n, s);
		else
			cb_puts(&o, whole, t.n);
	}
	if (o.over)
		return 0;
	buf[o.n] = '\0';
	return o.n;
}

#endif
