#!/usr/bin/env python3
"""run_calibration without installing: a calibration table from sample inputs (see tpudsl/cli/run_calibration.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.run_calibration import main  # noqa: E402

main()
