/*
 * cli.h -- shared helpers of the `cairn` command's source files (cli.c and
 * cli_*.c). Not part of libcairn.
 */
#ifndef CAIRN_CLI_H
#define CAIRN_CLI_H

#include <getopt.h>

#include "cairn.h"
#include "internal.h"

#define STORE_ERRMSG_CLI 1024 /* bytes of an error message kept by the CLI */

struct cli {
	int json; /* --json given */
};
extern struct cli cli_state;

/* Print "cairn: message" to stderr; return 1. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a usage error and a pointer to --help; return 2. */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print db's last error; return 1. */
int cli_db_fail(cairn_db *db, int rc);
/* Print help text to stdout; return 0. */
int cli_help(const char *text);
/*
 * Create (or migrate) the store in directory dir (a ".cairn" folder) with
 * its .gitignore, as `cairn init` does; 0, or 1 after printing why.
 */
int cli_store_create(const char *dir);
/* Open the workspace store; on failure prints why and returns 1. */
int cli_open(cairn_db **db, int create);
/* All of stdin as a record's text (16 MiB limit); caller frees with
 * cairn_free. NULL, having said why, when too big, unreadable or holding a
 * NUL byte (a text would end there). */
char *cli_read_stdin(void);
/* Any bytes of stdin up to limit (the rest of stdin is read and dropped). */
char *cli_read_stdin_max(size_t limit);
/* Append s to a comma-separated list (a repeatable option adds up). */
void cli_add_csv(struct sbuf *sb, const char *s);
/* Print a finished JSON buffer and a newline (or the buffer's error). */
void cli_print_json(struct sbuf *sb);
/* Append a record as a JSON object. */
void cli_record_json(struct sbuf *sb, const cairn_record *r, int with_body);
/* Append a recall result as `cairn recall --json` prints it (cli_recall.c). */
void cli_result_json(struct sbuf *sb, const cairn_result *res, int explain);
/* Print n records as one JSON array (with bodies) and a newline. */
void cli_print_records_json(cairn_record *const *v, size_t n);
/* getopt_long wrapper (callers reset optind = 0 before the first call). */
int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/* Commands implemented in cli_*.c, added to the table in cli.c. */
int cmd_recall(int argc, char **argv);
int cmd_receipt(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_seed(int argc, char **argv);
int cmd_hook(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_session(int argc, char **argv);
int cmd_reindex(int argc, char **argv);   /* cli_embed.c */
int cmd_model(int argc, char **argv);     /* cli_embed.c */
/* cli_model.c: `cairn model pull|list|rm` (-1: not one of them) */
int cli_model_sub(int argc, char **argv);
/*
 * Pull what (a catalogue name or URL) with the progress bar on a terminal
 * and print what was done (nothing with quiet_ok and --json); the file's
 * path into path when not NULL. 0, or 1 after printing the error.
 */
int cli_model_pull_run(const char *what, const char *sha, const char *name,
		       long long max_size, int quiet_ok, char *path,
		       size_t pathsize);
/*
 * --model M of reindex and setup: 1 when M names a pulled model (its file
 * into path, its catalogue entry or NULL into *entry), 0 when M is to be
 * taken as a file path or model id, -1 after printing that a catalogue
 * model is not pulled yet.
 */
int cli_model_resolve(const char *model, char *path, size_t size,
		      const cairn_model_entry **entry);
/*
 * `cairn setup claude-code --model M`: cli_model_setup_check before any
 * file is written (M is a catalogue embedding model or a URL; 0, else 2
 * after printing why), cli_model_setup after setup made sure of a store:
 * pull,
 * reindex every record (--yes), calibrate (probes, or the cosine floor
 * from built-in off-topic questions). Exit status.
 */
int cli_model_setup_check(const char *dir, const char *model);
int cli_model_setup(const char *dir, const char *model, const char *probes);
int cmd_capture(int argc, char **argv);   /* cli_capture.c */
int cmd_reflect(int argc, char **argv);   /* cli_capture.c */
int cmd_gc(int argc, char **argv);        /* cli_gc.c */
int cmd_supersede(int argc, char **argv); /* cli_gc.c */
int cmd_check(int argc, char **argv);     /* cli_drift.c */
int cmd_eval_drift(int argc, char **argv); /* cli_eval_drift.c: eval --drift */
int cmd_verify(int argc, char **argv);    /* cli_drift.c */
int cmd_mcp(int argc, char **argv);
int cmd_setup(int argc, char **argv);      /* cli_setup.c */
int cmd_remote(int argc, char **argv);     /* cli_remote.c */
int cmd_sync(int argc, char **argv);       /* cli_remote.c */
/* `cairn stats`: "unsynced NAME=N ..." (json: "NAME":N,...) into sb. */
void cli_sync_stats(cairn_db *db, int json, struct sbuf *sb);
/* `cairn stats --hook`: summarise .cairn/hook.log. */
int cli_hook_stats(int json);
/* The same summary as a JSON object, for the log in store directory dir. */
void cli_hook_stats_json(const char *dir, struct sbuf *sb);
/* `cairn serve`: the review console (cli_serve.c). */
int cmd_serve(int argc, char **argv);

#define CLI_MORE_COMMANDS                                                  \
	{ "seed", cmd_seed, "file-backed records from Markdown (ADRs, facts)" }, \
	{ "ingest", cmd_ingest, "transcripts (JSONL) as event records" },     \
	{ "session", cmd_session, "a session's events in their order" },      \
	{ "capture", cmd_capture, "propose candidates from command transcripts" }, \
	{ "reflect", cmd_reflect, "propose rules, decisions, facts from a session" }, \
	{ "recall", cmd_recall, "find the records that answer a question" },  \
	{ "hook", cmd_hook, "the Claude Code hook (reads hook JSON)" },      \
	{ "receipt", cmd_receipt, "show what a recall returned" },             \
	{ "calibrate", cmd_calibrate, "measure the no-match floor" },          \
	{ "reindex", cmd_reindex, "embed records for semantic recall" },      \
	{ "model", cmd_model, "pull, list, inspect models; embed texts" },  \
	{ "eval", cmd_eval, "measure recall on a question set" },     \
	{ "gc", cmd_gc, "age records now (stale, retired)" },                  \
	{ "supersede", cmd_supersede, "link a record to its replacement" },    \
	{ "check", cmd_check, "records whose source files changed since" },   \
	{ "verify", cmd_verify, "re-affirm a record against today's tree" },  \
	{ "mcp", cmd_mcp, "the MCP server for agents (stdio)" },            \
	{ "setup", cmd_setup, "install the Claude Code hooks, MCP server, Skill" }, \
	{ "remote", cmd_remote, "team memory: add, list, rm PostgreSQL remotes" }, \
	{ "sync", cmd_sync, "push and pull records with a team remote" }, \
	{ "serve", cmd_serve, "the review console in a browser (loopback)" },

#endif /* CAIRN_CLI_H */
