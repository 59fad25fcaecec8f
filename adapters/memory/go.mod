module github.com/authport/authport/adapters/memory

go 1.26

require github.com/authport/authport/core v0.0.0-00010101000000-000000000000

replace github.com/authport/authport/core => ../../core

require github.com/authport/authport/conformance v0.0.0-00010101000000-000000000000

replace github.com/authport/authport/conformance => ../../conformance
