// On any error the -o file keeps its old contents and no temporary file is left next to it.
// RUN: rm -rf %t.dir && mkdir -p %t.dir && echo old > %t.dir/out.mlir
// RUN: not tpuc-opt %s -o %t.dir/out.mlir 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not tpuc-opt %s -p nope -o %t.dir/out.mlir
// RUN: filecheck %s --check-prefix=OLD < %t.dir/out.mlir
// RUN: ls -A %t.dir | filecheck %s --check-prefix=LS

// ERR: error: 'top.Relu' op
// OLD: {{^}}old{{$}}
// LS-NOT: {{.tmp}}
// LS:     {{^}}out.mlir{{$}}
// LS-NOT: {{.tmp}}

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x5xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x5xf32> loc("bad")
  return %0 : tensor<1x5xf32>
}
