// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// The layer-group ops (tpu.Group, tpu.Load, tpu.Store, tpu.Yield) verify their place and their
// region: a Load outside a group, a group whose body does not end in a Yield, a Yield of a value
// that no Store produced, an op in a group reading an outside tensor without a Load, a Load of a
// value that is not one of the group's operands; `ginfo` is a #tpu.lg<...> whose fields are
// declared (an unknown or repeated field, a value of the wrong type, idx/slice lists of other
// lengths, a negative size: an error naming the field).

// CHECK: tpu_group.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.Load' op "load_x" must be inside a tpu.Group
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %l = "tpu.Load"(%x) {ginfo = #tpu.lg<id = 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_x")
  return %l : tensor<1x4x8x8xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.Group' op "r" yields a value that no tpu.Store of its body produced
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %g = "tpu.Group"(%x) ({
    %l = "tpu.Load"(%x) {ginfo = #tpu.lg<id = 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_x")
    %r = "tpu.Relu"(%l) {ginfo = #tpu.lg<id = 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    "tpu.Yield"(%r) : (tensor<1x4x8x8xf32>) -> () loc("r")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0, 1], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
  return %g : tensor<1x4x8x8xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.Group' op "r" has tpu.Relu reading a value from outside the group without tpu.Load
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %g = "tpu.Group"(%x) ({
    %r = "tpu.Relu"(%x) {ginfo = #tpu.lg<id = 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    %s = "tpu.Store"(%r) {ginfo = #tpu.lg<id = 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
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
    %l = "tpu.Load"(%y) {ginfo = #tpu.lg<id = 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_y")
    %r = "tpu.Relu"(%l) {ginfo = #tpu.lg<id = 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    %s = "tpu.Store"(%r) {ginfo = #tpu.lg<id = 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    "tpu.Yield"(%s) : (tensor<1x4x8x8xf32>) -> () loc("r")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0, 1, 2], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
  return %g : tensor<1x4x8x8xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.Group' op "r" body must end in tpu.Yield
func.func @main(%arg0: tensor<1x4x8x8xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  "tpu.Group"(%x) ({
    %l = "tpu.Load"(%x) {ginfo = #tpu.lg<id = 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_x")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> () loc("r")
  return
}

// -----

// ginfo is a #tpu.lg<...> (TPU-MLIR's Tpu_LayerGroupAttr), not a dictionary.
// CHECK: tpu_group.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: 'tpu.Relu' op "r" attribute 'ginfo' should be tpu.lg, got {id = 0 : i64}
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %g = "tpu.Group"(%x) ({
    %l = "tpu.Load"(%x) {ginfo = #tpu.lg<id = 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("load_x")
    %r = "tpu.Relu"(%l) {ginfo = {id = 0 : i64}} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    %s = "tpu.Store"(%r) {ginfo = #tpu.lg<id = 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
    "tpu.Yield"(%s) : (tensor<1x4x8x8xf32>) -> () loc("r")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0, 1, 2], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("r")
  return %g : tensor<1x4x8x8xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 2]]:65: error: #tpu.lg has no field 'out_adr' (fields: out_addr, out_size, buffer_addr, buffer_size, eu_align, can_merge, in_hslice_offset, n_idx, n_slice, c_idx, c_slice, d_idx, d_slice, h_idx, h_slice, w_idx, w_slice, id, stage, slice_idx, group_type)
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %r = "tpu.Relu"(%arg0) {ginfo = #tpu.lg<out_addr = 0, id = 1, out_adr = 2>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: #tpu.lg field 'h_slice' must be a list of integers
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %r = "tpu.Relu"(%arg0) {ginfo = #tpu.lg<h_idx = [0], h_slice = 4>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: #tpu.lg field 'eu_align' must be a boolean
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %r = "tpu.Relu"(%arg0) {ginfo = #tpu.lg<eu_align = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: #tpu.lg field 'id' is given twice
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %r = "tpu.Relu"(%arg0) {ginfo = #tpu.lg<id = 1, id = 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: #tpu.lg h_idx has 2 entries, h_slice 1
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %r = "tpu.Relu"(%arg0) {ginfo = #tpu.lg<h_idx = [0, 4], h_slice = [4]>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK: tpu_group.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: #tpu.lg field 'out_size' = -4 must not be negative
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %r = "tpu.Relu"(%arg0) {ginfo = #tpu.lg<out_size = -4>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
