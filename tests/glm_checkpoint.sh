#!/bin/sh
#
# strata-train --checkpoint-every / --resume. A run killed with SIGKILL (mpirun and its
# ranks) once its first checkpoint is on disk, then resumed, writes the model file of
# the run that was never interrupted, byte for byte: logistic on 1 rank, on 2 ranks of
# 2 threads, on 3 ranks with the gap every 4th round, on 1 rank with the gap's rounds
# chosen (auto) and the run stopped by -r before; lasso and l1-logistic on 1 rank
# (the serial solvers) and lasso on 2 (ProxCoCoA+, and block proximal Newton, over
# features; the one's checkpoint refused by the other). A run resumed at its
# last round from a checkpoint written without the gap reports that round's gap.
# A hierarchical run with automatic inner rounds, resumed after it chose them, keeps
# the checkpoint's choice.
# Checkpoints of format version 1 (the dual trainer's) and 2 (one rank's lasso, without
# its residual) are resumed.
# Refused with exit status 1, a message naming what differs and no hang: other data,
# another rank count, another lambda, a flipped byte, a truncated file, -r below the
# checkpoint's round, --resume without a checkpoint, a checkpoint file that is not one
# (left as it was), a named pipe, a checkpoint in a missing directory or one that
# takes no file (before the training). Usage errors exit 2. Neither the model file nor
# the data is ever written by a refused run. A successful write removes the temporary
# files that killed writers of the same file left behind, and nothing else.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d)
out="$dir/out"
trap 'rm -rf "$dir"' EXIT
run="timeout -k 5 120 $ST_MPIRUN"

for seed in 1 2; do   # 20000 rows for the runs to kill, 3000 for the refusals
    tools/strata-gen criteo --rows 20000 --cols 65536 --seed $seed -q "$dir/c$seed.svm" &&
        tools/strata-gen criteo --rows 3000 --cols 4096 --seed $seed -q "$dir/s$seed.svm" ||
        { echo "FAIL: strata-gen"; exit 1; }
done

# kill_resume NAME NP OPTION...: the model of an uninterrupted run; a run killed at its
# first checkpoint (every 5 rounds), then resumed; the two model files must be equal.
# $pre: a command the launcher runs under (default none); $meth: the method of all
# three (default cd: what auto picks for the L2 models with checkpoints)
pre=
meth=cd
kill_resume() {
    name=$1 np=$2
    shift 2
    full="$dir/full.model" part="$dir/part.model" ck="$dir/part.model.ckpt"
    rm -f "$full" "$part" "$ck"
    expect 0 "$name: uninterrupted" $pre $run -np "$np" tools/strata-train --method $meth \
        "$@" "$dir/c1.svm" "$full"
    full_rounds=$(awk '/^round/ { printf "%s ", $2 }' "$out")
    setsid $pre $ST_MPIRUN -np "$np" tools/strata-train -q --method $meth --checkpoint-every 5 \
        "$@" "$dir/c1.svm" "$part" >"$out" 2>&1 &
    job=$!   # mpirun, leader of a session of its own (setsid forks not from a job)
    i=0
    while [ ! -e "$ck" ] && [ $i -lt 1500 ]; do
        sleep 0.02
        i=$((i + 1))
    done
    # the ranks have process groups of their own, in mpirun's session: kill them all
    kill -KILL $(ps -o pid= -s $job) 2>/dev/null
    wait $job 2>/dev/null   # (not the shell's "Killed")
    rc=$?
    i=0
    while ps -o stat= -s $job | grep -qv Z && [ $i -lt 100 ]; do   # zombies are dead
        sleep 0.1
        i=$((i + 1))
    done
    if [ $rc -ne 137 ] || [ -e "$part" ] || [ ! -e "$ck" ]; then
        echo "FAIL: $name: not killed after a checkpoint (exit $rc, model written:" \
             "$([ -e "$part" ] && echo yes || echo no))"; cat "$out"; fail=1
        return
    fi
    expect 0 "$name: resumed" $pre $run -np "$np" tools/strata-train --method $meth \
        --checkpoint-every 5 --resume "$@" "$dir/c1.svm" "$part"
    contains "$name: resumed from its checkpoint" \
        "^checkpoint: resuming from .*part.model.ckpt after round [1-9]"
    cmp -s "$full" "$part" ||
        { echo "FAIL: $name: the resumed run's model differs"; fail=1; }
    # ... and computed its gaps (the progress lines) at the uninterrupted run's rounds
    after=$(sed -n 's/^checkpoint: resuming from .* after round \([0-9]*\).*/\1/p' "$out")
    rounds=$(awk '/^round/ { printf "%s ", $2 }' "$out")
    want=$(echo "$full_rounds" | tr ' ' '\n' | awk -v a="$after" '$1 > a { printf "%s ", $1 }')
    [ "$rounds" = "$want" ] ||
        { echo "FAIL: $name: the resumed run's gaps after round $after at '$rounds'," \
               "the uninterrupted run's at '$want'"; fail=1; }
}

