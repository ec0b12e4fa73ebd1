"""npz_tool's file subcommands (TPU-MLIR's python/numpy_helper/__init__.py, its argument order):

  get_shape A.npz NAME               # [1,3,224,224]
  extract A.npz OUT.npz a,b          # OUT holds a and b
  remove A.npz a,b                   # in place
  rename A.npz OLD NEW               # in place; NEW comes last, as TPU-MLIR's
  merge A.npz B.npz [...] OUT.npz    # every file's tensors; a later file's tensor of a name wins
  insert A.npz OUT.npz               # A's tensors into OUT; OUT's own tensor of a name wins
  reshape A.npz NAME 4,5,1           # in place (-1: the dimension numpy infers)
  permute A.npz [NAME] 0,2,1,3       # in place: NAME, or every tensor
  tranpose A.npz nhwc nchw           # in place: every 4-D tensor from one layout to the other
  to_dat A.npz OUT.bin               # every tensor's bytes, in file order
  to_bin A.npz NAME OUT.bin [int8|bf16|uint16|float32]
  to_npy A.npz NAME [-o OUT.npy]     # default NAME.npy in the current directory
  bf16_to_fp32 A.npz OUT.npz         # uint16 tensors (bf16 bit patterns) become float32
  fp16_to_fp32 A.npz OUT.npz         # uint16 tensors (fp16 bit patterns) become float32

A missing tensor, a bad shape, order or layout is one error; every file is written through a
temporary file that is renamed, so a failure leaves the old one as it was (docs/tools.md).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from tpudsl.ir.diagnostics import TpudslError

if TYPE_CHECKING:  # imported where used: `npz_tool --help` must not wait for numpy
    import numpy as np


def load_npz(path: str) -> dict[str, np.ndarray]:
    """All arrays of an .npz file, in file order; TpudslError when it is missing or not an npz."""
    from tpudsl.ir.npz import read_npz  # numpy: not needed for --help

    return read_npz(path)


def split_names(text: str) -> list[str]:
    return [n for n in (s.strip() for s in text.split(",")) if n and n != "-"]


def tensor(tensors: dict[str, np.ndarray], path: str, name: str) -> np.ndarray:
    if name not in tensors:
        raise TpudslError(f"'{path}' has no tensor '{name}' (it holds: {', '.join(tensors) or 'nothing'})")
    return tensors[name]


def _write_npz(path: str, tensors: dict[str, np.ndarray]) -> None:
    import numpy as np

    _write(path, lambda f: np.savez(f, **tensors))


def _write(path: str, write: Callable) -> None:
    from tpudsl.ir.module import write_atomically  # only the writing subcommands pay for its imports

    write_atomically(path, write)


def _names_given(command: str, text: str) -> list[str]:
    names = split_names(text)
    if not names:
        raise TpudslError(f"{command}: no tensor names given")
    return names


def _integers(command: str, what: str, text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise TpudslError(f"{command}: {what} '{text}' is not a comma-separated list of integers") from None


def cmd_get_shape(args: argparse.Namespace) -> int:
    print("[" + ",".join(str(d) for d in tensor(load_npz(args.file), args.file, args.name).shape) + "]")
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    tensors = load_npz(args.file)
    names = _names_given("extract", args.names)
    picked = {name: tensor(tensors, args.file, name) for name in names}
    for name in names:
        print("extract", name)
    _write_npz(args.output, picked)
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    tensors = load_npz(args.file)
    names = _names_given("remove", args.names)
    for name in names:
        tensor(tensors, args.file, name)  # every name is checked before anything is printed or written
    for name in names:
        print("remove", name)
        tensors.pop(name, None)  # a name given twice is removed once
    _write_npz(args.file, tensors)
    return 0


def cmd_rename(args: argparse.Namespace) -> int:
    tensors = load_npz(args.file)
    moved = tensor(tensors, args.file, args.old)
    if args.new in tensors and args.new != args.old:
        raise TpudslError(f"'{args.file}' already holds a tensor '{args.new}'; rename would replace it")
    del tensors[args.old]
    tensors[args.new] = moved
    _write_npz(args.file, tensors)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    if len(args.files) < 2:
        raise TpudslError("merge: give at least two input files before the output (merge A.npz B.npz OUT.npz)")
    merged: dict[str, np.ndarray] = {}
    for path in args.files:
        merged.update(load_npz(path))  # a name keeps its first place and takes the last file's tensor
    _write_npz(args.output, merged)
    return 0


def cmd_insert(args: argparse.Namespace) -> int:
    # TPU-MLIR's order: the inserted file first, then the output's own tensors over it.
    tensors = load_npz(args.file)
    tensors.update(load_npz(args.output))
    _write_npz(args.output, tensors)
    return 0


def cmd_reshape(args: argparse.Namespace) -> int:
    tensors = load_npz(args.file)
    old = tensor(tensors, args.file, args.name)
    shape = _integers("reshape", "shape", args.shape)
    if any(d < -1 for d in shape) or shape.count(-1) > 1:
        raise TpudslError(f"reshape: shape {args.shape} has a negative dimension (only one -1 is allowed)")
    try:
        tensors[args.name] = old.reshape(shape)
    except ValueError:
        raise TpudslError(f"reshape: '{args.name}' has shape {list(old.shape)} ({old.size} elements), "
                          f"which cannot take shape {shape}") from None
    _write_npz(args.file, tensors)
    return 0


def _permuted(name: str, a: np.ndarray, order: list[int], text: str) -> np.ndarray:
    import numpy as np

    if sorted(order) != list(range(a.ndim)):
        raise TpudslError(f"permute: order {text} is not a permutation of the {a.ndim} axes "
                          f"of '{name}' (shape {list(a.shape)})")
    return np.ascontiguousarray(np.transpose(a, order))


def cmd_permute(args: argparse.Namespace) -> int:
    tensors = load_npz(args.file)
    order = _integers("permute", "order", args.order)
    names = [args.name] if args.name is not None else list(tensors)
    for name in names:
        tensors[name] = _permuted(name, tensor(tensors, args.file, name), order, args.order)
    _write_npz(args.file, tensors)
    return 0


def cmd_tranpose(args: argparse.Namespace) -> int:
    """TPU-MLIR's older spelling (sic): the layouts are four distinct letters each, the same
    letters; tensors that are not 4-D are kept as they are, as TPU-MLIR's."""
    import numpy as np

    source, target = args.source_layout, args.target_layout
    if len(source) != 4 or len(set(source)) != 4 or sorted(source) != sorted(target):
        raise TpudslError(f"tranpose: layouts '{source}' and '{target}' must be four distinct letters each, "
                          "the same letters (e.g. nhwc nchw)")
    order = [source.index(c) for c in target]
    tensors = load_npz(args.file)
    for name, a in tensors.items():
        if a.ndim == 4:
            tensors[name] = np.ascontiguousarray(np.transpose(a, order))
    _write_npz(args.file, tensors)
    return 0


