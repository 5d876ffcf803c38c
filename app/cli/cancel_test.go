package cli

import (
	"strings"
	"testing"
)

// Bad values of the cancellation flags are one usage line naming the
// flag, before any network call (nothing listens at the URL given).
func TestCancelFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-cancellation-delay", "0.5"}, "--request-cancellation-delay: needs --request-cancellation-rate"},
		{[]string{"--request-cancellation-rate", "120"}, "--request-cancellation-rate: must be a percentage from 0 to 100, got 120"},
		{[]string{"--request-cancellation-rate", "-5"}, "--request-cancellation-rate: must be a percentage from 0 to 100, got -5"},
		{[]string{"--request-cancellation-rate", "nan"}, "--request-cancellation-rate: must be a percentage from 0 to 100, got NaN"},
		{[]string{"--request-cancellation-rate", "10", "--request-cancellation-delay", "-1"}, "--request-cancellation-delay: must be a number of seconds >= 0, got -1"},
		{[]string{"--request-cancellation-rate", "10", "--request-cancellation-delay", "inf"}, "--request-cancellation-delay: must be a number of seconds >= 0, got +Inf"},
		{[]string{"--request-cancellation-rate", "ten"}, "argument --request-cancellation-rate: invalid float value: 'ten'"},
	} {
		args := append([]string{"--backend", "sglang", "--base-url", "http://127.0.0.1:1", "--dataset-name", "random-ids",
			"--num-prompts", "4"}, c.args...)
		code, _, stderr := run(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
