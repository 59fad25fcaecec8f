// Package newbackend follows CONTRIBUTING.md's "Adding a backend" step by
// step with a template adapter (testdata/mapstore: users and database
// sessions in Go maps), in a copy of the repository, and then runs what CI
// runs on a backend: the table of backends as the test command reads it,
// the conformance suite through the matrix, and the release's consumer
// check. It has tests only, and uses the standard library and the go
// command.
package newbackend
