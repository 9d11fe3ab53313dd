// Package catalog is scenery: what images contain, as far as a simulated
// container can tell: the configuration a real image's manifest gives
// (ENTRYPOINT, CMD, ENV, WORKDIR, EXPOSE, STOPSIGNAL), a few of its files,
// and its own programs, written as shell.Programs that print what the
// real software prints and hold what it holds (ports, memory) until it is
// stopped, with the servers that answer connections to their ports. The
// runtime reaches it through package images.
//
// Nothing is downloaded: the catalog is a table of well-known images, the
// ones Kubernetes' docs and tutorials use. A tag does not change what an
// image holds (nginx:1.25 runs the catalog's one nginx); only the tag
// "doesnotexist" and hosts under ".invalid" fail to pull, so that
// ErrImagePull and ImagePullBackOff can be shown. The programs are
// written with package lib (net/http on one connection, pflag's flags,
// klog's lines); the sample API server is a package of its own,
// sampleapiserver, which testimages.go registers, and so is the metrics
// server, metricsserver, which metricsserver.go registers.
//
// Where things live:
//
//	file                   what it holds
//	catalog.go             Image, the table of images (Lookup, Names),
//	                       their sizes (Size), PullError, and the stand-in
//	                       for an unknown image
//	serve.go               Server, DatagramServer and Running: how an
//	                       image answers a connection to its ports; the
//	                       access log's fields
//	serve_grpc.go          a gRPC server on one connection, and telling
//	                       HTTP/2 from HTTP/1.1 on one port
//	base.go                the base images: busybox, alpine, ubuntu,
//	                       debian, pause
//	servers.go             nginx, httpd, redis, mysql, postgres: their
//	                       programs' logs and stop signals
//	website.go             nginx's and httpd's static web server
//	redis.go               what redis answers on its port (PING)
//	stress.go              polinux/stress: memory and CPU hogs
//	autoscaling.go         hpa-example (the HPA walkthrough's php-apache),
//	                       and what a request costs the servers in CPU
//	resourceconsumer.go    resource-consumer, the HPA tests' load: CPU,
//	                       memory and custom metrics on demand
//	consumerctrl.go        agnhost's resource-consumer-controller (and
//	                       the image's /controller), which spreads a load
//	                       over the consumers
//	etcd.go                registry.k8s.io/etcd, for the gRPC probe example
//	goproxy.go             registry.k8s.io/goproxy, for the TCP probe example
//	metricsserver.go       registry.k8s.io/metrics-server/metrics-server:
//	                       mkube's metrics server in a pod
//	testimages.go          Kubernetes' test images besides agnhost:
//	                       nonewprivs, kitten and nautilus, sample-apiserver
//	agnhost.go             agnhost: its subcommands, and what liveness,
//	                       netexec, test-webserver, serve-hostname and
//	                       pause serve
//	agnhost_flags.go       agnhost's flag parsing and errors, as cobra and
//	                       pflag word them
//	agnhost_dial.go        netexec's /dial: a pod reaching another
//	agnhost_udp.go         netexec's and serve-hostname's UDP servers
//	agnhost_dns.go         dns-suffix, dns-server-list, etc-hosts
//	agnhost_grpc.go        grpc-health-checking
//	agnhost_guestbook.go   guestbook, the kubectl tests' three tiers
//	agnhost_issuer.go      test-service-account-issuer-discovery (OIDC)
//	agnhost_logsgen.go     logs-generator
//	agnhost_mounttest.go   mounttest: files' modes, owners, filesystems
//	agnhost_mtls.go        mtlsserver and mtlsclient (PodCertificate)
//	agnhost_nettest.go     nettest, the PreStop spec's state server
//	agnhost_porter.go      porter, the proxy tests' fixed answers
//	agnhost_webhook.go     webhook: the admission webhook of the tests
//	agnhost_crdconvert.go  crd-conversion-webhook
//	doc.go                 this map
package catalog
