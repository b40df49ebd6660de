#!/bin/sh
#
# strata-train from the command line: bad usage exits 2 with a message; a run on
# strata-gen data converges, writes a LIBLINEAR-format model, evaluates --test;
# started alone it initializes no MPI and gives mpirun -np 1's model; the same seed
# and rank count give the same model file, byte for byte, with
# Strata's allreduce preloaded or not; regression data train ridge. LIBLINEAR's class
# weights (-w1, -w-1, -w0) are --weight-pos and --weight-neg.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d)
out="$dir/out"
trap 'rm -rf "$dir"' EXIT


tools/strata-gen criteo --rows 3000 --cols 4096 --seed 3 -q --test-rows 500 \
    --test-out "$dir/test.svm" "$dir/train.svm" || { echo "FAIL: strata-gen"; exit 1; }
tools/strata-gen regression --rows 2000 --cols 20 --seed 4 -q "$dir/reg.svm" ||
    { echo "FAIL: strata-gen regression"; exit 1; }
tools/strata-gen dense --rows 300 --cols 15 --seed 5 -q "$dir/ll.svm" ||
    { echo "FAIL: strata-gen dense 300"; exit 1; }

expect 0 "--help" tools/strata-train --help
contains "--help" "Usage: strata-train"
expect 2 "bad option" tools/strata-train --bogus "$dir/train.svm"
contains "bad option named" "bogus"
expect 2 "no file" tools/strata-train
# the option named is the one getopt could not take, inside a cluster too (before:
# "unknown option '5'", the argument before the cluster)
expect 2 "unknown option in a cluster" tools/strata-train -r 5 -xq "$dir/train.svm"
contains "unknown option in a cluster named" "unknown option '-x'"
expect 2 "a value for a flag" tools/strata-train --quiet=1 "$dir/train.svm"
contains "a value for a flag named" "option '--quiet' takes no value"
expect 2 "no value, end of a cluster" tools/strata-train "$dir/train.svm" -qr
contains "no value, end of a cluster named" "option -r needs a value"
expect 2 "bad lambda" tools/strata-train -l abc "$dir/train.svm"
contains "bad lambda named" "lambda"
expect 2 "negative lambda" tools/strata-train -l -1 "$dir/train.svm"
expect 2 "unknown solver" tools/strata-train -s logistik "$dir/train.svm"
contains "unknown solver named" "logistik"
expect 2 "zero threads" tools/strata-train -t 0 "$dir/train.svm"
# --seed takes 0 to 2^64-1 as strata-gen's -s does (before: -1 wrapped to 2^64-1, and
# 2^64-1 itself was refused); an empty model file name is bad usage before any
# training (before: trained, then exit 1 with the C API's message)
expect 2 "a negative seed" tools/strata-train --seed -1 "$dir/train.svm"
contains "a negative seed named" "option --seed needs an integer from 0 to 2^64-1, not '-1'"
expect 0 "the largest seed" tools/strata-train -q -r 1 --seed 18446744073709551615 \
    "$dir/train.svm" "$dir/seed.model"
expect 2 "an empty model file name" tools/strata-train "$dir/train.svm" ""
contains "an empty model file name named" "the model file name is empty"
# a --test file that cannot be read, a model file in no directory: exit 1 before the
# training (before: after it, a model written in the first case)
expect 1 "a missing test file" $ST_MPIRUN -np 2 tools/strata-train --test "$dir/none.svm" \
    "$dir/train.svm" "$dir/early.model"
contains "a missing test file named" "none.svm: cannot read the test file"
expect 1 "a model file in no directory" tools/strata-train "$dir/train.svm" "$dir/none/m.model"
contains "a model file in no directory named" "none/m.model: cannot write the model: .*none does not exist"
# (a file where the directory would be: said so; before, a missing one was said so too)
expect 1 "a model file under a file" tools/strata-train "$dir/train.svm" "$dir/train.svm/m.model"
contains "a model file under a file named" "train.svm/m.model: cannot write the model: .*train.svm is not a directory"
if grep -q "after .* rounds" "$out" || [ -e "$dir/early.model" ]; then
    echo "FAIL: trained before the test or model file was found missing"; cat "$out"; fail=1
fi
expect 2 "bad thread mode" tools/strata-train --thread-mode wild "$dir/train.svm"
contains "bad thread mode named" "thread-mode"
expect 2 "bad feature order" tools/strata-train --feature-order hot "$dir/train.svm"
contains "bad feature order named" "feature-order must be auto, frequency or given, not 'hot'"
expect 2 "zero gap-every" tools/strata-train --gap-every 0 "$dir/train.svm"
contains "bad gap-every named" "gap-every"
expect 2 "bad cost" tools/strata-train -c 0 "$dir/train.svm"
# a C whose lambda = 1/(C n) is beyond double precision: -c named (before: "lambda must
# be finite and > 0", of a lambda never given)
for c in 1e-320 1e308; do
    expect 2 "-c $c" tools/strata-train -q -c $c "$dir/train.svm" "$dir/m"
    contains "-c $c: named" "^strata-train: -c [0-9.e+-]*: lambda = 1/(C n) = .* beyond double precision"
done
expect 2 "negative inner rounds" tools/strata-train --hierarchical --inner-rounds -1 \
    "$dir/train.svm"
contains "negative inner rounds named" "inner-rounds"
expect 2 "hierarchical lasso" tools/strata-train --hierarchical -s lasso "$dir/train.svm"
contains "hierarchical lasso named" \
    "hierarchical (--hierarchical) applies to the L2 models (logistic, svm, sqsvm, ridge, svr, sqsvr), method cd"
expect 1 "missing file" tools/strata-train "$dir/none.svm" "$dir/m"
contains "missing file named" "none.svm"

# a run, with the test metrics
expect 0 "train 1 rank" tools/strata-train -l 0.010666666666666666 -e 1e-5 -r 2000 --test "$dir/test.svm" \
    "$dir/train.svm" "$dir/m1"
contains "converged" "^converged after"
contains "metrics" "test .*accuracy .*logloss .*AUC"
contains "model written" "model written to"
head -n 1 "$dir/m1" | grep -q "^solver_type L2R_LR" || { echo "FAIL: model format"; fail=1; }

# started alone, no MPI (Open MPI's singleton start took 0.3-0.45 s): said in the first
# line; the same model as mpirun -np 1 gives, byte for byte, with each method and with
# threads; a cross-validation's and a C search's lines the same too
contains "alone: no MPI" "allreduce: none (one process, no MPI)"
# a Slurm step of several tasks is a launch (Slurm's PMI-1 sets only its own variables:
# before, each task trained alone on all the rows); of one task, alone
expect 0 "a Slurm step of 2 tasks" env SLURM_STEP_NUM_TASKS=2 tools/strata-train -r 2 \
    "$dir/train.svm" "$dir/slurm.m"
contains "a Slurm step of 2 tasks: MPI" "allreduce: Open MPI"
expect 0 "a Slurm step of 1 task" env SLURM_STEP_NUM_TASKS=1 tools/strata-train -r 2 \
    "$dir/train.svm" "$dir/slurm.m"
