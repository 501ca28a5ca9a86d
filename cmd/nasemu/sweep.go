package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/report"
	"github.com/nasemu/nasemu/sweep"
	"github.com/nasemu/nasemu/sweep/cluster"
)

// Environment variables that give a shard its index (and, for Slurm, the
// count) when --shards is given: a Kubernetes Indexed Job's and a Slurm
// job array's.
const (
	envK8sIndex   = "JOB_COMPLETION_INDEX"
	envSlurmID    = "SLURM_ARRAY_TASK_ID"
	envSlurmMin   = "SLURM_ARRAY_TASK_MIN"
	envSlurmCount = "SLURM_ARRAY_TASK_COUNT"
)

const sweepSynopsis = "SPEC.yaml [--format table|csv|json|parquet] [--out DIR] [--shard K/N | --shards N] [--jobs N] [--html DIR [--metric iops|mbps]]\n" +
	"       nasemu sweep --emit k8s|slurm SPEC.yaml [--shards N] [--parallelism P] [--jobs N] [--image IMAGE] [--claim PVC] [--out DIR]\n" +
	"       nasemu sweep merge [--format table|csv|json|parquet] [--html DIR [--metric iops|mbps]] DIR..."

func runSweep(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(args[1:], stdout, stderr)
	}
	fs := newFlags("sweep", sweepSynopsis, stderr)
	format := fs.String("format", "table", "output format: "+strings.Join(sweep.Formats, ", ")+" (json: a header line, then one record per point)")
	out := fs.String("out", "", "also write each point's record to DIR/shard-K-of-N.jsonl as it finishes; a run with the same DIR resumes, skipping the points it holds")
	shard := fs.String("shard", "", "run shard K/N: every N-th point from K (0 ≤ K < N)")
	shards := fs.Int("shards", 0, "run one of N shards, K from $"+envK8sIndex+" (Kubernetes Indexed Job) or $"+envSlurmID+" (Slurm array)")
	jobs := fs.Int("jobs", 0, "points simulated at once (default: the CPUs Go may use)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	emit := fs.String("emit", "", "write what runs the shards on a cluster instead of running: k8s (a ConfigMap of the spec and an Indexed Job) or slurm (an sbatch array script)")
	image := fs.String("image", "nasemu:latest", "with --emit k8s: the container image with nasemu on its PATH (built from the repository's Dockerfile)")
	claim := fs.String("claim", "nasemu-sweep-results", "with --emit k8s: the PersistentVolumeClaim the shards write their results to")
	parallelism := fs.Int("parallelism", 0, "with --emit: shards running at once (default: all)")
	html := fs.String("html", "", "also write an HTML page to DIR: per job the Pareto frontier of price against --metric, a table and a chart")
	metric := fs.String("metric", "iops", "the HTML page's metric: "+strings.Join(sweep.Metrics, " or "))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !slices.Contains(sweep.Metrics, *metric) {
		return usagef("unknown metric %q (known: %s)", *metric, strings.Join(sweep.Metrics, ", "))
	}
	if *emit != "" {
		return emitSweep(fs, *emit, cluster.Options{Shards: *shards, Parallelism: *parallelism, Image: *image, Claim: *claim, Out: *out, CPUs: *jobs}, stdout)
	}
	switch {
	case fs.NArg() != 1:
		return usagef("give one sweep spec (or: nasemu sweep merge DIR...)")
	case !slices.Contains(sweep.Formats, *format):
		return usagef("unknown format %q (known: %s)", *format, strings.Join(sweep.Formats, ", "))
	case *jobs < 0:
		return usagef("--jobs must not be negative")
	}
	k, n, err := shardOf(*shard, *shards, fs.Changed("shards"), os.Getenv)
	if err != nil {
		return err
	}
	spec, err := sweep.Load(fs.Arg(0), nasemu.LoadSetup)
	if err != nil {
		return usageError{err}
	}
	indices, err := sweep.ShardIndices(spec.Len(), k, n)
	if err != nil {
		return usageError{err}
	}
	h := sweep.Header{Sweep: spec.Name, Digest: spec.Digest, Points: spec.Len(), Keys: spec.Keys(), Shard: k, Shards: n, Steady: spec.SteadyCriterion()}
	res := &sweep.Results{Header: h}
	var output *sweep.Output
	if *out != "" {
		if output, err = sweep.OpenOutput(*out, h); err != nil {
			return err
		}
		defer output.Close()
	}
	opt := sweep.Options{Workers: *jobs}
	var have map[int]sweep.Record
	if output != nil {
		have = maps.Clone(output.Have()) // before this run's records join it
		opt.Skip = func(i int) bool { _, ok := have[i]; return ok }
	}
	todo := 0
	for _, i := range indices {
		if _, ok := have[i]; !ok {
			todo++
		}
	}
	var bar interface {
		Add(int) error
		Describe(string)
		Finish() error
	}
	if showProgress(stderr, *quiet) && todo > 0 {
		b := newBar(stderr, int64(todo), "")
		b.Describe(fmt.Sprintf("sweep %s: %d points", spec.Name, todo))
		bar = b
	}
	done, failed := 0, 0
	opt.Done = func(r sweep.Record) error {
		done++
		if r.Error != "" {
			failed++
		}
		if bar != nil {
			bar.Describe(fmt.Sprintf("sweep %s: %d/%d points (%d refused)", spec.Name, done, todo, failed))
			_ = bar.Add(1)
		}
		if output != nil {
			return output.Append(r)
		}
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	recs, err := spec.Run(ctx, indices, opt)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			msg := fmt.Sprintf("interrupted after %d of %d points", done, todo)
			if output != nil {
				msg += "; the same command resumes from " + output.Path()
			}
			return errors.New(msg)
		}
		return err
	}
	for _, i := range indices {
		if r, ok := have[i]; ok {
			recs = append(recs, r)
		}
	}
	slices.SortFunc(recs, func(a, b sweep.Record) int { return a.Index - b.Index })
	res.Records = recs
	if err := writeSweepHTML(res, *html, *metric); err != nil {
		return err
	}
	if err := writeSweepHTML(res, *html, *metric); err != nil {
		return err
	}
	return res.WriteFormat(stdout, *format)
}

