"""User-facing errors: one line `FILE:LINE:COL: error: message` (or `error: message`)."""

from __future__ import annotations

import os


def one_line(message: str) -> str:
    """`message` on one line: its lines and runs of spaces joined by single spaces."""
    return " ".join(message.split())


def last_line(message: str) -> str:
    """The last non-empty line of `message`, stripped (an xDSL message may carry source context
    above it; a traceback ends with the exception's line)."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


class TpudslError(Exception):
    """An error to show the user as one line, without a traceback."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None, col: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col

    def __str__(self) -> str:
        if self.file and self.line is not None:
            return f"{self.file}:{self.line}:{self.col or 1}: error: {self.message}"
        if self.file:
            return f"{self.file}: error: {self.message}"
        return f"error: {self.message}"


class InternalError(Exception):
    """A bug in tpudsl found while handling one named thing (an ONNX node's converter, a pass):
    `where` says what, the exception it was raised from says how. The CLI reports it as an
    internal error, never as bad input."""

    def __init__(self, where: str):
        super().__init__(where)
        self.where = where


def check_option(pass_name: str, option: str, value: object, accepted: tuple, why: str) -> None:
    """Reject a pass option value tpudsl does not model, naming what it does accept and why: a
    TPU-MLIR command line asking for behaviour we lack fails instead of being silently ignored."""
    if value not in accepted:
        shown = " or ".join(f"{option}={_shown(a)}" for a in accepted)
        raise TpudslError(f"{pass_name}: {option}={_shown(value)} is not supported: {why} (supported: {shown})")


def _shown(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether paths `a` and `b` name one file, through symlinks (os.path.realpath never raises,
    unlike Path.resolve() on a symlink loop)."""
    return os.path.realpath(a) == os.path.realpath(b)
