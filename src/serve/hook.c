/*
 * hook.c -- the hook's answer (SPEC 5.4): Claude Code's output object for
 * a prompt or a session start, around the block hook_inject.c renders.
 *
 * Layer: a face (docs/ARCHITECTURE.md, "Layers"), on hook_inject.h. Above
 * it: cli_hook.c (the process: stdin, deadline, log, exit codes) and
 * hook_server.c (a running `cairn mcp` answering the hook).
 *
 * Must never: print anything but the output object (or nothing).
 */
#include <string.h>

#include "hook.h"
#include "json.h"

void hook_output_json(struct sbuf *sb, const char *event, const char *text,
		      size_t len)
{
	sbuf_adds(sb, "{\"hookSpecificOutput\":{\"hookEventName\":");
	json_add_strz(sb, event);
	sbuf_adds(sb, ",\"additionalContext\":");
	json_add_str(sb, text, len);
	sbuf_adds(sb, "}}\n");
}

int hook_answer(cairn_db *db, const char *event, const char *prompt,
		const struct hook_opts *o, struct sbuf *out,
		struct hook_result *res, size_t *chars)
{
	struct sbuf text = SBUF_INIT;
	int rc;

	*chars = 0;
	if (event && strcmp(event, "UserPromptSubmit") == 0 && prompt &&
	    *prompt)
		rc = hook_prompt_block(db, prompt, o, &text, res);
	else if (event && strcmp(event, "SessionStart") == 0)
		rc = hook_session_block(db, o, &text, res);
	else
		return cairn_db_fail(db, CAIRN_INVALID,
				   "not a prompt or a session start");
	if (rc == CAIRN_OK && text.len > 0)
		hook_output_json(out, event, text.buf, text.len);
	if (rc == CAIRN_OK && out->err)
		rc = cairn_db_fail(db, CAIRN_NOMEM, "out of memory");
	*chars = text.len;
	sbuf_release(&text);
	return rc;
}