contains "a Slurm step of 1 task: alone" "allreduce: none (one process, no MPI)"
for a in "--method cd -t 2 -l 1e-3" "--method lbfgs -l 1e-3" "--method newton -l 1e-3" \
    "-s 5 -c 1" "-s 11 -c 1 -p 0.2"; do
    case $a in -s\ 11*) f="$dir/reg.svm" ;; *) f="$dir/train.svm" ;; esac
    # shellcheck disable=SC2086
    expect 0 "alone: $a" tools/strata-train $a -e 1e-6 -r 300 "$f" "$dir/alone.m"
    # shellcheck disable=SC2086
    expect 0 "mpirun -np 1: $a" $ST_MPIRUN -np 1 tools/strata-train $a -e 1e-6 -r 300 "$f" \
        "$dir/np1.m"
    contains "mpirun -np 1: MPI's allreduce" "allreduce: Open MPI's"
    cmp -s "$dir/alone.m" "$dir/np1.m" ||
        { echo "FAIL: $a: alone and under mpirun -np 1, different models"; fail=1; }
done
for a in "-v 4 -c 2" "-C -v 3"; do
    # shellcheck disable=SC2086
    tools/strata-train -q $a "$dir/ll.svm" >"$dir/alone.txt" 2>&1 ||
        { echo "FAIL: alone: $a: exit $?"; fail=1; }
    # shellcheck disable=SC2086
    $ST_MPIRUN -np 1 tools/strata-train -q $a "$dir/ll.svm" >"$dir/np1.txt" 2>&1 ||
        { echo "FAIL: mpirun -np 1: $a: exit $?"; fail=1; }
    cmp -s "$dir/alone.txt" "$dir/np1.txt" || { echo "FAIL: $a: alone and under mpirun -np 1"
        diff "$dir/alone.txt" "$dir/np1.txt"; fail=1; }
done

# the same seed: the same bytes, with Open MPI's allreduce or Strata's
expect 0 "train 2 ranks" $ST_MPIRUN -np 2 tools/strata-train -q -l 0.010666666666666666 -e 1e-5 -r 2000 \
    "$dir/train.svm" "$dir/m2a"
expect 0 "train 2 ranks under strata-run" tools/strata-run $ST_MPIRUN -np 2 \
    tools/strata-train -l 0.010666666666666666 -e 1e-5 -r 2000 "$dir/train.svm" "$dir/m2b"
contains "strata-run preloads" "allreduce: Strata (preloaded)"
cmp -s "$dir/m2a" "$dir/m2b" || { echo "FAIL: 2-rank models differ with and without Strata"; fail=1; }
# hierarchical on one node (the ranks that share memory, no libstrata): flat CoCoA+
expect 0 "hierarchical, one node" $ST_MPIRUN -np 2 tools/strata-train --hierarchical \
    -l 0.010666666666666666 -e 1e-5 -r 2000 "$dir/train.svm" "$dir/m2h"
contains "hierarchical, one node, says so" "^hierarchical: 1 node(s) of 2 rank(s): flat CoCoA+"
cmp -s "$dir/m2a" "$dir/m2h" || { echo "FAIL: hierarchical on one node is not flat"; fail=1; }
# the inner rounds' choice on nodes of 2 and 1 ranks (3 ranks on 2 virtual nodes): a
# node of one rank has no node sum, which is not a free one (before: "node allreduce
# 0 s" whatever the node of 2 ranks took); on nodes of one rank each, 0 it is; the
# summary says the inner rounds were chosen, which round 1 (2 of them) did not run
hier_vnodes() { # NODES NAME: 3 ranks on NODES virtual nodes, one round
    expect 0 "hierarchical, $2" env STRATA_VIRTUAL_NODES=$1 tools/strata-run \
        $ST_MPIRUN -np 3 tools/strata-train --hierarchical -l 0.01 -r 1 "$dir/train.svm" \
        "$dir/mvn"
    contains "$2: the summary says chosen" \
        "^hierarchical: $1 nodes, [0-9]* inner rounds per round (chosen from the first rounds' costs)"
}
hier_vnodes 2 "nodes of 2 and 1 ranks"
grep -Eq 'node allreduce 0(\.0+)? s' "$out" &&
    { echo "FAIL: a node of 2 ranks: its sum taken as free"; cat "$out"; fail=1; }
contains "a node of 2 ranks: the sum named" "node allreduce [0-9.e-]* s"
hier_vnodes 3 "nodes of one rank"
contains "nodes of one rank: no node sums" "node allreduce 0 s"

# the model vector's layout: relabelled by frequency or as given, the same steps,
# so the same model file, byte for byte
expect 0 "frequency order" tools/strata-train -q --feature-order frequency -l 0.010666666666666666 \
    -e 1e-5 -r 2000 "$dir/train.svm" "$dir/m1f"
expect 0 "given order" tools/strata-train -q --feature-order given -l 0.010666666666666666 \
    -e 1e-5 -r 2000 "$dir/train.svm" "$dir/m1g"
cmp -s "$dir/m1" "$dir/m1f" && cmp -s "$dir/m1" "$dir/m1g" ||
    { echo "FAIL: --feature-order frequency and given give different models"; fail=1; }

# LIBLINEAR's C: lambda = 1/(C n) = 1/93.75 for C = 1/32 and n = 3000
expect 0 "train with -c" tools/strata-train -q -c 0.03125 -e 1e-5 -r 2000 \
    "$dir/train.svm" "$dir/m1c"
cmp -s "$dir/m1" "$dir/m1c" || { echo "FAIL: -c 1/3 and -l 1e-3 give different models"; fail=1; }

