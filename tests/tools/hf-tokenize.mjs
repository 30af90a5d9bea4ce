// tests/tools/hf-tokenize.mjs TOKENIZERS_DIR GGUF CORPUS OUT [--pair] [--variant]
//
// Expected token ids from HF tokenizers (the npm package `tokenizers`, the
// Rust library's Node binding, unpacked in TOKENIZERS_DIR) for every line of
// CORPUS, tokenised with the vocabulary of the GGUF file, written to OUT one
// line per corpus line: the ids with the model's special tokens, separated
// by spaces. With --pair, line i is encoded as a pair with line i+1 (the
// cross-encoder template) instead. With --variant each line is first
// turned into SentencePiece's view of it (see below), for the lines where
// the two differ on purpose (docs/TOKENIZERS.md).
//
// Test tooling only (tests/tools/vocab-setup runs it). The GGUF holds no
// tokenizer.json, so this script rebuilds one from the GGUF metadata the
// way HF's converters build it for the original model:
//  - "bert" (WordPiece): llama.cpp's phantom-space vocabulary is turned
//    back ("▁x" -> "x", a continuation "x" -> "##x", [..] specials as
//    they are); BertNormalizer (clean text, CJK, strip accents + lower case
//    from tokenizer.ggml.normalizer.*, default true), BertPreTokenizer,
//    WordPiece with max_input_chars_per_word 100, [CLS] $A [SEP].
//  - "t5" (Unigram, XLM-R): the pieces and scores, unk id, the
//    precompiled charsmap, Replace(" {2,}" -> " "), Metaspace("▁", always,
//    split), <s> $A </s> -- the form of the tokenizer.json published with
//    XLM-R models such as bge-m3. Tokens of type "unused" that llama.cpp's
//    converter padded the vocabulary with are left out (they are not in
//    the published vocabulary).
// Corpus lines may write a newline as the two characters \n.
//
// tests/tools/hf-tokenize.mjs --gen N SEED OUT writes N random lines (a
// fixed xorshift generator, so the same SEED gives the same file) drawn
// from a pool of characters that stress both tokenisers: scripts, marks,
// whitespace kinds, controls, emoji sequences, full/half-width forms.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

function die(msg) {
  process.stderr.write(`hf-tokenize: ${msg}\n`);
  process.exit(1);
}

function readGguf(file) {
  const b = fs.readFileSync(file);
  let o = 0;
  const u32 = () => { const v = b.readUInt32LE(o); o += 4; return v; };
  const u64 = () => { const v = Number(b.readBigUInt64LE(o)); o += 8; return v; };
  const str = () => { const n = u64(); const s = b.toString('utf8', o, o + n); o += n; return s; };
  const val = (t) => {
    switch (t) {
      case 0: return b.readUInt8(o++);
      case 1: return b.readInt8(o++);
      case 2: { const v = b.readUInt16LE(o); o += 2; return v; }
      case 3: { const v = b.readInt16LE(o); o += 2; return v; }
      case 4: return u32();
      case 5: { const v = b.readInt32LE(o); o += 4; return v; }
      case 6: { const v = b.readFloatLE(o); o += 4; return v; }
      case 7: return b.readUInt8(o++) !== 0;
      case 8: return str();
      case 9: {
        const et = u32(); const n = u64();
        if (et === 0 || et === 1) { const a = b.subarray(o, o + n); o += n; return a; }
        const a = new Array(n);
        for (let i = 0; i < n; i++) a[i] = val(et);
        return a;
      }
      case 10: return u64();
      case 11: { const v = Number(b.readBigInt64LE(o)); o += 8; return v; }
      case 12: { const v = b.readDoubleLE(o); o += 8; return v; }
      default: throw new Error(`bad GGUF value type ${t} at ${o}`);
    }
  };
  if (b.toString('latin1', 0, 4) !== 'GGUF') throw new Error(`${file}: not a GGUF file`);
  o = 8;
  u64(); // tensors
  const nkv = u64();
  const kv = {};
  for (let i = 0; i < nkv; i++) { const k = str(); kv[k] = val(u32()); }
  return kv;
}

