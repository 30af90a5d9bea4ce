/*
 * unit_capture.c -- auto-capture and reflection: the command
 * classifier and its traps, failure detection, the statement rules (English
 * and Chinese) and their traps, the --llm-cmd check and runner, and
 * capture_transcript on a store: candidates only, one per key, proof added
 * not duplicated, accepted keys left alone, secrets masked, bounded reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cairn.h"
#include "capture.h"
#include "internal.h"
#include "secret.h"
#include "test.h"

/* ---------------------------------------------------------------- helpers */

static char ws_root[512];

static cairn_db *ws_open(const char *name)
{
	char full[256];

	snprintf(full, sizeof(full), "capture-%s", name);
	return test_store(full, ws_root, sizeof(ws_root));
}

/* A Claude Code Bash call and its result as two JSONL lines. */
static void add_call(struct sbuf *sb, const char *session, int n,
		     const char *cmd_json, const char *out_json, int error)
{
	sbuf_addf(sb, "{\"type\":\"assistant\",\"sessionId\":\"%s\",\"uuid\":\"a%d\","
		  "\"timestamp\":\"2025-06-01T10:%02d:00Z\",\"message\":{\"role\":"
		  "\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t%d\","
		  "\"name\":\"Bash\",\"input\":{\"command\":%s}}]}}\n",
		  session, n, n % 60, n, cmd_json);
	sbuf_addf(sb, "{\"type\":\"user\",\"sessionId\":\"%s\",\"uuid\":\"r%d\","
		  "\"timestamp\":\"2025-06-01T10:%02d:30Z\",\"message\":{\"role\":"
		  "\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":"
		  "\"t%d\",\"content\":%s,\"is_error\":%s}]}}\n",
		  session, n, n % 60, n, out_json, error ? "true" : "false");
}

struct got {
	char keys[32][160];
	char actions[32][16];
	char proofs[32][2048];
	char origins[32][16];
	int n;
};

static void collect(void *user, const struct capture_cand *c)
{
	struct got *g = user;

	if (g->n >= 32)
		return;
	snprintf(g->keys[g->n], sizeof(g->keys[0]), "%s", c->key);
	snprintf(g->actions[g->n], sizeof(g->actions[0]), "%s", c->action);
	snprintf(g->proofs[g->n], sizeof(g->proofs[0]), "%s", c->proof);
	snprintf(g->origins[g->n], sizeof(g->origins[0]), "%s", c->origin);
	g->n++;
}

static int find_key(const struct got *g, const char *key)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (!strcmp(g->keys[i], key))
			return i;
	return -1;
}

/* -------------------------------------------------------------- classify */

