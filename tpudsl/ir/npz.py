"""Reading an .npz file safely: a light module (numpy and zipfile, no xDSL), so that a command
that only reads npz files (npz_tool) starts without the IR's imports (about 0.2 s)."""

from __future__ import annotations

import os
import zipfile
from typing import TYPE_CHECKING

from tpudsl.ir.diagnostics import TpudslError, one_line

if TYPE_CHECKING:
    import numpy as np


def read_npz(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Every array of an .npz file, in file order (never unpickling anything).

    A TpudslError naming `path` (message: the reason alone) when it is missing, a directory, not
    an npz archive, damaged, or holds an entry that is not a plain array (object arrays, or a
    member that is not an .npy file, which np.load would hand back as bytes)."""
    import numpy as np  # here, not at the top: tpuc-opt imports this module and may read no npz

    path = os.fspath(path)
    if os.path.isdir(path):
        raise TpudslError("is a directory, expected an .npz file", file=path)
    try:
        with open(path, "rb") as f:
            if not zipfile.is_zipfile(f):
                raise TpudslError("not an .npz archive", file=path)
        _check_npz_members(path)
        with np.load(path, allow_pickle=False) as npz:
            arrays = {key: npz[key] for key in npz.files}
    except OSError as e:
        raise TpudslError(e.strerror or str(e), file=path) from None
    except (ValueError, EOFError, zipfile.BadZipFile) as e:  # a damaged archive or member, a pickle
        raise TpudslError(f"cannot read as .npz: {one_line(str(e))}", file=path) from None
    return arrays


def _check_npz_members(path: str) -> None:
    """Each member must be an .npy array whose data is all there, checked from its header before
    numpy allocates it (a damaged header can claim terabytes; a member that is not an .npy file
    np.load would hand back as bytes)."""
    import numpy as np

    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            key = info.filename.removesuffix(".npy")
            with archive.open(info) as f:
                if f.read(len(np.lib.format.MAGIC_PREFIX)) != np.lib.format.MAGIC_PREFIX:
                    raise TpudslError(f"cannot read as .npz: entry '{key}' is not a numpy array (.npy)", file=path)
                major = f.read(2)[:1]
                read_header = np.lib.format.read_array_header_1_0 if major == b"\x01" else np.lib.format.read_array_header_2_0
                shape, _, dtype = read_header(f)
                if dtype.hasobject:
                    continue  # np.load refuses it (allow_pickle=False) with its own message
                need = int(np.prod(shape, dtype=object)) * dtype.itemsize
                have = info.file_size - f.tell()
                if need > have:
                    raise TpudslError(
                        f"cannot read as .npz: entry '{key}' is damaged: its header says shape {list(shape)} "
                        f"({need} bytes) but it holds {have} bytes", file=path)


# float32 holds every integer of magnitude up to 2^24 exactly, and not every one beyond
FLOAT32_EXACT = 1 << 24


def check_float32_exact(name: str, array: np.ndarray) -> None:
    """Integer data (a language model's int64 token ids) goes into float32 model inputs, as
    TPU-MLIR's Top inputs are: a value beyond 2^24 would silently become a neighbour (another token
    id); that is an error naming the input and the value."""
    if array.dtype.kind not in "iu" or array.size == 0:
        return
    largest = max(-int(array.min()), int(array.max()))  # Python ints: no copy, no wrap at int64's least
    if largest > FLOAT32_EXACT:
        raise TpudslError(f"input '{name}' holds the integer {largest}, which float32 (the model input's type) "
                          f"does not hold exactly (integers up to 2^24 = {FLOAT32_EXACT} only)")
