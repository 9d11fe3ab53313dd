#!/usr/bin/env bash
# Checks the README's "bring it up" command on this machine: `make up`,
# then 3 nodes Ready and a ReplicaSet's pods Running, through the API,
# the chart repository's index and, with kubectl and Prometheus installed,
# `kubectl top` and `make prometheus`'s targets; then `make down`. Used by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
trap 'status=$?; if [ $status -ne 0 ]; then make --no-print-directory -s logs-once || true; fi; make --no-print-directory down >/dev/null 2>&1 || true; exit $status' EXIT

make --no-print-directory up
deadline=$((SECONDS + 120))
until [ "$(curl -sf http://127.0.0.1:8080/api/v1/nodes | grep -o '"type":"Ready","status":"True"' | wc -l)" = 3 ]; do
  [ $SECONDS -lt $deadline ] || { echo "compose: 3 nodes never became Ready"; exit 1; }
  sleep 1
done
echo "compose: 3 nodes Ready"
curl -sf -XPOST http://127.0.0.1:8080/apis/apps/v1/namespaces/default/replicasets -H 'Content-Type: application/json' -d '{
  "apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"smoke"},
  "spec":{"replicas":3,"selector":{"matchLabels":{"app":"smoke"}},
    "template":{"metadata":{"labels":{"app":"smoke"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.25"}]}}}}' >/dev/null
until [ "$(curl -sf 'http://127.0.0.1:8080/api/v1/namespaces/default/pods?labelSelector=app%3Dsmoke&fieldSelector=status.phase%3DRunning' | grep -o '"nodeName":"node0[123]"' | wc -l)" = 3 ]; do
  [ $SECONDS -lt $deadline ] || { echo "compose: the ReplicaSet's pods never ran"; exit 1; }
  sleep 1
done
echo "compose: ReplicaSet smoke has 3 Running pods"
# Each node's runtime is a container beside its kubelet, and crictl in it
# sees the containers the kubelet started there.
compose="docker compose"
$compose version >/dev/null 2>&1 || compose=docker-compose
running=0
for node in node01 node02 node03; do
  n=$($compose exec -T "$node-runtime" /crictl ps -q --label io.kubernetes.pod.namespace=default | wc -l)
  running=$((running + n))
done
[ "$running" = 3 ] || { echo "compose: crictl sees $running running containers in the nodes' runtimes, want 3"; exit 1; }
echo "compose: crictl sees the 3 containers in the nodes' runtimes"
# Least privilege: the admin's certificate works on the secure port, a
# node's may not read a Secret none of its pods uses.
pki=$(mktemp -d)
docker cp "$($compose ps -q apiserver)":/var/lib/mkube/etcd/pki "$pki/"
curl -sf --cacert "$pki/pki/ca.crt" --cert "$pki/pki/admin.crt" --key "$pki/pki/admin.key" -XPOST https://127.0.0.1:6443/api/v1/namespaces/default/secrets \
  -H 'Content-Type: application/json' -d '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"smoke"}}' >/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$pki/pki/ca.crt" --cert "$pki/pki/kubelet-node01.crt" --key "$pki/pki/kubelet-node01.key" \
  https://127.0.0.1:6443/api/v1/namespaces/default/secrets/smoke)
rm -rf "$pki"
[ "$code" = 403 ] || { echo "compose: node01 read a Secret its pods do not use: $code, want 403"; exit 1; }
echo "compose: node01's certificate is refused a Secret its pods do not use"
# The metrics-server add-on, which make up applied: its pod scrapes the
# three kubelets at their nodes' addresses, so kubectl top lists them.
if command -v kubectl >/dev/null; then
  deadline=$((SECONDS + 120))
  until [ "$(kubectl --server http://127.0.0.1:8080 top nodes --no-headers 2>/dev/null | grep -c '^node0[123] ')" = 3 ]; do
    [ $SECONDS -lt $deadline ] || { echo "compose: kubectl top nodes never listed the 3 nodes"; kubectl --server http://127.0.0.1:8080 top nodes || true; exit 1; }
    sleep 2
  done
  echo "compose: kubectl top nodes lists the 3 nodes"
  # Prometheus on the host with make up's configuration, as `make
  # prometheus` runs it: every target up, the runtimes' too (18).
  if [ -x /usr/bin/prometheus ]; then
    CONFIG=addons/prometheus/prometheus-compose.yml COMPOSE="$compose" ./hack/run-prometheus.sh >/tmp/compose-smoke-prometheus.log 2>&1 &
    prometheus=$!
    deadline=$((SECONDS + 90))
    until [ "$(curl -sf "http://127.0.0.1:9090/api/v1/targets?state=active" | grep -o '"health":"up"' | wc -l)" = 18 ]; do
      [ $SECONDS -lt $deadline ] || { echo "compose: Prometheus never had 18 targets up"; curl -s http://127.0.0.1:9090/api/v1/targets; tail -20 /tmp/compose-smoke-prometheus.log; kill "$prometheus"; exit 1; }
      sleep 2
    done
    kill "$prometheus"
    echo "compose: Prometheus scrapes all 18 targets (addons/prometheus/prometheus-compose.yml)"
  fi
fi
# The chart repository of the charts service: helm repo add stable
# http://127.0.0.1:8879 reads this index, and fetches each archive it names.
index=$(curl -sf http://127.0.0.1:8879/index.yaml) || { echo "compose: no index.yaml at http://127.0.0.1:8879"; exit 1; }
for chart in mysql nginx guestbook; do
  grep -q "^  $chart:" <<<"$index" || { echo "compose: the chart repository does not list $chart"; exit 1; }
done
curl -sf -o /dev/null http://127.0.0.1:8879/mysql-1.0.0.tgz || { echo "compose: the chart repository does not serve mysql-1.0.0.tgz"; exit 1; }
echo "compose: the chart repository serves mysql, nginx and guestbook"
# The dashboard: its page, and the snapshot its event stream opens with,
# which names the nodes it list-watched.
curl -sf http://127.0.0.1:8090/ | grep -qi "<html" || { echo "compose: no dashboard page at http://127.0.0.1:8090"; exit 1; }
stream=$(curl -s -N --max-time 3 http://127.0.0.1:8090/api/stream || true)
for node in node01 node02 node03; do
  grep -q "$node" <<<"$stream" || { echo "compose: the dashboard's stream does not name $node"; exit 1; }
done
# Its samples carry the scheduler's and the controller manager's own
# series, scraped as mkube:dashboard across the compose network (the
# first round is at its start, long before this).
for series in scheduler/pending/active controller-manager/workqueue/deployment/depth; do
  grep -q "\"$series\"" <<<"$stream" || { echo "compose: the dashboard's samples have no $series: $(grep -o '"scrapes":{[^}]*}[^}]*}' <<<"$stream" | tail -1)"; exit 1; }
done
echo "compose: the dashboard serves its page and streams the 3 nodes and the components' metrics"
