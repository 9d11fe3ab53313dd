// Package podnetwork is mkube's CNI plugin: it stands in for flannel
// over the host-local IPAM and bridge plugins. It gives each pod its IP
// and routes every other node's pod CIDR to that node, so that every pod
// reaches every other pod at its IP, without NAT, whichever node runs it
// (Kubernetes' network model).
//
// It serves step 12 of the pod creation flow in seed 000 (the kubelet
// asks the runtime for the pod's sandbox, which gets its network
// namespace and IP here), and seed 003's Pod chapter: "each Pod is an
// instance of the application, with its own IP", "the pods of different
// nodes talk over a virtual layer-2 network", "2.3 a flat network: every
// Pod reaches the others at their IP".
//
// Two programs use it, as flannel has two halves. The runtime (cri)
// holds the node's side: its PodIPs, its RouteTable, and the Node, which
// plays the node's kernel: the bridge to the sandboxes, where a
// container's connection meets kube-proxy's rules (network/proxy) and
// then the routes. The runtime tells the Node about its sandboxes
// (Sandboxes) and serves it over gRPC (PodNetwork). The kubelet plays
// flannel's daemon: it writes its runtime's peer address on its Node
// and keeps the runtime's routes in step with the Nodes (RouteSync). The
// sockets that carry the pods' connections are podnet's.
//
// Where things live:
//
//	file           what it holds (the real component's part)
//	ipam.go        PodIPs: the pod CIDR's addresses handed to sandboxes (the host-local IPAM plugin)
//	bridge.go      Node, Sandboxes: the node's bridge, a connection to a pod of this node, and the PodNetwork Dial call (the bridge plugin's veths)
//	outbound.go    DialOut and route: where a connection goes, host ports and Services first, then local pods or a peer (the portmap plugin, the kernel's nat table and routes)
//	datagrams.go   UDP: datagrams to a pod of this node, and the Dial calls that carry them
//	routes.go      RouteTable: the runtime's routes to the other nodes' pod CIDRs (flannel's routes and tunnel)
//	peers.go       the kubelet's half (flannel's daemon): the Node's peer annotation, and RouteSync, which watches the Nodes and sets the routes
//	podnet/        the simulated sockets: connections to pods through a runtime's PodNetwork, and in memory
package podnetwork
