// Package network is the map of mkube's pod network: where a Service's
// ClusterIP turns into a pod's IP, and where a pod's DNS name is
// answered. It holds no code; its packages stand in for the three
// components a real cluster runs for it:
//
//	package              stands in for                  what it does
//	network/podnetwork   flannel (a CNI plugin)         gives each pod its IP; routes other nodes' pod CIDRs to them
//	network/proxy        kube-proxy                     turns a ClusterIP or NodePort into a ready endpoint
//	network/dns          CoreDNS, the kubelet's DNS     writes a pod's resolv.conf; answers Service and pod names
//	                     configurer
//	network/tablesync    (the loop flannel's daemon and kube-proxy share: watch, compute, push)
//
// Each has two halves, as on a real node: the kubelet watches the API
// (Nodes, Services, EndpointSlices) as those daemons do, and pushes
// tables to the runtime (cri), which plays the node's kernel: no
// container really runs, so the runtime carries its containers'
// connections itself (network/podnetwork/podnet's sockets).
//
// A ClusterIP becomes a pod here. Say `kubectl expose deployment web
// --port 80 --target-port 8080` gave Service web the ClusterIP
// 10.96.0.20, and a pod runs `curl web`:
//
//  1. curl asks the cluster DNS for web: its resolv.conf (network/dns's
//     configurer.go) searches web.default.svc.cluster.local first, and
//     the node's answer (network/dns's resolver.go, zone.go) is
//     10.96.0.20.
//  2. The EndpointSlice controller (controllermanager/endpointslice)
//     has listed web's ready pods; the kubelet's Proxier
//     (network/proxy's proxier.go) has given them to the runtime as
//     rules: 10.96.0.20:80 → 10.88.0.5:8080, 10.88.0.6:8080.
//  3. curl connects to 10.96.0.20:80; the node's route
//     (network/podnetwork's outbound.go) asks the rules' Translate
//     (network/proxy's rules.go), which picks one: 10.88.0.6:8080. Here
//     the ClusterIP became a pod's IP.
//  4. The pod IP was handed out by network/podnetwork's ipam.go. If it
//     is this node's, the bridge connects to the container that
//     listens on 8080 (network/podnetwork's bridge.go, asking the
//     runtime which one: cri/network.go); if it is in another node's pod
//     CIDR, the route to it (network/podnetwork's routes.go, set by
//     the kubelet from the Nodes in peers.go) sends the connection to
//     that node's runtime, which does the same.
//
// A NodePort works the same from step 3, for a connection to any
// node's InternalIP at the port.
package network
