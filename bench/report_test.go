package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestTableDirections: the table gives a mixed job's read, write and
// trim rows under its own, as fio reports the directions apart, and a
// job of one direction none.
func TestTableDirections(t *testing.T) {
	jobs, err := ParseFioArgs([]string{"--name=mixed", "--rw=randrw", "--rwmixread=70", "--filesize=16m", "--number_ios=1000",
		"--name=tw", "--rw=trimwrite", "--filesize=16m", "--number_ios=100", "--stonewall", "--name=one", "--rw=randread", "--filesize=16m", "--number_ios=100", "--stonewall"})
	if err != nil {
		t.Fatal(err)
	}
	rep := mustRun(t, sn700(t), jobs, Options{Seed: 1})
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows = append(rows, f[0])
		}
	}
	want := "JOB mixed read write tw write trim one device:"
	if got := strings.Join(rows, " "); !strings.Contains(got, want) {
		t.Errorf("rows %q, want %q\n%s", got, want, b.String())
	}
}
