"""model_runner: run a model on the inputs of an .npz and save its outputs as an .npz.

  model_runner --input in.npz --model X.mlir --output out.npz [--dump_all_tensors]

Input keys are the model's input names (the locations of its `top.Input` ops); output keys are
the tensor (location) names of the returned values, or of every tensor with
--dump_all_tensors, so the file compares with `npz_tool compare` against a reference and feeds
`mlir_cut --input_names`. A .mlir runs in the Top interpreter, an .onnx in onnxruntime (the
reference), a .bmodel on the cmodel (`--profile` prints its estimated cycles per op, their serial total and
the total with GDMA and BDC overlapped; --dump_all_tensors reads every tensor during the run from its
tensor locations, cmodel/capture.py; of a combined .bmodel it runs the first network, or --net_name's,
in the stage whose input shapes are the inputs'). An int8/uint8 input of a .mlir or .bmodel (strip-io-quant)
takes float data quantized as its stripped cast would, an int8/uint8 output is dequantized unless
--out_fixed; an f16/bf16 input takes float data rounded as its stripped cast would (docs/tools.md,
"int8 inputs and outputs").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from tpudsl.cli.errors import CliArgumentParser, add_threads_option, refuse_overwriting, run_cli
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags
from tpudsl.ir.diagnostics import TpudslError, one_line

if TYPE_CHECKING:  # imported where used: `model_runner --help` must not wait for onnx and xDSL
    import numpy as np
    import onnx

    from tpudsl.backend.bmodel import Bmodel
    from tpudsl.backend.bmodel_combined import Network
    from tpudsl.ir.module import TopModule


def _shape_text(shape: Sequence[int | None]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape) or "scalar"


def _static(shape: Sequence[int] | None) -> tuple[int | None, ...] | None:
    """A shape with its dynamic dims (negative in MLIR, names or None in onnxruntime) as None."""
    if shape is None:
        return None
    return tuple(d if isinstance(d, int) and d >= 0 else None for d in shape)


def input_shapes(mod: TopModule) -> dict[str, tuple[int | None, ...] | None]:
    """Each input's name (the loc of the `top.Input` reading the argument) and shape (None: unranked,
    a None dim: dynamic)."""
    from tpudsl.dialects.opdef import loc_name, operand_shape

    shapes: dict[str, tuple[int | None, ...] | None] = {}
    for i, arg in enumerate(mod.main_func().body.block.args):
        readers = [u.operation for u in arg.uses if u.operation.name == "top.Input"]
        name = loc_name(readers[0]) if readers else ""
        shapes[name or f"arg{i}"] = _static(operand_shape(arg))
    return shapes


def _fits(got: Sequence[int], want: Sequence[int | None]) -> bool:
    return len(got) == len(want) and all(w is None or g == w for g, w in zip(got, want, strict=True))


def check_inputs(inputs: Mapping[str, np.ndarray], expected: Mapping[str, Sequence[int | None] | None]) -> None:
    """One error naming every missing, mis-shaped or non-numeric input with what the model expects
    (a None dim in `expected` is dynamic: any size fits)."""
    problems = []
    for name, shape in expected.items():
        want = f"expected shape {_shape_text(shape)}" if shape is not None else "shape not static"
        if name not in inputs:
            problems.append(f"input '{name}' is missing ({want})")
        elif inputs[name].dtype.kind not in "biuf":
            problems.append(f"input '{name}' has dtype {inputs[name].dtype}; expected numbers (bool, int or float)")
        elif shape is not None and not _fits(inputs[name].shape, shape):
            problems.append(f"input '{name}' has shape {_shape_text(inputs[name].shape)}, {want}")
    if problems:
        hint = f"; the npz holds: {', '.join(inputs) or 'nothing'}" if any("missing" in p for p in problems) else ""
        raise TpudslError("; ".join(problems) + hint)


# A quantized input or output (strip-io-quant): (scale, zero point, dtype of the stored integers).
QuantIO = dict[str, tuple[float, int, "np.dtype"]]


def _module_io(mod: TopModule, describe) -> tuple[dict, dict]:
    """{input name: describe(its top.Input's result)} and {output name: describe(it)}, for the values
    `describe` gives something (not None) for."""
    from tpudsl.dialects.opdef import loc_name, value_name

    block = mod.main_func().body.block
    ins = {loc_name(op): d for op in block.ops if op.name == "top.Input" and (d := describe(op.results[0]))}
    outs = {value_name(v): d for v in block.last_op.operands if (d := describe(v))}  # type: ignore[union-attr]
    return ins, outs


def module_quant_io(mod: TopModule) -> tuple[QuantIO, QuantIO]:
    """The int8/uint8 inputs (a top.Input of a `!quant.uniform` type) and outputs of a module."""
    from xdsl.dialects.builtin import TensorType

    from tpudsl.dialects.quant import UniformQuantizedType
    from tpudsl.interp.module_interpreter import numpy_dtype

    def params(value) -> tuple[float, int, np.dtype] | None:
        q = value.type.element_type if isinstance(value.type, TensorType) else None
        return (q.scale, q.zero_point, numpy_dtype(q)) if isinstance(q, UniformQuantizedType) else None

    return _module_io(mod, params)


def bmodel_quant_io(header: Mapping) -> tuple[QuantIO, QuantIO]:
    """The int8/uint8 inputs and outputs of a .bmodel, from its IO descriptors."""
    import numpy as np

    def pick(tensors) -> QuantIO:
        return {t["name"]: (t["scale"], t["zero_point"], np.dtype("int8" if t["dtype"] == "i8" else "uint8"))
                for t in tensors if t["dtype"] in ("i8", "u8")}

    return pick(header["inputs"]), pick(header["outputs"])


def quantize_inputs(inputs: Mapping[str, np.ndarray], quant: QuantIO) -> dict[str, np.ndarray]:
    """The data for an int8/uint8 input: float data quantized exactly as the tpu.Cast that
    strip-io-quant removed would have (x / scale in float64, rounded half away from zero, plus the
    zero point, saturated: docs/tools.md); data of the input's integer dtype is the stored values."""
    import numpy as np

    from tpudsl.interp.requant import quantize

    out = dict(inputs)
    for name, (scale, zp, dtype) in quant.items():
        x = np.asarray(inputs[name]) if name in inputs else None
        if x is None or x.dtype == dtype:
            continue
        if x.dtype.kind != "f":
            raise TpudslError(f"input '{name}' is {dtype} (scale {scale:g}, zero point {zp}); its data is {x.dtype}: "
                              f"give float data (quantized here) or {dtype} (taken as stored)")
        info = np.iinfo(dtype)
        try:
            out[name] = quantize(x, scale, info.min, info.max, dtype, zp)
        except ValueError as e:
            raise TpudslError(f"input '{name}': {e}") from None
    return out


# An f16/bf16 input or output (strip-io-quant in F16/BF16 mode): its numpy dtype.
HalfIO = dict[str, "np.dtype"]


def module_half_io(mod: TopModule) -> tuple[HalfIO, HalfIO]:
    """The f16/bf16 inputs (a top.Input of that type) and outputs of a module."""
    from tpudsl.interp.module_interpreter import numpy_dtype

    def half(value) -> np.dtype | None:
        dtype = numpy_dtype(getattr(value.type, "element_type", None))
        return dtype if dtype is not None and dtype.name in ("float16", "bfloat16") else None

    return _module_io(mod, half)


def bmodel_half_inputs(header: Mapping) -> HalfIO:
    """The f16/bf16 inputs of a .bmodel, from its IO descriptors."""
    from tpudsl.backend.cmodel.memory import NUMPY

    return {t["name"]: NUMPY[t["dtype"]] for t in header["inputs"] if t["dtype"] in ("f16", "bf16")}


def round_inputs(inputs: Mapping[str, np.ndarray], halves: HalfIO) -> dict[str, np.ndarray]:
    """The data for an f16/bf16 input: float data rounded as the tpu.Cast that strip-io-quant
    removed would have (to float32, the function argument's type, then to nearest, ties to even:
    docs/tools.md); data of the input's dtype is taken as stored."""
    import numpy as np

    out = dict(inputs)
    for name, dtype in halves.items():
        x = np.asarray(inputs[name]) if name in inputs else None
        if x is None or x.dtype == dtype:
            continue
        if x.dtype.kind != "f":
            raise TpudslError(f"input '{name}' is {dtype}; its data is {x.dtype}: give float data (rounded here) "
                              f"or {dtype} (taken as stored)")
        with np.errstate(over="ignore"):  # beyond the type's range: inf, as the cast gives
            out[name] = x.astype(np.float32).astype(dtype)
    return out


def stored_inputs(inputs: Mapping[str, np.ndarray], quant: QuantIO, halves: HalfIO) -> dict[str, np.ndarray]:
    """The data for inputs whose casts strip-io-quant removed: quantized (int8/uint8) or rounded
    (f16/bf16) as those casts would; every other input as given."""
    return round_inputs(quantize_inputs(inputs, quant), halves)


def dequantized(tensors: Mapping[str, np.ndarray], quant: Mapping[str, tuple]) -> dict[str, np.ndarray]:
    """The tensors `quant` names ((scale, zero point, ...) by name: QuantIO, lowering's int8_params) as
    the float32 values they stand for, (q - zero point) * scale, as TPU-MLIR's model_runner gives
    int8 outputs (without --out_fixed); the others as they are."""
    from tpudsl.interp.requant import dequantize

    return {k: dequantize(v, *quant[k][:2]) if k in quant else v for k, v in tensors.items()}


def mlir_inference(
    inputs: Mapping[str, np.ndarray], mlir: str | Path, dump_all_tensors: bool = False, threads: int | None = None,
    out_fixed: bool = False,
) -> dict[str, np.ndarray]:
    """Run a Top .mlir in the interpreter: outputs (or every tensor) by tensor name. Float data for
    an int8 input is quantized; an int8 output is dequantized unless `out_fixed` (strip-io-quant)."""
    from tpudsl.interp import run_module
    from tpudsl.ir.module import load_module

    mod = load_module(mlir)
    check_inputs(inputs, input_shapes(mod))
    q_in, q_out = module_quant_io(mod)
    feed = stored_inputs(inputs, q_in, module_half_io(mod)[0])
    outputs = run_module(mod.module, mod.weights, feed, keep_all=dump_all_tensors, threads=threads)
    return outputs if out_fixed else dequantized(outputs, q_out)


def onnx_inference(
    inputs: Mapping[str, np.ndarray], model: str | Path | onnx.ModelProto, dump_all_tensors: bool = False
) -> dict[str, np.ndarray]:
    """Run an ONNX model in onnxruntime (one thread, no graph rewrites, so that intermediate
    tensors keep the values the graph defines): the reference a converted model is checked against.

    With `dump_all_tensors`, every node output whose type ONNX shape inference knows is returned too."""
    import numpy as np
    import onnx

    from tpudsl.frontend.onnx_import import load_onnx

    try:
        import onnxruntime as ort
    except ImportError:
        raise TpudslError("running .onnx models needs onnxruntime (pip install onnxruntime)") from None
    if not isinstance(model, onnx.ModelProto):
        model = load_onnx(model)
    if dump_all_tensors:
        model = _all_tensors_as_outputs(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4  # fatal only: its errors reach the user as our one line
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types for invalid models
        raise TpudslError(f"onnxruntime cannot load the model: {one_line(str(e))}") from None
    check_inputs(inputs, {i.name: _static(i.shape) for i in session.get_inputs()})
    dtypes = _ort_dtypes()
    feeds = {i.name: np.asarray(inputs[i.name], dtype=dtypes.get(i.type)) for i in session.get_inputs()}
    names = [o.name for o in session.get_outputs()]
    try:
        outputs = session.run(names, feeds)
    except _ort_errors(ort) as e:  # an input the model cannot take (index out of range, a dynamic dim that clashes)
        raise TpudslError(f"onnxruntime cannot run the model on these inputs: {one_line(str(e))}") from None
    return dict(zip(names, outputs, strict=True))


def _ort_errors(ort) -> tuple[type[Exception], ...]:
    """onnxruntime's exceptions for a model or input it rejects (they share no base class)."""
    state = ort.capi.onnxruntime_pybind11_state
    return tuple(getattr(state, n) for n in ("Fail", "InvalidArgument", "RuntimeException") if hasattr(state, n))


def _ort_dtypes() -> dict[str, type]:
    """onnxruntime's input type names -> numpy dtypes, to cast npz inputs (often float64) as the model wants."""
    import numpy as np

    return {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
            "tensor(int32)": np.int32, "tensor(bool)": np.bool_, "tensor(float16)": np.float16}


def _all_tensors_as_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose graph outputs also include every node output with an inferred type."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    known = {v.name: v for v in inferred.graph.value_info}
    outputs = {o.name for o in inferred.graph.output}
    for node in inferred.graph.node:
        for name in node.output:
            if name not in outputs and name in known:
                inferred.graph.output.append(known[name])
                outputs.add(name)
    return inferred


def chosen_stage(networks: Sequence[Network], net_name: str | None, inputs: Mapping[str, np.ndarray],
                 model: str | Path) -> Bmodel:
    """The stage the runtime runs of the networks read from `model`: of the network `net_name`
    (default the first, as TPU-MLIR's model_runner), the one whose input shapes are the inputs'."""
    import numpy as np

    from tpudsl.backend.bmodel_combined import select_network, select_stage

    try:
        return select_stage(select_network(networks, net_name), {name: np.shape(x) for name, x in inputs.items()})
    except TpudslError as e:
        raise TpudslError(e.message, file=str(model)) from None


def bmodel_inference(inputs: Mapping[str, np.ndarray], model: str | Path, profile: bool = False,
                     out_fixed: bool = False, net_name: str | None = None,
                     dump_all_tensors: bool = False, stage: Bmodel | None = None) -> dict[str, np.ndarray]:
    """Run a .bmodel on the cmodel: its outputs by name (`profile`: print the cycles of each op,
    their serial total and the total with the engines overlapped, schedule.py; with several cores
    the ops' cycles are all cores' work, the overlapped total the slowest core's per phase, and each
    core's busy cycles follow, backend/cores.py). int8 IO as in
    mlir_inference. A combined bmodel runs the network `net_name` (default the first, as TPU-MLIR's
    model_runner), the stage whose input shapes are the inputs' (docs/tools.md). `dump_all_tensors`:
    every tensor its Tpu ops produce (and the inputs), captured during the run from its tensor
    locations (cmodel/capture.py), as the Tpu interpreter dumps them (int8 as stored). `stage`: the
    stage of `model` its caller already read and chose (bmodel_checker), not read again."""
    from tpudsl.backend import isa
    from tpudsl.backend.bmodel_combined import read_networks
    from tpudsl.backend.chips import chip_named
    from tpudsl.backend.cmodel import run_bmodel, run_bmodel_tensors
    from tpudsl.backend.cores import streams_of, timing

    bmodel = stage or chosen_stage(read_networks(model), net_name, inputs, model)
    check_inputs(inputs, {t["name"]: tuple(t["shape"]) for t in bmodel.header["inputs"]})
    q_in, q_out = bmodel_quant_io(bmodel.header)
    feed = stored_inputs(inputs, q_in, bmodel_half_inputs(bmodel.header))
    if dump_all_tensors:
        try:
            tensors = run_bmodel_tensors(bmodel, feed)
        except TpudslError as e:
            raise TpudslError(e.message, file=str(model)) from None
        return tensors if out_fixed else dequantized(tensors, q_out)
    outputs, cycles = run_bmodel(bmodel, feed)
    if profile:
        total = sum(cycles.values())
        print(f"{'op':<40} {'cycles':>12} {'share':>7}")
        for name, n in cycles.most_common():
            print(f"{name:<40} {n:>12} {n / max(total, 1):>7.1%}")
        print(f"{'total':<40} {total:>12}")
        streams = streams_of(isa.decode(bmodel.commands), bmodel.header.get("core_instructions"))
        _, overlapped, busy = timing(streams, chip_named(bmodel.header["chip"]))
        print(f"{'total with GDMA and BDC overlapped':<40} {overlapped:>12} {overlapped / max(total, 1):>7.1%}")
        if len(streams) > 1:  # each phase as long as its slowest core (backend/cores.py)
            for k, n in enumerate(busy):
                print(f"{f'core {k} busy (overlapped)':<40} {n:>12} {n / max(overlapped, 1):>7.1%}")
    return outputs if out_fixed else dequantized(outputs, q_out)


def model_inference(
    inputs: Mapping[str, np.ndarray], model: str | Path, dump_all_tensors: bool = False, threads: int | None = None,
    profile: bool = False, out_fixed: bool = False, net_name: str | None = None,
) -> dict[str, np.ndarray]:
    """Run a model file, chosen by its suffix (`threads`: the Top interpreter's BLAS threads;
    `net_name`: a network of a combined .bmodel)."""
    suffix = Path(model).suffix
    if profile and suffix != ".bmodel":
        raise TpudslError("--profile needs a .bmodel (it prints the cmodel's cycles)", file=str(model))
    if net_name is not None and suffix != ".bmodel":
        raise TpudslError("--net_name picks a network of a .bmodel", file=str(model))
    if suffix == ".mlir":
        return mlir_inference(inputs, model, dump_all_tensors, threads, out_fixed)
    if suffix == ".onnx":
        return onnx_inference(inputs, model, dump_all_tensors)
    if suffix == ".bmodel":
        if dump_all_tensors and profile:
            raise TpudslError("--profile and --dump_all_tensors are two runs of a .bmodel: give one", file=str(model))
        return bmodel_inference(inputs, model, profile, out_fixed, net_name, dump_all_tensors)
    raise TpudslError(f"unknown model type '{suffix}': expected .mlir, .onnx or .bmodel", file=str(model))


def save_npz(path: str | Path, tensors: Mapping[str, np.ndarray]) -> None:
    """Write `tensors` to an .npz atomically (never a half-written file)."""
    import numpy as np

    from tpudsl.ir.module import write_atomically

    # .npz has no f16/bf16 readers outside numpy/ml_dtypes: float tensors are written as float32,
    # as TPU-MLIR's tools write them.
    wide = widened(tensors)
    write_atomically(path, lambda f: np.savez(f, **wide))


def widened(tensors: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """f16 and bf16 tensors as float32 (exact: every f16 and bf16 value is a float32). By dtype
    name: a bfloat16 tensor means ml_dtypes is loaded; importing it otherwise takes 0.5 s."""
    import numpy as np

    return {k: v.astype(np.float32) if v.dtype.name in ("float16", "bfloat16") else v for k, v in tensors.items()}


# TPU-MLIR's flags tpudsl does not model (docs/tools.md).
CHECKED = (
    Checked("--weight", ("",), "tpudsl runs .mlir, .onnx and .bmodel models (a .caffemodel is Caffe's)"),
    Checked("--cuda", (False,), "tpudsl runs on the CPU"),
    Checked("--decrypt_lib", ("",), "tpudsl writes no encrypted .bmodel"),
)


def build_parser() -> CliArgumentParser:
    parser = CliArgumentParser(prog="model_runner", description="Run a model on npz inputs and save its outputs as npz.")
    parser.add_argument("--input", required=True, help="npz whose keys are the model's input names")
    parser.add_argument("--model", required=True, help="model to run (.mlir, .onnx or .bmodel)")
    parser.add_argument("--output", default="_output.npz",
                        help="npz to write, keyed by tensor name (default _output.npz, as TPU-MLIR's)")
    parser.add_argument("--dump_all_tensors", action="store_true", help="save every tensor, not only the outputs")
    parser.add_argument("--profile", action="store_true", help="print a .bmodel's estimated cycles per op")
    parser.add_argument("--out_fixed", action="store_true",
                        help="keep int8/uint8 outputs (strip-io-quant) as stored integers, not dequantized")
    parser.add_argument("--net_name", help="the network of a combined .bmodel to run (default: the first)")
    add_threads_option(parser)
    add_checked_flags(parser, CHECKED)
    return parser


def run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    check_flags("model_runner", args, CHECKED)
    refuse_overwriting("--output", args.output,
                       {f"the --{flag} file": getattr(args, flag) for flag in ("input", "model")})
    from tpudsl.cli.npz_tool import load_npz

    outputs = model_inference(load_npz(args.input), args.model, args.dump_all_tensors, args.threads, args.profile,
                              args.out_fixed, args.net_name)
    save_npz(args.output, outputs)
    return 0


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(run, argv)
