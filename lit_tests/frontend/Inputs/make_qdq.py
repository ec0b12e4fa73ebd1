"""Write a small QDQ ONNX model in one form: python make_qdq.py FORM OUT.onnx.

The model is x -> Q -> DQ -> Conv(DQ(w)) -> y -> Q -> DQ -> out (y, without its pair: `uncovered`); FORM changes one Q/DQ node (the refusals of
frontend/qdq.py) or keeps them all modelled (`ok`)."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(form: str, out: str) -> None:
    opset = 21 if form in ("block", "int4", "float8") else 13
    act_zp = {"int4": np.array(0, "int8"), "int16": np.array(0, "int16")}.get(form, np.array(0, "int8"))
    inits = {
        "s": np.array(0.01 if form != "per_axis_act" else [0.01, 0.02], np.float32),
        "zp": act_zp if form != "per_axis_act" else np.zeros(2, "int8"),
        "wq": np.arange(-18, 18, dtype=np.int8).reshape(2, 2, 3, 3),
        "ws": np.array([0.1, 0.2], np.float32),
        "wzp": np.array([0, 1] if form == "weight_zp" else [0, 0], np.int8),
    }
    if form != "weight_peak":  # each output channel peaks at |q| = 127, as onnxruntime's symmetric weights
        inits["wq"][:, 0, 0, 0] = [127, -127]
    q_attrs = {"axis": 1}
    if form == "block":
        q_attrs["block_size"] = 2
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"], name="x_q", **q_attrs),
             helper.make_node("DequantizeLinear", ["xq", "s", "zp"], ["xd"], name="x_dq", **q_attrs),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wzp"], ["w"], name="w_dq",
                              axis=1 if form == "weight_axis" else 0),
             helper.make_node("Conv", ["xd", "w"], ["y"], name="conv")]
    if form != "uncovered":  # y's own pair, with a zero point: the range [(-128 - 3) s, (127 - 3) s]
        inits["s2"], inits["zp2"] = np.array(0.5, np.float32), np.array(3, np.int8)
        nodes += [helper.make_node("QuantizeLinear", ["y", "s2", "zp2"], ["yq"], name="y_q"),
                  helper.make_node("DequantizeLinear", ["yq", "s2", "zp2"], ["out"], name="y_dq")]
    if form == "int4":
        inits["zp"] = None
        zp = helper.make_tensor("zp", TensorProto.INT4, [], [0])
    elif form == "float8":
        inits["zp"] = None
        zp = helper.make_tensor("zp", TensorProto.FLOAT8E4M3FN, [], [0])
    else:
        zp = None
    tensors = [numpy_helper.from_array(v, k) for k, v in inits.items() if v is not None] + ([zp] if zp else [])
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
                              [helper.make_tensor_value_info("y" if form == "uncovered" else "out", TensorProto.FLOAT, [1, 2, 2, 2])], tensors)
    if form == "int_output":  # the int8 tensor is an output too
        graph.output.append(helper.make_tensor_value_info("xq", TensorProto.INT8, [1, 2, 4, 4]))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
