"""The cmodel's handler of BdcRecurrent (opcode 99), merged into engine.HANDLERS: an LSTM or GRU
layer in float32, written again from ONNX's equations (default activations) one gate at a time:

    LSTM  i, f = sigmoid(pre_i + P_i c, pre_f + P_f c)   c' = f c + i tanh(pre_c)
          o = sigmoid(pre_o + P_o c')   h' = o tanh(c')   (P: record 102's peepholes, else 0)
    GRU   z, r = sigmoid(pre_z, pre_r)   h' = (1 - z) tanh(n) + z h
          n = x W_h + Wb_h + r (h R_h + Rb_h)       (linear_before_reset)
          n = x W_h + Wb_h + (r h) R_h + Rb_h       (otherwise)

where pre_k = ((x W_k + Wb_k) + h R_k) + Rb_k for gate k (W_k, R_k the gate's rows, transposed).
Its float32 matmuls need not sum in the interpreter's order: the two agree within 1e-5 relative
(docs/bmodel.md)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel.arith_extra import sigmoid
from tpudsl.backend.cmodel.memory import Fault, Memory

_F32 = np.dtype(np.float32)


class _Layer:
    """The record's tensors read from global memory, time-major ([seq, batch, ...], [dirs, batch, H])."""

    def __init__(self, m: Memory, r: isa.BdcRecurrent):
        g, hid, dirs = isa.RECURRENT_GATES[r.cell], r.hidden, r.dirs
        self.m, self.r = m, r
        x = self._read(r.src, (r.batch, r.seq, r.n_in) if r.batch_first else (r.seq, r.batch, r.n_in))
        self.x = x.transpose(1, 0, 2) if r.batch_first else x
        self.w = self._read(r.w_at, (dirs, g, hid, r.n_in))
        self.rec = self._read(r.r_at, (dirs, g, hid, hid))
        bias = self._read(r.b_at, (dirs, 2, g, hid))
        self.wb, self.rb = bias[:, 0], bias[:, 1]
        self.h0, self.c0 = self._state(r.h0_at), self._state(r.c0_at)
        self.p = self._read(getattr(r, "p_at", isa.NO_ADDR), (dirs, 3, hid))  # i, o, f

    def _read(self, at: int, shape: tuple[int, ...]) -> np.ndarray:
        if at == isa.NO_ADDR:
            return np.zeros(shape, _F32)
        return self.m.read_run(at, shape, _F32)

    def _state(self, at: int) -> np.ndarray:
        r = self.r
        if r.batch_first:
            return self._read(at, (r.batch, r.dirs, r.hidden)).transpose(1, 0, 2)
        return self._read(at, (r.dirs, r.batch, r.hidden))

    def pre(self, d: int, k: int, t: int, h: np.ndarray) -> np.ndarray:
        """Gate k's pre-activation at step t of direction d."""
        return ((self.x[t] @ self.w[d, k].T + self.wb[d, k]) + h @ self.rec[d, k].T) + self.rb[d, k]

    def write(self, y: np.ndarray, finals: list[np.ndarray]) -> None:
        """Y [seq, dirs, batch, H] and the final states [dirs, batch, H], in the record's layout."""
        r = self.r
        if r.batch_first:
            y, finals = y.transpose(2, 0, 1, 3), [s.transpose(1, 0, 2) for s in finals]
        for at, value in zip((r.dst, r.yh_at, r.yc_at), [y, *finals], strict=False):
            if at != isa.NO_ADDR:
                self.m.write_global(at, (1,), np.ascontiguousarray(value).reshape(-1))


def _lstm_step(layer: _Layer, d: int, t: int, h: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p_i, p_o, p_f = layer.p[d]
    i, f = sigmoid(layer.pre(d, 0, t, h) + p_i * c), sigmoid(layer.pre(d, 2, t, h) + p_f * c)
    c = f * c + i * np.tanh(layer.pre(d, 3, t, h))
    return sigmoid(layer.pre(d, 1, t, h) + p_o * c) * np.tanh(c), c


def _gru_step(layer: _Layer, d: int, t: int, h: np.ndarray) -> np.ndarray:
    z, reset = (sigmoid(layer.pre(d, k, t, h)) for k in range(2))
    projected = layer.x[t] @ layer.w[d, 2].T + layer.wb[d, 2]
    if layer.r.linear_before_reset:
        candidate = projected + reset * (h @ layer.rec[d, 2].T + layer.rb[d, 2])
    else:
        candidate = projected + ((reset * h) @ layer.rec[d, 2].T + layer.rb[d, 2])
    return (np.float32(1) - z) * np.tanh(candidate) + z * h


def _recurrent(m: Memory, r: isa.BdcRecurrent) -> None:
    if r.cell not in isa.RECURRENT_GATES or r.dirs not in (1, 2) or min(r.seq, r.batch, r.n_in, r.hidden) < 1 \
            or r.batch_first > 1 or r.linear_before_reset > 1 or (r.cell == 0 and r.linear_before_reset):
        raise Fault(f"BdcRecurrent: cell {r.cell}, dirs {r.dirs}, sizes {r.seq}x{r.batch}x{r.n_in}x{r.hidden}, "
                    f"batch_first {r.batch_first}, linear_before_reset {r.linear_before_reset} are not modelled")
    if r.cell == 1 and (r.c0_at != isa.NO_ADDR or r.yc_at != isa.NO_ADDR or isinstance(r, isa.BdcRecurrentPeephole)):
        raise Fault("BdcRecurrent: a GRU has no cell state (nor peepholes)")
    layer = _Layer(m, r)
    y = np.empty((r.seq, r.dirs, r.batch, r.hidden), _F32)
    hs, cs = [], []
    for d in range(r.dirs):
        h, c = layer.h0[d], layer.c0[d]
        for t in (range(r.seq) if d == 0 else reversed(range(r.seq))):
            if r.cell == 0:
                h, c = _lstm_step(layer, d, t, h, c)
            else:
                h = _gru_step(layer, d, t, h)
            y[t, d] = h
        hs.append(h)
        cs.append(c)
    layer.write(y, [np.stack(hs), np.stack(cs)])


HANDLERS: dict[type[isa.Record], Callable] = {isa.BdcRecurrent: _recurrent, isa.BdcRecurrentPeephole: _recurrent}
