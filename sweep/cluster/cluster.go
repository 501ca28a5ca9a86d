// Package cluster writes what runs a sweep's shards on a cluster with an
// engine it already has: a Kubernetes Indexed Job (each pod's
// JOB_COMPLETION_INDEX is its shard) or a Slurm job array (each task's
// SLURM_ARRAY_TASK_ID). The Kubernetes manifest is built from the
// Kubernetes API types and marshalled by their JSON tags, never from a
// text template, so it is what the API server reads back.
//
// The spec travels with the manifest in a ConfigMap mounted at /spec,
// beside the setup and job files it names by relative path; the shards
// append their records to a PersistentVolumeClaim mounted at /results,
// which must exist, and `nasemu sweep merge /results` combines them.
package cluster

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/sweep"
)

// Options say how the shards run.
type Options struct {
	Shards      int    // shards (pods, array tasks); at least 1
	Parallelism int    // shards at once; 0: all of them
	Image       string // the container image with nasemu on its PATH (the repository's Dockerfile)
	Claim       string // the PersistentVolumeClaim of the results (Kubernetes)
	Out         string // the results directory every node sees (Slurm)
	CPUs        int    // CPUs per shard (points simulated at once); 0: 2
}

// Where the pod finds the spec and writes the results.
const (
	specDir    = "/spec"
	resultsDir = "/results"
	specKey    = "spec.yaml"
)

// Memory per shard and CPU: a point holds up to about 0.8 GB of model
// state (six QLC SSDs in RAID 1 of example-500), CPUs points run at once,
// and Go's collector lets the heap grow past the live data (example-500
// on 2 CPUs peaked at 2.3 GB resident). The limit is 2 GiB per CPU, the
// request half of it and GOMEMLIMIT three quarters (the collector works
// harder before the limit is reached).
const perPointBytes = 2 << 30

func (o *Options) defaults() error {
	if o.Shards < 1 {
		return fmt.Errorf("%w: --shards %d: want at least 1", models.ErrConfig, o.Shards)
	}
	if o.Parallelism <= 0 || o.Parallelism > o.Shards {
		o.Parallelism = o.Shards
	}
	if o.CPUs <= 0 {
		o.CPUs = 2
	}
	if o.Image == "" {
		o.Image = "nasemu:latest"
	}
	if o.Claim == "" {
		o.Claim = "nasemu-sweep-results"
	}
	if o.Out == "" {
		o.Out = "results"
	}
	return nil
}

// files returns the spec's text and the files it names by relative path
// (a base setup file, fio job files), each with its path relative to the
// spec's directory. A spec naming a file by absolute path or outside its
// directory cannot travel with it and is refused.
func files(sp *sweep.Spec) (spec []byte, rel map[string][]byte, err error) {
	if spec, err = os.ReadFile(sp.File); err != nil {
		return nil, nil, err
	}
	dir := filepath.Dir(sp.File)
	rel = map[string][]byte{}
	names := []string{}
	if b := sp.BaseName; strings.Contains(b, "/") || strings.HasSuffix(b, ".yaml") {
		names = append(names, b)
	}
	for _, w := range sp.Workloads {
		if w.Job != "" {
			names = append(names, w.Job)
		}
	}
	for _, n := range names {
		clean := path.Clean(filepath.ToSlash(n))
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, nil, fmt.Errorf("%w: %s names %s, outside its directory: copy it beside the spec to run the sweep on a cluster", models.ErrConfig, sp.File, n)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(clean)))
		if err != nil {
			return nil, nil, err
		}
		rel[clean] = b
	}
	return spec, rel, nil
}

var nameRE = regexp.MustCompile(`[^a-z0-9-]+`)

// objectName returns a DNS-1123 name for the sweep's objects.
func objectName(sp *sweep.Spec) string {
	n := strings.Trim(nameRE.ReplaceAllString(strings.ToLower(sp.Name), "-"), "-")
	if n == "" {
		n = "sweep"
	}
	n = "nasemu-sweep-" + n
	if len(n) > 52 { // a Job's pods get a suffix; stay well within 63
		n = strings.TrimRight(n[:52], "-")
	}
	return n
}

