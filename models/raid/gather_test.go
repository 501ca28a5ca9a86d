package raid

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// Review 001's RST RAID 5 (four drives, 128 KiB strip): sequential writes
// of whole strips that straddle rows reach the full-stripe rate with the
// coalescer, since the rows they share become full-stripe writes; writes
// of part of a strip still pay their reads, "almost ten times" slower.
func TestCoalescerGathersWholeStrips(t *testing.T) {
	hdd := fixed.Config{Capacity: 8 * GiB, Read: 4170 * time.Microsecond, Write: 4170 * time.Microsecond, BytesPerSecond: 150e6}
	mib := int64(1 << 20)
	plain := mustNew(t, Config{Level: RAID5, Chunk: 128 << 10}, fixedMembers(t, 4, hdd))
	_, without := closedLoop(t, plain, 0, 32, 400, seqOps(models.Write, mib, plain.Capacity()))
	if counter(plain, "member_reads") == 0 {
		t.Fatal("1 MiB writes across 384 KiB rows paid no reads without the coalescer")
	}
	co := mustNew(t, Config{Level: RAID5, Chunk: 128 << 10, Coalesce: true}, fixedMembers(t, 4, hdd))
	_, with := closedLoop(t, co, 0, 32, 400, seqOps(models.Write, mib, co.Capacity()))
	if r := counter(co, "member_reads"); r != 0 {
		t.Errorf("coalesced 1 MiB sequential writes: %v member reads, want 0", r)
	}
	t.Logf("1 MiB sequential writes QD32: %.0f MB/s plain, %.0f MB/s coalesced", without/1e6, with/1e6)
	if with < 1.5*without {
		t.Errorf("coalesced %.0f MB/s vs %.0f plain: want the reads gone, ≥1.5× faster", with/1e6, without/1e6)
	}

	small := mustNew(t, Config{Level: RAID5, Chunk: 128 << 10, Coalesce: true}, fixedMembers(t, 4, hdd))
	_, sub := closedLoop(t, small, 0, 1, 2000, seqOps(models.Write, 64*KiB, small.Capacity()))
	if counter(small, "read_modify_writes")+counter(small, "reconstruct_writes") == 0 || with/sub < 8 {
		t.Errorf("64 KiB writes with the coalescer: %.1f MB/s, %.1f× slower than 1 MiB; want partial-stripe writes, ≥8×", sub/1e6, with/sub)
	}
}

// Held rows reach the members before a flush completes and before a read
// of them; a row whose rest never comes is written out as a partial write.
func TestCoalescerDrains(t *testing.T) {
	ms := queueMembers(4, 1<<30, 100*time.Microsecond, 100*time.Microsecond)
	a := mustNew(t, Config{Level: RAID5, Chunk: 64 << 10, Coalesce: true}, ms)
	if _, err := a.Submit(0, models.Request{Op: models.Write, Offset: 0, Length: 64 << 10}); err != nil {
		t.Fatal(err)
	}
	if w := counter(a, "member_writes"); w != 0 {
		t.Fatalf("a held chunk reached the members at once (%v writes)", w)
	}
	done, err := a.Submit(time.Millisecond, models.Request{Op: models.Flush})
	if err != nil {
		t.Fatal(err)
	}
	if w := counter(a, "member_writes"); w != 2 || done <= time.Millisecond+100*time.Microsecond {
		t.Errorf("flush: %v member writes (want data + parity), done at %v", w, done)
	}
	if _, err := a.Submit(2*time.Millisecond, models.Request{Op: models.Write, Offset: 64 << 10, Length: 64 << 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Submit(3*time.Millisecond, models.Request{Op: models.Read, Offset: 64 << 10, Length: 4096}); err != nil {
		t.Fatal(err)
	}
	if w := counter(a, "member_writes"); w != 4 {
		t.Errorf("a read of a held chunk: %v member writes in all, want 4", w)
	}
}
