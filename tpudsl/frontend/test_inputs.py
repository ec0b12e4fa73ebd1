"""Test inputs for model validation: an .npz keyed by input name, or one .npy/image per input."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tpudsl.frontend.preprocess import Preprocess, is_image
from tpudsl.ir.diagnostics import TpudslError, one_line
from tpudsl.ir.module import read_npz
from tpudsl.ir.npz import check_float32_exact


def check_test_input_files(spec: str) -> list[str]:
    """The comma-separated file names of --test_input, each of which must exist (checked before
    anything is converted or written)."""
    files = [f for f in spec.split(",") if f]
    for f in files:
        if not os.path.isfile(f):
            raise TpudslError(f"cannot open test input '{f}': No such file")
    return files


def load_test_inputs(files: Sequence[str], names: Sequence[str], shapes: Sequence[Sequence[int]],
                     preprocess: Preprocess | None) -> dict[str, np.ndarray]:
    """float32 arrays for the model inputs `names` (of `shapes`), in input order."""
    if len(files) == 1 and Path(files[0]).suffix == ".npz":
        arrays = _read_npz(files[0])
        missing = [n for n in names if n not in arrays]
        if missing:
            raise TpudslError(f"test input '{files[0]}' lacks model input(s) {', '.join(missing)}; it has {', '.join(arrays) or 'nothing'}")
        chosen = [arrays[n] for n in names]
    elif len(files) != len(names):
        raise TpudslError(f"--test_input gives {len(files)} file(s) for {len(names)} model input(s) ({', '.join(names)})")
    else:
        chosen = [_read_one(f, shape, preprocess) for f, shape in zip(files, shapes, strict=True)]
    result = {}
    for name, shape, array in zip(names, shapes, chosen, strict=True):
        if array.dtype.kind not in "biuf":
            raise TpudslError(f"test input for '{name}' has dtype {array.dtype}; expected numbers (bool, int or float)")
        if array.size != int(np.prod(shape)):
            raise TpudslError(f"test input for '{name}' has shape {list(array.shape)}, the model input has {list(shape)}")
        check_float32_exact(name, array)
        result[name] = np.array(array.reshape(shape), dtype=np.float32, order="C")
    return result


def _read_npz(path: str) -> dict[str, np.ndarray]:
    try:
        return read_npz(path)
    except TpudslError as e:
        raise TpudslError(f"cannot read test input '{path}': {e.message}") from None


def _read_one(path: str, shape: Sequence[int], preprocess: Preprocess | None) -> np.ndarray:
    if Path(path).suffix == ".npy":
        try:
            # Mapped, then copied: a damaged header claiming more data than the file holds fails
            # here instead of allocating it.
            return np.array(np.load(path, mmap_mode="r", allow_pickle=False))
        except OSError as e:
            raise TpudslError(f"cannot read test input '{path}': {e.strerror or e}") from None
        except (ValueError, EOFError) as e:  # not an .npy file (an empty one raises EOFError), a pickle
            raise TpudslError(f"cannot read test input '{path}': {one_line(str(e))}") from None
    if is_image(path):
        return (preprocess or Preprocess()).load_image(path, shape)
    raise TpudslError(f"test input '{path}' is not an .npz, .npy or image file")