/* EVIDENCE-OF: success events map to capability/procedure keys */
static void test_classify(void)
{
	static const struct {
		const char *cmd, *kind, *key;
	} t[] = {
		{ "aws sts get-caller-identity --profile prod", "capability", "capability:aws:auth:prod" },
		{ "AWS_PROFILE=ops aws sts get-caller-identity", "capability", "capability:aws:auth:ops" },
		{ "aws --profile blyck s3 cp dist/app.zip s3://blyck-releases/app.zip --acl private", "capability", "capability:deploy:s3:blyck-releases" },
		{ "aws s3 cp s3://logs-bucket/x.log .", "capability", "capability:aws:auth:default" },
		{ "gh auth status", "capability", "capability:github:auth:github.com" },
		{ "npm publish --access public", "capability", "capability:publish:npm:default" },
		{ "kubectl --context prod-eu apply -f k8s/", "capability", "capability:deploy:kubernetes:prod-eu" },
		{ "kubectl get pods", "capability", "capability:kubernetes:access:current" },
		{ "docker push ghcr.io/acme/api:1.2", "capability", "capability:publish:docker:ghcr.io/acme/api" },
		{ "gcloud auth login", "capability", "capability:gcloud:auth" },
		{ "terraform -chdir=infra/prod apply -auto-approve", "capability", "capability:deploy:terraform:prod" },
		{ "fly deploy --app web", "capability", "capability:deploy:fly:web" },
		{ "ssh -p 2222 -i ~/.ssh/id deploy@web1.acme.io uptime", "capability", "capability:ssh:web1.acme.io" },
		{ "psql -h db.internal -U app -c 'select 1'", "capability", "capability:db:postgres:db.internal" },
		{ "PGHOST=pg.acme.io psql -c 'select 1'", "capability", "capability:db:postgres:pg.acme.io" },
		{ "mysql -h my.acme.io -e 'select 1'", "capability", "capability:db:mysql:my.acme.io" },
		{ "redis-cli ping", "capability", "capability:db:redis:localhost" },
		{ "make deploy-staging", "capability", "capability:deploy:staging" },
		{ "cd web && npm ci && npm test", "procedure", "procedure:test:npm-test" },
		{ "timeout 600 make -j4", "procedure", "procedure:build:make" },
		{ "python3 -m pytest -q tests/", "procedure", "procedure:test:pytest" },
		{ "cargo build --release 2>&1 | tail -5", "procedure", "procedure:build:cargo-build" },
		{ "sudo -u deploy ./scripts/deploy.sh prod", "capability", "capability:deploy:prod" },
		{ "flyway -url=jdbc:postgresql://db.acme.io:5432/erp migrate", "capability", "capability:db:postgres:db.acme.io" },
		{ "psql \"host=pg.acme.io dbname=erp\" -c 'select 1'", "capability", "capability:db:postgres:pg.acme.io" },
		{ "cap staging deploy", "capability", "capability:deploy:staging" },
		{ "kamal deploy", "capability", "capability:deploy:kamal:default" },
		{ "wasm-pack build --release", "procedure", "procedure:build:wasm-pack" },
		{ "mvn -B clean package -DskipTests", "procedure", "procedure:build:mvn-package" },
		{ "gsutil -m rsync -r public gs://www.acme.dev", "capability", "capability:deploy:gcs:www.acme.dev" },
		{ "docker login ghcr.io -u bot --password-stdin", "capability", "capability:docker:registry:ghcr.io" },
		{ "wrangler pages deploy dist --project-name site", "capability", "capability:deploy:cloudflare-pages:site" },
		/* a deploy after a build: the deploy wins */
		{ "npm run build && aws s3 sync build s3://site-bucket", "capability", "capability:deploy:s3:site-bucket" },
		/* trivial, unknown or unproven: nothing */
		{ "ls -la", "", "" },
		{ "cat ~/.aws/config", "", "" },
		{ "git status && git diff", "", "" },
		{ "grep -rn deploy .", "", "" },
		{ "echo 'aws sts get-caller-identity'", "", "" },
		{ "cd /srv && pwd", "", "" },
		{ "curl -fsS https://api.acme.io/health", "", "" },
		{ "make clean", "", "" },
		{ "npm install", "", "" },
		{ "terraform plan", "", "" },
		{ "aws sts get-caller-identity || true", "", "" },
		{ "kubectl apply -f k8s/ &", "", "" },
		{ "psql --version", "", "" },
		{ "cargo publish --dry-run", "", "" },
		{ "", "", "" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct capture_class cl;
		int r = capture_classify(t[i].cmd, &cl);

		CHECK_MSG(r == (t[i].kind[0] != '\0'), "%s: classify returned %d", t[i].cmd, r);
		CHECK_MSG(!strcmp(cl.kind, t[i].kind), "%s: kind '%s', expected '%s'", t[i].cmd, cl.kind, t[i].kind);
		CHECK_MSG(!strcmp(cl.key, t[i].key), "%s: key '%s', expected '%s'", t[i].cmd, cl.key, t[i].key);
		if (r)
			CHECK_MSG(cl.title[0] && cl.body[0], "%s: empty title or body", t[i].cmd);
	}
	/* set-up steps are recognised but are not candidates on their own */
	{
		struct capture_class cl;

		CHECK_INT(capture_classify("npm ci", &cl), 0);
		CHECK_INT(cl.setup, 1);
	}
}

static void test_output_failed(void)
{
	CHECK(capture_output_failed("An error occurred (AccessDenied) when calling"));
	CHECK(capture_output_failed("npm ERR! code E403"));
	CHECK(capture_output_failed("ssh: connect to host x: Connection refused"));
	CHECK(capture_output_failed("=== 2 FAILED, 10 passed"));
	CHECK(!capture_output_failed("upload: a to s3://b/a"));
	CHECK(!capture_output_failed("all 12 tests passed"));
	CHECK(!capture_output_failed(""));
	CHECK(!capture_output_failed(NULL));
}

/* -------------------------------------------------------------- reflect */

static const char *first_kind(const char *text, int from_user, char *key)
{
	static struct reflect_stmt s[4];
	size_t n = reflect_text(text, from_user, CAPTURE_ALL, s, 4);

	if (key)
		snprintf(key, 160, "%s", n ? s[0].key : "");
	return n ? s[0].kind : "";
}

/* EVIDENCE-OF: user rules (English, Chinese), decisions, facts */
static void test_reflect_rules(void)
{
	static const struct {
		const char *text;
		int user;
		const char *kind;
	} t[] = {
		{ "Never touch PROD.", 1, "rule" },
		{ "Please always run the tests before pushing.", 1, "rule" },
		{ "From now on, use pnpm in this repo.", 1, "rule" },
		{ "Don't push to main without a review.", 1, "rule" },
		{ "不要動 PROD 資料庫。", 1, "rule" },
		{ "禁止直接推送到 main 分支", 1, "rule" },
		{ "以後部署前一定要先跑測試。", 1, "rule" },
		{ "记得每次发布前都要更新版本号。", 1, "rule" },
		{ "Let's go with Postgres because we need JSONB.", 1, "decision" },
		{ "We decided to drop the v1 API.", 1, "decision" },
		{ "We'll use SQS because the team knows it.", 0, "decision" },
		{ "我們決定用 Redis 做快取，因為要持久化。", 1, "decision" },
		{ "我们用 Kafka，因为吞吐量大。", 1, "decision" },
		{ "The staging DB is at db.staging.internal:5432.", 0, "fact" },
		{ "Node 20 is required for the build.", 1, "fact" },
		{ "staging 的資料庫在 10.0.3.12:5432。", 1, "fact" },
		/* traps */
		{ "Never mind, I found it.", 1, "" },
		{ "Should we always squash commits?", 1, "" },
		{ "Don't change that file for now.", 1, "" },
		{ "Never touch PROD.", 0, "" },          /* rules come from the user */
		{ "I'll use grep to find the usages.", 0, "" },
		{ "Let's go with the second option.", 0, "" }, /* an assistant without a reason */
		{ "From now on I'll handle the releases myself.", 1, "" }, /* the speaker's own plan */
		{ "Never ever!", 1, "" },
		{ "這個不要緊，先跳過。", 1, "" },
		{ "要不要先看一下 log？", 1, "" },
		{ "我還沒決定要用哪個資料庫。", 1, "" },
		{ "The bug is at line 42 of parser.c.", 1, "" },
		{ "The meeting is at 3pm.", 1, "" },
		{ "It always fails on CI", 1, "" },
		{ "ok", 1, "" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		const char *k = first_kind(t[i].text, t[i].user, NULL);

		CHECK_MSG(!strcmp(k, t[i].kind), "\"%s\" (%s): kind '%s', expected '%s'",
			  t[i].text, t[i].user ? "user" : "assistant", k, t[i].kind);
	}
}

static void test_reflect_keys(void)
{
	char k1[160], k2[160], k3[160];
	struct reflect_stmt s[8];
	size_t n;

	/* the same rule said twice, differently cased: the same key */
	first_kind("Never touch PROD.", 1, k1);
	first_kind("  never touch prod!", 1, k2);
	CHECK_STR(k1, "rule:never-touch-prod");
	CHECK_STR(k1, k2);
	first_kind("不要動 PROD 資料庫", 1, k3);
	CHECK_STR(k3, "rule:不要動-prod-資料庫");
	/* several statements in one message, in order; repeats count once */
	n = reflect_text("Never touch PROD. Always run the tests first!\n"
			 "Never touch PROD. We decided to use Redis.", 1,
			 CAPTURE_ALL, s, 8);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(s[0].kind, "rule");
		CHECK_STR(s[1].kind, "rule");
		CHECK_STR(s[2].kind, "decision");
	}
	/* only the kinds asked for */
	n = reflect_text("Never touch PROD. We decided to use Redis.", 1,
			 CAPTURE_RULES, s, 8);
	CHECK_INT(n, 1);
	n = reflect_text("Never touch PROD. We decided to use Redis.", 1,
			 CAPTURE_REFLECT, s, 8);
	CHECK_INT(n, 1);
	/* bounded: max is respected */
	n = reflect_text("Never do a. Never do b. Never do c. Never do d.", 1, CAPTURE_ALL, s, 2);
	CHECK_INT(n, 2);
}

/* EVIDENCE-OF: issue 33 item 14: short, stable keys of a few significant
 * words (no punctuation from the sentence), and titles without filler */
static void test_reflect_titles(void)
{
	static const struct {
		const char *text, *key, *title;
	} t[] = {
		{ "Never push main directly — always open a pull request first, "
		  "even for one-line fixes.",
		  "rule:never-push-main-directly-always",
		  "Never push main directly — always open a pull request first, "
		  "even for one-line fixes" },
		{ "Also, we decided to use Redis for the session cache.",
		  "decision:use-redis-session-cache",
		  "Use Redis for the session cache" },
		{ "So from now on, always run “make check” before pushing.",
		  "rule:always-run-make-check-pushing",
		  "Always run “make check” before pushing" },
		{ "Remember that you must never force-push to main.",
		  "rule:must-never-force-push-main",
		  "You must never force-push to main" },
		{ "另外，我们决定用 Redis 做缓存，因为要持久化。",
		  "decision:用-redis-做缓存-因为要持久化",
		  "用 Redis 做缓存，因为要持久化" },
		{ "记住，以后不要直接推送到 main 分支。",
		  "rule:不要直接推送到-main-分支",
		  "不要直接推送到 main 分支" },
	};
	struct reflect_stmt s[4];
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		size_t n = reflect_text(t[i].text, 1, CAPTURE_ALL, s, 4);

		CHECK_MSG(n == 1, "\"%s\": %zu statements", t[i].text, n);
		if (n != 1)
			continue;
		CHECK_STR(s[0].key, t[i].key);
		CHECK_STR(s[0].title, t[i].title);
		CHECK(strlen(s[0].key) <= strlen(s[0].kind) + 1 + 48);
		/* only [a-z0-9._'-] and CJK ideographs after "kind:" */
		for (k = strlen(s[0].kind) + 1; s[0].key[k]; k++) {
			unsigned char c = (unsigned char)s[0].key[k];

			CHECK_MSG((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
					  c == '-' || c == '.' || c == '_' ||
					  c >= 0x80,
				  "key '%s': byte 0x%02x", s[0].key, c);
		}
		CHECK_MSG(!strstr(s[0].key, "\xE2\x80"), "key '%s' keeps "
			  "punctuation", s[0].key);
	}
	/* the same rule said with and without filler: one key */
	reflect_text("Also, never touch PROD.", 1, CAPTURE_ALL, s, 4);
	{
		char k1[160];

		snprintf(k1, sizeof(k1), "%s", s[0].key);
		reflect_text("never touch prod", 1, CAPTURE_ALL, s, 4);
		CHECK_STR(k1, s[0].key);
	}
}

static void test_llm_parse(void)
{
	struct reflect_llm_cand c;
	char err[128];
	static const char *const bad[] = {
		"not json",
		"[1,2]",
		"{\"kind\":\"rule\",\"key\":\"rule:x\",\"title\":\"t\"}",
		"{\"kind\":\"note\",\"key\":\"note:x\",\"title\":\"t\",\"body\":\"b\"}",
		"{\"kind\":\"rule\",\"key\":\"x\",\"title\":\"t\",\"body\":\"b\"}",
		"{\"kind\":\"rule\",\"key\":\"fact:x\",\"title\":\"t\",\"body\":\"b\"}",
		"{\"kind\":\"rule\",\"key\":\"rule:a b\",\"title\":\"t\",\"body\":\"b\"}",
		"{\"kind\":\"rule\",\"key\":\"rule:x\",\"title\":\"two\\nlines\",\"body\":\"b\"}",
		"{\"kind\":\"rule\",\"key\":\"rule:x\",\"title\":\"t\",\"body\":\"\"}",
		"{\"kind\":\"rule\",\"key\":\"rule:x\",\"title\":\"t\",\"body\":\"b\",\"status\":\"accepted\"}",
		"{\"kind\":\"rule\",\"key\":\"rule:x\",\"title\":1,\"body\":\"b\"}",
	};
	const char *good = "{\"kind\":\"decision\",\"key\":\"decision:db-postgres\","
			   "\"title\":\"Postgres\",\"body\":\"We use Postgres.\"}";
	size_t i;

	CHECK_INT(reflect_llm_parse(good, strlen(good), &c, err, sizeof(err)), CAIRN_OK);
	CHECK_STR(c.kind, "decision");
	CHECK_STR(c.key, "decision:db-postgres");
	CHECK_STR(c.body, "We use Postgres.");
	cairn_free(c.kind);
	cairn_free(c.key);
	cairn_free(c.title);
	cairn_free(c.body);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int rc = reflect_llm_parse(bad[i], strlen(bad[i]), &c, err, sizeof(err));

		CHECK_MSG(rc == CAIRN_INVALID, "accepted: %s", bad[i]);
		CHECK(c.kind == NULL && c.key == NULL);
		CHECK(err[0] != '\0');
	}
}

