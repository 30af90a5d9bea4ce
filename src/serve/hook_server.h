/*
 * hook_server.h -- a running `cairn mcp` answers the prompt hook for its
 * workspace, warm, over a Unix socket in the store directory.
 *
 * Layer: on hook.h (the same rendering the hook process runs), json, and
 * vector.h/embed.h (hook_server_warm).
 * Above it: cli_mcp.c (serves) and cli_hook.c (asks).
 *
 * Why: `cairn hook` is a new process per prompt. Most of what it spends
 * goes to starting up, not to recall: loading and relocating the
 * executable, faulting in the store's pages, and with an embedding model
 * mapping, paging in and widening its weights. Claude Code also starts
 * `cairn mcp` (registered in .mcp.json) and keeps it for the session; it
 * has all of that in memory already. So the MCP server listens on
 * STORE_DIR/hook.sock and the hook process, when it can connect, sends the
 * event there and prints the answer; when it cannot (no server, a stale
 * socket, a path too long for a socket, `--local`), or the server does
 * not answer within HOOK_SERVER_WAIT_MS, it does the work itself. Either
 * way the text is made by the same functions (hook_prompt_block,
 * hook_session_block) on the same store, and the hook process keeps its
 * own deadline, log line and exit status.
 *
 * One server per workspace: the first to bind the socket serves; another
 * finds it alive and serves its MCP client only. A socket left by a
 * killed server (nobody accepts) is replaced by the next server. Only
 * connections from the same user are answered (SO_PEERCRED); the store
 * directory is 0700 and the socket 0600 besides.
 *
 * Protocol: one JSON line each way, then the connection closes.
 *   request  {"event":"UserPromptSubmit"|"SessionStart","prompt":S,
 *             "budget":N,"k":N}
 *   reply    {"out":S,"found":N,"injected":N,"chars":N,"receipt":S}
 *            (out: the hook's whole standard output, "" for nothing) or
 *            {"error":S}
 */
#ifndef CAIRN_HOOK_SERVER_H
#define CAIRN_HOOK_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "hook.h"

#define HOOK_SOCK "hook.sock"        /* in the store directory */
#define HOOK_SERVER_WAIT_MS 500      /* the hook then works on its own */
#define HOOK_SERVER_READ_MS 500      /* a request must arrive within this */
#define HOOK_SERVER_MAX_REQUEST ((size_t)64 << 10) /* larger prompts: local */
#define HOOK_SERVER_MAX_REPLY ((size_t)4 << 20)

struct hook_server {
	int fd;        /* listening socket, -1 when not serving */
	ino_t ino;     /* the socket file this server bound */
	char path[108]; /* its path (sun_path) */
};

/*
 * Listen on db's STORE_DIR/hook.sock. hs->fd is -1 when another live
 * server has it or the socket cannot be made (never an error: the hook
 * then works on its own).
 */
void hook_server_open(cairn_db *db, struct hook_server *hs);

/*
 * Answer one question that writes nothing (cairn_recall with no_receipt)
 * before serving: the first prompt then finds the tokenizer's tables, the
 * term and length files, the model (a local GGUF) and the vectors' int8
 * matrix loaded and paged in. On the 10k bge-small bench store a fresh
 * server's first prompt took 0.4-1.7 s in several starts at load 4-7
 * (0.38 s of one spent after mapping the vectors), past the hook's
 * HOOK_SERVER_WAIT_MS, so the hook did it itself; 20-60 ms in others (load
 * 2.4). This start-up takes 0.02 s warm, 1.3 s from a cold page cache,
 * before any client waits on it. Skipped when the
 * store's model is behind a network (an HTTP provider); errors are left
 * for the first prompt to meet.
 */
void hook_server_warm(cairn_db *db);

/* Accept one connection on hs->fd and answer it; errors end it quietly. */
void hook_server_answer(cairn_db *db, struct hook_server *hs);

/* Stop listening; remove the socket file if it is still this server's. */
void hook_server_close(struct hook_server *hs);

/*
 * As the signal handlers of `cairn mcp` need it: remove the socket file
 * if it is still this server's. Async-signal-safe.
 */
void hook_server_unlink(const struct hook_server *hs);

/*
 * The hook process: ask the server of store directory dir. Returns 0 and
 * *reply (the reply line, caller frees) when one answered; -1 when there
 * is no server to ask or it did not answer within wait_ms (work locally);
 * -2 when dir/hook.sock is not a socket of this user's (a symbolic link,
 * a file, someone else's): refused, never connected to.
 */
int hook_server_ask(const char *dir, const char *req, size_t len,
		    long wait_ms, char **reply);

#endif
