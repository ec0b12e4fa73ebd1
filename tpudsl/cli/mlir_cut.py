"""mlir_cut: keep the part of a Top module that computes some named tensors.

  mlir_cut --mlir X.mlir --output_names a,b [--input_names c,d] [-o X_cut.mlir]
  mlir_cut --mlir X.mlir --mode bt --num N --output_names a,b     # inputs: N ops back
  mlir_cut --mlir X.mlir --mode ft --num N --input_names c,d      # outputs: N ops forward

The named output tensors become @main's results. Each named input tensor becomes a new
function argument (through a `top.Input` located at its name) that replaces its producer, so
a failing layer can be run alone on values dumped from the full model (model_runner
--dump_all_tensors). Ops, arguments and weights no longer needed are removed; the cut module
gets its own weight npz (`<output stem>_weight.npz`), so the original model's stays intact.
Beside them goes TPU-MLIR's `fake_data.npz`: a value for each input of the cut, by name, taken
from `--ref_data` (the full model's `model_runner --dump_all_tensors`) where it has the name, else
made up (uniform [0, 1) floats, zeros for integer inputs), so `model_runner --input fake_data.npz`
runs the cut at once.
A Tpu module with layer groups (`tpu.Group`) is cut as without them: the groups are undone, so
any tensor inside one can be named (run --layer-group again on the cut).

`--mode bt` and `ft` find the other names as TPU-MLIR's mlir_cut.py does (`backtrace`): from each
named tensor's op, a stack of ops is popped and its neighbours (producers for bt, users for ft;
no weights, no top.None) pushed until N neighbours were found; the ops left on the stack become
the inputs (bt) or outputs (ft) of the cut. N counts the neighbours pushed, not the ops the cut
keeps: an Add's two producers count 2 (bt counts a producer once per operand, ft a user once per
value it reads). A trace that runs out of ops first is an error (TPU-MLIR's pops an empty list).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from tpudsl.cli.errors import CliArgumentParser, refuse_overwriting, run_cli
from tpudsl.ir.diagnostics import TpudslError, same_file

if TYPE_CHECKING:  # imported where used: `mlir_cut --help` must not wait for xDSL's dialects
    from collections.abc import Mapping

    import numpy as np
    from xdsl.ir import Operation, SSAValue

    from tpudsl.ir.module import TopModule

# Ops whose results are not tensors a user can name.
_UNNAMED_OPS = ("top.None", "func.return")
# Ops a --mode bt/ft trace neither passes through nor stops at (TPU-MLIR's mlir_ast).
_UNTRACED_OPS = ("top.None", "top.Weight", "func.return")


def named_tensors(mod: TopModule) -> dict[str, SSAValue]:
    """Every named tensor of @main (first definition wins) by its name."""
    from tpudsl.dialects.opdef import result_names

    tensors: dict[str, SSAValue] = {}
    for op in mod.main_func().body.block.ops:
        if op.name in _UNNAMED_OPS:
            continue
        for name, value in zip(result_names(op), op.results, strict=True):
            if name:
                tensors.setdefault(name, value)
    return tensors


def _check_known(output_names: Sequence[str], input_names: Sequence[str], tensors: dict[str, SSAValue]) -> None:
    """One error naming every unknown tensor, outputs and inputs alike."""
    parts = []
    for what, names in (("output", output_names), ("input", input_names)):
        unknown = [n for n in names if n not in tensors]
        if unknown:
            parts.append(f"{what} " + ", ".join(unknown))
    if parts:
        raise TpudslError("unknown tensor names: " + "; ".join(parts))


def cut_module(mod: TopModule, output_names: Sequence[str], input_names: Sequence[str] = ()) -> TopModule:
    """Cut `mod` in place (see the module docstring) and return it."""
    from xdsl.dialects.func import ReturnOp

    from tpudsl.dialects.opdef import loc_name
    from tpudsl.ir.cut import drop_unused_args, erase_dead_ops, new_input
    from tpudsl.ir.module import verify_module

    output_names = list(dict.fromkeys(output_names))
    input_names = list(dict.fromkeys(input_names))
    if not output_names:
        raise TpudslError("no output names given")
    _ungroup(mod)
    tensors = named_tensors(mod)
    _check_known(output_names, input_names, tensors)
    main = mod.main_func()
    block = main.body.block

    first_op = block.first_op  # new inputs go before it, in the order given
    for name in input_names:
        old = tensors[name]
        if old.owner.name == "top.Input":
            continue  # already an input
        tensors[name] = new_input(block, old, name, first_op)

    old_return = block.last_op
    if isinstance(old_return, ReturnOp):
        old_return.detach()
        old_return.erase()
    mod.set_outputs([tensors[n] for n in output_names])
    erase_dead_ops(block)
    drop_unused_args(main)
    used = {loc_name(op) for op in mod.weight_ops()}
    mod.weights = {k: v for k, v in mod.weights.items() if k in used}
    verify_module(mod.module, str(mod.path or "cut module"))
    return mod


def _ungroup(mod: TopModule) -> None:
    """Every tensor of a layer group can be named: undo the groups (group the cut again)."""
    if any(op.name == "tpu.Group" for op in mod.module.walk()):
        from tpudsl.backend.layer_group import ungroup

        ungroup(mod.module)


def _neighbours(mod: TopModule, mode: str) -> dict[Operation, list[Operation]]:
    """Each op's producers (bt: one per operand, repeats kept) or users (ft: one per distinct
    operand it reads from the op), in TPU-MLIR's order: operand order, then the block's order."""
    block = mod.main_func().body.block
    traced = [op for op in block.ops if op.name not in _UNTRACED_OPS]
    found: dict[Operation, list[Operation]] = {op: [] for op in traced}
    for op in traced:
        if op.name == "top.Input":
            continue  # its operand is the function's argument
        operands = op.operands if mode == "bt" else list(dict.fromkeys(op.operands))
        for value in operands:
            producer = value.owner
            if producer not in found:
                continue  # a weight, a top.None or a block argument
            if mode == "bt":
                found[op].append(producer)
            else:
                found[producer].append(op)
    return found


def trace_names(mod: TopModule, names: Sequence[str], num: int, mode: str) -> list[str]:
    """The names --mode bt (inputs) or ft (outputs) cuts at, `num` neighbours from `names` (see
    the module docstring); an op on the stack gives every named result."""
    from tpudsl.dialects.opdef import result_names

    _ungroup(mod)
    tensors = named_tensors(mod)
    _check_known(names if mode == "bt" else (), names if mode == "ft" else (), tensors)
    neighbours = _neighbours(mod, mode)
    left: list[Operation] = []
    for name in names:
        count, stack = 0, [tensors[name].owner]
        while count < num:
            if not stack:
                end = "inputs" if mode == "bt" else "outputs"
                raise TpudslError(f"--mode {mode} --num {num}: the trace from '{name}' reaches the model's {end} "
                                  f"after {count} of {num} ops")
            found = neighbours.get(stack.pop(), [])
            stack.extend(found)
            count += len(found)
        left.extend(stack)
    return list(dict.fromkeys(n for op in left for n in result_names(op) if n in tensors))


def _split(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


FAKE_DATA = "fake_data.npz"  # TPU-MLIR's name for it


def fake_inputs(mod: TopModule, ref: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A value for each input of `mod` by name: `ref`'s array of that name (its shape and dtype
    checked), else uniform [0, 1) floats from a fixed seed (TPU-MLIR's np.random.random), or zeros
    for integer inputs (valid indices of any Gather)."""
    import numpy as np

    from tpudsl.cli.model_runner import input_shapes
    from tpudsl.interp.module_interpreter import numpy_dtype

    rng = np.random.default_rng(0)
    args = mod.main_func().body.block.args
    values: dict[str, np.ndarray] = {}
    for arg, (name, shape) in zip(args, input_shapes(mod).items(), strict=True):
        dtype = numpy_dtype(arg.type.element_type)
        if shape is None or None in shape or dtype is None:
            raise TpudslError(f"input '{name}' of the cut is {arg.type}: no {FAKE_DATA} can be made for it")
        if name in ref:
            got = ref[name]
            if got.shape != shape or got.dtype != dtype:
                raise TpudslError(f"--ref_data: '{name}' is {got.dtype}{list(got.shape)}, the cut's input takes "
                                  f"{dtype}{list(shape)}")
            values[name] = got
        elif np.issubdtype(dtype, np.floating):
            values[name] = rng.random(shape).astype(dtype)
        else:
            values[name] = np.zeros(shape, dtype)
    return values


