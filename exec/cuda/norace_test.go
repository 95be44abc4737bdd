//go:build linux && !race

package cuda

const raceEnabled = false
