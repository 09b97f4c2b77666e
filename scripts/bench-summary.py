#!/usr/bin/env python3
"""Median, over several `make bench` outputs, of the wall-time columns, as a README table.

usage: scripts/bench-summary.py RUN1.txt RUN2.txt ... [--chunk 120]
"""
import statistics, sys

ROWS = ['const-regular', 'const-jitter', 'counter', 'gauge-2dp', 'random',
        'real: value-only (23 files)', 'real: timestamped (15 files)']
PROM = {'const-regular': (9.7, 5.1), 'const-jitter': (13.2, 11.4), 'counter': (52.8, 18.5),
        'gauge-2dp': (60.4, 20.4), 'random': (42.6, 20.9), 'real: value-only (23 files)': (44.3, 13.8),
        'real: timestamped (15 files)': (41.4, 14.4)}


def main():
    args = sys.argv[1:]
    chunk = '120'
    if '--chunk' in args:
        i = args.index('--chunk'); chunk = args[i + 1]; del args[i:i + 2]
    cells = {}
    for path in args:
        for line in open(path):
            c = [x.strip() for x in line.strip().strip('|').split('|')]
            if len(c) < 8 or c[2] != chunk or c[0] not in ROWS:
                continue
            for k, col in (('push', 4), ('iter', 5), ('batch', 6)):
                cells.setdefault((c[0], c[1], k), []).append(float(c[col]))
    def cell(w, codec, k):
        v = cells.get((w, codec, k), [])
        if not v:
            return '-'
        return '%.1f (%.1f-%.1f)' % (statistics.median(v), min(v), max(v)) if len(v) > 1 else '%.1f' % v[0]
    print('| workload (chunk %s) | tschunk append | tschunk iterator | tschunk batch | prom-xor append | '
          'prom-xor batch | Prometheus 3.14 append | Prometheus 3.14 decode |' % chunk)
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    for w in ROWS:
        p = PROM[w]
        print('| %s | %s | %s | %s | %s | %s | %.1f | %.1f |' % (
            w, cell(w, 'tschunk', 'push'), cell(w, 'tschunk', 'iter'), cell(w, 'tschunk', 'batch'),
            cell(w, 'prom-xor', 'push'), cell(w, 'prom-xor', 'batch'), p[0], p[1]))
    print('\nMedian of %d `make bench` runs (each itself a median of 7 repetitions); brackets: lowest and '
          'highest run. Prometheus figures include ~3 ns of Go benchmark loop.' % len(args))


if __name__ == '__main__':
    main()
