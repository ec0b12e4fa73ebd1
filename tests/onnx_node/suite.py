"""Selection and execution of the ONNX backend node tests (shared by pytest and report.py)."""

from __future__ import annotations

import numpy as np

from onnx_node.cases import NodeCase, as_array, load_cases
from onnx_node.harness import assert_close, fold_param_inputs, run_tpudsl, supported_ops

# Tolerances of the task (the onnx cases carry rtol=1e-3, atol=1e-7; 1e-7 is below float32
# resolution for values near 1, so we use atol=1e-4 everywhere).
RTOL = 1e-3
ATOL = 1e-4


def selected_cases() -> list[NodeCase]:
    """Every single-node test whose op type the frontend's converter table claims, plus every
    function-expanded (multi-node) test all of whose ops it claims."""
    ops = supported_ops()
    if not ops:
        return []
    return [c for c in load_cases() if c.single_op in ops or is_selected_expanded(c, ops)]


def is_selected_expanded(case: NodeCase, ops: set[str]) -> bool:
    return case.expanded and all(d in ("", "ai.onnx") for d in case.domains) and set(case.op_types) <= ops


def run_case(case: NodeCase) -> None:
    """Convert + interpret one node test and compare with onnx's expected outputs (raises on mismatch)."""
    model = case.model
    graph_inputs = [vi.name for vi in model.graph.input if vi.name not in {i.name for i in model.graph.initializer}]
    feeds = {name: as_array(v) for name, v in zip(graph_inputs, case.inputs, strict=False)}
    for name, v in feeds.items():
        if not isinstance(v, np.ndarray | np.generic):
            raise TypeError(f"input {name!r} is a {type(v).__name__}, not a tensor")
    model, feeds = fold_param_inputs(model, {k: np.asarray(v) for k, v in feeds.items()})
    out = run_tpudsl(model, feeds, name=case.name)
    for vi, want in zip(model.graph.output, case.outputs, strict=False):
        assert vi.name in out, f"output {vi.name!r} missing from interpreter results {sorted(out)}"
        assert_close(out[vi.name], as_array(want), RTOL, ATOL, what=f"{case.name}: output {vi.name}")
