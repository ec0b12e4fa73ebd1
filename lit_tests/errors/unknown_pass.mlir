// An unknown pass, in any form, is an error listing the known passes; nothing runs.
// RUN: not tpuc-opt %s --shape-infr 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not tpuc-opt %s -p 'shape-infer,frobnicate' 2>&1 | filecheck %s --check-prefix=PIPE
// RUN: not tpuc-opt %s --pass-pipeline='builtin.module(frobnicate)' 2>&1 | filecheck %s --check-prefix=PIPE
// RUN: not tpuc-opt %s --pass-pipeline='func.func(dce)' 2>&1 | filecheck %s --check-prefix=ANCHOR

// FLAG-NOT:   Traceback
// FLAG:       error: unknown option or pass '--shape-infr'; known passes: {{.*}}canonicalize{{.*}}shape-infer{{.*}}
// FLAG-NOT:   {{.}}
// PIPE-NOT:   Traceback
// PIPE:       error: unknown pass 'frobnicate'; known passes: {{.*}}canonicalize{{.*}}shape-infer{{.*}}
// PIPE-NOT:   {{.}}
// ANCHOR-NOT: Traceback
// ANCHOR:     error: pass pipeline anchor 'func.func' is not supported; use builtin.module(...){{.*}}
// ANCHOR-NOT: {{.}}

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  return %arg0 : tensor<1x4xf32>
}
