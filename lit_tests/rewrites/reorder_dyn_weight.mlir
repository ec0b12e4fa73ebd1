// ReorderDynWeight (the DragGAN fix): a Deconv with a computed filter gets it in [oc, ic/g, kh, kw]
// layout and dynweight_reorderd = true, by dropping the exporter's Permute or inserting one.
// RUN: tpuc-opt %s --split-input-file --reorder-dyn-weight | filecheck %s
// RUN: tpuc-opt %s --split-input-file --reorder-dyn-weight --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// It never fires twice: a second run changes nothing.
// RUN: tpuc-opt %s --split-input-file --reorder-dyn-weight > %t.once
// RUN: tpuc-opt %t.once --split-input-file --reorder-dyn-weight > %t.twice
// RUN: diff %t.once %t.twice
// canonicalize runs it too, and then composes the two transposes of @shared_permute away.
// RUN: tpuc-opt %s --split-input-file --canonicalize | filecheck %s --check-prefix=CANON

// The exporter's transpose [oc, ic] -> [ic, oc] is dropped: the Deconv reads the untransposed tensor.
// CHECK-LABEL: func.func @drop_permute
// CHECK-NOT:   top.Permute
// CHECK:       "top.Deconv"(%{{.*}}, %[[W:.*]], %{{.*}}) {dynweight_reorderd = true, kernel_shape = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<3x4x2x2xf32>, none) -> tensor<1x3x6x6xf32>
// CANON-LABEL: func.func @drop_permute
// CANON-NOT:   top.Permute
// CANON:       "top.Deconv"({{.*}}) {dynweight_reorderd = true
func.func @drop_permute(%arg0: tensor<1x4x5x5xf32>, %arg1: tensor<3x4x2x2xf32>) -> tensor<1x3x6x6xf32> {
  %0 = "top.None"() : () -> none loc("none")
  %1 = "top.Input"(%arg0) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> loc("x")
  %2 = "top.Input"(%arg1) : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32> loc("w")
  %3 = "top.Permute"(%2) {order = [1, 0, 2, 3]} : (tensor<3x4x2x2xf32>) -> tensor<4x3x2x2xf32> loc("w_T")
  %4 = "top.Deconv"(%1, %3, %0) {kernel_shape = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x3x2x2xf32>, none) -> tensor<1x3x6x6xf32> loc("deconv")
  return %4 : tensor<1x3x6x6xf32>
}

// -----
// No transpose before it: a Permute named <deconv>_reorder_permute is inserted.
// CHECK-LABEL: func.func @insert_permute
// CHECK:       %[[P:.*]] = "top.Permute"(%{{.*}}) {order = [1, 0, 2, 3]} : (tensor<4x3x2x2xf32>) -> tensor<3x4x2x2xf32>
// CHECK-NEXT:  "top.Deconv"(%{{.*}}, %[[P]], %{{.*}}) {dynweight_reorderd = true, kernel_shape = [2, 2]}
// LOC-LABEL:   func.func @insert_permute
// LOC:         "top.Permute"{{.*}} loc([[PL:#loc[0-9]*]])
// LOC:         "top.Deconv"{{.*}} loc([[DL:#loc[0-9]*]])
// LOC-DAG:     [[PL]] = loc("deconv_reorder_permute")
// LOC-DAG:     [[DL]] = loc("deconv")
// CANON-LABEL: func.func @insert_permute
// CANON:       "top.Permute"
// CANON-NEXT:  "top.Deconv"({{.*}}) {dynweight_reorderd = true
func.func @insert_permute(%arg0: tensor<1x4x5x5xf32>, %arg1: tensor<4x3x2x2xf32>) -> tensor<1x3x6x6xf32> {
  %0 = "top.None"() : () -> none loc("none")
  %1 = "top.Input"(%arg0) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> loc("x")
  %2 = "top.Input"(%arg1) : (tensor<4x3x2x2xf32>) -> tensor<4x3x2x2xf32> loc("w")
  %3 = "top.Deconv"(%1, %2, %0) {kernel_shape = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x3x2x2xf32>, none) -> tensor<1x3x6x6xf32> loc("deconv")
  return %3 : tensor<1x3x6x6xf32>
}

