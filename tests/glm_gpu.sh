#!/bin/sh
#
# strata-train --gpu without a GPU: tests/fake/libcuda.so.1, preloaded, stands in
# for the CUDA driver and runs the GPU solver's kernel (TPA-SCD) compiled for the
# host, its thread blocks in waves: each wave of --gpu-rows rows steps against u
# as the wave began, then all update it (a mini-batch, the most that blocks
# running at once can miss of each other). With --gpu-rows 1 that is sequential
# SDCA in the CPU solver's order of operations, so on float32 data the GPU run
# must write the CPU run's model file byte for byte (every dual model, 1 and 2
# ranks, a bias, two local epochs, the columns relabelled by frequency), which
# checks the data on the device, the orders, the steps (the CPU solver's own,
# solver/st_glm_steps.h), the updates and the copies back. With the default
# rows in flight, a resumed checkpoint gives the uninterrupted run's model (a CPU run,
# or another --gpu-rows, refuses it); with
# one row at a time, 64-bit data rounded to float on the GPU, and rows streaming
# through a small GPU memory in chunks (two in flight), reach the CPU run's
# optimum; and with 8 rows in flight so does data with dense features: each
# row's step counts in its curvature the rows in flight that share its features;
# without that the waves overshoot and the dual oscillates (as it did on an H200).
# The rows in flight by default follow the stand-in GPU's warps on sparse rows and
# stay at 1024 on dense features; long rows take the block kernel (also checked
# byte for byte); host threads (-t) leave the model as one thread's.
# Without a driver or with an L1 model it says why.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d)
out="$dir/out"
trap 'rm -rf "$dir"' EXIT

if ! grep -q '^#define HAVE_CUDA 1' config.h; then
    echo "SKIP: built without nvcc (no GPU kernels)"
    exit 77
fi
fake="$top_builddir/tests/fake/libcuda.so.1"
# the program itself, not libtool's wrapper script, gets the stand-in driver (after
# a sanitizer's runtime, which must come first); mpirun does not
st_program train tools/strata-train
gpu_mpirun() {
    $ST_MPIRUN -x LD_PRELOAD="${ST_SAN_RUNTIME:+$ST_SAN_RUNTIME }$fake" "$@"
}
# gpu_alone [VAR=VALUE]... COMMAND...: one process started alone (no MPI at all, as
# strata-train outside mpirun), on the stand-in driver; the runs that need no second
# rank take it, a tenth of mpirun's start (same_model's and a few more keep mpirun -np 1)
gpu_alone() {
    env LD_PRELOAD="${ST_SAN_RUNTIME:+$ST_SAN_RUNTIME }$fake" "$@"
}

tools/strata-gen criteo --rows 3000 --cols 4096 --seed 3 -q -f bin -p 32 "$dir/c32.bin" &&
    tools/strata-gen regression --rows 2000 --cols 30 --seed 4 -q -f bin -p 32 \
        "$dir/r32.bin" &&
    tools/strata-gen criteo --rows 2000 --cols 4096 --seed 5 -q "$dir/c64.svm" ||
    { echo "FAIL: strata-gen"; exit 1; }

# same_model WHAT NP ARGS...: the CPU run, then --gpu, must give the same model file
same_model() {
    what=$1 np=$2
    shift 2
    expect 0 "$what (CPU)" $ST_MPIRUN -np "$np" tools/strata-train -q --method cd "$@" \
        "$dir/cpu.model"
    expect 0 "$what (GPU)" gpu_mpirun -np "$np" \
        $train --gpu --gpu-rows 1 "$@" "$dir/gpu.model"
    contains "$what: the GPU solver ran" "GPU local solver (TPA-SCD): rank 0 on device 0"
    cmp -s "$dir/cpu.model" "$dir/gpu.model" ||
        { echo "FAIL: $what: the GPU run's model differs from the CPU run's"; fail=1; }
}
same_model "logistic, 1 rank" 1 -s logistic -l 1e-3 -r 25 -e 0 "$dir/c32.bin"
same_model "logistic, 2 ranks" 2 -s logistic -l 1e-3 -r 25 -e 0 "$dir/c32.bin"
same_model "logistic, 2 ranks, columns relabelled" 2 -s logistic -l 1e-3 -r 25 -e 0 -B 1 \
    --feature-order frequency "$dir/c32.bin"
