#!/bin/sh
# make demo: compress a real dataset shipped in the repo, check the round trip, show the figures.
set -eu
CLI=${1:-build/release/tschunk}
DATA=tests/data/nab_ambient_temperature_system_failure.csv.gz
OUT=build/demo
mkdir -p $OUT
gzip -dc $DATA > $OUT/ambient_temperature.csv
echo "== dataset: NAB realKnownCause/ambient_temperature_system_failure (MIT, Numenta)"
echo "   $(wc -l < $OUT/ambient_temperature.csv) lines, $(wc -c < $OUT/ambient_temperature.csv) bytes of CSV; first lines:"
head -3 $OUT/ambient_temperature.csv | sed 's/^/     /'
echo
echo "== tschunk compress (120-sample chunks, as Prometheus cuts them)"
$CLI compress $OUT/ambient_temperature.csv -o $OUT/ambient_120.tseg --samples-per-chunk 120 --verify
echo
echo "== tschunk compress (default 1024-sample chunks)"
$CLI compress $OUT/ambient_temperature.csv -o $OUT/ambient.tseg --verify
echo
echo "== tschunk compress --summary (a DDSketch per 120-sample chunk, for quantiles without decoding)"
$CLI compress $OUT/ambient_temperature.csv -o $OUT/ambient_summary.tseg --samples-per-chunk 120 --summary
echo
echo "== tschunk stats"
$CLI stats $OUT/ambient.tseg
echo
echo "== tschunk quantiles: the whole file, from the summaries, against the exact answers"
$CLI quantiles $OUT/ambient_summary.tseg --q 0.01,0.5,0.9,0.99 --exact
echo
echo "== tschunk quantiles: one month (2013-12), whole chunks from summaries, the two cut chunks decoded"
$CLI quantiles $OUT/ambient_summary.tseg --q 0.5,0.99 --from '2013-12-01 00:00:00' --to '2013-12-31 23:59:59.999'
echo
echo "== tschunk ls: the segment's series (a two-column CSV is one series named after the file)"
$CLI ls $OUT/ambient_summary.tseg
echo
echo "== tschunk delete: drop 2013-12-25 (a copy), then every reader leaves it out"
cp $OUT/ambient_summary.tseg $OUT/ambient_deleted.tseg
$CLI delete $OUT/ambient_deleted.tseg ambient_temperature --from '2013-12-25 00:00:00' --to '2013-12-25 23:59:59.999'
$CLI verify $OUT/ambient_deleted.tseg
$CLI quantiles $OUT/ambient_deleted.tseg --q 0.5,0.99 --from '2013-12-01 00:00:00' --to '2013-12-31 23:59:59.999' | grep -E "^(samples|chunks) "
echo
echo "== tschunk decompress --iso (round trip back to CSV)"
$CLI decompress $OUT/ambient.tseg -o $OUT/roundtrip.csv --iso
head -4 $OUT/roundtrip.csv | sed 's/^/     /'
$CLI decompress $OUT/ambient.tseg -o $OUT/roundtrip_bits.csv --bits
echo "   values re-read bit-for-bit: $(wc -l < $OUT/roundtrip_bits.csv) lines written"
echo
echo "demo ok: files in $OUT/"
