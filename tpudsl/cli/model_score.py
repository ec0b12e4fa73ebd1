"""What a model's cosine with its reference is, for every tool that scores one (run_qtable,
run_sensitive_layer, run_calibration's --search search_threshold and --bc), on the module without
--add_postprocess's detection op: the outputs and the parts a Concat assembles into one, the least
of them; or, with TPU-MLIR's
`--global_compare_layers`, the weighted mean over exactly the tensors it names; with TPU-MLIR's
`--post_process`, over the arrays the user's PostProcess makes of those tensors instead
(docs/quantization.md, "Mixed precision" and "--post_process")."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue

from tpudsl.cli.compare import cosine_similarity
from tpudsl.cli.model_runner import dequantized
from tpudsl.cli.post_process import FUNCTION, PostProcess
from tpudsl.dialects.opdef import SPECS, AttrView, result_names
from tpudsl.interp.module_interpreter import run_samples
from tpudsl.ir.cut import erase_dead_ops
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import WEIGHT_OP, TopModule
from tpudsl.lowering.calibration import tensor_names

Part = tuple[slice, ...]  # an index into an output: the slice one input of a Concat fills
WHOLE: Part = (...,)  # type: ignore[assignment]
WORST = -1.0  # the least cosine: the score of a tensor whose cosine is not a number (Scoring.cosine)


def concat_parts(value: SSAValue) -> list[Part]:
    """The slices of `value` that the inputs of the top.Concat making it fill, an input that is a
    Concat's result itself split into its own inputs' slices; [] when no Concat makes `value`.
    Scored apart, a part whose values are small next to the others' (YOLOv8's class scores in
    [0, 1] beside boxes in the hundreds) is not lost in the whole's cosine, nor is the Concat's
    requantization of it (one int8 scale for every part)."""
    concat = value.owner
    if not (isinstance(concat, Operation) and concat.name == "top.Concat"):
        return []
    shapes = [tuple(operand.type.get_shape()) for operand in concat.operands]  # top.Concat's are tensors
    axis = AttrView(concat.attributes, SPECS[concat.name])["axis"] % len(shapes[0])
    parts: list[Part] = []
    start = 0
    for operand, shape in zip(concat.operands, shapes, strict=True):
        inner = concat_parts(operand) or [tuple(slice(0, n) for n in shape)]
        parts += [p[:axis] + (slice(p[axis].start + start, p[axis].stop + start),) + p[axis + 1:] for p in inner]
        start += shape[axis]
    return parts


def compare_layers(text: str, tensors: Collection[str]) -> dict[str, float]:
    """TPU-MLIR's `--global_compare_layers` (mix_precision.py's extract_global_layers): `a,b` (equal
    weights, 1/n each) or `a:0.3,b:0.7` (every layer a weight, the weights summing to 1); {} for
    ''. A name is a tensor of the module (`tensors`); an item that is a whole tensor name is not
    split at its ':' (ONNX names such as `out:0`). Anything else is an error naming it."""
    if not text.strip():
        return {}
    flag = "--global_compare_layers"
    layers: dict[str, float | None] = {}
    for item in (i.strip() for i in text.split(",")):
        name, weight = item, None
        if item not in tensors and ":" in item:
            name, _, written = (s.strip() for s in item.rpartition(":"))
            try:
                weight = float(written)
            except ValueError:
                raise TpudslError(f"{flag}: '{item}': the weight '{written}' is not a number") from None
            if not (math.isfinite(weight) and weight >= 0):
                raise TpudslError(f"{flag}: '{item}': a weight must be a finite number >= 0, not {written}")
        if name not in tensors:
            raise TpudslError(f"{flag}: '{name}' is not a tensor of the module" if name
                              else f"{flag} '{text}' has an empty layer name")
        if name in layers:
            raise TpudslError(f"{flag}: '{name}' is named twice")
        layers[name] = weight
    weights = list(layers.values())
    if all(w is None for w in weights):
        return dict.fromkeys(layers, 1 / len(layers))  # summing to 1, as given weights do
    if None in weights:  # TPU-MLIR's "global_compare_layers format error"
        bare = next(n for n, w in layers.items() if w is None)
        raise TpudslError(f"{flag}: '{bare}' has no weight while other layers have one (give every layer a weight, "
                          "or none)")
    total = math.fsum(weights)  # type: ignore[arg-type]
    if not math.isclose(total, 1.0, rel_tol=0, abs_tol=1e-9):  # TPU-MLIR's "global_compare_layers rate error"
        raise TpudslError(f"{flag}: the weights sum to {total:g}, not 1")
    return layers  # type: ignore[return-value]


@dataclass(frozen=True)
class Scoring:
    """The tensors a model is scored on and how. Without `layers`: the least, over the `parts` keys
    (the outputs) whole and each of their Concat parts, of the mean over samples of the cosine
    with the reference (the least, not a mean: a part INT8 breaks fails the model however many
    parts pass). With `layers` (--global_compare_layers): TPU-MLIR's loss, the mean over samples
    of the weighted mean of those tensors' cosines, no parts. With `post_process`
    (--post_process): the same over the arrays it returns (`compared`) in place of the outputs or
    the named tensors: the least of them, or the i-th weighted by the i-th named layer's weight
    (TPU-MLIR's layers_rate[i]); no parts (they are slices of the outputs)."""

    parts: Mapping[str, Sequence[Part]]
    layers: Mapping[str, float]
    post_process: PostProcess | None = None

    def check_lowered(self, lowered: TopModule) -> None:
        """Each named tensor is one of `lowered`'s, the INT8 module whose runs are scored: where the
        INT8 lowering drops a Relu or Clip, the op before takes its name and loses its own
        (top_to_tpu_int8's _clamp; whether it drops one depends on the calibration table)."""
        if not self.layers:  # nothing named: not a name set built at every search step
            return
        kept = {name for op in lowered.main_func().body.block.ops if op.name != WEIGHT_OP for name in result_names(op)}
        for name in self.layers:
            if name not in kept:
                raise TpudslError(f"--global_compare_layers: '{name}' is not a tensor of the lowered module (its op "
                                  "is fused into another): name the fused op's tensor")

    def compared(self, runs: Sequence[Mapping[str, np.ndarray]], which: str) -> Sequence[Mapping[str, np.ndarray]]:
        """What is compared of `runs` (each sample's scored tensors; `which`: "float" or "INT8"):
        the runs themselves, or what PostProcess returns for each (their count is checked once, on the
        float reference: `reference`)."""
        post = self.post_process
        if post is None:
            return runs
        return [post(run, f"sample {i}'s {which} run") for i, run in enumerate(runs)]

    def reference(self, runs: Sequence[Mapping[str, np.ndarray]]) -> Reference:
        """The float `runs` (as `compared` gives them) as every score reads them: with
        --post_process, its arrays in place of the tensors (the i-th weighted as the i-th layer),
        checked once to be named alike on every sample."""
        if self.post_process is None:
            return Reference(runs, self.parts, self.layers)
        names = self.post_process.check_reference(runs)  # the INT8 runs' are checked against these
        if self.layers and len(names) != len(self.layers):
            self.post_process.fail(f"{FUNCTION} returned {len(names)} arrays on sample 0's float run for the "
                                   f"{len(self.layers)} tensors --global_compare_layers names (TPU-MLIR weighs the "
                                   "i-th array by the i-th layer's weight)")
        layers = dict(zip(names, self.layers.values(), strict=True)) if self.layers else {}
        return Reference(runs, dict.fromkeys(names, ()), layers)

    def cosine(self, runs: Sequence[Mapping[str, np.ndarray]], reference: Reference) -> float:
        """The score of `runs` (as `compared` gives them) against `reference`. A tensor whose
        cosine is not a number (inf or NaN in an INT8 or F16 run, say an F16 overflow, or values
        whose float64 sums overflow) scores WORST: NaN would fail no `score < threshold` test, so
        every search would take the worst outcome for a pass (docs/quantization.md, "Mixed
        precision")."""
        def mean(name: str, part: Part) -> float:
            score = float(np.mean([cosine_similarity(r[name][part], want[name][part])
                                   for r, want in zip(runs, reference.runs, strict=True)]))
            return score if math.isfinite(score) else WORST

        if self.post_process is not None:
            self.post_process.check_alike(runs, reference.runs)
        if reference.layers:
            return math.fsum(w * mean(n, WHOLE) for n, w in reference.layers.items())  # weights summing to 1
        return min(mean(name, part) for name, parts_of in reference.parts.items() for part in [WHOLE, *parts_of])


@dataclass(frozen=True)
class Reference:
    """The float runs every score compares with (`Scoring.reference`), and what is scored of them:
    Scoring's parts and layers, or, with --post_process, its arrays' names (no parts) and the
    layers' weights by position."""

    runs: Sequence[Mapping[str, np.ndarray]]
    parts: Mapping[str, Sequence[Part]]
    layers: Mapping[str, float]


def scoring(top: TopModule, layers: str = "", post_process: PostProcess | None = None) -> Scoring:
    """How `top` (already cut to its scored part) is scored: its outputs and their Concat parts, or
    the `--global_compare_layers` text `layers`, checked against its tensors; through the
    `--post_process` file's function, if given."""
    outputs = top.returned().operands
    return Scoring({name: concat_parts(v) for name, v in zip(top.output_names(), outputs, strict=True)},
                   compare_layers(layers, set(tensor_names(top.module))), post_process)


# --add_postprocess's ops (YOLO's and SSD's): F32 in every mode, scored on their inputs
DETECTION_OPS = ("top.YoloDetection", "top.DetectionOutput")


def scored_part(top: TopModule) -> TopModule:
    """`top` without --add_postprocess's detection op: its heads (SSD's loc, conf and priors) are
    returned in its place and scored. The rows it keeps, compared by cosine, jump where a score
    crosses the threshold (a box kept or not: an all-F16 YOLOv5 scored 0.92) and say nothing of how
    close the heads are; the op itself stays F32 in every mode (docs/quantization.md, "Mixed
    precision")."""
    ret = top.returned()
    detection = [isinstance(v.owner, Operation) and v.owner.name in DETECTION_OPS for v in ret.operands]
    if not any(detection):
        return top
    ret.operands = [head for v, is_detection in zip(ret.operands, detection, strict=True)
                    for head in (v.owner.operands if is_detection else [v])]  # type: ignore[union-attr]
    erase_dead_ops(top.main_func().body.block)
    top.main_func().update_function_type()
    return top


def scoring_of(mod: TopModule, layers: str) -> Scoring:
    """`scoring` of a clone of `mod` cut to its scored part (`mod` is left as it is): what
    run_calibration checks --global_compare_layers against before calibrating and --bc scores."""
    return scoring(scored_part(mod.clone()), layers)


def dequantized_runs(top: TopModule, samples: Sequence[Mapping[str, np.ndarray]],
                     names: Collection[str] | None = None) -> list[dict[str, np.ndarray]]:
    """`top`'s runs on `samples`: every tensor (or only `names`), the quantized ones dequantized,
    as the scores compare them with Top's."""
    # imported here (~80 ms): run_calibration imports this module; only its --bc and --search run INT8 models
    from tpudsl.lowering.top_to_tpu_int8 import int8_params

    params = int8_params(top)
    return [dequantized(run if names is None else {n: run[n] for n in names}, params)
            for run in run_samples(top.module, top.weights, samples, keep_all=True)[0]]
