#!/usr/bin/env bash
# Runs the same cluster as docker-compose.yml, as local processes: an API
# server on :8080 (the learner's port) and :6443 (the secure port; etcd
# embedded, data in ./mkube-data), a controller manager (HTTPS :10257:
# /metrics, /healthz), a scheduler (HTTPS :10259) and
# kubelets node01..node03, each on the secure port with its own
# kubeconfig, which the API server writes into mkube-data/pki at its
# first start, mkube's Helm chart repository on :8879 and the dashboard on
# :8090. Logs go to
# ./logs/, the containers' logs (CRI log files) to ./logs/pods/<node>/,
# the audit log (who did each request) to ./logs/audit.log. Ctrl-C stops
# everything.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8080}
SERVER=http://127.0.0.1:$PORT
mkdir -p logs
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT INT TERM

PKI=mkube-data/pki
bin/apiserver --port "$PORT" --data-dir mkube-data --node-kubeconfigs node01,node02,node03 \
  --audit-log-path logs/audit.log >logs/apiserver.log 2>&1 & pids+=($!)
until curl -sf "$SERVER/readyz" >/dev/null; do sleep 0.1; done
# The controller manager sees the nodes' disks and the NFS exports where
# the kubelets have them: the PersistentVolume controller recycles and
# deletes volumes' data there, and provisions under the NFS root.
# It also holds the CA's key, as kube-controller-manager
# --cluster-signing-key-file, to sign approved CertificateSigningRequests.
bin/controller-manager --kubeconfig "$PKI/controller-manager.kubeconfig" --root-ca-file "$PKI/ca.crt" \
  --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
  --node-root mkube-data/nodes --nfs-root mkube-data/nfs >logs/controller-manager.log 2>&1 & pids+=($!)
bin/scheduler --kubeconfig "$PKI/scheduler.kubeconfig" >logs/scheduler.log 2>&1 & pids+=($!)
i=1
for n in node01 node02 node03; do
  # One host for all nodes: any free port for each kubelet's API (logs),
  # and an address of its own on loopback as its InternalIP, where the
  # API server and the pods reach it (127.0.0.2, .3, .4: on Linux all of
  # 127/8 is the host's; elsewhere only 127.0.0.1 is, and pods cannot
  # reach the nodes, see network/podnetwork's doc).
  i=$((i + 1))
  ip=127.0.0.1
  if [ "$(uname -s)" = Linux ]; then ip=127.0.0.$i; fi
  # Each kubelet runs its own runtime in-process, writing container logs
  # to a directory of its own (the default, /var/log/pods, is root's);
  # the nodes' disks, where volumes live, are mkube-data/nodes/<node>.
  # The kubelet's port is HTTPS, its certificate self-signed in
  # mkube-data/kubelet-pki/<node>; it keeps the kubelet's defaults
  # (--anonymous-auth=true --authorization-mode=AlwaysAllow), and trusts
  # the cluster CA's client certificates, the API server's among them
  # (--client-ca-file), as kubeadm configures it.
  bin/kubelet --kubeconfig "$PKI/kubelet-$n.kubeconfig" --node-name "$n" --port 0 --node-ip "$ip" \
    --pod-logs-dir "logs/pods/$n" --node-root mkube-data/nodes --nfs-root mkube-data/nfs \
    --cert-dir "mkube-data/kubelet-pki/$n" --client-ca-file "$PKI/ca.crt" \
    >"logs/kubelet-$n.log" 2>&1 & pids+=($!)
done
# The dashboard (docs/dashboard.md), on the loopback, as its own read-only
# identity (mkube:dashboard): its fault buttons answer 403; run it with
# --server "$SERVER" instead to use them. It scrapes the scheduler's and
# the controller manager's /metrics as that identity for its charts.
bin/dashboard --kubeconfig "$PKI/dashboard.kubeconfig" --listen "127.0.0.1:${DASHBOARD_PORT:-8090}" \
  --scheduler-metrics https://127.0.0.1:10259/metrics --controller-manager-metrics https://127.0.0.1:10257/metrics \
  >logs/dashboard.log 2>&1 & pids+=($!)
# mkube's Helm charts as a chart repository, for
# `helm repo add stable http://127.0.0.1:8879` (docs/helm.md).
bin/mkube serve-charts --listen "127.0.0.1:${CHARTS_PORT:-8879}" >logs/charts.log 2>&1 & pids+=($!)
# The add-ons, as a learner applies them: metrics-server, for kubectl top
# and the HPA (addons/metrics-server.yaml; its image runs mkube's own,
# which scrapes each kubelet at its InternalIP from its pod).
if command -v kubectl >/dev/null; then
  kubectl --server "$SERVER" apply -f addons/metrics-server.yaml >logs/addons.log 2>&1 ||
    echo "applying addons/metrics-server.yaml failed: see logs/addons.log"
else
  echo "kubectl is not installed: apply addons/metrics-server.yaml yourself for kubectl top"
fi
echo "mkube is up at https://127.0.0.1:6443 and, for learners, $SERVER (logs in ./logs; Ctrl-C stops it)"
echo "  kubectl --kubeconfig $PKI/admin.kubeconfig get nodes"
echo "  kubectl --server $SERVER get nodes"
echo "  dashboard: http://127.0.0.1:${DASHBOARD_PORT:-8090} (docs/dashboard.md)"
echo "  helm: helm repo add stable http://127.0.0.1:${CHARTS_PORT:-8879} (the chart repository; make tools builds bin/helm)"
echo "  metrics: kubectl get --raw /metrics; the scheduler's https://127.0.0.1:10259/metrics, the controller manager's https://127.0.0.1:10257/metrics (docs/observing.md)"
echo "  Prometheus, scraping them all (addons/prometheus/prometheus.yml): make prometheus, in another terminal"
wait
