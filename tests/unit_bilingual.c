/*
 * unit_bilingual.c -- tests of the CC-CEDICT dictionary (src/text/bilingual.c).
 *
 * Uses only a small CC-CEDICT-format fixture written here (entries authored
 * for this test in the dictionary's style), never the real dictionary: that
 * one comes from npm through tests/tools/cedict-setup and is for
 * benchmarks and the recall evaluation only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bilingual.h"
#include "internal.h"
#include "test.h"

/*
 * The fixture, one line a literal (long ones split). Line numbers matter for
 * first_malformed: the three malformed lines are 13 (no brackets), 14 (no
 * gloss) and 15 (invalid UTF-8). The 加密 line ends in "\r\n".
 */
static const char fixture[] =
	"# CC-CEDICT test fixture for cairn\n"
	"#! version=1\n"
	"數據庫 数据库 [shu4 ju4 ku4] /(computing) database/\n"
	"部署 部署 [bu4 shu3] /to dispose/to deploy/deployment/\n"
	"文件 文件 [wen2 jian4] /document/file/CL:份[fen4]/\n"
	"通知 通知 [tong1 zhi1] /to notify; to inform/notice/"
	"notification/CL:個|个[ge4]/\n"
	"家具 家具 [jia1 ju4] /furniture/CL:件[jian4],套[tao4]/\n"
	"傢俱 家俱 [jia1 ju4] /variant of 家具[jia1 ju4]/\n"
	"加密 加密 [jia1 mi4] /to encrypt/encryption/\r\n"
	"張 张 [Zhang1] /surname Zhang/\n"
	"張 张 [zhang1] /to open up/to spread/sheet of paper/"
	"classifier for flat objects, sheet/\n"
	"\n"
	"this line is not an entry\n" /* line 13: the first malformed */
	"空 空 [kong1] //\n"
	"壞 坏 [huai4] /bad \xff\xfe/\n"
	"打包 打包 [da3 bao1] /to wrap; to pack/to put leftovers in a "
	"doggy bag for take-out/(computing) to package (i.e. create an "
	"archive file)/\n"
	"測量 测量 [ce4 liang2] /to measure accurately in great detail/"
	"to survey the land/to test/(Tw) to gauge one's skill/\n"
	"同步 同步 [tong2 bu4] /synchronous/to synchronize/synchronous; "
	"in step with sb's pace/\n"
	"中國 中国 [Zhong1 guo2] /China/\n"
	"的 的 [de5] /of; ~'s (possessive particle)/also pr. [di4]/\n"
	"鍵 键 [jian4] /see 鍵盤|键盘[jian4 pan2]/\n"
	"鍵盤 键盘 [jian4 pan2] /keyboard/\n"
	"違建 违建 [wei2 jian4] /abbr. for 違章建築|违章建筑, illegal "
	"construction/\n"
	"數庫 数库 [shu4 ku4] /abbr. for 數據庫|数据库[shu4 ju4 ku4]/\n";

#define FIXTURE_ENTRIES 18
#define FIXTURE_MALFORMED 3
#define FIXTURE_FIRST_BAD 13

/* Write len bytes to test_tmpdir/name; the path goes to path[size]. */
static void write_file(const char *name, const char *data, size_t len,
		       char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", test_tmpdir, name);
	f = fopen(path, "wb");
	CHECK_MSG(f != NULL, "cannot create %s", path);
	if (!f)
		return;
	CHECK(fwrite(data, 1, len, f) == len);
	CHECK(fclose(f) == 0);
}

static struct bil *open_fixture(void)
{
	char path[512], err[256] = "";
	struct bil *b = NULL;
	int rc;

	write_file("cedict.txt", fixture, sizeof(fixture) - 1, path,
		   sizeof(path));
	rc = bil_open(path, &b, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK && b, "bil_open: %d %s", rc, err);
	return b;
}

/* The words of one lookup, joined by single spaces. */
struct words {
	char buf[512]; /* "w1 w2 ..." */
	size_t len;    /* bytes used in buf */
	int calls;     /* emit calls */
};

static void collect(void *user, const char *w, size_t n)
{
	struct words *ws = user;

	ws->calls++;
	CHECK(n > 0 && strlen(w) == n); /* NUL-terminated, no empty word */
	if (ws->len + n + 2 > sizeof(ws->buf))
		return;
	if (ws->len)
		ws->buf[ws->len++] = ' ';
	memcpy(ws->buf + ws->len, w, n);
	ws->len += n;
	ws->buf[ws->len] = '\0';
}

/* Look zh up; check the return matches the emit calls; return the words. */
static const char *lookup(const struct bil *b, const char *zh,
			  struct words *ws)
{
	int n;

	memset(ws, 0, sizeof(*ws));
	n = bil_lookup(b, zh, strlen(zh), collect, ws);
	CHECK_MSG(n == ws->calls, "%s: returned %d, emitted %d", zh, n,
		  ws->calls);
	return ws->buf;
}

