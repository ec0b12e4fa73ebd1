"""ONNX backend node test cases, generated from the installed onnx package and cached on disk.

Recent onnx wheels do not ship the generated `.pb` files of the backend node tests, but they do ship
the case definitions (`onnx.backend.test.case.node`). `collect_testcases()` runs them (about 8 s):
each case is a one-node model plus input arrays and the expected outputs, which onnx computes with
its own numpy reference — independent of tpudsl. We run that once (seeded, so the data is stable),
and pickle the result to `.cache/onnx_node/cases-onnx<version>.pkl`; later runs load it in ~0.1 s.

The cache directory carries its own `.gitignore` (`*`), so it never shows up in `git status`.
Concurrent pytest-xdist workers serialise the generation with a file lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = Path(os.environ.get("TPUDSL_ONNX_NODE_CACHE", ROOT / ".cache" / "onnx_node"))
FORMAT = 2  # bump when the pickled layout changes


@dataclass
class NodeCase:
    """One backend node test: `model` (serialised ModelProto), its inputs and expected outputs."""

    name: str
    model_bytes: bytes
    inputs: list[Any]
    outputs: list[Any]
    rtol: float
    atol: float
    op_types: tuple[str, ...] = field(default=())
    domains: tuple[str, ...] = field(default=())

    @property
    def model(self) -> onnx.ModelProto:
        return onnx.load_from_string(self.model_bytes)

    @property
    def expanded(self) -> bool:
        """A function-expanded variant (`*_expanded*`): the op's ONNX function body, several nodes."""
        return "_expanded" in self.name and len(self.op_types) > 1

    @property
    def single_op(self) -> str | None:
        """The op type when the model is a single node of the default ONNX domain."""
        if len(self.op_types) == 1 and self.domains[0] in ("", "ai.onnx"):
            return self.op_types[0]
        return None


_PROTO = "__tensorproto__"


def _portable(value: Any) -> Any:
    """A data-set entry as plain picklable data: a TensorProto (onnx uses them for exotic element
    types) becomes (_PROTO, serialised bytes)."""
    if isinstance(value, onnx.TensorProto):
        return (_PROTO, value.SerializeToString())
    if isinstance(value, list):
        return [_portable(v) for v in value]
    return value


def generate() -> list[NodeCase]:
    """Run onnx's node case definitions (seeded) and return every case with its first data set."""
    import onnx.backend.test.case.node as node_cases

    np.random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            collected = node_cases.collect_testcases()
    out: list[NodeCase] = []
    for c in collected:
        if not c.data_sets:
            continue
        inputs, outputs = c.data_sets[0]
        nodes = c.model.graph.node
        out.append(
            NodeCase(
                name=c.name,
                model_bytes=c.model.SerializeToString(),
                inputs=[_portable(v) for v in inputs],
                outputs=[_portable(v) for v in outputs],
                rtol=c.rtol,
                atol=c.atol,
                op_types=tuple(n.op_type for n in nodes),
                domains=tuple(n.domain for n in nodes),
            )
        )
    return out


def cache_file() -> Path:
    return CACHE_DIR / f"cases-onnx{onnx.__version__}-f{FORMAT}.pkl"


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_LOADED: list[NodeCase] | None = None


def load_cases() -> list[NodeCase]:
    """All node cases, from the cache (generated on first use)."""
    global _LOADED
    if _LOADED is not None:
        return _LOADED
    path = cache_file()
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    ignore = CACHE_DIR.parent / ".gitignore" if CACHE_DIR.parent.name == ".cache" else CACHE_DIR / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    with _locked(path.with_suffix(".lock")):
        if path.exists():
            try:
                _LOADED = [NodeCase(**d) for d in pickle.loads(path.read_bytes())]
                return _LOADED
            except Exception:  # a truncated or stale cache: regenerate
                pass
        cases = generate()
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        # plain dicts, not NodeCase objects: the cache must load whatever name this module is imported by
        tmp.write_bytes(pickle.dumps([vars(c) for c in cases], protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)
    _LOADED = cases
    return cases


def as_array(value: Any) -> Any:
    """A data-set entry as numpy (TensorProto entries decoded)."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == _PROTO:
        t = onnx.TensorProto()
        t.ParseFromString(value[1])
        return onnx.numpy_helper.to_array(t)
    return value
