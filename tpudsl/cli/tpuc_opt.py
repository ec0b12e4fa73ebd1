"""tpuc-opt: parse a .mlir file, run passes in the order given, print the result (like mlir-opt).

    tpuc-opt in.mlir --shape-infer --canonicalize -o out.mlir
    tpuc-opt in.mlir --canonicalize --deinit="no_save_weight=true" -o out.mlir
    tpuc-opt in.mlir -p 'shape-infer,canonicalize'
    tpuc-opt in.mlir --pass-pipeline='builtin.module(shape-infer,canonicalize)'

Verification: the input is verified after parsing (passes may assume valid IR) and the result
after the last pass. `--verify-each` also verifies after every pass, naming the pass that broke
the IR. (mlir-opt verifies after each pass by default; we do not, because verifying a large
module after each of a dozen passes costs more than the passes themselves.)

Weights: as in TPU-MLIR, a command line with passes runs `init` first and `deinit` last (added
when not given): init reads the .npz named by `module.weight_file`, deinit decides whether the
passes changed the weights and where they go; the driver writes them with the output
(tpudsl/rewrites/init_deinit.py). docs/tpuc-opt.md lists every flag.

Everything heavy (xDSL's dialects, numpy, the passes) is imported after the arguments are parsed,
so that `tpuc-opt --help` answers at once.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.ir.diagnostics import InternalError, TpudslError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass

    from tpudsl.cli.pass_options import PassSpec
    from tpudsl.rewrites.init_deinit import WeightsToWrite

SPLIT_MARKER = "// -----"
_SPLIT_LINE = re.compile(r"^// -----.*$\n?", re.MULTILINE)
_PIPELINE_FLAGS = ("-p", "--passes", "--pass-pipeline")

_EPILOG = """passes, run in the order given (mix the forms freely):
  --<pass>                  e.g. --shape-infer --canonicalize
  --<pass>="k=v k2=v2"      MLIR-style options, e.g. --deinit="no_save_weight=true"
  -p 'a,b{k=v}'             xDSL-style pipeline
  --pass-pipeline='builtin.module(a,b{k=v})'
  --list-passes shows the passes and their options.
