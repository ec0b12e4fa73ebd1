"""run_calibration --search search_threshold: TPU-MLIR's SearchThreshold
(python/calibration/search_threshold.py): one table per threshold method from the same statistics
(the kld one tuned when --tune_num asks, as TPU-MLIR tunes only its KL table), each deployed whole
in symmetric INT8 as model_deploy lowers it, scored by the model's output cosine with Top on the
first --inference_num samples; the best method's table is the one written (docs/quantization.md,
"Threshold method search")."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from tpudsl.cli.post_process import PostProcess
from tpudsl.cli.qtable_search import Int8Search
from tpudsl.lowering.calibration_table import TableEntry, as_written

# TPU-MLIR's quantize_method_list of the search, in its order: KL, MAX, Percentile9999, MSE.
SEARCHED = ("kld", "minmax", "percentile9999", "mse")


def best_method(mlir: str, tables: Mapping[str, Mapping[str, TableEntry]], chip: str,
                samples: list[dict[str, np.ndarray]], progress: Callable[[str], None],
                compare_layers: str = "", post_process: PostProcess | None = None) -> tuple[str, dict[str, float]]:
    """(the method whose table's INT8 model is closest to Top, every method's cosine); `tables`
    holds each method's entries, scored as the table file holds them. Equal cosines: the first
    method (TPU-MLIR's max over its dict). `compare_layers`: --global_compare_layers;
    `post_process`: --post_process's function (TPU-MLIR's SearchThreshold scores through it)."""
    written = {m: as_written(t) for m, t in tables.items()}
    search = Int8Search(mlir, written[next(iter(written))], chip, samples, asymmetric=False,
                          compare_layers=compare_layers, post_process=post_process)
    cosines: dict[str, float] = {}
    for m, table in written.items():
        cosines[m] = search.cosine({}, table)
        progress(f"{m}: INT8 output cosine {cosines[m]:.6f} on {len(samples)} samples")
    best = max(cosines, key=cosines.__getitem__)
    return best, cosines
