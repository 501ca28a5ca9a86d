package scsi

import "encoding/binary"

// Provisioner is what a backend may tell about its allocation: whether
// the bytes at off are mapped, and how many bytes from off (at most n)
// share that state. A backend without it is scanned instead: with LBPRZ
// a deallocated block reads as zeros, so a block of zeros is reported
// deallocated, which is what an initiator can observe of it anyway.
type Provisioner interface {
	Provisioned(off, n int64) (mapped bool, run int64, err error)
}

// lbaStatusScan bounds the bytes one GET LBA STATUS reads from a backend
// that is not a Provisioner: one chunk, as WRITE SAME and VERIFY move.
const lbaStatusScan = ioChunk

// Provisioning status of an LBA status descriptor (SBC-4 5.8.2).
const (
	lbaMapped      = 0
	lbaDeallocated = 1
)

// getLBAStatus answers GET LBA STATUS (SBC-4 5.8): descriptors of the
// runs of mapped and deallocated blocks from the starting LBA, as many
// as the allocation length holds, over at most one scan.
func (l *LU) getLBAStatus(cdb []byte) Response {
	be := binary.BigEndian
	lba := be.Uint64(cdb[2:])
	alloc := int(be.Uint32(cdb[10:]))
	if l.stopped.Load() {
		return check(SenseNotReadyStopped)
	}
	if lba >= l.blocks {
		return check(SenseLBAOutOfRange)
	}
	// An allocation length without room for a descriptor still gets the
	// header, which says how long the answer is.
	maxDesc := max((alloc-8)/16, 1)
	type run struct {
		lba    uint64
		blocks uint64
		status byte
	}
	var runs []run
	add := func(lba, n uint64, status byte) {
		if k := len(runs); k > 0 && runs[k-1].status == status && runs[k-1].lba+runs[k-1].blocks == lba {
			runs[k-1].blocks += n
			return
		}
		runs = append(runs, run{lba, n, status})
	}
	bs := uint64(l.bs)
	left := min(l.blocks-lba, lbaStatusScan/bs)
	if p, ok := l.dev.(Provisioner); ok {
		left = l.blocks - lba
		for at := lba; left > 0 && len(runs) <= maxDesc; {
			mapped, n, err := p.Provisioned(int64(at*bs), int64(min(left, 0xffffffff)*bs))
			if err != nil {
				return l.ioError(err, false, at)
			}
			k := max(uint64(n)/bs, 1)
			k = min(k, left)
			st := byte(lbaDeallocated)
			if mapped {
				st = lbaMapped
			}
			add(at, k, st)
			at += k
			left -= k
		}
	} else {
		buf := make([]byte, left*bs)
		if _, err := l.dev.ReadAt(buf, int64(lba*bs)); err != nil {
			return l.ioError(err, false, lba)
		}
		for i := uint64(0); i < left; i++ {
			st := byte(lbaMapped)
			if isZero(buf[i*bs : (i+1)*bs]) {
				st = lbaDeallocated
			}
			add(lba+i, 1, st)
		}
	}
	if len(runs) > maxDesc {
		runs = runs[:maxDesc]
	}
	b := make([]byte, 8, 8+16*len(runs))
	for _, r := range runs {
		d := make([]byte, 16)
		be.PutUint64(d, r.lba)
		be.PutUint32(d[8:], uint32(min(r.blocks, 0xffffffff)))
		d[12] = r.status
		b = append(b, d...)
	}
	be.PutUint32(b, uint32(len(b)-4))
	return good(trim(b, alloc))
}
