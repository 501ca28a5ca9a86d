package raid

import (
	"fmt"
	"slices"

	"github.com/nasemu/nasemu/models"
)

// shrLayers lays out Synology Hybrid RAID with one-drive redundancy.
//
// SHR slices the drives into layers at each distinct drive size: layer k
// spans member offsets [b(k-1), b(k)) of every drive at least b(k) large,
// where b(1) < b(2) < ... are the distinct capacities (rounded down to a
// whole chunk). A layer over three or more drives is a RAID 5, over two
// drives a RAID 1; the layers are concatenated (DSM joins them with LVM)
// in order of member offset. With equal drives there is one layer, laid
// out exactly like RAID 5 (or RAID 1 for two drives).
//
// The space of the largest drive above the second largest belongs to no
// redundant layer and is left unused, as DSM does. Every drive belongs to
// the first layer, so the array survives one failed drive and no more.
func shrLayers(caps []int64, chunk int64) ([]segment, error) {
	rounded := make([]int64, len(caps))
	for i, c := range caps {
		rounded[i] = c / chunk * chunk
	}
	bounds := slices.Clone(rounded)
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var segs []segment
	var base int64
	for _, b := range bounds {
		if b == 0 {
			continue
		}
		var members []int
		for i, c := range rounded {
			if c >= b {
				members = append(members, i)
			}
		}
		if len(members) < 2 {
			break // the largest drive's extra space: no redundancy possible
		}
		level := RAID5
		if len(members) == 2 {
			level = RAID1
		}
		segs = append(segs, segment{level: level, members: members, base: base, height: b - base, chunk: chunk})
		base = b
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("%w: raid: shr needs at least two drives of one chunk (%d bytes) or more", models.ErrConfig, chunk)
	}
	return segs, nil
}
