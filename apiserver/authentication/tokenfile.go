package authentication

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// TokenFile is --token-auth-file: static bearer tokens, one user each, in
// Kubernetes' CSV format, one line a token:
//
//	token,user,uid,"group1,group2"
//
// The groups column is optional. A file the API server cannot read, or a
// line with fewer than three columns, stops the API server at start, as it
// stops kube-apiserver; an empty token is skipped and a token given twice
// keeps its last line, each with a warning. The tokens never expire: they
// are for a learner's curl, not for production.
type TokenFile struct {
	users map[string]authenticationv1.UserInfo // by token
}

// ReadTokenFile reads and parses the token file at path.
func ReadTokenFile(path string, log *slog.Logger) (*TokenFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTokenFile(f, path, log)
}

// ParseTokenFile parses a token file's content; name is its path, for the
// messages.
func ParseTokenFile(r io.Reader, name string, log *slog.Logger) (*TokenFile, error) {
	if log == nil {
		log = slog.Default()
	}
	reader := csv.NewReader(r)
	reader.FieldsPerRecord = -1 // the groups column is optional
	tf := &TokenFile{users: map[string]authenticationv1.UserInfo{}}
	for n := 1; ; n++ {
		record, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return tf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("token file '%s': %w", name, err)
		}
		if len(record) < 3 {
			return nil, fmt.Errorf("token file '%s' must have at least 3 columns (token, user name, user uid), found %d", name, len(record))
		}
		if record[0] == "" {
			log.Warn(fmt.Sprintf("empty token has been found in token file '%s', record number '%d'", name, n))
			continue
		}
		if _, dup := tf.users[record[0]]; dup {
			log.Warn(fmt.Sprintf("duplicate token has been found in token file '%s', record number '%d'", name, n))
		}
		u := authenticationv1.UserInfo{Username: record[1], UID: record[2]}
		if len(record) >= 4 {
			for _, g := range strings.Split(record[3], ",") {
				if g != "" { // "" is no group (Kubernetes would keep a group named "")
					u.Groups = append(u.Groups, g)
				}
			}
		}
		tf.users[record[0]] = u
	}
}

// Len is how many tokens the file gives.
func (tf *TokenFile) Len() int { return len(tf.users) }

// AuthenticateToken is the file's user for token. A file's token names no
// audience: the union makes it good for the API server's only.
func (tf *TokenFile) AuthenticateToken(_ context.Context, token string, _ []string) (Response, bool, error) {
	u, ok := tf.users[token]
	if !ok {
		return Response{}, false, nil
	}
	u.Groups = append([]string(nil), u.Groups...) // the caller adds system:authenticated
	return Response{User: u}, true, nil
}
