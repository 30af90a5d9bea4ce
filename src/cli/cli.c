/*
 * cli.c -- the `cairn` command: argument parsing, human and JSON output.
 *
 * Layer: top. Talks to the library through cairn.h and the module headers.
 *
 * Exit codes (documented in --help and cairn(1)): 0 ok, 1 error, 2 usage.
 * Errors go to stderr as one line "cairn: <message>"; results to stdout.
 *
 * Must never: print a secret it refused, or touch a store other than the
 * one found for the current directory (or named by -C / CAIRN_DIR).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cairn.h"
#include "cli.h"
#include "internal.h"
#include "json.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_USAGE 2
#define CLI_MAX_STDIN ((size_t)16 << 20) /* 16 MiB read from stdin */

struct cli cli_state;

/* ----------------------------------------------------------------- helpers */

/*
 * What getopt found wrong with the last option (cli_getopt; getopt's own
 * message is off), said by the next cli_usage in place of its generic
 * "unknown option": one message, naming the option.
 */
static char getopt_msg[160];

/*
 * The message: "cairn: " and the text on stderr, controls in it made
 * visible (a message may quote stored text or an argument), and help (a
 * pointer to --help) on a line of its own. Under --json one JSON object
 * on stdout instead, {"error": TEXT, "code": EXIT STATUS}, where a
 * program reading the command's JSON looks.
 */
