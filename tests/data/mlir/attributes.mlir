#loc = loc(unknown)
module attributes {module.chip = "ALL"} {
  func.func private @ext(tensor<4xf32>) -> tensor<4xf32> loc(#loc)
  func.func @main(%arg0: tensor<4xf32> {tpu.arg = 1 : i64} loc(unknown)) -> (tensor<4xf32>, tensor<*xf32>) attributes {sym.note = "x"} {
    %0 = "x.attrs"() {"a key" = 1 : i32, arr = [1, 2, -3], arr_f = [1.500000e+00, -2.250000e+00, 1.000000e-05], arr_mixed = [1 : i32, 2.000000e+00 : f32, "s", [], [[1]]], b = false, bf = 1.000000e+00 : bf16, d_f = dense<[1.500000e+00, 2.500000e+00]> : tensor<2xf32>, d_i = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, d_s = dense<0.000000e+00> : tensor<3x3xf32>, da = array<i32: -1, 2>, da_e = array<i64>, dict = {a = "b", z = 1 : i64}, e = 1.000000e+300 : f64, f16v = 6.500240e-02 : f16, f32v = 1.000000e-01 : f32, h = 0x7FC00000 : f32, i1v = true, idx = 7 : index, inf = 0x7FF0000000000000 : f64, neg = -0.000000e+00 : f64, s = "tab\09quote\22nl\0A\E4\B8\AD", si = -8 : si8, sym = @ext, t = tensor<?x3xf32>, tn = none, ty = (i32, f32) -> tensor<2xi1>, u, ui = 255 : ui8, v = 1.2345678901229999 : f64} : () -> tensor<4xf32> loc(#loc1)
    %1 = "top.Reshape"(%0) {shape = [-1]} : (tensor<4xf32>) -> tensor<*xf32> loc(#loc2)
    %2 = "x.multi"(%1) {g = #tpu.lg<out_addr = 0, out_size = 0, buffer_addr = 0, buffer_size = 0, eu_align = true, can_merge = false, in_hslice_offset = [], n_idx = [], n_slice = [], c_idx = [], c_slice = [], d_idx = [], d_slice = [], h_idx = [], h_slice = [], w_idx = [], w_slice = [], id = 3, stage = 0, slice_idx = 0, group_type = 0>, q = #tpu<rq_mode OnlyShift>} : (tensor<*xf32>) -> tensor<4xf32, 4096 : i64> loc(#loc3)
    return %0, %1 : tensor<4xf32>, tensor<*xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("attrs")
#loc2 = loc("reshape")
#loc3 = loc("multi")
