package node

import (
	"context"
	"testing"

	"github.com/mkube/mkube/apiserver/authorization"
)

func TestANodeCreatesAndWatchesItsOwnPodCertificateRequests(t *testing.T) {
	authz := New(testGraph())
	res := func(verb, group, resource, sub, name, selector string) authorization.Attributes {
		return authorization.Attributes{User: nodeUser("node01"), Verb: verb, ResourceRequest: true, APIGroup: group,
			Resource: resource, Subresource: sub, Namespace: "default", Name: name, FieldSelector: selector}
	}
	const certs = "certificates.k8s.io"
	tests := []struct {
		name   string
		a      authorization.Attributes
		want   authorization.Decision
		reason string
	}{
		{"a node creates a request, which NodeRestriction judges", res("create", certs, "podcertificaterequests", "", "", ""), authorization.Allow, ""},
		{"and watches those naming it", res("watch", certs, "podcertificaterequests", "", "", "spec.nodeName=node01"), authorization.Allow, ""},
		{"not another node's", res("list", certs, "podcertificaterequests", "", "", "spec.nodeName=node02"), authorization.NoOpinion,
			"can only list/watch podcertificaterequests with nodeName field selector"},
		{"not all of them", res("list", certs, "podcertificaterequests", "", "", ""), authorization.NoOpinion,
			"can only list/watch podcertificaterequests with nodeName field selector"},
		{"it may not write their status: that is the signer's", res("update", certs, "podcertificaterequests", "status", "req-1", ""), authorization.NoOpinion,
			"nodes may not access the status subresource of PodCertificateRequests"},
		{"nor delete them", res("delete", certs, "podcertificaterequests", "", "req-1", ""), authorization.NoOpinion,
			"nodes may not delete podcertificaterequests"},
		{"it reads its pod's service account, for its uid", res("get", "", "serviceaccounts", "", "web-sa", ""), authorization.Allow, ""},
		{"not another", res("get", "", "serviceaccounts", "", "default", ""), authorization.NoOpinion,
			"no relationship found between node 'node01' and this object"},
		{"it reads the ClusterTrustBundles, as system:node allows every node", authorization.Attributes{User: nodeUser("node01"), Verb: "watch",
			ResourceRequest: true, APIGroup: certs, Resource: "clustertrustbundles"}, authorization.Allow, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := authz.Authorize(context.Background(), tc.a)
			if err != nil || d != tc.want || reason != tc.reason {
				t.Errorf("Authorize = %v, %q, %v; want %v, %q", d, reason, err, tc.want, tc.reason)
			}
		})
	}
}
