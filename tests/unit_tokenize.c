/*
 * unit_tokenize.c -- tests for tokenize.c (the cairn tokenizer) and fts.c
 * (its FTS5 registration).
 *
 * Layer: tests. One tokenizer with the default dictionaries is loaded once
 * and shared by the cases (loading takes ~0.1 s); cases that need other
 * options open their own. Tokenizer caches go to test_tmpdir/cache
 * ($CAIRN_CACHE_DIR, set by unit_main.c and unit_tokenize) or a directory of their own
 * under test_tmpdir.
 *
 * Expected Chinese outputs were produced with Debian's jieba:
 * `/usr/bin/python3 -c 'import jieba; print(jieba.lcut_for_search(s,
 * HMM=False))'`; expected stems with libstemmer's "english" algorithm.
 * Out-of-dictionary runs differ from jieba by design (bigrams, see
 * tokenize.h), and those cases say so.
 *
 * Must never: assert on timings (they are printed), or touch files outside
 * test_tmpdir.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "tokenize.h"
#include "fts.h"
#include "test.h"

#define RENDER_MAX 8192   /* bytes of a rendered token list */
#define FUZZ_ROUNDS 3000  /* random strings in the invariant test */
#define FUZZ_MAX_CPS 40   /* code points per random string */
#define BIG_INPUT_BYTES ((size_t)1 << 20) /* the streaming test's input */
#define FAULT_MAX 200     /* allocation failures tried in fault tests */
#define LONG_WORD_BYTES 100000 /* one word this long */
#define LONG_HAN_BYTES 90000   /* one Han run this long */
#define MARK_PILE_BYTES 20000  /* a letter with this many bytes of marks */
#define ROWID_TEXT_MAX 24      /* room for one more ",rowid" */

static struct tok *shared_tok; /* the default tokenizer, opened once */

/* Collects tokens as "tok +colocated tok" (optionally "@start-end"). */
struct collect {
	struct sbuf sb;   /* the rendering */
	int offsets;      /* 1: append @start-end to each token */
	size_t ntok;      /* tokens seen */
	size_t stop_at;   /* >0: return 99 at this token */
};

static int collect_emit(void *user, const char *tok, size_t len,
			size_t start, size_t end, int colocated)
{
	struct collect *c = user;

	if (c->sb.len)
		sbuf_addc(&c->sb, ' ');
	if (colocated)
		sbuf_addc(&c->sb, '+');
	sbuf_add(&c->sb, tok, len);
	if (c->offsets)
		sbuf_addf(&c->sb, "@%zu-%zu", start, end);
	c->ntok++;
	if (c->stop_at && c->ntok == c->stop_at)
		return 99;
	return 0;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1000.0 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static struct tok *get_tok(void)
{
	char err[512];
	struct timespec t0;
	int rc;

	if (shared_tok)
		return shared_tok;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = tok_open(NULL, &shared_tok, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "tok_open: %s", err);
	if (shared_tok)
		fprintf(stderr,
			"tokenize: jieba dictionary loaded in %.1f ms "
			"(tok_open %.1f ms); %s\n",
			tok_dict_load_ms(shared_tok), ms_since(&t0),
			tok_identity(shared_tok));
	return shared_tok;
}

/* Render the tokens of text with t (rendering kept in a static buffer). */
static const char *render_with(struct tok *t, unsigned flags,
			       const char *text, size_t len, int offsets)
{
	static char out[RENDER_MAX];
	struct collect c;
	char err[256];
	int rc;

	if (!t)
		return "(no tokenizer)";
	memset(&c, 0, sizeof(c));
	c.offsets = offsets;
	rc = tok_run(t, text, len, flags, collect_emit, &c, err, sizeof(err));
	if (rc)
		snprintf(out, sizeof(out), "(error %d: %s)", rc, err);
	else
		snprintf(out, sizeof(out), "%s", sbuf_str(&c.sb));
	sbuf_release(&c.sb);
	return out;
}

static const char *toks(const char *text)
{
	return render_with(get_tok(), 0, text, strlen(text), 0);
}

static const char *toks_q(const char *text)
{
	return render_with(get_tok(), TOK_QUERY, text, strlen(text), 0);
}

static const char *toks_off(const char *text)
{
	return render_with(get_tok(), 0, text, strlen(text), 1);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* ---------------------------------------------------------------- cases */

static void tokenize_open_identity(void)
{
	const char *id;

	CHECK(get_tok() != NULL);
	id = tok_identity(get_tok());
	CHECK(strncmp(id, "cairn-tok/2 jieba=", 18) == 0);
	CHECK(strstr(id, " opencc=t2s") != NULL);
	CHECK(strstr(id, " stem=english") != NULL);
	CHECK(strstr(id, " unicode=") != NULL);
	CHECK_STR(tok_identity(NULL), "");
}

static void tokenize_missing_dict(void)
{
	struct tok_opts o = { "/nonexistent/cairn/dict.txt", NULL, 0, 0,
			      NULL };
	struct tok *t = NULL;
	char err[512];

	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_IO);
	CHECK(t == NULL);
	CHECK(strstr(err, "/nonexistent/cairn/dict.txt") != NULL);
	CHECK(strstr(err, "apt-get install python3-jieba") != NULL);
	CHECK(strstr(err, "CAIRN_JIEBA_DICT") != NULL);
}

static void tokenize_bad_dicts(void)
{
	char path[512], err[512];
	struct tok_opts o = { NULL, NULL, 0, 0, NULL };
	struct tok *t = NULL;

	o.jieba_dict = path;
	snprintf(path, sizeof(path), "%s/bad-dict.txt", test_tmpdir);
	CHECK(write_file(path, "数据 3 n\nnofrequency\n") == 0);
	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_CORRUPT);
	CHECK(strstr(err, "line 2") != NULL);
	CHECK(write_file(path, "数据 x3 n\n") == 0);
	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_CORRUPT);
	CHECK(write_file(path, "数据 99999999999 n\n") == 0);
	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_CORRUPT);
	CHECK(write_file(path, "\n\n") == 0);
	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_CORRUPT);
	CHECK(write_file(path, "\xff\xfe 3 n\n") == 0);
	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_CORRUPT);
	CHECK(t == NULL);
	o.jieba_dict = NULL;
	o.opencc_config = "/nonexistent/cairn-opencc.json";
	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_IO);
	CHECK(strstr(err, "cairn-opencc.json") != NULL);
	CHECK(t == NULL);
}

