"""CPU of the command starts the lit suite makes, this tree against a base tree, alternating.

    git archive main | tar -x -C /tmp/base        # the base: any checkout of another revision
    .venv/bin/python bench/startup.py --base /tmp/base --runs 20

lit's cost is ~900 process starts (docs/testing.md), so what counts is the CPU (user + sys) of one
start of each kind of command line it runs, measured as the children's rusage of this process.
The two trees run alternately, so that a change in the machine's load falls on both; the ratio
this/base is the result (the reference: `python -c pass`, the interpreter's own start).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, publish

TOP = """module attributes {module.weight_file = "none.npz"} {
  func.func @main(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("x")
    %1 = "top.Relu"(%0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("y")
    return %1 : tensor<1x3x8x8xf32>
  }
}
"""
# label -> tpuc-opt arguments ({top}: the Top module above; {lg}: a Tpu lit test of the tree)
COMMANDS = {
    "print (no pass)": ["{top}"],
    "--shape-infer": ["{top}", "--shape-infer"],
    "--canonicalize (no weight data)": ["{top}", "--canonicalize"],
    "--processor-assign --convert-top-to-tpu": ["{top}", "--processor-assign=chip=tiny mode=F32",
                                                "--convert-top-to-tpu"],
    "--layer-group (Tpu, split input)": ["{lg}", "--layer-group", "--split-input-file"],
}


def cpu_of(argv: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env={"PATH": ""})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="a checkout of the revision to compare with")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="print only, leave bench/RESULTS.md alone")
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "this": ROOT}
    with tempfile.TemporaryDirectory() as d:
        top = Path(d) / "top.mlir"
        top.write_text(TOP)
        lines = {"python -c pass": {side: [sys.executable, "-c", "pass"] for side in trees}}
        for label, args_ in COMMANDS.items():
            lines[label] = {side: [sys.executable, str(tree / "tools" / "tpuc-opt.py"),
                                   *(a.format(top=top, lg=tree / "lit_tests/backend/layer_group.mlir") for a in args_)]
                            for side, tree in trees.items()}
        totals = {label: dict.fromkeys(trees, 0.0) for label in lines}
        for _ in range(args.runs):
            for label, by_side in lines.items():
                for side, argv in by_side.items():
                    totals[label][side] += cpu_of(argv)
    load = os.getloadavg()[0]
    rows = ["| command line | base CPU (s) | this CPU (s) | this/base |", "|---|---|---|---|"]
    for label, t in totals.items():
        base, this = t["base"] / args.runs, t["this"] / args.runs
        rows.append(f"| `{label}` | {base:.3f} | {this:.3f} | {this / base:.2f} |")
    text = "\n".join([
        "## startup: CPU of one tpuc-opt start, base tree vs this tree (alternating)",
        "",
        f"Command: `.venv/bin/python bench/startup.py --base BASE --runs {args.runs}` (mean user + sys CPU of",
        f"{args.runs} runs each; load average {load:.1f} at the end).",
        "",
        *rows,
    ])
    publish("startup", text, write=not args.no_write)


if __name__ == "__main__":
    main()
