"""npz_tool's file subcommands of TPU-MLIR (tpudsl/cli/npz_files.py) and statistic: each result
against numpy computed here a second way (dict unions, np.einsum, bit patterns shifted by hand,
loops over channels); each error is one line, exit 1, and no file written or changed."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from cli_support import run_main


def npz_tool(tmp_path: Path, *args):
    return run_main("npz_tool", *args, cwd=tmp_path)


def ok(tmp_path: Path, *args):
    r = npz_tool(tmp_path, *args)
    assert r.returncode == 0, r.stderr
    return r


def load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def assert_same_tensors(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert list(got) == list(want)
    for k in want:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape, k
        np.testing.assert_array_equal(got[k], want[k])


def files(tmp_path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in tmp_path.iterdir()}


@pytest.fixture
def abc(tmp_path):
    """Three files sharing some names: x in a and b, y in b and c."""
    rng = np.random.default_rng(11)
    a = {"x": rng.standard_normal((2, 3)).astype(np.float32), "i": np.arange(4, dtype=np.int8)}
    b = {"y": rng.standard_normal(5), "x": np.ones((3, 2), np.float16)}
    c = {"z": np.arange(6, dtype=np.int32).reshape(2, 3), "y": np.zeros(2, np.float32)}
    for name, tensors in (("a", a), ("b", b), ("c", c)):
        np.savez(tmp_path / f"{name}.npz", **tensors)
    return a, b, c


def test_merge_a_later_file_wins(tmp_path, abc):
    a, b, c = abc
    ok(tmp_path, "merge", "a.npz", "b.npz", "c.npz", "out.npz")
    # TPU-MLIR's dict.update per file: a name keeps its first place, the last file's tensor.
    assert_same_tensors(load(tmp_path / "out.npz"), a | b | c)
    ok(tmp_path, "merge", "c.npz", "a.npz", "c.npz")  # the output may be an input: read before written
    assert_same_tensors(load(tmp_path / "c.npz"), c | a)


def test_insert_keeps_the_outputs_own_tensors(tmp_path, abc):
    a, b, _ = abc
    ok(tmp_path, "insert", "a.npz", "b.npz")
    # TPU-MLIR loads a.npz then b.npz into one dict: b's x stays, a's i comes in (a's names first).
    assert_same_tensors(load(tmp_path / "b.npz"), {"x": b["x"], "i": a["i"], "y": b["y"]})
    assert_same_tensors(load(tmp_path / "a.npz"), a)


def test_remove(tmp_path, abc):
    a, _, _ = abc
    np.savez(tmp_path / "r.npz", **a, k=np.ones(1))
    r = ok(tmp_path, "remove", "r.npz", "k,x")
    assert r.stdout == "remove k\nremove x\n"
    assert_same_tensors(load(tmp_path / "r.npz"), {"i": a["i"]})


def test_reshape(tmp_path, abc):
    a, _, _ = abc
    ok(tmp_path, "reshape", "a.npz", "x", "-1,2,1")  # a leading -1, as TPU-MLIR users type it
    want = dict(a)
    want["x"] = np.array([[[a["x"][0, 0]], [a["x"][0, 1]]], [[a["x"][0, 2]], [a["x"][1, 0]]],
                          [[a["x"][1, 1]], [a["x"][1, 2]]]])  # C order, written out
    assert_same_tensors(load(tmp_path / "a.npz"), want)


def test_permute_one_tensor_or_every_tensor(tmp_path):
    rng = np.random.default_rng(12)
    t = {"p": rng.standard_normal((2, 3, 4)).astype(np.float32), "q": np.arange(24, dtype=np.int16).reshape(4, 3, 2)}
    np.savez(tmp_path / "t.npz", **t)
    ok(tmp_path, "permute", "t.npz", "p", "2,0,1")
    got = load(tmp_path / "t.npz")
    assert_same_tensors(got, {"p": np.einsum("abc->cab", t["p"]), "q": t["q"]})
    ok(tmp_path, "permute", "t.npz", "1,2,0")
    got = load(tmp_path / "t.npz")
    assert_same_tensors(got, {"p": np.einsum("abc->bca", np.einsum("abc->cab", t["p"])),
                              "q": np.einsum("abc->bca", t["q"])})
    assert all(v.flags.c_contiguous for v in got.values())


def test_tranpose_moves_every_4d_tensor_between_layouts(tmp_path):
    rng = np.random.default_rng(13)
    nhwc, flat = rng.standard_normal((2, 3, 4, 5)).astype(np.float32), np.arange(3.0)
    np.savez(tmp_path / "t.npz", img=nhwc, bias=flat)
    ok(tmp_path, "tranpose", "t.npz", "nhwc", "nchw")
    nchw = np.empty((2, 5, 3, 4), np.float32)
    for n, h, w, c in np.ndindex(nhwc.shape):
        nchw[n, c, h, w] = nhwc[n, h, w, c]
    assert_same_tensors(load(tmp_path / "t.npz"), {"img": nchw, "bias": flat})  # not 4-D: kept, as TPU-MLIR's


def test_to_npy(tmp_path, abc):
    a, _, _ = abc
    ok(tmp_path, "to_npy", "a.npz", "x")  # TPU-MLIR's NAME.npy in the current directory
    got = np.load(tmp_path / "x.npy")
    assert got.dtype == a["x"].dtype and np.array_equal(got, a["x"])
    np.savez(tmp_path / "s.npz", **{"/conv1/Conv_output_0": a["i"]})
    ok(tmp_path, "to_npy", "s.npz", "/conv1/Conv_output_0", "-o", "conv.npy")
    assert np.array_equal(np.load(tmp_path / "conv.npy"), a["i"])


def test_to_bin_writes_the_values_in_the_type_asked(tmp_path):
    np.savez(tmp_path / "t.npz", f=np.array([[3.0, -128.0], [127.0, 0.0]]), k=np.array([1, -2, 70000], np.int32),
             h=np.array([0x3F80, 0xC000], np.uint16))
    r = ok(tmp_path, "to_bin", "t.npz", "f", "f.bin", "int8")
    assert r.stdout == "shape (2, 2)\ndtype float64\n"
    assert (tmp_path / "f.bin").read_bytes() == struct.pack("4b", 3, -128, 127, 0)
    ok(tmp_path, "to_bin", "t.npz", "k", "k.bin", "float32")
    assert (tmp_path / "k.bin").read_bytes() == struct.pack("<3f", 1.0, -2.0, 70000.0)
    ok(tmp_path, "to_bin", "t.npz", "h", "h.bin", "bf16")
    assert (tmp_path / "h.bin").read_bytes() == struct.pack("<2H", 0x3F80, 0xC000)
    ok(tmp_path, "to_bin", "t.npz", "k", "raw.bin")
    assert (tmp_path / "raw.bin").read_bytes() == struct.pack("<3i", 1, -2, 70000)
    np.savez(tmp_path / "big.npz", b=np.array([1.0, 1e39, 2e39]), s=np.array(["a"]))
    for name, dtype, message in [("b", "float32", "error: to_bin: 'b' holds 1e+39, which float32 cannot hold (2 such values)"),
                                 ("s", "int8", "error: to_bin: 's' is <U1, not a number")]:
        r = npz_tool(tmp_path, "to_bin", "big.npz", name, "big.bin", dtype)
        assert (r.returncode, r.stderr.splitlines()) == (1, [message])
    assert not (tmp_path / "big.bin").exists()


def bf16_reference(bits: int) -> float:
    """A bf16 bit pattern is the high half of a float32's."""
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def fp16_reference(bits: int) -> float:
    return struct.unpack("<e", struct.pack("<H", bits))[0]


