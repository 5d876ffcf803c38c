package backend

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"benchserve/record"
	"benchserve/sim"
)

// Every fault the simulator injects, on every wire format: the client
// fails with the right kind and one line, or succeeds where the fault is
// harmless (a short stall, a 10 MiB line within the limit) or does not
// apply (no [DONE] to leave out of a TensorRT stream).
func TestSimulatorFaults(t *testing.T) {
	eachReceiver(t, func(t *testing.T, rc receiver) {
		type target struct {
			backend string
			stream  bool
		}
		targets := []target{{"sglang", true}, {"vllm", true}, {"vllm-chat", true}, {"trt", true}, {"truss", true},
			{"sglang", false}, {"vllm", false}, {"vllm-chat", false}, {"vllm-embedding", false}}
		// want gives the kind a fault should end in, "" for success.
		want := func(tg target, f sim.Fault) string {
			embed := tg.backend == "vllm-embedding"
			switch f.Kind {
			case sim.Fault429:
				return record.KindHTTP429
			case sim.Fault500, sim.Fault503:
				return record.KindHTTP5xx
			case sim.FaultReset, sim.FaultDisconnect:
				return record.KindReset
			case sim.FaultMalformed:
				return record.KindInvalid
			case sim.FaultErrorChunk:
				return record.KindStreamError
			case sim.FaultNoDone:
				if tg.stream && tg.backend != "trt" && tg.backend != "truss" {
					return record.KindIncomplete
				}
			case sim.FaultEmpty:
				if !embed {
					return record.KindEmpty
				}
			case sim.FaultStall, sim.FaultSlowHeaders:
				if f.Arg >= 1 {
					return record.KindTimeout
				}
			}
			return ""
		}
		faults := []string{"429", "500", "503", "reset", "disconnect:1", "stall:0.05", "stall:1", "malformed", "error-chunk",
			"no-done", "empty", "huge-line:10", "slow-headers:0.05", "slow-headers:1"}
		for _, spec := range faults {
			f, err := sim.ParseFault(spec)
			if err != nil {
				t.Fatal(err)
			}
			cfg, _ := sim.Preset(sim.PresetInstant)
			cfg.Faults = []sim.FaultRate{{Fault: f, Rate: 1}}
			s, err := sim.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Served as "benchserve sim" serves, on its own listener.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(ln); err != nil {
				t.Fatal(err)
			}
			// The targets run at once: the timeouts then cost their time once.
			recs := make([]record.Record, len(targets))
			var wg sync.WaitGroup
			for i, tg := range targets {
				opt := Options{Stream: tg.stream, IgnoreEOS: true}
				if want(tg, f) == record.KindTimeout {
					opt.Timeout = 300 * time.Millisecond
				}
				c, err := New(tg.backend, s.URL(), opt, nil, rc.hc(ClientOptions{KeepAlive: true}))
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					c.Do(context.Background(), &Input{Text: "hello there", OutputLen: 4, Model: cfg.Model}, &recs[i], time.Now())
				})
			}
			wg.Wait()
			for i, tg := range targets {
				rec := &recs[i]
				w := want(tg, f)
				name := spec + " on " + tg.backend
				if !tg.stream {
					name += " (whole)"
				}
				switch {
				case rec.ErrorKind != w:
					t.Errorf("%s: kind %q, want %q (error %q)", name, rec.ErrorKind, w, rec.Error)
				case w != "" && (rec.Error == "" || strings.ContainsAny(rec.Error, "\r\n")):
					t.Errorf("%s: error %q", name, rec.Error)
				case w == "" && !rec.Success:
					t.Errorf("%s: failed: %s", name, rec.Error)
				case w == "" && !strings.Contains(tg.backend, "embedding") && rec.Text == "":
					t.Errorf("%s: no text", name)
				}
			}
			s.Close()
		}
	})
}
