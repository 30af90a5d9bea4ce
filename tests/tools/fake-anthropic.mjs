#!/usr/bin/env node
// tests/tools/fake-anthropic.mjs PORT_FILE LOG_FILE [SCRIPT_FILE]
//
// A fake Anthropic Messages API for tests/t_clients.sh: the real Claude
// Code client (ANTHROPIC_BASE_URL=http://127.0.0.1:PORT) talks to it
// instead of api.anthropic.com. Test tooling only; node's standard library
// only; listens on 127.0.0.1 and nowhere else.
//
//  - writes the port it listens on to PORT_FILE (through a rename, so a
//    reader never sees half of it);
//  - appends one JSON line per request to LOG_FILE:
//      {"n":1,"method":"POST","url":"/v1/messages?beta=true","body":{...}}
//    (body is the parsed JSON, or null);
//  - answers POST /v1/messages with a message: streamed as server-sent
//    events (message_start, content_block_start/delta/stop, message_delta,
//    message_stop) when the request asks for "stream": true, else as one
//    JSON object; POST /v1/messages/count_tokens with a count; anything
//    else with 404;
//  - SCRIPT_FILE (JSON) scripts tool calls:
//      {"rules": [{"contains": "run the tests", "tool": "Bash",
//                  "input": {"command": "make test", "description": "..."}}]}
//    A request that offers the rule's tool (so: the agent's own turn, not
//    a side request such as a title) and whose last turn is the user's
//    text containing a rule's "contains" gets that tool_use; a request
//    whose last turn carries a tool_result gets the closing text "Done."
//    Everything else gets the text "OK from the fake API.".
//
// Bounded: each request body is read up to 32 MiB, the server exits after
// 1,000 requests or after 600 s (the test also kills it when it ends).
import http from 'node:http';
import fs from 'node:fs';

const [portFile, logFile, scriptFile] = process.argv.slice(2);
if (!portFile || !logFile) {
	process.stderr.write('usage: fake-anthropic.mjs PORT_FILE LOG_FILE [SCRIPT_FILE]\n');
	process.exit(2);
}
const script = scriptFile ? JSON.parse(fs.readFileSync(scriptFile, 'utf8')) : { rules: [] };
const MAX_BODY = 32 << 20;
const MAX_REQUESTS = 1000;
let served = 0;
let ids = 0;

function texts(content) {
	if (typeof content === 'string') return [content];
	if (!Array.isArray(content)) return [];
	return content.filter((b) => b && b.type === 'text').map((b) => b.text);
}

function hasToolResult(content) {
	return Array.isArray(content) && content.some((b) => b && b.type === 'tool_result');
}

// The content blocks to answer with, and the stop reason.
function reply(body) {
	// the conversation's last turn; messages of role "system" (Claude Code
	// 2.1 sends a SessionStart hook's context as one) are not turns
	const msgs = Array.isArray(body && body.messages) ? body.messages : [];
	const turns = msgs.filter((m) => m && (m.role === 'user' || m.role === 'assistant'));
	const last = turns[turns.length - 1];
	const tools = Array.isArray(body && body.tools) ? body.tools.map((t) => t && t.name) : [];
	if (last && last.role === 'user' && hasToolResult(last.content))
		return { blocks: [{ type: 'text', text: 'Done.' }], stop: 'end_turn' };
	if (last && last.role === 'user') {
		const said = texts(last.content).join('\n');
		for (const r of script.rules || []) {
			if (said.includes(r.contains) && tools.includes(r.tool)) {
				ids++;
				return {
					blocks: [{ type: 'tool_use', id: `toolu_fake${ids}`, name: r.tool, input: r.input }],
					stop: 'tool_use',
				};
			}
		}
	}
	return { blocks: [{ type: 'text', text: 'OK from the fake API.' }], stop: 'end_turn' };
}

function message(body, blocks, stop) {
	ids++;
	return {
		id: `msg_fake${ids}`,
		type: 'message',
		role: 'assistant',
		model: (body && body.model) || 'claude-fake',
		content: blocks,
		stop_reason: stop,
		stop_sequence: null,
		usage: { input_tokens: 10, output_tokens: 5 },
	};
}

function sse(res, event, data) {
	res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function stream(res, body, blocks, stop) {
	res.writeHead(200, {
		'content-type': 'text/event-stream',
		'cache-control': 'no-cache',
		'request-id': `req_fake${ids + 1}`,
	});
	const m = message(body, [], null);
	m.usage = { input_tokens: 10, output_tokens: 1 };
	sse(res, 'message_start', { type: 'message_start', message: m });
	blocks.forEach((b, index) => {
		if (b.type === 'text') {
			sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
			sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
		} else {
			sse(res, 'content_block_start', {
				type: 'content_block_start',
				index,
				content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
			});
			sse(res, 'content_block_delta', {
				type: 'content_block_delta',
				index,
				delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
			});
		}
		sse(res, 'content_block_stop', { type: 'content_block_stop', index });
	});
	sse(res, 'message_delta', {
		type: 'message_delta',
		delta: { stop_reason: stop, stop_sequence: null },
		usage: { output_tokens: 5 },
	});
	sse(res, 'message_stop', { type: 'message_stop' });
	res.end();
}

const server = http.createServer((req, res) => {
	const chunks = [];
	let size = 0;
	req.on('data', (c) => {
		size += c.length;
		if (size <= MAX_BODY) chunks.push(c);
	});
	req.on('end', () => {
		served++;
		let body = null;
		try {
			body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
		} catch {
			body = null;
		}
		fs.appendFileSync(logFile, JSON.stringify({ n: served, method: req.method, url: req.url, body }) + '\n');
		const path = (req.url || '').split('?')[0];
		if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ input_tokens: 10 }));
		} else if (req.method === 'POST' && path === '/v1/messages' && body) {
			const { blocks, stop } = reply(body);
			if (body.stream) {
				stream(res, body, blocks, stop);
			} else {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end(JSON.stringify(message(body, blocks, stop)));
			}
		} else {
			res.writeHead(404, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'fake API: not here' } }));
		}
		if (served >= MAX_REQUESTS) server.close();
	});
});

server.listen(0, '127.0.0.1', () => {
	const tmp = `${portFile}.tmp`;
	fs.writeFileSync(tmp, `${server.address().port}\n`);
	fs.renameSync(tmp, portFile);
});
setTimeout(() => process.exit(0), 600 * 1000).unref();
