# Shared by the GPU scripts (run-all.sh, glm.sh; tests/gpu_script.sh too): one
# deadline for the whole run, so that a step that hangs cannot spend a short GPU
# session. run-all.sh sets RUNALL_DEADLINE (seconds since the epoch) from
# RUNALL_BUDGET; a script run alone has no deadline.

# step_timeout WANT: WANT seconds, or fewer when the deadline is nearer; 0 when
# fewer than 10 seconds are left (the step is then skipped)
step_timeout() {
    local want=$1 left
    if [ -n "${RUNALL_DEADLINE:-}" ]; then
        left=$(( RUNALL_DEADLINE - $(date +%s) ))
        [ "$left" -lt "$want" ] && want=$left
    fi
    [ "$want" -lt 10 ] && want=0
    echo "$want"
}

# machine_cores: the cores of this machine (not its hardware threads)
machine_cores() {
    local n
    n=$(lscpu -p=CORE 2>/dev/null | grep -v '^#' | sort -u | wc -l)
    [ "$n" -gt 0 ] || n=$(nproc)
    echo "$n"
}
