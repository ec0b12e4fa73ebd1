"""A Top/Tpu module together with its weights, and how both are read and written.

TPU-MLIR keeps a model in two files: the .mlir text and a .npz named by the module attribute
`module.weight_file`. Each `top.Weight` op's data is the npz entry named by the op's location
(`loc("conv1_w")`). This module is the one place that knows that:

    mod = load_module("resnet.mlir")          # checks every top.Weight against the npz
    w = mod.weight_of(op)                     # the numpy array of a top.Weight
    op = mod.add_weight("conv1_w_T", array)   # a new top.Weight (name made unique) + its data
    save_module(mod, "out.mlir")              # out.mlir and its npz, each written atomically

Paths in `module.weight_file` are relative to the .mlir's directory (TPU-MLIR resolves them
against the working directory, which is the same directory in its scripts).
"""

from __future__ import annotations

import errno
import os
import tempfile
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

import tpudsl.dialects.top  # noqa: F401  (defines top.Weight, which add_weight creates)
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import create, loc_name, result_names
from tpudsl.ir.diagnostics import TpudslError, one_line
from tpudsl.ir.npz import read_npz
from tpudsl.ir.parser import parse_module, position_of
from tpudsl.ir.printer import print_module

if TYPE_CHECKING:
    import numpy as np  # imported where weights are written: a text-only run starts without it

WEIGHT_OP = "top.Weight"


@dataclass
class TopModule:
    """A parsed module, the arrays of its weights by name, and the .mlir it came from (if any)."""

    module: ModuleOp
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    path: Path | None = None

    def __post_init__(self) -> None:
        _TOP_MODULES[self.module] = weakref.ref(self)  # lets a ModulePass find the weights: top_module_of

    def main_func(self) -> FuncOp:
        for op in self.module.ops:
            if isinstance(op, FuncOp) and op.sym_name.data == "main":
                return op
        raise TpudslError("module has no func.func @main", str(self.path) if self.path else None)

    def clone(self) -> TopModule:
        """A copy to rewrite without touching this one: the module cloned, the weights dict copied
        (a pass that adds or renames a weight changes the copy's only; the arrays are shared)."""
        return TopModule(self.module.clone(), dict(self.weights), self.path)

    def returned(self) -> Operation:
        """The op that ends @main (its func.return): its operands are the model's outputs."""
        ret = self.main_func().body.block.last_op
        assert ret is not None  # func.func's verifier: a block ends with its terminator
        return ret

    def output_names(self) -> list[str]:
        """The names of the model's outputs, in @main's return order."""
        return [result_names(v.owner)[v.index] for v in self.returned().operands]  # type: ignore[arg-type]

    def weight_ops(self) -> list[Operation]:
        return [op for op in self.module.walk() if op.name == WEIGHT_OP]

    def used_weights(self) -> dict[str, np.ndarray]:
        """The data of every `top.Weight` in the module by name: what its weight file must hold."""
        return {loc_name(op): self.weight_of(op) for op in self.weight_ops()}

    def weight_of(self, op: Operation) -> np.ndarray:
        """The data of a `top.Weight` op."""
        name = loc_name(op)
        if name not in self.weights:
            raise _op_error(op, f"weight '{name}' has no data", self.path)
        return self.weights[name]

    def add_weight(self, name: str, array: np.ndarray, before: Operation | None = None) -> Operation:
        """A new `top.Weight` holding `array`, named `name` (or `name_1`, `name_2`, ... if taken).

        It is inserted before `before`, or else after the weights at the start of @main: early
        enough to dominate every use, and in the order the weights were added."""
        unique = unique_name(name, set(self.weights) | {loc_name(op) for op in self.weight_ops()})
        op = create(WEIGHT_OP, [], [tensor_type_of(array)], loc=unique)
        if before is None:
            before = next((o for o in self.main_func().body.block.ops if o.name != WEIGHT_OP), None)
        if before is None:
            self.main_func().body.block.add_op(op)
        else:
            Rewriter.insert_op(op, InsertPoint.before(before))
        self.weights[unique] = array
        return op

    def set_outputs(self, values: Sequence[SSAValue]) -> None:
        """End @main with `func.return values` and make its signature match."""
        main = self.main_func()
        main.body.block.add_op(ReturnOp(*values))
        main.update_function_type()

    @property
    def state(self) -> str:
        return self._module_attr("module.state")

    @state.setter
    def state(self, value: str) -> None:
        self.module.attributes["module.state"] = StringAttr(value)

    @property
    def chip(self) -> str:
        return self._module_attr("module.chip")

    @chip.setter
    def chip(self, value: str) -> None:
        self.module.attributes["module.chip"] = StringAttr(value)

    def _module_attr(self, key: str) -> str:
        attr = self.module.attributes.get(key)
        if not isinstance(attr, StringAttr):
            raise TpudslError(f"module has no string attribute {key}", str(self.path) if self.path else None)
        return attr.data


# ModuleOp -> its TopModule. Weak both ways: the registry never keeps a module alive.
_TOP_MODULES: weakref.WeakKeyDictionary[ModuleOp, weakref.ref[TopModule]] = weakref.WeakKeyDictionary()