# LIBLINEAR's solver numbers: the model of the same objective, byte for byte (C 4:
# lambda 1/(4 n) = 1/1200); without -c or -l, LIBLINEAR's C = 1 (with -l, lambda);
# the types Strata has no model for, and what is not a LIBLINEAR type, refused
# naming them (before: "unknown model '2'")
for p in 0:logistic 7:logistic 1:sqsvm 2:sqsvm 3:svm 6:l1-logistic 5:l1-sqsvm; do
    n=${p%%:*} m=${p#*:}
    expect 0 "-s $n -c 4" tools/strata-train -s "$n" -c 4 -e 0 -r 20 "$dir/ll.svm" "$dir/mn"
    contains "-s $n -c 4: $m named" "^strata-train: $m (LIBLINEAR -s $n, C 4), lambda 0.000833333,"
    expect 0 "-s $m -c 4" tools/strata-train -q -s "$m" -c 4 -e 0 -r 20 "$dir/ll.svm" "$dir/mm"
    cmp -s "$dir/mn" "$dir/mm" || { echo "FAIL: -s $n -c 4 and -s $m -c 4 differ"; fail=1; }
done
expect 0 "-s 2, LIBLINEAR's default C" tools/strata-train -s 2 -e 0 -r 20 "$dir/ll.svm" "$dir/mn"
contains "-s 2: C 1" "^strata-train: sqsvm (LIBLINEAR -s 2, C 1), lambda 0.00333333,"
expect 0 "-s sqsvm -c 1" tools/strata-train -q -s sqsvm -c 1 -e 0 -r 20 "$dir/ll.svm" "$dir/mm"
cmp -s "$dir/mn" "$dir/mm" || { echo "FAIL: -s 2 and -s sqsvm -c 1 differ"; fail=1; }
expect 0 "-s 3 -l 1e-3" tools/strata-train -s 3 -l 1e-3 -e 0 -r 20 "$dir/ll.svm" "$dir/mn"
contains "-s 3 -l 1e-3: lambda" "^strata-train: svm (LIBLINEAR -s 3), lambda 0.001,"
expect 0 "-s svm -l 1e-3" tools/strata-train -q -s svm -l 1e-3 -e 0 -r 20 "$dir/ll.svm" "$dir/mm"
cmp -s "$dir/mn" "$dir/mm" || { echo "FAIL: -s 3 -l 1e-3 and -s svm -l 1e-3 differ"; fail=1; }
rm -f "$dir/mn"
for r in "4:MCSVM_CS:Strata trains more than two classes one against the rest (nearest: -s svm" \
    "21:ONECLASS_SVM:the one-class SVM (outlier detection); Strata has no such model"; do
    n=${r%%:*} r=${r#*:}
    expect 2 "-s $n" tools/strata-train -s "$n" -c 4 "$dir/ll.svm" "$dir/mn"
    contains "-s $n named" "^strata-train: -s $n is LIBLINEAR's ${r%%:*}: .*${r#*:}"
    test ! -e "$dir/mn" || { echo "FAIL: -s $n wrote a model"; fail=1; rm -f "$dir/mn"; }
done
# support vector regression: -s 11 and 12 are sqsvr, 13 svr; -p is LIBLINEAR's epsilon
# with them (--epsilon), --prec otherwise; each checked where it does not apply
for p in 11:sqsvr 12:sqsvr 13:svr; do
    n=${p%%:*} m=${p#*:}
    expect 0 "-s $n -c 4 -p 0.3" tools/strata-train -s "$n" -c 4 -p 0.3 -e 0 -r 20 \
        "$dir/reg.svm" "$dir/mn"
    contains "-s $n -c 4 -p 0.3: $m named, epsilon read" \
        "^strata-train: $m (LIBLINEAR -s $n, C 4), epsilon 0.3, lambda 0.000125,"
    expect 0 "-s $m --epsilon 0.3" tools/strata-train -q -s "$m" -c 4 --epsilon 0.3 -e 0 \
        -r 20 "$dir/reg.svm" "$dir/mm"
    cmp -s "$dir/mn" "$dir/mm" || { echo "FAIL: -s $n -p 0.3 and -s $m --epsilon 0.3 differ"
                                   fail=1; }
    expect 0 "-s $m, epsilon 0.1" tools/strata-train -q -s "$m" -c 4 -e 0 -r 20 \
        "$dir/reg.svm" "$dir/mm"
    ! cmp -s "$dir/mn" "$dir/mm" || { echo "FAIL: -s $m: epsilon 0.3 and 0.1 give one model"
                                     fail=1; }
done
expect 0 "-s sqsvr --prec 32 -p 0.2" tools/strata-train -s sqsvr --prec 32 -p 0.2 -e 0 -r 5 \
    "$dir/reg.svm" "$dir/mn"
contains "-s sqsvr --prec 32: 32-bit values" "20 features (32-bit values)"
expect 0 "-s ridge -p 32 (precision)" tools/strata-train -s ridge -p 32 -e 0 -r 5 \
    "$dir/reg.svm" "$dir/mn"
contains "-s ridge -p 32: 32-bit values" "20 features (32-bit values)"
# LIBLINEAR's -p 0.1 (an epsilon) with a model of no epsilon: -p is the precision there,
# and the message says so (before: "option -p needs an integer")
for p in 0.1 1; do
    expect 2 "-s 2 -p $p" tools/strata-train -s 2 -p $p "$dir/train.svm" "$dir/mn"
    contains "-s 2 -p $p named" \
        "-p with -s 2, sqsvm is the values' precision, 32 or 64, not '$p' (LIBLINEAR's -p,"
    contains "-s 2 -p $p: where -p is an epsilon" "epsilon, applies to -s 11, 12, 13: sqsvr, svr)"
done
expect 2 "-s ridge --epsilon 0.1" tools/strata-train -s ridge --epsilon 0.1 "$dir/reg.svm" \
    "$dir/mn"
contains "-s ridge --epsilon named" "--epsilon applies only to -s svr and sqsvr"
expect 2 "-s svr -p -1" tools/strata-train -s svr -p -1 "$dir/reg.svm" "$dir/mn"
contains "-s svr -p -1 named" "epsilon (the SVR models' insensitive zone) must be finite and >= 0"
expect 2 "-s svr -p and --epsilon" tools/strata-train -s 13 -p 0.1 --epsilon 0.2 \
    "$dir/reg.svm" "$dir/mn"
contains "-s svr -p and --epsilon named" "-p and --epsilon both set epsilon"
expect 2 "-s svr -p x" tools/strata-train -s 13 -p x "$dir/reg.svm" "$dir/mn"
expect 0 "-s svr, 3 rounds" tools/strata-train -s svr -c 1 -r 3 "$dir/reg.svm" "$dir/mn"
contains "-s svr, 3 rounds: sqsvr suggested" "did not reach -e 0.001 in 3 rounds: raise -r, or try -s sqsvr"
rm -f "$dir/mn" "$dir/mm"
for n in 99 -1 8 14 +22; do
    expect 2 "-s $n" tools/strata-train -s "$n" "$dir/ll.svm" "$dir/mn"
    contains "-s $n named" \
        "^strata-train: -s $n is not a LIBLINEAR solver type (those are 0-7, 11-13, 21) nor a"
done
for n in 2x 1.5 0x2 99999999999999999999; do
    expect 2 "-s $n" tools/strata-train -s "$n" "$dir/ll.svm" "$dir/mn"
    contains "-s $n named" "^strata-train: -s '$n' is neither a model name (logistic, .*) nor a"
done
expect 0 "--help: the numbers" tools/strata-train --help
contains "--help: the numbers" "11 and 12 sqsvr, 13 svr"

# SDCA's order: a fresh random permutation of the rows each epoch reaches a relative
# gap of 1e-3 in 41 rounds here; rows visited by fixed groups (buckets of 256, as
# before) had not reached 5e-3 after 300 rounds
tools/strata-gen criteo --rows 20000 --cols 65536 --seed 1 -q "$dir/c20k.svm" ||
    { echo "FAIL: strata-gen 20k"; exit 1; }
expect 0 "convergence rate" tools/strata-train --method cd -l 1e-4 -e 1e-3 -r 80 -t 1 "$dir/c20k.svm" "$dir/mc"
contains "convergence rate" "^converged after"
every_stop=$(awk '/^converged after/ { print $3 }' "$out")

# the certificate when the gap may have reached -e (auto): after rounds 1 and 2,
# then thinning out; fewer progress lines than rounds, and (replicas: the same steps)
# never a stop before the round where the per-round test stopped
expect 0 "gap auto" tools/strata-train --method cd --gap-every auto -l 1e-4 -e 1e-3 -r 80 -t 1 \
    "$dir/c20k.svm" "$dir/ma"
contains "gap auto converged" "^converged after [0-9]* rounds"
awk -v every="$every_stop" '/^round/ { n++; if (n <= 2 && $2 != n) bad = 1 }
     /^converged after/ { stop = $3 }
     END { exit (bad || stop < every || n < 3 || n >= stop) }' "$out" ||
    { echo "FAIL: --gap-every auto: not 1, 2, fewer lines than rounds, stop >= $every_stop";
      cat "$out"; fail=1; }
expect 2 "bad gap-every" tools/strata-train --gap-every often "$dir/train.svm"
contains "bad gap-every named" "gap-every must be 'auto' or between 1 and"

# l1-logistic at LIBLINEAR's -s 6 (C = 1) on one rank: newGLMNET certifies a relative
# gap of 1e-3 in 14 iterations here; coordinate descent with a line search per
# coordinate (before) had not after 200 epochs (0.14; 0.42 with the ball's dual alone)
expect 0 "l1-logistic convergence" tools/strata-train -s 6 -e 1e-3 -r 40 "$dir/c20k.svm" \
    "$dir/ml1"
contains "l1-logistic convergence" "^converged after"
# ... and on 2 ranks, by block proximal Newton: its direction from block Jacobi solves
# with a search on the model (before, one solve a round: a relative gap of 0.33 after
# 200 rounds, the dense columns' gradient at 30x lambda)
expect 0 "l1-logistic convergence, 2 ranks" $ST_MPIRUN -np 2 tools/strata-train -s 6 -e 1e-3 \
    -r 200 "$dir/c20k.svm" "$dir/ml1"
contains "l1-logistic convergence, 2 ranks" "^converged after"
# 24 ranks, each holding one of 24 copies of a column: the blocks' changes all
# overlap, and only a step of 1/24 of their sum lowers the model (smaller than the
# trial steps 2^-k/2 down to 2^-7/2); 1/K among the trials (before: no step, w = 0
# for every round, a relative gap of 0.999)
awk 'BEGIN { srand(3); for (i = 0; i < 200; i++) { v = rand() - 0.5; y = 2 * v + 0.1 * (rand() - 0.5);
    printf "%g", y; for (j = 1; j <= 24; j++) printf " %d:%g", j, v; printf "\n" } }' \
    >"$dir/copies24.svm"
expect 0 "lasso, 24 ranks, 24 copies of a column" $ST_MPIRUN -np 24 tools/strata-train \
    -s lasso -l 1e-3 -r 30 "$dir/copies24.svm" "$dir/m24"
contains "lasso, 24 ranks, 24 copies of a column" "^converged after"

# same_optimum METHOD PRIMAL STEPS MAX_STEPS CD_PRIMAL: METHOD's primal within 2e-9 of
# coordinate descent's, in at most MAX_STEPS steps
same_optimum() {
    near "$1 primal against cd's" "$2" "$5" 2e-9
    [ "$3" -le "$4" ] || { echo "FAIL: $1 took $3 steps, more than $4"; fail=1; }
}

# L-BFGS on the primal: the optimum coordinate descent reaches, in a few iterations
# on dense data; refused for the hinge, named when unknown
tools/strata-gen dense --rows 4000 --cols 30 --seed 5 -q "$dir/dense.svm" ||
    { echo "FAIL: strata-gen dense"; exit 1; }
expect 0 "lbfgs" tools/strata-train --method lbfgs -l 1e-3 -e 1e-9 -t 2 "$dir/dense.svm" \
    "$dir/ml"
contains "lbfgs converged" "^converged after"
p_lbfgs=$(converged_primal)
n_lbfgs=$(awk '/^converged after/ { print $3 }' "$out")
expect 0 "cd on dense" tools/strata-train --method cd -l 1e-3 -e 1e-9 -r 2000 "$dir/dense.svm" \
    "$dir/md"
p_cd=$(converged_primal)
same_optimum lbfgs "$p_lbfgs" "$n_lbfgs" 50 "$p_cd"
# the squared hinge is quadratic only piecewise: where the curvature pairs of another
# piece leave no step along their direction, L-BFGS drops them and searches along the
# scaled gradient (before: stopped at a relative gap of 1.4e-4, "no step makes
# progress any more in double precision"; 12 of 60 small random sets stalled)
printf -- '-1 1:0.5 3:2\n-1 2:1\n-1\n-1 1:3\n' >"$dir/sqsvm4.svm"
expect 0 "lbfgs, sqsvm, stale pairs" tools/strata-train -s sqsvm -l 1e-2 -B 1 --method lbfgs \
    -e 1e-10 "$dir/sqsvm4.svm" "$dir/msq"
contains "lbfgs, sqsvm, stale pairs: converged" "^converged after"
# a run stopped by -r with a gap of 2400 times the objective (8 nearly separable rows,
# 3 Newton steps) is told to raise -r, not to scale its features (before: "the
# certificate is far off ... scale the features")
sep8="${top_srcdir}/tests/data/sqsvm/separable8.svm"
expect 0 "stopped by -r, gap above the objective" tools/strata-train -q -s sqsvm \
    --method newton -r 3 -l 0.0011832876488634429 "$sep8" "$dir/msep"
contains "stopped by -r: raise -r" "did not reach -e 0.001 in 3 rounds: raise -r"
# Newton on the squared hinge solves each step's system to 0.01 (Nash and Sofer's
# test; 0.5 for the other losses): on those rows it converges in 16 steps (before: 271,
# zigzagging across one row's kink)
expect 0 "newton, sqsvm, nearly separable" tools/strata-train -q -s sqsvm --method newton \
    -r 40 -l 0.0011832876488634429 "$sep8" "$dir/msep"
contains "newton, sqsvm, nearly separable: converged" "^converged after"
# auto's L-BFGS (74 dense rows outnumbering 37 features) crawls on these nearly
# separable classes at a small lambda: after 100 rounds short of -e it hands over to
# Newton from where it stopped (before: stopped at -r 200, relative gap 62, P 12 %
# above the optimum that --method newton reaches in 62 rounds); 1 and 2 ranks
lb74="${top_srcdir}/tests/data/sqsvm/lbfgs74.svm"
for np in 1 2; do
    expect 0 "auto, sqsvm, L-BFGS crawling, $np rank(s)" $ST_MPIRUN -np $np tools/strata-train \
        -s sqsvm -l 0.000777747805331465 -B 2.0423724692663097 "$lb74" "$dir/mlb"
    contains "auto, sqsvm, $np rank(s): L-BFGS first" "^method auto: lbfgs "
    contains "auto, sqsvm, $np rank(s): Newton after 100 rounds" \
        "^method auto: L-BFGS short of -e 0.001 after 100 rounds .*: Newton from there"
    contains "auto, sqsvm, $np rank(s): converged" "^converged after"
    near "auto, sqsvm, $np rank(s): the optimum" "$(converged_primal)" 1.4747e-04 1e-3
done
# Newton's line search halves the step up to 60 times: on these 69 rows (sqsvm, lambda
# 1.9e-5) a step of the generalized Hessian needed more than 20 halvings (before: "no
# step makes progress any more in double precision" at a relative gap of 8.5e-3 on 1
# rank, 2.5e-2 on 3)
nw69="${top_srcdir}/tests/data/sqsvm/newton69.svm"
for np in 1 3; do
    expect 0 "newton, sqsvm, long steps, $np rank(s)" $ST_MPIRUN -np $np tools/strata-train \
        -q -s sqsvm -l 1.9425893295575522e-05 -B 0.75081237144618629 --method newton \
        -e 1e-6 -r 600 "$nw69" "$dir/mnw"
    contains "newton, sqsvm, long steps, $np rank(s): converged" "^converged after"
done
# the L1 models across ranks: block proximal Newton (auto) takes l1-logistic on the
# dense rows to 1e-3 in 6 rounds on 2 ranks, ProxCoCoA+ (--method cd) in 88; both
# reach the same optimum
expect 0 "l1-logistic, 2 ranks, ProxCoCoA+" $ST_MPIRUN -np 2 tools/strata-train --method cd \
    -s 6 -l 1e-4 -e 1e-6 -r 2000 "$dir/dense.svm" "$dir/mpc"
p_pc=$(converged_primal)
expect 0 "l1-logistic, 2 ranks, auto" $ST_MPIRUN -np 2 tools/strata-train -s 6 -l 1e-4 \
    "$dir/dense.svm" "$dir/mpn"
contains "l1-logistic, 2 ranks: auto is block proximal Newton" \
    "^method auto: newton .*block proximal Newton over the ranks' features"
n_pn=$(awk '/^converged after/ { print $3 }' "$out")
[ -n "$n_pn" ] && [ "$n_pn" -le 30 ] ||
    { echo "FAIL: l1-logistic, 2 ranks: block proximal Newton took '$n_pn' rounds (ProxCoCoA+ 88)"; fail=1; }
expect 0 "l1-logistic, 2 ranks, newton to 1e-6" $ST_MPIRUN -np 2 tools/strata-train \
    --method newton -s 6 -l 1e-4 -e 1e-6 "$dir/dense.svm" "$dir/mpn"
near "l1-logistic, 2 ranks: newton's primal against ProxCoCoA+'s" "$(converged_primal)" \
    "$p_pc" 2e-6
expect 2 "lbfgs on the hinge" tools/strata-train --method lbfgs -s svm "$dir/train.svm"
contains "lbfgs on the hinge named" "lbfgs needs a smooth L2 model"
expect 2 "bad method" tools/strata-train --method bfgs "$dir/train.svm"
contains "bad method named" "--method must be cd, lbfgs, newton or auto, not 'bfgs'"

# Newton on the primal: the optimum coordinate descent reaches, on the sparse rows at a
# small lambda (2 ranks, 2 threads each), in a few steps; refused for the hinge
expect 0 "cd, small lambda" tools/strata-train --method cd -l 1e-5 -e 1e-9 -r 20000 \
    "$dir/train.svm" "$dir/md"
p_cd=$(converged_primal)
expect 0 "newton" $ST_MPIRUN -np 2 tools/strata-train --method newton -l 1e-5 -e 1e-9 -t 2 \
    "$dir/train.svm" "$dir/mn"
contains "newton ran" "^Newton on the primal (preconditioned CG, line search), 2 thread"
contains "newton counted its steps" "^Newton: [0-9]* step(s), [0-9]* conjugate gradient"
# where the time went: five parts, each >= 0, that add up to the run's time (to the
# rounding of the printed figures and the time between the two lines)
if awk '/^Newton: .*; time: products/ { n = 0
        for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^s[,(]?$/ && $i ~ /^[0-9.]+$/) { sum += $i; n++ } }
        /^converged after/ { for (i = 1; i <= NF; i++) if ($i == "s") t = $(i - 1) }
        END { exit !(n == 5 && t > 0 && sum >= t - 0.01 && sum <= t + 0.01) }' "$out"; then
    :
