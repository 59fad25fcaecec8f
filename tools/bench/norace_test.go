//go:build !race

package main

// raceDecodeAllocs are the allocations the race detector adds to a JWT's
// decode: none without it.
const raceDecodeAllocs = 0
