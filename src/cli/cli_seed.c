/*
 * cli_seed.c -- `cairn seed`: file-backed records from Markdown.
 *
 * Layer: top (the cairn command), on seed.h. Output: a summary line (with
 * --dry-run or --verbose, one line per record), or one JSON object with
 * --json. Errors and warnings go to stderr as "cairn: path:line: ...";
 * a progress bar goes to stderr only when stderr is a terminal.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "seed.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_USAGE 2
#define SEED_MAX_ENV_PATHS 64 /* entries taken from CAIRN_SEED_PATHS */
#define BAR_WIDTH 30          /* characters of the progress bar */

static const char seed_help[] =
	"usage: cairn seed [--dry-run] [--strict] [--json] [-v] [--no-git] [PATH...]\n"
	"\n"
	"Make file-backed records from Markdown: ADRs, decision records,\n"
	"notes and facts files. Each PATH is a folder (walked for *.md,\n"
	"*.markdown and *.mdx, skipping index pages, templates, hidden folders\n"
	"and symlinks) or a file, inside the workspace. Without PATH these are\n"
	"seeded: the folders adr-tools (.adr-dir) and log4brains\n"
	"(.log4brains.yml) are configured with, the default folders that\n"
	"exist (docs/decisions docs/adr doc/adr docs/architecture/decisions\n"
	".cairn/records docs/architecture/adr architecture-decision-record\n"
	"adr decisions ...; docs/SEED.md lists them all), and files anywhere\n"
	"in the workspace that look like decision records (a numbered title\n"
	"with Status/Context/Decision sections, or MADR's). $CAIRN_SEED_PATHS\n"
	"(colon-separated, relative to the workspace root) replaces all that.\n"
	"\n"
	"Front matter (YAML between '---' lines) may give kind, key, status,\n"
	"supersedes, date, id, title and 'format: facts'. Without it the\n"
	"folder gives the kind (docs/decisions: decision; the adr folders:\n"
	"adr; .cairn/records: note) and an ADR's '## Status' section or\n"
	"'Status:' line gives the status, through the table of docs/SEED.md\n"
	"(emoji, markup and a comment after the word are ignored):\n"
	"  Accepted, Approved, Decided, Final   -> accepted\n"
	"  Proposed, Draft, Pending, On hold    -> unverified\n"
	"  Rejected, Declined                   -> accepted, \"Outcome: rejected.\"\n"
	"  Deprecated, Obsolete                 -> historical\n"
	"  Superseded by X                      -> superseded, linked to X\n"
	"  \"Accepted or Rejected\", \"[Draft/Final]\" -> unverified (a placeholder)\n"
	"A status written as a sentence is read by the documented words of\n"
	"its first sentence ('Gathering information. ...' -> unverified).\n"
	"A status no rule maps is an error naming file:line; nothing is\n"
	"coerced. Dates: YYYY-MM-DD, 05/02/2018 (a warning when day and month\n"
	"could swap, once: when the file is new or changed), December 1,\n"
	"2021, in front matter or a 'Date:' line. Templates (a placeholder\n"
	"title, date or status, or a status that is a question) and a\n"
	"byte-identical twin in the same folder (index.md and its README.md)\n"
	"are skipped with a note.\n"
	"A facts file ('format: facts', or a name ending in .facts.md) makes\n"
	"one record per list item: '- [false, key=K] text'.\n"
	"\n"
	"Short files stay whole; longer ones are split on H1-H3 headings into\n"
	"chunks of about 800 characters, each with its heading path. Every\n"
	"record keeps its path, heading path, line and the commit of the\n"
	"file's last change (git log), shown by 'cairn get' and 'cairn\n"
	"recall'. Ids come from path + heading path, so seeding again keeps\n"
	"them: unchanged records are not touched, changed ones are updated\n"
	"with the old revision kept, records whose file or section is gone are\n"
	"retired. File-backed records are read-only: edit the file and seed\n"
	"again. All of it is one transaction. A file with an error is reported\n"
	"and skipped (its records stay as they were), the others are seeded\n"
	"and the exit status is 1; with --strict nothing is written.\n"
	"docs/SEED.md has the details.\n"
	"\n"
	"options:\n"
	"  -n, --dry-run   print the plan: per file what was found, mapped or\n"
	"                  skipped and why, per record new, changed, unchanged\n"
	"                  or retired; write nothing\n"
	"      --strict    any file's error writes nothing (all or nothing)\n"
	"  -v, --verbose   list every record, not only the summary\n"
	"      --no-git    do not ask git for commits\n"
	"      --json      one JSON object: counts, items, errors, warnings\n"
	"\n"
	"exit status: 0 seeded (or planned), 1 a file had an error (the others\n"
	"seeded; with --strict nothing written) or nothing was found, 2 usage\n";

