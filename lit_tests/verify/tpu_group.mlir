// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// The layer-group ops (tpu.Group, tpu.Load, tpu.Store, tpu.Yield) verify their place and their
// region: a Load outside a group, a group whose body does not end in a Yield, a Yield of a value
// that no Store produced, an op in a group reading an outside tensor without a Load, a Load of a
// value that is not one of the group's operands.

// CHECK: tpu_group.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.Load' op "load_x" must be inside a tpu.Group
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %l = "tpu.Load"(%x) {ginfo = {id = 0 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_x")
  return %l : tensor<1x4x8x8xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.Group' op "r" yields a value that no tpu.Store of its body produced
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %g = "tpu.Group"(%x) ({
    %l = "tpu.Load"(%x) {ginfo = {id = 0 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_x")
    %r = "tpu.Relu"(%l) {ginfo = {id = 1 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    "tpu.Yield"(%r) : (tensor<1x4x8x8xf32>) -> () loc("r")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0, 1], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
  return %g : tensor<1x4x8x8xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.Group' op "r" has tpu.Relu reading a value from outside the group without tpu.Load
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %g = "tpu.Group"(%x) ({
    %r = "tpu.Relu"(%x) {ginfo = {id = 0 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    %s = "tpu.Store"(%r) {ginfo = {id = 1 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    "tpu.Yield"(%s) : (tensor<1x4x8x8xf32>) -> () loc("r")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0, 1], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
  return %g : tensor<1x4x8x8xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'tpu.Group' op "r" has a tpu.Load of a value that is not one of its operands
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %y = "tpu.Relu"(%x) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("y")
  %g = "tpu.Group"(%x) ({
    %l = "tpu.Load"(%y) {ginfo = {id = 0 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_y")
    %r = "tpu.Relu"(%l) {ginfo = {id = 1 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    %s = "tpu.Store"(%r) {ginfo = {id = 2 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    "tpu.Yield"(%s) : (tensor<1x4x8x8xf32>) -> () loc("r")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0, 1, 2], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
  return %g : tensor<1x4x8x8xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.Group' op "r" body must end in tpu.Yield
func.func @main(%arg0: tensor<1x4x8x8xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  "tpu.Group"(%x) ({
    %l = "tpu.Load"(%x) {ginfo = {id = 0 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_x")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> () loc("r")
  return
}
