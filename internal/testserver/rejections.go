package testserver

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Rejection is a request the server must refuse with 422, naming Field
// first among the causes and saying Message.
type Rejection struct {
	Name, Method, Path, ContentType, Body string
	Field, Message                        string
}

// Post and MergePatch are the two requests rejection tables make most.
func Post(name, path, body, field, message string) Rejection {
	return Rejection{name, http.MethodPost, path, "application/json", body, field, message}
}

func MergePatch(name, path, body, field, message string) Rejection {
	return Rejection{name, http.MethodPatch, path, "application/merge-patch+json", body, field, message}
}

// ExpectRejections runs each request as a subtest.
func ExpectRejections(t *testing.T, s *Server, tests []Rejection) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			var st metav1.Status
			if code := s.Do(tc.Method, tc.Path, tc.ContentType, tc.Body, &st); code != http.StatusUnprocessableEntity {
				t.Fatalf("got %d %s, want 422", code, st.Message)
			}
			if st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != tc.Field || !strings.Contains(st.Message, tc.Message) {
				t.Fatalf("got %q (details %+v), want %s: %s", st.Message, st.Details, tc.Field, tc.Message)
			}
		})
	}
}

// TableOf gets path as kubectl get does: the column names after Name,
// and each row's cells.
func TableOf(t *testing.T, s *Server, path string) (columns string, rows [][]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if code := s.DoRequest(req, &table); code != http.StatusOK {
		t.Fatalf("get %s as a table: %d", path, code)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	for _, r := range table.Rows {
		rows = append(rows, r.Cells)
	}
	return strings.Join(names, " "), rows
}