static const char *action_name(int a)
{
	switch (a) {
	case CAIRN_SEED_NEW: return "new";
	case CAIRN_SEED_CHANGED: return "changed";
	case CAIRN_SEED_RETIRED: return "retired";
	default: return "unchanged";
	}
}

/* The progress bar: "\rseed [#####     ] 12/59 files" on stderr. */
static void progress(void *user, size_t done, size_t total)
{
	size_t fill = total ? done * BAR_WIDTH / total : BAR_WIDTH, i;
	char bar[BAR_WIDTH + 1];

	(void)user;
	for (i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : ' ';
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\rseed [%s] %zu/%zu files", bar, done, total);
	if (done == total)
		fputs("\r\033[K", stderr); /* clear the line when done */
	fflush(stderr);
}

/* Append the lines of messages that contain `what` as a JSON array. */
static void messages_json(struct sbuf *sb, const char *messages,
			  const char *what)
{
	const char *p = messages ? messages : "";
	int first = 1;

	sbuf_addc(sb, '[');
	while (*p) {
		size_t n = strcspn(p, "\n");
		const char *tag = strstr(p, what);

		if (tag && (size_t)(tag - p) < n) {
			if (!first)
				sbuf_addc(sb, ',');
			json_add_str(sb, p, n);
			first = 0;
		}
		p += n;
		if (*p)
			p++;
	}
	sbuf_addc(sb, ']');
}

static void report_json(const cairn_seed_report *rep, int ok)
{
	struct sbuf sb = SBUF_INIT;
	size_t i;

	sbuf_addf(&sb,
		  "{\"ok\":%s,\"dry_run\":%s,\"files\":%zu,\"records\":%zu,"
		  "\"new\":%zu,\"changed\":%zu,\"unchanged\":%zu,"
		  "\"retired\":%zu,\"failed\":%zu,\"skipped\":%zu,\"errors\":",
		  ok ? "true" : "false", rep->dry_run ? "true" : "false",
		  rep->files, rep->records, rep->n_new, rep->n_changed,
		  rep->n_unchanged, rep->n_retired, rep->n_failed,
		  rep->n_skipped);
	messages_json(&sb, rep->messages, ": error: ");
	sbuf_adds(&sb, ",\"warnings\":");
	messages_json(&sb, rep->messages, ": warning: ");
	sbuf_adds(&sb, ",\"sources\":[");
	for (i = 0; i < rep->n_sources; i++) {
		const cairn_seed_source *s = &rep->sources[i];

		if (i)
			sbuf_addc(&sb, ',');
		sbuf_adds(&sb, "{\"path\":");
		json_add_strz(&sb, s->path);
		sbuf_adds(&sb, ",\"kind\":");
		json_add_strz(&sb, s->kind);
		sbuf_adds(&sb, ",\"status_text\":");
		json_add_strz(&sb, s->status_text);
		sbuf_adds(&sb, ",\"status\":");
		json_add_strz(&sb, s->status);
		sbuf_adds(&sb, ",\"rule\":");
		json_add_strz(&sb, s->rule);
		sbuf_adds(&sb, ",\"time\":");
		json_add_strz(&sb, s->time);
		sbuf_adds(&sb, ",\"supersedes\":");
		json_add_strz(&sb, s->supersedes);
		sbuf_adds(&sb, ",\"superseded_by\":");
		json_add_strz(&sb, s->superseded_by);
		sbuf_adds(&sb, ",\"skipped\":");
		if (s->skipped)
			json_add_strz(&sb, s->skipped);
		else
			sbuf_adds(&sb, "null");
		sbuf_adds(&sb, ",\"error\":");
		if (s->error)
			json_add_strz(&sb, s->error);
		else
			sbuf_adds(&sb, "null");
		sbuf_addf(&sb, ",\"records\":%zu}", s->records);
	}
	sbuf_adds(&sb, "],\"items\":[");
	for (i = 0; i < rep->n_items; i++) {
		const cairn_seed_item *it = &rep->items[i];

		if (i)
			sbuf_addc(&sb, ',');
		sbuf_addf(&sb, "{\"action\":\"%s\",\"id\":",
			  action_name(it->action));
		json_add_strz(&sb, it->id);
		sbuf_adds(&sb, ",\"path\":");
		json_add_strz(&sb, it->path);
		sbuf_adds(&sb, ",\"line\":");
		if (it->line > 0)
			sbuf_addf(&sb, "%ld", it->line);
		else
			sbuf_adds(&sb, "null");
		sbuf_adds(&sb, ",\"heading\":");
		json_add_strz(&sb, it->heading);
		sbuf_adds(&sb, ",\"kind\":");
		json_add_strz(&sb, it->kind);
		sbuf_adds(&sb, ",\"status\":");
		json_add_strz(&sb, it->status);
		sbuf_adds(&sb, ",\"title\":");
		json_add_strz(&sb, it->title);
		sbuf_addc(&sb, '}');
	}
	sbuf_adds(&sb, "]}");
	cli_print_json(&sb);
	sbuf_release(&sb);
}

/* One line per file: what was found and mapped, or why it was skipped. */
static void report_sources(const cairn_seed_report *rep)
{
	size_t i;

	for (i = 0; i < rep->n_sources; i++) {
		const cairn_seed_source *s = &rep->sources[i];

		if (s->error) {
			printf("file  %s  error: %s\n", s->path, s->error);
			continue;
		}
		if (s->skipped) {
			printf("file  %s  skipped: %s\n", s->path, s->skipped);
			continue;
		}
		printf("file  %s  %s", s->path, s->kind);
		if (*s->status_text)
			printf("  status '%s' -> %s (%s)", s->status_text,
			       s->status, s->rule);
		else
			printf("  no status -> %s", s->status);
		printf("  date %s", *s->time ? s->time : "none");
		if (*s->supersedes)
			printf("  supersedes %s", s->supersedes);
		if (*s->superseded_by)
			printf("  superseded by %s", s->superseded_by);
		printf("  %zu record%s\n", s->records,
		       s->records == 1 ? "" : "s");
	}
}

static void report_items(const cairn_seed_report *rep)
{
	size_t i;

	for (i = 0; i < rep->n_items; i++) {
		const cairn_seed_item *it = &rep->items[i];
		size_t n = strcspn(it->title, "\n");

		if (n > 60)
			n = 60;
		printf("%-9s  %-16s  %-10s  %s:%ld  %.*s\n",
		       action_name(it->action), it->id, it->status, it->path,
		       it->line, (int)n, it->title);
	}
}

/* Split $CAIRN_SEED_PATHS (colon-separated) into v; returns the count. */
static size_t env_paths(char *buf, const char **v, size_t max)
{
	size_t n = 0;
	char *save = NULL, *tok;

	for (tok = strtok_r(buf, ":", &save); tok && n < max;
	     tok = strtok_r(NULL, ":", &save))
		if (*tok)
			v[n++] = tok;
	return n;
}

int cmd_seed(int argc, char **argv)
{
	enum { O_NO_GIT = 256, O_JSON, O_STRICT };
	static const struct option lo[] = {
		{ "dry-run", 0, 0, 'n' }, { "verbose", 0, 0, 'v' },
		{ "no-git", 0, 0, O_NO_GIT }, { "json", 0, 0, O_JSON },
		{ "strict", 0, 0, O_STRICT },
		{ "help", 0, 0, 'h' },    { 0, 0, 0, 0 }
	};
	const char *envv[SEED_MAX_ENV_PATHS];
	cairn_seed_opts opts;
	cairn_seed_report rep;
	cairn_db *db = NULL;
	char **paths = NULL, *envbuf = NULL, cwd[PATH_MAX];
	const char *env = getenv("CAIRN_SEED_PATHS");
	size_t np = 0, i;
	int c, rc, ret = EXIT_OK, verbose = 0;

	memset(&opts, 0, sizeof(opts));
	memset(&rep, 0, sizeof(rep));
	while ((c = cli_getopt(argc, argv, "nvh", lo)) != -1) {
		switch (c) {
		case 'n': opts.dry_run = 1; break;
		case 'v': verbose = 1; break;
		case O_NO_GIT: opts.no_git = 1; break;
		case O_STRICT: opts.strict = 1; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(seed_help);
		default: return cli_usage("seed", "unknown option");
		}
	}
	if (cli_open(&db, 0))
		return EXIT_ERR;
	/* PATHs on the command line are relative to the current directory */
	if (optind < argc) {
		if (!getcwd(cwd, sizeof(cwd))) {
			ret = cli_fail("cannot read the current directory");
			goto out;
		}
		paths = calloc((size_t)(argc - optind), sizeof(*paths));
		if (!paths) {
			ret = cli_fail("out of memory");
			goto out;
		}
		for (i = 0; optind + (int)i < argc; i++) {
			const char *a = argv[optind + (int)i];
			struct sbuf sb = SBUF_INIT;

			if (a[0] == '/')
				sbuf_adds(&sb, a);
			else
				sbuf_addf(&sb, "%s/%s", cwd, a);
			paths[np] = sbuf_detach(&sb, NULL);
			if (!paths[np]) {
				ret = cli_fail("out of memory");
				goto out;
			}
			np++;
		}
	} else if (env && *env) {
		envbuf = strdup(env);
		if (!envbuf) {
			ret = cli_fail("out of memory");
			goto out;
		}
		opts.default_paths = envv;
		opts.n_default_paths = env_paths(envbuf, envv,
						 SEED_MAX_ENV_PATHS);
	}
	if (isatty(2) && !cli_state.json)
		opts.progress = progress;
	rc = cairn_seed(db, (const char *const *)paths, np, &opts, &rep);
	if (rep.messages) {
		const char *p = rep.messages;

		while (*p) {
			size_t n = strcspn(p, "\n");

			fprintf(stderr, "cairn: %.*s\n", (int)n, p);
			p += n;
			if (*p)
				p++;
		}
	}
	if (cli_state.json) {
		/* one JSON object: the error alone, or the report */
		if (rc != CAIRN_OK && rep.n_errors == 0) {
			ret = cli_db_fail(db, rc);
			goto out;
		}
		report_json(&rep, rc == CAIRN_OK && rep.n_errors == 0);
		if (rc != CAIRN_OK) {
			ret = EXIT_ERR;
		} else if (rep.n_errors > 0 || rep.searched) {
			ret = EXIT_ERR;
		}
		goto out;
	}
	if (rc != CAIRN_OK) {
		if (rep.n_errors > 0)
			ret = cli_fail("nothing was written: %zu error%s in the "
				       "files",
				       rep.n_errors,
				       rep.n_errors == 1 ? "" : "s");
		else
			ret = cli_db_fail(db, rc);
		goto out;
	}
	if (opts.dry_run || verbose) {
		report_sources(&rep);
		report_items(&rep);
	}
	if (rep.searched && rep.n_items == 0) {
		ret = cli_fail("no decision records found: looked in %s; name "
			       "the folder that holds them: cairn seed PATH",
			       rep.searched);
		goto out;
	}
	printf("%s%zu files, %zu records: %zu new, %zu changed, %zu "
	       "unchanged, %zu retired\n",
	       opts.dry_run ? "plan (dry run, nothing written): " : "seeded ",
	       rep.files - rep.n_failed, rep.records, rep.n_new, rep.n_changed,
	       rep.n_unchanged, rep.n_retired);
	/* templates and twins are skipped, not errors: a note says so */
	if (!opts.dry_run && !verbose) {
		size_t nt = 0, ntw = 0;

		for (i = 0; i < rep.n_sources; i++) {
			const char *sk = rep.sources[i].skipped;

			nt += sk && strncmp(sk, "a template", 10) == 0;
			ntw += sk && strncmp(sk, "a byte-identical twin", 21) == 0;
		}
		if (nt + ntw > 0)
			fprintf(stderr, "cairn: note: skipped %zu template%s and "
				"%zu byte-identical twin%s (`cairn seed "
				"--dry-run` lists them and why)\n",
				nt, nt == 1 ? "" : "s", ntw,
				ntw == 1 ? "" : "s");
	}
	if (rep.n_errors > 0)
		ret = cli_fail("%zu file%s with errors %s skipped (%s records "
			       "kept as they were): fix %s and seed again",
			       rep.n_failed, rep.n_failed == 1 ? "" : "s",
			       rep.n_failed == 1 ? "was" : "were",
			       rep.n_failed == 1 ? "its" : "their",
			       rep.n_failed == 1 ? "it" : "them");
out:
	cairn_seed_report_release(&rep);
	for (i = 0; i < np; i++)
		cairn_free(paths[i]);
	free(paths);
	free(envbuf);
	cairn_db_close(db);
	return ret;
}
