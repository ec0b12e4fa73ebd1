"""model_deploy --fuse_preprocess end to end: the .bmodel takes the raw uint8 image and gives what the unfused
model gives on the preprocessed float input.

The preprocessing here is written out in numpy from its definition (model_transform's --mean/--scale/--pixel_format
rgb: the image's RGB channels, planar, (x - mean) * scale per channel), not taken from tpudsl; the raw data is the
same image in the customization format's order (BGR) and layout (planar, packed). The means and scales differ per
channel, so a channel order mixed up anywhere changes every output.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from cli_support import run_main
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType

from tests.backend_support import assert_dump_equal
from tests.models.builder import GraphBuilder
from tpudsl.cli import model_deploy, model_runner, model_transform
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module

MEAN = np.array([123.675, 116.28, 103.53], np.float32)
SCALE = np.array([0.017125, 0.017507, 0.017429], np.float32)
# An RGB HWC image -> the raw data of each customization format (written from the format's name); RGBA_PLANAR
# gets an alpha plane of other values, which the model must not read.
RAW = {
    "BGR_PLANAR": lambda img: img[..., ::-1].transpose(0, 3, 1, 2),
    "BGR_PACKED": lambda img: img[..., ::-1],
    "RGB_PLANAR": lambda img: img.transpose(0, 3, 1, 2),
    "RGBA_PLANAR": lambda img: np.concatenate([img, 255 - img[..., :1]], axis=3).transpose(0, 3, 1, 2),
}
# resize_dims larger than the 8x8 input: the raw image is this big and the model crops its center.
RESIZED = (11, 10)


def crop_start(resized: int, size: int) -> int:
    """TPU-MLIR's first kept row of a center crop (preprocess.py's __center_crop, Preprocess.cpp's Slice)."""
    return resized // 2 - size // 2


def embedded(img: np.ndarray, rng: np.random.Generator, resized: tuple[int, int]) -> np.ndarray:
    """A random image of `resized` H x W whose center crop (TPU-MLIR's offsets) is `img`."""
    big = rng.integers(0, 256, (img.shape[0], *resized, img.shape[3]), dtype=np.uint8)
    top, left = crop_start(resized[0], img.shape[1]), crop_start(resized[1], img.shape[2])
    big[:, top:top + img.shape[1], left:left + img.shape[2]] = img
    return big


def preprocessed(img: np.ndarray) -> np.ndarray:
    """The model's float input for an RGB HWC uint8 image (batch first)."""
    x = img.transpose(0, 3, 1, 2).astype(np.float32)
    return (x - MEAN.reshape(1, 3, 1, 1)) * SCALE.reshape(1, 3, 1, 1)


def images(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], tuple[np.ndarray, ...]]:
    """n RGB NHWC 8x8 images, BT.601 of random 4:2:0 frames, and the frames' planes y [n, 8, 8], u, v [n, 4, 4]."""
    y = rng.integers(0, 256, (n, 8, 8))
    u, v = rng.integers(0, 256, (2, n, 4, 4))
    rgb = rgb_image(y, u, v)
    return [rgb[i:i + 1] for i in range(n)], (y, u, v)