same_model "svm, 2 ranks, bias" 2 -s svm -l 1e-3 -r 25 -e 0 -B 1 "$dir/c32.bin"
same_model "sqsvm, 2 ranks, 2 epochs" 2 -s sqsvm -l 1e-3 -r 15 -e 0 -E 2 "$dir/c32.bin"
same_model "ridge, 2 ranks" 2 -s ridge -l 1e-2 -r 25 -e 0 "$dir/r32.bin"
same_model "svr, 2 ranks" 2 -s svr -l 1e-2 -r 25 -e 0 --epsilon 0.2 "$dir/r32.bin"
same_model "sqsvr, 2 ranks" 2 -s sqsvr -l 1e-2 -r 25 -e 0 --epsilon 0.2 "$dir/r32.bin"
same_model "logistic, class weights" 2 -s logistic -l 1e-3 -r 10 -e 0 --weight-pos 3 \
    "$dir/c32.bin"

# a checkpoint written by a GPU run, resumed on the GPU: the uninterrupted model
expect 0 "GPU run, 20 rounds" gpu_mpirun -np 2 \
    $train -q --gpu -l 1e-3 -r 20 -e 0 "$dir/c32.bin" "$dir/full.model"
expect 0 "GPU run, 10 rounds, checkpoint" gpu_mpirun -np 2 \
    $train -q --gpu -l 1e-3 -r 10 -e 0 --checkpoint-every 5 \
    --checkpoint "$dir/ck" "$dir/c32.bin" "$dir/half.model"
expect 0 "GPU run resumed to 20 rounds" gpu_mpirun -np 2 \
    $train -q --gpu -l 1e-3 -r 20 -e 0 --checkpoint "$dir/ck" --resume \
    "$dir/c32.bin" "$dir/resumed.model"
cmp -s "$dir/full.model" "$dir/resumed.model" ||
    { echo "FAIL: a resumed GPU run's model differs from the uninterrupted one"; fail=1; }
# ... and not by a CPU run, nor by one of other rows in flight: another local solver,
# another model (before: accepted without a word)
expect 1 "GPU checkpoint resumed on the CPU" $ST_MPIRUN -np 2 \
    $train -q -l 1e-3 -r 20 -e 0 --checkpoint "$dir/ck" --resume "$dir/c32.bin" "$dir/x.model"
contains "GPU checkpoint resumed on the CPU: named" \
    "local solver (thread mode, --gpu, or the L1 models' --method) the GPU's, 0 rows in flight (the default) (this run: replicas)"
expect 1 "GPU checkpoint resumed with --gpu-rows 1" gpu_mpirun -np 2 \
    $train -q --gpu --gpu-rows 1 -l 1e-3 -r 20 -e 0 --checkpoint "$dir/ck" --resume \
    "$dir/c32.bin" "$dir/x.model"

# 64-bit data: float on the GPU; it converges where the CPU run does, to the same
# objective (7 digits)
expect 0 "64-bit data on the CPU" $ST_MPIRUN -np 2 tools/strata-train -q -l 1e-2 -e 1e-3 \
    -r 500 "$dir/c64.svm" "$dir/m64c"
p_cpu=$(converged_primal)
expect 0 "64-bit data on the GPU" gpu_mpirun -np 2 \
    $train -q --gpu --gpu-rows 1 -l 1e-2 -e 1e-3 -r 500 "$dir/c64.svm" "$dir/m64g"
p_gpu=$(converged_primal)
near "64-bit data: primal on the GPU against the CPU's" "$p_gpu" "$p_cpu" 1e-7

# rows in flight together, on data whose dense features every row shares: the
# curvature bound keeps the steps safe, to the CPU's optimum (without it the
# relative gap stays above 1, round after round)
tools/strata-gen criteo --rows 4000 --cols 65536 --seed 9 -q -f bin -p 32 "$dir/dense.bin" ||
    { echo "FAIL: strata-gen"; exit 1; }
expect 0 "dense features on the CPU" $ST_MPIRUN -np 1 tools/strata-train -q --method cd \
    -l 1e-4 -e 1e-4 -r 2000 "$dir/dense.bin" "$dir/md-cpu"
p_cpu=$(converged_primal)
expect 0 "dense features, 8 rows in flight" gpu_mpirun -np 1 \
    $train --gpu --gpu-rows 8 -l 1e-4 -e 1e-4 -r 2000 "$dir/dense.bin" "$dir/md-gpu"
p_gpu=$(converged_primal)
near "dense features, 8 rows in flight: primal against the CPU's" "$p_gpu" "$p_cpu" 1e-4
expect 2 "bad --gpu-rows" tools/strata-train --gpu --gpu-rows 0 "$dir/c32.bin" "$dir/m"
contains "bad --gpu-rows named" "gpu-rows"

