"""TPU-MLIR's `--post_process FILE.py`: the scores of run_qtable, run_sensitive_layer and run_calibration
--search search_threshold are those of the arrays the user's PostProcess(outputs) returns.

The model is test_qtable_parts.py's YOLOv8 output in small: `output0` is the boxes (channels 0-3, values in
the hundreds, which INT8 keeps) beside the class scores (channels 4-6, near 3e-4, which INT8 rounds to 0).
Scored as tpudsl scores it without the flag (the least over output0's Concat parts), INT8 fails on the
class scores; a post-process that keeps only the boxes must make every INT8 model pass, one that keeps
only the class scores must keep their layer float. The reference formula is written here in numpy, on the
interpreter's float and (dequantized) INT8 tensors, through the same user function.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from tests.cli_support import run_main, table_rows
from tests.onnx_node.harness import cosine
from tests.test_qtable_parts import _detection_head, _head_dir
from tpudsl.cli.post_process import PostProcess
from tpudsl.cli.qtable_search import Int8Search, lowered_int8
from tpudsl.interp.module_interpreter import run_samples
from tpudsl.ir.module import load_module
from tpudsl.lowering.calibration_table import read_table
from tpudsl.lowering.top_to_tpu_int8 import int8_params

BOXES = 'def PostProcess(outputs):\n    return {"boxes": outputs["output0"][:, :4]}\n'
SCORES = 'def PostProcess(outputs):\n    return {"scores": outputs["output0"][:, 4:]}\n'
BOTH = ('import numpy as np\n\n\ndef PostProcess(outputs):\n    out = outputs["output0"]\n'
        '    return {"scores": out[:, 4:] + 1, "boxes": 1 / (1 + np.exp(-out[:, :4] / 100))}\n')
CENTRED = 'def PostProcess(outputs):\n    return {k: v - v.mean() for k, v in outputs.items()}\n'
# SCORES through one module-level buffer: each call overwrites what the one before returned
BUFFERED = ('import numpy as np\n\nBUFFER = np.empty((1, 3, 8, 8), np.float32)\n\n\ndef PostProcess(outputs):\n'
            '    BUFFER[...] = outputs["output0"][:, 4:]\n    return {"scores": BUFFER}\n')
PROGRAMS = {"boxes.py": BOXES, "scores.py": SCORES, "both.py": BOTH, "centred.py": CENTRED, "buffered.py": BUFFERED}


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    d = _head_dir(tmp_path_factory.mktemp("post"), _detection_head())
    r = run_main("run_calibration", "m.mlir", "--dataset", "data", "--input_num", "2", "--quiet", "-o", "table", cwd=d)
    assert r.returncode == 0, r.stderr
    for name, text in PROGRAMS.items():
        (d / name).write_text(text)
    return d


def _user_function(path):
    """The file's PostProcess, imported here apart from tpudsl's loader."""
    spec = importlib.util.spec_from_file_location("user_post_process", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PostProcess


def _numpy_cosines(head, program: str, names: tuple[str, ...]) -> dict[str, float]:
    """Per array PostProcess returns, the mean over the 2 samples of its cosine, INT8 against Top: the
    INT8 module's tensors `names` (its outputs when empty) dequantized by their types' scales, float32
    of the product in float64 (TPU-MLIR's int8 -> f32 cast)."""
    samples = [dict(np.load(head / "data" / f"{i}.npz")) for i in range(2)]
    top = load_module(head / "m.mlir")
    int8 = lowered_int8(load_module(head / "m.mlir"), read_table(str(head / "table")), "BM1684X", False)
    scale = {name: s for name, (s, _) in int8_params(int8).items()}  # symmetric: zero points 0
    dequantized = {name: lambda q, s=s: (q.astype(np.float64) * s).astype(np.float32) for name, s in scale.items()}
    want = run_samples(top.module, top.weights, samples, keep_all=True)[0]
    got = run_samples(int8.module, int8.weights, samples, keep_all=True)[0]
    names = names or ("output0",)  # float in every lowering
    user = _user_function(head / program)
    cosines: dict[str, list[float]] = {}
    for g, w in zip(got, want, strict=True):
        theirs = user({n: w[n] for n in names})
        ours = user({n: g[n] if n == "output0" else dequantized[n](g[n]) for n in names})
        for name, value in theirs.items():
            cosines.setdefault(name, []).append(cosine(ours[name], value))
    return {name: float(np.mean(c)) for name, c in cosines.items()}


@pytest.mark.parametrize("program, layers", [("both.py", ""), ("boxes.py", ""), ("centred.py", "xy:0.25,cls:0.75")])
def test_the_score_is_the_cosine_of_what_post_process_returns(head, program, layers):
    """Without --global_compare_layers the least of the returned arrays' cosines; with it, the i-th array
    weighted by the i-th layer's weight (TPU-MLIR's layers_rate[i]), the named tensors what PostProcess gets."""
    samples = [dict(np.load(head / "data" / f"{i}.npz")) for i in range(2)]
    table = read_table(str(head / "table"))
    search = Int8Search(str(head / "m.mlir"), table, "BM1684X", samples, False, compare_layers=layers,
                        post_process=PostProcess(str(head / program)))
    names = tuple(item.split(":")[0] for item in layers.split(",")) if layers else ()
    cos = _numpy_cosines(head, program, names)
    if layers:
        assert abs(cos["xy"] - cos["cls"]) > 1e-4, cos  # so that the weights show
        want = 0.25 * cos["xy"] + 0.75 * cos["cls"]
    else:
        want = min(cos.values())
    assert search.cosine({}) == pytest.approx(want, abs=1e-9), cos
    without = Int8Search(str(head / "m.mlir"), table, "BM1684X", samples, False, compare_layers=layers)
    assert abs(without.cosine({}) - want) > 1e-3  # the post-process changes the score


def test_what_post_process_returns_is_kept_apart_from_its_later_calls(head):
    """A PostProcess returning one buffer it reuses scores as the one returning new arrays (the float
    reference is not the INT8 run that overwrote it, which would score 1)."""
    samples = [dict(np.load(head / "data" / f"{i}.npz")) for i in range(2)]
    search = Int8Search(str(head / "m.mlir"), read_table(str(head / "table")), "BM1684X", samples, False,
                        post_process=PostProcess(str(head / "buffered.py")))
    want = _numpy_cosines(head, "scores.py", ())["scores"]
    assert want < 0.9  # INT8 rounds the class scores to 0
    assert search.cosine({}) == pytest.approx(want, abs=1e-9)


def test_what_post_process_writes_to_stderr_is_written_when_it_returns(head, tmp_path, capsys):
    """Held back while it runs (so that on an error only its last line is quoted), not dropped: once per
    sample of the float and the INT8 run."""
    (tmp_path / "talks.py").write_text("import sys\n\n\ndef PostProcess(outputs):\n    print('seen', file=sys.stderr)\n"
                                   "    return outputs\n")
    samples = [dict(np.load(head / "data" / f"{i}.npz")) for i in range(2)]
    capsys.readouterr()
    Int8Search(str(head / "m.mlir"), read_table(str(head / "table")), "BM1684X", samples, False,
               post_process=PostProcess(str(tmp_path / "talks.py"))).cosine({})
    assert capsys.readouterr().err == "seen\n" * 4


@pytest.mark.parametrize("program, kept", [("boxes.py", False), ("scores.py", True)])
def test_run_qtable_keeps_float_what_the_post_process_compares(head, tmp_path, program, kept):
    """Without the flag run_qtable keeps cls_sigmoid float (test_qtable_parts.py); comparing only the boxes
    it keeps nothing, comparing only the class scores it keeps cls_sigmoid."""
    r = run_main("run_qtable", head / "m.mlir", "--dataset", head / "data", "--input_num", "2",
                 "--calibration_table", head / "table", "--processor", "bm1684x", "--quiet",
                 "--post_process", head / program, "--loss_table", tmp_path / "loss", "-o", tmp_path / "qtable")
    assert r.returncode == 0, r.stderr
    floats = {row[0] for row in table_rows(tmp_path / "qtable")}
    assert ("cls_sigmoid" in floats) == kept and (floats == set()) == (not kept), floats


def test_a_named_tensor_kept_f16_is_compared_with_its_f32_reference(head, tmp_path):
    """Keeping cls_sigmoid float makes it an F16 tensor (float16) where Top's is float32: PostProcess returns
    both as they are and run_qtable keeps what it keeps without the (identity) post-process."""
    (tmp_path / "same.py").write_text("def PostProcess(outputs):\n    return outputs\n")
    floats = []
    for post in ([], ["--post_process", tmp_path / "same.py"]):
        r = run_main("run_qtable", head / "m.mlir", "--dataset", head / "data", "--input_num", "2",
                     "--calibration_table", head / "table", "--processor", "bm1684x", "--quiet",
                     "--global_compare_layers", "cls_sigmoid", *post, "-o", tmp_path / "qtable")
        assert r.returncode == 0, r.stderr
        floats.append(table_rows(tmp_path / "qtable"))
    assert floats[0] == floats[1] == [["cls_sigmoid", "F16"]]


def test_run_sensitive_layer_scores_through_it(head, tmp_path):
    """Its first step: INT8 whole scored on the boxes passes --expected_cos, so nothing is searched (scored
    on output0's parts it is about 0 and the search runs)."""
    want = _numpy_cosines(head, "boxes.py", ())["boxes"]
    r = run_main("run_sensitive_layer", head / "m.mlir", "--dataset", head / "data", "--calibration_table",
                 head / "table", "--processor", "bm1684x", "--inference_num", "2", "--quiet",
                 "--post_process", head / "boxes.py", "-o", tmp_path / "qtable", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"reaches cosine {want:.6f} > --expected_cos 0.99" in r.stderr, (want, r.stderr)
    assert list(tmp_path.iterdir()) == []


def test_search_threshold_scores_through_it(head, tmp_path):
    """Every method's INT8 model scored on the boxes (above 0.99), where output0's parts score about 0."""
    r = run_main("run_calibration", head / "m.mlir", "--dataset", head / "data", "--input_num", "2",
                 "--search", "search_threshold", "--inference_num", "2", "--post_process", head / "boxes.py",
                 "-o", "table", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cosines = [float(line.rsplit("cosine ", 1)[1].split()[0]) for line in r.stderr.splitlines()
               if "INT8 output cosine" in line]
    assert len(cosines) == 4 and min(cosines) > 0.99, r.stderr


COUNTER = "calls = []\n\n\ndef PostProcess(outputs):\n    calls.append(1)\n"
BAD = {  # file text -> the error (after 'FILE' and the position, if any)
    None: "error: --post_process: no such file",
    "": "error: --post_process: it defines no function PostProcess (TPU-MLIR calls PostProcess(outputs))",
    "PostProcess = 3\n": "error: --post_process: it defines no function PostProcess (TPU-MLIR calls "
                         "PostProcess(outputs))",
    "import no_such_module_here\n": ":1:1: error: --post_process: importing it raised ModuleNotFoundError: No module "
                                    "named 'no_such_module_here'",
    "def PostProcess(outputs)\n    return outputs\n": ":1:25: error: --post_process: importing it raised SyntaxError: "
                                                       "expected ':'",
    # SystemExit too: the tool ended with the file's status (0 for these two), no message, nothing written
    "import sys\n\nsys.exit(0)\n": ":3:1: error: --post_process: importing it raised SystemExit: 0",
    "def PostProcess(outputs):\n    exit()\n": ":2:5: error: --post_process: PostProcess on sample 0's float run "
                                              "raised SystemExit: None",
    "def PostProcess(outputs):\n    raise ValueError\n": ":2:5: error: --post_process: PostProcess on sample 0's "
                                                         "float run raised ValueError",
    # argparse in the file: its usage and reason on stderr, exit 2; held back, the reason ends the one line
    "import argparse\n\nargparse.ArgumentParser(prog='user').parse_args(['--nope'])\n": ":3:1: error: --post_process: "
    "importing it raised SystemExit: 2 after writing 'user: error: unrecognized arguments: --nope'",
    "def PostProcess(outputs):\n    return outputs['nope']\n": ":2:12: error: --post_process: PostProcess on sample "
                                                               "0's float run raised KeyError: 'nope'",
    "def PostProcess(outputs):\n    return list(outputs.values())\n": "error: --post_process: PostProcess returned a "
    "list on sample 0's float run, not a dict of numpy arrays keyed by name (TPU-MLIR compares the values of the dict "
    "it returns)",
    "def PostProcess(outputs):\n    return {}\n": "error: --post_process: PostProcess returned an empty dict on sample "
    "0's float run, not a dict of numpy arrays keyed by name (TPU-MLIR compares the values of the dict it returns)",
    "def PostProcess(outputs):\n    return {'a': [1.0]}\n": "error: --post_process: PostProcess's 'a' on sample 0's "
                                                            "float run is a list, not a numpy array",
    "def PostProcess(outputs):\n    return {'a': outputs['output0'] > 0}\n": "error: --post_process: PostProcess's "
    "'a' on sample 0's float run has dtype bool, not a real number type (a cosine compares numbers)",
    "def PostProcess(outputs):\n    return {'a': outputs['output0'][:0]}\n": "error: --post_process: PostProcess's "
    "'a' on sample 0's float run is empty (shape (0, 7, 8, 8)): a cosine needs values",
    "def PostProcess(outputs):\n    return {'a': outputs['output0'] + float('nan')}\n": "error: --post_process: PostProcess's "
    "'a' on sample 0's float run holds non-finite values (a cosine of them is not a number)",
    "import numpy as np\n\n\ndef PostProcess(outputs):\n    a = outputs['output0']\n    a[0, 0, 0, 0] = np.nan\n"
    "    return {'a': np.ma.masked_invalid(a)}\n": "error: --post_process: PostProcess's 'a' on sample 0's float run is a numpy masked array: "
    "what its mask means to a cosine is not modelled (return a plain array, e.g. np.ma.filled(a, 0))",
    # finite, but their float64 squares overflow (the cosine was NaN, which passes every threshold) or all
    # underflow to 0 (-1e-200 against 1e-200 scored 1)
    "import numpy as np\n\n\ndef PostProcess(outputs):\n    return {'a': np.full(4, 1e200)}\n": "error: "
    "--post_process: PostProcess's 'a' on sample 0's float run holds values out of the range a cosine's float64 "
    "sums square and add (|value| up to 1e+200): scale them",
    "import numpy as np\n\n\ndef PostProcess(outputs):\n    return {'a': np.full(4, np.longdouble('1e400'))}\n": "error: "
    "--post_process: PostProcess's 'a' on sample 0's float run holds values out of the range a cosine's float64 "
    "sums square and add (|value| up to 1e+400): scale them",
    "import numpy as np\n\ncalls = []\n\n\ndef PostProcess(outputs):\n    calls.append(1)\n"
    "    return {'a': np.full(4, (-1) ** len(calls) * 1e-200)}\n": "error: --post_process: PostProcess's 'a' on "
    "sample 0's float run holds values out of the range a cosine's float64 sums square and add (|value| up to "
    "1e-200): scale them",
    COUNTER + "    return {'a': outputs['output0'][..., :len(calls)]}\n": "error: --post_process: PostProcess's 'a' on "
    "sample 0 has shape [1, 7, 8, 1] on the float run but [1, 7, 8, 2] on the INT8 run: they are compared "
    "element by element",
    COUNTER + "    return {'a' * len(calls): outputs['output0']}\n": "error: --post_process: PostProcess returned "
    "['aa'] on sample 0's INT8 run but ['a'] on sample 0's float run: it must return the same names, in the same order",
}


@pytest.mark.parametrize("text", BAD, ids=range(len(BAD)))
def test_a_bad_post_process_is_one_line_and_nothing_is_written(head, tmp_path, text):
    if text is not None:
        (tmp_path / "post.py").write_text(text)
    before = set(tmp_path.iterdir())
    r = run_main("run_qtable", head / "m.mlir", "--dataset", head / "data", "--input_num", "1",
                 "--calibration_table", head / "table", "--processor", "bm1684x", "--quiet", "--post_process",
                 "post.py", "--loss_table", "loss", "-o", "qtable", cwd=tmp_path)
    message = BAD[text]
    assert (r.returncode, r.stderr.splitlines()) == (1, ["post.py" + (message if message[0] == ":" else f": {message}")]), \
        r.stderr
    assert set(tmp_path.iterdir()) == before


@pytest.mark.parametrize("command, argv, message", [
    ("run_qtable", ["--post_process", "post.txt"], "post.txt: error: --post_process: not a .py file (TPU-MLIR imports "
                                                   "it as Python)"),
    ("run_qtable", ["--post_process", "one.py", "--global_compare_layers", "xy,cls"],
     "one.py: error: --post_process: PostProcess returned 1 arrays on sample 0's float run for the 2 tensors "
     "--global_compare_layers names (TPU-MLIR weighs the i-th array by the i-th layer's weight)"),
    ("run_sensitive_layer", ["--post_process", "missing.py"], "missing.py: error: --post_process: no such file"),
    # loaded before any calibration work: this --dataset does not exist
    ("run_calibration", ["--search", "search_threshold", "--post_process", "missing.py", "--dataset", "nowhere"],
     "missing.py: error: --post_process: no such file"),
    ("run_calibration", ["--post_process", "post.py"], "error: run_calibration: --post_process needs --search "
                                                       "search_threshold (TPU-MLIR's --bc and calibration do not run it)"),
    ("run_calibration", ["--bc", "--processor", "bm1684x", "--post_process", "post.py"],
     "error: run_calibration: --post_process needs --search search_threshold (TPU-MLIR's --bc and calibration do not "
     "run it)"),
])
def test_each_tool_refuses_a_bad_post_process(head, tmp_path, command, argv, message):
    (tmp_path / "post.txt").write_text(BOXES)
    (tmp_path / "post.py").write_text(BOXES)
    (tmp_path / "one.py").write_text("def PostProcess(outputs):\n    return {'one': next(iter(outputs.values()))}\n")
    before = set(tmp_path.iterdir())
    common = ["--calibration_table", head / "table", "--processor", "bm1684x", "--quiet", "-o", "out"]
    if command == "run_calibration":
        common = ["--quiet", "-o", "out"]
    if "--dataset" not in argv:
        argv = [*argv, "--dataset", head / "data"]
    r = run_main(command, head / "m.mlir", "--input_num", "1", *argv, *common, cwd=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (1, [message]), r.stderr
    assert set(tmp_path.iterdir()) == before
