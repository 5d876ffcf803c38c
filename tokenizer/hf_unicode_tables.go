package tokenizer

import "unicode"

// Hugging Face's tokenizers classify characters with tables older than Go's
// Unicode 15 ones, and keep what a table does not list, whether Unicode
// assigned it since or never did. The BertNormalizer asks the
// unicode_categories crate (0.1.1, its last release; Unicode 8.0) whether a
// character is a control (Cc, Cf or Co), which clean_text removes. Of those
// tables only Cf differs from Go's.

// bertFormat is the format characters (Cf) of Unicode 8.0, the version of
// the unicode_categories crate's tables: the Cf characters added since
// (U+0890, U+0891, U+08E2, U+110CD, U+13430..U+1343F) are kept.
var bertFormat = &unicode.RangeTable{
	LatinOffset: 1,
	R16: []unicode.Range16{
		{0x00AD, 0x00AD, 1}, {0x0600, 0x0605, 1}, {0x061C, 0x061C, 1}, {0x06DD, 0x06DD, 1},
		{0x070F, 0x070F, 1}, {0x180E, 0x180E, 1}, {0x200B, 0x200F, 1}, {0x202A, 0x202E, 1},
		{0x2060, 0x2064, 1}, {0x2066, 0x206F, 1}, {0xFEFF, 0xFEFF, 1}, {0xFFF9, 0xFFFB, 1},
	},
	R32: []unicode.Range32{
		{0x110BD, 0x110BD, 1}, {0x1BCA0, 0x1BCA3, 1}, {0x1D173, 0x1D17A, 1}, {0xE0001, 0xE0001, 1},
		{0xE0020, 0xE007F, 1},
	},
}
