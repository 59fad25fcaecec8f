//go:build race

package gormadapter

// raceEnabled: the test binary was built with -race, so a program the tests
// build with it reuses the packages already compiled.
const raceEnabled = true
