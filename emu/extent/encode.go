package extent

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sort"
)

// magic starts an encoded allocator; the digit is the format version.
const magic = "NXT1"

// MarshalBinary encodes the allocator's state: its geometry and every
// file's extents (the free list is their complement and is not stored). The
// encoding ends with a CRC-32 so that a torn write is detected on load.
func (a *Allocator) MarshalBinary() ([]byte, error) {
	buf := []byte(magic)
	buf = binary.AppendUvarint(buf, uint64(a.block))
	buf = binary.AppendUvarint(buf, uint64(a.blocks))
	ids := a.Files()
	buf = binary.AppendUvarint(buf, uint64(len(ids)))
	for _, id := range ids {
		m := a.files[id]
		buf = binary.AppendUvarint(buf, id)
		buf = binary.AppendUvarint(buf, uint64(len(m.runs)))
		for _, r := range m.runs {
			buf = binary.AppendUvarint(buf, uint64(r.lb))
			buf = binary.AppendUvarint(buf, uint64(r.pb))
			buf = binary.AppendUvarint(buf, uint64(r.n))
		}
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf)), nil
}

// Unmarshal decodes an allocator encoded by MarshalBinary. It fails with
// ErrCorrupt when the data is damaged or its extents overlap.
func Unmarshal(data []byte) (*Allocator, error) {
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	d := decoder{buf: body[len(magic):]}
	block, blocks := int64(d.uvarint()), int64(d.uvarint())
	if d.err != nil || block <= 0 || blocks <= 0 {
		return nil, fmt.Errorf("%w: bad geometry", ErrCorrupt)
	}
	a := &Allocator{block: block, blocks: blocks, files: map[uint64]*fileMap{}}
	var used []run
	nfiles := d.uvarint()
	for i := uint64(0); i < nfiles && d.err == nil; i++ {
		id, nruns := d.uvarint(), d.uvarint()
		if nruns > uint64(len(d.buf)) {
			return nil, fmt.Errorf("%w: file %d claims %d extents", ErrCorrupt, id, nruns)
		}
		m := &fileMap{runs: make([]run, 0, nruns)}
		for j := uint64(0); j < nruns; j++ {
			r := run{lb: int64(d.uvarint()), pb: int64(d.uvarint()), n: int64(d.uvarint())}
			if r.n <= 0 || r.lb < 0 || r.pb < 0 || r.pb+r.n > blocks || (j > 0 && m.runs[j-1].lb+m.runs[j-1].n > r.lb) {
				return nil, fmt.Errorf("%w: file %d extent %d %+v", ErrCorrupt, id, j, r)
			}
			m.runs = append(m.runs, r)
			used = append(used, r)
		}
		if len(m.runs) > 0 {
			a.files[id] = m
		}
	}
	if d.err != nil || len(d.buf) != 0 {
		return nil, fmt.Errorf("%w: truncated or trailing data", ErrCorrupt)
	}
	sort.Slice(used, func(i, j int) bool { return used[i].pb < used[j].pb })
	var next int64
	for _, r := range used {
		if r.pb < next {
			return nil, fmt.Errorf("%w: extents overlap at block %d", ErrCorrupt, r.pb)
		}
		if r.pb > next {
			a.free = append(a.free, run{pb: next, n: r.pb - next})
		}
		next = r.pb + r.n
	}
	if next < blocks {
		a.free = append(a.free, run{pb: next, n: blocks - next})
	}
	for _, f := range a.free {
		a.freeBlocks += f.n
	}
	return a, nil
}

// decoder reads uvarints and remembers the first error.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = ErrCorrupt
		return 0
	}
	d.buf = d.buf[n:]
	return v
}
