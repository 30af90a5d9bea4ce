/*
 * unit_model.c -- the model catalogue and the file side of `cairn model`
 * (src/model/model.c): names, the model directory's precedence, the installed
 * lookup, rm, the recommendation's thresholds, and the pull's checks that
 * need no server. The downloads themselves are
 * tested against a local server in tests/t_model.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cairn.h"
#include "model.h"
#include "test.h"

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Every name the issue asks for is there, with what list prints. */
static void test_catalogue(void)
{
	static const char *const want[] = {
		"bge-small-en-v1.5",   "bge-base-en-v1.5",  "bge-m3",
		"multilingual-e5-small", "bge-small-zh-v1.5", "bge-reranker-base",
		"bge-reranker-v2-m3",
	};
	const cairn_model_entry *cat;
	size_t n, i;

	cat = cairn_model_catalogue(&n);
	CHECK(n >= sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const cairn_model_entry *e = cairn_model_lookup(want[i]);

		CHECK_MSG(e != NULL, "%s missing", want[i]);
		if (!e)
			continue;
		CHECK(model_name_valid(e->name));
		CHECK(strlen(e->repo) > 0 && strchr(e->repo, '/'));
		CHECK(strlen(e->file) > 5 &&
		      strcmp(e->file + strlen(e->file) - 5, ".gguf") == 0);
		CHECK(e->size > 1000000);
		CHECK(strcmp(e->kind, "embedding") == 0 ||
		      strcmp(e->kind, "reranker") == 0);
		CHECK(strcmp(e->kind, "reranker") != 0 ||
		      strcmp(e->pooling, "rank") == 0);
	}
	for (i = 0; i < n; i++)
		CHECK(cairn_model_lookup(cat[i].name) == &cat[i]);
	CHECK(cairn_model_lookup("nope") == NULL);
	CHECK(cairn_model_lookup(NULL) == NULL);
	/* e5 needs both prefixes, bge English only the query's */
	CHECK_STR(cairn_model_lookup("multilingual-e5-small")->passage_instruction,
		  "passage: ");
	CHECK_STR(cairn_model_lookup("bge-small-en-v1.5")->passage_instruction, "");
}

static void test_names(void)
{
	char longname[MODEL_NAME_MAX + 2];

	CHECK(model_name_valid("bge-small-en-v1.5"));
	CHECK(model_name_valid("A_b.c-9"));
	CHECK(!model_name_valid(""));
	CHECK(!model_name_valid(NULL));
	CHECK(!model_name_valid(".hidden"));
	CHECK(!model_name_valid("-opt"));
	CHECK(!model_name_valid("../etc"));
	CHECK(!model_name_valid("a/b"));
	CHECK(!model_name_valid("sp ace"));
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK(!model_name_valid(longname));
}

/* CAIRN_MODEL_DIR, then CAIRN_CACHE_DIR/models, XDG, HOME. */
static void test_dir(void)
{
	char buf[4096], *saved[4];
	static const char *const vars[] = { "CAIRN_MODEL_DIR", "CAIRN_CACHE_DIR",
					    "XDG_CACHE_HOME", "HOME" };
	size_t i;

	for (i = 0; i < 4; i++) {
		const char *v = getenv(vars[i]);

		saved[i] = v ? strdup(v) : NULL;
	}
	setenv("CAIRN_MODEL_DIR", "/m", 1);
	setenv("CAIRN_CACHE_DIR", "/c", 1);
	setenv("XDG_CACHE_HOME", "/x", 1);
	setenv("HOME", "/h", 1);
	CHECK_INT(cairn_model_dir(buf, sizeof(buf)), CAIRN_OK);
	CHECK_STR(buf, "/m");
	unsetenv("CAIRN_MODEL_DIR");
	CHECK_INT(cairn_model_dir(buf, sizeof(buf)), CAIRN_OK);
	CHECK_STR(buf, "/c/models");
	setenv("CAIRN_CACHE_DIR", "", 1); /* no tokenizer cache: not no models */
	CHECK_INT(cairn_model_dir(buf, sizeof(buf)), CAIRN_OK);
	CHECK_STR(buf, "/x/cairn/models");
	setenv("XDG_CACHE_HOME", "relative", 1); /* XDG: absolute only */
	CHECK_INT(cairn_model_dir(buf, sizeof(buf)), CAIRN_OK);
	CHECK_STR(buf, "/h/.cache/cairn/models");
	CHECK_INT(cairn_model_dir(buf, 4), CAIRN_TOOBIG);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	CHECK_INT(cairn_model_dir(buf, sizeof(buf)), CAIRN_NOTFOUND);
	for (i = 0; i < 4; i++) {
		if (saved[i])
			setenv(vars[i], saved[i], 1);
		else
			unsetenv(vars[i]);
		free(saved[i]);
	}
}

