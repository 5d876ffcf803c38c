package dataset

// gspRow is one row as reference_gsp.py printed it: the prompt (one text,
// or one per turn), prompt_len, output_len and the group whose system
// prompt it carries.
type gspRow struct {
	prompt         []string
	plen, olen, gr int
}

// gspRef is what reference_gsp.py printed for one scenario: the statistics
// lines, the rows, and the next value of each global generator after it.
type gspRef struct {
	lines          string
	nextPy, nextNP float64
	rows           []gspRow
}

// gspWant holds reference_gsp.py's output, pasted.
var gspWant = map[string]gspRef{
	"uniform": {lines: "Number of groups: 3\nPrompts per group: 2\nNumber of turns: 1\nGroup distribution: uniform\nTotal prompts: 6\nTotal input tokens: 60\nTotal output tokens: 30\nAverage system prompt length: 7.0 tokens\nAverage question length: 4.0 tokens\n", nextPy: 0.7045718362149235, nextNP: 0.3745401188473625, rows: []gspRow{
		{[]string{"w63 w2 w27 w22 w73 w67\n\nw69 w34 w15"}, 10, 5, 0},
		{[]string{"w63 w2 w27 w22 w73 w67\n\nw80 w0 w80"}, 10, 5, 0},
		{[]string{"w89 w8 w42 w2 w21 w50\n\nw9 w84 w60"}, 10, 5, 1},
		{[]string{"w89 w8 w42 w2 w21 w50\n\nw95 w33 w9"}, 10, 5, 1},
		{[]string{"w2 w19 w64 w54 w22 w58\n\nw80 w72 w53"}, 10, 5, 2},
		{[]string{"w2 w19 w64 w54 w22 w58\n\nw97 w37 w55"}, 10, 5, 2},
	}},
	"ratio": {lines: "Number of groups: 2\nPrompts per group: 3\nNumber of turns: 1\nGroup distribution: uniform\nTotal prompts: 6\nTotal input tokens: 63\nTotal output tokens: 29\nAverage system prompt length: 7.5 tokens\nAverage question length: 4.0 tokens\n", nextPy: 0.3723975427257312, nextNP: 0.6792299961209405, rows: []gspRow{
		{[]string{"w32 w15 w65 w7 w53 w36 w5 w50\n\nw82 w12 w22 w62"}, 13, 5, 0},
		{[]string{"w32 w15 w65 w7 w53 w36 w5 w50\n\nw94 w57"}, 11, 5, 0},
		{[]string{"w32 w15 w65 w7 w53 w36 w5 w50\n\nw39 w97 w4"}, 12, 5, 0},
		{[]string{"w3 w43 w6 w9 w42\n\nw85 w28 w14 w11"}, 10, 3, 1},
		{[]string{"w3 w43 w6 w9 w42\n\nw30 w81"}, 8, 6, 1},
		{[]string{"w3 w43 w6 w9 w42\n\nw18 w58 w63"}, 9, 5, 1},
	}},
	"turns": {lines: "Number of groups: 2\nPrompts per group: 2\nNumber of turns: 3\nGroup distribution: uniform\nTotal prompts: 4\nTotal input tokens: 22\nTotal output tokens: 9\nAverage system prompt length: 4.0 tokens\nAverage question length: 2.6 tokens\n", nextPy: 0.5276294143623982, nextNP: 0.6852195003967595, rows: []gspRow{
		{[]string{"w13 w84\n\nw83 w43", "w76", "w0"}, 5, 1, 0},
		{[]string{"w13 w84\n\nw65", "w78", "w9 w2"}, 4, 3, 0},
		{[]string{"w76 w25 w49 w44\n\nw44 w72", "w22", "w94 w90"}, 7, 3, 1},
		{[]string{"w76 w25 w49 w44\n\nw3", "w2 w54 w93", "w38 w21"}, 6, 2, 1},
	}},
	"zipf": {lines: "Number of groups: 4\nPrompts per group: 3\nNumber of turns: 1\nGroup distribution: zipf\nZipf alpha: 1.2\nTotal prompts: 12\nTotal input tokens: 72\nTotal output tokens: 48\nAverage system prompt length: 4.0 tokens\nAverage question length: 3.0 tokens\n", nextPy: 0.8664836667552697, nextNP: 0.3745401188473625, rows: []gspRow{
		{[]string{"w63 w2 w27\n\nw80 w69"}, 6, 4, 0},
		{[]string{"w63 w2 w27\n\nw84 w60"}, 6, 4, 0},
		{[]string{"w89 w8 w42\n\nw95 w33"}, 6, 4, 2},
		{[]string{"w89 w8 w42\n\nw22 w58"}, 6, 4, 2},
		{[]string{"w89 w8 w42\n\nw9 w9"}, 6, 4, 2},
		{[]string{"w2 w21 w50\n\nw37 w55"}, 6, 4, 3},
		{[]string{"w89 w8 w42\n\nw2 w19"}, 6, 4, 2},
		{[]string{"w63 w2 w27\n\nw64 w54"}, 6, 4, 0},
		{[]string{"w22 w73 w67\n\nw80 w0"}, 6, 4, 1},
		{[]string{"w2 w21 w50\n\nw34 w15"}, 6, 4, 3},
		{[]string{"w63 w2 w27\n\nw80 w72"}, 6, 4, 0},
		{[]string{"w63 w2 w27\n\nw53 w97"}, 6, 4, 0},
	}},
	"fast": {lines: "Number of groups: 2\nPrompts per group: 2\nNumber of turns: 1\nGroup distribution: uniform\nTotal prompts: 4\n", nextPy: 0.15960421235803823, nextNP: 0.22199317108973948, rows: []gspRow{
		{[]string{"w92 w2 w46 w94 w64\n\nw1 w21"}, 1, 3, 1},
		{[]string{"w62 w74 w79 w94 w73\n\nw46 w24"}, 1, 3, 0},
		{[]string{"w62 w74 w79 w94 w73\n\nw90 w11"}, 1, 3, 0},
		{[]string{"w92 w2 w46 w94 w64\n\nw54 w57"}, 1, 3, 1},
	}},
}
