"""Sliding-window geometry shared by conv, deconv and pooling (NC* layout, pads all begins then all ends)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from tpudsl.dialects.geometry.window import auto_pads
from tpudsl.interp.kernel import Array, KernelAttrs


@dataclass(frozen=True)
class Geometry:
    """Window geometry of a conv/deconv, with every list expanded to the spatial rank."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads_begin: tuple[int, ...]
    pads_end: tuple[int, ...]
    group: int

    @staticmethod
    def of(a: KernelAttrs, filter_shape: tuple[int, ...], input_shape: tuple[int, ...] | None = None) -> Geometry:
        """The geometry of attributes `a`; `auto_pad` SAME_* needs the input shape to fix the pads."""
        kernel = tuple(a.get("kernel_shape") or filter_shape[2:])
        rank = len(kernel)
        strides = list(a.get("strides") or [1] * rank)
        dilations = list(a.get("dilations") or [1] * rank)
        pads = list(a.get("pads") or [0] * (2 * rank))
        if input_shape is not None:
            pads = auto_pads(input_shape[2:], kernel, strides, dilations, a.get("auto_pad", "NOTSET")) or pads
        return Geometry(
            kernel=kernel,
            strides=tuple(strides),
            dilations=tuple(dilations),
            pads_begin=tuple(pads[:rank]),
            pads_end=tuple(pads[rank:]),
            group=int(a.get("group", 1)),
        )

    def taps(self):
        return itertools.product(*(range(k) for k in self.kernel))


def pad_spatial(x: Array, begin: tuple[int, ...], end: tuple[int, ...], value: float = 0.0) -> Array:
    if not any(begin) and not any(end):
        return x
    # np.pad is general but slow; a filled buffer plus one interior copy does the same here.
    shape = x.shape[:2] + tuple(d + b + e for d, b, e in zip(x.shape[2:], begin, end, strict=True))
    out = np.full(shape, value, x.dtype)
    out[(slice(None), slice(None), *(slice(b, b + d) for b, d in zip(begin, x.shape[2:], strict=True)))] = x
    return out


def tap_slices(tap: tuple[int, ...], g: Geometry, out: tuple[int, ...]) -> tuple[slice, ...]:
    """Where kernel tap `tap` reads (conv) or writes (deconv) for every output position."""
    return tuple(
        slice(t * d, t * d + (o - 1) * s + 1, s)
        for t, d, o, s in zip(tap, g.dilations, out, g.strides, strict=True)
    )

