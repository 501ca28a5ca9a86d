// Package report turns nasemu's results into things people read: charts
// (SVG and PNG, drawn with gonum/plot), side-by-side comparisons of
// targets, and an index.html that shows the setup, the table and every
// chart of a run.
//
// # Charts are data first
//
// A Chart is plain data — panels of series of numbers with titles and
// axis labels — built from bench results by RunCharts, CompareCharts and
// ProfileCharts, and drawn by Render and Save. Golden tests pin the data
// (WriteJSON), not the pixels, so a change of fonts or plotting library
// does not break them while a change of what is plotted does.
//
// A run's charts are, per job, IOPS and MB/s over time (from the result's
// per-second series) and the latency distribution (the cumulative share
// of I/Os at the percentiles a result keeps, and the histogram those
// percentiles imply for the slower half of the I/Os); for the run, grouped
// bars of every job's MB/s and IOPS (read and write side by side when the
// jobs are named "TEST read"/"TEST write"); and for CrystalDiskMark suites,
// CrystalDiskMark's own panel. A comparison has grouped bars, one bar per
// target. An SSD over-provisioning sweep has its IOPS-against-data-written
// curves and its steady-state IOPS and write amplification per level.
//
// # Comparisons
//
// Comparison holds the same workload's reports for several targets with
// each target's Facts — usable capacity, drives it may lose, rebuild time,
// price — which a target or its resolver may know (FactSource); unknown
// facts print as "-". Tables put targets side by side with ratios against
// the first.
//
// # The index page
//
// WritePage writes each chart's SVG and PNG and an index.html that shows
// the SVGs. A small script on the page counts the charts that loaded into
// the body's data-charts-ok attribute and replaces any that did not with
// a visible notice.
package report
