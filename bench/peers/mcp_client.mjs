// bench/peers/mcp_client.mjs -- drive an MCP memory server with the official
// SDK client (@modelcontextprotocol/sdk) for `make bench-peers`.
//
// Layer: benchmark tooling (never shipped). Runs with PEERS_NODE_MODULES set to
// build/peers/node_modules, where bench/peers/setup installed the SDK.
// Holds: one client per process, one server child per process.
// Must never: reach the network; it speaks only to the child over stdio.
//
// usage: node mcp_client.mjs --style cairn|memory|qmd --server JSON_ARGV
//          [--cwd DIR] [--env K=V]... [--ingest CORPUS.jsonl]
//          [--queries SENT.jsonl --out RANKED.jsonl] [--query SENT_ROW_JSON]
//          [--collection NAME] [--map FILE]
//
// --server   the server's argv as a JSON array (spawned over stdio)
// --ingest   memory only: create_entities from the corpus rows, 200 a call
//            (name = row id, entityType "passage", observations = the
//            title if any, then the text); prints {"ingest_s": ...}
// --queries  ask every query once, in file order, write the common ranked
//            format {"qid","ids","ms"} (ms = wall time of all the tool calls
//            of the question)
// --query    ask one query, print one ranked line (qid "-", ms null)
// A query row ("sent" row of run.py) is {"id", "text", "terms"?}: with
// "terms", qmd gets one `lex` sub-query per term and memory one
// search_nodes call per term; without, each gets "text" as one query.
//
// The styles: cairn calls memory_recall {query: text, k: 10}; memory calls
// search_nodes {query} (its result is not ranked: the entities come back
// in graph order; with terms see askTerms below; first 10 kept); qmd calls
// its MCP `query` tool ({searches: [{type: "lex", query}, ...], limit: 10,
// rerank: false}, its BM25 mode) and maps file paths back to ids with the
// map file of the collection (--collection NAME, --map FILE).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// ES modules ignore NODE_PATH: resolve the SDK from build/peers/node_modules
// (PEERS_NODE_MODULES) explicitly.
const peers = createRequire(process.env.PEERS_NODE_MODULES + '/');
const sdk = (p) => import(pathToFileURL(peers.resolve('@modelcontextprotocol/sdk/' + p)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const argv = process.argv.slice(2);
const opt = { env: {} };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const v = argv[i + 1];
  if (a === '--env') { const j = v.indexOf('='); opt.env[v.slice(0, j)] = v.slice(j + 1); i++; }
  else if (a.startsWith('--')) { opt[a.slice(2)] = v; i++; }
}
if (!opt.style || !opt.server) {
  process.stderr.write('usage: mcp_client.mjs --style cairn|memory|qmd --server JSON_ARGV ...\n');
  process.exit(2);
}
const server = JSON.parse(opt.server);
let pathToId = null;
if (opt.map) {
  // qmd: {"file name": "corpus id"}
  pathToId = JSON.parse(readFileSync(opt.map, 'utf8'));
}

function payload(res) {
  if (res.structuredContent) return res.structuredContent;
  const t = (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  try { return JSON.parse(t); } catch { return { text: t }; }
}

function qmdId(file) {
  // qmd reports qmd://COLLECTION/path or a path; the map is by base name
  // without extension (qmd lower-cases and slugs names, so the map was
  // written from the same slug rule the driver used to write the files).
  const base = String(file).split('/').pop().replace(/\.md$/i, '');
  return pathToId[base] ?? pathToId[base.toLowerCase()] ?? null;
}

function idsOf(style, res) {
  const p = payload(res);
  if (res.isError) throw new Error('tool error: ' + JSON.stringify(p).slice(0, 300));
  if (style === 'cairn') return (p.results || []).map((h) => (h.record ? h.record.id : h.id));
  if (style === 'memory') return (p.entities || []).map((e) => e.name);
  // qmd
  const rows = p.results || p.documents || p;
  if (!Array.isArray(rows)) throw new Error('qmd: unexpected result ' + JSON.stringify(p).slice(0, 300));
  const ids = [];
  for (const r of rows) {
    const id = qmdId(r.file || r.path || r.displayPath || r.docid || '');
    if (id !== null && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

function call(style, q) {
  if (style === 'cairn') return { name: 'memory_recall', arguments: { query: q.text, k: 10 } };
  if (style === 'memory') return { name: 'search_nodes', arguments: { query: q.text } };
  // qmd's MCP `query` tool, `lex` sub-queries only (its BM25 mode) and
  // rerank off (reranking needs a downloaded model). With terms: one `lex`
  // sub-query per term, as its tool description tells an agent ("For lex:
  // use keywords"; one sub-query ANDs its words); qmd fuses them by
  // reciprocal rank, the first weighing double.
  const searches = q.terms ? q.terms.map((t) => ({ type: 'lex', query: t }))
    : [{ type: 'lex', query: q.text }];
  const a = { searches, limit: 10, rerank: false };
  if (opt.collection) a.collections = [opt.collection];
  return { name: 'query', arguments: a };
}

// memory with terms: one search_nodes call per term; entities ordered by
// how many of the terms found them (ties: first found first). This ranking
// is ours, on the client; the server only filters.
async function askTerms(client, terms) {
  const count = new Map();
  for (const t of terms) {
    const res = await client.callTool({ name: 'search_nodes', arguments: { query: t } });
    if (res.isError) throw new Error('search_nodes: ' + JSON.stringify(payload(res)).slice(0, 300));
    for (const id of idsOf('memory', res)) count.set(id, (count.get(id) || 0) + 1);
  }
  return [...count.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]);
}

// A tool error (e.g. qmd refuses a question with an unbalanced double quote
// as lex syntax) answers nothing: empty ids, counted as "error" in the line.
let lastError = null;
async function ask(client, style, q) {
  lastError = null;
  if (style === 'memory' && q.terms) return askTerms(client, q.terms);
  const res = await client.callTool(call(style, q));
  if (res.isError) {
    lastError = JSON.stringify(payload(res)).slice(0, 200);
    return [];
  }
  return idsOf(style, res);
}

const transport = new StdioClientTransport({
  command: server[0],
  args: server.slice(1),
  cwd: opt.cwd,
  env: { ...process.env, ...opt.env },
  stderr: 'ignore',
});
const client = new Client({ name: 'cairn-bench-peers', version: '1' });
await client.connect(transport);

if (opt.ingest) {
  const rows = readFileSync(opt.ingest, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  const t0 = performance.now();
  for (let i = 0; i < rows.length; i += 200) {
    const entities = rows.slice(i, i + 200).map((r) => ({
      name: r.id,
      entityType: 'passage',
      observations: r.title ? [r.title, r.text] : [r.text],
    }));
    const res = await client.callTool({ name: 'create_entities', arguments: { entities } });
    if (res.isError) throw new Error('create_entities: ' + JSON.stringify(res.content).slice(0, 300));
  }
  process.stdout.write(JSON.stringify({ ingest_s: (performance.now() - t0) / 1000, rows: rows.length }) + '\n');
}

if (opt.queries) {
  const qs = readFileSync(opt.queries, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  const out = [];
  for (const q of qs) {
    const t0 = performance.now();
    const ids = await ask(client, opt.style, q);
    const ms = performance.now() - t0;
    const line = { qid: q.id, ids: ids.slice(0, 10), ms: Math.round(ms * 1000) / 1000 };
    if (lastError !== null) line.error = lastError;
    out.push(JSON.stringify(line));
  }
  writeFileSync(opt.out, out.join('\n') + (out.length ? '\n' : ''));
}

if (opt.query !== undefined) {
  const ids = await ask(client, opt.style, JSON.parse(opt.query));
  process.stdout.write(JSON.stringify({ qid: '-', ids: ids.slice(0, 10), ms: null }) + '\n');
}

await client.close();
