"""tpu.Yuv2rgbFormula in every form it models (src_format I420, YV12, NV12, NV21; dst RGB, BGR; formula
_601_limited, _601_full; round_mode HalfAwayFromZero, HalfToEven), lowered and compiled as model_deploy does,
run on the cmodel (record 86): == the Tpu interpreter == BT.601 written here in exact integers (the frame
unpacked here from each format's definition). Second opinion: Pillow's JPEG YCbCr -> RGB (full range,
BT.601 with 1.402/0.344136/0.714136/1.772, fixed point) within 1 of _601_full (TPU-MLIR's digits differ in
the fourth decimal). The frames hold an exact tie of G in each formula (HalfToEven differs there)."""

from __future__ import annotations

import itertools

import numpy as np
from PIL import Image
from xdsl.dialects.builtin import Float32Type, IntegerType, Signedness, TensorType

from tests.backend_support import compile_for, interpret
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import create
from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.ir.module import new_top_module
from tpudsl.passes import pass_class

N, H, W = 2, 6, 8
# (luma offset, 100000 x the (Y, U - 128, V - 128) coefficients of R, G, B): TPU-MLIR's five decimals.
FORMULAS = {
    "_601_limited": (16, [(116438, 0, 159603), (116438, -39176, -81297), (116438, 201723, 0)]),
    "_601_full": (0, [(100000, 0, 140189), (100000, -34581, -71490), (100000, 177098, 0)]),
}
FORMS = list(itertools.product(range(4), ("_601_limited", "_601_full"), ("HalfAwayFromZero", "HalfToEven")))


def planes_of(frames: np.ndarray, src_format: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Y, U, V) at full resolution: each chroma sample repeated on its 2 x 2 pixels."""
    n = frames.shape[0]
    flat = frames.reshape(n, -1).astype(np.int64)
    y, chroma = flat[:, :H * W].reshape(n, H, W), flat[:, H * W:]
    q = H * W // 4
    if src_format == 0:
        u, v = chroma[:, :q], chroma[:, q:]
    elif src_format == 1:
        v, u = chroma[:, :q], chroma[:, q:]
    elif src_format == 2:
        u, v = chroma[:, 0::2], chroma[:, 1::2]
    else:
        v, u = chroma[:, 0::2], chroma[:, 1::2]
    full = [c.reshape(n, H // 2, W // 2).repeat(2, axis=1).repeat(2, axis=2) for c in (u, v)]
    return y, full[0], full[1]


def bt601(y, u, v, formula: str, round_mode: str) -> np.ndarray:
    """[n, 3, H, W] R, G, B: each the exact rational rounded (a tie k + 1/2 up, or to even) and clipped."""
    offset, rows = FORMULAS[formula]
    out = []
    for ky, ku, kv in rows:
        num = ky * (y - offset) + ku * (u - 128) + kv * (v - 128)
        q, r = np.divmod(num + 50000, 100000)
        if round_mode == "HalfToEven":
            q = np.where((r == 0) & (q % 2 == 1), q - 1, q)
        out.append(np.clip(q, 0, 255))
    return np.stack(out, axis=1)


# (Y, U, V) whose G is k + 1/2 exactly, k + 1 odd: 38.5 in _601_limited, 40.5 in _601_full (HalfToEven: 38, 40).
TIES = {"_601_limited": (5, 217, 22), "_601_full": (0, 168, 52)}


def frames_with_ties(rng: np.random.Generator) -> np.ndarray:
    """Random frames; frame i's first 2 x 2 block is TIES' i-th under I420 (the other formats read other bytes
    there)."""
    frames = rng.integers(0, 256, (N, H * 3 // 2, W), dtype=np.uint8)
    flat = frames.reshape(N, -1)
    for i, (y, u, v) in enumerate(TIES.values()):
        flat[i, [0, 1, W, W + 1]] = y
        flat[i, H * W] = u
        flat[i, H * W + H * W // 4] = v
    return frames


def test_every_form_on_the_cmodel_equals_the_interpreter_and_bt601(tmp_path):
    u8 = UniformQuantizedType.make("u8", Float32Type(), [1.0], [0])
    shape = [N, H * 3 // 2, W]
    top = new_top_module("yuv", [TensorType(IntegerType(8, Signedness.UNSIGNED), shape)])
    block = top.main_func().body.block
    inp = create("top.Input", [block.args[0]], [TensorType(u8, shape)], loc="frames")
    block.add_op(inp)
    outs = []
    for i, (src, formula, round_mode) in enumerate(FORMS):
        op = create("top.Yuv2rgbFormula", [inp.results[0]], [TensorType(u8, [N, 3, H, W])], loc=f"o{i}", attrs={
            "src_format": src, "dst_format": 4 + i % 2, "image_format": "UINT8", "formula_mode": formula,
            "round_mode": round_mode})
        block.add_op(op)
        outs.append(op.results[0])
    top.set_outputs(outs)
    ctx = make_context()
    pass_class("processor-assign")(chip="tiny", mode="F32").apply(ctx, top.module)
    pass_class("convert-top-to-tpu")().apply(ctx, top.module)
    top.module.verify()
    frames = frames_with_ties(np.random.default_rng(5))
    tpu = interpret(top, {"frames": frames})
    got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "yuv.bmodel")), {"frames": frames})
    for i, formula in enumerate(TIES):  # the ties are ties: the two roundings differ there
        planes = planes_of(frames[i:i + 1], 0)
        assert bt601(*planes, formula, "HalfToEven")[0, 1, 0, 0] + 1 == bt601(*planes, formula, "HalfAwayFromZero")[0, 1, 0, 0]
    for i, (src, formula, round_mode) in enumerate(FORMS):
        want = bt601(*planes_of(frames, src), formula, round_mode)
        if i % 2:
            want = want[:, ::-1]
        np.testing.assert_array_equal(tpu[f"o{i}"], want, err_msg=f"interpreter o{i}")
        np.testing.assert_array_equal(got[f"o{i}"], want, err_msg=f"cmodel o{i}")


def test_full_range_is_pillows_jpeg_ycbcr_within_one():
    """Pillow's YCbCr -> RGB (JPEG's full-range BT.601, its own fixed point) on the same upsampled planes."""
    from tpudsl.interp.table import KERNELS
    from tpudsl.interp.kernel import KernelAttrs

    frames = frames_with_ties(np.random.default_rng(6))
    attrs = KernelAttrs({"src_format": 2, "dst_format": 4, "image_format": "UINT8", "formula_mode": "_601_full",
                         "round_mode": "HalfAwayFromZero"}, out_dtypes=[np.dtype(np.uint8)])
    ours = KERNELS["top.Yuv2rgbFormula"].run([frames], attrs)
    y, u, v = planes_of(frames, 2)
    for i in range(N):
        ycbcr = Image.merge("YCbCr", [Image.fromarray(p[i].astype(np.uint8)) for p in (y, u, v)])
        pillow = np.asarray(ycbcr.convert("RGB")).transpose(2, 0, 1).astype(np.int64)
        assert np.abs(ours[i].astype(np.int64) - pillow).max() <= 1
