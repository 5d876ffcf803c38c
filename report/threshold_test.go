package report

import (
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	for _, c := range []struct {
		expr, key, op string
		limit         float64
	}{
		{"p99_ttft_ms<500", "p99_ttft_ms", "<", 500},
		{"slo_attainment >= 0.99", "slo_attainment", ">=", 0.99},
		{"failed_rate<=0.01", "failed_rate", "<=", 0.01},
		{"output_throughput>2000", "output_throughput", ">", 2000},
		{"p99.9_ttft_ms != 3", "p99.9_ttft_ms", "!=", 3},
		{"completed==80", "completed", "==", 80},
		{"x>-1e3", "x", ">", -1000},
	} {
		th, err := ParseThreshold(c.expr)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if th.Key != c.key || th.Op != c.op || th.Limit != c.limit || th.Expr != c.expr {
			t.Errorf("%q: got %+v", c.expr, th)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{"p99_ttft_ms", "expected KEY OP NUMBER"},
		{"<500", `"" is not a result key`},
		{"p99 ttft<5", `"p99 ttft" is not a result key`},
		{"p99_ttft_ms<fast", `"fast" is not a number`},
		{"p99_ttft_ms<nan", `"nan" is not a number`},
		{"a<=<3", `"<3" is not a number`},
	} {
		_, err := ParseThreshold(c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "--threshold ") {
			t.Errorf("%q: error %v, want one naming the flag and %q", c.expr, err, c.want)
		}
	}
}

// Each threshold is checked against the line's numbers: NaN and Infinity
// (json.dumps writes them) are numbers, null and strings are not, and a
// key without a number fails.
func TestEvaluate(t *testing.T) {
	line := []byte(`{"tag": null, "backend": "sglang", "completed": 80, "p99_ttft_ms": 612.5, "planned_request_rate": Infinity, "accept_length": null, "failed_rate": 0.0125, "x\u0041": 1}` + "\n")
	keys, _ := NumericKeys(line)
	if got := strings.Join(keys, ","); got != "completed,p99_ttft_ms,planned_request_rate,failed_rate,xA" {
		t.Errorf("numeric keys %s", got)
	}
	var ts []Threshold
	for _, e := range []string{"p99_ttft_ms<500", "completed>=80", "planned_request_rate>1000", "accept_length>1", "failed_rate<0.01", "xA==1"} {
		th, err := ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	out := Evaluate(ts, line)
	wantPass := []bool{false, true, true, false, false, true}
	for i, o := range out {
		if o.Pass != wantPass[i] {
			t.Errorf("%s: pass %v, want %v", o.Expr, o.Pass, wantPass[i])
		}
	}
	if out[3].Value != nil {
		t.Errorf("accept_length null: value %v, want none", *out[3].Value)
	}
	if got := strings.Join(Failed(out), " "); got != "p99_ttft_ms<500 accept_length>1 failed_rate<0.01" {
		t.Errorf("failed: %s", got)
	}
	rows := thresholdRows(out)
	if rows[0].Label != "p99_ttft_ms<500" || rows[0].Value != "FAIL (612.5)" || rows[1].Value != "pass (80)" || rows[3].Value != "FAIL (no value)" {
		t.Errorf("rows %v", rows)
	}
	if err := CheckKeys(ts[:2], keys); err != nil {
		t.Error(err)
	}
	err := CheckKeys(ts, keys)
	if err == nil || !strings.Contains(err.Error(), `"accept_length>1": no numeric result key "accept_length"; keys: completed, p99_ttft_ms,`) {
		t.Errorf("CheckKeys: %v", err)
	}
}
