package client_test

import (
	"fmt"

	"github.com/mkube/mkube/client"
)

// Path turns a resource, a namespace and a name into the URL the API server
// serves them at: core kinds live under /api/v1, the others under
// /apis/GROUP/VERSION, and cluster-scoped kinds ignore the namespace.
func ExampleResource_Path() {
	fmt.Println(client.Pods.Path("", ""))                            // every pod, in all namespaces
	fmt.Println(client.Pods.Path("default", ""))                     // the pods of one namespace
	fmt.Println(client.Pods.Path("default", "web-1"))                // one pod
	fmt.Println(client.Pods.Path("default", "web-1", "binding"))     // a subresource
	fmt.Println(client.ReplicaSets.Path("default", "web", "status")) // a named group's kind
	fmt.Println(client.Nodes.Path("default", "node01"))              // cluster-scoped: no namespace
	// Output:
	// /api/v1/pods
	// /api/v1/namespaces/default/pods
	// /api/v1/namespaces/default/pods/web-1
	// /api/v1/namespaces/default/pods/web-1/binding
	// /apis/apps/v1/namespaces/default/replicasets/web/status
	// /api/v1/nodes/node01
}
