//go:build !race

package cudagen

// raceEnabled: the race detector is on (the host tests, which run the
// kernels in another process, are skipped under it).
const raceEnabled = false