static int fail_message(int code, const char *help, const char *fmt,
			va_list ap)
{
	struct sbuf msg = SBUF_INIT, out = SBUF_INIT;

	sbuf_vaddf(&msg, fmt, ap);
	if (cli_state.json) {
		sbuf_adds(&out, "{\"error\":");
		json_add_str(&out, sbuf_str(&msg), msg.len);
		sbuf_addf(&out, ",\"code\":%d}", code);
		fflush(stdout);
		if (!out.err)
			printf("%s\n", sbuf_str(&out));
		fflush(stdout);
	} else {
		util_add_escaped(&out, sbuf_str(&msg), msg.len,
				 UTIL_ESC_KEEP_NL);
		fputs("cairn: ", stderr);
		fputs(sbuf_str(&out), stderr);
		fputc('\n', stderr);
		if (help)
			fprintf(stderr, "%s\n", help);
	}
	sbuf_release(&msg);
	sbuf_release(&out);
	return code;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fail_message(EXIT_ERR, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

static int usage_message(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_message(const char *cmd, const char *fmt, ...)
{
	char help[96];
	va_list ap;
	int rc;

	snprintf(help, sizeof(help), "see 'cairn %s%s--help'", cmd ? cmd : "",
		 cmd ? " " : "");
	va_start(ap, fmt);
	rc = fail_message(EXIT_USAGE, help, fmt, ap);
	va_end(ap);
	return rc;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	char help[96];
	va_list ap;
	int rc;

	/* getopt's finding names the option ("unknown option '--bogus'",
	 * "option '--kind' needs a value") */
	if (getopt_msg[0] && strcmp(fmt, "unknown option") == 0) {
		rc = usage_message(cmd, "%s", getopt_msg);
		getopt_msg[0] = '\0';
		return rc;
	}
	snprintf(help, sizeof(help), "see 'cairn %s%s--help'", cmd ? cmd : "",
		 cmd ? " " : "");
	va_start(ap, fmt);
	rc = fail_message(EXIT_USAGE, help, fmt, ap);
	va_end(ap);
	return rc;
}

/* ------------------------------------------------------- terminal output */

/*
 * Standard output of the human-facing commands passes through this
 * filter: a stored ESC, OSC, BEL, CR, backspace or C1
 * control reaches the terminal as "\u001b" and the like, never as a
 * command to it (a title that clears the screen, rewrites a line, or sets
 * the window title). Newline and tab pass. Stored text stays as written;
 * --json output stays valid JSON with the same values (the JSON writer
 * escapes C0 itself, and a DEL or C1 control inside a string becomes its
 * JSON escape). Not for `cairn mcp` and `cairn hook`, whose output is a
 * protocol (the hook block makes its controls visible itself).
 */
struct tty_filter {
	int fd;              /* where the bytes go */
	unsigned char carry; /* a lead byte 0xC2 held back (the next write ends the sequence) */
	int has_carry;
};

static ssize_t tty_write(void *cookie, const char *buf, size_t size)
{
	struct tty_filter *tf = cookie;
	struct sbuf in = SBUF_INIT, out = SBUF_INIT;
	size_t n = size;
	int rc;

	if (tf->has_carry)
		sbuf_addc(&in, (char)tf->carry);
	sbuf_add(&in, buf, size);
	tf->has_carry = 0;
	n = in.len;
	if (n > 0 && (unsigned char)sbuf_str(&in)[n - 1] == 0xC2) {
		tf->carry = 0xC2; /* a C1 control may follow */
		tf->has_carry = 1;
		n--;
	}
	util_add_escaped(&out, sbuf_str(&in), n, UTIL_ESC_KEEP_NL);
	rc = in.err || out.err ? -1
			       : util_write_all(tf->fd, sbuf_str(&out), out.len);
	sbuf_release(&in);
	sbuf_release(&out);
	return rc ? -1 : (ssize_t)size;
}

static int tty_close(void *cookie)
{
	struct tty_filter *tf = cookie;

	if (tf->has_carry)
		(void)util_write_all(tf->fd, &tf->carry, 1);
	tf->has_carry = 0;
	return 0;
}

static struct tty_filter tty_out = { STDOUT_FILENO, 0, 0 };

/* Put standard output behind the filter; on failure it stays as it is. */
static void tty_filter_stdout(void)
{
	static const cookie_io_functions_t io = { NULL, tty_write, NULL,
						  tty_close };
	FILE *f = fopencookie(&tty_out, "w", io);

	if (!f)
		return;
	setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, 0);
	fflush(stdout);
	stdout = f;
}

int cli_db_fail(cairn_db *db, int rc)
{
	(void)rc;
	return cli_fail("%s", cairn_errmsg(db));
}

/* Print help text and return 0 (for `--help`). */
int cli_help(const char *text)
{
	fputs(text, stdout);
	return EXIT_OK;
}

int cli_open(cairn_db **db, int create)
{
	cairn_open_opts o;
	char *dir = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	o.create = create;
	*db = NULL;
	rc = cairn_workspace_find(NULL, &dir);
	if (rc == CAIRN_NOTFOUND)
		return cli_fail("not in a cairn workspace (or any parent "
				"directory): run 'cairn init' first");
	if (rc)
		return cli_fail("cannot find the workspace: %s",
				cairn_errstr(rc));
	rc = cairn_db_open(dir, &o, db);
	cairn_free(dir);
	if (rc) {
		cli_fail("%s", cairn_errmsg(*db));
		cairn_db_close(*db);
		*db = NULL;
		return EXIT_ERR;
	}
	return EXIT_OK;
}

char *cli_read_stdin(void)
{
	struct sbuf sb = SBUF_INIT;
	char buf[65536];
	const char *nul;
	size_t n;

	/* a record's text: a NUL would end it there, so it is refused */
	sbuf_init(&sb, CLI_MAX_STDIN);
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		sbuf_add(&sb, buf, n);
	if (sb.err || ferror(stdin)) {
		cli_fail("standard input is too large (over %zu bytes) or "
			 "unreadable",
			 (size_t)CLI_MAX_STDIN);
		sbuf_release(&sb);
		return NULL;
	}
	nul = sb.len ? memchr(sb.buf, '\0', sb.len) : NULL;
	if (nul) {
		cli_fail("standard input holds a NUL byte at byte %zu: a "
			 "record's text cannot (nothing was written)",
			 (size_t)(nul - sb.buf));
		sbuf_release(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

char *cli_read_stdin_max(size_t limit)
{
	struct sbuf sb = SBUF_INIT;
	char buf[65536];
	size_t n;

	sbuf_init(&sb, limit);
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		sbuf_add(&sb, buf, n);
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

void cli_add_csv(struct sbuf *sb, const char *s)
{
	if (sb->len)
		sbuf_addc(sb, ',');
	sbuf_adds(sb, s);
}

void cli_print_json(struct sbuf *sb)
{
	if (sb->err) {
		cli_fail("cannot format output: %s", cairn_errstr(sb->err));
		return;
	}
	fwrite(sb->buf ? sb->buf : "", 1, sb->len, stdout);
	fputc('\n', stdout);
}

/* ------------------------------------------------------------ record output */

void cli_record_json(struct sbuf *sb, const cairn_record *r, int with_body)
{
	sbuf_adds(sb, "{\"id\":");
	json_add_strz(sb, r->id);
	sbuf_adds(sb, ",\"kind\":");
	json_add_strz(sb, r->kind);
	sbuf_adds(sb, ",\"key\":");
	json_add_strz(sb, r->key);
	sbuf_adds(sb, ",\"scope\":");
	json_add_strz(sb, r->scope);
	sbuf_adds(sb, ",\"title\":");
	json_add_strz(sb, r->title);
	if (with_body) {
		sbuf_adds(sb, ",\"body\":");
		json_add_strz(sb, r->body);
	}
	sbuf_adds(sb, ",\"status\":");
	json_add_strz(sb, r->status);
	sbuf_adds(sb, ",\"confidence\":");
	json_add_num(sb, r->confidence);
	sbuf_adds(sb, ",\"proof\":");
	json_add_strz(sb, r->proof);
	sbuf_adds(sb, ",\"origin\":");
	json_add_strz(sb, r->origin);
	sbuf_adds(sb, ",\"source\":");
	json_add_source(sb, r);
	sbuf_adds(sb, ",\"time\":");
	json_add_strz(sb, r->time);
	sbuf_adds(sb, ",\"created\":");
	json_add_strz(sb, r->created);
	sbuf_adds(sb, ",\"updated\":");
	json_add_strz(sb, r->updated);
	sbuf_adds(sb, ",\"last_seen\":");
	json_add_strz(sb, r->last_seen);
	sbuf_adds(sb, ",\"supersedes\":");
	json_add_strz(sb, r->supersedes);
	sbuf_adds(sb, ",\"superseded_by\":");
	json_add_strz(sb, r->superseded_by);
	sbuf_addf(sb, ",\"revision\":%ld}", r->revision);
}

void cli_print_records_json(cairn_record *const *v, size_t n)
{
	struct sbuf sb = SBUF_INIT;
	size_t i;

	sbuf_addc(&sb, '[');
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(&sb, ',');
		cli_record_json(&sb, v[i], 1);
	}
	sbuf_addc(&sb, ']');
	cli_print_json(&sb);
	sbuf_release(&sb);
}

static void print_record(const cairn_record *r)
{
	struct sbuf src = SBUF_INIT;

	util_source_text(&src, r);
	printf("id:          %s\n", r->id);
	printf("kind:        %s\n", r->kind);
	printf("status:      %s\n", r->status);
	if (r->key)
		printf("key:         %s\n", r->key);
	printf("scope:       %s\n", r->scope);
	if (*r->title)
		printf("title:       %s\n", r->title);
	printf("origin:      %s\n", r->origin);
	printf("source:      %s\n", sbuf_str(&src));
	printf("confidence:  %.2f\n", r->confidence);
	if (r->proof)
		printf("proof:       %s\n", r->proof);
	if (r->time)
		printf("time:        %s\n", r->time);
	printf("created:     %s\n", r->created);
	printf("updated:     %s (revision %ld)\n", r->updated, r->revision);
	if (r->last_seen)
		printf("last seen:   %s\n", r->last_seen);
	if (r->supersedes)
		printf("supersedes:  %s\n", r->supersedes);
	if (r->superseded_by)
		printf("superseded by: %s\n", r->superseded_by);
	printf("\n%s\n", r->body);
	sbuf_release(&src);
}

/* One line per record: id  kind  status  title-or-first-line */
static void print_record_line(const cairn_record *r)
{
	const char *t = *r->title ? r->title : r->body;
	size_t n = strcspn(t, "\n");

	if (n > 72)
		n = 72;
	printf("%-16s  %-10s  %-10s  %.*s\n", r->id, r->kind, r->status,
	       (int)n, t);
}

static int print_list(cairn_record **v, size_t n, int json)
{
	size_t i;

	if (json) {
		cli_print_records_json(v, n);
		return EXIT_OK;
	}
	for (i = 0; i < n; i++)
		print_record_line(v[i]);
	return EXIT_OK;
}

static int print_one(const cairn_record *r, int json)
{
	if (json) {
		struct sbuf sb = SBUF_INIT;

		cli_record_json(&sb, r, 1);
		cli_print_json(&sb);
		sbuf_release(&sb);
	} else {
		print_record(r);
	}
	return EXIT_OK;
}

/* ------------------------------------------------------------ option table */

/*
 * Parse argv with getopt_long after resetting it. Returns the option
 * character, -1 at the end, or '?' (the caller returns EXIT_USAGE).
 */
int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	const struct option *o;
	const char *arg;
	size_t len;
	int c;

	opterr = 0; /* one message: cli_usage's, naming the option */
	getopt_msg[0] = '\0';
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c != '?')
		return c;
	arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (strncmp(arg, "--", 2) != 0) {
		const char *s = optopt > 0 && optopt < 128
					? strchr(shortopts, optopt)
					: NULL;

		if (s)
			snprintf(getopt_msg, sizeof(getopt_msg),
				 "option '-%c' needs a value", optopt);
		else
			snprintf(getopt_msg, sizeof(getopt_msg),
				 "unknown option '-%c'",
				 optopt > 32 && optopt < 127 ? optopt : '?');
		return c;
	}
	len = strcspn(arg, "=");
	for (o = longopts; o && o->name; o++)
		if (len > 2 && strlen(o->name) == len - 2 &&
		    strncmp(o->name, arg + 2, len - 2) == 0)
			break;
	if (o && o->name && o->has_arg == required_argument)
		snprintf(getopt_msg, sizeof(getopt_msg),
			 "option '--%s' needs a value", o->name);
	else if (o && o->name && o->has_arg == no_argument)
		snprintf(getopt_msg, sizeof(getopt_msg),
			 "option '--%s' takes no value", o->name);
	else
		snprintf(getopt_msg, sizeof(getopt_msg),
			 "unknown option '%.*s'", (int)(len < 100 ? len : 100),
			 arg);
	return c;
}

/* ---------------------------------------------------- a store under Git */

/*
 * Issue 31: a store committed to a repository reaches every clone, with
 * whatever anyone who can push put in it (records, or SQL triggers, which
 * cairn_db_open refuses). Warn when Git tracks dir/cairn.db: `git -C dir
 * ls-files --error-unmatch -- cairn.db` exits 0 for a tracked file only.
 * Without git, or outside a repository, nothing is said.
 */
static void warn_tracked_store(const char *dir)
{
	const char *argv[] = { "git", "-C", dir, "ls-files", "--error-unmatch",
			       "--", "cairn.db", NULL };
	posix_spawn_file_actions_t fa;
	int status = 0, spawned;
	pid_t pid;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	spawned = posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv,
			       environ) == 0;
	posix_spawn_file_actions_destroy(&fa);
	if (!spawned)
		return;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		fprintf(stderr,
			"cairn: warning: '%s/cairn.db' is tracked by Git: a "
			"committed store reaches every clone with whatever was "
			"put in it; untrack it with 'git rm --cached "
			"%s/cairn.db' (.cairn/.gitignore lists it)\n",
			dir, dir);
}

/* ------------------------------------------------------------------- init */

static const char init_help[] =
	"usage: cairn init\n"
	"\n"
	"Create a cairn store (.cairn/cairn.db) in the current directory, or in\n"
	"$CAIRN_DIR when set. Safe to run again: an existing store is kept and\n"
	"migrated to the current schema. Inside another workspace it says so:\n"
	"the new store then takes the place of the outer one for this directory\n"
	"and below. It warns when Git tracks .cairn/cairn.db (a committed store\n"
	"reaches every clone), and a store holding tables, indexes, views or\n"
	"triggers that cairn did not create is refused, here and everywhere.\n";

static int cmd_init(int argc, char **argv)
{
	static const struct option lo[] = { { "help", 0, 0, 'h' },
					    { "json", 0, 0, 'j' },
					    { 0, 0, 0, 0 } };
	const char *env = getenv("CAIRN_DIR");
	char cwd[PATH_MAX], dir[PATH_MAX + 16], gi[PATH_MAX + 32];
	struct stat st;
	int c, existed;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(init_help);
		if (c == 'j')
			cli_state.json = 1;
		else
			return cli_usage("init", "unknown option");
	}
	if (optind < argc)
		return cli_usage("init", "unexpected argument '%s'",
				 argv[optind]);
	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return cli_fail("cannot read the current directory");
		snprintf(dir, sizeof(dir), "%s/.cairn", cwd);
	}
	snprintf(gi, sizeof(gi), "%s/cairn.db", dir);
	existed = stat(gi, &st) == 0;
	if (!existed && !(env && *env)) {
		/* a store here hides the one of an enclosing workspace for
		 * this directory and below: say so, never silently */
		char *outer = NULL;

		if (cairn_workspace_find(NULL, &outer) == CAIRN_OK &&
		    strcmp(outer, dir) != 0)
			fprintf(stderr,
				"cairn: note: %s is inside the workspace of %s; "
				"the new store takes its place for this "
				"directory and below\n",
				cwd, outer);
		cairn_free(outer);
	}
	if (existed)
		warn_tracked_store(dir);
	if (cli_store_create(dir))
		return EXIT_ERR;
	if (cli_state.json)
		printf("{\"store\":\"%s/cairn.db\",\"created\":%s}\n", dir,
		       existed ? "false" : "true");
	else
		printf("%s cairn store in %s\n",
		       existed ? "reinitialized existing" : "initialized empty",
		       dir);
	return EXIT_OK;
}

