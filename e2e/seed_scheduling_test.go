package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Seed 000, sections 三 (指定节点调度Pod), 四 (污点和容忍) and 五 (cordon和drain),
// replayed the way a learner does it: the seed's YAML and kubectl commands,
// typed into the real kubectl, against the real binaries. The cluster has
// the seed's shape: three workers node01, node02, node03 and a master
// registered as kubeadm registers one (label node-role.kubernetes.io/master=,
// taint node-role.kubernetes.io/master:NoSchedule), so every "not available"
// message counts four nodes, the master's taint among the reasons.
//
// Each subtest asserts where each pod landed (kubectl get pod -o wide, NODE
// column) or, for a Pending pod, why: the PodScheduled condition, the
// FailedScheduling event in kubectl describe, and for some mkube explain.
// One cluster serves all subtests; each puts it back as it found it (no
// pods or Deployments, no labels or taints of its own, nothing cordoned).

// seedNodes are the kubelets and the flags each registers its Node with.
var seedNodes = []kubeletNode{
	{name: "master", flags: []string{
		"--labels", "node-role.kubernetes.io/master=",
		"--register-with-taints", "node-role.kubernetes.io/master:NoSchedule"}},
	{name: "node01"}, {name: "node02"}, {name: "node03"},
}

// seedBaseTaints are the taints the nodes start with, as kubectl jsonpath
// prints them below (key=value:effect, one a line).
var seedBaseTaints = map[string]string{"master": "node-role.kubernetes.io/master=:NoSchedule\n"}

// The FailedScheduling messages the examples produce, written out in full
// as kubectl describe shows them. Kubernetes counts every node under the
// first filter that rejects it (TaintToleration runs before NodeAffinity,
// NodeUnschedulable before both) and sorts the "count reason" strings.
const (
	msgNoNodeMatchesSelector = "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }, " +
		"3 node(s) didn't match Pod's node affinity/selector." +
		" preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.."
	msgPodAffinity = "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }, " +
		"3 node(s) didn't match pod affinity rules." +
		" preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.."
	msgPodAntiAffinity = "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }, " +
		"3 node(s) didn't match pod anti-affinity rules." +
		" preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.."
	msgAllTainted = "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }, " +
		"3 node(s) had untolerated taint {key1: value1}." +
		" preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.."
	msgCordonedAndSelector = "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }, " +
		"1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector." +
		" preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.."
)

// The seed's manifests, as printed there (only NAME and the like are
// placeholders, for "修改其中的名字": make copies under other names).

// demo1-deploy.yaml of 三.1: three replicas pinned to node01 by nodeName.
const seedDeployNodeName = `apiVersion: apps/v1
kind: Deployment
metadata:
  creationTimestamp: null
  labels:
    app: deploy-demo1
  name: deploy-demo1
spec:
  replicas: 3
  selector:
    matchLabels:
      app: deploy-demo
  strategy: {}
  template:
    metadata:
      creationTimestamp: null
      labels:
        app: deploy-demo
    spec:
      nodeName: node01
      containers:
      - image: soscscs/myapp:v1
        name: myapp
        ports:
        - containerPort: 80
        resources: {}
status: {}
`

// demo1-deploy.yaml of 五: the same Deployment choosing nodes by
// nodeSelector myname: chen (三.2 has no YAML of its own; this is the
// seed's nodeSelector Deployment, VALUE being chen there).
const seedDeployNodeSelector = `apiVersion: apps/v1
kind: Deployment
metadata:
  creationTimestamp: null
  labels:
    app: deploy-demo1
  name: deploy-demo1
spec:
  replicas: 3
  selector:
    matchLabels:
      app: deploy-demo
  strategy: {}
  template:
    metadata:
      creationTimestamp: null
      labels:
        app: deploy-demo
    spec:
      nodeSelector:
        myname: VALUE
      containers:
      - image: soscscs/myapp:v1
        name: myapp
        ports:
        - containerPort: 80
        resources: {}
status: {}
`

// pod.yaml of 三.3 and 五: a bare pod; of 五 with nodeName: node02.
const seedPod = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    app: LABEL
  name: NAME
spec:
  containers:
  - image: soscscs/myapp:v1
    name: myapp
    ports:
    - containerPort: 80
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
status: {}
`

// pod1.yaml: required node affinity, myname NotIn [liliang, scj].
const seedPodRequiredNodeAffinity = `apiVersion: v1
kind: Pod
metadata:
  name: NAME
  labels:
    app: node-affinity-pod
spec:
  containers:
  - name: with-node-affinity
    image: soscscs/myapp:v1
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: myname    #指定node的标签
            operator: NotIn     #设置Pod安装到kubernetes.io/hostname的标签值不在values列表中的node上
            values:
            - liliang
            - scj
`

// pod2.yaml: preferred node affinity, weight 1 for node03.
const seedPodPreferredNodeAffinity = `apiVersion: v1
kind: Pod
metadata:
  name: affinity
  labels:
    app: node-affinity-pod
