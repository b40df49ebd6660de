#!/bin/sh
#
# tests/gpu/run-all.sh, the one command a GPU session runs, rehearsed here on the
# stand-in driver (tests/fake/libcuda.so.1 found as libcuda.so.1, an nvidia-smi that
# names one GPU), so that a broken step is found before the few minutes of a GPU
# machine are spent on it. The steps that need only the driver API (the kernels'
# check, the device-buffer sweeps, the host benchmark, the GPU solver) must pass;
# those built on the CUDA runtime (test_cuda_buffers) cannot run on the stand-in and
# must be reported as failed, not hang. (The 4-rank sweep, which the suite runs
# itself, and the kernels' timing are left out through RUNALL_SKIP.) Then the
# budget: with none left every step is skipped and said so. Skipped in VPATH
# builds (run-all.sh builds in its source tree), under sanitizers, and in builds
# without the GPU kernels.
#
. "${top_srcdir}/tests/common.sh"
. "${top_srcdir}/tests/gpu/common.sh"   # machine_cores, as run-all.sh counts them
if [ "$(cd "$top_srcdir" && pwd)" != "$(pwd)" ]; then
    echo "SKIP: a VPATH build (run-all.sh works in its source tree)"
    exit 77
fi
if [ -n "${ST_SANITIZERS:-}" ] || ! tools/strata-info 2>/dev/null | grep -q 'CUDA yes'; then
    echo "SKIP: a sanitizer build, or a build without the GPU kernels"
    exit 77
fi
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out err=$dir/err
mkdir "$dir/bin"
printf '#!/bin/sh\necho "GPU 0: stand-in (UUID: GPU-0)"\n' >"$dir/bin/nvidia-smi"
chmod +x "$dir/bin/nvidia-smi"
runall() { # BUDGET LOGDIR
    PATH="$dir/bin:$PATH" \
        LD_LIBRARY_PATH="$top_builddir/tests/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        RUNALL_BUDGET=$1 RUNALL_SKIP="sweep-4 kernels-time" GLM_ROWS=2000 GLM_GPU_ROWS=1 \
        bash "$top_srcdir/tests/gpu/run-all.sh" --pack "$2.tar.gz" "$2" >"$out" 2>"$err"
}

runall 900 "$dir/all"
check "exit 1 (the CUDA runtime's steps fail on the stand-in): exit $?" test $? -eq 1
sum=$dir/all/summary.txt
ncores=$(machine_cores)
for s in kernels-check sweep-2 glm; do
    check "step $s passed" grep -q "^$s: ok" "$sum"
done
for s in sweep-4 kernels-time; do   # the stand-in's emulated kernels are slow to time
    check "step $s left out" grep -q "^$s: skipped (RUNALL_SKIP)" "$sum"
done
if [ "$ncores" -ge 2 ]; then
    check "step host-$ncores passed" grep -q "^host-$ncores: ok" "$sum"
    check "host-$ncores.csv has the 64 MB row" \
        grep -q '^sum,double,67108864,' "$dir/all/host-$ncores.csv"
fi
for s in check-2-shared check-4-shared check-2-nocache check-2-pool check-2-ptds time-2 \
    time-4; do
    check "step $s reported failed" grep -q "^$s: FAIL" "$sum"
done
if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    check "step time-4-mps said skipped" \
        grep -q "^time-4-mps: skipped (no nvidia-cuda-mps-control)" "$sum"
fi
contains "the summary printed" "== summary"
contains "the packed logs named" "logs packed into $dir/all.tar.gz"
tar tzf "$dir/all.tar.gz" >"$dir/packed"
check "summary and sweep logs packed" grep -q '^\./summary\.txt$' "$dir/packed"
check "sweep-2.log packed" grep -q '^\./sweep-2\.log$' "$dir/packed"
check "no data or binaries packed" \
    sh -c "! grep -q -e '\\.bin\$' -e 'test_cuda_buffers\(_ptds\)\?\$' '$dir/packed'"
check "the sweep ran on device buffers" \
    grep -q 'test_allreduce --device: PASS' "$dir/all/sweep-2.log"

runall 5 "$dir/none"
check "no budget: exit 1" test $? -eq 1
for s in kernels-check sweep-2 glm; do
    check "no budget: $s skipped" grep -q "^$s: skipped (budget spent)" "$dir/none/summary.txt"
done
exit $fail
