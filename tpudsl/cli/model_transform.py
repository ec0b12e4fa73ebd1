"""model_transform: ONNX -> Top .mlir + weight .npz, validated against onnxruntime (TPU-MLIR's flags).

  model_transform --model_name NAME --model_def M.onnx --mlir NAME.mlir
      [--input_shapes [[1,3,224,224]]] [--input_types float32] [--output_names a,b]
      [--mean 0,0,0] [--scale 1,1,1] [--pixel_format FORMAT] [--channel_format nchw|nhwc]
      [--resize_dims H,W] [--keep_aspect_ratio] [--keep_ratio_mode letterbox|short_side_scale]
      [--pad_type center|normal] [--pad_value 0]
      [--test_input in.npz|img.jpg|x.npy] [--test_result NAME_top_outputs.npz]
      [--tolerance 0.99,0.99] [--excepts a,b] [--not_inference] [--cache_skip] [--debug]

A `.mlir` --model_def (TPU-MLIR's MlirTransformer: a TOP_F32 module named --model_name, such as a
--debug NAME_origin.mlir) skips the conversion: the Top passes run on it and NAME.mlir is written.
TPU-MLIR's other flags are checked (CHECKED below, docs/tools.md): a value asking for what
tpudsl does is accepted, any other is an error naming the flag, before anything is read.

Steps (each named on stderr as it starts, and timed when it ends): convert (fold constants,
convert, --shape-infer), TPU-MLIR's Top passes (struct-optimize, shape-infer, canonicalize,
extra-optimize), then with --test_input: load the (preprocessed) inputs, run the Top interpreter
and onnxruntime (every tensor the Top module also names), write NAME.mlir and
NAME_top_f32_all_weight.npz next to it with NAME_in_f32.npz, --test_result and
NAME_ref_outputs.npz, and compare them tensor by tensor. Everything that can be wrong with the
input (files, flags, unsupported ops, shapes, test inputs) is found before the first file is
written. With --debug, NAME_origin.mlir (the converted module before the passes, as TPU-MLIR keeps
it) and its npz are written as soon as the conversion succeeded, and an internal error shows its
traceback.

Heavy modules (onnx, xDSL's dialects, numpy) are imported after the arguments are parsed, so that
`--help` answers at once.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from tpudsl.cli.errors import CliArgumentParser, add_threads_option, run_cli
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags
from tpudsl.ir.diagnostics import TpudslError, same_file

if TYPE_CHECKING:
    import numpy as np

    from tpudsl.frontend.preprocess import Preprocess
    from tpudsl.ir.module import TopModule

# TPU-MLIR's Top passes (mlir_shell.py, mlir_opt_for_top), run in memory between `init` and
# `deinit` (weight_in_mem / no_save_weight: the TopModule holds the weights, and they are saved
# with the module); shape-infer again last, for results a rewrite left unranked. --add_postprocess
# runs add-postprocess where TPU-MLIR does, after the first shape-infer.
TOP_PASSES = ("struct-optimize", "shape-infer", "canonicalize", "extra-optimize", "shape-infer")
POSTPROCESS_AFTER = 2  # TOP_PASSES[:2] run before add-postprocess
NUMPY_TYPES = ("float32", "float16", "int32", "int64", "int8", "uint8", "bool")
PIXEL_FORMATS_HELP = "rgb, bgr, gray, rgba, gbrg, grbg, bggr, rggb"  # top.Input's (tests/test_cli_errors.py checks)
FALSE = ("False", "false", "0", "no")  # what TPU-MLIR's str2bool reads as false
CHECKED = (
    Checked("--model_data", (), "tpudsl converts ONNX models only (a .caffemodel is Caffe's)"),
    Checked("--model_extern", (), "tpudsl converts one ONNX model (further model files are MaskRCNN's)"),
    Checked("--onnx_sim", ("",), "tpudsl runs no onnx-simplifier, whose fusions skip_fuse_bn would change"),
    Checked("--dump_final_opt", (), "tpudsl runs no onnx-simplifier, so there is no final optimized .onnx to save"),
    Checked("--dynamic", (False,), "tpudsl compiles static shapes (give them with --input_shapes)"),
    Checked("--dynamic_shape_input_names", ("",), "tpudsl compiles static shapes (give them with --input_shapes)"),
    Checked("--shape_influencing_input_names", ("",),
            "tpudsl compiles static shapes; shape inputs are folded from --input_shapes"),
    Checked("--op_custom_shape", (),
            "shapes come from --input_shapes and shape inference; per-op custom shapes are not modelled"),
    Checked("--patterns_count", (), "a regression check of TPU-MLIR's pattern counts; "
            "tpuc-opt --debug-only=pattern-application prints tpudsl's"),
    Checked("--replace_topk_indices", FALSE, "replacing TopK's indices is not modelled"),
    Checked("--enable_maskrcnn", (False,), "MaskRCNN's multi-model conversion is not modelled"),
    Checked("--path_yaml", (), "MaskRCNN's yaml configuration is not modelled"),
    Checked("--preprocess_list", ("",), "the preprocessing is recorded on every 4-D input"),
    Checked("--debug_cmd", ("",), "TPU-MLIR's debug commands are not modelled"),
)


def _parser() -> CliArgumentParser:
    p = CliArgumentParser(prog="model_transform", description="Convert an ONNX model to a Top .mlir and weight .npz.",
                          debug_help="keep NAME_origin.mlir (the module before the passes); show internal errors' tracebacks")
    p.add_argument("--model_name", required=True, help="module name; prefix of the files written")
    p.add_argument("--model_def", required=True,
                   help="the .onnx model, or a TOP_F32 .mlir named --model_name (e.g. a --debug NAME_origin.mlir) "
                        "to run the Top passes on")
    p.add_argument("--mlir", required=True, help="the Top .mlir to write")
    p.add_argument("--input_shapes", default=None, help="shapes of the inputs, e.g. [[1,3,224,224],[10]]")
    p.add_argument("--input_types", default=None, help="numpy types of the inputs for the reference run, e.g. float32,int32")
    p.add_argument("--output_names", default=None, help="comma-separated tensors to use as outputs (cuts the model)")
    p.add_argument("--mean", default=None, help="per-channel mean subtracted from image inputs, e.g. 123.675,116.28,103.53")
    p.add_argument("--scale", default=None, help="per-channel factor applied after the mean, e.g. 0.0171,0.0175,0.0174")
    p.add_argument("--pixel_format", default=None, metavar="FORMAT",
                   help=f"channel order of image inputs, as top.Input records it: {PIXEL_FORMATS_HELP} (default bgr)")
    p.add_argument("--channel_format", default=None, choices=("nchw", "nhwc"))
    p.add_argument("--resize_dims", default=None, help="H,W an image is resized to before the center crop")
    p.add_argument("--keep_aspect_ratio", action="store_true", help="resize keeping the aspect ratio (--keep_ratio_mode)")
    # Their values are checked by Preprocess (importing its lists here would slow --help).
    p.add_argument("--keep_ratio_mode", default=None,
                   help="with --keep_aspect_ratio: letterbox (pad) or short_side_scale (crop); default letterbox")
    p.add_argument("--pad_type", default=None,
                   help="where the letterbox puts the image: center (default) or normal (top left)")
    p.add_argument("--pad_value", type=int, default=None, help="the letterbox's pixel value, 0 to 255; default 0")
    p.add_argument("--test_input", default="", help="an .npz keyed by input name, or one .npy/image per input (comma-separated)")
    p.add_argument("--test_result", default="", help="where the Top interpreter's tensors go (default NAME_top_outputs.npz)")
    p.add_argument("--tolerance", default="0.99,0.99", help="minimum cosine,euclidean similarity against onnxruntime")
    p.add_argument("--excepts", default="-", help="comma-separated tensors not to compare ('-': none)")
    p.add_argument("--not_inference", action="store_true",
                   help="convert only: no validation run, no input/Top/reference npz files (--test_input is still checked)")
    p.add_argument("--cache_skip", action="store_true", help="accepted: tpudsl caches nothing, every step runs")
    p.add_argument("--add_postprocess", default="",
                   help="yolov5 or yolov3 (three head outputs), yolov3_tiny (two), yolov8 or yolov11 (one decoded "
                        "output): append YOLO detection (top.YoloDetection); ssd (outputs loc, conf, priorbox): "
                        "append SSD's (top.DetectionOutput)")
    add_threads_option(p)
    add_checked_flags(p, CHECKED)
    return p


def _floats(flag: str, text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or not all(math.isfinite(v) for v in values):
        raise TpudslError(f"{flag} {text!r} is not a comma-separated list of (finite) numbers")
    return values


def _preprocess(args) -> Preprocess | None:
    """The preprocessing the flags describe, or None when no preprocessing flag is given."""
    from tpudsl.frontend.preprocess import Preprocess

    given = [args.mean, args.scale, args.pixel_format, args.channel_format, args.resize_dims, args.keep_ratio_mode,
             args.pad_type, args.pad_value]
    if all(v is None for v in given) and not args.keep_aspect_ratio:
        return None
    fields = {k: v for k, v in (("keep_ratio_mode", args.keep_ratio_mode), ("pad_type", args.pad_type),
                                ("pad_value", args.pad_value)) if v is not None}
    if args.mean is not None:
        fields["mean"] = _floats("--mean", args.mean)
    if args.scale is not None:
        fields["scale"] = _floats("--scale", args.scale)
    if args.resize_dims is not None:
        dims = _floats("--resize_dims", args.resize_dims)
        if len(dims) != 2 or any(d < 1 or d != int(d) for d in dims):
            raise TpudslError(f"--resize_dims {args.resize_dims!r} must be two positive integers H,W")
        fields["resize_dims"] = (int(dims[0]), int(dims[1]))
    return Preprocess(pixel_format=args.pixel_format or "bgr", channel_format=args.channel_format or "nchw",
                      keep_aspect_ratio=args.keep_aspect_ratio, **fields)


def _names(text: str | None) -> list[str]:
    return [n for n in (text or "").split(",") if n and n != "-"]


class Progress:
    """Each step on stderr: its name as it starts (a long conversion shows where it is), its time
    when it ends. Bad input found during a step comes after these lines, as the last line."""

    @contextmanager
    def step(self, what: str):
        print(f"model_transform: {what} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        yield
        print(f"model_transform: {what}: {time.perf_counter() - start:.2f} s", file=sys.stderr, flush=True)


def _top_pass_names(postprocess: str) -> list[str]:
    names = list(TOP_PASSES)
    return names[:POSTPROCESS_AFTER] + ["add-postprocess"] + names[POSTPROCESS_AFTER:] if postprocess else names


def _run_passes(mod: TopModule, postprocess: str) -> None:
    """The Top passes; graph outputs keep their names (no rewrite renames a returned value)."""
    from tpudsl.dialects import make_context
    from tpudsl.ir.module import verify_module
    from tpudsl.passes import pass_class

    ctx = make_context()
    top = [pass_class(name)(type=postprocess) if name == "add-postprocess" else pass_class(name)()
           for name in _top_pass_names(postprocess)]
    passes = [pass_class("init")(weight_in_mem=True), *top, pass_class("deinit")(no_save_weight=True)]
    for p in passes:
        p.apply(ctx, mod.module)
    verify_module(mod.module, str(mod.path or "module"))


def _input_info(mod: TopModule) -> tuple[list[str], list[tuple[int, ...]]]:
    from tpudsl.dialects.opdef import loc_name

    inputs = [op for op in mod.main_func().body.block.ops if op.name == "top.Input"]
    return [loc_name(op) for op in inputs], [tuple(op.results[0].type.get_shape()) for op in inputs]


def _input_types(text: str | None) -> list[str]:
    types = _names(text)
    for t in types:
        if t not in NUMPY_TYPES:
            raise TpudslError(f"--input_types {t!r} is not one of {', '.join(NUMPY_TYPES)}")
    return types


def _typed_inputs(inputs: dict[str, np.ndarray], types: list[str]) -> dict[str, np.ndarray]:
    """Inputs as --input_types says the model reads them (rounded for integer types), as float32
    for the Top interpreter: Top computes in float."""
    import numpy as np

    if not types:
        return inputs
    if len(types) != len(inputs):
        raise TpudslError(f"--input_types gives {len(types)} type(s) for {len(inputs)} input(s)")
    return {name: x.astype(t).astype(np.float32) for (name, x), t in zip(inputs.items(), types, strict=True)}


def _reference_run(model, mod: TopModule, inputs: dict[str, np.ndarray], progress: Progress,
                   threads: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every tensor of the Top interpreter and the onnxruntime results for the same names. Both
    run before any file is written: a test input the model cannot take is bad input too."""
    from tpudsl.frontend.onnx_reference import onnx_reference
    from tpudsl.interp import run_module

    with progress.step("run the Top interpreter"):
        ours = run_module(mod.module, mod.weights, inputs, keep_all=True, threads=threads)
    with progress.step("run onnxruntime"):
        ref = onnx_reference(model, inputs, list(ours))
    return ours, ref


