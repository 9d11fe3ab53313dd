package authentication

import (
	"strings"
	"testing"
)

func TestTheBearerTokenIsReadAsKubernetesReadsIt(t *testing.T) {
	tests := []struct {
		name, header, token string
		ok                  bool
	}{
		{"a bearer token", "Bearer abc.def.ghi", "abc.def.ghi", true},
		{"the scheme in any case", "bearer abc", "abc", true},
		{"spaces around the header are trimmed", "  Bearer abc  ", "abc", true},
		{"what follows a space after the token is ignored", "Bearer abc def", "abc", true},
		{"no header is no token", "", "", false},
		{"Bearer alone is no token", "Bearer", "", false},
		{"Bearer and a space is no token", "Bearer ", "", false},
		{"two spaces before the token is no token", "Bearer  abc", "", false},
		{"another scheme is no token", "Basic YWRtaW46YWRtaW4=", "", false},
		{"a scheme that only starts like Bearer is no token", "Bearerish abc", "", false},
		{"a tab is not the separator", "Bearer\tabc", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if token, ok := ParseBearer(tc.header); token != tc.token || ok != tc.ok {
				t.Fatalf("ParseBearer(%q) = %q, %v; want %q, %v", tc.header, token, ok, tc.token, tc.ok)
			}
		})
	}
}

// FuzzParseBearer: a token read from a header is never empty, has no
// space in it and is in the header after "Bearer "; and any token without
// spaces sent as "Bearer <token>" reads back as itself.
func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  x", "Basic a b", "", " Bearer\u00a0a ", "BEARER a b c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		token, ok := ParseBearer(header)
		if ok && (token == "" || strings.Contains(token, " ") || !strings.Contains(strings.ToLower(header), "bearer "+strings.ToLower(token))) {
			t.Fatalf("ParseBearer(%q) = %q", header, token)
		}
		if !ok && token != "" {
			t.Fatalf("ParseBearer(%q) = %q but not ok", header, token)
		}
		if strings.ContainsAny(header, " \t\n\v\f\r\u0085\u00a0") || header == "" {
			return
		}
		if got, ok := ParseBearer("Bearer " + header); !ok || got != header {
			t.Fatalf(`ParseBearer("Bearer %s") = %q, %v`, header, got, ok)
		}
	})
}
