"""model_runner: run a model on the inputs of an .npz and save its outputs as an .npz.

  model_runner --input in.npz --model X.mlir --output out.npz [--dump_all_tensors]

Input keys are the model's input names (the locations of its `top.Input` ops); output keys are
the tensor (location) names of the returned values, or of every tensor with
--dump_all_tensors, so the file compares with `npz_tool compare` against a reference and feeds
`mlir_cut --input_names`. A .mlir runs in the Top interpreter; .bmodel is not supported yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

import numpy as np

from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.cli.npz_tool import load_npz
from tpudsl.dialects.opdef import loc_name, operand_shape
from tpudsl.interp import ModuleInterpreter
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, load_module, write_atomically


def _shape_text(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) or "scalar"


def input_shapes(mod: TopModule) -> dict[str, tuple[int, ...] | None]:
    """Each input's name (the loc of the `top.Input` reading the argument) and static shape."""
    shapes: dict[str, tuple[int, ...] | None] = {}
    for i, arg in enumerate(mod.main_func().body.block.args):
        readers = [u.operation for u in arg.uses if u.operation.name == "top.Input"]
        name = loc_name(readers[0]) if readers else ""
        shapes[name or f"arg{i}"] = operand_shape(arg)
    return shapes


def check_inputs(inputs: Mapping[str, np.ndarray], expected: Mapping[str, tuple[int, ...] | None]) -> None:
    """One error naming every missing or mis-shaped input with the shape the model expects."""
    problems = []
    for name, shape in expected.items():
        want = f"expected shape {_shape_text(shape)}" if shape is not None else "shape not static"
        if name not in inputs:
            problems.append(f"input '{name}' is missing ({want})")
        elif shape is not None and tuple(inputs[name].shape) != shape:
            problems.append(f"input '{name}' has shape {_shape_text(inputs[name].shape)}, {want}")
    if problems:
        hint = f"; the npz holds: {', '.join(inputs) or 'nothing'}" if any("missing" in p for p in problems) else ""
        raise TpudslError("; ".join(problems) + hint)


def mlir_inference(
    inputs: Mapping[str, np.ndarray], mlir: str | Path, dump_all_tensors: bool = False
) -> dict[str, np.ndarray]:
    """Run a Top .mlir in the interpreter: outputs (or every tensor) by tensor name."""
    mod = load_module(mlir)
    check_inputs(inputs, input_shapes(mod))
    interpreter = ModuleInterpreter(mod.module, mod.weights)
    interpreter.init()
    try:
        return interpreter.inference(inputs, keep_all=dump_all_tensors)
    finally:
        interpreter.deinit()


def model_inference(
    inputs: Mapping[str, np.ndarray], model: str | Path, dump_all_tensors: bool = False
) -> dict[str, np.ndarray]:
    """Run a model file, chosen by its suffix."""
    suffix = Path(model).suffix
    if suffix == ".mlir":
        return mlir_inference(inputs, model, dump_all_tensors)
    if suffix == ".bmodel":
        raise TpudslError("bmodel not supported yet: model_runner runs .mlir files only", file=str(model))
    raise TpudslError(f"unknown model type '{suffix}': expected .mlir", file=str(model))


def save_npz(path: str | Path, tensors: Mapping[str, np.ndarray]) -> None:
    """Write `tensors` to an .npz atomically (never a half-written file)."""
    write_atomically(path, lambda f: np.savez(f, **tensors))


def build_parser() -> CliArgumentParser:
    parser = CliArgumentParser(prog="model_runner", description="Run a model on npz inputs and save its outputs as npz.")
    parser.add_argument("--input", required=True, help="npz whose keys are the model's input names")
    parser.add_argument("--model", required=True, help="model to run (.mlir)")
    parser.add_argument("--output", required=True, help="npz to write, keyed by tensor name")
    parser.add_argument("--dump_all_tensors", action="store_true", help="save every tensor, not only the outputs")
    return parser


def run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    outputs = model_inference(load_npz(args.input), args.model, args.dump_all_tensors)
    save_npz(args.output, outputs)
    return 0


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(run, argv)
