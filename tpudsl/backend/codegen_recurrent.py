"""Codegen of tpu.LSTM and tpu.GRU (slicing.SELF_EMITTED: layer-group does not slice them): one
BdcRecurrent record (opcode 99; an LSTM with peepholes: BdcRecurrentPeephole, 102) over the layer's
f32 tensors in global memory. Each step reads the
state the previous step wrote, so the layer is one record, as YoloDetection's detection is."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from tpudsl.backend import isa
from tpudsl.backend.address_assign import address_of
from tpudsl.backend.chips import Chip
from tpudsl.backend.codegen import Program
from tpudsl.backend.slicing import attrs_of, check_f32, shape_of

_PEEPHOLE = 7  # tpu.LSTM's operand


def check_recurrent(op: Operation) -> None:
    """The record computes in f32 (the lowering keeps every operand and result f32); another type
    is an error naming it."""
    check_f32(op, "BdcRecurrent")


def _at(values, i: int) -> int:
    """The global address of operand or result i, NO_ADDR when it is absent (none)."""
    if not isinstance(values[i].type, TensorType):
        return isa.NO_ADDR
    return address_of(values[i])  # type: ignore[return-value]


def emit_recurrent(op: Operation, chip: Chip, prog: Program) -> None:
    """Record 99 for a checked op (emit_self runs check_recurrent first)."""
    a = attrs_of(op)
    x = shape_of(op.operands[0])
    seq, batch = (x[1], x[0]) if a["batch_first"] else (x[0], x[1])
    lstm = op.name == "tpu.LSTM"
    fields = (isa.RECURRENT_CELLS[op.name], *(_at(op.operands, i) for i in range(5)),
              _at(op.operands, 5) if lstm else isa.NO_ADDR,
              *(_at(op.results, i) for i in range(2)), _at(op.results, 2) if lstm else isa.NO_ADDR,
              seq, batch, x[2], a["hidden_size"], 2 if a["bidirectional"] else 1, int(a["batch_first"]),
              int(not lstm and a["linear_before_reset"]))
    if lstm and len(op.operands) > _PEEPHOLE:  # ONNX's P: record 102, record 99's fields and its address
        prog.records.append(isa.BdcRecurrentPeephole(*fields, _at(op.operands, _PEEPHOLE)))
    else:
        prog.records.append(isa.BdcRecurrent(*fields))
