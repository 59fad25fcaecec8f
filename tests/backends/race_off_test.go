//go:build !race

package backends

// race is whether this test binary was built with -race; the adapters'
// tests are then run with -race too (and reuse the build cache of their
// own runs).
const race = false