# rows in flight by default: the GPU's resident warps (the stand-in's 4 SMs: 256;
# FAKE_CUDA_SMS=64: 4096) where the rows share few features, but STRATA_GLM_GPU_ROWS
# (1024) on data whose dense features every row shares (the mean curvature grows by
# (rows - 1) x the features' density: 1e-4 here); a warp a row on short rows,
# a block a row on long ones (or as STRATA_GLM_GPU_KERNEL says)
tools/strata-gen regression --rows 4000 --cols 262144 --density 0.0001 --seed 11 -q -f bin \
    -p 32 "$dir/sparse.bin" &&
    tools/strata-gen regression --rows 300 --cols 400 --seed 12 -q -f bin -p 32 \
        "$dir/long.bin" || { echo "FAIL: strata-gen"; exit 1; }
expect 0 "sparse rows, default rows in flight" gpu_alone \
    $train --gpu -s ridge -l 1e-3 -r 2 "$dir/sparse.bin" "$dir/m"
contains "sparse rows: the GPU's 256 warps, a warp a row" "256 rows in flight, a warp a row"
expect 0 "sparse rows, a larger GPU" gpu_alone FAKE_CUDA_SMS=64 \
    $train --gpu -s ridge -l 1e-3 -r 2 "$dir/sparse.bin" "$dir/m"
contains "sparse rows: all 4096 warps" "4096 rows in flight, a warp a row"
expect 0 "dense features, a larger GPU" gpu_alone FAKE_CUDA_SMS=64 \
    $train --gpu -l 1e-3 -r 2 "$dir/dense.bin" "$dir/m"
contains "dense features: STRATA_GLM_GPU_ROWS" "1024 rows in flight, a warp a row"
expect 0 "long rows" gpu_alone $train --gpu -s ridge -l 1e-3 -r 2 "$dir/long.bin" "$dir/m"
contains "long rows: a block a row" "1024 rows in flight, a block a row"
expect 0 "STRATA_GLM_GPU_KERNEL=block" gpu_alone STRATA_GLM_GPU_KERNEL=block \
    $train --gpu -s ridge -l 1e-3 -r 2 "$dir/sparse.bin" "$dir/m"
contains "STRATA_GLM_GPU_KERNEL=block: a block a row" "a block a row"
expect 1 "STRATA_GLM_GPU_KERNEL=bogus" gpu_alone STRATA_GLM_GPU_KERNEL=bogus \
    $train --gpu -s ridge -l 1e-3 -r 2 "$dir/sparse.bin" "$dir/m"
contains "STRATA_GLM_GPU_KERNEL=bogus named" "STRATA_GLM_GPU_KERNEL='bogus' is not warp or block"
# on one rank of two only (not forwarded to all): the same refusal, no hang
expect 1 "STRATA_GLM_GPU_KERNEL=bogus on one rank" timeout -k 5 60 \
    $ST_MPIRUN -x LD_PRELOAD="${ST_SAN_RUNTIME:+$ST_SAN_RUNTIME }$fake" \
    -np 1 env STRATA_GLM_GPU_KERNEL=bogus $train --gpu -s ridge -l 1e-3 -r 2 \
    "$dir/sparse.bin" "$dir/m" : -np 1 $train --gpu -s ridge -l 1e-3 -r 2 "$dir/sparse.bin" \
    "$dir/m"
contains "STRATA_GLM_GPU_KERNEL=bogus on one rank named" "is not warp or block"
# the sparse rows' optimum with the default rows in flight (waves of them, on 4096
# warps), and one row at a time with the block kernel: the CPU's
expect 0 "sparse rows on the CPU" $ST_MPIRUN -np 2 tools/strata-train -q --method cd -s ridge \
    -l 1e-3 -e 1e-6 -r 2000 "$dir/sparse.bin" "$dir/msp-cpu"
p_cpu=$(converged_primal)
expect 0 "sparse rows on the GPU, default rows in flight" gpu_mpirun -np 2 -x FAKE_CUDA_SMS=64 \
    $train -s ridge -l 1e-3 -e 1e-6 -r 2000 --gpu "$dir/sparse.bin" "$dir/msp-gpu"
p_gpu=$(converged_primal)
near "sparse rows, default rows in flight: primal against the CPU's" "$p_gpu" "$p_cpu" 1e-5
same_model_block() {
    expect 0 "ridge, block kernel (CPU)" $ST_MPIRUN -np 2 tools/strata-train -q --method cd \
        -s ridge -l 1e-2 -r 10 -e 0 "$dir/r32.bin" "$dir/cpu.model"
    expect 0 "ridge, block kernel (GPU)" gpu_mpirun -np 2 -x STRATA_GLM_GPU_KERNEL=block \
        $train -q --gpu --gpu-rows 1 -s ridge -l 1e-2 -r 10 -e 0 "$dir/r32.bin" "$dir/gpu.model"
    cmp -s "$dir/cpu.model" "$dir/gpu.model" ||
        { echo "FAIL: the block kernel's run differs from the CPU run's"; fail=1; }
}
same_model_block

