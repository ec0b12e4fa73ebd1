"""bm1688 with two cores (`--num_core 2`, docs/backend.md "Several cores"): a small conv model, a
residual block, a chain of convs (two groups, the second's weights prefetched) and a classifier
head (one row: its Gemm cut along C) compiled for one core and for two, the cmodel's outputs of the two-core .bmodel against the Tpu interpreter (F32 within 1e-5
relative, F16 and INT8 bit-exact), its header's cores, the work really dealt (core 1 computes) and
fewer cycles than one core; and the cmodel's
checks of several cores on streams broken by hand (a core reading local memory it never wrote, a
race on global memory, barriers that do not match); the slice counts an op alone takes for several
cores against the one-core choice."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from backend_support import assert_bit_exact, assert_f32_close, compile_int8, int8_module, interpret, lowered
from cli_support import run_main
from frontend_support import make_model
from onnx import helper as h
from xdsl.dialects.builtin import IntegerAttr, i64

from tpudsl.backend import isa
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.backend.cores import streams_of
from tpudsl.ir.diagnostics import TpudslError

SHAPE = (1, 8, 16, 16)


def _conv_pool(rng):
    """Conv 3x3 + Relu, MaxPool 2x2, Conv 1x1."""
    w1, w2 = (rng.standard_normal(s).astype(np.float32) * 0.3 for s in ((8, 8, 3, 3), (8, 8, 1, 1)))
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("MaxPool", ["r1"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("Conv", ["p", "w2"], ["y"])]
    return make_model(nodes, {"x": list(SHAPE)}, ["y"], {"w1": w1, "w2": w2})


def _residual(rng):
    """ResNet's basic block: Conv 3x3 + Relu, Conv 3x3, Add of the input, Relu."""
    w1, w2 = (rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2 for _ in range(2))
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]), h.make_node("Add", ["c2", "x"], ["s"]),
             h.make_node("Relu", ["s"], ["y"])]
    return make_model(nodes, {"x": list(SHAPE)}, ["y"], {"w1": w1, "w2": w2})


def _chain(rng):
    """Six Conv 3x3 + Relu of 32 channels, two of stride 2: with two cores two groups, the second's
    first weights prefetched by both cores during the first."""
    nodes, weights, x = [], {}, "x"
    for i in range(6):
        weights[f"w{i}"] = rng.standard_normal((32, 32, 3, 3)).astype(np.float32) * 0.1
        stride = 2 if i in (2, 4) else 1
        nodes += [h.make_node("Conv", [x, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1], strides=[stride, stride]),
                  h.make_node("Relu", [f"c{i}"], ["y" if i == 5 else f"r{i}"])]
        x = f"r{i}"
    return make_model(nodes, {"x": [1, 32, 32, 32]}, ["y"], weights)


def _head(rng):
    """A classifier head: GlobalAveragePool, Flatten, Gemm; one row each, so cut along C for the cores."""
    w, b = rng.standard_normal((128, 64)).astype(np.float32) * 0.2, rng.standard_normal(128).astype(np.float32)
    nodes = [h.make_node("GlobalAveragePool", ["x"], ["p"]), h.make_node("Flatten", ["p"], ["f"]),
             h.make_node("Gemm", ["f", "w", "b"], ["y"], transB=1)]
    return make_model(nodes, {"x": [1, 64, 4, 4]}, ["y"], {"w": w, "b": b})


def _compiled(top, cores: int, path, opt: int = 2):
    """The module compiled as model_deploy does, for `cores` cores (layer-group decides again)."""
    top.module.attributes["module.cores"] = IntegerAttr(cores, i64)
    return compile_int8(top, str(path), opt)


def _lowered(build, mode: str, tmp_path):
    rng = np.random.default_rng(7)
    model = build(rng)
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    top = int8_module(model, shape, tmp_path, "bm1688") if mode == "INT8" else lowered(model, mode, "bm1688")
    return top, {"x": rng.standard_normal(shape).astype(np.float32)}