MODES = ("io", "bt", "ft")


def _names_by_mode(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The output and input names each mode takes (TPU-MLIR's: bt only outputs, ft only inputs)."""
    outputs, inputs = _split(args.output_names), _split(args.input_names)
    if args.mode == "io":
        if args.num is not None:
            raise TpudslError("--num is read by --mode bt and ft only")
        return outputs, inputs
    if args.num is None or args.num < 1:
        raise TpudslError(f"--mode {args.mode} needs --num, a positive number of ops")
    traced, found = (outputs, inputs) if args.mode == "bt" else (inputs, outputs)
    if not traced or found:
        flag, finds = ("--output_names", "inputs") if args.mode == "bt" else ("--input_names", "outputs")
        raise TpudslError(f"--mode {args.mode} takes {flag} only: it finds the {finds} itself")
    return outputs, inputs


def build_parser() -> CliArgumentParser:
    parser = CliArgumentParser(prog="mlir_cut", description="Cut a Top module to the part that computes the named tensors.")
    parser.add_argument("--mlir", required=True, help="input .mlir (Top dialect)")
    parser.add_argument("--output_names", default="", help="comma-separated tensor names to make the outputs")
    parser.add_argument("--input_names", default="", help="comma-separated tensor names to make new inputs")
    parser.add_argument("--mode", choices=MODES, default="io",
                        help="io: cut at the names given; bt: inputs --num ops back from --output_names; "
                             "ft: outputs --num ops forward from --input_names")
    parser.add_argument("--num", type=int, help="how many ops --mode bt or ft goes (TPU-MLIR's count, docs/tools.md)")
    parser.add_argument("-o", "--output", help="output .mlir (default: <mlir stem>_cut.mlir next to the input)")
    parser.add_argument("--ref_data", help=f"npz of named tensors (model_runner --dump_all_tensors) that {FAKE_DATA}, "
                                           "written beside the output, takes the cut's inputs from")
    return parser


def run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    outputs, inputs = _names_by_mode(args)
    from tpudsl.ir.module import load_module, npz_writer, save_module, weight_file_path
    from tpudsl.ir.npz import read_npz

    source = Path(args.mlir)
    output = Path(args.output) if args.output else source.with_name(f"{source.stem}_cut.mlir")
    # without -o, only a symlink named like the default output can be the input
    refuse_overwriting("-o" if args.output else "the output", output, {f"the input .mlir {source}": source})
    weights = output.with_name(f"{output.stem}_weight.npz")
    mod = load_module(source)
    source_weights = weight_file_path(mod.module, source)
    if source_weights is not None and same_file(weights, source_weights):
        raise TpudslError(
            f"the cut module's weights would replace '{source_weights}', which '{source}' still names; "
            "choose another -o name"
        )
    if args.mode == "bt":
        inputs = trace_names(mod, outputs, args.num, "bt")
    elif args.mode == "ft":
        outputs = trace_names(mod, inputs, args.num, "ft")
    cut_module(mod, outputs, inputs)
    fake = fake_inputs(mod, read_npz(args.ref_data) if args.ref_data else {})
    save_module(mod, output, weights, also=[(output.with_name(FAKE_DATA), npz_writer(fake))])
    return 0


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(run, argv)
