package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// strictJobs decodes k8s-job's JSON into batch/v1 Jobs, refusing unknown
// fields.
func strictJobs(t *testing.T, out string) []batchv1.Job {
	t.Helper()
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Items) != 2 {
		t.Fatalf("list: %v, %d items\n%s", err, len(list.Items), out)
	}
	var jobs []batchv1.Job
	for _, raw := range list.Items {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var j batchv1.Job
		if err := dec.Decode(&j); err != nil {
			t.Fatalf("not a batch/v1 Job: %v", err)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// --host-network, --records-host-path and --image-pull-policy each land
// in the fields the API's types name; without them the manifest has none
// of those fields.
func TestK8sJobOptions(t *testing.T) {
	bench := []string{"--", "--backend", "vllm", "--base-url", "http://vllm.default.svc:8000", "--model", "m", "--dataset-name", "random-ids", "--num-prompts", "100"}
	k8s := func(opts ...string) []batchv1.Job {
		t.Helper()
		code, out, errb := run(t, nil, append(append([]string{"k8s-job", "--shards", "4", "--start-at", "1798000000"}, opts...), bench...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s", opts, code, errb)
		}
		return strictJobs(t, out)
	}

	for _, j := range k8s() {
		p := j.Spec.Template.Spec
		if p.HostNetwork || p.DNSPolicy != "" || p.Containers[0].ImagePullPolicy != "" || p.Volumes[0].HostPath != nil ||
			p.Volumes[0].PersistentVolumeClaim == nil || p.Volumes[0].PersistentVolumeClaim.ClaimName != "benchserve-records" {
			t.Errorf("%s by default: %+v", j.Name, p)
		}
	}

	jobs := k8s("--host-network")
	if p := jobs[0].Spec.Template.Spec; !p.HostNetwork || p.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Errorf("shards with --host-network: hostNetwork %v, dnsPolicy %q", p.HostNetwork, p.DNSPolicy)
	}
	// The merge pod sends nothing: it keeps the pod network.
	if p := jobs[1].Spec.Template.Spec; p.HostNetwork {
		t.Errorf("merge with --host-network: hostNetwork %v", p.HostNetwork)
	}

	for _, j := range k8s("--records-host-path", "/var/lib/benchserve") {
		v := j.Spec.Template.Spec.Volumes
		if len(v) != 1 || v[0].Name != "records" || v[0].PersistentVolumeClaim != nil || v[0].HostPath == nil ||
			v[0].HostPath.Path != "/var/lib/benchserve" || v[0].HostPath.Type == nil || *v[0].HostPath.Type != corev1.HostPathDirectory {
			t.Errorf("%s with --records-host-path: volumes %+v", j.Name, v)
		}
		if m := j.Spec.Template.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].Name != "records" || m[0].MountPath != "/records" {
			t.Errorf("%s: mounts %+v", j.Name, m)
		}
	}

	for _, pol := range []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever} {
		for _, j := range k8s("--image-pull-policy", string(pol)) {
			if got := j.Spec.Template.Spec.Containers[0].ImagePullPolicy; got != pol {
				t.Errorf("%s with --image-pull-policy %s: %q", j.Name, pol, got)
			}
		}
	}

	// All three at once, as the single-node e2e gives them.
	jobs = k8s("--host-network", "--records-host-path", "/srv/records", "--image-pull-policy", "Never")
	if p := jobs[0].Spec.Template.Spec; !p.HostNetwork || p.Volumes[0].HostPath.Path != "/srv/records" || p.Containers[0].ImagePullPolicy != corev1.PullNever {
		t.Errorf("all three: %+v", p)
	}
}