int cli_store_create(const char *dir)
{
	char gi[PATH_MAX + 32];
	cairn_open_opts o;
	cairn_db *db = NULL;
	struct stat st;
	int rc;
	FILE *f;

	memset(&o, 0, sizeof(o));
	o.create = 1;
	rc = cairn_db_open(dir, &o, &db);
	if (rc) {
		cli_db_fail(db, rc);
		cairn_db_close(db);
		return EXIT_ERR;
	}
	cairn_db_close(db);
	snprintf(gi, sizeof(gi), "%s/.gitignore", dir);
	if (lstat(gi, &st) != 0) {
		/* 0600, and never through a symbolic link */
		int fd = open(gi, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				  O_CLOEXEC, 0600);

		f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (fd >= 0 && !f)
			close(fd);
		if (f) {
			fputs("# the store is local; records/ is meant to be "
			      "committed\ncairn.db\ncairn.db-*\n"
			      "receipts.pending\nhook.log\nhook.log.1\n"
			      "hook.sock\n",
			      f);
			fclose(f);
		}
	}
	return EXIT_OK;
}

/* ------------------------------------------------------------------ write */

/*
 * Supersession on the write side (SPEC 5.5): after a write or an approval,
 * the live records of the same kind (and key family) whose text is close
 * to the new one's, which it may replace. Only listed: linking is the
 * user's `cairn supersede OLD NEW`. A failed lookup does not fail the
 * write: *n is 0 and a note goes to stderr.
 */
static cairn_suggestion *may_replace(cairn_db *db, const char *id, size_t *n)
{
	cairn_suggestion *v = NULL;
	int rc = cairn_supersede_suggest(db, id, &v, n);

	if (rc) {
		fprintf(stderr, "cairn: note: could not look for records %s "
				"may replace: %s\n",
			id, cairn_errmsg(db));
		*n = 0;
		return NULL;
	}
	return v;
}

/* ,"may_replace":[{"id","kind","status","title","similarity",...}] */
static void may_replace_json(struct sbuf *sb, const cairn_suggestion *v,
			     size_t n)
{
	size_t i;

	sbuf_adds(sb, ",\"may_replace\":[");
	for (i = 0; i < n; i++) {
		const cairn_record *r = v[i].rec;

		sbuf_adds(sb, i ? ",{\"id\":" : "{\"id\":");
		json_add_strz(sb, r->id);
		sbuf_adds(sb, ",\"kind\":");
		json_add_strz(sb, r->kind);
		sbuf_adds(sb, ",\"status\":");
		json_add_strz(sb, r->status);
		sbuf_adds(sb, ",\"key\":");
		json_add_strz(sb, r->key);
		sbuf_adds(sb, ",\"title\":");
		json_add_strz(sb, r->title);
		sbuf_adds(sb, ",\"similarity\":");
		json_add_num(sb, round(v[i].similarity * 1e4) / 1e4);
		sbuf_addf(sb, ",\"same_key_family\":%s}",
			  v[i].same_family ? "true" : "false");
	}
	sbuf_addc(sb, ']');
}

static void may_replace_print(const char *id, const cairn_suggestion *v,
			      size_t n)
{
	size_t i;

	if (n == 0)
		return;
	printf("it may replace (same kind, similar text; nothing was "
	       "linked):\n");
	for (i = 0; i < n; i++)
		printf("  %s  [%s · %s] %s  (similarity %.2f%s)\n",
		       v[i].rec->id, v[i].rec->kind, v[i].rec->status,
		       *v[i].rec->title ? v[i].rec->title : "(untitled)",
		       v[i].similarity,
		       v[i].same_family ? ", same key family" : "");
	printf("link one with: cairn supersede OLD %s\n", id);
}

static const char write_help[] =
	"usage: cairn write [options] [TEXT]\n"
	"\n"
	"Write a record. The body is TEXT, or --body, or standard input.\n"
	"A human write is 'accepted' unless --status says otherwise; with\n"
	"--origin agent|capture|reflection it is always a 'candidate' that\n"
	"waits for 'cairn approve' (even --kind decision). Writing an existing\n"
	"--key replaces that record's text and keeps the old revision\n"
	"(see 'cairn history KEY'); the fields not given (kind, title, proof,\n"
	"confidence, provenance) are kept. Secrets are refused (see --redact).\n"
	"\n"
	"After the write it lists the existing records the new one may\n"
	"replace: live (accepted, unverified), the same kind and scope, the\n"
	"same key family (the key before its last ':') when it has a key, and\n"
	"a text similarity of at least 0.5. Nothing is linked: run\n"
	"'cairn supersede OLD NEW' to retire one from default recall.\n"
	"\n"
	"options:\n"
	"  -k, --kind KIND        decision adr fact rule procedure capability\n"
	"                         finding history event note (default: note,\n"
	"                         or the kind of the record --key names)\n"
	"      --key KEY          exact-match key, e.g. deploy:blyck\n"
	"  -t, --title TITLE      title\n"
	"  -b, --body TEXT        body (instead of TEXT or stdin)\n"
	"  -s, --status STATUS    candidate accepted unverified stale superseded\n"
	"                         historical false retired rejected\n"
	"      --scope SCOPE      workspace (default), global, or machine (true\n"
	"                         only on this machine, e.g. a capability\n"
	"                         proved here: kept out of team sync unless\n"
	"                         asked, cairn sync --include-machine)\n"
	"      --origin ORIGIN    human (default), agent, capture, reflection\n"
	"      --proof TEXT       what verified it\n"
	"      --confidence X     above 0, at most 1 (default: 1, agents 0.5)\n"
	"      --time ISO         event time (YYYY-MM-DD[THH:MM[:SS]][Z])\n"
	"      --session ID       provenance: agent session\n"
	"      --tool NAME        provenance: tool or work item\n"
	"      --supersedes ID    the record this one replaces (it must exist)\n"
	"      --redact           store secrets masked as [REDACTED:kind]\n"
	"                         instead of refusing the write\n"
	"      --json             print the record as JSON, with \"may_replace\":\n"
	"                         [{id, kind, status, key, title, similarity,\n"
	"                         same_key_family}]\n"
	"\n"
	"exit status: 0 written, 1 error (e.g. secret refused), 2 usage\n";

