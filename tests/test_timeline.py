"""model_tool --timeline (tpudsl/backend/timeline.py): the SVG of a deployed bmodel's command
stream (and of a hand-written one whose engines overlap), checked against the bmodel's records, the
cost model and the schedule, and its local-memory panel against its invariants; bad input (and
model_runner --profile on the same bad records) one error line; a single-core SVG
against the file the code before several cores wrote; a two-core bmodel's lanes, barriers, waits
and busy cycles against its streams, its header and model_runner --profile."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from tests.backend_support import transformed_conv_pool
from tpudsl.backend import isa, timeline
from tpudsl.backend.bmodel import read_bmodel, write_bmodel
from tpudsl.backend.chips import chip_named
from tpudsl.backend.cost import cycles
from tpudsl.backend.schedule import schedule
from tpudsl.cli import model_deploy, model_runner, model_tool

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


def overlapping(tmp_path, **extra):
    """A hand-written stream on the tiny chip whose second load runs beside the first compute:
    load a -> relu a -> store a, load b (other local bytes) -> relu b -> store b; `extra` header keys."""
    f32, g = isa.DTYPES["f32"], chip_named("tiny").gmem_start
    stream = [isa.GdmaLoad(f32, g, 64, 16, 4, 1, 0, 1, 4, 4, 4),
              isa.BdcActive(f32, 0, 0, 1, 4, 4, 4, 2048, -1.0),
              isa.GdmaLoad(f32, g + 256, 64, 16, 4, 1, 1024, 1, 4, 4, 4),
              isa.GdmaStore(f32, g + 512, 64, 16, 4, 1, 2048, 1, 4, 4, 4),
              isa.BdcActive(f32, 0, 1024, 1, 4, 4, 4, 3072, -1.0),
              isa.GdmaStore(f32, g + 768, 64, 16, 4, 1, 3072, 1, 4, 4, 4)]
    tensor = {"shape": [1, 4, 4, 4], "dtype": "f32", "scale": 1.0, "zero_point": 0}
    header = {"network": "pair", "chip": "tiny", "mode": "F32", "coeff_mem_bytes": 0, "activation_mem_bytes": 1024,
              "inputs": [{**tensor, "name": "x", "address": g}],
              "outputs": [{**tensor, "name": "y", "address": g + 512}],
              "gdma_count": 4, "bdc_count": 2, **extra}
    write_bmodel(tmp_path / "pair.bmodel", header, b"", isa.encode(stream), [(0, "a"), (2, "b")])
    return tmp_path / "pair.bmodel"


@pytest.mark.parametrize("which", ["deployed", "overlapping"])
def test_timeline_draws_the_schedule_and_local_memory(bmodel, tmp_path, capsys, which):
    path = bmodel if which == "deployed" else overlapping(tmp_path)
    status, _, err = run(["--timeline", path, "-o", tmp_path / "m.svg"], capsys)
    assert (status, err) == (0, "")
    model = read_bmodel(path)
    records = isa.decode(model.commands)
    chip = chip_named(model.header["chip"])
    root, groups, legend = ops_of(tmp_path / "m.svg")
    # every op that has instructions (a debug entry starts its instructions) appears once
    debug_ops = [name for _, name in model.debug]
    assert len(debug_ops) >= 2 and sorted(groups) == sorted(debug_ops) == sorted(legend)
    rects = sorted((r for rs in groups.values() for r in rs), key=lambda r: int(r.get("data-index")))
    assert [int(r.get("data-index")) for r in rects] == list(range(len(records)))
    assert len(rects) == model.header["gdma_count"] + model.header["bdc_count"]
    sched = schedule(records, chip)  # checked against a brute-force reference in test_schedule.py
    spans = [(int(r.get("data-start")), int(r.get("data-start")) + int(r.get("data-cycles"))) for r in rects]
    for i, (r, rect) in enumerate(zip(records, rects, strict=True)):
        assert rect.get("data-engine") == r.ENGINE and spans[i] == (sched.starts[i], sched.ends[i])
        assert int(rect.get("data-cycles")) == cycles(r, chip), i
    total = max(end for _, end in spans)
    scale = timeline.WIDTH / total  # the whole stream spans the axis
    for engine in ("gdma", "bdc"):  # pixels follow cycles, no overlap within a lane
        lane = sorted((float(r.get("x")), float(r.get("width"))) for r in rects if r.get("data-engine") == engine)
        assert lane, engine
        assert all(x0 + w0 <= x1 + 1e-6 for (x0, w0), (x1, _) in zip(lane, lane[1:]))
    for (start, end), rect in zip(spans, rects):
        assert float(rect.get("x")) == pytest.approx(timeline.LEFT + start * scale, abs=2e-3)
        assert float(rect.get("width")) == pytest.approx((end - start) * scale, abs=2e-3)
    across = [(i, j) for i in range(len(records)) for j in range(i) if records[i].ENGINE != records[j].ENGINE
              and max(spans[i][0], spans[j][0]) < min(spans[i][1], spans[j][1])]
    # today's codegen (one op per group, one buffer) serializes the engines; the hand-written pair overlaps
    assert bool(across) == (which == "overlapping") and (total < sum(cycles(r, chip) for r in records)) == bool(across)
    text = "".join(root.itertext())
    assert f"{total} cycles" in text and f"({sum(cycles(r, chip) for r in records)} cycles one after" in text
    panel, = (g for g in root.iter(f"{SVG}g") if g.get("class") == "occupancy")
    check_occupancy(panel, dict(enumerate(records)), chip, set(debug_ops))


def check_occupancy(panel, records, chip, ops):
    """Local-memory boxes of one panel: disjoint in (time, address), inside the panel and the chip's
    local memory, labelled with an op, one at least per record (of `records`, by index) that writes
    local memory."""
    size = int(panel.get("data-bytes"))
    assert 0 < size <= chip.lmem_bytes
    boxes = [{k: int(b.get(f"data-{k}")) for k in ("record", "t0", "t1", "addr0", "addr1")} | {"op": b.get("data-op")}
             for b in panel.findall(f"{SVG}rect")]
    writers = {i for i, r in records.items() if not isinstance(r, (isa.GdmaStore, isa.GdmaCopy, isa.CoreSync))}
    assert {b["record"] for b in boxes} == writers
    for k, a in enumerate(boxes):
        assert 0 <= a["addr0"] < a["addr1"] <= size and a["t0"] < a["t1"] and a["op"] in ops
        for b in boxes[k + 1:]:
            assert not (max(a["addr0"], b["addr0"]) < min(a["addr1"], b["addr1"])
                        and max(a["t0"], b["t0"]) < min(a["t1"], b["t1"])), (a, b)


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
    past = isa.GdmaLoad(isa.DTYPES["f32"], m.header["inputs"][0]["address"], 1, 1, 1, 1, (1 << 14) - 16, 1, 1, 1, 8)
    odd = isa.BdcCast(0, 9, 0, 1, 1, 1, 1, 64)
    write_bmodel(tmp_path / "dtype.bmodel", {**m.header, "bdc_count": m.header["bdc_count"] + 1}, m.coeffs,
                 m.commands + odd.encode(), m.debug)
    write_bmodel(tmp_path / "past.bmodel", {**m.header, "gdma_count": m.header["gdma_count"] + 1}, m.coeffs,
                 m.commands + past.encode(), m.debug)
    cell = isa.BdcRecurrent(7, *[isa.NO_ADDR] * 9, 1, 1, 1, 1, 1, 0, 0)  # an unknown cell: no gate count
    write_bmodel(tmp_path / "cell.bmodel", {**m.header, "bdc_count": m.header["bdc_count"] + 1}, m.coeffs,
                 m.commands + cell.encode(), m.debug)
    write_bmodel(tmp_path / "sync.bmodel", {**m.header, "gdma_count": m.header["gdma_count"] + 1}, m.coeffs,
                 m.commands + isa.CoreSync(0).encode(), m.debug)
    for argv, expected in [
        (["--timeline", tmp_path / "bad.bmodel", "-o", tmp_path / "o.svg"], "corrupt bmodel"),
        (["--timeline", tmp_path / "short.bmodel", "-o", tmp_path / "o.svg"], "is truncated"),
        (["--timeline", tmp_path / "count.bmodel", "-o", tmp_path / "o.svg"], "the header says"),
        (["--timeline", tmp_path / "dtype.bmodel", "-o", tmp_path / "o.svg"],
         f"instruction {len(isa.decode(m.commands))} (BdcCast) has unknown out_dtype code 9"),
        (["--timeline", tmp_path / "past.bmodel", "-o", tmp_path / "o.svg"],
         f"instruction {len(isa.decode(m.commands))} (t2_maxpool) touches local bytes 16368..16400, past the "
         f"chip's 16384 bytes per lane"),
        (["--timeline", tmp_path / "cell.bmodel", "-o", tmp_path / "o.svg"],
         f"instruction {len(isa.decode(m.commands))} (BdcRecurrent) has unknown cell code 7"),
        (["--timeline", tmp_path / "sync.bmodel", "-o", tmp_path / "o.svg"],
         f"barrier 0 (CoreSync) at instruction {len(isa.decode(m.commands))} of a one-core bmodel"),
        (["--timeline", bmodel, "-o", tmp_path / "missing" / "o.svg"], "No such file or directory"),
        (["--timeline", bmodel, "-o", tmp_path], "Is a directory"),
        (["--timeline", bmodel], "--timeline needs -o"),
        (["--timeline", bmodel, "-o", bmodel], f"-o '{bmodel}' would overwrite the input {bmodel}; choose another name"),
        (["--timeline", bmodel, "-o", ""], "-o needs a file name"),
    ]:
        status, out, err = run(argv, capsys)
        assert status == 1 and out == "" and len(err.strip().splitlines()) == 1 and expected in err, (argv, err)
        assert "Traceback" not in err
    assert not (tmp_path / "o.svg").exists() and not (tmp_path / "missing").exists()
    # model_runner --profile times the same records (cores.timing, the cost model): refused before the run
    np.savez(tmp_path / "in.npz", **{t["name"]: np.zeros(t["shape"], np.float32) for t in m.header["inputs"]})
    for name, problem in (("dtype", "(BdcCast) has unknown out_dtype code 9"),
                          ("cell", "(BdcRecurrent) has unknown cell code 7")):
        with pytest.raises(SystemExit) as info:
            model_runner.main([str(a) for a in ("--input", tmp_path / "in.npz", "--model", tmp_path / f"{name}.bmodel",
                                                "--output", tmp_path / "o.npz", "--profile")])
        out, err = capsys.readouterr()
        assert (info.value.code, out) == (1, ""), err
        assert err == f"error: bmodel: instruction {len(isa.decode(m.commands))} {problem}\n"
    assert not (tmp_path / "o.npz").exists()
    assert read_bmodel(bmodel).commands  # still the bmodel, not an SVG


def test_each_layer_group_is_one_band_over_its_records(tmp_path, capsys):
    """Two groups of several ops (a Concat between cuts them): each is one band, labelled with its
    ops and nsecs x hsecs as --layer-group left them in the IR, spanning exactly the time of its
    ops' rectangles (the debug info's names, not the header's instruction range)."""
    import numpy as np

    from tests.backend_support import compile_for, lowered
    from tests.test_backend_cmodel import Graph
    from tpudsl.backend.layer_group.region import members
    from tpudsl.dialects.opdef import loc_name

    g = Graph(np.random.default_rng(5))
    shape = (2, 4, 64, 16)
    g.shapes["x"] = shape
    t = "x"
    for k in range(5):
        if k == 2:
            shape = (2, 8, 64, 16)
            t = g.node("Concat", [t, t], shape, axis=1)
        t = g.node("Conv", [t, g.const((shape[1], shape[1], 3, 3))], shape, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    top = lowered(g.model({"x": (2, 4, 64, 16)}, t))
    compile_for(top, "tiny", str(tmp_path / "g.bmodel"))
    want: dict[int, tuple[list[str], tuple[int, int]]] = {}  # group id -> its ops, (nsecs, hsecs) of its last
    groups = [op for op in top.main_func().body.block.ops if op.name == "tpu.Group"]  # ids in program order
    for gid, group in enumerate(groups):
        want[gid] = ([loc_name(op) for op in members(group)],
                     (group.attributes["nsecs"].value.data, group.attributes["hsecs"].value.data))
    assert len(want) == 2 and all(len(ops) >= 2 for ops, _ in want.values()), want
    status, _, err = run(["--timeline", tmp_path / "g.bmodel", "-o", tmp_path / "g.svg"], capsys)
    assert (status, err) == (0, "")
    root, op_rects, _ = ops_of(tmp_path / "g.svg")
    bands = [b for b in root.iter(f"{SVG}g") if b.get("class") == "group"]
    assert sorted(int(b.get("data-group")) for b in bands) == sorted(want)  # each group once
    total = max(int(r.get("data-start")) + int(r.get("data-cycles")) for rs in op_rects.values() for r in rs)
    scale = timeline.WIDTH / total
    for band in bands:
        ops, (nsecs, hsecs) = want[int(band.get("data-group"))]
        assert band.get("data-ops").split() == ops and (int(band.get("data-nsecs")), int(band.get("data-hsecs"))) \
            == (nsecs, hsecs)
        assert f"{', '.join(ops)} ({nsecs}x{hsecs} slices)" in band.find(f"{SVG}title").text
        rects = [r for op in ops for r in op_rects[op]]
        t0 = min(int(r.get("data-start")) for r in rects)
        t1 = max(int(r.get("data-start")) + int(r.get("data-cycles")) for r in rects)
        assert (int(band.get("data-t0")), int(band.get("data-t1"))) == (t0, t1)
        box = band.find(f"{SVG}rect")
        assert float(box.get("x")) == pytest.approx(timeline.LEFT + t0 * scale, abs=2e-3)
        assert float(box.get("width")) == pytest.approx((t1 - t0) * scale, abs=2e-3)


def test_a_single_core_svg_is_the_one_drawn_before_several_cores(tmp_path):
    """tests/data/timeline_pair.svg was written by timeline.py before it drew several cores (commit
    4e38cf8), from this stream with a layer group: one core's SVG is unchanged byte for byte. (A
    change of cost.cycles changes it legitimately: write it again then, from the code before.)"""
    group = {"id": 0, "ops": ["a", "b"], "nsecs": 1, "hsecs": 2, "first": 0, "count": 6}
    path = overlapping(tmp_path, layer_groups=[group])
    want = (Path(__file__).parent / "data" / "timeline_pair.svg").read_text()
    assert timeline.render(read_bmodel(path)) == want


def _resnet_like(rng):
    """A residual block (Conv 3x3 + Relu, Conv 3x3, Add of the input, Relu: one layer group sliced
    for both cores) and a classifier head (GlobalAveragePool, Flatten, Gemm: ops left on core 0)."""
    import numpy as np
    from onnx import helper as oh

    from tests.frontend_support import make_model

    w1, w2 = (rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2 for _ in range(2))
    w, b = rng.standard_normal((10, 8)).astype(np.float32) * 0.2, rng.standard_normal(10).astype(np.float32)
    nodes = [oh.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c1"], ["r1"]),
             oh.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]), oh.make_node("Add", ["c2", "x"], ["s"]),
             oh.make_node("Relu", ["s"], ["r"]), oh.make_node("GlobalAveragePool", ["r"], ["p"]),
             oh.make_node("Flatten", ["p"], ["f"]), oh.make_node("Gemm", ["f", "w", "b"], ["y"], transB=1)]
    return make_model(nodes, {"x": [1, 8, 16, 16]}, ["y"], {"w1": w1, "w2": w2, "w": w, "b": b})


