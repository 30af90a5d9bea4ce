/*
 * capture.h -- auto-capture and reflection (seed 003): success
 * events and lasting statements in a session transcript become candidate
 * records behind the approval gate.
 *
 * Layer: capture sits on ingest (line reader, times), json, secret and the
 * store; the CLI (cli_capture.c) and the Claude Code hook (Stop/SessionEnd)
 * sit on it. capture.c holds the command classifier and the writer;
 * reflect.c the statement rules (user rules, decisions, environment facts)
 * and the optional external command.
 *
 * Holds: capture_transcript(), the one call the hook makes, and the pieces
 * the unit tests reach: the command classifier, the statement extractor.
 *
 * Must never: store or print a secret (commands, output excerpts and quotes
 * are redacted before anything else sees them), turn a failed command into a
 * capability, overwrite a record a human accepted (an existing key is left
 * alone unless it is a candidate, which only gains proof), hold more than a
 * bounded amount of a transcript in memory, or fail on a malformed line (it
 * is counted and skipped). docs/CAPTURE.md is the user-facing description.
 */
#ifndef CAIRN_CAPTURE_H
#define CAIRN_CAPTURE_H

#include <stddef.h>

#include "cairn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAPTURE_MAX_CANDIDATES 256  /* distinct keys kept per transcript; more are counted and dropped */
#define CAPTURE_MAX_PROOFS 5        /* proof entries kept per candidate (first ones win) */
#define CAPTURE_GROUP_MIN 3         /* capture candidates of one command shape folded into one */
#define CAPTURE_GROUP_LIST 30       /* names a group's body lists (then "and N more") */
#define CAPTURE_MAX_PER_SESSION 20  /* capture candidates kept per session after grouping */
#define CAPTURE_EXCERPT_BYTES 400   /* bytes of command output kept in a proof */
#define CAPTURE_EXCERPT_LINES 6     /* lines of command output kept in a proof */
#define CAPTURE_MAX_PENDING 512     /* tool calls awaiting their result */
#define CAPTURE_LLM_TIMEOUT_MS 30000 /* default time an --llm-cmd may take */
#define CAPTURE_LLM_MAX_OUT ((size_t)1 << 20) /* bytes read from an --llm-cmd */
#define CAPTURE_LLM_MAX_IN ((size_t)8 << 20)  /* bytes of transcript piped to it */

/* What capture_transcript() looks for (bits of capture_opts.what). */
enum capture_what {
	CAPTURE_EVENTS = 1 << 0,  /* success events of commands (origin capture) */
	CAPTURE_RULES = 1 << 1,   /* the user's imperative rules */
	CAPTURE_REFLECT = 1 << 2, /* decisions and environment facts (origin reflection) */
	CAPTURE_ALL = CAPTURE_EVENTS | CAPTURE_RULES | CAPTURE_REFLECT,
};

/*
 * One proposed candidate, as handed to capture_opts.emit. Every string is
 * borrowed for the duration of the callback and already secret-filtered.
 */
struct capture_cand {
	const char *kind;    /* capability, procedure, rule, decision, fact */
	const char *key;     /* stable key, e.g. "capability:aws:auth:prod" */
	const char *title;   /* one line */
	const char *body;    /* the fact, for a human to approve */
	const char *proof;   /* command, exit, excerpt, time, session, FILE:LINE */
	const char *origin;  /* "capture" or "reflection" */
	const char *session; /* session id, or NULL */
	const char *time;    /* "YYYY-MM-DDTHH:MM:SS.mmmZ" of the first proof, or NULL */
	const char *path;    /* the transcript as given */
	long line;           /* JSONL line of the first proof */
	const char *action;  /* "new", "update" (more proof for a pending
				candidate), "duplicate" (nothing new),
				"known" (the key is accepted, rejected or
				retired: left alone), "error" (the store
				refused it: see capture_stats.errors) */
	const char *id;      /* the record id written or found; NULL in a dry run of a new key */
};

/* Options; a zeroed struct (or NULL) means the defaults. */
struct capture_opts {
	int dry_run;            /* 1: write nothing (db may then be NULL) */
	unsigned what;          /* CAPTURE_* bits; 0: CAPTURE_ALL */
	const char *session_id; /* session of lines that name none; NULL: the file name without .jsonl */
	size_t max_bytes;       /* >0: read only the last max_bytes of the file (from a line start) */
	double deadline_ms;     /* >0: CLOCK_MONOTONIC milliseconds after which reading stops
				   (what was found so far is still written) */
	const char *llm_cmd;    /* with CAPTURE_REFLECT: /bin/sh -c CMD gets the transcript on
				   stdin and prints candidate JSON lines {kind,key,title,body} */
	int llm_timeout_ms;     /* 0: CAPTURE_LLM_TIMEOUT_MS */
	void (*emit)(void *user, const struct capture_cand *c); /* each candidate with its action; may be NULL */
	void *user;             /* passed to emit */
};

