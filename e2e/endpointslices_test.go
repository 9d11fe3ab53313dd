package e2e

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Two pods behind a Service, each ready while its /tmp/ready exists: the
// EndpointSlice controller lists both in one slice, and a readiness
// probe failing or passing again flips that pod's conditions.ready,
// which `kubectl describe service` shows (kubectl 1.32 reads the
// Service's EndpointSlices for it, not its Endpoints).
const sliceManifests = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: busybox:1.36
        command: [sh, -c, "touch /tmp/ready; sleep 3600"]
        ports:
        - name: http
          containerPort: 8080
        readinessProbe:
          exec:
            command: [cat, /tmp/ready]
          periodSeconds: 1
          failureThreshold: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: http
`

// describeEndpoints is the Endpoints line of `kubectl describe service`.
var describeEndpoints = regexp.MustCompile(`(?m)^Endpoints:\s+(.*)$`)

func TestEndpointSlicesFollowReadiness(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)

	out := k.mustKubectl(t, "api-resources", "--api-group", "discovery.k8s.io")
	if row := parseTable(t, out).row(t, "NAME", "endpointslices"); row["APIVERSION"] != "discovery.k8s.io/v1" ||
		row["NAMESPACED"] != "true" || row["KIND"] != "EndpointSlice" {
		t.Fatalf("kubectl api-resources: %v", row)
	}

	k.mustKubectl(t, "apply", "-f", k.manifest(t, "web.yaml", sliceManifests))
	// podIPs maps the Deployment's pods to their IPs, once both have one.
	var ipOf map[string]string
	testserver.EventuallyWithin(t, 60*time.Second, "both pods have an IP", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.podIP}{"\n"}{end}`)
		ipOf = map[string]string{}
		for _, line := range strings.Fields(out) {
			name, ip, _ := strings.Cut(line, "=")
			if ip != "" {
				ipOf[name] = ip
			}
		}
		return len(ipOf) == 2, out
	})
	var names, ips []string
	for name, ip := range ipOf {
		names, ips = append(names, name), append(ips, ip)
	}
	sort.Strings(names)
	sort.Strings(ips)

	// conditions lists each endpoint of the Service's slices as
	// pod=ready, sorted.
	conditions := func() string {
		out, _, _ := k.kubectl(t, "get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o",
			`jsonpath={range .items[*].endpoints[*]}{.targetRef.name}={.conditions.ready}{"\n"}{end}`)
		lines := strings.Fields(out)
		sort.Strings(lines)
		return strings.Join(lines, " ")
	}
	var described string // the last kubectl describe service web
	endpointsLine := func() string {
		described = k.mustKubectl(t, "describe", "service", "web")
		m := describeEndpoints.FindStringSubmatch(described)
		if m == nil {
			return ""
		}
		return strings.TrimSpace(m[1])
	}
	bothReady := names[0] + "=true " + names[1] + "=true"
	testserver.EventuallyWithin(t, 60*time.Second, "both pods are ready endpoints", func() (bool, string) {
		got := conditions()
		return got == bothReady, got
	})

	out = k.mustKubectl(t, "get", "endpointslices", "-l", "kubernetes.io/service-name=web")
	t.Logf("kubectl get endpointslices -l kubernetes.io/service-name=web\n%s", out)
	tab := parseTable(t, out)
	if len(tab.rows) != 1 {
		t.Fatalf("one slice for two pods:\n%s", out)
	}
	row := tab.rows[0]
	if !strings.HasPrefix(row["NAME"], "web-") || row["ADDRESSTYPE"] != "IPv4" || row["PORTS"] != "8080" ||
		!sameStrings(strings.Split(row["ENDPOINTS"], ","), ips) {
		t.Fatalf("kubectl get endpointslices: %v, want web-xxxxx, IPv4, 8080, %v", row, ips)
	}
	if got, want := endpointsLine(), ips[0]+":8080,"+ips[1]+":8080"; !sameStrings(strings.Split(got, ","), strings.Split(want, ",")) {
		t.Errorf("kubectl describe service web: Endpoints: %s, want %s", got, want)
	}

	// The first pod's readiness probe fails: it stays in the slice, not
	// ready, and describe lists only the other.
	k.mustKubectl(t, "exec", names[0], "--", "rm", "/tmp/ready")
	testserver.EventuallyWithin(t, 30*time.Second, names[0]+" is not ready", func() (bool, string) {
		got := conditions()
		return got == names[0]+"=false "+names[1]+"=true", got
	})
	t.Logf("after kubectl exec %s -- rm /tmp/ready:\n%s", names[0],
		k.mustKubectl(t, "get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o",
			`custom-columns=POD:.endpoints[*].targetRef.name,READY:.endpoints[*].conditions.ready`))
	if got, want := endpointsLine(), ipOf[names[1]]+":8080"; got != want {
		t.Errorf("kubectl describe service web: Endpoints: %s, want only the ready pod, %s", got, want)
	}
	t.Logf("kubectl describe service web\n%s", described)

	// Ready again.
	k.mustKubectl(t, "exec", names[0], "--", "touch", "/tmp/ready")
	testserver.EventuallyWithin(t, 30*time.Second, names[0]+" is ready again", func() (bool, string) {
		got := conditions()
		return got == bothReady, got
	})

	// The slices go with their Service, by the garbage collector.
	k.mustKubectl(t, "delete", "service", "web")
	testserver.EventuallyWithin(t, 30*time.Second, "the Service's slices are deleted", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "get", "endpointslices", "-l", "kubernetes.io/service-name=web")
		return strings.Contains(errOut, "No resources found"), out + errOut
	})
}
