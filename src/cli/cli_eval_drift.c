/*
 * cli_eval_drift.c -- `cairn eval --drift`: drift detection measured on a
 * scripted repository history (docs/DRIFT.md).
 *
 * A temporary Git repository gets N decision files (docs/adr/NNNN-*.md)
 * and N scripts (scripts/stepNN.sh); a store in it gets one decision per
 * file (its source path) and one procedure per script ("Run
 * scripts/stepNN.sh ..."), so every record remembers its file. Then a
 * fixed pseudo-random sequence (--seed) makes --commits commits, each
 * changing, deleting or renaming one file, and one commit that touches no
 * record's file. `cairn_drift_check` with git's history then has to flag
 * every record whose file moved on (changed, deleted, renamed) and none of
 * the others. Reported: the share flagged, the false flags (must be 0), the
 * renames told apart from deletions.
 *
 * Layer: top (the cairn command), on the public API; runs `git` (never in
 * recall or the hook).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "internal.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define DRIFT_MAX_FILES 400

static const char drift_help[] =
	"usage: cairn eval --drift [--json] [--files N] [--commits N] [--seed S]\n"
	"\n"
	"Measure drift detection on a scripted repository history: a temporary\n"
	"Git repository with N decision files and N scripts (default 16 each),\n"
	"a store with one decision per file and one procedure per script, then\n"
	"--commits commits (default 30) that change, delete or rename files\n"
	"chosen by a fixed pseudo-random sequence (--seed, default 11), and one\n"
	"that touches none of them. Reports the share of records whose file moved\n"
	"on that `cairn check` flags, the unchanged ones it flags wrongly (must be\n"
	"0) and the renames it tells apart from deletions. Needs git.\n";

/* run git -C dir ARGS (NULL-terminated); 0 when it exited 0 */
static int git(const char *dir, const char *const *args)
{
	const char *argv[16];
	size_t n = 0;
	int status = 0;
	pid_t pid;

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = dir;
	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR);

		if (dn >= 0) {
			dup2(dn, 0);
			dup2(dn, 1);
			dup2(dn, 2);
		}
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int put(const char *root, const char *rel, const char *text, int append)
{
	char p[4200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, append ? "a" : "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

static unsigned long lcg(unsigned long *s)
{
	*s = (*s * 1103515245UL + 12345UL) % 2147483648UL;
	return *s / 65536UL;
}

struct file {
	char path[64];
	char now[80];   /* where it is now ("" deleted) */
	int moved;      /* 0 same, 1 changed, 2 deleted, 3 renamed */
	char *id;       /* its record */
	int flagged;    /* cairn_drift_check listed it */
	int rename_ok;  /* flagged as renamed, to where it is now */
};

/* The options: -1 when the command goes on, else its exit code. */
static int drift_args(int argc, char **argv, long *nfiles, long *ncommits,
		      unsigned long *seed)
{
	static const struct option lo[] = { { "json", 0, 0, 'j' },
					    { "drift", 0, 0, 'd' },
					    { "files", 1, 0, 'f' },
					    { "commits", 1, 0, 'c' },
					    { "seed", 1, 0, 's' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	char *end;
	int c;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(drift_help);
		if (c == 'd') {
			continue;
		} else if (c == 'j') {
			cli_state.json = 1;
		} else if (c == 'f' || c == 'c') {
			long v = strtol(optarg, &end, 10);

			if (end == optarg || *end || v < 1 ||
			    v > (c == 'f' ? DRIFT_MAX_FILES / 2 : 1000))
				return cli_usage("eval", "--%s wants a number from 1 to %d",
						 c == 'f' ? "files" : "commits",
						 c == 'f' ? DRIFT_MAX_FILES / 2 : 1000);
			*(c == 'f' ? nfiles : ncommits) = v;
		} else if (c == 's') {
			*seed = strtoul(optarg, &end, 10);
			if (end == optarg || *end)
				return cli_usage("eval", "--seed wants a number");
		} else {
			return cli_usage("eval", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage("eval", "--drift takes no folder");
	return -1;
}

/*
 * The repository in dir: a decision file (even i) and a script (odd i)
 * for each pair of fv, in one first commit. -1 (said) on a failure.
 */
static int drift_repo(const char *dir, struct file *fv, size_t nf)
{
	const char *init[] = { "init", "-q", ".", NULL };
	const char *cfg1[] = { "config", "user.email", "eval@cairn.invalid", NULL };
	const char *cfg2[] = { "config", "user.name", "cairn eval", NULL };
	const char *add[] = { "add", "-A", NULL };
	const char *ci[] = { "commit", "-qm", "init", NULL };
	char p[4200], buf[256];
	size_t i;

	if (git(dir, init) || git(dir, cfg1) || git(dir, cfg2)) {
		cli_fail("eval --drift: git is needed (Debian: git)");
		return -1;
	}
	snprintf(p, sizeof(p), "%s/docs", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/docs/adr", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/scripts", dir);
	mkdir(p, 0700);
	for (i = 0; i < nf; i++) {
		struct file *f = &fv[i];
		size_t k = i / 2 + 1;

		if (i % 2 == 0) {
			snprintf(f->path, sizeof(f->path), "docs/adr/%04zu-choice.md", k);
			snprintf(buf, sizeof(buf), "# Choice %zu\n\nStatus: accepted\n\n"
				 "We use component %zu for part %zu.\n", k, k, k);
		} else {
			snprintf(f->path, sizeof(f->path), "scripts/step%02zu.sh", k);
			snprintf(buf, sizeof(buf), "#!/bin/sh\necho step %zu\n", k);
		}
		snprintf(f->now, sizeof(f->now), "%s", f->path);
		if (put(dir, f->path, buf, 0)) {
			cli_fail("eval --drift: cannot write %s", f->path);
			return -1;
		}
	}
	if (git(dir, add) || git(dir, ci)) {
		cli_fail("eval --drift: the first commit failed");
		return -1;
	}
	return 0;
}

/* One record per file: a decision from its source path, a procedure naming it. */
static int drift_records(cairn_db *db, struct file *fv, size_t nf)
{
	size_t i;
	int rc;

	for (i = 0; i < nf; i++) {
		struct file *f = &fv[i];
		cairn_record r;
		char title[64], body[160];

		memset(&r, 0, sizeof(r));
		r.confidence = -1;
		if (i % 2 == 0) {
			r.kind = (char *)"decision";
			r.src_path = f->path;
			snprintf(title, sizeof(title), "Choice %zu", i / 2 + 1);
			snprintf(body, sizeof(body), "We use component %zu for part %zu.",
				 i / 2 + 1, i / 2 + 1);
		} else {
			r.kind = (char *)"procedure";
			snprintf(title, sizeof(title), "Step %zu", i / 2 + 1);
			snprintf(body, sizeof(body), "Run %s to do step %zu.", f->path,
				 i / 2 + 1);
		}
		r.title = title;
		r.body = body;
		rc = cairn_record_write(db, &r, 0, &f->id);
		if (rc) {
			cli_db_fail(db, rc);
			return -1;
		}
	}
	return 0;
}

/*
 * One scripted step on file f (commit k): delete (act 0), rename (1, 2) or
 * change it, and keep f->moved and f->now in step. 1 when it was done.
 */
static int drift_step(const char *dir, struct file *f, unsigned long act, long k)
{
	char buf[256];
	int done = 0;

	if (act == 0) {
		const char *rm[] = { "rm", "-q", f->now, NULL };

		done = git(dir, rm) == 0;
		if (done) {
			f->moved = 2;
			f->now[0] = '\0';
		}
	} else if (act == 1 || act == 2) {
		char to[80];
		const char *mv[] = { "mv", f->now, to, NULL };
		/* the extension stays after -movedK */
		const char *dot = strrchr(f->path, '.');

		snprintf(to, sizeof(to), "%.*s-moved%ld%s",
			 (int)(dot - f->path), f->path, k, dot);
		done = git(dir, mv) == 0;
		if (done) {
			/* the same content elsewhere is a rename; a
			 * changed one's content is gone (deleted) */
			f->moved = f->moved == 0 || f->moved == 3 ? 3 : 1;
			snprintf(f->now, sizeof(f->now), "%s", to);
		}
	} else {
		const char *add[] = { "add", f->now, NULL };

		snprintf(buf, sizeof(buf), "change %ld\n", k);
		done = put(dir, f->now, buf, 1) == 0 && git(dir, add) == 0;
		if (done && f->moved != 3)
			f->moved = f->moved == 2 ? 2 : 1;
		if (done && f->moved == 3)
			f->moved = 1; /* renamed, then changed: content moved on */
	}
	return done;
}

/* ncommits scripted commits from the seed, then one that touches no record's file. */
static int drift_commits(const char *dir, struct file *fv, size_t nf,
			 long ncommits, unsigned long *seed)
{
	const char *add[] = { "add", "README.txt", NULL };
	const char *unrelated[] = { "commit", "-qm", "unrelated", NULL };

	for (long k = 0; k < ncommits; k++) {
		struct file *f = &fv[lcg(seed) % nf];
		unsigned long act = lcg(seed) % 8;
		char msg[32];
		const char *ci[] = { "commit", "-qm", msg, NULL };

		if (!*f->now)
			continue; /* deleted before */
		if (!drift_step(dir, f, act, k))
			continue;
		snprintf(msg, sizeof(msg), "commit %ld", k);
		if (git(dir, ci)) {
			cli_fail("eval --drift: a scripted commit failed");
			return -1;
		}
	}
	if (put(dir, "README.txt", "unrelated\n", 0) || git(dir, add) ||
	    git(dir, unrelated)) {
		cli_fail("eval --drift: the unrelated commit failed");
		return -1;
	}
	return 0;
}

/* Which files the check flagged, the counts, and the report. */
static void drift_report(struct file *fv, size_t nf, const cairn_drift *d,
			 size_t nd, long ncommits, unsigned long seed0)
{
	size_t moved = 0, flagged_moved = 0, unchanged = 0, wrong = 0;
	size_t renamed = 0, renames_told = 0, i;

	for (i = 0; i < nd; i++) {
		for (size_t j = 0; j < nf; j++) {
			if (!fv[j].id || strcmp(fv[j].id, d[i].record_id) != 0 ||
			    strcmp(fv[j].path, d[i].path) != 0)
				continue;
			fv[j].flagged = 1;
			if (strcmp(d[i].state, "renamed") == 0 && d[i].renamed_to &&
			    strcmp(d[i].renamed_to, fv[j].now) == 0)
				fv[j].rename_ok = 1;
		}
	}
	for (i = 0; i < nf; i++) {
		if (fv[i].moved) {
			moved++;
			flagged_moved += fv[i].flagged;
		} else {
			unchanged++;
			wrong += fv[i].flagged;
		}
		if (fv[i].moved == 3) {
			renamed++;
			renames_told += fv[i].rename_ok;
		}
	}
	if (cli_state.json)
		printf("{\"records\":%zu,\"commits\":%ld,\"seed\":%lu,\"moved\":%zu,"
		       "\"flagged\":%zu,\"flagged_share\":%.4f,\"unchanged\":%zu,"
		       "\"false_flags\":%zu,\"renamed\":%zu,\"renames_told\":%zu}\n",
		       nf, ncommits, seed0, moved, flagged_moved,
		       moved ? (double)flagged_moved / (double)moved : 1.0,
		       unchanged, wrong, renamed, renames_told);
	else
		printf("drift: %zu records, %ld scripted commits\n"
		       "  moved on   %zu records' files; flagged %zu (%.1f%%)\n"
		       "  unchanged  %zu; wrongly flagged %zu (must be 0)\n"
		       "  renamed    %zu; told apart from deletions %zu\n",
		       nf, ncommits, moved, flagged_moved,
		       moved ? 100.0 * (double)flagged_moved / (double)moved : 100.0,
		       unchanged, wrong, renamed, renames_told);
}

int cmd_eval_drift(int argc, char **argv)
{
	char tmpl[] = "/tmp/cairn-eval-drift-XXXXXX", store[4200];
	long nfiles = 16, ncommits = 30;
	unsigned long seed = 11, seed0;
	struct file *fv = NULL;
	cairn_open_opts o;
	cairn_db *db = NULL;
	cairn_drift *d = NULL;
	size_t nd = 0, nf, i;
	int rc, ret;

	ret = drift_args(argc, argv, &nfiles, &ncommits, &seed);
	if (ret >= 0)
		return ret;
	ret = EXIT_ERR;
	seed0 = seed;
	if (!mkdtemp(tmpl))
		return cli_fail("eval --drift: cannot make a temporary folder: %s",
				strerror(errno));
	nf = (size_t)nfiles * 2;
	fv = util_calloc(nf, sizeof(*fv));
	if (!fv) {
		cli_fail("out of memory");
		goto out;
	}
	if (drift_repo(tmpl, fv, nf))
		goto out;
	snprintf(store, sizeof(store), "%s/.cairn", tmpl);
	memset(&o, 0, sizeof(o));
	o.create = 1;
	o.no_global = 1;
	rc = cairn_db_open(store, &o, &db);
	if (rc) {
		cli_db_fail(db, rc);
		goto out;
	}
	if (drift_records(db, fv, nf) ||
	    drift_commits(tmpl, fv, nf, ncommits, &seed))
		goto out;
	rc = cairn_drift_check(db, NULL, CAIRN_DRIFT_HISTORY, &d, &nd);
	if (rc) {
		cli_db_fail(db, rc);
		goto out;
	}
	drift_report(fv, nf, d, nd, ncommits, seed0);
	ret = EXIT_OK;
out:
	cairn_drift_free(d, nd);
	for (i = 0; fv && i < nf; i++)
		cairn_free(fv[i].id);
	cairn_free(fv);
	cairn_db_close(db);
	{
		char cmd[4300];

		/* our own mkdtemp folder, no quotes in its name */
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
		if (system(cmd) != 0)
			fprintf(stderr, "cairn: could not remove %s\n", tmpl);
	}
	return ret;
}
