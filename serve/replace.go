package serve

import (
	"fmt"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/raid"
	"github.com/nasemu/nasemu/models/setup"
)

// ReplacementDrives returns the factory of the drives that 'nasemu ctl
// replace N' puts in the place of array member N: a new drive like the
// ones the setup builds, taken from a second build of the setup with a
// seed of its own, as a new drive of the same model is a different unit.
func ReplacementDrives(s *setup.Setup, seed uint64) func(member int) (models.Device, error) {
	replaced := uint64(0)
	return func(member int) (models.Device, error) {
		replaced++
		fresh, err := s.Build(seed + replaced*0x9e3779b97f4a7c15)
		if err != nil {
			return nil, err
		}
		var drive models.Device
		models.Walk(fresh, func(d models.Device, _ int) {
			if _, ok := d.(raid.MemberReplacer); ok && drive == nil {
				if p, ok := d.(models.Parent); ok && member >= 0 && member < len(p.Children()) {
					kids := p.Children()
					drive = kids[member]
				}
			}
		})
		if drive == nil {
			return nil, fmt.Errorf("the setup has no array member %d", member)
		}
		return drive, nil
	}
}
