package iscsi

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
)

const tgtdIQN = "iqn.2026-01.org.nasemu:tgtd-test"

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startTgtd starts Debian's tgtd on 127.0.0.1 with one LUN (LUN 1) over a
// fresh file of size bytes, configured through its control port, and
// stops it when the test ends.
func startTgtd(t *testing.T, size int64) string {
	t.Helper()
	return startTgtdIn(t, t.TempDir(), size)
}

// memTempDir returns a directory in memory (tmpfs) that the test removes
// at its end, or a plain temporary directory where there is none: for
// LUN files that tests fill with gigabytes, which on the host's disk
// would be written back at the disk's pace.
func memTempDir(t *testing.T) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "nasemu-iscsi-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// startTgtdIn is startTgtd with the LUN's file in dir.
func startTgtdIn(t *testing.T, dir string, size int64) string {
	t.Helper()
	tgtd := needTool(t, "tgtd")
	tgtadm := needTool(t, "tgtadm")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("tgtd needs root (its control socket lives in a system directory)")
		}
		t.Skip("tgtd needs root")
	}
	file := filepath.Join(dir, "tgtd.img")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, size); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ctl := strconv.Itoa(20000 + rand.IntN(12000)) // tgtd takes control ports below 32768
	cmd := exec.Command(tgtd, "-f", "-C", ctl, "--iscsi", fmt.Sprintf("portal=127.0.0.1:%d", port))
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	adm := func(args ...string) error {
		out, err := exec.Command(tgtadm, append([]string{"-C", ctl, "--lld", "iscsi"}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tgtadm %v: %v: %s", args, err, out)
		}
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for adm("--mode", "target", "--op", "show") != nil {
		if time.Now().After(deadline) {
			t.Fatalf("tgtd did not start: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, args := range [][]string{
		{"--mode", "target", "--op", "new", "--tid", "1", "--targetname", tgtdIQN},
		{"--mode", "logicalunit", "--op", "new", "--tid", "1", "--lun", "1", "--backing-store", file},
		{"--mode", "target", "--op", "bind", "--tid", "1", "--initiator-address", "127.0.0.1"},
	} {
		if err := adm(args...); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// The initiator works against another RFC 7143 target: tgtd.
func TestInitiatorAgainstTgtd(t *testing.T) {
	const size = 64 << 20
	addr := startTgtd(t, size)
	ctx := ctxT(t, 30*time.Second)
	for _, digests := range []bool{false, true} {
		s, err := Dial(ctx, SessionConfig{Addr: addr, Target: tgtdIQN, HeaderDigest: digests, DataDigest: digests})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.ReadCapacity16(ctx, 1)
		if err != nil || c.Blocks*uint64(c.BlockSize) != size {
			t.Fatalf("capacity %+v %v", c, err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, (w+1)*16<<10)
				for i := range buf {
					buf[i] = byte(w*7 + i)
				}
				lba := uint64(w) * 2048
				if err := s.Write16(ctx, 1, lba, c.BlockSize, buf); err != nil {
					errs <- err
					return
				}
				got := make([]byte, len(buf))
				if err := s.Read16(ctx, 1, lba, c.BlockSize, got); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, buf) {
					errs <- fmt.Errorf("worker %d: data differs", w)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if err := s.SyncCache(ctx, 1); err != nil {
			t.Error(err)
		}
		s.Close()
	}
	// Discovery.
	d, err := Dial(ctx, SessionConfig{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	names, err := d.SendTargets(ctx)
	d.Close()
	if err != nil || len(names) != 1 || names[0] != tgtdIQN {
		t.Errorf("SendTargets: %v %v", names, err)
	}
	// The bench target runs a job on it.
	lt, err := OpenLUN(context.Background(), "tgtd", SessionConfig{Addr: addr, Target: tgtdIQN}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer lt.Close()
	rep, err := bench.Run(lt, parseJobs(t, "[rw]\nrw=randrw\nbs=4k\niodepth=8\nsize=8m\nruntime=1s\ntime_based=1\n"), bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.IOs < 100 {
		t.Errorf("bench against tgtd: %d I/Os in a second", r.IOs)
	} else {
		t.Logf("bench against tgtd: %.0f IOPS", r.IOPS)
	}
}

// TestSuitesAgainstTgtd: the cdm and diskspd suites, at their own file
// sizes and a short runtime, complete against tgtd with every job
// reported (cmd/nasemu's TestISCSISuitesFullSize does the same against
// nasemu iscsi).
func TestSuitesAgainstTgtd(t *testing.T) {
	if testing.Short() {
		t.Skip("lays out 5 GiB over iSCSI")
	}
	// cdm's 1 GiB file and then diskspd's 4 GiB one, at the LUN's start.
	addr := startTgtdIn(t, memTempDir(t), 4<<30+64<<20)
	for _, suite := range []string{"cdm", "diskspd"} {
		jobs, err := bench.Suite(suite)
		if err != nil {
			t.Fatal(err)
		}
		jobs = bench.Overrides{Runtime: 300 * time.Millisecond}.Apply(jobs)
		lt, err := OpenLUN(context.Background(), "tgtd", SessionConfig{Addr: addr, Target: tgtdIQN}, 1)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := bench.Run(lt, jobs, bench.Options{Seed: 1, Suite: suite})
		if cerr := lt.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("%s against tgtd: %v", suite, err)
		}
		if len(rep.Results) != len(jobs) {
			t.Errorf("%s: %d of %d jobs reported", suite, len(rep.Results), len(jobs))
		}
		// Every job did I/O: a 300 ms job is hundreds of tgtd's
		// sub-millisecond commands, and one with none did not run.
		for _, r := range rep.Results {
			if r.IOs == 0 {
				t.Errorf("%s: %s did no I/O", suite, r.Name)
			}
		}
	}
}