@pytest.fixture(scope="module")
def one_and_two_cores(tmp_path_factory):
    """The ResNet-like model compiled for bm1688 with one core and with two: the paths."""
    import numpy as np
    from xdsl.dialects.builtin import IntegerAttr, i64

    from tests.backend_support import compile_for, lowered

    d = tmp_path_factory.mktemp("cores")
    for cores in (1, 2):
        top = lowered(_resnet_like(np.random.default_rng(7)), "F32", "bm1688")
        top.module.attributes["module.cores"] = IntegerAttr(cores, i64)
        compile_for(top, "bm1688", str(d / f"m{cores}.bmodel"))
    np.savez(d / "in.npz", x=np.random.default_rng(8).standard_normal((1, 8, 16, 16)).astype(np.float32))
    return d


def _core_streams(records, header):
    """Each core's (index, record) pairs and each core's phases (lists of them, each ending with its
    CoreSync), split here from the header's counts and the records."""
    streams, first = [], 0
    for count in header["core_instructions"]:
        streams.append(list(enumerate(records))[first:first + count])
        first += count
    phases = []
    for stream in streams:
        phases.append([[]])
        for i, r in stream:
            phases[-1][-1].append((i, r))
            if isinstance(r, isa.CoreSync):
                phases[-1].append([])
        assert phases[-1].pop() == []  # every stream ends with a barrier
    return streams, phases


