package cli

import (
	"benchserve/backend"
	"benchserve/bench"
	"benchserve/internal/exit"
)

// settlePlan gives a replay the defaults its plan file's header holds
// (the backend, the model, --request-rate and --max-concurrency) where
// the flags are not given, so that the plan replays as it was saved; and
// refuses --save-plan for conversations, before any network call.
func settlePlan(cfg *bench.Config, given map[string]bool) error {
	if cfg.SavePlan != nil && multiTurn(cfg) {
		return &exit.Error{Code: exit.Usage, Msg: "--save-plan: --dataset-name " + cfg.DatasetName +
			" makes conversations, whose later turns carry the live replies; plans (version 1) hold single requests"}
	}
	if cfg.ReplayPlan == nil {
		return nil
	}
	head, err := bench.ReadPlanHead(*cfg.ReplayPlan)
	if err != nil {
		return err
	}
	if _, ok := backend.Lookup(head.Backend); !ok && !given["--backend"] {
		return &exit.Error{Code: exit.Usage, Msg: "--replay-plan: " + *cfg.ReplayPlan + ":1: backend " + head.Backend + " is not one this benchserve knows"}
	}
	if !given["--backend"] {
		cfg.Backend = head.Backend
	}
	if !given["--model"] && head.Model != "" {
		m := head.Model
		cfg.Model = &m
	}
	if !given["--request-rate"] {
		cfg.RequestRate = float64(head.RequestRate)
	}
	if !given["--max-concurrency"] {
		cfg.MaxConcurrency = head.MaxConcurrency
	}
	return nil
}
