/*
 * unit_termstat.c -- the file of document counts (termstat.c) and recall's
 * use of it: counts come back only under the key they were written under,
 * a torn line is skipped, an older snapshot does not overwrite a newer
 * file; recall with the file gives the same scores as without, every count
 * in it equals fts5vocab's, a write starts it again, a caller's
 * transaction neither reads nor writes it, and a count planted under the
 * right key changes the scores (the file is really read: the NO_TERMSTAT
 * mutant of tests/mutate fails test_recall_uses_file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cairn.h"
#include "internal.h"
#include "store.h"
#include "termstat.h"
#include "test.h"

static char *slurp(const char *path)
{
	char *s = NULL;
	size_t len = 0;

	if (util_read_file(path, 1 << 20, &s, &len, NULL, 0) != CAIRN_OK)
		return NULL;
	return s;
}

static void test_file(void)
{
	char path[1024];
	char *text[3] = { (char *)"deploy", (char *)"stage", (char *)"a\nb" };
	size_t len[3] = { 6, 5, 3 };
	long long df[3] = { 7, 3, 1 }, got[3];
	unsigned char put[3] = { 1, 1, 1 };
	struct termstat_key k = { 5, 100, 1, 2 }, k2 = k, old = k;
	char *s;

	test_write_file(test_tmpdir, "ts-file", "", path);
	got[0] = got[1] = got[2] = -1;
	CHECK_INT((int)termstat_get(path, &k, 3, text, len, got), 0);
	termstat_put(path, &k, 3, text, len, df, put);
	CHECK_INT((int)termstat_get(path, &k, 3, text, len, got), 2);
	CHECK(got[0] == 7 && got[1] == 3 && got[2] == -1); /* no newline terms */
	/* another key: nothing */
	k2.revision = 6;
	got[0] = got[1] = -1;
	CHECK_INT((int)termstat_get(path, &k2, 2, text, len, got), 0);
	k2 = k;
	k2.ndocs = 101;
	CHECK_INT((int)termstat_get(path, &k2, 2, text, len, got), 0);
	k2 = k;
	k2.ino = 3;
	CHECK_INT((int)termstat_get(path, &k2, 2, text, len, got), 0);
	/* an older snapshot leaves the newer file alone */
	old.revision = 4;
	df[0] = 99;
	termstat_put(path, &old, 1, text, len, df, put);
	got[0] = -1;
	CHECK_INT((int)termstat_get(path, &k, 1, text, len, got), 1);
	CHECK(got[0] == 7);
	/* a newer one starts it again */
	k2 = k;
	k2.revision = 6;
	termstat_put(path, &k2, 1, text, len, df, put);
	got[0] = got[1] = -1;
	CHECK_INT((int)termstat_get(path, &k, 2, text, len, got), 0);
	CHECK_INT((int)termstat_get(path, &k2, 2, text, len, got), 1);
	CHECK(got[0] == 99 && got[1] == -1);
	/* torn and malformed lines are skipped, the rest still read */
	s = slurp(path);
	CHECK(s != NULL && strncmp(s, "cairnTS1 6 100 1 2\n", 19) == 0);
	free(s);
	test_write_file(test_tmpdir, "ts-file",
			"cairnTS1 6 100 1 2\nx stage\n-1 stage\n12 deploy\n4 sta",
			path);
	got[0] = got[1] = -1;
	CHECK_INT((int)termstat_get(path, &k2, 2, text, len, got), 1);
	CHECK(got[0] == 12 && got[1] == -1);
	/* not a header: not read, and started again by the next writer */
	test_write_file(test_tmpdir, "ts-file", "12 deploy\n", path);
	got[0] = -1;
	CHECK_INT((int)termstat_get(path, &k2, 1, text, len, got), 0);
	df[1] = 3;
	termstat_put(path, &k2, 2, text, len, df, put);
	got[0] = got[1] = -1;
	CHECK_INT((int)termstat_get(path, &k2, 2, text, len, got), 2);
	remove(path);
}

static void terms_path(const char *root, char *path, size_t size)
{
	snprintf(path, size, "%s/.cairn/cairn.db" TERMSTAT_SUFFIX, root);
}

/* Scores of a recall, one line per hit, into buf. */
static void scores(cairn_db *db, const char *q, char *buf, size_t size)
{
	cairn_result *res = NULL;
	size_t i, off = 0;

	buf[0] = '\0';
	CHECK_INT(cairn_recall(db, q, NULL, &res), CAIRN_OK);
	for (i = 0; res && i < res->n && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s %.17g %.17g\n",
					res->hits[i].rec->id, res->hits[i].bm25,
					res->hits[i].relevance);
	cairn_result_free(res);
}

