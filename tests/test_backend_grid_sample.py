"""tpu.GridSampler through the backend: one BdcGridSample record (98; 101 for a volumetric one), the
cmodel against the Tpu interpreter (F32 within 1e-5 relative) in every mode x padding x align_corners, on grids with
points far outside, past the border and inside; in F16/BF16 modules the op stays F32 (casts around
it) and the record is the same."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.backend_support import assert_f32_close, compile_for, interpret
from tests.test_backend_fillins import lowered_text
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module
from tpudsl.ir.printer import print_module

X, GRID = (2, 3, 5, 6), (2, 4, 7, 2)
X3, GRID3 = (2, 3, 4, 5, 6), (2, 3, 4, 5, 3)  # volumetric


def grid_sampler_text(mode: int, padding: int, align: bool, x=X, grid=GRID) -> str:
    t, u = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (x, grid))
    o = f"tensor<{'x'.join(map(str, (*x[:2], *grid[1:-1])))}xf32>"
    attrs = f"{{mode = {mode} : i64, padding_mode = {padding} : i64, align_corners = {str(align).lower()}}}"
    return (f'module attributes {{module.chip = "ALL", module.mode = "F32", module.name = "m", module.platform = '
            f'"ONNX", module.state = "TOP_F32", module.weight_file = "m_w.npz"}} {{\n'
            f"  func.func @main(%arg0: {t}, %arg1: {u}) -> {o} {{\n"
            f'    %0 = "top.Input"(%arg0) : ({t}) -> {t} loc("x")\n'
            f'    %1 = "top.Input"(%arg1) : ({u}) -> {u} loc("g")\n'
            f'    %2 = "top.GridSampler"(%0, %1) {attrs} : ({t}, {u}) -> {o} loc("y")\n'
            f"    return %2 : {o}\n  }}\n}}\n")


def feed(seed: int, x=X, grid=GRID) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    points = rng.uniform(-1.3, 1.3, grid)
    far = points[:, 0, :3].shape
    points[:, 0, :3] = rng.uniform(3, 6, far) * np.sign(rng.uniform(-1, 1, far))  # far outside
    return {"x": rng.uniform(-2, 2, x).astype(np.float32), "g": points.astype(np.float32)}


@pytest.mark.parametrize("mode,padding,align", list(itertools.product((0, 1, 2), (0, 1, 2), (False, True))))
def test_cmodel_matches_the_interpreter(tmp_path, mode, padding, align):
    top = lowered_text(tmp_path / "m.mlir", grid_sampler_text(mode, padding, align), "F32")
    inputs = feed(6 * mode + 2 * padding + align)
    want = interpret(top, inputs)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    (record,) = [r for r in isa.decode(bm.commands) if isinstance(r, isa.BdcGridSample)]
    assert (record.mode, record.padding, record.align) == (mode, padding, int(align))
    got, _ = run_bmodel(bm, inputs)
    assert_f32_close(got["y"], want["y"], f"mode {mode} padding {padding} align {align}")


@pytest.mark.parametrize("mode,padding", list(itertools.product((0, 1), (0, 1, 2))))
def test_volumetric_cmodel_matches_the_interpreter(tmp_path, mode, padding):
    """A 5-D input at a 3-D grid: record 101 (trilinear or nearest), align_corners both ways over the cases."""
    align = bool((mode + padding) % 2)
    top = lowered_text(tmp_path / "m.mlir", grid_sampler_text(mode, padding, align, X3, GRID3), "F32")
    inputs = feed(3 * mode + padding, X3, GRID3)
    want = interpret(top, inputs)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    (record,) = [r for r in isa.decode(bm.commands) if isinstance(r, isa.BdcGridSample)]
    assert isinstance(record, isa.BdcGridSample3D) and (record.d, record.od) == (X3[2], GRID3[1])
    got, _ = run_bmodel(bm, inputs)
    assert_f32_close(got["y"], want["y"], f"mode {mode} padding {padding} align {align}")


@pytest.mark.parametrize("quant", ["F16", "BF16"])
def test_half_modules_keep_grid_sampler_f32(tmp_path, quant):
    top = lowered_text(tmp_path / "m.mlir", grid_sampler_text(0, 2, False), quant)
    (line,) = [ln for ln in print_module(top.module).splitlines() if '"tpu.GridSampler"' in ln]
    assert "f16" not in line and line.count("xf32>") == 3, line
    inputs = feed(7)
    want = interpret(top, inputs)
    got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), inputs)
    assert_f32_close(got["y"], want["y"], quant)  # the result stays f32: F32's bound


def test_an_f16_input_is_an_error_naming_the_op_the_types_and_the_record(tmp_path):
    """A hand-written module (the lowering keeps the op f32): the record reads and writes f32 only."""
    top = lowered_text(tmp_path / "m.mlir", grid_sampler_text(0, 0, False), "F32")
    shape = "x".join(map(str, X))
    text = print_module(top.module, debuginfo=True).replace(f"{shape}xf32", f"{shape}xf16")
    (tmp_path / "f16.mlir").write_text(text)
    with pytest.raises(TpudslError, match=r"""backend: 'tpu.GridSampler' op "y": tensors of types \['f16', 'f32'\] """
                                          r"are not modelled \(BdcGridSample reads and writes f32\)"):
        compile_for(load_module(tmp_path / "f16.mlir"), "tiny", str(tmp_path / "f16.bmodel"))
    assert not (tmp_path / "f16.bmodel").exists()
