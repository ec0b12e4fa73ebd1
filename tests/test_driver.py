"""tpuc-opt in-process: pass options reach pass fields, order, verification, errors, debug log, -o.

Each test registers small passes of its own in the registry (monkeypatched), so what a pass
received or did is observable without depending on the real rewrites."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import ClassVar, Literal

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, f32
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tpudsl import passes as registry
from tpudsl.cli.tpuc_opt import main
from tpudsl.ir.diagnostics import InternalError, TpudslError

GOOD = """func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu")
  return %0 : tensor<1x4xf32>
}
"""


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.mlir"
    path.write_text(GOOD)
    return path


@dataclass(frozen=True)
class OptionsPass(ModulePass):
    """Records its options on the module as `test.options`."""

    name = "test-options"
    count: int = 1
    scale: float = 0.5
    flag: bool = False
    model_file: str = "out.bmodel"
    dims: tuple[int, ...] = ()
    tag: str | None = None
    mode: Literal["INT8", "F32"] = "F32"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.attributes["test.options"] = StringAttr(repr(self))


@dataclass(frozen=True)
class Defined(registry.Registered):
    """A registry entry for a pass class these tests define (real entries load theirs by module and class name)."""

    module: str = __name__
    cls: str = ""
    factory: Callable[[], type[ModulePass]] = field(kw_only=True)

    def load(self) -> type[ModulePass]:
        return self.factory()


@pytest.fixture
def options_pass(monkeypatch):
    monkeypatch.setitem(registry.PASSES, "test-options", Defined(factory=lambda: OptionsPass))


def options_seen(out: str) -> str:
    line = next(line for line in out.splitlines() if "test.options" in line)
    return line.split('test.options = "', 1)[1].split('"', 1)[0]


@pytest.mark.parametrize(
    "flags",
    [
        ['--test-options=count=3 scale=2 flag=true model_file=x.bmodel dims=1,2,3 tag="a b" mode=INT8'],
        ["-p", 'test-options{count=3 scale=2 flag model-file=x.bmodel dims=1,2,3 tag="a b" mode=INT8}'],
        ["--pass-pipeline=builtin.module(test-options{count=0x3 scale=2.0 flag=1 model_file='x.bmodel' "
         "dims=1,2,3 tag='a b' mode=INT8})"],
    ],
)
def test_options_in_every_form_reach_the_pass_fields(flags, good, options_pass, capsys):
    status, out, err = run([str(good), *flags], capsys)
    assert (status, err) == (0, "")
    want = "OptionsPass(count=3, scale=2.0, flag=True, model_file='x.bmodel', dims=(1, 2, 3), tag='a b', mode='INT8')"
    assert options_seen(out) == want


def test_an_empty_value_sets_an_optional_option_to_none_and_a_string_to_empty(good, options_pass, capsys):
    status, out, _ = run([str(good), "--test-options=tag= model_file= dims="], capsys)
    assert status == 0
    assert "tag=None" in options_seen(out)
    assert "model_file=''" in options_seen(out)
    assert "dims=()" in options_seen(out)


@pytest.mark.parametrize(
    "options, message",
    [
        ("count=three", "error: option 'count' of pass 'test-options': expects an integer, got 'three'"),
        ("flag=yes", "error: option 'flag' of pass 'test-options': expects true or false, got 'yes'"),
        ("scale=fast", "error: option 'scale' of pass 'test-options': expects a number, got 'fast'"),
        ("mode=INT4", "error: option 'mode' of pass 'test-options': expects one of INT8, F32, got 'INT4'"),
        ("count", "error: option 'count' of pass 'test-options': needs a value (key=value)"),
        ("count=1 count=2", "error: option 'count' is given twice"),
        (
            "bogus=1",
            "error: pass 'test-options' has no option 'bogus'; its options: count, scale, flag, model_file, dims, tag, mode",
        ),
    ],
)
def test_bad_options_are_one_line_errors(options, message, good, options_pass, capsys):
    status, out, err = run([str(good), f"--test-options={options}"], capsys)
    assert (status, out, err) == (1, "", message + "\n")


def test_passes_run_in_command_line_order_across_forms(good, monkeypatch, capsys):
    ran: list[str] = []

    def recorder(label: str) -> type[ModulePass]:
        @dataclass(frozen=True)
        class Recorder(ModulePass):
            name: ClassVar[str] = label

            def apply(self, ctx: Context, op: ModuleOp) -> None:
                ran.append(label)

        return Recorder

    for label in ("a", "b", "c", "d"):
        monkeypatch.setitem(registry.PASSES, label, Defined(factory=lambda label=label: recorder(label)))
    status, _, _ = run([str(good), "--c", "-p", "a,d", "--b", "--pass-pipeline=builtin.module(a)"], capsys)
    assert status == 0
    assert ran == ["c", "a", "d", "b", "a"]


@dataclass(frozen=True)
class BreakShapePass(ModulePass):
    """Gives the Relu a result type its shape rule contradicts."""

    name = "test-break"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        relu = next(o for o in op.walk() if o.name == "top.Relu")
        Rewriter.replace_value_with_new_type(relu.results[0], TensorType(f32, [7]))


def test_a_pass_that_breaks_the_ir_is_named_with_verify_each(good, monkeypatch, capsys):
    monkeypatch.setitem(registry.PASSES, "test-break", Defined(factory=lambda: BreakShapePass))
    status, out, err = run([str(good), "--test-break", "--dce", "--verify-each"], capsys)
    assert status == 1 and out == ""
    assert err.startswith(f"{good}:2:8: error: 'top.Relu' op \"relu\"")
    assert err.endswith("(after pass 'test-break')\n")
    # Without --verify-each the broken result is still caught, at the end.
    status, out, err = run([str(good), "--test-break", "--dce"], capsys)
    assert status == 1 and out == ""
    assert "(after the passes; --verify-each names the pass that broke it)" in err
    assert err.count("\n") == 1


@dataclass(frozen=True)
class RejectPass(ModulePass):
    """Rejects the Relu the way tpudsl passes report bad input: TpudslError with `.op`."""

    name = "test-reject"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        error = TpudslError("cannot handle this relu")
        error.op = next(o for o in op.walk() if o.name == "top.Relu")  # type: ignore[attr-defined]
        raise error


def test_a_pass_error_is_placed_at_the_op_it_names(good, monkeypatch, capsys):
    monkeypatch.setitem(registry.PASSES, "test-reject", Defined(factory=lambda: RejectPass))
    status, out, err = run([str(good), "--test-reject"], capsys)
    assert (status, out, err) == (1, "", f"{good}:2:8: error: cannot handle this relu\n")


@dataclass(frozen=True)
class CrashPass(ModulePass):
    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("bug\nin a pass")


def test_an_internal_error_is_one_line_with_exit_2_and_a_traceback_on_request(good, monkeypatch, capsys):
    monkeypatch.setitem(registry.PASSES, "test-crash", Defined(factory=lambda: CrashPass))
    monkeypatch.delenv("TPUDSL_TRACEBACK", raising=False)
    status, out, err = run([str(good), "--test-crash"], capsys)
    assert (status, out) == (2, "")
    assert err == ("error: internal error in pass 'test-crash': RuntimeError: bug in a pass (this is a bug in "
                   "tpudsl: please report it with the command line and its input files; --debug shows the traceback)\n")
    status, out, err = run([str(good), "--test-crash", "--debug"], capsys)  # the traceback, then the same line
    assert (status, out) == (2, "")
    assert err.startswith("Traceback (most recent call last):\n") and 'raise RuntimeError("bug\\nin a pass")' in err
    assert err.splitlines()[-1].startswith("error: internal error in pass 'test-crash': RuntimeError: bug in a pass (")
    monkeypatch.setenv("TPUDSL_TRACEBACK", "1")  # the exception escapes, for a debugger
    with pytest.raises(InternalError, match="pass 'test-crash'") as info:
        main([str(good), "--test-crash"])
    assert isinstance(info.value.__cause__, RuntimeError)


@dataclass(frozen=True)
class ReportingPass(ModulePass):
    name = "test-report"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        registry.PATTERN_LOG.applied("FuseThings", "relu")
        registry.PATTERN_LOG.applied("FuseThings", "conv1")
        registry.PATTERN_LOG.applied("DropCast", "cast")


def test_debug_only_pattern_application_logs_each_application_and_a_summary(good, monkeypatch, capsys):
    monkeypatch.setitem(registry.PASSES, "test-report", Defined(factory=lambda: ReportingPass))
    status, out, err = run([str(good), "--test-report", "--debug-only=pattern-application"], capsys)
    assert status == 0 and '"top.Relu"' in out
    assert err.splitlines() == [
        'pattern FuseThings applied at "relu"',
        'pattern FuseThings applied at "conv1"',
        'pattern DropCast applied at "cast"',
        "pattern-application: 3 applied (DropCast x1, FuseThings x2)",
    ]
    status, _, err = run([str(good), "--test-report"], capsys)
    assert (status, err) == (0, "")


def test_output_replaces_the_file_keeping_its_mode(good, tmp_path, capsys):
    out_file = tmp_path / "out.mlir"
    out_file.write_text("old\n")
    out_file.chmod(0o640)
    status, out, err = run([str(good), "-o", str(out_file)], capsys)
    assert (status, out, err) == (0, "", "")
    assert '"top.Relu"' in out_file.read_text()
    assert stat.S_IMODE(out_file.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.mlir", "out.mlir"]


def test_output_to_dev_null_does_not_replace_the_device(good, capsys):
    status, _, _ = run([str(good), "-o", os.devnull], capsys)
    assert status == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_output_through_a_symlink_writes_its_target(good, tmp_path, capsys):
    target = tmp_path / "target.mlir"
    target.write_text("old\n")
    link = tmp_path / "link.mlir"
    link.symlink_to(target)
    status, _, _ = run([str(good), "-o", str(link)], capsys)
    assert status == 0
    assert link.is_symlink() and '"top.Relu"' in target.read_text()


def test_input_that_is_not_utf8_is_an_error(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_bytes(b"func.func @main() {\xff\xfe}\n")
    status, out, err = run([str(bad)], capsys)
    assert (status, out, err) == (1, "", f"{bad}: error: not UTF-8 text (byte 19)\n")


def test_stdin_is_read_when_the_input_is_dash_or_missing(monkeypatch, capsys):
    import io

    for argv in (["-"], []):
        monkeypatch.setattr(sys, "stdin", io.StringIO(GOOD))
        status, out, _ = run(argv, capsys)
        assert status == 0 and '"top.Relu"' in out


def test_a_pipeline_flag_without_a_value_is_an_error(good, capsys):
    status, out, err = run([str(good), "-p"], capsys)
    assert (status, out, err) == (1, "", "error: -p needs a pipeline, e.g. -p 'canonicalize,cse'\n")


def test_the_console_script_and_the_checkout_script_run_the_same_driver(good):
    repo = Path(__file__).resolve().parent.parent
    script = Path(sys.executable).parent / "tpuc-opt"
    commands = [[sys.executable, str(repo / "tools" / "tpuc-opt.py")], [str(script)]]  # script: `pip install -e .`
    outputs = {
        subprocess.run([*cmd, str(good), "--shape-infer"], capture_output=True, text=True, check=True).stdout
        for cmd in commands
    }
    assert len(outputs) == 1 and '"top.Relu"' in outputs.pop()


def test_the_pattern_log_is_off_again_after_a_run(good, monkeypatch, capsys):
    monkeypatch.setitem(registry.PASSES, "test-report", Defined(factory=lambda: ReportingPass))
    run([str(good), "--test-report", "--debug-only=pattern-application"], capsys)
    assert not registry.PATTERN_LOG.enabled
    registry.PATTERN_LOG.applied("Later", "x")  # a pass run outside tpuc-opt afterwards
    assert capsys.readouterr().err == ""