def test_two_cores_have_their_lanes_barriers_waits_and_busy_cycles(one_and_two_cores, tmp_path, capsys):
    """Against the streams split here, a schedule of each phase, the header's core_cycles and
    overlapped_cycles and model_runner --profile's total."""
    d = one_and_two_cores
    roots = {}
    for cores in (1, 2):
        status, _, err = run(["--timeline", d / f"m{cores}.bmodel", "-o", tmp_path / f"m{cores}.svg"], capsys)
        assert (status, err) == (0, "")
        roots[cores] = ops_of(tmp_path / f"m{cores}.svg")
    lanes = {cores: {(r.get("data-engine"), r.get("y")) for rs in groups.values() for r in rs}
             for cores, (_, groups, _) in roots.items()}
    assert len(lanes[1]) == 2 and len(lanes[2]) == 4  # twice the lanes
    model = read_bmodel(d / "m2.bmodel")
    h, chip, records = model.header, chip_named(model.header["chip"]), isa.decode(model.commands)
    root, groups, _ = roots[2]
    rects = {int(r.get("data-index")): r for rs in groups.values() for r in rs}
    assert sorted(rects) == list(range(len(records)))
    start_of = {i: int(r.get("data-start")) for i, r in rects.items()}
    end_of = {i: start_of[i] + int(r.get("data-cycles")) for i, r in rects.items()}
    streams, phases = _core_streams(records, h)
    for k, stream in enumerate(streams):
        assert {int(rects[i].get("data-core")) for i, _ in stream} == {k}
    barriers = [b for b in root.iter(f"{SVG}line") if b.get("class") == "barrier"]
    syncs = sum(isinstance(r, isa.CoreSync) for r in records)
    assert len(barriers) == syncs // 2 == sum(isinstance(r, isa.CoreSync) for _, r in streams[1]) >= 3
    cycle = [int(b.get("data-cycle")) for b in barriers]  # where each phase ends
    assert [int(b.get("data-barrier")) for b in barriers] == [p[-1][1].barrier for p in phases[0]]
    start = 0
    for n, end in enumerate(cycle):  # each phase starts where the slowest core of the one before ended
        times = [schedule([r for _, r in core[n]], chip) for core in phases]
        assert end == start + max(t.makespan for t in times)
        for core, t in zip(phases, times):
            for (i, _), t0, t1 in zip(core[n], t.starts, t.ends, strict=True):
                assert (int(rects[i].get("data-start")), int(rects[i].get("data-cycles"))) == (start + t0, t1 - t0)
        start = end
    total = max(end_of.values())
    assert total == cycle[-1] == h["overlapped_cycles"]
    waits = [w for w in root.iter(f"{SVG}rect") if w.get("class") == "wait"]
    assert waits  # the head's ops leave core 1 idle
    for k, stream in enumerate(streams):  # busy = the axis less the core's waits
        mine = [w for w in waits if int(w.get("data-core")) == k]
        for w in mine:  # from its last record of the phase to the barrier
            n = [b.get("data-barrier") for b in barriers].index(w.get("data-barrier"))
            last = max(end_of[i] for i, _ in phases[k][n])
            assert (int(w.get("data-t0")), int(w.get("data-t1"))) == (last, cycle[n])
        assert total - sum(int(w.get("data-t1")) - int(w.get("data-t0")) for w in mine) == h["core_cycles"][k]
    scale = timeline.WIDTH / total
    for i, r in rects.items():
        assert float(r.get("x")) == pytest.approx(timeline.LEFT + start_of[i] * scale, abs=2e-3)
    from tpudsl.cli import model_runner

    with pytest.raises(SystemExit) as info:
        model_runner.main(["--input", str(d / "in.npz"), "--model", str(d / "m2.bmodel"), "--output",
                           str(tmp_path / "out.npz"), "--profile"])
    profile = capsys.readouterr().out
    assert info.value.code == 0
    line, = (x for x in profile.splitlines() if x.startswith("total with GDMA and BDC overlapped"))
    assert int(line.split()[-2]) == total
    band, = (b for b in root.iter(f"{SVG}g") if b.get("class") == "group")
    ops = band.get("data-ops").split()  # the group's records on both cores, barriers aside
    members = [i for i, r in enumerate(records) if not isinstance(r, isa.CoreSync)
               and any(i in {int(x.get("data-index")) for x in groups[op]} for op in ops)]
    assert {int(rects[i].get("data-core")) for i in members} == {0, 1}
    assert (int(band.get("data-t0")), int(band.get("data-t1"))) == (min(start_of[i] for i in members),
                                                                     max(end_of[i] for i in members))
    panels = [g for g in root.iter(f"{SVG}g") if g.get("class") == "occupancy"]
    assert [int(p.get("data-core")) for p in panels] == [0, 1]
    for panel, stream in zip(panels, streams, strict=True):
        check_occupancy(panel, dict(stream), chip, set(groups))


