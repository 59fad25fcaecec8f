module github.com/authport/authport/adapters/mapstore

go 1.26.0

require github.com/authport/authport/core v0.1.0

require github.com/authport/authport/conformance v0.1.0

replace (
	github.com/authport/authport/conformance => ../../conformance
	github.com/authport/authport/core => ../../core
)
