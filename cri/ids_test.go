package cri

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestFindByIDOrPrefix(t *testing.T) {
	m := map[string]*int{"abc123": new(int), "abd456": new(int), "ab": new(int)}
	tests := []struct {
		name, id, want string
		code           codes.Code
	}{
		{"a full ID finds its object", "abc123", "abc123", codes.OK},
		{"a unique prefix finds its object, as with crictl's short IDs", "abd", "abd456", codes.OK},
		{"an ID that is also a prefix of another finds itself", "ab", "ab", codes.OK},
		{"a prefix of two IDs is ambiguous", "a", "", codes.InvalidArgument},
		{"an unknown ID is not found", "xyz", "", codes.NotFound},
		{"an empty ID is refused", "", "", codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := find(m, "container", tt.id)
			if status.Code(err) != tt.code || got != tt.want {
				t.Errorf("find(%q) = %q, %v; want %q, code %s", tt.id, got, err, tt.want, tt.code)
			}
		})
	}
}
