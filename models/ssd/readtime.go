package ssd

import (
	"math"
	"time"
)

// Read time variation
//
// Two documented mechanisms make NAND reads of the same drive take
// different times; both are modelled, neither is noise.
//
// Page types. A TLC word line holds three pages (lower, middle, upper),
// a QLC one four, and reading a page means sensing the cells against as
// many read reference voltages as the page's bit changes at: one or two
// for the lower page, four or more for the upper one. tR therefore
// depends on the page type. The model takes the relative times from the
// per-page-type figures that SimpleSSD and FEMU use for 3D TLC (lower /
// middle / upper 56.5 / 77.5 / 106 µs: M. Jung et al., "SimpleSSD:
// Modeling Solid State Drives for Holistic System Simulation", IEEE CAL
// 2018) and for QLC (those times × 1.05 / 1.1 / 1.2 and the upper × 1.6,
// after Micron's FMS 2019 "Component-Level Characterization of 3D TLC,
// QLC, and Low-Latency NAND"), scaled so that their mean is the
// configuration's ReadTLC: the mean (and so every throughput figure) is
// the drive's, the spread is the page types'. A block's page groups run
// through the page types of its word lines in program order. SLC-mode
// pages have one read level and one time, ReadSLC.
//
// Read retry. When the ECC engine cannot decode a page read at the
// default reference voltages, the controller reads it again at the next
// entry of the die's read-retry table, paying another tR and channel
// transfer per step, until a read decodes. How many steps a read needs
// grows with wear and retention: with the vendors' read-retry tables,
// 3D NAND aged to 3K P/E cycles needs over 3 steps per read on average
// (M. Ye et al., "Achieving Near-Zero Read Retry for 3D NAND Flash
// Memory", ASPLOS 2024). The model draws each read's step count from a
// Poisson law with mean ReadRetry + erases/1000 (the block's erase
// count), from the drive's own seeded generator, so runs are
// reproducible and a drive's answers depend only on its seed and its
// requests. ReadRetry, the mean at beginning of life, is a class-level
// figure of the catalog's NAND classes.

// pageTypeTime holds tR of each page type relative to the mean over the
// page types, for TLC (3 types) and QLC (4 types).
var pageTypeTime = [5][4]float64{
	3: rel(56.5, 77.5, 106),
	4: rel(56.5*1.05, 77.5*1.1, 106*1.2, 106*1.6),
}

func rel(t ...float64) [4]float64 {
	var r [4]float64
	sum := 0.0
	for _, v := range t {
		sum += v
	}
	for i, v := range t {
		r[i] = v * float64(len(t)) / sum
	}
	return r
}

// retryPerErase is the growth of the mean retry steps per read with the
// block's erase count: 3 steps at 3K P/E cycles (Ye et al., above).
const retryPerErase = 1.0 / 1000

// maxRetry bounds a read's retry steps: the length of a die's read-retry
// table (vendors ship some tens of entries); past it the controller
// falls back to soft decoding and RAID-like recovery, not modelled.
const maxRetry = 40

// readTimes fills the drive's table of tR by page type.
func (d *Drive) readTimes() {
	bits := d.geo.cellBits
	for i := range bits {
		d.tR[i] = time.Duration(math.Round(float64(d.cfg.ReadTLC) * pageTypeTime[bits][i]))
	}
	d.retryZero = math.Exp(-d.cfg.ReadRetry)
}

// senseTime returns the die time of one host read of physical slot p:
// tR of its page type, and the retry steps its decoding needs, each a
// further sense and transfer x.
func (d *Drive) senseTime(p int64, x time.Duration) time.Duration {
	blk := p / d.geo.slotsPerBlock
	var tR time.Duration
	if d.mode[blk] == modeSLC {
		tR = d.cfg.ReadSLC
	} else {
		tR = d.tR[(p-blk*d.geo.slotsPerBlock)/d.geo.groupSlots%int64(d.geo.cellBits)]
	}
	if d.cfg.ReadRetry == 0 {
		return tR
	}
	if k := d.retrySteps(d.erases[blk]); k > 0 {
		d.st.retries += int64(k)
		return tR + time.Duration(k)*(tR+x)
	}
	return tR
}

// retrySteps draws a read's retry steps: Poisson with mean ReadRetry +
// erases × retryPerErase, by inversion of one uniform draw.
func (d *Drive) retrySteps(erases uint32) int {
	u := float64(d.rng.Uint64()>>11) * 0x1p-53
	p := d.retryZero
	m := d.cfg.ReadRetry
	if erases > 0 {
		m += float64(float64(erases) * retryPerErase) // rounded: no FMA (DESIGN: deterministic)
		p = math.Exp(-m)
	}
	cdf, k := p, 0
	for u > cdf && k < maxRetry {
		k++
		p = float64(p * (m / float64(k)))
		cdf += p
	}
	return k
}
