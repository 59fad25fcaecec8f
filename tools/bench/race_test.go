//go:build race

package main

// raceDecodeAllocs are the allocations the race detector adds to a JWT's
// decode (its sync.Pool drops some of what it is given).
const raceDecodeAllocs = 2
