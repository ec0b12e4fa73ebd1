#!/usr/bin/env python3
"""mlir_cut without installing: cut a Top module to named tensors (see tpudsl/cli/mlir_cut.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.mlir_cut import main  # noqa: E402

main()