kill_resume "logistic, 1 rank" 1 -e 0 -r 150
kill_resume "logistic, 2 ranks x 2 threads" 2 -t 2 -e 0 -r 120
kill_resume "logistic, 3 ranks, gap every 4" 3 --gap-every 4 -e 0 -r 120
kill_resume "lasso, 1 rank" 1 -s lasso -l 1e-4 -e 0 -r 100
# (killed at round 5, between the schedule's gaps 2 and 18: resumed without testing
# the start's gap, at the schedule's rounds, to the uninterrupted run's round 167)
kill_resume "lasso, 1 rank, gap auto" 1 -s lasso -l 1e-3 -e 1e-3 -r 300 --gap-every auto
kill_resume "l1-logistic, 1 rank (newGLMNET)" 1 -s l1-logistic -e 0 -r 25
kill_resume "lasso, 2 ranks (ProxCoCoA+)" 2 -s lasso -l 1e-4 -e 0 -r 80
meth=newton
kill_resume "lasso, 2 ranks (block proximal Newton)" 2 -s lasso -l 1e-4 -e 0 -r 40
# ... and its checkpoint is refused by ProxCoCoA+, naming the local solver
expect 1 "a block proximal Newton checkpoint, resumed by ProxCoCoA+" $run -np 2 \
    tools/strata-train -q --method cd --checkpoint-every 5 --resume -s lasso -l 1e-4 -e 0 \
    -r 40 "$dir/c1.svm" "$dir/part.model"
contains "ProxCoCoA+ refuses it, naming the local solver" \
    "local solver (thread mode, --gpu, or the L1 models' --method) block proximal Newton \
(--method newton) (this run: ProxCoCoA+'s coordinate descent (--method cd))"
meth=cd
# hierarchical CoCoA+ on 2 virtual nodes (Strata's node level, so under strata-run)
pre="env STRATA_VIRTUAL_NODES=2 tools/strata-run"
kill_resume "logistic, 2 nodes x 2 ranks, hierarchical" 4 --hierarchical --inner-rounds 3 \
    -e 0 -r 40
# its checkpoint is refused by a run of another schedule, naming what differs
hck="$dir/part.model.ckpt"
expect 1 "flat resuming hierarchical" $pre $run -np 4 tools/strata-train -q -e 0 -r 60 \
    --resume --checkpoint "$hck" "$dir/c1.svm" "$dir/h.model"
contains "flat resuming hierarchical named" "schedule hierarchical (this run: flat)"
# ... and only that (before: "nodes 2 (this run: 0); inner rounds 3 (this run: auto)", a
# flat run has neither)
grep -q "inner rounds\|nodes 2" "$out" &&
    { echo "FAIL: flat resuming hierarchical: the schedule's words named"; cat "$out"; fail=1; }
