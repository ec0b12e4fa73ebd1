"""A CRNN text recogniser (Shi et al.; meijieru's crnn.pytorch) as torch.onnx.export (opset 13-17) writes it.

The conv stack of the paper (3x3 convs, BatchNorm on convs 2, 4 and 6, MaxPools 2x2 then (2, 1)
with padding (0, 1), a final 2x2 conv without padding) takes a 32-pixel-high grey line to height 1;
`conv.squeeze(2)` and `permute(2, 0, 1)` give [T, N, C]. BidirectionalLSTM is nn.LSTM(bidirectional)
as the exporter writes it: one ONNX LSTM, direction bidirectional, W [2, 4H, C], R [2, 4H, H] and B
[2, 8H] with torch's gate rows (i, f, g, o) reordered to ONNX's (i, o, f, c) (here each row is drawn
independently, so they are drawn in ONNX's order: a reorder would be unobservable), sequence_lens absent,
initial_h / initial_c the zeros nn.LSTM makes when no state is passed (folded to initializers);
its Y [T, 2, N, H] Transposed to [T, N, 2, H] and Reshaped to [T, N, 2H]. Then `view(T * b, h)`,
the embedding Linear (a Gemm), `view(T, b, -1)` and LogSoftmax over the classes (CTC's input).
Widths are 1/8 of the paper's (64..512 -> 8..64).
"""

from __future__ import annotations

import numpy as np
import onnx

from tests.models.builder import GraphBuilder


def bilstm(g: GraphBuilder, x: str, name: str, cin: int, hidden: int, batch: int) -> str:
    """nn.LSTM(cin, hidden, bidirectional=True) on [T, N, cin] -> [T, N, 2 * hidden]."""
    k = 1 / np.sqrt(hidden)  # torch's LSTM init U(-1/sqrt(H), 1/sqrt(H))
    u = lambda *shape: g.rng.uniform(-k, k, shape).astype(np.float32)  # noqa: E731
    w, r, b = u(2, 4 * hidden, cin), u(2, 4 * hidden, hidden), u(2, 8 * hidden)
    zeros = np.zeros((2, batch, hidden), np.float32)
    inputs = [x, g.const(f"{name}.W", w), g.const(f"{name}.R", r), g.const(f"{name}.B", b), "",
              g.const(f"{name}.h0", zeros), g.const(f"{name}.c0", zeros)]
    y = f"{name}.Y"
    g.nodes.append(onnx.helper.make_node("LSTM", inputs, [y, f"{name}.Y_h", f"{name}.Y_c"], name=name,
                                         direction="bidirectional", hidden_size=hidden))
    y = g.node("Transpose", [y], f"{name}.transpose", perm=[0, 2, 1, 3])
    return g.node("Reshape", [y, g.shape_const(f"{name}.shape", [0, 0, -1])], f"{name}.output")


def crnn(width: int = 64, classes: int = 11, scale: int = 8, hidden: int = 16, opset: int = 13,
         seed: int = 0) -> onnx.ModelProto:
    """Input `input` [1, 1, 32, width] (grey); output `output` [T, 1, classes] log-probabilities,
    T = width / 4 + 1."""
    g = GraphBuilder("crnn", seed)
    ch = [c // scale for c in (64, 128, 256, 256, 512, 512, 512)]
    x = g.input("input", (1, 1, 32, width))
    cin = 1
    for i, c in enumerate(ch):
        k, pad = (2, 0) if i == 6 else (3, 1)
        x = g.conv(x, f"cnn.conv{i}", cin, c, k, pad=pad)
        if i in (2, 4, 6):
            x = g.batchnorm(x, f"cnn.batchnorm{i}", c)
        x = g.relu(x, f"cnn.relu{i}")
        if i in (0, 1):
            x = g.node("MaxPool", [x], f"cnn.pooling{i}", kernel_shape=[2, 2], strides=[2, 2])
        elif i in (3, 5):
            x = g.node("MaxPool", [x], f"cnn.pooling{i}", kernel_shape=[2, 2], strides=[2, 1], pads=[0, 1, 0, 1])
        cin = c
    x = g.node("Squeeze", [x, g.shape_const("squeeze.axes", [2])], "squeeze")
    x = g.node("Transpose", [x], "permute", perm=[2, 0, 1])
    t = width // 4 + 1
    x = bilstm(g, x, "rnn.0.rnn", cin, hidden, 1)
    x = g.node("Reshape", [x, g.shape_const("rnn.0.view.shape", [t, 2 * hidden])], "rnn.0.view")
    x = g.gemm(x, "rnn.0.embedding", 2 * hidden, classes)
    x = g.node("Reshape", [x, g.shape_const("rnn.0.unview.shape", [t, 1, -1])], "rnn.0.unview")
    g.output(g.node("LogSoftmax", [x], "output", axis=2))
    return g.model(opset)
