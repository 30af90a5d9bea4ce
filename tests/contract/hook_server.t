# EVIDENCE-OF: SPEC 5.4 -- a running `cairn mcp` answers the hook for its
# workspace over .cairn/hook.sock with the very text the hook process makes
# on its own; one server per workspace; without a live server (none, a
# killed one's socket, --local, --no-hook-server) the hook works alone
$ cairn init >/dev/null && printf '%s\n' '{"id":"pg","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL 15 on RDS."}' '{"id":"r1","kind":"rule","title":"Never touch PROD","body":"Never run scripts against the production database by hand."}' | cairn import >/dev/null
# no server: the hook process answers itself (its log line has no via=mcp)
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" > p.json && printf '{"hook_event_name":"SessionStart","cwd":"%s"}' "$PWD" > s.json && cairn hook < p.json > local.out && cairn hook < s.json > local-s.out && grep -c via=mcp .cairn/hook.log
> 0
? 1
$ grep -c 'Use PostgreSQL' local.out local-s.out
> local.out:1
> local-s.out:0
# a server (its input open for 30 s at most) listens, owner only
$ (sleep 30 | cairn mcp >/dev/null 2>&1 & echo $! > srv1.pid); for i in $(seq 200); do [ -S .cairn/hook.sock ] && break; sleep 0.05; done; stat -c %a .cairn/hook.sock
> 600
# served: the same bytes as the hook made alone, logged via=mcp
$ cairn hook < p.json | cmp - local.out && tail -1 .cairn/hook.log | cut -f2,3
> UserPromptSubmit	injected
$ tail -1 .cairn/hook.log | grep -c 'via=mcp$'
> 1
$ cairn hook < s.json | cmp - local-s.out && tail -1 .cairn/hook.log | grep -c 'via=mcp$'
> 1
# options travel with the request: a budget too small for any entry
$ cairn hook --budget 50 < p.json | wc -c
> 0
$ tail -1 .cairn/hook.log | cut -f3
> empty
# a malformed request gets an error line, a silent client is dropped after
# 500 ms, and the server goes on serving
$ /usr/bin/python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(".cairn/hook.sock"); s.sendall(b"not json\n"); print(s.recv(4096).decode().strip())'
> {"error":"the request is not a JSON object"}
$ /usr/bin/python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(".cairn/hook.sock"); s.sendall(b"{\"event\":\"Stop\"}\n"); print(s.recv(4096).decode().strip())'
> {"error":"not a prompt or a session start"}
$ /usr/bin/python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(".cairn/hook.sock"); s.settimeout(5); print(repr(s.recv(4096)))'
> b''
$ cairn hook < p.json | cmp - local.out && tail -1 .cairn/hook.log | grep -c 'via=mcp$'
> 1
# --local: the server is not asked
$ cairn hook --local < p.json | cmp - local.out && tail -1 .cairn/hook.log | grep -c via=mcp
> 0
? 1
# the served prompt's receipt is spooled as the hook's own, and found
$ cairn receipt "$(grep 'via=mcp' .cairn/hook.log | head -1 | grep -o 'receipt=q[0-9a-f]*' | cut -d= -f2)" --json | jq -c '{pending, first: .ids[0]}'
> {"pending":true,"first":"pg"}
# stats --hook counts the served calls
$ n=$(grep -c 'via=mcp' .cairn/hook.log); [ "$n" -gt 0 ] && [ "$(cairn stats --hook --json | jq .served)" = "$n" ] && echo same
> same
# a second server finds the first alive and leaves the socket to it
$ echo | cairn mcp >/dev/null 2>&1; cairn hook < p.json >/dev/null && tail -1 .cairn/hook.log | grep -c 'via=mcp$'
> 1
# a server killed without clean-up leaves a socket nobody accepts on: the
# hook answers alone, with the same text
$ kill -9 "$(cat srv1.pid)" && sleep 0.2 && [ -S .cairn/hook.sock ] && cairn hook < p.json | cmp - local.out && tail -1 .cairn/hook.log | grep -c via=mcp
> 0
? 1
# the next server takes the stale socket over
$ (sleep 30 | cairn mcp >/dev/null 2>&1 & echo $! > srv2.pid); for i in $(seq 200); do cairn hook < p.json > served.out; tail -1 .cairn/hook.log | grep -q 'via=mcp$' && break; sleep 0.05; done; cmp served.out local.out && tail -1 .cairn/hook.log | grep -c 'via=mcp$'
> 1
# SIGTERM: the server removes its socket on the way out
$ kill "$(cat srv2.pid)"; for i in $(seq 200); do [ -e .cairn/hook.sock ] || break; sleep 0.05; done; [ -e .cairn/hook.sock ] && echo left || echo gone
> gone
# --no-hook-server: no socket at all
$ echo | cairn mcp --no-hook-server >/dev/null && [ -e .cairn/hook.sock ] && echo made || echo none
> none
