#!/bin/sh
#
# A CUDA call that fails on one rank inside the CUDA IPC path (the stand-in driver's
# FAKE_CUDA_FAIL_SYNC=1 on rank 0: its stream's work fails): the job ends with the
# reason, and no rank returns from MPI_Allreduce, since the others' results are not
# whole (before: ranks 1 and 2 returned success with buffers rank 0 never wrote).
# On one GPU (the stand-in's default) rank 0 folds for all; on 2 GPUs each rank its
# slice.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

if ! grep -q '^#define HAVE_CUDA 1' config.h; then
    echo "SKIP: built without nvcc (no GPU kernels)"
    exit 77
fi
fake=tests/fake/libcuda.so.1
for gpus in 1 2; do
    timeout -k 5 120 $ST_MPIRUN -x FAKE_CUDA_GPUS=$gpus \
        -np 1 env FAKE_CUDA_FAIL_SYNC=1 tests/test_device $fake --fail : \
        -np 2 tests/test_device $fake --fail >"$out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
        echo "FAIL: $gpus GPU(s): exit $rc (expected the job aborted)"; cat "$out"; fail=1
    fi
    if grep -q "returned" "$out"; then
        echo "FAIL: $gpus GPU(s): a rank returned from the failed call"; cat "$out"; fail=1
    fi
    grep -q "a CUDA call of the IPC path failed" "$out" ||
        { echo "FAIL: $gpus GPU(s): the reason was not said"; cat "$out"; fail=1; }
done
exit $fail
