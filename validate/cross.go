package validate

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Fold is one review's rows predicted twice: with every calibration
// (fitted) and with the calibrations set from that review's own rows
// switched to their class defaults (left out), as a system outside the
// reference set would be predicted.
type Fold struct {
	Review string
	// Off names the calibrations switched off.
	Off     []string
	Fitted  []Outcome
	LeftOut []Outcome
}

// Cross predicts each review's rows with the calibrations from its own
// rows left out. fitted are the outcomes of Run on cases with every
// calibration; build returns the builder with the given calibrations off.
func Cross(cases []Case, fitted []Outcome, opt Options, build func(off []Calibration) Builder) ([]Fold, error) {
	var folds []Fold
	for _, r := range Reviews(cases) {
		off, err := LeaveOut(cases, r)
		if err != nil {
			return nil, err
		}
		f := Fold{Review: r}
		for _, c := range off {
			f.Off = append(f.Off, c.Name)
		}
		for _, o := range fitted {
			if o.Review() == r {
				f.Fitted = append(f.Fitted, o)
			}
		}
		o := opt
		o.Build = build(off)
		f.LeftOut = Run(Only(cases, r), o)
		folds = append(folds, f)
	}
	return folds, nil
}

// crossAll returns the outcomes of every fold, fitted and left out.
func crossAll(folds []Fold) (fitted, left []Outcome) {
	for _, f := range folds {
		fitted = append(fitted, f.Fitted...)
		left = append(left, f.LeftOut...)
	}
	return fitted, left
}

// WriteCrossTable writes fitted and leave-one-review-out error side by
// side, a line per review and one for all of them.
func WriteCrossTable(w io.Writer, folds []Fold) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "review\tcases\tfitted median %%\tfitted ≤25 %%\tleft-out median %%\tleft-out ≤25 %%\tcalibrations left out\t\n")
	line := func(name string, fitted, left []Outcome, off string) {
		a, b := Summarize(fitted), Summarize(left)
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t\n", name, b.Cases, a.MedianAbsErrorPct, a.Within25Pct, b.MedianAbsErrorPct, b.Within25Pct, off)
	}
	for _, f := range folds {
		off := "none"
		if len(f.Off) > 0 {
			off = fmt.Sprint(f.Off)
		}
		line(f.Review, f.Fitted, f.LeftOut, off)
	}
	fitted, left := crossAll(folds)
	line("all", fitted, left, "")
	return tw.Flush()
}

// WriteCrossJSON writes {"reviews": [{"review", "calibrations_off",
// "fitted", "left_out"}...], "fitted", "left_out"}, each error a Summary.
func WriteCrossJSON(w io.Writer, folds []Fold) error {
	type review struct {
		Review  string   `json:"review"`
		Off     []string `json:"calibrations_off"`
		Fitted  Summary  `json:"fitted"`
		LeftOut Summary  `json:"left_out"`
	}
	sum := func(out []Outcome) Summary {
		s := Summarize(out)
		s.MedianAbsErrorPct = round(s.MedianAbsErrorPct, 2)
		s.Within25Pct = round(s.Within25Pct, 2)
		return s
	}
	doc := struct {
		Reviews []review `json:"reviews"`
		Fitted  Summary  `json:"fitted"`
		LeftOut Summary  `json:"left_out"`
	}{Reviews: []review{}}
	for _, f := range folds {
		off := f.Off
		if off == nil {
			off = []string{}
		}
		doc.Reviews = append(doc.Reviews, review{Review: f.Review, Off: off, Fitted: sum(f.Fitted), LeftOut: sum(f.LeftOut)})
	}
	fitted, left := crossAll(folds)
	doc.Fitted, doc.LeftOut = sum(fitted), sum(left)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
