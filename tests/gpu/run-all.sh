#!/bin/bash
# The GPU checks in one command, on a machine with an NVIDIA GPU (issues 5 and 6),
# and the host-buffer benchmark on all of that machine's cores (issue 2):
#
#   tests/gpu/run-all.sh [--pack TARBALL] [LOGDIR]
#
# LOGDIR (default tests/gpu/out) gets each step's log, the tables, and summary.txt
# (a line per step: ok, FAIL or skipped, and its seconds; printed at the end too).
# --pack TARBALL writes the logs and tables (not the data or the binaries) into one
# .tar.gz. No step starts after RUNALL_BUDGET seconds (default 560) and each
# step's time limit is cut to what is left, so a step that hangs cannot spend a
# short GPU session; RUNALL_SKIP="NAME ..." leaves out the steps named (a rerun
# of what an earlier run did not finish, say). The steps, the most wanted first:
#
#  build         builds Strata if tools/strata-run is missing (autoreconf when
#                ./configure is missing: on a machine without autotools, unpack a
#                `make dist` tarball instead of the git tree), and the two test
#                programs below if they are missing;
#  kernels-check tests/test_cuda_fold on the GPU: every (type, op) kernel against the
#                host engine, bitwise;
#  sweep-2       tests/test_allreduce --device libcuda.so.1 on 2 ranks sharing GPU 0
#                with STRATA_CUDA_IPC_MIN=0: every type x op x count x in place x
#                communicator, fresh cuMemAlloc buffers each call, GPU to GPU (CUDA
#                IPC) on every call of a type the kernels serve; the reference is the
#                test's own, results bitwise equal on every rank;
#  sweep-4       the same on 4 ranks with the default threshold (staged below it);
#  check-2-shared, check-4-shared
#                tests/gpu/test_cuda_buffers under strata-run: cudaMalloc'd device,
#                host and in-place buffers; the all-device calls of 1 MB and more must
#                have gone GPU to GPU; check-2-nocache: the same with the mapping
#                cache off (STRATA_CUDA_IPC_CACHE=n);
#  host-N        strata-bench --compare on N = the machine's cores ranks, host
#                buffers, 8 B to 64 MB, against Open MPI's own allreduce (CSV too);
#  host-small    256 B to 32 KB on 4, 8 and N ranks, STRATA_SMALL_MSG auto against
#                16K (the latency path's threshold, fitted at 16 ranks only);
#  host-mid      64 KB to 4 MB on N ranks, STRATA_SHM_CHUNK auto against 32K, 64K,
#                128K (the bandwidth path's pipeline step where 16 ranks missed 1.5x);
#  check-per-gpu one rank per GPU, when there are several;
#  check-4-vnodes 4 ranks as 2 virtual nodes (UCX over tcp between them): device
#                buffers staged through pinned host memory piece by piece;
#  time-2, time-4 Strata on device buffers against copy-to-host + MPI_Allreduce +
#                copy-back by hand, and a device-to-device copy, 1 KB to 1 GB;
#  time-4-mps    time-4 under the CUDA MPS daemon (where nvidia-cuda-mps-control
#                is), with STRATA_CUDA_IPC_MIN=16K;
#  kernels-time  the reduction kernels against a device copy;
#  glm           the GPU local solver (tests/gpu/glm.sh): strata-train --gpu against
#                the CPU solver on all cores: on Criteo-like data (dense features:
#                the gap each reaches, reported) and on sparse ridge data (the same
#                optimum, judged); time to the gap, epochs/s, streaming.
# A machine with UCX's libraries but not its headers (the H200 image of 2026-12):
# RUNALL_UCX_INCLUDE=DIR (DIR/ucp/api/ucp.h; e.g. Debian's libucx-dev unpacked by
# `apt-get download libucx-dev && dpkg -x libucx-dev_*.deb x`, DIR=x/usr/include,
# carried along) builds against them and the machine's libucp.so.0 (UCX keeps
# its ABI within 1.x), so that check-4-vnodes can run.
# Exit: 0 every step run passed (steps RUNALL_SKIP names are left out by choice, not
# failures), 1 a step failed or was skipped for want of budget, 77 no GPU.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
pack=""
if [ "${1:-}" = "--pack" ]; then
    pack=$2
    case $pack in /*) ;; *) pack=$PWD/$pack ;; esac   # the script works in $ROOT
    shift 2
fi
LOG=${1:-$ROOT/tests/gpu/out}
CUDA=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$LOG"
LOG=$(cd "$LOG" && pwd)
cd "$ROOT" || exit 1
. "$ROOT/tests/gpu/common.sh"
export RUNALL_DEADLINE=$(( $(date +%s) + ${RUNALL_BUDGET:-560} ))
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
: >"$LOG/summary.txt"
rc=0

finish() {
    echo "== summary"
    cat "$LOG/summary.txt"
    if [ -n "$pack" ]; then
        tar czf "$pack" -C "$LOG" --exclude='*.bin' --exclude='*.model' --exclude=mps \
            --exclude=test_cuda_buffers --exclude=test_cuda_buffers_ptds . && echo "run-all: logs packed into $pack"
    fi
    echo "run-all: logs in $LOG; exit $rc"
    exit $rc
}

# step NAME LIMIT CMD...: CMD under the time limit (cut to the budget left), its
# output in $LOG/NAME.log and its last lines here, one summary line
step() {
    local name=$1 want=$2 t r t0 why
    shift 2
    case " ${RUNALL_SKIP:-} " in
        *" $name "*)
            echo "$name: skipped (RUNALL_SKIP)" >>"$LOG/summary.txt"
            return 0 ;;
    esac
    t=$(step_timeout "$want")
    if [ "$t" -eq 0 ]; then
        echo "$name: skipped (budget spent)" >>"$LOG/summary.txt"
        rc=1
        return 1
    fi
    echo "== $name: $*"
    t0=$SECONDS
    timeout -k 10 "$t" "$@" >"$LOG/$name.log" 2>&1
    r=$?
    grep -v '^\[' "$LOG/$name.log" | tail -25
    if [ $r -eq 0 ]; then
        echo "$name: ok ($((SECONDS - t0)) s)" >>"$LOG/summary.txt"
    else
        why="exit $r"
        [ $r -eq 124 ] && why="$why, time limit $t s"
        echo "$name: FAIL ($why, $((SECONDS - t0)) s)" >>"$LOG/summary.txt"
        rc=1
    fi
    return $r
}

if ! nvidia-smi -L >"$LOG/gpus.txt" 2>&1; then
    echo "run-all: no NVIDIA GPU here (nvidia-smi -L failed): skipped"
    exit 77
fi
ngpu=$(grep -c '^GPU ' "$LOG/gpus.txt")
ncores=$(machine_cores)
{ nvidia-smi; mpirun --version | head -1; "$CUDA/bin/nvcc" --version | tail -1;
  echo "cores: $ncores, hardware threads: $(nproc)"; lscpu | grep -i 'model name\|socket'; } \
    >"$LOG/versions.txt" 2>&1

ucx_opt=""
if [ -n "${RUNALL_UCX_INCLUDE:-}" ]; then   # headers carried, the machine's libraries
    ucp=$(ldconfig -p | sed -n 's/.*libucp\.so\.0 .*=> //p' | head -1)
    ucs=$(ldconfig -p | sed -n 's/.*libucs\.so\.0 .*=> //p' | head -1)
    if [ -f "$RUNALL_UCX_INCLUDE/ucp/api/ucp.h" ] && [ -n "$ucp" ] && [ -n "$ucs" ]; then
        mkdir -p "$LOG/ucx/lib"
        ln -sfn "$(cd "$RUNALL_UCX_INCLUDE" && pwd)" "$LOG/ucx/include"
        ln -sf "$ucp" "$LOG/ucx/lib/libucp.so"
        ln -sf "$ucs" "$LOG/ucx/lib/libucs.so"
        ucx_opt="--with-ucx=$LOG/ucx"
    else
        echo "run-all: RUNALL_UCX_INCLUDE: no ucp/api/ucp.h there, or no libucp.so.0 /" \
             "libucs.so.0 on this machine: building without UCX"
    fi
fi
if [ ! -x tools/strata-run ] || [ ! -e .libs/libstrata.so ]; then
    # CC=mpicc: a CC in the environment (the GPU machine's image sets one) would
    # build without MPI's headers
    step build 300 bash -c '{ [ -x configure ] || autoreconf -fi; } &&
        ./configure CC=mpicc --with-cuda="'"$CUDA"'" '"$ucx_opt"' && make -j"$(nproc)"' ||
        finish
fi
if [ ! -x tests/test_cuda_fold ] || [ ! -x tests/test_allreduce ]; then
    step build-tests 120 make -j"$(nproc)" tests/test_cuda_fold tests/test_allreduce || finish
fi
step cc 60 mpicc -O2 -Iinclude -I"$CUDA/include" -o "$LOG/test_cuda_buffers" \
    tests/gpu/test_cuda_buffers.c -L"$CUDA/lib64" -lcudart -ldl -Wl,-rpath,"$CUDA/lib64"
have_buffers=$?
# the same with the program's copies on the per-thread default stream
step cc-ptds 60 mpicc -O2 -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1 -Iinclude -I"$CUDA/include" \
    -o "$LOG/test_cuda_buffers_ptds" tests/gpu/test_cuda_buffers.c -L"$CUDA/lib64" -lcudart \
    -ldl -Wl,-rpath,"$CUDA/lib64"
have_ptds=$?

# the ranks share the GPU(s)
step kernels-check 120 mpirun -np 1 --bind-to none tests/test_cuda_fold
step sweep-2 180 mpirun -np 2 --bind-to none -x STRATA_CUDA_IPC_MIN=0 \
    tests/test_allreduce --device libcuda.so.1
step sweep-4 180 mpirun -np 4 --bind-to none tests/test_allreduce --device libcuda.so.1
if [ "$have_buffers" -eq 0 ]; then
    step check-2-shared 120 tools/strata-run mpirun -np 2 --bind-to none "$LOG/test_cuda_buffers"
    step check-4-shared 120 tools/strata-run mpirun -np 4 --bind-to none "$LOG/test_cuda_buffers"
    step check-2-nocache 120 env STRATA_CUDA_IPC_CACHE=n tools/strata-run mpirun -np 2 \
        --bind-to none -x STRATA_CUDA_IPC_CACHE "$LOG/test_cuda_buffers"
    # cudaMallocAsync memory, MPI called with no context current
    step check-2-pool 120 tools/strata-run mpirun -np 2 --bind-to none \
        "$LOG/test_cuda_buffers" --pool
fi
if [ "$have_ptds" -eq 0 ]; then
    step check-2-ptds 120 tools/strata-run mpirun -np 2 --bind-to none \
        "$LOG/test_cuda_buffers_ptds"
fi
if [ "$ncores" -ge 2 ]; then   # issue 2: host buffers, a rank per core
    step "host-$ncores" 180 mpirun -np "$ncores" --map-by core --bind-to core \
        tools/strata-bench --compare -b 8 -e 64M -r 5 --csv "$LOG/host-$ncores.csv"
fi
if [ "$ncores" -ge 8 ]; then   # issue 2: the latency path's auto threshold, 4, 8, N ranks
    step host-small 120 bash -c 'for p in 4 8 '"$ncores"'; do for s in auto 16K; do
        echo "== $p ranks, STRATA_SMALL_MSG=$s"
        mpirun -np $p --map-by core --bind-to core -x STRATA_SMALL_MSG=$s \
            tools/strata-bench --compare -b 256 -e 32K -r 3 || exit 1; done; done'
    # issue 2: 64 KB to 4 MB on N ranks (256 KB-1 MB missed 1.5x at 16: 1.38-1.40),
    # the pipeline's step STRATA_SHM_CHUNK auto (8M / (2 areas)) against fixed sizes
    step host-mid 150 bash -c 'for c in auto 32K 64K 128K; do
        echo "== '"$ncores"' ranks, STRATA_SHM_CHUNK=$c"
        mpirun -np '"$ncores"' --map-by core --bind-to core -x STRATA_SHM_CHUNK=$c \
            tools/strata-bench --compare -b 64K -e 4M -r 3 || exit 1; done'
fi
# issue 8, asked for (RUNALL_CLUSTER=1: it needs no GPU, only the cores): the namespace
# cluster unshaped, 4 hosts x 2 ranks, a core each (on the 2-core VM the 8 ranks and the
# kernel's TCP shared 2 cores: 1.2-1.9x the best of tuned and HAN from 1 MB, the issue
# asks 1.5x); run.sh exits 77 where namespaces cannot be made
if [ "${RUNALL_CLUSTER:-0}" = 1 ] && [ "$ncores" -ge 8 ] &&
    tools/strata-info 2>/dev/null | grep -q 'UCX yes'; then
    step cluster-unshaped 240 bench/cluster/run.sh --hosts 4 --ppn 2 --rates none --min 64K \
        --max 64M --reps 3 --out "$LOG/cluster"
fi
if [ "$have_buffers" -eq 0 ]; then
    if [ "$ngpu" -gt 1 ]; then
        step check-per-gpu 120 tools/strata-run mpirun -np "$ngpu" --bind-to none \
            "$LOG/test_cuda_buffers"
    fi
    # across 2 virtual nodes (UCX over tcp between them): device buffers staged in pieces
    if tools/strata-info 2>/dev/null | grep -q 'UCX yes'; then
        step check-4-vnodes 150 env STRATA_VIRTUAL_NODES=2 UCX_TLS=tcp,self tools/strata-run \
            mpirun -np 4 --bind-to none -x STRATA_VIRTUAL_NODES -x UCX_TLS \
            "$LOG/test_cuda_buffers"
    else
        echo "check-4-vnodes: skipped (this build has no UCX)" >>"$LOG/summary.txt"
    fi
    step time-2 150 tools/strata-run mpirun -np 2 --bind-to none "$LOG/test_cuda_buffers" --time
    step time-4 150 tools/strata-run mpirun -np 4 --bind-to none "$LOG/test_cuda_buffers" --time
    if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
        export CUDA_MPS_PIPE_DIRECTORY=$LOG/mps CUDA_MPS_LOG_DIRECTORY=$LOG/mps
        mkdir -p "$LOG/mps"
        if nvidia-cuda-mps-control -d; then
            step time-4-mps 150 env STRATA_CUDA_IPC_MIN=16K tools/strata-run mpirun -np 4 \
                --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x STRATA_CUDA_IPC_MIN \
                "$LOG/test_cuda_buffers" --time
            echo quit | nvidia-cuda-mps-control
        else
            echo "time-4-mps: skipped (the MPS daemon did not start)" >>"$LOG/summary.txt"
        fi
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    else
        echo "time-4-mps: skipped (no nvidia-cuda-mps-control)" >>"$LOG/summary.txt"
    fi
fi
step kernels-time 120 mpirun -np 1 --bind-to none tests/test_cuda_fold --time
# the GPU local solver of strata-train (issue 6): it cuts its own steps to the budget
step glm 600 bash tests/gpu/glm.sh "$LOG"
finish
