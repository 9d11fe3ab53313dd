package cri

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// newID returns a fresh sandbox or container ID: 64 random hex digits, as
// containerd makes them. crictl shows the first 13.
func newID() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand's contract since Go 1.24)
	return hex.EncodeToString(b)
}

// find returns the object whose ID is id or, as containerd allows, starts
// with id, so the short IDs crictl prints work in every call. kind names
// the object in errors: `container "1a2b" not found`.
func find[T any](m map[string]*T, kind, id string) (string, *T, error) {
	if id == "" {
		return "", nil, status.Errorf(codes.InvalidArgument, "%s ID is required", kind)
	}
	if obj, ok := m[id]; ok {
		return id, obj, nil
	}
	var found string
	for full := range m {
		if strings.HasPrefix(full, id) {
			if found != "" {
				return "", nil, status.Errorf(codes.InvalidArgument, "%s ID prefix %q is ambiguous", kind, id)
			}
			found = full
		}
	}
	if found == "" {
		return "", nil, status.Errorf(codes.NotFound, "%s %q not found", kind, id)
	}
	return found, m[found], nil
}

// matchLabels reports whether labels has every key and value of selector,
// the only label selection CRI filters know.
func matchLabels(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