# threads with --gpu do the host's share of a round (the merge, the gap's pass over
# the rows): the same model as one thread, and as the CPU's (--gpu-rows 1)
expect 0 "GPU, 3 host threads" gpu_mpirun -np 2 $train -q --gpu --gpu-rows 1 -t 3 \
    -s logistic -l 1e-3 -r 25 -e 0 -B 1 "$dir/c32.bin" "$dir/gpu-t3.model"
expect 0 "CPU, for the 3 threads' run" $ST_MPIRUN -np 2 tools/strata-train -q --method cd \
    -s logistic -l 1e-3 -r 25 -e 0 -B 1 "$dir/c32.bin" "$dir/cpu-t1.model"
cmp -s "$dir/gpu-t3.model" "$dir/cpu-t1.model" ||
    { echo "FAIL: --gpu -t 3 gives another model than the CPU's one thread"; fail=1; }
expect 0 "GPU, 2 host threads, shared mode asked" gpu_alone $train -q --gpu -t 2 \
    --thread-mode shared -s ridge -l 1e-2 -e 0 -r 50 "$dir/r32.bin" "$dir/m-t2"
expect 0 "GPU, 1 host thread" gpu_alone $train -q --gpu -s ridge -l 1e-2 -e 0 \
    -r 50 "$dir/r32.bin" "$dir/m-t1"
cmp -s "$dir/m-t2" "$dir/m-t1" ||
    { echo "FAIL: --gpu -t 2 (shared mode asked) gives another model than -t 1"; fail=1; }

# the duality gap's margins: on the GPU for 32-bit data in GPU memory (a failing
# margins kernel ends the run; the stand-in sums each row in the CPU's order, so the
# progress lines are the CPU run's), on the host for 64-bit data (the gap is the given
# data's, not the GPU's float copy's) and for streamed rows
expect 0 "gap lines, CPU" $ST_MPIRUN -np 2 tools/strata-train --method cd -s logistic \
    -l 1e-3 -r 12 -e 0 -B 1 --gap-every 3 "$dir/c32.bin" "$dir/m"
grep '^round' "$out" >"$dir/gap-cpu"
p_cpu=$(sed -n 's/^stopped after .* primal \([^,]*\),.*/\1/p' "$out")
expect 0 "gap lines, GPU" gpu_mpirun -np 2 $train --gpu --gpu-rows 1 -s logistic \
    -l 1e-3 -r 12 -e 0 -B 1 --gap-every 3 "$dir/c32.bin" "$dir/m"
grep '^round' "$out" | sed 's/time .*//' >"$dir/gap-gpu"
sed -i 's/time .*//' "$dir/gap-cpu"
[ -s "$dir/gap-gpu" ] && cmp -s "$dir/gap-cpu" "$dir/gap-gpu" ||
    { echo "FAIL: the GPU run's gaps differ from the CPU run's:"; diff "$dir/gap-cpu" \
      "$dir/gap-gpu"; fail=1; }
expect 0 "gap lines, GPU, 2 host threads" gpu_mpirun -np 2 $train --gpu --gpu-rows 1 -t 2 \
    -s logistic -l 1e-3 -r 12 -e 0 -B 1 --gap-every 3 "$dir/c32.bin" "$dir/m"
p_gpu=$(sed -n 's/^stopped after .* primal \([^,]*\),.*/\1/p' "$out")
near "gap, GPU margins summed by 2 threads: the CPU's primal" "$p_gpu" "$p_cpu" 1e-12
expect 1 "margins kernel failing, 32-bit data" gpu_alone \
    FAKE_CUDA_FAIL_KERNEL=st_glm_margins $train -q --gpu -l 1e-3 -r 3 "$dir/c32.bin" "$dir/m"
contains "margins kernel failing: the GPU computed them" "the GPU solver failed"
# a training alone returns the failure as its error (before: MPI_Abort on
# MPI_COMM_NULL, the library's line on stderr and the process ended); the epochs'
# kernel too; across ranks, the job ends, saying so
contains "margins kernel failing alone: strata-train's error" \
    "^strata-train: the GPU solver failed"