static int cmd_write(int argc, char **argv)
{
	enum { O_KEY = 256, O_SCOPE, O_ORIGIN, O_PROOF, O_CONF, O_TIME,
	       O_SESSION, O_TOOL, O_SUPERSEDES, O_REDACT, O_JSON };
	static const struct option lo[] = {
		{ "kind", 1, 0, 'k' },	       { "key", 1, 0, O_KEY },
		{ "title", 1, 0, 't' },	       { "body", 1, 0, 'b' },
		{ "status", 1, 0, 's' },       { "scope", 1, 0, O_SCOPE },
		{ "origin", 1, 0, O_ORIGIN },  { "proof", 1, 0, O_PROOF },
		{ "confidence", 1, 0, O_CONF }, { "time", 1, 0, O_TIME },
		{ "session", 1, 0, O_SESSION }, { "tool", 1, 0, O_TOOL },
		{ "supersedes", 1, 0, O_SUPERSEDES },
		{ "redact", 0, 0, O_REDACT },  { "json", 0, 0, O_JSON },
		{ "help", 0, 0, 'h' },	       { 0, 0, 0, 0 }
	};
	cairn_record r;
	cairn_db *db = NULL;
	unsigned flags = 0;
	char *in = NULL, *id = NULL, *end;
	int c, rc, ret = EXIT_OK;

	memset(&r, 0, sizeof(r));
	r.confidence = -1;
	while ((c = cli_getopt(argc, argv, "k:t:b:s:h", lo)) != -1) {
		switch (c) {
		case 'k': r.kind = optarg; break;
		case O_KEY: r.key = optarg; break;
		case 't': r.title = optarg; break;
		case 'b': r.body = optarg; break;
		case 's': r.status = optarg; break;
		case O_SCOPE: r.scope = optarg; break;
		case O_ORIGIN: r.origin = optarg; break;
		case O_PROOF: r.proof = optarg; break;
		case O_CONF:
			errno = 0;
			r.confidence = strtod(optarg, &end);
			if (errno || *end || end == optarg ||
			    !(r.confidence > 0 && r.confidence <= 1))
				return cli_usage("write", "--confidence must "
						 "be a number above 0, at "
						 "most 1");
			break;
		case O_TIME: r.time = optarg; break;
		case O_SESSION: r.src_session = optarg; break;
		case O_TOOL: r.src_tool = optarg; break;
		case O_SUPERSEDES: r.supersedes = optarg; break;
		case O_REDACT: flags |= CAIRN_WRITE_REDACT; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(write_help);
		default: return cli_usage("write", "unknown option");
		}
	}
	if (optind < argc) {
		if (r.body)
			return cli_usage("write", "give the body once: TEXT "
					 "or --body");
		if (optind + 1 < argc)
			return cli_usage("write", "quote the text: one TEXT "
					 "argument expected");
		r.body = argv[optind];
	}
	if (!r.body) {
		if (isatty(0))
			return cli_usage("write", "no text given (TEXT, "
					 "--body, or standard input)");
		in = cli_read_stdin();
		if (!in)
			return EXIT_ERR; /* cli_read_stdin said why */
		r.body = in;
	}
	/* a word outside the spec's lists is a usage error, said before
	 * the store is opened */
	if (r.kind && !cairn_kind_valid(r.kind))
		return cli_usage("write", "unknown kind '%s' (decision adr "
				 "fact rule procedure capability finding "
				 "history event note)", r.kind);
	if (r.status && !cairn_status_valid(r.status))
		return cli_usage("write", "unknown status '%s' (candidate "
				 "accepted unverified stale superseded "
				 "historical false retired rejected)", r.status);
	if (r.scope && !cairn_scope_valid(r.scope))
		return cli_usage("write", "unknown scope '%s' (workspace, "
				 "global, machine)", r.scope);
	if (r.origin && !cairn_origin_valid(r.origin))
		return cli_usage("write", "unknown origin '%s'", r.origin);
	if (r.origin && strcmp(r.origin, "file") == 0)
		return cli_usage("write", "--origin file is reserved for "
				 "'cairn seed'");
	if (cli_open(&db, 0)) {
		cairn_free(in);
		return EXIT_ERR;
	}
	rc = cairn_record_write(db, &r, flags, &id);
	if (rc) {
		ret = cli_db_fail(db, rc);
	} else if (cli_state.json) {
		struct sbuf sb = SBUF_INIT;
		cairn_record *got = NULL;
		cairn_suggestion *v = NULL;
		size_t nv = 0;

		if (cairn_record_get(db, id, &got) == CAIRN_OK) {
			v = may_replace(db, id, &nv);
			cli_record_json(&sb, got, 0);
			/* the record object gets one more member */
			if (!sb.err && sb.len && sb.buf[sb.len - 1] == '}') {
				sb.len--;
				may_replace_json(&sb, v, nv);
				sbuf_addc(&sb, '}');
			}
			cli_print_json(&sb);
		}
		cairn_suggestions_free(v, nv);
		cairn_record_free(got);
		sbuf_release(&sb);
	} else {
		cairn_record *got = NULL;
		cairn_suggestion *v = NULL;
		size_t nv = 0;

		if (cairn_record_get(db, id, &got) == CAIRN_OK) {
			printf("%s %s (%s)\n", id, got->status, got->kind);
			v = may_replace(db, id, &nv);
			may_replace_print(id, v, nv);
		}
		cairn_suggestions_free(v, nv);
		cairn_record_free(got);
	}
	cairn_free(id);
	cairn_free(in);
	cairn_db_close(db);
	return ret;
}

/* ------------------------------------------------------- read, get, history */

static const char read_help[] =
	"usage: cairn read [--scope SCOPE] [--json] KEY\n"
	"\n"
	"The exact drawer: print the record whose key is KEY (workspace first,\n"
	"then global). Reading a 'stale' record revives it to 'accepted'.\n"
	"exit status: 0 found, 1 not found or error, 2 usage\n";

static const char get_help[] =
	"usage: cairn get [--json] ID\n"
	"\n"
	"Print the record with this id (or a unique prefix of at least 4\n"
	"characters), whatever its status, with its source and provenance.\n"
	"exit status: 0 found, 1 not found or error, 2 usage\n";

static const char history_help[] =
	"usage: cairn history [--scope SCOPE] [--json] KEY|ID\n"
	"\n"
	"List the revisions of the record with key KEY (or, when no record has\n"
	"that key, with id ID), newest first.\n";

static int cmd_read_get(int argc, char **argv, int mode)
{
	enum { O_SCOPE = 256, O_JSON };
	static const struct option lo[] = { { "scope", 1, 0, O_SCOPE },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	const char *names[3] = { "read", "get", "history" };
	const char *helps[3] = { read_help, get_help, history_help };
	const char *scope = NULL;
	cairn_db *db = NULL;
	cairn_record *r = NULL, **v = NULL;
	size_t n = 0, i;
	int c, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(helps[mode]);
		else if (c == O_SCOPE && mode != 1)
			scope = optarg;
		else if (c == O_JSON)
			cli_state.json = 1;
		else
			return cli_usage(names[mode], "unknown option");
	}
	if (optind + 1 != argc)
		return cli_usage(names[mode], "expected exactly one %s",
				 mode == 1 ? "ID" : "KEY");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	if (mode == 0)
		rc = cairn_record_read_key(db, argv[optind], scope, &r);
	else if (mode == 1)
		rc = cairn_record_get(db, argv[optind], &r);
	else
		rc = cairn_record_history(db, argv[optind], scope, &v, &n);
	if (rc) {
		ret = cli_db_fail(db, rc);
	} else if (mode < 2) {
		print_one(r, cli_state.json);
	} else if (cli_state.json) {
		print_list(v, n, 1);
	} else {
		for (i = 0; i < n; i++)
			printf("revision %ld  %s  %s\n  %s\n", v[i]->revision,
			       v[i]->updated, v[i]->status, v[i]->body);
	}
	cairn_record_free(r);
	cairn_record_list_free(v, n);
	cairn_db_close(db);
	return ret;
}

/* ------------------------------------------------------- list, candidates */

static const char list_help[] =
	"usage: cairn list [--kind K[,K]] [--status S[,S]|all] [--scope SCOPE]\n"
	"                  [--origin O[,O]] [--limit N] [--json]\n"
	"\n"
	"List records, newest first. By default only 'accepted' and\n"
	"'unverified' records are listed; name other statuses (or 'all') to\n"
	"see candidates, stale, superseded, historical, false, retired or\n"
	"rejected records. --kind, --status and --origin may be repeated:\n"
	"they add up (--kind fact --kind rule is --kind fact,rule).\n";

