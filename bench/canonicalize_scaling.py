"""How --canonicalize scales: its time on generated Top graphs of about 1,000, 4,000 and 16,000 ops.

    .venv/bin/python bench/canonicalize_scaling.py [--sizes 1000 4000 16000] [--repeat 3]

The graph is a chain of blocks that give every pattern family work: a Cast round trip, an identity
Permute and two Permutes that compose, Conv + BatchNorm + Relu (weights folded), a Squeeze + Reshape
pair, a Mul by a scalar weight, and a Permute of a weight (folded). Time is the pass alone (the
graph is built in memory, not parsed), CPU time, best of --repeat runs on fresh copies (times
largest/size for smaller sizes, so that each size gets about the same total time). The pattern table
dispatches on the op name, so time per op should stay flat; the script exits 1 if time per op grows
by more than 1.5x from the smallest size to the largest."""

from __future__ import annotations

import argparse
import gc
import sys
import time

import numpy as np
from xdsl.dialects.builtin import Float16Type, ModuleOp, NoneType, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue

import tpudsl.dialects.top  # noqa: F401  (defines the ops `create` builds)
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import create
from tpudsl.ir.module import TopModule
from tpudsl.rewrites.canonicalize import CanonicalizePass

C = 4
SHAPE = (1, C, 4, 4)


def build(n_ops: int) -> TopModule:
    """A chain of identical blocks with about `n_ops` Top ops in all."""
    block = Block(arg_types=[TensorType(f32, SHAPE)])
    weights: dict[str, np.ndarray] = {}
    rng = np.random.default_rng(0)

    def op(name, operands, shape, attrs=None, loc="", dtype=f32) -> SSAValue:
        new = create(name, operands, [TensorType(dtype, shape)] if shape is not None else [NoneType()], attrs, loc=loc)
        block.add_op(new)
        return new.results[0]

    def weight(loc: str, shape: tuple[int, ...], positive: bool = False) -> SSAValue:
        data = rng.standard_normal(shape).astype(np.float32)
        weights[loc] = np.abs(data) + 0.5 if positive else data
        return op("top.Weight", [], shape, loc=loc)

    none = op("top.None", [], None, loc="none")
    x = op("top.Input", [block.args[0]], SHAPE, loc="input")
    count, i = 2, 0
    while count < n_ops:
        p = f"b{i}_"
        h = op("top.Cast", [x], SHAPE, loc=p + "to_f16", dtype=Float16Type())
        x = op("top.Cast", [h], SHAPE, loc=p + "to_f32")
        x = op("top.Permute", [x], SHAPE, {"order": [0, 1, 2, 3]}, p + "same")
        t = op("top.Permute", [x], (1, 4, 4, C), {"order": [0, 2, 3, 1]}, p + "nhwc")
        x = op("top.Permute", [t], SHAPE, {"order": [0, 3, 1, 2]}, p + "nchw")
        x = op("top.Conv", [x, weight(p + "w", (C, C, 1, 1)), weight(p + "b", (C,))], SHAPE,
               {"kernel_shape": [1, 1]}, p + "conv")
        stats = [weight(p + "mean", (C,)), weight(p + "var", (C,), True), weight(p + "gamma", (C,)), weight(p + "beta", (C,))]
        x = op("top.BatchNorm", [x, *stats], SHAPE, {"epsilon": 1e-5}, p + "bn")
        x = op("top.Relu", [x], SHAPE, loc=p + "relu")
        s = op("top.Squeeze", [x], (C, 4, 4), {"axes": [0]}, p + "squeeze")
        x = op("top.Reshape", [s], SHAPE, {"shape": list(SHAPE)}, p + "reshape")
        x = op("top.Mul", [x, weight(p + "scale", (1,))], SHAPE, loc=p + "mul")
        k = op("top.Permute", [weight(p + "k", (4, 4, C, 1))], SHAPE, {"order": [3, 2, 0, 1]}, p + "k_T")
        x = op("top.Add", [x, k], SHAPE, loc=p + "add")
        count += 21  # the ops of one block
        i += 1
    block.add_op(ReturnOp(x))
    module = ModuleOp([FuncOp("main", ([TensorType(f32, SHAPE)], [TensorType(f32, SHAPE)]), Region(block))])
    return TopModule(module, weights)


def n_top_ops(module: ModuleOp) -> int:
    return sum(1 for op in module.walk() if op.name.startswith("top."))


def time_canonicalize(n_ops: int, repeat: int) -> tuple[int, int, float]:
    """(ops before, ops after, best seconds) of --canonicalize on a fresh graph of about n_ops."""
    best, before, after = float("inf"), 0, 0
    for _ in range(repeat):
        mod = build(n_ops)
        before = n_top_ops(mod.module)
        gc.collect()  # the previous run's garbage is not this run's cost
        start = time.process_time()  # CPU time: other processes on the machine do not count
        CanonicalizePass().apply(make_context(), mod.module)
        best = min(best, time.process_time() - start)
        after = n_top_ops(mod.module)
    return before, after, best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 16000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'ops before':>10} {'ops after':>10} {'seconds':>9} {'us/op':>8}")
    time_canonicalize(200, 1)  # warm-up: first-use imports (interpreter kernels) are not canonicalize's cost
    per_op = []
    for size in args.sizes:
        runs = args.repeat * max(1, args.sizes[-1] // size)  # small graphs: more runs, as noisy as the big one
        before, after, seconds = time_canonicalize(size, runs)
        per_op.append(seconds / before)
        print(f"{before:>10} {after:>10} {seconds:>9.3f} {1e6 * seconds / before:>8.1f}")
    growth = per_op[-1] / per_op[0]
    print(f"time per op, largest / smallest: {growth:.2f}x (limit 1.5x)")
    return 0 if growth <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