/* Every count in the file equals fts5vocab's; returns how many lines. */
static int file_matches_vocab(cairn_db *db, const char *path)
{
	char *s = slurp(path), *p, *nl;
	sqlite3_stmt *st = NULL;
	int n = 0;

	CHECK(s != NULL);
	if (!s)
		return 0;
	CHECK_INT(sqlite3_prepare_v2(db->sql,
				     "SELECT doc FROM records_vocab WHERE term = ?1",
				     -1, &st, NULL),
		  SQLITE_OK);
	p = strchr(s, '\n');
	while (p && (nl = strchr(++p, '\n')) != NULL) {
		char *sp = strchr(p, ' ');
		long long want = 0;

		CHECK(sp && sp < nl);
		if (!sp || sp > nl)
			break;
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, sp + 1, (int)(nl - sp - 1),
				  SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW)
			want = sqlite3_column_int64(st, 0);
		CHECK_MSG(atoll(p) == want, "%.*s: file %lld, vocab %lld",
			  (int)(nl - p), p, atoll(p), want);
		n++;
		p = nl;
	}
	sqlite3_finalize(st);
	free(s);
	return n;
}

static void fill(cairn_db *db)
{
	char *id;

	id = test_write_record(db, "fact", "accepted", "human", NULL,
			       "Staging deploys",
			       "Deploy to staging with make deploy-staging.");
	cairn_free(id);
	id = test_write_record(db, "fact", "accepted", "human", NULL,
			       "Production deploys",
			       "Deploy to production on Tuesdays only.");
	cairn_free(id);
	id = test_write_record(db, "note", "accepted", "human", NULL,
			       "Lunch", "The team eats lunch at noon.");
	cairn_free(id);
}

static void test_recall_uses_file(void)
{
	char root[512], path[1100], a[2048], b[2048], c[2048];
	cairn_db *db = test_store("termstat", root, sizeof(root));
	char *s, *id;
	struct stat st0, st1;

	if (!db)
		return;
	fill(db);
	terms_path(root, path, sizeof(path));
	remove(path);
	scores(db, "deploy staging production", a, sizeof(a));
	CHECK(a[0] != '\0');
	CHECK_INT(file_matches_vocab(db, path), 3);
	scores(db, "deploy staging production", b, sizeof(b));
	CHECK_MSG(strcmp(a, b) == 0, "with the file:\n%s\nwithout:\n%s", b, a);

	/* plant a count under the right key: the scores follow it */
	s = slurp(path);
	CHECK(s != NULL);
	if (s) {
		char *nl = strchr(s, '\n'), planted[1200];

		if (nl) {
			nl[1] = '\0';
			snprintf(planted, sizeof(planted),
				 "%s3 deploy\n3 stage\n3 product\n", s);
			test_write_file(root, ".cairn/cairn.db" TERMSTAT_SUFFIX,
					planted, path);
		}
		free(s);
	}
	scores(db, "deploy staging production", c, sizeof(c));
	CHECK_MSG(strcmp(a, c) != 0, "a planted count changed nothing:\n%s", c);

	/* a write moves the revision: counted again, the plant is gone */
	id = test_write_record(db, "note", "accepted", "human", NULL,
			       "Staging", "Staging is rebuilt nightly.");
	cairn_free(id);
	scores(db, "deploy staging production", c, sizeof(c));
	CHECK_INT(file_matches_vocab(db, path), 3);
	s = slurp(path);
	CHECK(s && !strstr(s, "\n3 deploy\n"));
	free(s);

	/* inside a caller's transaction: not read, not written */
	CHECK(stat(path, &st0) == 0);
	CHECK_INT(cairn_begin(db), CAIRN_OK);
	id = test_write_record(db, "note", "accepted", "human", NULL,
			       "Deploy freeze", "No deploy on Fridays.");
	cairn_free(id);
	scores(db, "deploy friday", c, sizeof(c));
	CHECK(strstr(c, "\n") != NULL);
	CHECK_INT(cairn_commit(db), CAIRN_OK);
	CHECK(stat(path, &st1) == 0 && st1.st_size == st0.st_size);
	cairn_db_close(db);
}

static void test_lengths_file(void)
{
	char path[1024];
	uint32_t len[4] = { 7, TERMSTAT_NO_ROW, 0, 123456 };
	struct termstat_key k = { 5, 3, 1, 2 }, k2 = k;
	struct termstat_lengths l;
	struct stat st;

	test_write_file(test_tmpdir, "ts-lengths", "", path);
	CHECK_INT(termstat_lengths_open(path, &k, &l), -1); /* empty */
	CHECK_INT(termstat_lengths_write(path, &k, len, 4), 0);
	CHECK_INT(termstat_lengths_open(path, &k, &l), 0);
	CHECK(l.n == 4 && l.len && memcmp(l.len, len, sizeof(len)) == 0);
	termstat_lengths_close(&l);
	termstat_lengths_close(&l); /* twice: harmless */
	k2.revision = 6;
	CHECK_INT(termstat_lengths_open(path, &k2, &l), -1);
	k2 = k;
	k2.ino = 9;
	CHECK_INT(termstat_lengths_open(path, &k2, &l), -1);
	/* cut short: refused, not read past its end */
	CHECK(stat(path, &st) == 0);
	CHECK_INT(truncate(path, st.st_size - 1), 0);
	CHECK_INT(termstat_lengths_open(path, &k, &l), -1);
	remove(path);
}