/* installed and rm work on DIR/NAME.{gguf,json,gguf.part} only. */
static void test_installed_and_rm(void)
{
	char dir[1024], p[1200], path[1200], sha[65], err[256];
	static const char hex[] =
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

	snprintf(dir, sizeof(dir), "%s/models", test_tmpdir);
	mkdir(dir, 0700);
	CHECK_INT(cairn_model_installed("m1", dir, path, sizeof(path), sha),
		  CAIRN_NOTFOUND);
	CHECK_INT(cairn_model_installed("../x", dir, path, sizeof(path), sha),
		  CAIRN_INVALID);
	snprintf(p, sizeof(p), "%s/m1.gguf", dir);
	put(p, "GGUF");
	CHECK_INT(cairn_model_installed("m1", dir, path, sizeof(path), sha),
		  CAIRN_OK);
	CHECK_STR(path, p);
	CHECK_STR(sha, ""); /* no NAME.json */
	snprintf(p, sizeof(p), "%s/m1.json", dir);
	put(p, "{\"name\":\"m1\",\"sha256\":\"00112233445566778899aabbccddeeff"
	       "00112233445566778899aabbccddeeff\"}");
	CHECK_INT(cairn_model_installed("m1", dir, NULL, 0, sha), CAIRN_OK);
	CHECK_STR(sha, hex);
	CHECK_INT(cairn_model_installed("m1", dir, path, 8, NULL), CAIRN_TOOBIG);
	snprintf(p, sizeof(p), "%s/m1.gguf.part", dir);
	put(p, "GG");
	snprintf(p, sizeof(p), "%s/other.gguf", dir);
	put(p, "GGUF");
	CHECK_INT(cairn_model_remove("m1", dir, err, sizeof(err)), CAIRN_OK);
	CHECK_INT(cairn_model_installed("m1", dir, NULL, 0, NULL), CAIRN_NOTFOUND);
	snprintf(p, sizeof(p), "%s/m1.gguf.part", dir);
	CHECK(access(p, F_OK) != 0);
	CHECK_INT(cairn_model_installed("other", dir, NULL, 0, NULL), CAIRN_OK);
	CHECK_INT(cairn_model_remove("m1", dir, err, sizeof(err)),
		  CAIRN_NOTFOUND);
	CHECK(strstr(err, "is not installed") != NULL);
	CHECK_INT(cairn_model_remove("../other", dir, err, sizeof(err)),
		  CAIRN_INVALID);
}

/* The thresholds of docs/EMBEDDINGS.md's table. */
static void test_recommend(void)
{
	const char *rr = NULL, *why = NULL;

	CHECK_STR(cairn_model_recommend(0, "en_US.UTF-8", &rr, &why),
		  "bge-small-en-v1.5");
	CHECK_STR(rr, "bge-reranker-base");
	CHECK(why && *why);
	CHECK_STR(cairn_model_recommend(0, NULL, NULL, NULL),
		  "bge-small-en-v1.5");
	CHECK_STR(cairn_model_recommend(0, "zh_CN.UTF-8", NULL, &why),
		  "multilingual-e5-small");
	CHECK(strstr(why, "Chinese-speaking") != NULL);
	CHECK_STR(cairn_model_recommend(0.05, "C", NULL, NULL),
		  "multilingual-e5-small");
	CHECK_STR(cairn_model_recommend(0.69, "C", NULL, NULL),
		  "multilingual-e5-small");
	CHECK_STR(cairn_model_recommend(0.7, "C", NULL, NULL),
		  "bge-small-zh-v1.5");
	CHECK_STR(cairn_model_recommend(1, "zh_TW.UTF-8", NULL, NULL),
		  "bge-small-zh-v1.5");
}