def _validate(args, mod: TopModule, ours: dict[str, np.ndarray], ref: dict[str, np.ndarray],
              inputs: dict[str, np.ndarray], tolerance: tuple[float, float], progress: Progress) -> None:
    from tpudsl.cli.compare import compare_dicts, format_report
    from tpudsl.cli.term_scale import term_scales

    with progress.step("compare Top with onnxruntime"):
        # The inputs are the same arrays on both sides; onnxruntime does not return them. A tensor
        # that is rounding noise of its op is judged against the op's term scale (term_scale.py).
        report = compare_dicts(ours, ref, tolerance, [*_names(args.excepts), *inputs],
                               scale_of=term_scales(mod.main_func(), ref, inputs, mod.weights))
    print("\n".join(format_report(report, brief=True)))
    if not report.passed:
        if not report.results:
            raise TpudslError("validation failed: no tensor of the Top module is also an onnxruntime result")
        bad = report.failed[0]
        raise TpudslError(
            f"validation failed at tensor '{bad.name}': {bad.verdict} (cosine {bad.cosine:.6f}, euclid "
            f"{bad.euclid:.6f}; tolerance {tolerance[0]},{tolerance[1]}); {len(report.failed)} of "
            f"{len(report.results)} tensors failed"
        )


def _check_output_dir(flag: str, path: Path) -> None:
    if path.is_dir() or not str(path):
        raise TpudslError(f"cannot write {flag} '{path}': it is a directory")
    if not path.parent.is_dir():
        raise TpudslError(f"cannot write '{path}': directory '{path.parent}' does not exist")


