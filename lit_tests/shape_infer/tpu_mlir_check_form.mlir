// CHECK lines in the form TPU-MLIR's lit tests write them (RUN line without
// --mlir-print-debuginfo, `loc({{.*}})` at the end of each op, `%[[X:.*]]` captures,
// `{{{.*}}}` for an attribute dictionary, CHECK-LABEL on the module name).
// RUN: tpuc-opt --shape-infer -split-input-file %s | filecheck %s

// CHECK-LABEL: module @ConvPool
// CHECK:      %[[IN:.*]] = "top.Input"(%arg0) {{{.*}}} : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x32xf32> loc({{.*}})
// CHECK:      %[[CONV:.*]] = "top.Conv"(%[[IN]], %[[W:.*]], %[[B:.*]]) {dilations = [1, 1], do_relu = false, group = 1 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], relu_limit = -1.000000e+00 : f64, strides = [2, 2]} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32> loc({{.*}})
// CHECK:      %[[POOL:.*]] = "top.MaxPool"(%[[CONV]]) {{{.*}}} : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32> loc({{.*}})
// CHECK:      %[[RESHAPE:.*]] = "top.Reshape"(%[[POOL]]) {shape = [1, -1]} : (tensor<1x8x8x8xf32>) -> tensor<1x512xf32> loc({{.*}})
// CHECK:      %[[MM:.*]] = "top.MatMul"(%[[RESHAPE]], %[[FC:.*]], %[[NONE:.*]]) {{{.*}}} : (tensor<1x512xf32>, tensor<512x10xf32>, none) -> tensor<1x10xf32> loc({{.*}})
// CHECK:      return %[[MM]] : tensor<1x10xf32> loc({{.*}})
#loc = loc(unknown)
module @ConvPool attributes {module.chip = "ALL", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "convpool_top_f32_all_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x32x32xf32> loc(unknown)) -> tensor<*xf32> {
    %0 = "top.None"() : () -> none loc(#loc)
    %1 = "top.Input"(%arg0) {do_preprocess = false} : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x32xf32> loc(#loc1)
    %2 = "top.Weight"() : () -> tensor<8x3x3x3xf32> loc(#loc2)
    %3 = "top.Weight"() : () -> tensor<8xf32> loc(#loc3)
    %4 = "top.Conv"(%1, %2, %3) {dilations = [1, 1], do_relu = false, group = 1 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], relu_limit = -1.000000e+00 : f64, strides = [2, 2]} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<*xf32> loc(#loc4)
    %5 = "top.MaxPool"(%4) {ceil_mode = false, count_include_pad = false, do_relu = false, keepdims = true, kernel_shape = [2, 2], pad_value = 0 : i64, pads = [0, 0, 0, 0], relu_limit = -1.000000e+00 : f64, strides = [2, 2]} : (tensor<*xf32>) -> tensor<*xf32> loc(#loc5)
    %6 = "top.Reshape"(%5) {shape = [1, -1]} : (tensor<*xf32>) -> tensor<*xf32> loc(#loc6)
    %7 = "top.Weight"() : () -> tensor<512x10xf32> loc(#loc7)
    %8 = "top.MatMul"(%6, %7, %0) {do_relu = false, hdim_is_batch = false, keep_dims = true, left_transpose = false, output_transpose = false, relu_limit = -1.000000e+00 : f64, right_transpose = false} : (tensor<*xf32>, tensor<512x10xf32>, none) -> tensor<*xf32> loc(#loc8)
    return %8 : tensor<*xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("input")
#loc2 = loc("conv_w")
#loc3 = loc("conv_b")
#loc4 = loc("conv_output_Conv")
#loc5 = loc("pool_output_MaxPool")
#loc6 = loc("flatten_output_Reshape")
#loc7 = loc("fc_w")
#loc8 = loc("output_MatMul")

// -----

// CHECK-LABEL: module @SliceMulReduce
// CHECK:      %[[S0:.*]] = "top.Slice"(%[[A:.*]], %[[N:.*]], %[[N]], %[[N]]) {{{.*}}} : (tensor<1x4x6x8xf16>, none, none, none) -> tensor<1x4x6x7xf16> loc({{.*}})
// CHECK:      %[[S1:.*]] = "top.Slice"(%[[B:.*]], %[[N]], %[[N]], %[[N]]) {{{.*}}} : (tensor<1x4x6x8xf16>, none, none, none) -> tensor<1x4x6x7xf16> loc({{.*}})
// CHECK:      %[[MUL:.*]] = "top.Mul"(%[[S0]], %[[S1]]) {{{.*}}} : (tensor<1x4x6x7xf16>, tensor<1x4x6x7xf16>) -> tensor<1x4x6x7xf16> loc({{.*}})
// CHECK:      %[[R:.*]] = "top.Reshape"(%[[MUL]]) {{{.*}}} : (tensor<1x4x6x7xf16>) -> tensor<1x2x2x6x7xf16> loc({{.*}})
// CHECK:      %[[MEAN:.*]] = "top.Reduce"(%[[R]]) {{{.*}} mode = "ReduceMean"} : (tensor<1x2x2x6x7xf16>) -> tensor<1x2x6x7xf16> loc({{.*}})
// CHECK:      return %[[MEAN]] : tensor<1x2x6x7xf16> loc({{.*}})
#loc = loc(unknown)
module @SliceMulReduce attributes {module.chip = "ALL", module.platform = "ONNX", module.state = "TOP_F16", module.top_run_mode = "STATIC", module.weight_file = "slicemulreduce_weight.npz"} {
  func.func @main(%arg0: tensor<1x4x6x8xf16>, %arg1: tensor<1x4x6x8xf16>) -> tensor<*xf16> {
    %0 = "top.None"() : () -> none loc(#loc)
    %1 = "top.Input"(%arg0) {do_preprocess = false} : (tensor<1x4x6x8xf16>) -> tensor<1x4x6x8xf16> loc(#loc1)
    %2 = "top.Input"(%arg1) {do_preprocess = false} : (tensor<1x4x6x8xf16>) -> tensor<1x4x6x8xf16> loc(#loc2)

    // A huge end clamps to the axis size; a negative end counts from it.
    %3 = "top.Slice"(%1, %0, %0, %0) {axes = [3], ends = [2147483647], hasparamConvert_axes = [], offset = [1], steps = [1]} : (tensor<1x4x6x8xf16>, none, none, none) -> tensor<*xf16> loc(#loc3)
    %4 = "top.Slice"(%2, %0, %0, %0) {axes = [3], ends = [-1], hasparamConvert_axes = [], offset = [0], steps = [1]} : (tensor<1x4x6x8xf16>, none, none, none) -> tensor<*xf16> loc(#loc4)
    %5 = "top.Mul"(%3, %4) {do_relu = false, is_scalar = false, relu_limit = -1.000000e+00 : f64} : (tensor<*xf16>, tensor<*xf16>) -> tensor<*xf16> loc(#loc5)
    %6 = "top.Reshape"(%5) {flatten_start_dim = -1 : i64, shape = [1, 2, 2, 6, 7]} : (tensor<*xf16>) -> tensor<*xf16> loc(#loc6)
    %7 = "top.Reduce"(%6) {axes = [2], is_scalar = false, keepdims = false, mode = "ReduceMean"} : (tensor<*xf16>) -> tensor<*xf16> loc(#loc7)
    return %7 : tensor<*xf16> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("in_0")
#loc2 = loc("in_1")
#loc3 = loc("slice_a")
#loc4 = loc("slice_b")
#loc5 = loc("mul")
#loc6 = loc("reshape")
#loc7 = loc("mean")