/* A tiny dictionary through tok_opts (a store passes $CAIRN_JIEBA_DICT
 * there: unit_store's test_env_at_open): its words, its identity. */
static void tokenize_custom_dict(void)
{
	char path[512], err[512];
	struct tok_opts o = { NULL, NULL, 0, 0, NULL };
	struct tok *t = NULL;

	snprintf(path, sizeof(path), "%s/small-dict.txt", test_tmpdir);
	CHECK(write_file(path, "  数据 100 n\r\n\n数据库 5\n库 10 n\n"
			       "B超 3 n\n") == 0);
	o.jieba_dict = path;
	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_OK);
	if (!t)
		return;
	CHECK(strcmp(tok_identity(t), tok_identity(get_tok())) != 0);
	/* log(100/118)+log(10/118) > log(5/118): 数据 + 库 wins */
	CHECK_STR(render_with(t, 0, "数据库", 9, 0), "数据 库");
	/* 使用 is unknown here: a bigram with its colocated unigram */
	CHECK_STR(render_with(t, 0, "使用数据", 12, 0), "使用 +使 用 数据");
	tok_close(t);
}

static void tokenize_english_stemming(void)
{
	struct tok_opts o = { NULL, NULL, 1, 0, NULL };
	struct tok *t = NULL;
	char err[512];

	CHECK_STR(toks("Running decisions deployed deploying"),
		  "run decis deploy deploy");
	CHECK_STR(toks("the user's preferences"), "the user prefer");
	CHECK_STR(toks("don't"), "don't");
	CHECK_STR(toks("don\xe2\x80\x99t"), "don't"); /* U+2019 -> ' */
	CHECK_INT(tok_open(&o, &t, err, sizeof(err)), CAIRN_OK);
	if (!t)
		return;
	CHECK(strstr(tok_identity(t), " stem=none") != NULL);
	CHECK_STR(render_with(t, 0, "Running decisions", 17, 0),
		  "running decisions");
	tok_close(t);
}

static void tokenize_case_and_nfkc(void)
{
	CHECK_STR(toks("HELLO World"), "hello world");
	/* full-width ＡＢＣ */
	CHECK_STR(toks("\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3"), "abc");
	CHECK_STR(toks_off("\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3"),
		  "abc@0-9");
	CHECK_STR(toks("\xef\xac\x81le"), "file"); /* ﬁ ligature */
	/* precomposed and decomposed é give the same token */
	CHECK_STR(toks("caf\xc3\xa9"), "caf\xc3\xa9");
	CHECK_STR(toks("cafe\xcc\x81"), "caf\xc3\xa9");
	CHECK_STR(toks_off("cafe\xcc\x81!"), "caf\xc3\xa9@0-6");
	/* default ignorables (zero-width space, soft hyphen) vanish */
	CHECK_STR(toks("data\xe2\x80\x8b" "base soft\xc2\xad" "ware"),
		  "databas softwar");
	CHECK_STR(toks("\xce\xa3\xce\x99\xce\xa3"), "\xcf\x83\xce\xb9\xcf\x83");
}

static void tokenize_identifiers(void)
{
	CHECK_STR(toks("snake_case"), "snake +snake_case case");
	CHECK_STR(toks("camelCase"), "camel +camelcase case");
	CHECK_STR(toks("HTTPServer"), "http +httpserver server");
	CHECK_STR(toks("src/store.c"), "src +src/store.c store c");
	CHECK_STR(toks("a.b.c"), "a +a.b.c b c");
	CHECK_STR(toks("kebab-case"), "kebab case");
	CHECK_STR(toks("decisions_log"), "decis +decisions_log log");
	CHECK_STR(toks("myHTTPServer_v2.go"),
		  "my +myhttpserver_v2.go +myhttpserver http server v +v2 +2 "
		  "go");
	CHECK_STR(toks("utf8Proc sha256"),
		  "utf +utf8proc +8 proc sha +sha256 +256");
	/* a full stop ending a sentence is not part of the word */
	CHECK_STR(toks("see store.c. Then"), "see store +store.c c then");
	CHECK_STR(toks("__init__"), "init");
	CHECK_STR(toks_off("x src/store.c"),
		  "x@0-1 src@2-5 +src/store.c@2-13 store@6-11 c@12-13");
	/* single letters are kept */
	CHECK_STR(toks("a I x"), "a i x");
}

static void tokenize_numbers(void)
{
	CHECK_STR(toks("42 3.14 v1.2.3"),
		  "42 3 +3.14 14 v +v1.2.3 +v1 +1 2 3");
	CHECK_STR(toks("2024-01-05 1,000"), "2024 01 05 1 000");
	/* no stemming of tokens with digits; a letter part is stemmed */
	CHECK_STR(toks("running2"), "run +running2 +2");
}

/*
 * A change between letters and digits splits a word the way camelCase
 * does, but the digit (or letter) part after it shares the position of
 * the part before: the joined and the spaced spelling share their parts,
 * and a document's length in positions does not change.
 */
static void tokenize_letter_digit(void)
{
	CHECK_STR(toks("EMNLP2022"), "emnlp +emnlp2022 +2022");
	CHECK_STR(toks("EMNLP 2022"), "emnlp 2022");
	CHECK_STR(toks_off("x EMNLP2022"),
		  "x@0-1 emnlp@2-7 +emnlp2022@2-11 +2022@7-11");
	CHECK_STR(toks("100ms 3rd python3"),
		  "100 +100ms +ms 3 +3rd +rd python +python3 +3");
	/* digit then capital is a camelCase boundary: a new position */
	CHECK_STR(toks("2Fast"), "2 +2fast fast");
	/* in Chinese text: 2022年 was already two tokens */
	CHECK_STR(toks("EMNLP2022的举办地"),
		  "emnlp +emnlp2022 +2022 的 举办 举办地");
}

