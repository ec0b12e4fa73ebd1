"""Helpers of the backend tests: lower an ONNX model for a chip, compile it to a .bmodel, run it in
the Tpu interpreter, compare F32 results."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from tpudsl.backend.bmodel import read_bmodel
from tpudsl.dialects import make_context
from tpudsl.interp import ModuleInterpreter
from tpudsl.passes import pass_class


def compile_for(top, chip: str, path: str = "m.bmodel"):
    """Address, layer-group and codegen a lowered module (its module.chip replaced by `chip`)."""
    ctx = make_context()
    top.module.attributes["module.chip"] = StringAttr(chip)
    pass_class("address-assign")().apply(ctx, top.module)
    pass_class("layer-group")().apply(ctx, top.module)
    top.module.verify()
    pass_class("codegen")(model_file=path, embed_debug_info=True).apply(ctx, top.module)
    return read_bmodel(path)


def interpret(top, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    interp = ModuleInterpreter(top.module, top.weights)
    interp.init()
    return interp.inference(feed)


def lowered(model, mode: str = "F32", chip: str = "tiny"):
    """An ONNX model converted to Top, canonicalized and lowered to Tpu for `chip` in `mode`."""
    from tpudsl.frontend.onnx_import import convert_onnx

    top = convert_onnx(model, "m")
    ctx = make_context()
    for name in ("shape-infer", "canonicalize", "shape-infer"):
        pass_class(name)().apply(ctx, top.module)
    pass_class("processor-assign")(chip=chip, mode=mode).apply(ctx, top.module)
    pass_class("convert-top-to-tpu")().apply(ctx, top.module)
    top.module.verify()
    return top


def assert_f32_close(got: np.ndarray, want: np.ndarray, name: str) -> None:
    """F32: max |got - want| <= 1e-5 x max |want| (the issue's 1e-5 relative, on the tensor's scale)."""
    assert got.shape == want.shape, name
    err, scale = float(np.abs(got.astype(np.float64) - want).max(initial=0)), float(np.abs(want).max(initial=0))
    assert err <= 1e-5 * max(scale, 1e-6), f"{name}: max error {err} vs scale {scale}"
