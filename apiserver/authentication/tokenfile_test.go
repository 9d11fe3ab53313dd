package authentication

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func TestTheTokenFileIsKubernetesCSV(t *testing.T) {
	tests := []struct {
		name, file string
		token      string // looked up
		user, uid  string
		groups     []string
		err        string // the start fails saying so
	}{
		{name: "token, user, uid and quoted groups", file: "s3cret,alice,1001,\"dev,ops\"\n", token: "s3cret",
			user: "alice", uid: "1001", groups: []string{"dev", "ops"}},
		{name: "the groups column is optional", file: "t1,bob,1002\n", token: "t1", user: "bob", uid: "1002"},
		{name: "a token given twice keeps its last line", file: "t,first,1\nt,second,2\n", token: "t", user: "second", uid: "2"},
		{name: "an empty token is skipped, not an error", file: ",nobody,0\nt,bob,1\n", token: "", user: ""},
		{name: "an unknown token is nobody", file: "t,bob,1\n", token: "other", user: ""},
		{name: "fewer than three columns stops the start", file: "t,bob\n",
			err: "token file 'tokens.csv' must have at least 3 columns (token, user name, user uid), found 2"},
		{name: "a CSV error stops the start", file: "t,\"bob,1\n", err: "token file 'tokens.csv': parse error on line 1"},
		{name: "an empty file has no tokens", file: "", token: "t", user: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tf, err := ParseTokenFile(strings.NewReader(tc.file), "tokens.csv", slog.New(slog.DiscardHandler))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp, ok, err := tf.AuthenticateToken(context.Background(), tc.token, nil)
			if err != nil || ok != (tc.user != "") {
				t.Fatalf("AuthenticateToken(%q) = %+v, %v, %v", tc.token, resp, ok, err)
			}
			if u := resp.User; u.Username != tc.user || u.UID != tc.uid || !slices.Equal(u.Groups, tc.groups) {
				t.Fatalf("user %+v, want %s %s %v", u, tc.user, tc.uid, tc.groups)
			}
		})
	}
}

// FuzzParseTokenFile: any file either fails to parse or gives tokens that
// each name a user, and none of them is empty.
func FuzzParseTokenFile(f *testing.F) {
	for _, s := range []string{"a,b,c\n", "a,b,c,\"d,e\"\n", "\"", ",,,\n", "a,b\n", "x,y,z,\n\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file string) {
		tf, err := ParseTokenFile(strings.NewReader(file), "fuzz.csv", slog.New(slog.DiscardHandler))
		if err != nil {
			return
		}
		if _, ok := tf.users[""]; ok {
			t.Fatalf("the empty token names a user in %q", file)
		}
		for _, u := range tf.users {
			if slices.Contains(u.Groups, "") {
				t.Fatalf("a group named \"\" in %q", file)
			}
		}
	})
}
