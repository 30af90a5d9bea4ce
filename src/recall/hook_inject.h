/*
 * hook_inject.h -- rendering what the agent hook injects (SPEC 5.4): the
 * block for a prompt within a character budget, the session-start drawer.
 *
 * Layer: recall (docs/ARCHITECTURE.md, "Layers"), on the public API. The
 * hook (hook.h, cli_hook.c, hook_server.c) and `cairn eval --hook`
 * (eval.c) call the same recall and rendering functions, so that what
 * eval scores is what the hook prints.
 */
#ifndef CAIRN_HOOK_INJECT_H
#define CAIRN_HOOK_INJECT_H

#include "internal.h"

#define HOOK_DEFAULT_BUDGET 4000 /* characters of injected text */
#define HOOK_MAX_BUDGET 20000    /* the most --budget may ask for */
#define HOOK_MAX_QUESTION (64 * 1024) /* bytes of a prompt recalled for:
					 cairn_recall's limit; a longer
					 prompt is recalled by its start */
#define HOOK_DEFAULT_K 3         /* entries (distinct sources) for a prompt: precision first */
#define HOOK_MAX_K 20            /* most entries a block may hold */
#define HOOK_ASK 3               /* recall asks k x this hits: the chunks of one file collapse into one entry */
#define HOOK_MIN_ANSWER 0.33     /* an entry's least answerability (hook_inject.c hook_evidence) */
#define HOOK_NEAR 0.8            /* a later entry's least answerability, as a share of the first's */

struct hook_opts {
	size_t budget;  /* at most this many characters injected (0: HOOK_DEFAULT_BUDGET) */
	int k;          /* entries for a prompt, 1..HOOK_MAX_K (0: HOOK_DEFAULT_K) */
	int no_receipt; /* 1: recall writes no receipt and no last_seen (eval) */
	int embed_budget_ms; /* recall's embed_budget_ms (0: its default) */
	int any_answer; /* 1: no HOOK_MIN_ANSWER, the word test only (cairn
			   eval --sweep --hook applies the floors after) */
};

struct hook_result {
	size_t found;             /* hits recall returned (or records listed) */
	size_t injected;          /* entries that fit the budget */
	size_t shown[HOOK_MAX_K]; /* prompt: index into the recall's hits of each entry */
	char receipt[32];         /* the recall's receipt id ("" for a session start or no_receipt) */
	int embed_down;           /* 1: the embedding provider failed: lexical only */
};

/*
 * Recall for a prompt as the hook does: k x HOOK_ASK hits, default kinds
 * and statuses, the store's no-match floor. *out: free with
 * cairn_result_free(). Errors: those of cairn_recall().
 */
int hook_prompt_recall(cairn_db *db, const char *prompt,
		       const struct hook_opts *o, cairn_result **out /* OUT */);

/*
 * The entries a block would hold, before the budget: the hits of rr (as
 * hook_prompt_recall leaves them: by answerability) at or above floor,
 * one per source (a file-backed record's file, else the record), a later
 * one within HOOK_NEAR of the first's answerability, at most k (<=
 * HOOK_MAX_K). Their indices into rr->hits go to sel; returns how many.
 * hook_prompt_render renders them (floor 0: hook_prompt_recall applied
 * HOOK_MIN_ANSWER); `cairn eval --sweep --hook` counts them at each floor.
 */
size_t hook_select(const cairn_result *rr, size_t k, double floor,
		   size_t *sel /* OUT: k slots */);

/*
 * Render the block for a recall result: a header saying these are past
 * records, not the conversation; one entry per source (a file-backed
 * record's file, else the record) in rank order, at most k, while the
 * budget holds (the first entry that does not fit ends the block); a
 * footer naming how to read a record in full (MCP memory_read, `cairn get
 * ID`). No hit, or not even one entry fits: out stays empty. res->shown
 * lists the hits rendered. Returns CAIRN_OK or CAIRN_NOMEM.
 */
int hook_prompt_render(const cairn_result *rr, const struct hook_opts *o,
		       struct sbuf *out /* OUT */,
		       struct hook_result *res /* OUT */);

/* hook_prompt_recall() then hook_prompt_render(). */
int hook_prompt_block(cairn_db *db, const char *prompt,
		      const struct hook_opts *o, struct sbuf *out /* OUT */,
		      struct hook_result *res /* OUT */);

/*
 * The always-on drawer for a session start: accepted/unverified rules and
 * capabilities, and the number of candidates waiting for approval.
 */
int hook_session_block(cairn_db *db, const struct hook_opts *o,
		       struct sbuf *out /* OUT */,
		       struct hook_result *res /* OUT */);

/* The line every non-empty block ends with: how to read a record in full. */
extern const char hook_read_hint[];

#endif /* CAIRN_HOOK_INJECT_H */
