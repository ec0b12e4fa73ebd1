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


def compile_for(top, chip: str, path: str = "m.bmodel"):
    """Address, layer-group and codegen a lowered module (its module.chip replaced by `chip`)."""
    api = bmodel_api()
    ctx = make_context()
    top.module.attributes["module.chip"] = StringAttr(chip)
    pass_class("address-assign")().apply(ctx, top.module)
    pass_class("layer-group")().apply(ctx, top.module)
    top.module.verify()
    pass_class("codegen")(model_file=path, embed_debug_info=True).apply(ctx, top.module)
    return api.read_bmodel(path)


def interpret(top, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    interp = ModuleInterpreter(top.module, top.weights)
    interp.init()
    return interp.inference(feed)
