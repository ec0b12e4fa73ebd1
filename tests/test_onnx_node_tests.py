"""ONNX backend node tests through tpudsl: convert_onnx + Top interpreter == onnx's expected outputs.

Every single-node test (from `onnx.backend.test.case.node`, generated once and cached under
.cache/onnx_node/) whose op type is in the frontend's CONVERTERS table is one pytest case.
Known failures are listed, with reasons, in tests/onnx_node/skips.py and run as strict xfail.
Per-op pass counts: docs/onnx-coverage.md (python tests/onnx_node/report.py).
"""

from __future__ import annotations

import pytest

from onnx_node.harness import supported_ops
from onnx_node.skips import SKIPS
from onnx_node.suite import run_case, selected_cases

_CASES = selected_cases()


def _param(case):
    marks = []
    if case.name in SKIPS:
        marks.append(pytest.mark.xfail(reason=SKIPS[case.name], strict=True))
    return pytest.param(case, id=case.name, marks=marks)


def test_frontend_has_a_converter_table():
    assert supported_ops(), "tpudsl.frontend.onnx_ops.CONVERTERS is missing or empty"


def test_skip_list_names_only_selected_cases():
    selected = {c.name for c in _CASES}
    stale = sorted(set(SKIPS) - selected)
    assert not stale, f"skips.py entries that are not selected node tests (remove them): {stale}"


@pytest.mark.parametrize("case", [_param(c) for c in _CASES])
def test_node(case):
    run_case(case)
