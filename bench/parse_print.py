"""Parse/print speed of tpudsl's MLIR text layer against xDSL's parser and printer.

Usage: .venv/bin/python bench/parse_print.py [--ops 10000] [--write bench/RESULTS.md]

Times are CPU seconds (time.process_time), best of N: the 2-core machine is shared with other
test runs, which makes wall-clock numbers swing by 2-3x. Generates a TPU-MLIR-style Top module (4-D tensor ops in generic form, `loc(#locN)` on every op,
the `#locN = loc("...")` aliases at the end of the file), then times, best of 3:
tpudsl parse, tpudsl print (with debuginfo), xDSL parse (aliases moved first, since xDSL
rejects trailing ones) and xDSL's generic printer on the same IR.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import re
import sys
import time
from pathlib import Path

from xdsl.parser import Parser
from xdsl.printer import Printer

import _common  # noqa: E402
from tpudsl.dialects import make_context
from tpudsl.ir.parser import parse_module
from tpudsl.ir.printer import print_module

SECTION = "## parse_print: MLIR text layer, 10k-op Top module"


def generate_top_module(n_ops: int) -> str:
    """A chain of conv/relu/pool/add blocks on 1x64x56x56 tensors, `n_ops` ops in all."""
    act = "tensor<1x64x56x56xf32>"
    w, b = "tensor<64x64x3x3xf32>", "tensor<64xf32>"
    conv_attrs = (
        "{dilations = [1, 1], do_relu = false, group = 1 : i64, kernel_shape = [3, 3], "
        "pads = [1, 1, 1, 1], relu_limit = -1.000000e+00 : f64, strides = [1, 1]}"
    )
    lines = [
        "#loc = loc(unknown)",
        'module attributes {module.chip = "ALL", module.name = "bench", module.platform = "ONNX", '
        'module.state = "TOP_F32", module.weight_file = "bench_top_f32_all_origin_weight.npz"} {',
        f"  func.func @main(%arg0: {act} loc(unknown)) -> {act} {{",
        f'    %0 = "top.Input"(%arg0) {{channel_format = "nchw", pixel_format = "bgr"}} : ({act}) -> {act} loc(#loc1)',
    ]
    names = ["input"]
    v, x = 1, 0  # next value number, current activation
    while v < n_ops:
        kind = (v // 4) % 3
        if kind == 0 or n_ops - v < 4:
            op = f'"top.Relu"(%{x}) {{relu_limit = -1.000000e+00 : f64}} : ({act}) -> {act}'
            names.append(f"{v}_Relu")
            lines.append(f"    %{v} = {op} loc(#loc{v + 1})")
            x, v = v, v + 1
            continue
        lines.append(f'    %{v} = "top.Weight"() : () -> {w} loc(#loc{v + 1})')
        lines.append(f'    %{v + 1} = "top.Weight"() : () -> {b} loc(#loc{v + 2})')
        lines.append(
            f'    %{v + 2} = "top.Conv"(%{x}, %{v}, %{v + 1}) {conv_attrs} : ({act}, {w}, {b}) -> {act} loc(#loc{v + 3})'
        )
        names += [f"layer{v}.weight", f"layer{v}.bias", f"/layer{v}/Conv_output_0_Conv"]
        if kind == 1:
            lines.append(f'    %{v + 3} = "top.Add"(%{v + 2}, %{x}) {{do_relu = true}} : ({act}, {act}) -> {act} loc(#loc{v + 4})')
            names.append(f"/layer{v}/Add_output_0_Add")
        else:
            lines.append(
                f'    %{v + 3} = "top.MaxPool"(%{v + 2}) {{ceil_mode = false, kernel_shape = [3, 3], pads = [1, 1, 1, 1], '
                f"strides = [1, 1]}} : ({act}) -> {act} loc(#loc{v + 4})"
            )
            names.append(f"/layer{v}/MaxPool_output_0_MaxPool")
        x, v = v + 3, v + 4
    lines.append(f"    return %{x} : {act} loc(#loc)")
    lines.append("  } loc(#loc)")
    lines.append("} loc(#loc)")
    lines += [f'#loc{i + 1} = loc("{name}")' for i, name in enumerate(names)]
    return "\n".join(lines) + "\n"


def best_of(runs: int, fn) -> tuple[float, float, object]:
    """Best CPU time and best wall time of `runs` calls (the machine is shared, so wall time
    also measures the neighbours), and the last result."""
    best_cpu = best_wall = float("inf")
    result = None
    for _ in range(runs):
        c0, w0 = time.process_time(), time.perf_counter()
        result = fn()
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    return best_cpu, best_wall, result


def xdsl_text(text: str) -> str:
    """The same module with the `#loc` aliases first, which xDSL's parser needs."""
    alias = re.compile(r"^#[\w$.-]+ = ")
    lines = text.splitlines()
    return "\n".join([line for line in lines if alias.match(line)] + [line for line in lines if not alias.match(line)])


def xdsl_print(module) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True, print_debuginfo=True).print_op(module)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--ops", type=int, default=10_000)
    args.add_argument("--runs", type=int, default=3)
    args.add_argument("--write", type=Path, help="replace this script's section of the given RESULTS.md")
    opts = args.parse_args(argv)

    text = generate_top_module(opts.ops)
    ctx = make_context(allow_unregistered=True)
    n = sum(1 for line in text.splitlines() if line.startswith("    "))  # ops inside the function
    t_parse, w_parse, module = best_of(opts.runs, lambda: parse_module(text, "bench.mlir", ctx))
    t_print, w_print, printed = best_of(opts.runs, lambda: print_module(module, debuginfo=True))
    assert printed == text, "tpudsl print(parse(text)) must reproduce the generated text"
    moved = xdsl_text(text)
    t_xparse, _, xmodule = best_of(opts.runs, lambda: Parser(ctx, moved, "bench.mlir").parse_module())
    t_xprint, _, _ = best_of(opts.runs, lambda: xdsl_print(xmodule))

    rows = [
        ("parse", n / t_parse, n / w_parse, n / t_xparse, t_xparse / t_parse, 20_000),
        ("print (debuginfo)", n / t_print, n / w_print, n / t_xprint, t_xprint / t_print, 40_000),
    ]
    report = [
        SECTION,
        "",
        f"Command: `.venv/bin/python bench/parse_print.py --ops {opts.ops}` ({time.strftime('%Y-%m-%d %H:%M')}; "
        f"best of {opts.runs} by CPU time; {len(text) / 1e6:.2f} MB, {n} ops; Python {platform.python_version()}, "
        f"{platform.machine()}; machine shared with other jobs, load average {os.getloadavg()[0]:.1f})",
        "",
        "| step | tpudsl ops/s (CPU) | tpudsl ops/s (wall) | xDSL ops/s (CPU) | speed-up | target ops/s |",
        "|---|---|---|---|---|---|",
    ]
    for name, ours, wall, theirs, ratio, target in rows:
        mark = "met" if ours >= target else "MISSED"
        report.append(f"| {name} | {ours:,.0f} | {wall:,.0f} | {theirs:,.0f} | {ratio:.1f}x | {target:,} ({mark}) |")
    report += [
        "",
        "The generated text is also the expected output: tpudsl's print(parse(text)) reproduces it byte for byte.",
    ]
    print("\n".join(report))
    if opts.write:
        _common.write_section("parse_print", "\n".join(report), opts.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
