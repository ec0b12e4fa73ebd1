// Permute/Reshape cleanup.
// RUN: tpuc-opt %s --split-input-file --permute-reshape-cleanup | filecheck %s
// RUN: tpuc-opt %s --split-input-file --permute-reshape-cleanup --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// Run twice with locations: names decide whether a returned op may go, so they must survive.
// RUN: tpuc-opt %s --split-input-file --permute-reshape-cleanup --mlir-print-debuginfo > %t.once
// RUN: tpuc-opt %t.once --split-input-file --permute-reshape-cleanup --mlir-print-debuginfo > %t.twice
// RUN: diff %t.once %t.twice

// CHECK-LABEL: func.func @identity_permute
// CHECK-NOT:   top.Permute
func.func @identity_permute(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %1 = "top.Permute"(%0) {order = [0, 1, 2]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("p")
  %2 = "top.Relu"(%1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("y")
  return %2 : tensor<2x3x4xf32>
}

// -----
// Result axis i of the pair is input axis first[second[i]]: [1, 2, 0] then [2, 0, 1] is the
// identity, [1, 2, 0] then [1, 0, 2] is [2, 1, 0]. The composed Permute is named like the outer one.
// CHECK-LABEL: func.func @compose_permutes
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK-NEXT:  %[[P:.*]] = "top.Permute"(%[[X]]) {order = [2, 1, 0]} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT:  %[[R:.*]] = "top.Relu"(%[[X]])
// CHECK-NEXT:  return %[[R]], %[[P]]
// LOC-LABEL:   func.func @compose_permutes
// LOC:         "top.Permute"{{.*}} loc([[L:#loc[0-9]*]])
// LOC:         [[L]] = loc("swap02")
func.func @compose_permutes(%arg0: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %1 = "top.Permute"(%0) {order = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32> loc("rot")
  %2 = "top.Permute"(%1) {order = [2, 0, 1]} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32> loc("unrot")
  %3 = "top.Permute"(%1) {order = [1, 0, 2]} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32> loc("swap02")
  %4 = "top.Relu"(%2) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("y")
  return %4, %3 : tensor<2x3x4xf32>, tensor<4x3x2xf32>
}

// -----
// Reshape of Reshape is one Reshape (with the explicit shape, since 0 and -1 depend on the input);
// a Reshape to the input's type goes.
// CHECK-LABEL: func.func @reshapes
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK-NEXT:  %[[R:.*]] = "top.Reshape"(%[[X]]) {shape = [4, 6]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:  %[[Y:.*]] = "top.Relu"(%[[X]])
// CHECK-NEXT:  return %[[R]], %[[Y]]
func.func @reshapes(%arg0: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %1 = "top.Reshape"(%0) {shape = [6, -1]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32> loc("r1")
  %2 = "top.Reshape"(%1) {shape = [-1, 6]} : (tensor<6x4xf32>) -> tensor<4x6xf32> loc("r2")
  %3 = "top.Reshape"(%0) {shape = [2, 3, 4]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("same")
  %4 = "top.Relu"(%3) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("y")
  return %2, %4 : tensor<4x6xf32>, tensor<2x3x4xf32>
}

// -----
// Must not fire: a returned identity would hand its output name to its input; the composed
// identity is named like the outer Permute and stays too.
// CHECK-LABEL: func.func @returned_identities
// CHECK:       "top.Permute"({{.*}}) {order = [0, 1]}
// CHECK:       "top.Reshape"({{.*}}) {shape = [2, 3]}
// CHECK:       "top.Permute"({{.*}}) {order = [0, 1]}
// LOC-LABEL:   func.func @returned_identities
// LOC:         return {{.*}} loc
// LOC-DAG:     loc("p")
// LOC-DAG:     loc("same")
// LOC-DAG:     loc("unrot")
func.func @returned_identities(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.Permute"(%0) {order = [0, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("p")
  %2 = "top.Reshape"(%0) {shape = [2, 3]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("same")
  %3 = "top.Permute"(%0) {order = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("rot")
  %4 = "top.Permute"(%3) {order = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32> loc("unrot")
  return %1, %2, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// Squeeze, Unsqueeze and Flatten become Reshapes named like them.
// CHECK-LABEL: func.func @shape_ops
// CHECK:       "top.Reshape"(%{{.*}}) {shape = [3, 4]} : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
// CHECK:       "top.Reshape"(%{{.*}}) {shape = [1, 3, 1, 4]} : (tensor<1x3x4xf32>) -> tensor<1x3x1x4xf32>
// CHECK:       "top.Reshape"(%{{.*}}) {shape = [1, 12]} : (tensor<1x3x4xf32>) -> tensor<1x12xf32>
// CHECK-NOT:   top.Squeeze
// CHECK-NOT:   top.Unsqueeze
// CHECK-NOT:   top.Flatten
// LOC-LABEL:   func.func @shape_ops
// LOC:         "top.Reshape"{{.*}} loc([[S:#loc[0-9]*]])
// LOC:         "top.Reshape"{{.*}} loc([[U:#loc[0-9]*]])
// LOC:         "top.Reshape"{{.*}} loc([[F:#loc[0-9]*]])
// LOC-DAG:     [[S]] = loc("sq")
// LOC-DAG:     [[U]] = loc("unsq")
// LOC-DAG:     [[F]] = loc("flat")
func.func @shape_ops(%arg0: tensor<1x3x4xf32>) -> (tensor<3x4xf32>, tensor<1x3x1x4xf32>, tensor<1x12xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32> loc("x")
  %1 = "top.Squeeze"(%0) {axes = [0]} : (tensor<1x3x4xf32>) -> tensor<3x4xf32> loc("sq")
  %2 = "top.Unsqueeze"(%0) {axes = [2]} : (tensor<1x3x4xf32>) -> tensor<1x3x1x4xf32> loc("unsq")
  %3 = "top.Flatten"(%0) {start_dim = 1 : i64} : (tensor<1x3x4xf32>) -> tensor<1x12xf32> loc("flat")
  return %1, %2, %3 : tensor<3x4xf32>, tensor<1x3x1x4xf32>, tensor<1x12xf32>
}

// -----
// Must not fire: a real permutation, a Reshape that changes the shape, a Reshape whose shape comes
// from an operand (decided at run time), a Squeeze with an unranked result.
// CHECK-LABEL: func.func @no_fire
// CHECK:       "top.Permute"({{.*}}) {order = [1, 0]}
// CHECK:       "top.Reshape"({{.*}}) {shape = [6]}
// CHECK:       "top.Reshape"({{.*}}, {{.*}}) : (tensor<6xf32>, tensor<2xi64>) -> tensor<3x2xf32>
// CHECK:       "top.Squeeze"
func.func @no_fire(%arg0: tensor<2x3xf32>, %arg1: tensor<2xi64>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<*xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.Permute"(%0) {order = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("t")
  %2 = "top.Reshape"(%0) {shape = [6]} : (tensor<2x3xf32>) -> tensor<6xf32> loc("flat")
  %s = "top.Input"(%arg1) : (tensor<2xi64>) -> tensor<2xi64> loc("s")
  %3 = "top.Reshape"(%2, %s) : (tensor<6xf32>, tensor<2xi64>) -> tensor<3x2xf32> loc("dyn")
  %4 = "top.Squeeze"(%1) {axes = []} : (tensor<3x2xf32>) -> tensor<*xf32> loc("sq")
  return %1, %3, %4 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<*xf32>
}
