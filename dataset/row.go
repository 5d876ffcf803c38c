// Package dataset builds the rows a benchmark sends, one file per dataset.
package dataset

// Row is one request's worth of input (the reference tool's DatasetRow).
type Row struct {
	// Text is the prompt; IDs replaces it when --tokenize-prompt asks for
	// token ids (native backend only).
	Text string
	IDs  []int

	// PromptLen is the dataset's count of prompt tokens (for random datasets,
	// the target length), OutputLen the number of tokens to ask for.
	PromptLen int
	OutputLen int
	// TextPromptLen and VisionPromptLen split PromptLen for image datasets;
	// TextPromptLen defaults to PromptLen.
	TextPromptLen   int
	VisionPromptLen int
}
