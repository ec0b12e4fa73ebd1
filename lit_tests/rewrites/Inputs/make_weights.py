"""Write the weight npz of a lit test (and optionally an input npz) with seeded random data.

    python make_weights.py TEST.mlir WEIGHTS.npz [--inputs INPUTS.npz]

Every `top.Weight` of TEST.mlir gets an f32 entry named by its loc, of its shape (the tests use f32);
with --inputs every `top.Input` gets one too. Values are in [0.5, 1.5): positive (a valid
BatchNorm variance) and never zero (a valid divisor), so every weight pattern can fire."""

import argparse

import numpy as np

from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.parser import parse_module


def arrays_of(module, op_name: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    arrays = {}
    for op in module.walk():
        if op.name == op_name:
            arrays[loc_name(op)] = rng.uniform(0.5, 1.5, op.results[0].type.get_shape()).astype(np.float32)
    return arrays


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("mlir")
    p.add_argument("weights")
    p.add_argument("--inputs")
    args = p.parse_args()
    with open(args.mlir) as f:
        module = parse_module(f.read(), args.mlir, make_context())
    rng = np.random.default_rng(0)
    np.savez(args.weights, **arrays_of(module, "top.Weight", rng))
    if args.inputs:
        np.savez(args.inputs, **arrays_of(module, "top.Input", rng))


if __name__ == "__main__":
    main()
