package bench

// args renders cfg with env.Namespace ("" without one).
func (e Env) args(cfg *Config) string {
	if e.Namespace == nil {
		return ""
	}
	return e.Namespace(cfg)
}

// settleArgs sets what the reference sets on its args between its two
// prints of them (the model is set where it is detected): the backend's
// default port, and apply_chat_template for the datasets that always
// apply a template (the image ones).
func settleArgs(cfg *Config, port int) {
	if cfg.Port == nil {
		cfg.Port = &port
	}
	if datasetSpec(cfg.DatasetName).Templated {
		cfg.ApplyChatTemplate = true
	}
}