@pytest.mark.parametrize("command, reference", [("bf16_to_fp32", bf16_reference), ("fp16_to_fp32", fp16_reference)])
def test_half_bits_become_float32(tmp_path, command, reference):
    # 1.0, -2.0, +inf, the smallest subnormal, a NaN, the largest finite, -0 (each bf16 pattern).
    patterns = [0x3F80, 0xC000, 0x7F80, 0x0001, 0x7FC0, 0x7F7F, 0x8000, 0x3C00, 0x7BFF, 0xFC00]
    other = {"f": np.array([0.5, 1.5], np.float32), "q": np.array([-3, 4], np.int8)}
    np.savez(tmp_path / "h.npz", bits=np.array(patterns, np.uint16).reshape(2, 5), **other)
    ok(tmp_path, command, "h.npz", "out.npz")
    got = load(tmp_path / "out.npz")
    want = np.array([reference(b) for b in patterns], np.float32).reshape(2, 5)
    assert got["bits"].dtype == np.float32
    np.testing.assert_array_equal(got["bits"], want)  # NaN equals NaN here; -0 and 0 compare equal
    assert np.array_equal(np.signbit(got["bits"]), np.signbit(want))
    assert_same_tensors({k: got[k] for k in other}, other)  # not uint16: copied as they are


def statistic_lines(d: np.ndarray, axis: int) -> list[str]:
    """TPU-MLIR's per-channel lines, computed channel by channel with np.take."""
    channels = [np.take(d, c, axis=axis).astype(np.float64) for c in range(d.shape[axis])]
    spread = [float(ch.max() - ch.min()) for ch in channels]
    length = sum(r * r for r in spread) ** 0.5
    norm = [r / length for r in spread]
    order = sorted(range(len(norm)), key=norm.__getitem__)
    return spread, norm, order


def parse_idx_lines(stdout: str) -> list[tuple[float, float, int]]:
    rows = []
    for line in stdout.splitlines():
        if line.startswith("idx:"):
            cells = dict(part.split(":") for part in line.split(", "))
            rows.append((float(cells["range"]), float(cells["range norm"]), int(cells["norm order"])))
    return rows


