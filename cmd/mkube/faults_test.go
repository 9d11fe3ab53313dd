package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

func TestFaultCommandUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"crash needs a pod", []string{"crash"}, "expected one pod name, got 0 words"},
		{"freeze takes one node", []string{"freeze", "node01", "node02"}, "expected one node name, got 2 words"},
		{"the exit code is a number", []string{"crash", "web", "--exit", "x"}, `invalid value "x" for flag -exit`},
		{"an unknown subcommand prints the usage", []string{"restart", "web"}, "mkube crash POD [-c CONTAINER] [--exit N]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tt.args, &stdout, &stderr); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestQuoteArgs(t *testing.T) {
	if got, want := quoteArgs([]string{"nginx", "-g", "daemon off;"}), `nginx -g "daemon off;"`; got != want {
		t.Errorf("quoteArgs = %s, want %s", got, want)
	}
}

func TestFlagsMayComeBeforeTheCommand(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--server", "http://x", "crash", "web"}, []string{"crash", "web", "--server", "http://x"}},
		{[]string{"--server=http://x", "oom", "web", "-c", "c"}, []string{"oom", "web", "-c", "c", "--server=http://x"}},
		{[]string{"inspect", "web"}, []string{"inspect", "web"}},
		{[]string{"--server", "http://x"}, nil},
	} {
		if got := commandFirst(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("commandFirst(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