expect 1 "epoch kernel failing alone" gpu_alone FAKE_CUDA_FAIL_KERNEL=st_glm_tpa_epoch_warp \
    $train -q --gpu -l 1e-3 -r 3 "$dir/c32.bin" "$dir/m"
contains "epoch kernel failing alone: strata-train's error" \
    "^strata-train: the GPU solver failed"
grep -q "ending the job" "$out" &&
    { echo "FAIL: a training alone ended the job"; cat "$out"; fail=1; }
expect 1 "epoch kernel failing on 2 ranks" gpu_mpirun -np 2 \
    -x FAKE_CUDA_FAIL_KERNEL=st_glm_tpa_epoch_warp $train -q --gpu -l 1e-3 -r 3 \
    "$dir/c32.bin" "$dir/m"
contains "epoch kernel failing on 2 ranks: the job ends" "the GPU solver failed (above); ending"
expect 0 "margins kernel failing, 64-bit data" gpu_alone \
    FAKE_CUDA_FAIL_KERNEL=st_glm_margins $train -q --gpu -l 1e-3 -r 3 "$dir/c64.svm" "$dir/m"
expect 0 "margins kernel failing, streaming" gpu_mpirun -np 2 \
    -x FAKE_CUDA_FAIL_KERNEL=st_glm_margins $train -q --gpu --gpu-mem 150000 -l 1e-3 -r 3 \
    "$dir/c32.bin" "$dir/m"

# streaming: rows that do not fit (--gpu-mem, or the GPU's free memory, which the
# stand-in driver takes from FAKE_CUDA_MEM) stream in chunks, to the optimum
expect 0 "the CPU to 1e-6" $ST_MPIRUN -np 2 tools/strata-train -q -l 1e-2 -e 1e-6 -r 3000 \
    "$dir/c32.bin" "$dir/ms-cpu"
p_cpu=$(converged_primal)
expect 0 "streaming by --gpu-mem" gpu_mpirun -np 2 \
    $train --gpu --gpu-rows 1 --gpu-mem 150000 -l 1e-2 -e 1e-6 -r 3000 "$dir/c32.bin" \
    "$dir/ms-gpu"
contains "streaming by --gpu-mem, said" "its rows streaming through two 0.0226 MB buffers"
p_gpu=$(converged_primal)
near "streaming: primal against the CPU's in memory" "$p_gpu" "$p_cpu" 2e-6
# (ranks on one GPU share its free memory: on the stand-in's one GPU 2 ranks have
# 150000 bytes each, as with --gpu-mem 150000; with a GPU each, 300000)
expect 0 "streaming by free memory" gpu_mpirun -np 2 -x FAKE_CUDA_GPUS=2 \
    -x FAKE_CUDA_MEM=$((268435456 + 300000)) $train --gpu \
    -l 1e-2 -r 3 "$dir/c32.bin" "$dir/ms-free"
contains "streaming by free memory, said" \
    "device 0, its rows streaming through two 0.0976 MB buffers"
expect 0 "streaming by free memory, one GPU" gpu_mpirun -np 2 \
    -x FAKE_CUDA_MEM=$((268435456 + 300000)) $train --gpu \
    -l 1e-2 -r 3 "$dir/c32.bin" "$dir/ms-free"
contains "streaming by free memory, one GPU, said" \
    "device 0 (shared by 2 ranks), its rows streaming through two 0.0226 MB buffers"
# each streamed epoch takes the rows in a random order of them all, the in-memory
# epoch's, in chunks gathered on the host: one rank reaches 1e-6 in 9 rounds in
# memory, 13 streaming (two chunks in flight: twice the rows in the curvature);
# chunks of consecutive rows visited in turn took 412 rounds (4 chunks) to 1061 (13)
expect 0 "streaming, the epoch's order: in memory" gpu_alone \
    $train --gpu --gpu-rows 1 -l 1e-2 -e 1e-6 -r 30 "$dir/c32.bin" "$dir/ms-order"
contains "streaming, the epoch's order: in memory, converged" "^converged after"
for cap in 300000 200000; do
    expect 0 "streaming, the epoch's order: $cap bytes" gpu_alone \
        $train --gpu --gpu-rows 1 --gpu-mem $cap -l 1e-2 -e 1e-6 -r 30 "$dir/c32.bin" \
        "$dir/ms-order"
    contains "streaming, the epoch's order: $cap bytes, streamed" "its rows streaming"
    contains "streaming, the epoch's order: $cap bytes, converged" "^converged after"
done
# chunks of a million entries or more are gathered by the -t threads: the same
# chunks, so the same model, byte for byte (150k rows, 6M entries, 12.6 MB chunks)
tools/strata-gen criteo --rows 150000 --cols 4096 --seed 7 -q -f bin -p 32 "$dir/big.bin" ||
    { echo "FAIL: strata-gen"; exit 1; }
