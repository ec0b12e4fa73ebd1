// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu | filecheck %s
// A ceil-mode pool lowers to a tpu.Pool2D without ceil_mode whose end pads grow by the last
// window's overhang (TPU-MLIR's MaxPool and AvgPool shape inference do the same): the backend
// pools by the floor rule. Exact for a MaxPool (pads never win) and for an AvgPool whose divisor
// counts input elements only; an AvgPool that counts explicit pads next to an overhang also gets
// ceil_overhang, the end pads' rows and columns its divisor never counts.

// 4 rows, kernel 3, stride 2: 2 windows, the last reaching one row past the end; 5 columns: exact.
// CHECK: %1 = "tpu.Pool2D"(%0) {kernel_shape = [3, 3], pads = [0, 0, 1, 0], pool_mode = #tpu<pool_mode Max>, strides = [2, 2]}
// With a begin pad: rows 4 + 1 - 2 = 3, rounded up 3/2 + 1 = 3 windows (floor: 2), the last
// starting at row 3 and reaching one past the end; columns 5 + 1 - 2 = 4: 3 windows either way.
// CHECK: %2 = "tpu.Pool2D"(%0) {kernel_shape = [2, 2], pads = [1, 1, 1, 0], pool_mode = #tpu<pool_mode Max>, strides = [2, 2]}
// An AvgPool not counting pads: the same end pad, never counted.
// CHECK: %3 = "tpu.Pool2D"(%0) {kernel_shape = [3, 3], pads = [0, 0, 1, 0], pool_mode = #tpu<pool_mode Avg>, strides = [2, 2]}
// Counting pads, but it has none: the overhang is the only pad, so it counts none.
// CHECK: %4 = "tpu.Pool2D"(%0) {count_include_pad = false, kernel_shape = [3, 3], pads = [0, 0, 1, 0], pool_mode = #tpu<pool_mode Avg>, strides = [2, 2]}
// Counting explicit pads and an overhang (rows 4 + 2 - 3 = 3, rounded up 3 windows (floor: 2), the
// last reaching one row past the end pad; columns 5 + 2 - 3 = 4: exact): the overhang row is not counted.
// CHECK: %5 = "tpu.Pool2D"(%0) {ceil_overhang = [1, 0], count_include_pad = true, kernel_shape = [3, 3], pads = [1, 1, 2, 1], pool_mode = #tpu<pool_mode Avg>, strides = [2, 2]}
// Must not grow pads: counting pads, no overhang (rows 4 + 2 - 3 = 3, 3 % 1 = 0): ceil_mode goes, pads stay.
// CHECK: %6 = "tpu.Pool2D"(%0) {count_include_pad = true, kernel_shape = [3, 3], pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Avg>, strides = [1, 1]}
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x2x4x5xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>, tensor<1x2x4x5xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x5xf32>) -> tensor<1x2x4x5xf32> loc("x")
    %1 = "top.MaxPool"(%0) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 0, 0], ceil_mode = true} : (tensor<1x2x4x5xf32>) -> tensor<1x2x2x2xf32> loc("ceil")
    %2 = "top.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 0, 0], ceil_mode = true} : (tensor<1x2x4x5xf32>) -> tensor<1x2x3x3xf32> loc("ceil_begin_pads")
    %3 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 0, 0], ceil_mode = true} : (tensor<1x2x4x5xf32>) -> tensor<1x2x2x2xf32> loc("avg_ceil")
    %4 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 0, 0], ceil_mode = true, count_include_pad = true} : (tensor<1x2x4x5xf32>) -> tensor<1x2x2x2xf32> loc("avg_ceil_counted_no_pads")
    %5 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = true, count_include_pad = true} : (tensor<1x2x4x5xf32>) -> tensor<1x2x3x3xf32> loc("avg_ceil_counted_pads")
    %6 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], ceil_mode = true, count_include_pad = true} : (tensor<1x2x4x5xf32>) -> tensor<1x2x4x5xf32> loc("avg_ceil_counted_exact")
    return %1, %2, %3, %4, %5, %6 : tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>, tensor<1x2x4x5xf32>
  }
}
