#!/usr/bin/python3
# tests/tools/claude-approve.py CLAUDE PROJECT_DIR -- approve a project's MCP
# server the way a user does: start the interactive `claude` in
# PROJECT_DIR on a pseudo-terminal, answer "Yes, I trust this folder", "Use
# this MCP server" (the dialog "New MCP server found in this project") and
# "Yes" to the API key in the environment, then end it. Test tooling for
# tests/clients/claude-code.sh; the screens are those of the Claude Code
# version tests/tools/claude-code-setup pins.
#
# Prints one line per dialog answered ("answered: trust" ...), and exits 0
# when the trust and MCP dialogs were both answered, 1 otherwise (with the
# last screen text on stderr). Bounded: 40 s for the dialogs, then the
# client is sent SIGTERM and, 2 s later, SIGKILL.
import os
import pty
import re
import select
import signal
import sys
import time

if len(sys.argv) != 3:
    sys.stderr.write("usage: claude-approve.py CLAUDE PROJECT_DIR\n")
    sys.exit(2)
claude, project = sys.argv[1], sys.argv[2]

UP, DOWN, ENTER = b"\x1b[A", b"\x1b[B", b"\r"
# (name, text on the screen with all white space removed, keys to send)
DIALOGS = [
    ("trust", "Yes,Itrustthisfolder", [DOWN, ENTER]),
    ("mcp", "NewMCPserverfoundinthisproject", [UP, UP, ENTER]),
    ("api-key", "DoyouwanttousethisAPIkey", [UP, ENTER]),
]
ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=]*[a-zA-Z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.|\s")


def screen(raw):
    return ESCAPES.sub(b"", raw).decode("utf-8", "replace")


pid, fd = pty.fork()
if pid == 0:
    os.chdir(project)
    os.execv(claude, [claude])
raw = b""
answered = []
end = time.monotonic() + 40
while time.monotonic() < end and len(answered) < len(DIALOGS):
    ready, _, _ = select.select([fd], [], [], 0.2)
    if ready:
        try:
            raw += os.read(fd, 65536)
        except OSError:
            break
    text = screen(raw)
    for name, marker, keys in DIALOGS:
        if name not in answered and marker in text:
            time.sleep(0.5)  # let the dialog take keys
            for k in keys:
                os.write(fd, k)
                time.sleep(0.3)
            answered.append(name)
            print("answered: " + name, flush=True)
            raw = b""


def drain(seconds):
    """Read (and drop) the client's output for a while, so it never blocks."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:  # the client is gone
                time.sleep(max(0.0, until - time.monotonic()))
                return


def stop():
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        for _ in range(20):
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
            drain(0.1)


drain(2)  # the client writes the choices before it is ended
stop()
if "trust" in answered and "mcp" in answered:
    sys.exit(0)
sys.stderr.write("claude-approve: answered %s; last screen: %s\n" % (answered, screen(raw)[-600:]))
sys.exit(1)
