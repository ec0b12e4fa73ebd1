"""init and deinit: TPU-MLIR's first and last passes, which read and write the weight file.

TPU-MLIR's tpuc-opt puts `--init` before and `--deinit` after the passes of every command line
that has passes (tpudsl's tpuc-opt does the same). Here they are the weight file's load and save:

- `init` reads the npz that `module.weight_file` names (relative to the .mlir's directory; the
  working directory for stdin) into a TopModule, which is how later passes find the data
  (`top_module_of`). No `module.weight_file`: no weight data, and the patterns that need it stay
  off. A named file that cannot be read (missing, a directory, no permission) is remembered, and
  a pass that needs weight data then fails naming the file (`require_weights`), instead of
  silently doing nothing. With `weight_in_mem=true` the weights are already in memory (an
  in-process caller such as model_transform holds the TopModule) and no file is read.
- `deinit` decides what to save: when the passes changed the weights (an entry added or dropped,
  an array replaced) or a pass named another file in `module.weight_file` (convert-top-to-tpu's
  weightFileName), the weights the module uses go to that file (relative to the output) or else to
  `<output stem>_weight.npz` next to the output, which `module.weight_file` then names. The driver writes that file in one transaction
  with the output (`WeightFile.to_write`). With `no_save_weight=true` nothing is saved, and
  changed weights read from a file are an error (they would be lost).

The driver says where the input came from and where the output goes with `bind_weight_file`;
docs/tpuc-opt.md (Weights) gives the rules for stdout and name clashes.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from tpudsl.ir.diagnostics import TpudslError, same_file
from tpudsl.ir.module import TopModule, read_weights, top_module_of, weight_file_path

if TYPE_CHECKING:
    import numpy as np  # the weights are numpy arrays, but a module without them needs no numpy


@dataclass
class WeightsToWrite:
    path: Path
    weights: dict[str, np.ndarray]


@dataclass
class WeightFile:
    """The weight file of one module during a pass pipeline (what init read, what deinit saves)."""

    mlir_path: str = ""  # the .mlir the module came from ('' or '<stdin>': the working directory)
    output: str = "-"  # where the module goes ('-': stdout), next to which changed weights are saved
    top: TopModule | None = None  # what init loaded (kept alive here: top_module_of holds it weakly)
    source: Path | None = None  # the npz init read (None: the weights were in memory)
    before: dict[str, np.ndarray] = field(default_factory=dict)  # what the module used at init
    named: str = ""  # module.weight_file at init, to tell whether a pass named another file
    unreadable: str | None = None  # why the named npz could not be read
    to_write: WeightsToWrite | None = None  # what deinit decided to save


_BINDINGS: weakref.WeakKeyDictionary[ModuleOp, WeightFile] = weakref.WeakKeyDictionary()


def bind_weight_file(module: ModuleOp, mlir_path: str, output: str) -> WeightFile:
    """Tell init and deinit where `module` was read from and where it will be written."""
    binding = WeightFile(mlir_path, output)
    _BINDINGS[module] = binding
    return binding


def _binding(module: ModuleOp) -> WeightFile:
    return _BINDINGS.setdefault(module, WeightFile())


def require_weights(module: ModuleOp, pass_name: str) -> None:
    """Raise when `module` names a weight file that init could not read: pass `pass_name` reads
    weight data and would otherwise silently do nothing."""
    binding = _BINDINGS.get(module)
    if binding is not None and binding.unreadable is not None and top_module_of(module) is None:
        raise TpudslError(f"pass '{pass_name}' needs the weight data, but {binding.unreadable}", binding.mlir_path or None)


@dataclass(frozen=True)
class InitPass(ModulePass):
    """Load the weight file that module.weight_file names, for the passes after it (runs first)."""

    name = "init"

    weight_in_mem: bool = False  # the weights are already in memory (an in-process caller's TopModule)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        binding = _binding(op)
        if self.weight_in_mem:
            top = top_module_of(op)
            if top is None:
                raise TpudslError("init weight_in_mem=true: no weights of this module are in memory "
                                  "(tpuc-opt reads them from module.weight_file; drop the option)")
            binding.top, binding.before = top, top.used_weights()
            return
        mlir_path = binding.mlir_path or "<stdin>"
        source = weight_file_path(op, mlir_path)  # <stdin>: relative to the working directory
        if source is None:
            return
        reason = _cannot_open(source)
        if reason is not None:
            if any(o.name == "top.Weight" for o in op.walk()):  # else there is nothing to read from it
                binding.unreadable = f"cannot read weight file '{source}' named by module.weight_file: {reason}"
            return
        top = TopModule(op, path=Path(mlir_path))
        top.weights = read_weights(source, top.weight_ops(), mlir_path)  # a bad npz is bad input at once
        binding.top, binding.source, binding.before = top, source, top.used_weights()
        binding.named = _weight_file_attr(op)


def _cannot_open(path: Path) -> str | None:
    """Why `path` cannot be opened for reading (None: it can)."""
    if path.is_dir():
        return "it is a directory"
    try:
        with open(path, "rb"):
            return None
    except OSError as e:
        return e.strerror or str(e)


@dataclass(frozen=True)
class DeinitPass(ModulePass):
    """Save the weights when the passes changed them, next to the output (runs last)."""

    name = "deinit"

    no_save_weight: bool = False  # keep changed weights in memory only (an in-process caller saves them)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        binding = _binding(op)
        if binding.top is None:
            return
        after = binding.top.used_weights()
        before = binding.before
        renamed = binding.source is not None and _weight_file_attr(op) != binding.named
        changed = renamed or after.keys() != before.keys() or any(after[k] is not before[k] for k in after)
        if self.no_save_weight:
            if changed and binding.source is not None:
                raise TpudslError("the passes changed the weights read from "
                                  f"'{binding.source}', and deinit no_save_weight=true would lose them")
            return
        binding.to_write = _weights_to_write(op, binding, after, changed, renamed)


def _weights_to_write(module: ModuleOp, binding: WeightFile, after: dict[str, np.ndarray],
                      changed: bool, renamed: bool) -> WeightsToWrite | None:
    """What to save, with `module.weight_file` updated to name it; None if nothing.

    Raises (before anything is written) when the changed weights have nowhere to go: the output is
    stdout or a device, or their file would replace the npz that the input .mlir still names."""
    out = _output_file(binding.output)
    if not changed:
        if out is not None and binding.source is not None and not same_file(out.parent, binding.source.parent):
            _name_weight_file(module, os.path.relpath(binding.source, out.parent))  # still found from there
        return None
    if out is None:
        raise TpudslError("the passes changed the weights; use -o FILE so they can be written")
    # A pass may name the new file (convert-top-to-tpu's weightFileName, as TPU-MLIR's scripts pass it).
    path = out.parent / (_weight_file_attr(module) if renamed else f"{out.stem}_weight.npz")
    if binding.source is not None and same_file(path, binding.source) and not same_file(out, Path(binding.mlir_path)):
        raise TpudslError(
            f"the changed weights would replace '{binding.source}', which '{binding.mlir_path}' still names; "
            "choose another -o name"
        )
    _name_weight_file(module, os.path.relpath(path, out.parent))
    return WeightsToWrite(path, after)


def _output_file(output: str) -> Path | None:
    """The output as a regular file next to which weights can go; None for stdout or a device."""
    if output == "-":
        return None
    path = Path(output)
    return path if not path.exists() or path.is_file() else None


def _weight_file_attr(module: ModuleOp) -> str:
    attr = module.attributes.get("module.weight_file")
    return attr.data if isinstance(attr, StringAttr) else ""


def _name_weight_file(module: ModuleOp, name: str) -> None:
    module.attributes["module.weight_file"] = StringAttr(name)
