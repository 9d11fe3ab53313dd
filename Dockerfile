# mkube's image holds only its four static binaries: this machine kind has
# no registry to pull a base image from, and nothing else is needed.
# Build the binaries first (make image does): CGO_ENABLED=0 go build -o bin/ ./cmd/...
FROM scratch
COPY bin/apiserver bin/controller-manager bin/scheduler bin/kubelet /