// Kubernetes returns the manifests that run sp's shards as an Indexed Job:
// a ConfigMap with the spec and the files it names, then the Job, as one
// YAML stream.
func Kubernetes(sp *sweep.Spec, opt Options) ([]byte, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	spec, rel, err := files(sp)
	if err != nil {
		return nil, err
	}
	name := objectName(sp)
	labels := map[string]string{"app.kubernetes.io/name": "nasemu-sweep", "app.kubernetes.io/instance": name}
	cm := corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Data:       map[string]string{specKey: string(spec)},
	}
	items := []corev1.KeyToPath{{Key: specKey, Path: specKey}}
	for i, p := range slices.Sorted(maps.Keys(rel)) {
		key := "file-" + strconv.Itoa(i)
		cm.Data[key] = string(rel[p])
		items = append(items, corev1.KeyToPath{Key: key, Path: p})
	}
	shards := int32(opt.Shards)
	par := int32(opt.Parallelism)
	indexed := batchv1.IndexedCompletion
	backoff := int32(2)
	maxFailed := int32(0)
	yes, no := true, false
	uid := int64(65532)
	mem := int64(opt.CPUs) * perPointBytes
	job := batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:       &indexed,
			Completions:          &shards,
			Parallelism:          &par,
			BackoffLimitPerIndex: &backoff,
			MaxFailedIndexes:     &maxFailed,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &uid, FSGroup: &uid,
					},
					Containers: []corev1.Container{{
						Name:    "sweep",
						Image:   opt.Image,
						Command: []string{"nasemu"},
						Args: []string{"sweep", specDir + "/" + specKey, "--shards", strconv.Itoa(opt.Shards),
							"--out", resultsDir, "--jobs", strconv.Itoa(opt.CPUs), "--format", "csv", "--quiet"},
						Env: []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: strconv.FormatInt(mem*3/4, 10)}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    *resource.NewQuantity(int64(opt.CPUs), resource.DecimalSI),
								corev1.ResourceMemory: *resource.NewQuantity(mem/2, resource.BinarySI),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceCPU:    *resource.NewQuantity(int64(opt.CPUs), resource.DecimalSI),
								corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
							},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: &no,
							ReadOnlyRootFilesystem:   &yes,
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "spec", MountPath: specDir, ReadOnly: true},
							{Name: "results", MountPath: resultsDir},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "spec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items}}},
						{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
							ClaimName: opt.Claim}}},
					},
				},
			},
		},
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# nasemu sweep %s as a Kubernetes Indexed Job: %d shards, %d at a time, image %s.\n", sp.Name, opt.Shards, opt.Parallelism, opt.Image)
	fmt.Fprintf(&out, "# The results go to the PersistentVolumeClaim %s (create it first); when the Job is complete:\n", opt.Claim)
	fmt.Fprintf(&out, "#   nasemu sweep merge --format csv %s > sweep.csv   (in a pod that mounts the claim)\n", resultsDir)
	for i, obj := range []any{cm, job} {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}

// Slurm returns an sbatch script that runs sp's shards as a job array:
// task K runs shard K (nasemu takes it from SLURM_ARRAY_TASK_ID, less
// SLURM_ARRAY_TASK_MIN, and the count from SLURM_ARRAY_TASK_COUNT). The
// spec and the results directory are absolute paths every node must see.
func Slurm(sp *sweep.Spec, opt Options) ([]byte, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	spec, err := filepath.Abs(sp.File)
	if err != nil {
		return nil, err
	}
	out, err := filepath.Abs(opt.Out)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{spec, out} {
		if strings.ContainsAny(p, "'\n") {
			return nil, fmt.Errorf("%w: %q: a path with a quote or newline cannot go in the script", models.ErrConfig, p)
		}
	}
	if _, _, err := files(sp); err != nil {
		return nil, err
	}
	gib := (int64(opt.CPUs)*perPointBytes + 1<<30 - 1) >> 30
	var b bytes.Buffer
	fmt.Fprintf(&b, "#!/bin/sh\n# nasemu sweep %s as a Slurm job array: %d shards, %d at a time.\n", sp.Name, opt.Shards, opt.Parallelism)
	fmt.Fprintf(&b, "#   sbatch THIS_SCRIPT\n#   # when every task is done:\n#   nasemu sweep merge --format csv '%s' > sweep.csv\n", out)
	b.WriteString("# The spec and the results directory must be on a filesystem every node sees;\n# a requeued task resumes from its shard file.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", objectName(sp))
	fmt.Fprintf(&b, "#SBATCH --array=0-%d%%%d\n", opt.Shards-1, opt.Parallelism)
	fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%dG\n", opt.CPUs, gib)
	b.WriteString("set -eu\n")
	fmt.Fprintf(&b, "export GOMEMLIMIT=${GOMEMLIMIT:-%d}\n", int64(opt.CPUs)*perPointBytes*3/4)
	fmt.Fprintf(&b, "exec nasemu sweep '%s' --out '%s' --jobs \"${SLURM_CPUS_PER_TASK:-%d}\" --format csv --quiet\n", spec, out, opt.CPUs)
	return b.Bytes(), nil
}