// -----
// The transpose also feeds something else: it stays, and a second Permute is inserted.
// CHECK-LABEL: func.func @shared_permute
// CHECK:       %[[T:.*]] = "top.Permute"(%{{.*}}) {order = [1, 0, 2, 3]} : (tensor<3x4x2x2xf32>) -> tensor<4x3x2x2xf32>
// CHECK:       %[[P:.*]] = "top.Permute"(%[[T]]) {order = [1, 0, 2, 3]} : (tensor<4x3x2x2xf32>) -> tensor<3x4x2x2xf32>
// CHECK-NEXT:  "top.Deconv"(%{{.*}}, %[[P]], %{{.*}}) {dynweight_reorderd = true
// CANON-LABEL: func.func @shared_permute
// CANON:       %[[W:.*]] = "top.Input"(%arg1)
// CANON-NEXT:  %[[T:.*]] = "top.Permute"(%[[W]]) {order = [1, 0, 2, 3]}
// CANON-NEXT:  "top.Deconv"(%{{.*}}, %[[W]], %{{.*}}) {dynweight_reorderd = true
// CANON-NEXT:  return %{{.*}}, %[[T]]
func.func @shared_permute(%arg0: tensor<1x4x5x5xf32>, %arg1: tensor<3x4x2x2xf32>) -> (tensor<1x3x6x6xf32>, tensor<4x3x2x2xf32>) {
  %0 = "top.None"() : () -> none loc("none")
  %1 = "top.Input"(%arg0) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> loc("x")
  %2 = "top.Input"(%arg1) : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32> loc("w")
  %3 = "top.Permute"(%2) {order = [1, 0, 2, 3]} : (tensor<3x4x2x2xf32>) -> tensor<4x3x2x2xf32> loc("w_T")
  %4 = "top.Deconv"(%1, %3, %0) {kernel_shape = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x3x2x2xf32>, none) -> tensor<1x3x6x6xf32> loc("deconv")
  return %4, %3 : tensor<1x3x6x6xf32>, tensor<4x3x2x2xf32>
}

// -----
// Must not fire: a static filter (transposed at conversion or lowering instead), a filter already
// reordered, and group > 1 (there [ic, oc/g] -> [oc, ic/g] is not a swap of axes 0 and 1).
// CHECK-LABEL: func.func @no_fire
// CHECK-NOT:   top.Permute
// CHECK:       "top.Deconv"(%{{.*}}) {kernel_shape = [2, 2]}
// CHECK:       "top.Deconv"(%{{.*}}) {dynweight_reorderd = true, kernel_shape = [2, 2]}
// CHECK:       "top.Deconv"(%{{.*}}) {group = 2 : i64, kernel_shape = [2, 2]}
// CHECK-NOT:   top.Permute
func.func @no_fire(%arg0: tensor<1x4x5x5xf32>, %arg1: tensor<3x4x2x2xf32>, %arg2: tensor<4x1x2x2xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x6x6xf32>, tensor<1x2x6x6xf32>) {
  %0 = "top.None"() : () -> none loc("none")
  %1 = "top.Input"(%arg0) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<4x3x2x2xf32> loc("static_w")
  %2 = "top.Deconv"(%1, %w, %0) {kernel_shape = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x3x2x2xf32>, none) -> tensor<1x3x6x6xf32> loc("static")
  %3 = "top.Input"(%arg1) : (tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32> loc("w")
  %4 = "top.Deconv"(%1, %3, %0) {dynweight_reorderd = true, kernel_shape = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<3x4x2x2xf32>, none) -> tensor<1x3x6x6xf32> loc("reordered")
  %5 = "top.Input"(%arg2) : (tensor<4x1x2x2xf32>) -> tensor<4x1x2x2xf32> loc("wg")
  %6 = "top.Deconv"(%1, %5, %0) {group = 2 : i64, kernel_shape = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x1x2x2xf32>, none) -> tensor<1x2x6x6xf32> loc("grouped")
  return %2, %4, %6 : tensor<1x3x6x6xf32>, tensor<1x3x6x6xf32>, tensor<1x2x6x6xf32>
}
