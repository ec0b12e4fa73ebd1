#!/usr/bin/env python3
"""tpuc-opt from a plain checkout (no `pip install`): the same entry point as the console script."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tpudsl.cli.tpuc_opt import main  # noqa: E402  (needs the repo root on sys.path first)

if __name__ == "__main__":
    main()
