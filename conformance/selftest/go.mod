module github.com/authport/authport/conformance/selftest

go 1.26

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/conformance v0.1.0
	github.com/authport/authport/core v0.1.0
)

replace (
	github.com/authport/authport/adapters/memory => ../../adapters/memory
	github.com/authport/authport/conformance => ../
	github.com/authport/authport/core => ../../core
)
