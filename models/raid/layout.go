package raid

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/nasemu/nasemu/models"
)

// A segment is one striped (or mirrored, or plain) region of the array's
// address space laid over the same range of member offsets on each of its
// members. Most levels have exactly one; a JBOD has one per drive and an
// SHR array one per layer. The array's address space is the concatenation
// of its segments in order.
type segment struct {
	level   Level // Single, RAID0, RAID1, RAID5, RAID6 or RAID10
	members []int // array member indices in layout order
	base    int64 // member offset of the segment's first byte (same on every member)
	height  int64 // bytes the segment uses on each member
	start   int64 // array offset of the segment's first byte
	size    int64 // array bytes the segment holds
	chunk   int64
}

// chunkOf returns the index of the chunk holding segment offset off (≥ 0),
// off / chunk; inChunk returns the offset within it, off % chunk. The
// chunk is a power of two (Config.Validate), so these are a shift and a
// mask: every request passes through them, and a 64-bit division takes
// tens of cycles.
func (s *segment) chunkOf(off int64) int64 {
	return off >> bits.TrailingZeros64(uint64(s.chunk))
}

func (s *segment) inChunk(off int64) int64 { return off & (s.chunk - 1) }

// width is the number of members holding distinct data in one row of
// chunks.
func (s *segment) width() int {
	n := len(s.members)
	switch s.level {
	case RAID0:
		return n
	case RAID5:
		return n - 1
	case RAID6:
		return n - 2
	case RAID10:
		return n / 2
	}
	return 1 // Single, RAID1
}

// parityCount is 1 for RAID 5, 2 for RAID 6 and 0 otherwise.
func (s *segment) parityCount() int {
	switch s.level {
	case RAID5:
		return 1
	case RAID6:
		return 2
	}
	return 0
}

// parityLocal returns the local (index into s.members) P and Q members of
// a parity row; q is -1 for RAID 5. Linux md's left-symmetric layout
// (ALGORITHM_LEFT_SYMMETRIC, its default for both levels): P starts on the
// last member and moves one member left each row; Q follows P; the data
// chunks start just after the parity and wrap around.
func (s *segment) parityLocal(row int64) (p, q int) {
	n := len(s.members)
	p = n - 1 - int(row%int64(n))
	q = -1
	if s.level == RAID6 {
		q = (p + 1) % n
	}
	return p, q
}

// dataLocal returns the local member holding data chunk i (0 ≤ i < width)
// of a parity row.
func (s *segment) dataLocal(row int64, i int) int {
	n := len(s.members)
	p, _ := s.parityLocal(row)
	// (p + parities + i) mod n, with the sum below 2n: one subtraction.
	l := p + s.parityCount() + i
	if l >= n {
		l -= n
	}
	return l
}

// locate maps a segment-relative offset to the local member holding its
// (first) copy and the absolute member offset. For RAID 10 the second copy
// is on local member+1; for RAID 1 every member holds it at the same
// offset.
func (s *segment) locate(off int64) (local int, moff int64) {
	switch s.level {
	case Single, RAID1:
		return 0, s.base + off
	}
	c, in := s.chunkOf(off), s.inChunk(off)
	w := int64(s.width())
	row := c / w
	i := int(c % w)
	switch s.level {
	case RAID0:
		local = i
	case RAID10:
		local = 2 * i
	default: // RAID5, RAID6
		local = s.dataLocal(row, i)
	}
	return local, s.base + row*s.chunk + in
}

// layout builds the segments of an array with the given config (defaults
// applied) and member capacities, and returns the bytes each member uses.
//
// Capacity rules: raid0, raid1, raid5, raid6 and raid10 use the smallest
// member's capacity on every member (as Intel RST and Synology do; md's
// raid0 zones of unequal drives are not modelled), rounded down to a whole
// chunk for the striped levels; md's superblock and data offset are not
// reserved. single and jbod use whole drives. shr: see shr.go.
func layout(cfg Config, caps []int64) ([]segment, []int64, error) {
	n := len(caps)
	if err := cfg.Validate(n); err != nil {
		return nil, nil, err
	}
	for i, c := range caps {
		if c <= 0 {
			return nil, nil, fmt.Errorf("%w: raid: member %d has capacity %d", models.ErrConfig, i, c)
		}
	}
	chunk := int64(cfg.Chunk)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	var segs []segment
	switch cfg.Level {
	case Single:
		segs = []segment{{level: Single, members: all, height: caps[0], chunk: chunk}}
	case JBOD:
		for i := range caps {
			segs = append(segs, segment{level: Single, members: []int{i}, height: caps[i], chunk: chunk})
		}
	case RAID1:
		segs = []segment{{level: RAID1, members: all, height: slices.Min(caps), chunk: chunk}}
	case RAID0, RAID5, RAID6, RAID10:
		h := slices.Min(caps) / chunk * chunk
		if h == 0 {
			return nil, nil, fmt.Errorf("%w: raid: %s members of %d bytes are smaller than one chunk (%s)", models.ErrConfig, cfg.Level, slices.Min(caps), cfg.Chunk)
		}
		segs = []segment{{level: cfg.Level, members: all, height: h, chunk: chunk}}
	case SHR:
		var err error
		if segs, err = shrLayers(caps, chunk); err != nil {
			return nil, nil, err
		}
	}
	used := make([]int64, n)
	var start int64
	for i := range segs {
		s := &segs[i]
		s.start = start
		s.size = s.height * int64(s.width())
		start += s.size
		for _, m := range s.members {
			used[m] = max(used[m], s.base+s.height)
		}
	}
	return segs, used, nil
}

// Usable returns the capacity of an array of the given configuration over
// members of the given capacities (exactly what New's Array.Capacity will
// be) and how many member failures it is guaranteed to survive. Errors
// wrap models.ErrConfig.
func Usable(cfg Config, memberCaps []int64) (capacity int64, tolerates int, err error) {
	cfg = cfg.withDefaults(len(memberCaps))
	segs, _, err := layout(cfg, memberCaps)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range segs {
		capacity += s.size
	}
	return capacity, Tolerates(cfg.Level, len(memberCaps)), nil
}
