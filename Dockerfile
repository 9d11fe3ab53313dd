# mkube's image holds only static binaries: its programs, and the real
# crictl to look into each node's runtime. This machine kind has no
# registry to pull a base image from, and nothing else is needed. Build
# them first (make image does): CGO_ENABLED=0 go build -o bin/ ./cmd/...
FROM scratch
COPY bin/apiserver bin/controller-manager bin/scheduler bin/kubelet bin/runtime bin/mkube bin/dashboard bin/crictl /
COPY hack/crictl.yaml /etc/crictl.yaml
