"""Backend coverage (issue 11): every Tpu op the lowering can produce, in every form (the value of
the attribute that picks its function: tpu.Active's, tpu.Pad's, tpu.Reduce's mode) and mode
(F32/F16/BF16/INT8), either has records (coverage.has_records) or model_deploy stops after the Tpu
check naming the op, the form and the mode, and docs/backend.md lists exactly those refusals. The
lowering's forms are walked from its own tables, so a new lowering rule shows up here; the doc's
list is parsed, so it cannot go stale."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx

from tests.test_backend_cmodel import Graph
from tpudsl.backend import coverage
from tpudsl.backend.coverage import FORM_ATTRS, has_records
from tpudsl.cli import model_deploy, model_transform
from tpudsl.dialects.opdef import SPECS
from tpudsl.dialects.tpu import ACTIVE_COEFFS, ACTIVE_MODES, GELU_MODES
from tpudsl.lowering.top_to_tpu import LOWERINGS
from tpudsl.lowering.top_to_tpu_int8 import INT8_ONLY_OPS, INT8_TPU_OP
from tpudsl.lowering.weight_only import A16_LOWERINGS

DOC = Path(__file__).resolve().parent.parent / "docs/backend.md"
FLOAT = ("F32", "F16", "BF16")
# The Top ops lowered to tpu.Active whose mode is not in ACTIVE_MODES / ACTIVE_COEFFS: their rule's mode.
ACTIVE_BY_RULE = {"top.Sigmoid": ("SIGMOID",), "top.Tanh": ("TANH",), "top.GELU": tuple(GELU_MODES.values())}


def _forms(top_op: str, tpu_op: str) -> tuple[str | None, ...]:
    """The forms a Top op's lowering can give its Tpu op (None: the op has no form attribute)."""
    if tpu_op == "tpu.Active":
        if top_op in ACTIVE_MODES:
            return (ACTIVE_MODES[top_op],)
        if top_op in ACTIVE_COEFFS:
            return (ACTIVE_COEFFS[top_op][0],)
        assert top_op in ACTIVE_BY_RULE, f"{top_op} lowers to tpu.Active: add its modes to ACTIVE_BY_RULE"
        return ACTIVE_BY_RULE[top_op]
    if tpu_op in FORM_ATTRS:  # the Tpu op's mode is the Top op's, copied by the lowering
        return SPECS[top_op].attrs[FORM_ATTRS[tpu_op]].choices
    return (None,)


def lowered_forms() -> set[tuple[str, str | None, str]]:
    """(Tpu op, form, mode) for every form the float, INT8 and weight-only (W8F16/W8BF16) lowerings
    can produce."""
    found = {(rule.tpu, form, mode) for top_op, rule in LOWERINGS.items() for form in _forms(top_op, rule.tpu)
             for mode in FLOAT}
    int8 = {*INT8_ONLY_OPS, "tpu.Cast"}  # Lut, RequantInt; the quantizing casts around int8 regions
    int8 |= set(INT8_TPU_OP.values())
    weight_only = {(tpu, None, mode) for tpu in A16_LOWERINGS.values() for mode in ("F16", "BF16")}
    return found | {(op, None, "INT8") for op in int8} | weight_only


def refused() -> set[tuple[str, str | None, str]]:
    return {(op, form, mode) for op, form, mode in lowered_forms() if not has_records(op, form, mode)}


def documented() -> set[tuple[str, str | None, str]]:
    """The rows of docs/backend.md's refusal table: | `tpu.X` | `FORM` or - | MODE, MODE |."""
    text = DOC.read_text()
    table = text.split("<!-- refusals:begin -->")[1].split("<!-- refusals:end -->")[0]
    rows = set()
    for line in table.splitlines():
        m = re.fullmatch(r"\| `(tpu\.\w+)` \| (?:`(\w+)`|-) \| ([A-Z0-9, ]+) \|", line.strip())
        if m:
            rows |= {(m[1], m[2], mode.strip()) for mode in m[3].split(",")}
        else:
            assert not line.startswith("| `"), f"docs/backend.md: a refusal row that does not parse: {line}"
    return rows


def test_the_lowering_tables_are_walked():
    """The walk sees the forms it exists for (a broken walk would make the comparison vacuous)."""
    forms = lowered_forms()
    assert {("tpu.Active", "SILU", "F32"), ("tpu.Pad", "reflect", "BF16"), ("tpu.Gather", None, "F16"),
            ("tpu.Lut", None, "INT8"), ("tpu.Deconv", None, "INT8")} <= forms
    assert len({op for op, _, _ in forms}) >= 40


def test_docs_list_exactly_the_refusals():
    want, doc = refused(), documented()
    assert not sorted(want - doc, key=str), f"refused, missing from docs/backend.md: {sorted(want - doc, key=str)}"
    assert not sorted(doc - want, key=str), f"listed in docs/backend.md, but has records: {sorted(doc - want, key=str)}"


def test_a_refused_op_stops_model_deploy_naming_op_and_mode(tmp_path, capsys, monkeypatch):
    """An op refused in BF16: model_deploy stops after the Tpu check with one line naming the op and
    the mode, and writes no bmodel. Every lowered op has records now (the table is empty), so LRN's
    BF16 records are withdrawn from coverage.has_records for the test."""
    real = coverage.has_records
    monkeypatch.setattr(coverage, "has_records",
                        lambda op, form, mode: (op, mode) != ("tpu.LRN", "BF16") and real(op, form, mode))
    assert not coverage.has_records("tpu.LRN", None, "BF16")
    g = Graph(np.random.default_rng(7))
    g.shapes["x"] = (1, 4, 8, 8)
    g.node("LRN", ["x"], (1, 4, 8, 8), size=3)
    onnx.save(g.model({"x": (1, 4, 8, 8)}, "t0_lrn"), tmp_path / "r.onnx")
    np.savez(tmp_path / "in.npz", x=np.ones((1, 4, 8, 8), np.float32))
    model_transform.run(["--model_name", "r", "--model_def", str(tmp_path / "r.onnx"), "--mlir",
                         str(tmp_path / "r.mlir"), "--test_input", str(tmp_path / "in.npz")])
    model_deploy.run(["--mlir", str(tmp_path / "r.mlir"), "--quantize", "BF16", "--processor", "tiny",
                      "--model", str(tmp_path / "r.bmodel"), "--test_input", str(tmp_path / "r_in_f32.npz")])
    err = capsys.readouterr().err
    assert ("stopped after the Tpu check: the backend has no instructions for 'tpu.LRN' op \"t0_lrn_bf16\" "
            "in BF16 yet") in err, err
    assert not (tmp_path / "r.bmodel").exists() and not (tmp_path / "r_tiny_bf16_final.mlir").exists()
