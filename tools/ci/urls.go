package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// backend is one row of the table of backends,
// conformance/backendtable/backends.json (see that package for the
// fields): the backend's name (its AUTHPORT_SERVICES and AUTHPORT_REQUIRE
// name), the module whose TestConformance runs it, how its server starts,
// the variable the tests read and the URL of the server this program
// provides on this machine. This program reads the file of the checkout
// it works on, so that it needs nothing beyond the standard library and
// sees a row as soon as it is added.
type backend struct {
	Name      string          `json:"name"`
	Title     string          `json:"title"`
	Module    string          `json:"module"`
	Env       string          `json:"env"`
	Form      string          `json:"form"`
	URL       string          `json:"url"`
	Start     string          `json:"start"`
	Container json.RawMessage `json:"container"`
	Drivers   []string        `json:"drivers"`
}

// tablePath is where the table of backends lives, from the repository root.
const tablePath = "conformance/backendtable/backends.json"

// How a backend's server starts (backend.Start).
const (
	startEmbedded = "embedded" // nothing to start
	startServices = "services" // this program's step of the backend's name
	startExternal = "external" // someone else's server: its variable is passed through
)

// readBackends reads the table of backends of the checkout at repo.
func readBackends(repo string) ([]backend, error) {
	data, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(tablePath)))
	if err != nil {
		return nil, fmt.Errorf("the table of backends: %w", err)
	}
	var file struct{ Backends []backend }
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", tablePath, err)
	}
	for _, b := range file.Backends {
		switch {
		case b.Name == "" || b.Module == "":
			return nil, fmt.Errorf("%s: a row without name or module: %+v", tablePath, b)
		case b.Start != startEmbedded && b.Start != startServices && b.Start != startExternal:
			return nil, fmt.Errorf("%s: %s: start %q (want %s, %s or %s)", tablePath, b.Name, b.Start, startEmbedded, startServices, startExternal)
		case b.Start != startEmbedded && b.Env == "":
			return nil, fmt.Errorf("%s: %s starts %s but names no variable (env)", tablePath, b.Name, b.Start)
		}
	}
	return file.Backends, nil
}

// backendNamed returns the row of the table named name.
func backendNamed(table []backend, name string) (backend, bool) {
	for _, b := range table {
		if b.Name == name {
			return b, true
		}
	}
	return backend{}, false
}

// The ports of the Redis Cluster and the first port tried for the MongoDB
// stand-in, when AUTHPORT_REDIS_CLUSTER_PORTS and AUTHPORT_MONGODB_PORT do
// not move them; the table's URLs name these. The Sentinel and PostgreSQL
// HA deployments are tools/ha's, on its default ports: `ci services`
// exports the URL tools/ha prints, and says so when it differs from the
// table's.
const (
	defaultClusterPorts = "7001 7002 7003"
	defaultMongoPort    = 27018
)

// clusterURL is the AUTHPORT_REDIS_CLUSTER_URL of nodes on ports.
func clusterURL(ports []int) string {
	addrs := make([]string, len(ports))
	for i, p := range ports {
		addrs[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	return strings.Join(addrs, ",")
}

// mongoURL is the AUTHPORT_MONGODB_URL of the stand-in on port.
func mongoURL(port int) string { return fmt.Sprintf("mongodb://127.0.0.1:%d/", port) }

// portsFromEnv reads the ports of the Redis Cluster and the first port of
// the MongoDB stand-in from AUTHPORT_REDIS_CLUSTER_PORTS (space-separated)
// and AUTHPORT_MONGODB_PORT, where set.
func portsFromEnv() (cluster []int, mongo int, err error) {
	ports := orDefault(os.Getenv("AUTHPORT_REDIS_CLUSTER_PORTS"), defaultClusterPorts)
	for f := range strings.FieldsSeq(ports) {
		p, err := strconv.Atoi(f)
		if err != nil {
			return nil, 0, fmt.Errorf("AUTHPORT_REDIS_CLUSTER_PORTS=%q: %q is no port", ports, f)
		}
		cluster = append(cluster, p)
	}
	mongo = defaultMongoPort
	if v := os.Getenv("AUTHPORT_MONGODB_PORT"); v != "" {
		if mongo, err = strconv.Atoi(v); err != nil || mongo <= 0 || mongo > 65525 {
			return nil, 0, fmt.Errorf("AUTHPORT_MONGODB_PORT=%q: want a port number", v)
		}
	}
	return cluster, mongo, nil
}
