// Package charts holds mkube's own Helm charts, as their sources (a
// directory per chart: Chart.yaml, values.yaml, templates/), built into
// the mkube binary so that `mkube serve-charts` serves them as a Helm
// chart repository with nothing to download (package repo packages them).
// They stand in for the charts of the old stable repository that seed
// 003 §十四 installs:
//
//	chart       what it installs
//	mysql/      MySQL (the catalog's mysql image): a Secret with its root
//	            password, a claim the default StorageClass binds, a
//	            Deployment with a readiness probe, a Service, and a
//	            `helm test` pod that connects to it
//	nginx/      the nginx web server behind a Service, and a post-install
//	            hook Job that fetches its page
//	guestbook/  the kubectl tests' guestbook: a frontend, a primary
//	            store and its replicas (agnhost guestbook)
//
// Where things live:
//
//	file     what it holds
//	embed.go FS, the chart directories built into the binary
//	doc.go   this map
package charts
