package raid

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nasemu/nasemu/models"
)

// The reference layout: a deliberately naive table, built row by row the
// way the layouts are described in the md documentation and Synology's
// SHR notes, of every array chunk's copies (member, member chunk index)
// and, for parity levels, of the row it belongs to.
type loc struct {
	member int
	chunk  int64 // member chunk index
}

type refChunk struct {
	copies []loc // where the data lives (several for mirrors)
	parity []loc // P (and Q) of the chunk's row
	row    []loc // every chunk of the row (data and parity)
}

func refLayout(level Level, caps []int64, c int64) []refChunk {
	var out []refChunk
	n := len(caps)
	minRows := slices.Min(caps) / c
	parityRows := func(members []int, base, rows int64, q bool) {
		n := len(members)
		for r := int64(0); r < rows; r++ {
			pd := n - 1 - int(r%int64(n))
			par := []loc{{members[pd], base + r}}
			first := 1
			if q {
				par = append(par, loc{members[(pd+1)%n], base + r})
				first = 2
			}
			var row []loc
			for _, m := range members {
				row = append(row, loc{m, base + r})
			}
			for k := first; k < n; k++ {
				out = append(out, refChunk{copies: []loc{{members[(pd+k)%n], base + r}}, parity: par, row: row})
			}
		}
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	switch level {
	case Single, JBOD:
		for m := range caps {
			for k := int64(0); k < caps[m]/c; k++ {
				out = append(out, refChunk{copies: []loc{{m, k}}})
			}
		}
	case RAID0:
		for r := int64(0); r < minRows; r++ {
			for m := 0; m < n; m++ {
				out = append(out, refChunk{copies: []loc{{m, r}}})
			}
		}
	case RAID1:
		for r := int64(0); r < minRows; r++ {
			var cp []loc
			for m := 0; m < n; m++ {
				cp = append(cp, loc{m, r})
			}
			out = append(out, refChunk{copies: cp})
		}
	case RAID10:
		for r := int64(0); r < minRows; r++ {
			for p := 0; p < n/2; p++ {
				out = append(out, refChunk{copies: []loc{{2 * p, r}, {2*p + 1, r}}})
			}
		}
	case RAID5:
		parityRows(all, 0, minRows, false)
	case RAID6:
		parityRows(all, 0, minRows, true)
	case SHR:
		// Walk member chunk rows upward; rows with the same set of drives
		// large enough to hold them form a layer.
		var layerStart int64
		var layer []int
		flush := func(end int64) {
			switch {
			case len(layer) >= 3:
				parityRows(layer, layerStart, end-layerStart, false)
			case len(layer) == 2:
				for r := layerStart; r < end; r++ {
					out = append(out, refChunk{copies: []loc{{layer[0], r}, {layer[1], r}}})
				}
			}
		}
		for h := int64(0); ; h++ {
			var set []int
			for m, cp := range caps {
				if cp/c > h {
					set = append(set, m)
				}
			}
			if !slices.Equal(set, layer) {
				flush(h)
				layer, layerStart = set, h
			}
			if len(set) == 0 {
				break
			}
		}
	}
	return out
}

type sector struct {
	member int
	sec    int64
}

const secSize = 512

// TestLayoutReference submits random reads and writes to healthy arrays
// of every level over recording fakes and checks every member I/O against
// the reference layout: each requested sector read from exactly one of its
// copies; writes landing on every copy and, on parity levels, on the P
// (and Q) sectors over the hull of the written in-chunk offsets of each
// touched row, with nothing written twice; and the reads of a
// partial-stripe write staying inside the touched rows' hulls.
func TestLayoutReference(t *testing.T) {
	const c = 4096
	const K = 1024
	for _, tc := range []struct {
		level Level
		caps  []int64
	}{
		{Single, []int64{64 * K}},
		{JBOD, []int64{32 * K, 64 * K, 16 * K}},
		{RAID0, []int64{64 * K, 64 * K, 64 * K}},
		{RAID1, []int64{64 * K, 64 * K}},
		{RAID1, []int64{64 * K, 64 * K, 80 * K}},
		{RAID10, []int64{64 * K, 64 * K, 64 * K, 64 * K}},
		{RAID10, []int64{64 * K, 64 * K, 64 * K, 64 * K, 64 * K, 64 * K}},
		{RAID5, []int64{64 * K, 64 * K, 64 * K}},
		{RAID5, []int64{64 * K, 64 * K, 64 * K, 64 * K}},
		{RAID5, []int64{64 * K, 64 * K, 64 * K, 64 * K, 72 * K}},
		{RAID6, []int64{64 * K, 64 * K, 64 * K, 64 * K}},
		{RAID6, []int64{64 * K, 64 * K, 64 * K, 64 * K, 64 * K, 64 * K}},
		{SHR, []int64{64 * K, 64 * K, 64 * K, 64 * K}},
		{SHR, []int64{32 * K, 64 * K}},
		{SHR, []int64{32 * K, 64 * K, 64 * K, 96 * K, 128 * K}},
	} {
		name := fmt.Sprintf("%s-%d", tc.level, len(tc.caps))
		t.Run(name, func(t *testing.T) {
			ref := refLayout(tc.level, tc.caps, c)
			fakes := make([]*fakeDev, len(tc.caps))
			ms := make([]models.Device, len(tc.caps))
			for i, cp := range tc.caps {
				fakes[i] = &fakeDev{capacity: cp}
				ms[i] = fakes[i]
			}
			a := mustNew(t, Config{Level: tc.level, Chunk: c}, ms)
			if a.Capacity() != int64(len(ref))*c {
				t.Fatalf("capacity %d, reference %d", a.Capacity(), int64(len(ref))*c)
			}
			rng := rand.New(rand.NewPCG(uint64(len(name)), 3))
			secs := a.Capacity() / secSize
			for i := 0; i < 300; i++ {
				off := rng.Int64N(secs)
				n := 1 + rng.Int64N(min(secs-off, int64(3*len(tc.caps))*c/secSize))
				if i%4 == 0 { // chunk-aligned ones too
					off = off / (c / secSize) * (c / secSize)
					n = min(secs-off, (n+7)/8*8)
				}
				op := models.Read
				if i%2 == 1 {
					op = models.Write
				}
				for _, f := range fakes {
					f.log = f.log[:0]
				}
				r := models.Request{Op: op, Offset: off * secSize, Length: n * secSize}
				if _, err := a.Submit(0, r); err != nil {
					t.Fatal(err)
				}
				if err := checkAgainstRef(ref, fakes, r, c); err != nil {
					t.Fatalf("%v: %v", r, err)
				}
			}
		})
	}
}

func checkAgainstRef(ref []refChunk, fakes []*fakeDev, r models.Request, c int64) error {
	reads := map[sector]int{}
	writes := map[sector]int{}
	for m, f := range fakes {
		for _, io := range f.log {
			if io.off%secSize != 0 || io.n%secSize != 0 {
				return fmt.Errorf("member %d: unaligned %v", m, io)
			}
			for s := io.off / secSize; s < (io.off+io.n)/secSize; s++ {
				switch io.op {
				case models.Read:
					reads[sector{m, s}]++
				case models.Write:
					writes[sector{m, s}]++
				default:
					return fmt.Errorf("member %d: unexpected %v", m, io.op)
				}
			}
		}
	}
	spc := c / secSize
	// Expected locations, per requested sector.
	wantWrites := map[sector]bool{}
	hulls := map[loc][2]int64{}  // row (keyed by its first parity loc) -> in-chunk sector hull
	rowOf := map[loc]refChunk{}  // that row
	copyOf := map[sector]int64{} // copy location -> requested sector
	for s := r.Offset / secSize; s < r.End()/secSize; s++ {
		rc := ref[s/spc]
		in := s % spc
		for _, l := range rc.copies {
			sec := sector{l.member, l.chunk*spc + in}
			copyOf[sec] = s
			wantWrites[sec] = true
		}
		if len(rc.parity) > 0 {
			k := rc.parity[0]
			h, ok := hulls[k]
			if !ok {
				h = [2]int64{in, in}
			}
			hulls[k] = [2]int64{min(h[0], in), max(h[1], in)}
			rowOf[k] = rc
		}
	}
	for k, h := range hulls {
		for _, p := range rowOf[k].parity {
			for in := h[0]; in <= h[1]; in++ {
				wantWrites[sector{p.member, p.chunk*spc + in}] = true
			}
		}
	}
	if r.Op == models.Read {
		if len(writes) > 0 {
			return fmt.Errorf("a read wrote %d sectors", len(writes))
		}
		covered := map[int64]bool{}
		for sec, k := range reads {
			s, ok := copyOf[sec]
			if !ok {
				return fmt.Errorf("read member %d sector %d, which holds none of the request", sec.member, sec.sec)
			}
			if k > 1 || covered[s] {
				return fmt.Errorf("array sector %d read twice", s)
			}
			covered[s] = true
		}
		if int64(len(covered)) != r.Length/secSize {
			return fmt.Errorf("read %d of %d sectors", len(covered), r.Length/secSize)
		}
		return nil
	}
	for sec, k := range writes {
		if k > 1 {
			return fmt.Errorf("member %d sector %d written %d times", sec.member, sec.sec, k)
		}
		if !wantWrites[sec] {
			return fmt.Errorf("member %d sector %d written, not in the reference", sec.member, sec.sec)
		}
	}
	if len(writes) != len(wantWrites) {
		return fmt.Errorf("%d sectors written, reference %d", len(writes), len(wantWrites))
	}
	allowed := map[sector]bool{}
	for k, h := range hulls {
		for _, l := range rowOf[k].row {
			for in := h[0]; in <= h[1]; in++ {
				allowed[sector{l.member, l.chunk*spc + in}] = true
			}
		}
	}
	for sec := range reads {
		if !allowed[sec] {
			return fmt.Errorf("write read member %d sector %d outside the touched rows", sec.member, sec.sec)
		}
	}
	return nil
}
