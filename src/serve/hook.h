/*
 * hook.h -- the agent hook's answer (SPEC 5.4): Claude Code's output
 * object around the block of hook_inject.h.
 *
 * Layer: a face, on hook_inject.h (which it includes: the options, the
 * result and the blocks). The process (stdin, deadline, log, exit code) is
 * cli_hook.c; a running `cairn mcp` answers the hook through
 * hook_server.h.
 */
#ifndef CAIRN_HOOK_H
#define CAIRN_HOOK_H

#include "hook_inject.h"

/*
 * A hook process sets its connection up with cairn_db_short_lived() (the
 * store read through a memory map, no checkpoint at close, receipts
 * spooled) and calls cairn_db_checkpoint() before closing (cairn.h).
 */

/* Append Claude Code's hook output object for `event` carrying text. */
void hook_output_json(struct sbuf *sb, const char *event, const char *text,
		      size_t len);

/*
 * The hook's whole standard output for a UserPromptSubmit (a non-empty
 * prompt) or a SessionStart: the block as Claude Code's output object,
 * nothing when there is no block. *chars: characters in the block. What
 * `cairn hook` prints and what a running `cairn mcp` answers it with
 * (hook_server.h). CAIRN_INVALID for another event (db's message says
 * so), else the block's errors.
 */
int hook_answer(cairn_db *db, const char *event, const char *prompt,
		const struct hook_opts *o, struct sbuf *out /* OUT */,
		struct hook_result *res /* OUT */, size_t *chars);

#endif /* CAIRN_HOOK_H */
