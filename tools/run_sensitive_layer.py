#!/usr/bin/env python3
"""run_sensitive_layer without installing: the layers INT8 hurts most, each with its best threshold method (see tpudsl/cli/run_sensitive_layer.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.run_sensitive_layer import main  # noqa: E402

main()
