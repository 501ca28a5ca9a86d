package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/raid"
	"golang.org/x/sys/unix"
)

// TestDiskUtilSim: a simulated drive's disk_util counts the requests the
// job and its layout sent it and the share of the run it had one in
// flight; fio's JSON carries it.
func TestDiskUtilSim(t *testing.T) {
	j := Job{Name: "r", RW: RandRead, BS: 4096, Size: 8 << 20, IODepth: 4, NumberIOs: 2000}
	rep := mustRun(t, sn700(t), []Job{j}, Options{Seed: 1})
	if len(rep.DiskUtil) != 1 {
		t.Fatalf("disk_util %+v, want one device", rep.DiskUtil)
	}
	d := rep.DiskUtil[0]
	// 2000 reads of 8 sectors; the 8 MiB layout in 1 MiB writes
	if d.ReadIOs != 2000 || d.ReadSectors != 2000*8 || d.WriteIOs != 8 || d.WriteSectors != 8<<11 {
		t.Errorf("disk_util %+v", d)
	}
	// QD4 of reads back to back: the drive is never idle in the reads,
	// and the queue holds 4 at a time
	if d.Util < 90 || d.Util > 100 || d.InQueue < d.ReadTicks || d.DiskAggr != nil {
		t.Errorf("util %.1f %%, in_queue %d ms, read_ticks %d ms, aggr %v", d.Util, d.InQueue, d.ReadTicks, d.DiskAggr)
	}
	var out bytes.Buffer
	if err := rep.WriteFio(&out, "json", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DiskUtil []map[string]any `json:"disk_util"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.DiskUtil) != 1 || doc.DiskUtil[0]["read_ios"] != float64(2000) {
		t.Errorf("fio JSON disk_util %v (%v)", doc.DiskUtil, err)
	}
}

// TestDiskUtilArray: over an array, disk_util carries fio's aggr_*
// figures, the members' requests per member and the busiest member's
// utilisation.
func TestDiskUtilArray(t *testing.T) {
	j := Job{Name: "r", RW: RandRead, BS: 4096, Size: 8 << 20, IODepth: 4, NumberIOs: 2000}
	rep := mustRun(t, fixedMirror(t, 100*time.Microsecond), []Job{j}, Options{Seed: 1})
	if len(rep.DiskUtil) != 1 || rep.DiskUtil[0].DiskAggr == nil {
		t.Fatalf("disk_util %+v, want one device with aggr_*", rep.DiskUtil)
	}
	// each read goes to one member; the layout's 8 MiB is written to both
	g := rep.DiskUtil[0].DiskAggr
	if g.ReadIOs != 1000 || g.ReadSectors != 1000*8 || g.WriteIOs < 8 || g.WriteSectors != 8<<11 || g.Util < 50 || g.Util > 100 {
		t.Errorf("aggr %+v", *g)
	}
	var out bytes.Buffer
	if err := rep.WriteFio(&out, "json", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DiskUtil []map[string]any `json:"disk_util"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.DiskUtil) != 1 {
		t.Fatalf("fio JSON disk_util %v (%v)", doc.DiskUtil, err)
	}
	for _, k := range []string{"aggr_read_ios", "aggr_write_ios", "aggr_read_sectors", "aggr_write_sectors", "aggr_read_merges", "aggr_write_merge", "aggr_read_ticks", "aggr_write_ticks", "aggr_in_queue", "aggr_util"} {
		if _, ok := doc.DiskUtil[0][k]; !ok {
			t.Errorf("fio JSON disk_util has no %s: %v", k, doc.DiskUtil[0])
		}
	}
}

// fixedMirror returns a sim: target of RAID 1 over two fixed-cost
// members that take svc for every read and write.
func fixedMirror(t *testing.T, svc time.Duration) Target {
	var members []models.Device
	for range 2 {
		d, err := fixed.New(fixed.Config{Capacity: 1 << 30, Read: svc, Write: svc})
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, d)
	}
	a, err := raid.New(raid.Config{Level: raid.RAID1}, members)
	if err != nil {
		t.Fatal(err)
	}
	return NewSim("sim:mirror", SimSetup{Device: a})
}

// TestDiskUtilArrayTicks: aggr_read_ticks and aggr_in_queue are the
// members' time with requests in them per member, in ms, as
// /proc/diskstats counts it. At QD1 on a mirror of two members of a
// constant 250 µs a request, no request waits, so the 2048 reads of an
// 8 MiB file spend 2048 × 250 µs = 512 ms in the members, 256 ms per
// member; the layout's writes (8 MiB in 1 MiB requests, to both members,
// 250 µs each) add 8 × 250 µs = 2 ms per member of write ticks and
// in_queue. At QD4 the queue adds its wait: two requests a member, each
// read waits one service time behind the other, which doubles the ticks.
func TestDiskUtilArrayTicks(t *testing.T) {
	const svc = 250 * time.Microsecond
	j := Job{Name: "r", RW: RandRead, BS: 4096, Size: 8 << 20, IODepth: 1}
	rep := mustRun(t, fixedMirror(t, svc), []Job{j}, Options{Seed: 1})
	if len(rep.DiskUtil) != 1 || rep.DiskUtil[0].DiskAggr == nil {
		t.Fatalf("disk_util %+v, want one device with aggr_*", rep.DiskUtil)
	}
	g := rep.DiskUtil[0].DiskAggr
	if g.ReadIOs != 1024 || g.ReadTicks != 256 || g.WriteTicks != 2 || g.InQueue != 258 {
		t.Errorf("QD1: aggr read_ios %d, read_ticks %d ms, write_ticks %d ms, in_queue %d ms; want 1024, 256, 2, 258", g.ReadIOs, g.ReadTicks, g.WriteTicks, g.InQueue)
	}
	// fio's normal output appends them to the device's line
	var out bytes.Buffer
	if err := rep.WriteFio(&out, "normal", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), ", aggrios=1024/8, aggrmerge=0/0, aggrticks=256/2, aggrin_queue=258, aggrutil=") {
		t.Errorf("normal output's disk stats:\n%s", out.String())
	}
	j.IODepth = 4
	rep = mustRun(t, fixedMirror(t, svc), []Job{j}, Options{Seed: 1})
	d := rep.DiskUtil[0]
	if g := d.DiskAggr; g.ReadTicks < 480 || g.ReadTicks > 530 || g.InQueue < g.ReadTicks || g.InQueue > g.ReadTicks+g.WriteTicks+1 {
		t.Errorf("QD4: aggr %+v", *g)
	}
}

// TestDiskUtilPath: on a directory, disk_util is /sys/block's statistics
// of the disk under it, or absent where its file system has no block
// device, as in fio.
func TestDiskUtilPath(t *testing.T) {
	dir := t.TempDir()
	p, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	j := Job{Name: "r", RW: RandRead, BS: 4096, Size: 4 << 20, IODepth: 1, NumberIOs: 200, Direct: true}
	rep := mustRun(t, p, []Job{j}, Options{Seed: 1})
	if unix.Major(st.Dev) == 0 {
		if rep.DiskUtil != nil {
			t.Errorf("a file system without a block device: disk_util %+v", rep.DiskUtil)
		}
		return
	}
	if len(rep.DiskUtil) != 1 {
		t.Fatalf("disk_util %+v, want the disk under %s", rep.DiskUtil, dir)
	}
	// direct reads reach the disk, one request each at least (others'
	// I/O on the same disk may add to it)
	if d := rep.DiskUtil[0]; d.Name == "" || d.ReadIOs < 200 || d.Util < 0 || d.Util > 100 {
		t.Errorf("disk_util %+v", d)
	}
}
