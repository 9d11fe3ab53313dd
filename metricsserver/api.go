package metricsserver

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

const (
	metricsGroup   = "metrics.k8s.io"
	metricsVersion = "v1beta1"
	groupVersion   = metricsGroup + "/" + metricsVersion
	apiPrefix      = "/apis/" + groupVersion
)

// requestInfo is what authorization and routing need of a request.
type requestInfo struct {
	verb, path                string
	resource, namespace, name string // resource "" is a non-resource path
}

// newRequestInfo reads the metrics group's paths:
// /apis/metrics.k8s.io/v1beta1/nodes[/NAME],
// /apis/metrics.k8s.io/v1beta1/pods and
// /apis/metrics.k8s.io/v1beta1/namespaces/NS/pods[/NAME].
func newRequestInfo(r *http.Request) requestInfo {
	info := requestInfo{verb: strings.ToLower(r.Method), path: r.URL.Path}
	rest, ok := strings.CutPrefix(strings.TrimSuffix(r.URL.Path, "/"), apiPrefix+"/")
	if !ok {
		return info
	}
	parts := strings.Split(rest, "/")
	if len(parts) >= 3 && parts[0] == "namespaces" {
		info.namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		info.resource = parts[0]
	case 2:
		info.resource, info.name = parts[0], parts[1]
	default:
		return info
	}
	if r.Method == http.MethodGet {
		info.verb = "get"
		if info.name == "" {
			info.verb = "list"
			if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
				info.verb = "watch"
			}
		}
	}
	return info
}

// apiGroup is the group's discovery document.
func apiGroup() metav1.APIGroup {
	v := metav1.GroupVersionForDiscovery{GroupVersion: groupVersion, Version: metricsVersion}
	return metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: metricsGroup,
		Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}
}

// apiResources is the version's discovery document: nodes and pods, get
// and list only, as metrics-server serves them.
func apiResources() metav1.APIResourceList {
	verbs := metav1.Verbs{"get", "list"}
	return metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: groupVersion,
		APIResources: []metav1.APIResource{
			{Name: "nodes", SingularName: "", Namespaced: false, Kind: "NodeMetrics", Verbs: verbs},
			{Name: "pods", SingularName: "", Namespaced: true, Kind: "PodMetrics", Verbs: verbs},
		}}
}

// selectors are the list's labelSelector and fieldSelector.
func selectors(r *http.Request) (labels.Selector, fields.Selector, error) {
	q := r.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	return ls, fs, nil
}

// nodeMetrics is a node's NodeMetrics, false until it has a usage.
func (s *Server) nodeMetrics(node *corev1.Node) (metricsv1beta1.NodeMetrics, bool) {
	u, ok := s.storage.NodeUsage(node.Name)
	if !ok {
		return metricsv1beta1.NodeMetrics{}, false
	}
	return metricsv1beta1.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: node.Labels, CreationTimestamp: metav1.NewTime(s.clock.Now())},
		Timestamp:  metav1.NewTime(u.Timestamp), Window: metav1.Duration{Duration: u.Window}, Usage: u.Resources,
	}, true
}

// podMetrics is a pod's PodMetrics, false until every container has a usage.
func (s *Server) podMetrics(pod *corev1.Pod) (metricsv1beta1.PodMetrics, bool) {
	usages, ok := s.storage.PodUsage(PodRef{Namespace: pod.Namespace, Name: pod.Name})
	if !ok {
		return metricsv1beta1.PodMetrics{}, false
	}
	m := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels,
		CreationTimestamp: metav1.NewTime(s.clock.Now())}}
	for name, u := range usages {
		m.Timestamp, m.Window = metav1.NewTime(u.Timestamp), metav1.Duration{Duration: u.Window}
		m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: name, Usage: u.Resources})
	}
	sort.Slice(m.Containers, func(i, j int) bool { return m.Containers[i].Name < m.Containers[j].Name })
	return m, true
}

// serveResource answers get and list of nodes and pods.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, info requestInfo) {
	if info.verb != "get" && info.verb != "list" {
		writeAPIError(w, apierrors.NewMethodNotSupported(schema.GroupResource{Group: metricsGroup, Resource: info.resource}, info.verb))
		return
	}
	ls, fs, err := selectors(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	// As metrics-server: a get of an object its informers do not have is
	// their lister's NotFound (node "x", pods "x"); of one without
	// metrics yet, its own (nodemetrics.metrics.k8s.io "x").
	gr := schema.GroupResource{Group: metricsGroup, Resource: map[string]string{"nodes": "nodemetrics", "pods": "podmetrics"}[info.resource]}
	if info.name != "" && !s.follows(info) {
		writeAPIError(w, apierrors.NewNotFound(schema.GroupResource{Resource: map[string]string{"nodes": "node", "pods": "pods"}[info.resource]}, info.name))
		return
	}
	switch info.resource {
	case "nodes":
		list := metricsv1beta1.NodeMetricsList{TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: groupVersion}}
		for _, node := range s.nodes() {
			if info.name != "" && node.Name != info.name || !ls.Matches(labels.Set(node.Labels)) || !fs.Matches(fields.Set{"metadata.name": node.Name}) {
				continue
			}
			if m, ok := s.nodeMetrics(node); ok {
				m.TypeMeta = metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: groupVersion}
				list.Items = append(list.Items, m)
			}
		}
		answer(w, r, gr, info, list.Items, &list, nodeTable)
	case "pods":
		list := metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: groupVersion}}
		for _, pod := range s.pods() {
			if info.namespace != "" && pod.Namespace != info.namespace || info.name != "" && pod.Name != info.name ||
				!ls.Matches(labels.Set(pod.Labels)) || !fs.Matches(fields.Set{"metadata.name": pod.Name, "metadata.namespace": pod.Namespace}) {
				continue
			}
			if m, ok := s.podMetrics(pod); ok {
				m.TypeMeta = metav1.TypeMeta{Kind: "PodMetrics", APIVersion: groupVersion}
				list.Items = append(list.Items, m)
			}
		}
		answer(w, r, gr, info, list.Items, &list, podTable)
	default:
		writeAPIError(w, apierrors.NewNotFound(schema.GroupResource{}, ""))
	}
}

// answer writes the list, or for a get its one item or NotFound; as a
// Table (of table) if the client asks for one.
func answer[T any](w http.ResponseWriter, r *http.Request, gr schema.GroupResource, info requestInfo, items []T, list any,
	table func(version string, items []T) *metav1.Table) {
	if info.name != "" && len(items) == 0 {
		writeAPIError(w, apierrors.NewNotFound(gr, info.name))
		return
	}
	switch v := tableVersion(r); {
	case v != "":
		writeJSON(w, http.StatusOK, table(v, items))
	case info.name == "":
		writeJSON(w, http.StatusOK, list)
	default:
		writeJSON(w, http.StatusOK, items[0])
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(data, '\n'))
}

// writeAPIError answers with err's Status (500 for an error that is not
// an API error).
func writeAPIError(w http.ResponseWriter, err error) {
	st := apierrors.APIStatus(apierrors.NewInternalError(err))
	if s, ok := err.(apierrors.APIStatus); ok {
		st = s
	}
	status := st.Status()
	status.Kind, status.APIVersion = "Status", "v1"
	writeJSON(w, int(status.Code), status)
}

// follows says whether the informers have the node or pod info names.
func (s *Server) follows(info requestInfo) bool {
	switch info.resource {
	case "nodes":
		_, ok := s.nodeInf.Cache().Get(info.name)
		return ok
	case "pods":
		_, ok := s.podInf.Cache().Get(info.namespace + "/" + info.name)
		return ok
	}
	return true
}