/* A key as recall makes it for the main schema of db in root. */
static void key_of(cairn_db *db, const char *root, struct termstat_key *k)
{
	char dbf[1100];
	sqlite3_stmt *st = NULL;
	struct stat fs;

	memset(k, 0, sizeof(*k));
	CHECK_INT(sqlite3_prepare_v2(db->sql,
				     "SELECT (SELECT CAST(v AS INTEGER) FROM meta "
				     "WHERE k = 'records.revision'), "
				     "(SELECT count(*) FROM records)",
				     -1, &st, NULL),
		  SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW) {
		k->revision = sqlite3_column_int64(st, 0);
		k->ndocs = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	snprintf(dbf, sizeof(dbf), "%s/.cairn/cairn.db", root);
	CHECK(stat(dbf, &fs) == 0);
	k->dev = (uint64_t)fs.st_dev;
	k->ino = (uint64_t)fs.st_ino;
}

/*
 * Recall with the lengths file gives FTS5's own lengths: the same scores
 * as inside a batch (where recall uses no file and asks FTS5 row by row);
 * lengths planted under the right key change the scores (the file is
 * read: the NO_LENGTHS mutant fails here); a write makes a new one.
 */
static void test_recall_lengths(void)
{
	char root[512], path[1100], a[2048], b[2048];
	cairn_db *db = test_store("termstat-len", root, sizeof(root));
	struct termstat_key k;
	uint32_t *plant = NULL;
	sqlite3_stmt *st = NULL;
	sqlite3_int64 max = -1, i;
	struct stat s0;
	char *id;

	if (!db)
		return;
	fill(db);
	id = test_write_record(db, "fact", "accepted", "human", NULL,
			       "Deploy windows",
			       "Deploy to production only between ten and four, "
			       "never on a Friday, never during the freeze, and "
			       "always with a second person watching the deploy.");
	cairn_free(id);
	snprintf(path, sizeof(path), "%s/.cairn/cairn.db" TERMSTAT_LEN_SUFFIX,
		 root);
	scores(db, "deploy production staging", a, sizeof(a));
	CHECK(stat(path, &s0) == 0);
	CHECK_INT(cairn_begin(db), CAIRN_OK);
	scores(db, "deploy production staging", b, sizeof(b));
	CHECK_INT(cairn_commit(db), CAIRN_OK);
	CHECK_MSG(strcmp(a, b) == 0, "with lengths:\n%s\nFTS5's:\n%s", a, b);

	/* every row one token long, under the right key */
	key_of(db, root, &k);
	CHECK_INT(sqlite3_prepare_v2(db->sql,
				     "SELECT max(id) FROM records_fts_docsize",
				     -1, &st, NULL),
		  SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	CHECK(max > 0);
	plant = calloc((size_t)max + 1, sizeof(*plant));
	CHECK(plant != NULL);
	if (plant) {
		for (i = 0; i <= max; i++)
			plant[i] = 1;
		CHECK_INT(termstat_lengths_write(path, &k, plant,
						 (size_t)max + 1),
			  0);
		free(plant);
	}
	scores(db, "deploy production staging", b, sizeof(b));
	CHECK_MSG(strcmp(a, b) != 0, "planted lengths changed nothing:\n%s", b);

	/* a write: a new key, lengths read from FTS5 again -- the same
	 * scores as FTS5's own inside a batch */
	id = test_write_record(db, "note", "accepted", "human", NULL, "Lunch",
			       "Lunch is at noon.");
	cairn_free(id);
	scores(db, "deploy production staging", a, sizeof(a));
	CHECK_INT(cairn_begin(db), CAIRN_OK);
	scores(db, "deploy production staging", b, sizeof(b));
	CHECK_INT(cairn_commit(db), CAIRN_OK);
	CHECK_MSG(strcmp(a, b) == 0, "after a write:\n%s\nFTS5's:\n%s", a, b);
	key_of(db, root, &k);
	{
		struct termstat_lengths l;

		CHECK_INT(termstat_lengths_open(path, &k, &l), 0);
		termstat_lengths_close(&l);
	}
	cairn_db_close(db);
}

void unit_termstat(void)
{
	RUN(test_file);
	RUN(test_recall_uses_file);
	RUN(test_lengths_file);
	RUN(test_recall_lengths);
}
