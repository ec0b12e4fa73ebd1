"""--fuse-preprocess: the preprocessing recorded on `top.Input` becomes ops of the model (TPU-MLIR's FusePreprocess).

    tpuc-opt x.mlir --fuse-preprocess="mode=INT8 customization_format=BGR_PLANAR align=False"

model_transform records the preprocessing (mean, scale, pixel_format, channel_format, resize_dims)
on each 4-D `top.Input`; this pass makes such an input take the raw 8-bit image instead, in the
customization format's channel order and layout, and computes the model's input from it:

    %x_raw = top.Input(%arg0)        uint8 raw data, the customization format's layout, resize_dims' H x W
    [top.Yuv2rgbFormula x_preprocess_yuv2rgb]  YUV formats: 4:2:0 frames [N, H * 3 / 2, W] to planar pixels
                                     in the model's order (TPU-MLIR's op and attributes, _601_limited)
    [top.Permute  x_preprocess_permute]      packed (nhwc) <-> planar (nchw), when they differ
    [top.Slice    x_preprocess_slice]        the center crop to the input's H x W, when resize_dims is larger
    [top.Slice x3 x_preprocess_c2/c1/c0 (of one top.None), top.Concat x_preprocess_<pixel_format>]
                                     the channels reversed, when rgb <-> bgr differ
    [top.Slice    x_preprocess_<pixel_format>]  the alpha plane dropped (RGBA_PLANAR for an rgb model)
    [top.Cast     x_preprocess_f32]  to f32 (not in INT8: the Sub reads the uint8 values)
    top.Sub       x_preprocess_sub   x - mean (weight x_preprocess_mean, one value per channel)
    top.Mul       x                  (x - mean) * scale (weight x_preprocess_scale)

The raw input is a `ui8` argument read by a `top.Input` of type `!quant.uniform<u8:f32, 1.0>` (stored
byte = pixel value), as TPU-MLIR types them;
it is named `<input>_raw` (TPU-MLIR's rule) and records the customization format (pixel_format,
channel_format, customization_format; mean 0 and scale 1, as TPU-MLIR resets them). The last op
keeps the input's name, so every tensor the rest of the model computes keeps its name and the
reference .npz of the unfused model compares with the fused one by name (TPU-MLIR names it
`<input>_preprocess`). In INT8 (after --import-calibration-table) the moves keep the uint8 values
exactly, the Sub gets the exact range of x - mean over pixels 0..255, and the Mul keeps the input's
calibrated range.

An input without do_preprocess, or already fused (customization_format set), is left as it is
(TPU-MLIR gives it an f32 argument: it has one already). Not modelled, each an error naming it:
resize_dims smaller than the input's H x W, the raw Bayer customization formats, align=true (CV18xx
aligned rows), a customization format whose colours do not hold the model's pixel_format's (gray <->
rgb/bgr), YUV for a model that is not rgb or bgr or of an odd size. docs/tpuc-opt.md has the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, IntegerType, ModuleOp, NoneType, Signedness, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tpudsl.dialects.geometry.crop import center_crop_start
from tpudsl.dialects.opdef import AttrView, SPECS, create, create_shaped, loc_name
from tpudsl.dialects.quant import CalibratedQuantizedType, UniformQuantizedType
from tpudsl.ir.diagnostics import TpudslError, check_option
from tpudsl.ir.module import TopModule, top_module_of

PASS = "fuse-preprocess"
# TPU-MLIR's customization formats tpudsl models: (colour order, layout) of the raw data.
CUSTOMIZATION_FORMATS = {
    "RGB_PLANAR": ("rgb", "nchw"), "RGB_PACKED": ("rgb", "nhwc"),
    "BGR_PLANAR": ("bgr", "nchw"), "BGR_PACKED": ("bgr", "nhwc"),
    "GRAYSCALE": ("gray", "nchw"), "RGBA_PLANAR": ("rgba", "nchw"),
}
# The channels of each colour order, in order: the model's are picked from the raw data's.
CHANNELS = {"rgb": "RGB", "bgr": "BGR", "rgba": "RGBA", "gray": "L"}
# The 4:2:0 YUV formats: frames [N, H * 3 / 2, W], converted by top.Yuv2rgbFormula (its src_format, as
# TPU-MLIR's Preprocess lowering gives it; formula _601_limited, uint8 pixels) to the model's rgb or bgr.
YUV_FORMATS = {"YUV420_PLANAR": 0, "YUV_NV12": 2, "YUV_NV21": 3}
_DST_FORMAT = {"rgb": 4, "bgr": 5}
MODES = ("F32", "F16", "BF16", "INT8")
# The permutation taking one layout to the other.
_PERMUTE = {("nhwc", "nchw"): [0, 3, 1, 2], ("nchw", "nhwc"): [0, 2, 3, 1]}
PIXEL_MAX = 255.0


def raw_types(shape: list[int]) -> tuple[TensorType, TensorType]:
    """The raw input's argument type (bytes) and its top.Input's (stored byte = pixel value: scale 1, zero point 0)."""
    return (TensorType(IntegerType(8, Signedness.UNSIGNED), shape),
            TensorType(UniformQuantizedType.make("u8", Float32Type(), [1.0], [0]), shape))


def default_customization_format(pixel_format: str, channel_format: str) -> str | None:
    """The customization format of the model's own preprocessing (TPU-MLIR's getCustomFormat), if modelled."""
    return next((f for f, v in CUSTOMIZATION_FORMATS.items() if v == (pixel_format, channel_format)
                 or (pixel_format == "gray" and v[0] == "gray")), None)


@dataclass(frozen=True)
class FusePreprocessPass(ModulePass):
    """Make each preprocessed top.Input take raw uint8 data and compute its preprocessing in the graph."""

    name = "fuse-preprocess"

    mode: str = "F32"
    customization_format: str = ""  # empty: the model's own pixel_format and channel_format
    align: bool = False

    def check_options(self) -> None:
        check_option(PASS, "mode", self.mode.upper(), MODES, "the precisions tpudsl lowers to")
        check_option(PASS, "align", self.align, (False,),
                     "aligned input rows are CV18xx's (cvimodel); tpudsl deploys bm1684x .bmodel files")
        if self.customization_format:
            check_option(PASS, "customization_format", self.customization_format,
                         (*CUSTOMIZATION_FORMATS, *YUV_FORMATS),
                         "raw Bayer inputs need depacking inside the model, which tpudsl does not model")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        mode = self.mode.upper()
        assigned = op.attributes.get("module.mode")
        if assigned is not None and getattr(assigned, "data", None) != mode:
            raise TpudslError(f"{PASS}: mode={mode} differs from the module's mode {assigned.data} (processor-assign)")
        top = top_module_of(op)
        for func in op.walk():
            if not isinstance(func, FuncOp) or func.is_declaration:
                continue
            for inp in [o for o in func.body.block.ops if o.name == "top.Input"]:
                a = AttrView(inp.attributes, SPECS["top.Input"])
                if a["do_preprocess"] and a.get("customization_format") is None:
                    _Fuse(top, inp, a, self.customization_format, mode).run()
            func.update_function_type()


class _Fuse:
    """The rewrite of one preprocessed top.Input."""

    def __init__(self, top: TopModule | None, inp: Operation, a: AttrView, fmt: str, mode: str) -> None:
        self.top, self.inp, self.mode = top, inp, mode
        self.name = loc_name(inp)
        self.model_type = inp.results[0].type
        shape = list(self.model_type.get_shape())  # type: ignore[attr-defined]
        self.pixel = a.get("pixel_format") or "bgr"  # model_transform's defaults (TPU-MLIR's)
        self.layout = a.get("channel_format") or "nchw"
        self.fmt = fmt or default_customization_format(self.pixel, self.layout) or ""
        self.yuv = self.fmt in YUV_FORMATS
        if self.yuv and self.pixel not in _DST_FORMAT:
            raise self.error(f"customization_format {self.fmt} gives rgb or bgr pixels, the model's pixel_format "
                             f"is {self.pixel}")
        if self.fmt not in CUSTOMIZATION_FORMATS and not self.yuv:
            raise self.error(f"pixel_format {self.pixel} has no customization format tpudsl models "
                             f"({', '.join(CUSTOMIZATION_FORMATS)})")
        # The colour order and layout of the raw data, YUV's once converted (the model's order, planar).
        self.raw_color, self.raw_layout = (self.pixel, "nchw") if self.yuv else CUSTOMIZATION_FORMATS[self.fmt]
        if len(shape) != 4:
            raise self.error(f"preprocessing needs a 4-D input, it is {shape}")
        self.channel_axis = 1 if self.layout == "nchw" else 3
        n, c, h, w = shape if self.layout == "nchw" else (shape[0], shape[3], shape[1], shape[2])
        model_channels, raw_channels = CHANNELS.get(self.pixel), CHANNELS[self.raw_color]
        if model_channels is None or not set(model_channels) <= set(raw_channels):
            raise self.error(f"customization_format {self.fmt} ({self.raw_color}) does not give the model's "
                             f"pixel_format {self.pixel}: only channels the raw data holds are picked "
                             "(rgb <-> bgr reordered, rgba's alpha dropped)")
        # The raw channel each model channel reads, in the model's order.
        self.pick = [raw_channels.index(ch) for ch in model_channels]
        self.resize = list(a.get("resize_dims") or [h, w])
        if len(self.resize) != 2 or self.resize[0] < h or self.resize[1] < w:
            raise self.error(f"resize_dims {self.resize} are not at least the input's {h}x{w}: TPU-MLIR crops "
                             "the center of a larger image; a smaller one (a resize inside the model) is not modelled")
        self.c, self.hw, self.raw_channels = c, [h, w], len(raw_channels)
        rc, (rh, rw) = self.raw_channels, self.resize
        if self.yuv and (rh % 2 or rw % 2):
            raise self.error(f"customization_format {self.fmt}: the image's {rh}x{rw} (resize_dims) is not even: "
                             "each chroma sample of 4:2:0 YUV covers 2 x 2 pixels")
        self.raw_shape = ([n, rh * 3 // 2, rw] if self.yuv  # 4:2:0 frames
                          else [n, rc, rh, rw] if self.raw_layout == "nchw" else [n, rh, rw, rc])
        self.mean = self._per_channel(a.get("mean"), 0.0, "mean")
        self.scale = self._per_channel(a.get("scale"), 1.0, "scale")
        self.none: Operation | None = None  # the top.None of the Slices' absent operands, made by the first

    def error(self, message: str) -> TpudslError:
        return TpudslError(f"{PASS}: top.Input \"{self.name}\": {message}")

    def _per_channel(self, values, default: float, what: str) -> np.ndarray:
        values = [default] if not values else list(values)
        if len(values) == 1:
            values = values * self.c
        if len(values) != self.c:
            raise self.error(f"{what} has {len(values)} values for {self.c} channels")
        return np.asarray(values, np.float32)

    def run(self) -> None:
        inp = self.inp
        calibrated = isinstance(self.model_type.element_type, CalibratedQuantizedType)  # type: ignore[attr-defined]
        if self.mode == "INT8" and not calibrated:
            raise self.error("mode=INT8 needs the calibrated module: run --import-calibration-table first")
        if self.top is None:
            raise self.error("the mean and scale become weights: the module needs its weight file (module.weight_file)")
        top = self.top
        arg = inp.operands[0]
        assert isinstance(arg, BlockArgument)
        arg_type, raw_type = raw_types(self.raw_shape)
        new_arg = Rewriter.replace_value_with_new_type(arg, arg_type)
        new_arg.location = getattr(arg, "location", None) or new_arg.location  # names survive: the argument's too
        raw = create("top.Input", [new_arg], [raw_type], loc=f"{self.name}_raw", attrs={
            # TPU-MLIR records bgr for the YUV formats
            "pixel_format": "bgr" if self.yuv else self.raw_color, "channel_format": self.raw_layout,
            "customization_format": self.fmt,
            "mean": [0.0] * self.raw_channels, "scale": [1.0] * self.raw_channels})
        for key, attr in inp.attributes.items():  # the rest of the recorded preprocessing stays
            raw.attributes.setdefault(key, attr)
        self.at = InsertPoint.after(inp)
        self._insert(raw)
        value = raw.results[0]
        if self.yuv:
            value = self._op("top.Yuv2rgbFormula", [value], {
                "src_format": YUV_FORMATS[self.fmt], "dst_format": _DST_FORMAT[self.pixel], "image_format": "UINT8",
                "formula_mode": "_601_limited", "round_mode": "HalfAwayFromZero"}, "yuv2rgb")
        if self.raw_layout != self.layout:
            value = self._op("top.Permute", [value], {"order": _PERMUTE[(self.raw_layout, self.layout)]}, "permute")
        if self.resize != self.hw:
            value = self._center_crop(value)
        if self.pick != list(range(self.raw_channels)):
            value = self._picked_channels(value)
        if self.mode != "INT8":
            value = self._op("top.Cast", [value], {}, "f32", Float32Type())
        bcast = [1, self.c, 1, 1] if self.layout == "nchw" else [1, 1, 1, self.c]
        mean = top.add_weight(f"{self.name}_preprocess_mean", self.mean.reshape(bcast), before=inp)
        scale = top.add_weight(f"{self.name}_preprocess_scale", self.scale.reshape(bcast), before=inp)
        lo, hi = float((0.0 - self.mean).min()), float((PIXEL_MAX - self.mean).max())
        centered_type = CalibratedQuantizedType.make(Float32Type(), lo, hi) if calibrated else Float32Type()
        centered = self._op("top.Sub", [value, mean.results[0]], {}, "sub", centered_type)
        out = create("top.Mul", [centered, scale.results[0]], [self.model_type], loc=self.name)
        self._insert(out)
        inp.results[0].replace_all_uses_with(out.results[0])
        Rewriter.erase_op(inp)

    def _insert(self, op: Operation) -> None:
        Rewriter.insert_op(op, self.at)
        self.at = InsertPoint.after(op)

    def _op(self, name: str, operands: list[SSAValue], attrs: dict, suffix: str,
            element: Attribute | None = None) -> SSAValue:
        """Op `name` named `<input>_preprocess_<suffix>`, of `element` (the first operand's when None), its
        result shape the one its shape rule gives (opdef.create_shaped)."""
        element = element or operands[0].type.element_type  # type: ignore[attr-defined]
        op = create_shaped(name, operands, element, attrs, f"{self.name}_preprocess_{suffix}")
        self._insert(op)
        return op.results[0]

    def _slice(self, value: SSAValue, ranges: dict[int, tuple[int, int]], suffix: str) -> SSAValue:
        """A top.Slice keeping [start, stop) of each axis in `ranges`, all of the others."""
        shape = list(value.type.get_shape())  # type: ignore[attr-defined]
        offset, ends = [0] * len(shape), list(shape)
        for axis, (start, stop) in ranges.items():
            offset[axis], ends[axis] = start, stop
        if self.none is None:
            self.none = create("top.None", [], [NoneType()], loc=f"{self.name}_preprocess_none")
            self._insert(self.none)
        return self._op("top.Slice", [value, *[self.none.results[0]] * 3],
                        {"offset": offset, "ends": ends, "steps": [1] * len(shape)}, suffix)

    def _center_crop(self, value: SSAValue) -> SSAValue:
        """The input's H x W from the middle of resize_dims' (TPU-MLIR's offsets, dialects/geometry/crop.py)."""
        h_axis = 2 if self.layout == "nchw" else 1
        ranges = {}
        for axis, resized, size in zip((h_axis, h_axis + 1), self.resize, self.hw):
            start = center_crop_start(resized, size)
            ranges[axis] = (start, start + size)
        return self._slice(value, ranges, "slice")

    def _picked_channels(self, value: SSAValue) -> SSAValue:
        """The model's channels from the raw ones: one Slice when they are a run in order (rgba -> rgb),
        else one Slice each and a Concat (rgb <-> bgr: ops every level has)."""
        ax, first = self.channel_axis, self.pick[0]
        if self.pick == list(range(first, first + len(self.pick))):
            return self._slice(value, {ax: (first, first + len(self.pick))}, self.pixel)
        parts = [self._slice(value, {ax: (k, k + 1)}, f"c{k}") for k in self.pick]
        return self._op("top.Concat", parts, {"axis": ax}, self.pixel)