@pytest.mark.parametrize("mode", ["F32", "F16", "INT8"])
@pytest.mark.parametrize("build", [_conv_pool, _residual, _chain, _head], ids=["conv_pool", "residual", "chain", "head"])
def test_two_cores_match_the_tpu_interpreter_and_take_fewer_cycles(build, mode, tmp_path):
    top, feed = _lowered(build, mode, tmp_path)
    want = interpret(top, feed)["y"]
    one = _compiled(top, 1, tmp_path / "one.bmodel")
    two = _compiled(top, 2, tmp_path / "two.bmodel")
    got = run_bmodel(two, feed)[0]["y"]
    (assert_f32_close if mode == "F32" else assert_bit_exact)(got, want, "y")
    h1, h2 = one.header, two.header
    assert "core_num" not in h1 and h2["core_num"] == 2
    streams = streams_of(isa.decode(two.commands), h2["core_instructions"])
    assert [len(s) for s in streams] == h2["core_instructions"]
    assert max(h2["core_cycles"]) <= h2["overlapped_cycles"]
    if build is _chain:  # each core loads the second group's weights during the first
        groups = [op for op in top.module.walk() if op.name == "tpu.Group"]
        assert any("other_up_overlap_op" in g.attributes for g in groups), len(groups)
    if build is _head:  # the Gemm (one row) cut along C, a part on each core; too small to gain from it:
        # its barriers cost more than the split saves in INT8
        assert all(any(isinstance(r, isa.BdcMatMul) for r in s) for s in streams)
        return
    assert all(any(r.ENGINE == "bdc" for r in s) for s in streams)  # core 1 computes too
    assert h2["overlapped_cycles"] < h1["overlapped_cycles"], (h1["overlapped_cycles"], h2["overlapped_cycles"])


