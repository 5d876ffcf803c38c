package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// postProcessor adds the special tokens around a single sequence.
type postProcessor interface {
	process(ids []int, addSpecial bool) []int
	// added is how many tokens process adds to a single sequence.
	added() int
}

func parsePostProcessor(raw []byte) (postProcessor, error) {
	typ, err := componentType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		seq, err := parseSequence(raw, "processors", parsePostProcessor)
		if err != nil {
			return nil, err
		}
		return postSequence(seq), nil
	case "ByteLevel":
		// ByteLevel only moves offsets.
		return &templateProcessor{}, nil
	case "BertProcessing", "RobertaProcessing":
		var c struct {
			Sep [2]json.RawMessage `json:"sep"`
			Cls [2]json.RawMessage `json:"cls"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		var sep, cls int
		if err := json.Unmarshal(c.Sep[1], &sep); err != nil {
			return nil, fmt.Errorf("%s: sep: %v", typ, err)
		}
		if err := json.Unmarshal(c.Cls[1], &cls); err != nil {
			return nil, fmt.Errorf("%s: cls: %v", typ, err)
		}
		return &templateProcessor{prefix: []int{cls}, suffix: []int{sep}}, nil
	case "TemplateProcessing":
		return parseTemplate(raw)
	}
	return nil, &unsupportedError{"post_processor", typ}
}

type postSequence []postProcessor

func (q postSequence) process(ids []int, addSpecial bool) []int {
	for _, p := range q {
		ids = p.process(ids, addSpecial)
	}
	return ids
}

func (q postSequence) added() int {
	n := 0
	for _, p := range q {
		n += p.added()
	}
	return n
}

// templateProcessor puts prefix before and suffix after a single sequence.
type templateProcessor struct {
	prefix, suffix []int
}

func (t *templateProcessor) process(ids []int, addSpecial bool) []int {
	if !addSpecial || len(t.prefix)+len(t.suffix) == 0 {
		return ids
	}
	out := make([]int, 0, len(t.prefix)+len(ids)+len(t.suffix))
	out = append(out, t.prefix...)
	out = append(out, ids...)
	return append(out, t.suffix...)
}

func (t *templateProcessor) added() int { return len(t.prefix) + len(t.suffix) }

// templatePiece is {"Sequence": {"id": "A", ...}} or
// {"SpecialToken": {"id": "[CLS]", ...}}, or the string forms "$A" and
// "[CLS]" (with an optional ":type_id").
type templatePiece struct {
	seq     string
	special string
}

func (p *templatePiece) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		name, _, _ := strings.Cut(s, ":")
		if strings.HasPrefix(name, "$") {
			p.seq = strings.TrimPrefix(name, "$")
			if p.seq == "" || p.seq == "0" {
				p.seq = "A"
			} else if p.seq == "1" {
				p.seq = "B"
			}
		} else {
			p.special = name
		}
		return nil
	}
	var o struct {
		Sequence     *struct{ ID string } `json:"Sequence"`
		SpecialToken *struct{ ID string } `json:"SpecialToken"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	switch {
	case o.Sequence != nil:
		p.seq = o.Sequence.ID
	case o.SpecialToken != nil:
		p.special = o.SpecialToken.ID
	default:
		return fmt.Errorf("template piece %s is neither Sequence nor SpecialToken", b)
	}
	return nil
}

func parseTemplate(raw []byte) (postProcessor, error) {
	var c struct {
		Single        json.RawMessage `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int `json:"ids"`
		} `json:"special_tokens"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	var pieces []templatePiece
	var str string
	if json.Unmarshal(c.Single, &str) == nil {
		for _, f := range strings.Fields(str) {
			var p templatePiece
			b, _ := json.Marshal(f)
			if err := p.UnmarshalJSON(b); err != nil {
				return nil, err
			}
			pieces = append(pieces, p)
		}
	} else if err := json.Unmarshal(c.Single, &pieces); err != nil {
		return nil, fmt.Errorf("TemplateProcessing: single: %v", err)
	}
	t := &templateProcessor{}
	seen := false
	for _, p := range pieces {
		if p.seq != "" {
			if p.seq != "A" {
				return nil, fmt.Errorf("TemplateProcessing: single uses sequence %q", p.seq)
			}
			seen = true
			continue
		}
		tok, ok := c.SpecialTokens[p.special]
		if !ok {
			return nil, fmt.Errorf("TemplateProcessing: special token %q is not in special_tokens", p.special)
		}
		if seen {
			t.suffix = append(t.suffix, tok.IDs...)
		} else {
			t.prefix = append(t.prefix, tok.IDs...)
		}
	}
	return t, nil
}