else
    echo "FAIL: newton's time parts do not add up to its time"; cat "$out"; fail=1
fi
p_nt=$(converged_primal)
n_nt=$(awk '/^converged after/ { print $3 }' "$out")
same_optimum newton "$p_nt" "$n_nt" 60 "$p_cd"
expect 2 "newton on the hinge" tools/strata-train --method newton -s svm "$dir/train.svm"
contains "newton on the hinge named" "newton needs a smooth L2 model"
# the passes' sums into d-vectors by column (a copy of the rows as CSC; by default
# from 2 threads where it fits in half the available memory,
# STRATA_GLM_NEWTON_BY_COLUMN=1 regardless, =0 never): each column sums its rows in
# row order, the loss sums go by chunks of 1024 rows, the vector sweeps by chunks of
# 2048 entries: the model of 3 and 7 threads is one thread's byte for byte (20000
# rows: 20 row chunks over the threads), with a bias, 64-bit and 32-bit values, the
# squared hinge (rows with D = 0) and ridge; by row (=0, each thread's own vectors,
# summed): the same optimum
tools/strata-gen criteo --rows 20000 --cols 16384 --seed 9 -q "$dir/c20k.svm" ||
    { echo "FAIL: strata-gen c20k"; exit 1; }
for v in "-s logistic -l 1e-5" "-s logistic -l 1e-5 -B 1" "-s logistic -l 1e-5 -p 32" \
    "-s sqsvm -l 1e-4 -B 1" "-s ridge -l 1e-5"; do
    # shellcheck disable=SC2086
    expect 0 "newton, 1 thread, $v" tools/strata-train $v --method newton -e 1e-9 -r 100 \
        -t 1 "$dir/c20k.svm" "$dir/mone"
    p_one=$(converged_primal)
    for t in 3 7; do
        # shellcheck disable=SC2086
        STRATA_GLM_NEWTON_BY_COLUMN=1 expect 0 "newton by column, $t threads, $v" \
            tools/strata-train $v --method newton -e 1e-9 -r 100 -t $t "$dir/c20k.svm" \
            "$dir/mcol"
        contains "newton by column, $t threads, $v, said" "$t thread(s) per rank (sums by column)"
        cmp -s "$dir/mone" "$dir/mcol" ||
            { echo "FAIL: newton by column, $t threads, $v: not one thread's model"; fail=1; }
    done
    # shellcheck disable=SC2086
    STRATA_GLM_NEWTON_BY_COLUMN=0 expect 0 "newton by row, $v" tools/strata-train $v \
        --method newton -e 1e-9 -r 100 -t 3 "$dir/c20k.svm" "$dir/mrow"
    contains "newton by row, $v, said" "3 thread(s) per rank, "
    near "newton by row, $v: P" "$(converged_primal)" "$p_one" 1e-8