def test_statistic_per_channel(tmp_path):
    rng = np.random.default_rng(14)
    x = (rng.standard_normal((2, 4, 3, 3)) * np.array([1, 3, 0.5, 2])[None, :, None, None]).astype(np.float32)
    q = np.array([[127, -128, 5], [1, 2, 3]], np.int8)  # along axis 0, channel 0: 127 - -128 = 255, not -1
    np.savez(tmp_path / "s.npz", x=x, q=q)
    assert ok(tmp_path, "statistic", "s.npz").stdout == "x\nq\n"
    assert ok(tmp_path, "statistic", "s.npz", "--list").stdout == "x\nq\n"
    for name, d, axis in (("x", x, 1), ("x", x, 3), ("q", q, 0), ("q", q, 1)):
        args = ["statistic", "s.npz", name] + ([str(axis)] if axis != 1 else [])
        out = ok(tmp_path, *args).stdout
        assert out.splitlines()[:2] == [f"data shape: {d.shape}",
                                        f"new_shape: {[axis] + [i for i in range(d.ndim) if i != axis]}"]
        spread, norm, order = statistic_lines(d, axis)
        rows = parse_idx_lines(out)
        assert [r[0] for r in rows] == pytest.approx(spread, rel=1e-6)
        assert [r[1] for r in rows] == pytest.approx(norm, rel=1e-5)
        assert [r[2] for r in rows] == order
    # A 4-D tensor ends with each batch item's mean and variance over the other axes.
    last = ok(tmp_path, "statistic", "s.npz", "x").stdout.splitlines()[-2:]
    means = [float(v) for v in last[0].removeprefix("mean [").removesuffix("]").split()]
    assert means == pytest.approx([float(np.mean(x[n].astype(np.float64))) for n in range(2)], abs=1e-6)


@pytest.mark.parametrize("args, message", [
    (["remove", "a.npz", "i,nope"], "error: 'a.npz' has no tensor 'nope' (it holds: x, i)"),
    (["merge", "a.npz", "out.npz"], "error: merge: give at least two input files before the output "
                                    "(merge A.npz B.npz OUT.npz)"),
    (["merge", "a.npz", "junk.npz", "out.npz"], "junk.npz: error: not an .npz archive"),
    (["insert", "a.npz", "missing.npz"], "missing.npz: error: No such file or directory"),
    (["reshape", "a.npz", "x", "4,2"], "error: reshape: 'x' has shape [2, 3] (6 elements), which cannot take shape [4, 2]"),
    (["reshape", "a.npz", "x", "2,three"], "error: reshape: shape '2,three' is not a comma-separated list of integers"),
    (["reshape", "a.npz", "x", "-1,-1"], "error: reshape: shape -1,-1 has a negative dimension (only one -1 is allowed)"),
    (["permute", "a.npz", "x", "1,1"], "error: permute: order 1,1 is not a permutation of the 2 axes of 'x' (shape [2, 3])"),
    (["permute", "a.npz", "1,0"], "error: permute: order 1,0 is not a permutation of the 1 axes of 'i' (shape [4])"),
    (["permute", "a.npz", "nope", "1,0"], "error: 'a.npz' has no tensor 'nope' (it holds: x, i)"),
    (["tranpose", "a.npz", "nhwc", "nchh"], "error: tranpose: layouts 'nhwc' and 'nchh' must be four distinct letters "
                                            "each, the same letters (e.g. nhwc nchw)"),
    (["to_bin", "a.npz", "x", "out.bin", "int8"], "error: to_bin: 'x' holds "),
    (["to_bin", "a.npz", "x", "out.bin", "bf16"], "error: to_bin: bf16 writes bf16 bit patterns, which npz files hold "
                                                  "as uint16; 'x' is float32 (converting values to bf16 is not modelled)"),
    (["to_bin", "a.npz", "x", "out.bin", "int4"], "argument dtype: invalid choice: 'int4'"),
    (["to_npy", "a.npz", "nope"], "error: 'a.npz' has no tensor 'nope' (it holds: x, i)"),
    (["to_npy", "a.npz", "../x"], "error: 'a.npz' has no tensor '../x' (it holds: x, i)"),
    (["bf16_to_fp32", "junk.npz", "out.npz"], "junk.npz: error: not an .npz archive"),
    (["statistic", "a.npz", "x", "2"], "error: statistic: axis 2 is not an axis of 'x' (shape [2, 3])"),
    (["statistic", "a.npz", "x", "--list"], "error: statistic: --list takes no tensor name"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, abc, args, message):
    (tmp_path / "junk.npz").write_text("not a zip")
    before = files(tmp_path)
    r = npz_tool(tmp_path, *args)
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and message in lines[0], r.stderr
    assert files(tmp_path) == before


def test_to_npy_refuses_a_name_that_is_a_path(tmp_path):
    np.savez(tmp_path / "s.npz", **{"/conv1/out": np.ones(2)})
    r = npz_tool(tmp_path, "to_npy", "s.npz", "/conv1/out")
    assert (r.returncode, r.stderr.splitlines()) == (1, [
        "error: to_npy: '/conv1/out' cannot name a file in the current directory; give -o OUT.npy"])
    assert sorted(files(tmp_path)) == ["s.npz"]
