#!/bin/bash
# The GPU local solver on a GPU machine (issue 6; tests/gpu/run-all.sh calls it):
#
#   tests/gpu/glm.sh OUT_DIR
#
# On Criteo-like data (1M rows x 2^20 columns, float32, ~39M nonzeros), lambda 1e-5:
# 1. the optimum: strata-train --gpu --gpu-rows GLM_GPU_ROWS (default 8: the
#    data's dense features allow few rows in flight) and the CPU solver (1 rank
#    x all cores, replicas and shared) to relative gap 1e-3 must reach the same primal
#    (within 1e-3 relative, both being within 1e-3 of the optimum), and the time
#    each took;
# 2. throughput: 5 rounds x 10 local epochs, epochs/s and nonzeros/s of the GPU
#    against the HBM bound (8 bytes per nonzero: value and index; H200: 4.8 TB/s,
#    tests/test_cuda_fold --time measures the device copy in the same run);
# 3. 2 ranks sharing the GPU, to the same gap;
# 4. streaming: --gpu-mem at a quarter of the data, epochs/s against in memory.
# A dry run without a
# GPU, on the stand-in driver: GLM_ROWS=20000 GLM_MPIRUN_ARGS="-x LD_PRELOAD"
# LD_PRELOAD=$PWD/tests/fake/libcuda.so.1 tests/gpu/glm.sh /tmp/out
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/tests/gpu/out}
cd "$ROOT" || exit 1
mkdir -p "$OUT"
. "$ROOT/tests/gpu/common.sh"   # run-all.sh's deadline, if any
ncpu=$(nproc)
rows=${GLM_GPU_ROWS:-8}   # rows in flight for the runs to the gap (dense features: few)
data="$OUT/criteo-1m.bin"
rc=0

tools/strata-gen criteo -n "${GLM_ROWS:-1000000}" -d 1048576 -f bin -p 32 -s 7 "$data" >"$OUT/gen.log" ||
    { echo "glm: strata-gen failed"; exit 1; }
nnz=$(sed -n 's/.* cols, \([0-9]*\) nnz .*/\1/p' "$OUT/gen.log")
echo "glm: $(sed -n 2p "$OUT/gen.log")"

train() {  # NAME NP ARGS...: time and final line into $OUT/glm-NAME.log
    local name=$1 np=$2
    shift 2
    local t0 t1 limit
    limit=$(step_timeout 300)
    if [ "$limit" -eq 0 ]; then
        echo "$name: skipped (budget spent)"
        rc=1
        return
    fi
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout "$limit" mpirun -np "$np" --bind-to none ${GLM_MPIRUN_ARGS:-} tools/strata-train "$@" \
        "$data" "$OUT/glm-$name.model" >"$OUT/glm-$name.log" 2>&1
    local r=$?
    t1=$(date +%s.%N)
    echo "$name: exit $r, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s wall:" \
         "$(tail -2 "$OUT/glm-$name.log" | head -1)"
    [ $r -eq 0 ] || rc=1
}
train cpu-gap 1 -t "$ncpu" -l 1e-5 -e 1e-3 -r 300
train cpu-shared-gap 1 -t "$ncpu" --thread-mode shared -l 1e-5 -e 1e-3 -r 300
train gpu-gap 1 --gpu --gpu-rows "$rows" -l 1e-5 -e 1e-3 -r 300
train gpu2-gap 2 --gpu --gpu-rows "$rows" -l 1e-5 -e 1e-3 -r 300
train gpu-stream-gap 1 --gpu --gpu-rows "$rows" --gpu-mem $((nnz * 2 + 64000000)) -l 1e-5 -e 1e-3 -r 300
train cpu-epochs 1 -t "$ncpu" -l 1e-5 -e 0 -r 5 -E 10 --gap-every 5
train gpu-epochs 1 --gpu -l 1e-5 -e 0 -r 5 -E 10 --gap-every 5
train gpu-stream-epochs 1 --gpu --gpu-mem $((nnz * 2 + 64000000)) -l 1e-5 -e 0 -r 5 -E 10 \
    --gap-every 5

p_cpu=$(cat "$OUT/glm-cpu-gap.log" "$OUT/glm-cpu-shared-gap.log" |
        sed -n 's/^converged after .*primal \([^,]*\),.*/\1/p' | head -1)
p_gpu=$(sed -n 's/^converged after .*primal \([^,]*\),.*/\1/p' "$OUT/glm-gpu-gap.log")
if awk -v a="$p_cpu" -v b="$p_gpu" 'BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(a != "" && b != "" && d <= 1e-3 * a) }'; then
    echo "glm: the GPU solver's optimum agrees with the CPU's: primal $p_gpu vs $p_cpu"
else
    echo "glm: FAIL: primal $p_gpu on the GPU, $p_cpu on the CPU"
    rc=1
fi
# throughput: the training time of 50 epochs (the rounds' line)
for who in cpu gpu gpu-stream; do
    s=$(sed -n 's/^stopped after .*relative [^)]*), \([0-9.]*\) s .*/\1/p' \
        "$OUT/glm-$who-epochs.log")
    awk -v who="$who" -v s="$s" -v nnz="$nnz" 'BEGIN { if (s > 0) printf "%s: 50 epochs in %s s: " \
        "%.2f epochs/s, %.2f G nonzeros/s\n", who, s, 50 / s, 50 * nnz / s / 1e9 }'
done
echo "glm: HBM bound at 4.8 TB/s and 8 bytes per nonzero: 600 G nonzeros/s"
exit $rc
