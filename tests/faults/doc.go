// Package faults is authport's fault-injection test: it starts private
// database servers on ports of its own (PostgreSQL, MariaDB, Redis, a
// three-master Redis Cluster and the MongoDB stand-in), runs a mixed load of
// eight workers through each adapter, restarts the server or breaks its
// connections (latency, resets and a black hole through an in-process
// toxiproxy) in the middle of the load, and then reads what the server
// really holds with its own driver to count acknowledged writes lost and
// deleteUser cascades left partial.
//
// Everything lives in the test (TestFaults); run it with
//
//	eval "$(scripts/services.sh)"   # for AUTHPORT_MONGOSTANDIN_BIN
//	cd tests/faults && GOWORK=off go test -race -run TestFaults -v .
//
// See README.md for what is measured and the figures.
package faults
