// Package lib is scenery: what the programs of the catalog's images
// (package catalog) and of the sample API server (package
// sampleapiserver) are written with, standing in for the libraries their
// real binaries link, so that each behaves as its namesake does: answers
// as net/http's server, reads flags as pflag, logs as klog, reaches the
// API server as client-go's in-cluster config.
//
// Where things live:
//
//	file           what it holds                       stands in for
//	http.go        ServeHTTP, one connection's HTTP    net/http's Server
//	               server; SingleConnListener; Logged,
//	               the Date header and access log
//	tls.go         AcceptTLS, LoadKeyPair              crypto/tls
//	listen.go      ListenUntilStopped: a server's      a server's main loop
//	               ports, held until its stop signal
//	pflag.go       StringFlag, BoolFlag, IntFlag       spf13/pflag
//	klog.go        KlogLine                            k8s.io/klog's text format
//	incluster.go   InClusterClient, PodTransport,      client-go's
//	               ServiceAccountDir                   rest.InClusterConfig
//	doc.go         this map
package lib