spec:
  containers:
  - name: with-node-affinity
    image: soscscs/myapp:v1
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1   #如果有多个软策略选项的话，权重越大，优先级越高
        preference:
          matchExpressions:
          - key: kubernetes.io/hostname
            operator: In
            values:
            - node03
`

// demo4-pod.yaml: required pod affinity to app In [TARGET] over the
// topology key myname.
const seedPodAffinity = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    run: myapp-demo4
  name: NAME
spec:
  containers:
  - image: soscscs/myapp:v1
    name: myapp
    ports:
    - containerPort: 80
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
  affinity:
    podAffinity:               #pod亲和
      requiredDuringSchedulingIgnoredDuringExecution:   #硬策略
      - topologyKey: myname
        namespaces:
        - default
        labelSelector:
          matchExpressions:     #指定标签
          - key: app
            operator: In
            values:
            - TARGET
status: {}
`

// demo4-pod.yaml of 三.4: required pod anti-affinity over myclass.
const seedPodAntiAffinity = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    run: myapp-demo4
  name: myapp-demo8
spec:
  containers:
  - image: soscscs/myapp:v1
    name: myapp
    ports:
    - containerPort: 80
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
  affinity:
    podAntiAffinity:       #设置反亲和
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: myclass   #拓扑域设置的myclass
        namespaces:
        - default
        labelSelector:
          matchExpressions:         #标签匹配在node02节点，由于拓扑域设置的是反亲和，因此没有节点能创建pod
          - key: app
            operator: In
            values:
            - myapp-demo
status: {}
`

// demo7-pod.yaml of 四.2, first version: tolerate the master's taint.
const seedPodTolerateMaster = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    app: myapp-demo7
  name: myapp-demo6
  namespace: default
spec:
  containers:
  - image: soscscs/myapp:v1
    name: myapp
    ports:
    - containerPort: 80
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
  tolerations:                               #配置容忍
  - key: node-role.kubernetes.io/master      #设置污点的键
    operator: Exists                         #设置污点的值，没有值就填Exists
    effect: NoSchedule                       #设置污点的选项
status: {}
`

// demo7-pod.yaml of 四.2, second version, with its toleration as a
// placeholder: the seed's own text (value "volue1", effect NoExecute,
// tolerationSeconds 30) or a corrected one.
const seedPodTolerateKey1 = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    app: myapp-demo7
  name: NAME
  namespace: default
spec:
  containers:
  - image: soscscs/myapp:v1
    name: myapp
    ports:
    - containerPort: 80
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
  tolerations:                   #定义容忍
TOLERATION
status: {}
`

// The seed's toleration, verbatim: "volue1" is a typo for value1, and a
// NoExecute toleration does not tolerate a NoSchedule taint.
const seedToleration = `  - key: key1                    #定义键
    operator: Equal              #键有值的话operator:填Equal
    value: volue1                #值
    effect: NoExecute            #污点类型
    tolerationSeconds: 30        #容忍时间`

// The toleration that matches kubectl taint node NODE key1=value1:NoSchedule.
const key1Toleration = `  - key: key1
    operator: Equal
    value: value1
    effect: NoSchedule`

// A pod pinned to a node by nodeName, with tolerations of its own, for the
// NoExecute example (kubectl taint node node01 check=mycheck:NoExecute).
const pinnedPodWithTolerations = `apiVersion: v1
kind: Pod
metadata:
  name: NAME
  labels:
    app: tolerating
spec:
  nodeName: NODE
  containers:
  - image: soscscs/myapp:v1
    name: myapp
  tolerations:
TOLERATION
`

// A pod asking for one node through its hostname label, so that it needs
// the scheduler (unlike nodeName).
const podForHostname = `apiVersion: v1
kind: Pod
metadata:
  name: NAME
spec:
  nodeSelector:
    kubernetes.io/hostname: NODE
  containers:
  - image: soscscs/myapp:v1
    name: myapp
`

// A plain Deployment with no placement rules.
const plainDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
spec:
  replicas: REPLICAS
  selector:
    matchLabels:
      app: NAME
  template:
    metadata:
      labels:
        app: NAME
    spec:
      containers:
      - image: soscscs/myapp:v1
        name: myapp
