"""Bad input never crashes tpuc-opt: damaged modules give exit 0 or one `error:` line and exit 1.

The inputs are a valid Top module with a few characters deleted, inserted or replaced, run
through parsing, verification and passes. A hang or a Python exception escaping the driver
(exit 2, "internal error") fails the test; so does an error that is not exactly one line."""

from __future__ import annotations

import re
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tpudsl.cli.tpuc_opt import main

VALID = """module attributes {module.chip = "ALL", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x4xf32>, %arg1: tensor<1x4xf32>) -> tensor<*xf32> {
    %0 = "top.None"() : () -> none loc("none")
    %1 = "top.Weight"() : () -> tensor<4xf32> loc("w")
    %2 = "top.Add"(%arg0, %1) {do_relu = false} : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("add")
    %3 = "top.Relu"(%2) {relu_limit = -1.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("relu")
    %4 = "top.Mul"(%3, %arg1) : (tensor<*xf32>, tensor<1x4xf32>) -> tensor<*xf32> loc("mul")
    return %4 : tensor<*xf32>
  }
}
"""

_ALPHABET = '%"(){}<>[]:,=x0123456789#@^ \n-.*abfilnoprstuwTW'


@st.composite
def damaged(draw) -> str:
    text = list(VALID)
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text) - 1))
        kind = draw(st.sampled_from(["delete", "insert", "replace"]))
        char = draw(st.sampled_from(_ALPHABET))
        if kind == "delete":
            del text[pos]
        elif kind == "insert":
            text.insert(pos, char)
        else:
            text[pos] = char
    return "".join(text)


class Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise Hang()


@pytest.fixture
def alarm():
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def write_weights(directory) -> None:
    """The npz VALID names: --canonicalize reads weight data, and a named file it cannot read is an error."""
    np.savez(directory / "w.npz", w=np.arange(4, dtype=np.float32))


def test_the_undamaged_module_runs(tmp_path, capsys):
    (tmp_path / "m.mlir").write_text(VALID)
    write_weights(tmp_path)
    with pytest.raises(SystemExit) as info:
        main([str(tmp_path / "m.mlir"), "--shape-infer", "--canonicalize"])
    assert info.value.code == 0
    mul = r'"top.Mul"\(%\d+, %arg1\) : \(tensor<1x4xf32>, tensor<1x4xf32>\) -> tensor<1x4xf32>'
    assert re.search(mul, capsys.readouterr().out)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=damaged(), passes=st.sampled_from([[], ["--shape-infer"], ["--shape-infer", "--canonicalize"]]))
def test_damaged_input_gives_one_error_line_or_a_result(text, passes, tmp_path, capsys, alarm):
    source = tmp_path / "m.mlir"
    source.write_text(text)
    write_weights(tmp_path)
    output = tmp_path / "out.mlir"
    output.write_text("old\n")
    signal.alarm(20)  # a hang is a failure, not a stuck test run
    with pytest.raises(SystemExit) as info:
        main([str(source), *passes, "-o", str(output)])
    signal.alarm(0)
    out, err = capsys.readouterr()
    event(f"exit {info.value.code}")  # --hypothesis-show-statistics: both outcomes must occur
    assert info.value.code in (0, 1), err
    assert out == ""
    if info.value.code == 1:
        assert re.fullmatch(rf"({re.escape(str(source))}(:\d+:\d+)?: )?error: [^\n]+\n", err), err
        assert output.read_text() == "old\n"
    else:
        assert err == "" and output.read_text() != "old\n"
    written = {p.name for p in tmp_path.iterdir()}
    (tmp_path / "out_weight.npz").unlink(missing_ok=True)  # the next example starts clean
    assert written - {"out_weight.npz"} == {"m.mlir", "out.mlir", "w.npz"}
    assert "out_weight.npz" not in written or info.value.code == 0  # changed weights, written on success only
