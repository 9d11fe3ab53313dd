package storage_test

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// rejection is a request the server must refuse with 422, naming field
// first among the causes and saying message.
type rejection struct {
	name, method, path, contentType, body string
	field, message                        string
}

// post and mergePatch are the two requests the tables make most.
func post(name, path, body, field, message string) rejection {
	return rejection{name, http.MethodPost, path, "application/json", body, field, message}
}

func mergePatch(name, path, body, field, message string) rejection {
	return rejection{name, http.MethodPatch, path, "application/merge-patch+json", body, field, message}
}

func expectRejections(t *testing.T, s *testserver.Server, tests []rejection) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st metav1.Status
			if code := s.Do(tc.method, tc.path, tc.contentType, tc.body, &st); code != http.StatusUnprocessableEntity {
				t.Fatalf("got %d %s, want 422", code, st.Message)
			}
			if st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != tc.field || !strings.Contains(st.Message, tc.message) {
				t.Fatalf("got %q (details %+v), want %s: %s", st.Message, st.Details, tc.field, tc.message)
			}
		})
	}
}

// tableOf gets path as kubectl get does: the column names after Name,
// and each row's cells.
func tableOf(t *testing.T, s *testserver.Server, path string) (columns string, rows [][]any) {
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
