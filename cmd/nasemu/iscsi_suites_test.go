package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/iscsi"
)

// TestISCSISuitesFullSize: the cdm and diskspd suites, at their own file
// sizes (1 GiB, 4 GiB laid out with data) and a short runtime, complete
// over iscsi:// against 'nasemu iscsi' at 512- and 4096-byte blocks, with
// every job reported: the initiator keeps its UNMAPs and transfers within
// the LUN's block limits (cdm's 1 GiB UNMAP at the end was refused at
// 512-byte blocks). iscsi.TestSuitesAgainstTgtd does the same against
// tgtd.
func TestISCSISuitesFullSize(t *testing.T) {
	if testing.Short() {
		t.Skip("lays out 5 GiB over iSCSI at each block size")
	}
	for _, bs := range []int{512, 4096} {
		t.Run("bs="+strconv.Itoa(bs), func(t *testing.T) {
			// cdm's 1 GiB file, unmapped at its end, and then diskspd's
			// 4 GiB one; in memory where the host has tmpfs, since the
			// host's disk would take most of the time to write 5 GiB back.
			dir := t.TempDir()
			if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
				if dir, err = os.MkdirTemp("/dev/shm", "nasemu-iscsi-"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(dir) }) // after the server stops
			}
			addr, log := startISCSI(t, "--setup", "free", "--size", "4160MiB", "--block-size", strconv.Itoa(bs),
				"--backing", filepath.Join(dir, "lun.img"))
			url := "iscsi://" + addr + "/" + iscsi.DefaultIQN + "/0"
			for _, suite := range []string{"cdm", "diskspd"} {
				jobs, err := bench.Suite(suite)
				if err != nil {
					t.Fatal(err)
				}
				var out, errOut bytes.Buffer
				if code := run([]string{"bench", "--target", url, "--suite", suite, "--runtime", "300ms", "--format", "json"}, &out, &errOut); code != 0 {
					t.Fatalf("%s: exit %d\n%s\n%s\nserver:\n%s", suite, code, out.String(), errOut.String(), log)
				}
				var rep bench.Report
				if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
					t.Fatalf("%s: %v\n%s", suite, err, out.String())
				}
				if len(rep.Results) != len(jobs) {
					t.Errorf("%s: %d of %d jobs reported", suite, len(rep.Results), len(jobs))
				}
				// Each job's I/O count is left to the host's load (a 300 ms job
				// of a loaded host may finish none); the suite as a whole did I/O.
				var ios int64
				for _, r := range rep.Results {
					ios += r.IOs
				}
				if ios == 0 {
					t.Errorf("%s: no I/O", suite)
				}
			}
		})
	}
}
