#!/usr/bin/python3
"""bench/peers/run.py -- cairn side by side with its peers (`make bench-peers`).

usage: bench/peers/run.py --cairn PATH [--eval DIR] [--work DIR]
                          [--systems cairn,fts5,qmd,memory,...]
                          [--sets adr-workspace,locomo,cmrc2018,clapnq]
                          [--cold N] [--out FILE]

Layer: benchmark tooling (never shipped, not part of `make check`).
Holds: the drivers for the four systems, and what each row sends them
(see "what is sent"), run one after the other on the same corpora and
questions, each writing the common ranked format that bench/peers/score.py
scores the same way for all.
Must never: reach the network (bench/peers/setup installs the peers first),
open a store outside --work, or use a query to build or tune a store.

The rows (SYSTEMS; --systems picks some):
  main       each system driven as its own docs tell an agent: cairn and
             plain FTS5 get the question; qmd the keywords, one `lex`
             sub-query each; server-memory the question's words, one
             search_nodes call each
  keywords   cairn, plain FTS5 and server-memory given the keyword row
             (qmd's main row is its keyword row)
  secondary  qmd given the question as one `lex` sub-query, server-memory
             the whole question as one search_nodes query: what a driver
             that does not read their docs gets (no cold figure)

Every row, for every set (locomo: each conversation is its own store,
scores pooled over queries):
  ingest   the corpus into a fresh store, timed, peak RSS by /usr/bin/time
  warm     one resident process answers every query (MCP tool call wall
           time, all of a question's calls; plain FTS5: in-process query
           time); quality is scored from this run
  cold     main rows only: a new process per query (what a hook pays), on a
           fixed subset: per store, every s-th query so that about --cold
           queries per set are asked, the same subset for every system; the
           ids must agree with the warm run ("cold_agrees")
Cross-checks: cairn's warm scores against `cairn eval --json`, plain FTS5's
against ../shared/tools/fts5_baseline.py on the same data.
"""
import argparse
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = os.path.join(ROOT, 'build', 'peers')
NODE_MODULES = os.path.join(PEERS, 'node_modules')
MCP_CLIENT = os.path.join(HERE, 'mcp_client.mjs')
SCORER = os.path.join(HERE, 'score.py')
TIME = '/usr/bin/time'
QMD_COLLECTION = 'bench'

sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import score as scorer  # noqa: E402


def log(*a):
    print('[bench-peers %s]' % time.strftime('%H:%M:%S'), *a, file=sys.stderr, flush=True)


def jsonl(path):
    with open(path, encoding='utf-8') as f:
        return [json.loads(l) for l in f if l.strip()]


def write_jsonl(path, rows):
    with open(path, 'w', encoding='utf-8') as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + '\n')


