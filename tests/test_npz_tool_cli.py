"""npz_tool as a command: exit codes, messages, dump and stats output."""

import os
import subprocess
import sys

import numpy as np
import pytest
from cli_support import run_main

TOOL = os.path.join(os.path.dirname(__file__), "..", "tools", "npz_tool.py")


def npz_tool(*args):
    return run_main("npz_tool", *args)


def npz_tool_script(*args):
    return subprocess.run([sys.executable, TOOL, *map(str, args)], capture_output=True, text=True, timeout=60)


def assert_one_line_error(proc, *fragments):
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0], proc.stderr
    for f in fragments:
        assert f in lines[0]


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    paths = {}
    for name, tensors in {
        "ref": {"x": a, "y": a * 2},
        "same": {"x": a.copy(), "y": a * 2},
        "noisy": {"x": a + 0.004 * rng.standard_normal(a.shape).astype(np.float32), "y": a * 2},
        "flipped": {"x": a, "y": -a * 2, "extra": a},
    }.items():
        paths[name] = tmp_path / f"{name}.npz"
        np.savez(paths[name], **tensors)
    return paths


def test_compare_passes_and_fails_by_exit_code(files):
    ok = npz_tool_script("compare", files["same"], files["ref"])
    assert ok.returncode == 0 and ok.stdout.strip().endswith("npz compare PASSED.")
    bad = npz_tool("compare", files["flipped"], files["ref"])
    assert bad.returncode == 1 and bad.stdout.strip().endswith("npz compare FAILED.")
    assert "NOT_SIMILAR" in bad.stdout and "only in target (1): extra" in bad.stdout


def test_compare_tolerance_and_excepts(files):
    # About 0.5% noise: euclidean similarity near 0.995, so 0.99,0.999 fails and 0.99,0.99 passes.
    assert npz_tool("compare", files["noisy"], files["ref"], "--tolerance", "0.99,0.99").returncode == 0
    strict = npz_tool("compare", files["noisy"], files["ref"], "--tolerance", "0.99,0.999")
    assert strict.returncode == 1
    assert npz_tool("compare", files["flipped"], files["ref"], "--excepts", "y").returncode == 0


def test_compare_verbosity(files):
    quiet = npz_tool("compare", files["same"], files["ref"]).stdout.splitlines()
    # One row per tensor in TPU-MLIR's form, whatever the verbosity.
    assert quiet[1:3] == ["[x                               ]        EQUAL [PASSED]  (2, 3, 4) float32  max_abs_err 0",
                          "[y                               ]        EQUAL [PASSED]  (2, 3, 4) float32  max_abs_err 0"]
    assert quiet[3:8] == ["2 compared", "2 passed", "  2 equal, 0 close, 0 similar", "0 failed", "  0 not equal, 0 not similar"]
    assert "min_similiarity = (1.000000, 1.000000, inf)" in quiet
    v = npz_tool("compare", files["noisy"], files["ref"], "-v").stdout
    assert any(line.startswith("[x ") and "  SIMILAR [PASSED]" in line for line in v.splitlines())
    vv = npz_tool("compare", files["flipped"], files["ref"], "-vv").stdout
    assert "worst elements of y:" in vv


def test_compare_stats_int8_tensor(tmp_path):
    # 10 values: three at 127, two at -128, one 0; |x| <= 8 for 0, 5, -8 and 3 (four).
    q = np.array([127, 127, 127, -128, -128, 0, 5, -8, 3, 60], np.int8)
    np.savez(tmp_path / "q.npz", q=q)
    out = npz_tool("compare", tmp_path / "q.npz", tmp_path / "q.npz", "--stats_int8_tensor").stdout.splitlines()
    at = out.index("int8 statistics of q:")
    assert out[at + 1:at + 5] == ["    pos(x=127)    = 0.3000  [3/10]", "    neg(x=-128)   = 0.2000  [2/10]",
                                  "    zeros(x=0)    = 0.1000  [1/10]", "    low(abs(x)<8) = 0.4000  [4/10]"]


