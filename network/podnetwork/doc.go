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
// # Nodes' addresses
//
// On Kubernetes a pod reaches every node's IP: its kubelet on 10250 (as
// metrics-server scrapes /metrics/resource), a NodePort, a hostNetwork
// pod's port; the node's kernel masquerades the pod's packets to the
// node's address and sends them out on the host's network. Here a
// connection from a container to an address of any Node's
// status.addresses (the IPs the kubelet's Proxier learns from the Nodes
// it watches, network/proxy's node_ips) is dialled on the host's real
// network by the runtime, from this node's own address when the host has
// it, after the hostPorts and kube-proxy's rules (a NodePort still goes
// to its endpoints). A hostNetwork pod's servers are simulated, not on
// the host: a pod reaches them only through a hostPort or a Service.
//
// The single-host setups give each node an address of its own, so that
// a node's address is not the pod's loopback: `make local` runs its
// kubelets with --node-ip 127.0.0.2, .3 and .4 (on Linux all of 127/8 is
// the host's loopback; elsewhere it falls back to 127.0.0.1 for every
// node, whose pods then cannot reach the nodes). A pod's loopback is
// 127.0.0.1 (localhost) and any other 127/8 address that is no Node's: a
// Node's 127.0.0.N is the host, a small departure from a real network
// namespace, where all of 127/8 is the pod's own. A node at 127.0.0.1
// (the e2e clusters' default, --node-ip 127.0.0.1) stays unreachable
// from pods, as before. The API server reaches the kubelets at their
// Node's addresses and port (they listen on every address), so logs,
// exec and port-forward are unchanged. docker compose gives each node's runtime
// container a fixed address on the compose network, shared with its
// kubelet (network_mode service:), and the kubelet reports it with
// --node-ip, as a real node reports its host's address.
//
// Where things live:
//
//	file           what it holds (the real component's part)
//	ipam.go        PodIPs: the pod CIDR's addresses handed to sandboxes (the host-local IPAM plugin)
//	bridge.go      Node, Sandboxes: the node's bridge, a connection to a pod of this node, and the PodNetwork Dial call (the bridge plugin's veths)
//	outbound.go    DialOut and route: where a connection goes, host ports and Services first, then a Node's address on the host's network, local pods or a peer (the portmap plugin, the kernel's nat table and routes)
//	datagrams.go   UDP: datagrams to a pod of this node, and the Dial calls that carry them
//	routes.go      RouteTable: the runtime's routes to the other nodes' pod CIDRs (flannel's routes and tunnel)
//	peers.go       the kubelet's half (flannel's daemon): the Node's peer annotation, and RouteSync, which watches the Nodes and sets the routes
//	podnet/        the simulated sockets: connections to pods through a runtime's PodNetwork, and in memory
package podnetwork
