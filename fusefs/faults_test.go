package fusefs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fault"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/raid"
)

// raid5 builds a RAID 5 of four zero-cost drives of 64 MiB, rebuilding at
// 32 MB/s, and a factory of replacement drives.
func raid5(t *testing.T) (models.Device, func(int) (models.Device, error)) {
	t.Helper()
	drive := fixed.Config{Capacity: 64 << 20}
	var members []models.Device
	for range 4 {
		d, err := fixed.New(drive)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, d)
	}
	a, err := raid.New(raid.Config{Level: raid.RAID5, RebuildRate: 32}, members)
	if err != nil {
		t.Fatal(err)
	}
	return a, func(int) (models.Device, error) { return fixed.New(drive) }
}

// readDirect reads a whole file with O_DIRECT, so that every byte comes
// through the model rather than the client's page cache.
func readDirect(path string) ([]byte, error) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return io.ReadAll(fh)
}

// scrape returns the value of the metric line that starts with prefix.
func scrape(t *testing.T, m *Metrics, prefix string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, prefix+" ") {
			v, err := strconv.ParseFloat(strings.TrimPrefix(line, prefix+" "), 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no metric %s", prefix)
	return 0
}

// TestFaults drives a RAID 5 share through its control socket: one failed
// drive keeps every file readable and correct, a replacement starts a
// rebuild visible in the metrics, and losing a second drive makes reads fail
// with EIO.
func TestFaults(t *testing.T) {
	model, replacement := raid5(t)
	metrics := NewMetrics()
	s := mountShare(t, model, emu.NewWallClock(1, 0), "", Options{Metrics: metrics, Replacement: replacement})
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go s.fs.ServeControl(l)
	t.Cleanup(func() { l.Close() })
	ctl := func(req ControlRequest) ControlResponse {
		t.Helper()
		resp, err := Call(sock, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	files := map[string][]byte{}
	for i := range 8 {
		name := fmt.Sprintf("f%d", i)
		files[name] = randBytes(uint64(50+i), 1<<20+i*100_000)
		if err := os.WriteFile(s.path(name), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if resp := ctl(ControlRequest{Cmd: "status"}); !resp.OK || len(resp.Status.Arrays) != 1 || resp.Status.Arrays[0].State != "optimal" {
		t.Fatalf("status: %+v", resp)
	}

	if resp := ctl(ControlRequest{Cmd: "fail", Member: 1}); !resp.OK || resp.Status.Arrays[0].State != "degraded" {
		t.Fatalf("fail 1: %+v", resp)
	}
	for name, want := range files {
		got, err := readDirect(s.path(name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s with one drive failed: err %v, equal %v", name, err, bytes.Equal(got, want))
		}
	}
	if v := scrape(t, metrics, `nasemu_raid_degraded_reads_total{array="raid5",device="0",drive=""}`); v == 0 {
		t.Error("reads with a failed drive were not degraded reads")
	}
	if v := scrape(t, metrics, `nasemu_raid_state{array="raid5",device="0",state="degraded"}`); v != 1 {
		t.Errorf("raid state degraded = %v in the metrics", v)
	}

	if resp := ctl(ControlRequest{Cmd: "replace", Member: 1}); !resp.OK || resp.Status.Arrays[0].State != "rebuilding" {
		t.Fatalf("replace 1: %+v", resp)
	}
	time.Sleep(300 * time.Millisecond) // 64 MiB at 32 MB/s takes 2.1 s
	progress := scrape(t, metrics, `nasemu_raid_rebuild_progress_ratio{array="raid5",device="0"}`)
	if progress <= 0 || progress >= 1 || scrape(t, metrics, `nasemu_raid_state{array="raid5",device="0",state="rebuilding"}`) != 1 {
		t.Errorf("rebuild progress %v in the metrics, want between 0 and 1 while rebuilding", progress)
	}
	if progress < 0.05 || progress > 0.4 {
		t.Errorf("rebuild progress %v after 0.3 s of a 2.1 s rebuild, want about 0.15", progress)
	}

	// A second failure during the rebuild loses data: reads fail with EIO.
	if resp := ctl(ControlRequest{Cmd: "fail", Member: 2}); !resp.OK || resp.Status.Arrays[0].State != "failed" {
		t.Fatalf("fail 2: %+v", resp)
	}
	_, err = readDirect(s.path("f0"))
	if !errors.Is(err, syscall.EIO) {
		t.Errorf("read on a failed array: err = %v, want EIO", err)
	}
	if err := os.WriteFile(s.path("new"), []byte("x"), 0o644); !errors.Is(err, syscall.EIO) {
		t.Errorf("write on a failed array: err = %v, want EIO", err)
	}
	if v := scrape(t, metrics, `nasemu_fs_errors_total{op="read"}`); v == 0 {
		t.Error("failed reads not counted in the metrics")
	}
	if resp := ctl(ControlRequest{Cmd: "replace", Member: 2}); resp.OK {
		t.Error("replacing a drive of a failed array succeeded")
	}
	if resp := ctl(ControlRequest{Cmd: "bogus"}); resp.OK || !strings.Contains(resp.Error, "unknown command") {
		t.Errorf("bogus command: %+v", resp)
	}
}

// TestPowerLossThroughControl simulates a power loss over the socket.
func TestPowerLossThroughControl(t *testing.T) {
	s := mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, "", Options{})
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go s.fs.ServeControl(l)
	defer l.Close()
	fh, err := os.Create(s.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fh.Write([]byte("synced"))
	fh.Sync()
	fh.Write([]byte(" and not synced"))
	resp, err := Call(sock, ControlRequest{Cmd: "power-loss"})
	if err != nil || !resp.OK || resp.LostBytes != int64(len(" and not synced")) {
		t.Fatalf("power-loss: %+v, %v", resp, err)
	}
	if got := mustRead(t, s.path("f")); string(got) != "synced" {
		t.Errorf("after power loss: %q, want %q", got, "synced")
	}
}

// TestCapacity fills a share of an 8 MiB model: writing stops with ENOSPC
// at the modelled capacity, statfs reports it, and the files already
// written stay intact.
func TestCapacity(t *testing.T) {
	const capacity = 8 << 20
	s := mountShare(t, freeModel(t, capacity), &emu.VirtualClock{}, "", Options{})
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.mnt, &st); err != nil {
		t.Fatal(err)
	}
	if got := int64(st.Blocks) * st.Bsize; got != capacity {
		t.Errorf("statfs size %d, want the modelled %d", got, capacity)
	}
	var written []string
	var total int64
	var full error
	for i := 0; full == nil && i < 100; i++ {
		name := fmt.Sprintf("f%02d", i)
		fh, err := os.Create(s.path(name))
		if err != nil {
			t.Fatal(err)
		}
		data := randBytes(uint64(i), 700_000)
		n, err := fh.Write(data)
		fh.Close()
		total += int64(n)
		if err != nil {
			full = err
			// What was written of the last file is intact.
			if got := mustRead(t, s.path(name)); !bytes.Equal(got, data[:len(got)]) {
				t.Errorf("partly written %s is damaged", name)
			}
			break
		}
		written = append(written, name)
	}
	if !errors.Is(full, syscall.ENOSPC) {
		t.Fatalf("filling the share ended with %v, want ENOSPC", full)
	}
	// Each file wastes at most its last partial block.
	if total > capacity || total < capacity-int64(len(written)+1)*BlockSize {
		t.Errorf("wrote %d bytes before ENOSPC, want the capacity %d less partial blocks", total, capacity)
	}
	syscall.Statfs(s.mnt, &st)
	if st.Bfree > 1 {
		t.Errorf("statfs reports %d free blocks on a full share", st.Bfree)
	}
	for i, name := range written {
		if got := mustRead(t, s.path(name)); !bytes.Equal(got, randBytes(uint64(i), 700_000)) {
			t.Errorf("%s damaged by the full share", name)
		}
	}
	// Deleting a file makes room again.
	os.Remove(s.path(written[0]))
	if err := os.WriteFile(s.path("again"), randBytes(99, 600_000), 0o644); err != nil {
		t.Errorf("write after freeing space: %v", err)
	}
}

// arm adds the rule written as text to the injector f while the share's
// volume charges nothing, as a control plane would.
func arm(t *testing.T, s *share, f *fault.Device, rule string) {
	t.Helper()
	r, err := fault.Parse(rule)
	if err != nil {
		t.Fatal(err)
	}
	s.fs.Volume().WithModel(func(models.Device, time.Duration) {
		if err := f.Add(r); err != nil {
			t.Error(err)
		}
	})
}

// TestInjectedFaults mounts a RAID 5 whose members and whole array sit
// behind fault injectors: a drive that starts failing every read is
// failed by the array and the files still read back whole; a read error
// above the array's redundancy reaches the client as EIO, once, and the
// next read succeeds; a dead array fails writes with EIO.
func TestInjectedFaults(t *testing.T) {
	drive := fixed.Config{Capacity: 64 << 20}
	members := make([]models.Device, 4)
	var sick *fault.Device
	for i := range members {
		d, err := fixed.New(drive)
		if err != nil {
			t.Fatal(err)
		}
		members[i] = d
		if i == 2 {
			if sick, err = fault.New(d, 1); err != nil {
				t.Fatal(err)
			}
			members[i] = sick
		}
	}
	a, err := raid.New(raid.Config{Level: raid.RAID5}, members)
	if err != nil {
		t.Fatal(err)
	}
	top, err := fault.New(a, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := mountShare(t, top, emu.NewWallClock(1, 0), "", Options{})
	files := map[string][]byte{}
	for i := range 4 {
		name := fmt.Sprintf("f%d", i)
		files[name] = randBytes(uint64(70+i), 512<<10+i*4096)
		if err := os.WriteFile(s.path(name), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arm(t, s, sick, "read fail")
	for name, want := range files {
		if got, err := readDirect(s.path(name)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s with a member failing its reads: err %v, equal %v", name, err, bytes.Equal(got, want))
		}
	}
	if st := s.fs.Arrays(); len(st) != 1 || st[0].State != "degraded" || len(st[0].Failed) != 1 || st[0].Failed[0] != 2 {
		t.Fatalf("arrays after member 2's read errors: %+v, want degraded with 2 failed", st)
	}
	var events int
	s.fs.Volume().WithModel(func(models.Device, time.Duration) { events = len(sick.Events()) })
	if events == 0 {
		t.Fatal("member 2 was never read")
	}

	arm(t, s, top, "read count=1 fail")
	if _, err := readDirect(s.path("f1")); !errors.Is(err, syscall.EIO) {
		t.Errorf("read meeting an unrecoverable error: %v, want EIO", err)
	}
	if got, err := readDirect(s.path("f1")); err != nil || !bytes.Equal(got, files["f1"]) {
		t.Errorf("the next read: err %v, equal %v", err, bytes.Equal(got, files["f1"]))
	}
	arm(t, s, top, "write dead")
	fh, err := os.OpenFile(s.path("f3"), os.O_WRONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(make([]byte, 4096), 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("write to a dead array: %v, want EIO", err)
	}
}
