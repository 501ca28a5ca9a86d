package scsi

import "encoding/binary"

// Status codes of a SCSI command (SAM-5).
const (
	StatusGood                = 0x00
	StatusCheckCondition      = 0x02
	StatusConditionMet        = 0x04
	StatusBusy                = 0x08
	StatusReservationConflict = 0x18
	StatusTaskSetFull         = 0x28
)

// Sense keys (SPC-4).
const (
	KeyNoSense        = 0x00
	KeyNotReady       = 0x02
	KeyMediumError    = 0x03
	KeyHardwareError  = 0x04
	KeyIllegalRequest = 0x05
	KeyUnitAttention  = 0x06
	KeyDataProtect    = 0x07
	KeyAbortedCommand = 0x0b
	KeyMiscompare     = 0x0e
)

// Sense is a sense key with its additional sense code and qualifier.
type Sense struct {
	Key, ASC, ASCQ byte
	// Info, when InfoValid, goes into the INFORMATION field (the offset of
	// a miscompare, the LBA of a medium error).
	Info      uint64
	InfoValid bool
}

// Additional sense codes used by the device server.
var (
	SenseInvalidOpcode       = Sense{Key: KeyIllegalRequest, ASC: 0x20}
	SenseInvalidFieldInCDB   = Sense{Key: KeyIllegalRequest, ASC: 0x24}
	SenseInvalidFieldInParam = Sense{Key: KeyIllegalRequest, ASC: 0x26}
	SenseParamListLength     = Sense{Key: KeyIllegalRequest, ASC: 0x1a}
	SenseLBAOutOfRange       = Sense{Key: KeyIllegalRequest, ASC: 0x21}
	SenseInvalidFieldInIU    = Sense{Key: KeyIllegalRequest, ASC: 0x0e, ASCQ: 0x03}
	SenseLUNotSupported      = Sense{Key: KeyIllegalRequest, ASC: 0x25}
	SenseSavingNotSupported  = Sense{Key: KeyIllegalRequest, ASC: 0x39}
	SenseWriteProtected      = Sense{Key: KeyDataProtect, ASC: 0x27}
	SenseNotReadyStopped     = Sense{Key: KeyNotReady, ASC: 0x04, ASCQ: 0x02} // initializing command required
	SenseReadError           = Sense{Key: KeyMediumError, ASC: 0x11}
	SenseWriteError          = Sense{Key: KeyMediumError, ASC: 0x0c}
	SenseInternalFailure     = Sense{Key: KeyHardwareError, ASC: 0x44}
	SenseMiscompareVerify    = Sense{Key: KeyMiscompare, ASC: 0x1d}
	SenseNoSense             = Sense{}
	SenseInvalidReleaseOfPR  = Sense{Key: KeyIllegalRequest, ASC: 0x26, ASCQ: 0x04}
)

// Bytes returns the sense in fixed format (response code 0x70).
func (s Sense) Bytes() []byte {
	b := make([]byte, 18)
	b[0] = 0x70
	b[2] = s.Key
	if s.InfoValid {
		b[0] |= 0x80
		binary.BigEndian.PutUint32(b[3:], uint32(s.Info))
	}
	b[7] = 10 // additional sense length
	b[12] = s.ASC
	b[13] = s.ASCQ
	return b
}
