package setup

import (
	"math"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/models/catalog"
)

// A setup's price is its NAS's and every drive's (cache drives too) from
// the catalog, and a part the catalog cannot price leaves the setup
// without a total, naming the part.
func TestPrice(t *testing.T) {
	nas, err := catalog.LookupSystem("synology-ds1817")
	if err != nil {
		t.Fatal(err)
	}
	hdd, err := catalog.LookupDrive("wd-red-1tb")
	if err != nil {
		t.Fatal(err)
	}
	ssd, err := catalog.LookupDrive("kingston-suv500-240g")
	if err != nil {
		t.Fatal(err)
	}
	base := `name: p
nas: synology-ds1817
drives: {model: wd-red-1tb, count: 4}
raid: {level: raid5}
cache:
  drives: {model: kingston-suv500-240g, count: 2}
  mode: read-write
link: 1gbe
protocol: smb3
`
	cases := []struct {
		name, yaml string
		usd        float64 // 0: no total
		unknown    string  // a word of the part without a price
	}{
		{"catalog parts", base, nas.PriceUSD + 4*hdd.Price.USD + 2*ssd.Price.USD, ""},
		{"inline NAS", strings.Replace(base, "nas: synology-ds1817", "nas: {base: synology-ds1817, ram: 8GiB}", 1), 0, "NAS"},
		{"scaled drives", strings.Replace(base, "count: 4}", "count: 4, capacity: 8GiB}", 1), 0, "scaled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("p.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			p := s.Price()
			usd, ok := p.USD()
			if tc.usd > 0 {
				if !ok || usd != tc.usd || len(p.Parts) != 3 {
					t.Errorf("price %v (complete %v, %d parts), want %v from 3 parts", usd, ok, len(p.Parts), tc.usd)
				}
				return
			}
			if ok || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], tc.unknown) {
				t.Errorf("price %v complete %v, unknown %q: want no total, one unknown part naming %q", usd, ok, p.Unknown, tc.unknown)
			}
		})
	}
}

func TestUSDPerTB(t *testing.T) {
	for _, tc := range []struct {
		usd    float64
		usable int64
		want   float64
	}{
		{1090, 3e12, 1090.0 / 3},
		{1030, 720e9, 1030 / 0.72},
		{500, 2_000_398_934_016, 500 / 2.000398934016},
	} {
		if got := USDPerTB(tc.usd, tc.usable); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("USDPerTB(%v, %d) = %v, want %v", tc.usd, tc.usable, got, tc.want)
		}
	}
	for _, bad := range [][2]float64{{0, 1e12}, {100, 0}, {-1, 1e12}} {
		if got := USDPerTB(bad[0], int64(bad[1])); !math.IsNaN(got) {
			t.Errorf("USDPerTB(%v, %v) = %v, want NaN (unknown)", bad[0], bad[1], got)
		}
	}
}
