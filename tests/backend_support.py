"""Helpers of the backend tests: compile a Tpu module for a chip, run it on the cmodel and in the
Tpu interpreter.

Until engineer "bmodel"'s `tpudsl/backend/bmodel.py` is on main, `bmodel_api()` puts a stand-in
with exactly its API (write_bmodel / read_bmodel / Bmodel) in its place, for the tests only: an
in-memory dictionary, no file format."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import StringAttr

from tpudsl.dialects import make_context
from tpudsl.interp import ModuleInterpreter
from tpudsl.passes import pass_class


def bmodel_api() -> types.ModuleType:
    try:
        import tpudsl.backend.bmodel as real
        return real
    except ImportError:
        pass
    standin = types.ModuleType("tpudsl.backend.bmodel")
    files: dict[str, object] = {}

    @dataclass
    class Bmodel:
        header: dict
        coeffs: bytes
        commands: bytes
        debug: list = field(default_factory=list)

    def write_bmodel(path, header, coeffs, commands, debug):
        files[str(path)] = Bmodel(header, coeffs, commands, list(debug))

    def read_bmodel(path):
        return files[str(path)]

    standin.Bmodel, standin.write_bmodel, standin.read_bmodel = Bmodel, write_bmodel, read_bmodel
    sys.modules["tpudsl.backend.bmodel"] = standin
    return standin


def compile_for(top, chip: str, path: str = "m.bmodel", verify: bool = True):
    """Address, layer-group and codegen a lowered module (its module.chip replaced by `chip`)."""
    api = bmodel_api()
    ctx = make_context()
    top.module.attributes["module.chip"] = StringAttr(chip)
    pass_class("address-assign")().apply(ctx, top.module)
    pass_class("layer-group")().apply(ctx, top.module)
    if verify:
        top.module.verify()
    pass_class("codegen")(model_file=path, embed_debug_info=True).apply(ctx, top.module)
    return api.read_bmodel(path)


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
