// Package selftest proves that the conformance suite can fail: its tests run
// the suite against deliberately broken variants of the memory adapter and
// check that each fails at the subtest naming the rule it breaks.
//
// It is a module of its own so that the conformance module, which every
// adapter's tests import, does not depend on the memory adapter.
package selftest