# ... and by one whose ranks share nodes otherwise (before: resumed, a model of
# neither layout's uninterrupted run)
expect 1 "another layout of the nodes" env STRATA_VIRTUAL_NODES_MAP=round-robin $pre $run \
    -np 4 tools/strata-train -q -e 0 -r 60 --hierarchical --inner-rounds 3 --resume \
    --checkpoint "$hck" "$dir/c1.svm" "$dir/h.model"
contains "another layout named" "ranks on each node (a hash) [0-9a-f]* (this run: [0-9a-f]*)$"
expect 1 "other inner rounds" $pre $run -np 4 tools/strata-train -q -e 0 -r 60 \
    --hierarchical --inner-rounds 4 --resume --checkpoint "$hck" "$dir/c1.svm" "$dir/h.model"
contains "other inner rounds named" "inner rounds 3 (this run: 4)"
# automatic inner rounds: chosen from the first 2 rounds' costs, kept in the checkpoint;
# a run resumed after them goes on with that choice, measuring nothing again
rm -f "$dir/a.model" "$dir/a.model.ckpt"
expect 0 "hierarchical, auto inner rounds: 5 rounds" $pre $run -np 4 tools/strata-train \
    -e 0 -r 5 --hierarchical --checkpoint-every 5 "$dir/s1.svm" "$dir/a.model"
chosen=$(grep "^hierarchical: 2 nodes, [0-9]* inner rounds per round" "$out")
expect 0 "hierarchical, auto inner rounds: resumed" $pre $run -np 4 tools/strata-train \
    -e 0 -r 10 --hierarchical --checkpoint-every 5 --resume "$dir/s1.svm" "$dir/a.model"
contains "auto inner rounds: resumed from round 5" "^checkpoint: resuming from .* after round 5"
grep -q "inner rounds per outer round" "$out" &&
    { echo "FAIL: auto inner rounds: the resumed run chose them again"; cat "$out"; fail=1; }
check "auto inner rounds: the resumed run's are the checkpoint's ($chosen)" \
    test -n "$chosen" -a "$(grep "^hierarchical: 2 nodes, " "$out")" = "$chosen"
pre=

# --gap-every auto: a run stopped by -r at rounds 7, 10 (a checkpoint's) and 40 (one
# of the schedule's gaps), then resumed, converges at the uninterrupted run's round
# to its model (before: the resumed run had lost the schedule, 44 rounds against 50)
tools/strata-gen dense -n 1500 -d 20 -q "$dir/d.svm" || { echo "FAIL: strata-gen"; exit 1; }
auto="tools/strata-train -q --gap-every auto -e 1e-8 -l 1e-3 --checkpoint-every 5"
expect 0 "gap auto: uninterrupted" $auto -r 400 "$dir/d.svm" "$dir/full.model"
for r in 7 10 40; do
    rm -f "$dir/part.model" "$dir/part.model.ckpt"
    $auto -r $r "$dir/d.svm" "$dir/part.model" >"$out" 2>&1
    expect 0 "gap auto: resumed after round $r" $auto -r 400 --resume "$dir/d.svm" \
        "$dir/part.model"
    cmp -s "$dir/full.model" "$dir/part.model" ||
        { echo "FAIL: gap auto: the run resumed after round $r has another model"; fail=1; }
done

# one rank's lasso resumed from a checkpoint written between its gaps (round 167 of
# gaps every 4th): the start's gap is not tested, as the uninterrupted run did not
# test it there, and the run ends at that run's round 168 with its model (the
# start's test would stop it at 167)
expect 0 "lasso, gap every 4, checkpoint at 167" tools/strata-train --gap-every 4 \
    --checkpoint-every 167 -s lasso -l 1e-3 -r 300 "$dir/c1.svm" "$dir/l4.model"
