// The IO layouts with a constant returned: a weight has no IO memory (io_alone's region, a memory
// tag), one error naming it and the mode (TPU-MLIR leaves it among the coefficients; the header's
// check would refuse its address).
// RUN: not tpuc-opt %s --address-assign 2>&1 | filecheck %s
// RUN: sed 's/"io_alone"/"io_tag"/' %s | not tpuc-opt --address-assign 2>&1 | filecheck %s --check-prefix=TAG
// RUN: sed 's/"io_alone"/"io_tag_fuse"/' %s | not tpuc-opt --address-assign 2>&1 | filecheck %s --check-prefix=FUSE
// io_tag_fuse with an input returned: the input would have to be in tag 3 and tag 4 at once, one
// error (TPU-MLIR moves it to the output tag, where the runtime's input buffer is not).
// RUN: sed -e 's/"io_alone"/"io_tag_fuse"/' -e 's/return %x, %w : tensor<1x4xf32>, tensor<4xf32>/return %x : tensor<1x4xf32>/' -e 's/-> (tensor<1x4xf32>, tensor<4xf32>)/-> tensor<1x4xf32>/' %s | not tpuc-opt --address-assign 2>&1 | filecheck %s --check-prefix=INPUT
// A module.addr_mode processor-assign would not record: an unknown one, a tag mode on a chip
// without memory tags.
// RUN: sed 's/"io_alone"/"io_reloc"/' %s | not tpuc-opt --address-assign 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: sed -e 's/"io_alone"/"io_tag"/' -e 's/"tiny"/"bm1684x"/' %s | not tpuc-opt --address-assign 2>&1 | filecheck %s --check-prefix=NOTAGS
// UNKNOWN: error: address-assign: module.addr_mode 'io_reloc' is not one of io_alone, io_tag, io_tag_fuse (processor-assign's addr_mode)
// NOTAGS: error: address-assign: module.addr_mode 'io_tag' needs a chip with memory tags; bm1684x has none
// CHECK: error: address-assign: output 'w' is a top.Weight: a constant has no place in addr_mode=io_alone's IO memory
// TAG: error: address-assign: output 'w' is a top.Weight: a constant has no place in addr_mode=io_tag's IO memory
// FUSE: error: address-assign: output 'w' is a top.Weight: a constant has no place in addr_mode=io_tag_fuse's IO memory
// INPUT: error: address-assign: output 'x' is an input: addr_mode=io_tag_fuse binds the inputs to tag 3 and the outputs to tag 4
module attributes {module.addr_mode = "io_alone", module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<4xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<4xf32> loc("w")
    return %x, %w : tensor<1x4xf32>, tensor<4xf32>
  }
}
