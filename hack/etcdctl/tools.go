//go:build tools

// Package tools pins the real etcdctl at the etcd release mkube's API
// server embeds (go.mod's go.etcd.io/etcd/server/v3). etcdctl's own
// go.mod replaces its sibling modules with local paths, so `go install
// ...@version` refuses it; a module of its own requires it instead, and
// `make bin/etcdctl` builds it from here.
package tools

import _ "go.etcd.io/etcd/etcdctl/v3"
