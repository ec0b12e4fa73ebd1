#!/usr/bin/env python3
"""model_deploy without installing: lower a Top .mlir to Tpu and check it (see tpudsl/cli/model_deploy.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.model_deploy import main  # noqa: E402

main()
