// tests/tools/mcp-client.mjs SDK_DIR CAIRN WORKSPACE -- drive `cairn mcp`
// with the official MCP TypeScript SDK (@modelcontextprotocol/sdk, installed
// into SDK_DIR by tests/tools/mcp-setup): spawn the server with the SDK's
// StdioClientTransport in WORKSPACE, initialize, list the tools, call every
// tool and check the answers. The SDK's Client validates each result's
// structuredContent against the tool's outputSchema (with ajv) and throws
// when it does not match, so every successful call below is also a schema
// check. Input schemas are compiled with the SDK's ajv and each argument
// object sent is checked against them: the server must refuse exactly what
// its schema refuses.
//
// WORKSPACE must hold a store (cairn init) with the records t_mcp.sh
// writes: a fact with key deploy:staging, a decision about PostgreSQL, a
// rule, and a file-backed ADR seeded from docs/adr/0001-queue.md.
//
// Test tooling only (node 20). Prints one line per failure and ends with
// "N passed, N failed"; exit status 1 if anything failed.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [sdkDir, cairn, workspace] = process.argv.slice(2);
if (!sdkDir || !cairn || !workspace) {
	console.error('usage: mcp-client.mjs SDK_DIR CAIRN WORKSPACE');
	process.exit(2);
}
const mod = (p) =>
	import(pathToFileURL(path.join(sdkDir, 'node_modules', p)).href);
const { Client } = await mod('@modelcontextprotocol/sdk/dist/esm/client/index.js');
const { StdioClientTransport } = await mod('@modelcontextprotocol/sdk/dist/esm/client/stdio.js');
const AjvMod = await mod('ajv/dist/ajv.js');
const Ajv = AjvMod.default.default ?? AjvMod.default;

let passed = 0, failed = 0;
function check(cond, what) {
	if (cond) passed++;
	else { failed++; console.log(`FAIL ${what}`); }
}

const env = {};
for (const k of ['CAIRN_GLOBAL', 'CAIRN_CACHE_DIR', 'XDG_DATA_HOME', 'HOME',
	'ASAN_OPTIONS', 'UBSAN_OPTIONS', 'CAIRN_JIEBA_DICT'])
	if (process.env[k] !== undefined) env[k] = process.env[k];
env.CAIRN_DIR = path.join(workspace, '.cairn');

const transport = new StdioClientTransport({
	command: cairn, args: ['mcp', '--session', 'sdk-session-1'],
	cwd: workspace, env, stderr: 'inherit',
});
const client = new Client({ name: 'cairn-sdk-test', version: '1.0.0' });
const ajv = new Ajv({ strict: false, allErrors: true });