def rgb_image(y: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The uint8 RGB NHWC image BT.601 (limited range, below) makes of 4:2:0 planes."""
    rgb = bt601_limited(y, upsampled(u), upsampled(v))
    return np.stack([rgb[ch] for ch in "RGB"], axis=-1).astype(np.uint8)


def small_net() -> onnx.ModelProto:
    g = GraphBuilder("pre", seed=5)
    x = g.input("image", [1, 3, 8, 8])
    y = g.relu(g.conv(x, "conv1", 3, 8, 3), "relu1")
    g.output(g.conv(y, "out", 8, 4, 1))
    return g.model()


@pytest.fixture(scope="module")
def transformed(tmp_path_factory):
    """model_transform with the preprocessing recorded, its reference on the preprocessed image, and a
    calibration table from other preprocessed images."""
    d = tmp_path_factory.mktemp("fuse")
    onnx.save(small_net(), d / "pre.onnx")
    rng = np.random.default_rng(7)
    # The test image is what BT.601 (written below) makes of a 4:2:0 frame, so that the YUV cases feed the frame
    # and compare with the same reference; the frame holds one of G's exact rounding ties. The calibration
    # samples are such images too (BT.601 of random frames: many pixels clipped to 0 or 255).
    (img, *samples), planes = images(rng, 9)
    y, u, v = planes
    y[0, 2:4, 4:6], u[0, 1, 2], v[0, 1, 2] = 5, 217, 22  # G = 38.5 exactly: 39
    img = rgb_image(y[:1], u[:1], v[:1])
    assert img[0, 2, 4, 1] == 39
    np.savez(d / "pre_in.npz", image=preprocessed(img))
    model_transform.run(["--model_name", "pre", "--model_def", str(d / "pre.onnx"), "--mlir", str(d / "pre.mlir"),
                         "--mean", ",".join(map(str, MEAN)), "--scale", ",".join(map(str, SCALE)),
                         "--pixel_format", "rgb", "--test_input", str(d / "pre_in.npz"),
                         "--test_result", str(d / "pre_top_outputs.npz")])
    (d / "ds").mkdir()
    for i, sample in enumerate(samples):
        np.savez(d / "ds" / f"{i}.npz", image=preprocessed(sample))
    r = run_main("run_calibration", d / "pre.mlir", "--dataset", d / "ds", "--input_num", "8", "--quiet",
                 "-o", d / "pre_cali_table")
    assert r.returncode == 0, r.stderr
    # The same model recording a larger resize (its tensor names, so the same reference and calibration).
    model_transform.run(["--model_name", "pre", "--model_def", str(d / "pre.onnx"), "--mlir", str(d / "pre_resized.mlir"),
                         "--mean", ",".join(map(str, MEAN)), "--scale", ",".join(map(str, SCALE)),
                         "--pixel_format", "rgb", "--resize_dims", ",".join(map(str, RESIZED))])
    return d, img, (y[:1], u[:1], v[:1])


def run(d, model: str, raw: str, out: str, *flags: str) -> dict[str, np.ndarray]:
    model_runner.run(["--input", str(d / raw), "--model", str(d / model), "--output", str(d / out), *flags])
    return dict(np.load(d / out))


@pytest.mark.parametrize(("mode", "fmt", "resized"), [
    ("F32", "BGR_PLANAR", None), ("INT8", "BGR_PLANAR", None), ("F32", "BGR_PACKED", None),
    ("INT8", "BGR_PACKED", None), ("F32", "RGBA_PLANAR", None), ("INT8", "RGBA_PLANAR", None),
    ("F32", "BGR_PACKED", RESIZED), ("INT8", "RGB_PLANAR", RESIZED),
])
def test_bmodel_on_raw_image_gives_the_unfused_models_outputs(transformed, mode, fmt, resized):
    d, img, _ = transformed
    image = img if resized is None else embedded(img, np.random.default_rng(3), resized)
    raw = f"raw_{fmt}_{resized is not None}.npz"
    np.savez(d / raw, image_raw=np.ascontiguousarray(RAW[fmt](image)))
    stem = f"pre_{mode}_{fmt}_{resized is not None}"
    quant = ["--calibration_table", str(d / "pre_cali_table")] if mode == "INT8" else []
    mlir = "pre.mlir" if resized is None else "pre_resized.mlir"
    # model_deploy's own checks: Tpu against model_transform's reference by name, then the cmodel against Tpu.
    model_deploy.run(["--mlir", str(d / mlir), "--quantize", mode, *quant, "--processor", "bm1684x",
                      "--model", str(d / f"{stem}.bmodel"), "--fuse_preprocess", "--customization_format", fmt,
                      "--test_input", str(d / raw), "--test_reference", str(d / "pre_top_outputs.npz"),
                      "--compare_all"])
    tpu_mlir = f"pre_bm1684x_{mode.lower()}{'_sym' if mode == 'INT8' else ''}_tpu.mlir"
    tpu = load_module(d / tpu_mlir)
    arg = tpu.main_func().body.block.args[0]
    assert arg.type == TensorType(IntegerType(8, Signedness.UNSIGNED), RAW[fmt](image).shape)  # raw bytes, fmt's layout

    reference = dict(np.load(d / "pre_top_outputs.npz"))  # the unfused model on the preprocessed (cropped) image
    bmodel = run(d, f"{stem}.bmodel", raw, f"{stem}_bmodel_out.npz")
    tensors = run(d, tpu_mlir, raw, f"{stem}_tpu_out.npz", "--dump_all_tensors")
    want = reference["out"]
    if mode == "F32":
        # The fused preprocessing computes the float formula exactly: the same float32 operations.
        np.testing.assert_array_equal(tensors["image"], preprocessed(img))
        np.testing.assert_allclose(bmodel["out"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    else:
        np.testing.assert_array_equal(bmodel["out"], tensors["out"])  # bit-exact, the cmodel vs the Tpu level
        err = np.abs(bmodel["out"] - want).max() / np.abs(want).max()
        cos = float(np.dot(bmodel["out"].ravel(), want.ravel())
                    / (np.linalg.norm(bmodel["out"]) * np.linalg.norm(want)))
        assert err < 0.05 and cos > 0.999, (err, cos)
    if (mode, fmt, resized) == ("INT8", "BGR_PACKED", None):
        dumped_like_the_tpu_level(d, f"{stem}.bmodel", raw, tensors, mode)


def dumped_like_the_tpu_level(d, bmodel: str, raw: str, tensors: dict[str, np.ndarray], mode: str) -> None:
    """model_runner --dump_all_tensors of the fused .bmodel: the Tpu interpreter's dump's names in its
    order (the raw input and the preprocessing ops' tensors included), each by model_deploy's rule;
    bmodel_checker on the Tpu dump passes every one of them."""
    dumped = run(d, bmodel, raw, "bmodel_all.npz", "--dump_all_tensors")
    assert {"image_raw", "image"} <= set(tensors) and any(n.startswith("image_preprocess") for n in tensors), list(tensors)
    assert_dump_equal(dumped, tensors, mode)
    np.savez(d / "tpu_all.npz", **tensors)
    r = run_main("bmodel_checker", d / bmodel, d / "tpu_all.npz", "--dump_mode", "never")
    assert r.returncode == 0 and f"{len(tensors) - 1} tensors checked ({mode}: bit-exact): {len(tensors) - 1} passed" \
        in r.stdout, r.stdout


def test_image_test_input_is_the_raw_data_of_the_customization_format(transformed):
    """TPU-MLIR's form: --test_input an image file. It is decoded (RGB) and resized as model_transform recorded
    (here the model's size: no resize), then laid out as the format says, without mean and scale; the Tpu
    level's preprocessed input equals the numpy formula on the same pixels, and everything compares by name
    with the unfused reference."""
    from PIL import Image

    d, img, _ = transformed
    Image.fromarray(img[0]).save(d / "img.png")
    model_deploy.run(["--mlir", str(d / "pre.mlir"), "--quantize", "F32", "--processor", "bm1684x",
                      "--model", str(d / "img.bmodel"), "--fuse_preprocess", "--customization_format", "BGR_PACKED",
                      "--test_input", str(d / "img.png"), "--test_reference", str(d / "pre_top_outputs.npz"),
                      "--compare_all"])
    tensors = dict(np.load(d / "pre_bm1684x_f32_tpu_outputs.npz"))  # --compare_all: every tensor
    np.testing.assert_array_equal(tensors["image_raw"], RAW["BGR_PACKED"](img))
    np.testing.assert_array_equal(tensors["image"], preprocessed(img))


@pytest.mark.parametrize(("flags", "message"), [
    (["--fuse_preprocess", "--aligned_input"], "fuse-preprocess: align=true is not supported"),
    (["--fuse_preprocess", "--customization_format", "BGGR_RAW"],
     "fuse-preprocess: customization_format=BGGR_RAW is not supported"),
    (["--customization_format", "BGR_PLANAR"], "--customization_format and --aligned_input need --fuse_preprocess"),
])
def test_model_deploy_refuses_what_it_does_not_model_before_writing(transformed, flags, message):
    d, _, _ = transformed
    out = d / "refused"
    out.mkdir(exist_ok=True)
    with pytest.raises(TpudslError, match=message):
        model_deploy.run(["--mlir", str(d / "pre.mlir"), "--processor", "bm1684x",
                          "--model", str(out / "x.bmodel"), *flags])
    assert not list(out.iterdir())


def test_model_deploy_refuses_an_image_test_input_for_yuv_before_writing(transformed):
    """Making YUV frames from an image (RGB -> 4:2:0) is not modelled: one message, nothing written."""
    from PIL import Image

    d, img, _ = transformed
    out = d / "refused_yuv"
    out.mkdir(exist_ok=True)
    Image.fromarray(img[0]).save(out / "img.png")
    with pytest.raises(TpudslError, match="making YUV_NV21 frames from an image"):
        model_deploy.run(["--mlir", str(d / "pre.mlir"), "--processor", "bm1684x", "--model", str(out / "x.bmodel"),
                          "--fuse_preprocess", "--customization_format", "YUV_NV21", "--test_input", str(out / "img.png")])
    assert [p.name for p in out.iterdir()] == ["img.png"]


# Every (model pixel_format, model channel_format, customization format) the pass models.
COMBOS = [(pixel, layout, fmt) for pixel in ("rgb", "bgr") for layout in ("nchw", "nhwc")
          for fmt in ("RGB_PLANAR", "RGB_PACKED", "BGR_PLANAR", "BGR_PACKED", "RGBA_PLANAR")] + \
         [("gray", layout, "GRAYSCALE") for layout in ("nchw", "nhwc")] + \
         [("rgba", layout, "RGBA_PLANAR") for layout in ("nchw", "nhwc")]
# The channels of an image in each colour order, by name: the raw data's and the model's are picked by them.
ORDER = {"rgb": "RGB", "bgr": "BGR", "rgba": "RGBA", "gray": "L"}
RAW_ORDER = {"RGB": "RGB", "BGR": "BGR", "RGBA": "RGBA", "GRAYSCALE": "L"}


def raw_data(img: np.ndarray, fmt: str) -> np.ndarray:
    """An NHWC image in the format's colour order as `fmt` holds it: planar unless PACKED."""
    return np.ascontiguousarray(img if fmt.endswith("PACKED") else img.transpose(0, 3, 1, 2))


def fused_top(rng: np.random.Generator, pixel: str, layout: str, fmt: str, c: int, hw: tuple[int, int],
              resized: tuple[int, int]):
    """A Top module whose one input "x" (batch 2, `c` channels of `hw` in `layout`) records the preprocessing
    (pixel_format, resize_dims, a random mean and scale per channel), fused for `fmt`; and the mean and scale."""
    from xdsl.dialects.builtin import Float32Type

    from tpudsl.dialects import make_context
    from tpudsl.dialects.opdef import create
    from tpudsl.ir.module import new_top_module
    from tpudsl.passes import pass_class

    mean, scale = rng.uniform(0, 255, c).astype(np.float32), rng.uniform(0.01, 2, c).astype(np.float32)
    shape = [2, c, *hw] if layout == "nchw" else [2, *hw, c]
    top = new_top_module("m", [TensorType(Float32Type(), shape)])
    block = top.main_func().body.block
    inp = create("top.Input", [block.args[0]], [TensorType(Float32Type(), shape)], loc="x", attrs={
        "do_preprocess": True, "pixel_format": pixel, "channel_format": layout, "resize_dims": list(resized),
        "mean": [float(v) for v in mean], "scale": [float(v) for v in scale]})
    block.add_op(inp)
    top.set_outputs([inp.results[0]])
    pass_class("fuse-preprocess")(mode="F32", customization_format=fmt).apply(make_context(), top.module)
    return top, mean, scale


def normalized(x: np.ndarray, layout: str, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """(x - mean) * scale per channel of float32 NHWC pixels `x`, in `layout`."""
    c = x.shape[-1]
    if layout == "nchw":
        x = x.transpose(0, 3, 1, 2)
    bcast = [1, c, 1, 1] if layout == "nchw" else [1, 1, 1, c]
    return (x - mean.reshape(bcast)) * scale.reshape(bcast)


@pytest.mark.parametrize("resized", [None, (8, 7)])
@pytest.mark.parametrize(("pixel", "layout", "fmt"), COMBOS)
def test_fused_top_module_computes_the_preprocessing_formula(pixel, layout, fmt, resized):
    """At the Top level, for every modelled combination, with and without a crop: the fused module's tensor
    under the input's name is (the image's center, its channels in the model's order and layout - mean) *
    scale, float32, exactly. The crop of 5x4 from 8x7 starts at row 2: TPU-MLIR's offsets, not (8 - 5) // 2."""
    from tpudsl.interp import run_module

    rng = np.random.default_rng(len(pixel) * 7 + len(fmt))
    model_order, raw_order = ORDER[pixel], RAW_ORDER[fmt.split("_")[0]]
    c, (h, w) = len(model_order), (5, 4)
    rh, rw = resized or (h, w)
    top, mean, scale = fused_top(rng, pixel, layout, fmt, c, (h, w), (rh, rw))

    img = rng.integers(0, 256, (2, rh, rw, len(raw_order)), dtype=np.uint8)  # NHWC, the raw colour order
    top_row, left = crop_start(rh, h), crop_start(rw, w)
    center = img[:, top_row:top_row + h, left:left + w]
    x = center[..., [raw_order.index(ch) for ch in model_order]].astype(np.float32)
    want = normalized(x, layout, mean, scale)
    got = run_module(top.module, top.weights, {"x_raw": raw_data(img, fmt)})
    np.testing.assert_array_equal(got["x"], want)


# ---- YUV: the BT.601 conversion (TPU-MLIR's Yuv2rgbFormula, _601_limited) written here from its equations ----
# 100000 x each coefficient: R = (116438 (Y - 16) + 159603 (V - 128)) / 100000, ... (the digits TPU-MLIR uses).
LIMITED = {"R": (116438, 0, 159603), "G": (116438, -39176, -81297), "B": (116438, 201723, 0)}


def bt601_limited(y: np.ndarray, u: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """Each channel exactly: the rational value rounded half up (away from zero for these non-negative
    values) and clipped to 0..255, in integers (no float on the way)."""
    y, u, v = (p.astype(np.int64) for p in (y, u, v))
    out = {}
    for ch, (cy, cu, cv) in LIMITED.items():
        num = cy * (y - 16) + cu * (u - 128) + cv * (v - 128)
        out[ch] = np.clip((num + 50000) // 100000, 0, 255)
    return out


def yuv_frames(y: np.ndarray, u: np.ndarray, v: np.ndarray, fmt: str) -> np.ndarray:
    """[N, H * 3 / 2, W] uint8 frames: the Y plane, then U and V planes (YUV420_PLANAR, I420) or the
    pairs U, V (YUV_NV12) or V, U (YUV_NV21), from planes y [N, H, W] and u, v [N, H / 2, W / 2]."""
    n, h, w = y.shape
    if fmt == "YUV420_PLANAR":
        chroma = np.concatenate([u.reshape(n, -1), v.reshape(n, -1)], axis=1)
    else:
        pairs = (u, v) if fmt == "YUV_NV12" else (v, u)
        chroma = np.stack(pairs, axis=-1).reshape(n, -1)
    return np.concatenate([y.reshape(n, -1), chroma], axis=1).reshape(n, h * 3 // 2, w).astype(np.uint8)


def upsampled(c: np.ndarray) -> np.ndarray:
    """Each chroma sample on its 2 x 2 pixels."""
    return c.repeat(2, axis=1).repeat(2, axis=2)


@pytest.mark.parametrize("resized", [None, (8, 6)])
@pytest.mark.parametrize(("pixel", "layout", "fmt"), [
    ("rgb", "nchw", "YUV420_PLANAR"), ("bgr", "nhwc", "YUV_NV12"), ("bgr", "nchw", "YUV_NV21"), ("rgb", "nhwc", "YUV_NV21")])
def test_fused_top_module_converts_yuv_by_bt601(pixel, layout, fmt, resized):
    """The fused module on 4:2:0 frames: its tensor under the input's name is (BT.601 limited-range RGB of the
    frame's center, in the model's order and layout - mean) * scale. The frames hold exact ties of G's rounding
    (Y, U, V) = (5, 217, 22) and (252, 167, 160): 38.5 and 233.5, rounded up (half to even would give 38)."""
    from tpudsl.interp import run_module

    rng = np.random.default_rng(len(fmt) + len(pixel))
    (h, w), c = (4, 6), 3
    rh, rw = resized or (h, w)
    top, mean, scale = fused_top(rng, pixel, layout, fmt, c, (h, w), (rh, rw))

    y = rng.integers(0, 256, (2, rh, rw))
    u, v = rng.integers(0, 256, (2, 2, rh // 2, rw // 2))
    top_row, left = crop_start(rh, h), crop_start(rw, w)
    y[0, top_row:top_row + 2, left:left + 2], u[0, top_row // 2, left // 2], v[0, top_row // 2, left // 2] = 5, 217, 22
    y[1, top_row:top_row + 2, left:left + 2], u[1, top_row // 2, left // 2], v[1, top_row // 2, left // 2] = 252, 167, 160
    rgb = bt601_limited(y, upsampled(u), upsampled(v))
    assert rgb["G"][0, top_row, left] == 39 and rgb["G"][1, top_row, left] == 234  # the ties, rounded up
    x = np.stack([rgb[ch] for ch in ORDER[pixel]], axis=-1)[:, top_row:top_row + h, left:left + w].astype(np.float32)
    want = normalized(x, layout, mean, scale)
    got = run_module(top.module, top.weights, {"x_raw": yuv_frames(y, u, v, fmt)})
    np.testing.assert_array_equal(got["x"], want)


@pytest.mark.parametrize(("mode", "fmt"), [("F32", "YUV_NV12"), ("F32", "YUV420_PLANAR"), ("INT8", "YUV_NV21"),
                                           ("BF16", "YUV_NV12")])
def test_bmodel_on_yuv_frames_gives_the_unfused_models_outputs(transformed, mode, fmt):
    """model_deploy of the rgb model with a YUV customization format: fed the fixture's 4:2:0 frame, the .bmodel
    gives the unfused model's output on the fixture's image (BT.601 of that frame), preprocessed by the formula."""
    d, img, planes = transformed
    stem = f"pre_{mode}_{fmt}"
    reference = d / "pre_top_outputs.npz"
    np.savez(d / f"{stem}_raw.npz", image_raw=yuv_frames(*planes, fmt))
    quant = ["--calibration_table", str(d / "pre_cali_table")] if mode == "INT8" else []
    model_deploy.run(["--mlir", str(d / "pre.mlir"), "--quantize", mode, *quant, "--processor", "bm1684x",
                      "--model", str(d / f"{stem}.bmodel"), "--fuse_preprocess", "--customization_format", fmt,
                      "--test_input", str(d / f"{stem}_raw.npz"), "--test_reference", str(reference),
                      "--compare_all"])
    tpu_mlir = f"pre_bm1684x_{mode.lower()}{'_sym' if mode == 'INT8' else ''}_tpu.mlir"
    bmodel = run(d, f"{stem}.bmodel", f"{stem}_raw.npz", f"{stem}_bmodel_out.npz")
    tensors = run(d, tpu_mlir, f"{stem}_raw.npz", f"{stem}_tpu_out.npz", "--dump_all_tensors")
    np.testing.assert_array_equal(tensors["image_preprocess_yuv2rgb"], img.transpose(0, 3, 1, 2))
    want = dict(np.load(reference))["out"]
    if mode == "F32":
        np.testing.assert_array_equal(tensors["image"], preprocessed(img))
        np.testing.assert_allclose(bmodel["out"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    else:  # INT8, BF16: the cmodel equals the Tpu level bit for bit, and both are near the float reference
        np.testing.assert_array_equal(bmodel["out"], tensors["out"])
        cos = float(np.dot(bmodel["out"].ravel(), want.ravel())
                    / (np.linalg.norm(bmodel["out"]) * np.linalg.norm(want)))
        assert cos > 0.999, cos


def test_an_image_resized_larger_is_cropped_at_tpu_mlirs_offsets(tmp_path):
    """The frontend's image test inputs crop as the fused Slice does: 5x4 of an 8x7 image (resize_dims the
    image's own size: no resampling) starts at row 2 and column 1, crop_start's formula above."""
    from PIL import Image

    from tpudsl.frontend.preprocess import Preprocess

    img = np.random.default_rng(2).integers(0, 256, (8, 7, 3), dtype=np.uint8)
    Image.fromarray(img).save(tmp_path / "i.png")
    x = Preprocess(pixel_format="rgb", resize_dims=(8, 7)).load_image(tmp_path / "i.png", [1, 3, 5, 4])
    top, left = crop_start(8, 5), crop_start(7, 4)
    assert (top, left) == (2, 1)
    np.testing.assert_array_equal(x[0], img[top:top + 5, left:left + 4].transpose(2, 0, 1).astype(np.float32))