done
# (3000 rows: 3 row chunks, so 5 of the 8 threads have no rows)
expect 0 "newton, 8 threads: by column" tools/strata-train --method newton -l 1e-4 -e 1e-6 \
    -t 8 "$dir/train.svm" "$dir/mcol"
contains "newton, 8 threads: by column, said" "8 thread(s) per rank (sums by column)"
expect 0 "newton, 1 thread" tools/strata-train --method newton -l 1e-4 -e 1e-6 -t 1 \
    "$dir/train.svm" "$dir/mone"
cmp -s "$dir/mone" "$dir/mcol" ||
    { echo "FAIL: newton, 8 threads by default: not one thread's model"; fail=1; }
expect 0 "newton, 2 threads: by column" tools/strata-train --method newton -l 1e-4 -e 1e-6 \
    -t 2 "$dir/train.svm" "$dir/mcol"
contains "newton, 2 threads: by column, said" "2 thread(s) per rank (sums by column)"
STRATA_GLM_NEWTON_BY_COLUMN=yes expect 1 "newton, a bad STRATA_GLM_NEWTON_BY_COLUMN" \
    tools/strata-train --method newton -t 2 "$dir/train.svm" "$dir/mbad"
contains "newton, a bad STRATA_GLM_NEWTON_BY_COLUMN, named" \
    "STRATA_GLM_NEWTON_BY_COLUMN='yes' is not 0 or 1"