for t in 1 2; do
    expect 0 "streaming, gathered by $t thread(s)" gpu_alone $train --gpu --gpu-rows 1 \
        --gpu-mem 31M -t $t -l 1e-3 -r 2 -e 0 "$dir/big.bin" "$dir/big$t.model"
    contains "streaming, gathered by $t thread(s), streamed" "through two 12.6 MB buffers"
done
cmp -s "$dir/big1.model" "$dir/big2.model" ||
    { echo "FAIL: streaming: 2 threads' gathering gave another model"; fail=1; }
expect 0 "in memory, one GPU" gpu_mpirun -np 2 $train --gpu -l 1e-2 -r 3 "$dir/c32.bin" \
    "$dir/ms-free"
contains "in memory, one GPU, said" "device 0 (shared by 2 ranks), 2 rank(s)"
expect 1 "too little GPU memory" gpu_mpirun -np 2 \
    $train --gpu --gpu-mem 60000 "$dir/c32.bin" "$dir/m"
contains "too little GPU memory named" "not enough for its 1500 rows' own arrays"
expect 2 "bad --gpu-mem" tools/strata-train --gpu --gpu-mem 12X "$dir/c32.bin" "$dir/m"
contains "bad --gpu-mem named" "gpu-mem"

# method newton with --gpu: its conjugate gradients (the Hessian-vector passes and
# the sweeps over the CG's vectors) and, for 32-bit data, X s and the row passes
# (the margins, D, the loss derivatives, the loss sums: the CPU's chunks and tree) on
# the GPU. The
# stand-in sums each row in the CPU's order, and the sweeps are the CPU's arithmetic
# in its order, so without a bias the model is the CPU run's byte for byte (1 and 2
# ranks; the squared hinge's rows with D = 0); with a bias the GPU's X s adds the bias last (the last bits differ) and
# host threads split the CPU's sums: the same optimum; 64-bit data (float on the
# GPU for H v, X s on the host): the same optimum
same_newton() {
    what=$1 np=$2
    shift 2
    expect 0 "newton, $what (CPU)" $ST_MPIRUN -np "$np" tools/strata-train -q \
        --method newton "$@" "$dir/cpu.model"
    expect 0 "newton, $what (GPU)" gpu_mpirun -np "$np" $train --gpu --method newton "$@" \
        "$dir/gpu.model"
    contains "newton, $what: the GPU ran the passes" \
        "its conjugate gradients and row passes on GPU 0"
    cmp -s "$dir/cpu.model" "$dir/gpu.model" ||
        { echo "FAIL: newton, $what: the GPU run's model differs from the CPU run's"; fail=1; }
}
same_newton "logistic, 1 rank" 1 -s logistic -l 1e-4 -e 1e-6 -r 50 "$dir/c32.bin"
# the Hessian-vector kernel sums the columns most rows hold (the generator's 13
# dense features, its first columns) per block first; STRATA_GLM_GPU_HV_HOT caps them
contains "newton: the 13 dense columns summed per block" "(13 hot column(s) summed"
expect 0 "newton, no hot columns" gpu_alone STRATA_GLM_GPU_HV_HOT=0 $train \
    --gpu --method newton -s logistic -l 1e-4 -e 1e-6 -r 50 "$dir/c32.bin" "$dir/gpu0.model"
contains "newton, no hot columns, said" "(0 hot column(s) summed"
cmp -s "$dir/cpu.model" "$dir/gpu0.model" ||
    { echo "FAIL: newton, no hot columns: the model differs from the CPU run's"; fail=1; }
for bad in 12x 129 -1; do
    expect 1 "newton, STRATA_GLM_GPU_HV_HOT=$bad" gpu_alone STRATA_GLM_GPU_HV_HOT=$bad \
        $train --gpu --method newton -l 1e-4 "$dir/c32.bin" "$dir/gpu0.model"
    contains "newton, STRATA_GLM_GPU_HV_HOT=$bad named" \
        "STRATA_GLM_GPU_HV_HOT='$bad' is not a count of columns from 0 to 128"
