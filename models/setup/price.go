package setup

import (
	"fmt"
	"math"

	"github.com/nasemu/nasemu/models/catalog"
)

// PricePart is one priced line of a setup: Count of a catalog product at
// its street price.
type PricePart struct {
	Item    string  `json:"item"` // catalog name
	Count   int     `json:"count"`
	UnitUSD float64 `json:"unit_usd"`
	Date    string  `json:"date"` // when the price was seen, "YYYY-MM" (and where, for systems)
}

// Price is what a setup costs new, from the catalog's dated street
// prices: the NAS and every drive, cache drives included. A part the
// catalog has no price for (a system or drive written inline or
// overridden, which is another product; drives scaled down for tests; a
// setup without a NAS, whose host is not priced) is named in Unknown, and
// then the setup has no total.
type Price struct {
	Parts   []PricePart `json:"parts,omitempty"`
	Unknown []string    `json:"unknown,omitempty"`
}

// USD returns the setup's total price, and whether every part has one.
func (p Price) USD() (float64, bool) {
	var sum float64
	for _, x := range p.Parts {
		sum += float64(x.Count) * x.UnitUSD
	}
	return sum, len(p.Unknown) == 0 && len(p.Parts) > 0
}

// Price returns the setup's price from the catalog.
func (s *Setup) Price() Price {
	var p Price
	switch {
	case s.NAS == nil:
		p.Unknown = append(p.Unknown, "the host (the setup has no NAS)")
	case s.NAS.Ref == "" || s.NAS.Inline:
		p.Unknown = append(p.Unknown, fmt.Sprintf("NAS %s (inline or overridden: not a catalog product as sold)", s.NAS.Name))
	default:
		if sys, err := catalog.LookupSystem(s.NAS.Ref); err == nil && sys.PriceUSD > 0 {
			p.Parts = append(p.Parts, PricePart{Item: sys.Name, Count: 1, UnitUSD: sys.PriceUSD, Date: sys.PriceDate})
		} else {
			p.Unknown = append(p.Unknown, "NAS "+s.NAS.Ref+" (no price in the catalog)")
		}
	}
	groups := s.Drives
	if s.Cache != nil {
		groups = append(append([]DriveGroup(nil), groups...), s.Cache.Drives...)
	}
	for _, g := range groups {
		name := g.Ref
		if name == "" {
			name = g.Drive.Name
		}
		switch {
		case g.Ref == "" || g.Inline:
			p.Unknown = append(p.Unknown, fmt.Sprintf("drive %s (inline or overridden: not a catalog product as sold)", name))
		case g.Capacity != 0:
			p.Unknown = append(p.Unknown, fmt.Sprintf("drive %s (scaled to %v for tests)", name, g.Capacity))
		case g.Drive.Price.USD <= 0:
			p.Unknown = append(p.Unknown, "drive "+name+" (no price in the catalog)")
		default:
			p.Parts = append(p.Parts, PricePart{Item: name, Count: g.Count, UnitUSD: g.Drive.Price.USD, Date: g.Drive.Price.Date})
		}
	}
	return p
}

// USDPerTB returns price per terabyte (10^12 bytes, as drives are sold)
// of usable capacity: usd / (usable / 1e12); NaN when either is unknown
// (not positive).
func USDPerTB(usd float64, usableBytes int64) float64 {
	if usd <= 0 || usableBytes <= 0 {
		return math.NaN()
	}
	return usd / (float64(usableBytes) / 1e12)
}
