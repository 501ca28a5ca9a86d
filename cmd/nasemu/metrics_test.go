package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/fusefs"
)

// A running mount's /metrics passes 'promtool check metrics' (Prometheus'
// own linter: counters as counters named _total, base units, help texts),
// after traffic and a drive failure, and labels say which array and drive
// a figure is of.
func TestMetricsPromtool(t *testing.T) {
	requireFuse(t)
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("this CI host lacks promtool (Debian package prometheus)")
		}
		t.Skip("no promtool on this host")
	}
	mnt, backing := t.TempDir(), t.TempDir()
	ready := filepath.Join(t.TempDir(), "ready")
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- mount(ctx, []string{"--setup", "ds1817-raid5-hdd-cache-smb-1g", "--backing", backing, "--socket", sock,
			"--metrics", "127.0.0.1:0", "--ready-file", ready, mnt}, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if fusefs.Mounted(mnt) {
			t.Errorf("%s still mounted", mnt)
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	var addr string
	for deadline := time.Now().Add(15 * time.Second); addr == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("mount not ready: %s", stderr.String())
		}
		b, _ := os.ReadFile(ready)
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "metrics="); ok {
				addr = v
			}
		}
	}

	data := bytes.Repeat([]byte("metrics "), 512<<10) // 4 MiB
	fh, err := os.Create(filepath.Join(mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	fh.Write(data)
	fh.Sync()
	fh.Close()
	if got, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v", err)
	}
	var out bytes.Buffer
	if code := run([]string{"ctl", "--socket", sock, "fail", "3"}, &out, &out); code != 0 {
		t.Fatalf("ctl fail 3: %s", out.String())
	}

	get := func(path string) string {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	body := get("/metrics")
	for _, want := range []string{
		`nasemu_device_requests_total{array="raid5",device="0/0/0/2/3/0",drive="3",op="write"}`,
		`nasemu_device_host_bytes_total{array="cache",device="0/0/0/1/0",drive="1",op="write"}`,
		`nasemu_raid_state{array="raid5",device="0/0/0/2",state="degraded"} 1`,
		"# TYPE nasemu_nas_cpu_busy_seconds_total counter",
		"# TYPE nasemu_hdd_seek_seconds_total counter",
		"# TYPE nasemu_ssd_write_amplification_ratio gauge",
		`nasemu_fs_latency_seconds_bucket{op="write",le=`,
		`nasemu_link_payload_bytes_total{array="",device="0",direction="to_nas",drive=""}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, "nasemu_model_") {
		t.Errorf("metrics hold model counters without a description (nasemu_model_...)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if lint, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(lint)) != 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, lint)
	}
	if h := get("/healthz"); !strings.Contains(h, "raid5 array (device 0/0/0/2) degraded") {
		t.Errorf("/healthz: %q", h)
	}
}
