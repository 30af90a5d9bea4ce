/*
 * mcp.h -- the MCP server (SPEC 7): JSON-RPC 2.0 over newline-delimited
 * messages, protocol revision 2025-06-18, the memory_* tools.
 *
 * Layer: top, beside cli and hook; sits on the public API (cairn.h) and
 * the JSON reader/writer. cli_mcp.c runs it on stdin/stdout; the unit tests
 * and the fuzz target drive mcp_handle_line() directly.
 *
 * Must never: write anything but JSON-RPC messages to its output (logs go
 * to stderr), let an agent approve a record, or stop serving because of a
 * malformed message.
 */
#ifndef CAIRN_MCP_H
#define CAIRN_MCP_H

#include <stddef.h>

#include "cairn.h"

#define MCP_MAX_LINE ((size_t)1 << 20) /* 1 MiB: a longer message is refused */
#define MCP_PROTOCOL_LATEST "2025-06-18"

struct mcp_server; /* opaque: one client session over one store */

struct mcp_opts {
	const char *session; /* provenance session id of writes; NULL: "mcp-" + random hex */
};

/*
 * A server over an open store (borrowed: the caller closes it after
 * mcp_server_free). opts may be NULL. Returns CAIRN_OK, CAIRN_NOMEM or
 * CAIRN_IO (no random bytes for the session id); *out: free with
 * mcp_server_free().
 */
int mcp_server_new(cairn_db *db, const struct mcp_opts *opts,
		   struct mcp_server **out);

/* Free a server (not its store). NULL is a no-op. */
void mcp_server_free(struct mcp_server *s);

/*
 * Handle one message: len bytes without the newline. On CAIRN_OK *reply
 * is the reply line without newline (caller frees with cairn_free()) and
 * *replylen its length, or NULL when the message gets no reply (a
 * notification, a response, an empty line). Malformed input is answered
 * with a JSON-RPC error, never a failure code; the only failure is
 * CAIRN_NOMEM.
 */
int mcp_handle_line(struct mcp_server *s, const char *line, size_t len,
		    char **reply, size_t *replylen);

/*
 * Serve: read messages from file descriptor infd until end of input, write
 * each reply and a newline to outfd. A line over MCP_MAX_LINE is discarded
 * as it is read (never buffered whole) and answered with an error. While
 * waiting for the client, call side(arg) whenever side_fd is readable
 * (cli_mcp.c: the hook's socket, hook_server.h); side_fd < 0: no side.
 * Returns CAIRN_OK at end of input, CAIRN_IO when reading or writing
 * fails (e.g. the client went away), CAIRN_NOMEM.
 */
int mcp_serve_side(struct mcp_server *s, int infd, int outfd, int side_fd,
		   void (*side)(void *), void *arg);

/* The protocol revision negotiated by initialize ("" before it). Borrowed. */
const char *mcp_protocol(const struct mcp_server *s);

#endif /* CAIRN_MCP_H */
