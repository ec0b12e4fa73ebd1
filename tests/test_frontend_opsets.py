"""One small network in the forms of every default-domain opset from 7 to 21, against onnxruntime.

The ops whose inputs/attributes moved between opsets (Unsqueeze/Squeeze axes, ReduceMean axes,
Split sizes, Clip bounds, Pad pads, Softmax's flattening before 13, Resize vs Upsample) are built
the way each opset spells them."""

from __future__ import annotations

import numpy as np
import pytest
from frontend_support import check, make_model, rand
from onnx import helper as h


def i64(*v):
    return np.array(v, np.int64)


def network(opset: int):
    inits = {"w": rand(4, 3, 3, 3), "b": rand(4), "s": rand(4), "bb": rand(4), "m": rand(4),
             "v": rand(4, low=0.5, high=1.5), "fc": rand(5, 8), "fcb": rand(5)}
    n = [
        h.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
        h.make_node("BatchNormalization", ["conv", "s", "bb", "m", "v"], ["bn"]),
    ]
    if opset < 11:
        n.append(h.make_node("Clip", ["bn"], ["clip"], min=0.0, max=6.0))
    else:
        inits.update(lo=np.array(0.0, np.float32), hi=np.array(6.0, np.float32))
        n.append(h.make_node("Clip", ["bn", "lo", "hi"], ["clip"]))
    n.append(h.make_node("MaxPool", ["clip"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]))
    if opset < 9:
        n.append(h.make_node("Upsample", ["pool"], ["up"], scales=[1.0, 1.0, 2.0, 2.0]))
    elif opset < 10:
        inits["sc"] = np.array([1, 1, 2, 2], np.float32)
        n.append(h.make_node("Upsample", ["pool", "sc"], ["up"]))
    elif opset < 11:
        inits["sc"] = np.array([1, 1, 2, 2], np.float32)
        n.append(h.make_node("Resize", ["pool", "sc"], ["up"]))
    else:
        inits.update(roi=np.zeros(0, np.float32), sc=np.array([1, 1, 2, 2], np.float32))
        n.append(h.make_node("Resize", ["pool", "roi", "sc"], ["up"], coordinate_transformation_mode="asymmetric",
                             nearest_mode="floor"))
    if opset >= 11:
        inits["pads"] = i64(0, 0, 1, 0, 0, 0, 0, 1)
        n.append(h.make_node("Pad", ["up", "pads"], ["pad"]))
    else:
        n.append(h.make_node("Pad", ["up"], ["pad"], pads=[0, 0, 1, 0, 0, 0, 0, 1]))
    if opset < 13:
        n.append(h.make_node("Split", ["pad"], ["sa", "sb"], axis=1, split=[2, 2]))
    else:
        inits["split"] = i64(2, 2)
        n.append(h.make_node("Split", ["pad", "split"], ["sa", "sb"], axis=1))
    n.append(h.make_node("Concat", ["sb", "sa"], ["cat"], axis=1))
    if opset < 18:
        n.append(h.make_node("ReduceMean", ["cat"], ["mean"], axes=[2, 3], keepdims=1))
    else:
        inits["rax"] = i64(2, 3)
        n.append(h.make_node("ReduceMean", ["cat", "rax"], ["mean"], keepdims=1))
    if opset < 13:
        n.append(h.make_node("Squeeze", ["mean"], ["sq"], axes=[3]))
        n.append(h.make_node("Unsqueeze", ["sq"], ["unsq"], axes=[3]))
    else:
        inits.update(ax3=i64(3))
        n.append(h.make_node("Squeeze", ["mean", "ax3"], ["sq"]))
        n.append(h.make_node("Unsqueeze", ["sq", "ax3"], ["unsq"]))
    n.append(h.make_node("Mul", ["unsq", "cat"], ["scaled"]))
    n.append(h.make_node("GlobalAveragePool", ["scaled"], ["gap"]))
    n.append(h.make_node("Flatten", ["gap"], ["flat"]))
    n.append(h.make_node("Concat", ["flat", "flat"], ["flat2"], axis=1))
    n.append(h.make_node("Gemm", ["flat2", "fc", "fcb"], ["logits"], transB=1))
    n.append(h.make_node("Softmax", ["logits"], ["prob"], axis=1))
    return make_model(n, {"x": [1, 3, 8, 8]}, ["prob"], inits, opset)


@pytest.mark.parametrize("opset", range(7, 22))
def test_network_in_every_opset(opset):
    check(network(opset), {"x": rand(1, 3, 8, 8)}, rtol=1e-4, atol=1e-6,
          op_names=["top.Conv", "top.BatchNorm", "top.Clip", "top.Upsample", "top.Pad", "top.Slice", "top.Reduce",
                    "top.Squeeze", "top.Unsqueeze", "top.MatMul", "top.Softmax"])