[ ! -e "$dir/mbad" ] || { echo "FAIL: a bad STRATA_GLM_NEWTON_BY_COLUMN wrote a model"; fail=1; }
STRATA_GLM_MEM_AVAILABLE=12Q expect 1 "newton, a bad STRATA_GLM_MEM_AVAILABLE" \
    tools/strata-train --method newton -t 2 "$dir/train.svm" "$dir/mbad"
contains "newton, a bad STRATA_GLM_MEM_AVAILABLE, named" \
    "STRATA_GLM_MEM_AVAILABLE='12Q' is not a size in bytes"
[ ! -e "$dir/mbad" ] || { echo "FAIL: a bad STRATA_GLM_MEM_AVAILABLE wrote a model"; fail=1; }
# the copies of all the ranks of a host must fit in half its memory (here said to be
# STRATA_GLM_MEM_AVAILABLE): 2 ranks, each with half the rows, sum by row where half of
# 1.5 times one rank's copy of all rows is available (each one's own copy would fit,
# not the two), and by column with 2.5 times it (the columns' offsets count once a
# rank: 32 KB)
# (1 MB: room for the model's vectors, 2 x 32 KB, not for the copy)
STRATA_GLM_MEM_AVAILABLE=1M expect 0 "newton, little memory: by row" \
    tools/strata-train --method newton -l 1e-4 -r 1 -t 2 "$dir/train.svm" "$dir/mrow"
contains "newton, little memory: by row, said" "(sums by row: the host's copies by column, "
need=$(sed -n "s/.*the host's copies by column, \([0-9.]*\) MB,.*/\1/p" "$out")
for x in 1.5:row 2.5:column; do
    avail=$(awk -v n="$need" -v x="${x%%:*}" 'BEGIN { printf "%.0f", n * x * 1048576 }')
    STRATA_GLM_MEM_AVAILABLE=$avail expect 0 "newton, 2 ranks, $avail bytes" $ST_MPIRUN -np 2 \
        -x STRATA_GLM_MEM_AVAILABLE tools/strata-train --method newton -l 1e-4 -r 1 -t 2 \
        "$dir/train.svm" "$dir/mrow"
    contains "newton, 2 ranks, $avail bytes: by ${x#*:} (one rank's copy: $need MB)" \
        "2 thread(s) per rank (sums by ${x#*:}"
done

# -p 32: the values held as floats (the header says so), the optimum of the rounded
# values within 1e-6 of the doubles'; a value beyond float's range named with its line
expect 0 "newton, 32-bit values" tools/strata-train -p 32 --method newton -l 1e-5 -e 1e-9 \
    -t 2 "$dir/train.svm" "$dir/mn32"
contains "32-bit values said" "4096 features (32-bit values), 1 rank"
p_32=$(converged_primal)
near "32-bit values: primal against 64-bit cd's" "$p_32" "$p_cd" 1e-6
printf '+1 1:1 2:0.5\n-1 1:1e39\n' > "$dir/big.svm"
expect 1 "1e39 in 32 bits" tools/strata-train -p 32 "$dir/big.svm" "$dir/mb"
contains "1e39 in 32 bits named" "big.svm:2: value '1e39' for index 1 overflows 32-bit"
expect 0 "1e39 in 64 bits" tools/strata-train -p 64 -r 1 "$dir/big.svm" "$dir/mb"
contains "64-bit values said" "2 features (64-bit values)"
expect 2 "bad prec" tools/strata-train -p 16 "$dir/train.svm"
contains "bad prec named" "-p with -s logistic is the values' precision, 32 or 64, not '16'"
expect 2 "bad --prec" tools/strata-train --prec 16 "$dir/train.svm"
contains "bad --prec named" "--prec (the values' precision) must be 32 or 64, not '16'"
expect 2 "-p and --prec" tools/strata-train -p 64 --prec 32 "$dir/train.svm"
contains "-p and --prec named" "-p and --prec both set the values' precision"

# auto (the default): L-BFGS on the dense rows, its model; CD on the sparse rows (more
# columns than rows), for the hinge, and with checkpoints
expect 0 "auto on dense" tools/strata-train -l 1e-3 -e 1e-9 -t 2 "$dir/dense.svm" "$dir/ma"
contains "auto on dense: lbfgs" "^method auto: lbfgs (4000 rows, 30 columns, 100% "
contains "auto on dense: L-BFGS ran" "^L-BFGS on the primal"
cmp -s "$dir/ma" "$dir/ml" || { echo "FAIL: auto on dense: not the lbfgs model"; fail=1; }
expect 0 "auto on sparse" tools/strata-train -l 1e-2 -r 2 "$dir/train.svm" "$dir/ma"
contains "auto on sparse: cd" "^method auto: cd (3000 rows, 4096 columns"
expect 0 "auto on sparse, small lambda" tools/strata-train -l 1e-5 -e 1e-9 -t 2 \
    "$dir/train.svm" "$dir/ma"
contains "auto on sparse, small lambda: newton" "^method auto: newton (3000 rows, 4096 columns"
expect 0 "auto, hinge" tools/strata-train -s svm -r 2 "$dir/dense.svm" "$dir/ma"
contains "auto, hinge: cd" "^method auto: cd (4000 rows"
expect 0 "auto, checkpoints" tools/strata-train -r 2 --checkpoint "$dir/ck" \
    --checkpoint-every 1 "$dir/dense.svm" "$dir/ma"
contains "auto, checkpoints: cd" "^method auto: cd (4000 rows"
# the rule's edge: 5 % of the entries stored (regression rows, 2000 x 200)
for edge in 0.04:cd:4 0.06:lbfgs:6; do
    dens=${edge%%:*} pick=${edge#*:}
    tools/strata-gen regression --rows 2000 --cols 200 --density $dens --seed 6 -q \
        "$dir/edge.svm" || { echo "FAIL: strata-gen regression"; exit 1; }
    expect 0 "auto, density $dens" tools/strata-train -s ridge -l 0.1 -r 2 "$dir/edge.svm" \
        "$dir/ma"
    contains "auto, density $dens: ${pick%:*}" \
        "^method auto: ${pick%:*} (2000 rows, 200 columns, ${pick#*:}\."
done

# the Newton rule's edge: the dual's condition number 10 (logistic: curvature 1/4;
# 1000 rows of 4 ones: kappa = 1 / (1000 lambda))
awk 'BEGIN { srand(7); for (i = 0; i < 1000; i++) { n = 0; delete u
             if (i == 0) { u[1000] = 1; n = 1 }   # so the file has 1000 columns
             while (n < 4) { c = 1 + int(rand() * 1000); if (!(c in u)) { u[c] = 1; n++ } }
             printf "%s", (rand() < 0.5) ? "-1" : "+1"
             for (c = 1; c <= 1000; c++) if (c in u) printf " %d:1", c
             printf "\n" } }' > "$dir/kappa.svm"