static void test_run_cmd(void)
{
	char *out = NULL, err[256];
	size_t len = 0;
	char *big;
	struct timespec a, b;
	double ms;

	CHECK_INT(reflect_run_cmd("tr a-z A-Z", "hello", 5, 5000, &out, &len, err, sizeof(err)), CAIRN_OK);
	CHECK_STR(out, "HELLO");
	CHECK_INT(len, 5);
	cairn_free(out);
	CHECK_INT(reflect_run_cmd("echo x; exit 3", "", 0, 5000, &out, &len, err, sizeof(err)), CAIRN_ERROR);
	CHECK(strstr(err, "exit status 3") != NULL);
	cairn_free(out);
	/* a command that never ends is stopped at its deadline */
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK_INT(reflect_run_cmd("sleep 20", "", 0, 300, &out, &len, err, sizeof(err)), CAIRN_ERROR);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	CHECK_MSG(ms < 5000, "took %.0f ms", ms);
	CHECK(strstr(err, "longer than") != NULL);
	cairn_free(out);
	/* a command that does not read its (large) input does not block us */
	big = malloc((size_t)4 << 20);
	CHECK(big != NULL);
	if (big) {
		memset(big, 'x', (size_t)4 << 20);
		CHECK_INT(reflect_run_cmd("echo ok", big, (size_t)4 << 20, 5000, &out, &len, err, sizeof(err)), CAIRN_OK);
		CHECK_STR(out, "ok\n");
		cairn_free(out);
		free(big);
	}
}