static const char candidates_help[] =
	"usage: cairn candidates [--kind K[,K]] [--limit N] [--json]\n"
	"\n"
	"List records waiting for approval (status 'candidate'). Approve with\n"
	"'cairn approve ID', reject with 'cairn reject ID'. --kind may be\n"
	"repeated: the kinds add up. Then the pending forgets: records an agent asked to retire (MCP\n"
	"memory_forget of a record it did not write). 'cairn approve ID'\n"
	"retires the record, 'cairn reject ID' keeps it and drops the request\n"
	"(--json: the same records with \"pending\": \"forget\" and\n"
	"\"proposed\": {time, session, tool, reason}). The reason is the\n"
	"agent's own words (memory_forget's reason), shown as it gave it.\n";

/* Is kind one of the comma-separated kinds (NULL or "": any)? */
static int kind_in(const char *kind, const char *kinds)
{
	size_t n = strlen(kind);
	const char *p = kinds;

	if (!kinds || !*kinds)
		return 1;
	while ((p = strstr(p, kind)) != NULL) {
		if ((p == kinds || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* cairn candidates: the pending forgets after the candidates (json: the
 * array's last elements; v, n: the candidates, printed here too). */
static int print_candidates(cairn_db *db, const cairn_filter *f,
			    cairn_record **v, size_t n)
{
	struct sbuf sb = SBUF_INIT;
	cairn_forget *fv = NULL;
	size_t nf = 0, i, shown = 0;
	int rc = cairn_forget_list(db, &fv, &nf);

	if (rc)
		return cli_db_fail(db, rc);
	if (cli_state.json) {
		sbuf_addc(&sb, '[');
		for (i = 0; i < n; i++) {
			if (i)
				sbuf_addc(&sb, ',');
			cli_record_json(&sb, v[i], 1);
		}
	} else {
		print_list(v, n, 0);
	}
	for (i = 0; i < nf; i++) {
		if (!kind_in(fv[i].rec->kind, f->kinds))
			continue;
		if (cli_state.json) {
			if (n + shown)
				sbuf_addc(&sb, ',');
			cli_record_json(&sb, fv[i].rec, 1);
			sb.len--; /* reopen the object */
			sbuf_adds(&sb, ",\"pending\":\"forget\",\"proposed\":"
				  "{\"time\":");
			json_add_strz(&sb, fv[i].time);
			sbuf_adds(&sb, ",\"session\":");
			json_add_strz(&sb, fv[i].session);
			sbuf_adds(&sb, ",\"tool\":");
			json_add_strz(&sb, fv[i].tool);
			sbuf_adds(&sb, ",\"reason\":");
			json_add_strz(&sb, fv[i].reason);
			sbuf_adds(&sb, "}}");
		} else {
			if (!shown)
				printf("%spending forgets (an agent asks to "
				       "retire these; 'cairn approve ID' "
				       "retires, 'cairn reject ID' keeps):\n",
				       n ? "\n" : "");
			print_record_line(fv[i].rec);
			printf("%-16s  proposed %s by session %s\n", "",
			       fv[i].time, *fv[i].session ? fv[i].session
							  : "(unknown)");
			if (*fv[i].reason)
				printf("%-16s  reason: %s\n", "",
				       fv[i].reason);
		}
		shown++;
	}
	if (cli_state.json) {
		sbuf_addc(&sb, ']');
		cli_print_json(&sb);
	} else if (n + shown == 0) {
		fprintf(stderr, "no candidates waiting\n");
	}
	sbuf_release(&sb);
	cairn_forget_list_free(fv, nf);
	return EXIT_OK;
}

static int cmd_list(int argc, char **argv, int candidates)
{
	enum { O_KIND = 256, O_STATUS, O_SCOPE, O_ORIGIN, O_LIMIT, O_JSON };
	static const struct option lo[] = {
		{ "kind", 1, 0, O_KIND },     { "status", 1, 0, O_STATUS },
		{ "scope", 1, 0, O_SCOPE },   { "origin", 1, 0, O_ORIGIN },
		{ "limit", 1, 0, O_LIMIT },   { "json", 0, 0, O_JSON },
		{ "help", 0, 0, 'h' },	      { 0, 0, 0, 0 }
	};
	const char *cmd = candidates ? "candidates" : "list";
	struct sbuf kinds = SBUF_INIT, statuses = SBUF_INIT,
		    origins = SBUF_INIT;
	cairn_filter f;
	cairn_db *db = NULL;
	cairn_record **v = NULL;
	size_t n = 0;
	char *end;
	int c, rc, ret = -1;

	memset(&f, 0, sizeof(f));
	/* --kind, --status and --origin are repeatable: they add up */
	while (ret < 0 && (c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_KIND: cli_add_csv(&kinds, optarg); break;
		case O_STATUS:
			if (candidates)
				ret = cli_usage(cmd, "candidates have status "
						"'candidate'");
			else
				cli_add_csv(&statuses, optarg);
			break;
		case O_SCOPE: f.scope = optarg; break;
		case O_ORIGIN: cli_add_csv(&origins, optarg); break;
		case O_LIMIT:
			f.limit = strtol(optarg, &end, 10);
			if (*end || end == optarg || f.limit < 0)
				ret = cli_usage(cmd, "--limit must be a "
						"number >= 0");
			break;
		case O_JSON: cli_state.json = 1; break;
		case 'h':
			ret = cli_help(candidates ? candidates_help
						  : list_help);
			break;
		default: ret = cli_usage(cmd, "unknown option"); break;
		}
	}
	if (ret >= 0)
		goto out;
	if (optind < argc) {
		ret = cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (kinds.err || statuses.err || origins.err) {
		ret = cli_fail("out of memory");
		goto out;
	}
	f.kinds = kinds.len ? kinds.buf : NULL;
	f.statuses = statuses.len ? statuses.buf : NULL;
	f.origins = origins.len ? origins.buf : NULL;
	if (candidates)
		f.statuses = "candidate";
	if (cli_open(&db, 0)) {
		ret = EXIT_ERR;
		goto out;
	}
	rc = cairn_record_list(db, &f, &v, &n);
	if (rc)
		ret = cli_db_fail(db, rc);
	else if (candidates)
		ret = print_candidates(db, &f, v, n);
	else
		ret = print_list(v, n, cli_state.json);
	cairn_record_list_free(v, n);
	cairn_db_close(db);
out:
	sbuf_release(&kinds);
	sbuf_release(&statuses);
	sbuf_release(&origins);
	return ret;
}

/* ----------------------------------------------- approve, reject, forget */

static const char approve_help[] =
	"usage: cairn approve [--json] ID...\n"
	"\n"
	"Approve candidates: each becomes 'accepted' and enters default recall.\n"
	"A candidate proposed for an existing key replaces that record's text\n"
	"(the old text is kept as a revision). Then it lists the live records\n"
	"the approved one may replace (as 'cairn write' does; --json:\n"
	"\"may_replace\"); link one with 'cairn supersede OLD NEW'.\n"
	"The ID of a pending forget ('cairn candidates') retires that record.\n";
static const char reject_help[] =
	"usage: cairn reject [--json] ID...\n"
	"\n"
	"Reject candidates: each becomes 'rejected' and never enters default\n"
	"recall. The ID of a pending forget ('cairn candidates') drops that\n"
	"request and keeps the record as it is.\n";
static const char forget_help[] =
	"usage: cairn forget [--json] ID...\n"
	"\n"
	"Retire records: each becomes 'retired' and leaves default recall; the\n"
	"text is kept. A file-backed record is not changed: edit its source\n"
	"file (the message names path:line) and run 'cairn seed'.\n";

static int cmd_status(int argc, char **argv, const char *cmd,
		      const char *help, const char *from, const char *to)
{
	static const struct option lo[] = { { "json", 0, 0, 'j' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_db *db = NULL;
	int c, i, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(help);
		if (c == 'j')
			cli_state.json = 1;
		else
			return cli_usage(cmd, "unknown option");
	}
	if (optind >= argc)
		return cli_usage(cmd, "expected at least one ID");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	for (i = optind; i < argc; i++) {
		/* approve: what the accepted record may replace */
		int approve = strcmp(to, "accepted") == 0;
		cairn_suggestion *v = NULL;
		cairn_record *got = NULL;
		size_t nv = 0;
		const char *id;
		int forget;

		/* a unique prefix names the record: say which one */
		rc = cairn_record_get(db, argv[i], &got);
		if (rc) {
			ret = cli_db_fail(db, rc);
			continue;
		}
		id = got->id;
		/* a pending forget: approve applies it, reject drops it */
		forget = from && cairn_forget_pending(db, id);
		if (forget)
			rc = cairn_forget_resolve(db, id, approve);
		else
			rc = cairn_record_set_status(db, id, from, to, 0);
		if (rc) {
			cairn_record_free(got);
			ret = cli_db_fail(db, rc);
			continue;
		}
		if (forget) {
			const char *now = approve ? "retired" : "kept";

			if (cli_state.json) {
				struct sbuf sb = SBUF_INIT;

				sbuf_adds(&sb, "{\"id\":");
				json_add_strz(&sb, id);
				sbuf_addf(&sb, ",\"forget\":\"%s\"}", approve
					  ? "applied" : "dropped");
				cli_print_json(&sb);
				sbuf_release(&sb);
			} else {
				printf("%s -> %s (pending forget %s)\n", id,
				       now, approve ? "applied" : "dropped");
			}
			cairn_record_free(got);
			continue;
		}
		if (!from) /* cairn forget: an agent's request is moot now */
			(void)cairn_forget_resolve(db, id, 0);
		if (approve)
			v = may_replace(db, id, &nv);
		if (cli_state.json) {
			struct sbuf sb = SBUF_INIT;

			sbuf_adds(&sb, "{\"id\":");
			json_add_strz(&sb, id);
			sbuf_adds(&sb, ",\"status\":");
			json_add_strz(&sb, to);
			if (approve)
				may_replace_json(&sb, v, nv);
			sbuf_addc(&sb, '}');
			cli_print_json(&sb);
			sbuf_release(&sb);
		} else {
			printf("%s -> %s\n", id, to);
			may_replace_print(id, v, nv);
		}
		cairn_suggestions_free(v, nv);
		cairn_record_free(got);
	}
	cairn_db_close(db);
	return ret;
}

/* ------------------------------------------------------------------ revise */

static const char revise_help[] =
	"usage: cairn revise [options] ID\n"
	"\n"
	"Change a record's text or fields; the previous text is kept as a\n"
	"revision. File-backed records cannot be revised here: edit the file.\n"
	"\n"
	"options:\n"
	"  -t, --title TITLE     -b, --body TEXT (or '-' for stdin)\n"
	"  -s, --status STATUS   -k, --kind KIND\n"
	"      --proof TEXT          --confidence X\n"
	"      --redact              --json\n";

static int cmd_revise(int argc, char **argv)
{
	enum { O_PROOF = 256, O_CONF, O_REDACT, O_JSON };
	static const struct option lo[] = {
		{ "title", 1, 0, 't' },	     { "body", 1, 0, 'b' },
		{ "status", 1, 0, 's' },     { "kind", 1, 0, 'k' },
		{ "proof", 1, 0, O_PROOF },  { "confidence", 1, 0, O_CONF },
		{ "redact", 0, 0, O_REDACT }, { "json", 0, 0, O_JSON },
		{ "help", 0, 0, 'h' },	     { 0, 0, 0, 0 }
	};
	cairn_record ch;
	cairn_db *db = NULL;
	unsigned flags = 0;
	char *in = NULL, *end;
	int c, rc, ret = EXIT_OK;

	memset(&ch, 0, sizeof(ch));
	ch.confidence = -1;
	while ((c = cli_getopt(argc, argv, "t:b:s:k:h", lo)) != -1) {
		switch (c) {
		case 't': ch.title = optarg; break;
		case 'b': ch.body = optarg; break;
		case 's': ch.status = optarg; break;
		case 'k': ch.kind = optarg; break;
		case O_PROOF: ch.proof = optarg; break;
		case O_CONF:
			ch.confidence = strtod(optarg, &end);
			if (*end || end == optarg ||
			    !(ch.confidence > 0 && ch.confidence <= 1))
				return cli_usage("revise", "--confidence must "
						 "be a number above 0, at "
						 "most 1");
			break;
		case O_REDACT: flags |= CAIRN_WRITE_REDACT; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(revise_help);
		default: return cli_usage("revise", "unknown option");
		}
	}
	if (optind + 1 != argc)
		return cli_usage("revise", "expected exactly one ID");
	if (!ch.title && !ch.body && !ch.status && !ch.kind && !ch.proof &&
	    ch.confidence < 0)
		return cli_usage("revise", "nothing to change");
	if (ch.body && strcmp(ch.body, "-") == 0) {
		in = cli_read_stdin();
		if (!in)
			return EXIT_ERR; /* cli_read_stdin said why */
		ch.body = in;
	}
	if (cli_open(&db, 0)) {
		cairn_free(in);
		return EXIT_ERR;
	}
	rc = cairn_record_revise(db, argv[optind], &ch, flags);
	if (rc) {
		ret = cli_db_fail(db, rc);
	} else {
		cairn_record *r = NULL;

		if (cairn_record_get(db, argv[optind], &r) == CAIRN_OK) {
			if (cli_state.json) {
				struct sbuf sb = SBUF_INIT;

				cli_record_json(&sb, r, 0);
				cli_print_json(&sb);
				sbuf_release(&sb);
			} else {
				printf("%s revision %ld\n", r->id,
				       r->revision);
			}
		}
		cairn_record_free(r);
	}
	cairn_free(in);
	cairn_db_close(db);
	return ret;
}

/* ------------------------------------------------------------------- stats */

static const char stats_help[] =
	"usage: cairn stats [--json] [--integrity | --hook]\n"
	"\n"
	"Counts of records by kind, status, origin and scope. With --integrity,\n"
	"check the database and its full-text index instead and print 'ok'\n"
	"(exit 0) or what is damaged (exit 1). With --hook, summarise\n"
	".cairn/hook.log: calls, latency p50/p90/max, and how many were\n"
	"injected, empty, captured (Stop/SessionEnd), timeouts, errors or\n"
	"ignored, and how many a running 'cairn mcp' answered (served).\n"
	"Plain --json also counts the receipts still in the spool\n"
	"(receipts_spooled: hook prompts, moved into the store by a later\n"
	"write). With team remotes (cairn remote), a last line counts the\n"
	"local changes each has not got yet (--json: \"unsynced\").\n"
	"It warns on stderr when Git tracks .cairn/cairn.db.\n";

static int cmd_stats(int argc, char **argv)
{
	static const struct option lo[] = { { "json", 0, 0, 'j' },
					    { "integrity", 0, 0, 'i' },
					    { "hook", 0, 0, 'k' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_db *db = NULL;
	struct json *j = NULL;
	const struct json *g, *m;
	char *out = NULL, err[128];
	struct sbuf unsynced = SBUF_INIT;
	int c, rc, ret = EXIT_OK, integrity = 0, hook = 0;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(stats_help);
		if (c == 'j')
			cli_state.json = 1;
		else if (c == 'i')
			integrity = 1;
		else if (c == 'k')
			hook = 1;
		else
			return cli_usage("stats", "unknown option");
	}
	if (hook)
		return cli_hook_stats(cli_state.json);
	if (optind < argc)
		return cli_usage("stats", "unexpected argument");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	warn_tracked_store(cairn_db_dir(db));
	if (integrity) {
		rc = cairn_check_integrity(db);
		if (rc == CAIRN_OK)
			printf("ok\n");
		else
			ret = cli_db_fail(db, rc);
		cairn_db_close(db);
		return ret;
	}
	rc = cairn_stats_json(db, &out);
	if (rc == CAIRN_OK)
		cli_sync_stats(db, cli_state.json, &unsynced);
	if (rc) {
		ret = cli_db_fail(db, rc);
	} else if (cli_state.json) {
		size_t n = strlen(out);

		/* the remotes' unsynced counts join the object */
		if (unsynced.len && n && out[n - 1] == '}')
			printf("%.*s%s\"unsynced\":{%s}}\n", (int)(n - 1), out,
			       n > 2 ? "," : "", sbuf_str(&unsynced));
		else
			printf("%s\n", out);
	} else if (json_parse(out, strlen(out), &j, err, sizeof(err)) ==
		   CAIRN_OK) {
		double total = 0;

		json_get_num(j, "workspace_records", &total);
		printf("store:    %s/cairn.db (%.0f workspace records)\n",
		       cairn_db_dir(db), total);
		for (g = j->child; g; g = g->next) {
			if (g->type != JSON_OBJECT)
				continue;
			printf("%-9s", g->key);
			for (m = g->child; m; m = m->next)
				printf(" %s=%.0f", m->key, m->num);
			printf("\n");
		}
		if (unsynced.len)
			printf("%s\n", sbuf_str(&unsynced));
	}
	sbuf_release(&unsynced);
	json_free(j);
	cairn_free(out);
	cairn_db_close(db);
	return ret;
}

/* ---------------------------------------------------------- export, import */

static const char export_help[] =
	"usage: cairn export [FILE]\n"
	"\n"
	"Write every record (all statuses, both scopes, with revisions) as JSON\n"
	"Lines to FILE or standard output. 'cairn import' reads it back;\n"
	"export -> import -> export is byte-identical.\n";

static const char import_help[] =
	"usage: cairn import [--replace] [--redact] [FILE]\n"
	"\n"
	"Read JSON Lines records (as written by 'cairn export') from FILE or\n"
	"standard input. Records whose id exists are skipped unless --replace.\n"
	"Every record passes the checks of 'cairn write' (the secret filter,\n"
	"the size limits, valid ids and dates, links to records that exist).\n"
	"The import is all or nothing: a line that fails is reported with its\n"
	"line number and no record of the file is imported; fix it and run\n"
	"the import again.\n";

static int write_file(void *user, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, (FILE *)user) == len ? 0 : -1;
}

static int cmd_export(int argc, char **argv)
{
	static const struct option lo[] = { { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_db *db = NULL;
	FILE *f = stdout;
	int c, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(export_help);
		return cli_usage("export", "unknown option");
	}
	if (optind + 1 < argc)
		return cli_usage("export", "expected at most one FILE");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	if (optind < argc && strcmp(argv[optind], "-") != 0) {
		f = fopen(argv[optind], "w");
		if (!f) {
			cairn_db_close(db);
			return cli_fail("cannot write '%s': %s", argv[optind],
					strerror(errno));
		}
	}
	rc = cairn_export(db, write_file, f);
	if (rc)
		ret = cli_db_fail(db, rc);
	if (f != stdout && fclose(f) != 0)
		ret = cli_fail("cannot write '%s'", argv[optind]);
	cairn_db_close(db);
	return ret;
}

/* The longest line `cairn import` takes: EXPORT_MAX_LINE (internal.h), which
 * cairn_import_line checks again. The reader below never holds more than
 * this of a line, so a huge line costs no more memory than one at the limit. */
#define IMPORT_MAX_LINE EXPORT_MAX_LINE
#define IMPORT_READ_CHUNK 65536 /* bytes read from the file at a time */

struct import_reader {
	FILE *f;                       /* the file (the caller closes it) */
	char chunk[IMPORT_READ_CHUNK]; /* bytes read ahead */
	size_t pos, len;               /* next unread byte, bytes in chunk */
	char *line;                    /* the line's first bytes, NUL-ended */
	size_t cap;                    /* allocated: at most IMPORT_MAX_LINE+1 */
};

/* Append n bytes to rd->line at *kept, keeping at most IMPORT_MAX_LINE. */
static int import_keep(struct import_reader *rd, size_t *kept, const char *p,
		       size_t n)
{
	size_t room = IMPORT_MAX_LINE - *kept, need, cap;
	char *grown;

	if (n > room)
		n = room;
	need = *kept + n + 1;
	if (need > rd->cap) {
		cap = rd->cap ? rd->cap : 4096;
		while (cap < need)
			cap *= 2;
		if (cap > IMPORT_MAX_LINE + 1)
			cap = IMPORT_MAX_LINE + 1;
		grown = util_realloc(rd->line, cap);
		if (!grown)
			return -1;
		rd->line = grown;
		rd->cap = cap;
	}
	memcpy(rd->line + *kept, p, n);
	*kept += n;
	rd->line[*kept] = '\0';
	return 0;
}

/*
 * One line without its "\n" and the "\r"s before it: *len is its length.
 * When *len <= IMPORT_MAX_LINE the line is rd->line; a longer one was read
 * to its end but only its start kept. Returns 1 for a line, 0 at end of
 * file, -1 on a read error, -2 out of memory.
 */
static int import_read_line(struct import_reader *rd, size_t *len)
{
	size_t total = 0, kept = 0, cr = 0, take, i;
	const char *p, *nl;
	int any = 0;

	if (import_keep(rd, &kept, "", 0))
		return -2;
	for (;;) {
		if (rd->pos == rd->len) {
			rd->pos = 0;
			rd->len = fread(rd->chunk, 1, sizeof(rd->chunk), rd->f);
			if (rd->len == 0) {
				if (ferror(rd->f))
					return -1;
				if (!any)
					return 0;
				break;
			}
		}
		any = 1;
		p = rd->chunk + rd->pos;
		nl = memchr(p, '\n', rd->len - rd->pos);
		take = nl ? (size_t)(nl - p) : rd->len - rd->pos;
		rd->pos += take + (nl != NULL);
		for (i = take; i > 0 && p[i - 1] == '\r'; i--)
			;
		cr = i == 0 ? cr + take : take - i;
		if (import_keep(rd, &kept, p, take))
			return -2;
		total += take;
		if (nl)
			break;
	}
	*len = total - cr;
	if (*len <= kept)
		rd->line[*len] = '\0';
	return 1;
}

static int cmd_import(int argc, char **argv)
{
	enum { O_REPLACE = 256, O_REDACT, O_JSON };
	static const struct option lo[] = { { "replace", 0, 0, O_REPLACE },
					    { "redact", 0, 0, O_REDACT },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_db *db = NULL;
	FILE *f = stdin;
	struct import_reader *rd = NULL;
	size_t len = 0, lineno = 0, added = 0, skipped = 0;
	unsigned flags = CAIRN_WRITE_KEEP_TIMES;
	int c, rc = CAIRN_OK, replace = 0, ret = EXIT_OK, sk, got = 0;
	int toolong = 0;
	const char *what = NULL; /* a reading failure, else NULL */

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_REPLACE: replace = 1; break;
		case O_REDACT: flags |= CAIRN_WRITE_REDACT; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(import_help);
		default: return cli_usage("import", "unknown option");
		}
	}
	if (optind + 1 < argc)
		return cli_usage("import", "expected at most one FILE");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	if (optind < argc && strcmp(argv[optind], "-") != 0) {
		f = fopen(argv[optind], "r");
		if (!f) {
			cairn_db_close(db);
			return cli_fail("cannot read '%s': %s", argv[optind],
					strerror(errno));
		}
	}
	rd = util_calloc(1, sizeof(*rd));
	if (!rd) {
		if (f != stdin)
			fclose(f);
		cairn_db_close(db);
		return cli_fail("out of memory");
	}
	rd->f = f;
	/* one transaction: a bad line, a link to a record that is not there
	 * (checked at the commit) or a crash imports nothing of the file */
	rc = cairn_begin(db);
	while (rc == CAIRN_OK && (got = import_read_line(rd, &len)) > 0) {
		lineno++;
		if (len == 0)
			continue;
		if (len > IMPORT_MAX_LINE) {
			rc = CAIRN_TOOBIG;
			toolong = 1;
			break;
		}
		rc = cairn_import_line(db, rd->line, len, flags, replace, &sk);
		if (rc)
			break;
		if (sk)
			skipped++;
		else
			added++;
	}
	if (rc == CAIRN_OK && got < 0) {
		rc = got == -2 ? CAIRN_NOMEM : CAIRN_IO;
		what = got == -2 ? "out of memory" : strerror(errno);
	}
	if (rc) {
		char msg[STORE_ERRMSG_CLI];

		/* the same words as cairn_import_line's, which never sees it */
		if (toolong)
			snprintf(msg, sizeof(msg),
				 "import: line of %zu bytes is over the limit "
				 "of %zu",
				 len, IMPORT_MAX_LINE);
		else if (what)
			snprintf(msg, sizeof(msg), "reading: %s", what);
		else
			snprintf(msg, sizeof(msg), "%s", cairn_errmsg(db));
		cairn_rollback(db);
		ret = cli_fail("line %zu: %s (imported 0 records: the file "
			       "is imported whole or not at all)",
			       lineno + (what != NULL), msg);
	} else {
		rc = cairn_commit(db);
		if (rc)
			ret = cli_fail("%s (imported 0 records: the file is "
				       "imported whole or not at all)",
				       cairn_errmsg(db));
	}
	if (ret == EXIT_OK) {
		if (cli_state.json)
			printf("{\"imported\":%zu,\"skipped\":%zu}\n", added,
			       skipped);
		else
			printf("imported %zu records, skipped %zu existing\n",
			       added, skipped);
	}
	cairn_free(rd->line);
	cairn_free(rd);
	if (f != stdin)
		fclose(f);
	cairn_db_close(db);
	return ret;
}

/* ------------------------------------------------------------------- main */

static const struct cli_command {
	const char *name;                    /* the command word */
	int (*run)(int argc, char **argv);   /* argv[0] is the command word */
	const char *summary;                 /* one line for `cairn --help` */
} *find_command(const char *name);

static int c_read(int argc, char **argv) { return cmd_read_get(argc, argv, 0); }
static int c_get(int argc, char **argv) { return cmd_read_get(argc, argv, 1); }
static int c_history(int argc, char **argv) { return cmd_read_get(argc, argv, 2); }
static int c_list(int argc, char **argv) { return cmd_list(argc, argv, 0); }
static int c_candidates(int argc, char **argv) { return cmd_list(argc, argv, 1); }
static int c_approve(int argc, char **argv)
{
	return cmd_status(argc, argv, "approve", approve_help, "candidate",
			  "accepted");
}
static int c_reject(int argc, char **argv)
{
	return cmd_status(argc, argv, "reject", reject_help, "candidate",
			  "rejected");
}
static int c_forget(int argc, char **argv)
{
	return cmd_status(argc, argv, "forget", forget_help, NULL, "retired");
}

static const struct cli_command commands[] = {
	{ "init", cmd_init, "create a store in this directory" },
	{ "write", cmd_write, "write a record (agents: a candidate)" },
	{ "read", c_read, "the exact drawer: a record by key" },
	{ "get", c_get, "a record by id" },
	{ "list", c_list, "list records (default: accepted, unverified)" },
	{ "candidates", c_candidates, "list candidates waiting for approval" },
	{ "approve", c_approve, "approve candidates" },
	{ "reject", c_reject, "reject candidates" },
	{ "revise", cmd_revise, "change a record, keeping its revision" },
	{ "forget", c_forget, "retire records" },
	{ "history", c_history, "revisions of a record (by key or id)" },
	{ "stats", cmd_stats, "counts by kind, status, origin, scope" },
	{ "export", cmd_export, "write all records as JSON Lines" },
	{ "import", cmd_import, "read JSON Lines records" },
	CLI_MORE_COMMANDS
};

static const struct cli_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/*
 * The command a mistyped word most likely meant: the fewest edits (an
 * insertion, deletion, substitution or swap of neighbours), at most 2 and
 * less than half the word; NULL when none is that close.
 */
static const struct cli_command *nearest_command(const char *w)
{
	const struct cli_command *best = NULL;
	size_t n = strlen(w), i, bestd = 3;

	if (n == 0 || n > 32)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		const char *c = commands[i].name;
		size_t m = strlen(c), a, b, d[34][34];

		if (m > 32)
			continue;
		for (a = 0; a <= n; a++)
			d[a][0] = a;
		for (b = 0; b <= m; b++)
			d[0][b] = b;
		for (a = 1; a <= n; a++)
			for (b = 1; b <= m; b++) {
				size_t x = d[a - 1][b] + 1, y = d[a][b - 1] + 1,
				       z = d[a - 1][b - 1] + (w[a - 1] != c[b - 1]);

				x = x < y ? x : y;
				x = x < z ? x : z;
				if (a > 1 && b > 1 && w[a - 1] == c[b - 2] &&
				    w[a - 2] == c[b - 1] && d[a - 2][b - 2] + 1 < x)
					x = d[a - 2][b - 2] + 1;
				d[a][b] = x;
			}
		if (d[n][m] < bestd && 2 * d[n][m] < (n > m ? n : m)) {
			bestd = d[n][m];
			best = &commands[i];
		}
	}
	return best;
}

static void main_help(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: cairn [-C DIR] [--json] COMMAND [ARGS]\n"
		"\n"
		"cairn: long-term memory for AI agents. Records (decisions, ADRs,\n"
		"facts, rules, procedures, capabilities, findings, events) live in\n"
		".cairn/cairn.db, found by walking up from the current directory.\n"
		"\n"
		"commands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-11s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(f,
		"\n"
		"options:\n"
		"  -C DIR      run as if started in DIR\n"
		"  --json      machine-readable output (every command); an error\n"
		"              is {\"error\": TEXT, \"code\": EXIT STATUS} on stdout\n"
		"  --version   print the version\n"
		"\n"
		"environment:\n"
		"  CAIRN_DIR         the store directory (instead of walking up)\n"
		"  CAIRN_GLOBAL      the global store directory (default\n"
		"                    $XDG_DATA_HOME/cairn or ~/.local/share/cairn)\n"
		"  CAIRN_JIEBA_DICT  jieba dictionary (default: python3-jieba's)\n"
		"\n"
		"exit status: 0 ok, 1 error, 2 usage, 3 drift (cairn check: a\n"
		"reference changed)\n"
		"'cairn COMMAND --help' explains each command.\n");
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd;
	int i = 1;

	/* --json anywhere before "--" (every command takes it): errors found
	 * before the command reads its options are JSON too */
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			cli_state.json = 1;
	i = 1;
	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-C") == 0) {
			if (i + 1 >= argc)
				return cli_usage(NULL, "-C needs a directory");
			if (chdir(argv[i + 1]) != 0)
				return cli_fail("cannot change to '%s': %s",
						argv[i + 1], strerror(errno));
			/* an explicit -C wins over CAIRN_DIR */
			unsetenv("CAIRN_DIR");
			i += 2;
		} else if (strcmp(argv[i], "--json") == 0) {
			cli_state.json = 1;
			i++;
		} else if (strcmp(argv[i], "--help") == 0 ||
			   strcmp(argv[i], "-h") == 0) {
			main_help(stdout);
			return EXIT_OK;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("cairn %s\n", CAIRN_VERSION);
			return EXIT_OK;
		} else {
			return usage_message(NULL, "unknown option '%s'",
					     argv[i]);
		}
	}
	if (i >= argc) {
		main_help(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		if (i + 1 < argc && find_command(argv[i + 1])) {
			char *hv[3] = { argv[i + 1], (char *)"--help", NULL };

			optind = 0;
			return find_command(argv[i + 1])->run(2, hv);
		}
		main_help(stdout);
		return EXIT_OK;
	}
	cmd = find_command(argv[i]);
	if (!cmd) {
		const struct cli_command *near = nearest_command(argv[i]);

		if (near)
			return usage_message(NULL, "'%s' is not a cairn "
					     "command; did you mean '%s'?",
					     argv[i], near->name);
		return usage_message(NULL, "'%s' is not a cairn command",
				     argv[i]);
	}
	optind = 0;
	if (strcmp(cmd->name, "mcp") != 0 && strcmp(cmd->name, "hook") != 0)
		tty_filter_stdout();
	/* GNU getopt: no permutation past the first non-option is not
	 * needed; options and operands may mix */
	return cmd->run(argc - i, argv + i);
}
