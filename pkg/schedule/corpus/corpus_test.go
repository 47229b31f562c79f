package corpus

import (
	"slices"
	"testing"
	"unicode/utf8"
)

// The long schedules are as long as the schema allows.
func TestLongIsMaxLength(t *testing.T) {
	for _, e := range Long() {
		if n := utf8.RuneCountInString(e.Spec); n != MaxLength {
			t.Errorf("%d characters: %.40q…", n, e.Spec)
		}
	}
}

// A seed gives the same schedules every time.
func TestGenerateIsStable(t *testing.T) {
	a, b := Generate(7, 200), Generate(7, 200)
	if !slices.Equal(a, b) || len(a) != 200 {
		t.Fatalf("Generate(7, 200) differs between calls or has %d entries", len(a))
	}
}