// writeSweepHTML writes the results' page into dir (nothing when dir is
// empty).
func writeSweepHTML(res *sweep.Results, dir, metric string) error {
	if dir == "" {
		return nil
	}
	p, err := res.Page(metric)
	if err != nil {
		return usageError{err}
	}
	return report.WritePage(dir, p)
}

// emitSweep is 'nasemu sweep --emit k8s|slurm SPEC': the manifest or
// script that runs the spec's shards on a cluster, on stdout.
func emitSweep(fs interface {
	NArg() int
	Arg(int) string
	Changed(string) bool
}, kind string, opt cluster.Options, stdout io.Writer) error {
	if fs.NArg() != 1 {
		return usagef("give one sweep spec")
	}
	if !fs.Changed("shards") {
		opt.Shards = 4
	}
	if fs.Changed("shard") {
		return usagef("--emit writes every shard's job: give --shards N, not --shard")
	}
	spec, err := sweep.Load(fs.Arg(0), nasemu.LoadSetup)
	if err != nil {
		return usageError{err}
	}
	var b []byte
	switch kind {
	case "k8s":
		b, err = cluster.Kubernetes(spec, opt)
	case "slurm":
		b, err = cluster.Slurm(spec, opt)
	default:
		return usagef("--emit %q: want k8s or slurm", kind)
	}
	if err != nil {
		if errors.Is(err, models.ErrConfig) {
			return usageError{err}
		}
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// shardOf returns shard K of N from --shard K/N, or --shards N with K from
// the environment (a Kubernetes Indexed Job's JOB_COMPLETION_INDEX, a
// Slurm array's SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN); in a
// Slurm array without either flag, N is SLURM_ARRAY_TASK_COUNT. Without
// any of these the sweep is one shard.
func shardOf(shard string, shards int, shardsSet bool, getenv func(string) string) (k, n int, err error) {
	if shard != "" {
		if shardsSet {
			return 0, 0, usagef("give --shard K/N or --shards N, not both")
		}
		ks, ns, ok := strings.Cut(shard, "/")
		k, kerr := strconv.Atoi(ks)
		n, nerr := strconv.Atoi(ns)
		if !ok || kerr != nil || nerr != nil || n < 1 || k < 0 || k >= n {
			return 0, 0, usagef("--shard %q: want K/N with 0 ≤ K < N, e.g. 0/4", shard)
		}
		return k, n, nil
	}
	if !shardsSet {
		c := getenv(envSlurmCount)
		if c == "" {
			return 0, 1, nil
		}
		if shards, err = strconv.Atoi(c); err != nil || shards < 1 {
			return 0, 0, usagef("$%s=%q: want a positive count", envSlurmCount, c)
		}
	}
	if shards < 1 {
		return 0, 0, usagef("--shards %d: want at least 1", shards)
	}
	env, v := envK8sIndex, getenv(envK8sIndex)
	if v == "" {
		env, v = envSlurmID, getenv(envSlurmID)
	}
	if v == "" {
		return 0, 0, usagef("--shards %d takes the shard from $%s or $%s, and neither is set (or give --shard K/%d)", shards, envK8sIndex, envSlurmID, shards)
	}
	k, err = strconv.Atoi(v)
	if err != nil {
		return 0, 0, usagef("$%s=%q: want a shard index", env, v)
	}
	if env == envSlurmID {
		if m := getenv(envSlurmMin); m != "" {
			min, err := strconv.Atoi(m)
			if err != nil {
				return 0, 0, usagef("$%s=%q: want an index", envSlurmMin, m)
			}
			k -= min
		}
	}
	if k < 0 || k >= shards {
		return 0, 0, usagef("$%s=%s gives shard %d, outside 0..%d of --shards %d", env, v, k, shards-1, shards)
	}
	return k, shards, nil
}

// runSweepMerge is 'nasemu sweep merge DIR...': the shards' records as
// one sweep, as one process would have printed them.
func runSweepMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep merge", "[--format table|csv|json|parquet] DIR...", stderr)
	format := fs.String("format", "table", "output format: "+strings.Join(sweep.Formats, ", "))
	html := fs.String("html", "", "also write an HTML page to DIR: per job the Pareto frontier of price against --metric")
	metric := fs.String("metric", "iops", "the HTML page's metric: "+strings.Join(sweep.Metrics, " or "))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !slices.Contains(sweep.Metrics, *metric) {
		return usagef("unknown metric %q (known: %s)", *metric, strings.Join(sweep.Metrics, ", "))
	}
	switch {
	case fs.NArg() == 0:
		return usagef("give the directories the shards wrote (their --out)")
	case !slices.Contains(sweep.Formats, *format):
		return usagef("unknown format %q (known: %s)", *format, strings.Join(sweep.Formats, ", "))
	}
	res, err := sweep.Merge(fs.Args()...)
	if err != nil {
		if errors.Is(err, models.ErrConfig) {
			return usageError{err}
		}
		return err
	}
	if err := writeSweepHTML(res, *html, *metric); err != nil {
		return err
	}
	return res.WriteFormat(stdout, *format)
}