def _origin_files(args, mlir: Path) -> tuple[Path, Path]:
    """Where --debug keeps the module before the passes, and its weights (TPU-MLIR's names)."""
    return mlir.parent / f"{args.model_name}_origin.mlir", mlir.parent / f"{args.model_name}_top_f32_all_origin_weight.npz"


def _check_distinct(args, mlir: Path, test_result: Path | None, test_files: Sequence[str]) -> None:
    """No file written may be an input or another file written (it would be replaced or lost)."""
    out_dir, name = mlir.parent, args.model_name
    written = {"--mlir": mlir, "the weight file": out_dir / f"{name}_top_f32_all_weight.npz"}
    if args.debug:
        written |= dict(zip(("the --debug origin .mlir", "its weight file"), _origin_files(args, mlir), strict=True))
    if test_result is not None:
        written |= {"the input npz": out_dir / f"{name}_in_f32.npz", "--test_result": test_result,
                    "the reference npz": out_dir / f"{name}_ref_outputs.npz"}
    read = {"--model_def": Path(args.model_def), **{"--test_input": Path(f) for f in test_files}}
    seen: dict[str, str] = {}
    for what, path in written.items():
        real = os.path.realpath(path)  # never raises, unlike Path.resolve() on a symlink loop
        clash = seen.get(real) or next((flag for flag, p in read.items() if os.path.realpath(p) == real), None)
        if clash:
            raise TpudslError(f"{what} '{path}' would overwrite {clash} '{path}'; choose other names")
        seen[real] = what


