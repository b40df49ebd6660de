# Sourced by the test environment of a sanitizer build (configure
# --enable-sanitizers, make check-sanitizers): a report fails the test that
# caused it. The suppression files say why each entry is there.
st_san_dir="$top_srcdir/tests/sanitizers"
ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:check_initialization_order=1:strict_init_order=1"
LSAN_OPTIONS="suppressions=$st_san_dir/lsan.supp:print_suppressions=0"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$st_san_dir/ubsan.supp"
# ignore_noninstrumented_modules: the memory Open MPI writes through libc (memcpy
# from libmpi, as when one thread's progress delivers another thread's message
# into its buffer) is not tracked; Strata's own accesses, and the locks Open MPI
# takes, still are (tsan.supp says why)
TSAN_OPTIONS="suppressions=$st_san_dir/tsan.supp:halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1"
# (common/st_sanitize.c keeps Open MPI's plugins loaded: their frames have names)
# UCX's memory-event hooks (it interposes madvise and mmap) run in exiting threads
# that ThreadSanitizer no longer tracks, and crash there; they only serve UCX's
# registration cache for RDMA devices
UCX_MEM_EVENTS=no
export ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS UCX_MEM_EVENTS