contains "lasso, gap every 4: converged at 168" "^converged after 168 rounds"
cp "$dir/l4.model" "$dir/l4.full"
expect 0 "lasso, gap every 4, resumed at 167" tools/strata-train --gap-every 4 \
    --checkpoint-every 167 --resume -s lasso -l 1e-3 -r 300 "$dir/c1.svm" "$dir/l4.model"
contains "lasso, gap every 4, resumed at 167: converged at 168" "^converged after 168 rounds"
cmp -s "$dir/l4.model" "$dir/l4.full" ||
    { echo "FAIL: lasso, gap every 4, resumed at 167: another model"; fail=1; }

# resumed at its last round from a checkpoint written without the gap (round 18 of
# gaps every 5th): that round's gap is computed, and the run ends as the run of 18
# rounds (before: round 15's objective and gap, "stopped" where that one converged)
last_line() { # the final objective line of a run's $out, without the times
    sed -n 's/^\(converged\|stopped\) after \(.*\), [0-9.]* s (allreduce.*/\1 \2/p' "$out"
}
expect 0 "gap every 5, checkpoint every 6" tools/strata-train -q --method cd -e 0 -r 20 --gap-every 5 \
    --checkpoint-every 6 "$dir/s1.svm" "$dir/g.model"
expect 0 "18 rounds" tools/strata-train --method cd -e 0.3 -r 18 --gap-every 5 \
    "$dir/s1.svm" "$dir/g18.model"
line18=$(last_line)   # (not $want: expect sets it)
expect 0 "resumed at round 18" tools/strata-train --method cd -e 0.3 -r 18 --gap-every 5 \
    --resume --checkpoint "$dir/g.model.ckpt" "$dir/s1.svm" "$dir/g.model"
resumed=$(last_line)
[ -n "$line18" ] && [ "$resumed" = "$line18" ] ||
    { echo "FAIL: resumed at round 18: '$resumed', the run of 18 rounds: '$line18'"; fail=1; }
cmp -s "$dir/g.model" "$dir/g18.model" ||
    { echo "FAIL: resumed at round 18: another model than the run of 18 rounds"; fail=1; }

# refusals, most by one process alone (mpirun takes seconds to end a failed job): a
# checkpoint of one rank after round 6, and a model file to keep
ck="$dir/r.ckpt"
# with the temporary files of killed writers (an hour old, unlocked) planted next to
# both outputs: the run's writes remove those, and only those: not other names, not
# one a live writer holds (locked), not one just made (its writer may not have
# locked it yet)
for f in "$ck.tmp.4242.0" "$ck.tmp.17.3" "$dir/r.model.tmp.4242.7" "$ck.tmp.keep" \
         "$ck.tmp.12.x" "$ck.tmp.12." "$dir/other.ckpt.tmp.5.5" "$ck.tmp.99.1" \
         "$ck.tmp.98.1"; do
    echo stale >"$f"
    touch -d '1 hour ago' "$f"
done
touch "$ck.tmp.98.1"   # just made
# a live writer's lock (flock(1), util-linux: the sleep holds it, and is killed after)
holder=
if command -v flock >/dev/null 2>&1; then
    (exec 9>>"$ck.tmp.99.1" && flock -x 9 && exec sleep 120) >/dev/null 2>&1 &
    holder=$!
    i=0
    while flock -n -x "$ck.tmp.99.1" true 2>/dev/null && [ $i -lt 300 ]; do
        sleep 0.1   # until the holder has its lock
        i=$((i + 1))
    done
else
    echo "flock(1) is not installed: the locked temporary is not checked"
    rm -f "$ck.tmp.99.1"
    touch "$ck.tmp.99.1"   # (then just made: kept all the same)
fi
expect 0 "checkpoint to refuse" tools/strata-train -q -e 0 -r 6 --checkpoint-every 3 \
    --checkpoint "$ck" "$dir/s1.svm" "$dir/r.model"
