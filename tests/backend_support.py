"""Helpers of the backend tests: lower an ONNX model for a chip, compile it to a .bmodel, run it in
the Tpu interpreter, compare F32 results; INT8: calibrate and lower, compile as model_deploy does,
and check the cmodel against the Tpu interpreter bit for bit."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr

from tpudsl.backend.bmodel import read_bmodel
from tpudsl.dialects import make_context
from tpudsl.interp import run_module
from tpudsl.passes import pass_class


def compile_for(top, chip: str, path: str = "m.bmodel", opt: int = 2):
    """Address, layer-group (`opt`) and codegen a lowered module (its module.chip replaced by `chip`)."""
    ctx = make_context()
    top.module.attributes["module.chip"] = StringAttr(chip)
    pass_class("address-assign")().apply(ctx, top.module)
    pass_class("layer-group")(opt=opt).apply(ctx, top.module)
    top.module.verify()
    pass_class("codegen")(model_file=path, embed_debug_info=True).apply(ctx, top.module)
    return read_bmodel(path)


def interpret(top, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return run_module(top.module, top.weights, feed)


def lowered(model, mode: str = "F32", chip: str = "tiny"):
    """An ONNX model converted to Top, canonicalized and lowered to Tpu for `chip` in `mode`, every op
    in `mode` (ignore_f16_overflow: F16's default would keep average pools in F32, and the tests of
    the F16 kernels and records would then not see them)."""
    from tpudsl.frontend.onnx_import import convert_onnx

    top = convert_onnx(model, "m")
    ctx = make_context()
    for name in ("shape-infer", "canonicalize", "shape-infer"):
        pass_class(name)().apply(ctx, top.module)
    pass_class("processor-assign")(chip=chip, mode=mode).apply(ctx, top.module)
    pass_class("convert-top-to-tpu")(ignore_f16_overflow=True).apply(ctx, top.module)
    top.module.verify()
    return top


def assert_f32_close(got: np.ndarray, want: np.ndarray, name: str) -> None:
    """F32: max |got - want| <= 1e-5 x max |want| (the issue's 1e-5 relative, on the tensor's scale)."""
    assert got.shape == want.shape, name
    err, scale = float(np.abs(got.astype(np.float64) - want).max(initial=0)), float(np.abs(want).max(initial=0))
    assert err <= 1e-5 * max(scale, 1e-6), f"{name}: max error {err} vs scale {scale}"


def transformed_conv_pool(d, name: str, shape: tuple[int, ...], seed: int, tail=None):
    """A small CNN as model_transform leaves it in directory `d` (`NAME.mlir`, `NAME_in_f32.npz`):
    Conv 3x3 (4 channels) + Relu + MaxPool 2x2, then `tail(g, pooled, pooled_shape)` if given."""
    import onnx

    from tests.test_backend_cmodel import Graph
    from tpudsl.cli import model_transform

    rng = np.random.default_rng(seed)
    g = Graph(rng)
    g.shapes["x"] = shape
    n, c, h, w = shape
    conv = g.node("Conv", ["x", g.const((4, c, 3, 3)), g.const((4,))], (n, 4, h, w), kernel_shape=[3, 3],
                  pads=[1, 1, 1, 1])
    relu = g.node("Relu", [conv], (n, 4, h, w))  # fused into the conv
    pooled_shape = (n, 4, h // 2, w // 2)
    pooled = g.node("MaxPool", [relu], pooled_shape, kernel_shape=[2, 2], strides=[2, 2])
    if tail is not None:
        tail(g, pooled, pooled_shape)
    onnx.save(g.model({"x": shape}, list(g.shapes)[-1]), d / f"{name}.onnx")
    np.savez(d / "in.npz", x=rng.standard_normal(shape).astype(np.float32))
    model_transform.run(["--model_name", name, "--model_def", str(d / f"{name}.onnx"), "--mlir", str(d / f"{name}.mlir"),
                         "--test_input", str(d / "in.npz")])


def assert_bit_exact(got: np.ndarray, want: np.ndarray, name: str) -> None:
    """F16/BF16 (and INT8): the same values, the same NaN positions and the same signs of zeros."""
    assert got.shape == want.shape, f"{name}: shape {got.shape} vs {want.shape}"
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    same = (g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w))
    if not same.all():
        at = tuple(np.argwhere(~same)[0])
        raise AssertionError(f"{name}: {int((~same).sum())} of {same.size} elements differ, first at {at}: "
                             f"{g[at]!r} vs {w[at]!r}")


def int8_module(model, shape, d, chip: str = "tiny", samples: int = 2, qtable: str = "", asymmetric: bool = False,
                matmul_perchannel: bool = False):
    """The model calibrated (minmax) on `samples` random inputs and lowered to INT8 for `chip`
    (`qtable`: lines `NAME MODE` keeping those ops in a float mode; `asymmetric`: zero points and
    uint8; `matmul_perchannel`: a MatMul's weight per output column)."""
    from tests.test_tpu_float import top_module

    return top_int8_module(top_module(model), model.graph.input[0].name, shape, d, chip, samples, qtable, asymmetric,
                           matmul_perchannel)


def top_int8_module(top, name: str, shape, d, chip: str = "tiny", samples: int = 2, qtable: str = "",
                    asymmetric: bool = False, matmul_perchannel: bool = False):
    """int8_module of a Top module whose one input is `name`."""
    rng = np.random.default_rng(0)
    write_minmax_table(d, [{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(samples)], top=top)
    ctx = make_context()
    pass_class("import-calibration-table")(file=str(d / "table"), asymmetric=asymmetric).apply(ctx, top.module)
    pass_class("processor-assign")(chip=chip, mode="INT8").apply(ctx, top.module)
    if qtable:
        (d / "qtable").write_text(qtable)
    pass_class("convert-top-to-tpu")(qtable=str(d / "qtable") if qtable else "", asymmetric=asymmetric,
                                     matmul_perchannel=matmul_perchannel).apply(ctx, top.module)
    top.module.verify()
    return top


def assert_dump_equal(got: dict[str, np.ndarray], want: dict[str, np.ndarray], mode: str) -> None:
    """A .bmodel's --dump_all_tensors against the Tpu interpreter's: the same names in the same order,
    each tensor of the same dtype and within model_deploy's rule for `mode` (bmodel_mismatch)."""
    from tpudsl.cli.compare import bmodel_mismatch

    assert list(got) == list(want), (list(got), list(want))
    for name, w in want.items():
        assert got[name].dtype == w.dtype, name
        assert bmodel_mismatch(got[name], w, mode) is None, name


def write_minmax_table(d, samples: list[dict[str, np.ndarray]], mlir: str = "", top=None) -> None:
    """The minmax calibration table of the module (file `mlir`, or `top` in memory) on `samples`, as `d/table`."""
    from tpudsl.lowering.calibration import calibrate
    from tpudsl.lowering.calibration_table import table_text

    feeds = {str(i): feed for i, feed in enumerate(samples)}
    result = calibrate(mlir, list(feeds), feeds.__getitem__, need_histograms=False, mod=top)
    (d / "table").write_text(table_text(result.table("minmax"), 2048, len(samples)))


def deploy_int8(d, name: str, model, draw, tolerance: str, *flags: str) -> int:
    """The ONNX `model` as a user deploys it in INT8, in directory `d`: model_transform (`NAME.mlir`,
    `NAME_in_f32.npz`: the test input `draw(rng)`, seed 7), a minmax table of four samples `draw(rng)`
    (seed 0), model_deploy INT8 on bm1684x with `flags` (`NAME.bmodel`). Returns its exit status."""
    import onnx

    from tpudsl.cli import model_deploy, model_transform

    onnx.save(model, d / f"{name}.onnx")
    np.savez(d / "in.npz", **draw(np.random.default_rng(7)))
    model_transform.run(["--model_name", name, "--model_def", str(d / f"{name}.onnx"),
                         "--mlir", str(d / f"{name}.mlir"), "--test_input", str(d / "in.npz")])
    rng = np.random.default_rng(0)
    write_minmax_table(d, [draw(rng) for _ in range(4)], mlir=str(d / f"{name}.mlir"))
    return model_deploy.run(["--mlir", str(d / f"{name}.mlir"), "--quantize", "INT8", "--processor", "bm1684x",
                             "--calibration_table", str(d / "table"), "--model", str(d / f"{name}.bmodel"),
                             "--test_input", str(d / f"{name}_in_f32.npz"), "--tolerance", tolerance, *flags])


def compile_int8(top, path: str, opt: int = 2):
    """What model_deploy runs after the Tpu check: weight-reorder (merges each INT8 conv's bias,
    multipliers and shifts), address-assign, layer-group, codegen."""
    ctx = make_context()
    for name in ("weight-reorder", "address-assign"):
        pass_class(name)().apply(ctx, top.module)
    pass_class("layer-group")(opt=opt).apply(ctx, top.module)
    top.module.verify()
    pass_class("codegen")(model_file=path, embed_debug_info=True).apply(ctx, top.module)
    return read_bmodel(path)


def int8_bit_exact(top, feed: dict[str, np.ndarray], path: str, opt: int = 2):
    """Run the INT8 module in the Tpu interpreter, compile it (compile_int8) and run the .bmodel on the
    cmodel: every output equal bit for bit. Returns the .bmodel's records."""
    from tpudsl.backend import isa
    from tpudsl.backend.cmodel import run_bmodel

    want = interpret(top, feed)
    bm = compile_int8(top, path, opt)
    got, _ = run_bmodel(bm, feed)
    for name, w in want.items():
        assert got[name].dtype == w.dtype and np.array_equal(got[name], w), \
            f"{name}: {np.count_nonzero(got[name] != w)} of {w.size} values differ"
    return isa.decode(bm.commands)


def secs_of(op) -> tuple[int, int]:
    """(nsecs, hsecs) of an op's slicing: its own (alone), or its layer group's (in a tpu.Group)."""
    holder = op.parent_op() if op.parent_op().name == "tpu.Group" else op
    return holder.attributes["nsecs"].value.data, holder.attributes["hsecs"].value.data
