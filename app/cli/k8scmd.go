package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"benchserve/internal/py/argparse"

	"sigs.k8s.io/yaml"
)

func newK8sParser() *argparse.Parser {
	p := argparse.New("benchserve k8s-job", "Print a Kubernetes manifest (JSON, or YAML with -o yaml; for kubectl apply -f) that runs one benchmark "+
		"plan split across --shards pods: an Indexed Job whose pod I runs the benchmark flags given after -- with --shard I/N "+
		"and a common --start-at, writing its record file to a volume, and a Job that merges them when all have finished. "+
		"Usage: benchserve k8s-job --shards N [options] -- BENCHMARK FLAGS")
	p.Add(argparse.Option{Name: "--shards", Type: argparse.Int, Default: 0, Help: "Pods (shards of the plan)."})
	p.Add(argparse.Option{Name: "--name", Default: "benchserve", Help: "Name of the Jobs (the merge Job adds -merge)."})
	p.Add(argparse.Option{Name: "--image", Default: "benchserve:latest", Help: "Image holding the static binary at /benchserve (go run ./tools/release builds one: docs/scale-out.md)."})
	p.Add(argparse.Option{Name: "--pvc", Default: "benchserve-records", Help: "PersistentVolumeClaim (ReadWriteMany) mounted at /records in every pod."})
	p.Add(argparse.Option{Name: "--records-host-path", Metavar: "DIR", Help: "Mount this node-local directory at /records instead of a PVC (hostPath, type Directory), " +
		"for a cluster without a storage class: every pod must run on the node that holds it (a single-node cluster), " +
		"and it must exist and be writable by uid 65532, the image's user (fsGroup does not apply to hostPath): install -d -o 65532 -g 65532 DIR."})
	p.Add(argparse.Option{Name: "--host-network", Action: argparse.StoreTrue, Help: "Run the shard pods in the node's network namespace (hostNetwork, with dnsPolicy ClusterFirstWithHostNet " +
		"so a Service's name still resolves): no CNI hop in the timings; the pods share the node's network and ports."})
	p.Add(argparse.Option{Name: "--image-pull-policy", Choices: []string{"Always", "IfNotPresent", "Never"}, Help: "imagePullPolicy of both Jobs' containers (default: Kubernetes', from the image's tag)."})
	p.Add(argparse.Option{Name: "--start-at", Type: argparse.Float, Help: "Common start, Unix seconds (default: now + --start-delay)."})
	p.Add(argparse.Option{Name: "--start-delay", Type: argparse.Float, Default: 120.0, Help: "Seconds from now to the common start: time for every pod to be scheduled and warmed up."})
	p.Add(argparse.Option{Name: "--output", Aliases: []string{"-o"}, Choices: []string{"json", "yaml"}, Default: "json", Help: "Format of the manifest."})
	p.Add(argparse.Option{Name: "--streams-per-shard", Type: argparse.Int, Default: 0, Help: "Streams each pod holds, for its resource requests (default: --max-concurrency / shards, else 256)."})
	return p
}

// K8sJobMain runs "benchserve k8s-job": the manifest on stdout; 2 for a
// bad command line (the benchmark flags are checked as the main command
// checks them).
func K8sJobMain(_ context.Context, args []string, pio IO) int {
	own, bench := args, []string(nil)
	for i, a := range args {
		if a == "--" {
			own, bench = args[:i], args[i+1:]
			break
		}
	}
	ns, err := parseArgs(newK8sParser(), own, pio.columns())
	if err == nil {
		err = checkK8s(ns, bench)
	}
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	start, _ := ns.Get("start_at").(float64)
	if start == 0 {
		start = float64(time.Now().Add(time.Duration(ns.Get("start_delay").(float64) * float64(time.Second))).Unix())
	}
	hostPath, _ := ns.Get("records_host_path").(string)
	pull, _ := ns.Get("image_pull_policy").(string)
	c, _ := Parse(bench)
	port, _ := metricsPort(c.MetricsAddr)
	m := manifest(k8sSpec{
		Name: ns.Get("name").(string), Image: ns.Get("image").(string), PVC: ns.Get("pvc").(string), HostPath: hostPath,
		HostNetwork: ns.Get("host_network").(bool), PullPolicy: pull, MetricsPort: port,
		Shards: ns.Get("shards").(int), StartAt: start, Streams: streamsPerShard(ns, bench), Bench: bench,
	})
	if ns.Get("output") == "yaml" {
		out, _ := yaml.Marshal(m)
		fmt.Fprintf(pio.Stdout, "%s", out)
		return 0
	}
	out, _ := json.MarshalIndent(m, "", "  ")
	fmt.Fprintf(pio.Stdout, "%s\n", out)
	return 0
}

