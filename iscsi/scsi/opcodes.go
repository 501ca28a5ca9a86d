package scsi

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
)

// REPORT SUPPORTED OPERATION CODES (SPC-4 6.35): the commands this device
// server implements, each with its CDB usage data — the CDB with a 1 in
// every bit the device server evaluates (the operation code and service
// action in full, reserved bits and unsupported flags 0) — and its
// timeouts. Execute refuses any command not in this table with INVALID
// COMMAND OPERATION CODE; TestOpcodesTable holds the two in step.

type opcodeInfo struct {
	op     byte
	sa     uint16
	hasSA  bool
	usage  []byte
	nomSec uint32 // nominal command processing timeout, seconds
	recSec uint32 // recommended command timeout, seconds
}

// Timeouts: a command that moves or syncs data may wait behind the whole
// queue of a slow modelled array (an HDD RAID over 1GbE takes seconds for
// a deep queue of large transfers); the others answer at once.
const (
	quickTimeout = 1
	mediaTimeout = 30
)

// usage lines: op[/sa] then the usage bytes in hex (the first byte is
// the operation code itself). A trailing '*' marks media commands.
const opcodeTable = `
00     000000000000
03     030100 00ff00
12     1201ffffff00
1a     1a08ffffff00
5a     5a08ffff000000ffff00
16     160000000000
17     170000000000
1b     1b000000f300
25     2500ffffffff00000100
9e/10  9e1f0000000000000000ffffffff0000
9e/12  9e1fffffffffffffffffffffffff0000 *
a0     a000ff000000ffffffff0000
08     081fffffff00 *
28     28f8ffffffff00ffff00 *
a8     a8f8ffffffffffffffff0000 *
88     88f8ffffffffffffffffffffffff0000 *
0a     0a1fffffff00 *
2a     2af8ffffffff00ffff00 *
aa     aaf8ffffffffffffffff0000 *
8a     8af8ffffffffffffffffffffffff0000 *
2e     2ef0ffffffff00ffff00 *
ae     aef0ffffffffffffffff0000 *
8e     8ef0ffffffffffffffffffffffff0000 *
2f     2ff6ffffffff00ffff00 *
af     aff6ffffffffffffffff0000 *
8f     8ff6ffffffffffffffffffffffff0000 *
89     89f8ffffffffffffffff000000ff0000 *
8b     8bf8ffffffffffffffffffffffff0000 *
41     41f8ffffffff00ffff00 *
93     93f9ffffffffffffffffffffffff0000 *
42     42010000000000ffff00 *
34     3402ffffffff00ffff00
90     9002ffffffffffffffffffffffff0000
35     3506ffffffff00ffff00 *
91     9106ffffffffffffffffffffffff0000 *
5e/00  5e1f0000000000ffff00
5e/01  5e1f0000000000ffff00
5e/02  5e1f0000000000ffff00
5e/03  5e1f0000000000ffff00
5f/00  5f1fff0000ffffffff00
5f/01  5f1fff0000ffffffff00
5f/02  5f1fff0000ffffffff00
5f/03  5f1fff0000ffffffff00
5f/04  5f1fff0000ffffffff00
5f/05  5f1fff0000ffffffff00
5f/06  5f1fff0000ffffffff00
a3/0c  a31f87ffffffffffffff0000
`

var opcodes = parseOpcodeTable(opcodeTable)

func parseOpcodeTable(s string) []opcodeInfo {
	var out []opcodeInfo
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		name, usageHex := f[0], strings.Join(f[1:], "")
		media := strings.HasSuffix(usageHex, "*")
		usageHex = strings.TrimSuffix(usageHex, "*")
		usage, err := hex.DecodeString(usageHex)
		if err != nil {
			panic("scsi: opcode table: " + line)
		}
		info := opcodeInfo{op: usage[0], usage: usage, nomSec: quickTimeout, recSec: quickTimeout}
		if media {
			info.recSec = mediaTimeout
		}
		if op, sa, ok := strings.Cut(name, "/"); ok {
			b, err := hex.DecodeString(sa)
			if err != nil || len(b) != 1 || op != hex.EncodeToString(usage[:1]) {
				panic("scsi: opcode table: " + line)
			}
			info.sa, info.hasSA = uint16(b[0]), true
		}
		out = append(out, info)
	}
	return out
}

// reportOpcodes answers REPORT SUPPORTED OPERATION CODES.
func (l *LU) reportOpcodes(cdb []byte) Response {
	be := binary.BigEndian
	rctd := cdb[2]&0x80 != 0
	options := cdb[2] & 0x07
	reqOp, reqSA := cdb[3], be.Uint16(cdb[4:])
	alloc := int(be.Uint32(cdb[6:]))
	timeouts := func(b []byte, o opcodeInfo) []byte {
		b = be.AppendUint16(b, 0x0a)
		b = append(b, 0, 0) // reserved, command specific
		b = be.AppendUint32(b, o.nomSec)
		return be.AppendUint32(b, o.recSec)
	}
	if options == 0 { // all commands
		b := make([]byte, 4)
		for _, o := range opcodes {
			d := make([]byte, 8)
			d[0] = o.op
			be.PutUint16(d[2:], o.sa)
			if o.hasSA {
				d[5] |= 0x01 // SERVACTV
			}
			if rctd {
				d[5] |= 0x02 // CTDP
			}
			be.PutUint16(d[6:], uint16(len(o.usage)))
			b = append(b, d...)
			if rctd {
				b = timeouts(b, o)
			}
		}
		be.PutUint32(b, uint32(len(b)-4))
		return good(trim(b, alloc))
	}
	if options > 3 {
		return check(SenseInvalidFieldInCDB)
	}
	// One command: 001b names an operation code without service actions,
	// 010b one with (and its action), 011b either.
	var found *opcodeInfo
	hasSA := false
	for i, o := range opcodes {
		if o.op != reqOp {
			continue
		}
		hasSA = o.hasSA
		if !o.hasSA || o.sa == reqSA {
			found = &opcodes[i]
		}
	}
	switch {
	case options == 1 && hasSA, options == 2 && found != nil && !hasSA:
		return check(SenseInvalidFieldInCDB)
	}
	b := make([]byte, 4)
	if found == nil {
		b[1] = 0x01 // SUPPORT 001b: not supported
		return good(trim(b, alloc))
	}
	b[1] = 0x03 // SUPPORT 011b: as the standard says
	if rctd {
		b[1] |= 0x80 // CTDP
	}
	be.PutUint16(b[2:], uint16(len(found.usage)))
	b = append(b, found.usage...)
	if rctd {
		b = timeouts(b, *found)
	}
	return good(trim(b, alloc))
}