def cmd_to_dat(args: argparse.Namespace) -> int:
    tensors = load_npz(args.file)

    def write(f) -> None:
        for t in tensors.values():
            f.write(t.tobytes())  # C order, as numpy's tobytes()

    _write(args.output, write)
    return 0


# to_bin's dtype argument: TPU-MLIR's spellings and the numpy type each casts to.
TO_BIN_TYPES = {"int8": "int8", "bf16": "uint16", "uint16": "uint16", "float32": "float32"}


def _cast_for_bin(name: str, a: np.ndarray, spelling: str) -> np.ndarray:
    """numpy's astype, as TPU-MLIR's, where it cannot lose a value silently: an integer type takes
    only whole numbers in its range, float32 only finite values it can hold, and `bf16` only
    tensors already holding bf16 bits (uint16)."""
    import numpy as np

    dtype = np.dtype(TO_BIN_TYPES[spelling])
    if a.dtype.kind not in "biuf":
        raise TpudslError(f"to_bin: '{name}' is {a.dtype}, not a number")
    if spelling == "bf16" and a.dtype != np.uint16:
        raise TpudslError(f"to_bin: bf16 writes bf16 bit patterns, which npz files hold as uint16; '{name}' is "
                          f"{a.dtype} (converting values to bf16 is not modelled)")
    v = a.astype(np.float64)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        bad = ~((v == np.round(v)) & (v >= info.min) & (v <= info.max))
    else:  # float32: rounding is what the cast is for; a finite value turning into inf is not
        bad = np.isfinite(v) & (np.abs(v) > np.finfo(dtype).max)
    if bad.any():
        first = a.flat[int(np.argmax(bad))]
        raise TpudslError(f"to_bin: '{name}' holds {first}, which {dtype} cannot hold ({int(bad.sum())} such values)")
    return a.astype(dtype)


def cmd_to_bin(args: argparse.Namespace) -> int:
    a = tensor(load_npz(args.file), args.file, args.name)
    print("shape", a.shape)
    print("dtype", a.dtype)
    if args.dtype is not None:
        a = _cast_for_bin(args.name, a, args.dtype)
    _write(args.output, lambda f: f.write(a.tobytes()))  # C order, as numpy's tofile
    return 0


def cmd_to_npy(args: argparse.Namespace) -> int:
    import numpy as np

    a = tensor(load_npz(args.file), args.file, args.name)
    output = args.output
    if output is None:
        if os.sep in args.name or (os.altsep and os.altsep in args.name) or args.name in (".", ".."):
            raise TpudslError(f"to_npy: '{args.name}' cannot name a file in the current directory; give -o OUT.npy")
        output = f"{args.name}.npy"
    _write(output, lambda f: np.save(f, a, allow_pickle=False))
    return 0


