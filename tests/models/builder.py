"""A small helper for writing ONNX graphs with onnx.helper: named layers, seeded random weights.

Tensor names follow the layer names given by the model code ("layer1.0.conv1"), because they
become the loc names users see in .mlir files, npz keys and npz_tool reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class GraphBuilder:
    """Accumulates nodes, initializers, inputs and outputs; `model()` returns the checked ModelProto."""

    def __init__(self, name: str, seed: int = 0):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []

    # --- graph plumbing -------------------------------------------------------------------
    def input(self, name: str, shape: Sequence[int], elem_type: int = TensorProto.FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, list(shape)))
        return name

    def output(self, name: str) -> None:
        # Shapes are left to onnx shape inference; the elem type is all ORT needs.
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: Sequence[str], name: str, **attrs) -> str:
        """Add one single-output node whose output tensor is called `name`."""
        self.nodes.append(helper.make_node(op, list(inputs), [name], name=name, **attrs))
        return name

    def model(self, opset: int = OPSET) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.initializers)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="tpudsl-tests"
        )
        # onnxruntime 1.x reads IR version <= 10; onnx's default may be newer.
        model.ir_version = min(model.ir_version, 9)
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        onnx.checker.check_model(model, full_check=True)
        return model

    # --- random weights ---------------------------------------------------------------------
    def weight(self, name: str, shape: Sequence[int], fan_in: int) -> str:
        """He-initialized weights, so that activations keep their scale through deep stacks."""
        std = np.sqrt(2.0 / fan_in)
        return self.const(name, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def small(self, name: str, shape: Sequence[int], scale: float = 0.1) -> str:
        return self.const(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def edit_weights(self, edit: Callable[[str, np.ndarray], None]) -> None:
        """`edit(name, array)` may change any initializer's array in place (a test's planted outlier)."""
        for i, init in enumerate(self.initializers):
            w = numpy_helper.to_array(init).copy()
            edit(init.name, w)
            self.initializers[i] = numpy_helper.from_array(w, init.name)

    # --- layers -----------------------------------------------------------------------------
    def conv(
        self, x: str, name: str, cin: int, cout: int, k: int, stride: int = 1, pad: int | None = None,
        group: int = 1, bias: bool = True, dilation: int = 1,
    ) -> str:
        pad = dilation * (k // 2) if pad is None else pad
        w = self.weight(f"{name}.weight", (cout, cin // group, k, k), fan_in=cin // group * k * k)
        inputs = [x, w] + ([self.small(f"{name}.bias", (cout,))] if bias else [])
        extra = {"dilations": [dilation, dilation]} if dilation != 1 else {}
        return self.node(
            "Conv", inputs, name, kernel_shape=[k, k], strides=[stride, stride],
            pads=[pad] * 4, group=group, **extra,
        )

    def batchnorm(self, x: str, name: str, c: int) -> str:
        gamma = self.const(f"{name}.weight", self.rng.uniform(0.5, 1.5, c).astype(np.float32))
        beta = self.small(f"{name}.bias", (c,))
        mean = self.small(f"{name}.running_mean", (c,))
        var = self.const(f"{name}.running_var", self.rng.uniform(0.5, 1.5, c).astype(np.float32))
        return self.node("BatchNormalization", [x, gamma, beta, mean, var], name, epsilon=1e-5)

    def conv_bn(self, x: str, name: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1) -> str:
        """Conv without bias followed by BatchNormalization, as torchvision models export."""
        y = self.conv(x, f"{name}.conv", cin, cout, k, stride, group=group, bias=False)
        return self.batchnorm(y, f"{name}.bn", cout)

    def relu(self, x: str, name: str) -> str:
        return self.node("Relu", [x], name)

    def relu6(self, x: str, name: str) -> str:
        lo = self.const(f"{name}.min", np.array(0.0, np.float32))
        hi = self.const(f"{name}.max", np.array(6.0, np.float32))
        return self.node("Clip", [x, lo, hi], name)

    def gemm(self, x: str, name: str, cin: int, cout: int) -> str:
        """Linear layer as torch exports it: Gemm with transB=1 and a [cout, cin] weight."""
        w = self.weight(f"{name}.weight", (cout, cin), fan_in=cin)
        b = self.small(f"{name}.bias", (cout,))
        return self.node("Gemm", [x, w, b], name, transB=1)

    def shape_const(self, name: str, values: int | Sequence[int]) -> str:
        """An int64 constant: a shape, axes, starts..., or a 0-d index (a Gather's)."""
        return self.const(name, np.array(values, dtype=np.int64))

    def split(self, x: str, name: str, sizes: Sequence[int], axis: int, outs: Sequence[str] | None = None,
              sizes_name: str | None = None) -> list[str]:
        """torch's split/chunk/unbind as the exporter writes them from opset 13: a Split whose sizes
        are an int64 input (`sizes_name`, else `{name}.split`); its outputs `outs`, else `name`,
        `name_1`, ..."""
        outs = list(outs) if outs is not None else [f"{name}_{i}" if i else name for i in range(len(sizes))]
        split = self.shape_const(sizes_name or f"{name}.split", list(sizes))
        self.nodes.append(helper.make_node("Split", [x, split], outs, name=name, axis=axis))
        return outs