def test_model_deploy_num_core_2_runs_the_bmodel_check(tmp_path):
    """model_deploy --processor bm1688 --num_core 2: the third check passes, the header says 2 cores."""
    onnx_path = tmp_path / "m.onnx"
    import onnx

    onnx.save(_residual(np.random.default_rng(3)), onnx_path)
    np.savez(tmp_path / "in.npz", x=np.random.default_rng(4).standard_normal(SHAPE).astype(np.float32))
    r = run_main("model_transform", "--model_name", "m", "--model_def", onnx_path, "--mlir", tmp_path / "m.mlir",
                 "--test_input", tmp_path / "in.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_main("model_deploy", "--mlir", tmp_path / "m.mlir", "--processor", "bm1688", "--num_core", "2",
                 "--test_input", tmp_path / "m_in_f32.npz", "--model", tmp_path / "m.bmodel", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "model_deploy: bmodel check passed" in r.stderr and " on 2 cores (busy: " in r.stderr
    h = read_bmodel(tmp_path / "m.bmodel").header
    assert h["core_num"] == 2
    r = run_main("model_tool", "--info", tmp_path / "m.bmodel")
    assert (f"cores: 2, instructions per core: {', '.join(map(str, h['core_instructions']))}, busy cycles per "
            f"core: {', '.join(map(str, h['core_cycles']))}") in r.stdout.splitlines()


# ---- the cmodel's checks, on a two-core stream broken by hand ----

@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """The residual block in F32, every op alone (opt=1), for two cores: (bmodel, input, streams)."""
    d = tmp_path_factory.mktemp("multicore")
    top, feed = _lowered(_residual, "F32", d)
    bm = _compiled(top, 2, d / "m.bmodel", opt=1)
    return bm, feed, [list(s) for s in streams_of(isa.decode(bm.commands), bm.header["core_instructions"])]


def _run(bm, feed, streams):
    """The .bmodel with these streams (debug info and tensor locations dropped: their indices moved)."""
    records = [r for s in streams for r in s]
    gdma = sum(r.ENGINE == "gdma" for r in records)
    header = {k: v for k, v in bm.header.items() if k != "tensor_locations"}
    header.update(gdma_count=gdma, bdc_count=len(records) - gdma, core_instructions=[len(s) for s in streams])
    return run_bmodel(replace(bm, header=header, commands=isa.encode(records), debug=[]), feed)[0]


def test_a_core_reading_local_memory_it_never_wrote_is_a_fault(alone):
    bm, feed, streams = alone
    assert np.array_equal(_run(bm, feed, streams)["y"], run_bmodel(bm, feed)[0]["y"])  # rebuilt as it was
    at = next(i for i, r in enumerate(streams[1]) if isinstance(r, isa.GdmaLoad))  # core 1's first load
    with pytest.raises(TpudslError, match=r"core 1 reads local bytes at 0x[0-9a-f]+ .* that it never wrote"):
        _run(bm, feed, [streams[0], streams[1][:at] + streams[1][at + 1:]])


def test_a_core_reading_what_another_writes_between_the_same_barriers_is_a_race(alone):
    """Without the barrier after the first conv, the second conv's slices read the halo rows the
    other core writes in the same phase."""
    bm, feed, streams = alone
    first = [next(i for i, r in enumerate(s) if isinstance(r, isa.CoreSync)) for s in streams]
    cut = [s[:i] + s[i + 1:] for s, i in zip(streams, first, strict=True)]
    with pytest.raises(TpudslError, match=r"core [01] reads global bytes .* that core [01] writes between the same "
                                          r"barriers .*: a race"):
        _run(bm, feed, cut)


def test_barriers_that_do_not_match_are_refused(alone):
    bm, feed, streams = alone
    at = next(i for i, r in enumerate(streams[1]) if isinstance(r, isa.CoreSync))
    with pytest.raises(TpudslError, match=r"core 0 reaches barrier 0 where core 1 reaches barrier 1 \(phase 0\): "
                                          r"the cores would wait for each other forever"):
        _run(bm, feed, [streams[0], streams[1][:at] + streams[1][at + 1:]])


# ---- the dealing and the barriers' phases, against their definitions ----

def test_deal_gives_each_core_a_contiguous_run_the_earlier_ones_larger():
    """cores.deal against its definition: every slice once, in order, contiguous runs whose sizes
    differ by at most one, larger first; core 0 has a slice whenever there is one (the case of
    fewer slices than cores counted: some cores then have none)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tests.feature_tally import FeatureTally
    from tpudsl.backend.cores import deal

    tally = FeatureTally(("fewer slices than cores", "uneven"))

    @settings(deadline=None)
    @given(st.integers(0, 40), st.integers(1, 8))
    def check(count, cores):
        runs = deal(count, cores)
        assert len(runs) == cores and [s for run in runs for s in run] == list(range(count))
        sizes = [len(run) for run in runs]
        assert sizes == sorted(sizes, reverse=True) and max(sizes) - min(sizes) <= 1
        assert count == 0 or sizes[0] >= 1
        tally.record([name for name, shown in (("fewer slices than cores", 0 < count < cores),
                                               ("uneven", max(sizes) != min(sizes))) if shown])

    check()
    tally.assert_each_in(0.05)


def test_timing_takes_each_phase_as_its_slowest_core():
    """cores.timing against a sum written here: per phase, the largest of the cores' serial cycles
    (cost.cycles added up); one core without barriers is the stream's own schedule."""
    from tpudsl.backend.chips import chip_named
    from tpudsl.backend.cores import timing
    from tpudsl.backend.cost import cycles

    chip = chip_named("bm1688")
    load = isa.GdmaLoad(0, chip.gmem_start, 64, 64, 8, 1, 0, 1, 1, 8, 8)
    copy = isa.GdmaCopy(chip.gmem_start, chip.gmem_start + 4096, 4096)
    sync = [isa.CoreSync(0), isa.CoreSync(1)]
    streams = [[load, sync[0], copy, copy, sync[1]], [load, load, load, sync[0], sync[1]]]
    c_load, c_copy, c_sync = (cycles(r, chip) for r in (load, copy, sync[0]))
    serial, overlapped, busy = timing(streams, chip)
    # phase 0: core 0 a load, core 1 three; phase 1: core 0 two copies, core 1 nothing; a barrier each
    assert serial == (3 * c_load + c_sync) + (2 * c_copy + c_sync)
    assert overlapped <= serial and len(busy) == 2 and max(busy) <= overlapped


@pytest.mark.parametrize("rows, cores", [(71, 2), (134, 2), (2, 4)], ids=["3_to_4", "5_to_6", "2_rows_4_cores"])
def test_an_op_alone_takes_a_slice_count_the_cores_divide_first_and_at_least_one_per_core(rows, cores):
    """single.choose_secs (cores.count_passes) against the one-core choice, the level before: a Relu
    of `rows` rows on tiny (one image: H slices only) takes the fewest distinct H splits that fit and
    number at least min(cores, rows), a count the cores divide evenly first. 71 and 134 rows need 3 and
    5 slices on one core (odd: 4 and 6 on two cores); 2 rows on 4 cores fit in 1 slice, no count of
    them is a multiple of 4, so the second pass takes 2 (one per row)."""
    from tpudsl.backend.chips import chip_named
    from tpudsl.backend.layer_group.single import choose_secs
    from tpudsl.backend.slicing import KINDS, Secs

    top = lowered(make_model([h.make_node("Relu", ["x"], ["y"])], {"x": [1, 4, rows, 64]}, ["y"], {}))
    op = next(o for o in top.main_func().body.block.ops if o.name in KINDS)
    tiny = chip_named("tiny")
    fewest = choose_secs(op, tiny)[0].h
    distinct = [k for k in range(1, rows + 1) if -(-rows // -(-rows // k)) == k]  # H splits of k parts
    fitting = [k for k in distinct if k >= max(fewest, min(cores, rows))]
    want = next((k for k in fitting if k % cores == 0), fitting[0])
    assert (fewest, want) in ((3, 4), (5, 6), (1, 2))  # the cases named above
    assert choose_secs(op, replace(tiny, cores=cores))[0] == Secs(1, want)
