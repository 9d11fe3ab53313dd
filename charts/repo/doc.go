// Package repo serves Helm charts as a classic chart repository, the
// kind `helm repo add NAME URL` adds: GET /index.yaml lists every chart's
// versions (Chart.yaml's fields, with the archive's URL, its SHA-256
// digest and when it was created), and GET /NAME-VERSION.tgz is the
// packaged chart, as `helm package` makes it: a gzipped tar of the
// chart's directory under the chart's name. Charts are packaged once,
// when the server is made, from their sources (package charts, or any
// directory of charts); nothing packaged is kept in the repository.
//
// Where things live:
//
//	file        what it holds
//	package.go  Package: a chart directory → its Chart.yaml and .tgz
//	index.go    the index.yaml of a set of packaged charts
//	server.go   Server, the http.Handler of index.yaml and the archives
//	doc.go      this map
package repo
