"""The one table of Top kernels, keyed by op name ("top.Conv"), merged from the kernel modules.

A Tpu table (`tpu.*` names) will be merged the same way and handed to ModuleInterpreter."""

from __future__ import annotations

from collections.abc import Mapping

from tpudsl.interp import (
    kernels_detection,
    kernels_elementwise,
    kernels_grid,
    kernels_image,
    kernels_index,
    kernels_interp,
    kernels_nn,
    kernels_norm,
    kernels_pool,
    kernels_reduce,
    kernels_rnn,
    kernels_shape,
    kernels_ssd,
)
from tpudsl.interp.kernel import Kernel


def merge(*tables: Mapping[str, Kernel]) -> dict[str, Kernel]:
    """Union of kernel tables; an op defined in two modules is a mistake, not an override."""
    merged: dict[str, Kernel] = {}
    for table in tables:
        twice = merged.keys() & table.keys()
        if twice:
            raise ValueError(f"kernels defined twice: {sorted(twice)}")
        merged.update(table)
    return merged


KERNELS: dict[str, Kernel] = merge(
    kernels_elementwise.KERNELS,
    kernels_nn.KERNELS,
    kernels_index.KERNELS,
    kernels_pool.KERNELS,
    kernels_norm.KERNELS,
    kernels_reduce.KERNELS,
    kernels_shape.KERNELS,
    kernels_interp.KERNELS,
    kernels_detection.KERNELS,
    kernels_ssd.KERNELS,
    kernels_image.KERNELS,
    kernels_rnn.KERNELS,
    kernels_grid.KERNELS,
)