done
same_newton "sqsvm, 2 ranks" 2 -s sqsvm -l 1e-3 -e 1e-6 -r 50 "$dir/c32.bin"
same_newton "ridge, 2 ranks" 2 -s ridge -l 1e-3 -e 1e-6 -r 50 "$dir/r32.bin"
near_newton() {
    what=$1 np=$2 tol=$3
    shift 3
    expect 0 "newton, $what (CPU)" $ST_MPIRUN -np "$np" tools/strata-train -q \
        --method newton "$@" "$dir/m-cpu"
    p_cpu=$(converged_primal)
    expect 0 "newton, $what (GPU)" gpu_mpirun -np "$np" $train --gpu --method newton "$@" \
        "$dir/m-gpu"
    contains "newton, $what: the GPU ran the passes" "its conjugate gradients.* on GPU 0"
    p_gpu=$(converged_primal)
    near "newton, $what: primal on the GPU against the CPU's" "$p_gpu" "$p_cpu" "$tol"
}
near_newton "logistic, bias, 2 ranks" 2 1e-9 -s logistic -l 1e-4 -e 1e-10 -r 50 -B 1 \
    "$dir/c32.bin"
near_newton "logistic, 2 host threads" 1 1e-9 -s logistic -l 1e-4 -e 1e-10 -r 50 -t 2 \
    "$dir/c32.bin"
near_newton "logistic, 64-bit data" 2 1e-9 -s logistic -l 1e-3 -e 1e-10 -r 50 "$dir/c64.svm"
# kernel_fails WHAT NP KERNEL: that kernel failing ends a 32-bit run with the reason:
# across ranks the job ends; a training of one rank, or alone without mpirun, returns
# the error (before: the process ended there too, from inside the library)
kernel_fails() {
    expect 1 "newton, the GPU's $1 failing" gpu_mpirun -np "$2" \
        -x FAKE_CUDA_FAIL_KERNEL="$3" $train -q --gpu --method newton -l 1e-3 \
        "$dir/c32.bin" "$dir/m"
    if [ "$2" -gt 1 ]; then
        contains "newton, the GPU's $1 failing, said" \
            "the GPU's part of the Newton method failed (above); ending the job"
        return
    fi
    contains "newton, the GPU's $1 failing on 1 rank: strata-train's error" \
        "^strata-train: the GPU solver failed"
    grep -q "ending the job" "$out" &&
        { echo "FAIL: newton, the GPU's $1 failing on 1 rank ended the job"; cat "$out"; fail=1; }
    expect 1 "newton, the GPU's $1 failing, alone" gpu_alone FAKE_CUDA_FAIL_KERNEL="$3" \
        $train -q --gpu --method newton -l 1e-3 "$dir/c32.bin" "$dir/m"
    contains "newton, the GPU's $1 failing alone: strata-train's error" \
        "^strata-train: the GPU solver failed"
}
kernel_fails pass 1 st_glm_newton_hv
kernel_fails "CG sweep" 2 st_glm_cg
kernel_fails "CG sweep" 1 st_glm_cg
kernel_fails "margins" 1 st_glm_margins
# the gradient pass's sums on the GPU for 32-bit data only (64-bit data: the host's,
# over the data's own values), so its kernel failing ends the one run, not the other
kernel_fails "gradient pass" 1 st_glm_newton_grad
expect 0 "newton, 64-bit data: the gradient pass on the host" gpu_alone \
    FAKE_CUDA_FAIL_KERNEL=st_glm_newton_grad $train -q --gpu --method newton -l 1e-3 \
    -r 3 "$dir/c64.svm" "$dir/m"
expect 1 "newton, rows beyond the GPU's memory" gpu_mpirun -np 2 \
    $train -q --gpu --method newton --gpu-mem 150000 -l 1e-3 "$dir/c32.bin" "$dir/m"
contains "newton, rows beyond the GPU's memory, said" "does not stream them"
# --gpu-mem counts the Newton method's own GPU arrays too (the rows' D and loss
# derivatives, the product, the CG's 6 vectors: 16 bytes a row and 56 a column, 24
# bytes per 2048 columns and 16 per 1024 rows): on 1 rank the CSR and the per-row
# arrays take 940752 bytes, with them 1218224; at
# one byte less the run is refused, not over the budget (nor ended by a failed
# allocation at its first CG step on a full GPU)
expect 1 "newton, the budget less its own arrays" gpu_alone \
    $train -q --gpu --method newton --gpu-mem 1218223 -l 1e-3 -r 2 "$dir/c32.bin" "$dir/m"
contains "newton, the budget less its own arrays, said" "does not stream them"
expect 0 "newton, the budget with its own arrays" gpu_alone \
    $train --gpu --method newton --gpu-mem 1218224 -l 1e-3 -r 2 "$dir/c32.bin" "$dir/m"
contains "newton, the budget with its own arrays, on the GPU" \
    "its conjugate gradients and row passes on GPU 0"
