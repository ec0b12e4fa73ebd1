"""Shared geometry of the dialects, written once and used by the frontend, the shape rules and
the interpreter's kernels: windows (SAME auto_pad, output size with dilation and ceil_mode) in
`window.py`, Resize coordinate transforms in `resize.py` (its mode names and output length, plain
Python, in `resize_modes.py`), the reordered Conv filter layout (the
weight-reorder pass, the Tpu shape rule and interpreter) in `conv_filter.py`, the center crop of a
preprocessed image (the frontend and --fuse-preprocess) in `crop.py`, YOLO's heads in `yolo.py`,
SSD's inputs and rows in `ssd.py`, a Permute's 4-D fold and the single-dim moves a wider one splits
into (the backend's slicing and the lowering) in `permute.py`, BatchNorm's statistics as one
affine map (the interpreter, --fuse-conv-bn and the lowering) in `batch_norm.py`.

The cmodel is checked against the interpreter, so it writes its own arithmetic: it imports only
layout constants from here (an SSD row's width, YOLO's head counts, the cubic coefficient).
"""