const special = (content, id) => ({
  id, content, single_word: false, lstrip: false, rstrip: false,
  normalized: false, special: true,
});
const template = (a, b) => ({
  type: 'TemplateProcessing',
  single: [{ SpecialToken: { id: a, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
    { SpecialToken: { id: b, type_id: 0 } }],
  pair: [{ SpecialToken: { id: a, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
    { SpecialToken: { id: b, type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } },
    { SpecialToken: { id: b, type_id: 1 } }],
  special_tokens: {},
});

function bertJson(kv) {
  const tokens = kv['tokenizer.ggml.tokens'];
  const types = kv['tokenizer.ggml.token_type'] || [];
  const vocab = {};
  const added = [];
  tokens.forEach((t, i) => {
    let hf;
    if (t.startsWith('\u2581')) hf = t.slice(1);
    else if (/^\[.*\]$/.test(t)) hf = t;
    else hf = '##' + t;
    if (hf in vocab) die(`duplicate token '${hf}' rebuilding the WordPiece vocabulary`);
    vocab[hf] = i;
    if (types[i] === 3) added.push(special(hf, i));
  });
  const id = (k, def) => (kv[k] !== undefined ? kv[k] : def);
  const cls = tokens[id('tokenizer.ggml.cls_token_id', 101)];
  const sep = tokens[id('tokenizer.ggml.seperator_token_id', 102)];
  const unk = tokens[id('tokenizer.ggml.unknown_token_id', 100)];
  const lower = kv['tokenizer.ggml.normalizer.lowercase'] ?? true;
  const strip = kv['tokenizer.ggml.normalizer.strip_accents'] ?? lower;
  const post = template(cls, sep);
  post.special_tokens[cls] = { id: cls, ids: [vocab[cls]], tokens: [cls] };
  post.special_tokens[sep] = { id: sep, ids: [vocab[sep]], tokens: [sep] };
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true,
      strip_accents: strip, lowercase: lower },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: post,
    decoder: null,
    model: { type: 'WordPiece', unk_token: unk, continuing_subword_prefix: '##',
      max_input_chars_per_word: 100, vocab },
  };
}

function t5Json(kv) {
  const tokens = kv['tokenizer.ggml.tokens'];
  const scores = kv['tokenizer.ggml.scores'];
  const types = kv['tokenizer.ggml.token_type'];
  let n = tokens.length;
  while (n > 0 && types[n - 1] === 5) n--; // converter padding, not in the model
  const vocab = [];
  const added = [];
  for (let i = 0; i < n; i++) {
    vocab.push([tokens[i], scores[i]]);
    if (types[i] === 3 || types[i] === 2) added.push(special(tokens[i], i));
  }
  const bos = tokens[kv['tokenizer.ggml.bos_token_id']];
  const eos = tokens[kv['tokenizer.ggml.eos_token_id']];
  const post = template(bos, eos);
  // XLM-R's pair template is <s> A </s></s> B </s>
  post.pair.splice(3, 0, { SpecialToken: { id: eos, type_id: 0 } });
  post.special_tokens[bos] = { id: bos, ids: [kv['tokenizer.ggml.bos_token_id']], tokens: [bos] };
  post.special_tokens[eos] = { id: eos, ids: [kv['tokenizer.ggml.eos_token_id']], tokens: [eos] };
  const charsmap = Buffer.from(kv['tokenizer.ggml.precompiled_charsmap']).toString('base64');
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: { type: 'Sequence', normalizers: [
      { type: 'Precompiled', precompiled_charsmap: charsmap },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
    ] },
    pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    post_processor: post,
    decoder: null,
    model: { type: 'Unigram', unk_id: kv['tokenizer.ggml.unknown_token_id'], vocab,
      byte_fallback: false },
  };
}

// Pieces the random lines are made of (no backslash: \n is an escape).
const POOL = [
  'the', 'quick', 'Brown', 'FOX', 'a', 'I', 'unaffable', 'hello', 'world', 'e5', 'x86_64',
  '0', '7', '42', '3.14', '1,000', '2026-11-30',
  ' ', ' ', ' ', '  ', '\t', '\r', '\u00a0', '\u3000', '\u2028', '\u2009', '\u200b',
  '\u000b', '\u000c', '\u0085', '\u0001', '\u007f', '\ufeff', '\u00ad', '\ue000',
  '.', ',', '!', '?', ';', ':', '-', '--', '(', ')', '[', ']', '{', '}', '"', "'", '`',
  '$', '%', '&', '*', '+', '<', '=', '>', '@', '^', '_', '|', '~', '#', '/',
  '\u2014', '\u2026', '\u00bf', '\u00a1', '\u00ab', '\u00bb', '\u201c', '\u201d',
  '\u3001', '\u3002', '\uff01', '\uff1f', '\uff08', '\uff09', '\u300c', '\u300d',
  'caf\u00e9', 'na\u00efve', 'Stra\u00dfe', '\u00c5ngstr\u00f6m', 'e\u0301', 'a\u0308',
  'A\u030a', '\u0130stanbul', '\u0131', '\u01c5', '\u1e9e', '\u00df', 'Vi\u1ec7t',
  '\u0395\u03bb\u03bb\u03ac\u03b4\u03b1', '\u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3',
  '\u041f\u0440\u0438\u0432\u0435\u0442', '\u0451\u0436',
  '\u4e2d', '\u6587', '\u5317\u4eac', '\u6211\u60f3', '\uf900', '\u{20000}',
  '\u3072\u3089\u304c\u306a', '\u30ab\u30bf\u30ab\u30ca', '\u30ac', '\u30ab\u3099',
  '\uff76\uff80', '\uff76\uff9e', '\ud55c\uad6d\uc5b4', '\u1100\u1161',
  '\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22', '\u0627\u0644\u0639\u0631\u0628\u064a\u0629',
  '\u05e9\u05dc\u05d5\u05dd', '\u0939\u093f\u0928\u094d\u0926\u0940',
  '\u1780\u17b6\u1793\u17cb',
  '\u{1f680}', '\u{1f999}', '\u2705', '\u2764\ufe0f', '\u{1f44d}\u{1f3fd}',
  '\u{1f636}\u200d\u{1f32b}\ufe0f', '\u{1f1eb}\u{1f1f7}', '\u{1f600}',
  '\uff26\uff55\uff4c\uff4c', '\uff11\uff12\uff13', '\uff21',
  '\ufb01', '\u00bd', '\u00b2', '\u2103', '\u2122', '\u00a9', '\u20ac', '\u00a5',
  '\u2211', '\u221e', '\u2260', '\u00d7', '\u2581', '\u2581a',
];

function genLines(n, seed) {
  let x = BigInt(seed) | 1n;
  const mask = (1n << 64n) - 1n;
  const next = () => {
    x ^= (x << 13n) & mask; x ^= x >> 7n; x ^= (x << 17n) & mask;
    return Number(x >> 33n);
  };
  const out = [];
  for (let i = 0; i < n; i++) {
    const k = next() % 24;
    let line = '';
    for (let j = 0; j < k; j++) line += POOL[next() % POOL.length];
    out.push(line);
  }
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--gen') {
    const [, n, seed, file] = args;
    if (!file) die('usage: hf-tokenize.mjs --gen N SEED OUT');
    fs.writeFileSync(file, genLines(Number(n), Number(seed)).join('\n') + '\n');
    return;
  }
  const pair = args.includes('--pair');
  const variant = args.includes('--variant');
  const [dir, gguf, corpus, out] = args.filter((a) => a !== '--pair' && a !== '--variant');
  if (!out) die('usage: hf-tokenize.mjs TOKENIZERS_DIR GGUF CORPUS OUT [--pair]');
  const require = createRequire(path.resolve(dir, 'package.json'));
  let tk;
  try {
    tk = require(path.resolve(dir));
  } catch (e) {
    die(`cannot load HF tokenizers from '${dir}': ${e.message}`);
  }
  const kv = readGguf(gguf);
  const model = kv['tokenizer.ggml.model'];
  let json;
  if (model === 'bert') json = bertJson(kv);
  else if (model === 't5') json = t5Json(kv);
  else die(`unsupported tokenizer model '${model}'`);
  const tok = tk.Tokenizer.fromString(JSON.stringify(json));
  let lines = fs.readFileSync(corpus, 'utf8').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  lines = lines.map((l) => l.replaceAll('\\n', '\n'));
  if (variant) {
    // SentencePiece's view of each line, in HF's terms: compose with NFKC
    // first (HF's Precompiled skips grapheme clusters of 6+ bytes), run
    // HF's normaliser, drop trailing spaces (SentencePiece trims them)
    const norm = tok.getNormalizer();
    lines = lines.map((l) => norm.normalizeString(l.normalize('NFKC')).replace(/ +$/, ''));
  }
  const res = [];
  for (let i = 0; i < lines.length; i++) {
    if (pair && i + 1 >= lines.length) break;
    const enc = pair ? await tok.encode(lines[i], lines[i + 1], { addSpecialTokens: true })
      : await tok.encode(lines[i], null, { addSpecialTokens: true });
    res.push(enc.getIds().join(' '));
  }
  fs.writeFileSync(out, res.join('\n') + '\n');
}

main().catch((e) => die(e.stack || String(e)));
