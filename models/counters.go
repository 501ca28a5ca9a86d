package models

// Counter is one named figure a model reports. Names are snake_case and
// carry their unit where it is not a count (host_bytes_written,
// slc_cache_bytes, rebuild_progress_pct). Counters of the same name on
// different devices of a stack mean the same thing, so Sum can add them.
type Counter struct {
	Name  string
	Value float64
}

// Observer is implemented by models that report counters. Counters returns
// a fresh slice in a stable order; it must not change the model's state.
type Observer interface {
	Counters() []Counter
}

// Parent is implemented by composite devices (arrays, caches, links,
// protocols, wrappers) so that reports can reach the devices below them.
type Parent interface {
	Children() []Device
}

// Walk calls fn for d and then, depth first, for every device below it.
// depth is 0 for d itself.
func Walk(d Device, fn func(dev Device, depth int)) {
	walk(d, 0, fn)
}

func walk(d Device, depth int, fn func(Device, int)) {
	fn(d, depth)
	if p, ok := d.(Parent); ok {
		for _, c := range p.Children() {
			walk(c, depth+1, fn)
		}
	}
}

// Sum adds the counter called name over every device of the stack rooted at
// d that reports it, and says whether any did. Use it for additive counters
// (bytes, counts), never for ratios: write amplification of a stack is
// Sum("nand_bytes_written") / Sum("host_bytes_written").
func Sum(d Device, name string) (total float64, found bool) {
	Walk(d, func(dev Device, _ int) {
		o, ok := dev.(Observer)
		if !ok {
			return
		}
		for _, c := range o.Counters() {
			if c.Name == name {
				total += c.Value
				found = true
			}
		}
	})
	return total, found
}
