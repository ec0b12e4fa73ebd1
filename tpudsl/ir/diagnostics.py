"""User-facing errors: one line `FILE:LINE:COL: error: message` (or `error: message`)."""

from __future__ import annotations


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