def run(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    check_flags("model_transform", args, CHECKED)
    from_top = Path(args.model_def).suffix.lower() == ".mlir"
    if Path(args.model_def).suffix.lower() != ".onnx" and not from_top:
        raise TpudslError(f"model_transform: --model_def {args.model_def} is not supported: tpudsl converts ONNX models "
                          "and Top modules only (supported: a .onnx or .mlir file)")
    if from_top:
        _check_top_flags(args)
    _check_postprocess(args.add_postprocess)
    from tpudsl.cli.compare import tolerance_flag
    from tpudsl.frontend.onnx_import import convert_onnx_qdq, load_onnx
    from tpudsl.frontend.qdq import float_graph
    from tpudsl.lowering.import_calibration import calibrate_from_qdq
    from tpudsl.frontend.shape_args import parse_input_shapes
    from tpudsl.frontend.test_inputs import check_test_input_files, load_test_inputs
    from tpudsl.ir.module import save_module

    if not args.model_name or os.sep in args.model_name or args.model_name in (".", ".."):
        raise TpudslError(f"--model_name {args.model_name!r} must be a plain name: it prefixes the files written next to --mlir")
    input_shapes = parse_input_shapes(args.input_shapes) if args.input_shapes else None
    preprocess = _preprocess(args)
    tolerance = tolerance_flag(args.tolerance)
    input_types = _input_types(args.input_types)
    test_files = check_test_input_files(args.test_input) if args.test_input else []
    if args.not_inference:
        test_files = []  # TPU-MLIR checks they exist, then converts only
    mlir = Path(args.mlir)
    _check_output_dir("--mlir", mlir)
    out_dir = mlir.parent
    test_result = Path(args.test_result) if args.test_result else out_dir / f"{args.model_name}_top_outputs.npz"
    if test_files:
        _check_output_dir("--test_result", test_result)
    _check_distinct(args, mlir, test_result if test_files else None, test_files)

    progress = Progress()
    if from_top:
        mod, qdq_ranges = _load_top(args, mlir), {}
    else:
        model = load_onnx(args.model_def)  # a file that is no ONNX model is found before any step starts
        with progress.step("convert ONNX to Top"):
            mod, qdq_ranges = convert_onnx_qdq(model, args.model_name, input_shapes, _names(args.output_names) or None,
                                               preprocess)
    if args.debug and not from_top:
        origin, origin_weights = _origin_files(args, mlir)
        with progress.step(f"write {origin} (--debug)"):
            save_module(mod, origin, origin_weights)  # replayable: tpuc-opt ORIGIN --struct-optimize ...
    with progress.step(f"run {', '.join(_top_pass_names(args.add_postprocess))}"):
        _run_passes(mod, args.add_postprocess)
    if qdq_ranges:
        with progress.step("give the tensors the ranges of the Q/DQ pairs (TOP_CALIBRATED)"):
            calibrate_from_qdq(mod.module, qdq_ranges)
    inputs = ours = ref = None
    if test_files:
        with progress.step("load the test input"):
            names, shapes = _input_info(mod)
            inputs = _typed_inputs(load_test_inputs(test_files, names, shapes, preprocess), input_types)
        # a QDQ model's Top module is its float graph: onnxruntime runs the pairs cut out too
        ours, ref = _reference_run(float_graph(model) if qdq_ranges else model, mod, inputs, progress, args.threads)
    with progress.step(f"write {mlir}" + (" and the input, Top and reference npz files" if inputs is not None else "")):
        # One transaction: a file that cannot be written (a read-only place) leaves every file as it was.
        npz_files = []
        if inputs is not None:
            npz_files = [(out_dir / f"{args.model_name}_in_f32.npz", inputs), (test_result, ours),
                         (out_dir / f"{args.model_name}_ref_outputs.npz", ref)]
        save_module(mod, mlir, out_dir / f"{args.model_name}_top_f32_all_weight.npz",
                    also=[(path, _npz_writer(arrays)) for path, arrays in npz_files])
    if inputs is not None:
        _validate(args, mod, ours, ref, inputs, tolerance, progress)
    return 0


# What a .mlir --model_def (a Top module, e.g. a --debug NAME_origin.mlir) has fixed already; TPU-MLIR
# ignores these flags then, tpudsl refuses them (nothing silently ignored).
TOP_FIXED = ("input_shapes", "input_types", "output_names", "mean", "scale", "pixel_format", "channel_format",
             "resize_dims", "keep_ratio_mode", "pad_type", "pad_value", "test_input", "test_result")


def _check_top_flags(args) -> None:
    for dest in TOP_FIXED:
        if getattr(args, dest):
            raise TpudslError(f"model_transform: --{dest} is not supported with a .mlir --model_def: the Top module's "
                              "inputs, outputs and preprocessing are fixed and there is no original model to validate "
                              f"against (supported: without --{dest})")
    if args.keep_aspect_ratio:
        raise TpudslError("model_transform: --keep_aspect_ratio is not supported with a .mlir --model_def: the Top "
                          "module's preprocessing is fixed (supported: without --keep_aspect_ratio)")


def _check_postprocess(postprocess: str) -> None:
    """A --add_postprocess type add-postprocess refuses fails before anything is read or written."""
    from tpudsl.rewrites.add_postprocess import AddPostprocessPass

    try:
        AddPostprocessPass(type=postprocess).check_options()
    except TpudslError as e:
        raise TpudslError(f"model_transform: --add_postprocess {postprocess}: {e.message}") from None


def _load_top(args, mlir: Path) -> TopModule:
    """TPU-MLIR's MlirTransformer: a TOP_F32 module named --model_name, which the Top passes then run on."""
    from xdsl.dialects.builtin import StringAttr

    from tpudsl.ir.module import load_module, weight_file_path

    mod = load_module(args.model_def)
    name = mod.module.attributes.get("module.name")
    if mod.state != "TOP_F32":
        raise TpudslError(f"model_transform: --model_def {args.model_def} is not supported: its module.state is "
                          f"{mod.state} (supported: TOP_F32)")
    if not isinstance(name, StringAttr) or name.data != args.model_name:
        shown = name.data if isinstance(name, StringAttr) else "not given"
        raise TpudslError(f"--model_name {args.model_name} is not the module.name of {args.model_def} ({shown})")
    source_weights = weight_file_path(mod.module, args.model_def)
    weights = mlir.parent / f"{args.model_name}_top_f32_all_weight.npz"
    if source_weights is not None and same_file(source_weights, weights):
        raise TpudslError(f"the weight file '{weights}' would overwrite the weights of --model_def '{args.model_def}'; "
                          "choose another --mlir directory")
    return mod


def _npz_writer(arrays: dict[str, np.ndarray]):
    import numpy as np

    return lambda f: np.savez(f, **arrays)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(run, argv)
