package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// decodeBody unmarshals a JSON request body, with vLLM's message on failure.
func decodeBody(body []byte, v any) *apiError {
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("Failed to read and parse request body, %v", err)
	}
	return nil
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// prompts reads a prompt field: a string, a list of token ids, or a list
// of either (a batch). Strings are tokenized as the client does
// (tokenizer.Encode with special tokens).
func (s *Server) prompts(raw json.RawMessage, field string) ([][]int, *apiError) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, badRequest("%s is required", field)
	}
	switch raw[0] {
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, badRequest("%s: %v", field, err)
		}
		return [][]int{s.tok.Encode(text, true)}, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, badRequest("%s: %v", field, err)
		}
		if len(items) == 0 {
			return nil, badRequest("%s array must contain at least one prompt", field)
		}
		if first := bytes.TrimSpace(items[0]); len(first) > 0 && (first[0] == '-' || first[0] >= '0' && first[0] <= '9') {
			var ids []int
			if err := json.Unmarshal(raw, &ids); err != nil {
				return nil, badRequest("%s: a list of token ids must hold only integers: %v", field, err)
			}
			return [][]int{ids}, nil
		}
		out := make([][]int, 0, len(items))
		for _, it := range items {
			it = bytes.TrimSpace(it)
			if len(it) == 0 || it[0] != '"' && it[0] != '[' {
				return nil, badRequest("%s: each prompt of a list must be a string or a list of token ids", field)
			}
			p, e := s.prompts(it, field)
			if e != nil {
				return nil, e
			}
			out = append(out, p...)
		}
		return out, nil
	}
	return nil, badRequest("%s must be a string, a list of token ids, or a list of those", field)
}

// batchPrompts reads a prompt field that may be a batch: a list whose items
// are strings or lists of token ids is a batch (even of one item); a
// string or a list of ids is one prompt, and batched is false.
func (s *Server) batchPrompts(raw json.RawMessage, field string) (ps [][]int, batched bool, e *apiError) {
	if ps, e = s.prompts(raw, field); e != nil {
		return nil, false, e
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] != '[' {
		return ps, false, nil
	}
	c := bytes.TrimSpace(raw[1:]) // prompts has checked that the list is not empty
	return ps, c[0] == '"' || c[0] == '[', nil
}

// readPrompts sets j's prompt, or its prompts when the field is a batch.
func (s *Server) readPrompts(j *job, raw json.RawMessage, field string) *apiError {
	ps, batched, e := s.batchPrompts(raw, field)
	switch {
	case e != nil:
		return e
	case batched:
		j.prompts = ps
	default:
		j.prompt = ps[0]
	}
	return nil
}

// chatMessage is one OpenAI chat message; content is a string or a list of
// parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// messageIDs tokenizes the text of every message and joins the ids. No
// chat template is applied, so prompt_tokens equals the client's count of
// the same text; image parts count as the client estimates them
// (imageTokens).
func (s *Server) messageIDs(raw json.RawMessage) ([]int, *apiError) {
	if isNull(raw) {
		return nil, badRequest("messages is required")
	}
	return s.messageListIDs(nil, raw, "messages", "text")
}

// messageListIDs appends to ids the tokens of a list of {"role","content"}
// messages, each content a string or a list of parts of which those of the
// given types count (their "text"). Items without content count nothing.
func (s *Server) messageListIDs(ids []int, raw json.RawMessage, field string, types ...string) ([]int, *apiError) {
	var msgs []chatMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, badRequest("%s: %v", field, err)
	}
	for i, m := range msgs {
		var e *apiError
		if ids, e = s.contentIDs(ids, m.Content, fmt.Sprintf("%s[%d].content", field, i), types...); e != nil {
			return nil, e
		}
	}
	return ids, nil
}

// contentIDs appends to ids the tokens of a content field: a string, or a
// list of parts of which those of the given types count; null counts
// nothing.
func (s *Server) contentIDs(ids []int, raw json.RawMessage, field string, types ...string) ([]int, *apiError) {
	c := bytes.TrimSpace(raw)
	switch {
	case isNull(c):
	case c[0] == '"':
		var text string
		if err := json.Unmarshal(c, &text); err != nil {
			return nil, badRequest("%s: %v", field, err)
		}
		ids = append(ids, s.tok.Encode(text, true)...)
	case c[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
			imagePart
		}
		if err := json.Unmarshal(c, &parts); err != nil {
			return nil, badRequest("%s: %v", field, err)
		}
		for _, p := range parts {
			switch {
			case slices.Contains(types, p.Type):
				ids = append(ids, s.tok.Encode(p.Text, true)...)
			case p.Type == "image_url" || p.Type == "input_image" || p.Type == "image":
				ids = appendImage(ids, p.uri())
			}
		}
	default:
		return nil, badRequest("%s must be a string or a list of parts", field)
	}
	return ids, nil
}

// checkModel accepts the served model name (or none), and any name sent
// together with a lora_path, as benchserve does for LoRA adapters (the
// simulator does not model adapters). It returns the name to echo.
func (s *Server) checkModel(model *string, lora json.RawMessage) (string, *apiError) {
	switch {
	case model == nil || *model == "" || *model == s.cfg.Model:
		return s.cfg.Model, nil
	case !isNull(lora):
		return *model, nil
	}
	return "", &apiError{status: http.StatusNotFound, typ: "NotFoundError", message: fmt.Sprintf("The model `%s` does not exist.", *model)}
}

// maxTokens applies a max-token field: def when absent, else at least min.
func maxTokens(v *int, field string, def, minimum int) (int, *apiError) {
	if v == nil {
		return def, nil
	}
	if *v < minimum {
		return 0, badRequest("%s must be at least %d, got %d.", field, minimum, *v)
	}
	return *v, nil
}
