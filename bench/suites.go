package bench

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// SuiteInfo describes a suite.
type SuiteInfo struct {
	Name string
	// Doc says which tool and settings the suite reproduces.
	Doc  string
	jobs func() []Job
}

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

var suites = []SuiteInfo{
	{Name: "cdm", Doc: "CrystalDiskMark 8 default profile: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, " +
		"all reads then all writes, on one 1 GiB test file (filled before the reads), unbuffered, 5 s per test " +
		"after CDM's 5 s interval. CDM runs 5 passes and shows the best; nasemu runs 1 pass of the same 5 s " +
		"(virtual runs are steady, and a real run can be repeated). The test file is removed at the end.", jobs: cdmDefault},
	{Name: "cdm-peak", Doc: "CrystalDiskMark 8 Peak Performance profile: SEQ1M Q8T1 and RND4K Q32T16, read then write, " +
		"same file, duration and single pass as cdm.", jobs: cdmPeak},
	{Name: "iometer", Doc: "IOmeter access specifications 4, 8 and 64 KiB × random/sequential × read/write, one worker " +
		"with IOmeter's default 1 outstanding I/O, unbuffered, on a 1 GiB test file (iobw.tst), 30 s each.", jobs: iometer},
	{Name: "diskspd", Doc: "diskspd -b4K -r -t8 -o2 -d120 -W5 -c4G -Sh, once with -w0 (reads) and once with -w100 (writes), " +
		"as review 003 ran it: 4 KiB random, 8 threads on one 4 GiB file, 120 s after diskspd's default 5 s warm-up. " +
		"The review does not give the outstanding I/O per thread; -o2 is diskspd's default. diskspd -c creates the file " +
		"with SetFileValidData where it can (a local NTFS volume or an iSCSI LUN's, run elevated) and writes it where it " +
		"cannot (an SMB share).", jobs: diskspd},
	{Name: "copy", Doc: "A file manager's copy (Windows Explorer in review 003): upload then download of 1 × 2 GiB, " +
		"1000 × 2 MiB and 10000 × 2 KiB files. Upload creates each file, writes it sequentially in 1 MiB chunks " +
		"and closes it; download opens, reads and closes it; one file at a time, buffered. Reports MB/s and files/s.", jobs: copySuite},
	{Name: "ddfill", Doc: "dd-style fill: 1 GiB written as 4096 files of 256 KiB (create, one 256 KiB write, close), " +
		"then read back the same way and removed.", jobs: ddfill},
	{Name: SSDProfileSuite, Doc: "SSD over-provisioning sweep as NAS vendors' SSD profiling tools run it: for OP 0–60 % " +
		"in steps of 10, precondition (2× sequential 128K Q32 fill), then 4K random writes at Q32 until SNIA PTS steady " +
		"state; reports IOPS against data written per level, steady-state IOPS and WA, and the recommended OP (the knee). " +
		"Needs a sim: setup with SSDs (each drive scaled to --size, default 1 GiB); on other targets it runs the fill and 5 minutes of " +
		"random writes once, at the device's own OP.", jobs: ssdProfileJobs},
}

// Suites returns the known suites, sorted by name.
func Suites() []SuiteInfo {
	out := append([]SuiteInfo(nil), suites...)
	sort.Slice(out, func(i, k int) bool { return out[i].Name < out[k].Name })
	return out
}

// SuiteNames returns the suites' names, sorted.
func SuiteNames() []string {
	var names []string
	for _, s := range Suites() {
		names = append(names, s.Name)
	}
	return names
}

