package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"benchserve/internal/pyfmt"
	"benchserve/internal/pyjson"
)

// profiler drives the server's torch profiler around the measured run (§8.3).
// Its calls send no headers; a failure is reported and never aborts the run.
type profiler struct {
	cfg    *Config
	ctl    *control
	out    io.Writer
	getenv func(string) string
	// made is the output directories created for the starts the server
	// took; started says there was one.
	made    []string
	started bool
}

type worker struct{ label, url string }

func (p *profiler) workers() []worker {
	var ws []worker
	for i, u := range p.cfg.ProfilePrefillURL {
		ws = append(ws, worker{fmt.Sprintf("Prefill-%d", i), u})
	}
	for i, u := range p.cfg.ProfileDecodeURL {
		ws = append(ws, worker{fmt.Sprintf("Decode-%d", i), u})
	}
	return ws
}

func (p *profiler) start(ctx context.Context) {
	cfg := p.cfg
	if !cfg.Profile {
		return
	}
	if cfg.PDSeparated {
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
	if err := p.call(ctx, p.ctl.base+"/start_profile"); err != nil {
		fmt.Fprintf(p.out, "Failed to start profiler: %v\n", err)
		return
	}
	fmt.Fprintln(p.out, "Profiler started")
}

func (p *profiler) stop(ctx context.Context) {
	cfg := p.cfg
	if !cfg.Profile || cfg.ProfileSteps != nil {
		return // the server stops on its own after --profile-steps
	}
	if cfg.PDSeparated {
		if ws := p.workers(); len(ws) > 0 {
			p.callPD(ctx, ws, "stop")
		}
		return
	}
	if cfg.ProfileNumSteps != nil {
		return
	}
	fmt.Fprintln(p.out, "Stopping profiler...")
	if err := p.call(ctx, p.ctl.base+"/stop_profile"); err != nil {
		fmt.Fprintf(p.out, "Failed to stop profiler: %v\n", err)
		return
	}
	fmt.Fprintln(p.out, "Profiler stopped")
}

func (p *profiler) callPD(ctx context.Context, ws []worker, mode string) {
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
func (p *profiler) call(ctx context.Context, u string) (err error) {
	cfg := p.cfg
	body := &pyjson.Object{}
	var repr []string
	set := func(k string, v []byte, r string) {
		body.Set(k, v)
		repr = append(repr, pyfmt.Quote(k)+": "+r)
	}
	if strings.HasSuffix(u, "/start_profile") {
		numSteps, numRepr := pyjson.Null, "None"
		if cfg.ProfileNumSteps != nil {
			numSteps, numRepr = pyjson.Int(*cfg.ProfileNumSteps), strconv.Itoa(*cfg.ProfileNumSteps)
		} else if cfg.ProfileByStage {
			numSteps, numRepr = pyjson.Int(5), "5"
		}
		dir := profileDir(cfg, p.getenv)
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
		set("activities", pyjson.Strings(cfg.ProfileActivities), reprList(cfg.ProfileActivities))
		set("num_steps", numSteps, numRepr)
		set("profile_by_stage", pyjson.Bool(cfg.ProfileByStage), pyBool(cfg.ProfileByStage))
		if cfg.ProfileStages != nil {
			set("profile_stages", pyjson.Strings(cfg.ProfileStages), reprList(cfg.ProfileStages))
		} else {
			set("profile_stages", pyjson.Null, "None")
		}
		set("output_dir", pyjson.String(dir), pyfmt.Quote(dir))
		if cfg.ProfilePrefix != nil {
			set("profile_prefix", pyjson.String(*cfg.ProfilePrefix), pyfmt.Quote(*cfg.ProfilePrefix))
		} else {
			set("profile_prefix", pyjson.Null, "None")
		}
	}
	fmt.Fprintf(p.out, "async_request_profile api_url=%s body={%s}\n", pyfmt.Quote(redact(u)), strings.Join(repr, ", "))
	if cfg.ProfileStartStep != nil {
		body.Set("start_step", pyjson.String(strconv.Itoa(*cfg.ProfileStartStep)))
	}
	if cfg.ProfileSteps != nil {
		body.Set("num_steps", pyjson.String(strconv.Itoa(*cfg.ProfileSteps)))
	}
	status, resp, err := p.ctl.do(ctx, http.MethodPost, u, body.Bytes(), nil, 0)
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
