package report

import (
	"encoding/json"
	"io"
)

// Kind is how a chart is drawn.
type Kind string

// Chart kinds.
const (
	// Lines draws each series as a line through its points.
	Lines Kind = "lines"
	// Bars draws grouped bars: one group per category, one bar per
	// series in each group.
	Bars Kind = "bars"
	// Steps draws each series as a histogram: Y[i] is the height of the
	// bin from X[i] to X[i+1] (X has one more entry than Y).
	Steps Kind = "steps"
	// CDM draws CrystalDiskMark's panel: one row per category (a test),
	// a read and a write value box per row. Series are "Read" and
	// "Write", Y in MB/s, as CrystalDiskMark shows them.
	CDM Kind = "cdm"
)

// Chart is what a chart shows, apart from how it is drawn: golden tests
// pin this data, not pixels. A chart is one or more panels stacked
// vertically; each is drawn as its Kind says.
type Chart struct {
	// Name is the files' base name: Name.svg and Name.png.
	Name   string  `json:"name"`
	Title  string  `json:"title"`
	Panels []Panel `json:"panels"`
	// Note is a sentence shown under the chart in the index, saying how
	// to read it or where its data comes from.
	Note string `json:"note,omitempty"`
}

// Panel is one plot of a chart.
type Panel struct {
	Kind   Kind   `json:"kind"`
	Title  string `json:"title,omitempty"`
	XLabel string `json:"x_label,omitempty"`
	YLabel string `json:"y_label,omitempty"`
	LogX   bool   `json:"log_x,omitempty"`
	LogY   bool   `json:"log_y,omitempty"`
	// Categories name the groups of Bars and the rows of CDM panels;
	// each series has one Y per category.
	Categories []string `json:"categories,omitempty"`
	Series     []Series `json:"series"`
}

// Series is one line, histogram or bar colour of a panel.
type Series struct {
	Label string    `json:"label"`
	X     []float64 `json:"x,omitempty"`
	Y     []float64 `json:"y"`
}

// WriteJSON writes charts' data as indented JSON, the form golden files
// keep.
func WriteJSON(w io.Writer, charts []Chart) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(charts)
}