[ -z "$holder" ] || { kill $holder 2>/dev/null; wait $holder 2>/dev/null; }
for f in "$ck.tmp.4242.0" "$ck.tmp.17.3" "$dir/r.model.tmp.4242.7"; do
    [ ! -e "$f" ] || { echo "FAIL: a killed writer's $(basename "$f") is still there"; fail=1; }
done
for f in "$ck.tmp.keep" "$ck.tmp.12.x" "$ck.tmp.12." "$dir/other.ckpt.tmp.5.5" \
         "$ck.tmp.99.1" "$ck.tmp.98.1"; do
    [ -e "$f" ] || { echo "FAIL: $(basename "$f"), not a killed writer's, was removed"; fail=1; }
    rm -f "$f"
done
cp "$ck" "$dir/good.ckpt"
cp "$dir/r.model" "$dir/r.model.orig"
refused() { # NAME PATTERN LAUNCHER... OPTION... DATA
    name=$1 pattern=$2
    shift 2
    expect 1 "$name" "$@" --resume --checkpoint "$ck" "$dir/r.model"
    contains "$name named" "$pattern"
}
train="tools/strata-train -q -e 0 -r 12"
refused "other data" "r.ckpt: the checkpoint is of another run: .*data checksum" $train \
    "$dir/s2.svm"
refused "other lambda" "lambda 0.0001 (this run: 0.0002)" $train -l 2e-4 "$dir/s1.svm"
refused "other rank count" "ranks 1 (this run: 2)" $run -np 2 $train "$dir/s1.svm"
size=$(wc -c <"$ck")
for at in 100 5000 $((size - 20000)); do   # the header, v, alpha
    cp "$dir/good.ckpt" "$ck"
    b=$(od -An -tu1 -j "$at" -N 1 "$ck" | tr -d ' ')
    printf "$(printf '\\%03o' $(( (b + 1) % 256 )))" |
        dd of="$ck" bs=1 seek="$at" conv=notrunc 2>/dev/null
    refused "byte $at flipped" "r.ckpt: corrupted checkpoint" $train "$dir/s1.svm"
done
cp "$dir/good.ckpt" "$ck"
# -r below the checkpoint's round: that round's model cannot be gone back to (before:
# the checkpoint's model was written as if of -r rounds)
refused "rounds below" "r.ckpt: the checkpoint is after round 6, past this run's last (4 \
rounds): resume with at least 6 rounds" tools/strata-train -q -e 0 -r 4 "$dir/s1.svm"
truncate -s $((size - 8)) "$ck"
refused "truncated" "r.ckpt: truncated checkpoint" $train "$dir/s1.svm"
rm -f "$ck"
refused "no checkpoint" "no checkpoint .*r.ckpt.*--checkpoint-every" $train "$dir/s1.svm"
cmp -s "$dir/r.model" "$dir/r.model.orig" ||
    { echo "FAIL: a refused run changed the model file"; fail=1; }
cp "$dir/good.ckpt" "$ck"
expect 0 "the checkpoint again" $train --resume --checkpoint "$ck" "$dir/s1.svm" \
    "$dir/r.model"

# a checkpoint of format version 1 (tests/data/ckpt-v1: 2 ranks x 2 threads after round
# 3, written by the build of aa76202, with the row orders that version 2 leaves out) is
# resumed to the uninterrupted run's model, and the next save writes version 3; a
# damaged version word is refused as damage
v1="${top_srcdir}/tests/data/ckpt-v1" v1ck="$dir/v1.ckpt"
v1args="--method cd -l 1e-3 -e 1e-9 -r 10 -t 2"
cp "$v1/train.ckpt" "$v1ck" && chmod u+w "$v1ck"
expect 0 "version 1: uninterrupted" $run -np 2 tools/strata-train -q $v1args \
    "$v1/train.svm" "$dir/v1full.model"
