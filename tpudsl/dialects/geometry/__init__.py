"""Shared geometry of the dialects, written once and used by the frontend, the shape rules and
the interpreter's kernels: windows (SAME auto_pad, output size with dilation and ceil_mode) in
`window.py`, Resize coordinate transforms in `resize.py`, the reordered Conv filter layout (the
weight-reorder pass, the Tpu shape rule and interpreter) in `conv_filter.py`, the center crop of a
preprocessed image (the frontend and --fuse-preprocess) in `crop.py`.

The cmodel is the one exception: it is checked against the interpreter, so it writes its own
arithmetic and does not import this package.
"""
