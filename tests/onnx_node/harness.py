"""Run one ONNX model through tpudsl (convert_onnx + Top interpreter) and compare with a reference.

The reference is never tpudsl: ONNX's own expected outputs (backend node tests) or onnxruntime.

Metrics used by the whole-model and property tests (documented here once):
  cosine(a, b)        = <a, b> / (|a| |b|) over the flattened arrays, in float64; 1.0 when both are 0.
  max_rel_err(a, b)   = max|a - b| / max(max|b|, 1e-6)  — the largest absolute error relative to the
                        largest magnitude of the reference b (not element-wise: element-wise relative
                        error explodes on values near zero, which every conv/softmax output has).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

# Inputs that ONNX node tests feed as graph inputs but that a static-shape compiler needs as
# constants (shapes, axes, pads, scales, sizes, repeats, k): TPU-MLIR's converter reads them as
# weights. The harness turns these positions into initializers with the test's own values; every
# other input stays a graph input, including Conv/Gemm/MatMul filters (dynamic weights are supported).
PARAM_INPUTS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,),
    "Expand": (1,),
    "Tile": (1,),
    "Squeeze": (1,),
    "Unsqueeze": (1,),
    "Slice": (1, 2, 3, 4),
    "Pad": (1, 2, 3),
    "Resize": (1, 2, 3),
    "Upsample": (1,),
    "Split": (1,),
    "ReduceSum": (1,),
    "ReduceMean": (1,),
    "ReduceMax": (1,),
    "ReduceMin": (1,),
    "ReduceProd": (1,),
    "ReduceL1": (1,),
    "ReduceL2": (1,),
    "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,),
    "ReduceSumSquare": (1,),
    "TopK": (1,),
    "ConstantOfShape": (0,),
    "Clip": (1, 2),
    "Range": (0, 1, 2),
    "OneHot": (1, 2),
    "CumSum": (1,),
    "Trilu": (1,),
    "CenterCropPad": (1,),
    "Dropout": (1, 2),
    "CastLike": (1,),  # only its element type matters
    # Normalisation statistics and affine parameters: always initializers in real models, and
    # TPU-MLIR folds them at conversion time.
    "BatchNormalization": (1, 2, 3, 4),
    "InstanceNormalization": (1, 2),
    "LayerNormalization": (1, 2),
    "GroupNormalization": (1, 2),
    # sequence_lens: a constant of real models (the frontend reads it: every sequence full length)
    "LSTM": (4,),
    "GRU": (4,),
}


def supported_ops() -> set[str]:
    """ONNX op types the frontend's converter table claims."""
    from tpudsl.frontend.onnx_ops import CONVERTERS

    return set(CONVERTERS)


def fold_param_inputs(model: onnx.ModelProto, feeds: dict[str, Any]) -> tuple[onnx.ModelProto, dict[str, Any]]:
    """Move the PARAM_INPUTS positions of a single-node model, and graph inputs no node reads
    (an expanded CastLike's `like`), from graph inputs to initializers."""
    used = {i for n in model.graph.node for i in n.input}
    names = {name for name in feeds if name not in used}
    for node in model.graph.node:
        positions = PARAM_INPUTS.get(node.op_type, ())
        names |= {node.input[i] for i in positions if i < len(node.input) and node.input[i]}
    names &= set(feeds)
    if not names:
        return model, feeds
    model = onnx.ModelProto.FromString(model.SerializeToString())
    keep = [vi for vi in model.graph.input if vi.name not in names]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    for name in sorted(names):
        model.graph.initializer.append(numpy_helper.from_array(np.asarray(feeds[name]), name))
    return model, {k: v for k, v in feeds.items() if k not in names}


def convert_onnx(model: onnx.ModelProto, name: str) -> Any:
    """The frontend's convert_onnx: the TopModule of `model`."""
    from tpudsl.frontend.onnx_import import convert_onnx as convert

    return convert(model, name)


def run_tpudsl(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], name: str = "model",
               canonicalize: bool = False, via_files: bool = False) -> dict[str, np.ndarray]:
    """convert_onnx + ModuleInterpreter.inference; outputs keyed by ONNX output name.

    `via_files`: save the module (.mlir text + weight npz) to a temporary directory and interpret
    what `ModuleInterpreter.from_file` reads back (printer, parser and npz round trip)."""
    from tpudsl.interp import ModuleInterpreter

    top = convert_onnx(model, name)
    if canonicalize:
        top = apply_canonicalize(top)
    if via_files:
        import tempfile
        from pathlib import Path

        from tpudsl.ir.module import save_module

        with tempfile.TemporaryDirectory() as d:
            save_module(top, Path(d) / f"{name}.mlir")
            interp = ModuleInterpreter.from_file(Path(d) / f"{name}.mlir")
    else:
        interp = ModuleInterpreter(top.module, top.weights)
    interp.init()
    try:
        out = interp.inference({k: np.asarray(v) for k, v in feeds.items()})
    finally:
        interp.deinit()
    return {k: np.asarray(v) for k, v in out.items()}


def apply_canonicalize(top: Any) -> Any:
    """Run model_transform's Top passes (TOP_PASSES: shape-infer, canonicalize, shape-infer) on the
    module in place, as model_transform does; graph outputs keep their ONNX names (no rewrite
    renames a returned value). Returns `top`."""
    from tpudsl.cli.model_transform import TOP_PASSES
    from tpudsl.dialects import make_context
    from tpudsl.passes import pass_class

    ctx = make_context()
    for name in TOP_PASSES:
        pass_class(name)().apply(ctx, top.module)
    return top


def onnxruntime_run(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], threads: int = 1) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, dict(feeds)), strict=True))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a64 = np.asarray(a, dtype=np.float64).ravel()
    b64 = np.asarray(b, dtype=np.float64).ravel()
    na, nb = np.linalg.norm(a64), np.linalg.norm(b64)
    if na == 0.0 and nb == 0.0:
        return 1.0
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a64, b64) / (na * nb))


def max_rel_err(a: np.ndarray, b: np.ndarray) -> float:
    """max|a - b| / max(max|b|, 1e-6), b the reference."""
    a64 = np.asarray(a, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64)
    if b64.size == 0:
        return 0.0
    return float(np.max(np.abs(a64 - b64)) / max(float(np.max(np.abs(b64))), 1e-6))


def assert_close(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float, what: str = "") -> None:
    """Shape equal, and |actual - expected| <= atol + rtol*|expected| element-wise (NaN == NaN);
    exactly equal when the reference (or ours) is integer or boolean: an index, a count or a mask
    that is off by one is wrong, whatever its size."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != expected {expected.shape}"
    if expected.dtype.kind in "biu" or actual.dtype.kind == "b":
        # Top may carry integers and booleans as float32 values: compared as numbers, no tolerance
        # (and no "nonzero is true").
        np.testing.assert_array_equal(actual.astype(np.float64), expected.astype(np.float64), err_msg=what)
        return
    np.testing.assert_allclose(
        actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True,
        err_msg=what,
    )
