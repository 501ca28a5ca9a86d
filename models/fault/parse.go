package fault

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Parse reads a rule written as space-separated words, in any order:
// operation names (read, write, flush, trim, open, create, close, remove,
// stat, or block and files for the sets), range=FROM:TO (sizes such as
// 1MiB; TO may be left out), start=DURATION, after=N, count=N, p=F,
// delay=DURATION, stall=DURATION, and the words fail and dead. For
// example "read range=0:1MiB after=10 count=1 fail". The rule is
// validated; an error names the word that was wrong.
func Parse(s string) (Rule, error) {
	var r Rule
	words := strings.Fields(s)
	if len(words) == 0 {
		return r, fmt.Errorf("%w: empty fault rule", models.ErrConfig)
	}
	for _, w := range words {
		if err := r.set(w); err != nil {
			return Rule{}, fmt.Errorf("%w: fault rule %q: %q: %v", models.ErrConfig, s, w, err)
		}
	}
	if err := r.Validate(); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// set applies one word of the text form.
func (r *Rule) set(w string) error {
	key, val, kv := strings.Cut(w, "=")
	if !kv {
		switch w {
		case "fail":
			r.Fail = true
		case "dead":
			r.Dead = true
		case "block":
			r.Ops |= Block
		case "files":
			r.Ops |= Files
		default:
			for op := models.Read; op <= models.Stat; op++ {
				if w == op.String() {
					r.Ops |= 1 << op
					return nil
				}
			}
			return fmt.Errorf("not an operation, fail or dead")
		}
		return nil
	}
	var err error
	switch key {
	case "range":
		from, to, ok := strings.Cut(val, ":")
		if !ok {
			return fmt.Errorf("want FROM:TO")
		}
		if r.From, err = parseSize(from); err != nil {
			return err
		}
		if to != "" {
			r.To, err = parseSize(to)
		}
	case "start":
		r.Start, err = time.ParseDuration(val)
	case "delay":
		r.Delay, err = time.ParseDuration(val)
	case "stall":
		r.Stall, err = time.ParseDuration(val)
	case "after":
		r.After, err = strconv.Atoi(val)
	case "count":
		r.Count, err = strconv.Atoi(val)
	case "p":
		r.Probability, err = strconv.ParseFloat(val, 64)
	default:
		return fmt.Errorf("unknown key %s", key)
	}
	return err
}

func parseSize(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	b, err := models.ParseBytes(s)
	return int64(b), err
}

// String writes the rule in the text form Parse reads.
func (r Rule) String() string {
	var w []string
	switch r.Ops {
	case 0:
	case Block:
		w = append(w, "block")
	case Files:
		w = append(w, "files")
	default:
		for op := models.Read; op <= models.Stat; op++ {
			if r.Ops.Has(op) {
				w = append(w, op.String())
			}
		}
	}
	if r.From != 0 || r.To != 0 {
		to := ""
		if r.To != 0 {
			to = strconv.FormatInt(r.To, 10)
		}
		w = append(w, fmt.Sprintf("range=%d:%s", r.From, to))
	}
	if r.Start != 0 {
		w = append(w, "start="+r.Start.String())
	}
	if r.After != 0 {
		w = append(w, "after="+strconv.Itoa(r.After))
	}
	if r.Count != 0 {
		w = append(w, "count="+strconv.Itoa(r.Count))
	}
	if r.Probability != 0 {
		w = append(w, "p="+strconv.FormatFloat(r.Probability, 'g', -1, 64))
	}
	if r.Delay != 0 {
		w = append(w, "delay="+r.Delay.String())
	}
	if r.Stall != 0 {
		w = append(w, "stall="+r.Stall.String())
	}
	if r.Fail {
		w = append(w, "fail")
	}
	if r.Dead {
		w = append(w, "dead")
	}
	return strings.Join(w, " ")
}
