# Shortcuts for the repository's commands; each target says what it runs.
.PHONY: test ci conformance doc

# go test -race over every module of go.work, with the databases named by
# the AUTHPORT_*_URL variables (tests of the others skip and say why).
test:
	go test -race github.com/authport/authport/...

# Everything CI runs (.ci/run): starts the databases, gofmt, vet, go mod
# tidy, actionlint, npm ci, tests (replaying the fuzz corpora), the consumer
# check, the summary (tools/ci).
ci:
	./scripts/test.sh

# The main job: the conformance matrix of spec method x backend.
conformance:
	./scripts/conformance.sh

# go doc at the root (which is no module) through a module of go.work:
# make doc PKG=handler, make doc PKG=core/provider SYM=GitHub
doc:
	go -C core doc github.com/authport/authport/$(or $(PKG),core) $(SYM)
