#!/usr/bin/env python3
"""A Python program's MPI_Allreduce through mpi4py, as data-parallel training code
makes it: numpy buffers of every common dtype, the predefined ops, in place or not,
on COMM_WORLD, a duplicate, odd/even halves and the ranks reversed, sizes from 0 to
past the pipelined path's threshold, and a user-defined op (which Strata must hand
to Open MPI). Every result is checked against a reference computed here from every
rank's inputs (each rank can make all of them) and for identical bytes on every
rank. Prints "mpi4py_allreduce: OK <checks>" on rank 0 when all held.

Run: strata-run mpirun -np N python3 tests/mpi4py_allreduce.py
"""
import sys

import numpy as np
from mpi4py import MPI

world = MPI.COMM_WORLD
failures = []
checks = 0


def inputs(dtype, n, rank, seed):
    """Rank's input: small values, so sums and products are exact in every dtype
    (integer ones wrap in numpy as in C, which is what Strata must give)."""
    rng = np.random.default_rng(1000003 * seed + rank)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.integers(-3, 4, n) + 1j * rng.integers(-3, 4, n)).astype(dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(0, 200, n).astype(dtype)
    if dtype == np.int8:
        return rng.integers(-100, 101, n).astype(dtype)   # sums of 2+ ranks wrap
    return rng.integers(-7, 8, n).astype(dtype)


def reference(op, xs):
    acc = xs[0].copy()
    with np.errstate(over="ignore"):
        for x in xs[1:]:
            if op is MPI.SUM:
                acc = (acc + x).astype(acc.dtype)
            elif op is MPI.PROD:
                acc = (acc * x).astype(acc.dtype)
            elif op is MPI.MAX:
                acc = np.maximum(acc, x)
            elif op is MPI.MIN:
                acc = np.minimum(acc, x)
            elif op is MPI.BAND:
                acc = acc & x
            elif op is MPI.BOR:
                acc = acc | x
            elif op is MPI.BXOR:
                acc = acc ^ x
            elif op is MPI.LAND:
                acc = np.logical_and(acc, x).astype(acc.dtype)
            elif op is MPI.LOR:
                acc = np.logical_or(acc, x).astype(acc.dtype)
            elif op is MPI.LXOR:
                acc = np.logical_xor(acc, x).astype(acc.dtype)
    return acc


def op_name(op):
    for name in ("SUM", "PROD", "MAX", "MIN", "BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR"):
        if op is getattr(MPI, name):
            return name.lower()
    return "user op"


def check(cond, what):
    global checks
    checks += 1
    if not cond and len(failures) < 20:
        failures.append(what)


def same_everywhere(comm, y, what):
    """The result's bytes are the same on every rank of comm."""
    allb = comm.allgather(y.tobytes())
    check(all(b == allb[0] for b in allb), what + ": ranks differ")


def run(comm, name, dtype, op, n, in_place, seed):
    r, p = comm.Get_rank(), comm.Get_size()
    xs = [inputs(dtype, n, k, seed) for k in range(p)]
    want = reference(op, xs)
    what = "%s %s %s n=%d%s" % (name, np.dtype(dtype).name, op_name(op), n,
                                " in place" if in_place else "")
    if in_place:
        y = xs[r].copy()
        comm.Allreduce(MPI.IN_PLACE, y, op=op)
    else:
        x = xs[r].copy()
        y = np.full_like(x, 1)
        comm.Allreduce(x, y, op=op)
        check(np.array_equal(x, xs[r]), what + ": the send buffer changed")
    check(y.dtype == want.dtype and np.array_equal(y, want), what + ": wrong result")
    same_everywhere(comm, y, what)


def comms():
    r, p = world.Get_rank(), world.Get_size()
    yield "world", world, False
    yield "dup", world.Dup(), True
    yield "odd/even", world.Split(r % 2, r), True
    yield "reversed", world.Split(0, p - r), True


ARITH = (MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN)
BITS = (MPI.BAND, MPI.BOR, MPI.BXOR)
LOGIC = (MPI.LAND, MPI.LOR, MPI.LXOR)
CASES = [
    (np.float64, ARITH), (np.float32, ARITH), (np.int32, ARITH + BITS + LOGIC),
    (np.int64, ARITH + BITS), (np.uint64, (MPI.SUM, MPI.MAX) + BITS),
    (np.int8, (MPI.SUM, MPI.MIN) + BITS), (np.uint8, (MPI.SUM, MPI.BXOR)),
    (np.int16, (MPI.SUM, MPI.MAX)), (np.complex128, (MPI.SUM, MPI.PROD)),
    (np.complex64, (MPI.SUM,)), (np.bool_, LOGIC),
]
SIZES = (0, 1, 7, 4099, 300007)

seed = 0
for name, comm, free in comms():
    for dtype, ops in CASES:
        for op in ops:
            for n in SIZES:
                seed += 1
                run(comm, name, dtype, op, n, seed % 2 == 1, seed)
    # past the 1 MB pipelined path, both ways
    for in_place in (False, True):
        seed += 1
        run(comm, name, np.float64, MPI.SUM, (1 << 18) + 3, in_place, seed)
        run(comm, name, np.float32, MPI.MAX, (1 << 21) + 1, in_place, seed)
    if free:
        comm.Free()

# a user-defined op: Open MPI's own allreduce runs it (Strata hands it over)
def _absmax(inbuf, inoutbuf, datatype):   # max(|a|, |b|): the same in any order
    a = np.frombuffer(inbuf, dtype=np.float64)
    b = np.frombuffer(inoutbuf, dtype=np.float64)
    np.copyto(b, np.maximum(np.abs(a), np.abs(b)))


absmax = MPI.Op.Create(_absmax, commute=True)
xs = [inputs(np.float64, 1001, k, 99) for k in range(world.Get_size())]
y = np.empty(1001)
world.Allreduce(xs[world.Get_rank()], y, op=absmax)
want = np.max(np.abs(np.array(xs)), axis=0)
check(np.array_equal(y, want), "user-defined op: wrong result")
absmax.Free()

# a Python object through the lowercase API (mpi4py's own reduction)
check(world.allreduce(world.Get_rank() + 1) ==
      world.Get_size() * (world.Get_size() + 1) // 2, "allreduce of an int: wrong result")

nfail = world.allreduce(len(failures))
for f in failures:
    print("mpi4py_allreduce: rank %d: FAIL: %s" % (world.Get_rank(), f), flush=True)
if world.Get_rank() == 0 and nfail == 0:
    print("mpi4py_allreduce: OK %d checks on %d ranks" % (checks, world.Get_size()), flush=True)
sys.exit(1 if nfail else 0)