def top_module_of(module: ModuleOp) -> TopModule | None:
    """The TopModule (with its weights) that holds `module`, if one does: how a ModulePass, which
    only receives the ModuleOp, reads and adds weight data."""
    ref = _TOP_MODULES.get(module)
    return ref() if ref is not None else None


def new_top_module(name: str, input_types: Sequence[Attribute], platform: str = "ONNX") -> TopModule:
    """The skeleton a frontend fills: TPU-MLIR's module attributes and an empty `func.func @main`.

    Add ops to `main_func().body.block` (its arguments are the inputs), then call `set_outputs`."""
    module = ModuleOp([FuncOp("main", (list(input_types), []))])
    module.attributes.update(
        {
            "module.chip": StringAttr("ALL"),
            "module.name": StringAttr(name),
            "module.platform": StringAttr(platform),
            "module.state": StringAttr("TOP_F32"),
            "module.weight_file": StringAttr(f"{name}_top_f32_all_weight.npz"),
        }
    )
    return TopModule(module)


def load_module(path: str | os.PathLike[str], ctx: Context | None = None) -> TopModule:
    """Parse and verify a .mlir file and read the weights its `top.Weight` ops name."""
    path = Path(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise TpudslError("not a text .mlir file (it is not UTF-8)", str(path)) from None
    module = parse_module(text, str(path), ctx or make_context())
    verify_module(module, str(path))
    mod = TopModule(module, path=path)
    weight_ops = mod.weight_ops()
    if weight_ops:
        npz_path = weight_file_path(module, path)
        if npz_path is None:
            raise TpudslError("module has top.Weight ops but no module.weight_file attribute", str(path))
        mod.weights = read_weights(npz_path, weight_ops, path)
    return mod


def save_module(
    mod: TopModule,
    path: str | os.PathLike[str],
    weight_path: str | os.PathLike[str] | None = None,
    also: Sequence[tuple[str | os.PathLike[str], Callable[[IO[bytes]], object]]] = (),
) -> None:
    """Write the .mlir (with locations: they are the tensor names) and the npz of the weights it uses.

    The npz goes to `weight_path`, or else to the module's `module.weight_file` next to `path`;
    `module.weight_file` is set to it (relative to the .mlir's directory). Both files (and the
    `also` files, `(path, write)` pairs written after them) are written to temporary files and
    renamed only when all were written (`write_files_atomically`), so an error never leaves a
    half-written file, or a new .mlir beside an old npz, behind."""
    path = Path(path)
    if weight_path is None:
        weight_path = path.parent / _weight_file_attr(mod.module, f"{path.stem}_weight.npz")
    weight_path = Path(weight_path)
    weights = mod.used_weights()
    old_name = mod.module.attributes.get("module.weight_file")
    mod.module.attributes["module.weight_file"] = StringAttr(os.path.relpath(weight_path, path.parent))
    text = print_module(mod.module, debuginfo=True)
    try:  # the npz is renamed first: the .mlir must never name a missing npz
        write_files_atomically(
            [(weight_path, npz_writer(weights)), (path, lambda f: f.write(text.encode())), *also]
        )
    except BaseException:
        if old_name is None:
            del mod.module.attributes["module.weight_file"]
        else:
            mod.module.attributes["module.weight_file"] = old_name
        raise
    mod.path = path


def verify_module(module: ModuleOp, filename: str) -> None:
    """Verify `module`; on failure a TpudslError at the position of the op that fails."""
    try:
        module.verify()
    except DiagnosticException as e:
        failing = _first_failing_op(module)
        if failing is None:
            raise TpudslError(one_line(str(e)), filename) from None
        op, error = failing
        raise _op_error(op, one_line(str(error)), filename) from None


def _first_failing_op(module: ModuleOp) -> tuple[Operation, Exception] | None:
    # Verifying op by op is slower than one module.verify(), so it runs only after a failure.
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            return op, e
    return None


def _op_error(op: Operation, message: str, fallback_file: str | os.PathLike[str] | None) -> TpudslError:
    prefix = f"'{op.name}' op"
    if not message.startswith(prefix):
        message = f"{prefix} {message}"
    where = position_of(op)
    if where is None:
        return TpudslError(message, str(fallback_file) if fallback_file else None)
    return TpudslError(message, *where)


def write_atomically(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> None:
    """Call `write(file)` on a temporary file next to `path`, then rename it to `path`.

    The old `path` stays untouched when `write` raises; the new file gets the old file's
    permissions (or the umask's default, not the 0600 of a temporary file). A symlink is
    written through; a device or pipe (`-o /dev/null`) is written directly, never replaced."""
    write_files_atomically([(path, write)])


def write_files_atomically(files: Sequence[tuple[str | os.PathLike[str], Callable[[IO[bytes]], object]]]) -> None:
    """`write_atomically` for several files that belong together (a .mlir and its weight npz, the
    npz files of a validation): every file is written to its temporary name first, and only when
    all of them succeeded are they renamed, in the order given. A failure (a missing directory, a
    read-only place, a directory where a file should go) leaves every existing file untouched."""
    staged: list[tuple[str | None, Path, Callable[[IO[bytes]], object]]] = []
    try:
        for path, write in files:
            with _named(path):
                staged.append(_stage(Path(os.path.realpath(path)), write))
        for (tmp, path, write), (given, _) in zip(staged, files, strict=True):
            with _named(given):
                if tmp is None:  # a device or pipe: nothing to rename, written last
                    with open(path, "wb") as f:
                        write(f)
                else:
                    os.replace(tmp, path)
    except BaseException:
        for tmp, _, _ in staged:
            if tmp is not None and os.path.lexists(tmp):
                os.unlink(tmp)
        raise


@contextmanager
def _named(path: str | os.PathLike[str]) -> Iterator[None]:
    """An OSError while writing `path` names `path` as the user gave it: not the temporary file
    beside it (a failed rename or chmod names that), nor its resolved name, nor nothing (a full disk)."""
    try:
        yield
    except OSError as e:
        raise OSError(e.errno, e.strerror or str(e), os.fspath(path)) from None


def _stage(path: Path, write: Callable[[IO[bytes]], object]) -> tuple[str | None, Path, Callable[[IO[bytes]], object]]:
    """Write `path`'s new content to a temporary file beside it: (temporary name, path, write)."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if path.exists() and not path.is_file():
        return None, path, write
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, _mode_for(path))
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp, path, write


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _weight_file_attr(module: ModuleOp, default: str) -> str:
    attr = module.attributes.get("module.weight_file")
    return attr.data if isinstance(attr, StringAttr) else default


def weight_file_path(module: ModuleOp, mlir_path: str | os.PathLike[str]) -> Path | None:
    """Where the module's `module.weight_file` is (relative to the .mlir's directory), None if it names none."""
    name = _weight_file_attr(module, "")
    return Path(mlir_path).parent / name if name else None


def write_weights(path: str | os.PathLike[str], weights: dict[str, np.ndarray]) -> None:
    """Write a weight npz atomically."""
    write_atomically(path, npz_writer(weights))


def npz_writer(weights: dict[str, np.ndarray]) -> Callable[[IO[bytes]], None]:
    """What writes `weights` as an npz into an open file (numpy imported only here and where
    weights are read: a tpuc-opt run that only parses and prints starts without it)."""
    import numpy as np

    return lambda f: np.savez(f, **weights)


def read_weights(npz_path: Path, weight_ops: Sequence[Operation], mlir_path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Every array of the npz, after checking that each of `weight_ops` has an entry of its shape.
    Errors are placed at the weight op, else at `mlir_path`."""
    try:
        weights = read_npz(npz_path)
    except TpudslError as e:
        raise TpudslError(f"cannot read weight file '{npz_path}': {e.message}", str(mlir_path)) from None
    for op in weight_ops:
        weight = loc_name(op)
        if not weight:
            raise _op_error(op, "has no name: its loc(\"...\") names its entry in the weight file", mlir_path)
        if weight not in weights:
            raise _op_error(op, f"weight '{weight}' is missing from '{npz_path}'", mlir_path)
        want = tuple(op.results[0].type.get_shape()) if isinstance(op.results[0].type, TensorType) else None
        if want is not None and weights[weight].shape != want:
            got = "x".join(map(str, weights[weight].shape)) or "scalar"
            raise _op_error(
                op, f"weight '{weight}' has shape {got} in '{npz_path}', but its type is {op.results[0].type}", mlir_path
            )
        if weights[weight].dtype.kind not in "biuf":
            raise _op_error(op, f"weight '{weight}' has dtype {weights[weight].dtype} in '{npz_path}', not numbers", mlir_path)
    return weights


def unique_name(name: str, taken: set[str]) -> str:
    """`name`, or the first of `name_1`, `name_2`, ... not in `taken`."""
    if name not in taken:
        return name
    n = 1
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


_ELEMENT_TYPES: dict[str, Callable[[], Attribute]] = {
    "float32": Float32Type,
    "float16": Float16Type,
    "float64": Float64Type,
    "bfloat16": BFloat16Type,
    "bool": lambda: IntegerType(1),
    "int8": lambda: IntegerType(8),
    "int16": lambda: IntegerType(16),
    "int32": lambda: IntegerType(32),
    "int64": lambda: IntegerType(64),
    "uint8": lambda: IntegerType(8, Signedness.UNSIGNED),
    "uint16": lambda: IntegerType(16, Signedness.UNSIGNED),
    "uint32": lambda: IntegerType(32, Signedness.UNSIGNED),
}


def tensor_type_of(array: np.ndarray) -> TensorType:
    """The tensor type of a numpy array, as TPU-MLIR writes it (`tensor<4x3xf32>`, `tensor<8xui8>`)."""
    make = _ELEMENT_TYPES.get(array.dtype.name)
    if make is None:
        raise TpudslError(f"weights of dtype {array.dtype} cannot be stored in a top.Weight")
    return TensorType(make(), array.shape)
