# EVIDENCE-OF: JSON-RPC ids above 2^53 come back
# unchanged (JSON-RPC: the id is echoed as sent)
$ cairn init >/dev/null
$ printf '%s\n' '{"jsonrpc":"2.0","id":12345678901234567890,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"}' '{"jsonrpc":"2.0","id":7,"method":"ping"}' '{"jsonrpc":"2.0","id":"s-1","method":"ping"}' | cairn mcp | grep -o '"id":[^,]*'
> "id":12345678901234567890
> "id":-9007199254740993
> "id":7
> "id":"s-1"
