#!/bin/sh
# Stage an install with DESTDIR, then build and run a consumer through pkg-config.
set -eu
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=/opt/tschunk
make --no-print-directory BUILD=build/install-check PREFIX=$prefix DESTDIR="$stage" install >/dev/null
export PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage$prefix/lib/pkgconfig" PKG_CONFIG_LIBDIR=""
cat > "$stage/consumer.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <tschunk.h>
int main(void) {
    unsigned char buf[TSCHUNK_BOUND(3)];
    int64_t ts[3] = {1000, 2000, 3000}, out_ts[3];
    double v[3] = {1.5, 2.5, 2.5}, out_v[3];
    size_t n = tschunk_encode(buf, sizeof buf, ts, v, 3, NULL);
    if (tschunk_is_error(n)) { puts(tschunk_error_name(n)); return 1; }
    size_t got = tschunk_decode(buf, n, out_ts, out_v, 3);
    if (got != 3 || memcmp(ts, out_ts, sizeof ts) || memcmp(v, out_v, sizeof v)) return 1;
    printf("consumer ok: tschunk %s, %zu bytes\n", tschunk_version_string(), n);
    return 0;
}
C
cc -std=c99 -Wall -Werror $(pkg-config --cflags libtschunk) "$stage/consumer.c" \
   $(pkg-config --libs libtschunk) -o "$stage/consumer"
LD_LIBRARY_PATH="$stage$prefix/lib" "$stage/consumer"
version=$(make --no-print-directory -s version)
LD_LIBRARY_PATH="$stage$prefix/lib" "$stage/consumer" | grep -qF "tschunk $version," \
  || { echo "check-install: the library does not call itself $version" >&2; exit 1; }
[ "$(pkg-config --modversion libtschunk)" = "$version" ] || { echo "check-install: .pc version" >&2; exit 1; }
readelf -d "$stage$prefix/lib/libtschunk.so.$version" | grep -q 'SONAME.*libtschunk.so.0' \
  || { echo "check-install: soname missing" >&2; exit 1; }
cc -static -std=c99 $(pkg-config --cflags libtschunk) "$stage/consumer.c" \
   "$stage$prefix/lib/libtschunk.a" -lm -o "$stage/consumer-static" && "$stage/consumer-static" >/dev/null
echo "check-install: ok (pkg-config, shared with soname libtschunk.so.0, static)"
