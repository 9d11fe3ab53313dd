package e2e

import (
	"strings"
	"testing"
)

// networking.k8s.io with the real kubectl: two IngressClasses, the
// default one given to an Ingress that names none, kubectl get's columns
// for the four kinds, and an Ingress Kubernetes would refuse.
const ingressManifests = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations:
    ingressclass.kubernetes.io/is-default-class: "true"
spec:
  controller: k8s.io/ingress-nginx
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: external
spec:
  controller: example.com/ingress-controller
  parameters:
    apiGroup: k8s.example.com
    kind: IngressParameters
    name: external-lb
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  tls:
  - hosts: [web.example.com]
    secretName: web-tls
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
---
apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata:
  name: 10.96.100.100
spec:
  parentRef:
    resource: services
    namespace: default
    name: web
`

const badIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: bad
spec:
  rules:
  - host: 10.0.0.1
    http:
      paths:
      - path: api
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
`

func TestIngressesIngressClassesAndServiceCIDRs(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)

	out := k.mustKubectl(t, "api-resources", "--api-group", "networking.k8s.io")
	tab := parseTable(t, out)
	if row := tab.row(t, "NAME", "ingresses"); row["SHORTNAMES"] != "ing" || row["NAMESPACED"] != "true" || row["KIND"] != "Ingress" {
		t.Fatalf("kubectl api-resources: %v", row)
	}
	for _, kind := range []string{"ingressclasses", "servicecidrs", "ipaddresses"} {
		if row := tab.row(t, "NAME", kind); row["NAMESPACED"] != "false" {
			t.Fatalf("kubectl api-resources: %v", row)
		}
	}

	k.mustKubectl(t, "apply", "-f", k.manifest(t, "ingress.yaml", ingressManifests))

	out = k.mustKubectl(t, "get", "ingressclass")
	t.Logf("kubectl get ingressclass\n%s", out)
	tab = parseTable(t, out)
	if row := tab.row(t, "NAME", "nginx (default)"); row["CONTROLLER"] != "k8s.io/ingress-nginx" || row["PARAMETERS"] != "<none>" {
		t.Fatalf("kubectl get ingressclass: %v", row)
	}
	if row := tab.row(t, "NAME", "external"); row["PARAMETERS"] != "IngressParameters.k8s.example.com/external-lb" {
		t.Fatalf("kubectl get ingressclass: %v", row)
	}

	out = k.mustKubectl(t, "get", "ing")
	t.Logf("kubectl get ing\n%s", out)
	if row := parseTable(t, out).row(t, "NAME", "web"); row["CLASS"] != "nginx" || row["HOSTS"] != "web.example.com" ||
		row["ADDRESS"] != "" || row["PORTS"] != "80, 443" {
		t.Fatalf("kubectl get ing (DefaultIngressClass gives the default class): %v", row)
	}

	out = k.mustKubectl(t, "get", "servicecidr")
	t.Logf("kubectl get servicecidr\n%s", out)
	if row := parseTable(t, out).row(t, "NAME", "kubernetes"); row["CIDRS"] != "10.96.0.0/12" {
		t.Fatalf("kubectl get servicecidr: %v", row)
	}
	out = k.mustKubectl(t, "get", "ipaddress")
	if row := parseTable(t, out).row(t, "NAME", "10.96.100.100"); row["PARENTREF"] != "services/default/web" {
		t.Fatalf("kubectl get ipaddress: %v", row)
	}

	errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "bad.yaml", badIngress))
	for _, want := range []string{`spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`,
		`spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("kubectl apply of an invalid ingress: %s\nwant %s", errOut, want)
		}
	}
}