def test_two_cores_whose_barriers_differ_are_one_error(one_and_two_cores, tmp_path, capsys):
    m = read_bmodel(one_and_two_cores / "m2.bmodel")
    records = isa.decode(m.commands)
    h = m.header
    cut = len(records) - 1  # core 1's last barrier
    assert isinstance(records[cut], isa.CoreSync)
    header = {k: v for k, v in h.items() if k != "tensor_locations"}  # its indices count the barrier
    header.update(gdma_count=h["gdma_count"] - 1, core_instructions=[h["core_instructions"][0],
                                                                     h["core_instructions"][1] - 1])
    write_bmodel(tmp_path / "b.bmodel", header, m.coeffs, isa.encode(records[:cut]), m.debug)
    status, out, err = run(["--timeline", tmp_path / "b.bmodel", "-o", tmp_path / "b.svg"], capsys)
    assert status == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "core 0 reaches barrier 3 where core 1 reaches its end" in err
    assert not (tmp_path / "b.svg").exists()


def test_a_group_band_spans_its_slowest_core(one_and_two_cores, tmp_path, capsys):
    """The header's group range is core 0's records; core 1 given one more store in the group's phase
    (a copy of its last) ends later, and the band ends with it."""
    m = read_bmodel(one_and_two_cores / "m2.bmodel")
    records, h = isa.decode(m.commands), m.header
    group, = h["layer_groups"]
    first = h["core_instructions"][0]
    at = next(i for i in range(first, len(records)) if isinstance(records[i], isa.CoreSync))  # core 1's 1st barrier
    assert isinstance(records[at - 1], isa.GdmaStore)
    records.insert(at, records[at - 1])
    header = {k: v for k, v in h.items() if k != "tensor_locations"}  # their indices moved
    header.update(gdma_count=h["gdma_count"] + 1, core_instructions=[first, h["core_instructions"][1] + 1])
    debug = [(i + (i >= at), name) for i, name in m.debug]
    write_bmodel(tmp_path / "s.bmodel", header, m.coeffs, isa.encode(records), debug)
    status, _, err = run(["--timeline", tmp_path / "s.bmodel", "-o", tmp_path / "s.svg"], capsys)
    assert (status, err) == (0, "")
    root, groups, _ = ops_of(tmp_path / "s.svg")
    rects = {int(r.get("data-index")): r for rs in groups.values() for r in rs}
    end = {i: int(r.get("data-start")) + int(r.get("data-cycles")) for i, r in rects.items()}
    core0 = max(end[i] for i in range(group["first"], group["first"] + group["count"]))
    assert end[at] > core0
    band, = (b for b in root.iter(f"{SVG}g") if b.get("class") == "group")
    assert int(band.get("data-t1")) == end[at]