static void tokenize_chinese_jieba(void)
{
	/* expected: jieba.lcut_for_search(s, HMM=False) */
	CHECK_STR(toks("我们决定使用数据库"),
		  "我们 决定 使用 数据 据库 数据库");
	CHECK_STR(toks("中华人民共和国成立了"),
		  "中华 华人 人民 共和 共和国 中华人民共和国 成立 了");
	CHECK_STR(toks("我来到北京清华大学"),
		  "我 来到 北京 清华 华大 大学 清华大学");
	CHECK_STR(toks("今天天气不错我们去公园散步吧"),
		  "今天 天天 天气 今天天气 不错 我们 去 公园 散步 吧");
	CHECK_STR(toks("软件工程师需要部署服务"),
		  "软件 工程 工程师 需要 部署 服务");
	CHECK_STR(toks("张三丰打太极拳"), "三丰 张三丰 打 太极 太极拳");
	CHECK_STR(toks_off("我们决定使用数据库"),
		  "我们@0-6 决定@6-12 使用@12-18 数据@18-24 据库@21-27 "
		  "数据库@18-27");
	/* query mode emits the same tokens */
	CHECK_STR(toks_q("我们决定使用数据库"),
		  "我们 决定 使用 数据 据库 数据库");
}

static void tokenize_traditional(void)
{
	char simp[RENDER_MAX];

	snprintf(simp, sizeof(simp), "%s", toks("数据库"));
	CHECK_STR(toks("數據庫"), simp);
	snprintf(simp, sizeof(simp), "%s", toks("资料库"));
	CHECK_STR(toks("資料庫"), simp);
	CHECK_STR(toks("資料庫"), "资料 资料库"); /* t2s is not tw2sp */
	CHECK_STR(toks("我們決定使用數據庫"),
		  "我们 决定 使用 数据 据库 数据库");
	/* phrase-level conversion (覆 alone stays, 反覆 -> 反复) */
	CHECK_STR(toks("他反覆說明"), "他 反复 说明");
	CHECK_STR(toks("反覆"), "反复");
	/* offsets point into the Traditional original */
	CHECK_STR(toks_off("用數據"), "用@0-3 数据@3-9");
}

static void tokenize_oov_bigrams(void)
{
	/* jieba (no HMM) gives 杭 研 as singles; we give a bigram */
	CHECK_STR(toks("他来到了网易杭研大厦"),
		  "他 来到 了 网易 杭研 +杭 研 大厦");
	CHECK_STR(toks_off("杭研"), "杭研@0-6 +杭@0-3 研@3-6");
	CHECK_STR(toks("小明硕士"), "小明 +小 明 硕士");
	/* kana and Hangul: bigrams with colocated unigrams */
	CHECK_STR(toks("ひらがな"), "ひら +ひ らが +ら がな +が な");
	CHECK_STR(toks("한국어"), "한국 +한 국어 +국 어");
	CHECK_STR(toks("한"), "한");
}

static void tokenize_mixed(void)
{
	CHECK_STR(toks("用Rust写API"), "用 rust 写 api");
	CHECK_STR(toks_off("用Rust写API"),
		  "用@0-3 rust@3-7 写@7-10 api@10-13");
	CHECK_STR(toks("Hello, 世界! ＡＢＣ。"), "hello 世界 abc");
	CHECK_STR(toks("部署HTTPServer到生產環境"),
		  "部署 http +httpserver server 到 生产 环境");
}

