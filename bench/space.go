package bench

import "fmt"

// Space lays out a block target's files on its address space (the sim:
// target's device, an iSCSI LUN): each file gets one extent aligned to
// the space's allocation unit, the first freed extent it fits in or else
// the space after every extent handed out. A file without a size is the
// whole device. Space is not safe for concurrent use.
type Space struct {
	target      string // for messages
	size, align int64
	files       map[string]*Extent
	free        []Extent // freed extents, first fit
	next        int64    // bump allocator beyond every extent handed out
}

// Extent is a file's place on a Space.
type Extent struct {
	Base, Size int64
	Filled     bool // laid out with data
	Whole      bool // the whole device (a job without a size)
}

// NewSpace returns an empty space of size bytes allocated in units of
// align bytes; target names it in errors.
func NewSpace(target string, size, align int64) *Space {
	return &Space{target: target, size: size, align: align, files: map[string]*Extent{}}
}

// File returns the extent of a file, or nil.
func (s *Space) File(name string) *Extent { return s.files[name] }

// Whole makes name the whole device.
func (s *Space) Whole(name string) *Extent {
	e := &Extent{Size: s.size, Whole: true}
	s.files[name] = e
	return e
}

// Allocate places a file of size bytes, replacing any extent it had.
func (s *Space) Allocate(name string, size int64) (*Extent, error) {
	s.Release(name)
	need := (size + s.align - 1) / s.align * s.align
	for i, f := range s.free {
		if f.Size >= need {
			e := &Extent{Base: f.Base, Size: size}
			if f.Size == need {
				s.free = append(s.free[:i], s.free[i+1:]...)
			} else {
				s.free[i] = Extent{Base: f.Base + need, Size: f.Size - need}
			}
			s.files[name] = e
			return e, nil
		}
	}
	if s.next+need > s.size {
		return nil, fmt.Errorf("%w: %s: no room for %s (%d bytes): the device holds %d bytes, %d in use",
			ErrTarget, s.target, name, size, s.size, s.next)
	}
	e := &Extent{Base: s.next, Size: size}
	s.next += need
	s.files[name] = e
	return e, nil
}

// Release forgets a file and frees its extent.
func (s *Space) Release(name string) {
	e := s.files[name]
	delete(s.files, name)
	if e != nil && !e.Whole {
		s.free = append(s.free, Extent{Base: e.Base, Size: (e.Size + s.align - 1) / s.align * s.align})
	}
}
