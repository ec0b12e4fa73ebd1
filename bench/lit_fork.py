"""CPU of one tool run as lit makes it: through the fork server against a direct start, alternating.

    .venv/bin/python bench/lit_fork.py --runs 20

A forked run costs the client (this process's reaped child) plus the tool's child, which the
server reaps: the server's cutime + cstime in /proc/PID/stat (clock ticks, so only the mean over
the runs means anything). A direct run is this process's child. The ratio forked/direct is the
result; the server's own start (once per lit run) is printed beside it. docs/testing.md.
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

SERVER, CLIENT = ROOT / "lit_tests" / "forkserver.py", ROOT / "lit_tests" / "forkclient.py"
TOP = """// CHECK: top.Relu
module {
  func.func @main(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("x")
    %1 = "top.Relu"(%0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("y")
    return %1 : tensor<1x3x8x8xf32>
  }
}
"""
# label -> what follows `python` ({top}: the module above, {d}: a scratch directory)
COMMANDS = {
    "tpuc-opt --shape-infer": ["{tools}/tpuc-opt.py", "{top}", "--shape-infer"],
    "tpuc-opt --convert-top-to-tpu": ["{tools}/tpuc-opt.py", "{top}", "--processor-assign=chip=tiny mode=F32",
                                      "--convert-top-to-tpu"],
    "filecheck": ["-m", "filecheck", "{top}", "--input-file", "{top}"],
    "python -c (numpy, write an npz)": ["-c", "import numpy as np; np.savez('{d}/x.npz', x=np.zeros(3))"],
}


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def reaped_cpu(pid: int) -> float:
    """CPU of the children `pid` has reaped (cutime + cstime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="print only, leave bench/RESULTS.md alone")
    args = parser.parse_args()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")}  # lit's scrubbed kind
    with tempfile.TemporaryDirectory(prefix="tpudsl-bench-") as d:
        Path(d, "top.mlir").write_text(TOP)
        sock = os.path.join(d, "s")
        server = subprocess.Popen([sys.executable, str(SERVER), sock], env=env, stdout=subprocess.PIPE)
        assert server.stdout.readline() == b"ready\n"
        own = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()  # not reaped yet
        server_start = (int(own[11]) + int(own[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        totals = {label: {"forked": 0.0, "direct": 0.0} for label in COMMANDS}
        for _ in range(args.runs):
            for label, argv in COMMANDS.items():
                argv = [a.format(tools=ROOT / "tools", top=Path(d, "top.mlir"), d=d) for a in argv]
                c0, s0 = children_cpu(), reaped_cpu(server.pid)
                subprocess.run([sys.executable, "-I", "-S", str(CLIENT), sock, *argv], env=env, cwd=d,
                               stdout=subprocess.DEVNULL, check=True)
                totals[label]["forked"] += children_cpu() - c0 + reaped_cpu(server.pid) - s0
                c0 = children_cpu()
                subprocess.run([sys.executable, *argv], env=env, cwd=d, stdout=subprocess.DEVNULL, check=True)
                totals[label]["direct"] += children_cpu() - c0
        server.terminate()
        server.wait()
    load = os.getloadavg()[0]
    rows = ["| run | direct CPU (s) | forked CPU (s) | forked/direct |", "|---|---|---|---|"]
    for label, t in totals.items():
        direct, forked = t["direct"] / args.runs, t["forked"] / args.runs
        rows.append(f"| `{label}` | {direct:.3f} | {forked:.3f} | {forked / direct:.2f} |")
    publish("lit_fork", "\n".join([
        "## lit_fork: CPU of one tool run, through lit's fork server vs a direct start (alternating)",
        "",
        f"Command: `.venv/bin/python bench/lit_fork.py --runs {args.runs}` (mean user + sys CPU of {args.runs} runs",
        f"each; forked = client + the tool's forked child; load average {load:.1f} at the end). The server's",
        f"own start, once per lit run: {server_start:.2f} s.",
        "",
        *rows,
    ]), write=not args.no_write)


if __name__ == "__main__":
    main()
