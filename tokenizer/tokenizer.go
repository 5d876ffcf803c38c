// Package tokenizer counts and makes tokens the way the model's tokenizer
// does: the datasets use it to size prompts and the metrics to retokenize
// generated text.
package tokenizer

// Tokenizer is the part of a Hugging Face tokenizer the benchmark uses.
// Implementations are safe for concurrent use.
type Tokenizer interface {
	// Name is what the user selected, for messages.
	Name() string
	// Encode returns the ids of text, with the tokens the tokenizer adds
	// around a sequence (such as BOS) when addSpecial is set, as
	// transformers' encode(text, add_special_tokens=addSpecial).
	Encode(text string, addSpecial bool) []int
	// Count is len(Encode(text, false)), without building the slice where
	// the implementation can.
	Count(text string) int
	// Decode turns ids back into text, special tokens kept; bytes that do not
	// form valid UTF-8 become U+FFFD.
	Decode(ids []int) string
	// VocabSize is transformers' vocab_size: the base vocabulary, without
	// added tokens. Every id below it decodes.
	VocabSize() int
	// NumSpecialTokensToAdd is how many tokens Encode adds for one sequence
	// when addSpecial is set.
	NumSpecialTokensToAdd() int
	// BOSToken is the text of the beginning-of-sequence token, "" if none.
	BOSToken() string
}
