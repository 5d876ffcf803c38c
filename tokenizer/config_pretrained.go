package tokenizer

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// engine is what Pretrained needs from the tokenizer.json engine (*HF).
type engine interface {
	Tokenizer
	TokenToID(tok string) (int, bool)
	IDToToken(id int) (string, bool)
	SpecialIDs() []int
	AddedTokens() map[string]int
	SetPostTemplate(bos, eos string, addBOS, addEOS bool) error
	SetDecodeOptions(skipSpecial, cleanUp bool)
}

// parseEngine parses tokenizer.json; tests of the loading around it
// replace it with a fake.
var parseEngine = func(data []byte, name string) (engine, error) {
	hf, err := ParseHF(data, name)
	if err != nil {
		return nil, err
	}
	return hf, nil
}

// Pretrained is a Hugging Face tokenizer as transformers' AutoTokenizer
// loads it: tokenizer.json plus its companion files (Config). It counts
// like the tokenizer.json engine, takes BOS/EOS and the chat templates from
// the config, and renders chat templates (ApplyChatTemplate). It is safe
// for concurrent use.
type Pretrained struct {
	engine
	name string
	cfg  Config
	// now is the clock strftime_now reads; tests fix it.
	now func() time.Time

	mu        sync.Mutex
	templates map[string]*chatTemplate // compiled, by template text
}

var (
	_ Tokenizer     = (*Pretrained)(nil)
	_ ChatTemplater = (*Pretrained)(nil)
)

// LoadFiles loads the tokenizer in f, named name in messages. Errors name
// the file and the part of it at fault.
func LoadFiles(name string, f Files) (*Pretrained, error) {
	data, err := os.ReadFile(f.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	cfg, err := LoadConfig(f)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	e, err := parseEngine(data, name)
	if err != nil {
		// The engine's errors name the file as <name>/tokenizer.json.
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	p, err := newPretrained(name, e, cfg)
	if err != nil {
		where := f.Config
		if where == "" {
			where = f.SpecialTokensMap
		}
		return nil, fmt.Errorf("tokenizer %s: %s: %w", name, where, err)
	}
	return p, nil
}

// NewPretrained wraps a parsed tokenizer.json with its config. It sets
// the engine's post-processor and decode options from cfg, so hf must not
// be shared with other users.
func NewPretrained(name string, hf *HF, cfg Config) (*Pretrained, error) {
	if hf == nil {
		return nil, fmt.Errorf("tokenizer %s: no tokenizer.json", name)
	}
	return newPretrained(name, hf, cfg)
}

func newPretrained(name string, e engine, cfg Config) (*Pretrained, error) {
	cfg = cfg.clone()
	// transformers (TokenizersBackend.update_post_processor): an explicit
	// add_bos_token/add_eos_token rebuilds the post-processor as
	// "[BOS] $A [EOS]", dropping a token that is not set.
	if cfg.AddBOS != nil || cfg.AddEOS != nil {
		addBOS := cfg.AddBOS != nil && *cfg.AddBOS && cfg.BOS != ""
		addEOS := cfg.AddEOS != nil && *cfg.AddEOS && cfg.EOS != ""
		if err := e.SetPostTemplate(cfg.BOS, cfg.EOS, addBOS, addEOS); err != nil {
			return nil, fmt.Errorf("add_bos_token/add_eos_token: %w", err)
		}
	}
	// Decode keeps special tokens (the Tokenizer contract); the clean-up
	// is clean_up_tokenization_spaces.
	e.SetDecodeOptions(false, cfg.CleanUp)
	return &Pretrained{engine: e, name: name, cfg: cfg, now: time.Now}, nil
}

// Name is the name the tokenizer was loaded by.
func (p *Pretrained) Name() string { return p.name }

// BOSToken is the config's bos_token, "" if none.
func (p *Pretrained) BOSToken() string { return p.cfg.BOS }

// EOSToken is the config's eos_token, "" if none.
func (p *Pretrained) EOSToken() string { return p.cfg.EOS }

// Config returns a copy of the tokenizer's config.
func (p *Pretrained) Config() Config { return p.cfg.clone() }

// HasChatTemplate reports whether the tokenizer has a chat template, the
// reference's `"chat_template" in tokenizer.init_kwargs` check.
func (p *Pretrained) HasChatTemplate() bool { return len(p.cfg.ChatTemplates) > 0 }
