package serverctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"benchserve/internal/clock"
	"benchserve/internal/py/pyjson"
)

// Scrape is one read of a server's Prometheus /metrics.
type Scrape struct {
	At   time.Time
	Fams map[string]*dto.MetricFamily
	// Tick is the read's place: 0 the "before" read, k the k-th read of
	// the interval, AfterTick the "after" read; the scrapers of several
	// servers line their reads up by it.
	Tick int
}

// AfterTick is the Tick of the "after" read.
const AfterTick = -1

// ParseMetrics parses the Prometheus text exposition format with the
// Prometheus project's own parser.
func ParseMetrics(body []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

// Scraper reads /metrics at a fixed interval during a run, on absolute
// deadlines; a failed read is a warning (once per kind of failure), never
// the run's failure.
type Scraper struct {
	c     *Server
	url   string
	every time.Duration
	warn  io.Writer

	mu      sync.Mutex
	scrapes []Scrape
	// keep, when > 0, bounds the interval reads kept (Keep); level is
	// how often they were halved: only ticks that are multiples of
	// 2^level stay.
	keep, level int
	failed      int
	warned      map[string]bool
	stop        context.CancelFunc
	done        chan struct{}
}

// StartScraper reads u once (the "before" scrape) and, when it answers
// with Prometheus text, keeps reading it every interval until Stop. It
// returns nil, and why, when the server exposes no metrics there ("not
// exposed: …") or keeps them behind a key ("protected: …").
func (c *Server) StartScraper(ctx context.Context, u string, every time.Duration, warn io.Writer) (*Scraper, string) {
	s := &Scraper{c: c, url: u, every: every, warn: warn, warned: map[string]bool{}, done: make(chan struct{})}
	first, err := s.read(ctx)
	var st statusError
	switch {
	case errors.As(err, &st) && (st.code == http.StatusUnauthorized || st.code == http.StatusForbidden):
		key := "set OPENAI_API_KEY or API_KEY to a key it accepts (the reads send it as the requests do)"
		if c.Auth.Get("Authorization") != "" {
			key = "the key from OPENAI_API_KEY or API_KEY was refused there"
		}
		return nil, fmt.Sprintf("protected: GET %s answered %d %s; %s, or point --server-metrics-url at an open metrics port",
			Redact(u), st.code, http.StatusText(st.code), key)
	case err != nil:
		return nil, "not exposed: " + err.Error()
	}
	s.scrapes = append(s.scrapes, first)
	loop, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = cancel
	go func() {
		defer close(s.done)
		if every <= 0 {
			<-loop.Done()
			return
		}
		start := first.At
		for k := 1; ; k++ {
			// A timer's precision is enough for reads seconds apart
			// (and a synctest bubble can run it).
			if !clock.SleepUntil(loop, start.Add(time.Duration(k)*every)) {
				return
			}
			sc, err := s.read(loop)
			sc.Tick = k
			s.mu.Lock()
			if err != nil {
				if loop.Err() == nil {
					s.failed++
					s.warnOnce(err)
				}
			} else {
				s.scrapes = append(s.scrapes, sc)
				s.thin()
			}
			s.mu.Unlock()
		}
	}()
	return s, ""
}

// Keep bounds the reads kept to about n (a soak's memory): past n, every
// other interval read is dropped, by tick, so the reads left stay evenly
// spaced and the scrapers of several servers keep the same ticks.
func (s *Scraper) Keep(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = n
	s.thin()
}

// thin keeps the interval reads whose tick is a multiple of 2^level,
// and halves them again while more than keep are left (s.mu held).
func (s *Scraper) thin() {
	if s.keep <= 0 {
		return
	}
	for {
		step := 1 << s.level
		kept := s.scrapes[:0]
		for _, sc := range s.scrapes {
			if sc.Tick <= 0 || sc.Tick%step == 0 {
				kept = append(kept, sc)
			}
		}
		clear(s.scrapes[len(kept):])
		s.scrapes = kept
		// The before and after reads always stay: a keep below them
		// cannot be met, and a level past 61 would shift 1 out.
		if len(s.scrapes) <= s.keep || s.level >= 61 {
			return
		}
		s.level++
	}
}

// warnOnce prints a failed read's warning the first time its text is
// seen (s.mu held).
func (s *Scraper) warnOnce(err error) {
	msg := err.Error()
	if s.warned[msg] {
		return
	}
	s.warned[msg] = true
	fmt.Fprintf(s.warn, "benchserve: warning: %v; the run goes on, and the server view leaves that read out\n", err)
}

// Stop ends the interval reads and takes the "after" scrape; it returns
// every scrape, in time order, and how many reads failed.
func (s *Scraper) Stop(ctx context.Context) ([]Scrape, int) {
	s.stop()
	<-s.done
	last, err := s.read(ctx)
	last.Tick = AfterTick
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed++
		s.warnOnce(err)
	} else {
		s.scrapes = append(s.scrapes, last)
	}
	return s.scrapes, s.failed
}

func (s *Scraper) read(ctx context.Context) (Scrape, error) {
	at := time.Now()
	status, body, err := s.c.Do(ctx, http.MethodGet, s.url, nil, s.c.Auth, 5*time.Second)
	where := "GET " + Redact(s.url)
	switch {
	case err != nil:
		return Scrape{}, fmt.Errorf("%s: %s", where, shortErr(err))
	case status != http.StatusOK:
		return Scrape{}, statusError{where, status}
	}
	fams, err := ParseMetrics(body)
	if err != nil {
		return Scrape{}, fmt.Errorf("%s: not the Prometheus text format: %s", where, strings.TrimSpace(err.Error()))
	}
	return Scrape{At: at, Fams: fams}, nil
}

// statusError is a read answered with a status other than 200.
type statusError struct {
	where string
	code  int
}

func (e statusError) Error() string { return fmt.Sprintf("%s: status %d", e.where, e.code) }

// InfoLabels are the labels of the first read's *_info gauges (an
// engine's build and configuration, as vllm:cache_config_info), by name:
// {"vllm:cache_config_info": [{"block_size": "16", ...}]}. A nil Scraper
// has none.
func (s *Scraper) InfoLabels() *pyjson.Object {
	o := &pyjson.Object{}
	if s == nil {
		return o
	}
	s.mu.Lock() // the interval reads append to scrapes meanwhile
	if len(s.scrapes) == 0 {
		s.mu.Unlock()
		return o
	}
	fams := s.scrapes[0].Fams
	s.mu.Unlock()
	names := make([]string, 0, len(fams))
	for n := range fams {
		if strings.HasSuffix(n, "_info") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b := []byte{'['}
		for i, m := range fams[n].GetMetric() {
			if i > 0 {
				b = append(b, ", "...)
			}
			l := &pyjson.Object{}
			for _, p := range m.GetLabel() {
				l.Set(p.GetName(), pyjson.String(p.GetValue()))
			}
			b = l.Append(b)
		}
		o.Set(n, append(b, ']'))
	}
	return o
}

// GetJSON is GET path when it answers 200: its body re-encoded as
// json.dumps writes it, or as a JSON string when it is not JSON (a
// plain-text /version).
func (c *Server) GetJSON(ctx context.Context, path string) ([]byte, bool) {
	status, body, err := c.get(ctx, path, 5*time.Second)
	if err != nil || status != http.StatusOK {
		return nil, false
	}
	if out, err := pyjson.Reformat(nil, body); err == nil {
		return out, true
	}
	return pyjson.String(strings.TrimSpace(string(body))), true
}