static void tokenize_invalid_utf8(void)
{
	struct collect c;
	char err[256];

	memset(&c, 0, sizeof(c));
	CHECK_INT(tok_run(get_tok(), "abc\xff" "def", 7, 0, collect_emit, &c,
			  err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_STR(err, "invalid UTF-8 at byte 3");
	CHECK_INT(c.ntok, 0);
	CHECK_INT(tok_run(get_tok(), "ab\xe4\xb8", 4, 0, collect_emit, &c, err,
			  sizeof(err)),
		  CAIRN_INVALID);
	CHECK_STR(err, "invalid UTF-8 at byte 2");
	CHECK_INT(tok_run(get_tok(), "\xc0\x80", 2, 0, collect_emit, &c, err,
			  sizeof(err)),
		  CAIRN_INVALID);
	CHECK_STR(err, "invalid UTF-8 at byte 0");
	CHECK_INT(tok_run(get_tok(), "x\xed\xa0\x80", 4, TOK_QUERY,
			  collect_emit, &c, err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_STR(err, "invalid UTF-8 at byte 1");
	CHECK_INT(tok_run(get_tok(), "\x01\xff", 2, TOK_QUERY, collect_emit,
			  &c, err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_INT(c.ntok, 0);
	sbuf_release(&c.sb);
}

static void tokenize_empty_and_args(void)
{
	struct collect c;
	char err[256];

	memset(&c, 0, sizeof(c));
	CHECK_INT(tok_run(get_tok(), "", 0, 0, collect_emit, &c, err,
			  sizeof(err)),
		  CAIRN_OK);
	CHECK_INT(tok_run(get_tok(), NULL, 0, 0, collect_emit, &c, err,
			  sizeof(err)),
		  CAIRN_OK);
	CHECK_INT(c.ntok, 0);
	CHECK_STR(toks("  ,.;!? \t\n -- // __ "), "");
	CHECK_STR(toks("\xf0\x9f\x98\x80 \xe2\x86\x92"), ""); /* emoji, arrow */
	CHECK_INT(tok_run(NULL, "x", 1, 0, collect_emit, &c, err,
			  sizeof(err)),
		  CAIRN_INVALID);
	CHECK_INT(tok_run(get_tok(), NULL, 3, 0, collect_emit, &c, err,
			  sizeof(err)),
		  CAIRN_INVALID);
	tok_close(NULL);
}

static void tokenize_raw_escape(void)
{
	CHECK_STR(render_with(get_tok(), TOK_QUERY, "\x01Running", 8, 1),
		  "Running@1-8");
	CHECK_STR(render_with(get_tok(), TOK_QUERY, "\x01数据 x", 9, 0),
		  "数据 x");
	CHECK_STR(render_with(get_tok(), TOK_QUERY, "\x01", 1, 0), "");
	/* only in query mode, and only as the first byte */
	CHECK_STR(render_with(get_tok(), 0, "\x01Running", 8, 0), "run");
	CHECK_STR(render_with(get_tok(), TOK_QUERY, "a\x01Running", 9, 0),
		  "a run");
}

static void tokenize_callback_stops(void)
{
	struct collect c;
	char err[256];

	memset(&c, 0, sizeof(c));
	c.stop_at = 2;
	CHECK_INT(tok_run(get_tok(), "one two three 数据库",
			  strlen("one two three 数据库"), 0,
			  collect_emit, &c, err, sizeof(err)),
		  99);
	CHECK_INT(c.ntok, 2);
	CHECK_STR(sbuf_str(&c.sb), "one two");
	sbuf_release(&c.sb);
}

/* Checks every token's invariants; counts tokens. */
struct inv {
	size_t len;    /* the text's length */
	size_t ntok;   /* tokens seen */
	int bad;       /* an invariant failed */
};

static int inv_emit(void *user, const char *tok, size_t len, size_t start,
		    size_t end, int colocated)
{
	struct inv *v = user;

	if (len == 0 || len > TOK_MAX_TOKEN_BYTES || start > end ||
	    end > v->len || (v->ntok == 0 && colocated) ||
	    util_utf8_invalid_at(tok, len) >= 0)
		v->bad = 1;
	v->ntok++;
	return 0;
}

/* A code point from a mix of scripts, marks, joiners and oddities. */
static int32_t fuzz_cp(void)
{
	static const int32_t picks[][2] = {
		{ 'a', 'z' },	    { 'A', 'Z' },	{ '0', '9' },
		{ ' ', '/' },	    { 0x00C0, 0x024F }, { 0x0300, 0x036F },
		{ 0x0391, 0x03C9 }, { 0x0400, 0x04FF }, { 0x0900, 0x097F },
		{ 0x3000, 0x30FF }, { 0x4E00, 0x9FA5 }, { 0xAC00, 0xD7A3 },
		{ 0xF900, 0xFAFF }, { 0xFB00, 0xFB06 }, { 0xFF00, 0xFFEF },
		{ 0x200B, 0x200F }, { 0x1F600, 0x1F64F }, { 0x20000, 0x2A6DF },
		{ 0x2019, 0x2019 }, { 0xFDFA, 0xFDFA },
	};
	size_t k = (size_t)rand() % ARRAY_SIZE(picks);

	return picks[k][0] + rand() % (picks[k][1] - picks[k][0] + 1);
}

static size_t put_utf8(char *out, int32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static void tokenize_fuzz_invariants(void)
{
	char buf[FUZZ_MAX_CPS * 4 + 1], err[256];
	int round, k, bad = 0;

	srand(12345);
	for (round = 0; round < FUZZ_ROUNDS && get_tok(); round++) {
		struct inv v;
		size_t len = 0;
		int n = rand() % FUZZ_MAX_CPS, rc;

		for (k = 0; k < n; k++)
			len += put_utf8(buf + len, fuzz_cp());
		memset(&v, 0, sizeof(v));
		v.len = len;
		rc = tok_run(get_tok(), buf, len, round & 1 ? TOK_QUERY : 0,
			     inv_emit, &v, err, sizeof(err));
		if (rc != CAIRN_OK || v.bad) {
			if (!bad++)
				fprintf(stderr, "fuzz failure rc=%d: %.*s\n",
					rc, (int)len, buf);
		}
	}
	CHECK_INT(bad, 0);
}

static void tokenize_long_inputs(void)
{
	char err[256];
	char *big = cairn_malloc(BIG_INPUT_BYTES + 64);
	static const char *unit =
		"We deployed HTTPServer_v2 to src/store.c today; "
		"我们决定使用數據庫来存储长期记忆。"
		"ひらがな 한국어 caf\xc3\xa9 ";
	size_t ul = strlen(unit), len = 0, i;
	struct timespec t0;
	struct inv v;
	int rc;

	if (!big || !get_tok()) {
		CHECK(big != NULL);
		cairn_free(big);
		return;
	}
	/* mixed text, streamed */
	while (len + ul <= BIG_INPUT_BYTES) {
		memcpy(big + len, unit, ul);
		len += ul;
	}
	memset(&v, 0, sizeof(v));
	v.len = len;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = tok_run(get_tok(), big, len, 0, inv_emit, &v, err, sizeof(err));
	fprintf(stderr, "tokenize: %zu bytes of mixed text -> %zu tokens in "
			"%.0f ms (sanitized build)\n",
		len, v.ntok, ms_since(&t0));
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(v.bad, 0);
	CHECK(v.ntok > len / 20);
	/* one enormous word, one enormous Han run, a mark pile-up */
	for (i = 0; i < LONG_WORD_BYTES; i++)
		big[i] = 'a';
	memset(&v, 0, sizeof(v));
	v.len = LONG_WORD_BYTES;
	CHECK_INT(tok_run(get_tok(), big, LONG_WORD_BYTES, 0, inv_emit, &v, err,
			  sizeof(err)),
		  CAIRN_OK);
	CHECK_INT(v.bad, 0);
	CHECK(v.ntok >= 1);
	for (len = 0; len + 9 <= LONG_HAN_BYTES; len += 9)
		memcpy(big + len, "数据库", 9);
	memset(&v, 0, sizeof(v));
	v.len = len;
	CHECK_INT(tok_run(get_tok(), big, len, 0, inv_emit, &v, err,
			  sizeof(err)),
		  CAIRN_OK);
	CHECK_INT(v.bad, 0);
	CHECK(v.ntok >= len / 9);
	big[0] = 'e';
	for (len = 1; len + 2 <= MARK_PILE_BYTES; len += 2)
		memcpy(big + len, "\xcc\x81", 2);
	memset(&v, 0, sizeof(v));
	v.len = len;
	CHECK_INT(tok_run(get_tok(), big, len, 0, inv_emit, &v, err,
			  sizeof(err)),
		  CAIRN_OK);
	CHECK_INT(v.bad, 0);
	cairn_free(big);
}

/* Every allocation failure in tok_run and tok_open is reported, not hit. */
static void tokenize_alloc_failures(void)
{
	static const char *text = "We deployed HTTPServer_v2 "
				  "我们决定使用數據庫 ひらがな camelCase";
	struct tok_opts opts[3];
	char err[512], dir[512];
	size_t k;
	long n;
	int rc, ok = 0;

	if (!get_tok())
		return;
	memset(opts, 0, sizeof(opts));
	for (n = 1; n < FAULT_MAX; n++) {
		struct collect c;

		memset(&c, 0, sizeof(c));
		util_fail_alloc_after(n);
		rc = tok_run(get_tok(), text, strlen(text), 0, collect_emit,
			     &c, err, sizeof(err));
		util_fail_alloc_after(0);
		sbuf_release(&c.sb);
		CHECK(rc == CAIRN_OK || rc == CAIRN_NOMEM);
		if (rc == CAIRN_OK && ++ok > 3)
			break;
	}
	/* from the cache, building without one, building and writing one */
	snprintf(dir, sizeof(dir), "%s/cache-faults", test_tmpdir);
	opts[1].cache_dir = "";
	opts[2].cache_dir = dir;
	for (k = 0; k < ARRAY_SIZE(opts); k++) {
		for (n = 1; n < FAULT_MAX; n++) {
			struct tok *t = NULL;

			util_fail_alloc_after(n);
			rc = tok_open(&opts[k], &t, err, sizeof(err));
			util_fail_alloc_after(0);
			CHECK(rc == CAIRN_OK || rc == CAIRN_NOMEM);
			CHECK((rc == CAIRN_OK) == (t != NULL));
			tok_close(t);
			if (rc == CAIRN_OK)
				break;
		}
	}
}

/* ----------------------------------------------------------------- cache */

/*
 * The layout of the cache file header (struct cache_header in
 * tokenize_tables.c),
 * for the tests that forge a header with a valid checksum.
 */
#define HDR_BYTES 352          /* sizeof(struct cache_header) */
#define HDR_FORMAT_AT 8        /* uint32_t format */
#define HDR_TEXT_OFF_AT 32     /* uint64_t text_off */
#define HDR_SLOTS_OFF_AT 48    /* uint64_t slots_off */
#define HDR_NSLOTS_AT 56       /* uint64_t nslots */
#define HDR_CHECK_AT 280       /* char check[72]: SHA-256 hex */
#define CACHE_FUZZ_ROUNDS 400  /* random strings compared with and without */
#define CACHE_WRITERS 4        /* processes racing to write one cache */

/* Hashes a token stream: every token's bytes, offsets and colocation. */
struct stream {
	uint64_t h;  /* FNV-1a of everything seen */
	size_t ntok; /* tokens seen */
};

static void stream_add(struct stream *s, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++) {
		s->h ^= b[i];
		s->h *= 0x100000001b3ULL;
	}
}

static int stream_emit(void *user, const char *tok, size_t len,
		       size_t start, size_t end, int colocated)
{
	struct stream *s = user;

	stream_add(s, &len, sizeof(len));
	stream_add(s, tok, len);
	stream_add(s, &start, sizeof(start));
	stream_add(s, &end, sizeof(end));
	stream_add(s, &colocated, sizeof(colocated));
	s->ntok++;
	return 0;
}

/*
 * Mixed text: Simplified and Traditional Chinese (with the characters whose
 * t2s depends on the phrase), non-BMP Han, kana, Hangul, identifiers.
 */
static const char *const cache_corpus[] = {
	"我们决定使用数据库", "我們決定使用數據庫來存儲長期記憶",
	"他反覆說明", "乾隆皇帝下江南", "藉口", "於是他們說了麼",
	"中华人民共和国成立了", "部署HTTPServer到生產環境",
	"ひらがな 한국어 カタカナ", "\xf0\xa0\x80\x80\xf0\xa0\x80\x81 汉字",
	"Hello, 世界! ＡＢＣ。", "myHTTPServer_v2.go src/store.c",
	"他来到了网易杭研大厦", "今天天气不错我们去公园散步吧",
	"The user's preferences were deployed yesterday", "畫畫 瞭解 彷彿",
};

/* Hash of t's tokens for the corpus and random strings, both modes. */
static uint64_t corpus_hash(struct tok *t)
{
	char buf[FUZZ_MAX_CPS * 4 + 1], err[256];
	struct stream s = { 0xcbf29ce484222325ULL, 0 };
	size_t i, len;
	int round, k, n;

	if (!t)
		return 0;
	for (i = 0; i < ARRAY_SIZE(cache_corpus); i++) {
		CHECK_INT(tok_run(t, cache_corpus[i], strlen(cache_corpus[i]),
				  0, stream_emit, &s, err, sizeof(err)),
			  CAIRN_OK);
		CHECK_INT(tok_run(t, cache_corpus[i], strlen(cache_corpus[i]),
				  TOK_QUERY, stream_emit, &s, err,
				  sizeof(err)),
			  CAIRN_OK);
	}
	srand(777);
	for (round = 0; round < CACHE_FUZZ_ROUNDS; round++) {
		len = 0;
		n = rand() % FUZZ_MAX_CPS;
		for (k = 0; k < n; k++)
			len += put_utf8(buf + len, fuzz_cp());
		CHECK_INT(tok_run(t, buf, len, 0, stream_emit, &s, err,
				  sizeof(err)),
			  CAIRN_OK);
	}
	CHECK(s.ntok > 100);
	return s.h;
}

/* tok_open with o (jieba_dict, cache_dir set); NULL on failure. */
static struct tok *open_timed(const struct tok_opts *o, double *ms)
{
	struct tok *t = NULL;
	struct timespec t0;
	char err[512];
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = tok_open(o, &t, err, sizeof(err));
	if (ms)
		*ms = ms_since(&t0);
	CHECK_MSG(rc == CAIRN_OK, "tok_open: %s", err);
	return t;
}

/*
 * The one file in dir, which must be a cache file "tok*.bin", into path;
 * 0 if dir holds anything else (a temporary file left behind).
 */
static int cache_file(const char *dir, char *path, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0, ok = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		ok = strncmp(e->d_name, "tok", 3) == 0 && len > 4 &&
		     strcmp(e->d_name + len - 4, ".bin") == 0;
		snprintf(path, size, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return n == 1 && ok;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Overwrite len bytes of path at off with data. */
static int patch_file(const char *path, long off, const void *data,
		      size_t len)
{
	int fd = open(path, O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = pwrite(fd, data, len, (off_t)off) == (ssize_t)len;
	return close(fd) == 0 && ok ? 0 : -1;
}

static int read_at(const char *path, long off, void *out, size_t len)
{
	int fd = open(path, O_RDONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = pread(fd, out, len, (off_t)off) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -1;
}

/* Rewrite the header's checksum so that only the fields are wrong. */
static int reseal_header(const char *path)
{
	unsigned char h[HDR_BYTES];
	char hex[65];

	if (read_at(path, 0, h, sizeof(h)))
		return -1;
	memset(h + HDR_CHECK_AT, 0, HDR_BYTES - HDR_CHECK_AT);
	util_sha256_hex(h, sizeof(h), hex);
	return patch_file(path, HDR_CHECK_AT, hex, 65);
}

/*
 * EVIDENCE-OF: SPEC 9 (hook p50) -- tok_open maps the compiled tables from
 * the cache, and the tokens and identity are the same as without it.
 */
static void tokenize_cache_same_tokens(void)
{
	struct tok_opts o = { NULL, NULL, 0, 0, NULL };
	char dir[512], path[1024];
	struct tok *none, *cold, *warm;
	double ms_none, ms_cold, ms_warm;
	struct stat st;
	uint64_t h;

	snprintf(dir, sizeof(dir), "%s/cache-same/sub", test_tmpdir);
	o.cache_dir = "";
	none = open_timed(&o, &ms_none);
	o.cache_dir = dir;
	cold = open_timed(&o, &ms_cold);
	warm = open_timed(&o, &ms_warm);
	if (!none || !cold || !warm)
		goto out;
	fprintf(stderr,
		"tokenize: tok_open %.1f ms without the cache, %.1f ms "
		"building it, %.1f ms from it (sanitized build)\n",
		ms_none, ms_cold, ms_warm);
	CHECK_INT(tok_cached(none), 0);
	CHECK_INT(tok_cached(cold), 0);
	CHECK_INT(tok_cached(warm), 1);
	CHECK_STR(tok_identity(cold), tok_identity(none));
	CHECK_STR(tok_identity(warm), tok_identity(none));
	h = corpus_hash(none);
	CHECK(corpus_hash(cold) == h);
	CHECK(corpus_hash(warm) == h);
	CHECK_STR(render_with(warm, 0, "他反覆說明", 15, 1),
		  render_with(none, 0, "他反覆說明", 15, 1));
	/* mode 0600 in a directory created 0700 */
	CHECK(cache_file(dir, path, sizeof(path)));
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
out:
	tok_close(none);
	tok_close(cold);
	tok_close(warm);
}

/* One way of damaging a cache file. */
enum damage {
	DAMAGE_EMPTY, DAMAGE_SHORT, DAMAGE_HALF, DAMAGE_LONGER, DAMAGE_MAGIC,
	DAMAGE_HEADER, DAMAGE_T2S, DAMAGE_FORMAT, DAMAGE_OFFSET,
	DAMAGE_GARBAGE, DAMAGE_COUNT
};

static int damage_file(const char *path, int how)
{
	static const char garbage[] = "not a cache file at all, not at all.";
	uint32_t fmt = 999;
	uint64_t off = (uint64_t)1 << 40;
	long size = file_size(path);

	switch (how) {
	case DAMAGE_EMPTY:
		return truncate(path, 0);
	case DAMAGE_SHORT:
		return truncate(path, HDR_BYTES / 2);
	case DAMAGE_HALF:
		return truncate(path, size / 2);
	case DAMAGE_LONGER:
		return truncate(path, size + 1);
	case DAMAGE_MAGIC:
		return patch_file(path, 0, "X", 1);
	case DAMAGE_HEADER:
		return patch_file(path, HDR_NSLOTS_AT, "\x01", 1);
	case DAMAGE_T2S:
		return patch_file(path, size - 1000, "\x7f", 1);
	case DAMAGE_FORMAT:
		if (patch_file(path, HDR_FORMAT_AT, &fmt, sizeof(fmt)))
			return -1;
		return reseal_header(path);
	case DAMAGE_OFFSET:
		if (patch_file(path, HDR_TEXT_OFF_AT, &off, sizeof(off)))
			return -1;
		return reseal_header(path);
	default:
		if (truncate(path, 0))
			return -1;
		return patch_file(path, 0, garbage, sizeof(garbage));
	}
}

/*
 * A truncated, extended or corrupt cache file (or a forged header) is
 * detected and rebuilt; tok_open works and the tokens are the same.
 */
static void tokenize_cache_damaged(void)
{
	struct tok_opts o = { NULL, NULL, 0, 0, NULL };
	char dir[512], path[1024], id[256];
	struct tok *t;
	uint64_t h = 0;
	int how;

	snprintf(dir, sizeof(dir), "%s/cache-damaged", test_tmpdir);
	o.cache_dir = dir;
	t = open_timed(&o, NULL);
	if (!t)
		return;
	snprintf(id, sizeof(id), "%s", tok_identity(t));
	h = corpus_hash(t);
	tok_close(t);
	if (!cache_file(dir, path, sizeof(path))) {
		CHECK(0);
		return;
	}
	for (how = 0; how < DAMAGE_COUNT; how++) {
		CHECK_MSG(damage_file(path, how) == 0, "damage %d", how);
		t = open_timed(&o, NULL);
		if (!t)
			continue;
		CHECK_MSG(tok_cached(t) == 0, "damage %d not detected", how);
		CHECK_STR(tok_identity(t), id);
		CHECK_MSG(corpus_hash(t) == h, "damage %d", how);
		tok_close(t);
		/* and it was rewritten */
		t = open_timed(&o, NULL);
		CHECK_MSG(tok_cached(t) == 1, "damage %d not repaired", how);
		tok_close(t);
	}
}

/*
 * Damage the checksums do not cover (the table and the text, too big to
 * hash on every open) gives wrong segments at worst, never a crash or an
 * out-of-bounds read (ASan watches).
 */
static void tokenize_cache_damaged_body(void)
{
	struct tok_opts o = { NULL, NULL, 0, 0, NULL };
	char dir[512], path[1024], *junk;
	uint64_t slots_off = 0, nslots = 0;
	struct tok *t;
	size_t len;

	snprintf(dir, sizeof(dir), "%s/cache-damaged", test_tmpdir);
	o.cache_dir = dir;
	if (!cache_file(dir, path, sizeof(path)) ||
	    read_at(path, HDR_SLOTS_OFF_AT, &slots_off, 8) ||
	    read_at(path, HDR_NSLOTS_AT, &nslots, 8)) {
		CHECK(0);
		return;
	}
	len = (size_t)(slots_off - HDR_BYTES) + (size_t)nslots * 12;
	junk = cairn_malloc(len);
	if (!junk)
		return;
	memset(junk, 0xff, len); /* no empty slot, offsets past the end */
	CHECK(patch_file(path, HDR_BYTES, junk, len) == 0);
	cairn_free(junk);
	t = open_timed(&o, NULL);
	CHECK(tok_cached(t) == 1);
	/* every lookup misses: bigrams, as for text outside the dictionary */
	CHECK_STR(render_with(t, 0, "数据库 data", 14, 0),
		  "数据 +数 据库 +据 库 data");
	CHECK_STR(render_with(t, 0, "我們決定", 12, 0),
		  "我们 +我 们决 +们 决定 +决 定");
	tok_close(t);
	CHECK(unlink(path) == 0);
}

/*
 * A changed dictionary is not served from the cache; an unusable cache
 * directory is not an error.
 */
static void tokenize_cache_invalidation(void)
{
	struct tok_opts o = { NULL, NULL, 0, 0, NULL };
	char dict[512], dir[600], blocker[512], id[256];
	struct tok *t;

	snprintf(dict, sizeof(dict), "%s/cache-dict.txt", test_tmpdir);
	snprintf(dir, sizeof(dir), "%s/cache-inval", test_tmpdir);
	o.jieba_dict = dict;
	o.cache_dir = dir;
	CHECK(write_file(dict, "数据 100 n\n库 10 n\n") == 0);
	t = open_timed(&o, NULL);
	CHECK(t && !tok_cached(t));
	tok_close(t);
	t = open_timed(&o, NULL);
	CHECK(t && tok_cached(t));
	CHECK_STR(render_with(t, 0, "数据库", 9, 0), "数据 库");
	snprintf(id, sizeof(id), "%s", tok_identity(t));
	tok_close(t);
	CHECK(write_file(dict, "数据库 1000 n\n数据 100 n\n库 10 n\n") == 0);
	t = open_timed(&o, NULL);
	CHECK(t && !tok_cached(t));
	CHECK_STR(render_with(t, 0, "数据库", 9, 0), "数据 数据库");
	CHECK(strcmp(tok_identity(t), id) != 0);
	tok_close(t);
	t = open_timed(&o, NULL);
	CHECK(t && tok_cached(t));
	CHECK_STR(render_with(t, 0, "数据库", 9, 0), "数据 数据库");
	tok_close(t);
	/* a cache directory under a regular file cannot be created */
	snprintf(blocker, sizeof(blocker), "%s/cache-blocker", test_tmpdir);
	CHECK(write_file(blocker, "x") == 0);
	snprintf(dir, sizeof(dir), "%s/sub", blocker);
	t = open_timed(&o, NULL);
	CHECK(t && !tok_cached(t));
	CHECK_STR(render_with(t, 0, "数据库", 9, 0), "数据 数据库");
	tok_close(t);
}

/*
 * Processes racing to build one cache all get the same tokens, and leave
 * one complete cache file and no temporary files.
 */
static void tokenize_cache_race(void)
{
	struct tok_opts o = { NULL, NULL, 0, 0, NULL };
	char dir[512], path[1024];
	pid_t pids[CACHE_WRITERS];
	uint64_t h;
	struct tok *t;
	int i, status;

	snprintf(dir, sizeof(dir), "%s/cache-race", test_tmpdir);
	o.cache_dir = "";
	t = open_timed(&o, NULL);
	h = corpus_hash(t);
	tok_close(t);
	o.cache_dir = dir;
	fflush(NULL);
	for (i = 0; i < CACHE_WRITERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			t = open_timed(&o, NULL);
			_exit(t && corpus_hash(t) == h && !test_case_failed
				      ? 0
				      : 1);
		}
		CHECK(pids[i] > 0);
	}
	for (i = 0; i < CACHE_WRITERS; i++) {
		if (pids[i] <= 0)
			continue;
		CHECK(waitpid(pids[i], &status, 0) == pids[i]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	CHECK(cache_file(dir, path, sizeof(path)));
	t = open_timed(&o, NULL);
	CHECK(t && tok_cached(t));
	CHECK(corpus_hash(t) == h);
	tok_close(t);
}

/* ------------------------------------------------------------------ FTS5 */

/* Rowids matching q in t, as "1,2" ("" for none, "error" on failure). */
static const char *fts_rows(sqlite3 *db, const char *q)
{
	static char out[256];
	sqlite3_stmt *st = NULL;
	size_t len = 0;
	int rc;

	out[0] = '\0';
	if (sqlite3_prepare_v2(db,
			       "SELECT rowid FROM t WHERE t MATCH ?1 "
			       "ORDER BY rowid",
			       -1, &st, NULL) != SQLITE_OK)
		return "error";
	sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
	for (;;) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW || len >= sizeof(out) - ROWID_TEXT_MAX)
			break;
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%lld",
					len ? "," : "",
					sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? out : "error";
}

static sqlite3 *fts_db(const struct tok_opts *o)
{
	sqlite3 *db = NULL;
	char err[512];

	if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
		CHECK(0);
		sqlite3_close(db);
		return NULL;
	}
	CHECK_INT(fts_register(db, o, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(sqlite3_exec(db,
			       "CREATE VIRTUAL TABLE t USING fts5(title, body,"
			       " tokenize='cairn');"
			       "INSERT INTO t(rowid, title, body) VALUES"
			       " (1, 'Deploy notes', 'We deployed the"
			       " HTTPServer to production yesterday.'),"
			       " (2, '決定', '我們決定使用數據庫存儲記憶'),"
			       " (3, 'Misc', '今天天气不错');",
			       NULL, NULL, NULL),
		  SQLITE_OK);
	return db;
}

static void tokenize_fts5_end_to_end(void)
{
	sqlite3 *db = fts_db(NULL);
	sqlite3_stmt *st = NULL;
	struct tok *t;
	char err[512];

	if (!db)
		return;
	CHECK_STR(fts_rows(db, "数据库"), "2");
	CHECK_STR(fts_rows(db, "數據庫"), "2");
	CHECK_STR(fts_rows(db, "记忆"), "2");
	CHECK_STR(fts_rows(db, "数据"), "2");
	CHECK_STR(fts_rows(db, "deploying"), "1");
	CHECK_STR(fts_rows(db, "Deployment"), "1"); /* same stem */
	CHECK_STR(fts_rows(db, "deploys AND 天气"), "");
	CHECK_STR(fts_rows(db, "deploy OR 天气"), "1,3");
	CHECK_STR(fts_rows(db, "server"), "1");
	CHECK_STR(fts_rows(db, "httpserver"), "1");
	CHECK_STR(fts_rows(db, "\"HTTPServer to production\""), "1");
	CHECK_STR(fts_rows(db, "title:决定"), "2");
	/* the raw escape: already-stemmed tokens pass through unchanged */
	CHECK_STR(fts_rows(db, "\"\x01" "deploy\""), "1");
	CHECK_STR(fts_rows(db, "\"\x01" "deploying\""), "");
	/* highlight() offsets are in the original text */
	CHECK_INT(sqlite3_prepare_v2(db,
				     "SELECT highlight(t, 1, '[', ']') FROM t"
				     " WHERE t MATCH ?1",
				     -1, &st, NULL),
		  SQLITE_OK);
	sqlite3_bind_text(st, 1, "deploying", -1, SQLITE_STATIC);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0),
		  "We [deployed] the HTTPServer to production yesterday.");
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, "使用", -1, SQLITE_STATIC);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0),
		  "我們決定[使用]數據庫存儲記憶");
	sqlite3_finalize(st);
	/* invalid UTF-8 fails the statement */
	CHECK(sqlite3_exec(db,
			   "INSERT INTO t(title, body) VALUES ('x', "
			   "CAST(X'61FF62' AS TEXT))",
			   NULL, NULL, NULL) != SQLITE_OK);
	t = fts_tok(db, err, sizeof(err));
	CHECK(t != NULL);
	if (t)
		CHECK(strncmp(tok_identity(t), "cairn-tok/2 ", 12) == 0);
	CHECK(sqlite3_exec(db,
			   "CREATE VIRTUAL TABLE u USING fts5(x, "
			   "tokenize='cairn extra')",
			   NULL, NULL, NULL) != SQLITE_OK);
	sqlite3_close(db);
}

/* Segmentation is load-bearing: without it the sub-word query fails. */
static void tokenize_fts5_no_segment_control(void)
{
	struct tok_opts o = { NULL, NULL, 0, 1, NULL };
	sqlite3 *db = fts_db(&o);

	if (!db)
		return;
	CHECK_STR(fts_rows(db, "数据库"), "");
	CHECK_STR(fts_rows(db, "记忆"), "");
	/* the whole run still matches itself, and English is unaffected */
	CHECK_STR(fts_rows(db, "我们决定使用数据库存储记忆"), "2");
	CHECK_STR(fts_rows(db, "deploying"), "1");
	sqlite3_close(db);
}

static void tokenize_fts5_errors(void)
{
	struct tok_opts o = { "/nonexistent/cairn/dict.txt", NULL, 0, 0,
			      NULL };
	sqlite3 *db = NULL;
	char err[512];

	/* not registered */
	CHECK_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
	CHECK(fts_tok(db, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "not registered") != NULL);
	/* registration is lazy: a missing dictionary shows on first use */
	CHECK_INT(fts_register(db, &o, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(sqlite3_exec(db,
			       "CREATE VIRTUAL TABLE t USING fts5(body, "
			       "tokenize='cairn')",
			       NULL, NULL, NULL),
		  SQLITE_OK);
	CHECK(sqlite3_exec(db, "INSERT INTO t(body) VALUES ('hello')", NULL,
			   NULL, NULL) != SQLITE_OK);
	CHECK(fts_tok(db, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "python3-jieba") != NULL);
	sqlite3_close(db);
	CHECK_INT(fts_register(NULL, NULL, err, sizeof(err)), CAIRN_ERROR);
}

/* Run the tokenizer cases; the shared tokenizer is closed at the end. */
void unit_tokenize(void)
{
	char cache[512];

	snprintf(cache, sizeof(cache), "%s/cache", test_tmpdir);
	setenv("CAIRN_CACHE_DIR", cache, 1);
	RUN(tokenize_open_identity);
	RUN(tokenize_missing_dict);
	RUN(tokenize_bad_dicts);
	RUN(tokenize_custom_dict);
	RUN(tokenize_english_stemming);
	RUN(tokenize_case_and_nfkc);
	RUN(tokenize_identifiers);
	RUN(tokenize_numbers);
	RUN(tokenize_letter_digit);
	RUN(tokenize_chinese_jieba);
	RUN(tokenize_traditional);
	RUN(tokenize_oov_bigrams);
	RUN(tokenize_mixed);
	RUN(tokenize_invalid_utf8);
	RUN(tokenize_empty_and_args);
	RUN(tokenize_raw_escape);
	RUN(tokenize_callback_stops);
	RUN(tokenize_fuzz_invariants);
	RUN(tokenize_long_inputs);
	RUN(tokenize_alloc_failures);
	RUN(tokenize_cache_same_tokens);
	RUN(tokenize_cache_damaged);
	RUN(tokenize_cache_damaged_body);
	RUN(tokenize_cache_invalidation);
	RUN(tokenize_cache_race);
	RUN(tokenize_fts5_end_to_end);
	RUN(tokenize_fts5_no_segment_control);
	RUN(tokenize_fts5_errors);
	tok_close(shared_tok);
	shared_tok = NULL;
}
