# One command each: `make up` brings the control plane up in Docker,
# `make test` runs every test, `make local` runs it as local processes.
COMPOSE := $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
BINARIES := bin/apiserver bin/controller-manager bin/scheduler bin/kubelet

.PHONY: build image up down logs logs-once local test bench bench-scheduling bench-watch

build:
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o bin/ ./cmd/...

image: build
	docker build -q -t mkube:local .

up: image
	$(COMPOSE) up -d
	@echo "mkube is up: kubectl --server http://127.0.0.1:8080 get nodes"

down:
	$(COMPOSE) down -v

logs:
	$(COMPOSE) logs -f

local: build
	./hack/run-local.sh

test:
	go test ./...

bench:
	go test -run '^$$' -bench . -benchtime 2s ./store/ ./apiserver/

bench-scheduling:
	go test -run '^$$' -bench 'SchedulingBasic|SchedulerBacklog' -benchtime 1x -timeout 30m ./e2e/

# Watch fan-out as the perf anchors measured Kubernetes: the real apiserver
# binary, client-go watchers each on its own connection (see
# e2e/watch_bench_test.go; MKUBE_BENCH_1000_WATCHERS=1 adds 1000 watchers).
bench-watch:
	go test -run '^$$' -bench WatchFanoutClientGo -benchtime 1x -timeout 30m ./e2e/

logs-once:
	$(COMPOSE) logs --no-color --tail 40
