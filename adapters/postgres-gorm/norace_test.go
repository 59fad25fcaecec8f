//go:build !race

package gormadapter

// raceEnabled: the test binary was built without -race.
const raceEnabled = false
