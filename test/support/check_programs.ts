// Check-dialect programs that more than one test runs.

/** Two devices summing [1, 2] and [10, 20] with an all-reduce (`interpreter.run_parallel`), checking the second device's [11, 22]: a case that needs a client of two devices. */
export const RUN_PARALLEL_SUM = `func.func @sum(%x: tensor<2xi64>) -> tensor<2xi64> {
  %s = "stablehlo.all_reduce"(%x) ({
    ^bb0(%l: tensor<i64>, %r: tensor<i64>):
      %t = stablehlo.add %l, %r : tensor<i64>
      stablehlo.return %t : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}
func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
  %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@sum], [@sum]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  check.expect_eq_const %r#1, dense<[11, 22]> : tensor<2xi64>
  func.return
}`;
