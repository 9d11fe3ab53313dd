package runtimev1

// The messages a PodNetwork Dial that cannot connect fails with, with
// code UNAVAILABLE: the text of the errno a real connect(2) returns, so
// that the kubelet turns them back into Go's own errors
// ("dial tcp 10.244.0.5:8080: connect: connection refused").
const (
	// ConnectionRefused is ECONNREFUSED: the pod has the IP, but nothing
	// in it listens on the port.
	ConnectionRefused = "connect: connection refused"
	// NoRouteToHost is EHOSTUNREACH: no pod has the IP.
	NoRouteToHost = "connect: no route to host"
)
