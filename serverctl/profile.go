package serverctl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"benchserve/internal/py/pyfmt"
	"benchserve/internal/py/pyjson"
)

// ProfileOptions are the --profile flags.
type ProfileOptions struct {
	Profile     bool
	PDSeparated bool
	PrefillURLs []string // --profile-prefill-url
	DecodeURLs  []string // --profile-decode-url
	Activities  []string
	ByStage     bool
	Stages      []string // nil: not given
	StartStep   *int
	Steps       *int // --profile-steps
	NumSteps    *int // --profile-num-steps
	Prefix      *string
	// OutputDir is --profile-output-dir, else $SGLANG_TORCH_PROFILER_DIR,
	// else /tmp; each start gets a directory below it named for the time.
	OutputDir string
}

// Profiler drives the server's torch profiler around the measured run
// (§8.3). Its calls send no headers; a failure is printed to out and never
// aborts the run.
type Profiler struct {
	opt ProfileOptions
	srv *Server
	out io.Writer
	// made is the output directories created for the starts the server
	// took; started says there was one.
	made    []string
	started bool
}

// NewProfiler returns the profiler of srv for opt, printing to out.
func NewProfiler(srv *Server, opt ProfileOptions, out io.Writer) *Profiler {
	return &Profiler{opt: opt, srv: srv, out: out}
}

type worker struct{ label, url string }

func (p *Profiler) workers() []worker {
	var ws []worker
	for i, u := range p.opt.PrefillURLs {
		ws = append(ws, worker{fmt.Sprintf("Prefill-%d", i), u})
	}
	for i, u := range p.opt.DecodeURLs {
		ws = append(ws, worker{fmt.Sprintf("Decode-%d", i), u})
	}
	return ws
}

// Start starts the profiler, when --profile asks.
func (p *Profiler) Start(ctx context.Context) {
	opt := p.opt
	if !opt.Profile {
		return
	}
	if opt.PDSeparated {
		ws := p.workers()
		if len(ws) == 0 {
			fmt.Fprintln(p.out, "Warning: PD separated mode requires --profile-prefill-url or --profile-decode-url")
			fmt.Fprintln(p.out, "Skipping profiler start. Please specify worker URLs for profiling.")
			return
		}
		p.callPD(ctx, ws, "start")
		return
	}
	fmt.Fprintln(p.out, "Starting profiler...")
	if err := p.call(ctx, p.srv.Base+"/start_profile"); err != nil {
		fmt.Fprintf(p.out, "Failed to start profiler: %v\n", err)
		return
	}
	fmt.Fprintln(p.out, "Profiler started")
}

// Stop stops the profiler, unless the server stops it on its own.
func (p *Profiler) Stop(ctx context.Context) {
	opt := p.opt
	if !opt.Profile || opt.Steps != nil {
		return // the server stops on its own after --profile-steps
	}
	if opt.PDSeparated {
		if ws := p.workers(); len(ws) > 0 {
			p.callPD(ctx, ws, "stop")
		}
		return
	}
	if opt.NumSteps != nil {
		return
	}
	fmt.Fprintln(p.out, "Stopping profiler...")
	if err := p.call(ctx, p.srv.Base+"/stop_profile"); err != nil {
		fmt.Fprintf(p.out, "Failed to stop profiler: %v\n", err)
		return
	}
	fmt.Fprintln(p.out, "Profiler stopped")
}

func (p *Profiler) callPD(ctx context.Context, ws []worker, mode string) {
	action, past := "Starting", "started"
	if mode == "stop" {
		action, past = "Stopping", "stopped"
	}
	fmt.Fprintf(p.out, "%s profiler...\n", action)
	for _, w := range ws {
		if err := p.call(ctx, w.url+"/"+mode+"_profile"); err != nil {
			fmt.Fprintf(p.out, "Failed to %s profiler for %s worker at %s: %v\n", mode, w.label, w.url, err)
		} else {
			fmt.Fprintf(p.out, "Profiler %s for %s worker at %s\n", past, w.label, w.url)
		}
	}
}

// call posts the start or stop body, printing it first as the reference does.
func (p *Profiler) call(ctx context.Context, u string) (err error) {
	opt := p.opt
	body := &pyjson.Object{}
	var repr []string
	set := func(k string, v []byte, r string) {
		body.Set(k, v)
		repr = append(repr, pyfmt.Quote(k)+": "+r)
	}
	if strings.HasSuffix(u, "/start_profile") {
		numSteps, numRepr := pyjson.Null, "None"
		if opt.NumSteps != nil {
			numSteps, numRepr = pyjson.Int(*opt.NumSteps), strconv.Itoa(*opt.NumSteps)
		} else if opt.ByStage {
			numSteps, numRepr = pyjson.Int(5), "5"
		}
		dir := profileDir(opt.OutputDir)
		made, mkErr := mkdirAll(dir)
		if mkErr != nil {
			return fmt.Errorf("--profile-output-dir: %v", mkErr)
		}
		defer func() { // err is the call's result
			if err != nil {
				removeEmpty(made) // no profile will be written there
			} else {
				p.made, p.started = append(p.made, made...), true
			}
		}()
		set("activities", pyjson.Strings(opt.Activities), reprList(opt.Activities))
		set("num_steps", numSteps, numRepr)
		set("profile_by_stage", pyjson.Bool(opt.ByStage), pyBool(opt.ByStage))
		if opt.Stages != nil {
			set("profile_stages", pyjson.Strings(opt.Stages), reprList(opt.Stages))
		} else {
			set("profile_stages", pyjson.Null, "None")
		}
		set("output_dir", pyjson.String(dir), pyfmt.Quote(dir))
		if opt.Prefix != nil {
			set("profile_prefix", pyjson.String(*opt.Prefix), pyfmt.Quote(*opt.Prefix))
		} else {
			set("profile_prefix", pyjson.Null, "None")
		}
	}
	fmt.Fprintf(p.out, "async_request_profile api_url=%s body={%s}\n", pyfmt.Quote(Redact(u)), strings.Join(repr, ", "))
	if opt.StartStep != nil {
		body.Set("start_step", pyjson.String(strconv.Itoa(*opt.StartStep)))
	}
	if opt.Steps != nil {
		body.Set("num_steps", pyjson.String(strconv.Itoa(*opt.Steps)))
	}
	status, resp, err := p.srv.Do(ctx, http.MethodPost, u, body.Bytes(), nil, 0)
	if err != nil {
		return fmt.Errorf("%s", shortErr(err))
	}
	if status != http.StatusOK {
		return fmt.Errorf("%d %s: %s", status, http.StatusText(status), oneLine(resp, 300))
	}
	return nil
}

func reprList(v []string) string {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = pyfmt.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// profileDir is the absolute dir with the Unix time appended; the client
// creates it, as the reference does.
func profileDir(dir string) string {
	if dir == "" {
		dir = "/tmp"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	return filepath.Join(abs, strconv.FormatFloat(float64(time.Now().UnixNano())/1e9, 'f', -1, 64))
}
