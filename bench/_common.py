"""Shared bits of the benches: paths, thread pinning, RESULTS.md section replacement, the
onnxruntime session and Top module every interpreter bench builds, and the BLAS kernels in use.

Importing it puts the repository root and tests/ on sys.path (a bench runs as `python bench/x.py`,
so Python already finds this module beside it), which is the whole prologue of a bench script:
`import _common`, then `_common.pin_one_thread()` where numpy must see one thread."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS.md"


def pin_one_thread() -> None:
    """One BLAS/OpenMP thread for numpy, so the interpreter and onnxruntime (intra_op=1) compare fairly.
    Must run before numpy is imported."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def _add_paths() -> None:
    for p in (str(ROOT), str(ROOT / "tests")):
        if p not in sys.path:
            sys.path.insert(0, p)


_add_paths()


def _markers(key: str) -> tuple[str, str]:
    """The lines that open and close section `key` of RESULTS.md."""
    return f"<!-- {key}:begin -->", f"<!-- {key}:end -->"


def _inside(text: str, begin: str, end: str) -> tuple[str, str, str]:
    """`text` before `begin`, between the markers, after `end` (both present)."""
    head, rest = text.split(begin, 1)
    inside, tail = rest.split(end, 1)
    return head, inside, tail


def write_section(key: str, text: str, path: Path = RESULTS) -> None:
    """Replace (or append) the section between `<!-- key:begin -->` and `<!-- key:end -->` of `path`."""
    begin, end = _markers(key)
    block = f"{begin}\n{text.rstrip()}\n{end}\n"
    old = path.read_text() if path.exists() else "# Benchmark results\n\n"
    if begin in old and end in old:
        head, _, tail = _inside(old, begin, end)
        new = head + block + tail.lstrip("\n")
    else:
        new = old.rstrip("\n") + "\n\n" + block
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(new)
    os.replace(tmp, path)


def read_section(key: str, path: Path = RESULTS) -> str | None:
    """The text write_section put between `key`'s markers, or None when `path` has no such section."""
    begin, end = _markers(key)
    old = path.read_text() if path.exists() else ""
    if begin not in old or end not in old:
        return None
    return _inside(old, begin, end)[1].strip("\n")


def transform(name: str, model, feed, d: Path, calibrate: bool = False) -> tuple[str, list[str]]:
    """`model` (a ModelProto) through tests/zoo_transform.transform in `d` (model_transform with
    feed(model, 0) as its --test_input: its Top check against onnxruntime; it writes d / NAME.mlir
    and d / NAME_in_f32.npz) and, with `calibrate`, run_calibration on 8 samples feed(model, 1..8)
    to d / cali_table. The .mlir's path and model_deploy's calibration arguments ([] without)."""
    import numpy as np

    from tests.zoo_transform import transform as checked_transform
    from tpudsl.cli import run_calibration

    checked_transform(d, name, model, feed(model, 0))
    mlir = str(d / f"{name}.mlir")
    if not calibrate:
        return mlir, []
    (d / "cali").mkdir(exist_ok=True)
    for seed in range(8):
        np.savez(d / "cali" / f"s{seed}.npz", **feed(model, seed + 1))
    run_calibration._main([mlir, "--dataset", str(d / "cali"), "--input_num", "8", "--quiet", "-o",
                           str(d / "cali_table")])
    return mlir, ["--calibration_table", str(d / "cali_table")]


def publish(key: str, text: str, write: bool = True) -> None:
    """Print a bench's section and, unless the run asked not to (`--no-write`), put it in RESULTS.md."""
    print(text)
    if write:
        write_section(key, text)


