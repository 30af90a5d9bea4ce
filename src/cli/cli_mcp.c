/*
 * cli_mcp.c -- `cairn mcp`: the MCP server on stdin/stdout (SPEC 7).
 *
 * Layer: top (the cairn command). Opens the workspace store once, like
 * every command, and hands stdin and stdout to mcp_serve_side() until the
 * client closes stdin.
 *
 * Must never: print anything but JSON-RPC messages on stdout; diagnostics
 * go to stderr.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hook_server.h"
#include "mcp.h"

#define EXIT_OK 0
#define EXIT_ERR 1

static const char mcp_help[] =
	"usage: cairn mcp [--session ID]\n"
	"\n"
	"Serve this workspace's memory to an MCP client (Claude Code, or any\n"
	"client of the Model Context Protocol) over standard input and output:\n"
	"JSON-RPC 2.0, one message per line, protocol revision 2025-06-18\n"
	"(2025-03-26 and 2024-11-05 when the client asks for them). The client\n"
	"starts this command; it serves until its standard input ends, then\n"
	"exits 0. Standard output carries only protocol messages; errors go to\n"
	"standard error.\n"
	"\n"
	"tools: memory_recall, memory_read, memory_write, memory_forget,\n"
	"memory_candidates, find_precedents (docs/MCP.md describes each).\n"
	"memory_write stores candidates with origin 'agent': a human approves\n"
	"them with 'cairn approve ID'. No tool approves anything.\n"
	"\n"
	"While it runs it also answers 'cairn hook' for this workspace (prompt\n"
	"and session start) over the socket .cairn/hook.sock, with the store\n"
	"(memory-mapped), tokenizer and model it already has in memory; the\n"
	"hook does the work itself when no server answers. One server per\n"
	"workspace serves it.\n"
	"\n"
	"options:\n"
	"  --session ID      provenance of the records memory_write stores\n"
	"                    (default: mcp- and 12 random hex digits per\n"
	"                    process)\n"
	"  --no-hook-server  do not answer the hook\n"
	"\n"
	"Register it in .mcp.json: {\"mcpServers\":{\"cairn\":{\"command\":\n"
	"\"cairn\",\"args\":[\"mcp\"]}}}\n"
	"\n"
	"exit status: 0 end of input, 1 error (no workspace, output closed)\n";

/* Global: the signal handler removes its socket. */
static struct hook_server hook_srv = { -1, 0, "" };

static void on_hook_ready(void *db)
{
	hook_server_answer(db, &hook_srv);
}

/* Killed (not at the end of input): the socket file goes with us. */
static void on_signal(int sig)
{
	hook_server_unlink(&hook_srv);
	signal(sig, SIG_DFL);
	raise(sig);
}

int cmd_mcp(int argc, char **argv)
{
	enum { O_SESSION = 256, O_NO_HOOK };
	static const struct option lo[] = { { "session", 1, 0, O_SESSION },
					    { "no-hook-server", 0, 0, O_NO_HOOK },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	struct mcp_opts o;
	struct mcp_server *s = NULL;
	cairn_db *db = NULL;
	int c, rc, no_hook = 0;

	memset(&o, 0, sizeof(o));
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(mcp_help);
		if (c == O_SESSION)
			o.session = optarg;
		else if (c == O_NO_HOOK)
			no_hook = 1;
		else
			return cli_usage("mcp", "unknown option");
	}
	if (optind < argc)
		return cli_usage("mcp", "unexpected argument '%s'",
				 argv[optind]);
	if (cli_open(&db, 0))
		return EXIT_ERR;
	/* it answers every hook prompt and tool call from this one
	 * connection: the store's pages read in place, not re-read into a
	 * 2 MB cache (prompts of common words: server CPU 0.90x, hook p50
	 * 0.87x; docs/BENCHMARKS.md, "The served hook with a model") */
	cairn_db_map_files(db);
	rc = mcp_server_new(db, &o, &s);
	if (rc) {
		cairn_db_close(db);
		return cli_fail("cannot start the MCP server: %s",
				cairn_errstr(rc));
	}
	/* a client that goes away makes write() fail with EPIPE instead of
	 * killing the process */
	signal(SIGPIPE, SIG_IGN);
	if (!no_hook) {
		hook_server_open(db, &hook_srv);
		if (hook_srv.fd >= 0)
			hook_server_warm(db);
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
		signal(SIGHUP, on_signal);
	}
	rc = mcp_serve_side(s, STDIN_FILENO, STDOUT_FILENO, hook_srv.fd,
			    on_hook_ready, db);
	hook_server_close(&hook_srv);
	mcp_server_free(s);
	cairn_db_close(db);
	if (rc)
		return cli_fail("mcp: %s", rc == CAIRN_IO
				? "standard input or output failed (client "
				  "gone?)"
				: cairn_errstr(rc));
	return EXIT_OK;
}
