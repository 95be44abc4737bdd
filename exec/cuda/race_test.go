//go:build linux && race

package cuda

// raceEnabled: the race detector allocates on its own account.
const raceEnabled = true
