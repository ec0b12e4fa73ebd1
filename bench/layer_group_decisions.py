"""The group decisions (`describe_groups`: each group's ops, nsecs/hsecs/csecs/wsecs, lmem_bytes) and the
--layer-group CPU time for bench/layer_group.py's models (ResNet-18- and MobileNetV2-shaped, F32 and
INT8, compiled as that bench compiles them), so that two checkouts can be compared: a change to the
search that must not move any group shows an empty diff of the two outputs.

    PYTHONPATH=CHECKOUT .venv/bin/python bench/layer_group_decisions.py [--size 224] [--chip bm1684x] > X.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from layer_group import MODELS  # noqa: E402
from tests.backend_support import int8_module, lowered  # noqa: E402
from tpudsl.backend.layer_group import describe_groups  # noqa: E402
from tpudsl.dialects import make_context  # noqa: E402
from tpudsl.passes import pass_class  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--chip", default="bm1684x")
    args = ap.parse_args()
    for (name, build), mode in ((m, q) for q in ("F32", "INT8") for m in MODELS.items()):
        shape = (1, 3, args.size, args.size)
        with tempfile.TemporaryDirectory() as d:
            top = lowered(build(args.size), mode, args.chip) if mode == "F32" else \
                int8_module(build(args.size), shape, Path(d), args.chip)
        ctx = make_context()
        for step in ("weight-reorder", "address-assign"):
            pass_class(step)().apply(ctx, top.module)
        t = time.process_time()
        pass_class("layer-group")(opt=2).apply(ctx, top.module)
        print(f"== {name} {mode}: --layer-group {time.process_time() - t:.2f} s CPU", file=sys.stderr)
        print(f"== {name} {mode}\n{describe_groups(top.module)}")


if __name__ == "__main__":
    main()
