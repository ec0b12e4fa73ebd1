// Unknown pass options and malformed option text are one-line errors naming the pass and its options.
// RUN: not tpuc-opt %s --dce="aggressive=true" 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tpuc-opt %s -p 'dce{aggressive=true}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tpuc-opt %s -p 'dce{aggressive=true' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not tpuc-opt %s --frobnicate-everything 2>&1 | filecheck %s --check-prefix=DRIVER

// UNKNOWN-NOT: Traceback
// UNKNOWN:     error: pass 'dce' has no option 'aggressive'; its options: none{{.*}}
// UNKNOWN-NOT: {{.}}
// SYNTAX-NOT:  Traceback
// SYNTAX:      error: cannot parse pass pipeline 'dce{aggressive=true': unexpected end of text{{.*}}
// SYNTAX-NOT:  {{.}}
// DRIVER-NOT:  Traceback
// DRIVER:      error: unknown option or pass '--frobnicate-everything'{{.*}}
// DRIVER-NOT:  {{.}}

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  return %arg0 : tensor<1x4xf32>
}
