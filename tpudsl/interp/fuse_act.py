"""The plan that pairs a conv with the activation that is its only reader (issue 9's SiLU).

EfficientNet's convs are each read by one top.SiLU: unpaired, the SiLU makes four float32 passes over
the conv's whole result after the conv has written it. Paired, the conv's step applies it in place to
each block of its fresh result while the block is in cache (depthwise.py: each channel block; other
algorithms: the whole result), as onnxruntime fuses Conv + activation, and the SiLU step goes.
The result is bit-identical to the unpaired run: the same float32 passes in the same order
(kernels_elementwise.silu_in_place).

A pair is made when the producer's kernel has `prepare_act` and it accepts (a conv with a constant
filter), its one result is read by exactly one op (not returned, not read twice) and that op is an
activation of `ACTS` reading it as its only operand, both float32 of one static shape. The unpaired
plan is kept: `keep_all`/`dump_all` inferences run it, since they return the producer's tensor by
name too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.ir import Operation

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs, Run
from tpudsl.interp.kernels_elementwise import silu_in_place

# activation op -> its in-place form, applied to a block of a fresh float32 result
ACTS: dict[str, Callable[[Array], None]] = {"top.SiLU": silu_in_place}

F32 = np.dtype(np.float32)


def _overflow_quiet(run: Run) -> Run:
    # exp(-x) overflows to inf below x = -88.7 (the SiLU's documented tail, -0): quiet as in
    # _exp_neg, entered once a step rather than once a block.
    def quiet(ins: Inputs, a: KernelAttrs):
        with np.errstate(over="ignore"):
            return run(ins, a)

    return quiet


def pair(steps: Sequence, kernels: Mapping[str, Kernel],
         constants: Mapping[int, Array | None]) -> tuple[list, list[tuple[Operation, Operation]]]:
    """(the steps with every pairable (producer, activation) as one step: the producer's operands, run
    and attributes, the activation's result; the pairs). New step objects throughout (the caller sets
    their frees); `constants` are the weight slots' arrays (what `prepare` sees)."""
    producer = {st.op: i for i, st in enumerate(steps)}
    fused: dict[int, object] = {}  # producer index -> its paired step
    dropped: set[int] = set()
    pairs = []
    for i, st in enumerate(steps):
        act = ACTS.get(st.op.name)
        if act is None or len(st.op.operands) != 1 or len(st.op.results) != 1:
            continue
        x = st.op.operands[0]
        j = producer.get(x.owner)
        if j is None or j in fused:
            continue
        prod = steps[j]
        kernel = kernels.get(prod.op.name)
        if kernel is None or kernel.prepare_act is None or len(prod.op.results) != 1 or len(list(x.uses)) != 1:
            continue
        shape = prod.attrs.out_shape(0)
        if shape is None or shape != st.attrs.out_shape(0) or prod.attrs.out_dtype(0) != F32 \
                or st.attrs.out_dtype(0) != F32 or prod.plain is None:
            continue
        run = kernel.prepare_act([constants.get(s) for s in prod.operands], prod.attrs, act)
        if run is None:
            continue
        fused[j] = dataclasses.replace(prod, run=_overflow_quiet(run), results=st.results)
        dropped.add(i)
        pairs.append((prod.op, st.op))
    return [fused.get(i) or dataclasses.replace(st) for i, st in enumerate(steps) if i not in dropped], pairs