static void test_parse(void)
{
	double t0 = util_now_ms();
	struct bil *b = open_fixture();
	double t1 = util_now_ms();
	struct bil_stats st;

	if (!b)
		return;
	bil_stats(b, &st);
	CHECK_INT(st.entries, FIXTURE_ENTRIES);
	CHECK_INT(st.malformed, FIXTURE_MALFORMED);
	CHECK_INT(st.first_malformed, FIXTURE_FIRST_BAD);
	/* 17 distinct Simplified; 9 Traditional forms differ from theirs */
	CHECK_INT(st.keys, 17 + 9);
	/* the load time is bil_open's own: within the time open took here */
	CHECK_MSG(st.load_ms >= 0 && st.load_ms <= t1 - t0 + 0.001,
		  "load_ms %.3f outside [0, %.3f]", st.load_ms, t1 - t0);
	bil_close(b);
}

static void test_lookup(void)
{
	struct bil *b = open_fixture();
	struct words ws;

	if (!b)
		return;
	/* "(computing)" note dropped */
	CHECK_STR(lookup(b, "数据库", &ws), "database");
	/* "to" dropped, glosses in order */
	CHECK_STR(lookup(b, "部署", &ws), "dispose deploy deployment");
	/* CL: notes dropped, single or several classifiers */
	CHECK_STR(lookup(b, "文件", &ws), "document file");
	CHECK_STR(lookup(b, "家具", &ws), "furniture");
	/* ';' parts, CL: at the end */
	CHECK_STR(lookup(b, "通知", &ws),
		  "notify inform notice notification");
	/* the line ends in "\r\n": no '\r' in the last word */
	CHECK_STR(lookup(b, "加密", &ws), "encrypt encryption");
	/* a proper name keeps its gloss, lower-cased */
	CHECK_STR(lookup(b, "中国", &ws), "china");
	/* exact match only: no prefix or substring hits */
	CHECK_STR(lookup(b, "数据", &ws), "");
	CHECK_STR(lookup(b, "数据库表", &ws), "");
	CHECK_INT(ws.calls, 0);
	CHECK_INT(bil_lookup(b, "", 0, collect, &ws), 0);
	CHECK_INT(bil_lookup(b, NULL, 0, collect, &ws), 0);
	/* len, not NUL: "部署" is the first 6 bytes */
	memset(&ws, 0, sizeof(ws));
	CHECK_INT(bil_lookup(b, "部署XYZ", 6, collect, &ws), 3);
	/* malformed lines are not entries */
	CHECK_STR(lookup(b, "空", &ws), "");
	CHECK_STR(lookup(b, "坏", &ws), "");
	bil_close(b);
}

static void test_traditional(void)
{
	struct bil *b = open_fixture();
	struct words ws;

	if (!b)
		return;
	CHECK_STR(lookup(b, "數據庫", &ws), "database");
	/* 張 is only a Traditional headword: both of its entries */
	CHECK_STR(lookup(b, "張", &ws), "open up spread sheet paper");
	CHECK_STR(lookup(b, "张", &ws), "open up spread sheet paper");
	CHECK_STR(lookup(b, "中國", &ws), "china");
	bil_close(b);
}

static void test_filtering(void)
{
	struct bil *b = open_fixture();
	struct words ws;

	if (!b)
		return;
	/* "surname Zhang" and "classifier for ..." name no meaning */
	CHECK(strstr(lookup(b, "张", &ws), "zhang") == NULL);
	CHECK(strstr(ws.buf, "classifier") == NULL);
	CHECK(strstr(ws.buf, "flat") == NULL);
	/* a variant line yields the words of what it is a variant of */
	CHECK_STR(lookup(b, "家俱", &ws), "furniture");
	CHECK_STR(lookup(b, "傢俱", &ws), "furniture");
	/* so do a "see" line and a bare "abbr. for" line */
	CHECK_STR(lookup(b, "键", &ws), "keyboard");
	CHECK_STR(lookup(b, "数库", &ws), "database");
	/* an "abbr. for" line with English keeps the English */
	CHECK_STR(lookup(b, "违建", &ws), "illegal construction");
	/* "~'s", "(...)" and "also pr. [di4]" leave only stop words */
	CHECK_STR(lookup(b, "的", &ws), "");
	/* duplicates once; "sb's" and "with" are function words */
	CHECK_STR(lookup(b, "同步", &ws),
		  "synchronous synchronize step pace");
	bil_close(b);
}

static void test_order_and_cap(void)
{
	struct bil *b = open_fixture();
	struct words ws;

	if (!b)
		return;
	/*
	 * The "(computing)" gloss comes first, "(i.e. ...)" goes; then two
	 * head words of each part before the rest; "take-out" splits.
	 */
	CHECK_STR(lookup(b, "打包", &ws),
		  "package wrap pack put leftovers doggy bag take");
	CHECK_INT(ws.calls, BIL_MAX_WORDS);
	/*
	 * Head words of every sense before the tail of the first; "one's"
	 * is a function word, not "one".
	 */
	CHECK_STR(lookup(b, "测量", &ws),
		  "measure accurately survey land test gauge skill great");
	CHECK_INT(ws.calls, BIL_MAX_WORDS);
	bil_close(b);
}

