#!/usr/bin/env bash
# Runs the real Prometheus (Debian's `prometheus` package:
# apt-get install prometheus) on the host against the cluster that
# `make local` or `make up` brought up, with addons/prometheus/prometheus.yml,
# at http://127.0.0.1:9090. It does what a learner would type:
# applies addons/prometheus/rbac.yaml (the ServiceAccount
# monitoring/prometheus and what it may read), writes a token of that
# account and the cluster's CA (the ConfigMap kube-root-ca.crt, which the
# controller manager puts in every namespace) into mkube-data/prometheus,
# then starts Prometheus with its data in mkube-data/prometheus/data.
# Ctrl-C stops it; run it again for a new token (they last 24 hours).
# When docker compose runs mkube (COMPOSE, from the Makefile, is its
# command), the configuration is addons/prometheus/prometheus-compose.yml,
# which scrapes the nodes' runtime containers too; CONFIG=FILE picks one.
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${SERVER:-http://127.0.0.1:8080}
PROMETHEUS=${PROMETHEUS:-prometheus}
COMPOSE=${COMPOSE:-docker compose}
if [ -z "${CONFIG:-}" ]; then
  CONFIG=addons/prometheus/prometheus.yml
  if [ -n "$($COMPOSE ps -q node01-runtime 2>/dev/null)" ]; then CONFIG=addons/prometheus/prometheus-compose.yml; fi
fi
k() { kubectl --server "$SERVER" "$@"; }
command -v "$PROMETHEUS" >/dev/null || { echo "prometheus is not installed: apt-get install prometheus"; exit 1; }
mkdir -p mkube-data/prometheus
k apply -f addons/prometheus/rbac.yaml
k -n monitoring create token prometheus --duration 24h >mkube-data/prometheus/token
# The namespace is new: its ConfigMap comes a moment after it.
for _ in $(seq 50); do
  k -n monitoring get configmap kube-root-ca.crt -o jsonpath='{.data.ca\.crt}' >mkube-data/prometheus/ca.crt 2>/dev/null &&
    [ -s mkube-data/prometheus/ca.crt ] && break
  sleep 0.2
done
[ -s mkube-data/prometheus/ca.crt ] || { echo "no ConfigMap monitoring/kube-root-ca.crt: is the controller manager running?"; exit 1; }
echo "Prometheus with $CONFIG: http://127.0.0.1:9090/targets (Ctrl-C stops it)"
exec "$PROMETHEUS" --config.file "$CONFIG" \
  --storage.tsdb.path mkube-data/prometheus/data --web.listen-address 127.0.0.1:9090
