#!/bin/sh
# The shared library exports only tschunk_ symbols; the static archive defines
# only tschunk_ (public) and tsc_ (internal) globals, so nothing clashes with
# a consumer's names.
set -eu
dir=$(dirname "$1")
bad=$(nm -D --defined-only "$dir/libtschunk.so" | awk 'NF==3 {print $3}' | grep -v '^tschunk_' || true)
[ -z "$bad" ] || { echo "check-symbols: unprefixed exports in libtschunk.so:"; echo "$bad"; exit 1; }
bad=$(nm -g --defined-only "$1" | awk 'NF==3 {print $3}' | grep -Ev '^(tschunk_|tsc_)' || true)
[ -z "$bad" ] || { echo "check-symbols: unprefixed globals in libtschunk.a:"; echo "$bad"; exit 1; }
echo "check-symbols: ok ($(nm -D --defined-only "$dir/libtschunk.so" | awk 'NF==3' | wc -l) exports, all tschunk_)"
