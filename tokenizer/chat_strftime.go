package tokenizer

import (
	"fmt"
	"strings"
	"time"
)

// strftime formats t as Python's datetime.strftime does in the C locale,
// for transformers' strftime_now(format) (a naive local time: %z and %Z
// are empty). Unknown directives are kept as written, as glibc does.
func strftime(t time.Time, format string) string {
	var sb strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch d := format[i]; d {
		case 'a':
			sb.WriteString(t.Weekday().String()[:3])
		case 'A':
			sb.WriteString(t.Weekday().String())
		case 'w':
			fmt.Fprintf(&sb, "%d", int(t.Weekday()))
		case 'u':
			fmt.Fprintf(&sb, "%d", (int(t.Weekday())+6)%7+1)
		case 'd':
			fmt.Fprintf(&sb, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&sb, "%2d", t.Day())
		case 'b', 'h':
			sb.WriteString(t.Month().String()[:3])
		case 'B':
			sb.WriteString(t.Month().String())
		case 'm':
			fmt.Fprintf(&sb, "%02d", int(t.Month()))
		case 'y':
			fmt.Fprintf(&sb, "%02d", t.Year()%100)
		case 'Y':
			fmt.Fprintf(&sb, "%d", t.Year())
		case 'H':
			fmt.Fprintf(&sb, "%02d", t.Hour())
		case 'I':
			fmt.Fprintf(&sb, "%02d", (t.Hour()+11)%12+1)
		case 'p':
			if t.Hour() < 12 {
				sb.WriteString("AM")
			} else {
				sb.WriteString("PM")
			}
		case 'M':
			fmt.Fprintf(&sb, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&sb, "%02d", t.Second())
		case 'f':
			fmt.Fprintf(&sb, "%06d", t.Nanosecond()/1000)
		case 'j':
			fmt.Fprintf(&sb, "%03d", t.YearDay())
		case 'U':
			fmt.Fprintf(&sb, "%02d", (t.YearDay()+6-int(t.Weekday()))/7)
		case 'W':
			fmt.Fprintf(&sb, "%02d", (t.YearDay()+6-(int(t.Weekday())+6)%7)/7)
		case 'c':
			sb.WriteString(strftime(t, "%a %b %e %H:%M:%S %Y"))
		case 'x':
			sb.WriteString(strftime(t, "%m/%d/%y"))
		case 'X':
			sb.WriteString(strftime(t, "%H:%M:%S"))
		case 'D':
			sb.WriteString(strftime(t, "%m/%d/%y"))
		case 'F':
			sb.WriteString(strftime(t, "%Y-%m-%d"))
		case 'T':
			sb.WriteString(strftime(t, "%H:%M:%S"))
		case 'z', 'Z':
		case '%':
			sb.WriteByte('%')
		default:
			sb.WriteByte('%')
			sb.WriteByte(d)
		}
	}
	return sb.String()
}
