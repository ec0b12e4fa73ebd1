"""model_tool --timeline (tpudsl/backend/timeline.py): the SVG of a deployed bmodel's command
stream, checked against the bmodel's records and the cost model called here independently."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.backend_support import transformed_conv_pool
from tpudsl.backend import isa, timeline
from tpudsl.backend.bmodel import read_bmodel, write_bmodel
from tpudsl.backend.chips import chip_named
from tpudsl.backend.cost import cycles
from tpudsl.cli import model_deploy, model_tool

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def bmodel(tmp_path_factory):
    d = tmp_path_factory.mktemp("tl")
    transformed_conv_pool(d, "m", (1, 3, 16, 8), seed=3)
    model_deploy.run(["--mlir", str(d / "m.mlir"), "--quantize", "F32", "--processor", "tiny",
                      "--model", str(d / "m.bmodel")])
    return d / "m.bmodel"


def run(argv, capsys):
    with pytest.raises(SystemExit) as info:
        model_tool.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return info.value.code, out, err


def ops_of(svg_path):
    root = ET.parse(svg_path).getroot()  # well-formed, or this raises
    groups = {g.get("data-op"): g.findall(f"{SVG}rect") for g in root.iter(f"{SVG}g") if g.get("class") == "op"}
    legend = [g.find(f"{SVG}text").text for g in root.iter(f"{SVG}g") if g.get("class") == "legend"]
    return root, groups, legend


def test_timeline_draws_every_instruction_by_its_cost(bmodel, tmp_path, capsys):
    status, _, err = run(["--timeline", bmodel, "-o", tmp_path / "m.svg"], capsys)
    assert (status, err) == (0, "")
    model = read_bmodel(bmodel)
    records = isa.decode(model.commands)
    chip = chip_named(model.header["chip"])
    root, groups, legend = ops_of(tmp_path / "m.svg")
    # every op that has instructions (a debug entry starts its instructions) appears once
    debug_ops = [name for _, name in model.debug]
    assert len(debug_ops) >= 2 and sorted(groups) == sorted(debug_ops) == sorted(legend)
    rects = [r for rs in groups.values() for r in rs]
    assert len(rects) == len(records) == model.header["gdma_count"] + model.header["bdc_count"]
    by_start = sorted(rects, key=lambda r: int(r.get("data-start")))
    t = 0
    for i, (r, rect) in enumerate(zip(records, by_start, strict=True)):
        assert int(rect.get("data-start")) == t and rect.get("data-engine") == r.ENGINE
        assert int(rect.get("data-cycles")) == cycles(r, chip), i
        t += cycles(r, chip)
    scale = timeline.WIDTH / t  # the whole stream spans the axis
    for engine in ("gdma", "bdc"):  # pixels follow cycles, no overlap within a lane
        lane = sorted((float(r.get("x")), float(r.get("width"))) for r in rects if r.get("data-engine") == engine)
        assert lane, engine
        assert all(x0 + w0 <= x1 + 1e-6 for (x0, w0), (x1, _) in zip(lane, lane[1:]))
    for r, rect in zip(records, by_start):
        assert float(rect.get("width")) == pytest.approx(cycles(r, chip) * scale, abs=2e-3)
    assert f"{t} cycles" in "".join(root.itertext()) and "MHz" in "".join(root.itertext())


def test_without_debug_info_ops_are_unnamed(bmodel, tmp_path, capsys):
    m = read_bmodel(bmodel)
    write_bmodel(tmp_path / "nd.bmodel", m.header, m.coeffs, m.commands, [])
    status, _, err = run(["--timeline", tmp_path / "nd.bmodel", "-o", tmp_path / "nd.svg"], capsys)
    assert (status, err) == (0, "")
    _, groups, legend = ops_of(tmp_path / "nd.svg")
    assert list(groups) == legend == ["no debug info"]
    assert len(groups["no debug info"]) == len(isa.decode(m.commands))


def test_bad_input_is_one_line_and_writes_nothing(bmodel, tmp_path, capsys):
    data = bytearray(bmodel.read_bytes())
    data[-1] ^= 0xFF
    (tmp_path / "bad.bmodel").write_bytes(data)
    m = read_bmodel(bmodel)
    write_bmodel(tmp_path / "short.bmodel", m.header, m.coeffs, m.commands[:-1], m.debug)
    write_bmodel(tmp_path / "count.bmodel", {**m.header, "bdc_count": m.header["bdc_count"] + 1}, m.coeffs,
                 m.commands, m.debug)
    for argv, expected in [
        (["--timeline", tmp_path / "bad.bmodel", "-o", tmp_path / "o.svg"], "corrupt bmodel"),
        (["--timeline", tmp_path / "short.bmodel", "-o", tmp_path / "o.svg"], "is truncated"),
        (["--timeline", tmp_path / "count.bmodel", "-o", tmp_path / "o.svg"], "the header says"),
        (["--timeline", bmodel, "-o", tmp_path / "missing" / "o.svg"], "No such file or directory"),
        (["--timeline", bmodel, "-o", tmp_path], "Is a directory"),
        (["--timeline", bmodel], "-o goes with --timeline"),
    ]:
        status, out, err = run(argv, capsys)
        assert status == 1 and out == "" and len(err.strip().splitlines()) == 1 and expected in err, (argv, err)
        assert "Traceback" not in err
    assert not (tmp_path / "o.svg").exists() and not (tmp_path / "missing").exists()