func checkK8s(ns *argparse.Namespace, bench []string) error {
	if n := ns.Get("shards").(int); n < 1 {
		return &UsageError{Msg: "--shards: give the number of pods, >= 1"}
	}
	if dir, ok := ns.Get("records_host_path").(string); ok {
		if ns.Given("pvc") {
			return &UsageError{Msg: "--records-host-path and --pvc: give one; both are the /records volume"}
		}
		// Absolute in the node's filesystem, whichever OS prints the manifest.
		if !strings.HasPrefix(dir, "/") {
			return &UsageError{Msg: fmt.Sprintf("--records-host-path %s: give an absolute path on the node", dir)}
		}
	}
	for _, a := range bench {
		for _, own := range []string{"--shard", "--start-at", "--start-in", "--record-file", "--output-file", "--sim"} {
			if a == own || strings.HasPrefix(a, own+"=") {
				return &UsageError{Msg: fmt.Sprintf("%s: the manifest sets it for every pod; leave it out of the benchmark flags", own)}
			}
		}
	}
	c, err := Parse(bench)
	if err != nil {
		return &UsageError{Msg: "the benchmark flags after --: " + err.Error()}
	}
	_, err = metricsPort(c.MetricsAddr)
	return err
}

// metricsPort is the port a shard pod serves --metrics-addr on (0: not
// given). Prometheus reaches it from outside the pod, at a port the
// manifest names: the address must be fixed and not loopback.
func metricsPort(addr *string) (int, error) {
	if addr == nil {
		return 0, nil
	}
	host, port, err := net.SplitHostPort(*addr)
	n, perr := strconv.Atoi(port)
	ip := net.ParseIP(host)
	switch {
	case err != nil || perr != nil || n < 0 || n > 65535:
		return 0, &UsageError{Msg: fmt.Sprintf("--metrics-addr %s: give HOST:PORT, e.g. :9400", *addr)}
	case n == 0:
		return 0, &UsageError{Msg: fmt.Sprintf("--metrics-addr %s: give a fixed port: the pods' containerPort names it", *addr)}
	case host == "localhost" || ip != nil && ip.IsLoopback():
		return 0, &UsageError{Msg: fmt.Sprintf("--metrics-addr %s: a loopback address cannot be scraped from outside the pod; give :%d", *addr, n)}
	}
	return n, nil
}

// streamsPerShard sizes a pod: --streams-per-shard, else its share of
// --max-concurrency, else 256.
func streamsPerShard(ns *argparse.Namespace, bench []string) int {
	if n := ns.Get("streams_per_shard").(int); n > 0 {
		return n
	}
	if c, err := Parse(bench); err == nil && c.MaxConcurrency != nil && *c.MaxConcurrency > 0 {
		n := ns.Get("shards").(int)
		return (*c.MaxConcurrency + n - 1) / n
	}
	return 256
}

type k8sSpec struct {
	Name, Image, PVC string
	HostPath         string // the records volume is this node directory, not PVC
	HostNetwork      bool   // the shard pods run in the node's network namespace
	PullPolicy       string // both containers' imagePullPolicy ("": Kubernetes' default)
	MetricsPort      int    // the shards serve --metrics-addr on it (0: not given)
	Shards, Streams  int
	StartAt          float64
	Bench            []string
}

// obj is a JSON object (written with its keys sorted, as encoding/json
// writes a map's).
type obj = map[string]any

