package validate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"text/tabwriter"
)

// Summary sums up a validation.
type Summary struct {
	// Cases is the number of cases predicted.
	Cases int `json:"cases"`
	// MedianAbsErrorPct is the median of |error %| over them.
	MedianAbsErrorPct float64 `json:"median_abs_error_pct"`
	// Within25Pct is the share of them, in percent, whose |error| is at
	// most 25 %.
	Within25Pct float64 `json:"within_25_pct"`
	// NotModelled counts the cases listed with a reason instead.
	NotModelled int `json:"not_modelled"`
	// Failed counts the cases whose run failed.
	Failed int `json:"failed"`
}

// Summarize computes the summary of outcomes.
func Summarize(out []Outcome) Summary {
	var s Summary
	var errs []float64
	within := 0
	for _, o := range out {
		switch {
		case o.Reason != "":
			s.NotModelled++
		case o.Err != nil:
			s.Failed++
		default:
			a := math.Abs(o.ErrorPct)
			errs = append(errs, a)
			if a <= 25 {
				within++
			}
		}
	}
	s.Cases = len(errs)
	if s.Cases > 0 {
		sort.Float64s(errs)
		if n := len(errs); n%2 == 1 {
			s.MedianAbsErrorPct = errs[n/2]
		} else {
			s.MedianAbsErrorPct = (errs[n/2-1] + errs[n/2]) / 2
		}
		s.Within25Pct = 100 * float64(within) / float64(s.Cases)
	}
	return s
}

// Worst returns up to n predicted outcomes with the largest |error|.
func Worst(out []Outcome, n int) []Outcome {
	var ok []Outcome
	for _, o := range out {
		if o.OK() {
			ok = append(ok, o)
		}
	}
	slices.SortStableFunc(ok, func(a, b Outcome) int {
		return -cmpFloat(math.Abs(a.ErrorPct), math.Abs(b.ErrorPct))
	})
	return ok[:min(n, len(ok))]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// jsonCase is a case in the JSON report (DESIGN.md's contract, plus the
// system, and the reason for cases not predicted).
type jsonCase struct {
	ID        string   `json:"id"`
	System    string   `json:"system"`
	Measured  float64  `json:"measured"`
	Predicted *float64 `json:"predicted"`
	Unit      Metric   `json:"unit"`
	ErrorPct  *float64 `json:"error_pct"`
	Reason    string   `json:"not_modelled,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// WriteJSON writes {"cases": [...], "summary": {...}}. Cases not predicted
// have null predicted and error_pct, and say why.
func WriteJSON(w io.Writer, out []Outcome) error {
	doc := struct {
		Cases   []jsonCase `json:"cases"`
		Summary Summary    `json:"summary"`
	}{Cases: []jsonCase{}, Summary: Summarize(out)}
	doc.Summary.MedianAbsErrorPct = round(doc.Summary.MedianAbsErrorPct, 2)
	doc.Summary.Within25Pct = round(doc.Summary.Within25Pct, 2)
	for _, o := range out {
		c := jsonCase{ID: o.ID, System: o.System, Measured: o.Measured, Unit: o.Unit, Reason: o.Reason}
		if o.Err != nil {
			c.Error = o.Err.Error()
		}
		if o.OK() {
			p, e := round(o.Predicted, 4), round(o.ErrorPct, 2)
			c.Predicted, c.ErrorPct = &p, &e
		}
		doc.Cases = append(doc.Cases, c)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// round keeps d significant decimals of v.
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// WriteTable writes the cases grouped by system (in order of first
// appearance): id, measured, predicted, unit and error of each predicted
// case, then the system's cases that failed or are not modelled, each with
// its reason; then the summary.
func WriteTable(w io.Writer, out []Outcome) error {
	var systems []string
	for _, o := range out {
		if !slices.Contains(systems, o.System) {
			systems = append(systems, o.System)
		}
	}
	for _, sys := range systems {
		fmt.Fprintf(w, "%s\n", sys)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "id\tmeasured\tpredicted\tunit\terror %%\t\n")
		var notes []string
		for _, o := range out {
			switch {
			case o.System != sys:
			case o.Reason != "":
				notes = append(notes, fmt.Sprintf("  %s (%s %s): not modelled: %s", o.ID, num(o.Measured), o.Unit, o.Reason))
			case o.Err != nil:
				fmt.Fprintf(tw, "%s\t%s\t-\t%s\tfailed\t\n", o.ID, num(o.Measured), o.Unit)
				notes = append(notes, fmt.Sprintf("  %s: failed: %v", o.ID, o.Err))
			default:
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.1f\t\n", o.ID, num(o.Measured), num(o.Predicted), o.Unit, o.ErrorPct)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
		fmt.Fprintln(w)
	}
	s := Summarize(out)
	_, err := fmt.Fprintf(w, "summary: %d cases predicted, median |error| %.1f %%, %.1f %% within 25 %%; %d not modelled, %d failed\n",
		s.Cases, s.MedianAbsErrorPct, s.Within25Pct, s.NotModelled, s.Failed)
	return err
}

// num formats a figure with 3 significant digits at least.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
