#loc = loc(unknown)
module attributes {module.FLOPs = 2560000 : i64, module.asymmetric = false, module.chip = "bm1684x", module.cores = 1 : i64, module.devices = 1 : i64, module.inputs = ["input"], module.mode = "F32", module.name = "conv2d", module.outputs = ["output_Conv"], module.platform = "ONNX", module.state = "TPU_ADDRESSED", module.weight_file = "conv2d_tpu_addressed_bm1684x_f32_weight.npz"} {
  module @conv2d attributes {module.coeff_addr = 618475290624 : i64, module.coeff_size = 45056 : i64, module.device_id = 0 : i64, module.neuron_addr = 687194767360 : i64, module.neuron_size = 2560000 : i64, module.step = 0 : i64} {
    func.func @main(%arg0: tensor<4x16x100x100xf32, 687194767360 : i64> loc(unknown)) -> tensor<4x65x100x100xf32, 687197327360 : i64> attributes {id = 0 : i64, mode = #tpu<run_mode TPU_STATIC>, next_index = array<i32: -1>} {
      %0 = "top.Weight"() : () -> tensor<1x65x16x9xf32, 618475290624 : i64> loc(#loc1)
      %1 = "top.Weight"() : () -> tensor<1x65x1x1xf32, 618475331584 : i64> loc(#loc2)
      %2:2 = "tpu.Group"(%arg0, %0, %1) ({
        %4 = "tpu.Load"(%arg0) {do_bcast = false, ginfo = #tpu.lg<out_addr = 0, out_size = 40000, buffer_addr = 0, buffer_size = 0, eu_align = true, can_merge = false, in_hslice_offset = [], n_idx = [0], n_slice = [4], c_idx = [0], c_slice = [16], d_idx = [0], d_slice = [1], h_idx = [0], h_slice = [100], w_idx = [0], w_slice = [100], id = 0, stage = 0, slice_idx = 0, group_type = 0>, lmem_type = 0 : i64} : (tensor<4x16x100x100xf32, 687194767360 : i64>) -> tensor<4x16x100x100xf32> loc(#loc4)
        %5 = "tpu.Conv2D"(%4, %0, %1) {coeff_merged = false, dilations = [1, 1], do_relu = false, dynweight_reorderd = false, group = 1 : i64, kernel_shape = [3, 3], kernel_zp = 0 : i64, pads = [1, 1, 1, 1], quant_mode = #tpu<rq_mode MultiplierShift>, relu_limit = -1.000000e+00 : f64, strides = [1, 1], use_3ic_optimize = 0 : i64, weight_is_coeff = 1 : i64, with_bias = true} : (tensor<4x16x100x100xf32>, tensor<1x65x16x9xf32, 618475290624 : i64>, tensor<1x65x1x1xf32, 618475331584 : i64>) -> tensor<4x65x100x100xf32> loc(#loc5)
        %6 = "tpu.Store"(%5, %arg0) {ginfo = #tpu.lg<out_addr = 40960, out_size = 162500, buffer_addr = 0, buffer_size = 0, eu_align = true, can_merge = false, in_hslice_offset = [], n_idx = [0], n_slice = [4], c_idx = [0], c_slice = [65], d_idx = [0], d_slice = [1], h_idx = [0], h_slice = [100], w_idx = [0], w_slice = [100], id = 1, stage = 2, slice_idx = 0, group_type = 0>} : (tensor<4x65x100x100xf32>, tensor<4x16x100x100xf32, 687194767360 : i64>) -> tensor<4x65x100x100xf32, 687197327360 : i64> loc(#loc6)
        "tpu.Yield"(%6, %6) : (tensor<4x65x100x100xf32, 687197327360 : i64>, tensor<4x65x100x100xf32, 687197327360 : i64>) -> () loc(#loc)
      }) {csecs = 1 : i64, dsecs = 1 : i64, flow = [-1, 0, -2, 1, -3, 2], group_type = 0 : i64, hsecs = 1 : i64, nsecs = 1 : i64, other_down_overlap_op = [], other_up_overlap_op = [], run_core_id = [], self_down_overlap_op = [], self_up_overlap_op = [], swpipl_stage_num = 3 : i64, wsecs = 1 : i64} : (tensor<4x16x100x100xf32, 687194767360 : i64>, tensor<1x65x16x9xf32, 618475290624 : i64>, tensor<1x65x1x1xf32, 618475331584 : i64>) -> (tensor<4x65x100x100xf32, 687197327360 : i64>, tensor<4x65x100x100xf32, 687197327360 : i64>) loc(#loc3)
      %3 = "tpu.Add"(%2#0, %2#1) {do_relu = false, multipliers = [1, 1], relu_limit = -1.000000e+00 : f64, rshifts = [0, 0]} : (tensor<4x65x100x100xf32, 687197327360 : i64>, tensor<4x65x100x100xf32, 687197327360 : i64>) -> tensor<4x65x100x100xf32, 687197327360 : i64> loc(#loc7)
      return %3 : tensor<4x65x100x100xf32, 687197327360 : i64> loc(#loc)
    } loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("weight")
#loc2 = loc("bias")
#loc3 = loc("fused_group_0")
#loc4 = loc("load_input")
#loc5 = loc("output_Conv")
#loc6 = loc("output_Conv_store")
#loc7 = loc("output_Add")
