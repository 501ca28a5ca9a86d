package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestSweepEmitK8s emits the small sweep's Indexed Job, parses the
// manifests strictly with the Kubernetes API types, and then does what
// the cluster would: lays the ConfigMap's items out as the pod's /spec
// volume, runs the container's command once per completion index with
// JOB_COMPLETION_INDEX set (the /results volume a directory), merges the
// results and checks they equal one process's run.
func TestSweepEmitK8s(t *testing.T) {
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	// A spec whose base is a setup file beside it, so the ConfigMap must
	// carry that file too.
	dir := t.TempDir()
	spec, err := os.ReadFile(smallSweep)
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile("../../testdata/setups/ds1817-raid5-hdd-smb-1g.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "setups"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "setups", "base.yaml"), base, 0o644); err != nil {
		t.Fatal(err)
	}
	spec = bytes.Replace(spec, []byte("base: ds1817-raid5-hdd-smb-1g"), []byte("base: setups/base.yaml"), 1)
	specPath := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	const shards = 3
	manifest := runOK(t, "sweep", "--emit", "k8s", specPath, "--shards", strconv.Itoa(shards), "--parallelism", "2", "--image", "registry.example/nasemu:v1")
	docs := strings.Split(manifest, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a ConfigMap and a Job:\n%s", len(docs), manifest)
	}
	var cm corev1.ConfigMap
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &cm); err != nil || cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
		t.Fatalf("first document is not a v1 ConfigMap (%v):\n%s", err, docs[0])
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil || job.Kind != "Job" || job.APIVersion != "batch/v1" {
		t.Fatalf("second document is not a batch/v1 Job (%v):\n%s", err, docs[1])
	}
	js := job.Spec
	if js.CompletionMode == nil || *js.CompletionMode != batchv1.IndexedCompletion ||
		js.Completions == nil || *js.Completions != shards || js.Parallelism == nil || *js.Parallelism != 2 {
		t.Fatalf("job spec: mode %v, completions %v, parallelism %v; want Indexed, %d, 2", js.CompletionMode, js.Completions, js.Parallelism, shards)
	}
	pod := js.Template.Spec
	if len(pod.Containers) != 1 || pod.Containers[0].Image != "registry.example/nasemu:v1" || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("pod: %d containers, image %q, restart %q", len(pod.Containers), pod.Containers[0].Image, pod.RestartPolicy)
	}
	c := pod.Containers[0]
	argv := append(append([]string(nil), c.Command...), c.Args...)
	if len(argv) < 2 || argv[0] != "nasemu" || argv[1] != "sweep" {
		t.Fatalf("the container runs %q", argv)
	}

	// The pod's volumes as directories.
	mounts := map[string]string{} // mount path → host directory
	for _, m := range c.VolumeMounts {
		var v *corev1.Volume
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == m.Name {
				v = &pod.Volumes[i]
			}
		}
		if v == nil {
			t.Fatalf("mount %s names no volume", m.Name)
		}
		host := t.TempDir()
		mounts[m.MountPath] = host
		switch {
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != cm.Name {
				t.Fatalf("volume %s is ConfigMap %q, the manifest's is %q", v.Name, v.ConfigMap.Name, cm.Name)
			}
			for _, it := range v.ConfigMap.Items {
				data, ok := cm.Data[it.Key]
				if !ok {
					t.Fatalf("item %s names no key of the ConfigMap", it.Key)
				}
				p := filepath.Join(host, filepath.FromSlash(it.Path))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		case v.PersistentVolumeClaim != nil:
			if m.ReadOnly {
				t.Fatalf("the claim %s is mounted read-only", v.PersistentVolumeClaim.ClaimName)
			}
		default:
			t.Fatalf("volume %s is neither the ConfigMap nor a claim", v.Name)
		}
	}
	local := func(arg string) string {
		for mp, host := range mounts {
			if arg == mp || strings.HasPrefix(arg, mp+"/") {
				return host + strings.TrimPrefix(arg, mp)
			}
		}
		return arg
	}
	var results string
	args := []string{}
	for i, a := range argv[1:] {
		args = append(args, local(a))
		if i > 0 && argv[i] == "--out" {
			results = local(a)
		}
	}
	if results == "" {
		t.Fatalf("the container passes no --out: %q", argv)
	}
	for k := range shards {
		t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(k))
		runOK(t, args...)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	want := runOK(t, "sweep", specPath, "--format", "csv", "--quiet")
	if got := runOK(t, "sweep", "merge", "--format", "csv", results); got != want {
		t.Errorf("the pods' merged CSV differs from one process's:\n%s\nwant\n%s", got, want)
	}
}

// TestSweepEmitSlurm emits the small sweep's job array and checks that
// the script is valid sh and asks for one task per shard.
func TestSweepEmitSlurm(t *testing.T) {
	script := runOK(t, "sweep", "--emit", "slurm", smallSweep, "--shards", "5", "--parallelism", "2", "--out", t.TempDir())
	for _, want := range []string{"#SBATCH --array=0-4%2\n", "\nexec nasemu sweep '"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v: %s", err, out)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"sweep", "--emit", "helm", smallSweep}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "want k8s or slurm") {
		t.Errorf("--emit helm: exit %d, %q", code, errb.String())
	}
}
