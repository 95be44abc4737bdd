//go:build !amd64 || noasm

package cpu

func maxRows2x2(y, x *float32, rows, w, ow int) int { panic("unreachable") }

func maxGradRows2x2(dx, x, gy *float32, rows, w, ow int) int { panic("unreachable") }

func pool2x2Asm() bool { return false }