def timed(argv, rss_file, env=None, cwd=None, stdin=None, check=True):
    """Run argv under /usr/bin/time -f %M; return (seconds, stdout, rss_kb)."""
    t0 = time.perf_counter()
    p = subprocess.run([TIME, '-f', '%M', '-o', rss_file] + argv, env=env, cwd=cwd,
                       input=stdin, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if check and p.returncode != 0:
        raise RuntimeError('%s: exit %d: %s' % (' '.join(argv[:4]), p.returncode, p.stderr[-800:]))
    return dt, p.stdout, read_rss(rss_file)


def read_rss(path):
    try:
        with open(path) as f:
            nums = [int(x) for x in f.read().split() if x.isdigit()]
        return nums[-1] if nums else None
    except OSError:
        return None


def pct(xs, p):
    return scorer.pct(xs, p)


# ------------------------------------------------------------------ sets

def set_parts(eval_dir, name):
    d = os.path.join(eval_dir, name)
    if name == 'locomo':
        c = os.path.join(d, 'conversations')
        return [os.path.join(c, x) for x in sorted(os.listdir(c))]
    return [d]


def cold_subset(parts_queries, n_cold):
    """Every s-th query of each store, about n_cold in all (same for all systems)."""
    total = sum(len(q) for q in parts_queries)
    out = []
    for qs in parts_queries:
        want = max(1, round(n_cold * len(qs) / max(total, 1)))
        step = max(1, math.ceil(len(qs) / want))
        out.append(qs[::step])
    return out


# ------------------------------------------------------- what is sent

# Three rows of what a system is sent, computed once per question and
# shared by every system that uses them (bench/peers/run.py writes them
# once per store, under WORK/queries/):
#   question  the question as written (cairn, plain FTS5)
#   words     the question's words: \w+ runs, Chinese split by jieba, lower
#             case, distinct, in question order, stop words and one-letter
#             words dropped (server-memory's main row: one search_nodes
#             call per word)
#   keywords  the KEYWORDS rarest of those words in the store (fewest
#             corpus rows holding them; words no row holds cannot match and
#             are left out unless nothing else is left), rarest first (qmd's
#             tool: "First sub-query gets 2x weight -- put your strongest
#             signal first"); the same list for every system
# A question with no word left is sent as written.
KEYWORDS = 4
STOP = set("""a about am an and any are as at be been but by can could did do does doing
for from had has have how i if in into is it its me my of on or our should so than that the
their them then there these they this those to us was we were what when where which who whom
why will with would you your also just some such up out not no yes get got one s t d ll re ve
m many much more most other very""".split())
STOP_ZH = set('的 了 是 在 我 我们 你 你们 他 她 它 有 和 与 就 都 也 很 吗 呢 吧 啊 呀 么 什么 怎么 '
              '怎样 如何 为什么 哪 哪些 哪个 谁 多少 这 那 这个 那个 一个 要 会 能 可以 应该 是否 还是 '
              '或者 把 被 给 对 从 到 用 让 请 问 哪里 没有 有没有 之后 之前 时候 什么样 怎么样 这些 '
              '那些 一些 他们 它们'.split())
_jieba = None


def words_of(text):
    global _jieba
    text = text.lower()
    out = []
    for run in re.findall(r'\w+', text, re.UNICODE):
        if re.search(r'[\u3400-\u9fff]', run):
            if _jieba is None:
                import jieba  # python3-jieba (Debian), test tooling only
                jieba.setLogLevel(60)
                _jieba = jieba
            out.extend(w for w in _jieba.lcut(run) if w.strip())
        else:
            out.append(run)
    return out


def content_words(text):
    ws = []
    for w in words_of(text):
        if w not in ws and w not in STOP and w not in STOP_ZH and len(w) > 1:
            ws.append(w)
    return ws


def prepare_queries(part, path):
    """Write path: the part's queries, each with "words" and "keywords"."""
    df = {}
    for d in jsonl(os.path.join(part, 'corpus.jsonl')):
        for w in set(words_of((d.get('title') or '') + ' ' + d['text'])):
            df[w] = df.get(w, 0) + 1
    rows = []
    for q in jsonl(os.path.join(part, 'queries.jsonl')):
        ws = content_words(q['text'])
        seen = [w for w in ws if df.get(w, 0) > 0] or ws
        r = dict(q)
        r['words'] = ws
        r['keywords'] = sorted(seen, key=lambda w: (df.get(w, 0), ws.index(w)))[:KEYWORDS]
        rows.append(r)
    write_jsonl(path, rows)
    return path


def sent_row(q, row):
    """What a system of row `row` is sent for question q: "text" (one
    string) and, where the system sends one call or sub-query per term,
    "terms"."""
    if row == 'question' or not q[row]:
        return {'id': q['id'], 'text': q['text']}
    return {'id': q['id'], 'text': ' '.join(q[row]), 'terms': q[row]}


# --------------------------------------------------------------- systems

class System:
    """One row of the tables: a system and what it is sent.
    role: 'main' (the system driven as its own docs tell an agent),
    'keywords' (the keyword row, the same for every system) or 'secondary'
    (a driving kept to show what it gives, not in the main table)."""
    name = ''
    system = ''  # the system's name in the tables
    row = 'question'  # question | words | keywords (sent_row)
    sent = ''  # what it is sent, in words, for the tables
    role = 'main'
    cold_ok = True  # False: no new-process-per-query figure for this row

    def __init__(self, a, env):
        self.a = a
        self.env = env

    def node(self):
        e = dict(self.env)
        e['PEERS_NODE_MODULES'] = NODE_MODULES
        return e


class Cairn(System):
    name = 'cairn'
    system = 'cairn'
    sent = 'the question (`memory_recall`)'

    def ingest(self, part, work, corpus):
        store = os.path.join(work, 'store')
        os.makedirs(store)
        subprocess.run([self.a.cairn, '-C', store, 'init'], env=self.env, check=True,
                       capture_output=True)
        recs = [{'id': d['id'], 'kind': 'note', 'status': 'accepted', 'origin': 'human',
                 'title': d.get('title') or '', 'body': d['text'],
                 'time': d.get('time') or None} for d in corpus]
        path = os.path.join(work, 'import.jsonl')
        write_jsonl(path, recs)
        dt, _, rss = timed([self.a.cairn, '-C', store, 'import', '--redact', path],
                           os.path.join(work, 'rss-ingest'), env=self.env)
        probes = os.path.join(part, 'probes.jsonl')
        if os.path.exists(probes):  # as `cairn eval` does: the floor from the probes
            dt2, _, rss2 = timed([self.a.cairn, '-C', store, 'calibrate', '--probes', probes],
                                 os.path.join(work, 'rss-cal'), env=self.env)
            dt += dt2
            rss = max(rss or 0, rss2 or 0)
        self.store = store
        return dt, rss

    def warm(self, work, queries_path, out):
        rssf = os.path.join(work, 'rss-warm')
        server = [TIME, '-f', '%M', '-o', rssf, self.a.cairn, 'mcp']
        subprocess.run(['node', MCP_CLIENT, '--style', 'cairn', '--server', json.dumps(server),
                        '--cwd', self.store, '--queries', queries_path, '--out', out],
                       env=self.node(), check=True, cwd=self.store)
        return read_rss(rssf)

    def cold(self, work, q):
        dt, out, rss = timed([self.a.cairn, '-C', self.store, 'recall', '--json', '-k', '10',
                              q['text']], os.path.join(work, 'rss-cold'), env=self.env)
        return dt, [h['record']['id'] for h in json.loads(out)['hits']], rss


def fts5_expr(text):
    # the query of ../shared/tools/fts5_baseline.py: an OR of the question's words
    toks = re.findall(r'\w+', text.lower(), re.UNICODE)
    return ' OR '.join('"%s"' % t.replace('"', '') for t in toks) or '""'


FTS5_SQL = 'select id from d where d match ? order by bm25(d) limit 10'


class Fts5(System):
    name = 'fts5'
    system = 'FTS5 porter'
    sent = 'the question, an OR of its words'

    def ingest(self, part, work, corpus):
        db = os.path.join(work, 'fts.db')
        sql = ["create virtual table d using fts5(id unindexed, title, text, "
               "tokenize='porter unicode61');", 'begin;']
        q = lambda s: "'" + s.replace("'", "''") + "'"  # noqa: E731
        for d in corpus:
            sql.append('insert into d values (%s,%s,%s);' % (q(d['id']), q(d.get('title') or ''),
                                                            q(d['text'])))
        sql.append('commit;')
        dt, _, rss = timed(['sqlite3', db], os.path.join(work, 'rss-ingest'), env=self.env,
                           stdin='\n'.join(sql) + '\n')
        self.db = db
        return dt, rss

    def warm(self, work, queries_path, out):
        con = sqlite3.connect(self.db)
        rows = []
        for qq in jsonl(queries_path):
            t0 = time.perf_counter()
            try:
                ids = [r[0] for r in con.execute(FTS5_SQL, (fts5_expr(qq['text']),))]
            except sqlite3.OperationalError:
                ids = []
            rows.append({'qid': qq['id'], 'ids': ids,
                         'ms': round((time.perf_counter() - t0) * 1000, 3)})
        con.close()
        write_jsonl(out, rows)
        return None  # in-process: the Python process's RSS is not the engine's

    def cold(self, work, q):
        expr = fts5_expr(q['text']).replace("'", "''")
        dt, out, rss = timed(['sqlite3', '-json', self.db, FTS5_SQL.replace('?', "'%s'" % expr)],
                             os.path.join(work, 'rss-cold'), env=self.env, check=False)
        ids = [r['id'] for r in json.loads(out)] if out.strip() else []
        return dt, ids, rss


class Qmd(System):
    """@tobilu/qmd, its BM25 mode, one Markdown file per corpus row. Its
    MCP `query` tool describes `lex` as "BM25 keywords" and tells an agent
    "For lex: use keywords"; one `lex` sub-query ANDs its words (each a
    prefix term), so each keyword is its own `lex` sub-query, which qmd
    fuses by reciprocal rank (the first weighs double)."""
    name = 'qmd'
    system = 'qmd'
    row = 'keywords'
    sent = 'the keywords, one `lex` sub-query each (the keyword row)'

    def qenv(self, work):
        e = self.node()
        home = os.path.join(work, 'home')
        e.update(HOME=home, XDG_CACHE_HOME=os.path.join(home, '.cache'),
                 XDG_CONFIG_HOME=os.path.join(home, '.config'))
        return e

    def qmd(self):
        return [os.path.join(NODE_MODULES, '.bin', 'qmd')]

    def ingest(self, part, work, corpus):
        docs = os.path.join(work, 'docs')
        os.makedirs(docs)
        os.makedirs(os.path.join(work, 'home'))
        idmap = {}
        for i, d in enumerate(corpus):
            slug = 'r%05d' % i
            idmap[slug] = d['id']
            title = d.get('title') or ''
            with open(os.path.join(docs, slug + '.md'), 'w', encoding='utf-8') as f:
                f.write(('# %s\n\n' % title if title else '') + d['text'] + '\n')
        self.map = os.path.join(work, 'map.json')
        with open(self.map, 'w') as f:
            json.dump(idmap, f)
        self.work = work
        dt, _, rss = timed(self.qmd() + ['collection', 'add', docs, '--name', QMD_COLLECTION,
                                         '--mask', '**/*.md'],
                           os.path.join(work, 'rss-ingest'), env=self.qenv(work))
        return dt, rss

    def warm(self, work, queries_path, out):
        rssf = os.path.join(work, 'rss-warm')
        server = [TIME, '-f', '%M', '-o', rssf] + self.qmd() + ['mcp']
        subprocess.run(['node', MCP_CLIENT, '--style', 'qmd', '--server', json.dumps(server),
                        '--map', self.map, '--collection', QMD_COLLECTION,
                        '--queries', queries_path, '--out', out],
                       env=self.qenv(work), check=True)
        return read_rss(rssf)

    def cold(self, work, q):
        # the CLI's form of the same call: `qmd query` with a query document
        # of lex: lines, reranking off (the MCP tool's rerank: false)
        if q.get('terms'):
            argv = ['query', '\n'.join('lex: ' + t for t in q['terms']), '--no-rerank']
        else:
            argv = ['search', q['text']]
        dt, out, rss = timed(self.qmd() + argv + ['-n', '10', '--json', '-c', QMD_COLLECTION],
                             os.path.join(work, 'rss-cold'), env=self.qenv(work), check=False)
        idmap = json.load(open(self.map))
        ids = []
        s = out.strip()
        try:
            rows = json.loads(s[s.index('['):]) if '[' in s else []
        except ValueError:  # an error message, not results: nothing found
            rows = []
        for r in rows:
            base = str(r.get('file') or r.get('path') or '').split('/')[-1]
            base = re.sub(r'\.md$', '', base, flags=re.I)
            i = idmap.get(base) or idmap.get(base.lower())
            if i is not None and i not in ids:
                ids.append(i)
        return dt, ids[:10], rss


class Memory(System):
    """@modelcontextprotocol/server-memory over MCP: one entity per corpus
    row, searched with search_nodes. Its search is a case-insensitive
    substring test of the whole query against names, types and
    observations, unranked; so each word of the question is its own call,
    and the entities are ranked by how many words found them (ties: first
    found first) -- a ranking of ours, on the client."""
    name = 'memory'
    system = 'server-memory'
    row = 'words'
    sent = "the question's words, one `search_nodes` call each"

    def server(self, rssf):
        js = os.path.join(NODE_MODULES, '@modelcontextprotocol', 'server-memory', 'dist',
                          'index.js')
        return [TIME, '-f', '%M', '-o', rssf, 'node', js]

    def menv(self, work):
        e = self.node()
        e['MEMORY_FILE_PATH'] = os.path.join(work, 'memory.jsonl')
        return e

    def ingest(self, part, work, corpus):
        path = os.path.join(work, 'corpus.jsonl')
        write_jsonl(path, corpus)
        rssf = os.path.join(work, 'rss-ingest')
        t0 = time.perf_counter()
        subprocess.run(['node', MCP_CLIENT, '--style', 'memory', '--server',
                        json.dumps(self.server(rssf)), '--ingest', path],
                       env=self.menv(work), check=True, capture_output=True)
        return time.perf_counter() - t0, read_rss(rssf)

    def warm(self, work, queries_path, out):
        rssf = os.path.join(work, 'rss-warm')
        subprocess.run(['node', MCP_CLIENT, '--style', 'memory', '--server',
                        json.dumps(self.server(rssf)), '--queries', queries_path, '--out', out],
                       env=self.menv(work), check=True)
        return read_rss(rssf)

    def cold(self, work, q):
        # a node client that spawns the server, makes the same calls, exits
        rssf = os.path.join(work, 'rss-cold')
        t0 = time.perf_counter()
        p = subprocess.run(['node', MCP_CLIENT, '--style', 'memory', '--server',
                            json.dumps(self.server(rssf)), '--query', json.dumps(q)],
                           env=self.menv(work), check=True, capture_output=True, text=True)
        return time.perf_counter() - t0, json.loads(p.stdout)['ids'], read_rss(rssf)


class CairnKw(Cairn):
    name = 'cairn-kw'
    row = 'keywords'
    role = 'keywords'
    sent = 'the keywords (`memory_recall`)'
    cold_ok = False


class Fts5Kw(Fts5):
    name = 'fts5-kw'
    row = 'keywords'
    role = 'keywords'
    sent = 'the keywords, an OR'
    cold_ok = False


class MemoryKw(Memory):
    name = 'memory-kw'
    row = 'keywords'
    role = 'keywords'
    sent = 'the keywords, one `search_nodes` call each'
    cold_ok = False


class QmdQuestion(Qmd):
    """qmd sent the question as written, one `lex` sub-query: every word
    must be in the document (AND), so almost nothing matches."""
    name = 'qmd-question'
    row = 'question'
    role = 'secondary'
    sent = 'the question as one `lex` sub-query'
    cold_ok = False


class MemoryQuestion(Memory):
    """server-memory sent the whole question as one search_nodes query: a
    substring test of the whole question, so nothing matches."""
    name = 'memory-question'
    row = 'question'
    role = 'secondary'
    sent = 'the whole question as one `search_nodes` query'
    cold_ok = False


SYSTEMS = {c.name: c for c in (Cairn, Fts5, Qmd, Memory, CairnKw, Fts5Kw, MemoryKw,
                               QmdQuestion, MemoryQuestion)}


# ------------------------------------------------------------- the run

def run_system(sysobj, set_name, parts, prepared, subsets, work_root):
    name = sysobj.name
    set_work = os.path.join(work_root, name, set_name)
    shutil.rmtree(set_work, ignore_errors=True)
    os.makedirs(set_work)
    warm_all, cold_all = [], []
    ingest_s, rss_ingest, rss_warm, rss_cold = 0.0, [], [], []
    agree = disagree = tool_errors = 0
    for pi, part in enumerate(parts):
        work = os.path.join(set_work, 'p%d' % pi)
        os.makedirs(work)
        corpus = jsonl(os.path.join(part, 'corpus.jsonl'))
        dt, rss = sysobj.ingest(part, work, corpus)
        ingest_s += dt
        rss_ingest.append(rss)
        sent = {q['id']: sent_row(q, sysobj.row) for q in jsonl(prepared[pi])}
        qpath = os.path.join(work, 'sent.jsonl')
        write_jsonl(qpath, sent.values())
        wout = os.path.join(work, 'warm.jsonl')
        rss_warm.append(sysobj.warm(work, qpath, wout))
        warm = {r['qid']: r for r in jsonl(wout)}
        tool_errors += sum(1 for r in warm.values() if r.get('error'))
        warm_all.extend(warm.values())
        for qq in (subsets[pi] if sysobj.cold_ok else []):
            sec, ids, rss = sysobj.cold(work, sent[qq['id']])
            rss_cold.append(rss)
            cold_all.append({'qid': qq['id'], 'ids': ids[:10], 'ms': round(sec * 1000, 3)})
            if qq['id'] in warm and warm[qq['id']]['ids'] == ids[:10]:
                agree += 1
            else:
                disagree += 1
    wpath = os.path.join(set_work, 'warm.jsonl')
    cpath = os.path.join(set_work, 'cold.jsonl')
    write_jsonl(wpath, warm_all)
    write_jsonl(cpath, cold_all)
    qall = os.path.join(set_work, 'queries.jsonl')
    write_jsonl(qall, [q for part in parts for q in jsonl(os.path.join(part, 'queries.jsonl'))])
    s = scorer.score(qall, wpath)
    c = scorer.score(qall, cpath)
    mx = lambda xs: (round(max(x for x in xs if x) / 1024, 1)  # noqa: E731
                     if any(x for x in xs) else None)
    return {
        'recall@1': s['recall@1'], 'recall@3': s['recall@3'], 'recall@5': s['recall@5'],
        'recall@10': s['recall@10'], 'mrr': s['mrr'],
        'answerable': s['answerable'], 'no_answer': s['no_answer'],
        'no_answer_empty': s['no_answer_empty'], 'no_answer_empty_rate': s['no_answer_empty_rate'],
        'answerable_empty': s['answerable_empty'],
        'missing': s['missing'],
        'warm_p50_ms': s['p50_ms'], 'warm_p95_ms': s['p95_ms'], 'warm_queries': s['timed'],
        'cold_p50_ms': c['p50_ms'], 'cold_p95_ms': c['p95_ms'], 'cold_queries': c['timed'],
        'cold_agrees': agree, 'cold_disagrees': disagree, 'tool_errors': tool_errors,
        'ingest_s': round(ingest_s, 3), 'stores': len(parts),
        'peak_rss_mb': {'ingest': mx(rss_ingest), 'warm_server': mx(rss_warm),
                        'cold_query': mx(rss_cold)},
    }


def cross_checks(a, sets, results):
    out = {}
    for set_name in sets:
        d = os.path.join(a.eval, set_name)
        grp = ['--per-group'] if set_name == 'locomo' else []
        chk = {}
        if 'cairn' in results and set_name in results['cairn']:
            p = subprocess.run([a.cairn, 'eval', d, '--json', '--quiet'] + grp,
                               capture_output=True, text=True, env=a.env)
            if p.returncode == 0:
                e = json.loads(p.stdout)
                mine = results['cairn'][set_name]
                chk['cairn_eval'] = {k: e.get(k) for k in ('recall@1', 'recall@3', 'recall@5',
                                                          'recall@10', 'mrr', 'no_answer_empty',
                                                          'elapsed_s')}
                chk['cairn_eval']['agrees'] = all(
                    abs((e.get(k) or 0) - (mine[k] or 0)) < 1e-3
                    for k in ('recall@1', 'recall@3', 'recall@5', 'recall@10', 'mrr'))
            else:
                chk['cairn_eval'] = {'error': p.stderr[-300:]}
            # for context: the same without the no-match floor
            p = subprocess.run([a.cairn, 'eval', d, '--json', '--quiet', '--no-floor'] + grp,
                               capture_output=True, text=True, env=a.env)
            if p.returncode == 0:
                e = json.loads(p.stdout)
                chk['cairn_eval_no_floor'] = {k: e.get(k) for k in (
                    'recall@1', 'recall@3', 'recall@5', 'recall@10', 'mrr', 'no_answer_empty')}
        anchor = os.path.join(os.path.dirname(a.eval.rstrip('/')), 'tools', 'fts5_baseline.py')
        if 'fts5' in results and set_name in results['fts5'] and os.path.exists(anchor):
            p = subprocess.run(['/usr/bin/python3', anchor, d] + grp, capture_output=True,
                               text=True)
            if p.returncode == 0:
                e = json.loads(p.stdout)
                mine = results['fts5'][set_name]
                chk['fts5_anchor'] = {k: e.get(k) for k in ('recall@1', 'recall@3', 'recall@5',
                                                           'recall@10', 'mrr', 'no_answer_empty')}
                chk['fts5_anchor']['agrees'] = all(
                    abs((e.get(k) or 0) - (mine[k] or 0)) < 1e-3
                    for k in ('recall@1', 'recall@3', 'recall@5', 'recall@10', 'mrr'))
            else:
                chk['fts5_anchor'] = {'error': p.stderr[-300:]}
        out[set_name] = chk
    return out


def start_floors(a, env, names):
    """p50 wall ms of a process that starts and does nothing (10 runs each):
    how much of a cold query is only starting the program."""
    cmds = {'cairn': [a.cairn, '--version'], 'fts5': ['sqlite3', '--version'],
            'qmd': ['node', os.path.join(NODE_MODULES, '@tobilu', 'qmd', 'dist', 'cli', 'qmd.js'),
                    '--version'],
            'memory': ['node', '-e', '0']}
    out = {}
    for n in names:
        xs = []
        for _ in range(10):
            t0 = time.perf_counter()
            subprocess.run(cmds[n], env=env, capture_output=True)
            xs.append((time.perf_counter() - t0) * 1000)
        # program and script by name only: no path of this machine
        out[n] = {'command': ' '.join(os.path.basename(x) if os.path.isabs(x)
                                      or i == 0 else x
                                      for i, x in enumerate(cmds[n][:2])),
                  'p50_ms': pct(xs, 50)}
    return out


def versions(a):
    v = {}
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.strip()
        except OSError:
            return None
    head = sh(['git', 'rev-parse', 'HEAD'])
    dirty = sh(['git', 'status', '--porcelain'])
    v['cairn_commit'] = head + (' with uncommitted work in progress' if dirty else '')
    # the last commit that changed what the binary is built from (a commit
    # of bench/ or docs/ alone measures the same cairn)
    v['cairn_src_commit'] = sh(['git', 'log', '-1', '--format=%H', '--', 'src', 'include',
                                'Makefile'])
    v['cairn'] = sh([a.cairn, '--version']) or None
    v['sqlite3'] = sh(['sqlite3', '--version']).split(' ')[0]
    v['python_sqlite'] = sqlite3.sqlite_version
    v['node'] = sh(['node', '--version'])
    for pkg in ('@tobilu/qmd', '@modelcontextprotocol/server-memory', '@modelcontextprotocol/sdk',
                'better-sqlite3'):
        try:
            with open(os.path.join(NODE_MODULES, pkg, 'package.json')) as f:
                v[pkg] = json.load(f)['version']
        except OSError:
            v[pkg] = None
    v['cpu'] = sh(['sh', '-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"])
    v['cores'] = os.cpu_count()
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cairn', required=True)
    ap.add_argument('--eval', default=os.path.join(ROOT, '..', 'shared', 'eval'))
    ap.add_argument('--work', default=os.path.join(PEERS, 'work'))
    ap.add_argument('--systems', default=','.join(SYSTEMS))
    ap.add_argument('--sets', default='adr-workspace,locomo,cmrc2018,clapnq')
    ap.add_argument('--cold', type=int, default=12)
    ap.add_argument('--out', default=os.path.join(ROOT, 'bench', 'results', 'peers.json'))
    a = ap.parse_args()
    a.cairn = os.path.abspath(a.cairn)
    a.eval = os.path.abspath(a.eval)
    os.makedirs(a.work, exist_ok=True)
    home = os.path.join(a.work, 'home')  # no user's global store, no user's config
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, TMPDIR=a.work)
    env.pop('CAIRN_BILINGUAL', None)
    a.env = env
    sets = a.sets.split(',')
    systems = [SYSTEMS[s](a, env) for s in a.systems.split(',')]
    vers = versions(a)  # the commit as the run starts
    load0 = os.getloadavg()
    t_start = time.time()
    results, subsets_info = {}, {}
    for set_name in sets:
        parts = set_parts(a.eval, set_name)
        pq = [jsonl(os.path.join(p, 'queries.jsonl')) for p in parts]
        subsets = cold_subset(pq, a.cold)
        qdir = os.path.join(a.work, 'queries', set_name)
        shutil.rmtree(qdir, ignore_errors=True)
        os.makedirs(qdir)
        prepared = [prepare_queries(p, os.path.join(qdir, 'p%d.jsonl' % i))
                    for i, p in enumerate(parts)]
        rows = [q for path in prepared for q in jsonl(path)]
        subsets_info[set_name] = {'stores': len(parts),
                                  'corpus_rows': sum(len(jsonl(os.path.join(p, 'corpus.jsonl')))
                                                     for p in parts),
                                  'queries': sum(len(q) for q in pq),
                                  'cold_subset': sum(len(s) for s in subsets),
                                  'words_mean': round(sum(len(q['words']) for q in rows)
                                                      / max(len(rows), 1), 2),
                                  'keywords_mean': round(sum(len(q['keywords']) for q in rows)
                                                         / max(len(rows), 1), 2),
                                  'example': {k: rows[0][k] for k in ('text', 'words',
                                                                      'keywords')}}
        for so in systems:
            log('%s on %s ...' % (so.name, set_name))
            t0 = time.time()
            try:
                r = run_system(so, set_name, parts, prepared, subsets, a.work)
            except Exception as e:  # a peer that fails is reported, not hidden
                r = {'error': str(e)[-1000:]}
            r['wall_s'] = round(time.time() - t0, 1)
            results.setdefault(so.name, {})[set_name] = r
            log('%s on %s: %s' % (so.name, set_name, json.dumps(r)[:400]))
    log('process start floors ...')
    startup = start_floors(a, env, [so.name for so in systems if so.cold_ok])
    log('cross-checks ...')
    checks = cross_checks(a, sets, results)
    doc = {
        'generated': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        'command': 'make bench-peers',
        'versions': vers,
        'load_average_start': [round(x, 2) for x in load0],
        'load_average_end': [round(x, 2) for x in os.getloadavg()],
        'wall_s': round(time.time() - t_start, 1),
        'sets': subsets_info,
        'startup_ms': startup,
        'rows': {so.name: {'system': so.system, 'sent': so.sent, 'role': so.role,
                           'row': so.row} for so in systems},
        'keywords': KEYWORDS,
        'results': results,
        'cross_checks': checks,
        'notes': {
            'warm': 'cairn, qmd, memory: wall time of one MCP tools/call from the SDK client to '
                    'a resident server (stdio JSON-RPC included); fts5: the query inside one '
                    'resident Python sqlite3 connection (no IPC)',
            'cold': 'wall time of a new process per query, main rows only: cairn recall; '
                    'sqlite3 CLI; qmd query with a query document of lex: lines, --no-rerank; '
                    'memory: a node SDK client that spawns the server, makes the same '
                    'search_nodes calls, exits',
            'quality': 'scored from the warm run, all queries, by bench/peers/score.py',
        },
    }
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, 'w') as f:
        json.dump(doc, f, indent=1)
        f.write('\n')
    log('results: %s' % a.out)


if __name__ == '__main__':
    main()
