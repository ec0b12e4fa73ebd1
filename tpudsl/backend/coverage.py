"""Which Tpu ops the backend has records for, by op, form and mode: the one answer model_deploy
asks before it starts the backend (and the coverage test checks docs/backend.md's list against).

A *form* is the value of the attribute that picks the function an op computes (`FORM_ATTRS`:
the `mode` of tpu.Active, Pad, Reduce, Compare and CompareConst), None for other ops. A *mode* is the
precision the op runs in: F32, F16, BF16, or INT8 (it reads or writes an int8 tensor).
Attributes a supported form may still carry and the backend does not model (a reversed Sub,
negative pads, ...) are slicing.check_modelled's errors, which name them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from tpudsl.backend import isa
from tpudsl.backend.slicing import GLOBAL_ONLY, INT8_OPS, KINDS, attrs_of, is_int8
from tpudsl.dialects.opdef import describe

# The attribute whose value selects the op's function, by op.
FORM_ATTRS = {"tpu.Active": "mode", "tpu.Pad": "mode", "tpu.Reduce": "mode", "tpu.Compare": "mode",
              "tpu.CompareConst": "mode"}
_COMPARISONS = tuple(k for k in isa.ELEMENTWISE_X_OPS if k not in ("Div", "Pow", "Mod", "Remainder", "PRelu", "Clip"))
# The forms with records (any other form of these ops has none).
FLOAT_FORMS: dict[str, tuple[str, ...]] = {
    "tpu.Active": (*isa.ACTIVE_MODES, *isa.ACTIVE_EXTRA_MODES),
    "tpu.Pad": (*isa.PAD_MODES, *isa.REFLECT_MODES),
    "tpu.Reduce": tuple(isa.REDUCE_MODES),
    "tpu.Compare": _COMPARISONS,
    "tpu.CompareConst": _COMPARISONS,
}
_MODE_OF_DTYPE = {"f32": "F32", "f16": "F16", "bf16": "BF16"}


def has_records(op_name: str, form: str | None, mode: str) -> bool:
    """The backend has records for `op_name` in this form and mode (mode F32, F16, BF16 or INT8)."""
    if mode == "INT8":
        return op_name in INT8_OPS
    if op_name not in KINDS and op_name not in GLOBAL_ONLY:
        return False
    return op_name not in FLOAT_FORMS or form in FLOAT_FORMS[op_name]


def form_of(op: Operation) -> str | None:
    key = FORM_ATTRS.get(op.name)
    return None if key is None else str(attrs_of(op)[key])


def mode_of(op: Operation) -> str:
    """INT8 for an op on an int8 tensor, else the float type of its first tensor result."""
    if is_int8(op):
        return "INT8"
    tensors = [v for v in op.results if isinstance(v.type, TensorType)]
    return _MODE_OF_DTYPE.get(str(tensors[0].type.element_type), "F32") if tensors else "F32"


def refusal(op: Operation) -> str | None:
    """'tpu.X' op "name" (FORM) in MODE when the backend has no records for it, else None."""
    if not op.name.startswith("tpu."):
        return None
    form, mode = form_of(op), mode_of(op)
    if has_records(op.name, form, mode):
        return None
    return f"{describe(op)}{f' ({form})' if form else ''} in {mode}"
