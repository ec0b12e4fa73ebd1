"""Sliding-window geometry of Conv, Deconv and the pools, per spatial axis (ONNX's and
TPU-MLIR's rules). Pads are `[all begins, all ends]` as in the dialect.

The frontend resolves ONNX auto_pad with these rules, the shape rules compute result sizes with
them and the kernels size their outputs with them, so the three can never disagree."""

from __future__ import annotations

from collections.abc import Sequence

AUTO_PAD_MODES = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def split_pad(total: int, upper: bool) -> tuple[int, int]:
    """(begin, end) of `total` padding: the odd pixel goes at the end when `upper`
    (SAME_UPPER), else at the beginning (SAME_LOWER)."""
    small, big = total // 2, total - total // 2
    return (small, big) if upper else (big, small)


def auto_pads(
    sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int], mode: str
) -> list[int] | None:
    """ONNX auto_pad as explicit pads; None for NOTSET (or no auto_pad), where `pads` rules.

    SAME_* pads just enough that out = ceil(in / stride). Raises ValueError on another mode."""
    if mode in ("", "NOTSET"):
        return None
    if mode == "VALID":
        return [0] * (2 * len(kernel))
    if mode not in AUTO_PAD_MODES:
        raise ValueError(f"auto_pad {mode!r} is not one of {', '.join(AUTO_PAD_MODES)}")
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        total = max(0, (-(-size // s) - 1) * s + d * (k - 1) + 1 - size)
        begin, end = split_pad(total, mode == "SAME_UPPER")
        begins.append(begin)
        ends.append(end)
    return begins + ends


def window_out_size(size: int, k: int, s: int, d: int, pb: int, pe: int, ceil_mode: bool = False) -> int:
    """How many windows of `k` taps `d` apart, `s` apart, fit in the padded axis; 0 when not
    even one fits (the caller reports it).

    ceil_mode counts a last, partial window, unless it would start in the end padding: the last
    window must start inside the input or its begin padding (ONNX since opset 19, PyTorch,
    onnxruntime)."""
    span = size + pb + pe - d * (k - 1) - 1
    if span < 0:
        return 0
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + pb:
        out -= 1
    return out


def padding_only_window(size: int, k: int, s: int, d: int, pb: int, out: int) -> int | None:
    """The first of `out` windows whose dilated taps all fall in the padding, or None. Only
    dilation makes one (with pads smaller than the kernel); what it pools is not defined
    (onnxruntime gives 0 or -FLT_MAX, onnx's reference NaN), so pools reject it."""
    for o in range(out):
        start = o * s - pb
        first = max(0, -(start // d))  # ceil(-start / d): the first tap at or after position 0
        if not (first < k and start + first * d < size):
            return o
    return None


def ceil_overhang(size: int, k: int, s: int, d: int, pb: int, pe: int, out: int) -> int:
    """How far `out` windows reach past the end padding (only ceil_mode's last window does)."""
    return max(0, (out - 1) * s + d * (k - 1) + 1 - (size + pb + pe))


def ceil_overhangs(sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
                   pads: Sequence[int], outs: Sequence[int]) -> list[int]:
    """`ceil_overhang` of each spatial axis, for `outs` windows per axis."""
    rank = len(sizes)
    return [ceil_overhang(sizes[i], kernel[i], strides[i], dilations[i], pads[i], pads[rank + i], outs[i])
            for i in range(rank)]


def grown_end_pads(pads: Sequence[int], overhang: Sequence[int]) -> list[int]:
    """Pads whose end pads hold the last window's `overhang` per axis, so that the floor rule
    counts the ceil rule's windows (`ceil_mode_pads` undoes it)."""
    rank = len(overhang)
    return [*pads[:rank], *(p + o for p, o in zip(pads[rank:], overhang, strict=True))]


def ceil_mode_pads(pads: Sequence[int], overhang: Sequence[int]) -> list[int]:
    """The own pads of the ceil-mode pool that a floor-rule pool stands for, whose end pads hold
    the last window's `overhang` per axis (tpu.Pool2D's ceil_overhang): each end pad less it."""
    rank = len(overhang)
    return [*pads[:rank], *(p - o for p, o in zip(pads[rank:], overhang, strict=True))]


def transposed_out_size(size: int, k: int, s: int, d: int, pb: int, pe: int, output_padding: int) -> int:
    """Output size of a transposed convolution (Deconv, ONNX ConvTranspose) along one axis."""
    return (size - 1) * s + d * (k - 1) + 1 - pb - pe + output_padding
