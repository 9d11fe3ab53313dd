package metricsserver

import (
	"mime"
	"net/http"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// tableVersion is the meta.k8s.io version of the Table a client asks for
// in its Accept header (kubectl get's "application/json;as=Table;v=v1;
// g=meta.k8s.io, application/json"), "" if it asks for none.
func tableVersion(r *http.Request) string {
	for _, accepted := range strings.Split(r.Header.Get("Accept"), ",") {
		_, params, err := mime.ParseMediaType(strings.TrimSpace(accepted))
		if err == nil && params["as"] == "Table" && params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1") {
			return params["v"]
		}
	}
	return ""
}

// usageTable is metrics-server's Table of nodes' or pods' usage: the
// name, one column per resource (cpu, memory), and the window; each row
// carries its object's metadata, as kubectl's default includeObject asks.
func usageTable(version string, names []string, metas []metav1.ObjectMeta, usages []corev1.ResourceList, windows []metav1.Duration) *metav1.Table {
	table := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/" + version}, Rows: []metav1.TableRow{}}
	var resources []string
	if len(usages) > 0 {
		for r := range usages[0] {
			resources = append(resources, string(r))
		}
		sort.Strings(resources)
	}
	table.ColumnDefinitions = []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name", Description: "Name of the resource"}}
	for _, r := range resources {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: r, Type: "string", Format: "quantity"})
	}
	table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: "Window", Type: "string", Format: "duration"})
	for i := range names {
		cells := []any{names[i]}
		for _, r := range resources {
			q := usages[i][corev1.ResourceName(r)]
			cells = append(cells, q.String())
		}
		cells = append(cells, windows[i].Duration.String())
		meta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"}, ObjectMeta: metas[i]}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: meta}})
	}
	return table
}

func nodeTable(version string, items []metricsv1beta1.NodeMetrics) *metav1.Table {
	var names []string
	var metas []metav1.ObjectMeta
	var usages []corev1.ResourceList
	var windows []metav1.Duration
	for _, m := range items {
		names, metas, usages, windows = append(names, m.Name), append(metas, m.ObjectMeta), append(usages, m.Usage), append(windows, m.Window)
	}
	return usageTable(version, names, metas, usages, windows)
}

// podTable sums each pod's containers' usage, as its Table shows it.
func podTable(version string, items []metricsv1beta1.PodMetrics) *metav1.Table {
	var names []string
	var metas []metav1.ObjectMeta
	var usages []corev1.ResourceList
	var windows []metav1.Duration
	for _, m := range items {
		sum := corev1.ResourceList{}
		for _, c := range m.Containers {
			for r, q := range c.Usage {
				total := sum[r]
				total.Add(q)
				sum[r] = total
			}
		}
		names, metas, usages, windows = append(names, m.Name), append(metas, m.ObjectMeta), append(usages, sum), append(windows, m.Window)
	}
	return usageTable(version, names, metas, usages, windows)
}
