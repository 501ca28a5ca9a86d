package proto

import (
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/link"
)

// A job on the LUN's raw block device (client block, fio direct=1 on a
// Linux initiator's /dev/sdX) waits for each write: a 2 MiB write at QD1
// with ImmediateData=Yes, InitialR2T=No, FirstBurst 64 KiB and MaxBurst
// 256 KiB is the command with 64 KiB immediate, eight R2T round trips
// (seven bursts of 256 KiB, one of 192 KiB), the device's write and the
// response, each message on an idle 1GbE link (package link's doc).
// The ntfs client (the default) lets the same writer go on behind.
func TestISCSIBlockClientWaits(t *testing.T) {
	no := false
	const io = 5 * time.Millisecond
	cfg := Config{Protocol: ISCSI, MaxIO: 2 << 20, InitialR2T: &no, FirstBurst: 64 << 10, MaxBurst: 256 << 10}
	msg := func(n int64) time.Duration {
		frames := (n + 1447) / 1448
		last := n - (frames-1)*1448
		return time.Duration((n+90*frames)*8+(last+70)*8) + 50*time.Microsecond
	}
	const bhs = 48
	want := msg(bhs+64<<10) + io + msg(bhs)
	wire := msg(bhs + 64<<10)
	for left := int64(2<<20 - 64<<10); left > 0; left -= 256 << 10 {
		burst := min(left, 256<<10)
		want += msg(bhs) + msg(bhs+burst) // R2T, then the burst in one Data-Out PDU
		wire += msg(bhs + burst)
	}

	run := func(client string, writes int) (first, mean time.Duration, d *Device, nas *fakeNAS) {
		c := cfg
		c.Client = client
		nas = &fakeNAS{capacity: 64 * gib, io: io, ops: map[models.Op]int{}}
		d = newStack(t, c, link.Config{Kind: "1gbe"}, nas)
		now, err := d.Submit(0, models.Request{Op: models.Create, Length: 8 * gib})
		if err != nil {
			t.Fatal(err)
		}
		start := now
		for i := 0; i < writes; i++ {
			done, err := d.Submit(now, models.Request{Op: models.Write, Offset: int64(i) << 21, Length: 2 << 20, Direct: true})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = done - now
			}
			now = done
		}
		return first, (now - start) / time.Duration(writes), d, nas
	}

	const writes = 64
	first, mean, d, nas := run(ClientBlock, writes)
	t.Logf("block: 2 MiB write %v each (analytic %v: %v on the wire, 8 R2T round trips, %v device), %.1f MB/s",
		mean, want, wire, io, mbps(2<<20, mean))
	if first < want-10 || first > want+10 || mean < want-10 || mean > want+10 {
		t.Errorf("block: first write %v, mean %v; analytic %v", first, mean, want)
	}
	if r2ts := 8 * msg(bhs); mean < wire+r2ts+io {
		t.Errorf("block: %v a write is less than its data's time on the wire (%v), its eight R2Ts' (%v) and the device's write", mean, wire, r2ts)
	}
	if n := counter(d, "iscsi_r2ts"); n != 8*writes {
		t.Errorf("block: %v R2Ts, want %d", n, 8*writes)
	}
	if n := counter(d, "iscsi_commands"); n != writes {
		t.Errorf("block: %v commands, want %d (no filesystem metadata)", n, writes)
	}
	if nas.ops[models.Write] != writes || len(nas.ops) != 1 {
		t.Errorf("block: the NAS saw %v, want %d writes and nothing else", nas.ops, writes)
	}

	// The ntfs client's writer goes on while its writes are in flight
	// (up to 32 behind it): the first returns at once, and the writer
	// runs ahead of the link.
	nfirst, nmean, _, _ := run(ClientNTFS, writes)
	t.Logf("ntfs: first write returns after %v, the writer's pace %v a write (%.1f MB/s)", nfirst, nmean, mbps(2<<20, nmean))
	if nfirst != 0 || nmean >= mean-io/2 {
		t.Errorf("ntfs: first write %v, %v a write; want 0 and well under block's %v", nfirst, nmean, mean)
	}
	dfirst, dmean, _, _ := run("", writes)
	if dfirst != nfirst || dmean != nmean {
		t.Errorf("default client: %v, %v; ntfs %v, %v", dfirst, dmean, nfirst, nmean)
	}
}

// A raw block device has no filesystem: file operations cost nothing on
// the wire or at the NAS, a buffered request is served as a direct one,
// and Flush is one SYNCHRONIZE CACHE.
func TestISCSIBlockClientNoFilesystem(t *testing.T) {
	nas := &fakeNAS{capacity: 64 * gib, io: time.Millisecond, ops: map[models.Op]int{}}
	d := newStack(t, Config{Protocol: ISCSI, Client: ClientBlock}, link.Config{Kind: "1gbe"}, nas)
	at := time.Second
	for _, op := range []models.Op{models.Create, models.Open, models.Stat, models.Close, models.Remove} {
		done, err := d.Submit(at, models.Request{Op: op, Length: gib})
		if err != nil {
			t.Fatal(err)
		}
		if done != at {
			t.Errorf("%v took %v", op, done-at)
		}
	}
	if b := counter(d, "link_wire_bytes_rx") + counter(d, "link_wire_bytes_tx"); b != 0 || len(nas.ops) != 0 {
		t.Errorf("file operations sent %v wire bytes, NAS saw %v", b, nas.ops)
	}
	if c := d.Config(); c.ClientOp != 0 || c.UnbufferedCopy != nil {
		t.Errorf("block defaults: client_op %v, unbuffered_copy %v", c.ClientOp, c.UnbufferedCopy)
	}

	// A buffered read or write takes what a direct one does, in a file
	// or not.
	if _, err := d.Submit(at, models.Request{Op: models.Open, Length: gib}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []models.Op{models.Read, models.Write} {
		var took [2]time.Duration
		for i, direct := range []bool{true, false} {
			at += time.Second
			done, err := d.Submit(at, models.Request{Op: op, Offset: 4096 * int64(i+1), Length: 1 << 20, Direct: direct})
			if err != nil {
				t.Fatal(err)
			}
			took[i] = done - at
		}
		if took[0] != took[1] || took[0] < time.Millisecond {
			t.Errorf("%v: direct %v, buffered %v", op, took[0], took[1])
		}
	}

	cmds := counter(d, "iscsi_commands")
	if _, err := d.Submit(at+time.Second, models.Request{Op: models.Flush}); err != nil {
		t.Fatal(err)
	}
	if n := counter(d, "iscsi_commands") - cmds; n != 1 || nas.ops[models.Flush] != 1 {
		t.Errorf("flush: %v commands, NAS saw %v", n, nas.ops)
	}
}

// client is an iSCSI setting, and block has no copy engine to configure.
func TestISCSIClientValidate(t *testing.T) {
	for _, c := range []Config{{Protocol: ISCSI, Client: ClientNTFS}, {Protocol: ISCSI, Client: ClientBlock}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	yes := true
	for _, c := range []Config{
		{Protocol: SMB3, Client: ClientBlock},
		{Protocol: SMB2, Client: ClientNTFS},
		{Client: ClientBlock},
		{Protocol: ISCSI, Client: "zfs"},
		{Protocol: ISCSI, Client: ClientBlock, UnbufferedCopy: &yes},
	} {
		err := c.Validate()
		if !errors.Is(err, models.ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
			continue
		}
		t.Logf("%v", err)
	}
}
