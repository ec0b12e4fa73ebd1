"""model_tool --info (tpudsl/cli/model_tool.py): what it prints for a bmodel, and that every
damaged or foreign file is one error line, exit 1, no traceback, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tpudsl.backend.bmodel import write_bmodel
from tpudsl.cli import model_tool

ROOT = Path(__file__).resolve().parents[1]
HEADER = {
    "network": "resnet18", "chip": "bm1684x", "mode": "F16",
    "inputs": [{"name": "input", "shape": [1, 3, 224, 224], "dtype": "f32", "scale": 1.0, "zero_point": 0,
                "address": 0x1_0000_0000}],
    "outputs": [{"name": "logits", "shape": [1, 1000], "dtype": "i8", "scale": 0.125, "zero_point": -3,
                 "address": 0x1_0009_3000}],
    "coeff_mem_bytes": 23_000_000, "activation_mem_bytes": 1_204_224, "gdma_count": 40, "bdc_count": 60,
    "estimated_cycles": 1_500_000, "overlapped_cycles": 1_200_000,
}


def run(argv, capsys):
    with pytest.raises(SystemExit) as info:
        model_tool.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return info.value.code, out, err


def test_info_prints_the_header(tmp_path, capsys):
    path = tmp_path / "m.bmodel"
    write_bmodel(path, HEADER, b"\0" * 100, b"\1" * 48, [(0, "input"), (99, "logits")])
    status, out, err = run(["--info", path], capsys)
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "network: resnet18",
        "chip: bm1684x",
        "mode: F16",
        "input: input, [1, 3, 224, 224], f32, scale: 1, zero point: 0, address: 0x100000000",
        "output: logits, [1, 1000], i8, scale: 0.125, zero point: -3, address: 0x100093000",
        "coeff memory: 23000000 bytes (blob 100 bytes)",
        "activation memory: 1204224 bytes",
        "instructions: 40 GDMA, 60 BDC (command stream 48 bytes)",
        "debug info: 2 entries",
        "cost model estimate: 1500000 cycles (1500.000 us at 1000 MHz)",  # bm1684x's clock in chips.py
        "with GDMA and BDC overlapped: 1200000 cycles (1200.000 us at 1000 MHz)",
    ]


def test_info_without_estimate_or_debug(tmp_path, capsys):
    header = {k: v for k, v in HEADER.items() if k not in ("estimated_cycles", "overlapped_cycles")}
    write_bmodel(tmp_path / "m.bmodel", header, b"", b"", [])
    status, out, _ = run(["--info", tmp_path / "m.bmodel"], capsys)
    assert status == 0 and out.splitlines()[-1] == "debug info: none" and "estimate" not in out


def test_info_lists_layer_groups(tmp_path, capsys):
    groups = [{"id": 3, "ops": ["conv1", "relu1", "pool1"], "nsecs": 2, "hsecs": 4, "first": 10, "count": 25}]
    write_bmodel(tmp_path / "m.bmodel", {**HEADER, "layer_groups": groups}, b"", b"", [])
    status, out, _ = run(["--info", tmp_path / "m.bmodel"], capsys)
    assert status == 0
    assert out.splitlines()[-1] == "layer group 3: conv1, relu1, pool1 (2x4 slices), instructions 10..34"


def damaged(data: bytes) -> dict[str, bytes]:
    flipped_header = bytearray(data)
    flipped_header[130] ^= 1
    return {
        "empty": b"",
        "garbage": b"GIF89a" + bytes(300),
        "truncated": data[: len(data) // 2],
        "flipped": bytes(flipped_header),
        "version": data[:8] + b"\x07" + data[9:],
    }


@pytest.mark.parametrize("kind, message", [
    ("empty", "error: not a bmodel: the file is empty"),
    ("garbage", "error: not a bmodel: wrong magic b'GIF89a\\x00\\x00' (expected b'TPUDSLBM')"),
    ("truncated", "error: truncated bmodel: the coeffs section needs bytes"),
    ("flipped", "error: corrupt bmodel: checksum mismatch in the header section"),
    ("version", "error: unsupported bmodel version 7 (this tpudsl reads versions 1 and 2)"),
])
def test_damaged_bmodel_is_one_line(tmp_path, capsys, kind, message):
    write_bmodel(tmp_path / "good.bmodel", HEADER, bytes(range(256)) * 4, b"\1" * 48, [])
    path = tmp_path / "m.bmodel"
    path.write_bytes(damaged((tmp_path / "good.bmodel").read_bytes())[kind])
    before = sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir())
    status, out, err = run(["--info", path], capsys)
    assert (status, out) == (1, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"{path}: {message}")
    assert sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir()) == before


def test_usage_errors(tmp_path, capsys):
    status, out, err = run([], capsys)
    assert (status, out) == (1, "") and err == ("error: one of the arguments --info --timeline --combine --extract --chip --is_dynamic "
                                         "is required (see model_tool --help)\n")
    status, _, err = run(["--info", tmp_path / "missing.bmodel"], capsys)
    assert status == 1 and err == f"error: cannot open '{tmp_path / 'missing.bmodel'}': No such file or directory\n"
    status, _, err = run(["--info", tmp_path], capsys)
    assert status == 1 and err.startswith(f"error: cannot open '{tmp_path}'")


def test_script_runs_from_a_checkout(tmp_path):
    write_bmodel(tmp_path / "m.bmodel", HEADER, b"", b"", [])
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "model_tool.py"), "--info", str(tmp_path / "m.bmodel")],
                       capture_output=True, text=True, timeout=60, env={"PATH": ""})
    assert (r.returncode, r.stderr) == (0, "") and r.stdout.startswith("network: resnet18\n")