expect 0 "version 1: resumed" $run -np 2 tools/strata-train $v1args --checkpoint-every 3 \
    --checkpoint "$v1ck" --resume "$v1/train.svm" "$dir/v1.model"
contains "version 1: resumed from it" "^checkpoint: resuming from .*v1.ckpt after round 3"
cmp -s "$dir/v1full.model" "$dir/v1.model" ||
    { echo "FAIL: version 1: the resumed run's model differs"; fail=1; }
[ "$(od -An -tu8 -j 8 -N 8 "$v1ck" | tr -d ' ')" = 3 ] ||
    { echo "FAIL: version 1: the resumed run saved version" \
           "$(od -An -tu8 -j 8 -N 8 "$v1ck")"; fail=1; }
# (a version word changed under the header's checksum is damage, not a newer version:
# tests/test_ckpt has both)
printf '\004' | dd of="$v1ck" bs=1 seek=8 conv=notrunc 2>/dev/null
expect 1 "a damaged version word" $run -np 2 tools/strata-train -q $v1args --checkpoint \
    "$v1ck" --checkpoint-every 3 --resume "$v1/train.svm" "$dir/v1.model"
contains "a damaged version word named" "v1.ckpt: corrupted checkpoint (its version word reads 4"

# a version 2 checkpoint of one rank's lasso (tests/data/ckpt-v2-lasso: after round 6
# of -r 6, written by the build of f3fb9e1) has w but not the residual X w - y that
# version 3 keeps: resumed, the residual is recomputed from w (so the steps differ from
# the uninterrupted run's by rounding) and the run converges to the uninterrupted
# run's optimum; the next save writes version 3, with the residual's 200 doubles
v2="${top_srcdir}/tests/data/ckpt-v2-lasso" v2ck="$dir/v2.ckpt"
v2args="-s lasso -l 1e-3 -e 1e-10 -r 2000"
cp "$v2/train.ckpt" "$v2ck" && chmod u+w "$v2ck"
expect 0 "lasso version 2: uninterrupted" tools/strata-train $v2args "$v2/train.svm" \
    "$dir/v2full.model"
p_full=$(converged_primal)
expect 0 "lasso version 2: resumed" tools/strata-train $v2args --checkpoint-every 7 \
    --checkpoint "$v2ck" --resume "$v2/train.svm" "$dir/v2.model"
contains "lasso version 2: resumed from it" "^checkpoint: resuming from .*v2.ckpt after round 6"
near "lasso version 2: the uninterrupted run's optimum" "$(converged_primal)" "$p_full" 1e-9
[ "$(od -An -tu8 -j 8 -N 8 "$v2ck" | tr -d ' ')" = 3 ] &&
    [ "$(wc -c < "$v2ck")" -eq $((512 + 32 + 8 * 30 + 8 * 200)) ] ||
    { echo "FAIL: lasso version 2: the resumed run saved version" \
           "$(od -An -tu8 -j 8 -N 8 "$v2ck"), $(wc -c < "$v2ck") bytes"; fail=1; }

# a checkpoint file that is not one is not overwritten; usage errors
cp "$dir/s2.svm" "$dir/s2.keep"
expect 1 "not a checkpoint" tools/strata-train -q -r 6 --checkpoint-every 3 \
    --checkpoint "$dir/s2.svm" "$dir/s1.svm" "$dir/x.model"
contains "not a checkpoint named" "s2.svm exists and is not a Strata checkpoint"
cmp -s "$dir/s2.svm" "$dir/s2.keep" || { echo "FAIL: the other file was written"; fail=1; }
expect 2 "checkpoint is the model" tools/strata-train --checkpoint-every 3 --checkpoint \
    "$dir/r.model" "$dir/s1.svm" "$dir/r.model"
contains "checkpoint is the model named" "is the model, training or test file"
expect 2 "checkpoint is the data" tools/strata-train --checkpoint-every 3 --checkpoint \
    "$dir/s1.svm" "$dir/s1.svm" "$dir/x.model"
