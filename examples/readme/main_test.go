package main

// Example runs the README's program (main.go, which docs/docs_test.go in
// the library module checks is identical to the README's copy). By hand:
// x·w = [[1+3, 2-3], [0, 1]], plus 0.5 gives the logits; the softmax of
// a row [a, b] is [1/(1+e^(b-a)), 1/(1+e^(a-b))]: 1/(1+e^-5) = 0.99331
// and 1/(1+e^1) = 0.26894; the update halves w.
func Example() {
	main()
	// Output:
	// logits: f32[2,2]
	// [[ 4.5 -0.5]
	//  [ 0.5  1.5]]
	// probabilities: [0.9933 0.0067 0.2689 0.7311]
	// w: f32[3,2]
	// [[ 0.5    0]
	//  [   0  0.5]
	//  [ 0.5 -0.5]]
	// main.go:64: MatMul(f32[2,3], f32[2,3]): inner dimensions 3 and 2 differ
}