/* ------------------------------------------------------- on a store */

#define AWS_ID "AKIAQ3EXAMPLE7KZT2WX"
#define GH_TOKEN "ghp_R7xK2mQ9vL4tN8wP1sZ6yB3cD5fG0hJ2kA4e"

/* EVIDENCE-OF: candidates with proof, one per key, secrets masked */
static void test_transcript_store(void)
{
	cairn_db *db = ws_open("store");
	struct sbuf sb = SBUF_INIT;
	struct capture_opts o;
	struct capture_stats st;
	struct got g;
	char path[1024], path2[1024], err[512];
	cairn_record **v = NULL;
	cairn_filter f;
	size_t n = 0, i;
	int k;

	if (!db)
		return;
	sbuf_addf(&sb, "{\"type\":\"user\",\"sessionId\":\"s1\",\"uuid\":\"u0\",\"timestamp\":"
		  "\"2025-06-01T09:59:00Z\",\"message\":{\"role\":\"user\",\"content\":"
		  "\"Deploy it. Never touch PROD.\"}}\n");
	/* a failure first: no capability from it */
	add_call(&sb, "s1", 1, "\"fly deploy -a web\"", "\"Exit code 1\\nError: no access token\"", 1);
	add_call(&sb, "s1", 2, "\"AWS_ACCESS_KEY_ID=" AWS_ID " aws s3 cp a.zip s3://rel-bucket/a.zip\"",
		 "\"upload: a.zip to s3://rel-bucket/a.zip\"", 0);
	add_call(&sb, "s1", 3, "\"gh auth status\"", "\"Logged in to github.com\\nToken: " GH_TOKEN "\"", 0);
	add_call(&sb, "s1", 4, "\"ls -la\"", "\"total 0\"", 0);
	add_call(&sb, "s1", 5, "\"gh auth status\"", "\"Logged in to github.com\"", 0);
	sbuf_adds(&sb, "{not json\n");
	test_write_file(ws_root, "t1.jsonl", sbuf_str(&sb), path);
	/* the transcript really holds the secrets (so the checks below can fail) */
	CHECK(strstr(sbuf_str(&sb), AWS_ID) && strstr(sbuf_str(&sb), GH_TOKEN));
	sbuf_release(&sb);

	memset(&o, 0, sizeof(o));
	memset(&g, 0, sizeof(g));
	o.emit = collect;
	o.user = &g;
	CHECK_INT(capture_transcript(db, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(st.commands, 5);
	CHECK_INT(st.failed, 1);
	CHECK_INT(st.malformed, 1);
	CHECK_INT(st.proposed, 3);
	CHECK_INT(st.added, 3);
	CHECK(st.redacted >= 2);
	CHECK(find_key(&g, "capability:deploy:fly:web") < 0);
	CHECK(find_key(&g, "capability:deploy:s3:rel-bucket") >= 0);
	CHECK(find_key(&g, "rule:never-touch-prod") >= 0);
	k = find_key(&g, "capability:github:auth:github.com");
	CHECK(k >= 0);
	if (k >= 0) {
		/* the second gh auth status is more proof of the same fact */
		CHECK(strstr(g.proofs[k], "line 7 of") && strstr(g.proofs[k], "line 11 of"));
		CHECK(strstr(g.proofs[k], "[REDACTED:github-token]") != NULL);
		CHECK_STR(g.origins[k], "capture");
	}
	for (k = 0; k < g.n; k++) {
		CHECK(strstr(g.proofs[k], AWS_ID) == NULL);
		CHECK(strstr(g.proofs[k], GH_TOKEN) == NULL);
	}
	/* all of them candidates, none in default recall */
	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	f.origins = "capture,reflection";
	CHECK_INT(cairn_record_list(db, &f, &v, &n), CAIRN_OK);
	CHECK_INT(n, 3);
	for (i = 0; i < n; i++) {
		CHECK_STR(v[i]->status, "candidate");
		CHECK(v[i]->proof && strstr(v[i]->proof, "session s1"));
		CHECK(strstr(v[i]->proof, AWS_ID) == NULL && strstr(v[i]->proof, GH_TOKEN) == NULL);
		CHECK(strstr(v[i]->body, AWS_ID) == NULL);
	}
	cairn_record_list_free(v, n);

	/* the same transcript again: nothing new */
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(db, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(st.added, 0);
	CHECK_INT(st.updated, 0);
	CHECK_INT(st.duplicates, 3);

	/* a human accepts the S3 capability; a later session proves it again
	 * and the GitHub one too: the accepted key is left alone, the pending
	 * candidate gains proof */
	k = find_key(&g, "capability:deploy:s3:rel-bucket");
	CHECK(k >= 0);
	{
		memset(&f, 0, sizeof(f));
		f.statuses = "candidate";
		f.kinds = "capability";
		CHECK_INT(cairn_record_list(db, &f, &v, &n), CAIRN_OK);
		for (i = 0; i < n; i++)
			if (v[i]->key && !strcmp(v[i]->key, "capability:deploy:s3:rel-bucket"))
				CHECK_INT(cairn_record_set_status(db, v[i]->id, "candidate", "accepted", 0), CAIRN_OK);
		cairn_record_list_free(v, n);
	}
	memset(&sb, 0, sizeof(sb));
	add_call(&sb, "s2", 1, "\"aws s3 sync out s3://rel-bucket/\"", "\"upload: out/x to s3://rel-bucket/x\"", 0);
	add_call(&sb, "s2", 2, "\"gh auth status\"", "\"Logged in to github.com\"", 0);
	test_write_file(ws_root, "t2.jsonl", sbuf_str(&sb), path2);
	sbuf_release(&sb);
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(db, path2, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(st.known, 1);
	CHECK_INT(st.updated, 1);
	CHECK_INT(st.added, 0);
	k = find_key(&g, "capability:deploy:s3:rel-bucket");
	CHECK(k >= 0 && !strcmp(g.actions[k], "known"));
	k = find_key(&g, "capability:github:auth:github.com");
	CHECK(k >= 0 && !strcmp(g.actions[k], "update"));
	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	f.kinds = "capability";
	CHECK_INT(cairn_record_list(db, &f, &v, &n), CAIRN_OK);
	CHECK_INT(n, 2); /* no second S3 record, no pending copy */
	for (i = 0; i < n; i++)
		if (!strcmp(v[i]->key, "capability:github:auth:github.com"))
			CHECK(strstr(v[i]->proof, "session s1") && strstr(v[i]->proof, "session s2"));
	cairn_record_list_free(v, n);
	cairn_db_close(db);
}

/* Set ws_root to a fresh workspace (the store itself is not needed). */
static int ws_dir(const char *name)
{
	cairn_db *db = ws_open(name);

	cairn_db_close(db);
	return db != NULL;
}

/* The filter is what keeps the secret out: with its matcher off, it shows. */
static void test_secret_negative_control(void)
{
	struct sbuf sb = SBUF_INIT;
	struct capture_opts o;
	struct capture_stats st;
	struct got g;
	char path[1024], err[256];

	if (!ws_dir("negctl"))
		return;
	add_call(&sb, "s9", 1, "\"AWS_ACCESS_KEY_ID=" AWS_ID " aws sts get-caller-identity\"", "\"{}\"", 0);
	test_write_file(ws_root, "neg.jsonl", sbuf_str(&sb), path);
	sbuf_release(&sb);
	memset(&o, 0, sizeof(o));
	o.dry_run = 1;
	o.emit = collect;
	o.user = &g;
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(g.n, 1);
	CHECK(g.n == 1 && strstr(g.proofs[0], AWS_ID) == NULL);
	secret_disable_kind_for_test("aws-access-key-id");
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	secret_disable_kind_for_test(NULL);
	CHECK(g.n == 1 && strstr(g.proofs[0], AWS_ID) != NULL);
}

/* Credentials passed as options are masked even where the filter is blind. */
static void test_option_masking(void)
{
	static const char *const pw[] = { "Sup3rS3cretPw0rd", "R3dPa55word", "abcd1234efgh5678", "MyS3cretPw" };
	struct capture_opts o;
	struct capture_stats st;
	struct got g;
	char path[1024], err[256];
	int i;
	size_t k;

	if (!ws_dir("mask"))
		return;
	test_write_file(ws_root, "mask.jsonl",
	    "{\"cmd\":\"docker login -u bot -p Sup3rS3cretPw0rd reg.acme.io\",\"exit\":0,\"output\":\"Login Succeeded\"}\n"
	    "{\"cmd\":\"redis-cli -h cache.acme.io -a 'R3dPa55word' ping\",\"exit\":0,\"output\":\"PONG\"}\n"
	    "{\"cmd\":\"vercel deploy --prod --token=abcd1234efgh5678\",\"exit\":0,\"output\":\"ok\"}\n"
	    "{\"cmd\":\"mysql -h my.acme.io -pMyS3cretPw -e 'select 1'\",\"exit\":0,\"output\":\"1\"}\n",
	    path);
	memset(&o, 0, sizeof(o));
	o.dry_run = 1;
	o.emit = collect;
	o.user = &g;
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(g.n, 4);
	CHECK(st.redacted >= 4);
	for (i = 0; i < g.n; i++) {
		CHECK(strstr(g.proofs[i], "[REDACTED:option]") != NULL);
		for (k = 0; k < ARRAY_SIZE(pw); k++)
			CHECK_MSG(strstr(g.proofs[i], pw[k]) == NULL, "%s leaked in %s", pw[k], g.keys[i]);
	}
	CHECK(find_key(&g, "capability:docker:registry:reg.acme.io") >= 0);
	CHECK(find_key(&g, "capability:db:redis:cache.acme.io") >= 0);
	CHECK(find_key(&g, "capability:db:mysql:my.acme.io") >= 0);
}

/* Generic command lines; the statement rules see generic speaker lines. */
static void test_generic_and_reflect(void)
{
	struct capture_opts o;
	struct capture_stats st;
	struct got g;
	char path[1024], err[256];

	if (!ws_dir("generic"))
		return;
	test_write_file(ws_root, "ops.jsonl",
	    "{\"time\":\"2025-06-03T10:00:00Z\",\"cmd\":\"docker push reg.io/api:1\",\"exit\":0,\"output\":\"digest: sha256:ab\"}\n"
	    "{\"time\":1717408800,\"cmd\":\"ssh web2 uptime\",\"exit\":255,\"output\":\"Connection timed out\"}\n"
	    "{\"time\":\"2025-06-03T10:02:00Z\",\"cmd\":\"kubectl apply -f k8s\",\"output\":\"configured\"}\n"
	    "{\"speaker\":\"alice\",\"text\":\"We decided to keep MySQL. Never deploy on Fridays.\"}\n"
	    "{\"speaker\":\"assistant\",\"text\":\"Always check the logs.\"}\n"
	    "[1,2]\n",
	    path);
	memset(&o, 0, sizeof(o));
	o.dry_run = 1;
	o.emit = collect;
	o.user = &g;
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(st.commands, 3);
	CHECK_INT(st.failed, 2); /* exit 255, and no exit status at all */
	CHECK_INT(st.malformed, 1);
	CHECK(find_key(&g, "capability:publish:docker:reg.io/api") >= 0);
	CHECK(find_key(&g, "capability:ssh:web2") < 0);
	CHECK(find_key(&g, "rule:never-deploy-fridays") >= 0);
	CHECK(find_key(&g, "decision:keep-mysql") >= 0);
	CHECK(find_key(&g, "rule:always-check-logs") < 0); /* the assistant's words */
	CHECK_INT(g.n, 3);
	/* what = events only */
	o.what = CAPTURE_EVENTS;
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(g.n, 1);
	/* what = reflection only: no commands */
	o.what = CAPTURE_RULES | CAPTURE_REFLECT;
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(st.commands, 0);
	CHECK_INT(g.n, 2);
	if (g.n == 2)
		CHECK_STR(g.origins[0], "reflection");
	/* --llm-cmd: one good line, one rejected */
	o.llm_cmd = "cat >/dev/null; printf '%s\\n' "
		    "'{\"kind\":\"fact\",\"key\":\"fact:ci-runner\",\"title\":\"CI runner\",\"body\":\"The CI runner is ci.acme.io.\"}' "
		    "'{\"kind\":\"fact\",\"key\":\"nope\",\"title\":\"x\",\"body\":\"y\"}'";
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(st.llm_lines, 1);
	CHECK_INT(st.llm_bad, 1);
	CHECK(find_key(&g, "fact:ci-runner") >= 0);
}

/* Bounded reading: a tail, a deadline, a line over the limit, a bad path. */
static void test_bounds(void)
{
	struct capture_opts o;
	struct capture_stats st;
	struct got g;
	char path[1024], err[256];
	struct sbuf sb = SBUF_INIT;
	FILE *fp;
	size_t i;

	if (!ws_dir("bounds"))
		return;
	add_call(&sb, "s1", 1, "\"gh auth status\"", "\"ok\"", 0);
	for (i = 0; i < 2000; i++)
		sbuf_addf(&sb, "{\"type\":\"assistant\",\"sessionId\":\"s1\",\"message\":{\"content\":\"filler line %zu\"}}\n", i);
	add_call(&sb, "s1", 2, "\"redis-cli ping\"", "\"PONG\"", 0);
	test_write_file(ws_root, "big.jsonl", sbuf_str(&sb), path);
	sbuf_release(&sb);
	/* a line over INGEST_MAX_LINE is skipped and counted */
	fp = fopen(path, "a");
	CHECK(fp != NULL);
	if (fp) {
		fputs("{\"type\":\"user\",\"message\":{\"content\":\"", fp);
		for (i = 0; i < ((size_t)1 << 20) + 10; i++)
			fputc('a', fp);
		fputs("\"}}\n", fp);
		fclose(fp);
	}
	memset(&o, 0, sizeof(o));
	o.dry_run = 1;
	o.emit = collect;
	o.user = &g;
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(g.n, 2);
	CHECK_INT(st.malformed, 1);
	CHECK_INT(st.truncated, 0);
	/* only the tail: the first call is not read */
	o.max_bytes = ((size_t)1 << 20) + 4096;
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(st.truncated, 1);
	CHECK_INT(g.n, 1);
	CHECK(find_key(&g, "capability:db:redis:localhost") >= 0);
	/* a deadline already past: nothing read, not an error */
	o.max_bytes = 0;
	o.deadline_ms = 1;
	memset(&g, 0, sizeof(g));
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(st.timed_out, 1);
	CHECK_INT(g.n, 0);
	/* errors */
	o.deadline_ms = 0;
	CHECK_INT(capture_transcript(NULL, "/nonexistent/x.jsonl", &o, &st, err, sizeof(err)), CAIRN_IO);
	CHECK(strstr(err, "cannot read") != NULL);
	o.dry_run = 0;
	CHECK_INT(capture_transcript(NULL, path, &o, &st, err, sizeof(err)), CAIRN_INVALID);
}

void unit_capture(void)
{
	RUN(test_classify);
	RUN(test_output_failed);
	RUN(test_reflect_rules);
	RUN(test_reflect_keys);
	RUN(test_reflect_titles);
	RUN(test_llm_parse);
	RUN(test_run_cmd);
	RUN(test_transcript_store);
	RUN(test_secret_negative_control);
	RUN(test_option_masking);
	RUN(test_generic_and_reflect);
	RUN(test_bounds);
}
