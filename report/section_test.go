package report

import (
	"strings"
	"testing"
)

func TestSection(t *testing.T) {
	var b strings.Builder
	err := Section(&b, map[string][]Row{
		"Schedule-anchored latency": {{"Mean TTFT from schedule (ms):", F(12.345)}},
		"Client self-check":         {{"Verdict:", "headroom"}},
	}, []string{"Schedule-anchored latency", "Client self-check"})
	if err != nil {
		t.Fatal(err)
	}
	want := "------------Schedule-anchored latency-------------\n" +
		"Mean TTFT from schedule (ms):            12.35     \n" +
		"----------------Client self-check-----------------\n" +
		"Verdict:                                 headroom  \n" +
		strings.Repeat("=", 50) + "\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
