package cli

import (
	"strings"

	"benchserve/bench"
	"benchserve/internal/py/argparse"
)

// binding moves one parsed value into its Config field and back out for
// Namespace. Values are argparse's: nil, string, int, float64, bool, []any.
type binding struct {
	set func(c *bench.Config, v any)
	get func(c *bench.Config) any
}

func bound(b argparse.Binding[bench.Config]) binding { return binding{set: b.Set, get: b.Get} }

// val binds a plain field (string, int, float64 or bool).
func val[T any](field func(*bench.Config) *T) binding { return bound(argparse.Val(field)) }

// ptr binds a field where nil stands for Python's None.
func ptr[T any](field func(*bench.Config) **T) binding { return bound(argparse.Ptr(field)) }

// joined binds a repeatable string flag to one field holding its values
// joined with commas ("--base-url a --base-url b" is "a,b"), so that one
// value reads, and prints, as it always did.
func joined(field func(*bench.Config) **string) binding {
	return binding{
		set: func(c *bench.Config, v any) {
			items, ok := v.([]any)
			if !ok {
				*field(c) = nil
				return
			}
			s := make([]string, len(items))
			for i, x := range items {
				s[i] = x.(string)
			}
			j := strings.Join(s, ",")
			*field(c) = &j
		},
		get: func(c *bench.Config) any {
			if p := *field(c); p != nil {
				return *p
			}
			return nil
		},
	}
}

// list binds a slice field; nil is None and a flag given with no values
// ("--lora-name" alone) gives an empty, non-nil slice.
func list[T any](field func(*bench.Config) *[]T) binding { return bound(argparse.List(field)) }
