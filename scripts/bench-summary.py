#!/usr/bin/env python3
"""Medians, over several `make bench` outputs, as README tables: wall time per codec, and sizes.

usage: scripts/bench-summary.py RUN1.txt RUN2.txt ... [--chunk 120] [--sizes | --glance]
--glance: README's "At a glance" table (codecs 2 and 1 at 1,024-sample chunks, Prometheus XOR at 120), from
the runs scripts/glance.sh makes.
"""
import statistics, sys

ROWS = ['const-regular', 'const-jitter', 'counter', 'gauge-2dp', 'random',
        'real: value-only (23 files)', 'real: timestamped (15 files)']
PROM = {'const-regular': (9.7, 5.1), 'const-jitter': (13.2, 11.4), 'counter': (52.8, 18.5),
        'gauge-2dp': (60.4, 20.4), 'random': (42.6, 20.9), 'real: value-only (23 files)': (44.3, 13.8),
        'real: timestamped (15 files)': (41.4, 14.4)}
CODECS = ['tsc2', 'tschunk', 'prom-xor']  # codec 2, codec 1 (Gorilla), this library's Prometheus XOR


# The `make bench` columns read, by their header's names (columns were added over releases).
COLUMNS = {'push': 'push ns', 'iter': 'iter ns/sample', 'batch': 'batch ns/sample', 'bytes': 'bytes/sample',
           'many': 'many ns', 'staged': 'staged ns', 'chunks': 'chunks ns/sample'}


def read(paths, chunk):
    cells = {}
    for path in paths:
        at = None
        for line in open(path):
            c = [x.strip() for x in line.strip().strip('|').split('|')]
            if c and c[0] == 'workload':
                at = {k: c.index(name) for k, name in COLUMNS.items() if name in c}
                continue
            if at is None or len(c) < 4 or c[2] != chunk or c[0] not in ROWS:
                continue
            for k, col in at.items():
                try:
                    cells.setdefault((c[0], c[1], k), []).append(float(c[col]))
                except (ValueError, IndexError):
                    pass
    return cells


def fast_sets(paths):
    """The runs of the sets (NAME.i) whose probes (probe.i: before, after) read within 5% of the fastest, and the
    files that belong to no set."""
    probes = {}
    for path in paths:
        name, _, i = path.rpartition('.')
        if name.endswith('probe'):
            probes[i] = max(float(x) for x in open(path).read().split())
    if not probes:
        return paths
    fastest = min(probes.values())
    kept = {i for i, v in probes.items() if v <= fastest * 1.05}
    print('%d of %d sets kept: probes %.2f-%.2f (fastest %.2f)' % (
        len(kept), len(probes), min(probes[i] for i in kept), max(probes[i] for i in kept), fastest))
    return [p for p in paths if not p.rpartition('.')[2].isdigit() or
            (p.rpartition('.')[2] in kept and not p.rpartition('.')[0].endswith('probe'))]


def glance(paths):
    """One row a workload: sizes, then each codec's appends (one at a time / staged / bulk) and decodes."""
    paths = fast_sets(paths)
    native, prom = read(paths, '1024'), read(paths, '120')

    def med(cells, w, codec, k, fmt='%.2f'):
        v = cells.get((w, codec, k), [])
        return fmt % statistics.median(v) if v else '-'

    print('| workload | bytes: codec 2 / codec 1 / Prom XOR | codec 2 append: one / staged / bulk | codec 2 decode '
          '| codec 1 append: one / staged / bulk | codec 1 decode: one chunk / 16 a call '
          '| Prom XOR append: one / staged / bulk | Prom XOR decode: one chunk / 16 a call |')
    print('|---|---|---|---:|---|---|---|---|')

    def cells_of(cells, w, codec, kinds, fmt='%.2f'):
        return ' / '.join(med(cells, w, codec, k, fmt) for k in kinds)

    appends, decodes = ('push', 'staged', 'many'), ('batch', 'chunks')
    for w in ROWS:
        sizes = ' / '.join(med(native, w, codec, 'bytes', '%.3f') for codec in CODECS)  # all at 1,024 samples
        print('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
            'random doubles' if w == 'random' else w, sizes, cells_of(native, w, 'tsc2', appends),
            med(native, w, 'tsc2', 'batch'), cells_of(native, w, 'tschunk', appends),
            cells_of(native, w, 'tschunk', decodes), cells_of(prom, w, 'prom-xor', appends),
            cells_of(prom, w, 'prom-xor', decodes)))


def main():
    args = sys.argv[1:]
    if '--glance' in args:
        args.remove('--glance')
        glance(args)
        return
    chunk = '120'
    sizes = '--sizes' in args
    if sizes:
        args.remove('--sizes')
    if '--chunk' in args:
        i = args.index('--chunk'); chunk = args[i + 1]; del args[i:i + 2]
    cells = read(args, chunk)

    def med(w, codec, k):
        v = cells.get((w, codec, k), [])
        return statistics.median(v) if v else None

    def cell(w, codec, k):
        v = cells.get((w, codec, k), [])
        if not v:
            return '-'
        return '%.1f (%.1f-%.1f)' % (statistics.median(v), min(v), max(v)) if len(v) > 1 else '%.1f' % v[0]

    if sizes:
        print('| workload (chunk %s) | codec 2 | codec 1 (Gorilla) | Prometheus XOR | codec 2 vs codec 1 | '
              'codec 2 vs Prometheus |' % chunk)
        print('|---|---:|---:|---:|---:|---:|')
        for w in ROWS:
            t, g, p = med(w, 'tsc2', 'bytes'), med(w, 'tschunk', 'bytes'), med(w, 'prom-xor', 'bytes')
            if None in (t, g, p):
                continue
            print('| %s | %.3f | %.3f | %.3f | %+.1f%% | %+.1f%% |' % (w, t, g, p, (t / g - 1) * 100, (t / p - 1) * 100))
        print('\nBytes per sample (timestamp + value), from `make bench`.')
        return
    print('| workload (chunk %s) | codec 2 append | codec 2 iterator | codec 2 batch | codec 1 append | '
          'codec 1 iterator | codec 1 batch | prom-xor append | prom-xor batch | Prometheus 3.14 append | '
          'Prometheus 3.14 decode |' % chunk)
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for w in ROWS:
        p = PROM[w]
        print('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f |' % (
            w, cell(w, 'tsc2', 'push'), cell(w, 'tsc2', 'iter'), cell(w, 'tsc2', 'batch'),
            cell(w, 'tschunk', 'push'), cell(w, 'tschunk', 'iter'), cell(w, 'tschunk', 'batch'),
            cell(w, 'prom-xor', 'push'), cell(w, 'prom-xor', 'batch'), p[0], p[1]))
    print('\nMedian of %d `make bench` runs (each itself a median of 7 repetitions); brackets: lowest and '
          'highest run. Prometheus figures include ~3 ns of Go benchmark loop.' % len(args))


if __name__ == '__main__':
    main()