/* What one transcript gave. */
struct capture_stats {
	size_t lines;      /* non-blank lines read */
	size_t malformed;  /* lines skipped: invalid JSON, too long, not a transcript line */
	size_t commands;   /* shell commands with a result seen */
	size_t failed;     /* of them: failed (error flag, non-zero exit, failure output) */
	size_t statements; /* user/assistant texts examined by the statement rules */
	size_t proposed;   /* distinct candidates found (by key) */
	size_t added;      /* new candidate records written (dry run: would be) */
	size_t updated;    /* pending candidates that gained proof */
	size_t duplicates; /* found again with nothing new: not written */
	size_t known;      /* keys already accepted, rejected or retired: left alone */
	size_t redacted;   /* secrets masked in commands, excerpts and quotes */
	size_t dropped;    /* candidates over CAPTURE_MAX_CANDIDATES or CAPTURE_MAX_PER_SESSION */
	size_t grouped;    /* candidates folded into a group of one command shape */
	size_t errors;     /* candidates the store refused (message in err) */
	size_t llm_lines;  /* lines from --llm-cmd accepted */
	size_t llm_bad;    /* lines from --llm-cmd rejected by validation */
	int truncated;     /* 1: max_bytes left the head of the file unread */
	int timed_out;     /* 1: the deadline stopped reading early */
};

/*
 * Run capture (and, per o->what, rules and reflection) on one transcript:
 * a Claude Code session JSONL (Bash tool_use + its tool_result; user and
 * assistant text) or a generic JSONL of commands {"time","cmd","exit",
 * "output"[,"session"]} (generic {"speaker","text"} lines give statements).
 * Candidates are written with cairn_record_write (origin capture or
 * reflection, hence status candidate), one per key; see the actions in
 * struct capture_cand. With o->dry_run nothing is written; db may be NULL
 * (then every key counts as new).
 *
 * st (required) is zeroed and filled. Returns CAIRN_OK when the file was
 * read (malformed lines and refused candidates are counted, not fatal; a
 * deadline is not an error), CAIRN_IO (cannot read the file; err says
 * why), CAIRN_INVALID (no db outside a dry run, a batch already open),
 * CAIRN_NOMEM, CAIRN_BUSY (then nothing was written). err (errsize bytes)
 * holds the first problem message ("" if none) and never a secret.
 */
int capture_transcript(cairn_db *db, const char *path,
		       const struct capture_opts *o, struct capture_stats *st,
		       char *err, size_t errsize);

/* ----------------------------------------------------------- internal */

/* A classified command: what a success of it proves. */
struct capture_class {
	char kind[16];    /* "capability", "procedure", or "" (nothing to learn) */
	char key[160];    /* stable key */
	char title[200];  /* one line */
	char body[600];   /* the fact */
	int setup;        /* 1: a set-up step (install, configure) that a later
			     build/test procedure lists */
};

/*
 * Classify one shell command (already redacted) that succeeded: cl->kind
 * is "" for trivial or unknown commands. Compound commands (&&, ;, |)
 * are classified by their most telling part. Returns 1 if a candidate.
 */
int capture_classify(const char *cmd, struct capture_class *cl);

/* Does this output of a command that exited 0 still show a failure? */
int capture_output_failed(const char *out);

/* A statement found by the rules in one text. */
struct reflect_stmt {
	char kind[16];   /* "rule", "decision", "fact" */
	char key[160];   /* "rule:never-touch-prod", ...: a few significant words */
	char title[600]; /* the sentence as a person would title it (no filler) */
	char text[600];  /* the sentence as said (trimmed, cut at a code point) */
};

/*
 * Find lasting statements in one message. from_user: 1 for the user's
 * words (rules come only from them), 0 for the assistant's. what: the
 * CAPTURE_RULES / CAPTURE_REFLECT bits. Fills up to max statements into
 * out; returns how many.
 */
size_t reflect_text(const char *text, int from_user, unsigned what,
		    struct reflect_stmt *out, size_t max);

/*
 * Validate one line from an --llm-cmd: a JSON object with exactly the
 * string members kind (rule, decision, fact, capability, procedure),
 * key ("kind:..." of 3..160 bytes, no spaces or controls), title (1..200
 * bytes, one line) and body (1..4000 bytes), valid UTF-8. On success
 * fills out (strings owned by the caller: free each with cairn_free) and
 * returns CAIRN_OK; else CAIRN_INVALID with err saying why.
 */
struct reflect_llm_cand {
	char *kind, *key, *title, *body;
};
int reflect_llm_parse(const char *line, size_t len,
		      struct reflect_llm_cand *out, char *err, size_t errsize);

/*
 * Run cmd via /bin/sh -c with in (len bytes) on its stdin; collect its
 * stdout (at most CAPTURE_LLM_MAX_OUT bytes) into *out (caller frees with
 * cairn_free). Kills it after timeout_ms. CAIRN_OK when it exited 0;
 * CAIRN_ERROR (non-zero exit, killed by the timeout: err says), CAIRN_IO,
 * CAIRN_NOMEM.
 */
int reflect_run_cmd(const char *cmd, const char *in, size_t len,
		    int timeout_ms, char **out, size_t *outlen, char *err,
		    size_t errsize);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_CAPTURE_H */
