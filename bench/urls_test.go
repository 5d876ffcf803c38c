package bench

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestURLIndex(t *testing.T) {
	for _, c := range []struct {
		strategy string
		k        int
		want     []int // positions 0..len-1
	}{
		{URLRoundRobin, 1, []int{0, 0, 0, 0}},
		{URLRoundRobin, 2, []int{0, 1, 0, 1, 0, 1}},
		{URLRoundRobin, 3, []int{0, 1, 2, 0, 1, 2, 0}},
		{"", 2, []int{0, 1, 0, 1}}, // a Config made without the flag
		{URLRandom, 1, []int{0, 0, 0}},
	} {
		got := make([]int, len(c.want))
		for i := range got {
			got[i] = urlIndex(c.strategy, 42, i, c.k)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("urlIndex(%q, k=%d) = %v, want %v", c.strategy, c.k, got, c.want)
		}
	}
	// random: the same seed and position always give the same URL; each
	// of k URLs gets 1/k of 10000 positions within 2% for several seeds;
	// another seed gives another assignment.
	const n = 10000
	for _, k := range []int{2, 3, 5} {
		for _, seed := range []uint64{0, 1, 42, 1 << 40} {
			count := make([]int, k)
			for i := range n {
				u := urlIndex(URLRandom, seed, i, k)
				if u != urlIndex(URLRandom, seed, i, k) || u < 0 || u >= k {
					t.Fatalf("urlIndex(random, %d, %d, %d) = %d, not stable or out of range", seed, i, k, u)
				}
				count[u]++
			}
			for u, c := range count {
				if math.Abs(float64(c)/n-1/float64(k)) > 0.02 {
					t.Errorf("random, seed %d, k=%d: URL %d got %d of %d", seed, k, u, c, n)
				}
			}
		}
	}
	same := 0
	for i := range 1000 {
		if urlIndex(URLRandom, 1, i, 2) == urlIndex(URLRandom, 2, i, 2) {
			same++
		}
	}
	if same > 600 || same < 400 {
		t.Errorf("seeds 1 and 2 agree on %d of 1000 positions: the seed does not count", same)
	}
}

func TestBaseURLs(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		base *string
		want []string
	}{
		{nil, []string{"http://0.0.0.0:30000"}},
		{s("http://a:1/"), []string{"http://a:1"}},
		{s("http://a:1/, http://b:2//"), []string{"http://a:1", "http://b:2"}},
	} {
		cfg := &Config{BaseURL: c.base, Host: "0.0.0.0"}
		if got := baseURLs(cfg, 30000); !reflect.DeepEqual(got, c.want) {
			t.Errorf("baseURLs(%v) = %q, want %q", c.base, got, c.want)
		}
	}
	for _, bad := range []string{"http://a:1,", ",http://a:1", "http://a:1,,http://b:2", "http://a:1, ,http://b:2"} {
		err := checkTarget(&Config{BaseURL: s(bad)})
		if err == nil || !strings.HasPrefix(err.Error(), "--base-url: item ") {
			t.Errorf("checkTarget(%q) = %v, want an empty-item error naming --base-url", bad, err)
		}
	}
	err := checkTarget(&Config{BaseURL: s("http://a:1,b:2")})
	if err == nil || !strings.Contains(err.Error(), "--base-url b:2: no scheme") {
		t.Errorf("checkTarget with a bad second item = %v, want it named", err)
	}
}
