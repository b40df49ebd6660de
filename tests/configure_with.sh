#!/bin/sh
#
# configure's --with-ucx=DIR takes DIR's UCX or stops, naming what DIR lacks.
# Before: with only -I DIR/include and -L DIR/lib, a DIR without UCX (a typo,
# /nonexistent, a lib64 install) built with the system's UCX and said "UCX: 1".
# Without --with-cuda=DIR, the CUDA toolkit in $CUDA_HOME comes first. Before:
# configure emptied CUDA_HOME before looking there, and took /usr/local/cuda.
# --with-cuda[=DIR] without a toolkit names the file missing.
#
# configure runs on a copy of what it reads (a source tree configured in place
# refuses a second build directory), with one cache for the runs.
#
. "${top_srcdir}/tests/common.sh"
fail=0
tmp=$(mktemp -d) || exit 99
out=$tmp/out
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
src=$tmp/src
mkdir -p "$src/coll" || exit 99
for f in configure Makefile.in config.h.in strata.pc.in strata_glm.pc.in coll/st_coll.c; do
    cp "$top_srcdir/$f" "$src/$f" || exit 99
done
cp -R "$top_srcdir/build-aux" "$src/" && chmod -R u+w "$src" || exit 99
conf() { # configure's arguments: its output in $out, its exit code returned
    (cd "$src" && ./configure --cache-file="$tmp/config.cache" --disable-fuzz \
         --disable-dependency-tracking "$@") >"$out" 2>&1
}

# a stand-in toolkit, for every run (CUDA_HOME is one of configure's variables,
# which a cache must see unchanged)
mkdir -p "$tmp/cuda/include" "$tmp/cuda/bin" && : >"$tmp/cuda/include/cuda.h" &&
    printf '#!/bin/sh\nexit 0\n' >"$tmp/cuda/bin/nvcc" && chmod +x "$tmp/cuda/bin/nvcc" || exit 99
CUDA_HOME=$tmp/cuda
export CUDA_HOME

if ! conf --without-ucx --without-cuda; then
    echo "SKIP: configure fails here without UCX and CUDA:"
    tail -n 5 "$out"
    exit 77
fi

expect 1 "--with-ucx=DIR, no such DIR" conf --with-ucx="$tmp/none" --without-cuda
contains "the missing header is named" "with-ucx=$tmp/none: no $tmp/none/include/ucp/api/ucp.h"

# the headers alone (DIR/include/ucp/api/ucp.h), no library
mkdir -p "$tmp/hdr/include/ucp/api" && : >"$tmp/hdr/include/ucp/api/ucp.h" || exit 99
expect 1 "--with-ucx=DIR, no libucp in DIR" conf --with-ucx="$tmp/hdr" --without-cuda
contains "the missing library is named" "with-ucx=$tmp/hdr: no libucp in $tmp/hdr/lib or"

# the system's UCX named by its prefix (Debian: /usr, its libraries in lib/TRIPLET)
ucx=$(pkg-config --variable=prefix ucx 2>/dev/null)
if [ -n "$ucx" ] && [ -f "$ucx/include/ucp/api/ucp.h" ]; then
    expect 0 "--with-ucx=$ucx, the system's" conf --with-ucx="$ucx" --without-cuda
    contains "configure found UCX in $ucx" "UCX: *1"
fi

expect 0 "--with-cuda, CUDA_HOME set" conf --without-ucx --with-cuda
contains "the toolkit of CUDA_HOME is found" \
    "for the CUDA toolkit (cuda.h and nvcc)\.\.\. $tmp/cuda\$"
contains "the toolkit of CUDA_HOME is used" "CUDA: *1 $tmp/cuda\$"
expect 1 "--with-cuda=DIR, no such DIR" conf --without-ucx --with-cuda="$tmp/none"
contains "the missing header is named" \
    "the CUDA toolkit was not found: no $tmp/none/include/cuda.h\$"
# a toolkit without its compiler (the run-time packages alone). Before: "cuda.h and
# nvcc were not found", and no word of where
mkdir -p "$tmp/rt/include" && : >"$tmp/rt/include/cuda.h" || exit 99
expect 1 "--with-cuda=DIR, no nvcc in DIR" conf --without-ucx --with-cuda="$tmp/rt"
contains "the missing compiler is named" "the CUDA toolkit was not found: no $tmp/rt/bin/nvcc\$"

[ $fail -eq 0 ] && echo "PASS: configure's --with-ucx=DIR, --with-cuda and CUDA_HOME"
exit $fail