`

func TestSeedScheduling(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, seedNodes...)
	s := &seedRun{c: c, k: newKubectl(t, c)}

	testserver.EventuallyWithin(t, 30*time.Second, "kubectl get nodes shows the master and three workers Ready", func() (bool, string) {
		out, errOut, code := s.k.kubectl(t, "get", "nodes")
		if code != 0 || out == "" { // "No resources found" (on stderr) until the kubelets register
			return false, errOut
		}
		tab := parseTable(t, out)
		return len(tab.rows) == 4 && sameStrings(tab.column("STATUS"), []string{"Ready", "Ready", "Ready", "Ready"}), out
	})
	nodes := parseTable(t, s.k.mustKubectl(t, "get", "nodes"))
	for _, n := range []string{"node01", "node02", "node03"} {
		if r := nodes.row(t, "NAME", n); r["ROLES"] != "<none>" {
			t.Errorf("get nodes: ROLES of %s is %q, want <none>", n, r["ROLES"])
		}
	}
	if r := nodes.row(t, "NAME", "master"); r["ROLES"] != "master" {
		t.Errorf("get nodes: ROLES of master is %q, want master", r["ROLES"])
	}

	// 三.1: nodeName binds without the scheduler.
	t.Run("nodeName puts all three replicas on node01 without the scheduler", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		if out := s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "demo1-deploy.yaml", seedDeployNodeName)); out != "deployment.apps/deploy-demo1 created\n" {
			t.Errorf("kubectl apply -f demo1-deploy.yaml: %q", out)
		}
		rows := s.runningPods(t, "app=deploy-demo", 3)
		for _, r := range rows {
			if r["NODE"] != "node01" {
				t.Errorf("kubectl get pod -o wide: %s on %q, want node01", r["NAME"], r["NODE"])
			}
		}
		// No scheduler involved: no Scheduled event ("Successfully
		// assigned"), and mkube explain finds no explanation.
		name := rows[0]["NAME"]
		var reasons map[string]bool
		testserver.EventuallyWithin(t, 20*time.Second, "describe pod "+name+" shows the kubelet's Started event", func() (bool, string) {
			out := s.k.mustKubectl(t, "describe", "pod", name)
			reasons = eventReasons(out)
			return reasons["Started"], out
		})
		if reasons["Scheduled"] {
			t.Errorf("describe pod %s: a Scheduled event for a pod created with spec.nodeName", name)
		}
		want := fmt.Sprintf("Pod default/%s runs on node01; no explanation was recorded (created with spec.nodeName, or bound by another scheduler).\n", name)
		if out := s.explain(t, name); out != want {
			t.Errorf("mkube explain pod %s:\n%s\nwant:\n%s", name, out, want)
		}
	})

	// 三.2: kubectl label nodes, then nodeSelector.
	t.Run("nodeSelector puts pods only on the node with the label, and a selector no node matches leaves the pod Pending", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		if out := s.k.mustKubectl(t, "label", "nodes", "node01", "myname=scj"); out != "node/node01 labeled\n" {
			t.Errorf("kubectl label nodes node01 myname=scj: %q", out)
		}
		if out := s.k.mustKubectl(t, "label", "nodes", "node02", "myname=tan"); out != "node/node02 labeled\n" {
			t.Errorf("kubectl label nodes node02 myname=tan: %q", out)
		}
		labels := parseTable(t, s.k.mustKubectl(t, "get", "nodes", "--show-labels"))
		for node, want := range map[string]string{"node01": "myname=scj", "node02": "myname=tan"} {
			if l := labels.row(t, "NAME", node)["LABELS"]; !slices.Contains(strings.Split(l, ","), want) {
				t.Errorf("kubectl get nodes --show-labels: %s has LABELS %q, want %s among them", node, l, want)
			}
		}
		if l := labels.row(t, "NAME", "node03")["LABELS"]; strings.Contains(l, "myname=") {
			t.Errorf("kubectl get nodes --show-labels: node03 has LABELS %q, want no myname", l)
		}

		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "demo1-deploy.yaml", strings.Replace(seedDeployNodeSelector, "VALUE", "tan", 1)))
		for _, r := range s.runningPods(t, "app=deploy-demo", 3) {
			if r["NODE"] != "node02" {
				t.Errorf("nodeSelector myname: tan: %s on %q, want node02", r["NAME"], r["NODE"])
			}
		}

		nobody := strings.Replace(seedDeployNodeSelector, "VALUE", "nobody", 1)
		nobody = strings.NewReplacer("name: deploy-demo1", "name: deploy-nobody", "app: deploy-demo\n", "app: nobody\n").Replace(nobody)
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "nobody.yaml", nobody))
		pending := s.pendingPods(t, "app=nobody", 3, msgNoNodeMatchesSelector)
		s.wantExplainPending(t, pending[0], msgNoNodeMatchesSelector)

		// A node that gets the label takes them.
		s.k.mustKubectl(t, "label", "nodes", "node03", "myname=nobody")
		for _, r := range s.runningPods(t, "app=nobody", 3) {
			if r["NODE"] != "node03" {
				t.Errorf("after kubectl label nodes node03 myname=nobody: %s on %q, want node03", r["NAME"], r["NODE"])
			}
		}
	})

	// 三.3 (1): required node affinity, NotIn.
	t.Run("required node affinity myname NotIn liliang,scj puts pods only on node03, and ignores a later label change", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		s.k.mustKubectl(t, "label", "nodes", "node01", "myname=liliang")
		s.k.mustKubectl(t, "label", "nodes", "node02", "myname=scj")

		// The seed's pod, and two copies under other names: not chance.
		for _, name := range []string{"affinity", "affinity-2", "affinity-3"} {
			file := s.k.manifest(t, name+".yaml", strings.Replace(seedPodRequiredNodeAffinity, "NAME", name, 1))
			if out := s.k.mustKubectl(t, "apply", "-f", file); out != "pod/"+name+" created\n" {
				t.Errorf("kubectl apply -f pod1.yaml: %q", out)
			}
		}
		for _, name := range []string{"affinity", "affinity-2", "affinity-3"} {
			if node := s.runningOn(t, name); node != "node03" {
				t.Errorf("pod %s with myname NotIn [liliang scj] runs on %s, want node03 (node01 is liliang, node02 scj, node03 has no myname)", name, node)
			}
		}

		// IgnoredDuringExecution: labelling node03 scj does not move or
		// stop the running pods, but a new pod fits nowhere.
		s.k.mustKubectl(t, "label", "nodes", "node03", "myname=scj")
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "affinity-4.yaml", strings.Replace(seedPodRequiredNodeAffinity, "NAME", "affinity-4", 1)))
		s.pending(t, "affinity-4", msgNoNodeMatchesSelector)
		if node := s.runningOn(t, "affinity"); node != "node03" {
			t.Errorf("pod affinity after node03 was labelled scj: on %s, want still node03", node)
		}
	})

	// 三.3 (2): preferred node affinity.
	t.Run("preferred node affinity weight 1 for node03 puts the pod on node03 when the nodes are otherwise equal", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		if out := s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "pod2.yaml", seedPodPreferredNodeAffinity)); out != "pod/affinity created\n" {
			t.Errorf("kubectl apply -f pod2.yaml: %q", out)
		}
		if node := s.runningOn(t, "affinity"); node != "node03" {
			t.Fatalf("pod affinity preferring node03 runs on %s", node)
		}

		// mkube explain shows the decision: node03 selected with
		// NodeAffinity's full score, node01 and node02 feasible without
		// it, the master rejected by its taint.
		out := s.explain(t, "affinity")
		lines := strings.Split(out, "\n")
		if len(lines) < 4 || lines[0] != "Pod default/affinity was scheduled to node03." ||
			!strings.HasPrefix(lines[1], "4 nodes in the cluster, 4 evaluated, 3 feasible.") || lines[2] != "" {
			t.Fatalf("mkube explain pod affinity, first lines:\n%s", out)
		}
		end := slices.Index(lines[3:], "")
		if end < 0 {
			end = len(lines) - 3
		}
		// parseTable counts bytes and tabwriter runes: spell × as x.
		tab := parseTable(t, strings.ReplaceAll(strings.Join(lines[3:3+end], "\n"), "×", "x"))
		if len(tab.header) < 3 || tab.header[0] != "NODE" || tab.header[1] != "VERDICT" || tab.header[2] != "TOTAL" ||
			tab.header[len(tab.header)-1] != "REASON" || !slices.Contains(tab.header, "NodeAffinityx2") {
			t.Fatalf("mkube explain pod affinity: table header %q\n%s", tab.header, out)
		}
		if r := tab.row(t, "NODE", "node03"); r["VERDICT"] != "selected" || r["NodeAffinityx2"] != "100" {
			t.Errorf("mkube explain pod affinity: node03 row %v, want selected with NodeAffinity 100\n%s", r, out)
		}
		for _, n := range []string{"node01", "node02"} {
			if r := tab.row(t, "NODE", n); r["VERDICT"] != "feasible" || r["NodeAffinityx2"] != "0" {
				t.Errorf("mkube explain pod affinity: %s row %v, want feasible with NodeAffinity 0\n%s", n, r, out)
			}
		}
		if r := tab.row(t, "NODE", "master"); r["VERDICT"] != "rejected" ||
			r["REASON"] != "TaintToleration: node(s) had untolerated taint {node-role.kubernetes.io/master: }" {
			t.Errorf("mkube explain pod affinity: master row %v, want rejected by its taint\n%s", r, out)
		}
	})

	// 三.3 (3): pod affinity over the topology key myname.
	t.Run("pod affinity on topologyKey myname puts the four pods in the domain of myapp-demo's node", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		// node02 and node03 form the domain myname=tan: "当一个拓扑域中有多个符合条件时".
		s.k.mustKubectl(t, "label", "nodes", "node01", "myname=scj")
		s.k.mustKubectl(t, "label", "nodes", "node02", "node03", "myname=tan")
		domain := map[string]string{"node01": "scj", "node02": "tan", "node03": "tan"}

		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "pod.yaml", strings.NewReplacer("LABEL", "myapp-demo", "NAME", "myapp-demo").Replace(seedPod)))
		target := s.runningOn(t, "myapp-demo")
		if domain[target] == "" {
			t.Fatalf("myapp-demo runs on %s, not a worker", target)
		}

		followers := []string{"myapp-demo4", "myapp-demo5", "myapp-demo6", "myapp-demo7"}
		for _, name := range followers {
			s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, name+".yaml", strings.NewReplacer("NAME", name, "TARGET", "myapp-demo").Replace(seedPodAffinity)))
		}
		used := map[string]bool{}
		for _, name := range followers {
			node := s.runningOn(t, name)
			used[node] = true
			if domain[node] != domain[target] {
				t.Errorf("pod %s runs on %s (myname=%q), want a node with myname=%s like %s, where myapp-demo runs", name, node, domain[node], domain[target], target)
			}
		}
		// Within a domain of two nodes the affinity is satisfied by both;
		// the resource scores spread the four pods over them.
		if domain[target] == "tan" && len(used) != 2 {
			t.Errorf("the four pods with affinity to myapp-demo (on %s, domain myname=tan of node02 and node03) all went to %v", target, used)
		}

		// Affinity to a pod that does not exist fits nowhere.
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "lonely.yaml", strings.NewReplacer("NAME", "lonely", "TARGET", "no-such-app").Replace(seedPodAffinity)))
		s.pending(t, "lonely", msgPodAffinity)
	})

	// 三.3 (4): pod anti-affinity over the topology key myclass.
	t.Run("pod anti-affinity on topologyKey myclass keeps myapp-demo8 Pending while every node shares myapp-demo's myclass", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		s.k.mustKubectl(t, "label", "nodes", "--all", "myclass=qq")
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "pod.yaml", strings.NewReplacer("LABEL", "myapp-demo", "NAME", "myapp-demo").Replace(seedPod)))
		target := s.runningOn(t, "myapp-demo")

		if out := s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "demo4-pod.yaml", seedPodAntiAffinity)); out != "pod/myapp-demo8 created\n" {
			t.Errorf("kubectl apply -f demo4-pod.yaml: %q", out)
		}
		s.pending(t, "myapp-demo8", msgPodAntiAffinity)
		s.wantExplainPending(t, "myapp-demo8", msgPodAntiAffinity)

		// Another domain without myapp-demo: the pod goes there.
		other := "node01"
		if target == "node01" {
			other = "node02"
		}
		s.k.mustKubectl(t, "label", "nodes", other, "myclass=other", "--overwrite")
		if node := s.runningOn(t, "myapp-demo8"); node != other {
			t.Errorf("myapp-demo8 runs on %s; want %s, the only node whose myclass domain has no app=myapp-demo (myapp-demo is on %s)", node, other, target)
		}
	})

	// 四: taints and tolerations.
	t.Run("with every node tainted only the pods tolerating a taint schedule, and removing a taint lets Pending pods in", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		for _, n := range []string{"node01", "node02", "node03"} {
			if out := s.k.mustKubectl(t, "taint", "node", n, "key1=value1:NoSchedule"); out != "node/"+n+" tainted\n" {
				t.Errorf("kubectl taint node %s key1=value1:NoSchedule: %q", n, out)
			}
		}
		// kubectl describe nodes | grep -A 3 Taint
		desc := s.k.mustKubectl(t, "describe", "nodes")
		if n := strings.Count(desc, "Taints:             key1=value1:NoSchedule\n"); n != 3 {
			t.Errorf("kubectl describe nodes: %d nodes show Taints: key1=value1:NoSchedule, want 3\n%s", n, desc)
		}
		if !strings.Contains(desc, "Taints:             node-role.kubernetes.io/master:NoSchedule\n") {
			t.Errorf("kubectl describe nodes: no master taint\n%s", desc)
		}

		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "plain.yaml", strings.NewReplacer("LABEL", "plain", "NAME", "myapp-demo5").Replace(seedPod)))
		s.pending(t, "myapp-demo5", msgAllTainted)

		// 现所有节点都有污点，需求在master节点上调度pod.
		if out := s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "demo7-pod.yaml", seedPodTolerateMaster)); out != "pod/myapp-demo6 created\n" {
			t.Errorf("kubectl apply -f demo7-pod.yaml: %q", out)
		}
		if node := s.runningOn(t, "myapp-demo6"); node != "master" {
			t.Errorf("myapp-demo6 tolerating node-role.kubernetes.io/master (Exists, NoSchedule) runs on %s, want master", node)
		}

		// The seed's second demo7-pod.yaml as printed tolerates key1 =
		// "volue1" with effect NoExecute: it matches neither the value nor
		// the effect of key1=value1:NoSchedule, so it stays Pending, as it
		// would in Kubernetes. Corrected, it schedules on a worker.
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "demo7-seed.yaml", strings.NewReplacer("NAME", "myapp-demo8", "TOLERATION", seedToleration).Replace(seedPodTolerateKey1)))
		s.pending(t, "myapp-demo8", msgAllTainted)
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "demo7-fixed.yaml", strings.NewReplacer("NAME", "myapp-demo9", "TOLERATION", key1Toleration).Replace(seedPodTolerateKey1)))
		if node := s.runningOn(t, "myapp-demo9"); !slices.Contains([]string{"node01", "node02", "node03"}, node) {
			t.Errorf("myapp-demo9 tolerating key1=value1:NoSchedule runs on %s, want a worker", node)
		}

		// kubectl taint node node02 key1:NoSchedule-
		if out := s.k.mustKubectl(t, "taint", "node", "node02", "key1:NoSchedule-"); out != "node/node02 untainted\n" {
			t.Errorf("kubectl taint node node02 key1:NoSchedule-: %q", out)
		}
		for _, name := range []string{"myapp-demo5", "myapp-demo8"} {
			if node := s.runningOn(t, name); node != "node02" {
				t.Errorf("%s after node02 was untainted: on %s, want node02", name, node)
			}
		}
	})

	// 四, 其它注意事项 (3): the master made PreferNoSchedule.
	t.Run("a master tainted PreferNoSchedule takes pods only when no other node can", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		for _, n := range []string{"node01", "node02", "node03"} {
			s.k.mustKubectl(t, "taint", "node", n, "key1=value1:NoSchedule")
		}
		// As the seed types it: --overwrite replaces a taint of the same key
		// and effect only, so the master keeps its NoSchedule taint and
		// gains a PreferNoSchedule one, put first (kubectl's rule, not the
		// server's).
		if out := s.k.mustKubectl(t, "taint", "node", "master", "node-role.kubernetes.io/master=:PreferNoSchedule", "--overwrite"); out != "node/master modified\n" {
			t.Errorf("kubectl taint node master node-role.kubernetes.io/master=:PreferNoSchedule --overwrite: %q", out)
		}
		if got, want := s.taints(t, "master"), "node-role.kubernetes.io/master=:PreferNoSchedule\nnode-role.kubernetes.io/master=:NoSchedule\n"; got != want {
			t.Errorf("master taints after --overwrite: %q, want %q", got, want)
		}
		s.k.mustKubectl(t, "taint", "node", "master", "node-role.kubernetes.io/master:NoSchedule-")
		if got, want := s.taints(t, "master"), "node-role.kubernetes.io/master=:PreferNoSchedule\n"; got != want {
			t.Errorf("master taints after removing NoSchedule: %q, want %q", got, want)
		}

		// Every worker refuses: the master takes the pod after all.
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "temp-1.yaml", strings.NewReplacer("LABEL", "temp", "NAME", "temp-1").Replace(seedPod)))
		if node := s.runningOn(t, "temp-1"); node != "master" {
			t.Errorf("temp-1 with all workers tainted NoSchedule and the master PreferNoSchedule: on %s, want master", node)
		}
		// With node03 free again, pods go there, even when it is busier
		// than the master (TaintToleration's score outweighs the
		// resource scores).
		s.k.mustKubectl(t, "taint", "node", "node03", "key1:NoSchedule-")
		for _, name := range []string{"temp-2", "temp-3", "temp-4"} {
			s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, name+".yaml", strings.NewReplacer("LABEL", "temp", "NAME", name).Replace(seedPod)))
			if node := s.runningOn(t, name); node != "node03" {
				t.Errorf("%s with node03 untainted and the master PreferNoSchedule: on %s, want node03", name, node)
			}
		}
	})

	// 四: NoExecute evicts.
	t.Run("kubectl taint node node01 check=mycheck:NoExecute evicts intolerant pods now and tolerating ones after tolerationSeconds", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		// A Deployment whose three pods all run on node01: the other
		// workers are cordoned while it starts.
		s.k.mustKubectl(t, "cordon", "node02", "node03")
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "web.yaml", strings.NewReplacer("NAME", "web", "REPLICAS", "3").Replace(plainDeployment)))
		before := s.runningPods(t, "app=web", 3)
		for _, r := range before {
			if r["NODE"] != "node01" {
				t.Fatalf("web pod %s on %s with node02 and node03 cordoned", r["NAME"], r["NODE"])
			}
		}
		s.k.mustKubectl(t, "uncordon", "node02", "node03")

		// A bare pod with no toleration, and three that tolerate the taint:
		// for 3 seconds, for 20 seconds, and for ever.
		pod := func(name, node, toleration string) {
			s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, name+".yaml",
				strings.NewReplacer("NAME", name, "NODE", node, "TOLERATION", toleration).Replace(pinnedPodWithTolerations)))
		}
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "myapp-demo3.yaml",
			strings.Replace(strings.NewReplacer("LABEL", "myapp-demo1", "NAME", "myapp-demo3").Replace(seedPod), "spec:\n", "spec:\n  nodeName: node01\n", 1)))
		const short, long = 3, 20
		pod("tolerate-3s", "node01", fmt.Sprintf("  - {key: check, operator: Equal, value: mycheck, effect: NoExecute, tolerationSeconds: %d}", short))
		pod("tolerate-20s", "node01", fmt.Sprintf("  - {key: check, operator: Equal, value: mycheck, effect: NoExecute, tolerationSeconds: %d}", long))
		pod("tolerate-always", "node01", "  - {key: check, operator: Exists, effect: NoExecute}")
		for _, name := range []string{"myapp-demo3", "tolerate-3s", "tolerate-20s", "tolerate-always"} {
			if node := s.runningOn(t, name); node != "node01" {
				t.Fatalf("%s runs on %s, want node01", name, node)
			}
		}

		t0 := time.Now()
		if out := s.k.mustKubectl(t, "taint", "node", "node01", "check=mycheck:NoExecute"); out != "node/node01 tainted\n" {
			t.Errorf("kubectl taint node node01 check=mycheck:NoExecute: %q", out)
		}

		// The intolerant bare pod is deleted and stays deleted; the
		// Deployment's pods are replaced on the other workers.
		s.gone(t, "myapp-demo3", 30*time.Second)
		testserver.EventuallyWithin(t, 60*time.Second, "3 web pods Running, none on node01 and none of the old ones", func() (bool, string) {
			out, rows := s.podsWide(t, "app=web")
			if len(rows) != 3 {
				return false, out
			}
			for _, r := range rows {
				if r["STATUS"] != "Running" || r["NODE"] == "node01" || r["NODE"] == "master" || slices.ContainsFunc(before, func(b map[string]string) bool { return b["NAME"] == r["NAME"] }) {
					return false, out
				}
			}
			return true, out
		})
		evs := s.events(t)
		for _, want := range []string{"TaintManagerEviction|myapp-demo3|Marking for deletion Pod default/myapp-demo3"} {
			if !slices.Contains(evs, want) {
				t.Errorf("kubectl get events: no %q among\n%s", want, strings.Join(evs, "\n"))
			}
		}

		// tolerationSeconds: 3 → deleted no sooner than 3s after the taint
		// (t0 is before kubectl sent it), and well within 3+30s.
		var evicted time.Duration
		testserver.EventuallyWithin(t, (short+30)*time.Second, fmt.Sprintf("tolerate-3s is evicted (tolerationSeconds: %d)", short), func() (bool, string) {
			out, errOut, code := s.k.kubectl(t, "get", "pod", "tolerate-3s", "-o", "jsonpath={.metadata.deletionTimestamp}")
			evicted = time.Since(t0)
			return code != 0 || out != "", out + errOut
		})
		t.Logf("tolerate-3s evicted %s after the taint", evicted.Round(100*time.Millisecond))
		if evicted < short*time.Second {
			t.Errorf("tolerate-3s (tolerationSeconds: %d) evicted %s after the taint, sooner than it tolerates", short, evicted)
		}

		// Removing the taint before 20s cancels tolerate-20s's eviction.
		if out := s.k.mustKubectl(t, "taint", "node", "node01", "check=mycheck:NoExecute-"); out != "node/node01 untainted\n" {
			t.Errorf("kubectl taint node node01 check=mycheck:NoExecute-: %q", out)
		}
		if untainted := time.Since(t0); untainted >= long*time.Second {
			t.Fatalf("the taint was removed %s after it was added, too late to test cancelling a %ds eviction", untainted, long)
		}
		testserver.EventuallyWithin(t, 20*time.Second, "describe pod tolerate-20s shows the cancelled eviction", func() (bool, string) {
			out := s.k.mustKubectl(t, "describe", "pod", "tolerate-20s")
			return slices.ContainsFunc(section(out, "Events:"), func(l string) bool {
				return strings.Contains(l, "TaintManagerEviction") && strings.HasSuffix(l, "Cancelling deletion of Pod default/tolerate-20s")
			}), out
		})
		// And it keeps running past its would-be deadline: until then,
		// kubectl get pods --watch sees neither pod leave Running nor be
		// marked for deletion.
		s.keepsRunning(t, t0.Add((long+3)*time.Second), "tolerate-20s", "tolerate-always")
	})

	// 五: cordon and uncordon.
	t.Run("a cordoned node gets no new pods until it is uncordoned", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		if out := s.k.mustKubectl(t, "cordon", "node01"); out != "node/node01 cordoned\n" {
			t.Errorf("kubectl cordon node01: %q", out)
		}
		nodes := parseTable(t, s.k.mustKubectl(t, "get", "nodes"))
		for _, n := range []string{"master", "node01", "node02", "node03"} {
			want := "Ready"
			if n == "node01" {
				want = "Ready,SchedulingDisabled"
			}
			if r := nodes.row(t, "NAME", n); r["STATUS"] != want {
				t.Errorf("kubectl get nodes: %s STATUS %q, want %q", n, r["STATUS"], want)
			}
		}

		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "web.yaml", strings.NewReplacer("NAME", "web", "REPLICAS", "4").Replace(plainDeployment)))
		for _, r := range s.runningPods(t, "app=web", 4) {
			if r["NODE"] != "node02" && r["NODE"] != "node03" {
				t.Errorf("web pod %s on %s with node01 cordoned, want node02 or node03", r["NAME"], r["NODE"])
			}
		}
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "pinned.yaml", strings.NewReplacer("NAME", "wants-node01", "NODE", "node01").Replace(podForHostname)))
		s.pending(t, "wants-node01", msgCordonedAndSelector)

		if out := s.k.mustKubectl(t, "uncordon", "node01"); out != "node/node01 uncordoned\n" {
			t.Errorf("kubectl uncordon node01: %q", out)
		}
		if r := parseTable(t, s.k.mustKubectl(t, "get", "nodes")).row(t, "NAME", "node01"); r["STATUS"] != "Ready" {
			t.Errorf("kubectl get nodes after uncordon: node01 STATUS %q, want Ready", r["STATUS"])
		}
		if node := s.runningOn(t, "wants-node01"); node != "node01" {
			t.Errorf("wants-node01 after uncordon: on %s, want node01", node)
		}
	})

	// 五: drain, with the seed's myname=chen example.
	t.Run("drain node02 evicts its pods; the myname=chen Deployment is Pending until node01 is labelled chen", func(t *testing.T) {
		t.Cleanup(func() { s.reset(t) })
		s.k.mustKubectl(t, "label", "nodes", "node01", "myname=scj")
		s.k.mustKubectl(t, "label", "nodes", "node02", "myname=chen")

		// 通过创建三个自主式pod: three bare pods on node02 by nodeName.
		bare := []string{"myapp-demo1", "myapp-demo2", "myapp-demo3"}
		for _, name := range bare {
			s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, name+".yaml",
				strings.Replace(strings.NewReplacer("LABEL", "myapp-demo1", "NAME", name).Replace(seedPod), "spec:\n", "spec:\n  nodeName: node02\n", 1)))
		}
		// 创建一个控制器管理的pod: the seed's Deployment, nodeSelector myname: chen.
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "demo1-deploy.yaml", strings.Replace(seedDeployNodeSelector, "VALUE", "chen", 1)))
		// And a Deployment that may run anywhere, started while only
		// node02 takes pods.
		s.k.mustKubectl(t, "cordon", "node01", "node03")
		s.k.mustKubectl(t, "apply", "-f", s.k.manifest(t, "web.yaml", strings.NewReplacer("NAME", "web", "REPLICAS", "2").Replace(plainDeployment)))
		webBefore := s.runningPods(t, "app=web", 2)
		s.k.mustKubectl(t, "uncordon", "node01", "node03")
		demoBefore := s.runningPods(t, "app=deploy-demo", 3)
		for _, r := range append(slices.Clone(webBefore), demoBefore...) {
			if r["NODE"] != "node02" {
				t.Fatalf("pod %s on %s before the drain, want node02", r["NAME"], r["NODE"])
			}
		}
		for _, name := range bare {
			if node := s.runningOn(t, name); node != "node02" {
				t.Fatalf("%s on %s, want node02", name, node)
			}
		}

		out, errOut, code := s.k.kubectl(t, "drain", "node02", "--ignore-daemonsets", "--delete-emptydir-data", "--force")
		if code != 0 {
			t.Fatalf("kubectl drain node02: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		for _, want := range []string{"node/node02 cordoned\n", "node/node02 drained\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl drain output lacks %q:\nstdout:\n%s\nstderr:\n%s", want, out, errOut)
			}
		}
		for _, r := range append(slices.Clone(webBefore), demoBefore...) {
			if !strings.Contains(out, "pod/"+r["NAME"]+" evicted\n") {
				t.Errorf("kubectl drain output lacks %q:\nstdout:\n%s\nstderr:\n%s", "pod/"+r["NAME"]+" evicted", out, errOut)
			}
		}
		for _, name := range bare {
			if !strings.Contains(out, "pod/"+name+" evicted\n") || !strings.Contains(errOut, "default/"+name) {
				t.Errorf("kubectl drain: bare pod %s not evicted with a warning (--force)\nstdout:\n%s\nstderr:\n%s", name, out, errOut)
			}
		}
		if !strings.Contains(errOut, "Warning: deleting Pods that declare no controller: ") {
			t.Errorf("kubectl drain stderr lacks the --force warning:\n%s", errOut)
		}
		if r := parseTable(t, s.k.mustKubectl(t, "get", "node")).row(t, "NAME", "node02"); r["STATUS"] != "Ready,SchedulingDisabled" {
			t.Errorf("kubectl get node: node02 STATUS %q after drain, want Ready,SchedulingDisabled", r["STATUS"])
		}

		// Bare pods are gone for good; web is recreated elsewhere; the
		// chen pods have nowhere to go.
		for _, name := range bare {
			s.gone(t, name, 10*time.Second)
		}
		for _, r := range s.runningPods(t, "app=web", 2) {
			if r["NODE"] != "node01" && r["NODE"] != "node03" {
				t.Errorf("web pod %s on %s after draining node02, want node01 or node03", r["NAME"], r["NODE"])
			}
		}
		s.pendingPods(t, "app=deploy-demo", 3, msgCordonedAndSelector)

		// kubectl label nodes node01 myname=chen --overwrite
		if errOut := s.k.mustFail(t, "label", "nodes", "node01", "myname=chen"); !strings.Contains(errOut, "'myname' already has a value (scj), and --overwrite is false") {
			t.Errorf("kubectl label nodes node01 myname=chen without --overwrite: %q", errOut)
		}
		if out := s.k.mustKubectl(t, "label", "nodes", "node01", "myname=chen", "--overwrite"); out != "node/node01 labeled\n" {
			t.Errorf("kubectl label nodes node01 myname=chen --overwrite: %q", out)
		}
		for _, r := range s.runningPods(t, "app=deploy-demo", 3) {
			if r["NODE"] != "node01" {
				t.Errorf("deploy-demo1 pod %s on %s after node01 was labelled chen, want node01", r["NAME"], r["NODE"])
			}
		}
	})
}
