"""TPU-MLIR's flags that a tpudsl command parses only to check (docs/tools.md, one table per tool).

Users type TPU-MLIR's command lines. A flag whose value asks for what tpudsl does anyway is
accepted; one asking for what tpudsl does not model is an error naming the tool, the flag, the
value, why, and what is supported, before anything is read or written:

    error: model_transform: --onnx_sim skip_fuse_bn is not supported: tpudsl runs no onnx-simplifier,
    whose fusions skip_fuse_bn would change (supported: --onnx_sim '')

Nothing is silently ignored: a flag that is not in a tool's parser is argparse's error. A flag
tpudsl implements is an ordinary argument of its parser, not a row here.

Imported before parsing (`--help` answers at once), so it imports nothing heavy.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from tpudsl.ir.diagnostics import TpudslError


@dataclass(frozen=True)
class Checked:
    """`flag` is accepted with one of `accepted` (TPU-MLIR's spellings; the first is its default).
    A switch (`store_true` in TPU-MLIR) has accepted == (False,): giving it is the error; a flag
    with accepted == () is refused whatever its value (TPU-MLIR's default means "not given")."""

    flag: str
    accepted: tuple[object, ...]
    why: str

    @property
    def switch(self) -> bool:
        return self.accepted == (False,)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


def add_checked_flags(parser: argparse.ArgumentParser, flags: tuple[Checked, ...]) -> None:
    group = parser.add_argument_group("TPU-MLIR flags checked, not modelled (docs/tools.md)")
    for f in flags:
        if f.switch:
            group.add_argument(f.flag, dest=f.dest, action="store_true", help=f"not supported: {f.why}")
        elif not f.accepted:
            group.add_argument(f.flag, dest=f.dest, default=None, help=f"not supported: {f.why}")
        else:
            shown = ", ".join(_shown(a) for a in f.accepted)
            group.add_argument(f.flag, dest=f.dest, default=f.accepted[0], help=f"accepted: {shown} ({f.why})")


def check_flags(tool: str, args: argparse.Namespace, flags: tuple[Checked, ...]) -> None:
    """The first flag whose value is not accepted, as one error."""
    for f in flags:
        value = getattr(args, f.dest)
        if f.switch or not f.accepted:
            if value not in (False, None):
                shown = f"{f.flag} {_shown(value)}" if not f.switch else f.flag
                raise TpudslError(f"{tool}: {shown} is not supported: {f.why} (supported: without {f.flag})")
        elif value not in f.accepted:
            shown = " or ".join(f"{f.flag} {_shown(a)}" for a in f.accepted)
            raise TpudslError(f"{tool}: {f.flag} {_shown(value)} is not supported: {f.why} (supported: {shown})")


def _shown(value: object) -> str:
    return "''" if value == "" else str(value)
