#!/usr/bin/python3
"""serve_bench.py -- `cairn serve` on a 10k-record store ("starts in
under 100 ms on a 10k-record store and answers a search in under 50 ms").

    bench/serve_bench.py --cairn build/cairn [--n 10000] [--q 200]
                         [--starts 20] [--seed 2024] [--out FILE]

Data (fixed seed): --n records of engineering notes imported with `cairn
import` into a fresh workspace: titles 3-8 and bodies 20-100 words drawn
with a Zipf distribution (s = 1.05) from ~60 real engineering words
followed by generated English-like words (4 000 in all), one in ten
records Chinese from a small word list; kinds 80% note, 10% decision, 10%
fact, every record human and accepted. --q questions: four in five are 3-5
words of one record, one in five random words.

Start-up, --starts rounds, interleaved with the baseline so that a busy
machine slows both alike: the wall time from fork to the URL line on
stdout ("start_to_url"), and to the answer of the first GET /api/info
("start_to_first_answer"; the page's first call: the store opened, the
counts read), then SIGTERM; baseline: `cairn stats --json` as a whole
process (the same store opened, the same counts). ratio = serve / stats.

Search: one server; each question as GET /api/records?q=... on a kept-alive
connection ("search": the recall with --explain figures, without a
receipt, and its JSON); baseline, interleaved question by question: the
same question as a `cairn recall --json --explain` process, what a user
without the console runs. The hits' ids of both are hashed: the two must
return the same records ("same_hits" counts agreements; a recall writes a
receipt and the console's search does not, which changes no ranking).

Prints a summary and writes the JSON to --out (bench/results/serve.json).
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

REAL = ('deploy staging production database migration schema index cache '
        'queue worker retry timeout latency replica backup restore token '
        'secret rotate certificate proxy nginx kubernetes helm docker image '
        'build release rollback canary feature flag metric alert log trace '
        'span service billing orders payment invoice user session login '
        'oauth api gateway rate limit shard partition vacuum postgres redis '
        'kafka consumer offset lag schema test flaky ci pipeline').split()
ZH = '部署 数据库 迁移 缓存 队列 超时 延迟 备份 恢复 证书 发布 回滚 监控 告警 日志 服务 订单 支付 用户 会话 网关 限流 分区 测试 流水线'.split()


def words(rng, n_vocab=4000):
    vocab = list(REAL)
    syl = ['ka', 'lo', 'mi', 'ren', 'tor', 'vas', 'quo', 'ze', 'lin', 'dra', 'pel', 'sun', 'ost', 'ber']
    while len(vocab) < n_vocab:
        w = ''.join(rng.choice(syl) for _ in range(rng.randint(2, 4)))
        if w not in vocab:
            vocab.append(w)
    weights = [1.0 / (i + 1) ** 1.05 for i in range(len(vocab))]
    return vocab, weights


def make_store(cairn, ws, n, rng):
    vocab, weights = words(rng)
    rows = []
    for i in range(n):
        if rng.random() < 0.1:
            title = ''.join(rng.choice(ZH) for _ in range(rng.randint(2, 4)))
            body = ''.join(rng.choice(ZH) for _ in range(rng.randint(10, 40))) + '。'
        else:
            title = ' '.join(rng.choices(vocab, weights, k=rng.randint(3, 8)))
            body = ' '.join(rng.choices(vocab, weights, k=rng.randint(20, 100))) + '.'
        r = rng.random()
        kind = 'note' if r < 0.8 else 'decision' if r < 0.9 else 'fact'
        rows.append({'id': 'b%07d' % i, 'kind': kind, 'title': title, 'body': body,
                     'status': 'accepted', 'origin': 'human'})
    path = os.path.join(ws, 'corpus.jsonl')
    with open(path, 'w') as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + '\n')
    subprocess.run([cairn, 'init'], cwd=ws, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([cairn, 'import', path], cwd=ws, check=True, stdout=subprocess.DEVNULL)
    return rows, vocab, weights


def questions(rows, vocab, weights, q, rng):
    out = []
    for _ in range(q):
        if rng.random() < 0.8:
            r = rng.choice(rows)
            toks = (r['title'] + ' ' + r['body']).split()
            if len(toks) < 3:
                toks = [r['title']]
            k = min(len(toks), rng.randint(3, 5))
            start = rng.randint(0, len(toks) - k)
            out.append(' '.join(toks[start:start + k]).rstrip('.'))
        else:
            out.append(' '.join(rng.choices(vocab, weights, k=rng.randint(3, 5))))
    return out


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(round(p * (len(v) - 1)))))]


def summary(v):
    return {'n': len(v), 'p50_ms': round(pct(v, 0.5), 2), 'p90_ms': round(pct(v, 0.9), 2),
            'mean_ms': round(statistics.mean(v), 2), 'max_ms': round(max(v), 2)}


def start_serve(cairn, ws):
    t0 = time.perf_counter()
    p = subprocess.Popen([cairn, 'serve'], cwd=ws, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    url = p.stdout.readline().strip()
    t_url = time.perf_counter()
    return p, url, t0, t_url


def conn_for(url):
    u = urllib.parse.urlsplit(url)
    tok = u.fragment.split('token=', 1)[1]
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30), tok


def get(c, tok, path):
    c.request('GET', path, headers={'X-Cairn-Token': tok})
    r = c.getresponse()
    body = r.read()
    if r.status != 200:
        raise RuntimeError('%s: %d %s' % (path, r.status, body[:200]))
    return json.loads(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cairn', required=True)
    ap.add_argument('--n', type=int, default=10000)
    ap.add_argument('--q', type=int, default=200)
    ap.add_argument('--starts', type=int, default=20)
    ap.add_argument('--seed', type=int, default=2024)
    ap.add_argument('--out', default='bench/results/serve.json')
    a = ap.parse_args()
    cairn = os.path.abspath(a.cairn)
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix='cairn-serve-bench-')
    env_home = os.path.join(tmp, 'home')
    os.makedirs(env_home)
    os.environ.update({'HOME': env_home, 'CAIRN_GLOBAL': os.path.join(tmp, 'global'),
                       'CAIRN_CACHE_DIR': os.path.join(tmp, 'cache')})
    os.environ.pop('CAIRN_DIR', None)
    ws = os.path.join(tmp, 'ws')
    os.makedirs(ws)
    try:
        t = time.perf_counter()
        rows, vocab, weights = make_store(cairn, ws, a.n, rng)
        build_s = time.perf_counter() - t
        qs = questions(rows, vocab, weights, a.q, rng)
        data_hash = hashlib.sha256('\n'.join(json.dumps(r, sort_keys=True) for r in rows).encode()
                                   + b'\0' + '\n'.join(qs).encode()).hexdigest()[:16]
        # warm the page cache and the tokenizer cache once, for both
        subprocess.run([cairn, 'stats', '--json'], cwd=ws, stdout=subprocess.DEVNULL, check=True)
        subprocess.run([cairn, 'recall', '--json', 'warm up'], cwd=ws, stdout=subprocess.DEVNULL)

        to_url, to_answer, stats_ms = [], [], []
        for _ in range(a.starts):
            p, url, t0, t_url = start_serve(cairn, ws)
            c, tok = conn_for(url)
            get(c, tok, '/api/info')
            t_ans = time.perf_counter()
            c.close()
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
            to_url.append((t_url - t0) * 1e3)
            to_answer.append((t_ans - t0) * 1e3)
            t0 = time.perf_counter()
            subprocess.run([cairn, 'stats', '--json'], cwd=ws, stdout=subprocess.DEVNULL, check=True)
            stats_ms.append((time.perf_counter() - t0) * 1e3)

        p, url, _, _ = start_serve(cairn, ws)
        c, tok = conn_for(url)
        search_ms, cli_ms, same, hits_h = [], [], 0, hashlib.sha256()
        try:
            for q in qs:
                t0 = time.perf_counter()
                j = get(c, tok, '/api/records?' + urllib.parse.urlencode({'q': q, 'limit': 5}))
                search_ms.append((time.perf_counter() - t0) * 1e3)
                ids = [h['record']['id'] for h in j['hits']]
                t0 = time.perf_counter()
                out = subprocess.run([cairn, 'recall', '--json', '--explain', '-k', '5', q], cwd=ws,
                                     stdout=subprocess.PIPE, check=True).stdout
                cli_ms.append((time.perf_counter() - t0) * 1e3)
                cli_ids = [h['record']['id'] for h in json.loads(out)['hits']]
                same += ids == cli_ids
                hits_h.update((' '.join(ids) + '\n').encode())
        finally:
            c.close()
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)

        res = {
            'records': a.n, 'questions': a.q, 'starts': a.starts, 'seed': a.seed,
            'data_sha256_16': data_hash, 'hits_sha256_16': hits_h.hexdigest()[:16],
            'store_build_s': round(build_s, 2),
            'start_to_url': summary(to_url),
            'start_to_first_answer': summary(to_answer),
            'baseline_cairn_stats_process': summary(stats_ms),
            'start_ratio_first_answer_vs_stats_p50': round(pct(to_answer, .5) / pct(stats_ms, .5), 3),
            'search': summary(search_ms),
            'baseline_cairn_recall_process': summary(cli_ms),
            'search_ratio_vs_recall_process_p50': round(pct(search_ms, .5) / pct(cli_ms, .5), 3),
            'same_hits': same,
            'machine': {'cpus': os.cpu_count(), 'load1_at_end': round(os.getloadavg()[0], 2)},
        }
        os.makedirs(os.path.dirname(a.out) or '.', exist_ok=True)
        with open(a.out, 'w') as f:
            json.dump(res, f, indent=2)
            f.write('\n')
        print('start: URL p50 %.1f ms, first answer p50 %.1f ms (cairn stats process p50 %.1f ms, ratio %.2f)'
              % (res['start_to_url']['p50_ms'], res['start_to_first_answer']['p50_ms'],
                 res['baseline_cairn_stats_process']['p50_ms'], res['start_ratio_first_answer_vs_stats_p50']))
        print('search: p50 %.1f ms, p90 %.1f ms (cairn recall process p50 %.1f ms, ratio %.2f); same hits %d/%d'
              % (res['search']['p50_ms'], res['search']['p90_ms'],
                 res['baseline_cairn_recall_process']['p50_ms'], res['search_ratio_vs_recall_process_p50'],
                 same, a.q))
        print('results: ' + a.out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
