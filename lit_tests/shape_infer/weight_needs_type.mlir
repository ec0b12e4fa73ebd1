// RUN: not tpuc-opt %s --shape-infer 2>&1 | filecheck %s
// A weight's shape is its npz array's: only its result type can say it.

// CHECK: error: 'top.Weight' op "conv1_w" result #0: its shape comes from a tensor's value, not from shapes and attributes; give a ranked result type
func.func @main() -> tensor<*xf32> {
  %0 = "top.Weight"() : () -> tensor<*xf32> loc("conv1_w")
  func.return %0 : tensor<*xf32>
}
