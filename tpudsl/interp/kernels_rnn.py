"""Recurrent kernels: top.LSTM and top.GRU, ONNX's equations with the default activations
(sigmoid gates, tanh candidates), in float32.

Each direction projects the whole input through its filter at once (one matmul over every time
step, batch and gate); only the recurrence is a loop over time, one [batch, gates*H] matmul a
step. Direction 1 of a bidirectional layer runs from the last step to the first. Gate order is
ONNX's: LSTM i, o, f, c; GRU z, r, h."""

from __future__ import annotations

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs
from tpudsl.interp.kernels_elementwise import sigmoid


def _time_major(x: Array, a: KernelAttrs) -> Array:
    """[seq, batch, in] whatever the layout."""
    return x.transpose(1, 0, 2) if a["batch_first"] else x


def _initial(state: Array | None, d: int, batch: int, a: KernelAttrs) -> Array:
    """Direction d's [batch, H] initial state (zeros when the operand is none)."""
    if state is None:
        return np.zeros((batch, a["hidden_size"]), np.float32)
    return state[:, d] if a["batch_first"] else state[d]


def _projections(x: Array, w: Array, b: Array | None, d: int) -> tuple[Array, Array | None]:
    """Direction d's input projection x W^T + Wb for every step, [seq, batch, gates*H], and its
    recurrence bias Rb (None without a bias)."""
    xw = x @ w[d].T
    if b is None:
        return xw, None
    width = w.shape[1]
    xw += b[d, :width]
    return xw, b[d, width : 2 * width]


def _steps(seq: int, d: int) -> range:
    return range(seq) if d == 0 else range(seq - 1, -1, -1)


def _outputs(ys: list[Array], finals: list[list[Array]], a: KernelAttrs) -> list[Array]:
    """Y [seq, dirs, batch, H] and each final state [dirs, batch, H], in the op's layout."""
    y = np.stack(ys, axis=1)
    states = [np.stack(f) for f in finals]
    if a["batch_first"]:
        return [y.transpose(2, 0, 1, 3), *(s.transpose(1, 0, 2) for s in states)]
    return [y, *states]


def _lstm(ins: Inputs, a: KernelAttrs) -> list[Array]:
    x, w, r, b, h0, c0 = ins[:6]
    peephole = ins[7] if len(ins) > 7 else None
    x = _time_major(x, a)
    seq, batch, _ = x.shape
    hidden = a["hidden_size"]
    ys, hs, cs = [], [], []
    for d in range(w.shape[0]):
        xw, rb = _projections(x, w, b, d)
        h, c = _initial(h0, d, batch, a), _initial(c0, d, batch, a)
        # ONNX's peepholes P = [Pi, Po, Pf]: i and f see the previous cell state, o the new one
        p_i, p_o, p_f = (None,) * 3 if peephole is None else np.split(peephole[d], 3)
        y = np.empty((seq, batch, hidden), np.float32)
        for t in _steps(seq, d):
            g = xw[t] + h @ r[d].T
            if rb is not None:
                g += rb
            pre_i, pre_o, pre_f = (g[:, k * hidden : (k + 1) * hidden] for k in range(3))
            if peephole is not None:
                pre_i, pre_f = pre_i + p_i * c, pre_f + p_f * c
            i, f = sigmoid(pre_i), sigmoid(pre_f)
            c = f * c + i * np.tanh(g[:, 3 * hidden :])
            o = sigmoid(pre_o if peephole is None else pre_o + p_o * c)
            h = o * np.tanh(c)
            y[t] = h
        ys.append(y)
        hs.append(h)
        cs.append(c)
    return _outputs(ys, [hs, cs], a)


def _gru(ins: Inputs, a: KernelAttrs) -> list[Array]:
    x, w, r, b, h0 = ins[:5]
    x = _time_major(x, a)
    seq, batch, _ = x.shape
    hidden = a["hidden_size"]
    before_reset = a["linear_before_reset"]
    ys, hs = [], []
    for d in range(w.shape[0]):
        xw, rb = _projections(x, w, b, d)
        rb = np.zeros(3 * hidden, np.float32) if rb is None else rb
        r_zr, r_h = r[d, : 2 * hidden].T, r[d, 2 * hidden :].T
        h = _initial(h0, d, batch, a)
        y = np.empty((seq, batch, hidden), np.float32)
        for t in _steps(seq, d):
            zr = sigmoid(xw[t, :, : 2 * hidden] + h @ r_zr + rb[: 2 * hidden])
            z, reset = zr[:, :hidden], zr[:, hidden:]
            if before_reset:  # reset applied after the recurrence's linear map (PyTorch's)
                recurrent = reset * (h @ r_h + rb[2 * hidden :])
            else:
                recurrent = (reset * h) @ r_h + rb[2 * hidden :]
            candidate = np.tanh(xw[t, :, 2 * hidden :] + recurrent)
            h = (1 - z) * candidate + z * h
            y[t] = h
        ys.append(y)
        hs.append(h)
    return _outputs(ys, [hs], a)


KERNELS: dict[str, Kernel] = {
    "top.LSTM": Kernel(_lstm),
    "top.GRU": Kernel(_gru),
}
