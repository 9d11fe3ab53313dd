package catalog

import (
	"slices"
	"testing"
)

func TestPorterServesThePortsItsEnvironmentNames(t *testing.T) {
	tests := []struct {
		env  []string
		want []int32
	}{
		{nil, nil},
		{[]string{"SERVE_PORT_80=foo", "PATH=/bin"}, []int32{80}},
		{[]string{"SERVE_PORT_80=foo", "SERVE_TCP_PORT_81=bar", "SERVE_TCP_PORT_80=again"}, []int32{80, 81}},
		{[]string{"SERVE_TLS_PORT_443=tls", "SERVE_PORT_80=foo"}, []int32{443, 80}},
		{[]string{"SERVE_UDP_PORT_82=udp", "SERVE_SCTP_PORT_84=sctp"}, nil}, // not simulated
		{[]string{"SERVE_PORT_http=foo", "SERVE_PORT_0=foo", "SERVE_PORT_70000=foo", "SERVE_PORT_=foo"}, nil},
	}
	for _, tc := range tests {
		if got := porterPorts(tc.env); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.env, got, tc.want)
		}
	}
}