// manifest is a v1 List of the Indexed Job of the shards and the Job that
// merges their record files once every shard has written its end line.
// Resources are sized with room over the client's measured cost
// (docs/performance.md: about 24 MB of anonymous memory at 1,000 streams
// and 13 KB more a stream, and about 10 µs of CPU per output token at
// 1,000 paced streams): 64 Mi plus 128 Ki a stream, and a quarter of a
// core plus one per thousand streams, with the limits twice the requests.
func manifest(s k8sSpec) obj {
	memMi := 64 + (s.Streams*128+1023)/1024
	cpuM := 250 + s.Streams
	res := obj{
		"requests": obj{"cpu": fmt.Sprintf("%dm", cpuM), "memory": fmt.Sprintf("%dMi", memMi)},
		"limits":   obj{"cpu": fmt.Sprintf("%dm", 2*cpuM), "memory": fmt.Sprintf("%dMi", 2*memMi)},
	}
	// The release image runs as uid 65532 (tools/release); fsGroup gives
	// that group the volume, where its type supports it, so the pods can
	// write their record files.
	podSecurity := obj{"fsGroup": 65532}
	vol := []any{obj{"name": "records", "persistentVolumeClaim": obj{"claimName": s.PVC}}}
	if s.HostPath != "" {
		vol = []any{obj{"name": "records", "hostPath": obj{"path": s.HostPath, "type": "Directory"}}}
	}
	mount := []any{obj{"name": "records", "mountPath": "/records"}}
	n := strconv.Itoa(s.Shards)
	// A failed shard fails its index only (backoffLimitPerIndex, on by
	// default since Kubernetes 1.29): it is not retried, which would send
	// its share late and overwrite its records, and the other shards run
	// on, so the merge can name the one lost. backoffLimit: 0 would end
	// every shard at the first failure (seen on a real cluster:
	// tools/k8s-e2e/run).
	args := append([]string{
		"--shard", "$(JOB_COMPLETION_INDEX)/" + n,
		"--start-at", strconv.FormatFloat(s.StartAt, 'f', -1, 64),
		"--record-file", "/records/records-$(JOB_COMPLETION_INDEX).jsonl",
		"--output-file", "/records/result-$(JOB_COMPLETION_INDEX).jsonl",
		"--disable-tqdm",
	}, s.Bench...)
	shards := obj{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": obj{"name": s.Name, "labels": obj{"app.kubernetes.io/name": "benchserve"}},
		"spec": obj{
			"completionMode": "Indexed", "completions": s.Shards, "parallelism": s.Shards, "backoffLimitPerIndex": 0,
			"template": obj{
				"metadata": obj{"labels": obj{"app.kubernetes.io/name": "benchserve", "benchserve/role": "shard"}},
				"spec": obj{
					"restartPolicy": "Never", "automountServiceAccountToken": false,
					"containers": []any{obj{
						"name": "benchserve", "image": s.Image, "command": []string{"/benchserve"}, "args": args,
						"env": []any{obj{"name": "JOB_COMPLETION_INDEX", "valueFrom": obj{"fieldRef": obj{
							"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
						"resources": res, "volumeMounts": mount,
					}},
					"securityContext": podSecurity,
					"volumes":         vol,
				},
			},
		},
	}
	merge := obj{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": obj{"name": s.Name + "-merge", "labels": obj{"app.kubernetes.io/name": "benchserve"}},
		"spec": obj{
			"backoffLimit": 0,
			"template": obj{
				"metadata": obj{"labels": obj{"app.kubernetes.io/name": "benchserve", "benchserve/role": "merge"}},
				"spec": obj{
					"restartPolicy": "Never", "automountServiceAccountToken": false,
					"containers": []any{obj{
						"name": "merge", "image": s.Image, "command": []string{"/benchserve"},
						"args": []string{"merge", "/records/records-*.jsonl", "--expect", n, "--wait", "86400",
							"--start-at", strconv.FormatFloat(s.StartAt, 'f', -1, 64), "--output-file", "/records/merged.jsonl"},
						"resources":    obj{"requests": obj{"cpu": "100m", "memory": "256Mi"}},
						"volumeMounts": mount,
					}},
					"securityContext": podSecurity,
					"volumes":         vol,
				},
			},
		},
	}
	if s.HostNetwork {
		// ClusterFirstWithHostNet keeps the cluster's DNS, for a Service
		// as the base URL.
		pod := shards["spec"].(obj)["template"].(obj)["spec"].(obj)
		pod["hostNetwork"], pod["dnsPolicy"] = true, "ClusterFirstWithHostNet"
	}
	if s.MetricsPort > 0 {
		// The port, named, and the annotations a Prometheus with the
		// usual kubernetes_sd relabelling scrapes by.
		tmpl := shards["spec"].(obj)["template"].(obj)
		c := tmpl["spec"].(obj)["containers"].([]any)[0].(obj)
		c["ports"] = []any{obj{"name": "metrics", "containerPort": s.MetricsPort, "protocol": "TCP"}}
		tmpl["metadata"].(obj)["annotations"] = obj{"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(s.MetricsPort), "prometheus.io/path": "/metrics"}
	}
	if s.PullPolicy != "" {
		for _, j := range []obj{shards, merge} {
			c := j["spec"].(obj)["template"].(obj)["spec"].(obj)["containers"].([]any)[0].(obj)
			c["imagePullPolicy"] = s.PullPolicy
		}
	}
	return obj{"apiVersion": "v1", "kind": "List", "items": []any{shards, merge}}
}
