#!/usr/bin/env python3
"""model_transform without installing: ONNX -> Top .mlir + weights (see tpudsl/cli/model_transform.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.model_transform import main  # noqa: E402

main()