async function main() {
	await client.connect(transport);
	const info = client.getServerVersion();
	check(info && info.name === 'cairn', `serverInfo.name is cairn (${JSON.stringify(info)})`);
	check(client.getServerCapabilities()?.tools !== undefined, 'tools capability');
	check(typeof client.getInstructions() === 'string', 'instructions');

	await client.ping();
	passed++;

	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name).sort();
	check(JSON.stringify(names) === JSON.stringify(['find_precedents',
		'memory_candidates', 'memory_forget', 'memory_read',
		'memory_recall', 'memory_write']), `tool names ${names}`);
	check(!names.some((n) => /approve|reject|accept/.test(n)), 'no approving tool');
	const inputValidators = {};
	for (const t of tools) {
		check(t.outputSchema && t.outputSchema.type === 'object', `${t.name} has an outputSchema`);
		check(typeof t.description === 'string' && t.description.includes('Side effects'),
			`${t.name} description states side effects`);
		try {
			inputValidators[t.name] = ajv.compile(t.inputSchema);
			ajv.compile(t.outputSchema);
			passed++;
		} catch (e) {
			check(false, `${t.name} schemas compile: ${e.message}`);
		}
	}

	// call a tool; check schema/server agreement and the text block
	async function call(name, args, wantError = false) {
		const v = inputValidators[name];
		const schemaOk = v ? v(args) : true;
		let r;
		try {
			r = await client.callTool({ name, arguments: args });
		} catch (e) {
			check(false, `${name} ${JSON.stringify(args)} threw: ${e.message}`);
			return null;
		}
		const isErr = r.isError === true;
		check(isErr === wantError, `${name} ${JSON.stringify(args)}: isError ${isErr}, want ${wantError}`);
		if (!isErr) {
			check(schemaOk, `${name} ${JSON.stringify(args)}: accepted although its inputSchema refuses it`);
			const text = r.content?.[0]?.type === 'text' ? r.content[0].text : null;
			let same = false;
			try { same = JSON.stringify(JSON.parse(text)) === JSON.stringify(r.structuredContent); } catch { }
			check(same, `${name}: text block is the structured content`);
		}
		return r;
	}

	// memory_write: always a candidate, with our provenance
	let r = await call('memory_write', { kind: 'decision', key: 'cache:sessions',
		title: 'Sessions in Valkey', body: 'Keep web sessions in Valkey, 24 hour expiry.',
		proof: 'load test passed' });
	const cand = r?.structuredContent?.record;
	check(cand?.status === 'candidate', `write status ${cand?.status}`);
	check(cand?.origin === 'agent', `write origin ${cand?.origin}`);
	check(cand?.source?.session === 'sdk-session-1', `write session ${cand?.source?.session}`);
	check(/memory_write/.test(cand?.source?.tool) && /cairn-sdk-test 1\.0\.0/.test(cand?.source?.tool),
		`write tool provenance ${cand?.source?.tool}`);
	// status / origin arguments are refused, by the schema and the server
	r = await call('memory_write', { kind: 'fact', body: 'x', status: 'accepted' }, true);
	check(/unknown argument/.test(r?.content?.[0]?.text), 'refusal names the unknown argument');
	check(inputValidators.memory_write({ kind: 'fact', body: 'x', status: 'accepted' }) === false,
		'inputSchema refuses status');
	await call('memory_write', { kind: 'fact', body: 'x', origin: 'human' }, true);
	// secrets
	r = await call('memory_write', { kind: 'capability',
		body: 'deploy key AKIAJ3KQ7ZP4XN2WLM5R works' }, true);
	check(/secret/.test(r?.content?.[0]?.text) && !/AKIAJ3KQ7ZP4XN2WLM5R/.test(r?.content?.[0]?.text),
		'secret refused without echo');

	// memory_candidates: lists it
	r = await call('memory_candidates', {});
	check(r?.structuredContent?.candidates?.some((c) => c.id === cand?.id), 'candidate listed');
	check(r?.structuredContent?.candidates?.every((c) => c.status === 'candidate'), 'only candidates listed');

	// memory_recall
	r = await call('memory_recall', { query: 'how to deploy to staging', k: 3 });
	const hits = r?.structuredContent?.results ?? [];
	check(hits[0]?.key === 'deploy:staging', `recall top key ${hits[0]?.key}`);
	check(typeof r?.structuredContent?.receipt === 'string' && r.structuredContent.receipt.length > 0, 'receipt id');
	check(!hits.some((h) => h.id === cand?.id), 'candidate not in default recall');
	r = await call('memory_recall', { query: 'Valkey sessions', statuses: ['candidate'] });
	check(r?.structuredContent?.results?.some((h) => h.id === cand?.id), 'candidate found with statuses');
	r = await call('memory_recall', { query: 'zebra giraffe savanna photography' });
	check(r?.structuredContent?.count === 0, 'no-answer query is empty');
	await call('memory_recall', { query: 5 }, true);
	await call('memory_recall', { query: 'x', k: 0 }, true);
	await call('memory_recall', { query: 'x', kinds: ['bogus'] }, true);

	// find_precedents: decisions and ADRs only
	r = await call('find_precedents', { query: 'PostgreSQL orders database' });
	const pk = (r?.structuredContent?.results ?? []).map((h) => h.kind);
	check(pk.length >= 1 && pk.every((k) => k === 'decision' || k === 'adr'), `precedent kinds ${pk}`);
	r = await call('find_precedents', { query: 'message queue NATS' });
	const adr = r?.structuredContent?.results?.[0];
	check(adr?.kind === 'adr' && /docs\/adr\/0001-queue\.md/.test(adr?.source?.path ?? ''),
		`file-backed ADR found with its path (${adr?.source?.path})`);

	// memory_read
	r = await call('memory_read', { key: 'deploy:staging' });
	check(r?.structuredContent?.record?.body === 'Deploy the orders service with make deploy-staging after the migrations.',
		'read by key returns the full body');
	r = await call('memory_read', { id: cand?.id });
	check(r?.structuredContent?.record?.status === 'candidate', 'read by id returns any status');
	r = await call('memory_read', { id: adr?.id });
	check(r?.structuredContent?.file_backed === true && /^docs\/adr\/0001-queue\.md:\d+$/.test(r?.structuredContent?.edit),
		`file-backed read names the file (${r?.structuredContent?.edit})`);
	await call('memory_read', {}, true);

	// memory_forget: a human's rule is not retired by an agent, only
	// proposed for a human to confirm
	r = await call('memory_forget', { key: 'rule:prod' });
	check(r?.structuredContent?.pending === true && r?.structuredContent?.status !== 'retired' &&
		/^cairn approve /.test(r?.structuredContent?.confirm_with ?? ''), 'forget of a human rule is pending');
	r = await call('memory_recall', { query: 'PROD database migrations' });
	check((r?.structuredContent?.results ?? []).some((h) => h.key === 'rule:prod'), 'pending forget still recalled');
	r = await call('memory_forget', { id: adr?.id }, true);
	check(/docs\/adr\/0001-queue\.md/.test(r?.content?.[0]?.text), 'file-backed forget names the file');
	r = await call('memory_read', { id: adr?.id });
	check(r?.structuredContent?.record?.status === 'accepted', 'file-backed record unchanged');

	// unknown tool: a JSON-RPC error (-32602)
	try {
		await client.callTool({ name: 'memory_approve', arguments: { id: cand?.id } });
		check(false, 'unknown tool must fail');
	} catch (e) {
		check(e.code === -32602, `unknown tool code ${e.code}`);
	}
	r = await call('memory_read', { id: cand?.id });
	check(r?.structuredContent?.record?.status === 'candidate', 'still a candidate at the end');
}

try {
	await main();
} catch (e) {
	check(false, `client failed: ${e.stack ?? e}`);
}
try { await client.close(); } catch { }
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