expect 2 "--checkpoint alone" tools/strata-train --checkpoint "$dir/x" "$dir/s1.svm"
contains "--checkpoint alone named" "needs --checkpoint-every"
expect 2 "--checkpoint-every 0" tools/strata-train --checkpoint-every 0 "$dir/s1.svm"
contains "--checkpoint-every 0 named" "checkpoint-every"
# a checkpoint in a missing directory: refused before the training (before: found at
# the first checkpoint, the rounds so far lost and no model written)
rm -f "$dir/nd.model"
expect 1 "checkpoint in a missing directory" tools/strata-train -q -e 0 -r 40 \
    --checkpoint-every 20 --checkpoint "$dir/none/x.ckpt" "$dir/s1.svm" "$dir/nd.model"
contains "checkpoint in a missing directory named" \
    "x.ckpt: cannot write checkpoints: .*/none does not exist"
check "checkpoint in a missing directory: before the training" \
    test -z "$(grep 'after .* rounds' "$out")" -a ! -e "$dir/nd.model"
# ... or one that takes no new file, for a user of no privilege (setpriv)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
    setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    mkdir "$dir/ro" "$dir/rw" && chmod 755 "$dir" "$dir/ro" && chmod 777 "$dir/rw" &&
        chmod 644 "$dir/s1.svm"
    expect 1 "checkpoint in a directory that takes no file" setpriv --reuid=65534 \
        --regid=65534 --clear-groups tools/strata-train -q -e 0 -r 40 --checkpoint-every 20 \
        --checkpoint "$dir/ro/x.ckpt" "$dir/s1.svm" "$dir/rw/n.model"
    contains "checkpoint in a directory that takes no file named" \
        "cannot write checkpoints: .*/ro takes no new file"
fi
# a named pipe as the checkpoint to resume from: refused (before: waited for a writer
# for ever)
mkfifo "$dir/fifo.ckpt"
expect 1 "resume from a named pipe" tools/strata-train -q --resume --checkpoint \
    "$dir/fifo.ckpt" "$dir/s1.svm" "$dir/f.model"
contains "resume from a named pipe named" "fifo.ckpt: not a checkpoint: not a regular file"
# the SVR models' epsilon steers the steps: a run resumed with another is refused, with
# the same one it ends where the uninterrupted run does
tools/strata-gen regression --rows 600 --cols 12 --seed 8 -q "$dir/svr.svm" ||
    { echo "FAIL: strata-gen regression"; exit 1; }
svr="tools/strata-train -q -s sqsvr --method cd --epsilon 0.2 -e 0 -l 1e-3"
expect 0 "sqsvr, 20 rounds" $svr -r 20 "$dir/svr.svm" "$dir/svr-full.model"
expect 0 "sqsvr, 10 rounds, checkpoint" $svr -r 10 --checkpoint-every 5 \
    --checkpoint "$dir/svr.ckpt" "$dir/svr.svm" "$dir/svr-half.model"
expect 1 "sqsvr resumed with another epsilon" tools/strata-train -q -s sqsvr --method cd \
    --epsilon 0.3 -e 0 -l 1e-3 -r 20 --resume --checkpoint "$dir/svr.ckpt" "$dir/svr.svm" \
    "$dir/svr-x.model"
contains "sqsvr resumed with another epsilon: named" \
    "eta (svr, sqsvr: epsilon) 0.2 (this run: 0.3)"
expect 0 "sqsvr resumed to 20 rounds" $svr -r 20 --resume --checkpoint "$dir/svr.ckpt" \
    "$dir/svr.svm" "$dir/svr-resumed.model"
cmp -s "$dir/svr-full.model" "$dir/svr-resumed.model" ||
    { echo "FAIL: sqsvr: the resumed run's model differs from the uninterrupted one"; fail=1; }
exit $fail
