package iscsi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// BlockLimits are what a LUN says about the commands it accepts: the
// Block Limits VPD page (0xB0) and the Logical Block Provisioning VPD
// page (0xB2) of SBC-4. A zero limit means the LUN reports none.
type BlockLimits struct {
	// MaxTransfer is the most blocks one READ or WRITE may move;
	// OptimalTransfer the size the LUN prefers.
	MaxTransfer, OptimalTransfer uint32
	// MaxUnmapLBAs is the most blocks one UNMAP may deallocate (over
	// all its descriptors), MaxUnmapDescriptors the most descriptors.
	MaxUnmapLBAs, MaxUnmapDescriptors uint32
	// UnmapGranularity is the unit, in blocks, of deallocation.
	UnmapGranularity uint32
	// MaxWriteSame is the most blocks one WRITE SAME may write.
	MaxWriteSame uint64
	// Unmap (LBPU) says the LUN accepts UNMAP; WriteSameUnmap (LBPWS)
	// that it accepts WRITE SAME(16) with the UNMAP bit.
	Unmap, WriteSameUnmap bool
}

// vpd reads a VPD page.
func (s *Session) vpd(ctx context.Context, lun uint64, page byte) ([]byte, error) {
	cdb := make([]byte, 6)
	cdb[0], cdb[1], cdb[2] = 0x12, 0x01, page
	const alloc = 1024
	binary.BigEndian.PutUint16(cdb[3:], alloc)
	buf := make([]byte, alloc)
	if err := s.run(ctx, fmt.Sprintf("INQUIRY VPD 0x%02x", page), lun, cdb, nil, buf); err != nil {
		return nil, err
	}
	n := 4 + int(binary.BigEndian.Uint16(buf[2:]))
	if buf[1] != page || n > len(buf) {
		return nil, fmt.Errorf("%w: INQUIRY VPD 0x%02x answered with page 0x%02x of %d bytes", ErrSession, page, buf[1], n)
	}
	return buf[4:n], nil
}

// BlockLimits reads the LUN's Block Limits and Logical Block
// Provisioning pages, where it has them (the Supported VPD Pages page
// says). A LUN without them gets the zero BlockLimits: no limits
// reported, no UNMAP.
func (s *Session) BlockLimits(ctx context.Context, lun uint64) (BlockLimits, error) {
	var l BlockLimits
	pages, err := s.vpd(ctx, lun, 0x00)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) {
			return l, nil // no VPD pages: nothing reported
		}
		return l, err
	}
	be := binary.BigEndian
	if slices.Contains(pages, 0xb0) {
		p, err := s.vpd(ctx, lun, 0xb0)
		if err != nil {
			return l, err
		}
		if len(p) >= 12 {
			l.MaxTransfer = be.Uint32(p[4:])
			l.OptimalTransfer = be.Uint32(p[8:])
		}
		if len(p) >= 32 {
			l.MaxUnmapLBAs = be.Uint32(p[16:])
			l.MaxUnmapDescriptors = be.Uint32(p[20:])
			l.UnmapGranularity = be.Uint32(p[24:])
		}
		if len(p) >= 40 {
			l.MaxWriteSame = be.Uint64(p[32:])
		}
	}
	if slices.Contains(pages, 0xb2) {
		p, err := s.vpd(ctx, lun, 0xb2)
		if err != nil {
			return l, err
		}
		if len(p) >= 2 {
			l.Unmap = p[1]&0x80 != 0
			l.WriteSameUnmap = p[1]&0x40 != 0
		}
	}
	return l, nil
}

// unmapChunk returns how many of n blocks one UNMAP may deallocate, 0
// when the LUN takes no UNMAP.
func (l BlockLimits) unmapChunk(n uint64) uint64 {
	if !l.Unmap || l.MaxUnmapLBAs == 0 || l.MaxUnmapDescriptors == 0 {
		return 0
	}
	c := min(n, uint64(l.MaxUnmapLBAs), 0xffffffff) // 0xffffffff: no limit
	return c
}

// writeSameChunk returns how many of n blocks one WRITE SAME(16) may
// cover.
func (l BlockLimits) writeSameChunk(n uint64) uint64 {
	c := min(n, 0xffffffff)
	if l.MaxWriteSame > 0 {
		c = min(c, l.MaxWriteSame)
	}
	return c
}

// transferChunk returns how many bytes of n one READ or WRITE of bs-byte
// blocks may move: the LUN's maximum transfer length, and never more than
// maxCommandBytes, which bounds the buffers of one command at both ends
// (nasemu's target, like most, refuses more than 32 MiB).
func (l BlockLimits) transferChunk(n int64, bs int64) int64 {
	c := min(n, maxCommandBytes/bs*bs)
	if l.MaxTransfer > 0 {
		c = min(c, int64(l.MaxTransfer)*bs)
	}
	return c
}

// maxCommandBytes is the most one READ or WRITE of the initiator moves
// when the LUN reports no maximum transfer length.
const maxCommandBytes = 32 << 20

// WriteSame16 writes block (one block of bs bytes) to blocks [lba,
// lba+n); with unmap, the LUN may deallocate them instead (block must
// then be zeros on a LUN whose unmapped blocks read as zeros).
func (s *Session) WriteSame16(ctx context.Context, lun, lba uint64, n uint32, block []byte, unmap bool) error {
	cdb := make([]byte, 16)
	cdb[0] = 0x93
	if unmap {
		cdb[1] = 0x08
	}
	binary.BigEndian.PutUint64(cdb[2:], lba)
	binary.BigEndian.PutUint32(cdb[10:], n)
	return s.run(ctx, "WRITE SAME(16)", lun, cdb, block, nil)
}
