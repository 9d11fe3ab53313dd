# One command each: `make up` brings the control plane up in Docker,
# `make test` runs every test, `make local` runs it as local processes.
# `make tools` installs the real clients the tests drive (crictl, helm,
# the real metrics-server).
COMPOSE := $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
BINARIES := bin/apiserver bin/controller-manager bin/scheduler bin/kubelet bin/runtime

.PHONY: build image up down up-ha down-ha logs logs-once local prometheus tools test bench bench-scheduling bench-watch bench-kubelet bench-metrics bench-dashboard proto conformance

build:
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o bin/ ./cmd/...

image: build bin/crictl
	docker build -q -t mkube:local .

# The add-ons are applied once the API server answers, with the host's
# kubectl, as a learner applies them (no image of kubectl can be pulled).
up: image
	$(COMPOSE) up -d
	@for i in $$(seq 120); do curl -sf http://127.0.0.1:8080/readyz >/dev/null && break; sleep 0.5; done
	@if command -v kubectl >/dev/null; then \
		kubectl --server http://127.0.0.1:8080 apply -f addons/metrics-server.yaml; \
	else \
		echo "kubectl is not installed: apply addons/metrics-server.yaml yourself for kubectl top"; \
	fi
	@echo "mkube is up: kubectl --server http://127.0.0.1:8080 get nodes"
	@echo "  the dashboard: http://127.0.0.1:8090 (docs/dashboard.md)"

down:
	$(COMPOSE) down -v

# The highly available control plane (docker-compose.ha.yml, docs/ha.md):
# three API servers, each with its etcd member, behind `mkube lb` at
# https://127.0.0.1:6443. A project of its own, mkube-ha, beside `make up`'s.
COMPOSE_HA := $(COMPOSE) -f docker-compose.ha.yml -p mkube-ha

up-ha: image bin/etcdctl
	$(COMPOSE_HA) up -d
	@for p in 8081 8082 8083; do for i in $$(seq 240); do curl -sf http://127.0.0.1:$$p/readyz >/dev/null && break; sleep 0.5; done; done
	bin/etcdctl --endpoints http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793 member list -w table
	@echo "mkube HA is up: kubectl --server http://127.0.0.1:8081 get nodes (cp1; cp2 and cp3 are 8082, 8083)"
	@echo "  kill a member: $(COMPOSE_HA) kill -s KILL cp3 (docs/ha.md)"

down-ha:
	$(COMPOSE_HA) down -v

logs:
	$(COMPOSE) logs -f

local: build
	./hack/run-local.sh

# The real Prometheus (apt-get install prometheus) on the host, at
# http://127.0.0.1:9090, scraping every component of the cluster `make
# local` or `make up` runs, with addons/prometheus/prometheus.yml
# (prometheus-compose.yml for `make up`; the token, the CA and the data
# in mkube-data/prometheus; docs/observing.md).
prometheus:
	COMPOSE="$(COMPOSE)" ./hack/run-prometheus.sh

# The real crictl, which e2e/crictl_test.go drives against bin/runtime,
# and the real helm: Helm 4 as bin/helm, Helm 3 as bin/helm3 (both are in
# use; e2e/helm_test.go drives each against a cluster and `mkube
# serve-charts`). File targets, so each is built once; `rm bin/helm` to
# rebuild it. Both helm modules name their command helm: Helm 3 is
# installed into a directory of its own, then renamed. The real
# metrics-server v0.8.0 likewise, as bin/metrics-server-v0.8.0, since
# bin/metrics-server is mkube's own (cmd/metrics-server);
# e2e/metricsserver_upstream_test.go runs it against a cluster. The real
# etcdctl, at the etcd release the API server embeds (e2e/ha_test.go
# lists the members of an HA cluster with it; docs/ha.md), is built from
# a module of its own, hack/etcdctl: etcdctl's go.mod replaces its sibling
# modules with local paths, which `go install ...@version` refuses.
tools: bin/crictl bin/helm bin/helm3 bin/metrics-server-v0.8.0 bin/etcdctl

bin/crictl:
	CGO_ENABLED=0 GOBIN=$(CURDIR)/bin go install sigs.k8s.io/cri-tools/cmd/crictl@v1.37.0

bin/etcdctl:
	cd hack/etcdctl && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o ../../bin/etcdctl go.etcd.io/etcd/etcdctl/v3

bin/helm:
	CGO_ENABLED=0 GOBIN=$(CURDIR)/bin go install helm.sh/helm/v4/cmd/helm@v4.3.2

bin/helm3:
	CGO_ENABLED=0 GOBIN=$(CURDIR)/bin/helm3.d go install helm.sh/helm/v3/cmd/helm@v3.21.4
	mv bin/helm3.d/helm bin/helm3 && rmdir bin/helm3.d

bin/metrics-server-v0.8.0:
	CGO_ENABLED=0 GOBIN=$(CURDIR)/bin/metrics-server.d go install sigs.k8s.io/metrics-server/cmd/metrics-server@v0.8.0
	mv bin/metrics-server.d/metrics-server bin/metrics-server-v0.8.0 && rmdir bin/metrics-server.d

