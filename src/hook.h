/*
 * hook.h -- rendering what the agent hook injects (SPEC 5.4).
 */
#ifndef CAIRN_HOOK_H
#define CAIRN_HOOK_H

#include "internal.h"

#define HOOK_DEFAULT_BUDGET 4000 /* characters of injected text */
#define HOOK_DEFAULT_K 5         /* records recalled for a prompt */

struct hook_opts {
	size_t budget; /* at most this many characters injected */
	int k;         /* records recalled for a prompt (0: HOOK_DEFAULT_K) */
};

struct hook_result {
	size_t found;      /* records recalled (or listed) */
	size_t injected;   /* entries that fit the budget */
	char receipt[32];  /* the recall's receipt id ("" for a session start) */
};

/*
 * The block for a prompt: recall (with its receipt), then a header saying
 * these are past records, one entry per hit while the budget holds, and
 * how to read a record in full. Nothing relevant (or nothing fits): out
 * stays empty. Returns a cairn error code from recall.
 */
int hook_prompt_block(cairn_db *db, const char *prompt,
		      const struct hook_opts *o, struct sbuf *out,
		      struct hook_result *res);

/*
 * The always-on drawer for a session start: accepted/unverified rules and
 * capabilities, and the number of candidates waiting for approval.
 */
int hook_session_block(cairn_db *db, const struct hook_opts *o,
		       struct sbuf *out, struct hook_result *res);

/* Append Claude Code's hook output object for `event` carrying text. */
void hook_output_json(struct sbuf *sb, const char *event, const char *text,
		      size_t len);

#endif /* CAIRN_HOOK_H */