/* What a pull refuses before it opens any connection. */
static void test_pull_refusals(void)
{
	cairn_pull_result r;
	cairn_pull_opts o;
	char dir[1024], p[1200];

	snprintf(dir, sizeof(dir), "%s/pulls", test_tmpdir);
	memset(&o, 0, sizeof(o));
	o.dir = dir;
	CHECK_INT(cairn_model_pull(NULL, &o, &r), CAIRN_INVALID);
	CHECK_INT(cairn_model_pull("no-such-model", &o, &r), CAIRN_INVALID);
	CHECK(strstr(r.error, "unknown model 'no-such-model'") != NULL);
	CHECK_INT(cairn_model_pull("ftp://example.invalid/a.gguf", &o, &r),
		  CAIRN_INVALID);
	o.sha256 = "abc";
	CHECK_INT(cairn_model_pull("bge-small-en-v1.5", &o, &r), CAIRN_INVALID);
	CHECK(strstr(r.error, "64 hex digits") != NULL);
	o.sha256 = NULL;
	o.name = "../escape";
	CHECK_INT(cairn_model_pull("http://127.0.0.1:1/x.gguf", &o, &r),
		  CAIRN_INVALID);
	o.name = NULL;
	CHECK_INT(cairn_model_pull("http://127.0.0.1:1/", &o, &r),
		  CAIRN_INVALID); /* no file name to call it by */
	CHECK(strstr(r.error, "give --name") != NULL);
	CHECK_INT(cairn_model_pull("bge-small-en-v1.5", &o, NULL), CAIRN_INVALID);
	/* none of that made the directory */
	snprintf(p, sizeof(p), "%s", dir);
	CHECK(access(p, F_OK) != 0);
}

/* A model already there is hashed, not fetched (no server exists here). */
static void test_pull_present(void)
{
	cairn_pull_result r;
	cairn_pull_opts o;
	char dir[1024], p[1200], sha[65], bad[65];

	snprintf(dir, sizeof(dir), "%s/present", test_tmpdir);
	mkdir(dir, 0700);
	snprintf(p, sizeof(p), "%s/bge-m3.gguf", dir);
	put(p, "GGUF and some bytes");
	CHECK_INT(model_sha256_file(p, sha), 0);
	memset(&o, 0, sizeof(o));
	o.dir = dir;
	setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1); /* would fail */
	CHECK_INT(cairn_model_pull("bge-m3", &o, &r), CAIRN_OK);
	CHECK(r.already == 1 && r.transfers == 0);
	CHECK_STR(r.sha256, sha);
	snprintf(p, sizeof(p), "%s/bge-m3.json", dir);
	CHECK(access(p, F_OK) == 0); /* recorded now */
	o.sha256 = sha;
	CHECK_INT(cairn_model_pull("bge-m3", &o, &r), CAIRN_OK);
	CHECK(r.pinned == 1);
	memcpy(bad, sha, 65);
	bad[0] = bad[0] == '0' ? '1' : '0';
	o.sha256 = bad;
	CHECK_INT(cairn_model_pull("bge-m3", &o, &r), CAIRN_MISMATCH);
	CHECK(strstr(r.error, "cairn model rm bge-m3") != NULL);
	unsetenv("HF_ENDPOINT");
	/* the SHA-256 of a known text */
	snprintf(p, sizeof(p), "%s/abc", dir);
	put(p, "abc");
	CHECK_INT(model_sha256_file(p, sha), 0);
	CHECK_STR(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* Runs every case of the model catalogue and files. */
void unit_model(void)
{
	RUN(test_catalogue);
	RUN(test_names);
	RUN(test_dir);
	RUN(test_installed_and_rm);
	RUN(test_recommend);
	RUN(test_pull_refusals);
	RUN(test_pull_present);
}
