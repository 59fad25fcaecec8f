// Package backends runs the conformance suite of every database adapter on
// databases started through testcontainers-go: PostgreSQL and MariaDB
// (adapters/postgres-gorm), Redis (adapters/redis) and MongoDB
// (adapters/mongodb). It has tests only.
//
// It is a module of its own so that testcontainers-go, and the Docker client
// it brings, stay out of every adapter's module graph: an adapter's
// consumers never see them in their go.sum. For each backend,
// TestConformanceContainers starts a container and runs that adapter's own
// TestConformance against it (with AUTHPORT_<BACKEND>_URL pointing at the
// container), so the suite runs with the adapter's own harness, raw view
// and all, and nothing is copied here.
//
// The backends, their modules, variables and images are the rows of the
// table of backends (conformance/backendtable) that name a container image;
// this module holds how each is started. Images: AUTHPORT_POSTGRES_IMAGE,
// AUTHPORT_MYSQL_IMAGE, AUTHPORT_REDIS_IMAGE and AUTHPORT_MONGODB_IMAGE, by
// default the official postgres:17, mariadb:11, redis:7 and mongo:7
// (MongoDB as a one-member replica set, so that the adapter's transaction
// path runs). Images under localhost/ are the
// ones tools/containers builds from Debian's packages (scripts/services.sh
// runs it): one-start PostgreSQL, and the MongoDB stand-in, which has no
// replica set.
//
// The container engine is whatever testcontainers-go finds (DOCKER_HOST, a
// Docker socket, podman's). Without one the tests skip, or fail when
// AUTHPORT_REQUIRE is "all" or names "containers".
package backends
