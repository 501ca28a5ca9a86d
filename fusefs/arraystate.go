package fusefs

import "github.com/nasemu/nasemu/emu"

// ArrayStateFile is the name, in the backing directory, of the saved
// health of the model's arrays (emu.ArrayStateFile), so that a remount
// comes back degraded, rebuilding or failed as it was. The share does not
// show the file.
const ArrayStateFile = emu.ArrayStateFile

// saveArrays saves the health of the model's arrays in the backing
// directory (emu.Volume.SaveArrays). It is called after every fault and
// at unmount.
func (f *FS) saveArrays() error { return f.vol.SaveArrays(f.backing) }

// loadArrays gives the model's arrays the health saved in the backing
// directory (emu.Volume.LoadArrays); members that were being rebuilt are
// replaced by Options.Replacement.
func (f *FS) loadArrays() error { return f.vol.LoadArrays(f.backing, f.replacement) }
