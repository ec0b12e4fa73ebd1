"""The center crop of an image resized larger than the model input (TPU-MLIR's rule).

TPU-MLIR's preprocessing (python/utils/preprocess.py, `__center_crop`) and its fused Slice
(lib/Conversion/TopToTpu/BM1684X/Preprocess.cpp, `insertSliceOp`) both start the crop at
`resized // 2 - size // 2`, which is not `(resized - size) // 2` when the resized size is even and
the model's odd (8 -> 5 starts at 2, not 1). The frontend's image test inputs and
`--fuse-preprocess` both use this function, so the fused Slice crops what the reference cropped."""

from __future__ import annotations


def center_crop_start(resized: int, size: int) -> int:
    """The first row (column) of the `size` rows (columns) kept of `resized` ones."""
    return resized // 2 - size // 2
