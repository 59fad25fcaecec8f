package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// backend is one test database: its service name (AUTHPORT_SERVICES), the
// variable the tests read (conformance/provision), and the URL of the
// server this program provides on this machine.
type backend struct {
	service, env, url string
}

// The one table of default backend URLs. The Redis Cluster's and the MongoDB
// stand-in's ports can be moved (AUTHPORT_REDIS_CLUSTER_PORTS,
// AUTHPORT_MONGODB_PORT). The Sentinel and PostgreSQL HA deployments are
// tools/ha's, on its default ports: `ci services` exports the URL tools/ha
// prints, and says so when it differs from the one here.
const (
	postgresURL      = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	mysqlURL         = "root@tcp(127.0.0.1:3306)/test?parseTime=true"
	redisURL         = "redis://127.0.0.1:6379/0"
	redisSentinelURL = "redis://127.0.0.1:26390/0?master_name=authport&addr=127.0.0.1:26391&addr=127.0.0.1:26392"
	postgresHAURL    = "postgres://postgres@127.0.0.1:5441,127.0.0.1:5442/test?target_session_attrs=read-write&sslmode=disable"

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

// backends is the table, with the default ports.
func backends() []backend {
	return []backend{
		{"postgres", "AUTHPORT_POSTGRES_URL", postgresURL},
		{"mysql", "AUTHPORT_MYSQL_URL", mysqlURL},
		{"redis", "AUTHPORT_REDIS_URL", redisURL},
		{"redis-cluster", "AUTHPORT_REDIS_CLUSTER_URL", clusterURL([]int{7001, 7002, 7003})},
		{"redis-sentinel", "AUTHPORT_REDIS_SENTINEL_URL", redisSentinelURL},
		{"postgres-ha", "AUTHPORT_POSTGRES_HA_URL", postgresHAURL},
		{"mongodb", "AUTHPORT_MONGODB_URL", mongoURL(defaultMongoPort)},
	}
}

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