static void test_identity(void)
{
	struct bil *b = open_fixture();
	char hex[65], want[64];

	if (!b)
		return;
	util_sha256_hex(fixture, sizeof(fixture) - 1, hex);
	snprintf(want, sizeof(want), "cedict=%.12s gloss=", hex);
	CHECK_MSG(strncmp(bil_identity(b), want, strlen(want)) == 0,
		  "identity \"%s\", want prefix \"%s\"", bil_identity(b), want);
	bil_close(b);
}

/*
 * Into buf: a good entry, then an entry line of exactly linelen bytes
 * followed by eol. Returns the bytes written.
 */
static size_t make_long(char *buf, size_t linelen, const char *eol)
{
	static const char first[] = "好 好 [hao3] /good/\n";
	static const char head[] = "長 长 [chang2] /";
	size_t i = 0, start;

	memcpy(buf, first, sizeof(first) - 1);
	i = sizeof(first) - 1;
	start = i;
	memcpy(buf + i, head, sizeof(head) - 1);
	i += sizeof(head) - 1;
	while (i - start < linelen - 1)
		buf[i++] = 'x';
	buf[i++] = '/';
	memcpy(buf + i, eol, strlen(eol));
	return i + strlen(eol);
}

/* bil_open(path) must fail with rc, leave *out NULL and name the path. */
static void expect_fail(const char *path, int rc, const char *in_err)
{
	char err[512] = "";
	struct bil *b = (struct bil *)&b; /* must be reset to NULL */
	int got = bil_open(path, &b, err, sizeof(err));

	CHECK_MSG(got == rc, "%s: rc %d, want %d (%s)", path, got, rc, err);
	CHECK(b == NULL);
	CHECK_MSG(strstr(err, path) != NULL, "err: %s", err);
	if (in_err)
		CHECK_MSG(strstr(err, in_err) != NULL, "err: %s", err);
	if (got == CAIRN_OK)
		bil_close(b);
}

static void test_errors(void)
{
	char path[512], err[256];
	char *big = NULL;
	struct bil *b = NULL;
	size_t n;
	int rc;

	/* missing file, a directory */
	snprintf(path, sizeof(path), "%s/no-such-cedict.txt", test_tmpdir);
	expect_fail(path, CAIRN_IO, "No such file");
	expect_fail(test_tmpdir, CAIRN_IO, "not a regular file");

	/* nothing but comments, or nothing at all: no entry */
	write_file("empty.txt", "# only a comment\n\n", 18, path,
		   sizeof(path));
	expect_fail(path, CAIRN_CORRUPT, "no dictionary entries");
	write_file("zero.txt", "", 0, path, sizeof(path));
	expect_fail(path, CAIRN_CORRUPT, NULL);

	/* over BIL_MAX_FILE (sparse: refused before anything is read) */
	write_file("huge.txt", "", 0, path, sizeof(path));
	CHECK(truncate(path, (off_t)BIL_MAX_FILE + 1) == 0);
	expect_fail(path, CAIRN_TOOBIG, "MiB");

	/* line 2 one byte over BIL_MAX_LINE */
	big = cairn_malloc(BIL_MAX_LINE + 64);
	CHECK(big != NULL);
	if (!big)
		return;
	n = make_long(big, BIL_MAX_LINE + 1, "\n");
	write_file("longline.txt", big, n, path, sizeof(path));
	expect_fail(path, CAIRN_TOOBIG, "line 2");

	/* exactly BIL_MAX_LINE bytes before "\r\n" is fine */
	n = make_long(big, BIL_MAX_LINE, "\r\n");
	write_file("maxline.txt", big, n, path, sizeof(path));
	rc = bil_open(path, &b, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "rc %d: %s", rc, err);
	bil_close(b);
	cairn_free(big);
}

/* Every allocation bil_open makes can fail cleanly (ASan sees leaks). */
static void test_alloc_failure(void)
{
	char path[512], err[256];
	struct bil *b = NULL;
	long k;
	int rc = CAIRN_NOMEM;

	write_file("cedict.txt", fixture, sizeof(fixture) - 1, path,
		   sizeof(path));
	for (k = 1; k < 20 && rc == CAIRN_NOMEM; k++) {
		util_fail_alloc_after(k);
		rc = bil_open(path, &b, err, sizeof(err));
		util_fail_alloc_after(0);
		if (rc == CAIRN_NOMEM)
			CHECK(b == NULL);
		else
			CHECK_MSG(rc == CAIRN_OK && b, "k=%ld rc=%d", k, rc);
		bil_close(b);
		b = NULL;
	}
	CHECK_MSG(k > 2, "no allocation failed (k=%ld)", k);
	CHECK_INT(rc, CAIRN_OK);
	bil_close(NULL);
}

void unit_bilingual(void)
{
	RUN(test_parse);
	RUN(test_lookup);
	RUN(test_traditional);
	RUN(test_filtering);
	RUN(test_order_and_cap);
	RUN(test_identity);
	RUN(test_errors);
	RUN(test_alloc_failure);
}
