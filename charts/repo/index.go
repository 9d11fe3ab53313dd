package repo

import (
	"maps"
	"sort"
	"time"

	"sigs.k8s.io/yaml"
)

// index is index.yaml: apiVersion v1, each chart's versions by name,
// and when the index was generated.
type index struct {
	APIVersion string                      `json:"apiVersion"`
	Entries    map[string][]map[string]any `json:"entries"`
	Generated  string                      `json:"generated"`
}

// Index makes index.yaml for charts. An entry is the chart's Chart.yaml
// with what the repository adds: urls (relative to the repository's URL,
// which Helm resolves against the URL it was added with, so the same
// index serves at any address), created and digest. Charts are by name;
// the versions of one name keep the order given (Helm sorts them again
// by semantic version).
func Index(charts []Chart, generated time.Time) ([]byte, error) {
	idx := index{APIVersion: "v1", Entries: map[string][]map[string]any{}, Generated: generated.UTC().Format(time.RFC3339Nano)}
	sorted := append([]Chart(nil), charts...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, c := range sorted {
		entry := maps.Clone(c.Metadata)
		entry["urls"] = []string{c.FileName()}
		entry["created"] = c.Created.Format(time.RFC3339Nano)
		entry["digest"] = c.Digest
		idx.Entries[c.Name] = append(idx.Entries[c.Name], entry)
	}
	return yaml.Marshal(idx)
}
