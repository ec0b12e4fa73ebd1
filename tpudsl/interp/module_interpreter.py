"""Run a Top or Tpu module on numpy arrays, with TPU-MLIR's init / inference / deinit lifecycle.

    m = ModuleInterpreter.from_file("resnet18.mlir")     # or ModuleInterpreter(module, weights)
    m.init()                                             # plan once: kernels, weights, frees
    outs = m.inference({"input": x})                     # {output loc name: array}
    every = m.inference({"input": x}, keep_all=True)     # every tensor by loc name
    m.deinit()

`init` turns the ops of @main into a list of steps over numbered value slots: each step has its
kernel (one dict lookup by op name), its attribute view, and the slots it frees afterwards (the
values whose last user it is). Weights are loaded into their slots once. A kernel's `prepare`
runs here and sees only the weight operands (see kernel.py); everything computed is read by
`inference`. The kernel table is a parameter, so the Tpu dialect brings its own table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float6E2M3FNType,
    Float6E3M2FNType,
    Float8E3M4Type,
    Float8E4M3B11FNUZType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E4M3Type,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    NoneType,
    Signedness,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue

from tpudsl.dialects.attrs import from_attr
from tpudsl.dialects.opdef import REQUIRED, SPECS, AttrView, loc_name, result_names
from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.interp import concat_chain, winograd
from tpudsl.interp.kernel import (
    Array,
    Kernel,
    KernelAttrs,
    ResultMismatch,
    Run,
    as_outputs,
    carrier,
    finish_output,
    hold,
    run_kernel,
)
from tpudsl.interp.kernels_tpu import ALL_KERNELS
from tpudsl.interp.table import KERNELS
from tpudsl.interp.threads import blas_threads, check_threads
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.npz import check_float32_exact

WEIGHT, NONE, INPUT, RETURN = "top.Weight", "top.None", "top.Input", "func.return"
GROUP, LOAD, STORE, YIELD = "tpu.Group", "tpu.Load", "tpu.Store", "tpu.Yield"  # layer groups (docs/backend.md)

# Float element types -> their numpy type, or the name of their ml_dtypes type. Values of the
# ml_dtypes ones (no numpy twin) are held in float32 and rounded to the type whenever an op produces
# one (kernel.hold). ml_dtypes is imported only when a module has such a type: its import takes
# 0.5 s (version 0.7), which every tpuc-opt and model_runner start would pay otherwise.
_FLOATS = {Float16Type: np.float16, Float32Type: np.float32, Float64Type: np.float64}
_ML_FLOATS = {
    BFloat16Type: "bfloat16",
    Float8E4M3FNType: "float8_e4m3fn", Float8E4M3FNUZType: "float8_e4m3fnuz",
    Float8E5M2Type: "float8_e5m2", Float8E5M2FNUZType: "float8_e5m2fnuz",
    Float8E4M3Type: "float8_e4m3", Float8E3M4Type: "float8_e3m4",
    Float8E4M3B11FNUZType: "float8_e4m3b11fnuz", Float8E8M0FNUType: "float8_e8m0fnu",
    Float6E2M3FNType: "float6_e2m3fn", Float6E3M2FNType: "float6_e3m2fn",
    Float4E2M1FNType: "float4_e2m1fn",
}
# Integer widths numpy lacks -> (signed, unsigned) ml_dtypes type name, held in int8 / uint8.
_NARROW_INTS = {4: ("int4", "uint4"), 2: ("int2", "uint2")}


def _ml_dtype(name: str) -> np.dtype:
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name))


def numpy_dtype(element_type: Attribute) -> np.dtype | None:
    """The dtype of an element type (i1 -> bool; bf16, f8*, i4, ... -> ml_dtypes), or None when
    it has none."""
    if type(element_type) in _FLOATS:
        return np.dtype(_FLOATS[type(element_type)])
    if type(element_type) in _ML_FLOATS:
        return _ml_dtype(_ML_FLOATS[type(element_type)])
    if isinstance(element_type, UniformQuantizedType):  # a quantized tensor holds its stored integers
        return np.dtype(f"{'' if element_type.is_signed else 'u'}int{element_type.storage_width}")
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        unsigned = element_type.signedness.data == Signedness.UNSIGNED
        if width == 1:
            return np.dtype(np.bool_)
        if width in _NARROW_INTS:
            return _ml_dtype(_NARROW_INTS[width][unsigned])
        if width in (8, 16, 32, 64):
            return np.dtype(f"{'u' if unsigned else ''}int{width}")
    return None


def _static_shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape()):
        return tuple(t.get_shape())
    return None


def _dtype(value: SSAValue) -> np.dtype | None:
    t = value.type
    return numpy_dtype(t.element_type) if isinstance(t, TensorType) else None


def _input_dtype(arg: SSAValue) -> np.dtype | None:
    """What an input takes: the argument's dtype, or the stored integers of the quant type / the
    f16 or bf16 its top.Input gives (an input whose cast strip-io-quant removed; the argument
    stays f32 there, as in TPU-MLIR)."""
    for use in arg.uses:
        if use.operation.name == INPUT and isinstance(getattr(use.operation.results[0].type, "element_type", None),
                                                      (UniformQuantizedType, Float16Type, BFloat16Type)):
            return _dtype(use.operation.results[0])
    return _dtype(arg)


def op_attrs(op: Operation) -> KernelAttrs:
    """What a kernel reads: attribute values with spec defaults, result shapes and dtypes."""
    spec = SPECS.get(op.name)
    if spec is None:
        values = {k: from_attr(v) for k, v in op.attributes.items()}
    else:
        # Converted once here, not at every kernel call; unset REQUIRED attributes stay absent.
        view = AttrView(op.attributes, spec)
        values = {k: view[k] for k in view if k in op.attributes or spec.attrs[k].default is not REQUIRED}
    scales = (_scale(op.operands[0]) if op.operands else None, _scale(op.results[0]) if op.results else None)
    zero_points = (tuple(_zero_point(v) for v in op.operands), _zero_point(op.results[0]) if op.results else 0)
    return KernelAttrs(values, [_static_shape(r) for r in op.results], [_dtype(r) for r in op.results], scales,
                       [_static_shape(v) for v in op.operands], zero_points)


def _scale(value: SSAValue) -> float | None:
    t = value.type
    if isinstance(t, TensorType) and isinstance(t.element_type, UniformQuantizedType) and not t.element_type.is_per_axis:
        return t.element_type.scale
    return None


def _zero_point(value: SSAValue) -> int:
    t = value.type
    if isinstance(t, TensorType) and isinstance(t.element_type, UniformQuantizedType) and not t.element_type.is_per_axis:
        return t.element_type.zero_point
    return 0


def _where(op: Operation) -> str:
    name = loc_name(op)
    return f"'{op.name}' op" + (f' "{name}"' if name else "")


def _kernel(op: Operation, kernels: Mapping[str, Kernel]) -> Kernel:
    kernel = kernels.get(op.name)
    if kernel is None:
        raise TpudslError(f"{_where(op)} has no interpreter kernel")
    return kernel


def evaluate_op(
    op: Operation, operands: Sequence[Array | None], kernels: Mapping[str, Kernel] = KERNELS
) -> list[Array]:
    """Compute one op on given operand arrays (None for `none` operands), e.g. to fold constants."""
    try:
        return run_kernel(_kernel(op, kernels), list(operands), op_attrs(op))[: len(op.results)]
    except ResultMismatch as e:
        raise TpudslError(f"{_where(op)}: {e}") from None


def _takes_strided(kernel: Kernel, reader: Operation) -> bool:
    takes = kernel.strided_operands
    return takes(op_attrs(reader)) if callable(takes) else takes


@dataclass
class _Step:
    op: Operation
    run: Run
    attrs: KernelAttrs
    operands: tuple[int, ...]
    results: tuple[int, ...]
    relu: bool = True  # finish applies the fused relu (the kernel does not)
    frees: tuple[int, ...] = ()
    # One result with a known shape and dtype and nothing for finish_output to do (no fused relu
    # to apply): a kernel result of exactly that shape and dtype is stored as it is, the rest
    # goes through finish_output. (shape, dtype), or None: always finish_output.
    plain: tuple[tuple[int, ...], np.dtype] | None = None


class ModuleInterpreter:
    def __init__(
        self,
        module: ModuleOp | FuncOp,
        weights: Mapping[str, np.ndarray] | None = None,
        kernels: Mapping[str, Kernel] = ALL_KERNELS,
        threads: int | None = None,
    ):
        self.module = module
        self.weights = weights or {}
        self.kernels = kernels
        # BLAS threads during inference (threads.py: None is half the cores, capped).
        try:
            self.threads = check_threads(threads)
        except ValueError as e:
            raise TpudslError(str(e)) from None
        # The plan, built by init(): steps over numbered value slots, and what the slots hold.
        self._steps: list[_Step] | None = None
        self._n_slots = 0
        self._constants: dict[int, Array | None] = {}  # weights and `none`, loaded once
        # input name -> slot, the block argument's static shape and the dtype it takes (None: unknown)
        self._inputs: dict[str, tuple[int, tuple[int, ...] | None, np.dtype | None]] = {}
        self._stripped: set[str] = set()  # inputs whose top.Input takes another type than the argument's
        self._outputs: list[tuple[str, int]] = []
        self._names: dict[int, str] = {}  # slot -> tensor (loc) name
        # an op's absent results (type `none`: LSTM's Y when the model leaves it out): computed by the
        # kernel, but no tensor of the module, so no dump holds them (TPU-MLIR's neither; nor the bmodel's)
        self._absent: set[int] = set()

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], kernels: Mapping[str, Kernel] = ALL_KERNELS, threads: int | None = None
    ) -> ModuleInterpreter:
        from tpudsl.ir.module import load_module

        mod = load_module(path)
        return cls(mod.module, mod.weights, kernels, threads)

    # ---- init ---------------------------------------------------------------------------

    def init(self) -> None:
        func = self._main()
        slot: dict[SSAValue, int] = {}
        self._constants, self._inputs, self._names, self._stripped, self._absent = {}, {}, {}, set(), set()

        def number(value: SSAValue) -> int:
            return slot.setdefault(value, len(slot))

        block = func.body.block
        for i, arg in enumerate(block.args):
            name = self._input_name(arg, i)
            taken = _input_dtype(arg)
            self._inputs[name] = (number(arg), _static_shape(arg), taken)
            if taken is not None and taken != _dtype(arg):  # a stripped cast's type: known at init
                self._stripped.add(name)
            self._names[slot[arg]] = name
        steps: list[_Step] = []
        returned: list[SSAValue] = []
        for op in block.ops:
            if op.name == RETURN:
                returned = list(op.operands)
            elif op.name in (WEIGHT, NONE):
                s = number(op.results[0])
                self._constants[s] = self._weight(op) if op.name == WEIGHT else None
                self._names[s] = result_names(op)[0]
            elif op.name == GROUP:
                steps += self._plan_group(op, slot, number)
            else:
                steps.append(self._plan(op, slot, number))
        self._outputs = [(self._names[slot[v]], slot[v]) for v in returned]
        concat_chain.link(steps, _dtype)  # DenseNet-style Concat chains write into one buffer
        self._set_frees(steps, keep=set(self._constants) | {s for _, s in self._outputs})
        self._steps = steps
        self._n_slots = len(slot)

    def _main(self) -> FuncOp:
        if isinstance(self.module, FuncOp):
            return self.module
        funcs = [op for op in self.module.ops if isinstance(op, FuncOp)]
        for f in funcs:
            if f.sym_name.data == "main":
                return f
        if not funcs:
            raise TpudslError("module has no func.func to interpret")
        return funcs[0]

    def _input_name(self, arg: SSAValue, index: int) -> str:
        """The loc name of the top.Input reading block argument `arg`, else `arg<index>`."""
        for use in arg.uses:
            if use.operation.name == INPUT and loc_name(use.operation):
                return loc_name(use.operation)
        return f"arg{index}"

    def _weight(self, op: Operation) -> Array:
        name = loc_name(op)
        if name not in self.weights:
            raise TpudslError(f"{_where(op)} has no data in the weights")
        array = np.asarray(self.weights[name])
        dtype = _dtype(op.results[0])
        if dtype.name == "bfloat16" and array.dtype == np.uint16:  # bf16 weights are stored as their bits
            array = array.view(dtype)
        return hold(array, dtype)

    def _plan_group(self, group: Operation, slot: dict[SSAValue, int], number) -> list[_Step]:
        """A layer group (tpu.Group) runs its ops in order; its Loads and Stores move a tensor between
        memories, so here they are the tensor itself (the same slot), and the group's results are
        the values its Yield names."""
        steps = []
        for op in group.regions[0].block.ops:
            if op.name in (LOAD, STORE):
                slot[op.results[0]] = slot[op.operands[0]]
            elif op.name == YIELD:
                for result, value in zip(group.results, op.operands, strict=True):
                    slot[result] = slot[value]
            else:
                steps.append(self._plan(op, slot, number))
        return steps

    def _plan(self, op: Operation, slot: dict[SSAValue, int], number) -> _Step:
        kernel = _kernel(op, self.kernels)
        attrs = op_attrs(op)
        operands = tuple(slot[v] for v in op.operands)
        results = tuple(number(r) for r in op.results)
        for s, name, value in zip(results, result_names(op), op.results, strict=True):
            self._names[s] = name
            if isinstance(value.type, NoneType):
                self._absent.add(s)
        run = kernel.run
        prepare = kernel.view if kernel.view is not None and self._strided_readers(op) else kernel.prepare
        if prepare is not None:
            # Only weights are visible to prepare; computed operands are None here.
            static = [self._constants.get(s) for s in operands]  # a weight's slot (also through a tpu.Load)
            try:
                run = prepare(static, attrs)
            except Exception as e:
                raise TpudslError(f"{_where(op)} cannot be prepared: {type(e).__name__}: {e}") from e
        relu = not kernel.fuses_relu
        plain = None
        if len(results) == 1 and attrs.out_shape(0) is not None and attrs.out_dtype(0) is not None \
                and not (relu and attrs.get("do_relu", False)):
            plain = (attrs.out_shape(0), attrs.out_dtype(0))
        return _Step(op, run, attrs, operands, results, relu=relu, plain=plain)

    def _strided_readers(self, op: Operation) -> bool:
        """Whether op's one result is read, and only by kernels that take strided operands (not
        returned, not yielded from a group: those are no kernels)."""
        if len(op.results) != 1:
            return False
        readers = [(self.kernels.get(use.operation.name), use.operation) for use in op.results[0].uses]
        return bool(readers) and all(k is not None and _takes_strided(k, reader) for k, reader in readers)

    @staticmethod
    def _set_frees(steps: list[_Step], keep: set[int]) -> None:
        """Each step frees the values it is the last reader (or, if unread, the producer) of."""
        last: dict[int, int] = {}
        for i, step in enumerate(steps):
            for s in step.results:
                last[s] = i
            for s in step.operands:
                last[s] = i
        frees: dict[int, list[int]] = {}
        for s, i in last.items():
            if s not in keep:
                frees.setdefault(i, []).append(s)
        for i, step in enumerate(steps):
            step.frees = tuple(frees.get(i, ()))

    # ---- inference ----------------------------------------------------------------------

    def inference(
        self, inputs: Mapping[str, np.ndarray], keep_all: bool = False, dump_all: bool = False
    ) -> dict[str, np.ndarray]:
        """Outputs by loc name; with keep_all (alias dump_all) every tensor of @main by loc name."""
        if self._steps is None:
            raise TpudslError("ModuleInterpreter.inference called before init()")
        # IEEE results, not warnings: float32 overflow is inf (finfo.min masks added twice: GPT-2), x / 0
        # is inf, log(0) -inf, 0 / 0 NaN, as onnxruntime and the chip give them (a NaN or inf that
        # matters shows in the comparisons, never in a warning). Entered once here rather than per
        # kernel call, where it cost ~2 us per Add.
        with blas_threads(self.threads), np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return self._run(inputs, keep_all or dump_all)

    def _run(self, inputs: Mapping[str, np.ndarray], keep_all: bool) -> dict[str, np.ndarray]:
        values: list[Array | None] = [None] * self._n_slots
        for s, array in self._constants.items():
            values[s] = array
        for name, array in self._read_inputs(inputs):
            values[self._inputs[name][0]] = array
        kept: dict[str, np.ndarray] = {}
        if keep_all:
            kept.update((name, values[s]) for name, (s, _, _) in self._inputs.items())
        for step in self._steps:
            try:
                outs = step.run([values[s] for s in step.operands], step.attrs)
            except TpudslError:
                raise
            except Exception as e:
                raise TpudslError(f"{_where(step.op)} failed: {type(e).__name__}: {e}") from e
            plain = step.plain
            if plain is not None and type(outs) is np.ndarray and outs.shape == plain[0] and outs.dtype == plain[1]:
                values[step.results[0]] = outs  # what finish_output would return: checked, nothing to do
            else:
                self._finish(step, outs, values)
            if keep_all:
                kept.update((self._names[s], values[s]) for s in step.results if s not in self._absent)
            else:
                for s in step.frees:
                    values[s] = None
        outputs = {name: values[s] for name, s in self._outputs}
        return {**kept, **outputs} if keep_all else outputs

    @staticmethod
    def _finish(step: _Step, result: Array | list[Array], values: list[Array | None]) -> None:
        """Check a kernel's results against the op's result types, apply the fused relu and the
        result dtypes (finish_output), into their slots."""
        outs = as_outputs(result)
        if len(outs) < len(step.results):
            raise TpudslError(f"{_where(step.op)} kernel gave {len(outs)} results, the op has {len(step.results)}")
        try:
            for i, (s, y) in enumerate(zip(step.results, outs, strict=False)):
                values[s] = finish_output(y, step.attrs, i, step.relu)
        except ResultMismatch as e:
            raise TpudslError(f"{_where(step.op)}: {e}") from None

    def _read_inputs(self, inputs: Mapping[str, np.ndarray]):
        missing = self._inputs.keys() - inputs.keys()
        if missing:
            raise TpudslError(
                f"missing inputs {sorted(missing)}; the module's inputs are {list(self._inputs)}"
            )
        for name, (_, shape, dtype) in self._inputs.items():
            array = np.asarray(inputs[name])
            if shape is not None and array.shape != shape:
                raise TpudslError(f"input '{name}' has shape {array.shape}, the module expects {shape}")
            if dtype == np.float32:
                check_float32_exact(name, array)
            if name in self._stripped:
                if array.dtype != dtype:
                    # never a silent float -> int8 truncation or f32 -> f16 rounding: the caller
                    # quantizes or rounds, once, by its documented rule (model_runner does)
                    what = "its quant type's stored integers" if dtype.kind in "iu" else "its cast was stripped"
                    raise TpudslError(f"input '{name}' is {dtype} ({what}), the data is {array.dtype}: quantize or "
                                      f"round it first (model_runner and model_deploy do)")
                array = array.astype(carrier(dtype), copy=False)  # bf16 is held in float32
            yield name, hold(array, dtype)

    def deinit(self) -> None:
        """Drop the plan, the loaded weights and this thread's conv work arrays (init again to run again)."""
        self._steps = None
        self._constants = {}
        winograd.release_work()

    def freed_after(self) -> dict[str, list[str]]:
        """Memory plan: for each op (by loc name), the tensors inference drops once it has run."""
        if self._steps is None:
            raise TpudslError("ModuleInterpreter.freed_after called before init()")
        return {result_names(st.op)[0]: [self._names[s] for s in st.frees] for st in self._steps}

    # The names callers see, in order.
    @property
    def input_names(self) -> list[str]:
        return list(self._inputs)

    @property
    def output_names(self) -> list[str]:
        return [name for name, _ in self._outputs]


def run_module(
    module: ModuleOp | FuncOp, weights: Mapping[str, np.ndarray] | None, inputs: Mapping[str, np.ndarray],
    keep_all: bool = False, threads: int | None = None,
) -> dict[str, np.ndarray]:
    """One inference with the whole lifecycle: init, inference (outputs, or every tensor with
    keep_all), deinit even when inference fails."""
    interp = ModuleInterpreter(module, weights, threads=threads)
    interp.init()
    try:
        return interp.inference(inputs, keep_all=keep_all)
    finally:
        interp.deinit()


def run_samples(
    module: ModuleOp | FuncOp, weights: Mapping[str, np.ndarray] | None,
    samples: Sequence[Mapping[str, np.ndarray]], keep_all: bool = False,
) -> tuple[list[dict[str, np.ndarray]], list[str]]:
    """`run_module` on each of `samples` with one init (the weights prepared once), and the
    output names."""
    interp = ModuleInterpreter(module, weights)
    interp.init()
    try:
        return [interp.inference(s, keep_all=keep_all) for s in samples], interp.output_names
    finally:
        interp.deinit()
