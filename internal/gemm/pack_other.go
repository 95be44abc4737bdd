//go:build !amd64 || noasm

package gemm

func copyRowsFast[T float](d, src []T, ld, rows, w int) bool { return rows == 0 }

func gatherFast[T float](d, src []T, ld, kb, w int) int { return 0 }

func copyPanelsFast[T float](d, src []T, ld, rows, w, panels int) bool {
	return rows == 0 || panels == 0
}
