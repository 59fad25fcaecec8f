//go:build !race

package main

// raceEnabled: the test binary was built without -race.
const raceEnabled = false
