#!/bin/bash
# The GPU checks in one command, on a machine with an NVIDIA GPU (issue 5):
#
#   tests/gpu/run-all.sh            # logs and the table in tests/gpu/out (or $OUT)
#
# 1. builds Strata if tools/strata-run is missing (autoreconf when ./configure is
#    missing: on a machine without autotools, carry the generated configure,
#    Makefile.in, aclocal.m4, config.h.in and build-aux/ along);
# 2. builds tests/gpu/test_cuda_buffers against the CUDA runtime ($CUDA_HOME, default
#    /usr/local/cuda);
# 3. runs it under strata-run on 2 and 4 ranks sharing GPU 0 (and one rank per GPU
#    when there are several): device, host and in-place buffers, fresh cudaMalloc
#    between calls, results checked and bitwise equal on every rank, and the
#    all-device calls of 1 MB and more must have gone GPU to GPU (CUDA IPC); then
#    4 ranks as 2 virtual nodes (UCX over tcp between them): device buffers staged
#    through pinned host memory piece by piece, overlapped with the network;
# 4. times 2 ranks: Strata on device buffers against copy-to-host + MPI_Allreduce +
#    copy-back by hand, and a device-to-device copy of the same size;
# 5. checks Strata's GPU reduction kernels (tests/test_cuda_fold: every type and
#    op against the host engine, bitwise) and times them against a device copy;
# 6. the GPU local solver (tests/gpu/glm.sh): strata-train --gpu against the CPU
#    solver on all cores, the same optimum, time to the gap, epochs/s.
# Exit: 0 all passed, 1 a check failed, 77 no GPU. Under 8 minutes on an H200.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/tests/gpu/out}
CUDA=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$OUT"
cd "$ROOT" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

if ! nvidia-smi -L >"$OUT/gpus.txt" 2>&1; then
    echo "run-all: no NVIDIA GPU here (nvidia-smi -L failed): skipped"
    exit 77
fi
ngpu=$(grep -c '^GPU ' "$OUT/gpus.txt")
{ nvidia-smi; mpirun --version | head -1; "$CUDA/bin/nvcc" --version | tail -1; } \
    >"$OUT/versions.txt" 2>&1

if [ ! -x tools/strata-run ] || [ ! -e .libs/libstrata.so ]; then
    { [ -x configure ] || autoreconf -fi; } >"$OUT/build.log" 2>&1 &&
        ./configure >>"$OUT/build.log" 2>&1 && make -j"$(nproc)" >>"$OUT/build.log" 2>&1 ||
        { echo "run-all: build failed (see $OUT/build.log)"; tail -20 "$OUT/build.log"; exit 1; }
fi
mpicc -O2 -Iinclude -I"$CUDA/include" -o "$OUT/test_cuda_buffers" tests/gpu/test_cuda_buffers.c \
    -L"$CUDA/lib64" -lcudart -ldl -Wl,-rpath,"$CUDA/lib64" >"$OUT/cc.log" 2>&1 ||
    { echo "run-all: test build failed"; cat "$OUT/cc.log"; exit 1; }

rc=0
run() {  # NAME NP ARGS...
    local name=$1 np=$2
    shift 2
    echo "== $name: strata-run mpirun -np $np test_cuda_buffers $*"
    timeout 300 tools/strata-run mpirun -np "$np" --bind-to none \
        "$OUT/test_cuda_buffers" "$@" >"$OUT/$name.log" 2>&1
    local r=$?
    cat "$OUT/$name.log" | grep -v '^\[' | tail -20
    [ $r -eq 0 ] || { echo "run-all: $name failed (exit $r)"; rc=1; }
}
run check-2-shared 2
run check-4-shared 4
if [ "$ngpu" -gt 1 ]; then
    run check-per-gpu "$ngpu"
fi
# across 2 virtual nodes (UCX over tcp between them): device buffers staged in pieces
if tools/strata-info 2>/dev/null | grep -q 'UCX yes'; then
    STRATA_VIRTUAL_NODES=2 UCX_TLS=tcp,self run check-4-vnodes 4
else
    echo "== check-4-vnodes: skipped (this build has no UCX)"
fi
run time-2 2 --time

# the GPU kernels (the suite runs the same check on the host, through a stand-in driver)
if make tests/test_cuda_fold >"$OUT/kernels-build.log" 2>&1; then
    for mode in check time; do
        args=""
        [ $mode = time ] && args=--time
        echo "== kernels-$mode: mpirun -np 1 tests/test_cuda_fold $args"
        timeout 300 mpirun -np 1 tests/test_cuda_fold $args >"$OUT/kernels-$mode.log" 2>&1
        r=$?
        grep -v '^\[' "$OUT/kernels-$mode.log" | tail -20
        [ $r -eq 0 ] || { echo "run-all: kernels-$mode failed (exit $r)"; rc=1; }
    done
else
    echo "run-all: tests/test_cuda_fold did not build (see $OUT/kernels-build.log)"
    rc=1
fi
# the GPU local solver of strata-train (issue 6)
echo "== glm: tests/gpu/glm.sh"
bash tests/gpu/glm.sh "$OUT" 2>&1 | tee "$OUT/glm.txt" | grep -v '^\[' | tail -20
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "run-all: glm failed"; rc=1; }
echo "run-all: logs in $OUT; exit $rc"
exit $rc