def test_int8_tensors_must_be_equal(tmp_path):
    """TPU-MLIR's int8 rule: an int8 pair one unit apart is NOT_EQUAL (not CLOSE or SIMILAR)."""
    q = np.arange(-100, 100, dtype=np.int8)
    np.savez(tmp_path / "a.npz", q=q)
    np.savez(tmp_path / "b.npz", q=q + np.int8(1))
    proc = npz_tool("compare", tmp_path / "a.npz", tmp_path / "b.npz")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[1].startswith("[q                               ]    NOT_EQUAL [FAILED]")
    assert "  1 not equal, 0 not similar" in proc.stdout.splitlines()


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["compare", "{ref}", "{missing}"], ["missing.npz", "No such file"]),
        (["compare", "{ref}", "{garbage}"], ["garbage.npz", "not an .npz"]),
        (["compare", "{ref}", "{ref}", "--tolerance", "0.9"], ["tolerance"]),
        (["compare", "{ref}", "{ref}", "--tolerance", "0.99,1.5"], ["tolerance values must lie in [-1, 1]", "0.99,1.5"]),
        (["compare", "{ref}"], ["reference"]),
        (["dump", "{ref}", "nope"], ["no tensor 'nope'", "x, y"]),
        (["stats", "{dir}"], ["directory"]),
        (["frobnicate"], ["invalid choice"]),
    ],
)
def test_bad_input_gives_one_line_error(files, tmp_path, args, fragments):
    (tmp_path / "garbage.npz").write_text("not a zip")
    names = {"ref": files["ref"], "missing": tmp_path / "missing.npz", "garbage": tmp_path / "garbage.npz", "dir": tmp_path}
    assert_one_line_error(npz_tool(*[a.format(**names) for a in args]), *fragments)


def test_dump_prints_full_tensor(tmp_path):
    path = tmp_path / "d.npz"
    values = np.arange(2000, dtype=np.int32)
    np.savez(path, big=values, small=np.array([1.5, -2.0]))
    one = npz_tool("dump", path, "big")
    assert one.returncode == 0
    assert one.stdout.splitlines()[0] == "big: shape [2000] dtype int32"
    printed = [int(v) for v in one.stdout.split("\n", 1)[1].replace("[", " ").replace("]", " ").split()]
    assert printed == list(range(2000))
    every = npz_tool("dump", path).stdout
    assert "small: shape [2] dtype float64" in every and "[ 1.5 -2. ]" in every


def test_stats_values(tmp_path):
    path = tmp_path / "s.npz"
    np.savez(path, t=np.array([1.0, 2.0, 3.0, np.nan, np.inf]))
    row = next(line for line in npz_tool("stats", path).stdout.splitlines() if line.startswith("t "))
    cells = row.split()
    # finite values 1, 2, 3: min 1, max 3, mean 2, population std sqrt(2/3); then nan and inf counts.
    assert cells[1:3] == ["5", "float64"]
    assert [float(c) for c in cells[3:7]] == pytest.approx([1, 3, 2, (2 / 3) ** 0.5], rel=1e-5)
    assert cells[7:] == ["1", "1"]


def test_non_numeric_tensors_compare_by_equality(tmp_path):
    np.savez(tmp_path / "a.npz", s=np.array(["a", "b"]), x=np.ones(3))
    np.savez(tmp_path / "b.npz", s=np.array(["a", "c"]), x=np.ones(3))
    proc = npz_tool("compare", tmp_path / "a.npz", tmp_path / "b.npz", "-vv")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert any(line.startswith("[s ") and "NOT_SIMILAR [FAILED]" in line for line in proc.stdout.splitlines())
    assert proc.stdout.strip().endswith("npz compare FAILED.")


def test_fuzzy_match_pairs_tensors_of_other_names(tmp_path):
    """--fuzzy_match (TPU-MLIR): a is equal to q; b is p with 0.3% noise (cos and euclid > 0.99; cos
    checked here with the formula); c has no reference of its shape, so it matches nothing and fails."""
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 8)), rng.standard_normal((4, 8))
    noisy = y + 0.003 * rng.standard_normal(y.shape)
    np.savez(tmp_path / "t.npz", a=x, b=noisy)
    np.savez(tmp_path / "r.npz", p=y, q=x, r=np.ones(3))
    ok = npz_tool("compare", tmp_path / "t.npz", tmp_path / "r.npz", "--fuzzy_match")
    cos = float(noisy.ravel() @ y.ravel() / np.linalg.norm(noisy) / np.linalg.norm(y))
    assert ok.returncode == 0, ok.stdout
    lines = ok.stdout.splitlines()
    assert lines[0] == "find max_cos:1.000000, max_euc:1.000000 for a (reference q)"
    assert lines[1].startswith(f"find max_cos:{cos:.6f}, ") and lines[1].endswith(" for b (reference p)")
    assert lines[-1] == "npz compare PASSED."
    np.savez(tmp_path / "t.npz", a=x, c=np.ones(5))
    bad = npz_tool("compare", tmp_path / "t.npz", tmp_path / "r.npz", "--fuzzy_match")
    assert bad.returncode == 1
    assert "find max_cos:0.000000, max_euc:0.000000 for c (no reference of shape [5])" in bad.stdout
    assert bad.stdout.splitlines()[-2:] == ["min_similiarity = (0.000000, 0.000000)", "npz compare FAILED."]
