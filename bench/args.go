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
// default port, and apply_chat_template for the image datasets, which
// always apply a template.
func settleArgs(cfg *Config, port int) {
	if cfg.Port == nil {
		cfg.Port = &port
	}
	if cfg.DatasetName == "image" || cfg.DatasetName == "mmmu" {
		cfg.ApplyChatTemplate = true
	}
}