// Bad values of the new options are one line naming the flag, exit 2.
func TestK8sJobOptionErrors(t *testing.T) {
	bench := []string{"--", "--backend", "vllm", "--base-url", "http://vllm:8000", "--model", "m", "--num-prompts", "10"}
	for _, c := range []struct {
		opts []string
		want string
	}{
		{[]string{"--records-host-path", "records"}, "benchserve: error: --records-host-path records: give an absolute path on the node\n"},
		{[]string{"--records-host-path", "/srv/records", "--pvc", "claim"}, "benchserve: error: --records-host-path and --pvc: give one; both are the /records volume\n"},
		{[]string{"--pvc", "claim", "--records-host-path", "/srv/records"}, "benchserve: error: --records-host-path and --pvc: give one; both are the /records volume\n"},
		{[]string{"--image-pull-policy", "always"}, "--image-pull-policy: invalid choice: 'always'"},
	} {
		code, out, errb := run(t, nil, append(append([]string{"k8s-job", "--shards", "2"}, c.opts...), bench...)...)
		if code != 2 || out != "" || !strings.Contains(errb, c.want) || strings.Count(errb, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", c.opts, code, out, errb, c.want)
		}
	}
}

// --metrics-addr among the benchmark flags: each shard pod serves it (the
// flag passes through), names the port and carries the scrape
// annotations; the merge pod serves nothing. Without it, neither.
func TestK8sJobMetricsPort(t *testing.T) {
	k8s := func(bench ...string) []batchv1.Job {
		t.Helper()
		args := append([]string{"k8s-job", "--shards", "3", "--start-at", "1798000000", "--", "--backend", "vllm", "--base-url", "http://vllm:8000", "--model", "m"}, bench...)
		code, out, errb := run(t, nil, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s", bench, code, errb)
		}
		return strictJobs(t, out)
	}
	jobs := k8s("--metrics-addr", ":9400")
	tmpl := jobs[0].Spec.Template
	c := tmpl.Spec.Containers[0]
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9400 || c.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("shard ports %+v", c.Ports)
	}
	if a := tmpl.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9400" || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("shard annotations %v", a)
	}
	if !strings.Contains(strings.Join(c.Args, " "), "--metrics-addr :9400") {
		t.Errorf("shard args %q", c.Args)
	}
	if m := jobs[1].Spec.Template; len(m.Spec.Containers[0].Ports) != 0 || len(m.Annotations) != 0 {
		t.Errorf("merge pod: ports %+v, annotations %v", m.Spec.Containers[0].Ports, m.Annotations)
	}
	if p := k8s("--metrics-addr", "0.0.0.0:9500")[0].Spec.Template.Spec.Containers[0].Ports; len(p) != 1 || p[0].ContainerPort != 9500 {
		t.Errorf("0.0.0.0:9500: ports %+v", p)
	}
	for _, j := range k8s() {
		if len(j.Spec.Template.Spec.Containers[0].Ports) != 0 || len(j.Spec.Template.Annotations) != 0 {
			t.Errorf("%s without --metrics-addr: %+v", j.Name, j.Spec.Template)
		}
	}
}

// An address the pods' port cannot name, or Prometheus cannot reach, is a
// usage error of k8s-job.
func TestK8sJobMetricsAddrErrors(t *testing.T) {
	for addr, want := range map[string]string{
		":0":             "--metrics-addr :0: give a fixed port: the pods' containerPort names it",
		"127.0.0.1:9400": "--metrics-addr 127.0.0.1:9400: a loopback address cannot be scraped from outside the pod; give :9400",
		"localhost:9400": "--metrics-addr localhost:9400: a loopback address cannot be scraped from outside the pod; give :9400",
		"[::1]:9400":     "--metrics-addr [::1]:9400: a loopback address cannot be scraped from outside the pod; give :9400",
		"9400":           "--metrics-addr 9400: give HOST:PORT, e.g. :9400",
		":http":          "--metrics-addr :http: give HOST:PORT, e.g. :9400",
	} {
		code, out, errb := run(t, nil, "k8s-job", "--shards", "2", "--", "--backend", "vllm", "--base-url", "http://vllm:8000", "--model", "m", "--metrics-addr", addr)
		if code != 2 || out != "" || errb != "benchserve: error: "+want+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", addr, code, out, errb)
		}
	}
}
