package sim

import "strconv"

// classifyFormat is vLLM's /classify: its inputs are prefilled as an
// embedding request's are, and each gets a label and the probabilities of
// classifyClasses classes, seeded by its tokens.
type classifyFormat struct{ embedFormat }

// classifyClasses is how many classes the simulated classifier has.
const classifyClasses = 2

func (classifyFormat) idPrefix() string { return "classify-" }

func (classifyFormat) whole(j *job, b []byte, _ *progress) []byte {
	b = appendListHead(b, j)
	for i := range j.inputs {
		if i > 0 {
			b = append(b, ',')
		}
		p := float64(mix64(uint64(j.outIDs[i]))>>11) / (1 << 53)
		label := 0
		if p < 0.5 {
			label = 1
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"label":"LABEL_`...)
		b = strconv.AppendInt(b, int64(label), 10)
		b = append(b, `","probs":[`...)
		b = strconv.AppendFloat(b, p, 'g', -1, 32)
		b = append(b, ',')
		b = strconv.AppendFloat(b, 1-p, 'g', -1, 32)
		b = append(b, `],"num_classes":`...)
		b = strconv.AppendInt(b, classifyClasses, 10)
		b = append(b, '}')
	}
	b = append(b, `],"usage":{"prompt_tokens":`...)
	b = appendPromptUsage(b, j)
	return append(b, `,"completion_tokens":0}}`...)
}
