// import-calibration-table refuses: a module not in state TOP_F32 (already calibrated, or no
// state), a float tensor the table lacks, a table naming a tensor the module lacks, a malformed
// table line, a missing table. Each is one line naming the problem; the output is not written.
// RUN: not tpuc-opt %s --split-input-file --import-calibration-table="file=%S/Inputs/two_cali_table" 2>&1 | filecheck %s
// RUN: not tpuc-opt %s --split-input-file --import-calibration-table="file=%S/Inputs/bad_cali_table" 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not tpuc-opt %s --split-input-file --import-calibration-table="file=%S/Inputs/no_such_table" 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not tpuc-opt %s --split-input-file --import-calibration-table 2>&1 | filecheck %s --check-prefix=NOFILE

// CHECK: error: import-calibration-table needs module.state "TOP_F32", the module has 'TOP_CALIBRATED'
// BAD: bad_cali_table:4:1: error: expected 'op_name threshold min max', found 3 field(s)
// MISSING: error: cannot read calibration table '{{.*}}no_such_table': No such file or directory
// NOFILE: error: import-calibration-table needs the table: file=NAME_cali_table
module attributes {module.state = "TOP_CALIBRATED"} {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "top.Input"(%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc("x")
    return %0 : tensor<2xf32>
  }
}

// -----
// CHECK: two_cali_table: error: no entry for tensor 'z' (top.Relu)
module attributes {module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "top.Input"(%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc("x")
    %1 = "top.Relu"(%0) : (tensor<2xf32>) -> tensor<2xf32> loc("y")
    %2 = "top.Relu"(%1) : (tensor<2xf32>) -> tensor<2xf32> loc("z")
    return %2 : tensor<2xf32>
  }
}

// -----
// CHECK: two_cali_table:3:1: error: 'y' is not a tensor of the module
module attributes {module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "top.Input"(%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc("x")
    return %0 : tensor<2xf32>
  }
}
