module github.com/authport/authport/tests/selftest

go 1.26.0

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/conformance v0.1.0
	github.com/authport/authport/core v0.1.0
)

require (
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/adapters/memory => ../../adapters/memory
	github.com/authport/authport/conformance => ../../conformance
	github.com/authport/authport/core => ../../core
)
