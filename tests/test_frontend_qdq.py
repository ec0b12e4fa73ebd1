"""QDQ models: a small conv net quantized by onnxruntime's quantize_static (QuantFormat.QDQ,
per-channel int8 weights; int8 symmetric or uint8 asymmetric activations), imported by
model_transform and deployed by model_deploy without a calibration table.

* The imported ranges against the Q/DQ scales and zero points read here from the ONNX file:
  symmetric int8, [-127 s, 127 s]; uint8, [-zp s, (255 - zp) s] (docs/quantization.md, "QDQ models").
* The Top interpreter runs the float graph: onnxruntime's run of the model with each Q/DQ pair
  replaced by the clamp to its storage range (weights dequantized) is the reference; a ReLU6 the
  quantizer deleted keeps its upper clamp (`test_deleted_relu6_keeps_its_upper_clamp`).
* The deployed INT8 model (Tpu interpreter) against onnxruntime's run of the QDQ model, as written
  (ORT_DISABLE_ALL: no fused integer kernels): cosine >= 0.99. Not bit-exact: onnxruntime rounds
  each float op's result to the next Q's grid, we requantize with multiplier/shift, and the bias is
  re-quantized from the float bias.
* The Conv filters and the Gemm weight the INT8 lowering stores are onnxruntime's int8 weights, exactly.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

from tests.test_tpu_float import cosine, run
from tpudsl.backend import isa
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.cli import model_deploy, model_transform
from tpudsl.dialects.opdef import loc_name
from tpudsl.dialects.quant import CalibratedQuantizedType
from tpudsl.ir.module import load_module
from tpudsl.ir.npz import read_npz

SHAPE = (1, 3, 8, 8)


def _float_net() -> onnx.ModelProto:
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    nodes = [helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1] * 4, strides=[2, 2]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["gap"]),
             helper.make_node("Flatten", ["gap"], ["flat"]),
             helper.make_node("Gemm", ["flat", "w3", "b3"], ["output"], transB=1)]
    graph = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4])],
                              [w("w1", 8, 3, 3, 3), w("b1", 8), w("w2", 8, 8, 3, 3), w("b2", 8), w("w3", 4, 8), w("b3", 4)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


class _Reader(CalibrationDataReader):
    def __init__(self):
        rng = np.random.default_rng(1)
        self._feeds = iter([{"input": rng.random(SHAPE, dtype=np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self._feeds, None)


@pytest.fixture(scope="module", params=["int8", "uint8"])
def deployed(request, tmp_path_factory):
    """The QDQ model, model_transform's module and model_deploy's INT8 Tpu module (symmetric for
    int8 activations, --asymmetric for uint8; --quantize QDQ for the latter, TPU-MLIR's spelling)."""
    symmetric = request.param == "int8"
    d = tmp_path_factory.mktemp("qdq")
    onnx.save(_float_net(), d / "f.onnx")
    quantize_static(str(d / "f.onnx"), str(d / "q.onnx"), _Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8 if symmetric else QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=True, calibrate_method=CalibrationMethod.MinMax,
                    extra_options={"ActivationSymmetric": symmetric, "WeightSymmetric": True})
    np.savez(d / "in.npz", input=np.random.default_rng(7).random(SHAPE, dtype=np.float32))
    assert model_transform.run(["--model_name", "q", "--model_def", str(d / "q.onnx"), "--mlir", str(d / "q.mlir"),
                                "--test_input", str(d / "in.npz")]) == 0
    flags = ["--quantize", "INT8"] if symmetric else ["--quantize", "QDQ", "--asymmetric"]
    assert model_deploy.run(["--mlir", str(d / "q.mlir"), *flags, "--processor", "bm1684x",
                             "--model", str(d / "q.bmodel"), "--test_input", str(d / "q_in_f32.npz")]) == 0
    tpu = load_module(d / f"q_bm1684x_int8_{'sym' if symmetric else 'asym'}_tpu.mlir")
    return onnx.load(d / "q.onnx"), load_module(d / "q.mlir"), tpu, symmetric, d


def _qdq_params(model: onnx.ModelProto) -> dict[str, tuple[float, int, int]]:
    """Per quantized activation (the QuantizeLinear's input and its DequantizeLinear's output):
    scale, zero point, storage type."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    params = {n.output[0]: (n.input[0], (float(inits[n.input[1]]), int(inits[n.input[2]]), inits[n.input[2]].dtype))
              for n in model.graph.node if n.op_type == "QuantizeLinear"}
    dequantized = {n.output[0]: params[n.input[0]][1] for n in model.graph.node
                   if n.op_type == "DequantizeLinear" and n.input[0] in params}
    return {**dict(params.values()), **dequantized}


def test_imported_ranges_are_the_qdq_scales(deployed):
    qdq, top, _, symmetric, _ = deployed
    params = _qdq_params(qdq)
    ranges = {}
    for op in top.main_func().walk():
        t = op.results[0].type if op.results else None
        if t is not None and isinstance(getattr(t, "element_type", None), CalibratedQuantizedType):
            ranges[loc_name(op)] = t.element_type
    assert top.state == "TOP_CALIBRATED"
    checked = 0
    for name, (scale, zp, dtype) in params.items():
        if name not in ranges:
            continue  # a tensor Top fused away (the Conv before its Relu)
        lo, hi = ranges[name].min, ranges[name].max
        if symmetric:
            assert dtype == np.int8 and zp == 0
            assert (lo, hi) == pytest.approx((-127 * scale, 127 * scale), rel=1e-12), name
        else:
            assert dtype == np.uint8
            assert (lo, hi) == pytest.approx((-zp * scale, (255 - zp) * scale), rel=1e-12), name
        checked += 1
    assert checked >= 5, (sorted(params), sorted(ranges))


def _float_reference(qdq: onnx.ModelProto) -> onnx.ModelProto:
    """The QDQ model with each activation QuantizeLinear replaced by the clamp to its storage range
    (Clip to (qmin - zp) * scale, (qmax - zp) * scale: what DQ(Q(x)) does but the rounding) and its
    DequantizeLinear by an Identity; the weights still dequantized by DQ nodes."""
    model = onnx.ModelProto.FromString(qdq.SerializeToString())
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    nodes = []
    for n in model.graph.node:
        if n.op_type == "QuantizeLinear":
            zp, scale = inits[n.input[2]], float(inits[n.input[1]])
            bounds = []
            for end, q in (("_low", np.iinfo(zp.dtype).min), ("_high", np.iinfo(zp.dtype).max)):
                bound = numpy_helper.from_array(np.array((q - int(zp)) * scale, np.float32), n.output[0] + end)
                model.graph.initializer.append(bound)
                bounds.append(bound.name)
            nodes.append(helper.make_node("Clip", [n.input[0], *bounds], [n.output[0]]))
        elif n.op_type == "DequantizeLinear" and n.input[0] not in inits:
            nodes.append(helper.make_node("Identity", [n.input[0]], [n.output[0]]))
        else:
            nodes.append(n)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


def _sessions(qdq: onnx.ModelProto):
    as_written = onnxruntime.SessionOptions()
    as_written.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return (onnxruntime.InferenceSession(qdq.SerializeToString(), as_written),
            onnxruntime.InferenceSession(_float_reference(qdq).SerializeToString(), as_written))


def test_top_runs_the_float_graph_and_int8_is_onnxruntimes_qdq(deployed):
    qdq, top, tpu, _, _ = deployed
    qdq_session, float_session = _sessions(qdq)
    rng = np.random.default_rng(99)  # not the calibration samples
    for _ in range(4):
        feed = {"input": rng.random(SHAPE, dtype=np.float32)}
        np.testing.assert_allclose(run(top, feed)["output"], float_session.run(None, feed)[0], rtol=1e-5, atol=1e-6)
        assert cosine(run(tpu, feed)["output"], qdq_session.run(None, feed)[0]) >= 0.99


def test_int8_weights_are_onnxruntimes(deployed):
    """The Conv filters and the Gemm's weight (per output column) the INT8 lowering stores are the
    ONNX file's int8 values."""
    qdq, _, tpu, _, _ = deployed
    inits = {t.name: numpy_helper.to_array(t) for t in qdq.graph.initializer}
    want = sorted(inits[n].tobytes() for n in ("w1_quantized", "w2_quantized", "w3_quantized"))
    got = sorted(tpu.weight_of(op.operands[1].owner).tobytes() for op in tpu.main_func().walk()
                 if op.name in ("tpu.Conv2D", "tpu.MatMul"))
    assert got == want


def test_clamps_are_stored_integer_clamps(deployed):
    """Each pair's clamp shares its input's scale and zero point, so INT8 lowers it as a clamp of
    stored integers, never a table (before: one tpu.Lut per pair not fused, 7 of the 17 Tpu ops
    symmetric, 3 of 11 asymmetric): gone where it covers the storage range, its name moved onto the
    op computing its input, so that every pair's name is still a Tpu tensor's; a Relu on one scale
    (symmetric: onnxruntime gives r1 and r2 their inputs' scales) is a tpu.Clip on int8 from the zero
    point. The .bmodel (the Clip: record 66 on int8) runs bit-exact to the Tpu interpreter."""
    _, top, tpu, symmetric, d = deployed
    pairs = {loc_name(op) for op in top.main_func().walk() if op.name == "top.Clip"}
    tpu_names = {loc_name(op): op.name for op in tpu.main_func().walk()}
    assert "tpu.Lut" not in tpu_names.values()
    assert pairs <= set(tpu_names), sorted(pairs - set(tpu_names))
    clips = [op for op in tpu.main_func().walk() if op.name == "tpu.Clip"]
    assert [(op.attributes["min"].value.data, op.attributes["max"].value.data) for op in clips] == \
        ([(0.0, 127.0)] * 2 if symmetric else [])
    bm = read_bmodel(str(d / "q.bmodel"))
    assert any(isinstance(r, isa.BdcConstX) for r in isa.decode(bm.commands)) == symmetric
    got, _ = run_bmodel(bm, read_npz(str(d / "q_in_f32.npz")))
    want = np.load(d / f"q_bm1684x_int8_{'sym' if symmetric else 'asym'}_tpu_outputs.npz")["output"]
    assert np.array_equal(got["output"], want)


def _relu6_net() -> onnx.ModelProto:
    """input -> Conv -> Clip(0, 6) -> output: a ReLU6 that onnxruntime's QDQ quantizer deletes."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array((rng.standard_normal((4, 3, 3, 3)) * 3).astype(np.float32), "w")
    b = numpy_helper.from_array(np.full(4, 2, np.float32), "b")
    bounds = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("lo", 0), ("hi", 6))]
    nodes = [helper.make_node("Conv", ["input", "w", "b"], ["c"], pads=[1] * 4),
             helper.make_node("Clip", ["c", "lo", "hi"], ["output"])]
    graph = helper.make_graph(nodes, "relu6", [helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [w, b, *bounds])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_deleted_relu6_keeps_its_upper_clamp(tmp_path):
    """onnxruntime's quantize_static (uint8 activations) deletes the ReLU6 and leaves its clamp to
    the Q after it, whose range is [0, 255 s] = [0, 6]: the QDQ model's output is DQ(Q(conv)). The
    Top module must clamp there too. References: onnxruntime on `_float_reference` (the pairs as
    clamps to their storage range, written here: equal within float32 rounding), and on the QDQ
    model as written (ORT_DISABLE_ALL): it never exceeds its ceiling 255 s, nor may the Top module.
    Before (the pair a Relu, no upper bound) the Top module gave conv's values above 6 here: up to
    10.9 away from the reference (16.88 for 6.0), 47 of the 256 outputs differing (measured with the
    clamps' upper bounds replaced by 3e38)."""
    onnx.save(_relu6_net(), tmp_path / "f.onnx")
    quantize_static(str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"), _Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
                    calibrate_method=CalibrationMethod.MinMax, extra_options={"WeightSymmetric": True})
    qdq = onnx.load(tmp_path / "q.onnx")
    assert "Clip" not in {n.op_type for n in qdq.graph.node}  # the quantizer deleted the ReLU6
    assert model_transform.run(["--model_name", "q", "--model_def", str(tmp_path / "q.onnx"),
                                "--mlir", str(tmp_path / "q.mlir")]) == 0
    top = load_module(tmp_path / "q.mlir")
    qdq_session, float_session = _sessions(qdq)
    feed = {"input": np.random.default_rng(5).random(SHAPE, dtype=np.float32)}  # within the input's range
    ours, want, as_written = run(top, feed)["output"], float_session.run(None, feed)[0], qdq_session.run(None, feed)[0]
    ceiling = as_written.max()
    assert (want >= ceiling - 1e-6).mean() > 0.1  # the upper clamp binds on a tenth of the outputs or more
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)
    assert ours.max() <= ceiling + 1e-6


@pytest.mark.parametrize("opset", [10, 13])
def test_pair_is_the_clamp_to_its_storage_range(opset, tmp_path):
    """x -> Q -> DQ -> out, int8 with zero point 0 (s = 0.01): out is x clamped to [-128 s, 127 s]
    (the formula here, not the import's); opset 10's Clip takes its bounds as attributes, 11 on as inputs."""
    s = np.float32(0.01)
    inits = [numpy_helper.from_array(np.array(s), "s"), numpy_helper.from_array(np.array(0, np.int8), "zp")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "zp"], ["out"])]
    graph = helper.make_graph(nodes, "pair", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 8])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), tmp_path / "p.onnx")
    assert model_transform.run(["--model_name", "p", "--model_def", str(tmp_path / "p.onnx"),
                                "--mlir", str(tmp_path / "p.mlir")]) == 0
    x = np.linspace(-3, 3, 16, dtype=np.float32).reshape(2, 8)
    got = run(load_module(tmp_path / "p.mlir"), {"x": x})["out"]
    np.testing.assert_array_equal(got, np.clip(x, np.float32(-128 * s), np.float32(127 * s)))
