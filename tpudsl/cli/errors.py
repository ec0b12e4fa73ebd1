"""How every tpudsl command reports failure: one line on stderr, no traceback.

    def main(argv=None):
        return run_cli(_main, argv)

Exit status: 0 success, 1 bad input or usage (TpudslError, OSError, argument errors),
2 an internal error (a bug in tpudsl: the message says so and how to report it). Every command
takes `--debug`, which prints the traceback of an internal error before its line; the environment
variable TPUDSL_TRACEBACK=1 lets the exception escape instead (for a debugger).

This module is imported before any command parses its arguments, so it imports nothing heavy:
`--help` must answer at once (tests/test_cli_errors.py, test_help_imports_nothing_heavy).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn

from xdsl.utils.exceptions import DiagnosticException

from tpudsl.ir.diagnostics import InternalError, TpudslError, one_line, same_file

EXIT_BAD_INPUT = 1
EXIT_INTERNAL = 2
DEBUG_FLAG = "--debug"
REPORT_HINT = "this is a bug in tpudsl: please report it with the command line and its input files; --debug shows the traceback"


class CliArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage errors as TpudslError (argparse itself prints usage and exits 2)."""

    def __init__(self, *args, debug_help: str = "show the traceback of an internal error", **kwargs):
        kwargs.setdefault("allow_abbrev", False)  # `--canon` must not silently mean `--canonicalize`
        super().__init__(*args, **kwargs)
        # Read by run_cli before parsing (an internal error can happen in the parser's callers).
        self.add_argument(DEBUG_FLAG, action="store_true", help=debug_help)

    def error(self, message: str) -> NoReturn:
        raise TpudslError(f"{message} (see {self.prog} --help)")


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """`--threads N`: BLAS threads of the Top interpreter (default: tpudsl.interp.threads)."""

    def positive(text: str) -> int:
        if not text.isdigit() or int(text) < 1:
            raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
        return int(text)

    parser.add_argument("--threads", type=positive, default=None,
                        help="BLAS threads of the Top interpreter (default: half the cores, at most 8)")


def refuse_overwriting(flag: str, out: str | os.PathLike[str], inputs: Mapping[str, str | os.PathLike[str]]) -> None:
    """The file a command writes, `out` (given by `flag`), naming one it reads (`inputs`: how the
    message names each, its path): one error before anything is read or written, never an input
    replaced by the command's output."""
    for named, path in inputs.items():
        if same_file(out, path):
            raise TpudslError(f"{flag} '{out}' would overwrite {named}; choose another name")


def os_error_message(e: OSError) -> str:
    """`error: cannot open 'x.mlir': No such file or directory`."""
    reason = e.strerror or str(e)
    return f"error: cannot open '{e.filename}': {reason}" if e.filename else f"error: {reason}"


def run_cli(main: Callable[[Sequence[str]], int | None], argv: Sequence[str] | None = None) -> NoReturn:
    """Run `main(argv)` and exit with its status, turning errors into one line on stderr."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        status = main(args) or 0
    except TpudslError as e:
        status = _report(str(e), EXIT_BAD_INPUT)
    except OSError as e:
        status = _report(os_error_message(e), EXIT_BAD_INPUT)
    except DiagnosticException as e:  # an xDSL pass rejected the input (PassFailedException, ...)
        status = _report("error: " + one_line(str(e)), EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        status = _report("error: interrupted", 130)
    except Exception as e:
        if os.environ.get("TPUDSL_TRACEBACK"):
            raise
        if DEBUG_FLAG in args:
            traceback.print_exc()
        status = _report(internal_error_message(e), EXIT_INTERNAL)
    sys.stdout.flush()
    sys.exit(status)


def internal_error_message(e: Exception) -> str:
    """`error: internal error: KeyError: 'x' (this is a bug ...)`, or for an InternalError
    `error: internal error in <where>: <the exception it was raised from> (...)`."""
    if isinstance(e, InternalError) and e.__cause__ is not None:
        where, e = f" in {e.where}", e.__cause__
    else:
        where = ""
    return f"error: internal error{where}: {type(e).__name__}: {one_line(str(e))} ({REPORT_HINT})"


def _report(message: str, status: int) -> int:
    print(message, file=sys.stderr)
    return status
