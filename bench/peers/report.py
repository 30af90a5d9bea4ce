#!/usr/bin/python3
"""bench/peers/report.py -- the tables and charts of `make bench-peers`.

usage: report.py PEERS.json OUT_DIR WORK_DIR [DOC.md]

Layer: benchmark tooling. Holds: nothing but formatting; every number comes
from PEERS.json (bench/peers/run.py), and so do the rows' names and what
each was sent ("rows"). Writes OUT_DIR/peers.md (the run's facts, one
Markdown table per set with its secondary rows beneath, the start-up
floors, the cross-checks) and, with gnuplot, OUT_DIR/peers-cold.png and
OUT_DIR/peers-warm.png: MRR against p50 latency (log scale), one panel per
set, one point per main row. With DOC.md, puts peers.md between its lines
BEGIN and END (below) in place of what was there, so that the document's
tables are the run's without a hand edit. Must never: change a number it
prints, or touch DOC.md outside the two marker lines.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

BEGIN = '<!-- bench/peers/report.py: generated from bench/results/peers.json; begin -->'
END = '<!-- bench/peers/report.py: end -->'
ROLE_ORDER = ('main', 'keywords')


def f(x, nd=3):
    return '–' if x is None else ('%.*f' % (nd, x))


def ms(x):
    return '–' if x is None else ('%.0f' % x if x >= 10 else '%.1f' % x)


def rows_meta(d):
    """{row name: {system, sent, role}}; peers.json of before the rows
    were recorded has none: every row is then a main row named as is."""
    meta = d.get('rows') or {}
    return {n: meta.get(n) or {'system': n, 'sent': '', 'role': 'main'} for n in d['results']}


def run_facts(d):
    v = d['versions']
    commit = v.get('cairn_commit') or '?'
    short = '`%s`%s' % (commit[:7], commit[40:]) if len(commit) >= 40 else commit
    src = v.get('cairn_src_commit')
    if src and not commit.startswith(src):
        short += ' (its sources, src/, include/ and the Makefile, as of commit `%s`)' % src[:7]
    la0, la1 = d.get('load_average_start'), d.get('load_average_end')
    return ('Run at %s by `make bench-peers` (`bench/results/peers.json`). cairn was built '
            'from commit %s. Peers: qmd %s, server-memory %s, through the MCP SDK %s on Node '
            '%s; SQLite %s. Machine: %s cores (%s), load average %s at the start and %s at the '
            'end (1/5/15 min); the run took %.1f minutes. Latencies are in ms, RSS in MB, and '
            '"–" means not applicable. The keyword row is the %d rarest of the question\'s words '
            'in the store.' % (
                d['generated'][:16] + 'Z', short, v.get('@tobilu/qmd'),
                v.get('@modelcontextprotocol/server-memory'), v.get('@modelcontextprotocol/sdk'),
                v.get('node'), v.get('sqlite3'), v.get('cores'), (v.get('cpu') or '?').strip(),
                ' / '.join('%.1f' % x for x in la0) if la0 else '?',
                ' / '.join('%.1f' % x for x in la1) if la1 else '?',
                d['wall_s'] / 60.0, d.get('keywords') or 4))


def table_row(label, sent, r):
    if 'error' in r:
        return '| %s | %s | error: %s ||||||||||' % (label, sent,
                                                    r['error'][:120].replace('|', '/'))
    rss = r['peak_rss_mb']
    na = ('%d/%d' % (r['no_answer_empty'], r['no_answer'])) if r['no_answer'] else '–'
    ae = '–' if r.get('answerable_empty') is None else '%d' % r['answerable_empty']
    mb = lambda x: f(x, 0) if x else '–'  # noqa: E731
    return ('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s / %s / %s |'
            % (label, sent, f(r['recall@1']), f(r['recall@3']), f(r['recall@5']),
               f(r['recall@10']), f(r['mrr']), na, ae, ms(r['cold_p50_ms']),
               ms(r['cold_p95_ms']), ms(r['warm_p50_ms']), ms(r['warm_p95_ms']),
               f(r['ingest_s'], 2), mb(rss['ingest']), mb(rss['warm_server']),
               mb(rss['cold_query'])))


def secondary_line(meta, n, r):
    m = meta[n]
    if 'error' in r:
        return '- %s, sent %s: error: %s' % (m['system'], m['sent'], r['error'][:120])
    na = (', %d of %d no-answer questions empty' % (r['no_answer_empty'], r['no_answer'])
          if r['no_answer'] else '')
    if r.get('answerable_empty') is not None:
        na += ', nothing for %d of %d answerable' % (r['answerable_empty'], r['answerable'])
    err = (', %d tool error%s' % (r['tool_errors'], 's' if r['tool_errors'] > 1 else '')
           if r.get('tool_errors') else '')
    return '- %s, sent %s: R@3 %s, R@10 %s, MRR %s%s%s; warm p50 %s ms.' % (
        m['system'], m['sent'], f(r['recall@3']), f(r['recall@10']), f(r['mrr']), na, err,
        ms(r['warm_p50_ms']))


def markdown(d):
    res = d['results']
    meta = rows_meta(d)
    order = [n for role in ROLE_ORDER for n in res if meta[n]['role'] == role]
    second = [n for n in res if meta[n]['role'] not in ROLE_ORDER]
    lines = [textwrap.fill(run_facts(d), 96, break_long_words=False, break_on_hyphens=False), '']
    for s in d['sets']:
        info = d['sets'][s]
        lines.append('### %s (%d stores, %d rows, %d questions; cold subset %d)\n' % (
            s, info['stores'], info['corpus_rows'], info['queries'], info['cold_subset']))
        lines.append('| system | sent | R@1 | R@3 | R@5 | R@10 | MRR | no-answer empty | answerable empty | '
                     'cold p50 / p95 ms | warm p50 / p95 ms | ingest s | peak RSS MB '
                     '(ingest / server / cold) |')
        lines.append('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
        for n in order:
            r = res[n].get(s)
            if r is not None:
                label = meta[n]['system']
                lines.append(table_row('**%s**' % label if meta[n]['role'] == 'main' else label,
                                       meta[n]['sent'], r))
        sec = [secondary_line(meta, n, res[n][s]) for n in second if s in res[n]]
        if 'words_mean' in info:
            lines.append('\nPer question: %.1f words, %.1f keywords on average.' % (
                info['words_mean'], info['keywords_mean']))
        if sec:
            lines.append('\nSecondary rows, the question sent as one query (not in the table):')
            lines.extend(sec)
        lines.append('')
    st = d.get('startup_ms') or {}
    if st:
        lines.append('Processes that start and do nothing, p50 ms in the same run: %s.\n' % ', '.join(
            '`%s` %s' % (st[n]['command'], ms(st[n]['p50_ms'])) for n in st))
    lines.extend(cross_check_lines(d, meta))
    return '\n'.join(lines).rstrip('\n') + '\n'


def cross_check_lines(d, meta):
    res = d['results']
    cc = d.get('cross_checks') or {}
    sets = list(d['sets'])
    out = ['Cross-checks:']

    def agree(key):
        ok = [s for s in sets if (cc.get(s) or {}).get(key, {}).get('agrees')]
        bad = [s for s in sets if s not in ok]
        return ('every set (%d)' % len(sets) if not bad else
                '%s; **not** on %s' % (', '.join(ok) or 'no set', ', '.join(bad)))
    if 'cairn' in res:
        out.append("- cairn's MCP scores equal `cairn eval`: %s." % agree('cairn_eval'))
    if 'fts5' in res:
        out.append("- plain FTS5's scores equal `../shared/tools/fts5_baseline.py`: %s."
                   % agree('fts5_anchor'))
    cold = []
    for n in res:
        for s in sets:
            r = res[n].get(s) or {}
            if r.get('cold_queries'):
                cold.append((n, s, r['cold_agrees'], r['cold_agrees'] + r['cold_disagrees']))
    if cold:
        bad = ['%s on %s %d of %d' % (meta[n]['system'], s, a, t) for n, s, a, t in cold if a != t]
        out.append('- the cold ids equal the warm ids: %s.' % (
            'for every question of every main row and set (%d of %d)' % (
                sum(c[2] for c in cold), sum(c[3] for c in cold)) if not bad else
            'not everywhere: ' + ', '.join(bad)))
    errs = ['%s (%s) on %s: %d' % (meta[n]['system'], meta[n]['sent'], s, res[n][s]['tool_errors'])
            for n in res for s in sets if (res[n].get(s) or {}).get('tool_errors')]
    out.append('- tool errors (counted as empty answers): %s.' % ('; '.join(errs) if errs
                                                                 else 'none'))
    return out


def splice(doc, text):
    with open(doc, encoding='utf-8') as fh:
        src = fh.read()
    if src.count(BEGIN) != 1 or src.count(END) != 1 or src.index(BEGIN) > src.index(END):
        print('report.py: %s has no single %s ... %s block; not changed' % (doc, BEGIN, END),
              file=sys.stderr)
        return
    a = src.index(BEGIN) + len(BEGIN)
    b = src.index(END)
    with open(doc, 'w', encoding='utf-8') as fh:
        fh.write(src[:a] + '\n' + text + src[b:])
    print('report.py: tables of %s updated' % doc)


def charts(d, out, work):
    if not shutil.which('gnuplot'):
        print('report.py: gnuplot missing, no charts', file=sys.stderr)
        return
    res = d['results']
    meta = rows_meta(d)
    mains = [n for n in res if meta[n]['role'] == 'main']
    cdir = os.path.join(work, 'chart')
    os.makedirs(cdir, exist_ok=True)
    terms = subprocess.run(['gnuplot', '-e', 'set terminal'], capture_output=True, text=True)
    terminal = ("set terminal pngcairo size 1200,900 font ',10'"
                if 'pngcairo' in terms.stderr + terms.stdout else 'set terminal png size 1200,900')
    for mode in ('cold', 'warm'):
        plots = []
        for s in d['sets']:
            dat = os.path.join(cdir, '%s-%s.dat' % (mode, s))
            with open(dat, 'w') as fh:
                k = z = 0
                for n in mains:
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
                                                  meta[n]['system'], ly))
            plots.append("set title '%s'\nplot '%s' using 1:2 with points pt 7 ps 1.5 "
                         "notitle, '' using 1:4:3 with labels font ',9' notitle" % (s, dat))
        png = os.path.join(out, 'peers-%s.png' % mode)
        what = ('a new process per query (what a hook pays)' if mode == 'cold'
                else 'one resident process (warm)')
        script = '\n'.join([
            terminal, "set output '%s'" % png,
            "set multiplot layout 2,2 title 'MRR against p50 latency, %s; each system as its "
            "docs drive it; %s'" % (what, d['generated']),
            'set logscale x', "set xlabel 'p50 ms (log)'", "set ylabel 'MRR'",
            'set yrange [0:1.1]', 'set grid', 'set offsets graph 0.15, graph 0.15, 0, 0',
        ] + plots + ['unset multiplot'])
        sp = os.path.join(cdir, 'peers-%s.gp' % mode)
        with open(sp, 'w') as fh:
            fh.write(script + '\n')
        subprocess.run(['gnuplot', sp], check=True)
        print('chart: %s' % png)


def main():
    if len(sys.argv) not in (4, 5):
        sys.stderr.write('usage: report.py PEERS.json OUT_DIR WORK_DIR [DOC.md]\n')
        sys.exit(2)
    src, out, work = sys.argv[1:4]
    with open(src) as fh:
        d = json.load(fh)
    text = markdown(d)
    with open(os.path.join(out, 'peers.md'), 'w') as fh:
        fh.write(text)
    if len(sys.argv) == 5:
        splice(sys.argv[4], text)
    charts(d, out, work)


if __name__ == '__main__':
    main()