def _half_to_fp32(args: argparse.Namespace, bits_to_float: Callable[[np.ndarray], np.ndarray]) -> int:
    """TPU-MLIR's rule: an npz holds half-precision tensors as their uint16 bit patterns; those
    become float32, every other tensor is written as it is."""
    import numpy as np

    tensors = load_npz(args.file)
    _write_npz(args.output, {k: bits_to_float(a) if a.dtype == np.uint16 else a for k, a in tensors.items()})
    return 0


def cmd_bf16_to_fp32(args: argparse.Namespace) -> int:
    return _half_to_fp32(args, _bf16_bits_to_fp32)


def cmd_fp16_to_fp32(args: argparse.Namespace) -> int:
    return _half_to_fp32(args, _fp16_bits_to_fp32)


def _bf16_bits_to_fp32(bits: np.ndarray) -> np.ndarray:
    import numpy as np

    return (bits.astype(np.uint32) << 16).view(np.float32)  # bf16 is the high half of a float32


def _fp16_bits_to_fp32(bits: np.ndarray) -> np.ndarray:
    import numpy as np

    return bits.view(np.float16).astype(np.float32)  # exact: every fp16 value is a float32 value


FILE = ("file", {"help": "the .npz file"})
NAME = ("name", {"help": "a tensor's name"})

# Subcommand -> (its function, help, its arguments as add_argument's name and keywords).
SUBCOMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str, tuple[tuple[str, dict], ...]]] = {
    "get_shape": (cmd_get_shape, "print a tensor's shape as [d0,d1,...]", (FILE, NAME)),
    "extract": (cmd_extract, "write the named tensors to another npz",
                (FILE, ("output", {"help": "the npz written"}), ("names", {"help": "comma-separated tensor names"}))),
    "remove": (cmd_remove, "remove the named tensors, in place", (FILE, ("names", {"help": "comma-separated tensor names"}))),
    "rename": (cmd_rename, "rename a tensor, in place", (FILE, ("old", {}), ("new", {}))),
    "merge": (cmd_merge, "write every file's tensors to one npz (a later file's tensor of a name wins)",
              (("files", {"nargs": "+", "metavar": "FILE", "help": "two or more npz files"}),
               ("output", {"help": "the npz written (may be one of the inputs)"}))),
    "insert": (cmd_insert, "add a file's tensors to OUTPUT, in place (OUTPUT's own tensor of a name wins)",
               (FILE, ("output", {"help": "the npz changed"}))),
    "reshape": (cmd_reshape, "reshape a tensor, in place",
                (FILE, NAME, ("shape", {"help": "comma-separated dimensions, e.g. 4,5,1 (one may be -1)"}))),
    "permute": (cmd_permute, "transpose a tensor (or every tensor), in place",
                (FILE, ("name", {"nargs": "?", "help": "a tensor's name (default: every tensor)"}),
                 ("order", {"help": "the axes' new order, e.g. 0,2,1,3"}))),
    "tranpose": (cmd_tranpose, "(TPU-MLIR's older spelling) every 4-D tensor from one layout to another, in place",
                 (FILE, ("source_layout", {"help": "e.g. nhwc"}), ("target_layout", {"help": "e.g. nchw"}))),
    "to_dat": (cmd_to_dat, "write every tensor's raw bytes, in file order, to one file",
               (FILE, ("output", {"help": "the binary file written"}))),
    "to_bin": (cmd_to_bin, "write one tensor's raw bytes, optionally cast",
               (FILE, NAME, ("output", {"help": "the binary file written"}),
                ("dtype", {"nargs": "?", "choices": tuple(TO_BIN_TYPES), "help": "cast to this type first"}))),
    "to_npy": (cmd_to_npy, "write one tensor as NAME.npy in the current directory",
               (FILE, NAME, ("-o", {"dest": "output", "help": "the .npy written instead (tpudsl's)"}))),
    "bf16_to_fp32": (cmd_bf16_to_fp32,
                     "uint16 tensors (bf16 bits) become float32; the rest is copied",
                     (FILE, ("output", {"help": "the npz written"}))),
    "fp16_to_fp32": (cmd_fp16_to_fp32,
                     "uint16 tensors (fp16 bits) become float32; the rest is copied",
                     (FILE, ("output", {"help": "the npz written"}))),
}


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    for command, (run, help_text, arguments) in SUBCOMMANDS.items():
        parser = sub.add_parser(command, help=help_text)
        for name, keywords in arguments:
            parser.add_argument(name, **keywords)
        parser.set_defaults(run=run)
    # argparse reads `-1,3` as an unknown option (it takes only `-1` or `-.5` for a number);
    # TPU-MLIR's reshape shapes often start with -1, so such a word is reshape's positional.
    sub.choices["reshape"]._negative_number_matcher = re.compile(r"^-\d[\d,-]*$")