def ort_session(model, threads: int = 1, basic: bool = False, profile_prefix: str | None = None):
    """An onnxruntime CPU session of `model` (a ModelProto): `threads` intra-op threads (0: its
    default, one per core), one inter-op thread, warnings off. `basic`: ORT_ENABLE_BASIC graph
    optimisations only (no NCHWc layout, no fusions); `profile_prefix`: profile to that file.

    With more than one thread its pool threads do not spin (`session.intra_op.allow_spinning` 0):
    by default they spin after each run, beside the interpreter's timed runs in the same process
    (their CPU counted in its process_time, its core taken). Without spinning onnxruntime itself
    measured faster under a load (EfficientNet-style 17.0 -> 11.6 ms, ResNet-18 105 -> 84 ms, one
    busy competitor, load ~6)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    if threads != 1:
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    if basic:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    if profile_prefix is not None:
        opts.enable_profiling = True
        opts.profile_file_prefix = profile_prefix
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def top_module(model, name: str):
    """`model` (a ModelProto) as model_transform writes it: converted, then canonicalized."""
    from onnx_node.harness import apply_canonicalize, convert_onnx

    return apply_canonicalize(convert_onnx(model, name))


def blas_kernels() -> str:
    """numpy's BLAS and the kernel set it picked at load ("openblas SkylakeX"): OPENBLAS_CORETYPE,
    read once when the library loads, can force slower ones (docs/interpreter.md, BLAS kernels);
    and whether the CPU has AVX-512, which decides numpy's fast exponential (mathfn.NEG_EXP) and
    OpenBLAS's fastest kernels: the sessions' machines have differed in it."""
    from threadpoolctl import threadpool_info

    from tpudsl.interp.mathfn import EXP2, NEG_EXP

    blas = ", ".join(f"{i['internal_api']} {i.get('architecture', '')}" for i in threadpool_info() if i["user_api"] == "blas")
    return f"{blas}; sigmoid family by np.{NEG_EXP.power.__name__}: CPU {'with' if NEG_EXP is EXP2 else 'without'} AVX-512"


def timed_kernels(kernels, acc):
    """The kernel table with every run timed into acc[(op name, out shape, filter shape)]."""
    def wrap(name, k):
        def timed(run):
            def r(ins, a):
                t0 = time.perf_counter()
                y = run(ins, a)
                w = tuple(ins[1].shape) if len(ins) > 1 and ins[1] is not None else ()
                acc[(name, tuple(a.out_shapes[0] or ()), w)] = acc.get((name, tuple(a.out_shapes[0] or ()), w), 0.0) + (
                    time.perf_counter() - t0)
                return y
            return r

        prep = (lambda st, a: timed(k.prepare(st, a))) if k.prepare is not None else None
        view = (lambda st, a: timed(k.view(st, a))) if k.view is not None else None
        return dataclasses.replace(k, run=timed(k.run), prepare=prep, view=view)  # its other fields kept

    return {n: wrap(n, k) for n, k in kernels.items()}


STEP = re.compile(r"model_transform: (.*): ([0-9.]+) s$")


def transform_steps(argv: list[str]) -> tuple[int, dict[str, float]]:
    """model_transform.run(argv) in-process, quiet; (exit status, seconds per step it printed)."""
    from tpudsl.cli import model_transform

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = model_transform.run(argv)
    return rc or 0, {m.group(1): float(m.group(2)) for m in map(STEP.match, err.getvalue().splitlines()) if m}


def ort_seconds_by_op(sess, inferences: int) -> dict[str, float]:
    """End onnxruntime's profiling of `sess` and return its kernel time per op type, in seconds per
    inference (`inferences`: how many runs the profile covers)."""
    import collections
    import json

    path = sess.end_profiling()
    by_op: dict[str, float] = collections.defaultdict(float)
    with open(path) as f:
        for e in json.load(f):
            if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
                by_op[e["args"]["op_name"]] += e["dur"] / 1e6 / inferences
    os.remove(path)
    return dict(by_op)


def record_calls(model, top, ops, keep=lambda name, ins, a: True) -> list:
    """[(op name, attrs, prepared run, operands (copies), static operands)] of every step of one
    inference (a seeded normal input) whose op is in `ops` and for which `keep` says so: the layers
    the per-layer benches time on their own."""
    import numpy as np

    from tpudsl.interp import KERNELS, ModuleInterpreter
    from tpudsl.interp.kernel import Kernel

    calls = []

    def wrap(name, k):
        def prepare(static, a):
            run = k.prepare(static, a)

            def recorded(ins, a):
                if keep(name, ins, a):
                    calls.append((name, a, run, [None if x is None else x.copy() for x in ins], static))
                return run(ins, a)

            return recorded

        return Kernel(k.run, prepare, k.fuses_relu, k.strided_operands)

    it = ModuleInterpreter(top.module, top.weights, {**KERNELS, **{n: wrap(n, KERNELS[n]) for n in ops}}, threads=1)
    it.init()
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    it.inference({model.graph.input[0].name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)})
    it.deinit()
    return calls


def ort_conv(x, w, b, a):
    """A one-thread onnxruntime session of one Conv layer (+ Relu or Clip for its fused relu)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rank = w.ndim - 2
    inits = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(b.astype(np.float32), "b")] if b is not None else [])
    nodes = [helper.make_node("Conv", ["x", "w"] + (["b"] if b is not None else []), ["c"],
                              strides=list(a.get("strides") or [1] * rank), pads=list(a.get("pads") or [0] * (2 * rank)),
                              group=int(a.get("group", 1)), dilations=list(a.get("dilations") or [1] * rank))]
    if a.get("do_relu", False):
        limit = float(a.get("relu_limit", -1.0))
        if limit > 0:
            inits += [numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(limit), "hi")]
            nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"]))
        else:
            nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    else:
        nodes[0].output[0] = "y"
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return ort_session(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), threads=1)
