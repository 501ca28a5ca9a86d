package nasemu

import (
	"embed"
	"io/fs"
)

//go:embed testdata/reference/cases.csv testdata/reference/*.fio
var referenceFiles embed.FS

// ReferenceCases is the name in Reference of the reference cases that
// 'nasemu validate' predicts by default.
const ReferenceCases = "cases.csv"

// Reference holds the reference data of testdata/reference, embedded so
// that 'nasemu validate' runs anywhere with the binary alone: the cases
// (ReferenceCases) and the fio job files they name, at its root.
var Reference fs.FS = func() fs.FS {
	sub, err := fs.Sub(referenceFiles, "testdata/reference")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}()
