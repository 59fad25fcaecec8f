module github.com/authport/authport/conformance/selftest

go 1.26

require (
	github.com/authport/authport/adapters/memory v0.0.0-00010101000000-000000000000
	github.com/authport/authport/conformance v0.0.0-00010101000000-000000000000
	github.com/authport/authport/core v0.0.0-00010101000000-000000000000
)

replace (
	github.com/authport/authport/adapters/memory => ../../adapters/memory
	github.com/authport/authport/conformance => ../
	github.com/authport/authport/core => ../../core
)
