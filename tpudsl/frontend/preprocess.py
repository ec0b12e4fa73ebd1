"""Image preprocessing, as TPU-MLIR's model_transform describes it on `top.Input`.

The flags (--mean, --scale, --pixel_format, --channel_format, --resize_dims,
--keep_aspect_ratio, --keep_ratio_mode, --pad_type, --pad_value) are recorded on every 4-D
`top.Input` so that a later phase can fuse them, and are applied here to image test inputs:

    image (RGB) -> resize to resize_dims -> center crop to the model's H x W (TPU-MLIR's offsets:
      dialects/geometry/crop.py) -> channel order
      (bgr reverses RGB) -> layout (nchw or nhwc) -> (x - mean) * scale per channel -> repeated
      over the batch.

The resize is TPU-MLIR's (python/utils/preprocess.py, ImageResizeTool): a stretch, or with
--keep_aspect_ratio either a letterbox (keep_ratio_mode=letterbox: scale by the smaller ratio,
paste at the center (pad_type=center) or the top left (normal) of a canvas of pad_value) or
short_side_scale (scale by the larger ratio, center crop to resize_dims).

Pixel formats are those `top.Input` accepts: rgb, bgr and gray (3, 3 and 1 channels), rgba (4:
R, G, B, alpha, as Pillow decodes it) and the Bayer patterns gbrg, grbg, bggr, rggb: one channel
of raw sensor data. A Bayer input is recorded on `top.Input`, and its test input must be that raw
data (.npy/.npz): making it from a decoded image (mosaicing) is not modelled, so an image test
input with a Bayer format is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import tpudsl.dialects.top  # noqa: F401  (defines top.Input, whose pixel formats these are)
from tpudsl.dialects.geometry.crop import center_crop_start
from tpudsl.dialects.opdef import SPECS
from tpudsl.ir.diagnostics import TpudslError

PIXEL_FORMATS = SPECS["top.Input"].attrs["pixel_format"].choices  # every one top.Input records
BAYER_FORMATS = ("gbrg", "grbg", "bggr", "rggb")
_CHANNELS = {"gray": 1, "rgba": 4, **{f: 1 for f in BAYER_FORMATS}}  # the rest: 3
CHANNEL_FORMATS = ("nchw", "nhwc")
KEEP_RATIO_MODES = ("letterbox", "short_side_scale")
PAD_TYPES = SPECS["top.Input"].attrs["pad_type"].choices  # normal: top left, center
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".webp", ".tif", ".tiff")


@dataclass(frozen=True)
class Preprocess:
    mean: tuple[float, ...] = (0.0,)  # one value: the same for every channel
    scale: tuple[float, ...] = (1.0,)
    pixel_format: str = "bgr"  # TPU-MLIR's default: OpenCV's channel order
    channel_format: str = "nchw"
    resize_dims: tuple[int, int] | None = None  # None: the model's H x W
    keep_aspect_ratio: bool = False
    keep_ratio_mode: str = "letterbox"  # TPU-MLIR's defaults
    pad_type: str = "center"
    pad_value: int = 0  # a pixel value: the canvas is the decoded (8-bit) image's

    def __post_init__(self) -> None:
        if self.pixel_format not in PIXEL_FORMATS:
            raise TpudslError(f"--pixel_format {self.pixel_format!r} is not one of {', '.join(PIXEL_FORMATS)}")
        if self.channel_format not in CHANNEL_FORMATS:
            raise TpudslError(f"--channel_format {self.channel_format!r} is not one of {', '.join(CHANNEL_FORMATS)}")
        if self.keep_ratio_mode not in KEEP_RATIO_MODES:
            raise TpudslError(f"--keep_ratio_mode {self.keep_ratio_mode!r} is not one of {', '.join(KEEP_RATIO_MODES)}")
        if self.pad_type not in PAD_TYPES:
            raise TpudslError(f"--pad_type {self.pad_type!r} is not one of {', '.join(PAD_TYPES)}")
        if not 0 <= self.pad_value <= 255:
            raise TpudslError(f"--pad_value {self.pad_value} is not a pixel value (0 to 255)")
        for what, values in (("--mean", self.mean), ("--scale", self.scale)):
            if len(values) not in (1, self.channels):
                raise TpudslError(f"{what} has {len(values)} values; {self.pixel_format} images have {self.channels} channels")

    @property
    def channels(self) -> int:
        return _CHANNELS.get(self.pixel_format, 3)

    def input_attrs(self, input_shape: Sequence[int]) -> dict[str, Any]:
        """The `top.Input` attributes that record this preprocessing for an input of `input_shape`."""
        return {
            "do_preprocess": True,
            "pixel_format": self.pixel_format,
            "channel_format": self.channel_format,
            "resize_dims": list(self.resize_dims or self._model_hw(input_shape)),
            "keep_aspect_ratio": self.keep_aspect_ratio,
            "keep_ratio_mode": self.keep_ratio_mode,
            "pad_type": self.pad_type,
            "pad_value": self.pad_value,
            "mean": [float(v) for v in self._per_channel(self.mean)],
            "scale": [float(v) for v in self._per_channel(self.scale)],
        }

    def _per_channel(self, values: tuple[float, ...]) -> list[float]:
        return list(values) * self.channels if len(values) == 1 else list(values)

    def _model_hw(self, input_shape: Sequence[int]) -> tuple[int, int]:
        if len(input_shape) != 4:
            raise TpudslError(f"image preprocessing needs a 4-D input, the model's is {list(input_shape)}")
        return tuple(input_shape[1:3]) if self.channel_format == "nhwc" else tuple(input_shape[2:4])  # type: ignore[return-value]

    def load_image(self, path: str | Path, input_shape: Sequence[int]) -> np.ndarray:
        """The preprocessed float32 tensor of `input_shape` for the image at `path`."""
        if self.pixel_format in BAYER_FORMATS:
            raise TpudslError(f"--pixel_format {self.pixel_format}: making raw Bayer data from image '{path}' is not "
                              "modelled; give the test input as .npy or .npz")
        h, w = self._model_hw(input_shape)
        channel_axis = 3 if self.channel_format == "nhwc" else 1
        if input_shape[channel_axis] != self.channels:
            raise TpudslError(
                f"a {self.pixel_format} image has {self.channels} channel(s), the model input {list(input_shape)} "
                f"has {input_shape[channel_axis]} ({self.channel_format})"
            )
        pixels = self._resized(read_image(path, self.pixel_format), (h, w))
        if self.pixel_format == "bgr":
            pixels = pixels[:, :, ::-1]
        mean = np.asarray(self._per_channel(self.mean), np.float32)
        scale = np.asarray(self._per_channel(self.scale), np.float32)
        x = (pixels - mean) * scale  # HWC
        if self.channel_format == "nchw":
            x = x.transpose(2, 0, 1)
        return np.ascontiguousarray(np.repeat(x[None], input_shape[0], axis=0), dtype=np.float32)

    def _resized(self, pixels: np.ndarray, model_hw: tuple[int, int]) -> np.ndarray:
        rh, rw = self.resize_dims or model_hw
        ih, iw = pixels.shape[:2]
        if not self.keep_aspect_ratio:
            pixels = resize_bilinear(pixels, rh, rw)
        elif self.keep_ratio_mode == "letterbox":
            ratio = min(rh / ih, rw / iw)
            nh, nw = max(1, int(ih * ratio)), max(1, int(iw * ratio))
            top, left = ((rh - nh) // 2, (rw - nw) // 2) if self.pad_type == "center" else (0, 0)
            canvas = np.full((rh, rw, pixels.shape[2]), float(self.pad_value), np.float32)
            canvas[top : top + nh, left : left + nw] = resize_bilinear(pixels, nh, nw)
            pixels = canvas
        else:  # short_side_scale: cover resize_dims, then crop its center
            ratio = max(rh / ih, rw / iw)
            nh, nw = max(rh, int(ih * ratio)), max(rw, int(iw * ratio))
            top, left = (nh - rh) // 2, (nw - rw) // 2
            pixels = resize_bilinear(pixels, nh, nw)[top : top + rh, left : left + rw]
        h, w = model_hw
        if rh < h or rw < w:
            raise TpudslError(f"--resize_dims {rh},{rw} is smaller than the model input {h}x{w}")
        top, left = center_crop_start(rh, h), center_crop_start(rw, w)
        return pixels[top : top + h, left : left + w]


def read_image(path: str | Path, pixel_format: str) -> np.ndarray:
    """The image as float32 HWC: RGB (also for bgr, reversed later), RGBA, or one gray channel."""
    try:
        from PIL import Image
    except ImportError:
        raise TpudslError(f"reading image '{path}' needs Pillow (pip install Pillow), or give a .npy/.npz input") from None
    try:
        with Image.open(path) as img:
            pixels = np.asarray(img.convert(_PIL_MODES.get(pixel_format, "RGB")), dtype=np.float32)
    except OSError as e:
        raise TpudslError(f"cannot read image '{path}': {e}") from None
    return pixels[:, :, None] if pixels.ndim == 2 else pixels


_PIL_MODES = {"gray": "L", "rgba": "RGBA"}


def resize_bilinear(pixels: np.ndarray, h: int, w: int) -> np.ndarray:
    """HWC bilinear resize with half-pixel centers (OpenCV's INTER_LINEAR convention)."""
    ih, iw = pixels.shape[:2]
    if (ih, iw) == (h, w):
        return pixels.astype(np.float32)

    def coords(out_len: int, in_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = np.clip((np.arange(out_len) + 0.5) * in_len / out_len - 0.5, 0, in_len - 1)
        lo = np.floor(x).astype(np.int64)
        hi = np.minimum(lo + 1, in_len - 1)
        return lo, hi, (x - lo).astype(np.float32)

    y0, y1, fy = coords(h, ih)
    x0, x1, fx = coords(w, iw)
    rows = pixels[y0] * (1 - fy)[:, None, None] + pixels[y1] * fy[:, None, None]
    return (rows[:, x0] * (1 - fx)[None, :, None] + rows[:, x1] * fx[None, :, None]).astype(np.float32)


def is_image(path: str | Path) -> bool:
    return Path(path).suffix.lower() in IMAGE_SUFFIXES
