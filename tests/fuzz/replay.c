/*
 * replay.c -- run a libFuzzer target over its corpus without libFuzzer
 * (STYLE.md 8, after SQLite's fuzzcheck), so that `make check` replays
 * every corpus under ASan + UBSan.
 *
 *   build/san/replay_json tests/fuzz/corpus/json [FILE|DIR...]
 *
 * Linked with one tests/fuzz/fuzz_<target>.c, which supplies
 * LLVMFuzzerTestOneInput (and optionally LLVMFuzzerInitialize). Each
 * argument is a corpus directory (every regular file in it, in name order)
 * or a single input file, e.g. a crash artifact from `make fuzz`.
 *
 * A crash is a failure: the sanitizers (built with -fno-sanitize-recover)
 * and the targets' own abort() end the process, after this program has
 * named the input on stderr; run-all then counts the part as failed
 * because no result line was printed. A missing or empty corpus is a
 * failure too: a replay that checks nothing must not look green. Leaks are
 * checked once at the end when LeakSanitizer is linked in.
 *
 * Ends with one line "fuzz-replay: N passed, N failed"; exit status 1 if
 * anything failed.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPLAY_MAX_INPUT ((size_t)16 << 20) /* larger inputs are a failure */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional hooks: weak, so that the replay links with or without them. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static const char *current; /* the input being run, for the crash note */
static int passed, failed;

/* Name the input that killed the process (async-signal-safe writes only). */
static void note_current(void)
{
	static const char pre[] = "fuzz-replay: crashed on input ";

	if (!current)
		return;
	if (write(2, pre, sizeof(pre) - 1) < 0 ||
	    write(2, current, strlen(current)) < 0 || write(2, "\n", 1) < 0)
		return;
}

/* A target's own abort() (ASan leaves SIGABRT alone; it reports and
 * exits on its own errors, calling note_current through the callback). */
static void on_abort(int sig)
{
	note_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int read_input(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, got;

	*out = NULL;
	*len = 0;
	if (!f)
		return -1;
	for (;;) {
		if (n == cap) {
			uint8_t *nb;

			if (cap >= REPLAY_MAX_INPUT)
				goto fail;
			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (!nb)
				goto fail;
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f))
		goto fail;
	fclose(f);
	/* exactly n bytes: no slack after the input for ASan to miss */
	*out = malloc(n ? n : 1);
	if (!*out) {
		free(buf);
		return -1;
	}
	if (n)
		memcpy(*out, buf, n);
	free(buf);
	*len = n;
	return 0;
fail:
	free(buf);
	fclose(f);
	return -1;
}

static void run_file(const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;

	if (read_input(path, &data, &len) != 0) {
		fprintf(stderr, "fuzz-replay: cannot read '%s'\n", path);
		failed++;
		return;
	}
	current = path;
	LLVMFuzzerTestOneInput(data, len);
	current = NULL;
	free(data);
	passed++;
}

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static void run_dir(const char *dir)
{
	struct dirent **names = NULL;
	struct stat st;
	char path[4096];
	int i, n, ran = 0;

	n = scandir(dir, &names, not_hidden, alphasort);
	if (n < 0) {
		fprintf(stderr, "fuzz-replay: cannot read corpus '%s'\n", dir);
		failed++;
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			run_file(path);
			ran++;
		}
		free(names[i]);
	}
	free(names);
	if (ran == 0) {
		fprintf(stderr, "fuzz-replay: corpus '%s' is empty\n", dir);
		failed++;
	}
}

int main(int argc, char **argv)
{
	struct stat st;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
		return 2;
	}
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(note_current);
	signal(SIGABRT, on_abort);
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			run_dir(argv[i]);
		} else if (stat(argv[i], &st) == 0) {
			run_file(argv[i]);
		} else {
			fprintf(stderr, "fuzz-replay: no such corpus '%s'\n",
				argv[i]);
			failed++;
		}
	}
	if (__lsan_do_recoverable_leak_check &&
	    __lsan_do_recoverable_leak_check() != 0) {
		fprintf(stderr, "fuzz-replay: memory leaked (see above)\n");
		failed++;
	}
	printf("fuzz-replay: %d passed, %d failed\n", passed, failed);
	/* before LeakSanitizer's exit-time check, which leaves by _exit() */
	fflush(stdout);
	return failed ? 1 : 0;
}
