package app

import (
	"errors"
	"testing"
)

// A configuration that cannot be built says which part failed and
// releases what it had opened, whichever step it failed at.
func TestNewConfigFailsCleanlyAndNamesThePart(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		part string
	}{
		{"an unknown admission plugin", Options{EnableAdmissionPlugins: []string{"NoSuchPlugin"}}, "admission"},
		{"an unknown authorization mode", Options{AuthorizationModes: "NoSuchMode"}, "authorization"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.DataDir = t.TempDir()
			c, err := NewConfig(tc.opts)
			var e *Error
			if !errors.As(err, &e) || c != nil {
				t.Fatalf("NewConfig = %v, %v; want no config and an *Error", c, err)
			}
			if e.Step != tc.part {
				t.Errorf("the error names %q, want %q: %v", e.Step, tc.part, err)
			}
		})
	}
}