for edge in 1.1e-4:cd:9.09 0.9e-4:newton:11.1; do
    lam=${edge%%:*} pick=${edge#*:}
    expect 0 "auto, lambda $lam" tools/strata-train -l "$lam" -r 1 "$dir/kappa.svm" "$dir/ma"
    contains "auto, lambda $lam: ${pick%:*}" \
        "^method auto: ${pick%:*} (1000 rows, 1000 columns, 0.4% of the entries stored, dual condition number ${pick#*:})"
done

# the certificate every 4th round only: progress lines and the stop on those rounds
expect 0 "gap every 4" tools/strata-train --method cd --gap-every 4 -l 1e-4 -e 1e-3 -r 80 -t 1 \
    "$dir/c20k.svm" "$dir/mg"
contains "gap every 4 converged" "^converged after [0-9]* rounds"
awk '/^round/ { if ($2 % 4 != 0) bad = 1; n++ } /^converged after/ { if ($3 % 4 != 0) bad = 1 }
     END { exit (bad || n == 0) }' "$out" ||
    { echo "FAIL: --gap-every 4 printed or stopped on other rounds"; cat "$out"; fail=1; }

# threads sharing one vector (atomic updates) reach the optimum of one thread, at
# its rate per round: they take their rows from one random order of all the rows.
# Pinned to one core, where they take turns (when each had its own half of the rows,
# the halves then came one after the other, and the gap was still 5e-4 after 600
# rounds, one thread's 1e-5 after 74), they certify 1e-5 within 200 rounds
expect 0 "one thread" tools/strata-train --method cd -t 1 -l 1e-4 -e 1e-5 -r 500 "$dir/c20k.svm" "$dir/mt1"
p1=$(converged_primal)
pin=""
if command -v taskset >/dev/null 2>&1; then
    pin="taskset -c $(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')"
fi
expect 0 "shared threads" $pin tools/strata-train --method cd -t 2 --thread-mode shared -l 1e-4 -e 1e-5 \
    -r 200 "$dir/c20k.svm" "$dir/mt2"
contains "shared threads converged" "^converged after"
p2=$(converged_primal)
awk -v a="$p1" -v b="$p2" 'BEGIN { d = (a - b) / a; exit !(a != "" && b != "" && d < 1e-5 && d > -1e-5) }' ||
    { echo "FAIL: shared threads' primal $p2 differs from one thread's $p1"; fail=1; }

# the L1 models on one rank (the serial solver) print the rounds' lines too, and
# say the one thread they use
expect 0 "lasso, one rank, -t 2" tools/strata-train -s lasso -t 2 -r 3 "$dir/reg.svm" "$dir/ml"
contains "lasso: round lines" "^round    3  primal .* rel .* time .* s (allreduce"
contains "lasso: one thread said" "1 rank(s) x 1 thread(s)"
# model names in any case, as the library takes them (before: -s LASSO read the real
# targets as class labels and failed, --eta was refused with -s ELASTIC-NET)
expect 0 "-s LASSO" tools/strata-train -s LASSO -t 2 -r 3 "$dir/reg.svm" "$dir/ml"
contains "-s LASSO: lasso, one thread" "^strata-train: lasso, .* 1 rank(s) x 1 thread(s)"
expect 0 "-s Elastic-Net --eta 0.3" tools/strata-train -q -s Elastic-Net --eta 0.3 -r 3 \
    "$dir/reg.svm" "$dir/ml"
# ... and compute the certificate (its line) every --gap-every N rounds and after the
# last; its coordinate steps are the same whatever N (each epoch's margins from w)
expect 0 "lasso, one rank" tools/strata-train -s lasso -e 0 -r 10 "$dir/c20k.svm" "$dir/ml"
expect 0 "lasso, one rank, gap every 4" tools/strata-train -s lasso -e 0 -r 10 --gap-every 4 \
    "$dir/c20k.svm" "$dir/ml4"
lines=$(awk '/^round/ { printf "%s ", $2 }' "$out")
[ "$lines" = "4 8 10 " ] ||
    { echo "FAIL: lasso, gap every 4: round lines '$lines', not '4 8 10 '"; fail=1; }
cmp -s "$dir/ml" "$dir/ml4" ||
    { echo "FAIL: lasso, gap every 4: another model than every round's"; fail=1; }
# auto stops at the round the per-round test does (185 here), with 19 certificates
expect 0 "lasso, one rank, to 1e-3" tools/strata-train -s lasso -l 1e-3 -r 300 \
    "$dir/c20k.svm" "$dir/ml"
every_line=$(awk '/^converged after/ { print $3 }' "$out")
expect 0 "lasso, one rank, gap auto" tools/strata-train -s lasso -l 1e-3 -r 300 \
    --gap-every auto "$dir/c20k.svm" "$dir/mla"
auto_line=$(awk '/^converged after/ { print $3 }' "$out")
nlines=$(grep -c "^round" "$out")
[ -n "$every_line" ] && [ "$auto_line" = "$every_line" ] && [ "$nlines" -lt "$every_line" ] ||
    { echo "FAIL: lasso, gap auto: converged after '$auto_line' rounds with $nlines" \
           "certificates, every round's after '$every_line'"; fail=1; }
cmp -s "$dir/ml" "$dir/mla" ||
    { echo "FAIL: lasso, gap auto: another model than every round's"; fail=1; }

# Newton in the frequency order of the columns: a row's entries are no longer in
# column order there, and the columns it works on are all those held (before: up to
# the last entry of each row only, so a column beyond froze at 0, its gradient went
# into the loss sums, and the run "converged" at P 0.6907 with a false gap; with a
# constant last column on hashed data, 0 rounds and a model of zeros)
printf '+1 1:1 2:1\n-1 2:1\n+1 2:0.5\n-1 1:0.3 2:2\n+1 1:2 2:1\n-1 2:-1\n' >"$dir/t1.svm"
for o in given frequency; do
    expect 0 "newton, $o order" tools/strata-train --method newton --feature-order $o -l 0.01 \
        -e 1e-8 "$dir/t1.svm" "$dir/mo"
    near "newton, $o order: P" "$(converged_primal)" 5.2421845e-01 1e-6
done
awk '{ print $0, "4097:1" }' "$dir/train.svm" >"$dir/const.svm"
expect 0 "newton, a constant last column" timeout -k 5 120 tools/strata-train --method newton \
    --feature-order frequency -l 1e-5 "$dir/const.svm" "$dir/mo"
contains "newton, a constant last column: converged" "^converged after"
contains "newton, a constant last column: every column held" "of the 4097 columns held"

# the squared hinge's loss differences in Newton's line search without cancellation
# (before: a feature of 1e12 stalled it at a relative gap of 3e-2 after 47 steps)
awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^3:/) { split($i, a, ":"); $i = "3:" a[2] * 1e12 }
       print }' "$dir/reg.svm" | awk '{ $1 = ($1 > 0) ? "+1" : "-1"; print }' >"$dir/sq12.svm"