As TPU-MLIR's tpuc-opt does, any passes run between --init (first: reads the weight file) and
--deinit (last: saves changed weights next to -o); both are added when not given."""


def _argument_parser() -> CliArgumentParser:
    p = CliArgumentParser(
        prog="tpuc-opt",
        description="Run tpudsl passes on an MLIR file.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' or nothing: stdin)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout); written only on success")
    p.add_argument("--list-passes", action="store_true", help="list the passes with their options and exit")
    p.add_argument("--verify-each", action="store_true", help="verify after every pass (default: input and result only)")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR to stderr after every pass")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations (loc(\"name\"))")
    p.add_argument("--allow-unregistered-dialect", action="store_true", help="accept unknown ops and keep them as they are")
    p.add_argument("--split-input-file", action="store_true", help=f"process each '{SPLIT_MARKER}' chunk on its own")
    p.add_argument("--debug-only", default="", metavar="TYPES",
                   help="comma-separated debug types; 'pattern-application' logs applied rewrite patterns to stderr")
    p.add_argument("--mlir-disable-threading", action="store_true", help="accepted for TPU-MLIR scripts; tpuc-opt is single-threaded")
    p.add_argument("--debug_cmd", default="", metavar="CMDS",
                   help="TPU-MLIR's debug commands; accepted only empty (--debug_cmd=), as its deploy script writes it")
    return p


@dataclass
class Options:
    args: argparse.Namespace
    passes: list[ModulePass]


def _split_pass_flags(argv: Sequence[str], long_flags: set[str]) -> tuple[list[PassSpec], list[str]]:
    """Take the pass flags out of argv (keeping their order); the rest goes to argparse.

    Pass flags need their own scan because `--canonicalize in.mlir` must not read `in.mlir` as
    options, and because -p and --<pass> interleave. Like LLVM, `-flag` means `--flag`."""
    from tpudsl.cli.pass_options import PassSpec, parse_options, parse_pipeline
    from tpudsl.passes import PASSES

    specs: list[PassSpec] = []
    rest: list[str] = []
    items = iter(argv)
    for arg in items:
        if arg.startswith("-") and not arg.startswith("--") and arg[1:].partition("=")[0] in long_flags | set(PASSES):
            arg = "-" + arg
        name, eq, value = arg.partition("=")
        if name in _PIPELINE_FLAGS:
            if not eq:
                value = next(items, None)
                if value is None:
                    raise TpudslError(f"{name} needs a pipeline, e.g. {name} 'canonicalize,cse'")
            specs.extend(parse_pipeline(value))
        elif name.startswith("--") and name[2:] in PASSES:
            specs.append(PassSpec(name[2:], parse_options(value) if eq and value.strip() else {}))
        else:
            rest.append(arg)
    return specs, rest


def _parse_args(argv: Sequence[str]) -> Options:
    parser = _argument_parser()
    if "-h" in argv or "--help" in argv:
        parser.parse_args(["--help"])  # prints the help and exits, before anything heavy is imported
    from tpudsl.cli.pass_options import instantiate
    from tpudsl.passes import PASSES, pass_class

    # argparse has no public list of its flags; the LLVM-style `-flag` spelling needs them.
    long_flags = {s[2:] for a in parser._actions for s in a.option_strings if s.startswith("--")}
    specs, rest = _split_pass_flags(argv, long_flags)
    args, unknown = parser.parse_known_args(rest)
    for extra in unknown:
        if extra.startswith("-"):
            raise TpudslError(
                f"unknown option or pass '{extra}'; known passes: {', '.join(sorted(PASSES))} (see tpuc-opt --help)"
            )
        raise TpudslError(f"unexpected argument '{extra}': tpuc-opt reads one input file")
    if args.debug_cmd:
        raise TpudslError(f"--debug_cmd={args.debug_cmd}: TPU-MLIR's debug commands are not modelled "
                          "(supported: --debug_cmd= with no commands)")
    if len(argv) > 1:
        # TPU-MLIR's tpuc-opt appends --mlir-print-debuginfo to every command line with more than
        # one argument (locations are its tensor names), and its lit tests' CHECK lines expect
        # `loc(...)`; `tpuc-opt FILE` alone prints none, as mlir-opt does.
        args.mlir_print_debuginfo = True
    return Options(args, [instantiate(pass_class(s.name), s) for s in _with_init_deinit(specs)])


def _with_init_deinit(specs: list[PassSpec]) -> list[PassSpec]:
    """The passes with `init` first and `deinit` last, as TPU-MLIR's tpuc-opt adds them to every
    command line with passes (when not given). Anywhere else they would load the weights after a
    pass used them, or save them before a pass changed them: an error."""
    from tpudsl.cli.pass_options import PassSpec

    if not specs:
        return specs
    names = [s.name for s in specs]
    for name, place, index in (("init", "first", 0), ("deinit", "last", len(specs) - 1)):
        if any(n == name for i, n in enumerate(names) if i != index):
            raise TpudslError(f"pass '{name}' must come {place}: it {'loads' if name == 'init' else 'saves'} "
                              "the weights the other passes use")
    return [*([] if names[0] == "init" else [PassSpec("init", {})]), *specs,
            *([] if names[-1] == "deinit" else [PassSpec("deinit", {})])]


def _list_passes() -> str:
    from tpudsl.cli.pass_options import option_fields
    from tpudsl.passes import PASSES, pass_class, pass_summary

    lines = []
    for name in sorted(PASSES):
        try:
            cls = pass_class(name)
        except TpudslError as e:
            lines.append(f"  {name:24} (unavailable: {e.message})")
            continue
        part_of = " (part of canonicalize)" if PASSES[name].canonical else ""
        lines.append(f"  {name:24} {pass_summary(name, cls)}{part_of}".rstrip())
        for option, ty in option_fields(cls).items():
            default = getattr(cls, option, None)
            lines.append(f"      {option}: {getattr(ty, '__name__', ty)} = {default!r}")
    return "Available passes:\n" + "\n".join(lines) + "\n"


def _read_input(name: str) -> tuple[str, str]:
    """(display name, text) of the input; '-' is stdin."""
    if name == "-":
        return "<stdin>", sys.stdin.read()
    try:
        return name, Path(name).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TpudslError(f"not UTF-8 text (byte {e.start})", name) from None
    except OSError as e:
        if e.filename is None:  # a read error (EIO) names no file: name the input
            raise OSError(e.errno, e.strerror, name) from None
        raise


def _chunks(text: str, split: bool) -> list[tuple[str, int | None]]:
    """The input, or its `// -----` chunks, each padded with newlines to keep its line numbers,
    with the line of the marker before it (1 for the first chunk; None without splitting), which
    names the chunk in default locations as MLIR names it (`within split at FILE:LINE offset `)."""
    if not split:
        return [(text, None)]
    chunks, start, line = [], 0, 0
    for marker in _SPLIT_LINE.finditer(text):
        chunks.append(("\n" * line + text[start : marker.start()], max(line, 1)))
        line = text.count("\n", 0, marker.end()) + (0 if marker.group().endswith("\n") else 1)
        start = marker.end()
    chunks.append(("\n" * line + text[start:], max(line, 1)))
    return chunks


def _verify(module: ModuleOp, filename: str, after: str | None) -> None:
    from tpudsl.ir.module import verify_module

    try:
        verify_module(module, filename)
    except TpudslError as e:
        if after is None:
            raise
        raise TpudslError(f"{e.message} (after {after})", e.file, e.line, e.col) from None


def _at_source(e: TpudslError, filename: str) -> TpudslError:
    """A pass's error placed in the input: at the parsed position of the op it names (`e.op`,
    a convention of tpudsl passes), else at the file."""
    if e.line is not None:
        return e
    from tpudsl.ir.parser import position_of

    op = getattr(e, "op", None)
    where = position_of(op) if op is not None else None
    return TpudslError(e.message, *where) if where else TpudslError(e.message, e.file or filename)


def _process(
    text: str, filename: str, opts: Options, split_line: int | None = None
) -> tuple[str, WeightsToWrite | None]:
    """The printed result and the weights to write for it (when the passes changed them)."""
    from xdsl.utils.exceptions import DiagnosticException

    from tpudsl.dialects import make_context
    from tpudsl.ir.parser import parse_module
    from tpudsl.ir.printer import print_module
    from tpudsl.rewrites.init_deinit import bind_weight_file

    args = opts.args
    ctx = make_context(allow_unregistered=args.allow_unregistered_dialect)
    module = parse_module(text, filename, ctx, split_line)
    _verify(module, filename, None)
    weight_file = bind_weight_file(module, filename, args.output)  # read by init and deinit
    for p in opts.passes:
        try:
            p.apply(ctx, module)
        except TpudslError as e:
            raise (e if p.name == "deinit" else _at_source(e, filename)) from None  # deinit's are about the output
        except DiagnosticException:
            raise  # an xDSL pass rejected the input: bad input, reported by run_cli
        except Exception as e:
            raise InternalError(f"pass '{p.name}'") from e
        if args.mlir_print_ir_after_all:
            header = f"// -----// IR Dump After {type(p).__name__} ({p.name}) //----- //"
            print(header, print_module(module, debuginfo=args.mlir_print_debuginfo), sep="\n", end="", file=sys.stderr)
        if args.verify_each:
            _verify(module, filename, f"pass '{p.name}'")
    if opts.passes and not args.verify_each:
        _verify(module, filename, "the passes; --verify-each names the pass that broke it")
    to_write = weight_file.to_write
    # New weights are keyed by loc name: without the locations the output could not be read with them.
    return print_module(module, debuginfo=args.mlir_print_debuginfo or to_write is not None), to_write


def _run(argv: Sequence[str]) -> int:
    opts = _parse_args(argv)
    from tpudsl.ir.module import npz_writer, write_files_atomically
    from tpudsl.passes import PATTERN_LOG

    args = opts.args
    if args.list_passes:
        sys.stdout.write(_list_passes())
        return 0
    filename, text = _read_input(args.input)
    outputs: list[str] = []
    new_weights: list[WeightsToWrite] = []
    failed = False
    PATTERN_LOG.reset("pattern-application" in args.debug_only.split(","))
    try:
        for chunk, split_line in _chunks(text, args.split_input_file):
            try:
                output, to_write = _process(chunk, filename, opts, split_line)
                outputs.append(output)
                new_weights += [to_write] if to_write else []
            except TpudslError as e:
                if not args.split_input_file:
                    raise
                print(e, file=sys.stderr)  # like mlir-opt: report every failing chunk, then fail
                failed = True
            if PATTERN_LOG.enabled:
                print(PATTERN_LOG.summary(), file=sys.stderr)  # one per chunk
    finally:
        PATTERN_LOG.reset(False)  # in-process callers (tests, tools) must not inherit the log
    if failed:
        return 1
    if len(new_weights) > 1:
        raise TpudslError(f"the passes changed the weights of {len(new_weights)} chunks; one output has one weight file")
    result = f"{SPLIT_MARKER}\n".join(outputs)
    # The npz first (the .mlir must never name a missing npz), both in one transaction: an output
    # that cannot be written leaves the old npz untouched too.
    files = [(w.path, npz_writer(w.weights)) for w in new_weights]
    if args.output != "-":
        files.append((args.output, lambda f: f.write(result.encode())))
    write_files_atomically(files)
    if args.output == "-":
        sys.stdout.write(result)
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    run_cli(_run, argv)


if __name__ == "__main__":
    main()
