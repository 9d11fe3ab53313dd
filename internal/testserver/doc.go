// Package testserver runs the real mkube API server inside a test: the
// server apiserver/app assembles, as cmd/apiserver runs it (every
// post-start hook, both ports), with test-friendly options: embedded etcd
// in the test's temp dir, free ports on 127.0.0.1, no log. Component
// tests (controllers, scheduler, kubelet) talk to its plain port over
// HTTP exactly as the binaries talk to cmd/apiserver.
//
//	file            what it holds
//	doc.go          this map
//	testserver.go   StartServer and the Server's requests; Run, Eventually, LogBuffer
//	rejections.go   tables of requests the server must refuse with 422, and TableOf
package testserver
