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
# The static-linking-only inline append: the same chunk as tschunk_append, read back by the inline iterator
# steps (0.42.1), from a -Wpedantic C99 consumer
# linked with the installed libtschunk.a; and the header under -Wpedantic C++ where there is a C++ compiler.
cat > "$stage/inline.c" <<'C'
#define TSCHUNK_STATIC_LINKING_ONLY
#include <string.h>
#include <tschunk.h>
int main(void) {
    unsigned char a[TSCHUNK_BOUND(300)], b[TSCHUNK_BOUND(300)];
    tschunk_encoder ea, eb;
    if (tschunk_encoder_init(&ea, a, sizeof a, NULL) || tschunk_encoder_init(&eb, b, sizeof b, NULL)) return 1;
    for (int i = 0; i < 300; i++) {
        double v = (i % 17) * 0.25;
        if (tschunk_append_inline(&ea, 1000 * (int64_t)i, v) || tschunk_append(&eb, 1000 * (int64_t)i, v)) return 1;
    }
    size_t na = tschunk_encoder_finish(&ea), nb = tschunk_encoder_finish(&eb);
    if (na != nb || tschunk_is_error(na) || memcmp(a, b, na) != 0) return 1;
    /* the inline iterator steps: the samples appended */
    unsigned char p[TSCHUNK_PROM_BOUND(300)];
    int64_t ts[300];
    double vs[300], v;
    for (int i = 0; i < 300; i++) ts[i] = 1000 * (int64_t)i, vs[i] = (i % 17) * 0.25;
    size_t np = tschunk_prom_encode(p, sizeof p, ts, vs, 300, NULL);
    tschunk_iter it;
    tschunk_prom_iter pit;
    if (tschunk_is_error(np) || tschunk_iter_init(&it, a, na) || tschunk_prom_iter_init(&pit, p, np)) return 1;
    int64_t t;
    for (int i = 0; i < 300; i++) {
        if (tschunk_iter_next_inline(&it, &t, &v) != 1 || t != ts[i] || v != vs[i]) return 1;
        if (tschunk_prom_iter_next_inline(&pit, &t, &v) != 1 || t != ts[i] || v != vs[i]) return 1;
    }
    return tschunk_iter_next_inline(&it, &t, &v) != 0 || tschunk_prom_iter_next_inline(&pit, &t, &v) != 0;
}
C
cc -static -std=c99 -Wall -Wextra -Wpedantic -Wconversion -Werror $(pkg-config --cflags libtschunk) "$stage/inline.c" \
   "$stage$prefix/lib/libtschunk.a" -lm -o "$stage/inline" && "$stage/inline"
# Segments in a fully static binary (Debian ships no libroaring.a; since 0.48.0 the library writes and reads
# the roaring blobs itself): one written to memory through the io calls, verified, opened, read back, and a
# delete (a tombstone blob) through the same io.
cat > "$stage/segment.c" <<'C'
#include <string.h>
#include <tschunk.h>
static unsigned char file[2][1 << 16];
static size_t file_size[2];
static int put(void *ctx, const void *d, size_t n, uint64_t at) {
    size_t *k = ctx;
    if (at + n > sizeof file[0]) return 1;
    memcpy(file[*k] + at, d, n);
    if (at + n > file_size[*k]) file_size[*k] = (size_t)(at + n);
    return 0;
}
static int get(void *ctx, void *d, size_t n, uint64_t at) {
    size_t *k = ctx;
    if (at + n > file_size[*k]) return 1;
    memcpy(d, file[*k] + at, n);
    return 0;
}
int main(int argc, char **argv) {
    unsigned char chunk[TSCHUNK_BOUND(3)];
    int64_t ts[3] = {1000, 2000, 3000}, out_ts[3];
    double v[3] = {1.5, 2.5, 2.5}, out_v[3];
    size_t first = 0, second = 1, n = tschunk_encode(chunk, sizeof chunk, ts, v, 3, NULL);
    tschunk_segment_io io = {put, get, &first}, io2 = {put, get, &second};
    tschunk_segment_writer *w;
    tschunk_segment *seg;
    uint64_t deleted = 0;
    if (tschunk_is_error(n) || tschunk_segment_writer_create_io(&w, &io, NULL) ||
        tschunk_segment_writer_add_chunk(w, 7, chunk, n, NULL, 0) || tschunk_is_error(tschunk_segment_writer_finish(w)))
        return 1;
    if (tschunk_segment_verify(file[0], file_size[0], NULL) ||
        tschunk_segment_open(&seg, file[0], file_size[0], 0, NULL))
        return 2;
    size_t got = tschunk_segment_decode(seg, 0, out_ts, out_v, 3);
    int bad = got != 3 || memcmp(ts, out_ts, sizeof ts) || memcmp(v, out_v, sizeof v);
    bad = bad || tschunk_segment_delete_io(seg, &io2, 0, 2000, 2000, &deleted) || deleted != 1;
    tschunk_segment_close(seg);
    if (bad || tschunk_segment_verify(file[1], file_size[1], NULL) ||
        tschunk_segment_open(&seg, file[1], file_size[1], 0, NULL))
        return 3;
    got = tschunk_segment_decode(seg, 0, out_ts, out_v, 3);
    tschunk_segment_close(seg);
    if (got != 2 || out_ts[0] != 1000 || out_ts[1] != 3000) return 4;
    /* To a path and back through the library's own mapping. */
    if (argc < 2 || tschunk_segment_writer_create(&w, argv[1], NULL) ||
        tschunk_segment_writer_add_chunk(w, 7, chunk, n, NULL, 0) ||
        tschunk_is_error(tschunk_segment_writer_finish(w)) ||
        tschunk_segment_open_file(&seg, argv[1], TSCHUNK_SEGMENT_VERIFY, NULL))
        return 5;
    got = tschunk_segment_decode(seg, 0, out_ts, out_v, 3);
    tschunk_segment_close(seg);
    return got == 3 && !memcmp(ts, out_ts, sizeof ts) ? 0 : 6;
}
C
cc -static -std=c99 -Wall -Werror $(pkg-config --cflags libtschunk) "$stage/segment.c" \
   "$stage$prefix/lib/libtschunk.a" -lm -o "$stage/segment-static" && "$stage/segment-static" "$stage/file.tseg" \
  || { echo "check-install: a static segment consumer failed ($?)" >&2; exit 1; }
if command -v c++ >/dev/null 2>&1; then
  printf '#define TSCHUNK_STATIC_LINKING_ONLY\n#include <tschunk.h>\nint main() { return 0; }\n' > "$stage/header.cc"
  c++ -std=c++11 -Wall -Wextra -Wpedantic -Werror $(pkg-config --cflags libtschunk) -fsyntax-only "$stage/header.cc"
fi
echo "check-install: ok (pkg-config, shared with soname libtschunk.so.0, static, segments static, the inline append" \
  "and iterator steps)"
