/*
 * unit_drift.c -- which repository files a record refers to (drift_paths)
 * and Git's blob id of a file (drift_blob). The end-to-end behaviour
 * (check, recall's marker, verify, renames) is tests/contract/drift.t,
 * killed by the NO_DRIFT_NOTE mutant (tests/mutate).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "drift.h"
#include "internal.h"
#include "test.h"

struct got {
	char buf[2048];
	size_t n;
};

static void collect(const char *path, void *arg)
{
	struct got *g = arg;
	size_t len = strlen(g->buf);

	snprintf(g->buf + len, sizeof(g->buf) - len, "%s%s", g->n ? " " : "", path);
	g->n++;
}

static const char *paths(const char *root, const char *kind, const char *body,
			 const char *src, struct got *g)
{
	memset(g, 0, sizeof(*g));
	CHECK_INT(drift_paths(root, kind, "", body, src, collect, g), g->n);
	return g->buf;
}

static void tree(char *root)
{
	char p[1024];

	snprintf(root, 512, "%s/drift-tree", test_tmpdir);
	mkdir(root, 0700);
	test_write_file(root, "Makefile", "deploy:\n\ttrue\n", p);
	test_write_file(root, "package.json", "{}\n", p);
	test_write_file(root, "scripts/deploy.sh", "#!/bin/sh\n", p);
	test_write_file(root, "docs/adr/0001-x.md", "# X\n", p);
	test_write_file(root, ".git/config", "x\n", p);
	test_write_file(root, ".cairn/hook.log", "x\n", p);
	snprintf(p, sizeof(p), "%s/dir.sh", root);
	mkdir(p, 0700);
}

static void test_paths(void)
{
	char root[512];
	struct got g;

	tree(root);
	/* named paths that exist, a sentence's full stop dropped, once each */
	CHECK_STR(paths(root, "procedure",
			"Run ./scripts/deploy.sh, then check scripts/deploy.sh.",
			NULL, &g),
		  "scripts/deploy.sh");
	/* make implies the Makefile; npm implies package.json */
	CHECK_STR(paths(root, "procedure", "make deploy && npm run build", NULL,
			&g),
		  "Makefile package.json");
	/* the source path comes first */
	CHECK_STR(paths(root, "adr", "see scripts/deploy.sh", "docs/adr/0001-x.md",
			&g),
		  "docs/adr/0001-x.md scripts/deploy.sh");
	/* absent files, URLs, options, .git, .cairn, .., absolute paths and
	 * folders refer to nothing */
	CHECK_STR(paths(root, "fact",
			"scripts/missing.sh https://example.com/a/b.sh --file=x.sh "
			".git/config .cairn/hook.log ../drift-tree/Makefile "
			"/etc/passwd dir.sh $HOME/x.sh",
			NULL, &g),
		  "");
	/* prose with a slash that is no file */
	CHECK_STR(paths(root, "fact", "read/write access and and/or", NULL, &g),
		  "");
}

static void test_paths_bounded(void)
{
	char root[512], p[1024];
	struct sbuf sb = SBUF_INIT;
	struct got g;

	tree(root);
	for (int i = 0; i < 20; i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "f/%02d.sh", i);
		test_write_file(root, rel, "x\n", p);
		sbuf_addf(&sb, "%s f/%02d.sh ", rel, i);
	}
	paths(root, "procedure", sbuf_str(&sb), NULL, &g);
	CHECK_INT(g.n, DRIFT_MAX_REFS);
	sbuf_release(&sb);
	/* no root: nothing */
	memset(&g, 0, sizeof(g));
	CHECK_INT(drift_paths(NULL, "fact", "", "Makefile", NULL, collect, &g), 0);
}

static void test_blob(void)
{
	char root[512], p[1024], id[41];

	snprintf(root, sizeof(root), "%s/drift-blob", test_tmpdir);
	mkdir(root, 0700);
	/* `printf 'hello\n' | git hash-object --stdin` */
	test_write_file(root, "hello.txt", "hello\n", p);
	CHECK_INT(drift_blob(root, "hello.txt", id), 0);
	CHECK_STR(id, "ce013625030ba8dba906f756967f9e9ca394464a");
	/* the empty file: git's well-known empty blob */
	test_write_file(root, "empty", "", p);
	CHECK_INT(drift_blob(root, "empty", id), 0);
	CHECK_STR(id, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
	CHECK_INT(drift_blob(root, "absent", id), -1);
}

void unit_drift(void)
{
	RUN(test_paths);
	RUN(test_paths_bounded);
	RUN(test_blob);
}