// Suite returns the jobs of the named suite.
func Suite(name string) ([]Job, error) {
	for _, s := range suites {
		if s.Name == name {
			jobs := s.jobs()
			for i := range jobs {
				jobs[i].Pos = "suite " + name
				jobs[i].EnsureDefaults()
			}
			return jobs, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown suite %q (known: %s)", ErrJob, name, strings.Join(SuiteNames(), ", "))
}

// cdmTest is one CrystalDiskMark test.
type cdmTest struct {
	seq   bool
	bs    int64
	q, t  int
	label string
}

func cdmJobs(tests []cdmTest) []Job {
	var jobs []Job
	for _, write := range []bool{false, true} {
		for _, c := range tests {
			j := Job{
				BS: c.bs, IODepth: c.q, NumJobs: c.t, Filename: "CrystalDiskMark.tmp", Size: gib,
				Direct: true, TimeBased: true, Runtime: 5 * time.Second, StartDelay: 5 * time.Second, Stonewall: true,
			}
			dir := "read"
			switch {
			case c.seq && !write:
				j.RW = Read
			case c.seq:
				j.RW, dir = Write, "write"
			case !write:
				j.RW = RandRead
			default:
				j.RW, dir = RandWrite, "write"
			}
			j.Name = fmt.Sprintf("%s Q%dT%d %s", c.label, c.q, c.t, dir)
			jobs = append(jobs, j)
		}
	}
	jobs[len(jobs)-1].Unlink = true // CrystalDiskMark deletes its test file at the end
	return jobs
}

func cdmDefault() []Job {
	return cdmJobs([]cdmTest{
		{seq: true, bs: mib, q: 8, t: 1, label: "SEQ1M"},
		{seq: true, bs: mib, q: 1, t: 1, label: "SEQ1M"},
		{bs: 4 * kib, q: 32, t: 1, label: "RND4K"},
		{bs: 4 * kib, q: 1, t: 1, label: "RND4K"},
	})
}

func cdmPeak() []Job {
	return cdmJobs([]cdmTest{
		{seq: true, bs: mib, q: 8, t: 1, label: "SEQ1M"},
		{bs: 4 * kib, q: 32, t: 16, label: "RND4K"},
	})
}

func iometer() []Job {
	var jobs []Job
	for _, bs := range []int64{4 * kib, 8 * kib, 64 * kib} {
		for _, rw := range []RW{RandRead, RandWrite, Read, Write} {
			kind := "SEQ"
			if rw.Random() {
				kind = "RND"
			}
			dir := "read"
			if rw == Write || rw == RandWrite {
				dir = "write"
			}
			jobs = append(jobs, Job{
				Name: fmt.Sprintf("%s%dK Q1T1 %s", kind, bs/kib, dir), RW: rw, BS: bs, Filename: "iobw.tst",
				Size: gib, Direct: true, TimeBased: true, Runtime: 30 * time.Second, Stonewall: true,
			})
		}
	}
	return jobs
}

func diskspd() []Job {
	var jobs []Job
	for _, rw := range []RW{RandRead, RandWrite} {
		dir := "read"
		if rw == RandWrite {
			dir = "write"
		}
		jobs = append(jobs, Job{
			Name: "diskspd 4K random " + dir + " T8 O2", RW: rw, BS: 4 * kib, IODepth: 2, NumJobs: 8,
			Filename: "diskspd.dat", Size: 4 * gib, Direct: true, WriteThrough: true, TimeBased: true, ValidData: true,
			Runtime: 120 * time.Second, RampTime: 5 * time.Second, Stonewall: true,
		})
	}
	return jobs
}

func copySuite() []Job {
	var jobs []Job
	for _, set := range []struct {
		n    int
		size int64
		name string
	}{{1, 2 * gib, "1x2GiB"}, {1000, 2 * mib, "1000x2MiB"}, {10000, 2 * kib, "10000x2KiB"}} {
		for _, up := range []bool{true, false} {
			j := Job{
				RW: Read, BS: mib, NrFiles: set.n, FileSize: set.size, FileByFile: true,
				FilenameFormat: "copy-" + set.name + "/$filenum", Stonewall: true, Unlink: !up,
			}
			j.Name = "copy " + set.name + " download"
			if up {
				j.RW, j.Name = Write, "copy "+set.name+" upload"
			}
			jobs = append(jobs, j)
		}
	}
	return jobs
}

func ddfill() []Job {
	base := Job{BS: 256 * kib, NrFiles: 4096, FileSize: 256 * kib, FileByFile: true,
		FilenameFormat: "ddfill/$filenum", Stonewall: true}
	w, r := base, base
	w.Name, w.RW = "ddfill 4096x256K write", Write
	r.Name, r.RW, r.Unlink = "ddfill 4096x256K read", Read, true
	return []Job{w, r}
}