# the row passes on the host (STRATA_GLM_GPU_NEWTON_ROWS=host, for comparing their
# cost): the same model, byte for byte; a bad value refused; their kernel failing
# ends a 32-bit run with the reason
expect 0 "newton, the row passes on the host" gpu_alone \
    STRATA_GLM_GPU_NEWTON_ROWS=host $train --gpu --method newton -s logistic -l 1e-4 \
    -e 1e-6 -r 50 "$dir/c32.bin" "$dir/gpu-host.model"
contains "newton, the row passes on the host, said" "its conjugate gradients on GPU 0"
expect 0 "newton, the row passes on the GPU" gpu_alone $train -q --gpu \
    --method newton -s logistic -l 1e-4 -e 1e-6 -r 50 "$dir/c32.bin" "$dir/gpu-rows.model"
cmp -s "$dir/gpu-host.model" "$dir/gpu-rows.model" ||
    { echo "FAIL: newton, the row passes on the host or the GPU: the models differ"; fail=1; }
expect 1 "newton, STRATA_GLM_GPU_NEWTON_ROWS=cpu" gpu_alone \
    STRATA_GLM_GPU_NEWTON_ROWS=cpu $train -q --gpu --method newton -l 1e-3 \
    "$dir/c32.bin" "$dir/m"
contains "newton, STRATA_GLM_GPU_NEWTON_ROWS=cpu named" \
    "STRATA_GLM_GPU_NEWTON_ROWS='cpu' is not gpu or host"
kernel_fails "row pass" 2 st_glm_newton_rows
kernel_fails "row pass" 1 st_glm_newton_rows
# the columns relabelled by frequency (262144 columns: auto), a third of them held
# (the method's d < the data's columns) and a bias, which the GPU finds at index d
near_newton "ridge, bias, frequency order, unheld columns" 2 1e-9 -s ridge -l 1e-3 \
    -e 1e-10 -r 50 -B 1 "$dir/sparse.bin"
contains "newton, unheld columns: d below the columns" "86488 of the 262144 columns held"
# one rank's GPU refusing (the kernel's name, on that rank only): every rank stops
# with the reason, none hangs in the method's first collective
expect 1 "newton, the GPU refusing on one rank" timeout -k 5 60 \
    $ST_MPIRUN -x LD_PRELOAD="${ST_SAN_RUNTIME:+$ST_SAN_RUNTIME }$fake" \
    -np 1 env STRATA_GLM_GPU_KERNEL=bogus $train --gpu --method newton -s ridge -l 1e-3 \
    -r 2 "$dir/sparse.bin" "$dir/m" : -np 1 $train --gpu --method newton -s ridge -l 1e-3 \
    -r 2 "$dir/sparse.bin" "$dir/m"
contains "newton, the GPU refusing on one rank, said" "is not warp or block"
# --gpu without --method: coordinate descent on the GPU, even where method auto
# would take newton on the CPU (lambda n 3e-3: a dual condition number of 1.7e4)
expect 0 "auto with --gpu" gpu_mpirun -np 1 $train --gpu -l 1e-6 -r 2 "$dir/c32.bin" "$dir/m"
contains "auto with --gpu: cd" "method auto: cd"
contains "auto with --gpu: on the GPU" "GPU local solver (TPA-SCD)"
expect 0 "auto without --gpu" $ST_MPIRUN -np 1 tools/strata-train -l 1e-6 -r 2 \
    "$dir/c32.bin" "$dir/m"
contains "auto without --gpu: newton" "method auto: newton"
expect 2 "newton, --gpu-rows" tools/strata-train --gpu --method newton --gpu-rows 8 \
    "$dir/c32.bin" "$dir/m"
contains "newton, --gpu-rows, said" "gpu_rows (--gpu-rows) applies to the GPU's coordinate descent"
expect 2 "lbfgs on the GPU" tools/strata-train --gpu --method lbfgs "$dir/c32.bin" "$dir/m"
contains "lbfgs on the GPU, said" "method lbfgs has no GPU solver"

# what --gpu cannot do, said
if ! nvidia-smi -L >/dev/null 2>&1; then   # a machine without a GPU or its driver
    expect 1 "no driver" tools/strata-train --gpu "$dir/c32.bin" "$dir/m"
    contains "no driver named" "gpu: no CUDA driver"
fi
expect 2 "lasso" tools/strata-train --gpu -s lasso "$dir/c32.bin" "$dir/m"
contains "lasso named" "gpu (--gpu) applies to the L2 models (logistic, svm, sqsvm, ridge, svr, sqsvr), method cd or newton"

[ $fail -eq 0 ] && echo "glm_gpu: PASS"
exit $fail
