// Package podnet is the pod network's simulated sockets: the client's
// end of the runtime's pod network (proto/runtime.proto's PodNetwork,
// network/podnetwork's bridge.go), and the in-memory connections of one node's own pods.
// On a real node these are the kernel's sockets over the pods' veths and
// the node's bridge; here no container really runs, so a TCP connection
// to a pod's IP and port is carried by one Dial call, a stream of frames
// each way.
//
// The kubelet reaches its pods' servers with it, for probes, hooks and
// port-forwarding; a runtime reaches the pods of another node with it,
// through that node's runtime, as an overlay network's tunnel would
// (network/podnetwork's routes.go). What the caller gets is a net.Conn
// that behaves as a TCP connection does (deadlines, half-close, Go's own
// error texts), so that net/http's client, with its Timeout, runs over
// it unchanged.
//
// Where things live:
//
//	file          what it holds
//	conn.go       Dial: a TCP connection through a PodNetwork Dial call, and Go's dial errors for it
//	datagram.go   DialUDP and DatagramConn: a connected UDP socket, its datagrams one per frame
//	pipe.go       Pipe: an in-memory TCP connection between the node (or a pod) and a pod of this node
//	protocol.go   NetworkOf: a Kubernetes protocol's Go network name ("TCP" is "tcp")
package podnet