# mkube's own runtime service (proto/runtime.proto) as Go, which is
# committed, so only a change to the .proto needs this: protoc from
# Debian's protobuf-compiler (apt-get install protobuf-compiler), the Go
# plugins at the versions go.mod's protobuf and grpc modules match.
PROTOC_GEN_GO := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12-0.20260120151049-f2248ac996af
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2

proto:
	GOBIN=$(CURDIR)/bin go install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/bin go install $(PROTOC_GEN_GO_GRPC)
	protoc --plugin=protoc-gen-go=bin/protoc-gen-go --plugin=protoc-gen-go-grpc=bin/protoc-gen-go-grpc \
		--go_out=. --go_opt=module=github.com/mkube/mkube \
		--go-grpc_out=. --go-grpc_opt=module=github.com/mkube/mkube \
		proto/runtime.proto

# The end-to-end package starts about a hundred clusters, each its own
# processes on free ports; its tests run side by side (t.Parallel), six
# at a time: most of their time is waiting on probes, back-offs and
# grace periods, not CPU. The 30-minute bound ends a hung test.
test: tools
	go test -timeout 30m -parallel 6 ./...

bench:
	go test -run '^$$' -bench . -benchtime 2s ./store/ ./apiserver/

bench-scheduling:
	go test -run '^$$' -bench 'SchedulingBasic|SchedulerBacklog' -benchtime 1x -timeout 30m ./e2e/

# Watch fan-out as the perf anchors measured Kubernetes: the real apiserver
# binary, client-go watchers each on its own connection (see
# e2e/watch_bench_test.go; MKUBE_BENCH_1000_WATCHERS=1 adds 1000 watchers).
bench-watch:
	go test -run '^$$' -bench WatchFanoutClientGo -benchtime 1x -timeout 30m ./e2e/

# Pod startup latency (create → Running at 100 pods/s over 100 nodes) and
# one kubelet holding 5,000 nodes and 150,000 pods (e2e/kubelet_bench_test.go;
# MKUBE_BENCH_NODES=500 for a quick look).
bench-kubelet: build
	go test -run '^$$' -bench 'PodStartup|KubeletDensity|Probes' -benchtime 1x -timeout 60m ./e2e/

# The metrics pipeline's cost: one scrape of each component's /metrics
# (and the kubelet's /metrics/cadvisor and /metrics/resource) after
# 3,000 pods; the metrics server scraping 1,000 nodes' 30,000 pods every
# 15 s (e2e/metrics_bench_test.go, e2e/metricsserver_bench_test.go;
# MKUBE_BENCH_NODES=50 for a quick look); the HPA controller's time per
# autoscaler at 1,000 (in-process, MKUBE_BENCH_HPAS to change it).
bench-metrics: build
	go test -run '^$$' -bench 'MetricsScrape|MetricsServer' -benchtime 1x -timeout 60m ./e2e/
	go test -run '^$$' -bench HPASyncRound -benchtime 10x -timeout 30m ./controllermanager/podautoscaler/

# The dashboard's own CPU (the ramp, the steady state) and RSS with one
# kubelet holding 5,000 nodes and 150,000 bound pods, and the size of the
# snapshot a new browser gets (e2e/dashboard_bench_test.go;
# MKUBE_BENCH_NODES=300 for a quick look).
bench-dashboard: build
	go test -run '^$$' -bench DashboardDensity -benchtime 1x -timeout 60m ./e2e/

logs-once:
	$(COMPOSE) logs --no-color --tail 40

# Kubernetes' own [Conformance] specs against mkube: hack/conformance is a
# module of its own (the suite never enters mkube's go.mod). The suite's
# binary is built once, about 11 minutes on 2 cores; `rm bin/e2e.test` to
# rebuild it. Not part of `make test`. Example:
#   make conformance FOCUS='\[sig-apps\].*\[Conformance\]' PARALLEL=2
FOCUS ?= \[Conformance\]
SKIP ?=
PARALLEL ?= 2

conformance: build bin/e2e.test
	cd hack/conformance && go build -o ../../bin/conformance ./runner
	bin/conformance -focus '$(FOCUS)' -skip '$(SKIP)' -parallel $(PARALLEL)

# The suite reads its own version, as Kubernetes' build stamps it
# (hack/lib/version.sh), here from hack/conformance/go.mod: the
# PodCertificate specs pick their pod fixture by it, and an unstamped
# binary is v0.0, for which there is none.
bin/e2e.test:
	cd hack/conformance && v=$$(go list -m -f '{{.Version}}' k8s.io/kubernetes) && pkg=k8s.io/component-base/version && \
	go test -c -ldflags "-X $$pkg.gitMajor=1 -X $$pkg.gitMinor=$$(echo $$v | cut -d. -f2) -X $$pkg.gitVersion=$$v -X $$pkg.gitTreeState=clean" \
		-o ../../bin/e2e.test k8s.io/kubernetes/test/e2e
