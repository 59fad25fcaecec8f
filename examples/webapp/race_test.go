//go:build race

package main

// raceEnabled: the test binary was built with -race, so the program the
// tests build with it reuses the packages already compiled.
const raceEnabled = true
