#!/usr/bin/python3
"""bench/peers/score.py -- one scorer for every system of `make bench-peers`.

Usage: score.py QUERIES.jsonl RANKED.jsonl   (prints one JSON object)
       score.py --self-test                  (a fixture with known scores)

QUERIES: the eval format of ../shared/eval ({"id", "answers", ...}; answers
[] = the corpus holds no answer). RANKED: the common ranked-output format
every driver writes, one line per query:
    {"qid": "...", "ids": ["best", "next", ...], "ms": 12.3}
ids are corpus ids, best first, at most 10 are read; "ms" is the query's
latency (null when not timed).

Metrics, the same for every system:
  recall@k  share of answerable queries with an answer in the first k ids
  mrr       mean of 1/rank of the first answer in the first 10 (0 if none)
  no_answer_empty  share of no-answer queries whose ids list is empty
  answerable_empty answerable queries whose ids list is empty (what a
                   no-match floor costs)
  p50_ms, p95_ms   nearest-rank percentiles of the timed queries
A query missing from RANKED counts as a miss (answerable) or as answered
(no-answer), and is counted in "missing".
"""
import json
import math
import sys


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return round(xs[max(0, math.ceil(p / 100.0 * len(xs)) - 1)], 2)


def score(queries_path, ranked_path):
    ranked = {}
    with open(ranked_path, encoding='utf-8') as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                ranked[r['qid']] = r
    n = na = na_empty = ans_empty = missing = 0
    hits = {1: 0, 3: 0, 5: 0, 10: 0}
    rr = 0.0
    ms = []
    with open(queries_path, encoding='utf-8') as f:
        qs = [json.loads(l) for l in f if l.strip()]
    for q in qs:
        r = ranked.get(q['id'])
        if r is None:
            missing += 1
            ids = None
        else:
            ids = r['ids'][:10]
            if r.get('ms') is not None:
                ms.append(float(r['ms']))
        if not q['answers']:
            na += 1
            na_empty += bool(ids is not None and len(ids) == 0)
            continue
        n += 1
        ans_empty += bool(ids is not None and len(ids) == 0)
        ans = set(q['answers'])
        first = next((i for i, x in enumerate(ids or []) if x in ans), None)
        if first is not None:
            rr += 1.0 / (first + 1)
            for k in hits:
                if first < k:
                    hits[k] += 1
    out = {'answerable': n}
    for k in (1, 3, 5, 10):
        out['recall@%d' % k] = round(hits[k] / n, 4) if n else None
    out['mrr'] = round(rr / n, 4) if n else None
    out['no_answer'] = na
    out['no_answer_empty'] = na_empty
    out['no_answer_empty_rate'] = round(na_empty / na, 4) if na else None
    out['answerable_empty'] = ans_empty
    out['timed'] = len(ms)
    out['p50_ms'] = pct(ms, 50)
    out['p95_ms'] = pct(ms, 95)
    out['missing'] = missing
    return out


def self_test():
    """A fixture with known answers; a swapped ranking must score differently."""
    import os
    import tempfile
    d = tempfile.mkdtemp()
    q, r = os.path.join(d, 'q.jsonl'), os.path.join(d, 'r.jsonl')
    with open(q, 'w') as f:
        f.write('{"id":"a","answers":["x"]}\n{"id":"b","answers":["y","z"]}\n'
                '{"id":"c","answers":["w"]}\n{"id":"n1","answers":[]}\n{"id":"n2","answers":[]}\n')

    def run(lines):
        with open(r, 'w') as f:
            f.write('\n'.join(json.dumps(x) for x in lines) + '\n')
        return score(q, r)
    good = run([{'qid': 'a', 'ids': ['x'], 'ms': 1}, {'qid': 'b', 'ids': ['p', 'q', 'z'], 'ms': 3},
                {'qid': 'c', 'ids': ['p'] * 10 + ['w'], 'ms': 2}, {'qid': 'n1', 'ids': [], 'ms': 4},
                {'qid': 'n2', 'ids': ['x'], 'ms': 5}])
    want = {'recall@1': 0.3333, 'recall@3': 0.6667, 'recall@10': 0.6667, 'mrr': 0.4444,
            'no_answer_empty': 1, 'answerable_empty': 0, 'p50_ms': 3.0, 'p95_ms': 5.0, 'missing': 0}
    bad = [k for k in want if good[k] != want[k]]
    swapped = run([{'qid': 'a', 'ids': ['p', 'x']}, {'qid': 'b', 'ids': ['z']}])
    if (swapped['recall@1'] != 0.3333 or swapped['mrr'] != 0.5 or swapped['missing'] != 3
            or swapped['answerable_empty'] != 0):
        bad.append('swapped')
    print('score.py self-test: %s' % ('ok' if not bad else 'FAILED ' + ' '.join(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    if sys.argv[1:] == ['--self-test']:
        sys.exit(self_test())
    if len(sys.argv) != 3:
        sys.stderr.write('usage: score.py QUERIES.jsonl RANKED.jsonl\n')
        sys.exit(2)
    print(json.dumps(score(sys.argv[1], sys.argv[2])))
