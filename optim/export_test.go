package optim

// Hooks for the external tests.
var DetLogForTest = detLog

func NewPCGForTest(initstate, initseq uint64) *Rand { return newPCG(initstate, initseq) }
