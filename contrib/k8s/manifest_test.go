// Package k8s holds the Kubernetes manifest of a sweep
// (sweep-job.yaml) and its test. The package has no code of its own:
// the Kubernetes API types it parses the manifest with are a dependency
// of this test alone, never of the nasemu binary.
package k8s

import (
	"os"
	"path"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestSweepJobManifest parses the manifest strictly with the Kubernetes
// API types and checks that it is an Indexed Job whose completions equal
// the --shards its container passes to nasemu sweep (so that every index
// JOB_COMPLETION_INDEX takes is a shard, and every shard has an index),
// writing to a mounted volume and reading the spec from one.
func TestSweepJobManifest(t *testing.T) {
	data, err := os.ReadFile("sweep-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(data, &job); err != nil {
		t.Fatalf("sweep-job.yaml is not a batch/v1 Job: %v", err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Fatalf("apiVersion %q kind %q, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %v, want Indexed (pods get JOB_COMPLETION_INDEX)", spec.CompletionMode)
	}
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever && spec.BackoffLimitPerIndex != nil {
		t.Errorf("backoffLimitPerIndex needs restartPolicy Never, got %q", spec.Template.Spec.RestartPolicy)
	}
	cs := spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	c := cs[0]
	argv := append(append([]string(nil), c.Command...), c.Args...)
	if len(argv) < 3 || path.Base(argv[0]) != "nasemu" || argv[1] != "sweep" {
		t.Fatalf("the container runs %q, want nasemu sweep SPEC ...", argv)
	}
	flags := map[string]string{}
	for i := 3; i < len(argv); i++ {
		switch a := argv[i]; a {
		case "--shards", "--out", "--format", "--jobs":
			if i+1 == len(argv) {
				t.Fatalf("%s without a value in %q", a, argv)
			}
			flags[a] = argv[i+1]
			i++
		case "--quiet":
		default:
			t.Errorf("unexpected argument %q in %q", a, argv)
		}
	}
	shards, err := strconv.Atoi(flags["--shards"])
	if err != nil {
		t.Fatalf("--shards %q: %v", flags["--shards"], err)
	}
	if spec.Completions == nil || int(*spec.Completions) != shards {
		t.Errorf("completions %v, want --shards = %d", spec.Completions, shards)
	}
	if spec.Parallelism != nil && (*spec.Parallelism < 1 || int(*spec.Parallelism) > shards) {
		t.Errorf("parallelism %d, want 1..%d", *spec.Parallelism, shards)
	}
	mounted := func(p string) (corev1.VolumeMount, bool) {
		for _, m := range c.VolumeMounts {
			if p == m.MountPath || strings.HasPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/") {
				return m, true
			}
		}
		return corev1.VolumeMount{}, false
	}
	out, ok := mounted(flags["--out"])
	if !ok || out.ReadOnly {
		t.Errorf("--out %q is not on a writable volume mount: the shards' files would be lost with their pods", flags["--out"])
	}
	if _, ok := mounted(argv[2]); !ok {
		t.Errorf("the spec %q is not on a volume mount", argv[2])
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		if _, ok := vols[m.Name]; !ok {
			t.Errorf("mount %s names no volume", m.Name)
		}
	}
	if v := vols[out.Name]; v.PersistentVolumeClaim == nil {
		t.Errorf("--out's volume %q is not a PersistentVolumeClaim: merge needs every shard's file after the pods end", out.Name)
	}
}
