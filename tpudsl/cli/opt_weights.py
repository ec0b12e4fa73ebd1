"""tpuc-opt's weight file: read before the passes, written after them when they changed the weights.

As TPU-MLIR's tpuc-opt does, the driver loads the .npz that `module.weight_file` names (relative to
the input's directory; the working directory for stdin) into a TopModule, so that passes find the
data with `top_module_of`. A named file that does not exist is not an error: the module is then
left without weights and the patterns that need them do not fire (a pass that cannot work without
them reports that itself). After the passes, weights that changed (an entry added or dropped, an
array replaced) go to `<output stem>_weight.npz` next to the output, or to the file a pass named
in `module.weight_file` (relative to the output), which is then the module's `module.weight_file`. docs/tpuc-opt.md gives the rules for stdout and name clashes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, read_weights, weight_file_path


@dataclass
class LoadedWeights:
    top: TopModule  # kept alive here: the registry behind top_module_of only holds it weakly
    source: Path
    before: dict[str, np.ndarray]  # what the module used when read, to tell whether passes changed it
    named: str  # module.weight_file as read, to tell whether a pass named another file


@dataclass
class WeightsToWrite:
    path: Path
    weights: dict[str, np.ndarray]


def load_weights(module: ModuleOp, filename: str) -> LoadedWeights | None:
    """The module's weights, checked against its `top.Weight`s; None when it names no existing file."""
    source = weight_file_path(module, filename)
    if source is None or not source.is_file():
        return None
    top = TopModule(module, path=Path(filename))
    top.weights = read_weights(source, top.weight_ops(), filename)
    return LoadedWeights(top, source, top.used_weights(), _weight_file_attr(module))


def weights_to_write(loaded: LoadedWeights | None, input_name: str, output: str) -> WeightsToWrite | None:
    """What to write after the passes, with `module.weight_file` updated to name it; None if nothing.

    Raises (before anything is written) when the changed weights have nowhere to go: the output is
    stdout or a device, or their file would replace the npz that the input .mlir still names."""
    if loaded is None:
        return None
    module = loaded.top.module
    after = loaded.top.used_weights()
    renamed = _weight_file_attr(module) != loaded.named
    changed = renamed or after.keys() != loaded.before.keys() or any(after[k] is not loaded.before[k] for k in after)
    out = _output_file(output)
    if not changed:
        if out is not None and not _same(out.parent, loaded.source.parent):
            _name_weight_file(module, os.path.relpath(loaded.source, out.parent))  # still found from there
        return None
    if out is None:
        raise TpudslError("the passes changed the weights; use -o FILE so they can be written")
    # A pass may name the new file (convert-top-to-tpu's weightFileName, as TPU-MLIR's scripts pass it).
    path = out.parent / (_weight_file_attr(module) if renamed else f"{out.stem}_weight.npz")
    if _same(path, loaded.source) and not _same(out, Path(input_name)):
        raise TpudslError(
            f"the changed weights would replace '{loaded.source}', which '{input_name}' still names; "
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


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _weight_file_attr(module: ModuleOp) -> str:
    attr = module.attributes.get("module.weight_file")
    return attr.data if isinstance(attr, StringAttr) else ""


def _name_weight_file(module: ModuleOp, name: str) -> None:
    module.attributes["module.weight_file"] = StringAttr(name)
