package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// JSONShape returns the shape of a JSON document: the set of "path:type"
// entries of its values (results[].lat_us.p50:number, target:string, ...).
// Reports of the same workload on different targets — simulated, a path,
// an SMB share, an iSCSI LUN — must have the same shape: that is the JSON
// contract's promise, and the tests of every target check it. The model's
// resource accounting (each result's utilisation and bottleneck), which
// only a modelled target has, is left out of the shape.
func JSONShape(doc []byte) (map[string]bool, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if prefix == "results[].utilisation" || prefix == "results[].bottleneck" {
			return // the model's accounting
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(strings.TrimPrefix(prefix+"."+k, "."), e)
			}
		case []any:
			for _, e := range x {
				walk(prefix+"[]", e)
			}
		case string:
			out[prefix+":string"] = true
		case float64:
			out[prefix+":number"] = true
		case bool:
			out[prefix+":bool"] = true
		default:
			out[prefix+":null"] = true
		}
	}
	walk("", v)
	return out, nil
}

// Shape returns the JSON shape of the report (see JSONShape).
func (r *Report) Shape() (map[string]bool, error) {
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		return nil, err
	}
	return JSONShape(b.Bytes())
}

// TableShape returns the report table's header row and its number of job
// rows: what a person sees must look the same for every target.
func (r *Report) TableShape() (string, error) {
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		return "", err
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		if strings.Contains(l, "JOB") {
			return fmt.Sprintf("%s / %d job rows", strings.Join(strings.Fields(l), " "), len(lines)-i-2), nil
		}
	}
	return "", fmt.Errorf("no header row in the table %q", b.String())
}