expect 0 "sqsvm newton, a feature of 1e12" tools/strata-train -s sqsvm --method newton -l 1e-3 \
    -e 1e-6 -r 300 "$dir/sq12.svm" "$dir/mo"
contains "sqsvm newton, a feature of 1e12: converged" "^converged after"

# regression
expect 0 "ridge" tools/strata-train -s ridge -l 0.010666666666666666 -e 1e-5 -r 2000 "$dir/reg.svm" "$dir/mr"
contains "ridge converged" "^converged after"
head -n 1 "$dir/mr" | grep -q "^solver_type L2R_L2LOSS_SVR" || { echo "FAIL: ridge model"; fail=1; }

# shared threads where a rank has one row (5 rows, the first long, so 1 and 4 on 2
# ranks): that rank runs one thread, yet both must train in one column layout (the
# choice is collective; before: rank 0 "converged" to a wrong primal, rank 1 died
# in MPI_Allreduce)
{
    printf '+1'
    i=1
    while [ $i -lt 400 ]; do printf ' %d:0.%d' $i $((i % 9 + 1)); i=$((i + 1)); done
    printf '\n-1 1:0.5 7:-0.25 12:1\n+1 2:0.75 9:0.5\n-1 3:-1 12:0.5 30:0.25\n+1 5:1 40:-0.5\n'
} >"$dir/five.svm"
expect 0 "one-row rank, replicas" $ST_MPIRUN -np 2 tools/strata-train --method cd -l 1e-2 \
    -e 1e-6 -r 500 "$dir/five.svm" "$dir/m5r"
p_rep=$(converged_primal)
expect 0 "one-row rank, shared threads" timeout -k 5 60 $ST_MPIRUN -np 2 tools/strata-train \
    --method cd -l 1e-2 -e 1e-6 -r 500 -t 2 --thread-mode shared "$dir/five.svm" "$dir/m5s"
near "one-row rank, shared threads: the replicas' primal" "$(converged_primal)" "$p_rep" 1e-5

# a set without features (labels only): every model trains on one rank, w empty (before:
# the L1 models refused it there, "the problem needs ... 0 < d", and trained it on two)
printf '1\n-1\n1\n' >"$dir/nofeat.svm"
for s in l1-logistic lasso logistic; do
    expect 0 "$s, no features" tools/strata-train -s $s "$dir/nofeat.svm" "$dir/mnf"
    contains "$s, no features: converged" "^converged after 0 rounds"
done

# LIBLINEAR's class weights, -w1 X -w-1 Y (-w0 for 0/1 data): --weight-pos and
# --weight-neg, the same model; a class the data do not have (-w0 on -1/+1 data, -w-1
# on 0/1 data, -w2) is warned about and its weight not used, as LIBLINEAR does; a class
# given twice weighs the product, as LIBLINEAR's; no number, or another -w argument, is
# a usage error; a -w argument that is another
# option's value is left to it
expect 0 "--weight-pos 5 --weight-neg 0.5" tools/strata-train -q -s 0 -c 1 --weight-pos 5 \
    --weight-neg 0.5 "$dir/five.svm" "$dir/wl.model"
expect 0 "-w1 5 -w-1 0.5" tools/strata-train -q -s 0 -c 1 -w1 5 -w-1 0.5 "$dir/five.svm" \
    "$dir/w1.model"
check "-w1 5 -w-1 0.5: --weight-pos 5 --weight-neg 0.5's model" cmp -s "$dir/wl.model" \
    "$dir/w1.model"
expect 0 "no weights" tools/strata-train -q -s 0 -c 1 "$dir/five.svm" "$dir/wn.model"
check "no weights: another model" test -n "$(cmp "$dir/wl.model" "$dir/wn.model")"
expect 0 "--weight-pos 5" tools/strata-train -q -s 0 -c 1 --weight-pos 5 "$dir/five.svm" \
    "$dir/wp.model"
expect 0 "-w0 0.5 -w1 5 on -1/+1 data" tools/strata-train -q -s 0 -c 1 -w0 0.5 -w1 5 \
    "$dir/five.svm" "$dir/w0.model"
contains "-w0 on -1/+1 data: warned" "warning: -w0: the data have no class 0 (their classes are 1 and -1)"
check "-w0 on -1/+1 data: --weight-pos 5's model" cmp -s "$dir/wp.model" "$dir/w0.model"
sed 's/^-1 /0 /; s/^+1 /1 /' "$dir/five.svm" >"$dir/five01.svm"
expect 0 "--weight-pos 5 --weight-neg 0.5, 0/1 data" tools/strata-train -q -s 0 -c 1 \
    --weight-pos 5 --weight-neg 0.5 "$dir/five01.svm" "$dir/wl01.model"
expect 0 "-w0 0.5 -w1 5, 0/1 data" tools/strata-train -q -s 0 -c 1 -w0 0.5 -w1 5 \
    "$dir/five01.svm" "$dir/w001.model"
check "-w0 0.5 -w1 5, 0/1 data: the same model" cmp -s "$dir/wl01.model" "$dir/w001.model"
expect 0 "-w-1 0.5, 0/1 data" tools/strata-train -q -s 0 -c 1 -w-1 0.5 "$dir/five01.svm" \
    "$dir/w101.model"
contains "-w-1 on 0/1 data: warned" "warning: -w-1: the data have no class -1 (their classes are 1 and 0)"
expect 0 "-w2 3 -w1 5" tools/strata-train -q -s 0 -c 1 -w2 3 -w1 5 "$dir/five.svm" \
    "$dir/w2.model"
contains "-w2: warned" "warning: -w2: the data have no class 2 (their classes are 1 and -1): that weight is not used"
check "-w2 3 -w1 5: --weight-pos 5's model" cmp -s "$dir/wp.model" "$dir/w2.model"
# a class weighted twice: LIBLINEAR's train multiplies its C by each (-w1 2 -w1 2.5 is
# -w1 5)
expect 0 "-w1 2 -w1 2.5" tools/strata-train -q -s 0 -c 1 -w1 2 -w1 2.5 "$dir/five.svm" \
    "$dir/w2.model"
check "-w1 2 -w1 2.5: --weight-pos 5's model" cmp -s "$dir/wp.model" "$dir/w2.model"
rm -f "$dir/w2.model"
expect 2 "-wx" tools/strata-train -wx 3 "$dir/five.svm" "$dir/w2.model"
contains "-wx named" "'-wx': LIBLINEAR's class weight is -wLABEL WEIGHT"
expect 2 "-w1 without a number" tools/strata-train -w1 "$dir/five.svm" "$dir/w2.model"
contains "-w1 without a number named" "option -w1 needs a number"
expect 2 "-w1=3" tools/strata-train -w1=3 "$dir/five.svm" "$dir/w2.model"
contains "-w1=3 named" "'-w1=3': LIBLINEAR's class weight is -wLABEL WEIGHT"
expect 2 "--test -w1 (its value)" tools/strata-train --test -w1 3 "$dir/five.svm" \
    "$dir/w2.model"
contains "--test -w1 (its value): three arguments" "too many arguments"
exit $fail
