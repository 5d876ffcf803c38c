module benchserve

go 1.26.8

require github.com/tiktoken-go/tokenizer v0.10.0

require (
	github.com/ardanlabs/jinja v1.8.0 // indirect
	github.com/dlclark/regexp2/v2 v2.5.1 // indirect
	golang.org/x/text v0.44.0 // indirect
)
