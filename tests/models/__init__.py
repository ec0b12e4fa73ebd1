"""ONNX model builders for tests (onnx.helper only, seeded random weights, no downloads).

Every builder returns a checked `onnx.ModelProto` (opset 17 unless its `opset` argument says
otherwise) that onnxruntime runs; sizes are parameters so tests can use small inputs.
`onnx_inference` runs a model in onnxruntime."""

from tests.models.cnn import densenet, mobilenetv2, resnet18
from tests.models.convnext import convnext, vit
from tests.models.east import east_decoder
from tests.models.mobile import efficientnet, shufflenet
from tests.models.runtime import onnx_inference, random_inputs
from tests.models.stylegan2 import stylegan2_block
from tests.models.transformer import transformer_block

__all__ = [
    "convnext",
    "densenet",
    "east_decoder",
    "efficientnet",
    "mobilenetv2",
    "onnx_inference",
    "random_inputs",
    "resnet18",
    "shufflenet",
    "stylegan2_block",
    "transformer_block",
    "vit",
]
