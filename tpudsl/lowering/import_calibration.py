"""import-calibration-table: the Top tensors take their calibrated range as element type.

    tpuc-opt x.mlir --import-calibration-table="file=x_cali_table asymmetric=false"

`tensor<1x8xf32>` becomes `tensor<1x8x!quant.calibrated<f32<min:max>>>` for every float result
of a Top op (weights and `none` excepted) and the module state goes from TOP_F32 to
TOP_CALIBRATED, as TPU-MLIR's ImportCalibrationTable pass does. The range, from the table's
threshold th, min and max (TPU-MLIR's getMinMax):

  Abs                           [-th, th]
  Sigmoid (not log), Softmax    [0, 1]
  Mul of one value twice, or of Sigmoid/Relu results only      [0, th]
  Sub                           [min < 0 ? -th : -1e-5, th]
  any other op, symmetric       [min < 0 ? -th : 0, th]
  any other op, asymmetric      [min, max]
  and an op with do_relu (but Sub) starts at 0.

A float tensor the table does not name is an error (TPU-MLIR would leave it uncalibrated).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from tpudsl.dialects.opdef import SPECS, AttrView, result_names
from tpudsl.dialects.quant import CalibratedQuantizedType
from tpudsl.interp.module_interpreter import numpy_dtype
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.lowering.calibration import tensor_names
from tpudsl.lowering.calibration_table import TableEntry, read_table

SUB_FLOOR = -1e-5  # TPU-MLIR's lower bound of a Sub whose observed min is not negative


@dataclass(frozen=True)
class ImportCalibrationTablePass(ModulePass):
    """Give Top tensors the ranges of a calibration table (!quant.calibrated element types)."""

    name = "import-calibration-table"

    file: str = ""
    asymmetric: bool = True  # TPU-MLIR's default; its scripts pass asymmetric=False for symmetric int8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.file:
            raise TpudslError("import-calibration-table needs the table: file=NAME_cali_table")
        require_top_f32(op)  # before the table is read: a module in the wrong state is the first error
        import_table(op, read_table(self.file, set(tensor_names(op))), self.asymmetric, self.file)


def require_top_f32(module: ModuleOp) -> None:
    state = module.attributes.get("module.state")
    if state != StringAttr("TOP_F32"):
        found = f"'{state.data}'" if isinstance(state, StringAttr) else "none"
        raise TpudslError(f"import-calibration-table needs module.state \"TOP_F32\", the module has {found}")


def import_table(module: ModuleOp, entries: Mapping[str, TableEntry], asymmetric: bool, where: str | None) -> None:
    """The pass's work on a table already read (the searches lower with tables they hold, not
    files): every float Top tensor of the TOP_F32 `module` takes its range from `entries`; `where`
    (the table's file, if any) is named in the errors."""
    require_top_f32(module)

    def range_of(inner: Operation, name: str) -> tuple[float, float]:
        entry = entries.get(name)
        if entry is None:
            raise TpudslError(f"no entry for tensor '{name}' ({inner.name})", where)
        return calibrated_range(inner, entry, asymmetric)

    calibrate_top(module, range_of, where)


def calibrate_top(module: ModuleOp, range_of: Callable[[Operation, str], tuple[float, float] | None],
                  where: str | None = None) -> list[str]:
    """Give every float result of a Top op (weights and `none` excepted; integer, bool and unranked
    tensors are not quantized) the `!quant.calibrated` range `range_of(op, tensor name)`, and the
    module state TOP_CALIBRATED. The names `range_of` has no range for (None) are returned, and
    then the module is not marked calibrated."""
    missing: list[str] = []
    for op in module.walk():
        if not op.name.startswith("top.") or op.name in ("top.Weight", "top.None"):
            continue
        for result, name in zip(op.results, result_names(op), strict=True):
            t = result.type
            if not isinstance(t, TensorType):
                continue  # `none`, or unranked (shape-infer first; TPU-MLIR needs ranked types too)
            dtype = numpy_dtype(t.element_type)
            if dtype is None or dtype.kind != "f":
                continue  # integer and bool tensors are not quantized
            found = range_of(op, name)
            if found is None:
                missing.append(name)
                continue
            lo, hi = found
            try:
                calibrated = CalibratedQuantizedType.make(t.element_type, lo, hi)
            except VerifyException:
                raise TpudslError(f"tensor '{name}' gets the empty range [{lo}, {hi}]", where) from None
            Rewriter.replace_value_with_new_type(result, TensorType(calibrated, t.get_shape()))
    if not missing:
        for inner in module.walk():
            if isinstance(inner, FuncOp) and not inner.is_declaration:
                inner.update_function_type()
        module.attributes["module.state"] = StringAttr("TOP_CALIBRATED")
    return missing


def calibrate_from_qdq(module: ModuleOp, ranges: dict[str, tuple[float, float]]) -> None:
    """A QDQ model's ranges (frontend/qdq.py) as its calibration: every float Top tensor takes the
    range of its Q/DQ pair; a float tensor no pair named is one error naming them."""
    missing = calibrate_top(module, lambda op, name: ranges.get(name))
    if missing:
        raise TpudslError("QDQ model: no QuantizeLinear/DequantizeLinear pair gives the range of "
                          f"{', '.join(missing)} (every float tensor of a QDQ model needs one; "
                          "quantize the model with all ops quantized)")


def calibrated_range(op: Operation, entry: TableEntry, asymmetric: bool) -> tuple[float, float]:
    th = entry.threshold
    attrs = AttrView(op.attributes, SPECS[op.name])
    if op.name == "top.Abs":
        lo, hi = -th, th
    elif (op.name == "top.Sigmoid" and not attrs.get("log", False)) or op.name == "top.Softmax":
        lo, hi = 0.0, 1.0
    elif op.name == "top.Mul":
        same = all(v == op.operands[0] for v in op.operands)
        positive = all(v.owner.name in ("top.Sigmoid", "top.Relu") for v in op.operands)
        lo, hi = (0.0 if same or positive else (-th if entry.min < 0 else 0.0)), th
    elif op.name == "top.Sub":
        lo, hi = (-th if entry.min < 0 else SUB_FLOOR), th
    elif not asymmetric:
        lo, hi = (-th if entry.min < 0 else 0.0), th
    else:
        lo, hi = entry.min, entry.max
    if op.name != "top.Sub" and attrs.get("do_relu", False):
        lo = 0.0
    return lo, hi
