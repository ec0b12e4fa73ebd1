"""The passes of TPU-MLIR's deploy command line (mlir_shell.py's tpu_opt_options and
tpu_ada_options) that tpudsl has no work for, and the three that do work here: `--strip-io-quant`
(int8, f16 and bf16 inputs and outputs; quant_output_bf16), `--processor-tpu-optimize` (the
Permutes that do not fold to 4-D split, permute_split.py) and `--weight-deduplicate`
(`--core-parallel` has its own module, core_parallel.py).

    tpuc-opt X_tpu.mlir --mlir-disable-threading --strip-io-quant="quant_input=False ..."
      --processor-tpu-optimize --dev-parallel --weight-reorder --subnet-divide="dynamic=False"
      --op-reorder --topo-sort --layer-group="opt=2 ..." --core-parallel
      --after-layergroup-weight-reorder --address-assign -o X_final.mlir

Each pass here is registered so that line runs unchanged, and each of the others checks the precondition under
which doing nothing is what TPU-MLIR's pass does too (one device, one core, one static subnet,
...) and where it stands in the line (before --layer-group or
before --address-assign), instead of being a blind identity. An option value asking for what
tpudsl does not model is an error naming the pass, the option and what is supported.
docs/tpuc-opt.md ("TPU-MLIR's deploy command lines") has the table of decisions.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (BFloat16Type, Float16Type, Float32Type, FunctionType, IntegerAttr, ModuleOp,
                                   StringAttr, TensorType)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tpudsl.backend.permute_split import split_wide_permutes
from tpudsl.dialects.opdef import create, value_name
from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.ir.diagnostics import TpudslError, check_option
from tpudsl.ir.module import top_module_of


def _state(module: ModuleOp) -> str:
    state = module.attributes.get("module.state")
    return state.data if isinstance(state, StringAttr) else "not set"


def before_address_assign(module: ModuleOp, pass_name: str) -> None:
    """A pass of the lowered Tpu module that must run before --address-assign fixes its tensors."""
    if _state(module) != "TPU_LOWERED":
        raise TpudslError(f"{pass_name}: module.state is {_state(module)}; it runs on a lowered Tpu module "
                          "(TPU_LOWERED), before --address-assign")


def before_layer_group(module: ModuleOp, pass_name: str) -> None:
    """A pass that works on the ungrouped ops: before --layer-group (and so before --address-assign)."""
    before_address_assign(module, pass_name)
    if any(o.name == "tpu.Group" or "nsecs" in o.attributes for o in module.walk()):
        raise TpudslError(f"{pass_name}: the module is already layer-grouped; it runs before --layer-group")


@dataclass(frozen=True)
class StripIOQuantPass(ModulePass):
    """Strip the quantizing cast after an input / the dequantizing cast before an output (TPU-MLIR's
    quant_input/quant_output): the bmodel then takes and gives int8/uint8 data in the quant type.

    As TPU-MLIR's StripIOQuant: a `tpu.Cast` to a `!quant.uniform` type fed by a `top.Input` with
    one use goes, and the input takes the cast's type (it keeps its name; the function's argument
    stays float, as TPU-MLIR's); a `tpu.Cast` from a `!quant.uniform` type whose only use is the
    return goes, and the return gives its operand (with the operand's name). quant_input_list /
    quant_output_list choose inputs / outputs by 1-based index (empty: all). An f32 -> f16/bf16
    cast at an input and an f16/bf16 -> f32 cast at an output go the same way (TPU-MLIR's
    isF32toF16 / isF16toF32): the bmodel then takes and gives f16/bf16 data. A cast behind a
    tpu.Reshape/tpu.Unsqueeze that is the input's one use goes too (TPU-MLIR's "input -> reshape ->
    cast"): the input and the view take the cast's element type and keep their names. Stricter than
    TPU-MLIR on purpose: the view must have one use (TPU-MLIR does not check the Unsqueeze's, and its
    other readers would see the retyped data), the cast must be one of the above and
    quant_input_list applies; other casts stay, as in TPU-MLIR."""

    name = "strip-io-quant"

    quant_input: bool = False
    quant_output: bool = False
    quant_input_list: str = ""
    quant_output_list: str = ""
    quant_output_bf16: bool = False
    quant_input_int8: bool = False
    quant_output_int8: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for option in ("quant_input_int8", "quant_output_int8"):
            check_option(self.name, option, getattr(self, option), (False,),
                         "tpudsl strips only the INT8, F16 and BF16 casts of quant_input/quant_output")
        inputs, outputs = self._indices("quant_input_list"), self._indices("quant_output_list")
        before_layer_group(op, self.name)
        funcs = [f for f in op.body.block.ops if isinstance(f, FuncOp) and f.sym_name.data == "main"]
        if not funcs or not (self.quant_input or self.quant_output or self.quant_output_bf16):
            return
        func = funcs[0]
        block = func.body.block
        ret = block.last_op
        assert isinstance(ret, ReturnOp)
        self._check_in_range("quant_input_list", inputs, len(block.args), "input")
        self._check_in_range("quant_output_list", outputs, len(ret.operands), "output")
        for i, arg in enumerate(block.args):
            readers = [u.operation for u in arg.uses if u.operation.name == "top.Input"]
            if self.quant_input and (not inputs or i + 1 in inputs) and len(readers) == 1:
                self._strip_input(readers[0])
        for i, value in enumerate(list(ret.operands)):
            cast = value.owner
            if (self.quant_output and (not outputs or i + 1 in outputs) and isinstance(cast, Operation)
                    and cast.name == "tpu.Cast" and len(list(value.uses)) == 1):
                self._strip_output(cast)
        if self.quant_output_bf16 and not self.quant_output:  # TPU-MLIR: quant_output wins
            _bf16_outputs(ret)
        func.function_type = FunctionType.from_lists(func.function_type.inputs.data,
                                                     [v.type for v in ret.operands])

    def _indices(self, option: str) -> set[int]:
        text = getattr(self, option)
        parts = [t.strip() for t in text.split(",")] if text.strip() else []
        if not all(t.isdigit() and int(t) >= 1 for t in parts):
            raise TpudslError(f"{self.name}: {option}={text} is not a list of 1-based indices (e.g. 1,3)")
        return {int(t) for t in parts}

    def _check_in_range(self, option: str, indices: set[int], count: int, what: str) -> None:
        """An index past @main's inputs (outputs) names nothing: a mistake, not a silent no-op."""
        if indices and max(indices) > count:
            raise TpudslError(f"{self.name}: {option}={getattr(self, option)} names {what} {max(indices)}, but @main "
                              f"has {count} {what}{'s' * (count != 1)}")

    def _strip_input(self, source: Operation) -> None:
        uses = list(source.results[0].uses)
        user = uses[0].operation if len(uses) == 1 else None
        view = None  # TPU-MLIR's "input -> reshape/unsqueeze -> cast": the view takes the cast's type too
        if user is not None and user.name in ("tpu.Reshape", "tpu.Unsqueeze"):
            after = list(user.results[0].uses)
            view, user = user, (after[0].operation if len(after) == 1 else None)
        if user is None or user.name != "tpu.Cast" or not _strippable(*_ends(user)):
            return  # as TPU-MLIR: only a cast to a quant type, or f32 -> F16/BF16, is stripped
        cast = user
        element = _element(cast.results[0])
        typed = _retyped(source, element)
        if view is not None:  # the view keeps its name; it reads the retyped input
            new_view = _retyped(view, element, [typed.results[0], *view.operands[1:]])
            view.results[0].replace_all_uses_with(new_view.results[0])
            view.detach()
            view.erase()
            typed_result = new_view.results[0]
        else:
            typed_result = typed.results[0]
        cast.results[0].replace_all_uses_with(typed_result)
        cast.detach()
        cast.erase()
        source.detach()
        source.erase()

    def _strip_output(self, cast: Operation) -> None:
        if not _strippable(cast.operands[0], cast.results[0]):
            return  # as TPU-MLIR: only a cast from a quant type, or F16/BF16 -> f32, is stripped
        cast.results[0].replace_all_uses_with(cast.operands[0])
        cast.detach()
        cast.erase()


def _bf16_outputs(ret: ReturnOp) -> None:
    """quant_output_bf16 (TPU-MLIR's ForceOutputQuantBF16Pattern): each f32 output is cast to bf16
    by a new tpu.Cast named `<output>_bf16` (round to nearest even); other outputs stay."""
    for i, value in enumerate(list(ret.operands)):
        if isinstance(_element(value), Float32Type):
            cast = create("tpu.Cast", [value], [TensorType(BFloat16Type(), value.type.get_shape())],
                          loc=f"{value_name(value)}_bf16")
            Rewriter.insert_op(cast, InsertPoint.before(ret))
            ret.operands[i] = cast.results[0]


def _retyped(op: Operation, element: Attribute, operands: list[SSAValue] | None = None) -> Operation:
    """`op` (a top.Input, tpu.Reshape or tpu.Unsqueeze) with its name and attributes and its result's
    shape, of element type `element`, inserted before it (a result's type is fixed in xDSL)."""
    result = TensorType(element, op.results[0].type.get_shape())
    new = type(op).create(operands=list(op.operands) if operands is None else operands, result_types=[result],
                          attributes=dict(op.attributes), properties=dict(op.properties), location=op.location)
    Rewriter.insert_op(new, InsertPoint.before(op))
    return new


def _element(value: SSAValue) -> Attribute:
    t = value.type
    return t.element_type if isinstance(t, TensorType) else t


def _ends(cast: Operation) -> tuple[SSAValue, SSAValue]:
    return cast.results[0], cast.operands[0]


def _strippable(side: SSAValue, f32_side: SSAValue) -> bool:
    """An IO cast TPU-MLIR strips: `side` (the cast's result at an input, its operand at an
    output) is a quant type, or F16/BF16 with `f32_side` (the other end) f32."""
    if isinstance(_element(side), UniformQuantizedType):
        return True
    return isinstance(_element(side), (Float16Type, BFloat16Type)) and isinstance(_element(f32_side), Float32Type)


@dataclass(frozen=True)
class ProcessorTpuOptimizePass(ModulePass):
    """Chip-specific Tpu rewrites (TPU-MLIR): a Permute that does not fold to 4-D split into moves; before --layer-group.

    TPU-MLIR's patterns here are performance rewrites of Tpu ops for one chip (permute and
    matmul forms, casts). tpudsl's backend emits every other Tpu op as lowered; its one rewrite is
    the split of a Permute its one strided load cannot do (permute_split.py)."""

    name = "processor-tpu-optimize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        before_layer_group(op, self.name)
        split_wide_permutes(op)


@dataclass(frozen=True)
class DevParallelPass(ModulePass):
    """Distribute the model over devices (TPU-MLIR); tpudsl: one device, checks module.devices is 1.

    With one device TPU-MLIR's pass only wraps the function in a sub-module per device; tpudsl
    keeps the single module that codegen reads."""

    name = "dev-parallel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # TPU-MLIR's processor-assign records num_device as module.devices; tpudsl's accepts only 1
        # and records nothing, so absent means 1
        value = op.attributes.get("module.devices")
        count = value.value.data if isinstance(value, IntegerAttr) else 1
        if count != 1:
            raise TpudslError(f"{self.name}: module.devices is {count}, but tpudsl compiles for one "
                              "(processor-assign num_device=1): nothing here distributes the model")
        before_layer_group(op, self.name)


@dataclass(frozen=True)
class SubnetDividePass(ModulePass):
    """Split into TPU/CPU and dynamic subnets (TPU-MLIR); tpudsl: one static TPU subnet, checks it is one.

    Every Tpu op tpudsl lowers runs on the TPU (model_deploy refuses ops without records), with
    static shapes, so the whole of @main is the one subnet; dynamic=true is not modelled."""

    name = "subnet-divide"

    dynamic: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_option(self.name, "dynamic", self.dynamic, (False,), "tpudsl compiles static shapes only")
        funcs = [f.sym_name.data for f in op.body.block.ops if isinstance(f, FuncOp)]
        if funcs != ["main"]:
            raise TpudslError(f"{self.name}: the module has functions {', '.join(funcs) or 'none'}; "
                              "tpudsl compiles one function @main as one subnet")
        before_layer_group(op, self.name)


@dataclass(frozen=True)
class OpReorderPass(ModulePass):
    """Reorder ops to shorten tensor lifetimes (TPU-MLIR); tpudsl keeps the order: checks it runs before --layer-group.

    A performance rewrite tpudsl does not have: address-assign reuses memory by liveness in the
    order the ops come, which is a valid order (the verifier checks dominance)."""

    name = "op-reorder"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        before_layer_group(op, self.name)


@dataclass(frozen=True)
class TopoSortPass(ModulePass):
    """Sort ops topologically (TPU-MLIR); tpudsl's are always in a topological order: checks it runs before --layer-group.

    The verifier rejects a use before its definition, so the ops already are in a topological
    order; tpudsl does not choose another among the valid ones."""

    name = "topo-sort"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        before_layer_group(op, self.name)


@dataclass(frozen=True)
class OptPostProcessorPass(ModulePass):
    """Graph rewrites after layer-group (TPU-MLIR); tpudsl has none: checks it runs before --address-assign."""

    name = "opt-post-processor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        before_address_assign(op, self.name)


@dataclass(frozen=True)
class AfterLayerGroupWeightReorderPass(ModulePass):
    """Reorder weights whose layout depends on the groups (TPU-MLIR); tpudsl has none: checks there is none.

    TPU-MLIR's one pattern re-lays out the index weight of a grouped tpu.Upsample marked
    `allow_split`. tpudsl's weight layouts (--weight-reorder) do not depend on the groups and it
    creates no `allow_split` weight: one in the input is an error, as is a run after --address-assign."""

    name = "after-layergroup-weight-reorder"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for w in op.walk():
            if w.name == "top.Weight" and "allow_split" in w.attributes:
                error = TpudslError(f"{self.name}: a weight marked allow_split is split by the layer groups in "
                                    "TPU-MLIR, which tpudsl does not model")
                error.op = w
                raise error
        before_address_assign(op, self.name)


@dataclass(frozen=True)
class OpDividePass(ModulePass):
    """Divide large INT8 ops along H to save global memory (TPU-MLIR, for CV18xx); not modelled: an error."""

    name = "op-divide"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise TpudslError(f"{self.name}: not supported: TPU-MLIR's op-divide cuts chains of large INT8 Conv/Add/"
                          "MaxPool ops into slices along H (model_deploy --op_divide, for CV18xx chips); "
                          "tpudsl does not model it (omit --op-divide)")


@dataclass(frozen=True)
class WeightDeduplicatePass(ModulePass):
    """Let identical weights share one top.Weight (same type, attributes and bytes), before --address-assign.

    The first of a set of identical weights keeps its name and takes the others' uses; the others
    are erased, so their data is stored and addressed once."""

    name = "weight-deduplicate"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        before_address_assign(op, self.name)
        weights = [w for w in op.walk() if w.name == "top.Weight"]
        if not weights:
            return
        top = top_module_of(op)
        if top is None:
            raise TpudslError(f"{self.name}: the weight data is not loaded (the module names no readable weight file)")
        first: dict[tuple, Operation] = {}
        for w in weights:
            data = top.weight_of(w)
            key = (str(w.results[0].type), str(sorted((k, str(v)) for k, v in w.attributes.items())),
                   data.dtype.str, data.shape, data.tobytes())
            kept = first.setdefault(key, w)
            if kept is not w:
                w.results[0].replace_all_uses_with(kept.results[0])
                w.detach()
                w.erase()
