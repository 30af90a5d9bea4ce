#!/usr/bin/python3
"""bench/peers/report.py -- the table and charts of `make bench-peers`.

usage: report.py PEERS.json OUT_DIR WORK_DIR

Layer: benchmark tooling. Holds: nothing but formatting; every number comes
from PEERS.json (bench/peers/run.py). Writes OUT_DIR/peers.md (one Markdown
table per set) and, with gnuplot, OUT_DIR/peers-cold.png and
OUT_DIR/peers-warm.png: MRR against p50 latency (log scale), one panel per
set, one point per system. Must never: change a number it prints.
"""
import json
import os
import shutil
import subprocess
import sys

LABEL = {'cairn': 'cairn', 'fts5': 'FTS5 porter', 'qmd': 'qmd search',
         'memory': 'server-memory', 'memory-words': 'server-memory, per word'}


def f(x, nd=3):
    return '–' if x is None else ('%.*f' % (nd, x))


def ms(x):
    return '–' if x is None else ('%.0f' % x if x >= 10 else '%.1f' % x)


def main():
    src, out, work = sys.argv[1:4]
    d = json.load(open(src))
    res = d['results']
    systems = list(res)
    sets = list(d['sets'])
    lines = []
    for s in sets:
        info = d['sets'][s]
        lines.append('### %s (%d stores, %d rows, %d questions; cold subset %d)\n' % (
            s, info['stores'], info['corpus_rows'], info['queries'], info['cold_subset']))
        lines.append('| system | R@1 | R@3 | R@5 | R@10 | MRR | no-answer empty | '
                     'cold p50 / p95 ms | warm p50 / p95 ms | ingest s | peak RSS MB '
                     '(ingest / server / cold) |')
        lines.append('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
        for n in systems:
            r = res[n].get(s)
            if r is None:
                continue
            if 'error' in r:
                lines.append('| %s | error: %s |||||||||| ' % (LABEL.get(n, n),
                                                             r['error'][:120].replace('|', '/')))
                continue
            rss = r['peak_rss_mb']
            na = ('%d/%d' % (r['no_answer_empty'], r['no_answer'])) if r['no_answer'] else '–'
            lines.append('| %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s / %s / %s |' % (
                LABEL.get(n, n), f(r['recall@1']), f(r['recall@3']), f(r['recall@5']),
                f(r['recall@10']), f(r['mrr']), na, ms(r['cold_p50_ms']), ms(r['cold_p95_ms']),
                ms(r['warm_p50_ms']), ms(r['warm_p95_ms']), f(r['ingest_s'], 2),
                f(rss['ingest'], 0) if rss['ingest'] else '–',
                f(rss['warm_server'], 0) if rss['warm_server'] else '–',
                f(rss['cold_query'], 0) if rss['cold_query'] else '–'))
        lines.append('')
    with open(os.path.join(out, 'peers.md'), 'w') as fh:
        fh.write('\n'.join(lines))
    if not shutil.which('gnuplot'):
        print('report.py: gnuplot missing, no charts', file=sys.stderr)
        return
    cdir = os.path.join(work, 'chart')
    os.makedirs(cdir, exist_ok=True)
    for mode in ('cold', 'warm'):
        plots = []
        for i, s in enumerate(sets):
            dat = os.path.join(cdir, '%s-%s.dat' % (mode, s))
            with open(dat, 'w') as fh:
                k = z = 0
                for n in systems:
                    r = res[n].get(s)
                    if not r or 'error' in r or r.get(mode + '_p50_ms') is None:
                        continue
                    y = r['mrr'] or 0
                    # labels above and below in turn, so that close points stay legible
                    if y > 0.06:
                        ly = y + (0.05 if k % 2 == 0 else -0.05)
                        k += 1
                    else:  # points at the bottom: stacked labels
                        ly = y + 0.04 + 0.045 * z
                        z += 1
                    fh.write('%g %g "%s" %g\n' % (max(r[mode + '_p50_ms'], 0.01), y,
                                                  LABEL.get(n, n), ly))
            plots.append("set title '%s'\nplot '%s' using 1:2 with points pt 7 ps 1.5 "
                         "notitle, '' using 1:4:3 with labels font ',9' notitle"
                         % (s, dat))
        png = os.path.join(out, 'peers-%s.png' % mode)
        what = ('a new process per query (what a hook pays)' if mode == 'cold'
                else 'one resident process (warm)')
        script = '\n'.join([
            "set terminal pngcairo size 1200,900 font ',10'" if 'pngcairo' in
            subprocess.run(['gnuplot', '-e', 'set terminal'], capture_output=True,
                           text=True).stderr + subprocess.run(
                ['gnuplot', '-e', 'set terminal'], capture_output=True, text=True).stdout
            else "set terminal png size 1200,900",
            "set output '%s'" % png,
            "set multiplot layout 2,2 title 'MRR against p50 latency, %s; %s'" % (
                what, d['generated']),
            'set logscale x', "set xlabel 'p50 ms (log)'", "set ylabel 'MRR'",
            'set yrange [0:1.05]', 'set grid', 'set offsets graph 0.15, graph 0.15, 0, 0',
        ] + plots + ['unset multiplot'])
        sp = os.path.join(cdir, 'peers-%s.gp' % mode)
        with open(sp, 'w') as fh:
            fh.write(script + '\n')
        subprocess.run(['gnuplot', sp], check=True)
        print('chart: %s' % png)


if __name__ == '__main__':
    main()
