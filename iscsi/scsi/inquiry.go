package scsi

import (
	"encoding/binary"
	"hash/fnv"
)

func (l *LU) inquiry(cdb []byte) Response {
	alloc := int(binary.BigEndian.Uint16(cdb[3:]))
	evpd := cdb[1]&0x01 != 0
	page := cdb[2]
	if cdb[1]&0x02 != 0 { // CMDDT is obsolete
		return check(SenseInvalidFieldInCDB)
	}
	if !evpd {
		if page != 0 {
			return check(SenseInvalidFieldInCDB)
		}
		return good(trim(l.standardInquiry(), alloc))
	}
	var b []byte
	switch page {
	case 0x00:
		b = vpd(page, []byte{0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2})
	case 0x80:
		b = vpd(page, []byte(l.cfg.Serial))
	case 0x83:
		b = vpd(page, l.designators())
	case 0xb0:
		b = vpd(page, l.blockLimits())
	case 0xb1:
		p := make([]byte, 60)
		binary.BigEndian.PutUint16(p, l.cfg.RotationRate)
		b = vpd(page, p)
	case 0xb2:
		p := make([]byte, 4)
		p[1] = 0x80 | 0x40 | 0x20 | 0x04 // LBPU, LBPWS, LBPWS10, LBPRZ
		p[2] = 0x02                      // thin provisioned
		b = vpd(page, p)
	default:
		return check(SenseInvalidFieldInCDB)
	}
	return good(trim(b, alloc))
}

func vpd(page byte, payload []byte) []byte {
	b := make([]byte, 4, 4+len(payload))
	b[1] = page
	binary.BigEndian.PutUint16(b[2:], uint16(len(payload)))
	return append(b, payload...)
}

func pad(s string, n int) []byte {
	b := []byte(s)
	if len(b) > n {
		b = b[:n]
	}
	for len(b) < n {
		b = append(b, ' ')
	}
	return b
}

func (l *LU) standardInquiry() []byte {
	b := make([]byte, 8, 74)
	b[0] = 0x00 // direct access block device, connected
	b[2] = 0x06 // SPC-4
	b[3] = 0x02 // response data format 2 (HiSup would be 0x10)
	b[5] = 0x08 // 3PC=0, TPGS=0; bit 3 is reserved; keep PROTECT clear
	b[5] = 0
	b[7] = 0x02 // CmdQue
	b = append(b, pad(l.cfg.Vendor, 8)...)
	b = append(b, pad(l.cfg.Product, 16)...)
	b = append(b, pad("0001", 4)...)
	b = append(b, make([]byte, 22)...) // vendor specific 36-55, reserved 56-57
	// Version descriptors 58-73: SAM-5, iSCSI, SPC-4, SBC-3.
	for _, v := range []uint16{0x00a0, 0x0960, 0x0460, 0x04c0} {
		b = binary.BigEndian.AppendUint16(b, v)
	}
	b = append(b, make([]byte, 16-8)...)
	b[4] = byte(len(b) - 5)
	return b
}

func (l *LU) designators() []byte {
	var b []byte
	// NAA 6 (IEEE registered extended) with a locally made identifier.
	h := fnv.New64a()
	h.Write([]byte(l.cfg.Serial))
	id := h.Sum64() ^ l.cfg.ID
	naa := make([]byte, 16)
	binary.BigEndian.PutUint64(naa, 0x6000000000000000|(id>>4)&0x0fffffffffffffff)
	binary.BigEndian.PutUint64(naa[8:], id)
	b = append(b, 0x01, 0x03, 0x00, 16) // binary, LU association, NAA
	b = append(b, naa...)
	// T10 vendor ID designator.
	t10 := append(pad(l.cfg.Vendor, 8), []byte(l.cfg.Serial)...)
	b = append(b, 0x02, 0x01, 0x00, byte(len(t10)))
	return append(b, t10...)
}

func (l *LU) blockLimits() []byte {
	p := make([]byte, 60)
	be := binary.BigEndian
	p[0] = 0x01 // WSNZ: WRITE SAME with zero blocks is refused
	p[1] = maxCAWBlocks
	be.PutUint16(p[2:], 1)                    // optimal transfer length granularity
	be.PutUint32(p[4:], l.maxXfer())          // maximum transfer length
	be.PutUint32(p[8:], uint32(128<<10/l.bs)) // optimal transfer length: 128 KiB
	be.PutUint32(p[16:], maxUnmapBlocks)      // maximum unmap LBA count
	be.PutUint32(p[20:], maxUnmapDescs)       // maximum unmap block descriptor count
	be.PutUint32(p[24:], 1)                   // optimal unmap granularity
	be.PutUint64(p[32:], maxWriteSameBlocks)
	return p
}

// Mode pages.
const (
	pageCaching = 0x08
	pageControl = 0x0a
	pageAll     = 0x3f
)

func (l *LU) modePage(code byte, pc byte) []byte {
	switch code {
	case pageCaching:
		p := make([]byte, 20)
		p[0], p[1] = pageCaching, 18
		if pc != 1 { // current/default: write cache enabled (Sync makes data durable)
			p[2] = 0x04 // WCE
		}
		return p
	case pageControl:
		p := make([]byte, 12)
		p[0], p[1] = pageControl, 10
		if pc != 1 {
			p[3] = 0x10 // queue algorithm modifier 1: unrestricted reordering
			binary.BigEndian.PutUint16(p[10:], 0xffff)
		}
		return p
	}
	return nil
}

func (l *LU) modeSense(cdb []byte, ten bool) Response {
	dbd := cdb[1]&0x08 != 0
	pc := cdb[2] >> 6
	code := cdb[2] & 0x3f
	sub := cdb[3]
	var alloc int
	if ten {
		alloc = int(binary.BigEndian.Uint16(cdb[7:]))
	} else {
		alloc = int(cdb[4])
	}
	if pc == 3 {
		return check(SenseSavingNotSupported)
	}
	var pages []byte
	switch {
	case code == pageAll && (sub == 0 || sub == 0xff):
		pages = append(l.modePage(pageCaching, pc), l.modePage(pageControl, pc)...)
	case sub == 0 && (code == pageCaching || code == pageControl):
		pages = l.modePage(code, pc)
	default:
		return check(SenseInvalidFieldInCDB)
	}
	dev := byte(0x10) // DPOFUA: FUA is honoured
	if l.cfg.ReadOnly {
		dev |= 0x80
	}
	var desc []byte
	if !dbd {
		desc = make([]byte, 8)
		n := l.blocks
		if n > 0xffffffff {
			n = 0xffffffff
		}
		binary.BigEndian.PutUint32(desc, uint32(n))
		binary.BigEndian.PutUint32(desc[4:], uint32(l.bs)&0xffffff)
	}
	var b []byte
	if ten {
		b = make([]byte, 8)
		b[3] = dev
		binary.BigEndian.PutUint16(b[6:], uint16(len(desc)))
	} else {
		b = make([]byte, 4)
		b[2] = dev
		b[3] = byte(len(desc))
	}
	b = append(b, desc...)
	b = append(b, pages...)
	if ten {
		binary.BigEndian.PutUint16(b, uint16(len(b)-2))
	} else {
		b[0] = byte(len(b) - 1)
	}
	return good(trim(b, alloc))
}
