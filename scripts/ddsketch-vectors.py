#!/usr/bin/env python3
"""Convert the DDSketch golden vectors (../shared/vectors/ddsketch/*.json, produced by sketches-java and
sketches-go) into the line format the C tests read (tests/vectors/ddsketch/*.txt). Run once; the output is
committed. Inputs of the two 100,000-value datasets are not copied: those vectors are decode-tested only.

Line format (hex = IEEE-754 bit pattern or bytes, lower case):
  producer java|go / mapping KIND RA_HEX GAMMA_HEX OFFSET_HEX EFFECTIVE_RA_HEX / store KIND
  deterministic 0|1 / values N (then N lines "v HEX [WEIGHT_HEX]", absent for file-backed inputs)
  encoded HEX / encoded_omit HEX / exact_encoded HEX / exact_stats COUNT SUM MIN MAX
  quantiles 9 x (HEX|null) / exact_quantiles 9 x HEX / decoded_quantiles_java 9 x HEX
  decoded_zero HEX / dbin +|- INDEX COUNT_HEX (decoded bins) / end
"""
import glob, json, os, sys

src = sys.argv[1] if len(sys.argv) > 1 else '../shared/vectors/ddsketch'
dst = sys.argv[2] if len(sys.argv) > 2 else 'tests/vectors/ddsketch'
os.makedirs(dst, exist_ok=True)

def qs(lst):
    return ' '.join(q['hex'] if q and q.get('hex') else 'null' for q in lst)

n = 0
for path in sorted(glob.glob(os.path.join(src, '*.json'))):
    d = json.load(open(path))
    m = d['mapping']
    lines = ['name ' + d['name'], 'producer ' + d['name'].split('_')[0],
             'mapping %s %s %s %s %s' % (m['kind'], m['relative_accuracy_hex'], m['gamma_hex'],
                                         m['index_offset_hex'], m['effective_relative_accuracy']['hex']),
             'store ' + d['store'], 'deterministic %d' % (1 if d['encoded_deterministic'] else 0)]
    inp = d['input']
    if 'values_hex' in inp and inp['values_hex'] is not None:
        lines.append('values %d' % len(inp['values_hex']))
        w = inp.get('weights_hex')
        for i, v in enumerate(inp['values_hex']):
            lines.append('v %s' % v + (' ' + w[i] if w else ''))
    lines.append('encoded ' + d['encoded_hex'])
    lines.append('encoded_omit ' + d['encoded_omit_mapping_hex'])
    e = d['exact_summary_statistics']
    lines.append('exact_encoded ' + e['encoded_hex'])
    hexes = [e[k]['hex'] if e.get(k) else 'null' for k in ('count', 'sum', 'min', 'max')]
    lines.append('exact_stats ' + ' '.join(hexes))
    lines.append('quantiles ' + qs(d['quantiles']))
    lines.append('exact_quantiles ' + qs(e['quantiles']))
    dec = d['decoded']
    lines.append('decoded_quantiles_java ' + qs(dec['quantiles_java']))
    lines.append('decoded_zero ' + dec['zero_count']['hex'])
    for sign, key in (('+', 'bins_positive'), ('-', 'bins_negative')):
        for idx, chex, _ in dec[key]:
            lines.append('dbin %s %d %s' % (sign, idx, chex))
    lines.append('end')
    open(os.path.join(dst, d['name'] + '.txt'), 'w').write('\n'.join(lines) + '\n')
    n += 1
print('%d vectors written to %s' % (n, dst))
